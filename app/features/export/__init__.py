"""Exports: the view as PNG, step ranges as GIF or images, and datasets through the exporter registry."""
