"""What an engine reads: per-ego truth tables over each ego's closed domain (the ego first, then the agents in its
view), and the plain-data view of one ego's world used by the inspector and SPF.

:class:`Interpretation` is the interface both engines evaluate; :class:`TableInterpretation` holds explicit
tables (tests, analysis scenes); :class:`core.logic.grounding.grounder.Grounding` computes them from a world state. Split
out of ``grounding.py`` so that module holds only the computation."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from core.logic.lang.ontology import Ontology


class Interpretation:
    """What the engines read: for each ego row e, its domain ``ent[e]`` (global indices, ego first, -1 pad)
    and the truth of each predicate over that domain. :class:`Grounding` computes it from a world;
    :class:`TableInterpretation` takes explicit tables (tests, analysis)."""

    ontology: Ontology
    names: tuple[str, ...]
    ent: np.ndarray
    valid: np.ndarray

    @property
    def n_egos(self) -> int:
        return self.ent.shape[0]

    @property
    def k(self) -> int:
        return self.ent.shape[1]

    @property
    def sizes(self) -> np.ndarray:
        return self.valid.sum(axis=1)

    def unary_local(self, pred: str) -> np.ndarray:  # pragma: no cover - interface
        raise NotImplementedError

    def binary_local(self, pred: str) -> np.ndarray:  # pragma: no cover - interface
        raise NotImplementedError

    def binary_rows(self, pred: str, rows: np.ndarray) -> np.ndarray:
        """``binary_local(pred)[rows]``: the [len(rows), K, K] tables of some views only (the compiled engine's
        clauses with two free variables need them for the egos whose ego literals hold, often a few)."""
        return self.binary_local(pred)[rows]

    def var_slices(self, keys: Sequence[tuple[str, str]]) -> np.ndarray:
        """The compiled engine's one-variable truth slices, stacked: bool [S, E, K] for keys
        ``("valid", "")`` (the domain mask), ``("u", P)`` = P(V), ``("bxv", P)`` = P(X, V), ``("bvx", P)`` =
        P(V, X), ``("bvv", P)`` = P(V, V), with X the ego (column 0) and V ranging over the domain.

        Generic version: slices of :meth:`unary_local` / :meth:`binary_local`. :class:`Grounding` gathers them
        from its global tables instead when it has them (same values, far fewer array operations)."""
        out = np.empty((len(keys),) + self.valid.shape, dtype=bool)
        for i, (kind, p) in enumerate(keys):
            if kind == "valid":
                out[i] = self.valid
            elif kind == "u":
                out[i] = self.unary_local(p)
            else:
                b = self.binary_local(p)
                out[i] = b[:, 0, :] if kind == "bxv" else b[:, :, 0] if kind == "bvx" else \
                    np.diagonal(b, axis1=1, axis2=2)
        return out

    def var_bits(self, keys: Sequence[tuple[str, str]], kern) -> np.ndarray | None:
        """:meth:`var_slices` packed into bit rows for the compiled kernels (``kern`` = core.logic.kernels):
        uint64 [S, E], bit j of row (s, e) = slice s at entity j of view e; None when views hold more than 64
        entities (the caller then uses the bool slices)."""
        if self.valid.shape[1] > 64:
            return None
        out = np.empty((len(keys), self.valid.shape[0]), dtype=np.uint64)
        kern.pack_bits(np.ascontiguousarray(self.var_slices(keys)), out)
        return out

    def ego_slices(self, keys: Sequence[tuple[str, str]]) -> np.ndarray:
        """The ego-only truth values, stacked: bool [S, E] for keys ``("u", P)`` = P(X) and ``("bxx", P)`` =
        P(X, X) (see :meth:`var_slices`)."""
        out = np.empty((len(keys), self.valid.shape[0]), dtype=bool)
        for i, (kind, p) in enumerate(keys):
            out[i] = self.unary_local(p)[:, 0] if kind == "u" else self.binary_local(p)[:, 0, 0]
        return out

    def entities(self, ego: int) -> np.ndarray:
        """Global agent indices of ego's domain: the ego, then the in-view others ascending."""
        row = self.ent[ego]
        return row[self.valid[ego]].copy()

    def name_of(self, agent: int) -> str:
        return self.names[agent] if 0 <= agent < len(self.names) else f"#{agent}"


class TableInterpretation(Interpretation):
    """Explicit per-ego truth tables: ``unary[p]`` bool [E, K], ``binary[p]`` bool [E, K, K].

    Entries outside an ego's domain are ignored (treated false). Predicates missing from the dicts are false.
    """

    def __init__(self, ontology: Ontology, valid: np.ndarray, unary: Mapping[str, np.ndarray],
                 binary: Mapping[str, np.ndarray], ent: np.ndarray | None = None,
                 names: Sequence[str] | None = None) -> None:
        self.ontology = ontology
        self.valid = np.asarray(valid, dtype=bool)
        e, k = self.valid.shape
        if k and not self.valid[:, 0].all():
            raise ValueError("every ego's domain must contain the ego (column 0)")
        if ent is None:
            ent = np.where(self.valid, np.arange(k)[None, :], -1).astype(np.int32)
        self.ent = np.asarray(ent, dtype=np.int32)
        n = int(self.ent.max()) + 1 if self.ent.size else 0
        self.names = tuple(names) if names is not None else tuple(f"E{i}" for i in range(n))
        pair_ok = self.valid[:, :, None] & self.valid[:, None, :]
        self._unary = {p: np.asarray(v, dtype=bool) & self.valid for p, v in unary.items()}
        self._binary = {p: np.asarray(v, dtype=bool) & pair_ok for p, v in binary.items()}

    def unary_local(self, pred: str) -> np.ndarray:
        v = self._unary.get(pred)
        return v if v is not None else np.zeros(self.valid.shape, dtype=bool)

    def binary_local(self, pred: str) -> np.ndarray:
        v = self._binary.get(pred)
        if v is None:
            e, k = self.valid.shape
            return np.zeros((e, k, k), dtype=bool)
        return v


@dataclass(frozen=True)
class EntityRow:
    """One entity of an ego's view (inspector table)."""

    local: int
    agent: int  # global index, -1 for a placeholder
    name: str
    unary: tuple[str, ...]
    relations: tuple[tuple[str, str], ...]  # (predicate, other entity name): predicate(this, other) is true

    def to_dict(self) -> dict[str, Any]:
        return {"local": self.local, "agent": self.agent, "name": self.name, "unary": list(self.unary),
                "relations": [{"predicate": p, "object": o} for p, o in self.relations]}


@dataclass(frozen=True)
class EgoView:
    ego: int
    ego_name: str
    step: int
    rows: tuple[EntityRow, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"ego": self.ego, "ego_name": self.ego_name, "step": self.step,
                "entities": [r.to_dict() for r in self.rows]}
