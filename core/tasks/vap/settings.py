"""What a VAP dataset is made from: :class:`VapDataConfig` and the mode files it resolves.

Why a frozen dataclass with a fingerprint: a dataset folder may be filled over several runs (resume after an
interruption), and every world in it must come from the same settings and the same config files; the fingerprint
(settings + SHA-256 of every config file) is stored in the manifest and checked before a run adds worlds.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from core.base.errors import ConfigError
from core.base.paths import ROOT

MODES: tuple[str, ...] = ("easy", "hard")
STAGES: tuple[str, ...] = ("train", "val", "test")
AGENT_CHOICES: tuple[str, ...] = ("fixed", "random")
DIRECTION_CHOICES: tuple[str, ...] = ("next", "own")


@dataclass(frozen=True)
class VapDataConfig:
    """Settings of one dataset.

    ``mode`` is ``easy``/``hard`` (``configs/modes/vap_<mode>.yaml``) or a mode file path; ``agents`` ``fixed``
    uses the mode's per-stage agent files, ``random`` a seeded random composition per world; ``worlds`` counts per
    stage; ``steps`` simulated steps per world (frames 1..steps-1 are rendered); ``direction`` ``next`` (the
    reference: the move to the next state) or ``own`` (the agent's current heading; no look-ahead);
    ``seed`` offsets every world seed; ``render_seed`` fixes the static map's tile and building art;
    ``icons`` ``default`` (the shipped art, reproducible anywhere) or ``library`` (the user's accepted icons);
    ``png_level`` deflate level of the frames (1: ISA-L); ``workers`` processes making worlds in parallel
    (1: in this process; each process encodes its PNGs in one background thread). The files do not depend on it.
    """

    mode: str = "easy"
    agents: str = "fixed"
    worlds: dict[str, int] = field(default_factory=lambda: {"train": 100, "val": 20, "test": 20})
    steps: int = 100
    direction: str = "next"
    seed: int = 0
    render_seed: int = 0
    icons: str = "default"
    px_per_cell: int | None = None       # None: the mode's vap block (8)
    crop: tuple[int, int, int, int] | None = None   # None: the mode's vap block (0, 0, 128, 128)
    png_level: int = 1
    workers: int = 1

    def __post_init__(self) -> None:
        if self.agents not in AGENT_CHOICES:
            raise ConfigError(f"agents must be one of {', '.join(AGENT_CHOICES)}, got {self.agents!r}")
        if self.direction not in DIRECTION_CHOICES:
            raise ConfigError(f"direction must be one of {', '.join(DIRECTION_CHOICES)}, got {self.direction!r}")
        if self.icons not in ("default", "library"):
            raise ConfigError(f"icons must be 'default' or 'library', got {self.icons!r}")
        bad = set(self.worlds) - set(STAGES)
        if bad:
            raise ConfigError(f"unknown stage(s) {sorted(bad)}; stages are {', '.join(STAGES)}")
        if any(int(v) < 0 for v in self.worlds.values()):
            raise ConfigError("world counts must be 0 or more")
        if self.steps < 2:
            raise ConfigError(f"steps must be at least 2 (frames 1..steps-1 are rendered), got {self.steps}")
        if not 0 <= self.png_level <= 9:
            raise ConfigError(f"png_level must be 0..9, got {self.png_level}")
        if self.workers < 1:
            raise ConfigError(f"workers must be at least 1, got {self.workers}")

    def world_count(self, stage: str) -> int:
        return int(self.worlds.get(stage, 0))

    def world_seed(self, stage: str, w: int) -> int:
        """The reference's seeding: w on train, n_train + w on val, n_train + n_val + w on test (+ ``seed``)."""
        offset = {"train": 0, "val": self.world_count("train"),
                  "test": self.world_count("train") + self.world_count("val")}[stage]
        return int(self.seed) + offset + int(w)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["worlds"] = {s: self.world_count(s) for s in STAGES}
        d["crop"] = list(self.crop) if self.crop is not None else None
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "VapDataConfig":
        known = {k: v for k, v in d.items() if k in cls.__dataclass_fields__}
        if known.get("crop") is not None:
            known["crop"] = tuple(int(v) for v in known["crop"])
        return cls(**known)


def parse_worlds(text: str) -> dict[str, int]:
    """``"100/20/20"`` → {train: 100, val: 20, test: 20}."""
    parts = str(text).split("/")
    if len(parts) != 3 or not all(p.strip().isdigit() for p in parts):
        raise ConfigError(f"worlds must read TRAIN/VAL/TEST, e.g. 100/20/20; got {text!r}")
    return dict(zip(STAGES, (int(p) for p in parts)))


def mode_path(mode: str) -> Path:
    """``easy`` → ``configs/modes/vap_easy.yaml``; a path is returned when it exists."""
    if mode in MODES:
        return ROOT / "configs" / "modes" / f"vap_{mode}.yaml"
    p = Path(mode)
    if not p.is_file():
        raise ConfigError(f"VAP mode must be one of {', '.join(MODES)} or a mode file; {mode!r} is neither")
    return p


def file_sha256(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def config_hashes(sim_configs: dict[str, Any], mode_file: Path) -> dict[str, str]:
    """SHA-256 of the mode file and every file it names (per stage for the agent files)."""
    out = {"mode": file_sha256(mode_file)}
    for stage, cfg in sim_configs.items():
        for role, path in cfg.files.items():
            key = f"agents_{stage}" if role == "agents" else role
            out[key] = file_sha256(path)
    return dict(sorted(out.items()))


def fingerprint(config: VapDataConfig, hashes: dict[str, str]) -> str:
    """One hash of the settings that change the data (all but ``workers``; the world counts too, since they set
    the val and test seeds) and of the files."""
    d = config.to_dict()
    d.pop("workers", None)
    blob = json.dumps({"settings": d, "files": hashes}, sort_keys=True).encode()
    return hashlib.sha256(blob).hexdigest()[:16]
