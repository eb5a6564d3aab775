"""Qt-free parts of the studio: frames, checkpoints, events/breakpoints, colour-by, export ranges, projects,
inspector reports. Everything runs the real simulator on the bundled default city."""
from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np
import pytest

from core.errors import ConfigError, EpisodeFileError, LogiCityError
from core.sim.episode import STATE_FIELDS, STEP_FIELDS, EpisodeBuffer

from .studio_support import default_config, run_sim

STEPS = 40


@pytest.fixture(scope="module")
def config():
    return default_config()


@pytest.fixture(scope="module")
def sim(config):
    return run_sim(config, seed=3, steps=STEPS)


def _assert_same_episode(a, b, upto: int | None = None):
    for f in STATE_FIELDS + STEP_FIELDS:
        x, y = np.asarray(a.array(f)), np.asarray(b.array(f))
        if upto is not None:
            x, y = x[:upto], y[:upto]
        assert np.array_equal(x, y), f
    for k in range(a.num_states if upto is None else min(upto, a.num_states)):
        for i in range(len(a.agents)):
            pa, ia = a.plan(k, i)
            pb, ib = b.plan(k, i)
            assert ia == ib and np.array_equal(pa, pb)


# ---- frames ------------------------------------------------------------------------------------------------

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
    _assert_same_episode(gui, s.buffer)
    with pytest.raises(ValueError, match="does not follow"):
        apply_frame(gui, first)


def test_copy_episode_of_a_saved_file(sim, tmp_path):
    from core.sim.episode import load_episode
    from core.sim.frames import copy_episode

    path = sim.buffer.save(tmp_path / "e.npz")
    ep = load_episode(path)
    buf = copy_episode(ep)
    _assert_same_episode(buf, sim.buffer)
    buf.truncate(10)                                     # the copy is a growable, cuttable buffer
    assert buf.num_steps == 10


# ---- checkpoints ---------------------------------------------------------------------------------------------

def test_restoring_a_checkpoint_reproduces_the_run(config):
    from core.sim.checkpoint import CheckpointStore, restore
    from core.sim.simulation import Simulation

    s = Simulation(config, seed=11)
    store = CheckpointStore()
    store.add(s)
    for _ in range(30):
        s.step()
        store.add(s)
    reference = {f: np.array(s.buffer.array(f)) for f in STATE_FIELDS + STEP_FIELDS}
    cp = store.nearest(12)
    assert cp.step_index == 12
    restore(s, cp)
    assert s.buffer.num_steps == 12 and s.step_index == 12
    for _ in range(18):
        s.step()
    for f, arr in reference.items():
        assert np.array_equal(np.asarray(s.buffer.array(f)), arr), f
    store.truncate(5)
    assert store.nearest(20).step_index == 5


# ---- events and breakpoints -----------------------------------------------------------------------------------

def test_goal_and_action_events_match_the_arrays(sim):
    from core.sim.events import MarkerIndex, extract_events

    ep = sim.buffer
    reached = np.asarray(ep.array("reached"))
    goal = [(e.step, e.agent) for e in extract_events(ep, kinds=["goal_reached"])]
    assert goal == sorted(zip(*map(list, np.nonzero(reached))))
    dec = np.asarray(ep.array("decided"))
    agent = int(np.argmax([(np.diff(dec[:, i]) != 0).sum() for i in range(dec.shape[1])]))
    changes = [e.step for e in extract_events(ep, selected=agent, kinds=["action_changed"])]
    assert changes == [k for k in range(1, ep.num_steps) if dec[k, agent] != dec[k - 1, agent]]
    # incremental index == one full extraction
    idx = MarkerIndex(selected=agent)

    class Partial:
        def __init__(self, n):
            self.n = n
            self.agents = ep.agents

        @property
        def num_steps(self):
            return self.n

        def array(self, name):
            return ep.array(name)[: self.n]

    for n in (0, 7, 8, 30, ep.num_steps):
        idx.update(Partial(n))
    assert idx.events == extract_events(ep, selected=agent)
    idx.truncate(8)
    assert all(e.step < 8 for e in idx.events) and idx.scanned == 8
    idx.set_selected(ep, None)
    assert all(e.kind == "goal_reached" for e in idx.events)


def test_breakpoints(sim):
    from core.codes import ACTION_NAMES
    from core.sim.events import Breakpoint, check_breakpoints

    ep = sim.buffer
    names = ep.agents.names
    assert Breakpoint("step", step=10).check(ep, 9).show == 10
    assert Breakpoint("step", step=10).check(ep, 10) is None
    dec = np.asarray(ep.array("decided"))
    k, i = 5, 2
    act = ACTION_NAMES[dec[k, i]]
    bp = Breakpoint("action", agent=names[i], action=act)
    hit = bp.check(ep, k)
    assert hit is not None and hit.show == k and act in hit.text
    other = [a for a in ACTION_NAMES if a != act][0]
    assert Breakpoint("action", agent=names[i], action=other).check(ep, k) is None
    assert Breakpoint("action", agent=names[i], action=act, enabled=False).check(ep, k) is None
    first = next((k for k in range(ep.num_steps)
                  if check_breakpoints([Breakpoint("action", agent=names[i], action=act)], ep, k)), None)
    assert first == int(np.argmax(dec[:, i] == dec[k, i]))
    for b in (bp, Breakpoint("step", step=3), Breakpoint("goal"), Breakpoint("goal", agent=names[0])):
        assert Breakpoint.from_dict(b.to_dict()) == b
    with pytest.raises(ValueError):
        Breakpoint("action", agent=names[0], action="Jump")
    with pytest.raises(ValueError):
        Breakpoint("sometimes")


# ---- colour-by, scene, export ranges ---------------------------------------------------------------------------

def test_colour_schemes_cover_every_agent(sim):
    from core.codes import Kind
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


def test_semantic_image_and_scene(sim, config):
    from core.codes import HOUSE
    from core.logic.grounding import Grounder
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


def test_export_ranges_and_gif(tmp_path):
    from PIL import Image

    from core.view.export import frame_name, parse_range, sequence_paths, write_gif

    assert parse_range("10-50", 100).steps()[:2] == [10, 11] and len(parse_range("10-50", 100)) == 41
    assert parse_range("", 5).steps() == [0, 1, 2, 3, 4, 5]
    assert parse_range("3-", 5, stride=2).steps() == [3, 5]
    assert parse_range("-2", 5).steps() == [0, 1, 2]
    assert parse_range("4", 5).steps() == [4]
    for bad in ("9-2", "1-99", "x", "-"):
        with pytest.raises(ValueError):
            parse_range(bad, 50)
    assert frame_name("f_{step:04d}.png", 0, 7) == "f_0007.png"
    with pytest.raises(ValueError):
        sequence_paths(tmp_path, "same.png", [1, 2])
    frames = [np.full((40, 60, 3), v, np.uint8) for v in (0, 120, 250)]
    out = tmp_path / "a.gif"
    assert write_gif(frames, out, fps=5)
    with Image.open(out) as im:
        assert im.n_frames == 3 and im.size == (60, 40)
    assert not write_gif(frames, tmp_path / "b.gif", cancelled=lambda: True)
    assert not (tmp_path / "b.gif").exists()


# ---- projects ------------------------------------------------------------------------------------------------

def test_project_round_trip(config, sim, tmp_path):
    from core.project import is_project, load_project, new_project, open_episode, save_project

    p = new_project(config, name="My city", seed=3)
    p.studio = {"colour_by": "Priority", "selected": "Car_3", "step": 7,
                "breakpoints": [{"kind": "step", "step": 12}]}
    root = tmp_path / "proj"
    save_project(p, root, episode=sim.buffer, episode_meta={"interventions": []})
    assert is_project(root) and is_project(root / "project.yaml")
    names = sorted(f.name for f in root.iterdir())
    assert names == ["agents.yaml", "episodes", "map.yaml", "mode.yaml", "ontology.yaml", "project.yaml",
                     "rules.rules"]
    q = load_project(root)
    assert q.name == "My city" and q.seed == 3 and q.studio == p.studio
    assert q.config.agents == config.agents and q.config.city.shape == config.city.shape
    assert np.array_equal(q.config.city.street, config.city.street)
    assert q.config.program.to_text() == config.program.to_text()
    ep = open_episode(q)
    _assert_same_episode(ep, sim.buffer)
    # saving again without changes rewrites nothing but the manifest and a fresh episode file
    before = {f.name: f.stat().st_mtime_ns for f in root.iterdir() if f.is_file()}
    save_project(q, episode=sim.buffer)
    after = {f.name: f.stat().st_mtime_ns for f in root.iterdir() if f.is_file()}
    assert {n for n in before if before[n] != after.get(n)} == {"project.yaml"}
    assert len(list((root / "episodes").iterdir())) == 1   # the old episode file was removed after the commit
    # the mode file inside a project is an ordinary mode file
    from core.sim.config import load_mode

    assert load_mode(root / "mode.yaml").agents == config.agents


def test_crash_during_save_keeps_the_old_project(config, sim, tmp_path, monkeypatch):
    import core.project as project_mod

    p = project_mod.new_project(config, seed=1)
    root = tmp_path / "p"
    project_mod.save_project(p, root, episode=sim.buffer)
    good = (root / "project.yaml").read_bytes()
    q = project_mod.load_project(root)
    short = EpisodeBuffer(sim.buffer.agents, sim.buffer.meta)   # a different recording to save
    from core.sim.frames import copy_episode

    short = copy_episode(sim.buffer)
    short.truncate(5)
    real = project_mod.atomic_write_bytes

    def crash(path, data):
        if Path(path).name == "project.yaml":
            raise OSError("disk full (simulated)")
        return real(path, data)

    monkeypatch.setattr(project_mod, "atomic_write_bytes", crash)
    with pytest.raises(OSError):
        project_mod.save_project(q, episode=short)
    monkeypatch.setattr(project_mod, "atomic_write_bytes", real)
    assert (root / "project.yaml").read_bytes() == good
    r = project_mod.load_project(root)
    assert project_mod.open_episode(r).num_steps == STEPS          # still the old, complete episode
    assert not [f for f in root.rglob("*.tmp")]                     # no temporary files left behind


@pytest.mark.parametrize("text, fragment, line", [
    ("format: logicity-project\nversion: 1\nmode: mode.yaml\nseed: one\n", "seed", 4),
    ("format: something-else\nversion: 1\nmode: mode.yaml\n", "not a LogiCity project", 1),
    ("format: logicity-project\nversion: 1\nmode: missing.yaml\n", "mode file not found", 3),
    ("format: logicity-project\nversion: 1\nmode: mode.yaml\ncolour: red\n", "unknown key 'colour'", 4),
    ("format: logicity-project\nversion: 99\nmode: mode.yaml\n", "newer", 2),
    ("format: logicity-project\nversion: 1\nmode: mode.yaml\nepisodes:\n- file: episodes/none.npz\n",
     "episode file not found", 5),
    ("format: logicity-project\nversion: 1\nmode: ../../etc/mode.yaml\n", "inside the project folder", 3),
    ("format: [unclosed\n", "", None),
])
def test_malformed_manifest_names_file_and_line(config, tmp_path, text, fragment, line):
    from core.project import load_project, new_project, save_project

    root = tmp_path / "p"
    save_project(new_project(config), root)
    (root / "project.yaml").write_text(text)
    with pytest.raises(LogiCityError) as ei:
        load_project(root)
    err = ei.value
    assert err.file and Path(err.file).name == "project.yaml"
    assert fragment in err.message
    if line is not None:
        assert err.line == line


def test_broken_parts_and_foreign_episodes_are_reported(config, sim, tmp_path):
    from core.project import load_project, new_project, open_episode, save_project

    root = tmp_path / "p"
    save_project(new_project(config), root, episode=sim.buffer)
    (root / "rules.rules").write_text("Stop(X) :- IsFlying(X).\n")
    with pytest.raises(LogiCityError) as ei:
        load_project(root)
    assert Path(ei.value.file).name == "rules.rules"
    root2 = tmp_path / "q"
    save_project(new_project(config), root2, episode=sim.buffer)
    ep_file = next((root2 / "episodes").iterdir())
    ep_file.write_bytes(b"not a zip")
    with pytest.raises(EpisodeFileError) as ei:
        open_episode(load_project(root2))
    assert Path(ei.value.file) == ep_file
    with pytest.raises(ConfigError):
        load_project(tmp_path / "nowhere")


# ---- inspector report ----------------------------------------------------------------------------------------

def test_inspector_report_matches_the_logic_core(config, sim):
    from core.codes import ACTION_NAMES, HEADING_NAMES
    from core.logic.compiled import CompiledEngine
    from core.logic.grounding import Grounder
    from core.view.inspect import Inspector

    ep = sim.buffer
    ins = Inspector(config)
    g = Grounder(config.city, config.ontology)
    eng = CompiledEngine(config.program)
    checked = 0
    for k in (3, 17, 30):
        snap = ep.snapshot(k)
        dec = eng.decide(g.ground(snap, np.random.default_rng(0)))
        for i in range(len(ep.agents)):
            r = ins.report(ep, k, i)
            assert r.position == tuple(int(v) for v in snap.positions[i])
            assert r.heading == HEADING_NAMES[int(snap.headings[i])]
            assert r.decided == ACTION_NAMES[int(ep.step_record(k).decided[i])]
            assert r.explanation == str(dec.explain(i))
            assert [row.name for row in r.view] == [row.name for row in g.ground(snap, np.random.default_rng(0))
                                                    .ego_view(i).rows]
            assert r.view[0].agent == i
            checked += 1
    assert checked
    newest = ins.report(ep, ep.num_steps, 0)
    assert newest.decision_step == ep.num_steps - 1 and newest.step == ep.num_steps
    assert ins.report(ep, 0, 0).actions.shape == (ep.num_steps,)


def test_report_uses_recorded_firing(config, sim):
    """When the episode records a fired clause, the report renders that clause with its witness."""
    from core.view.inspect import Inspector

    ep = sim.buffer
    fired = np.asarray(ep.array("fired"))
    ks, ags = np.nonzero(fired >= 0)
    assert len(ks), "the expert rules fire within the recorded steps"
    k, i = int(ks[0]), int(ags[0])
    r = Inspector(config).report(ep, k, i)
    clause = config.program.clauses[int(fired[k, i])]
    assert r.fired_clause == int(fired[k, i]) and r.fired.startswith(str(clause.head))
    assert r.witness[0][1] == ep.agents.names[i]
