"""Projects: open, save, recent files, the unsaved-changes question, and File > Episode info."""
