"""The checks an opened episode file passes before anything reads it (core/sim/episode.py ``Episode``).

Why a module of its own: an episode file is data a user may receive from anyone; every array's shape, type and
value range and every ``meta.json`` field the program reads is checked once, in one vectorised pass per array,
so a damaged or hand-edited file is reported naming the field or array (an :class:`EpisodeFileError`), never a
Python error later in a viewer — and reading a step stays O(1) afterwards. The checks follow the format table of
core/sim/episode_format.py.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, TypeGuard

import numpy as np

from core.base.codes import Kind
from core.base.errors import EpisodeFileError
from core.base.world import KNOWN_CONCEPTS
from core.sim.episode_format import (
    BOOL_FIELDS,
    COIN_FIELDS,
    FIELD_SHAPES,
    FIRED_FORCED,
    INT32_MAX,
    PLAN_FIELDS,
    STATE_FIELDS,
    STEP_FIELDS,
)
from core.sim.rule_segments import check as check_segments

__all__ = ["check_episode"]


def check_episode(arrays: Mapping[str, np.ndarray], meta: dict[str, Any], path: Path, with_coins: bool) -> None:
    """Every check of an opened file: the arrays present (the coin arrays when ``with_coins``: a version-2
    file), their shapes and element types, the meta fields, the arrays' agreement and value ranges."""
    required = STATE_FIELDS + STEP_FIELDS + PLAN_FIELDS + (COIN_FIELDS if with_coins else ())
    missing = [f for f in required if f not in arrays]
    if missing:
        raise EpisodeFileError(f"episode file lacks arrays: {', '.join(missing)}", path)
    _check_shapes(arrays, required, path)
    _check_meta(arrays, meta, path, arrays["positions"].shape[1], with_coins)
    _check_sizes(arrays, path)
    _check_ranges(arrays, meta, path, arrays["positions"].shape[1], with_coins)


def _check_shapes(arrays: Mapping[str, np.ndarray], fields: tuple[str, ...], path: Path) -> None:
    """Each array's number of dimensions, fixed trailing sizes and element type (format table)."""
    for name in fields:
        dims = FIELD_SHAPES[name]
        arr = arrays[name]
        if arr.ndim != len(dims) or any(d is not None and arr.shape[i] != d for i, d in enumerate(dims)):
            want = ", ".join("…" if d is None else str(d) for d in dims)
            raise EpisodeFileError(f"array {name} has shape {arr.shape}, expected ({want})", path)
        if arr.dtype.kind not in ("b" if name in BOOL_FIELDS else "iu"):
            raise EpisodeFileError(f"array {name} must hold {'booleans' if name in BOOL_FIELDS else 'integers'}"
                                   f", not {arr.dtype}", path)


def _is_int(v: Any) -> TypeGuard[int]:
    return isinstance(v, int) and not isinstance(v, bool)


def _check_meta(arrays: Mapping[str, np.ndarray], meta: dict[str, Any], path: Path, n: int,
                with_coins: bool) -> None:
    """Structure of every meta.json field the program reads. ``n`` is the number of agents in the arrays."""

    def error(field: str, problem: str) -> EpisodeFileError:
        return EpisodeFileError(f"meta.json field {field!r} {problem}", path)

    def need_list(field: str, length: int | None = None) -> list:
        if field not in meta:
            raise error(field, "is missing")
        value = meta[field]
        if not isinstance(value, list):
            raise error(field, f"must be a list, got {type(value).__name__} {value!r:.60}")
        if length is not None and length >= 0 and len(value) != length:
            raise error(field, f"has {len(value)} entries but the arrays hold {length} agents")
        return value

    for i, a in enumerate(need_list("agents", n)):
        if not isinstance(a, dict) or not isinstance(a.get("name"), str) or not _is_int(a.get("kind")):
            raise error("agents", f"entry {i} must be {{\"name\": text, \"kind\": 0 or 1}}, got {a!r:.80}")
        if a["kind"] not in tuple(Kind):
            raise error("agents", f"entry {i} ({a['name']}) has kind {a['kind']}; expected "
                                  f"{int(Kind.PEDESTRIAN)} (pedestrian) or {int(Kind.CAR)} (car)")
    for i, p in enumerate(need_list("base_priorities", n)):
        if not _is_int(p) or not 0 <= p <= INT32_MAX:
            raise error("base_priorities", f"entry {i} must be an integer 0..{INT32_MAX}, got {p!r}")
    for i, cs in enumerate(need_list("base_concepts", n)):
        if not isinstance(cs, list) or not all(isinstance(c, str) for c in cs):
            raise error("base_concepts", f"entry {i} must be a list of concept names, got {cs!r:.80}")
        unknown = [c for c in cs if c not in KNOWN_CONCEPTS]
        if unknown:
            raise error("base_concepts", f"entry {i} names unknown concept {unknown[0]!r} "
                                         f"(known: {', '.join(KNOWN_CONCEPTS)})")
    concepts = need_list("concepts")
    for c in concepts:
        if not isinstance(c, str) or c not in KNOWN_CONCEPTS:
            raise error("concepts", f"names unknown concept {c!r} (known: {', '.join(KNOWN_CONCEPTS)})")
    if len(set(concepts)) != len(concepts):
        raise error("concepts", "lists a concept twice")
    arr = arrays.get("concepts")
    if arr is not None and (arr.ndim != 3 or arr.shape[2] != len(concepts)):
        raise EpisodeFileError(f"array concepts has shape {arr.shape}, expected (steps, agents, "
                               f"{len(concepts)}) for the {len(concepts)} concepts of meta.json", path)
    if "clauses" in meta:
        for i, c in enumerate(need_list("clauses")):
            if not isinstance(c, dict) or not _is_int(c.get("id")) or not all(
                    isinstance(c.get(k, ""), str) for k in ("head", "label", "text")):
                raise error("clauses", f"entry {i} must be {{\"id\": integer, \"head\", \"label\", "
                                       f"\"text\": text}}, got {c!r:.80}")
    if meta.get("rule_segments") is not None:     # core/sim/rule_segments.py
        n_clauses = len(meta.get("clauses") or [])
        for i, e in enumerate(need_list("rule_segments")):
            if not isinstance(e, dict) or not all(_is_int(e.get(k)) and e[k] >= 0
                                                  for k in ("step", "offset", "count")) \
                    or not all(isinstance(e.get(k), str) for k in ("rules", "ontology")) \
                    or e["offset"] + e["count"] > n_clauses:
                raise error("rule_segments", f"entry {i} must be {{\"step\", \"offset\", \"count\": "
                                             f"integers within the {n_clauses} clauses, \"rules\", "
                                             f"\"ontology\": text}}, got {e!r:.80}")
        problem = check_segments(meta)
        if problem is not None:
            raise error("rule_segments", problem)
    if "config_texts" in meta and meta["config_texts"] is not None:
        texts = meta["config_texts"]
        if not isinstance(texts, dict) or not all(isinstance(t, str) for t in texts.values()):
            raise error("config_texts", "must map map/agents/ontology/rules to their file texts")
    for field in ("seed", "num_steps", "agent_region"):
        value = meta.get(field)
        if value is not None and (not _is_int(value) or value < 0):
            raise error(field, f"must be a non-negative integer, got {value!r:.60}")
    for field in ("mode", "engine", "sampling", "rule_section"):
        value = meta.get(field)
        if value is not None and not isinstance(value, str):
            raise error(field, f"must be text, got {value!r:.60}")
    if not isinstance(meta.get("interventions", []), (list, type(None))):
        raise error("interventions", "must be a list")
    if with_coins:
        names = need_list("coin_predicates")
        if not all(isinstance(p, str) for p in names) or len(set(names)) != len(names):
            raise error("coin_predicates", f"must list distinct predicate names, got {names!r:.80}")
        steps = arrays["positions"].shape[0] - 1
        start = meta.get("coins_from_step")
        if not _is_int(start) or not 0 <= start <= max(steps, 0):
            raise error("coins_from_step", f"must be an integer 0..{max(steps, 0)}, got {start!r:.60}")


def _check_sizes(arrays: Mapping[str, np.ndarray], path: Path) -> None:
    """The arrays agree with each other: state and step counts, agents, plans and coins."""
    a = arrays
    t1 = a["positions"].shape[0]
    if t1 < 1 or a["positions"].ndim != 3 or a["positions"].shape[2] != 2:
        raise EpisodeFileError("positions array has a wrong shape", path)
    n = a["positions"].shape[1]
    for f in STATE_FIELDS:
        if a[f].shape[:2] != (t1, n):
            raise EpisodeFileError(f"array {f} has shape {a[f].shape}, expected ({t1}, {n}, ...)", path)
    for f in STEP_FIELDS:
        if a[f].shape[:2] != (t1 - 1, n):
            raise EpisodeFileError(f"array {f} has shape {a[f].shape}, expected ({t1 - 1}, {n}, ...)", path)
    off = a["plan_offsets"]
    if len(off) != len(a["plan_agent"]) + 1 or (len(off) and int(off[-1]) != len(a["plan_cells"])):
        raise EpisodeFileError("plan arrays are inconsistent", path)
    if len(a["plan_agent"]) and t1 and int(np.max(a["plan_id"])) >= len(a["plan_agent"]):
        raise EpisodeFileError("plan_id refers to a missing plan", path)
    if "coin_offsets" in a:
        off = a["coin_offsets"]
        k = len(a["coin_pairs"])
        if len(off) != t1 or len(a["coin_predicate"]) != k or len(a["coin_outcome"]) != k \
                or (len(off) and int(off[-1]) != k):
            raise EpisodeFileError(f"coin arrays are inconsistent (coin_offsets needs {t1} entries ending at "
                                   f"the {k} coins of coin_pairs, coin_predicate and coin_outcome)", path)


def _check_ranges(arrays: Mapping[str, np.ndarray], meta: dict[str, Any], path: Path, n: int,
                  with_coins: bool) -> None:
    """Value ranges of every array (one vectorised pass each)."""
    a = arrays
    n_clauses = len(meta.get("clauses") or [])
    n_plans = len(a["plan_agent"])
    limits = {
        "headings": (-1, 3), "decided": (0, 3), "realised": (0, 3), "positions": (0, None),
        "goals": (0, None), "path_index": (0, None), "plan_id": (0, max(0, n_plans - 1)),
        "fired": (FIRED_FORCED, n_clauses - 1 if n_clauses else None), "witness": (-1, n - 1),
        "plan_cells": (0, None), "plan_agent": (0, n - 1), "priorities": (0, None),
        "plan_step": (0, len(a["positions"])),
    }
    if with_coins:
        limits.update({"coin_offsets": (0, None), "coin_pairs": (0, n - 1),
                       "coin_predicate": (0, len(meta["coin_predicates"]) - 1)})
    for name, (lo, hi) in limits.items():
        arr = a[name]
        if arr.size == 0:
            continue
        if not np.issubdtype(arr.dtype, np.integer):
            raise EpisodeFileError(f"array {name} must hold integers, not {arr.dtype}", path)
        amin, amax = int(arr.min()), int(arr.max())
        if amin < lo or (hi is not None and amax > hi):
            bad = np.argwhere((arr < lo) | (arr > hi) if hi is not None else arr < lo)[0]
            where = f" at step {int(bad[0])}" if name in STATE_FIELDS + STEP_FIELDS else ""
            raise EpisodeFileError(f"array {name} holds {int(arr[tuple(bad)])}{where}, outside "
                                   f"{lo}..{'' if hi is None else hi}", path)
    for name in ("holds", "reached", "concepts") + (("coin_outcome",) if with_coins else ()):
        if a[name].dtype != np.bool_:
            raise EpisodeFileError(f"array {name} must be boolean, not {a[name].dtype}", path)
    off = np.asarray(a["plan_offsets"])
    if len(off) and (off[0] != 0 or np.any(np.diff(off) < 0)):
        raise EpisodeFileError("plan_offsets must start at 0 and never decrease", path)
    paths = np.asarray(a["path_index"])
    ids = np.asarray(a["plan_id"])
    if n_plans and paths.size:
        lengths = np.diff(off)[ids]
        if np.any(paths >= lengths):
            k = int(np.argwhere(paths >= lengths)[0][0])
            raise EpisodeFileError(f"path_index beyond the end of its plan at step {k}", path)
    if with_coins:
        coins = np.asarray(a["coin_offsets"])
        if len(coins) and (coins[0] != 0 or np.any(np.diff(coins) < 0)):
            raise EpisodeFileError("coin_offsets must start at 0 and never decrease", path)
        if len(coins) and int(coins[meta["coins_from_step"]]) != 0:
            raise EpisodeFileError("coins are recorded before meta.json's coins_from_step", path)
