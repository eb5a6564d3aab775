"""Human studies: the designer, the participant runner and the results view."""
