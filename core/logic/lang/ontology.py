"""Ontologies: which predicates exist, their arity and kind, and how each is grounded.

File format (YAML, see ``configs/ontologies/*.yaml`` and ``docs/rules.md``)::

    ontology: full                # a short name
    description: ...              # optional
    view: {fov: 25, behind: {left: 1, right: 2, up: 1, down: 2}}   # optional, reference defaults
    predicates:
      - name: IsClose
        arity: 2
        kind: spatial             # semantic | spatial | action
        grounding: is_close       # a name from core.logic.lang.registry.REGISTRY (never an import path)
        params: {min: 12, max: 20}
        description: Checks if agent x is close to agent y.
      - name: Stop
        arity: 1
        kind: action
        description: Stop action.

Predicate order is significant: it is the SPF observation layout (docs/reference.md#spf-observation).
``grounding: null`` declares a predicate that is not grounded yet (always false; the analysis API reports its uses).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Iterable, Mapping

from core.base.codes import ACTION_NAMES
from core.base.errors import ConfigError
from core.io.yamlio import LocatedDict, LocatedList, dump_yaml, expect, load_yaml, loads_yaml
from core.logic.lang.registry import DEFAULT_VIEW, REGISTRY

__all__ = ["Predicate", "Ontology", "load_ontology", "loads_ontology", "KINDS", "RESERVED_NAMES"]

KINDS = ("semantic", "spatial", "action")
#: Names a predicate may not take (they are keywords of the rule language).
RESERVED_NAMES = frozenset({"Not", "not"})
_IDENT = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")


def _freeze(v: Any) -> Any:
    if isinstance(v, Mapping):
        return MappingProxyType({k: _freeze(x) for k, x in v.items()})
    if isinstance(v, (list, tuple)):
        return tuple(_freeze(x) for x in v)
    return v


def _thaw(v: Any) -> Any:
    if isinstance(v, Mapping):
        return {k: _thaw(x) for k, x in v.items()}
    if isinstance(v, tuple):
        return [_thaw(x) for x in v]
    return v


@dataclass(frozen=True, eq=False)
class Predicate:
    """One ontology predicate. ``grounding`` is a registry name (None for actions / ungrounded ones)."""

    name: str
    arity: int
    kind: str
    description: str = ""
    grounding: str | None = None
    params: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    index: int = 0  # position in the ontology file

    @property
    def is_action(self) -> bool:
        return self.kind == "action"

    @property
    def is_grounded(self) -> bool:
        return self.grounding is not None

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"name": self.name, "arity": self.arity, "kind": self.kind}
        if not self.is_action:
            d["grounding"] = self.grounding
            spec = REGISTRY.get(self.grounding) if self.grounding else None
            if spec and spec.params:
                d["params"] = _thaw(self.params)
        d["description"] = self.description
        return d


@dataclass(frozen=True, eq=False)
class Ontology:
    """An ordered set of predicates plus view parameters. Build with :func:`load_ontology`."""

    name: str
    predicates: tuple[Predicate, ...]
    view: Mapping[str, Any] = field(default_factory=lambda: _freeze({k: s.default for k, s in
                                                                     DEFAULT_VIEW.items()}))
    description: str = ""
    source: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_name", {p.name: p for p in self.predicates})
        # the views below are read in every grounding step: compute them once (the ontology is immutable)
        grounded = tuple(p for p in self.predicates if not p.is_action)
        object.__setattr__(self, "_grounded", grounded)
        object.__setattr__(self, "_unary", tuple(p for p in grounded if p.arity == 1))
        object.__setattr__(self, "_binary", tuple(p for p in grounded if p.arity == 2))

    # -- lookup -------------------------------------------------------------------------------------------
    # (the ignores below: __post_init__ sets these caches with object.__setattr__, outside the dataclass fields,
    # so mypy does not know them)
    def __contains__(self, name: object) -> bool:
        return name in self._by_name  # type: ignore[attr-defined]

    def __getitem__(self, name: str) -> Predicate:
        return self._by_name[name]  # type: ignore[attr-defined]

    def get(self, name: str) -> Predicate | None:
        return self._by_name.get(name)  # type: ignore[attr-defined]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.predicates)

    @property
    def grounded(self) -> tuple[Predicate, ...]:
        """Non-action predicates in file order (the observation layout)."""
        return self._grounded  # type: ignore[attr-defined]

    @property
    def unary(self) -> tuple[Predicate, ...]:
        return self._unary  # type: ignore[attr-defined]

    @property
    def binary(self) -> tuple[Predicate, ...]:
        return self._binary  # type: ignore[attr-defined]

    @property
    def actions(self) -> tuple[Predicate, ...]:
        return tuple(p for p in self.predicates if p.is_action)

    def observation_size(self, n_entities: int = 5) -> int:
        """Length of the SPF observation vector (docs/reference.md#spf-observation): Σ unary n + Σ binary n²."""
        return sum(n_entities ** p.arity for p in self.grounded)

    # -- output ---------------------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"ontology": self.name}
        if self.description:
            d["description"] = self.description
        d["view"] = _thaw(self.view)
        d["predicates"] = [p.to_dict() for p in self.predicates]
        return d

    def to_yaml(self) -> str:
        return dump_yaml(self.to_dict())

    def save(self, path: str | Path) -> None:
        Path(path).write_text(self.to_yaml(), encoding="utf-8")


def _check_params(container: LocatedDict, key: str, specs: Mapping[str, Any], given: Any,
                  what: str) -> dict[str, Any]:
    if given is None:
        given = {}
    if not isinstance(given, dict):
        raise container.error(f"{what}: 'params' must be a mapping", key)
    out = {}
    for k, v in given.items():
        if k not in specs:
            allowed = ", ".join(specs) or "none"
            raise given.error(f"{what}: unknown parameter {k!r} (allowed: {allowed})", k) \
                if isinstance(given, LocatedDict) else ConfigError(f"{what}: unknown parameter {k!r}")
        problem = specs[k].check(v)
        if problem:
            raise given.error(f"{what}: parameter {k!r} {problem}", k) if isinstance(given, LocatedDict) \
                else ConfigError(f"{what}: parameter {k!r} {problem}")
        out[k] = v
    for k, s in specs.items():
        out.setdefault(k, s.default)
    return out


_PRED_KEYS = {"name", "arity", "kind", "grounding", "params", "description"}
_TOP_KEYS = {"ontology", "description", "view", "predicates"}


def _predicate(item: Any, index: int, plist: LocatedList) -> Predicate:
    if not isinstance(item, LocatedDict):
        raise plist.error("each predicate must be a mapping with name, arity, kind, ...", index)
    for k in item:
        if k not in _PRED_KEYS:
            raise item.error(f"unknown key {k!r} in predicate (allowed: {', '.join(sorted(_PRED_KEYS))})", k)
    name = expect(item, "name", str, what="predicate")
    if not _IDENT.match(name) or name in RESERVED_NAMES:
        raise item.error(f"invalid predicate name {name!r} (letters, digits, '_'; not a keyword)", "name")
    arity = expect(item, "arity", int, what=f"predicate {name}")
    if arity not in (1, 2):
        raise item.error(f"predicate {name}: arity must be 1 or 2, got {arity}", "arity")
    kind = expect(item, "kind", str, what=f"predicate {name}")
    if kind not in KINDS:
        raise item.error(f"predicate {name}: kind must be one of {', '.join(KINDS)}, got {kind!r}", "kind")
    description = expect(item, "description", str, required=False, default="")
    grounding = item.get("grounding")
    if kind == "action":
        if name not in ACTION_NAMES:
            raise item.error(f"action predicate {name!r} must be one of {', '.join(ACTION_NAMES)}", "name")
        if arity != 1:
            raise item.error(f"action predicate {name} must have arity 1 (the ego)", "arity")
        if grounding is not None:
            raise item.error(f"action predicate {name} cannot have a grounding (it is decided by the rules)",
                             "grounding")
        if item.get("params"):
            raise item.error(f"action predicate {name} takes no params", "params")
        return Predicate(name, 1, kind, description, None, MappingProxyType({}), index)
    if name in ACTION_NAMES:
        raise item.error(f"{name} is an action name; declare it with kind: action", "kind")
    params: dict[str, Any] = {}
    if grounding is not None:
        if not isinstance(grounding, str):
            raise item.error(f"predicate {name}: grounding must be a registry name (string) or null",
                             "grounding")
        spec = REGISTRY.get(grounding)
        if spec is None:
            raise item.error(f"predicate {name}: unknown grounding function {grounding!r}; known: "
                             f"{', '.join(REGISTRY)}", "grounding")
        if spec.arity != arity:
            raise item.error(f"predicate {name}: grounding {grounding!r} has arity {spec.arity}, "
                             f"predicate declares {arity}", "arity")
        params = _check_params(item, "params", spec.params, item.get("params"), f"predicate {name}")
        if grounding == "is_close" and not params["min"] < params["max"]:
            raise item.error(f"predicate {name}: params min ({params['min']}) must be smaller than max "
                             f"({params['max']}); no distance satisfies min < distance <= max",
                             "params" if "params" in item else None)
    elif item.get("params"):
        raise item.error(f"predicate {name}: params given but no grounding", "params")
    return Predicate(name, arity, kind, description, grounding, _freeze(params), index)


def ontology_from_data(data: Any, file: str | None = None) -> Ontology:
    """Build an :class:`Ontology` from parsed YAML (Located containers from :mod:`core.io.yamlio`)."""
    if not isinstance(data, LocatedDict):
        raise ConfigError("an ontology file must be a mapping with 'ontology' and 'predicates'", file, 1)
    for k in data:
        if k not in _TOP_KEYS:
            raise data.error(f"unknown key {k!r} (allowed: {', '.join(sorted(_TOP_KEYS))})", k)
    name = expect(data, "ontology", str)
    description = expect(data, "description", str, required=False, default="")
    view_given = data.get("view")
    view = _check_params(data, "view", DEFAULT_VIEW, view_given, "view")
    plist = expect(data, "predicates", list)
    if not plist:
        raise data.error("an ontology needs at least one predicate", "predicates")
    preds: list[Predicate] = []
    seen: dict[str, int] = {}
    for i, item in enumerate(plist):
        p = _predicate(item, i, plist)
        if p.name in seen:
            raise plist.error(f"duplicate predicate {p.name!r} (first at item {seen[p.name] + 1})", i)
        seen[p.name] = i
        preds.append(p)
    return Ontology(name, tuple(preds), _freeze(view), description, file)


def loads_ontology(text: str, file: str | Path | None = None) -> Ontology:
    """Parse an ontology from YAML text."""
    fname = str(file) if file is not None else None
    return ontology_from_data(loads_yaml(text, fname), fname)


def load_ontology(path: str | Path) -> Ontology:
    """Load one of our ontology YAML files (``configs/ontologies/*.yaml``)."""
    data = load_yaml(path)
    return ontology_from_data(data, str(path))


def make_ontology(name: str, predicates: Iterable[Mapping[str, Any]], view: Mapping[str, Any] | None = None,
                  description: str = "") -> Ontology:
    """Build an ontology in code (same validation as the file loader)."""
    data = loads_yaml(dump_yaml({"ontology": name, "description": description, "view": dict(view or {}),
                                 "predicates": [dict(p) for p in predicates]}), "<code>")
    return ontology_from_data(data, None)
