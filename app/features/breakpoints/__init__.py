"""Breakpoints: the Breakpoints dock and menu, and the condition dialog."""
