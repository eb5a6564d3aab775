"""Projects (``core.project``: model, load, save): round trip, a crash during save keeps the old project, malformed manifests and
``studio:`` entries are located errors, broken parts and foreign episodes are reported, saving over another
project is refused unless asked to replace it cleanly."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from core.base.errors import ConfigError, EpisodeFileError, LogiCityError
from core.sim.episode import EpisodeBuffer
from tests.support.studio import ROOT, RUN_STEPS, assert_same_episode, default_config, run_sim


def test_project_round_trip(config, sim, tmp_path):
    from core.project.load import is_project, load_project, open_episode
    from core.project.model import new_project
    from core.project.save import save_project

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
    assert_same_episode(ep, sim.buffer)
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
    import core.project.load as project_load_mod
    import core.project.model as project_mod
    import core.project.save as project_save_mod

    p = project_mod.new_project(config, seed=1)
    root = tmp_path / "p"
    project_save_mod.save_project(p, root, episode=sim.buffer)
    good = (root / "project.yaml").read_bytes()
    q = project_load_mod.load_project(root)
    short = EpisodeBuffer(sim.buffer.agents, sim.buffer.meta)   # a different recording to save
    from core.sim.frames import copy_episode

    short = copy_episode(sim.buffer)
    short.truncate(5)
    real = project_save_mod.atomic_write_bytes

    def crash(path, data):
        if Path(path).name == "project.yaml":
            raise OSError("disk full (simulated)")
        return real(path, data)

    monkeypatch.setattr(project_save_mod, "atomic_write_bytes", crash)
    with pytest.raises(OSError):
        project_save_mod.save_project(q, episode=short)
    monkeypatch.setattr(project_save_mod, "atomic_write_bytes", real)
    assert (root / "project.yaml").read_bytes() == good
    r = project_load_mod.load_project(root)
    assert project_load_mod.open_episode(r).num_steps == RUN_STEPS          # still the old, complete episode
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
    from core.project.load import load_project
    from core.project.model import new_project
    from core.project.save import save_project

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
    from core.project.load import load_project, open_episode
    from core.project.model import new_project
    from core.project.save import save_project

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


def test_save_project_refuses_or_cleanly_replaces_another_project(tmp_path):
    from core.base.errors import ConfigError
    from core.project.load import load_project, manifest_files
    from core.project.model import new_project
    from core.project.save import save_project
    from core.sim.config import load_mode

    other = tmp_path / "other"
    easy = load_mode(ROOT / "configs" / "modes" / "sim_easy.yaml")
    save_project(new_project(easy, name="Easy"), other, episode=run_sim(easy, steps=3).buffer)
    (other / "notes.txt").write_text("mine")
    old = manifest_files(other)
    assert "mode.yaml" in old and "map.yaml" in old and any(f.startswith("episodes/") for f in old)
    cfg = default_config()
    with pytest.raises(ConfigError, match=r"already holds another project \('Easy'\)"):
        save_project(new_project(cfg, name="Default"), other)
    assert load_project(other).name == "Easy"
    save_project(new_project(cfg, name="Default"), other, episode=run_sim(cfg, steps=2).buffer, replace=True)
    q = load_project(other)
    assert q.name == "Default" and q.config.agents == cfg.agents
    used = manifest_files(other)
    files = {p.relative_to(other).as_posix() for p in other.rglob("*") if p.is_file()}
    assert files == used | {"project.yaml", "notes.txt"}            # nothing of "Easy" is left, notes stay


MANIFEST_EDITS = [
    ("studio:\n", "studio:\n  bogus: 1\n", "unknown key 'bogus' in studio"),
    ("  step: 7\n", "  step: abc\n", "'step' must be int"),
    ("  step: 7\n", "  step: -2\n", "step must be 0 or more"),
    ("  selected: Car_3\n", "  selected: 5\n", "'selected' must be str"),
    ("  selected: Car_3\n", "  selected: car_3\n", "no agent 'car_3' in this city (did you mean 'Car_3'?)"),
    ("  colour_by: Type\n", "  colour_by: Nonsense\n", "unknown colour-by scheme 'Nonsense'"),
    ("  name: main\n", "  name: main\n  bogus: 2\n", "unknown key 'bogus' in episode #1"),
    ("    step: 40\n", "    step: forty\n", "'step' must be int"),
    ("    step: 40\n", "    step: 40\n    when: later\n", "unknown key 'when' in breakpoint #1"),
    ("  - kind: step\n", "  - kind: sometimes\n", "unknown breakpoint kind 'sometimes'"),
    ("  breakpoints:\n  - kind: step\n    step: 40\n", "  breakpoints: 3\n", "breakpoints must be a list"),
    ("  breakpoints:\n  - kind: step\n    step: 40\n", "  breakpoints:\n  - 3\n", "breakpoint #1 must be a mapping"),
    ("studio:\n  colour_by: Type\n  step: 7\n  selected: Car_3\n  breakpoints:\n  - kind: step\n    step: 40\n",
     "studio: []\n", "studio must be a mapping"),
]


@pytest.mark.parametrize("old, new, fragment", MANIFEST_EDITS)
def test_malformed_studio_entries_are_located_errors(saved_project, tmp_path, old, new, fragment):
    from tests.support.project_edits import assert_manifest_edit_is_located

    assert_manifest_edit_is_located(saved_project, tmp_path, old, new, fragment)
