"""City editor mode (issue 11): the toolbar toggle E, the paint tools on the map, brush size, the New city dialog and
canvas resizing. Importing this module also registers the Problems panel (app/controllers/problems.py), which the
editor's live validation fills.
"""
from __future__ import annotations

from . import problems  # noqa: F401  (registers the Problems panel and its feature)
