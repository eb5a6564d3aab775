"""``python main.py rules check|analyze`` as a CI pipeline runs it: exit codes, file:line:col output, JSON."""
from __future__ import annotations

import json

import pytest

from tests.support.cli import run_main
from tests.support.paths import CONFIGS

BROKEN = "Stop(X) :- IsCarr(X), NextTo(X).\nSlow(X) :- IsYoung(Y), IsYoung(Z), NextTo(Y, W).\n"
PED_CAR = "#ontology full.\nStop(X) :- IsAtInter(X), IsInInter(Y).\nStop(X) :- CollidingClose(X, Y).\nFast(X) :- IsBus(X).\n"


@pytest.fixture()
def broken(tmp_path):
    p = tmp_path / "broken.rules"
    p.write_text(BROKEN, encoding="utf-8")
    return p


def test_check_clean_bundled_file_exits_0():
    r = run_main("rules", "check", str(CONFIGS / "rules" / "spf_expert.rules"))
    assert r.returncode == 0, r.stderr
    assert r.stdout == "" and "0 errors, 0 warnings" in r.stderr


def test_check_reports_every_problem_at_file_line_col_and_exits_1(broken):
    r = run_main("rules", "check", str(broken))
    assert r.returncode == 1
    lines = r.stdout.splitlines()
    assert lines[0] == f"{broken}:1:12: error: unknown predicate 'IsCarr'; did you mean IsCar? [unknown-predicate]"
    assert lines[1].startswith(f"{broken}:1:23: error: arity mismatch: NextTo takes 2 arguments, got 1")
    assert [ln.split(": ")[1] for ln in lines[2:]] == ["warning", "warning"]
    assert "2 errors, 2 warnings" in r.stderr


def test_check_json_and_strict(tmp_path):
    warn = tmp_path / "warn.rules"
    warn.write_text("Stop(X) :- IsCar(X), Not(IsBus(Y)).\n", encoding="utf-8")
    r = run_main("rules", "check", str(warn), "--json")
    assert r.returncode == 0
    data = json.loads(r.stdout)
    assert data["errors"] == 0 and data["warnings"] == 1
    d = data["diagnostics"][0]
    assert {k: d[k] for k in ("severity", "code", "line", "col", "length", "file")} == {
        "severity": "warning", "code": "unsafe-negation", "line": 1, "col": 26, "length": 5, "file": str(warn)}
    assert run_main("rules", "check", str(warn), "--strict").returncode == 1


def test_check_syntax_error_and_bad_inputs(tmp_path):
    bad = tmp_path / "syntax.rules"
    bad.write_text("Stop(X) :- IsCar(X", encoding="utf-8")
    r = run_main("rules", "check", str(bad))
    assert r.returncode == 1 and r.stdout.startswith(f"{bad}:1:19: error: expected")
    r = run_main("rules", "check", str(tmp_path / "missing.rules"))
    assert r.returncode == 1 and r.stderr.strip() == f"error: {tmp_path / 'missing.rules'}: file not found"
    r = run_main("rules", "check", str(bad), "--ontology", "nosuch")
    assert r.returncode == 1 and "no bundled ontology" in r.stderr and "Traceback" not in r.stderr
    (tmp_path / "latin1.rules").write_bytes(b"Stop(X) :- IsCar(X).\n% caf\xe9\n")
    r = run_main("rules", "check", str(tmp_path / "latin1.rules"))
    assert r.returncode == 1 and "latin1.rules:2:6: not UTF-8" in r.stderr


def test_check_uses_the_ontology_directive(tmp_path):
    p = tmp_path / "easy.rules"
    p.write_text("#ontology easy.\nStop(X) :- IsYoung(X).\n", encoding="utf-8")   # IsYoung is not in easy
    r = run_main("rules", "check", str(p))
    assert r.returncode == 1 and "unknown predicate 'IsYoung'" in r.stdout
    assert run_main("rules", "check", str(p), "--ontology", "full").returncode == 0


def test_analyze_json_with_scenes(tmp_path):
    p = tmp_path / "pc.rules"
    p.write_text(PED_CAR, encoding="utf-8")
    out = tmp_path / "scenes"
    r = run_main("rules", "analyze", str(p), "--json", "--scenes", str(out), "--strict")
    assert r.returncode == 1, r.stderr      # --strict: findings fail
    data = json.loads(r.stdout)
    (sec,) = data["sections"]
    (conf,) = [c for c in sec["conflicts"] if c["conflict"]]
    assert set(conf["heads"]) == {"Stop", "Fast"} and conf["scene"]["verified"]
    dl = sec["deadlocks"]
    assert dl["deadlocks"] and dl["complete"] and "junction" in dl["bound"]
    assert {a["clause"] for a in dl["deadlocks"][0]["agents"]} == {"Stop#1", "Stop#2"}
    from core.sim.scene_io import load_scene

    assert data["scene_files"] and all(load_scene(f).agents for f in data["scene_files"])
    r = run_main("rules", "analyze", str(p), "--no-scenes")
    assert r.returncode == 0 and "CONFLICT Fast + Stop" in r.stdout and "deadlock search" not in r.stdout


def test_analyze_coverage_from_an_episode(tmp_path):
    ep = tmp_path / "ep.npz"
    assert run_main("simulate", "--steps", "8", "--out", str(ep), "--quiet").returncode == 0
    r = run_main("rules", "analyze", str(CONFIGS / "rules" / "sim_expert.rules"), "--no-scenes", "--episode", str(ep))
    assert r.returncode == 0, r.stderr
    assert "coverage over 8 steps x 18 agents" in r.stdout and "never fired:" in r.stdout
    assert "Stop#1 (line 8):" in r.stdout


def test_analyze_refuses_bad_options(tmp_path):
    p = tmp_path / "pc.rules"
    p.write_text(PED_CAR, encoding="utf-8")
    r = run_main("rules", "analyze", str(p), "--deadlock-agents", "7")
    assert r.returncode == 2 and "--deadlock-agents must be 0, 2 or 3" in r.stderr
    r = run_main("rules", "analyze", str(p), "--section", "nope")
    assert r.returncode == 2 and "no section 'nope'" in r.stderr
    r = run_main("rules", "analyze", str(p), "--junction", "0")
    assert r.returncode == 2 and "not an intersection" in r.stderr
    r = run_main("rules", "analyze", str(p), "--episode", str(p))
    assert r.returncode == 1 and r.stderr.startswith("error: ") and "Traceback" not in r.stderr
