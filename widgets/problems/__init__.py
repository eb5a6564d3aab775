"""The Problems panel."""
