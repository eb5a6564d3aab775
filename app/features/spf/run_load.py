"""Loading a trained SPF run (``spf train --out DIR``) in the GUI, shared by the studio's Models panel
(:mod:`app.features.spf.models`) and the SPF play window's Model dock (:mod:`app.features.spf.play_model`): the *Load run…* row,
asking for the run's folder, loading it (a refused run is said in a warning) and the run's one-line description.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

from PySide6 import QtWidgets


def load_run_row(on_click: Callable[[], None]) -> tuple[QtWidgets.QHBoxLayout, QtWidgets.QPushButton,
                                                         QtWidgets.QLabel]:
    """The row *Load run…* button + run label ("no model loaded"); the button calls ``on_click``."""
    row = QtWidgets.QHBoxLayout()
    button = QtWidgets.QPushButton("Load run…")
    button.setToolTip("A folder written by python main.py spf train --out DIR")
    button.clicked.connect(on_click)
    row.addWidget(button)
    label = QtWidgets.QLabel("no model loaded")
    label.setWordWrap(True)
    row.addWidget(label, 1)
    return row, button, label


def ask_run(parent: QtWidgets.QWidget, load: Callable[[str], object],
            title: str = "Load a trained SPF run") -> None:
    """Ask for a run folder; ``load(path)`` when one was chosen."""
    path = QtWidgets.QFileDialog.getExistingDirectory(parent, title)
    if path:
        load(path)


def load_run_or_warn(path: str | Path, warn: Callable[[str, str], object]):
    """The policy of the run in ``path``, or None after ``warn(title, message)`` when the run is refused."""
    from core.base.errors import LogiCityError
    from core.tasks.spf.learning.run import load_run

    try:
        return load_run(path)
    except LogiCityError as exc:
        warn("Cannot load the model", str(exc))
        return None


def describe_run(pol, with_test: bool = True) -> str:
    """The run in one line: ``BC for easy (seed 0, 2000 steps)``, with ``with_test`` its test TSR if recorded."""
    if pol is None:
        return ""
    tr = pol.config.get("training", {})
    test = pol.config.get("metrics", {}).get("test") if with_test else None
    return (f"{pol.algo} for {pol.mode} (seed {tr.get('seed', '?')}, {tr.get('steps', '?')} steps)"
            + (f"; test TSR {test['TSR']:.2f}" if test else ""))
