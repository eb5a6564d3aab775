"""Tiny VAP datasets for tests: the easy mode at 2 px per cell (256² frames), few steps, few worlds."""
from __future__ import annotations

from pathlib import Path

from core.tasks.vap import VapDataConfig

#: steps per test world (frames 1..STEPS-1; the loader keeps steps > 10)
STEPS = 16


def tiny_config(**kw) -> VapDataConfig:
    base = dict(mode="easy", worlds={"train": 1, "val": 1, "test": 0}, steps=STEPS, px_per_cell=2, workers=1)
    base.update(kw)
    return VapDataConfig(**base)


def make_tiny(out: Path, **kw):
    from core.tasks.vap import generate

    return generate(tiny_config(**kw), out)


def tiny_checkpoint(folder: Path, unary_names, binary_names) -> Path:
    """An untrained VAP model (tiny sizes, seed 0) for these predicate names, saved into ``folder``."""
    import torch

    from core.models.vap.config import preset
    from core.models.vap.model import VapModel, save_checkpoint

    torch.manual_seed(0)
    cfg = preset("cpu", reasoning="gnn", image_side=64, fpn_channels=8,
                 unary_names=tuple(unary_names), binary_names=tuple(binary_names))
    save_checkpoint(VapModel(cfg).eval(), folder)
    return folder


# ---- the studio's VAP dock (pytest-qt) -------------------------------------------------------------------------

def open_vap_dock(qtbot, win):
    """Open the VAP dock of the studio ``win`` with its shortcut (Ctrl+Alt+V); (the dock, its panel)."""
    from PySide6 import QtCore

    win.window.activateWindow()
    qtbot.keyClick(win.window, QtCore.Qt.Key.Key_V,
                   QtCore.Qt.KeyboardModifier.ControlModifier | QtCore.Qt.KeyboardModifier.AltModifier)
    dock = win.docks["vap"]
    qtbot.waitUntil(dock.isVisible)
    return dock, win.window.panels.widget("vap")


def assert_true_actions_recorded(win, overlay, step: int) -> None:
    """Every agent of a VAP overlay of the studio's step ``step`` has the action recorded for it there as truth."""
    decided = win.history.step_record(step).decided
    names = list(win.history.agents.names)
    for ag in overlay.agents:
        assert ag.true_action == int(decided[names.index(ag.agent_id)])
