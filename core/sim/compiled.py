"""One compiled project per configuration: the city, ontology, rule program, engines and grounder of a
:class:`~core.sim.config.SimConfig`, built once and shared by everything that reads that configuration.

Why: the simulation, the inspector, scenes and the VAP overlay each need the config's grounder (and the simulation
its engine), and the studio's map draws the selected agent's field of view with it. Built separately, they were
several grounders of one project whose caches (agent arrays, gather plans) were each filled again, and the map
borrowed the inspector's. :func:`compiled_project` gives every caller the same :class:`CompiledProject`, memoised
per config object and held weakly (a closed project's config is freed, and its entry with it). A config whose city,
ontology, rules, rule section or engine was replaced in place (the city editor sets ``config.city``) gets a new one.

Sharing is safe: a :class:`~core.logic.grounding.grounder.Grounder` is thread-safe, the compiled engine is stateless
after construction, and the z3 engine keeps one context per thread.
"""
from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from core.base.errors import ConfigError
from core.logic.engines.compiled import CompiledEngine
from core.logic.grounding.grounder import Grounder
from core.logic.lang.ontology import Ontology
from core.map.model import CityMap

__all__ = ["CompiledProject", "compiled_project", "make_engine"]


def make_engine(name: str, program: Any) -> Any:
    """Instantiate the rule engine by name ('compiled' or 'z3')."""
    if name == "compiled":
        return CompiledEngine(program)
    if name == "z3":
        from core.logic.engines.z3engine import Z3Engine  # z3 loads only for projects that run it

        return Z3Engine(program)
    raise ConfigError(f"unknown engine {name!r} (expected 'compiled' or 'z3')")


@dataclass(frozen=True, eq=False)
class CompiledProject:
    """What a configuration compiles to. Holds no reference to the config itself (the memo is weak on it)."""

    city: CityMap
    ontology: Ontology
    rules: Any
    rule_section: str | None
    #: the rule program that drives the agents (``config.program``)
    program: Any
    #: the config's engine name, the default of :meth:`engine`
    engine_name: str
    grounder: Grounder
    _engines: dict[str, Any] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @classmethod
    def of(cls, config: Any) -> "CompiledProject":
        return cls(config.city, config.ontology, config.rules, config.rule_section, config.program, config.engine,
                   Grounder(config.city, config.ontology))

    def engine(self, name: str | None = None) -> Any:
        """The engine ``name`` (default: the config's) for :attr:`program`, built on first use."""
        name = name or self.engine_name
        eng = self._engines.get(name)
        if eng is None:
            with self._lock:
                eng = self._engines.get(name)
                if eng is None:
                    eng = self._engines[name] = make_engine(name, self.program)
        return eng

    def compiled_from(self, config: Any) -> bool:
        """Whether ``config`` still holds what this was compiled from (the same objects)."""
        return (config.city is self.city and config.ontology is self.ontology and config.rules is self.rules
                and config.rule_section == self.rule_section and config.engine == self.engine_name)


_lock = threading.RLock()   # re-entrant: a weakref callback (_forget) may run in a collection inside the lock
#: id(config) -> (weak reference to the config, its compiled project)
_projects: dict[int, tuple[weakref.ref, CompiledProject]] = {}


def compiled_project(config: Any) -> CompiledProject:
    """The :class:`CompiledProject` of ``config``, the same object for every caller while the config lives and
    holds the same parts; thread-safe. A config that cannot be weakly referenced gets a new one each call."""
    key = id(config)
    entry = _projects.get(key)
    if entry is not None and entry[0]() is config and entry[1].compiled_from(config):
        return entry[1]
    with _lock:
        entry = _projects.get(key)
        if entry is not None and entry[0]() is config and entry[1].compiled_from(config):
            return entry[1]
        project = CompiledProject.of(config)
        try:
            ref = weakref.ref(config, partial(_forget, key))
        except TypeError:
            return project
        _projects[key] = (ref, project)
        return project


def _forget(key: int, ref: weakref.ref) -> None:
    with _lock:
        entry = _projects.get(key)
        if entry is not None and entry[0] is ref:
            del _projects[key]
