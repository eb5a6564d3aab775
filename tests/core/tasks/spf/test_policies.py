"""Policy files (``core.tasks.spf.policy_files.load_policy``): every format is checked on load and on every action.

Bad ``.py`` files, weight files (``.npz``/``.safetensors`` MLPs: shapes, missing biases, layer gaps, NaN) and
TorchScript (never a pickle) are refused with a PolicyError naming the file; a bad action or non-finite action
scores (argmax of NaN would silently act 0) stop the evaluation naming the step and the episode; the CLI reports
it in one line."""
from __future__ import annotations

import numpy as np
import pytest

from core.base.errors import LogiCityError, PolicyError
from core.tasks.spf.env import SPFEnv
from core.tasks.spf.evaluate import evaluate
from core.tasks.spf.policy import FunctionPolicy, check_action
from core.tasks.spf.policy_files import load_policy
from tests.support.cli import run_main
from tests.support.paths import ROOT

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


def mlp(path, shapes, **extra):
    arrays = {}
    for k, (i, o) in enumerate(shapes):
        arrays[f"W{k}"] = np.zeros((i, o), np.float32)
        arrays[f"b{k}"] = np.zeros(o, np.float32)
    arrays[f"b{len(shapes) - 1}"] = np.array([0, 0, 1, 0], np.float32)[:shapes[-1][1]]
    arrays.update(extra)
    np.savez(path, **arrays)
    return path


@pytest.mark.parametrize("content, expect, line", [
    ("def policy(obs:\n    return 1\n", "syntax error", 1),
    ("import numpy\nraise RuntimeError('boom')\n", "RuntimeError: boom", 2),
    ("x = 1\n", "must define policy", None),
    ("policy = 3\n", "not a function", None),
    ("def make_policy(env):\n    return 5\n", "not a callable", None),
])
def test_bad_py_policy_files_are_reported(tmp_path, easy_env, content, expect, line):
    p = tmp_path / "pol.py"
    p.write_text(content)
    with pytest.raises(PolicyError) as ei:
        load_policy(p, easy_env)
    assert ei.value.file == str(p) and expect in ei.value.message and ei.value.line == line


def test_bad_weight_files_are_reported(tmp_path, easy_env):
    cases = {
        "junk.npz": (lambda p: p.write_bytes(b"junk junk junk"), "not an .npz archive"),
        "wrong_in.npz": (lambda p: mlp(p, [(10, 4)]), "W0 has shape (10, 4): its first dimension must be 85"),
        "wrong_out.npz": (lambda p: mlp(p, [(D_EASY, 8), (8, 3)]), "3 outputs"),
        "chain.npz": (lambda p: mlp(p, [(D_EASY, 8), (7, 4)]), "W1 has shape (7, 4)"),
        "bias.npz": (lambda p: np.savez(p, W0=np.zeros((D_EASY, 4)), b0=np.zeros(5)), "b0 has shape (5,)"),
        "gap.npz": (lambda p: np.savez(p, W0=np.zeros((D_EASY, 4)), W2=np.zeros((4, 4))), "W2"),
        "extra.npz": (lambda p: mlp(p, [(D_EASY, 4)], notes=np.zeros(2)), "unexpected array 'notes'"),
        "nan.npz": (lambda p: np.savez(p, W0=np.full((D_EASY, 4), np.nan)), "NaN"),
        "text.npz": (lambda p: np.savez(p, W0=np.array([["a"] * 4] * D_EASY)), "numeric"),
        "objects.npz": (lambda p: np.savez(p, W0=np.array([{"a": 1}], dtype=object)), "pickled"),
        "empty.npz": (lambda p: np.savez(p, other=np.zeros(2)), "unexpected array"),
        "bad.safetensors": (lambda p: p.write_bytes(b"\x05\x00\x00\x00\x00\x00\x00\x00{bad}"), ".safetensors"),
        "policy.onnx": (lambda p: p.write_bytes(b"x"), "unknown policy file type"),
    }
    for name, (make, expect) in cases.items():
        p = tmp_path / name
        make(p)
        with pytest.raises(PolicyError) as ei:
            load_policy(p, easy_env)
        assert ei.value.file == str(p) and expect in ei.value.message, (name, ei.value.message)
    with pytest.raises(PolicyError, match="not found"):
        load_policy(tmp_path / "missing.npz", easy_env)


def test_safetensors_mlp_is_supported_and_equals_npz(tmp_path, easy_env):
    from safetensors.numpy import save_file

    rng = np.random.default_rng(0)
    arrays = {"W0": rng.normal(size=(D_EASY, 16)).astype(np.float32), "b0": rng.normal(size=16).astype(np.float32),
              "W1": rng.normal(size=(16, 4)).astype(np.float32), "b1": rng.normal(size=4).astype(np.float32)}
    save_file(arrays, str(tmp_path / "p.safetensors"))
    np.savez(tmp_path / "p.npz", **arrays)
    a, b = load_policy(tmp_path / "p.safetensors", easy_env), load_policy(tmp_path / "p.npz", easy_env)
    for _ in range(20):
        obs = (rng.random(D_EASY) < 0.3).astype(np.float32)
        assert a(obs, easy_env) == b(obs, easy_env) in range(4)
    rep = evaluate("easy", str(tmp_path / "p.safetensors"), "val", episodes=[0])
    assert rep.episodes[0].steps >= 1


def test_torchscript_only_never_pickle(tmp_path, easy_env):
    torch = pytest.importorskip("torch")
    (tmp_path / "corrupt.pt").write_bytes(b"garbage bytes")
    torch.save({"weight": torch.zeros(4, D_EASY)}, tmp_path / "state_dict.pt")      # a pickled checkpoint
    torch.jit.save(torch.jit.script(torch.nn.Linear(D_EASY, 3)), tmp_path / "three.pt")
    torch.jit.save(torch.jit.script(torch.nn.Linear(10, 4)), tmp_path / "narrow.pt")
    for name, expect in (("corrupt.pt", "not a TorchScript module"), ("state_dict.pt", "not a TorchScript module"),
                         ("three.pt", "returns (1, 3)"), ("narrow.pt", f"fails on a [1, {D_EASY}] observation")):
        with pytest.raises(PolicyError) as ei:
            load_policy(tmp_path / name, easy_env)
        assert ei.value.file == str(tmp_path / name) and expect in ei.value.message, (name, ei.value.message)
    lin = torch.nn.Linear(D_EASY, 4)
    with torch.no_grad():
        lin.weight.zero_()
        lin.bias.copy_(torch.tensor([0.0, 0.0, 0.0, 1.0]))
    torch.jit.save(torch.jit.script(lin), tmp_path / "stop.pt")
    assert load_policy(tmp_path / "stop.pt", easy_env)(np.zeros(D_EASY, np.float32), easy_env) == 3
    # no pickle loading anywhere in the task code (torch.load / pickle.load)
    for f in (ROOT / "core" / "tasks").rglob("*.py"):
        text = f.read_text()
        assert "torch.load(" not in text and "pickle.load" not in text and "allow_pickle=True" not in text, f


@pytest.mark.parametrize("ret, shown", [("7", "returned 7 (int)"), ("'x'", "returned 'x' (str)"),
                                        ("2.0", "returned 2.0 (float)"), ("None", "returned None"),
                                        ("True", "returned True (bool)"), ("-1", "returned -1")])
def test_bad_actions_name_the_file_value_step_and_episode(tmp_path, ret, shown):
    p = tmp_path / "bad_action.py"
    p.write_text(f"def policy(obs, env):\n    return 1 if env.unwrapped.t < 2 else {ret}\n")
    with pytest.raises(PolicyError) as ei:
        evaluate("easy", str(p), "val", episodes=[4])
    e = ei.value
    assert e.file == str(p) and shown in e.message and "at step 3 of easy/val episode 4" in e.message
    assert "0..3" in e.message


def test_exception_inside_the_policy_is_reported(tmp_path):
    p = tmp_path / "raises.py"
    p.write_text("def policy(obs):\n    return {}['missing']\n")
    with pytest.raises(PolicyError) as ei:
        evaluate("easy", str(p), "val", episodes=[0])
    assert ei.value.file == str(p) and ei.value.line == 2 and "KeyError" in ei.value.message
    assert "at step 1 of easy/val episode 0" in ei.value.message


def test_accepted_action_types():
    p = FunctionPolicy(lambda obs, env: 0, "p")
    assert check_action(np.int64(2), p) == 2 and check_action(np.array([3]), p) == 3
    assert check_action(np.array(1, np.int32), p) == 1 and check_action(0, p) == 0
    for bad in (4, np.float32(1), np.array([1, 2]), np.bool_(True), "1"):
        with pytest.raises(PolicyError, match="policy p returned"):
            check_action(bad, p)


def test_policy_errors_are_logicity_errors():
    assert issubclass(PolicyError, LogiCityError)


def test_cli_reports_bad_policies_in_one_line(tmp_path):
    (tmp_path / "syntax.py").write_text("def policy(obs:\n    return 1\n")
    (tmp_path / "seven.py").write_text("def policy(obs):\n    return 7\n")
    (tmp_path / "corrupt.pt").write_bytes(b"garbage")
    mlp(tmp_path / "wrong.npz", [(10, 4)])
    for name, expect in (("syntax.py", "syntax.py:1: running the policy file failed: syntax error"),
                         ("seven.py", "returned 7 (int) at step 1 of easy/val episode 0"),
                         ("corrupt.pt", "not a TorchScript module"), ("wrong.npz", "first dimension must be 85")):
        r = run_main("spf", "eval", "--policy", str(tmp_path / name), "--mode", "easy", "--split", "val",
                     "--episodes", "1", "--quiet")
        assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
        assert expect in r.stderr and str(tmp_path / name) in r.stderr, r.stderr
        assert ("only load policy files you trust" in r.stderr) == name.endswith(".py")
    r = run_main("spf", "eval", "--help")
    assert "only load files you trust" in " ".join(r.stdout.split()) and ".safetensors" in r.stdout


def test_docs_warn_about_py_policies():
    text = (ROOT / "docs" / "spf.md").read_text()
    assert "only load files you trust" in text and ".safetensors" in text and "torch.jit.load" in text
