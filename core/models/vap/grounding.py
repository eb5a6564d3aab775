"""Grounding network: image + boxes → unary concept logits per agent; box/direction/priority pairs → binary
concept logits per ordered pair of agents (docs/vap.md "Models").

Structure (the reference's, sizes from the config): a torchvision ResNet whose four stages feed a
``torchvision.ops.FeaturePyramidNetwork``; the four FPN levels are resized to the finest level's size and
concatenated (4·C channels); each agent's feature is pooled from its box — by default the maximum over the box
(what the reference's ``roi_pool`` with a 1×1 output computes; :func:`roi_max_pool`), or RoIAlign
(``pool: align``) — with the box scaled by the finest level's stride, which equals resizing the map to the image
first and pooling there, without the 4·C × H × W tensor; the node head is Linear → BN → ReLU → Dropout (×2) → Linear → ReLU →
Linear; the edge head reads the two agents' 9-value ``h`` vectors (18 inputs) through two 128-wide ReLU layers.
Heads return logits (the reference ends in a sigmoid; here the losses take logits for numerical stability).
"""
from __future__ import annotations

import importlib
from pathlib import Path

import torch
from torch import nn
from torch.nn import functional as F

from core.base.errors import ConfigError
from core.base.torchvision_compat import has_compiled_ops, import_torchvision
from core.models.vap.config import VapModelConfig

_IMAGENET_MEAN = (0.485, 0.456, 0.406)
_IMAGENET_STD = (0.229, 0.224, 0.225)


class GroundingNet(nn.Module):
    mean: torch.Tensor   # buffers, registered in __init__
    std: torch.Tensor

    def __init__(self, cfg: VapModelConfig) -> None:
        super().__init__()
        tv = import_torchvision()
        self.cfg = cfg
        resnet = getattr(tv.models, cfg.backbone)(weights=None)
        if cfg.weights:
            load_backbone_weights(resnet, cfg.weights)
        self.stem = nn.Sequential(resnet.conv1, resnet.bn1, resnet.relu, resnet.maxpool)
        stages = [resnet.layer1, resnet.layer2, resnet.layer3, resnet.layer4]
        self.stages = nn.ModuleList(stages)
        widths = [s[-1].conv3.out_channels if hasattr(s[-1], "conv3") else s[-1].conv2.out_channels
                  for s in stages]
        self.fpn = tv.ops.FeaturePyramidNetwork(widths, cfg.fpn_channels)
        self._roi_align = _eager_roi_align()
        self.register_buffer("mean", torch.tensor(_IMAGENET_MEAN).view(1, 3, 1, 1), persistent=False)
        self.register_buffer("std", torch.tensor(_IMAGENET_STD).view(1, 3, 1, 1), persistent=False)
        d = 4 * cfg.fpn_channels
        h1, h2, h3 = cfg.node_hidden
        self.node_head = nn.Sequential(
            nn.Linear(d, h1), nn.BatchNorm1d(h1), nn.ReLU(), nn.Dropout(cfg.dropout),
            nn.Linear(h1, h2), nn.BatchNorm1d(h2), nn.ReLU(), nn.Dropout(cfg.dropout),
            nn.Linear(h2, h3), nn.ReLU(), nn.Linear(h3, cfg.n_unary))
        e = cfg.edge_hidden
        self.edge_head = nn.Sequential(nn.Linear(2 * cfg.h_dim, e), nn.ReLU(), nn.Linear(e, e), nn.ReLU(),
                                       nn.Linear(e, cfg.n_binary))

    def features(self, images: torch.Tensor) -> torch.Tensor:
        """[B, 3, S, S] in [0, 1] → the concatenated FPN map [B, 4C, S/4, S/4]."""
        x = (images - self.mean) / self.std
        grad = not self.cfg.freeze_backbone and torch.is_grad_enabled()
        with torch.set_grad_enabled(grad):
            x = self.stem(x)
            feats = {}
            for i, stage in enumerate(self.stages):
                x = stage(x)
                feats[str(i)] = x
            pyr = self.fpn(feats)
        size = pyr["0"].shape[-2:]
        maps = [pyr["0"]] + [F.interpolate(pyr[k], size=size, mode="bilinear", align_corners=False)
                             for k in ("1", "2", "3")]
        return torch.cat(maps, dim=1)

    def node_logits(self, images: torch.Tensor, boxes: list[torch.Tensor]) -> torch.Tensor:
        """Unary logits [ΣN, U] for the agents of every image (``boxes[i]`` [N_i, 4] in input pixels)."""
        fmap = self.features(images)
        scale = fmap.shape[-1] / images.shape[-1]
        rois = torch.cat([torch.cat([torch.full((len(b), 1), float(i), dtype=b.dtype, device=b.device), b], 1)
                          for i, b in enumerate(boxes)])
        if self.cfg.pool == "max":
            pooled = roi_max_pool(fmap, rois, scale)
        else:
            pooled = self._roi_align(fmap, rois, scale, 1, 1, -1, True).flatten(1)
        return self.node_head(pooled)

    def edge_logits(self, h: torch.Tensor) -> torch.Tensor:
        """Binary logits [N, N, B] for every ordered pair (i, j) of one image from ``h`` [N, 9]."""
        n = h.shape[0]
        pair = torch.cat([h.unsqueeze(1).expand(n, n, -1), h.unsqueeze(0).expand(n, n, -1)], dim=-1)
        return self.edge_head(pair)


def roi_max_pool(fmap: torch.Tensor, rois: torch.Tensor, scale: float) -> torch.Tensor:
    """RoIPool with a 1×1 output: the maximum of every channel over each box ``(image, x1, y1, x2, y2)`` (input
    pixels), the box mapped to the map by ``scale`` and rounded as RoIPool does (end inclusive, at least one
    cell). torchvision's compiled ``roi_pool`` is missing on CPU-only installs; a box loop is cheap for a few dozen
    agents per batch, and the max passes gradients like RoIPool's."""
    h, w = fmap.shape[-2:]
    out = []
    for b, x1, y1, x2, y2 in rois.detach().cpu().tolist():
        xa = min(max(int(round(x1 * scale)), 0), w - 1)
        ya = min(max(int(round(y1 * scale)), 0), h - 1)
        xb = min(max(int(round(x2 * scale)), xa), w - 1)
        yb = min(max(int(round(y2 * scale)), ya), h - 1)
        out.append(fmap[int(b), :, ya:yb + 1, xa:xb + 1].amax(dim=(1, 2)))
    return torch.stack(out) if out else fmap.new_zeros(0, fmap.shape[1])


def _eager_roi_align():
    """torchvision's pure-PyTorch RoIAlign without its lazy ``torch.compile`` (which, with no compiled ops, runs on
    the first call and takes minutes on a CPU): ``fn(input, rois, spatial_scale, ph, pw, sampling_ratio,
    aligned)``. With compiled ops (a matching build, e.g. on a GPU machine) the compiled kernel is used."""
    tv = import_torchvision()
    if has_compiled_ops():
        return lambda x, r, s, ph, pw, sr, al: tv.ops.roi_align(x, r, (ph, pw), s, sr, al)
    mod = importlib.import_module("torchvision.ops.roi_align")
    fn = mod._roi_align
    return getattr(fn, "__wrapped__", fn)


def load_backbone_weights(resnet: nn.Module, path: str | Path) -> None:
    """Load torchvision ResNet weights from a local safetensors file (keys as in ``resnet.state_dict()``; an
    ``fc.`` head may be missing). Pickle files are refused: convert them once with safetensors."""
    p = Path(path)
    if p.suffix != ".safetensors":
        raise ConfigError(f"{p}: backbone weights must be a .safetensors file (pickle checkpoints are not loaded)")
    if not p.is_file():
        raise ConfigError(f"{p}: backbone weights file not found")
    from safetensors.torch import load_file

    state = load_file(str(p))
    missing, unexpected = resnet.load_state_dict(state, strict=False)
    missing = [k for k in missing if not k.startswith("fc.")]
    if missing or unexpected:
        raise ConfigError(f"{p}: not {type(resnet).__name__} weights (missing {missing[:3]}, unexpected "
                          f"{unexpected[:3]})")
