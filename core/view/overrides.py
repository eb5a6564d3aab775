"""User interventions (forced actions) as the views read them from an episode's ``interventions`` metadata.

Why a module of its own: the inspector, the colour-by schemes and the map's forced-action ring must agree on
which agent is forced at which state, and the colouring cannot import the inspector (which imports it).
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np


def active_intervention(meta: Mapping[str, Any], k: int, agent: int) -> dict | None:
    """The user intervention forcing ``agent``'s action during step ``k`` (the studio's ``interventions`` list:
    sticky entries ``{step, agent, action}``, the latest with ``step <= k`` wins, action None ends one)."""
    current = None
    for e in sorted(meta.get("interventions") or (), key=lambda e: e.get("step", 0)):
        if isinstance(e, dict) and e.get("agent") == agent and isinstance(e.get("step"), int) and e["step"] <= k:
            current = e if e.get("action") is not None else None
    return current


def overrides_at(meta: Mapping[str, Any], k: int, n: int) -> np.ndarray:
    """int [n]: the action each agent's user intervention forces during step ``k`` (-1: none). At the newest
    state this is the only part of the coming decision known before the simulation steps."""
    out = np.full(n, -1, np.int64)
    for i in {e.get("agent") for e in meta.get("interventions") or () if isinstance(e, dict)}:
        if isinstance(i, int) and 0 <= i < n:
            e = active_intervention(meta, k, i)
            if e is not None:
                out[i] = int(e["action"])
    return out
