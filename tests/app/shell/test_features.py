"""Features from a registry (app/shell/features.py): an editor or tool registers a FeatureSpec; the window installs it
with a FeatureHost (session, jobs, map, menus, toolbars), its shortcut reaches it through the real event loop, and
closing the window asks its controller to stop."""
from __future__ import annotations

import pytest

from tests.support.studio import close_window, open_window

pytest.importorskip("pytestqt")

from PySide6 import QtCore, QtWidgets  # noqa: E402

from app.shell import features  # noqa: E402
from app.shell.features import FeatureSpec  # noqa: E402


class _Tool(QtCore.QObject):
    def __init__(self, host) -> None:
        super().__init__()
        self.host, self.runs, self.stopped = host, 0, False
        self.act = host.action("Count things", self.run, "Ctrl+Alt+K", "Count")
        host.menu("&Tools").addAction(self.act)
        host.toolbar("tools").addAction(self.act)

    def run(self) -> None:
        self.runs += 1
        self.host.window.status(f"counted {self.host.session.num_steps}")

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
        titles = [a.text().replace("&", "") for a in win.menuBar().actions()]
        assert titles.index("Tools") < titles.index("Help") == len(titles) - 1   # created before Help (other
        # features add their menus there too, so Tools need not be the one right before it)
        assert win.findChild(QtWidgets.QToolBar, "toolbar_tools") is not None
        win.activateWindow()
        qtbot.keyClick(win, QtCore.Qt.Key.Key_K,
                       QtCore.Qt.KeyboardModifier.ControlModifier | QtCore.Qt.KeyboardModifier.AltModifier)
        qtbot.waitUntil(lambda: tool.runs == 1)
        assert win.last_message.startswith("counted")
        assert ("Ctrl+Alt+K", "Count things", "Count") in win.shortcut_rows()
    finally:
        close_window(win)
    assert tool.stopped


def test_the_same_feature_name_twice_is_refused(tool_feature):
    with pytest.raises(ValueError, match="already registered"):
        features.register(FeatureSpec("test_tool", lambda host: None))
