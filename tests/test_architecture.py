"""Architecture rules, checked on the sources over the whole import graph.

* ``core/`` is pure Python in declared layers (:data:`LAYERS`): a package imports only packages of a lower layer
  (or itself); packages of one layer never import each other. ``core/logic`` has layers of its own.
* ``core/`` never imports Qt, pyqtgraph, ``app`` or ``widgets``; ``widgets/`` never imports ``app``.
* ``app/shell`` never imports a feature; a feature (``app/features/<name>``) imports the shell, never another
  feature. Feature-only widgets (``widgets/<name>/``) may use the reusable widgets at the top of ``widgets/``,
  never another feature's; a reusable widget imports no feature widget.
* No import cycle between modules anywhere in ``core``, ``app`` and ``widgets``.
* No module imports a ``_private`` name from another package.

The graph is read statically with :mod:`ast`: an import inside a function or under ``if TYPE_CHECKING:`` counts
as much as one at the top of a module (a function-local import hides a cycle from the interpreter, a type-only
one from the running program, neither from a reader).
"""
from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import networkx as nx

from tests.support.paths import ROOT

QT = ("PySide6", "PyQt5", "PyQt6", "pyqtgraph", "shiboken6")

#: The layers of ``core``, lowest first. A package may import its own modules and those of lower layers only.
LAYERS: dict[str, tuple[tuple[str, ...], ...]] = {
    "core": (
        ("base",),             # errors, codes, world snapshot
        ("io",),               # YAML, NPZ and archives, atomic files, the data folder
        ("map",),              # cities: grids, derived layers, lane graph, planners
        ("agents",),           # agent sets (checked against a city)
        ("logic",),            # rule language, grounding, engines
        ("sim",),              # the simulation, episodes, scenes
        ("analysis",),         # rule analysis that runs the simulator: witnesses, deadlocks, coverage, diagnostics
        ("render", "models"),  # icon composition; torch models
        ("view",),             # what the views show, as plain data
        ("tasks",),            # SPF and VAP
        ("study", "icongen"),  # human studies; icon generation
        ("export",),           # dataset exporters
        ("project",),          # projects on disk
        ("studio",),           # the studio's Qt-free session
        ("cli",),              # headless commands
    ),
    "core.logic": (
        ("lang",),             # parser, syntax, ontology, program
        ("kernels",),          # the numba loops shared by grounding and the engines
        ("fast",),             # whether those loops are used
        ("grounding",),
        ("engines",),
    ),
    "core.tasks": (("spf", "vap"),),
}

#: Known exceptions to the rules above, each with its reason (keep it short).
EXCEPTIONS: dict[tuple[str, str], str] = {}


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path, root: Path) -> Iterator[tuple[str, list[str], int]]:
    """(absolute module, imported names, line) of every import in ``path``: module level, in functions and
    classes and under ``TYPE_CHECKING``, relative ones resolved. ``import m`` yields (m, [], line)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    name = module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, [], node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            yield module, [a.name for a in node.names], node.lineno


def project_files(root: Path, tops: tuple[str, ...]) -> dict[str, Path]:
    return {module_name(p, root): p for top in tops for p in sorted((root / top).rglob("*.py"))}


def import_graph(tops: tuple[str, ...], root: Path = ROOT) -> nx.DiGraph:
    """Modules under ``tops`` and the imports between them (edge attribute ``at``: 'file:line' of the import);
    ``from m import a`` is an edge to ``m.a`` when that is a module, else to ``m``."""
    files = project_files(root, tops)
    graph = nx.DiGraph()
    graph.add_nodes_from(files)
    for name, path in files.items():
        for module, names, line in imports(path, root):
            targets = [f"{module}.{n}" if f"{module}.{n}" in files else module for n in names] or [module]
            for target in targets:
                if target in files and target != name and not graph.has_edge(name, target):
                    graph.add_edge(name, target, at=f"{path.relative_to(root)}:{line}")
    return graph


def child(scope: str, module: str) -> str:
    return module[len(scope) + 1:].split(".")[0]


def layer_violations(graph: nx.DiGraph) -> list[str]:
    bad = []
    for a, b, data in graph.edges(data=True):
        for scope, layers in LAYERS.items():
            if not (a.startswith(scope + ".") and b.startswith(scope + ".")):
                continue
            pa, pb = child(scope, a), child(scope, b)
            if pa == pb:
                continue
            ra = next((i for i, layer in enumerate(layers) if pa in layer), None)
            rb = next((i for i, layer in enumerate(layers) if pb in layer), None)
            if ra is None or rb is None:   # a module directly in the scope's package (core.logic's __init__)
                continue
            if ra <= rb and (a, b) not in EXCEPTIONS:
                how = "a peer of its layer" if ra == rb else "a higher layer"
                bad.append(f"{data['at']}: {a} -> {b} ({scope}.{pb} is {how})")
    return sorted(set(bad))


def test_every_core_package_is_in_a_layer():
    packages = {p.name for p in (ROOT / "core").iterdir() if (p / "__init__.py").exists()}
    declared = {name for layer in LAYERS["core"] for name in layer}
    assert packages == declared, f"undeclared: {sorted(packages - declared)}; gone: {sorted(declared - packages)}"
    loose = sorted(p.name for p in (ROOT / "core").glob("*.py") if p.name != "__init__.py")
    assert not loose, f"modules outside every package of core: {loose}"


def test_core_packages_import_only_lower_layers():
    bad = layer_violations(import_graph(("core",)))
    assert not bad, "\n".join(bad)


def test_the_core_root_imports_only_the_base_layer():
    bad = [f"core/__init__.py:{line} imports {module}" for module, _, line in imports(ROOT / "core/__init__.py", ROOT)
           if module.startswith("core.") and not module.startswith("core.base.")]
    assert not bad, "\n".join(bad)


def forbidden_imports(top: str, forbidden: tuple[str, ...]) -> list[str]:
    return sorted({f"{path.relative_to(ROOT)}:{line} imports {module}"
                   for path in sorted((ROOT / top).rglob("*.py")) for module, _, line in imports(path, ROOT)
                   if module.split(".")[0] in forbidden})


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


def test_widgets_import_no_app():
    bad = forbidden_imports("widgets", ("app",))
    assert not bad, "\n".join(bad)


def _feature(module: str, top: str) -> str | None:
    """The feature a module belongs to: ``app.features.<name>…`` or ``widgets.<name>.…`` (None: shell or a
    reusable widget)."""
    parts = module.split(".")
    if top == "app" and parts[:2] == ["app", "features"] and len(parts) > 2:
        return parts[2]
    if top == "widgets" and len(parts) > 2:
        return parts[1]
    return None


def test_features_import_the_shell_never_each_other():
    graph = import_graph(("app", "widgets"))
    bad = []
    for a, b, data in graph.edges(data=True):
        if a.startswith("app.shell") and b.startswith("app.features"):
            bad.append(f"{data['at']}: the shell imports the feature module {b}")
        fa, fb = _feature(a, "app"), _feature(b, "app")
        if fa and fb and fa != fb:
            bad.append(f"{data['at']}: feature {fa} imports feature {fb} ({b})")
        wa, wb = _feature(a, "widgets"), _feature(b, "widgets")
        if a.startswith("widgets") and b.startswith("widgets") and wb and wa != wb:
            bad.append(f"{data['at']}: {a} imports the {wb} feature's widget {b}")
    assert not bad, "\n".join(sorted(bad))


def test_no_import_cycles():
    graph = import_graph(("core", "app", "widgets"))
    cycles = sorted(nx.simple_cycles(graph), key=lambda c: (len(c), c))
    shown = []
    for cycle in cycles[:20]:
        edges = zip(cycle, cycle[1:] + cycle[:1])
        shown.append(" -> ".join(cycle + cycle[:1]) + "\n    " +
                     "\n    ".join(graph.edges[a, b]["at"] for a, b in edges))
    assert not cycles, f"{len(cycles)} import cycle(s):\n" + "\n".join(shown)


def _package_of(module: str, files: dict[str, Path]) -> str:
    path = files.get(module)
    return module if path is not None and path.name == "__init__.py" else module.rpartition(".")[0]


def private_imports(tops: tuple[str, ...], root: Path = ROOT) -> list[str]:
    """'file:line: owner.name' of every import of a ``_private`` module or name whose owner lies in another
    package than the importer."""
    files = project_files(root, tops)
    bad = []
    for name, path in files.items():
        here = _package_of(name, files)
        for module, names, line in imports(path, root):
            if module.split(".")[0] not in tops:
                continue
            pairs = [(module, n) for n in names] or [(module.rpartition(".")[0], module.rpartition(".")[2])]
            for owner, imported in pairs:
                full = f"{owner}.{imported}"
                owner_package = _package_of(full, files) if full in files else _package_of(owner, files)
                if full in files and not files[full].name == "__init__.py":
                    owner_package = owner
                hidden = [part for part in full.split(".") if part.startswith("_") and not part.startswith("__")]
                if hidden and owner_package != here:
                    bad.append(f"{path.relative_to(root)}:{line}: {full}")
    return sorted(set(bad))


def test_no_private_name_is_imported_across_packages():
    bad = private_imports(("core", "app", "widgets"))
    assert not bad, "\n".join(bad)


def test_the_import_graph_sees_local_relative_and_type_checking_imports(tmp_path):
    """The checker itself: a cycle closed by a function-local relative import is found, and so is one closed by a
    ``TYPE_CHECKING`` import."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    for init in (pkg / "__init__.py", pkg / "sub" / "__init__.py"):
        init.write_text("")
    (pkg / "a.py").write_text("from .sub import b\n")
    (pkg / "sub" / "b.py").write_text("def f():\n    from ..a import x\n")
    (pkg / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import d\n")
    (pkg / "d.py").write_text("import pkg.c\n")
    graph = import_graph(("pkg",), tmp_path)
    assert graph.edges["pkg.sub.b", "pkg.a"]["at"] == "pkg/sub/b.py:2"
    assert graph.has_edge("pkg.a", "pkg.sub.b") and graph.has_edge("pkg.d", "pkg.c") and graph.has_edge("pkg.c", "pkg.d")
    assert sorted(sorted(c) for c in nx.simple_cycles(graph)) == [["pkg.a", "pkg.sub.b"], ["pkg.c", "pkg.d"]]


def test_the_layer_check_refuses_an_upward_and_a_peer_import():
    graph = nx.DiGraph()
    graph.add_edge("core.sim.x", "core.analysis.y", at="core/sim/x.py:1")     # upward
    graph.add_edge("core.map.x", "core.agents.y", at="core/map/x.py:1")        # peer
    graph.add_edge("core.sim.x", "core.logic.lang.y", at="core/sim/x.py:2")   # downward: fine
    graph.add_edge("core.logic.lang.x", "core.logic.engines.y", at="core/logic/lang/x.py:1")   # upward inside logic
    bad = layer_violations(graph)
    assert [b.split(":")[0] + ":" + b.split(":")[1] for b in bad] == [
        "core/logic/lang/x.py:1", "core/map/x.py:1", "core/sim/x.py:1"]
