"""Architecture rules, checked on the sources:

* ``core/`` never imports Qt, pyqtgraph, ``app`` or ``widgets`` (directly or through another module);
* ``widgets/`` (reusable Qt views) never import ``app`` (the application that assembles them);
* ``core/`` has no import cycles.

The import graph is read statically with :mod:`ast`, so an import inside a function counts as much as one at the
top of a module: a function-local import hides a cycle from the interpreter, not from this test. Only imports in
an ``if TYPE_CHECKING:`` block are left out, because they never run (annotations only).
"""
from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import networkx as nx
import pytest

from tests.support.paths import ROOT

QT = ("PySide6", "PyQt5", "PyQt6", "pyqtgraph", "shiboken6")


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def imports(path: Path, root: Path) -> Iterator[tuple[str, int]]:
    """(absolute dotted name, line) of every import in ``path`` that runs: module level, in functions and classes,
    relative ones resolved; ``from m import a`` yields ``m`` and ``m.a`` (``a`` may be a submodule)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    name = module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    type_only = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If) and _is_type_checking(node.test)
                 for stmt in node.body for n in ast.walk(stmt)}
    for node in ast.walk(tree):
        if id(node) in type_only:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            yield module, node.lineno
            for alias in node.names:
                yield f"{module}.{alias.name}", node.lineno


def import_graph(package: str, root: Path = ROOT) -> nx.DiGraph:
    """Modules of ``package`` and the imports between them (edge attribute ``at``: 'file:line' of the import)."""
    files = {module_name(p, root): p for p in sorted((root / package).rglob("*.py"))}
    graph = nx.DiGraph()
    graph.add_nodes_from(files)
    for name, path in files.items():
        for target, line in imports(path, root):
            if target in files and target != name and not graph.has_edge(name, target):
                graph.add_edge(name, target, at=f"{path.relative_to(root)}:{line}")
    return graph


def forbidden_imports_in(path: Path, forbidden: tuple[str, ...]) -> list[str]:
    """'file:line imports name' for every import of ``path`` whose top-level package is in ``forbidden``."""
    return sorted({f"{path.relative_to(ROOT)}:{line} imports {target}" for target, line in imports(path, ROOT)
                   if target.split(".")[0] in forbidden})


def forbidden_imports(package: str, forbidden: tuple[str, ...]) -> list[str]:
    return [bad for path in sorted((ROOT / package).rglob("*.py")) for bad in forbidden_imports_in(path, forbidden)]


def test_core_sources_import_no_qt_app_or_widgets():
    bad = forbidden_imports("core", QT + ("app", "widgets"))
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


@pytest.mark.parametrize("path", sorted((ROOT / "widgets").glob("*.py")),
                         ids=lambda p: p.relative_to(ROOT).as_posix())
def test_widgets_import_no_app(path):
    bad = forbidden_imports_in(path, ("app",))
    assert not bad, "\n".join(bad)


def test_core_has_no_import_cycles():
    graph = import_graph("core")
    cycles = sorted(nx.simple_cycles(graph), key=lambda c: (len(c), c))
    shown = []
    for cycle in cycles:
        edges = zip(cycle, cycle[1:] + cycle[:1])
        shown.append(" -> ".join(cycle + cycle[:1]) + "\n    " +
                     "\n    ".join(graph.edges[a, b]["at"] for a, b in edges))
    assert not cycles, f"{len(cycles)} import cycle(s) in core:\n" + "\n".join(shown)


def test_the_import_graph_sees_local_and_relative_imports(tmp_path):
    """The checker itself: a cycle closed by a function-local relative import is found; a TYPE_CHECKING one is not."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    for init in (pkg / "__init__.py", pkg / "sub" / "__init__.py"):
        init.write_text("")
    (pkg / "a.py").write_text("from .sub import b\n")
    (pkg / "sub" / "b.py").write_text("def f():\n    from ..a import x\n")
    (pkg / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import a\n")
    (pkg / "d.py").write_text("import pkg.c\n")
    graph = import_graph("pkg", tmp_path)
    assert graph.edges["pkg.sub.b", "pkg.a"]["at"] == "pkg/sub/b.py:2"
    assert graph.has_edge("pkg.a", "pkg.sub.b") and graph.has_edge("pkg.d", "pkg.c")
    assert not graph.has_edge("pkg.c", "pkg.a")
    assert [sorted(c) for c in nx.simple_cycles(graph)] == [["pkg.a", "pkg.sub.b"]]
