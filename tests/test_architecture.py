"""Architecture rule: core/ never imports Qt or pyqtgraph (directly or through another module)."""
import ast
import subprocess
import sys

from tests.support.paths import ROOT

FORBIDDEN = ("PySide6", "PyQt5", "PyQt6", "pyqtgraph", "shiboken6", "app", "widgets")


def test_core_sources_import_no_qt():
    bad = []
    for path in (ROOT / "core").rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for n in names:
                if n.split(".")[0] in FORBIDDEN:
                    bad.append(f"{path.relative_to(ROOT)}:{node.lineno} imports {n}")
    assert not bad, "\n".join(bad)


def test_importing_all_of_core_loads_no_qt():
    code = (
        "import pkgutil, importlib, sys, core\n"
        "for m in pkgutil.walk_packages(core.__path__, 'core.'):\n"
        "    importlib.import_module(m.name)\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('PySide6','pyqtgraph','shiboken6')]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)
