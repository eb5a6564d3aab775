"""Playback: the worker link (play, step, branch, reset, force), coalesced drawing, the timeline and speed controls."""
