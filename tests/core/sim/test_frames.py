"""Frames handed from the simulation thread rebuild its episode buffer exactly; a saved episode copies into a
growable buffer. Runs the real simulator on the bundled default city."""
from __future__ import annotations

import pytest

from core.sim.episode import EpisodeBuffer
from tests.support.studio import assert_same_episode


def test_frames_rebuild_the_worker_buffer_exactly(config):
    from core.sim.frames import FrameTap, apply_frame
    from core.sim.simulation import Simulation

    s = Simulation(config, seed=5)
    tap = FrameTap(s.buffer)
    first = tap.initial(s.agents)
    gui = EpisodeBuffer(first.agents, s.buffer.meta, witness_vars=s.buffer.array("witness").shape[2])
    apply_frame(gui, first)
    for _ in range(25):
        out = s.step()
        fr = tap.frame(s.agents, out.seconds)
        assert not fr.positions.flags.writeable          # immutable hand-over
        apply_frame(gui, fr)
    assert gui.num_steps == 25
    assert_same_episode(gui, s.buffer)
    with pytest.raises(ValueError, match="does not follow"):
        apply_frame(gui, first)


def test_copy_episode_of_a_saved_file(sim, tmp_path):
    from core.sim.episode import load_episode
    from core.sim.frames import copy_episode

    path = sim.buffer.save(tmp_path / "e.npz")
    ep = load_episode(path)
    buf = copy_episode(ep)
    assert_same_episode(buf, sim.buffer)
    buf.truncate(10)                                     # the copy is a growable, cuttable buffer
    assert buf.num_steps == 10
