"""Helpers shared by the studio tests (Qt-free part).

``ensure_logic_exports()`` is a stop-gap while ``core/logic/__init__.py`` does not yet re-export the names
``core.sim`` imports from it (load_ontology, load_rules, Grounder, CompiledEngine, Z3Engine); it only adds
missing names, pointing at the real implementations, and does nothing once the package exports them.
"""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_MODE = ROOT / "configs" / "modes" / "default.yaml"


def ensure_logic_exports() -> None:
    import importlib

    import core.logic as logic

    wanted = {"load_ontology": "core.logic.ontology", "load_rules": "core.logic.program",
              "Grounder": "core.logic.grounding", "CompiledEngine": "core.logic.compiled",
              "Z3Engine": "core.logic.z3engine"}
    for name, module in wanted.items():
        if not hasattr(logic, name):
            try:
                setattr(logic, name, getattr(importlib.import_module(module), name))
            except (ImportError, AttributeError):
                pass


def default_config():
    ensure_logic_exports()
    from core.sim.config import load_mode

    return load_mode(DEFAULT_MODE)


def run_sim(config, seed: int = 0, steps: int = 20):
    from core.sim.simulation import Simulation

    sim = Simulation(config, seed=seed, record=True)
    for _ in range(steps):
        sim.step()
    return sim
