"""Safe Path Following in the studio: the SPF models dock, training dialog, human play window and its model dock."""
