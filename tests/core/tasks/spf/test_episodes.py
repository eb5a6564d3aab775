"""SPF episode-set files are checked on load (``core.tasks.spf.episodes``): every array value and meta.json field,
cells off the map, agents of another agent file; the environment and ``spf eval`` report a bad set naming the
file and never crash; the shipped sets pass the checks."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from core.base.errors import EpisodeFileError
from core.cli import run_cli
from core.io.archive import read_archive, write_archive
from core.tasks.spf import episodes as spf_episodes
from core.tasks.spf.env import SPFEnv
from core.tasks.spf.episodes import default_episode_path, load_episode_set
from core.tasks.spf.settings import load_spf_mode
from tests.support.cli import run_main


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


@pytest.mark.parametrize("edit, expect", [
    # only the position is moved (its path cell is not): the documented message, not a path mismatch
    (lambda a, m: a["positions"].__setitem__((3, 0), (3000, 3000)),
     "array positions, episode 3, agent 0 (Car_1): cell (3000, 3000) is outside the 241×241 map"),
    (lambda a, m: a["positions"].__setitem__((3, 1), (-1, 5)), "cell (-1, 5) is outside the 241×241 map"),
    (lambda a, m: m.__setitem__("agents", 5), "meta.json field 'agents' must be a list of names"),
    (lambda a, m: m.__setitem__("agents", m["agents"][:3]), "meta.json field 'agents' names 3 agents"),
    (lambda a, m: m.pop("agents"), "field 'agents' (the agent names) is missing"),
    (lambda a, m: m.__setitem__("num_episodes", "40"), "field 'num_episodes' is '40'"),
])
def test_episode_set_meta_and_cells(tmp_path, shipped_easy_val, edit, expect):
    p = edited(tmp_path, shipped_easy_val, edit)
    with pytest.raises(EpisodeFileError) as ei:
        load_episode_set(load_spf_mode("easy", "val"), p)
    assert ei.value.file == str(p) and expect in ei.value.message, ei.value.message


def test_spf_eval_reports_bad_episode_set_meta(tmp_path, shipped_easy_val, capsys):
    p = edited(tmp_path, shipped_easy_val, lambda a, m: m.__setitem__("agents", 5))
    rc = run_cli(["spf", "eval", "--policy", "oracle", "--mode", "easy", "--split", "val", "--episodes", "1",
                  "--episode-file", str(p), "--quiet"])
    assert rc == 1 and f"{p}: meta.json field 'agents'" in capsys.readouterr().err
    rc = run_cli(["spf", "eval", "--policy", "oracle", "--mode", "easy", "--split", "val", "--episodes", "1",
                  "--episode-file", str(tmp_path), "--quiet"])
    assert rc == 1 and "is a folder" in capsys.readouterr().err
