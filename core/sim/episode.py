"""Recorded episodes: an append-only in-memory buffer and a documented, non-pickle file format.

The format — arrays, versions, the meaning of special values — is core/sim/episode_format.py (and docs/formats.md
"Episode files"); the checks a file passes when opened are core/sim/episode_checks.py. Here: the read API shared by
live buffers and files (:class:`EpisodeView`), the buffer a simulation records into (:class:`EpisodeBuffer`), and
an opened file (:class:`Episode`). Every step records, next to the decisions, the CollidingClose coins the engine
saw (:meth:`EpisodeView.coins`), so a viewer can ground a recorded state exactly as the engine did.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from core.base.errors import EpisodeFileError
from core.base.world import AgentTable, WorldSnapshot
from core.io.archive import read_archive, write_archive
from core.sim.episode_checks import check_episode
from core.sim.episode_format import (
    COIN_FIELDS,
    FIRED_DEFAULT,
    FIRED_FORCED,
    FORMAT_NAME,
    FORMAT_VERSION,
    KIND,
    PLAN_FIELDS,
    STATE_FIELDS,
    STEP_FIELDS,
    VERSION_WITHOUT_COINS,
)
from core.sim.growing_rows import GrowingRows

__all__ = ["FIRED_DEFAULT", "FIRED_FORCED", "FORMAT_NAME", "FORMAT_VERSION", "STATE_FIELDS", "STEP_FIELDS",
           "PLAN_FIELDS", "COIN_FIELDS", "StepRecord", "CoinOutcomes", "EpisodeView", "EpisodeBuffer", "Episode",
           "write_episode_file", "load_episode"]

#: The CollidingClose coins of one step: per predicate, (int32 [K, 2] agent pairs (a, b) in draw order, bool [K]
#: outcomes) — what :meth:`Grounding.coin_outcomes <core.logic.grounding.grounded.Grounding.coin_outcomes>` gives.
CoinOutcomes = Mapping[str, tuple[np.ndarray, np.ndarray]]


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

    @property
    def coins_from_step(self) -> int:  # pragma: no cover - abstract
        """The first step whose CollidingClose coins are recorded (steps before it have none: a recording of a
        format without them, continued)."""
        raise NotImplementedError

    def coins(self, k: int) -> CoinOutcomes | None:
        """The CollidingClose coins step k drew, as the engine saw them (after any forced outcome): per predicate
        of ``meta["coin_predicates"]``, (agent pairs [K, 2], outcomes [K]) in draw order — views of the record,
        not to be written to; None when step k's coins are not recorded."""
        k = self._check_step(k)
        if k < self.coins_from_step:
            return None
        off = self._a("coin_offsets")
        lo, hi = int(off[k]), int(off[k + 1])
        pairs, which, outcome = (self._a(f)[lo:hi] for f in ("coin_pairs", "coin_predicate", "coin_outcome"))
        names = self.meta["coin_predicates"]
        if len(names) == 1:
            return {names[0]: (pairs, outcome)}
        return {name: (pairs[which == j], outcome[which == j]) for j, name in enumerate(names)}

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


class EpisodeBuffer(EpisodeView):
    """Append-only in-memory episode: O(1) appends in the worst case, not only amortised (see :class:`GrowingRows`)."""

    def __init__(self, agents: AgentTable, meta: Mapping[str, Any], witness_vars: int = 2) -> None:
        self._agents = agents
        self.meta = dict(meta)
        self.meta.setdefault("concepts", list(agents.concepts))
        n = len(agents)
        c = len(self.meta["concepts"])
        self._rows: dict[str, GrowingRows] = {
            "positions": GrowingRows((n, 2), np.int16),
            "headings": GrowingRows((n,), np.int8),
            "goals": GrowingRows((n, 2), np.int16),
            "path_index": GrowingRows((n,), np.int32),
            "plan_id": GrowingRows((n,), np.int32),
            "priorities": GrowingRows((n,), np.int32),
            "concepts": GrowingRows((n, c), bool),
            "holds": GrowingRows((n, 4), bool),
            "decided": GrowingRows((n,), np.int8),
            "realised": GrowingRows((n,), np.int8),
            "fired": GrowingRows((n,), np.int32),
            "witness": GrowingRows((n, max(1, witness_vars)), np.int32),
            "reached": GrowingRows((n,), bool),
            "plan_cells": GrowingRows((2,), np.int16, cap=1024),
            "plan_offsets": GrowingRows((), np.int64),
            "plan_agent": GrowingRows((), np.int32),
            "plan_step": GrowingRows((), np.int32),
            "coin_offsets": GrowingRows((), np.int64),
            "coin_pairs": GrowingRows((2,), np.int32, cap=256),
            "coin_predicate": GrowingRows((), np.uint8, cap=256),
            "coin_outcome": GrowingRows((), bool, cap=256),
        }
        self._state_rows = [self._rows[f] for f in STATE_FIELDS]
        self._step_rows = [self._rows[f] for f in STEP_FIELDS]
        for name in ("plan_offsets", "coin_offsets"):
            off = self._rows[name]
            off.reserve(1)[0] = 0
            off.n = 1
        #: names of the CollidingClose predicates, the coins' predicate codes (grows with a new program's ones)
        self.meta["coin_predicates"] = list(self.meta.get("coin_predicates", []))
        self.meta.pop("coins_from_step", None)   # the buffer's own (_coins_from), written by save
        self._coins_from = 0

    @property
    def num_states(self) -> int:
        return self._rows["positions"].n

    @property
    def num_steps(self) -> int:
        return self._rows["holds"].n

    @property
    def coins_from_step(self) -> int:
        return self._coins_from

    def _a(self, name: str) -> np.ndarray:
        rows = self._rows[name]
        # per-state/per-step arrays: the whole allocation (callers index by state/step); plan and coin arrays:
        # rows in use
        return rows.data if name in STATE_FIELDS or name in STEP_FIELDS else rows.used()

    def _plans(self) -> dict[str, np.ndarray]:
        return {name: self._rows[name].used() for name in PLAN_FIELDS + COIN_FIELDS}

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
            self._rows[name].set_row(k, value)

    def widen_witness(self, witness_vars: int) -> None:
        """Make room for ``witness_vars`` witness variables per agent (a rule program with more variables decides
        from a step on: core/sim/rule_segments.py); recorded rows keep theirs, the new columns say unbound (-1)."""
        old = self._rows["witness"]
        have = old.data.shape[2]
        if witness_vars <= have:
            return
        new = GrowingRows(old.data.shape[1:2] + (int(witness_vars),), np.int32, cap=len(old.data))
        new.data[:] = -1
        new.data[: old.n, :, :have] = old.data[: old.n]
        new.n = old.n
        self._rows["witness"] = new
        self._step_rows = [self._rows[f] for f in STEP_FIELDS]

    def append_step(self, holds, decided, realised, fired, witness, reached,
                    coins: CoinOutcomes | None = None) -> None:
        """Record step k (= :attr:`num_steps`): the decisions, and ``coins`` — the CollidingClose coins the engine
        saw, as :meth:`coins` gives them back. ``coins`` None says they are not known (a copy of a recording that
        has none): only steps before every recorded one may lack them."""
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
        self._append_coins(k, coins)
        for r in self._step_rows:
            r.n = k + 1

    def _append_coins(self, k: int, coins: CoinOutcomes | None) -> None:
        rows = self._rows
        off = rows["coin_offsets"]
        if coins is None:
            if k != self._coins_from:
                raise ValueError(f"step {k}: the coins of a recorded step are needed once steps record them "
                                 f"(from step {self._coins_from})")
            self._coins_from = k + 1
        else:
            names = self.meta["coin_predicates"]
            pairs, which, outcome = rows["coin_pairs"], rows["coin_predicate"], rows["coin_outcome"]
            for name, (ab, value) in coins.items():
                m = len(value)
                if not m:
                    continue
                if name not in names:
                    if len(names) > 255:
                        raise ValueError("a recording holds at most 256 CollidingClose predicates")
                    names.append(name)
                at = pairs.n
                pairs.reserve(m)[at: at + m] = ab
                which.reserve(m)[at: at + m] = names.index(name)
                outcome.reserve(m)[at: at + m] = value
                pairs.n = which.n = outcome.n = at + m
        off.reserve(1)[off.n] = rows["coin_pairs"].n
        off.n += 1

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
        rows["coin_offsets"].truncate(num_steps + 1)
        coins = int(rows["coin_offsets"].data[num_steps])
        for name in ("coin_pairs", "coin_predicate", "coin_outcome"):
            rows[name].truncate(coins)
        self._coins_from = min(self._coins_from, num_steps)

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
        meta["coins_from_step"] = self._coins_from
        return write_episode_file(path, arrays, meta, reproducible)


def write_episode_file(path: str | Path, arrays: Mapping[str, np.ndarray], meta: Mapping[str, Any],
                       reproducible: bool = False) -> Path:
    """Write arrays + meta atomically (temp file in the same folder, then rename), tagged with the newest format
    version when the coin arrays are among them, else with the version without coins (an exporter that has no
    coins, core/export/logicity_pkl.py)."""
    version = FORMAT_VERSION if all(f in arrays for f in COIN_FIELDS) else VERSION_WITHOUT_COINS
    own = {k: v for k, v in meta.items() if k not in ("format", "version")}   # a copied file's tag is not this one
    return write_archive(path, arrays, own, FORMAT_NAME, version, reproducible)


class Episode(EpisodeView):
    """An episode file opened read-only; arrays are memory-mapped members of the archive."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        # every ZIP member, .npy header and meta.json is checked before use (core/io/npzfile.py, core/io/archive.py),
        # then every array and meta field (core/sim/episode_checks.py): a crafted file gives an EpisodeFileError
        # naming the file and the problem, never a traceback
        self._arrays, self.meta = read_archive(self.path, FORMAT_NAME, FORMAT_VERSION, kind=KIND, mapped=True)
        #: the file's format version (core/sim/episode_format.py)
        self.version = int(self.meta.get("version", 0))
        with_coins = self.version > VERSION_WITHOUT_COINS
        check_episode(self._arrays, self.meta, self.path, with_coins)
        if with_coins:
            self._coins_from = int(self.meta["coins_from_step"])
        else:   # a file of the format without coins: none of its steps has them
            self._coins_from = self.num_steps
            self._arrays.update(coin_offsets=np.zeros(self.num_states, np.int64),
                                coin_pairs=np.zeros((0, 2), np.int32), coin_predicate=np.zeros(0, np.uint8),
                                coin_outcome=np.zeros(0, bool))
        meta = self.meta
        self._agents = AgentTable.build([a["name"] for a in meta["agents"]], [a["kind"] for a in meta["agents"]],
                                        meta["base_priorities"], meta["base_concepts"])

    @property
    def coins_from_step(self) -> int:
        return self._coins_from

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

    @property
    def num_states(self) -> int:
        return int(self._arrays["positions"].shape[0])

    def _a(self, name: str) -> np.ndarray:
        return self._arrays[name]


def load_episode(path: str | Path) -> Episode:
    """Open an episode file (O(1) in its length; arrays are memory-mapped)."""
    return Episode(path)
