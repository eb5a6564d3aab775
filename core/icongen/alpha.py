"""Post-processing of generated images: background → alpha for sprites, seamless wrap for street textures.

Why not a segmentation model: the prompts ask for a plain background, so flood-filling the border colour is
enough, runs in milliseconds on a CPU, needs no weights, and never erases enclosed parts of the subject that
happen to share the background colour (a white ambulance's roof stays opaque unless it touches the border).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from PIL import Image

# scipy.ndimage is imported on first use.


@dataclass
class AlphaResult:
    image: Image.Image                    # RGBA, trimmed to the subject + margin
    info: dict[str, Any] = field(default_factory=dict)  # parameters and diagnostics for the sidecar


def remove_background(img: Image.Image, tolerance: float = 0.14, softness: float = 0.5, margin: int = 2,
                      trim: bool = True) -> AlphaResult:
    """Make the background connected to the image border transparent.

    * background colour = median of the 3-pixel border;
    * a pixel is background-like when its RGB distance to it (0..1 scale) is below ``tolerance``; only the
      background-like region connected to the border is removed;
    * the edge is softened: pixels of the removed region's 1-pixel rim get a partial alpha from their distance,
      and their colour is un-mixed from the background (no white halo on dark streets);
    * the result is trimmed to the opaque pixels + ``margin``.
    """
    from scipy import ndimage

    rgb = np.asarray(img.convert("RGB")).astype(np.float32) / 255.0
    h, w = rgb.shape[:2]
    b = max(1, min(3, h // 8, w // 8))
    border = np.concatenate([rgb[:b].reshape(-1, 3), rgb[-b:].reshape(-1, 3), rgb[:, :b].reshape(-1, 3),
                             rgb[:, -b:].reshape(-1, 3)])
    bg = np.median(border, axis=0)
    border_spread = float(np.mean(np.linalg.norm(border - bg, axis=1)) / np.sqrt(3))
    dist = np.linalg.norm(rgb - bg, axis=2) / np.sqrt(3)
    like = dist < tolerance
    lab, _ = ndimage.label(like)
    edge_labels = np.unique(np.concatenate([lab[0], lab[-1], lab[:, 0], lab[:, -1]]))
    edge_labels = edge_labels[edge_labels > 0]
    removed = np.isin(lab, edge_labels)
    alpha = np.where(removed, 0.0, 1.0).astype(np.float32)
    # soft rim: removed pixels next to the subject keep a partial alpha proportional to their distance
    rim = removed & ndimage.binary_dilation(~removed)
    lo = tolerance * (1.0 - softness)
    alpha[rim] = np.clip((dist[rim] - lo) / max(tolerance - lo, 1e-6), 0.0, 1.0)
    # un-mix the background colour from partially transparent pixels
    a = alpha[..., None]
    fg = np.where(a > 0.02, (rgb - (1.0 - a) * bg) / np.maximum(a, 0.02), rgb)
    out = np.dstack([np.clip(fg, 0, 1), alpha])
    out8 = (out * 255.0 + 0.5).astype(np.uint8)
    coverage = float((alpha > 0.5).mean())
    info: dict[str, Any] = {"method": "border-flood", "tolerance": tolerance, "softness": softness,
                            "background_rgb": [int(round(v * 255)) for v in bg], "coverage": round(coverage, 4)}
    if border_spread > tolerance:
        info["warning"] = "border is not a plain colour; background removal may be incomplete"
    if coverage < 0.01:
        info["warning"] = "almost everything was removed; try a lower tolerance or another seed"
    elif coverage > 0.97:
        info["warning"] = "almost nothing was removed; the background is not plain"
    res = Image.fromarray(out8, "RGBA")
    if trim:
        ys, xs = np.nonzero(out8[..., 3] > 8)
        if len(ys):
            x0, y0 = max(int(xs.min()) - margin, 0), max(int(ys.min()) - margin, 0)
            x1, y1 = min(int(xs.max()) + 1 + margin, w), min(int(ys.max()) + 1 + margin, h)
            res = res.crop((x0, y0, x1, y1))
            info["crop"] = [x0, y0, x1, y1]
    return AlphaResult(res, info)


def make_tileable(img: Image.Image, blend: float = 0.5) -> AlphaResult:
    """Make a texture seamless: blend it with a half-shifted copy whose seams sit in the middle.

    Weight of the shifted copy is 1 at the borders and falls to 0 at ``blend``·half-size from them, so the
    borders wrap around continuously and the centre keeps the original pixels.
    """
    rgb = np.asarray(img.convert("RGB")).astype(np.float32)
    h, w = rgb.shape[:2]
    shifted = np.roll(np.roll(rgb, h // 2, axis=0), w // 2, axis=1)

    def ramp(n: int) -> np.ndarray:
        d = np.minimum(np.arange(n) + 0.5, n - np.arange(n) - 0.5) / (n / 2)  # 0 at border .. 1 at centre
        return np.clip(1.0 - d / max(blend, 1e-6), 0.0, 1.0)

    wy, wx = ramp(h), ramp(w)
    wgt = np.maximum(wy[:, None], wx[None, :])[..., None]
    out = rgb * (1.0 - wgt) + shifted * wgt
    res = Image.fromarray(np.dstack([np.clip(out + 0.5, 0, 255).astype(np.uint8),
                                     np.full((h, w), 255, np.uint8)]), "RGBA")
    return AlphaResult(res, {"method": "half-shift-blend", "blend": blend})


def postprocess(img: Image.Image, post: str, **kw: Any) -> AlphaResult:
    """Apply the prompt bank's ``post`` step: "alpha", "tile" or "none"."""
    if post == "alpha":
        return remove_background(img, **kw)
    if post == "tile":
        return make_tileable(img, **kw)
    return AlphaResult(img.convert("RGBA"), {"method": "none"})
