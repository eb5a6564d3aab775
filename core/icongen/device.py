"""Pick the torch device and dtype for generation: CUDA, then Apple MPS, then CPU; half precision on GPUs.

Imports torch lazily (only when called), so importing this module stays free.
"""
from __future__ import annotations

from dataclasses import dataclass

DEVICES = ("auto", "cuda", "mps", "cpu")


@dataclass(frozen=True)
class DeviceChoice:
    device: str   # "cuda" | "mps" | "cpu"
    dtype: str    # "float16" | "float32"

    def torch_dtype(self):
        import torch

        return getattr(torch, self.dtype)


def pick_device(requested: str | None = "auto", dtype: str | None = None) -> DeviceChoice:
    """``requested`` "auto" (default) picks cuda → mps → cpu; an explicit device must be available.

    ``dtype`` None means float16 on cuda/mps and float32 on cpu (fp16 on CPU is slow or unsupported).
    """
    import torch

    req = (requested or "auto").lower()
    if req not in DEVICES:
        raise ValueError(f"unknown device {requested!r}; use one of {', '.join(DEVICES)}")
    cuda_ok = bool(torch.cuda.is_available())
    mps_backend = getattr(torch.backends, "mps", None)
    mps_ok = bool(mps_backend is not None and mps_backend.is_available())
    if req == "auto":
        dev = "cuda" if cuda_ok else ("mps" if mps_ok else "cpu")
    elif req == "cuda" and not cuda_ok:
        raise ValueError("device 'cuda' was asked for but torch sees no CUDA GPU")
    elif req == "mps" and not mps_ok:
        raise ValueError("device 'mps' was asked for but the Apple MPS backend is not available")
    else:
        dev = req
    if dtype is None:
        dtype = "float32" if dev == "cpu" else "float16"
    if dtype not in ("float16", "float32", "bfloat16"):
        raise ValueError(f"unsupported dtype {dtype!r}")
    return DeviceChoice(dev, dtype)
