"""torch access to a VAP dataset folder: :class:`VapFrames` (a ``torch.utils.data.Dataset``) and its collate.

Why one item per frame with variable agent counts: every model reads the whole scene graph of an image; a batch is a
list of frames (:func:`collate`), and the models pack the agents of a batch themselves. Rows come from the
per-world Parquet files; the first steps of each world are skipped (``min_step``, 11 as the reference's loader).
Images are decoded with Pillow and resized to ``image_side`` (boxes scaled with them); ``cache`` keeps the resized
uint8 images in memory (small CPU datasets are read many times). This module imports torch: import it lazily.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import torch
from PIL import Image
from torch.utils.data import Dataset

from core.base.errors import ConfigError
from core.tasks.vap.dataset import MANIFEST, SKIP_STEPS

# pyarrow is imported on first use.

STAGE_ALIASES = {"validation": "val", "valid": "val"}


def read_rows(root: str | Path, stage: str, min_step: int = SKIP_STEPS + 1) -> list[dict]:
    """All frame rows of ``stage`` (train/val/test) with ``step >= min_step``, in world and step order."""
    import pyarrow.parquet as pq

    root = Path(root)
    stage = STAGE_ALIASES.get(stage, stage)
    files = sorted((root / stage).glob("world_*/frames.parquet"))
    rows: list[dict] = []
    for f in files:
        for r in pq.read_table(f).to_pylist():
            if r["step"] >= min_step:
                rows.append(r)
    return rows


def manifest(root: str | Path) -> dict:
    p = Path(root) / MANIFEST
    try:
        return json.loads(p.read_text())
    except FileNotFoundError:
        raise ConfigError(f"{root} is not a VAP dataset (no {MANIFEST}); make one with: main.py vap make") from None


class VapFrames(Dataset):
    """Frames of one stage. Item: dict of tensors ``image`` float [3, S, S] in [0, 1], ``boxes`` [N, 4] (pixels of
    the resized image), ``h`` [N, 9], ``unary`` [N, U], ``binary`` [N, N, B], ``sees`` bool [N, N], ``action``
    long [N], ``car`` bool [N]; plus ``world``, ``step``, ``image_path``.

    ``images=False`` skips the pixels (reasoning on ground-truth groundings needs none)."""

    def __init__(self, root: str | Path, stage: str = "train", *, image_side: int | None = None,
                 min_step: int = SKIP_STEPS + 1, images: bool = True, cache: bool = False,
                 fraction: float = 1.0) -> None:
        self.root = Path(root)
        self.info = manifest(self.root)
        rows = read_rows(self.root, stage, min_step)
        if fraction < 1.0:
            rows = rows[: max(1, int(round(len(rows) * fraction)))]
        self.stage = STAGE_ALIASES.get(stage, stage)
        self.image_side = image_side
        self.images = images
        self.cache = cache
        self._cache: dict[int, np.ndarray] = {}
        self.items = [self._pack(r) for r in rows]

    @staticmethod
    def _pack(r: dict) -> dict[str, Any]:
        return {
            "world": r["world"], "step": r["step"], "image_path": r["image"], "height": r["height"],
            "width": r["width"], "agent_id": r["agent_id"],
            "boxes": np.asarray(r["box"], np.float32).reshape(-1, 4),
            "h": np.asarray(r["h"], np.float32).reshape(-1, 9),
            "unary": np.asarray(r["unary"], np.float32),
            "binary": np.asarray(r["binary"], np.float32),
            "sees": np.asarray(r["sees"], bool),
            "action": np.asarray(r["action"], np.int64),
            "car": np.asarray([t == "Car" for t in r["type"]], bool),
        }

    def __len__(self) -> int:
        return len(self.items)

    def _image(self, idx: int, it: dict) -> np.ndarray:
        img = self._cache.get(idx)
        if img is None:
            with Image.open(self.root / it["image_path"]) as src:
                im = src.convert("RGB")
                if self.image_side and (im.width, im.height) != (self.image_side, self.image_side):
                    im = im.resize((self.image_side, self.image_side), Image.Resampling.BILINEAR)
                img = np.array(im, np.uint8)
            if self.cache:
                self._cache[idx] = img
        return img

    def __getitem__(self, idx: int) -> dict[str, Any]:
        it = self.items[idx]
        out: dict[str, Any] = {k: it[k] for k in ("world", "step", "image_path", "agent_id")}
        scale = (self.image_side / it["width"]) if self.image_side else 1.0
        out["boxes"] = torch.from_numpy(it["boxes"] * scale)
        for k in ("h", "unary", "binary"):
            out[k] = torch.from_numpy(it[k])
        out["sees"] = torch.from_numpy(it["sees"])
        out["action"] = torch.from_numpy(it["action"])
        out["car"] = torch.from_numpy(it["car"])
        if self.images:
            out["image"] = torch.from_numpy(self._image(idx, it)).permute(2, 0, 1).float().div_(255.0)
        return out


def collate(items: list[dict]) -> list[dict]:
    """A batch is the list of its frames (agent counts differ between frames)."""
    return list(items)


def to_device_list(frames: list[dict], dev) -> list[dict]:
    """Move every tensor of every frame to ``dev``."""
    return [{k: (v.to(dev) if torch.is_tensor(v) else v) for k, v in f.items()} for f in frames]
