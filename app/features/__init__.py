"""The studio's features, one package each: its controller and its FeatureSpec (and PanelSpecs). A feature sees the
shell's typed services, never the window or another feature."""
