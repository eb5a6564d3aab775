"""Recorded episodes: an append-only in-memory buffer and a documented, non-pickle file format.

File format (``.npz``, see docs/formats.md "Episode files"): a ZIP archive whose members are stored
*uncompressed* ``.npy`` arrays plus ``meta.json``. Because members are stored, the reader memory-maps each
array in place, so opening a long episode is instant and reading step ``k`` is O(1) (a slice of a memmap),
whatever the episode length. ``numpy.load`` can also read the arrays (it ignores ``meta.json``).

Arrays (T = recorded steps, N = agents, V = max witness variables, C = concepts):

====================  ==================  =====================================================================
name                  shape / dtype       meaning
====================  ==================  =====================================================================
positions             [T+1, N, 2] int16   (row, col) at the start of step k (index T = final state)
headings              [T+1, N] int8       last move heading (-1 none, 0 Left, 1 Right, 2 Up, 3 Down)
goals                 [T+1, N, 2] int16   current goal cell
path_index            [T+1, N] int32      index of the position in the agent's current plan
plan_id               [T+1, N] int32      which plan (row of plan_offsets) is current
priorities            [T+1, N] int32      priority (can change at SPF resets)
concepts              [T+1, N, C] bool    concept flags, C in meta["concepts"] order
holds                 [T, N, 4] bool      action predicates derived by the rules (Slow, Normal, Fast, Stop)
decided               [T, N] int8         the rule decision as one action (default Normal)
realised              [T, N] int8         what the agent did (Slow/Normal/Fast by cells moved, Stop)
fired                 [T, N] int32        id of the clause that fired for the decided action (-1: default,
                                          -2: forced by an action override, not derived by the rules)
witness               [T, N, V] int32     agent index bound to each clause variable (-1: unbound)
reached               [T, N] bool         the agent was found on its goal at step k (goal reached event)
plan_cells            [M, 2] int16        all planned paths, concatenated
plan_offsets          [P+1] int64         plan p is plan_cells[plan_offsets[p]:plan_offsets[p+1]]
plan_agent            [P] int32           agent of plan p
plan_step             [P] int32           first state index at which plan p is current
====================  ==================  =====================================================================
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from core.base.errors import EpisodeFileError
from core.io.fileio import write_npy_archive
from core.io.npzfile import map_member, open_zip, read_meta
from core.base.codes import Kind
from core.base.world import KNOWN_CONCEPTS, AgentTable, WorldSnapshot

FORMAT_NAME = "logicity-episode"
FORMAT_VERSION = 1
INT32_MAX = 2**31 - 1
#: ``fired`` values that are not clause ids: no rule derived the decided action (default Normal) / the action
#: was forced by an override (a user intervention in the studio, the controlled agent in SPF)
FIRED_DEFAULT = -1
FIRED_FORCED = -2

#: per-state arrays (T+1 rows) and per-step arrays (T rows)
STATE_FIELDS = ("positions", "headings", "goals", "path_index", "plan_id", "priorities", "concepts")
STEP_FIELDS = ("holds", "decided", "realised", "fired", "witness", "reached")
PLAN_FIELDS = ("plan_cells", "plan_offsets", "plan_agent", "plan_step")
#: per array: its dimensions (None = any size, a number = that size); see the table above
FIELD_SHAPES: dict[str, tuple[int | None, ...]] = {
    "positions": (None, None, 2), "headings": (None, None), "goals": (None, None, 2), "path_index": (None, None),
    "plan_id": (None, None), "priorities": (None, None), "concepts": (None, None, None),
    "holds": (None, None, 4), "decided": (None, None), "realised": (None, None), "fired": (None, None),
    "witness": (None, None, None), "reached": (None, None),
    "plan_cells": (None, 2), "plan_offsets": (None,), "plan_agent": (None,), "plan_step": (None,)}
BOOL_FIELDS = ("concepts", "holds", "reached")


@dataclass(frozen=True)
class StepRecord:
    """What happened during step k for every agent (plain arrays, read-only views)."""

    step: int
    holds: np.ndarray
    decided: np.ndarray
    realised: np.ndarray
    fired: np.ndarray
    witness: np.ndarray
    reached: np.ndarray


class EpisodeView:
    """Read API shared by the live buffer and loaded files. ``num_states`` = recorded steps + 1."""

    meta: dict[str, Any]
    _agents: AgentTable
    _base_concepts: tuple | None = None   # (agent table, concept names, its concepts [N, C]) for agents_at

    def _a(self, name: str) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    # ---- sizes ------------------------------------------------------------------------------------------
    @property
    def num_steps(self) -> int:
        """Number of recorded steps T (states 0..T are available)."""
        return self.num_states - 1

    @property
    def num_states(self) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    @property
    def agents(self) -> AgentTable:
        return self._agents

    @property
    def concept_names(self) -> list[str]:
        return list(self.meta["concepts"])

    # ---- O(1) accessors ---------------------------------------------------------------------------------
    def _check_state(self, k: int) -> int:
        if not 0 <= k < self.num_states:
            raise IndexError(f"state {k} out of range 0..{self.num_states - 1}")
        return k

    def _check_step(self, k: int) -> int:
        if not 0 <= k < self.num_steps:
            raise IndexError(f"step {k} out of range 0..{self.num_steps - 1}")
        return k

    def agents_at(self, k: int) -> AgentTable:
        """The agent table at state k (priorities/concepts can change at SPF resets)."""
        k = self._check_state(k)
        pr = np.asarray(self._a("priorities")[k], dtype=np.int32)
        cs = np.asarray(self._a("concepts")[k], dtype=bool)
        base = self._agents
        names = self.concept_names
        held = self._base_concepts   # the base table's concepts as one [N, C] array: one comparison, not C
        if held is None or held[0] is not base or held[1] != names:
            held = self._base_concepts = (base, names, np.array([base.concepts[c] for c in names], bool).T
                                          .reshape(len(base), len(names)))
        if np.array_equal(pr, base.priorities) and np.array_equal(cs[:, :len(names)], held[2]):
            return base
        return AgentTable(base.names, base.kinds.copy(), pr.copy(),
                          {c: cs[:, j].copy() for j, c in enumerate(self.concept_names)})

    def snapshot(self, k: int) -> WorldSnapshot:
        """The world at the start of step k (k = num_steps: the final state)."""
        k = self._check_state(k)
        return WorldSnapshot(k, self.agents_at(k), np.array(self._a("positions")[k], dtype=np.int32),
                             np.array(self._a("headings")[k], dtype=np.int8))

    def goals(self, k: int) -> np.ndarray:
        return np.asarray(self._a("goals")[self._check_state(k)], dtype=np.int32)

    def step_record(self, k: int) -> StepRecord:
        k = self._check_step(k)
        return StepRecord(k, *(np.asarray(self._a(f)[k]) for f in STEP_FIELDS))

    def plan(self, k: int, agent: int) -> tuple[np.ndarray, int]:
        """(current planned path cells [L,2], index of the agent on it) at state k."""
        k = self._check_state(k)
        pid = int(self._a("plan_id")[k, agent])
        off = self._a("plan_offsets")
        cells = np.asarray(self._a("plan_cells")[int(off[pid]):int(off[pid + 1])], dtype=np.int32)
        return cells, int(self._a("path_index")[k, agent])

    def remaining_path(self, k: int, agent: int) -> np.ndarray:
        cells, idx = self.plan(k, agent)
        return cells[idx:]

    def array(self, name: str) -> np.ndarray:
        """A whole recorded array (memmap for files; a view for live buffers, valid until the next append)."""
        arr = self._a(name)
        n = self.num_states if name in STATE_FIELDS else self.num_steps if name in STEP_FIELDS else len(arr)
        return arr[:n]


class _Rows:
    """A growable array of rows whose appends never pause to copy the whole history.

    Why: plain doubling copies every recorded row at once when the capacity runs out — with 1000 agents, one
    step near step 8192 took about a second. Here, once the array is 3/4 full, the next (double-size) array is
    allocated (``np.zeros``: pages are mapped lazily) and every append also copies up to four old rows per row
    appended into it, so by the time the capacity runs out the old rows are (all but a few) copied and the
    switch is cheap: no append copies more than four rows per row it adds. Rows are only ever written at the
    end (or after :meth:`truncate`), so rows that were already copied never change afterwards.
    """

    __slots__ = ("data", "n", "_next", "_moved")

    def __init__(self, tail: tuple[int, ...], dtype, cap: int = 64) -> None:
        self.data = np.zeros((cap,) + tail, dtype)
        self.n = 0               # rows in use
        self._next: np.ndarray | None = None
        self._moved = 0          # rows of ``data`` already copied into ``_next``

    def used(self) -> np.ndarray:
        """The rows in use (a view, valid until the next append)."""
        return self.data[: self.n]

    def reserve(self, extra: int) -> np.ndarray:
        """Make room for ``extra`` more rows at ``n``; returns the array to write them into (then add them to
        ``n``)."""
        need = self.n + extra
        cap = len(self.data)
        if need > cap:
            if self._next is None or len(self._next) < need:  # only when one append exceeds the spare room
                new_cap = 2 * cap
                while new_cap < need:
                    new_cap *= 2
                self._next = np.zeros((new_cap,) + self.data.shape[1:], self.data.dtype)
                self._moved = 0
            self._next[self._moved: self.n] = self.data[self._moved: self.n]
            self.data, self._next, self._moved = self._next, None, 0
            cap = len(self.data)
        if self._next is None and need > cap - cap // 4:
            self._next = np.zeros((2 * cap,) + self.data.shape[1:], self.data.dtype)
            self._moved = 0
        if self._next is not None:
            stop = min(self.n, self._moved + 4 * max(extra, 1))
            if stop > self._moved:
                self._next[self._moved: stop] = self.data[self._moved: stop]
                self._moved = stop
        return self.data

    def truncate(self, n: int) -> None:
        self.n = n
        self._moved = min(self._moved, n)


class EpisodeBuffer(EpisodeView):
    """Append-only in-memory episode: O(1) appends in the worst case, not only amortised (see :class:`_Rows`)."""

    def __init__(self, agents: AgentTable, meta: Mapping[str, Any], witness_vars: int = 2) -> None:
        self._agents = agents
        self.meta = dict(meta)
        self.meta.setdefault("concepts", list(agents.concepts))
        n = len(agents)
        c = len(self.meta["concepts"])
        self._rows: dict[str, _Rows] = {
            "positions": _Rows((n, 2), np.int16),
            "headings": _Rows((n,), np.int8),
            "goals": _Rows((n, 2), np.int16),
            "path_index": _Rows((n,), np.int32),
            "plan_id": _Rows((n,), np.int32),
            "priorities": _Rows((n,), np.int32),
            "concepts": _Rows((n, c), bool),
            "holds": _Rows((n, 4), bool),
            "decided": _Rows((n,), np.int8),
            "realised": _Rows((n,), np.int8),
            "fired": _Rows((n,), np.int32),
            "witness": _Rows((n, max(1, witness_vars)), np.int32),
            "reached": _Rows((n,), bool),
            "plan_cells": _Rows((2,), np.int16, cap=1024),
            "plan_offsets": _Rows((), np.int64),
            "plan_agent": _Rows((), np.int32),
            "plan_step": _Rows((), np.int32),
        }
        self._state_rows = [self._rows[f] for f in STATE_FIELDS]
        self._step_rows = [self._rows[f] for f in STEP_FIELDS]
        off = self._rows["plan_offsets"]
        off.reserve(1)[0] = 0
        off.n = 1

    @property
    def num_states(self) -> int:
        return self._rows["positions"].n

    @property
    def num_steps(self) -> int:
        return self._rows["holds"].n

    def _a(self, name: str) -> np.ndarray:
        rows = self._rows[name]
        # per-state/per-step arrays: the whole allocation (callers index by state/step); plan arrays: rows in use
        return rows.used() if name in PLAN_FIELDS else rows.data

    def _plans(self) -> dict[str, np.ndarray]:
        return {name: self._rows[name].used() for name in PLAN_FIELDS}

    def add_plan(self, agent: int, cells: np.ndarray) -> int:
        """Register a new plan for ``agent`` taking effect at the next appended state; returns its id."""
        cells = np.asarray(cells)
        rows = self._rows
        pc = rows["plan_cells"]
        start = pc.n
        pc.reserve(len(cells))[start: start + len(cells)] = cells
        pc.n = start + len(cells)
        pid = rows["plan_agent"].n
        for name, value in (("plan_offsets", pc.n), ("plan_agent", agent), ("plan_step", self.num_states)):
            r = rows[name]
            r.reserve(1)[r.n] = value
            r.n += 1
        return pid

    def append_state(self, positions, headings, goals, path_index, plan_id, agents: AgentTable) -> None:
        k = self.num_states
        for r in self._state_rows:
            r.reserve(1)
        a = {f: r.data for f, r in zip(STATE_FIELDS, self._state_rows)}
        a["positions"][k] = positions
        a["headings"][k] = headings
        a["goals"][k] = goals
        a["path_index"][k] = path_index
        a["plan_id"][k] = plan_id
        a["priorities"][k] = agents.priorities
        for j, c in enumerate(self.meta["concepts"]):
            a["concepts"][k, :, j] = agents.concepts[c]
        for r in self._state_rows:
            r.n = k + 1

    def set_state_agents(self, k: int, agents: AgentTable) -> None:
        """Rewrite state ``k``'s priorities and concepts: the agents were edited from that state on (the agent
        editor's branch, core/studio/apply.py), so the state the new decisions are made in shows the new ones."""
        k = self._check_state(k)
        values = {"priorities": np.asarray(agents.priorities, np.int32),
                  "concepts": np.stack([np.asarray(agents.concepts[c], bool) for c in self.meta["concepts"]], axis=-1)
                  if self.meta["concepts"] else np.zeros((len(agents), 0), bool)}
        for name, value in values.items():
            rows = self._rows[name]
            rows.data[k] = value
            if rows._next is not None and k < rows._moved:   # already copied into the next allocation
                rows._next[k] = value

    def widen_witness(self, witness_vars: int) -> None:
        """Make room for ``witness_vars`` witness variables per agent (a rule program with more variables decides
        from a step on: core/sim/rule_segments.py); recorded rows keep theirs, the new columns say unbound (-1)."""
        old = self._rows["witness"]
        have = old.data.shape[2]
        if witness_vars <= have:
            return
        new = _Rows(old.data.shape[1:2] + (int(witness_vars),), np.int32, cap=len(old.data))
        new.data[:] = -1
        new.data[: old.n, :, :have] = old.data[: old.n]
        new.n = old.n
        self._rows["witness"] = new
        self._step_rows = [self._rows[f] for f in STEP_FIELDS]

    def append_step(self, holds, decided, realised, fired, witness, reached) -> None:
        k = self.num_steps
        if k >= self.num_states:
            raise RuntimeError("append_state for step k must come before append_step")
        for r in self._step_rows:
            r.reserve(1)
        a = {f: r.data for f, r in zip(STEP_FIELDS, self._step_rows)}
        a["holds"][k] = holds
        a["decided"][k] = decided
        a["realised"][k] = realised
        a["fired"][k] = fired
        w = np.asarray(witness)
        a["witness"][k] = -1
        a["witness"][k, :, : w.shape[1]] = w[:, : a["witness"].shape[2]]
        a["reached"][k] = reached
        for r in self._step_rows:
            r.n = k + 1

    def truncate(self, num_steps: int) -> None:
        """Discard everything after ``num_steps`` steps (branching from a past state).

        Plans first used after the cut are dropped too, so a saved branch holds no dead data.
        """
        if not 0 <= num_steps <= self.num_steps:
            raise IndexError(f"cannot truncate to {num_steps} steps (have {self.num_steps})")
        for r in self._state_rows:
            r.truncate(num_steps + 1)
        for r in self._step_rows:
            r.truncate(num_steps)
        rows = self._rows
        # plan_step never decreases (plans are added in state order; truncation keeps a prefix)
        keep = int(np.searchsorted(rows["plan_step"].used(), num_steps, side="right"))
        rows["plan_agent"].truncate(keep)
        rows["plan_step"].truncate(keep)
        rows["plan_offsets"].truncate(keep + 1)
        rows["plan_cells"].truncate(int(rows["plan_offsets"].data[keep]))

    def save(self, path: str | Path, extra_meta: Mapping[str, Any] | None = None, reproducible: bool = False
             ) -> Path:
        """Write the episode file; ``reproducible``: fixed ZIP member times (pass a fixed ``created`` in
        ``extra_meta`` too), so the same episode always gives the same bytes (dataset exports)."""
        arrays = {name: self.array(name) for name in STATE_FIELDS + STEP_FIELDS}
        arrays.update(self._plans())
        meta = dict(self.meta)
        meta.update(extra_meta or {})
        meta["agents"] = [{"name": n, "kind": int(k)} for n, k in zip(self._agents.names, self._agents.kinds)]
        meta["base_priorities"] = [int(p) for p in self._agents.priorities]
        meta["base_concepts"] = [self._agents.concept_names(i) for i in range(len(self._agents))]
        meta["num_steps"] = self.num_steps
        return write_episode_file(path, arrays, meta, reproducible)


def write_episode_file(path: str | Path, arrays: Mapping[str, np.ndarray], meta: Mapping[str, Any],
                       reproducible: bool = False) -> Path:
    """Write arrays + meta atomically (temp file in the same folder, then rename)."""
    return write_npy_archive(path, arrays, {"format": FORMAT_NAME, "version": FORMAT_VERSION, **meta},
                             reproducible)


class Episode(EpisodeView):
    """An episode file opened read-only; arrays are memory-mapped members of the archive."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._arrays: dict[str, np.ndarray] = {}
        # every ZIP member, .npy header and meta.json is checked before use (core/io/npzfile.py): a crafted
        # file gives an EpisodeFileError naming the file and the problem, never a traceback
        with open_zip(self.path) as zf:
            self.meta = read_meta(zf, self.path)
            if not isinstance(self.meta, dict) or self.meta.get("format") != FORMAT_NAME:
                raise EpisodeFileError("not a LogiCity episode file (format tag missing)", self.path)
            version = self.meta.get("version", 0)
            if isinstance(version, bool) or not isinstance(version, int):
                raise EpisodeFileError(f"meta.json field 'version' must be an integer, got {version!r:.60}",
                                       self.path)
            if version > FORMAT_VERSION:
                raise EpisodeFileError(
                    f"episode format version {version} is newer than this program supports ({FORMAT_VERSION})",
                    self.path)
            for info in zf.infolist():
                if info.filename.endswith(".npy"):
                    self._arrays[info.filename[:-4]] = map_member(zf, info, self.path)
        missing = [f for f in STATE_FIELDS + STEP_FIELDS + PLAN_FIELDS if f not in self._arrays]
        if missing:
            raise EpisodeFileError(f"episode file lacks arrays: {', '.join(missing)}", self.path)
        self._check_shapes()
        self._check_meta(self._arrays["positions"].shape[1])
        self._validate()
        meta = self.meta
        self._agents = AgentTable.build([a["name"] for a in meta["agents"]], [a["kind"] for a in meta["agents"]],
                                        meta["base_priorities"], meta["base_concepts"])

    def _check_shapes(self) -> None:
        """Each array's number of dimensions, fixed trailing sizes and element type (format table above)."""
        for name, dims in FIELD_SHAPES.items():
            arr = self._arrays[name]
            if arr.ndim != len(dims) or any(d is not None and arr.shape[i] != d for i, d in enumerate(dims)):
                want = ", ".join("…" if d is None else str(d) for d in dims)
                raise EpisodeFileError(f"array {name} has shape {arr.shape}, expected ({want})", self.path)
            if arr.dtype.kind not in ("b" if name in BOOL_FIELDS else "iu"):
                raise EpisodeFileError(f"array {name} must hold {'booleans' if name in BOOL_FIELDS else 'integers'}"
                                       f", not {arr.dtype}", self.path)

    def _meta_error(self, field: str, problem: str) -> EpisodeFileError:
        return EpisodeFileError(f"meta.json field {field!r} {problem}", self.path)

    def _check_meta(self, n: int) -> None:
        """Structure of every meta.json field the program reads (a damaged or hand-edited file is reported
        naming the field, never a Python error later). ``n`` is the number of agents in the arrays."""
        meta = self.meta

        def is_int(v: Any) -> bool:
            return isinstance(v, int) and not isinstance(v, bool)

        def need_list(field: str, length: int | None = None) -> list:
            if field not in meta:
                raise self._meta_error(field, "is missing")
            value = meta[field]
            if not isinstance(value, list):
                raise self._meta_error(field, f"must be a list, got {type(value).__name__} {value!r:.60}")
            if length is not None and length >= 0 and len(value) != length:
                raise self._meta_error(field, f"has {len(value)} entries but the arrays hold {length} agents")
            return value

        for i, a in enumerate(need_list("agents", n)):
            if not isinstance(a, dict) or not isinstance(a.get("name"), str) or not is_int(a.get("kind")):
                raise self._meta_error("agents", f"entry {i} must be {{\"name\": text, \"kind\": 0 or 1}}, "
                                                 f"got {a!r:.80}")
            if a["kind"] not in tuple(Kind):
                raise self._meta_error("agents", f"entry {i} ({a['name']}) has kind {a['kind']}; expected "
                                                 f"{int(Kind.PEDESTRIAN)} (pedestrian) or {int(Kind.CAR)} (car)")
        for i, p in enumerate(need_list("base_priorities", n)):
            if not is_int(p) or not 0 <= p <= INT32_MAX:
                raise self._meta_error("base_priorities", f"entry {i} must be an integer 0..{INT32_MAX}, got {p!r}")
        for i, cs in enumerate(need_list("base_concepts", n)):
            if not isinstance(cs, list) or not all(isinstance(c, str) for c in cs):
                raise self._meta_error("base_concepts", f"entry {i} must be a list of concept names, got {cs!r:.80}")
            unknown = [c for c in cs if c not in KNOWN_CONCEPTS]
            if unknown:
                raise self._meta_error("base_concepts", f"entry {i} names unknown concept {unknown[0]!r} "
                                                        f"(known: {', '.join(KNOWN_CONCEPTS)})")
        concepts = need_list("concepts")
        for c in concepts:
            if not isinstance(c, str) or c not in KNOWN_CONCEPTS:
                raise self._meta_error("concepts", f"names unknown concept {c!r} (known: {', '.join(KNOWN_CONCEPTS)})")
        if len(set(concepts)) != len(concepts):
            raise self._meta_error("concepts", "lists a concept twice")
        arr = self._arrays.get("concepts")
        if arr is not None and (arr.ndim != 3 or arr.shape[2] != len(concepts)):
            raise EpisodeFileError(f"array concepts has shape {arr.shape}, expected (steps, agents, "
                                   f"{len(concepts)}) for the {len(concepts)} concepts of meta.json", self.path)
        if "clauses" in meta:
            for i, c in enumerate(need_list("clauses")):
                if not isinstance(c, dict) or not is_int(c.get("id")) or not all(
                        isinstance(c.get(k, ""), str) for k in ("head", "label", "text")):
                    raise self._meta_error("clauses", f"entry {i} must be {{\"id\": integer, \"head\", \"label\", "
                                                      f"\"text\": text}}, got {c!r:.80}")
        if meta.get("rule_segments") is not None:     # core/sim/rule_segments.py
            n_clauses = len(meta.get("clauses") or [])
            for i, e in enumerate(need_list("rule_segments")):
                if not isinstance(e, dict) or not all(is_int(e.get(k)) and e[k] >= 0
                                                      for k in ("step", "offset", "count")) \
                        or not all(isinstance(e.get(k), str) for k in ("rules", "ontology")) \
                        or e["offset"] + e["count"] > n_clauses:
                    raise self._meta_error("rule_segments", f"entry {i} must be {{\"step\", \"offset\", \"count\": "
                                                            f"integers within the {n_clauses} clauses, \"rules\", "
                                                            f"\"ontology\": text}}, got {e!r:.80}")
            from core.sim.rule_segments import check as check_segments

            problem = check_segments(meta)
            if problem is not None:
                raise self._meta_error("rule_segments", problem)
        if "config_texts" in meta and meta["config_texts"] is not None:
            texts = meta["config_texts"]
            if not isinstance(texts, dict) or not all(isinstance(t, str) for t in texts.values()):
                raise self._meta_error("config_texts", "must map map/agents/ontology/rules to their file texts")
        for field in ("seed", "num_steps", "agent_region"):
            value = meta.get(field)
            if value is not None and (not is_int(value) or value < 0):
                raise self._meta_error(field, f"must be a non-negative integer, got {value!r:.60}")
        for field in ("mode", "engine", "sampling", "rule_section"):
            value = meta.get(field)
            if value is not None and not isinstance(value, str):
                raise self._meta_error(field, f"must be text, got {value!r:.60}")
        if not isinstance(meta.get("interventions", []), (list, type(None))):
            raise self._meta_error("interventions", "must be a list")

    def check_map(self, height: int, width: int) -> None:
        """Every recorded position, goal and planned cell lies on a ``height`` x ``width`` map (one vectorised
        pass per array); raises :class:`EpisodeFileError` naming the first cell outside it."""
        for name in ("positions", "goals", "plan_cells"):
            arr = self._arrays[name]
            if arr.size == 0:
                continue
            outside = (arr[..., 0] >= height) | (arr[..., 1] >= width)
            if np.any(outside):
                bad = tuple(int(i) for i in np.argwhere(outside)[0])
                cell = tuple(int(v) for v in arr[bad])
                where = f" at step {bad[0]}" if name in STATE_FIELDS else ""
                raise EpisodeFileError(f"array {name} holds cell {cell}{where}, outside the {height}×{width} map",
                                       self.path)

    def _validate(self) -> None:
        a = self._arrays
        t1 = a["positions"].shape[0]
        if t1 < 1 or a["positions"].ndim != 3 or a["positions"].shape[2] != 2:
            raise EpisodeFileError("positions array has a wrong shape", self.path)
        n = a["positions"].shape[1]
        for f in STATE_FIELDS:
            if a[f].shape[:2] != (t1, n):
                raise EpisodeFileError(f"array {f} has shape {a[f].shape}, expected ({t1}, {n}, ...)", self.path)
        for f in STEP_FIELDS:
            if a[f].shape[:2] != (t1 - 1, n):
                raise EpisodeFileError(f"array {f} has shape {a[f].shape}, expected ({t1 - 1}, {n}, ...)", self.path)
        off = a["plan_offsets"]
        if len(off) != len(a["plan_agent"]) + 1 or (len(off) and int(off[-1]) != len(a["plan_cells"])):
            raise EpisodeFileError("plan arrays are inconsistent", self.path)
        if len(a["plan_agent"]) and t1 and int(np.max(a["plan_id"])) >= len(a["plan_agent"]):
            raise EpisodeFileError("plan_id refers to a missing plan", self.path)
        self._check_ranges(n)

    def _check_ranges(self, n: int) -> None:
        """Value ranges of every array (one vectorised pass): a damaged or hand-edited file is reported here
        instead of crashing a viewer later. Reading a step stays O(1) afterwards."""
        a = self._arrays
        n_clauses = len(self.meta.get("clauses") or [])
        n_plans = len(a["plan_agent"])
        limits = {
            "headings": (-1, 3), "decided": (0, 3), "realised": (0, 3), "positions": (0, None),
            "goals": (0, None), "path_index": (0, None), "plan_id": (0, max(0, n_plans - 1)),
            "fired": (FIRED_FORCED, n_clauses - 1 if n_clauses else None), "witness": (-1, n - 1),
            "plan_cells": (0, None), "plan_agent": (0, n - 1), "priorities": (0, None),
            "plan_step": (0, len(a["positions"])),
        }
        for name, (lo, hi) in limits.items():
            arr = a[name]
            if arr.size == 0:
                continue
            if not np.issubdtype(arr.dtype, np.integer):
                raise EpisodeFileError(f"array {name} must hold integers, not {arr.dtype}", self.path)
            amin, amax = int(arr.min()), int(arr.max())
            if amin < lo or (hi is not None and amax > hi):
                bad = np.argwhere((arr < lo) | (arr > hi) if hi is not None else arr < lo)[0]
                where = f" at step {int(bad[0])}" if name in STATE_FIELDS + STEP_FIELDS else ""
                raise EpisodeFileError(f"array {name} holds {int(arr[tuple(bad)])}{where}, outside "
                                       f"{lo}..{'' if hi is None else hi}", self.path)
        for name in ("holds", "reached", "concepts"):
            if a[name].dtype != np.bool_:
                raise EpisodeFileError(f"array {name} must be boolean, not {a[name].dtype}", self.path)
        off = np.asarray(a["plan_offsets"])
        if len(off) and (off[0] != 0 or np.any(np.diff(off) < 0)):
            raise EpisodeFileError("plan_offsets must start at 0 and never decrease", self.path)
        paths = np.asarray(a["path_index"])
        ids = np.asarray(a["plan_id"])
        if n_plans and paths.size:
            lengths = np.diff(off)[ids]
            if np.any(paths >= lengths):
                k = int(np.argwhere(paths >= lengths)[0][0])
                raise EpisodeFileError(f"path_index beyond the end of its plan at step {k}", self.path)

    @property
    def num_states(self) -> int:
        return int(self._arrays["positions"].shape[0])

    def _a(self, name: str) -> np.ndarray:
        return self._arrays[name]


def load_episode(path: str | Path) -> Episode:
    """Open an episode file (O(1) in its length; arrays are memory-mapped)."""
    return Episode(path)
