"""Colour-by schemes give every agent a colour and a legend entry."""
from __future__ import annotations

import numpy as np
import pytest


def test_colour_schemes_cover_every_agent(sim):
    from core.base.codes import Kind
    from core.view.colouring import KIND_COLOURS, colour_by, colour_context, colour_schemes

    ep = sim.buffer
    n = len(ep.agents)
    for k in (0, 10, ep.num_steps):
        for name in colour_schemes(list(ep.agents.concepts)):
            c = colour_by(name, colour_context(ep, k, scheme=name))
            assert c.category.shape == (n,)
            assert 0 <= c.category.min() and c.category.max() < len(c.labels) == len(c.colours)
            assert sum(cnt for _, _, cnt in c.legend()) == n
    c = colour_by("Type", colour_context(ep, 0))
    cars = np.asarray(ep.agents.kinds) == Kind.CAR
    assert (c.rgb()[cars] == KIND_COLOURS["Car"]).all() and (c.rgb()[~cars] == KIND_COLOURS["Pedestrian"]).all()
    c = colour_by("Action (next)", colour_context(ep, 4))
    assert np.array_equal(c.category, np.asarray(ep.step_record(4).decided))
    c = colour_by("Action (next)", colour_context(ep, ep.num_steps))   # nothing decided at the newest state
    assert set(c.category) == {4}
    with pytest.raises(KeyError):
        colour_by("Mood", colour_context(ep, 0))
