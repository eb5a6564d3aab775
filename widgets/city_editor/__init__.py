"""The city editor's dialogs (New city, resize)."""
