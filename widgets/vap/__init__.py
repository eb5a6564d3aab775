"""The VAP predictions view."""
