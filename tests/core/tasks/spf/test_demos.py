"""Demonstration files (``core.tasks.spf.demos``): damaged meta.json fields and arrays are located errors; a good
file loads."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from core.base.errors import EpisodeFileError
from core.io.archive import read_archive, write_archive
from core.tasks.spf import demos as spf_demos
from core.tasks.spf.demos import Trajectory, load_demonstrations, save_demonstrations

D_EASY = 85


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
