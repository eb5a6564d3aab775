#!/usr/bin/env python3
"""Agent editor: how long one edit takes to show, for agent sets of 18, 100 and 1000 agents (offscreen Qt).

Every edit of the agent editor is a command that replaces the set; the dock then refills its table
(widgets/agent_editor/editor.py, a Qt model: cells are computed when painted) and the "agents" Problems checker runs
(core/studio/agent_sets.check_agents). This prints, per size, the median and worst of ``--samples`` runs (ms) of

* *table refill*: ``AgentEditor.show_set`` plus the synchronous repaint of the table;
* *edit → table*: a concept ticked on one row through ``session.execute`` (the command, the ``agents`` event, the
  controller's refresh with its per-row problem check) until the repainted table;
* *Problems check*: ``check_agents`` on the session.

Target (the studio's responsiveness goal for an edit): median < 100 ms at 1000 agents for edit → table.

Usage: QT_QPA_PLATFORM=offscreen python bench/agent_editor.py [--samples 15]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=15)
    args = ap.parse_args()

    from PySide6 import QtWidgets

    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication(sys.argv)
    from core.agents.edit import KINDS, concepts_for, generate_composition
    from core.base.codes import Kind
    from core.project.model import new_project
    from core.sim.config import load_mode
    from core.studio import agent_sets as A
    from core.studio.session import Session
    from widgets.agent_editor.editor import AgentEditor

    root = Path(__file__).resolve().parents[1]
    cfg = load_mode(root / "configs" / "modes" / "default.yaml")
    valid = {k: concepts_for(k, cfg.ontology) for k in KINDS}
    cols = [c for k in KINDS for c in valid[k]]
    print(f"{'agents':>7} {'table refill':>18} {'edit -> table':>18} {'Problems check':>18}   (median / max ms)")
    for n in (18, 100, 1000):
        agents = generate_composition({Kind.CAR: {"normal": n // 2, "ambulance": n // 4},
                                       Kind.PEDESTRIAN: {"old": n - n // 2 - n // 4}}, seed=1)
        s = Session()
        s.open(new_project(cfg.with_agents(agents)))
        w = AgentEditor()
        w.resize(620, 520)
        w.show()

        # the session's callback outlives this iteration: it refills the editor of its own session
        def refill(w: AgentEditor = w, s: Session = s) -> None:
            w.show_set(A.agent_set(s, "agents"), cols, valid, {})
            w.table.viewport().repaint()

        s.events.agents.connect(lambda e, refill=refill: refill())
        refill()
        app.processEvents()
        fill, edit, check = [], [], []
        car = next(i for i, a in enumerate(agents) if a.kind is Kind.CAR)
        for k in range(args.samples):
            t = time.perf_counter()
            refill()
            fill.append(time.perf_counter() - t)
            t = time.perf_counter()
            s.execute(A.edit(s, "agents", [car], **({"add_concepts": ["tiro"]} if k % 2 == 0 else
                                                    {"remove_concepts": ["tiro"]})))
            A.check_agents(s)
            edit.append(time.perf_counter() - t)
            t = time.perf_counter()
            A.check_agents(s)
            check.append(time.perf_counter() - t)
            app.processEvents()

        def fmt(xs: list[float]) -> str:
            return f"{statistics.median(xs) * 1000:7.1f} / {max(xs) * 1000:6.1f}"

        print(f"{n:>7} {fmt(fill):>18} {fmt(edit):>18} {fmt(check):>18}")
        w.close()


if __name__ == "__main__":
    main()
