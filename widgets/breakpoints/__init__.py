"""The Breakpoints dock's list and the condition dialog."""
