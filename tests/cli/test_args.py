"""CLI arguments and output paths are checked before any work (audit: tracebacks after a whole evaluation,
negative seeds, --n -1 / 0, --episodes 0, --episode-file with --mode all), and a mistyped sub-command is reported
instead of opening the studio."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from core.cli import run_cli
from tests.support.paths import ROOT

EP_VAL = str(ROOT / "configs" / "spf_episodes" / "easy" / "val.npz")


@pytest.fixture
def no_work(monkeypatch):
    """Make every long computation fail loudly: the checks under test must stop the command before it."""
    from core.tasks.spf import demos as spf_demos
    from core.tasks.spf import evaluate as spf_eval
    from core.tasks.spf import make_episodes as spf_make_episodes

    def boom(*a, **k):
        raise AssertionError("work started before the arguments were checked")

    monkeypatch.setattr(spf_eval, "evaluate", boom)
    monkeypatch.setattr(spf_demos, "collect_oracle", boom)
    monkeypatch.setattr(spf_make_episodes, "make_episode_set", boom)


@pytest.mark.parametrize("argv, expect", [
    (["spf", "eval", "--policy", "random", "--mode", "easy", "--split", "val", "--seed", "-5"],
     "--seed must be >= 0"),
    (["spf", "eval", "--mode", "easy", "--split", "val", "--episodes", "-3"], "--episodes must be >= 1"),
    (["spf", "eval", "--mode", "easy", "--split", "val", "--episodes", "0"], "--episodes must be >= 1"),
    (["spf", "eval", "--mode", "all", "--split", "val", "--episode-file", EP_VAL], "not --mode all"),
    (["spf", "eval", "--mode", "easy", "--split", "val", "--json", "{tmp}"], "--json {tmp}: is a folder"),
    (["spf", "eval", "--mode", "easy", "--split", "val", "--json", "{file}/x.json"], "is a file"),
    (["spf", "collect", "--mode", "easy", "--n", "1", "--seed", "-5"], "--seed must be >= 0"),
    (["spf", "collect", "--mode", "easy", "--n", "1", "--out", "{tmp}"], "--out {tmp}: is a folder"),
    (["spf", "collect", "--mode", "easy", "--n", "1", "--out", "{file}/d.npz"], "is a file"),
    (["spf", "make-episodes", "--mode", "easy", "--split", "val", "--n", "-1", "--out", "{tmp}/v.npz"],
     "--n must be >= 1, got -1"),
    (["spf", "make-episodes", "--mode", "easy", "--split", "val", "--n", "0", "--out", "{tmp}/v.npz"],
     "--n must be >= 1, got 0"),
    (["spf", "make-episodes", "--mode", "easy", "--split", "val", "--seed", "-1", "--out", "{tmp}/v.npz"],
     "--seed must be >= 0"),
    (["spf", "make-episodes", "--mode", "easy", "--split", "val", "--seed", str(10 ** 15), "--out", "{tmp}/v.npz"],
     "--seed must be at most"),
    (["spf", "make-episodes", "--mode", "easy", "--split", "val", "--out", "{tmp}"], "--out {tmp}: is a folder"),
    (["render", "--episode", "ep.npz", "--step", "1", "--seed", "-1", "--out", "{tmp}/x.png"],
     "--seed must be >= 0"),
])
def test_bad_arguments_are_reported_before_any_work(tmp_path, capsys, no_work, argv, expect):
    (tmp_path / "afile").write_text("x")
    subst = {"{tmp}": str(tmp_path), "{file}": str(tmp_path / "afile")}

    def fill(s):
        for k, v in subst.items():
            s = s.replace(k, v)
        return s

    assert run_cli([fill(a) for a in argv] + ["--quiet"] * (argv[0] == "spf")) == 2
    err = capsys.readouterr().err
    assert fill(expect) in err and "Traceback" not in err, err


def test_output_problem_detects_unwritable_folders(tmp_path):
    from core.cli.simulate import output_problem

    assert output_problem(tmp_path / "new" / "ep.npz") is None and (tmp_path / "new").is_dir()
    assert "is a folder" in output_problem(tmp_path)
    (tmp_path / "f").write_text("")
    assert "is a file" in output_problem(tmp_path / "f" / "x.npz")
    if Path("/proc/self").is_dir():  # writable to os.access as root, yet no file can be created there
        assert "cannot create files" in output_problem(Path("/proc/x.npz"))


def test_eval_writes_json_and_a_json_error_is_clean(tmp_path, capsys):
    out = tmp_path / "sub" / "r.json"
    argv = ["spf", "eval", "--policy", "oracle", "--mode", "easy", "--split", "val", "--episodes", "1", "--quiet"]
    assert run_cli(argv + ["--json", str(out)]) == 0
    assert '"policy": "oracle"' in out.read_text()


@pytest.fixture
def fake_studio(monkeypatch):
    """Replace the studio by a recorder: the tests check whether main.py would open it, and with what."""
    import sys
    import types

    calls = []
    mod = types.ModuleType("app.shell.studio")
    mod.run_studio = lambda argv: calls.append(list(argv)) or 0
    monkeypatch.setitem(sys.modules, "app.shell.studio", mod)
    return calls


def _main():
    import importlib.util

    spec = importlib.util.spec_from_file_location("logicity_main", ROOT / "main.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.main


def test_mistyped_command_is_reported_not_opened(fake_studio, capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    main = _main()
    assert main(["simulat", "--steps", "3"]) == 2
    err = capsys.readouterr().err
    assert "unknown command 'simulat' (did you mean 'simulate'?)" in err and fake_studio == []
    assert main(["rendr"]) == 2 and "did you mean 'render'" in capsys.readouterr().err
    assert main(["zzz"]) == 2 and "unknown command 'zzz'; commands:" in capsys.readouterr().err
    assert fake_studio == []


def test_projects_and_the_plain_studio_still_open(fake_studio, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "myproject").mkdir()
    main = _main()
    assert main([]) == 0
    assert main(["myproject"]) == 0
    assert main([str(tmp_path / "myproject"), "--screenshot", "x.png"]) == 0
    assert main(["some/where/project.yaml"]) == 0  # a path (the studio reports a missing one itself)
    assert fake_studio == [[], ["myproject"], [str(tmp_path / "myproject"), "--screenshot", "x.png"],
                           ["some/where/project.yaml"]]


def test_output_into_a_closed_pipe_is_not_a_traceback():
    """`main.py simulate ... | head -1`: the reader going away ends the command quietly (status 141, as shells do)."""
    import subprocess

    proc = subprocess.Popen([sys.executable, "main.py", "simulate", "--config", "configs/modes/sim_easy.yaml",
                             "--steps", "40", "--seed", "1"], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    proc.stdout.readline()
    proc.stdout.close()                         # like `head -1` exiting
    err = proc.stderr.read()
    proc.wait(timeout=120)
    assert "Traceback" not in err and "BrokenPipeError" not in err
    assert proc.returncode == 141
