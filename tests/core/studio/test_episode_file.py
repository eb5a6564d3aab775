"""Opening an episode file on its own (core/studio/episode_file.py, Qt-free): the project comes from the
configuration embedded in the episode, the session shows it read-only, and every problem is an EpisodeFileError
naming the file."""
from __future__ import annotations

import json
import zipfile

import numpy as np
import pytest

from core.base.errors import EpisodeFileError
from core.studio.episode_file import is_episode_file, load_episode_file
from core.studio.session import Session, load_target


@pytest.fixture(scope="module")
def episode_path(sim, tmp_path_factory):
    return sim.buffer.save(tmp_path_factory.mktemp("ep") / "run.npz")


def _rewrite_meta(src, dst, change):
    with zipfile.ZipFile(src) as a, zipfile.ZipFile(dst, "w") as b:
        for info in a.infolist():
            body = a.read(info.filename)
            if info.filename == "meta.json":
                meta = json.loads(body)
                change(meta)
                body = json.dumps(meta).encode()
            b.writestr(info.filename, body)
    return dst


def test_an_episode_opens_as_a_read_only_session(sim, episode_path):
    assert is_episode_file(episode_path) and not is_episode_file(episode_path.with_suffix(".yaml"))
    project, episode = load_target(episode_path)
    assert project.root is None and project.name == "run" and project.seed == 3
    assert tuple(project.config.agents.table().names) == tuple(sim.buffer.agents.names)
    s = Session()
    s.open(project, episode, read_only=episode_path)
    assert s.read_only == episode_path and s.num_steps == sim.buffer.num_steps and not s.modified
    assert np.array_equal(s.history.array("positions"), sim.buffer.array("positions"))
    s.open(project, None)                                  # anything else opened afterwards is not read-only
    assert s.read_only is None


def test_problems_name_the_file(episode_path, tmp_path):
    with pytest.raises(EpisodeFileError, match="not found"):
        load_episode_file(tmp_path / "missing.npz")
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"junk" * 50)
    with pytest.raises(EpisodeFileError) as e:
        load_target(junk)
    assert "junk.npz" in str(e.value)
    bare = _rewrite_meta(episode_path, tmp_path / "bare.npz", lambda m: m.pop("config_texts"))
    with pytest.raises(EpisodeFileError, match="does not embed its map, agents, ontology, rules"):
        load_episode_file(bare)

    def rename(meta):
        meta["agents"][0]["name"] = "Somebody_else"
    renamed = _rewrite_meta(episode_path, tmp_path / "renamed.npz", rename)
    with pytest.raises(EpisodeFileError, match="do not match the agent set") as e:
        load_episode_file(renamed)
    assert "renamed.npz" in str(e.value)
