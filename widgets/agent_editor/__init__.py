"""The agent editor's views."""
