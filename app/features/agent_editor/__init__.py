"""The agent editor dock, its start/goal map tool and markers, and Apply."""
