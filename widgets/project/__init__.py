"""Views of projects: the episode info dialog."""
