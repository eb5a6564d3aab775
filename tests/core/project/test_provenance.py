"""project.yaml records which city and agents produced each saved episode: the manifest's
``provenance`` and ``branched_at`` of an episode survive save → load, equal the episode file's own meta, are
carried by "save as", and a bad value is refused naming the line; core.studio.episode_info shows them."""
from __future__ import annotations

import pytest

from core.base.errors import ConfigError
from core.io.yamlio import load_yaml
from core.project.load import load_project, open_episode
from core.project.model import new_project
from core.project.save import save_project
from core.sim.provenance import agents_hash, city_hash
from core.sim.simulation import Simulation
from core.studio.episode_info import saved_episodes


def test_saved_episode_lists_its_provenance_and_round_trips(config, tmp_path):
    p = new_project(config, seed=3)
    sim = Simulation(config, seed=3)
    sim.run(4)
    sim.buffer.meta["branched_from"] = {"step": 2, "seed": 3, "provenance": None}
    root = tmp_path / "proj"
    save_project(p, root, episode=sim.buffer)
    manifest = load_yaml(root / "project.yaml")
    item = manifest["episodes"][0]
    want = {"city": city_hash(config.city), "agents": agents_hash(config.agents)}
    assert item["provenance"] == want and item["branched_at"] == 2 and item["steps"] == 4
    loaded = load_project(root)
    e = loaded.episodes[0]
    assert e.provenance == want and e.branched_at == 2
    assert open_episode(loaded).meta["provenance"] == e.provenance       # the manifest agrees with the file
    save_project(loaded, tmp_path / "copy")                              # save as: the entry is carried over
    again = load_project(tmp_path / "copy")
    assert again.episodes[0].provenance == want and again.episodes[0].branched_at == 2

    class S:      # what episode_info reads of a session
        project = again
    line = saved_episodes(S)[0]
    assert line.current and line.matches_edits and line.city == want["city"][:12]
    assert "branched at step 2" in line.text()


def test_old_manifests_without_provenance_still_open_and_bad_ones_are_refused(config, tmp_path):
    p = new_project(config, seed=3)
    sim = Simulation(config, seed=3)
    sim.run(1)
    root = tmp_path / "proj"
    save_project(p, root, episode=sim.buffer)
    path = root / "project.yaml"
    text = path.read_text(encoding="utf-8")
    lines = [ln for ln in text.splitlines()
             if "provenance" not in ln and not ln.strip().startswith(("city:", "agents:"))]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    old = load_project(root)
    assert old.episodes[0].provenance is None
    class S:
        project = old
    assert saved_episodes(S)[0].city == "—" and saved_episodes(S)[0].matches_edits is None
    path.write_text(text.replace(city_hash(config.city), "not-a-hash"), encoding="utf-8")
    with pytest.raises(ConfigError, match="SHA-256") as exc:
        load_project(root)
    assert exc.value.location() and "project.yaml" in str(exc.value.location())


def test_a_recording_kept_by_a_branch_is_saved_as_a_further_episode(config, tmp_path):
    from core.studio.session import Session

    s = Session()
    s.open(new_project(config, seed=3))
    sim = Simulation(config, seed=3)
    sim.run(5)
    s.set_history(sim.buffer)
    assert s.keep_recording("before branch at step 3") == "main before branch at step 3" and s.modified
    other = Simulation(config, seed=4)
    other.run(2)
    other.buffer.meta["branched_from"] = {"step": 3, "seed": 3, "provenance": None,
                                          "episode": "main before branch at step 3"}
    s.set_history(other.buffer)
    root = tmp_path / "proj"
    s.save(root)
    assert s.kept == [] and not s.modified
    p = load_project(root)
    assert [(e.name, e.steps, e.branched_at) for e in p.episodes] == [("main before branch at step 3", 5, None),
                                                                      ("main", 2, 3)]
    assert p.current_episode == 1 and p.episodes[0].provenance == p.episodes[1].provenance
    assert open_episode(p, 0).num_steps == 5 and open_episode(p).meta["branched_from"]["episode"] == p.episodes[0].name
    # saved again: both stay (the kept one is a project episode now, carried like any other)
    s.open(p, open_episode(p))
    s.save(root)
    assert [e.name for e in load_project(root).episodes] == ["main before branch at step 3", "main"]
