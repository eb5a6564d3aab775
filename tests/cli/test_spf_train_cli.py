"""``spf train`` / ``spf eval --policy DIR`` / ``spf table`` as a user runs them (fresh interpreter)."""
from __future__ import annotations

import pytest

from tests.support.cli import run_main

pytest.importorskip("torch")


def test_train_eval_and_table_of_a_run(tmp_path):
    from core.tasks.spf.demos import collect_oracle, save_demonstrations

    trajs, meta = collect_oracle("easy", 4, "train", seed=0)
    demos = tmp_path / "demos.npz"
    save_demonstrations(demos, trajs, meta)
    run = tmp_path / "run"
    r = run_main("spf", "train", "--algo", "mlp-bc", "--mode", "easy", "--steps", "40", "--seed", "1", "--out",
                 str(run), "--demos", str(demos), "--val-episodes", "1", "--no-test", "--quiet")
    assert r.returncode == 0, r.stderr
    assert "mlp-bc easy seed 1: 40 gradient steps" in r.stdout
    assert (run / "model.safetensors").is_file() and (run / "config.yaml").is_file()
    assert list((run / "tb").iterdir())  # TensorBoard event file

    ok = run_main("spf", "eval", "--policy", str(run), "--mode", "easy", "--split", "val", "--episodes", "2",
                  "--quiet")
    assert ok.returncode == 0, ok.stderr
    assert "easy/val (2 episodes)" in ok.stdout

    refused = run_main("spf", "eval", "--policy", str(run), "--mode", "medium", "--episodes", "1", "--quiet")
    assert refused.returncode == 2
    assert "trained for SPF mode 'easy', not 'medium'" in refused.stderr

    table = run_main("spf", "table", "--runs", str(run), "--no-random")
    assert table.returncode == 0, table.stderr
    assert "mlp-bc" in table.stdout and "TSR" in table.stdout and "seed 1: 40 steps" in table.stdout


def test_train_refuses_bad_arguments(tmp_path):
    (tmp_path / "file").write_text("x")
    r = run_main("spf", "train", "--algo", "dqn", "--mode", "easy", "--steps", "0", "--out", str(tmp_path / "o"))
    assert r.returncode == 2 and "--steps must be >= 1" in r.stderr
    r = run_main("spf", "train", "--algo", "dqn", "--mode", "easy", "--out", str(tmp_path / "file"))
    assert r.returncode == 2 and "a file is in the way" in r.stderr
    r = run_main("spf", "table", "--runs", str(tmp_path))
    assert r.returncode == 2 and "not a run folder" in r.stderr
