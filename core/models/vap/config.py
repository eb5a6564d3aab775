"""Configuration of a VAP model (grounding network + reasoning network), stored as ``config.yaml`` beside the
weights (``model.safetensors``). Plain data (no torch), so the studio and the CLI read it without loading torch.

Presets: ``cpu`` — ResNet-18 + FPN (64 channels) at 256² input, trained from scratch, trains in minutes on a
laptop CPU; ``paper`` — ResNet-50 + FPN (256 channels) at the full 1024² frame, backbone frozen (as the paper,
which starts from ImageNet weights: give ``weights``), for a GPU.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any

from core.base.errors import ConfigError

BACKBONES = ("resnet18", "resnet34", "resnet50")
REASONERS = ("gnn", "nlm")
SETTINGS = ("modular", "e2e")
POOLS = ("max", "align")


@dataclass(frozen=True)
class VapModelConfig:
    """``pool``: ``max`` = max over the box (the reference's RoIPool with a 1×1 output, computed as the max of a
    7×7 RoIAlign grid, since torchvision's compiled roi_pool is not available on every install); ``align`` =
    RoIAlign averaged. ``freeze_backbone``: no gradient into ResNet + FPN (the paper's setting with ImageNet
    weights); ``weights``: optional local safetensors file of torchvision ResNet weights (no download)."""

    reasoning: str = "gnn"
    setting: str = "modular"
    backbone: str = "resnet18"
    image_side: int = 256
    fpn_channels: int = 64
    pool: str = "max"
    freeze_backbone: bool = False
    weights: str | None = None
    node_hidden: tuple[int, int, int] = (512, 256, 128)
    edge_hidden: int = 128
    dropout: float = 0.25
    gnn_hidden: int = 128
    nlm_breadth: int = 3
    nlm_depth: int = 4
    nlm_output: int = 8
    unary_names: tuple[str, ...] = ()
    binary_names: tuple[str, ...] = ()
    actions: tuple[str, ...] = ("Slow", "Normal", "Fast", "Stop")
    h_dim: int = 9
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name, value, allowed in (("reasoning", self.reasoning, REASONERS), ("setting", self.setting, SETTINGS),
                                     ("backbone", self.backbone, BACKBONES), ("pool", self.pool, POOLS)):
            if value not in allowed:
                raise ConfigError(f"model {name} must be one of {', '.join(allowed)}, got {value!r}")
        if self.image_side < 32:
            raise ConfigError(f"image_side must be at least 32, got {self.image_side}")

    @property
    def n_unary(self) -> int:
        return len(self.unary_names)

    @property
    def n_binary(self) -> int:
        return len(self.binary_names)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        for k in ("node_hidden", "unary_names", "binary_names", "actions"):
            d[k] = list(d[k])
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "VapModelConfig":
        known = {k: v for k, v in dict(d).items() if k in cls.__dataclass_fields__}
        for k in ("node_hidden", "unary_names", "binary_names", "actions"):
            if k in known:
                known[k] = tuple(known[k])
        return cls(**known)


def preset(name: str, **overrides: Any) -> VapModelConfig:
    """``cpu`` or ``paper`` (see the module docstring), with ``overrides``."""
    if name == "cpu":
        base = VapModelConfig()
    elif name == "paper":
        base = VapModelConfig(backbone="resnet50", image_side=1024, fpn_channels=256, freeze_backbone=True)
    else:
        raise ConfigError(f"model preset must be 'cpu' or 'paper', got {name!r}")
    return replace(base, **{k: v for k, v in overrides.items() if v is not None})
