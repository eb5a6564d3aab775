"""The studio's shell: the main window, the job runner and simulation worker, panel and feature registries, the typed
services features receive, undo, settings, layout, status bar and help."""
