"""Files on disk: the safe YAML loader (yamlio), NPZ containers (npzfile) and the stored-ZIP array archive of task data
(archive), atomic writes and link checks (fileio), the user data folder (datadir)."""
