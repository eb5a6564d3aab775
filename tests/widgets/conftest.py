"""Fixtures of the widget tests: a new inspector widget."""
from __future__ import annotations

import pytest


@pytest.fixture
def inspector(qtbot):
    """A new ``widgets.inspector.InspectorWidget``, closed with the test."""
    from widgets.inspector import InspectorWidget

    w = InspectorWidget()
    qtbot.addWidget(w)
    return w
