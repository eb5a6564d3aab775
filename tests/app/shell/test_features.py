"""Features from a registry (app/shell/features.py): an editor or tool registers a FeatureSpec; the window installs it
with a FeatureHost (session, jobs, map, services, menus and toolbars declared as data), its shortcut reaches it
through the real event loop, closing the window asks its controller to stop, and a service no feature provides is a
clear error."""
from __future__ import annotations

import pytest

from tests.support.studio import close_window, open_window

pytest.importorskip("pytestqt")

from PySide6 import QtCore, QtWidgets  # noqa: E402

from app.shell import features  # noqa: E402
from app.shell.features import FeatureController, FeatureSpec  # noqa: E402
from app.shell.menus import ActionSpec  # noqa: E402
from app.shell.services import Service  # noqa: E402


class _Tool(FeatureController):
    def __init__(self, host) -> None:
        super().__init__()
        self.host, self.runs, self.stopped = host, 0, False
        self.act = host.add(ActionSpec("Count things", self.run, "Ctrl+Alt+K", "Count", menu="tools",
                                       toolbar="tools"))

    def run(self) -> None:
        self.runs += 1
        self.host.shell.status(f"counted {self.host.session.num_steps}")

    def shutdown(self, wait_ms: int) -> bool:
        self.stopped = True
        return True


@pytest.fixture
def tool_feature():
    made = []
    features.register(FeatureSpec("test_tool", lambda host: made.append(_Tool(host)) or made[-1]))
    yield made
    features.unregister("test_tool")


def test_a_registered_feature_gets_a_menu_a_shortcut_and_is_stopped_on_close(qtbot, tmp_path, tool_feature):
    win = open_window(qtbot, tmp_path / "s.ini")
    try:
        tool = win.features["test_tool"]
        assert tool is tool_feature[0]
        titles = [a.text().replace("&", "") for a in win.window.menuBar().actions()]
        assert titles.index("Tools") < titles.index("Help") == len(titles) - 1   # created before Help (other
        # features add their menus there too, so Tools need not be the one right before it)
        assert win.window.findChild(QtWidgets.QToolBar, "toolbar_tools") is not None
        win.window.activateWindow()
        qtbot.keyClick(win.window, QtCore.Qt.Key.Key_K,
                       QtCore.Qt.KeyboardModifier.ControlModifier | QtCore.Qt.KeyboardModifier.AltModifier)
        qtbot.waitUntil(lambda: tool.runs == 1)
        assert win.last_message.startswith("counted")
        assert ("Ctrl+Alt+K", "Count things", "Count") in win.shortcut_rows()
        assert win.action("Tools", "Count things") is tool.act
        with pytest.raises(LookupError, match="no feature provides the nothing service"):
            tool.host.get(Service("nothing"))
    finally:
        close_window(win)
    assert tool.stopped


def test_the_same_feature_name_twice_is_refused(tool_feature):
    with pytest.raises(ValueError, match="already registered"):
        features.register(FeatureSpec("test_tool", lambda host: None))
