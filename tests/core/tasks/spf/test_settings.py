"""The ``spf:`` block of a mode file: numbers must be finite and in range (located errors)."""
from __future__ import annotations

import pytest

from core.base.errors import ConfigError


def test_spf_block_numbers_must_be_finite():
    from core.io.yamlio import loads_yaml
    from core.tasks.spf.settings import parse_spf_block

    base = ("ego: Car_1\naction_cost: [-1, 0, 1, -2]\nsplits:\n  val: {max_priority: 7, max_horizon: 100, "
            "reset_dist: {ambulance: 1}}\n")
    parse_spf_block(loads_yaml(base, "m.yaml"), "m.yaml")
    for bad, expect in (("action_cost: [-1, 0, .nan, -2]", "finite"), ("max_priority: 7", "max_priority must be"),
                        ("ambulance: 1}", "must be a number")):
        good = {"action_cost: [-1, 0, .nan, -2]": "action_cost: [-1, 0, 1, -2]", "max_priority: 7":
                "max_priority: 7", "ambulance: 1}": "ambulance: 1}"}[bad]
        text = base.replace(good, {"max_priority: 7": "max_priority: 3000000000",
                                   "ambulance: 1}": "ambulance: .inf}"}.get(bad, bad))
        with pytest.raises(ConfigError, match=expect):
            parse_spf_block(loads_yaml(text, "m.yaml"), "m.yaml")
