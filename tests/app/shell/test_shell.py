"""The main window is a shell: at most 500 lines, no probes for attributes it sets late, no empty branches, and
menus filled once; the work lives in the features (app/features/)."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tests.support.paths import ROOT

SHELL = ROOT / "app" / "shell" / "window.py"
CONTROLLERS = sorted((ROOT / "app").rglob("*.py"))


def test_the_window_is_at_most_500_lines():
    n = len(SHELL.read_text().splitlines())
    assert n <= 500, f"app/shell/window.py has {n} lines; move work into a feature"


@pytest.mark.parametrize("path", [SHELL, *CONTROLLERS], ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_probes_of_own_attributes_and_no_empty_branches(path: Path):
    tree = ast.parse(path.read_text(), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr") \
                and node.args and isinstance(node.args[0], ast.Name) and node.args[0].id == "self":
            raise AssertionError(f"{path.relative_to(ROOT)}:{node.lineno}: {node.func.id}(self, …) probes a late attribute")
        if isinstance(node, ast.If) and all(isinstance(s, ast.Pass) for s in node.body):
            raise AssertionError(f"{path.relative_to(ROOT)}:{node.lineno}: an `if …: pass` branch")


#: What a probe may never be about: the window, a feature's host or services, or another controller.
PROBED = re.compile(r"\b(window|host|shell|controller|ctl|features?|playback|drawing|panels|docks|selection|"
                    r"problems|projects|timeline|spf|launcher)\b")


@pytest.mark.parametrize("path", sorted((ROOT / "app").rglob("*.py")) + sorted((ROOT / "widgets").rglob("*.py")),
                         ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_probe_of_the_window_or_of_controllers(path: Path):
    """Features use the host's typed services; nothing asks ``getattr``/``hasattr`` whether the window or a
    controller happens to have something."""
    tree = ast.parse(path.read_text(), str(path))
    bad = [f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(node)}" for node in ast.walk(tree)
           if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr")
           and node.args and PROBED.search(ast.unparse(node.args[0]))]
    assert not bad, "\n".join(bad)


def test_no_feature_is_handed_the_window():
    """The FeatureHost offers services and no ``window``; no feature module names the main window's class."""
    from app.shell.features import FeatureHost

    assert not hasattr(FeatureHost, "window") and "window" not in FeatureHost.__init__.__code__.co_varnames
    for path in sorted((ROOT / "app" / "features").rglob("*.py")):
        text = path.read_text()
        assert "app.shell.window" not in text and not re.search(r"(?<!Q)MainWindow", text), path


def test_opening_the_same_city_again_keeps_the_colour_menu(studio, qtbot):
    from tests.support.studio import DEFAULT_MODE, WAIT

    win = studio
    before = [id(a) for a in win.feature("view").colour_group.actions()]
    assert len(before) == win.feature("view").colour_combo.count() >= 4
    assert win.open_path(DEFAULT_MODE, ask_save=False)
    qtbot.waitUntil(lambda: win.history is not None, timeout=WAIT)
    assert [id(a) for a in win.feature("view").colour_group.actions()] == before      # not cleared and filled again
    assert [a.text() for a in win.feature("view").colour_group.actions() if a.isChecked()] == [win.scheme]
