"""core.view.scene.remaining_paths (every agent's remaining path in one pass, what a map frame draws) equals the
episode's own per-agent remaining_path at every state, for a live buffer and a saved episode file."""
from __future__ import annotations

from core.sim.episode import load_episode
from core.view.scene import build_scene, remaining_paths
from tests.support.studio import default_config, run_sim


def test_remaining_paths_equal_the_per_agent_lookups(tmp_path):
    buf = run_sim(default_config(), seed=0, steps=30).buffer
    saved = load_episode(buf.save(tmp_path / "ep.npz"))
    for ep in (buf, saved):
        n = len(ep.agents)
        for k in range(ep.num_states):
            got = remaining_paths(ep, k, list(range(n)))
            assert [a for a, _ in got] == list(range(n))
            for a, cells in got:
                ref = ep.remaining_path(k, a)
                assert cells.dtype == ref.dtype and cells.tolist() == ref.tolist(), (k, a)
    assert remaining_paths(buf, 5, []) == ()
    sc = build_scene(buf, 5, selected=2, paths="selected")
    assert [a for a, _ in sc.paths] == [2]


def test_planned_paths_in_one_array_pick_and_items(tmp_path):
    import numpy as np

    from core.view.scene import planned_paths

    buf = run_sim(default_config(), seed=0, steps=30).buffer
    saved = load_episode(buf.save(tmp_path / "ep.npz"))
    for ep in (buf, saved):
        n = len(ep.agents)
        for k in (0, 7, ep.num_states - 1):
            agents = [3, 0, n - 1]
            pp = planned_paths(ep, k, agents)
            assert pp.agents.tolist() == agents and pp.cells.dtype == np.int32
            assert pp.lengths.tolist() == [len(ep.remaining_path(k, a)) for a in agents]
            cells, ends = pp.pick([2, 0])             # a subset, in the order asked
            assert [c.tolist() for c in np.split(cells, ends[:-1])] == \
                [ep.remaining_path(k, a).tolist() for a in (n - 1, 3)]
            sc = build_scene(ep, k)                   # the public (agent, cells) pairs come from the same array
            assert [(a, c.tolist()) for a, c in sc.paths] == \
                [(a, c.tolist()) for a, c in zip(sc.planned.agents.tolist(),
                                                 np.split(sc.planned.cells, sc.planned.ends[:-1]))]
    empty = planned_paths(buf, 5, [])
    assert empty.cells.shape == (0, 2) and empty.pick([])[0].shape == (0, 2)
