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
