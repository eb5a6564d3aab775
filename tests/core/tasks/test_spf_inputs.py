"""SPF user input checks: policy files (load and every action), episode-set and demonstration files, and
human play scored by the very functions evaluation uses (QA review D3, D4, D6, D8, D10)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from core.errors import EpisodeFileError, LogiCityError, PolicyError
from core.tasks import spf_demos, spf_episodes
from core.tasks.archive import read_archive, write_archive
from core.tasks.spf import SPFEnv
from core.tasks.spf_demos import Trajectory, load_demonstrations, save_demonstrations
from core.tasks.spf_episodes import default_episode_path, load_episode_set, read_episode_set
from core.tasks.spf_eval import check_action, evaluate, load_policy, run_episode
from core.tasks.spf_session import PlaySession
from core.tasks.spf_settings import load_spf_mode
from tests.support.paths import ROOT

D_EASY = 85


def run_main(*args):
    return subprocess.run([sys.executable, str(ROOT / "main.py"), *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)


@pytest.fixture(scope="module")
def easy_env():
    return SPFEnv("easy", "val")


# ---- D3 / D8: policy files ---------------------------------------------------------------------------------------

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
    for f in (ROOT / "core" / "tasks").glob("*.py"):
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
    assert check_action(np.int64(2), "p") == 2 and check_action(np.array([3]), "p") == 3
    assert check_action(np.array(1, np.int32), "p") == 1 and check_action(0, "p") == 0
    for bad in (4, np.float32(1), np.array([1, 2]), np.bool_(True), "1"):
        with pytest.raises(PolicyError):
            check_action(bad, "p")


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


# ---- D4: episode-set files -------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def shipped_easy_val():
    return read_archive(default_episode_path(load_spf_mode("easy", "val")), spf_episodes.FORMAT,
                        spf_episodes.VERSION)


def edited(tmp_path, shipped, edit, name="edited.npz") -> Path:
    arrays, meta = shipped
    arrays = {k: v.copy() for k, v in arrays.items()}
    meta = json.loads(json.dumps(meta))
    edit(arrays, meta)
    return write_archive(tmp_path / name, arrays, meta, spf_episodes.FORMAT, spf_episodes.VERSION)


def _cell(a, k, i, cell):
    """Move agent i of episode k to ``cell``: position and its path cell together (still on its path)."""
    n = a["positions"].shape[1]
    j = int(a["plan_offsets"][k * n + i]) + int(a["path_index"][k, i])
    a["plan_cells"][j] = cell
    a["positions"][k, i] = cell


def _first_ped(meta):
    names = meta["agents"]
    return next(i for i, n in enumerate(names) if n.lower().startswith("ped"))


EPISODE_CASES = {
    "position_outside_map": (lambda a, m: _cell(a, 3, 0, (3000, 3000)),
                             "array positions, episode 3, agent 0 (Car_1): cell (3000, 3000) is outside the 241×241"),
    "path_cell_outside_map": (lambda a, m: a["plan_cells"].__setitem__(int(a["plan_offsets"][-2]) + 1, (-4, 7)),
                              "array plan_cells, episode 39, agent 9"),
    "goal_outside_map": (lambda a, m: a["goals"].__setitem__((1, 2), (5, 999)), "array goals, episode 1, agent 2"),
    "heading_9": (lambda a, m: a["headings"].__setitem__((2, 1), 9),
                  "array headings, episode 2, agent 1: heading 9 is outside -1..3"),
    "oracle_step_0": (lambda a, m: a["oracle_step"].__setitem__(5, 0),
                      "array oracle_step, episode 5: oracle step count 0 is outside >= 1"),
    "negative_wait": (lambda a, m: a["wait"].__setitem__((0, 3), -2), "array wait, episode 0, agent 3"),
    "negative_path_index": (lambda a, m: a["path_index"].__setitem__((6, 0), -1), "array path_index, episode 6"),
    "path_index_past_end": (lambda a, m: a["path_index"].__setitem__((6, 0), 10 ** 6), "beyond the end"),
    "negative_seed": (lambda a, m: a["seed"].__setitem__(7, -5), "array seed, episode 7"),
    "car_priority_0": (lambda a, m: a["priorities"].__setitem__((8, 0), 0),
                       "array priorities, episode 8, agent 0 (Car_1): priority 0; a car's priority"),
    "pedestrian_priority": (lambda a, m: a["priorities"].__setitem__((9, _first_ped(m)), 4), "pedestrian's priority"),
    "concept_on_wrong_kind": (lambda a, m: a["concepts"].__setitem__(
        (10, _first_ped(m), m["concepts"].index("ambulance")), True), "concept 'ambulance' does not apply"),
    "unknown_concept": (lambda a, m: m["concepts"].__setitem__(0, "flying"), "unknown concept 'flying'"),
    "unknown_label": (lambda a, m: m["concept_labels"].__setitem__(0, "flying"), "unknown concept 'flying'"),
    "concepts_not_a_list": (lambda a, m: m.__setitem__("concepts", 5), "'concepts' must be a list"),
    "label_index": (lambda a, m: a["concept"].__setitem__(11, 40), "array concept, episode 11"),
    "float_positions": (lambda a, m: a.__setitem__("positions", a["positions"].astype(np.float32)),
                        "positions must hold integers"),
    "bool_reach_goal": (lambda a, m: a.__setitem__("reach_goal", a["reach_goal"].astype(np.int8)),
                        "reach_goal must be boolean"),
    "short_oracle_step": (lambda a, m: a.__setitem__("oracle_step", a["oracle_step"][:3]),
                          "array oracle_step has shape (3,)"),
    "empty_path": (lambda a, m: a["plan_offsets"].__setitem__(1, a["plan_offsets"][0]), "empty planned path"),
    "other_agents": (lambda a, m: m["agents"].__setitem__(1, "Car_99"), "was made for agents"),
}


@pytest.mark.parametrize("case", sorted(EPISODE_CASES))
def test_episode_set_values_are_checked_on_load(tmp_path, shipped_easy_val, case):
    edit, expect = EPISODE_CASES[case]
    p = edited(tmp_path, shipped_easy_val, edit)
    with pytest.raises(EpisodeFileError) as ei:
        load_episode_set(load_spf_mode("easy", "val"), p)
    assert ei.value.file == str(p) and expect in ei.value.message, ei.value.message


def test_env_and_cli_report_a_bad_episode_set(tmp_path, shipped_easy_val):
    p = edited(tmp_path, shipped_easy_val, lambda a, m: a["headings"].__setitem__((0, 0), 9))
    env = SPFEnv("easy", "val", episodes=str(p))
    with pytest.raises(EpisodeFileError, match="heading 9"):
        env.reset(options={"episode": 0})
    p2 = edited(tmp_path, shipped_easy_val, lambda a, m: _cell(a, 0, 0, (3000, 3000)), "far.npz")
    r = run_main("spf", "eval", "--policy", "oracle", "--mode", "easy", "--split", "val", "--episode-file", str(p2),
                 "--quiet")
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert str(p2) in r.stderr and "array positions, episode 0, agent 0" in r.stderr, r.stderr


def test_shipped_episode_sets_pass_the_checks():
    for mode in ("easy", "medium", "hard", "expert"):
        for split in ("val", "test"):
            es = load_episode_set(load_spf_mode(mode, split))
            assert len(es) in (40, 100) and all(s.label["oracle_step"] >= 1 for s in es.states)


# ---- D10: demonstration files --------------------------------------------------------------------------------------

@pytest.fixture()
def demo_file(tmp_path):
    t = 3
    infos = {k: np.zeros(t + 1, spf_demos._INFO_DTYPES[k]) for k in spf_demos.INFO_KEYS}
    tr = Trajectory(np.zeros((t + 1, D_EASY), np.float32), np.array([1, 1, 3], np.int64), np.full(t, -0.1),
                    np.array([False, False, True]), np.zeros(t, bool), infos, {"index": 0})
    meta = {"dataset_id": "x", "observation_space": {"type": "Box", "shape": [D_EASY]}}
    return save_demonstrations(tmp_path / "demo.npz", [tr, tr], meta)


def rewrite_demo(src: Path, dst: Path, edit) -> Path:
    arrays, meta = read_archive(src, spf_demos.FORMAT, spf_demos.VERSION)
    edit(arrays, meta)
    return write_archive(dst, arrays, meta, spf_demos.FORMAT, spf_demos.VERSION)


DEMO_CASES = {
    "total_episodes_text": (lambda a, m: m.__setitem__("total_episodes", "abc"), "'total_episodes' must be a whole"),
    "total_episodes_negative": (lambda a, m: m.__setitem__("total_episodes", -1), "'total_episodes'"),
    "episodes_int": (lambda a, m: m.__setitem__("episodes", 5), "'episodes' must be a list"),
    "episodes_count": (lambda a, m: m.__setitem__("episodes", [{}]), "lists 1 episodes, total_episodes says 2"),
    "more_groups": (lambda a, m: m.update(total_episodes=1, episodes=m["episodes"][:1]), "holds episode_1"),
    "total_steps": (lambda a, m: m.__setitem__("total_steps", 99), "'total_steps' is 99"),
    "version_text": (lambda a, m: m.__setitem__("version", "x"), "'version' must be an integer"),
    "space": (lambda a, m: m.__setitem__("observation_space", {"shape": "big"}), "'observation_space'"),
    "action_7": (lambda a, m: a["episode_1/actions"].__setitem__(1, 7), "episode_1/actions, step 1: action 7"),
    "float_actions": (lambda a, m: a.__setitem__("episode_0/actions", a["episode_0/actions"].astype(float)),
                      "actions must hold integers"),
    "obs_width": (lambda a, m: a.__setitem__("episode_0/observations", np.zeros((4, 10), np.float32)),
                  "10 values per observation"),
    "obs_rows": (lambda a, m: a.__setitem__("episode_0/observations", np.zeros((2, D_EASY), np.float32)),
                 "episode_0/observations has shape (2, 85)"),
    "rewards_nan": (lambda a, m: a["episode_0/rewards"].__setitem__(0, np.nan), "NaN"),
    "terminations_int": (lambda a, m: a.__setitem__("episode_0/terminations", np.zeros(3, np.int8)),
                         "terminations has shape (3,) (int8)"),
    "info_length": (lambda a, m: a.__setitem__("episode_0/infos/step", np.zeros(2, np.int32)),
                    "infos/step has shape (2,)"),
    "info_action": (lambda a, m: a["episode_0/infos/oracle_action"].__setitem__(0, 9), "outside -1..3"),
    "missing": (lambda a, m: a.pop("episode_1/rewards"), "lacks episode_1/rewards"),
}


@pytest.mark.parametrize("case", sorted(DEMO_CASES))
def test_demonstration_files_are_checked(tmp_path, demo_file, case):
    edit, expect = DEMO_CASES[case]
    p = rewrite_demo(demo_file, tmp_path / "bad.npz", edit)
    with pytest.raises(EpisodeFileError) as ei:
        load_demonstrations(p)
    assert ei.value.file == str(p) and expect in ei.value.message, ei.value.message


def test_good_demonstration_file_loads(demo_file):
    trajs, meta = load_demonstrations(demo_file)
    assert len(trajs) == 2 and meta["total_steps"] == 6 and list(trajs[1].actions) == [1, 1, 3]


# ---- D6: human play is scored by the evaluation's own functions ----------------------------------------------------

def replay(actions):
    it = iter(actions)
    return lambda obs, env: next(it)


def test_session_and_evaluation_score_the_same_run_identically():
    """Easy val episode 1: Stop x196, then the oracle; the goal is reached on step 246 = max_steps, so the
    step-limit -3 applies to both (it used to be skipped by the session: -2.5789 vs -5.5789)."""
    s = PlaySession("easy", "val")
    s.start(1)
    for _ in range(196):
        s.act(3)
    while not s.done:
        s.act(s.oracle_hint())
    assert s.outcome == "success" and s.num_steps == s.max_steps == 246
    env = SPFEnv("easy", "val")
    res = run_episode(env, 1, replay([r.action for r in s.records]), env.settings.eval_actions)
    assert res.success and res.steps == 246
    assert s.result() == res
    assert s.total_reward == res.score == pytest.approx(sum(r.reward for r in s.records) - 3)
    assert res.score == pytest.approx(-5.578947, abs=1e-5)


def test_session_and_evaluation_agree_when_the_horizon_truncates():
    """Truncated by the horizon before the step budget: no step-limit penalty in either."""
    s = PlaySession("easy", "val", SPFEnv("easy", "val", record=True, max_horizon=12))
    s.start(0)
    while not s.done:
        s.act(3)
    assert s.num_steps == 12 < s.max_steps and s.outcome == "out of steps"
    env = SPFEnv("easy", "val", max_horizon=12)
    res = run_episode(env, 0, replay([r.action for r in s.records]), env.settings.eval_actions)
    assert s.result() == res and s.total_reward == res.score
    assert res.score == pytest.approx(sum(r.reward for r in s.records))


def test_session_decisions_match_evaluation_for_the_oracle_and_a_violation():
    for k, driver in ((2, "oracle"), (2, "normal")):
        s = PlaySession("easy", "val")
        s.start(k)
        while not s.done:
            s.act(s.oracle_hint() if driver == "oracle" else 1)
        env = SPFEnv("easy", "val")
        res = run_episode(env, k, replay([r.action for r in s.records]), env.settings.eval_actions)
        assert s.result() == res and s.total_reward == res.score
        assert isinstance(res.decided, dict) and res.success == (driver == "oracle")


def test_policy_errors_are_logicity_errors():
    assert issubclass(PolicyError, LogiCityError)
