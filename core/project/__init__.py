"""Projects on disk: the data model (model), loading (load), atomic saves (save) and the file-name and leftover checks
(files)."""
