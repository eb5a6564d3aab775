"""Fixtures of the widget tests: a new inspector widget, a shown statistics widget."""
from __future__ import annotations

import pytest


@pytest.fixture
def inspector(qtbot):
    """A new ``widgets.inspect.inspector.InspectorWidget``, closed with the test."""
    from widgets.inspect.inspector import InspectorWidget

    w = InspectorWidget()
    qtbot.addWidget(w)
    return w


@pytest.fixture
def shown_stats(qtbot):
    """A ``widgets.stats.StatsWidget`` of 420 x 320 px, shown and exposed."""
    from tests.support.qt import shown
    from widgets.stats import StatsWidget

    return shown(qtbot, StatsWidget(), 420, 320)
