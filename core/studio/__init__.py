"""The studio session model, its commands and their undo stack (no Qt); see docs/architecture.md."""
