"""View options: colour-by, planned paths, overlays and icon art."""
