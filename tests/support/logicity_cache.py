"""Builds a reference-style ``.pkl`` episode cache from plain data (docs/reference.md "Episode caches"): the
tensors the reference pickles, made from one of our simulations so the test knows the expected contents."""
from __future__ import annotations

from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
REF_RULES = ROOT / "tests/data/reference/logicity-configs/master/config/rules/sim/expert/expert_rule.yaml"


def make_cache(path: Path, steps: int = 3, seed: int = 0, fmt: str = "pickle"):
    """Simulate the default city ``steps`` steps and write the cache the reference would have written
    (``fmt``: "pickle" = pickle.dump of torch tensors, "torch" = torch.save). Returns the simulation's buffer."""
    import pickle

    import torch
    import yaml

    from core.base.codes import Kind
    from core.sim.config import load_mode
    from core.sim.simulation import Simulation

    cfg = load_mode(ROOT / "configs/modes/default.yaml")
    sim = Simulation(cfg, seed=seed)
    sim.run(steps)
    buf = sim.buffer
    city = cfg.city
    names = list(buf.agents.names)
    kinds = ["Car" if int(k) == int(Kind.CAR) else "Pedestrian" for k in buf.agents.kinds]
    static = np.stack([city.block.astype(np.float32), city.building.astype(np.float32), city.street])
    obs = {}
    pos, goals = buf.array("positions"), buf.array("goals")
    decided, realised, headings = buf.array("decided"), buf.array("realised"), buf.array("headings")
    for s in range(steps + 1):
        layers = np.zeros((len(names),) + city.shape, np.float32)
        for i, kind in enumerate(kinds):
            code = 8.0 if kind == "Pedestrian" else 9.0
            cells, idx = buf.plan(s, i)
            for r, c in cells[idx + 1:-1]:
                layers[i, r, c] = code + 0.1
            layers[i, goals[s, i, 0], goals[s, i, 1]] = code + 0.3
            layers[i, pos[s, i, 0], pos[s, i, 1]] = code
        entry = {"World": torch.from_numpy(np.concatenate([static, layers]))}
        if s < steps:   # master: one-hot over 13 car moves / 5 pedestrian moves
            acts = []
            for i, kind in enumerate(kinds):
                h = max(0, int(headings[s + 1, i]))
                if kind == "Car":
                    v = torch.zeros(13)
                    v[12 if realised[s, i] == 3 else int(realised[s, i]) * 4 + h] = 1
                else:
                    v = torch.zeros(5)
                    v[4 if realised[s, i] == 3 else h] = 1
                acts.append(v)
            entry["Agent_actions"] = acts
        obs[s + 1] = entry
    agents = {}
    for i, (name, kind) in enumerate(zip(names, kinds)):
        concepts = {"type": kind, "priority": int(buf.agents.priorities[i])}
        concepts.update({c: 1.0 for c in buf.agents.concept_names(i)})
        agents[name] = {"layer_id": 3 + i, "type": kind, "size": 1, "concepts": concepts}
    cache = {"Time_Obs": obs, "Static Info": {"Agents": agents, "Logic": {
        "Predicates": [p.name for p in cfg.ontology.predicates], "Rules": yaml.safe_load(REF_RULES.read_text()),
        "Groundings": {}}}}
    if fmt == "torch":
        torch.save(cache, path)
    else:
        with open(path, "wb") as fh:
            pickle.dump(cache, fh)
    return buf, decided, realised
