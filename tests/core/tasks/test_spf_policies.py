"""Policy files are checked consistently whatever their format: missing biases are refused like NaN weights, and
non-finite action scores from any model policy (TorchScript, an overflowing MLP) stop the evaluation with a
PolicyError naming the step and the episode instead of silently acting 0 (argmax of NaN)."""
from __future__ import annotations

import numpy as np
import pytest

from core.errors import PolicyError
from core.tasks.spf import SPFEnv
from core.tasks.spf_eval import evaluate, load_policy

D_EASY = 85


@pytest.fixture(scope="module")
def easy_env():
    return SPFEnv("easy", "val")


def test_missing_biases_are_refused(tmp_path, easy_env):
    np.savez(tmp_path / "no_b.npz", W0=np.zeros((D_EASY, 4), np.float32))
    with pytest.raises(PolicyError) as ei:
        load_policy(tmp_path / "no_b.npz", easy_env)
    assert ei.value.file == str(tmp_path / "no_b.npz") and "array b0" in ei.value.message
    assert "missing" in ei.value.message
    np.savez(tmp_path / "no_b1.npz", W0=np.zeros((D_EASY, 8)), b0=np.zeros(8), W1=np.zeros((8, 4)))
    with pytest.raises(PolicyError, match="array b1"):
        load_policy(tmp_path / "no_b1.npz", easy_env)


def test_layer_gap_names_the_missing_layer(tmp_path, easy_env):
    np.savez(tmp_path / "gap.npz", W0=np.zeros((D_EASY, 4)), b0=np.zeros(4), W2=np.zeros((4, 4)))
    with pytest.raises(PolicyError, match="W2 without W1"):
        load_policy(tmp_path / "gap.npz", easy_env)


def test_overflowing_mlp_scores_stop_the_evaluation(tmp_path):
    p = tmp_path / "huge.npz"
    np.savez(p, W0=np.full((D_EASY, 4), 1e30, np.float32), b0=np.zeros(4, np.float32),
             W1=np.full((4, 4), 1e30, np.float32), b1=np.zeros(4, np.float32))
    with pytest.raises(PolicyError) as ei:
        evaluate("easy", str(p), "val", episodes=[0])
    e = ei.value
    assert e.file == str(p) and "non-finite action scores" in e.message
    assert "at step 1 of easy/val episode 0" in e.message


def test_torchscript_nan_scores_are_refused(tmp_path, easy_env):
    torch = pytest.importorskip("torch")

    class AlwaysNaN(torch.nn.Module):
        def forward(self, x):
            return torch.full((1, 4), float("nan"))

    class NaNOnRealInput(torch.nn.Module):  # fine on the zero observation of the load check, NaN afterwards
        def forward(self, x):
            nan = torch.full((1, 4), float("nan"))
            return torch.where(x.abs().sum() > 0, nan, torch.zeros(1, 4))

    torch.jit.save(torch.jit.script(AlwaysNaN()), tmp_path / "nan.pt")
    torch.jit.save(torch.jit.script(NaNOnRealInput()), tmp_path / "later.pt")
    with pytest.raises(PolicyError) as ei:
        load_policy(tmp_path / "nan.pt", easy_env)
    assert ei.value.file == str(tmp_path / "nan.pt") and "non-finite action scores" in ei.value.message
    with pytest.raises(PolicyError) as ei:
        evaluate("easy", str(tmp_path / "later.pt"), "val", episodes=[2])
    assert "non-finite action scores" in ei.value.message and "episode 2" in ei.value.message
