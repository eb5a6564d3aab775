"""Random agent populations for generated cities, benchmarks and VAP-style random worlds."""
from __future__ import annotations

from typing import Mapping

import numpy as np

from core.agents.spec import AgentSet, AgentSpec
from core.base.codes import Kind

#: Default concept mix (probabilities per agent of that kind; the rest are "normal" agents).
DEFAULT_PEDESTRIAN_MIX: dict[str, float] = {"old": 0.3, "young": 0.3}
DEFAULT_CAR_MIX: dict[str, float] = {"ambulance": 0.1, "bus": 0.1, "police": 0.1, "tiro": 0.1, "reckless": 0.1}


def random_agent_set(n: int, seed: int | np.random.Generator = 0, *, pedestrian_fraction: float = 0.45,
                     pedestrian_mix: Mapping[str, float] | None = None,
                     car_mix: Mapping[str, float] | None = None) -> AgentSet:
    """``n`` agents: pedestrians first (priority 0), then cars with priorities 1..n_cars in random order.

    Each agent gets at most one concept, drawn from its kind's mix (probabilities must sum to ≤ 1).
    """
    if n < 0:
        raise ValueError("n must be >= 0")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    n_ped = int(round(n * pedestrian_fraction))
    n_car = n - n_ped
    ped_mix = dict(DEFAULT_PEDESTRIAN_MIX if pedestrian_mix is None else pedestrian_mix)
    car_mix_ = dict(DEFAULT_CAR_MIX if car_mix is None else car_mix)

    def draw(mix: dict[str, float]) -> tuple[str, ...]:
        names = list(mix)
        p = np.array([mix[k] for k in names], float)
        if p.sum() > 1 + 1e-9 or (p < 0).any():
            raise ValueError("concept probabilities must be >= 0 and sum to at most 1")
        u = rng.random()
        acc = np.cumsum(p)
        j = int(np.searchsorted(acc, u, side="right"))
        return (names[j],) if j < len(names) else ()

    agents = [AgentSpec(Kind.PEDESTRIAN, i + 1, 0, draw(ped_mix)) for i in range(n_ped)]
    priorities = rng.permutation(n_car) + 1
    agents += [AgentSpec(Kind.CAR, i + 1, int(priorities[i]), draw(car_mix_)) for i in range(n_car)]
    return AgentSet(tuple(agents), source=f"random_agent_set(n={n})")
