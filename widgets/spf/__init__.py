"""Safe Path Following views: the play window's panel, the model view and the observation overlay."""
