#!/usr/bin/env python3
"""Cost of "which agent is which" per refresh, at 200 agents.

* ``agent_rows``: the Agents panel's rows at a state (core/view/agent_rows.py);
* the panel taking them: ``AgentsPanel.set_rows`` (in-place update, filtered and sorted in Python);
* ``witness_agents`` for one selected agent (done every drawn frame);
* label placement: ``declutter`` of 200 labels (core/view/labels.py, every painted frame while labels are on).

Targets (2-core machine): rows + panel under 4 ms (the panel refreshes at most 4 times a second while playing, so
it never takes more than a quarter of a 16 ms frame); the witness under 1 ms (every frame, always on); label
placement under 3 ms (every painted frame, only while View ▸ Show agent names is on and cells are big enough for
labels). Prints median / worst CPU time of the measuring thread and each figure's ratio to its target (< 1 = met).

Usage: QT_QPA_PLATFORM=offscreen python bench/agents.py [--agents 200] [--steps 30]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

TARGET_PANEL_S = 0.004
TARGET_FRAME_S = 0.001
TARGET_LABELS_S = 0.003


def timed(fn, repeats: int) -> tuple[float, float]:
    out = []
    for _ in range(repeats):
        t = time.thread_time()
        fn()
        out.append(time.thread_time() - t)
    return float(np.median(out)), float(np.max(out))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--agents", type=int, default=200)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--repeats", type=int, default=50)
    args = ap.parse_args(argv)

    from PySide6 import QtWidgets

    from bench.gui import generated_config
    from core.sim.simulation import Simulation
    from core.view.agent_rows import agent_rows, witness_agents
    from core.view.labels import declutter, priority_order
    from widgets.inspect.agents_panel import AgentsPanel

    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication([])
    t0 = time.perf_counter()
    sim = Simulation(generated_config(args.agents), seed=0, record=True)
    for _ in range(args.steps):
        sim.step()
    ep = sim.buffer
    print(f"set-up: {args.agents} agents, {args.steps} steps simulated in {time.perf_counter() - t0:.1f} s")
    ks = np.linspace(0, ep.num_steps, args.repeats).astype(int)
    it = iter(np.resize(ks, 10 * args.repeats))

    rows_med, rows_max = timed(lambda: agent_rows(ep, int(next(it))), args.repeats)
    panel = AgentsPanel()
    panel.resize(430, 500)
    panel.show()
    panel.set_rows(agent_rows(ep, 0), 0)
    panel.table.sortByColumn(5, panel.table.horizontalHeader().sortIndicatorOrder())   # Path left: re-sorts
    prepared = [agent_rows(ep, int(k)) for k in ks]
    pit = iter(prepared * 10)
    set_med, set_max = timed(lambda: panel.set_rows(next(pit), 0), args.repeats)
    app.processEvents()

    sel = next((a for a in range(len(ep.agents)) if witness_agents(ep, ep.num_steps - 1, a)), 0)
    wit_med, wit_max = timed(lambda: witness_agents(ep, int(next(it)), sel), args.repeats)
    rng = np.random.default_rng(0)
    xy = rng.uniform(0, 900, size=(args.agents, 2))
    boxes = np.concatenate([xy, xy + [40, 14]], axis=1)
    order = priority_order(args.agents, (sel,))
    lab_med, lab_max = timed(lambda: declutter(boxes, order), args.repeats)

    def line(name: str, med: float, worst: float, target: float) -> None:
        print(f"{name:<34} median {med * 1e3:7.3f} ms   worst {worst * 1e3:7.3f} ms   median/target "
              f"{med / target:5.2f}")

    line("agent_rows", rows_med, rows_max, TARGET_PANEL_S)
    line("AgentsPanel.set_rows (sorted)", set_med, set_max, TARGET_PANEL_S)
    line("panel refresh = rows + set_rows", rows_med + set_med, rows_max + set_max, TARGET_PANEL_S)
    line("witness_agents (every frame)", wit_med, wit_max, TARGET_FRAME_S)
    line(f"declutter {args.agents} labels (every paint)", lab_med, lab_max, TARGET_LABELS_S)
    panel.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
