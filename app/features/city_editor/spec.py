"""The city editor feature: City ▸ City editor mode (E) with its tools and toolbar, New city, Resize canvas, Import
and Export city."""
from __future__ import annotations

from app.features.city_editor.controller import CityEditorController
from app.shell.features import FeatureSpec, register

register(FeatureSpec("city_editor", CityEditorController))
