"""Import torchvision beside the CPU build of torch — also when a library (diffusers, transformers) imports it.

Why this exists: the only torchvision wheel these machines can install from PyPI (0.28.0, the build for torch
2.13.0) is linked against CUDA torch; its compiled ops library (``_C.so``) needs ``libc10_cuda.so`` and cannot load
beside ``torch==2.13.0+cpu``. torchvision copes with a missing ops library everywhere except one place: at import,
``torchvision/_meta_registrations.py`` registers fake kernels for ``torchvision::nms`` and ``torchvision::qnms``
without checking that the ops exist, and the import fails with "operator torchvision::nms does not exist". diffusers
and transformers import torchvision whenever it is installed (e.g. for ``CLIPImageProcessor``), so without this
module even Stable Diffusion icon generation would fail to import.

:func:`install` puts a finder on ``sys.meta_path`` (``core/__init__.py`` does it, so any code that imports ``core``
is covered). When anything first imports ``torchvision``, the finder loads torchvision's compiled ops if they load
(a matching build, e.g. a CUDA machine, keeps its real ops) and otherwise declares the two op schemas (no kernels);
then the normal import proceeds. torchvision then reports ``extension._has_ops() == False`` and its Python code
paths are used: ``ops.roi_align`` falls back to torchvision's own pure-PyTorch implementation (differentiable, same
results), and ``ops.FeaturePyramidNetwork`` and the ``models`` (ResNet) are plain ``nn.Module`` code. Ops with no
Python fallback (``roi_pool``, ``nms``, ``deform_conv2d``) stay unavailable: :func:`has_compiled_ops` says so, and
callers use ``roi_align`` (the VAP grounding network does).
"""
from __future__ import annotations

import importlib.machinery
import sys
from pathlib import Path
from types import ModuleType

# torch and torchvision are imported on first use: core/__init__.py imports this module, which must stay free.

_SHIM_OPS = (
    "nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
    "qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
)
_state: dict[str, object] = {"prepared": False, "library": None, "compiled": None}


def _prepare() -> None:
    """Load torchvision's compiled ops, or declare the op schemas its import needs (once per process)."""
    if _state["prepared"]:
        return
    _state["prepared"] = True
    spec = importlib.machinery.PathFinder.find_spec("torchvision")
    if spec is None or not spec.submodule_search_locations:
        return   # not installed: the import fails as usual
    import torch

    libs = sorted(Path(next(iter(spec.submodule_search_locations))).glob("_C*.so"))
    try:
        if not libs:
            raise OSError("no compiled ops library")
        torch.ops.load_library(str(libs[0]))
        _state["compiled"] = True
    except (OSError, RuntimeError):
        _state["compiled"] = False
        library = torch.library.Library("torchvision", "FRAGMENT")
        for schema in _SHIM_OPS:
            name = schema.split("(", 1)[0]
            if not torch._C._dispatch_has_kernel(f"torchvision::{name}") and \
                    not _has_schema(f"torchvision::{name}"):
                library.define(schema)
        _state["library"] = library   # kept alive: dropping it would remove the declared schemas


def _has_schema(qualified: str) -> bool:
    import torch

    try:
        torch._C._get_schema(qualified, "")
        return True
    except RuntimeError:
        return False


class _TorchvisionFinder:
    """A meta-path finder that only prepares (see :func:`_prepare`) and lets the normal finders import."""

    def find_spec(self, name, path=None, target=None):  # noqa: D401 - importlib protocol
        if name == "torchvision" and not _state["prepared"]:
            _prepare()
        return None


def install() -> None:
    """Put the finder on ``sys.meta_path`` (idempotent); cheap: nothing is imported until torchvision is."""
    if not any(isinstance(f, _TorchvisionFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _TorchvisionFinder())


def import_torchvision() -> ModuleType:
    """``torchvision``, importable beside CPU torch (see the module docstring)."""
    install()
    import torchvision

    return torchvision


def has_compiled_ops() -> bool:
    """Whether torchvision's compiled ops (roi_pool, nms, fast roi_align) loaded."""
    return bool(import_torchvision().extension._has_ops())
