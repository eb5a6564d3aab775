"""The semantic image and the scene data the map view draws."""
from __future__ import annotations

import numpy as np


def test_semantic_image_and_scene(sim, config):
    from core.base.codes import HOUSE
    from core.logic.grounding.grounder import Grounder
    from core.view.colouring import SEMANTIC_COLOURS, semantic_at, semantic_rgb
    from core.view.scene import build_scene, nearest_agent

    city = config.city
    rgb = semantic_rgb(city)
    assert rgb.shape == city.shape + (3,)
    r, c = map(int, np.argwhere(np.asarray(city.building) == HOUSE)[0])
    assert tuple(rgb[r, c]) == SEMANTIC_COLOURS["House"] and semantic_at(city, r, c).startswith("House")
    r, c = map(int, np.argwhere(np.asarray(city.street) == -1.0)[0])
    assert tuple(rgb[r, c]) == SEMANTIC_COLOURS["Crossing"]
    ep = sim.buffer
    g = Grounder(city, config.ontology)
    sc = build_scene(ep, 12, selected=3, grounder=g)
    assert np.array_equal(sc.positions, ep.snapshot(12).positions)
    assert [a for a, _ in sc.paths] == list(range(len(ep.agents)))
    assert np.array_equal(sc.paths[3][1], ep.remaining_path(12, 3))
    assert sc.fov == tuple(int(v) for v in g.fov_boxes(sc.positions[3:4].astype(np.int64),
                                                        sc.headings[3:4].astype(np.int64))[0])
    r0, r1, c0, c1 = sc.fov
    assert r0 <= sc.positions[3][0] <= r1 and c0 <= sc.positions[3][1] <= c1
    assert build_scene(ep, 12, paths="selected", selected=3).paths[0][0] == 3
    assert build_scene(ep, 12, paths="none").paths == ()
    p = sc.positions[5]
    assert nearest_agent(sc.positions, p[0] + 0.5, p[1] + 0.5, 0.1) in np.nonzero(
        (sc.positions == p).all(axis=1))[0]
    assert nearest_agent(sc.positions, -50, -50, 3) is None
