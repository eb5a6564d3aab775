"""SPF environments take integer actions only (1.5 and True were silently truncated to 1), numpy integers still
work and gymnasium's checker still passes; docs/rules.md section 5 names the AnalysisReport fields the code has."""
from __future__ import annotations

import dataclasses
import re
import warnings

import numpy as np
import pytest

from core.tasks.spf.env import SPFEnv
from tests.support.paths import ROOT


@pytest.fixture(scope="module")
def env():
    e = SPFEnv("easy", "val")
    e.reset(seed=0)
    return e


@pytest.mark.parametrize("bad, error", [(1.5, TypeError), (True, TypeError), (np.float32(2), TypeError),
                                        ("1", TypeError), (np.array([1, 2]), TypeError), (np.bool_(False), TypeError),
                                        (4, ValueError), (-1, ValueError), (np.int64(9), ValueError)])
def test_non_integer_or_out_of_range_actions_are_rejected(env, bad, error):
    t = env.t
    with pytest.raises(error, match="0..3"):
        env.unwrapped.step(bad)
    assert env.t == t  # nothing was simulated


def test_integer_actions_of_every_flavour_step(env):
    from core.base.codes import Action

    for a in (1, np.int64(2), np.uint8(0), np.array(3), np.array([1], np.int32), Action.STOP):
        obs, r, term, trunc, info = env.step(a)
        if term or trunc:
            env.reset(seed=1)


def test_gymnasium_check_env_still_passes():
    from gymnasium.utils.env_checker import check_env

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(SPFEnv("easy", "val"), skip_render_check=True)


def test_multi_agent_env_rejects_float_actions():
    from core.tasks.spf.multi import CityParallelEnv

    penv = CityParallelEnv("easy", "val")
    penv.reset(seed=0)
    name = penv.agents[0]
    with pytest.raises(TypeError, match=f"action of {name}"):
        penv.step({name: 1.5})
    penv.step({name: np.int64(1)})


def test_rules_doc_names_the_analysis_report_fields():
    from core.analysis.static import AnalysisReport

    text = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    section = text[text.index("## 5. Analysis"):text.index("## 6.")]
    fields = [f.name for f in dataclasses.fields(AnalysisReport)]
    for name in fields:
        assert f"`{name}`" in section, name
    bundled = re.search(r"AnalysisReport\(([^)]*)\)", text).group(1)
    assert [x.strip() for x in bundled.split(",")] == fields
