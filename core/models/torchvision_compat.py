"""Import torchvision beside the CPU build of torch.

Why this exists: the only torchvision wheel these machines can install from PyPI (0.28.0, the build for torch
2.13.0) is linked against CUDA torch; its compiled ops library (``_C.so``) needs ``libc10_cuda.so`` and cannot load
beside ``torch==2.13.0+cpu``. torchvision copes with a missing ops library everywhere except one place: at import,
``torchvision/_meta_registrations.py`` registers fake kernels for ``torchvision::nms`` and ``torchvision::qnms``
without checking that the ops exist, and the import fails with "operator torchvision::nms does not exist".

:func:`import_torchvision` tries the plain import first (a matching build — e.g. a CUDA machine — loads its real
ops); only when that fails for this reason does it declare the two op schemas (no kernels) and import again.
torchvision then reports ``extension._has_ops() == False`` and its Python code paths are used: ``ops.roi_align``
falls back to torchvision's own pure-PyTorch implementation (differentiable, same results), and
``ops.FeaturePyramidNetwork`` and the ``models`` (ResNet) are plain ``nn.Module`` code. Ops with no Python fallback
(``roi_pool``, ``nms``, ``deform_conv2d``) stay unavailable: :func:`has_compiled_ops` says so, and callers use
``roi_align`` (the VAP grounding network does).
"""
from __future__ import annotations

import sys
from types import ModuleType

_SHIM_OPS = (
    "nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
    "qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
)
_shim_library = None   # kept alive: dropping the Library object would remove the declared schemas


def import_torchvision() -> ModuleType:
    """``torchvision``, importable beside CPU torch (see the module docstring)."""
    global _shim_library
    if "torchvision" in sys.modules and hasattr(sys.modules["torchvision"], "ops"):
        return sys.modules["torchvision"]
    import torch

    try:
        import torchvision
        return torchvision
    except RuntimeError as exc:
        if "torchvision::nms" not in str(exc):
            raise
    for name in [m for m in sys.modules if m == "torchvision" or m.startswith("torchvision.")]:
        del sys.modules[name]   # the half-imported package
    if _shim_library is None:
        _shim_library = torch.library.Library("torchvision", "DEF")
        for schema in _SHIM_OPS:
            _shim_library.define(schema)
    import torchvision
    return torchvision


def has_compiled_ops() -> bool:
    """Whether torchvision's compiled ops (roi_pool, nms, fast roi_align) loaded."""
    return bool(import_torchvision().extension._has_ops())
