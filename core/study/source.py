"""Question sources: every (frame, agent) a study may ask about, with its true groundings and decided action.

Why simulate here: a study needs, for each asked agent, the exact facts the rule engine decided on at that
frame. Running the core simulator and grounding each state once (``Simulation.decide`` then ``step(prepared=…)``)
records the decision and the grounding it came from — the CollidingClose coin flips included — so the
description shown to a participant and the answer key can never disagree.

A VAP dataset split is the other source (``kind: vap``): read from core/tasks/vap when that package is present.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from core.base.codes import Action, Kind
from core.base.errors import ConfigError
from core.study.describe import SceneFacts, facts_from_grounding

# The simulator is imported when a source collects its questions: `python main.py --help` imports this module
# (core/cli/study.py).

__all__ = ["Candidate", "SimulatedSource", "ACTION_LETTERS", "ACTION_WORDS"]

#: The answer options of the paper's multiple-choice questions, in option order.
ACTION_WORDS: tuple[str, ...] = ("Slow", "Normal", "Fast", "Stop")
ACTION_LETTERS: tuple[str, ...] = ("A", "B", "C", "D")
assert [int(Action.SLOW), int(Action.NORMAL), int(Action.FAST), int(Action.STOP)] == [0, 1, 2, 3]


@dataclass(frozen=True)
class Candidate:
    """One possible question: agent ``agent`` of world ``world`` at state ``step``; ``truth`` = 0..3."""

    world: str
    step: int
    agent: int
    agent_name: str
    concepts: tuple[str, ...]
    truth: int
    facts: SceneFacts


@dataclass(frozen=True)
class SimulatedSource:
    """Simulated episodes of a mode: one world per seed, ``steps`` steps each; states before ``min_step`` are
    skipped (the reference VAP loader keeps steps > 10, while the agents leave their start positions)."""

    mode: str
    split: str | None = "test"
    seeds: tuple[int, ...] = (0, 1, 2, 3, 4)
    steps: int = 100
    min_step: int = 11

    def to_dict(self) -> dict:
        return {"kind": "simulated", "mode": self.mode, "split": self.split, "seeds": list(self.seeds),
                "steps": self.steps, "min_step": self.min_step}

    def collect(self, keep: Callable[[Sequence[str], int], bool], *, base: Path | None = None,
                progress: Callable[[int, int], None] | None = None,
                cancelled: Callable[[], bool] | None = None, snapshots: dict | None = None) -> list[Candidate]:
        """Every (state, agent) with ``keep(concepts, kind)`` true, in (seed, step, agent) order.

        ``snapshots`` (optional dict) receives ``(world, step) -> WorldSnapshot`` for rendering images later.
        """
        from core.sim.config import load_mode
        from core.sim.simulation import Simulation

        mode = Path(self.mode)
        if base is not None and not mode.is_absolute():
            mode = base / mode
        if self.steps < 1 or self.min_step < 0 or not self.seeds:
            raise ConfigError("a simulated source needs steps >= 1, min_step >= 0 and at least one seed")
        try:
            cfg = load_mode(mode, agents_split=self.split)
        except ConfigError as exc:
            if self.split is not None and "agents_" in str(exc):
                cfg = load_mode(mode)   # a mode with one agent set
            else:
                raise
        out: list[Candidate] = []
        total = len(self.seeds) * self.steps
        done = 0
        for seed in self.seeds:
            sim = Simulation(cfg, seed=int(seed), record=False)
            agents = sim.agents
            kinds = [int(k) for k in agents.kinds]
            concepts = [tuple(agents.concept_names(i)) for i in range(len(agents))]
            chosen = [i for i in range(len(agents)) if keep(concepts[i], kinds[i])]
            world = f"seed{int(seed)}"
            for _ in range(self.steps):
                if cancelled is not None and cancelled():
                    return out
                snap = sim.snapshot()
                grounding, decisions = sim.decide(snap)
                step = sim.step_index
                outcome = sim.step(prepared=(grounding, decisions))
                if step >= self.min_step:
                    if snapshots is not None:
                        snapshots[(world, step)] = snap
                    for i in chosen:
                        out.append(Candidate(world, step, i, agents.names[i], concepts[i],
                                             int(outcome.decided[i]), facts_from_grounding(grounding, i, world)))
                done += 1
                if progress is not None:
                    progress(done, total)
        return out


def concept_filter(concepts: Sequence[str], cars_only: bool = True) -> Callable[[Sequence[str], int], bool]:
    """``keep`` for :meth:`SimulatedSource.collect`: agents carrying any of ``concepts`` (all when empty), cars only
    when ``cars_only`` (the paper scores cars; a pedestrian's label is never Normal or Fast)."""
    wanted = {c.lower() for c in concepts}

    def keep(have: Sequence[str], kind: int) -> bool:
        if cars_only and kind != int(Kind.CAR):
            return False
        return not wanted or bool(wanted & {c.lower() for c in have})

    return keep
