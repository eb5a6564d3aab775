"""Questions from a VAP dataset split (core/tasks/vap): each frame's recorded groundings and decided actions.

Why read the dataset's own rows: a study on "the VAP test split" must ask about exactly the frames a model is
evaluated on, with the ground truth stored there. A row holds, per frame, the unary truths ``[N][U]``, the binary
truths ``[N][N][B]`` (pairs inside some agent's view), ``sees [N][N]`` and the decided action of every agent; the
asked agent's view is itself plus the agents it sees, in agent order — the same entities and facts the simulated
source takes from the grounding (the binary predicates are pure functions of the pair, and the studio's grounding
draws one CollidingClose coin per pair, so all views agree). The agent's concepts are read from its unary truths
(IsTiro → tiro), so a car with two concepts keeps both. Rows are read from ``frames.jsonl`` (no pyarrow needed).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from core.base.errors import ConfigError
from core.study.describe import CONCEPT_WORDS, KIND_PREDICATES, SceneFacts
from core.study.source import Candidate

# The VAP task is imported when a dataset is read: `python main.py --help` imports this module (core/cli/study.py).

__all__ = ["VapDatasetSource"]

_KIND_OF = {"Car": 1, "Pedestrian": 0}


@dataclass(frozen=True)
class VapDatasetSource:
    path: str
    split: str = "test"
    min_step: int = 11

    def to_dict(self) -> dict:
        return {"kind": "vap", "path": self.path, "split": self.split, "min_step": self.min_step}

    def folder(self, base: Path | None = None) -> Path:
        p = Path(self.path)
        return base / p if base is not None and not p.is_absolute() else p

    def manifest(self, base: Path | None = None) -> dict:
        from core.tasks.vap.dataset import FORMAT, MANIFEST

        path = self.folder(base) / MANIFEST
        try:
            m = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ConfigError(f"not a VAP dataset folder ({exc})", path) from None
        if m.get("format") != FORMAT:
            raise ConfigError(f"not a VAP dataset manifest (format {m.get('format')!r})", path)
        return m

    def collect(self, keep: Callable[[Sequence[str], int], bool], *, base: Path | None = None,
                progress: Callable[[int, int], None] | None = None,
                cancelled: Callable[[], bool] | None = None, snapshots: dict | None = None) -> list:
        """Candidates of every kept agent of every frame of the split with step >= min_step, in (world, step,
        agent) order. ``snapshots`` receives ``(world, step) -> ("png", image path, boxes)``."""
        m = self.manifest(base)
        unary_names = list(m["unary_predicates"])
        binary_names = list(m["binary_predicates"])
        concept_of = {p: p[2:].lower() for p in CONCEPT_WORDS}
        root = self.folder(base)
        worlds = sorted((root / self.split).glob("world_*/frames.jsonl"))
        if not worlds:
            raise ConfigError(f"the dataset has no worlds in split {self.split!r}", root)
        out: list = []
        for wi, fpath in enumerate(worlds):
            world = f"{self.split}/{fpath.parent.name}"
            for n, line in enumerate(fpath.read_text(encoding="utf-8").splitlines(), 1):
                if cancelled is not None and cancelled():
                    return out
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                    step = int(row["step"])
                    names = list(row["agent_id"])
                    unary, binary, sees = row["unary"], row["binary"], row["sees"]
                    actions = [int(a) for a in row["action"]]
                    kinds = [_KIND_OF[t] for t in row["type"]]
                except (ValueError, KeyError, TypeError) as exc:
                    raise ConfigError(f"bad frame row ({exc!r})", fpath, n) from None
                if step < self.min_step:
                    continue
                true_u = [tuple(p for p, v in zip(unary_names, unary[i]) if v) for i in range(len(names))]
                if snapshots is not None:
                    snapshots[(world, step)] = ("png", str(root / row["image"]), [tuple(b) for b in row["box"]])
                for i, name in enumerate(names):
                    concepts = tuple(concept_of[p] for p in true_u[i] if p in concept_of)
                    if not keep(concepts, kinds[i]):
                        continue
                    ents = [i] + [j for j in range(len(names)) if j != i and sees[i][j]]
                    rel = tuple((p, names[a], names[b]) for a in ents for b in ents if a != b
                                for k, p in enumerate(binary_names) if binary[a][b][k])
                    # relation order as the grounding's ego view lists them: by first entity, then predicate
                    rel = tuple(sorted(rel, key=lambda r: (ents.index(names.index(r[1])),
                                                           binary_names.index(r[0]),
                                                           ents.index(names.index(r[2])))))
                    facts = SceneFacts(name, tuple(names[j] for j in ents), {names[j]: true_u[j] for j in ents},
                                       rel, step, world)
                    out.append(Candidate(world, step, i, name, concepts, actions[i], facts))
            if progress is not None:
                progress(wi + 1, len(worlds))
        return out


assert set(KIND_PREDICATES) == {"IsCar", "IsPedestrian"}
