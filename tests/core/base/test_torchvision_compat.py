"""torchvision imports beside CPU torch (core/base/torchvision_compat.py): roi_align runs and back-propagates, and
FPN and ResNet build, whether or not the compiled ops loaded."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from core.base.torchvision_compat import has_compiled_ops, import_torchvision  # noqa: E402


def test_roi_align_fpn_and_resnet_work():
    tv = import_torchvision()
    x = torch.arange(64, dtype=torch.float32).reshape(1, 1, 8, 8).requires_grad_()
    boxes = torch.tensor([[0.0, 0.0, 0.0, 4.0, 4.0]])
    out = tv.ops.roi_align(x, boxes, output_size=(2, 2), spatial_scale=1.0, sampling_ratio=2, aligned=True)
    # a 4x4 box split into 2x2 bins: each bin's mean over its 2x2 sample grid; the top-left bin covers rows/cols 0..1
    assert out.shape == (1, 1, 2, 2)
    assert out[0, 0, 0, 0].item() == pytest.approx(x[0, 0, :2, :2].mean().item(), abs=1e-4)
    out.sum().backward()
    assert x.grad is not None and x.grad.abs().sum() > 0
    fpn = tv.ops.FeaturePyramidNetwork([8, 16], 4)
    feats = fpn({"a": torch.randn(1, 8, 16, 16), "b": torch.randn(1, 16, 8, 8)})
    assert [f.shape[1] for f in feats.values()] == [4, 4]
    assert tv.models.resnet18(num_classes=3)(torch.randn(2, 3, 32, 32)).shape == (2, 3)
    assert isinstance(has_compiled_ops(), bool)


def test_libraries_that_import_torchvision_themselves_work_after_importing_core():
    """diffusers imports torchvision (CLIPImageProcessor) whenever it is installed; a fresh interpreter that imports
    ``core`` first must be able to import the Stable Diffusion pipeline (icon generation)."""
    import subprocess
    import sys

    code = ("import core\nfrom diffusers import StableDiffusionPipeline\nimport torchvision\n"
            "print('ok', StableDiffusionPipeline.__name__, torchvision.ops.roi_align.__name__)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600,
                       env={**__import__("os").environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"})
    assert r.returncode == 0, r.stderr[-2000:]
    assert "ok StableDiffusionPipeline roi_align" in r.stdout
