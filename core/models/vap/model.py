"""The VAP model: :class:`~.grounding.GroundingNet` + a reasoning network, and its checkpoint files.

``VapModel.forward(frames, groundings=...)`` runs a batch (a list of frames from
``core.tasks.vap.torchdata``): ``groundings="predicted"`` feeds the reasoning network the grounding network's
outputs — sigmoid probabilities (end-to-end training) or, with ``threshold=True``, 0/1 values at 0.5 (the
modular setting at evaluation); ``"gt"`` feeds it the frames' ground-truth groundings (modular training of the
reasoning network, and the sanity check that it learned the rules). Checkpoints are ``model.safetensors`` +
``config.yaml`` (no pickle).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import torch
import yaml
from torch import nn

from core.base.errors import ConfigError
from core.io.fileio import atomic_write_text
from core.io.yamlio import load_yaml
from core.models.vap.config import VapModelConfig
from core.models.vap.grounding import GroundingNet
from core.models.vap.reasoning import make_reasoner


@dataclass
class VapOutput:
    """Per batch: unary logits [ΣN, U] (None without images), binary logits per image [N, N, B], action logits
    [ΣN, 4], and the agent counts per image."""

    unary_logits: torch.Tensor | None
    binary_logits: list[torch.Tensor] | None
    action_logits: torch.Tensor
    counts: list[int]


class VapModel(nn.Module):
    def __init__(self, cfg: VapModelConfig, *, grounding: bool = True) -> None:
        super().__init__()
        self.cfg = cfg
        self.grounding = GroundingNet(cfg) if grounding else None
        self.reasoning = make_reasoner(cfg)

    def ground(self, frames: list[dict]) -> tuple[torch.Tensor, list[torch.Tensor]]:
        assert self.grounding is not None, "this model has no grounding network"
        images = torch.stack([f["image"] for f in frames])
        unary = self.grounding.node_logits(images, [f["boxes"] for f in frames])
        binary = [self.grounding.edge_logits(f["h"]) for f in frames]
        return unary, binary

    def forward(self, frames: list[dict], groundings: str = "predicted", threshold: bool = False) -> VapOutput:
        counts = [int(f["h"].shape[0]) for f in frames]
        sees = [f["sees"] for f in frames]
        if groundings == "gt":
            act = self.reasoning([f["unary"] for f in frames], [f["binary"] for f in frames], sees)
            return VapOutput(None, None, act, counts)
        ul, bl = self.ground(frames)
        up = torch.sigmoid(ul)
        bp = [torch.sigmoid(b) for b in bl]
        if threshold:
            up = (up > 0.5).to(up.dtype)
            bp = [(b > 0.5).to(b.dtype) for b in bp]
        act = self.reasoning(list(torch.split(up, counts)), bp, sees)
        return VapOutput(ul, bl, act, counts)


def save_checkpoint(model: VapModel, folder: str | Path, extra: dict | None = None) -> Path:
    """Write ``model.safetensors`` and ``config.yaml`` (atomically) into ``folder``."""
    from safetensors.torch import save_file

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().cpu().contiguous() for k, v in model.state_dict().items()}
    tmp = folder / "model.safetensors.tmp"
    save_file(state, str(tmp), metadata={"format": "logicity-vap-model"})
    tmp.replace(folder / "model.safetensors")
    doc = {"model": model.cfg.to_dict(), "has_grounding": model.grounding is not None, **(extra or {})}
    atomic_write_text(folder / "config.yaml", yaml.safe_dump(doc, sort_keys=False))
    return folder


def load_checkpoint(folder: str | Path, device: str | torch.device = "cpu") -> tuple[VapModel, dict]:
    """(model in eval mode, the config.yaml document) from a checkpoint folder."""
    from safetensors.torch import load_file

    folder = Path(folder)
    cfg_path, w_path = folder / "config.yaml", folder / "model.safetensors"
    for p in (cfg_path, w_path):
        if not p.is_file():
            raise ConfigError(f"{folder} is not a VAP checkpoint: {p.name} is missing")
    doc = dict(load_yaml(cfg_path))
    cfg = VapModelConfig.from_dict(dict(doc["model"]))
    cfg = VapModelConfig.from_dict({**cfg.to_dict(), "weights": None})   # weights are in the checkpoint
    model = VapModel(cfg, grounding=bool(doc.get("has_grounding", True)))
    state = load_file(str(w_path), device=str(device))
    try:
        missing, unexpected = model.load_state_dict(state, strict=False)
    except RuntimeError as exc:   # a tensor of another shape
        raise ConfigError(f"{w_path}: weights do not fit the config ({str(exc).splitlines()[-1].strip()})") from None
    if missing or unexpected:
        raise ConfigError(f"{w_path}: weights do not fit the config (missing {missing[:3]}, unexpected "
                          f"{unexpected[:3]})")
    model.to(device).eval()
    return model, doc


def pick_device(name: str = "auto", threads: int | None = None) -> torch.device:
    """``auto`` = CUDA when available, else CPU. On the CPU, torch uses ``threads`` threads (default: half the
    cores, at least one): these models run many small operations, and when other work keeps the cores busy,
    torch's worker threads wait on each other (on a loaded 2-core box, many times slower with 2 threads than with
    1)."""
    dev = torch.device(("cuda" if torch.cuda.is_available() else "cpu") if name == "auto" else name)
    if dev.type == "cpu":
        torch.set_num_threads(max(1, threads if threads else (os.cpu_count() or 2) // 2))
    return dev
