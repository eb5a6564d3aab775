"""Agent compositions of VAP worlds: the mode's fixed agent files, or a seeded random composition.

Random compositions follow the reference's recipe (docs/reference.md#vap-dataset-generation): the agent count is
uniform in a per-stage range, 3–4 pedestrians (5–6 on test) always including one old and two young ones (extra
pedestrians old / young / plain with weights 2/5, 2/5, 1/5), the rest cars of size 2 with priorities from a random
permutation of 1..count and one concept drawn over ambulance, bus, police, reckless, tiro (0.18 each) and plain
(0.1). The reference draws the concepts with Python's unseeded ``random``; here every draw comes from the world's
seed, so a random dataset is reproducible.
"""
from __future__ import annotations

import numpy as np

from core.agents.spec import AgentSet, AgentSpec
from core.base.codes import Kind

#: agent count range (inclusive) per stage, as in the reference's final dataset scripts
AGENT_RANGE: dict[str, tuple[int, int]] = {"train": (12, 12), "val": (13, 15), "test": (13, 15)}
#: pedestrian count range (inclusive) per stage
PEDESTRIAN_RANGE: dict[str, tuple[int, int]] = {"train": (3, 4), "val": (3, 4), "test": (5, 6)}
CAR_CONCEPTS: tuple[str, ...] = ("ambulance", "bus", "police", "reckless", "tiro", "")
CAR_WEIGHTS: tuple[float, ...] = (0.18, 0.18, 0.18, 0.18, 0.18, 0.1)
EXTRA_PEDESTRIAN: tuple[str, ...] = ("old", "young", "")
EXTRA_WEIGHTS: tuple[float, ...] = (0.4, 0.4, 0.2)


def random_composition(stage: str, rng: np.random.Generator) -> AgentSet:
    """A random agent set for ``stage`` (train/val/test): pedestrians first, then cars."""
    lo, hi = AGENT_RANGE[stage]
    n = int(rng.integers(lo, hi + 1))
    plo, phi = PEDESTRIAN_RANGE[stage]
    n_ped = int(rng.integers(plo, phi + 1))
    ped_concepts = ["old", "young", "young"]
    for _ in range(n_ped - 3):
        ped_concepts.append(EXTRA_PEDESTRIAN[int(rng.choice(3, p=EXTRA_WEIGHTS))])
    agents = [AgentSpec(Kind.PEDESTRIAN, k + 1, 0, (c,) if c else ()) for k, c in enumerate(ped_concepts)]
    prio = rng.permutation(np.arange(1, n + 1))
    w = np.asarray(CAR_WEIGHTS) / sum(CAR_WEIGHTS)
    for k in range(n - n_ped):
        c = CAR_CONCEPTS[int(rng.choice(len(CAR_CONCEPTS), p=w))]
        agents.append(AgentSpec(Kind.CAR, k + 1, int(prio[k]), (c,) if c else (), size=2))
    return AgentSet(tuple(agents), source=f"random:{stage}")
