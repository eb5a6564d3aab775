"""A user's files are sacred: saving and replacing projects never deletes or writes outside
the project folder (symbolic links), never deletes the studio's own files (reserved names), validates every name
before the commit (NUL, absolute, ``..``, too long), refuses a mode file naming files outside the project, and
removes what killed saves left behind, but only files the studio's naming proves are its own."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from core.base.errors import ConfigError
from core.io.fileio import TEMP_MARK, host_tag
from core.project.files import JOURNAL, clean_leftovers, name_problem, unlink_inside
from core.project.load import load_project, manifest_files, open_episode
from core.project.model import new_project
from core.project.save import save_project
from tests.support.paths import ROOT
from tests.support.studio import run_sim


def _files(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (links not followed) with its content: a snapshot to compare."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for n in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            p = Path(dirpath) / n
            rel = p.relative_to(root).as_posix()
            out[rel] = b"<link>" + os.readlink(p).encode() if p.is_symlink() else p.read_bytes()
    return out


@pytest.fixture
def other(config, sim, tmp_path):
    """A saved project "Other" with an episode, in ``tmp_path/other``."""
    root = tmp_path / "other"
    save_project(new_project(config, name="Other"), root, episode=sim.buffer)
    return root


@pytest.fixture(scope="module")
def short_run(config):
    return run_sim(config, steps=3).buffer


def _dead_pid() -> int:
    """The process id of a process that has ended (a killed save's writer)."""
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


# ---- 1. never delete or write outside the project folder -------------------------------------------------------

def test_replace_never_deletes_through_a_symlinked_episodes_folder(config, short_run, other, tmp_path):
    outside = tmp_path / "elsewhere"
    (other / "episodes").rename(outside)                     # the episodes now live elsewhere, linked in
    (other / "episodes").symlink_to(outside, target_is_directory=True)
    keep = _files(outside)
    assert keep
    before = _files(other)
    with pytest.raises(ConfigError) as ei:
        save_project(new_project(config, name="New"), other, episode=short_run, replace=True)
    err = ei.value
    assert Path(err.file).name == "project.yaml" and err.line is not None
    assert "outside the project folder" in err.message and "episodes" in err.message
    assert _files(outside) == keep                           # the link's target is untouched
    assert _files(other) == before                           # and nothing was written or deleted


def test_replace_never_deletes_a_file_a_part_links_to(config, other, tmp_path):
    outside = tmp_path / "mine.yaml"
    (other / "map.yaml").rename(outside)
    (other / "map.yaml").symlink_to(outside)
    keep = outside.read_bytes()
    before = _files(other)
    with pytest.raises(ConfigError, match="outside the project folder.*map.yaml|map.yaml.*outside the project"):
        save_project(new_project(config, name="New"), other, replace=True)
    assert outside.read_bytes() == keep and _files(other) == before


def test_own_save_refuses_when_its_episodes_folder_became_a_link(config, short_run, other, tmp_path):
    p = load_project(other)
    outside = tmp_path / "elsewhere"
    (other / "episodes").rename(outside)
    (other / "episodes").symlink_to(outside, target_is_directory=True)
    keep, before = _files(outside), _files(other)
    with pytest.raises(ConfigError, match="outside the project folder"):
        save_project(p, episode=short_run)
    assert _files(outside) == keep and _files(other) == before


def test_a_new_save_never_writes_through_a_linked_folder(config, short_run, tmp_path):
    root, outside = tmp_path / "new", tmp_path / "elsewhere"
    root.mkdir()
    outside.mkdir()
    (root / "episodes").symlink_to(outside, target_is_directory=True)
    with pytest.raises(ConfigError, match="outside the project folder"):
        save_project(new_project(config), root, episode=short_run)
    assert list(outside.iterdir()) == []
    assert sorted(p.name for p in root.iterdir()) == ["episodes"]


def test_open_refuses_a_project_whose_episode_leads_outside(other, tmp_path):
    outside = tmp_path / "elsewhere"
    (other / "episodes").rename(outside)
    (other / "episodes").symlink_to(outside, target_is_directory=True)
    with pytest.raises(ConfigError) as ei:
        load_project(other)
    assert Path(ei.value.file).name == "project.yaml" and ei.value.line is not None
    assert "episode #1 file must name a file inside the project folder" in ei.value.message


def test_unlink_inside_never_follows_a_link(tmp_path):
    root, outside = tmp_path / "p", tmp_path / "o"
    root.mkdir()
    outside.mkdir()
    (outside / "a.npz").write_bytes(b"precious")
    (root / "episodes").symlink_to(outside, target_is_directory=True)
    assert not unlink_inside(root, "episodes/a.npz")          # a link on the way: nothing is deleted
    (root / "f.yaml").symlink_to(outside / "a.npz")
    assert unlink_inside(root, "f.yaml")                      # the link itself goes, its target stays
    assert not (root / "f.yaml").exists() and (outside / "a.npz").read_bytes() == b"precious"
    (root / "sub").mkdir()
    assert not unlink_inside(root, "sub")                     # folders are never removed
    for bad in ("../o/a.npz", str(outside / "a.npz"), "a\0b"):
        assert not unlink_inside(root, bad)
    assert (outside / "a.npz").read_bytes() == b"precious"


# ---- 2. reserved names are refused before anything is written ------------------------------------------------

def _add_episode_entry(root: Path, file: str) -> None:
    text = (root / "project.yaml").read_text()
    (root / "project.yaml").write_text(text.replace("episodes:\n", f"episodes:\n- file: {json.dumps(file)}\n"
                                                                 f"  name: x\n", 1))


@pytest.mark.parametrize("edit", ["episode:project.yaml", "episode:Project.YAML", "mode:project.yaml",
                                  "mode:./project.yaml", "map:project.yaml", f"episode:{JOURNAL}"])
def test_replace_refuses_a_manifest_naming_reserved_files(config, other, edit):
    kind, name = edit.split(":", 1)
    if kind == "episode":
        _add_episode_entry(other, name)
    elif kind == "mode":
        text = (other / "project.yaml").read_text()
        (other / "project.yaml").write_text(text.replace("mode: mode.yaml", f"mode: {name}"))
    else:
        text = (other / "mode.yaml").read_text()
        (other / "mode.yaml").write_text(text.replace("map: map.yaml", f"map: {name}"))
    before = _files(other)
    with pytest.raises(ConfigError) as ei:
        save_project(new_project(config, name="New"), other, replace=True)
    assert "reserved for the studio's own files" in ei.value.message and ei.value.line is not None
    assert _files(other) == before                           # nothing written, nothing deleted
    assert (other / "project.yaml").exists()


def test_open_refuses_an_episode_named_project_yaml(other):
    _add_episode_entry(other, "project.yaml")
    with pytest.raises(ConfigError, match="reserved for the studio's own files") as ei:
        load_project(other)
    assert ei.value.line == (other / "project.yaml").read_text().splitlines().index('- file: "project.yaml"') + 1


# ---- 3. every name is validated before the commit ------------------------------------------------------------

@pytest.mark.parametrize("name, fragment", [
    ("", "is empty"), ("   ", "is empty"), ("/etc/passwd", "absolute"), ("C:/x.npz", "absolute"),
    ("../x.npz", "leaves the project folder"), ("episodes/../../x", "leaves the project folder"),
    ("episodes/a\0.npz", "control character U+0000"), ("a\nb", "control character U+000A"),
    ("a\\b.npz", "backslash"), ("x" * 201 + ".npz", "longer than 200 bytes"),
    ("a/" * 600 + "b", "too long"), ("project.yaml", "reserved"), (".", "folder itself"),
    (f"map.yaml{TEMP_MARK}abcdef-12-abcdefgh.tmp", "reserved"), (3, "must be a file name"),
    ("a\ud800.npz", "not valid text"),
])
def test_name_problems(name, fragment):
    problem = name_problem(name)
    assert problem is not None and fragment in problem, problem


@pytest.mark.parametrize("name", ["map.yaml", "episodes/main-2.npz", "sub/dir/x.yaml", "./map.yaml", "é ü.yaml",
                                  "project.yaml.bak"])
def test_good_names(name):
    assert name_problem(name) is None


@pytest.mark.parametrize("bad", ["episodes/a\u0000.npz", "x" * 300 + ".npz", "/tmp/abs.npz", "../up.npz"])
def test_replace_with_a_bad_name_in_the_old_manifest_changes_nothing(config, other, bad):
    _add_episode_entry(other, bad)
    p = new_project(config, name="New")
    before = _files(other)
    with pytest.raises(ConfigError) as ei:
        save_project(p, other, replace=True)
    assert Path(ei.value.file).name == "project.yaml" and ei.value.line is not None
    assert _files(other) == before and p.root is None        # project.root is not stale


def test_a_bad_episode_name_in_the_saved_project_fails_before_the_commit(config, short_run, other):
    p = load_project(other)
    p.episodes[0].file = "episodes/bad\0name.npz"
    before = _files(other)
    with pytest.raises(ConfigError, match="control character U\\+0000"):
        save_project(p, episode=short_run)
    assert _files(other) == before and p.root == other


def test_nothing_after_the_commit_raises(config, short_run, other, monkeypatch):
    """The deletion after the commit must never raise (a failing unlink leaves the file, not a stale project)."""
    import core.project.files as pf

    p = new_project(config, name="New")
    real = os.unlink

    def failing_unlink(path, *a, **kw):
        if str(path).endswith(".npz") or str(path).endswith(".yaml"):
            raise ValueError("simulated")
        return real(path, *a, **kw)

    monkeypatch.setattr(pf.os, "unlink", failing_unlink)
    save_project(p, other, episode=short_run, replace=True)
    monkeypatch.undo()
    assert p.root == other and load_project(other).name == "New"


# ---- 4. a project's mode file may not name files outside it ----------------------------------------------------

def test_mode_naming_a_file_outside_the_project_is_refused(other, tmp_path):
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "x.yaml").write_bytes((other / "map.yaml").read_bytes())
    text = (other / "mode.yaml").read_text()
    (other / "mode.yaml").write_text(text.replace("map: map.yaml", "map: ../outside/x.yaml"))
    with pytest.raises(ConfigError) as ei:
        load_project(other)
    err = ei.value
    assert Path(err.file).name == "mode.yaml"
    assert err.line == (other / "mode.yaml").read_text().splitlines().index("map: ../outside/x.yaml") + 1
    assert "must be inside its folder" in err.message and "leaves the project folder" in err.message


def test_mode_naming_a_link_to_a_file_outside_is_refused(other, tmp_path):
    outside = tmp_path / "x.yaml"
    (other / "rules.rules").rename(outside)
    (other / "rules.rules").symlink_to(outside)
    with pytest.raises(ConfigError, match="leads outside the project folder") as ei:
        load_project(other)
    assert Path(ei.value.file).name == "mode.yaml"


def test_mode_in_a_subfolder_may_name_files_of_the_project(config, other):
    (other / "sub").mkdir()
    text = (other / "mode.yaml").read_text()
    for key in ("map", "agents", "ontology"):
        text = text.replace(f"{key}: {key}.yaml", f"{key}: ../{key}.yaml")
    (other / "sub" / "mode.yaml").write_text(text.replace("rules: rules.rules", "rules: ../rules.rules"))
    (other / "mode.yaml").unlink()
    m = (other / "project.yaml").read_text().replace("mode: mode.yaml", "mode: sub/mode.yaml")
    (other / "project.yaml").write_text(m)
    q = load_project(other)
    assert q.config.agents == config.agents
    assert {"sub/mode.yaml", "map.yaml", "rules.rules"} <= manifest_files(other)


# ---- 5. leftovers of interrupted saves ---------------------------------------------------------------------

_KILLER = r"""
import os, signal, sys
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from core.project.load import load_project
from core.project.save import save_project
from tests.support.studio import run_sim

root, when = Path(sys.argv[2]), sys.argv[3]
p = load_project(root)
run = run_sim(p.config, seed=5, steps=2).buffer
real_replace, real_unlink = os.replace, os.unlink
count = {"replace": 0}

def replace(src, dst, *a, **kw):
    count["replace"] += 1
    name = os.path.basename(str(dst))
    if (when == "first-file" and count["replace"] == 2) or (when == "commit" and name == "project.yaml"):
        os.kill(os.getpid(), signal.SIGKILL)          # a temporary file is on disk, not yet renamed
    return real_replace(src, dst, *a, **kw)

def unlink(path, *a, **kw):
    if when == "after-commit" and str(path).endswith(".npz"):
        os.kill(os.getpid(), signal.SIGKILL)          # committed; the old episode not yet deleted
    return real_unlink(path, *a, **kw)

os.replace, os.unlink = replace, unlink
save_project(p, episode=run)
print("not killed")
"""


@pytest.mark.parametrize("when", ["first-file", "commit", "after-commit"])
def test_a_killed_save_leaves_leftovers_the_next_open_removes(other, tmp_path, when):
    (other / "notes.txt").write_text("mine")                 # user files, some named like the studio's files
    (other / "map-7.yaml").write_text("mine too")
    (other / "episodes" / "main.npz.abcdefgh.tmp").write_text("an editor's backup")
    (other / f"x{TEMP_MARK}{host_tag()}-{os.getppid()}-abcdefgh.tmp").write_text("a live writer's file")
    user = {n: b for n, b in _files(other).items() if n in ("notes.txt", "map-7.yaml")
            or n.endswith(".tmp")}
    old_manifest = (other / "project.yaml").read_bytes()
    script = tmp_path / "killer.py"
    script.write_text(_KILLER)
    r = subprocess.run([sys.executable, str(script), str(ROOT), str(other), when], capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == -signal.SIGKILL, r.stdout + r.stderr
    committed = (other / "project.yaml").read_bytes() != old_manifest
    assert committed == (when == "after-commit")
    leftovers = set(_files(other)) - manifest_files(other) - {"project.yaml", JOURNAL} - set(user)
    assert leftovers, "the kill left nothing behind: the test does not simulate an interruption"

    q = load_project(other)                                  # the next open cleans up
    assert open_episode(q).num_steps == (2 if committed else 40)
    assert set(_files(other)) == manifest_files(other) | {"project.yaml"} | set(user)
    assert {n: _files(other)[n] for n in user} == user       # user files untouched
    assert load_project(other).name == "Other"


def test_leftovers_are_removed_on_the_next_save_too(config, short_run, other):
    dead = _dead_pid()
    stale = other / f"map-2.yaml{TEMP_MARK}{host_tag()}-{dead}-k2j4h5g6.tmp"
    stale.write_text("half a map")
    (other / "map-2.yaml").write_text("an orphan part a killed save wrote")
    (other / JOURNAL).write_text(json.dumps({"format": "logicity-save-journal", "host": host_tag(), "pid": dead,
                                             "created": ["map-2.yaml"], "obsolete": [],
                                             "manifest_sha256": "0" * 64}))
    save_project(new_project(config, name="Other"), other, episode=short_run, replace=True)
    names = set(_files(other))
    assert stale.name not in names and JOURNAL not in names
    assert names == manifest_files(other) | {"project.yaml"}


@pytest.mark.parametrize("who", ["live", "other-host", "no-journal-format"])
def test_leftovers_of_a_writer_that_may_still_run_stay(other, who):
    pid = os.getppid() if who == "live" else _dead_pid()
    host = "zzzzzz" if who == "other-host" else host_tag()
    orphan = other / "map-2.yaml"
    orphan.write_text("maybe still being saved")
    journal = {"format": "logicity-save-journal" if who != "no-journal-format" else "x", "host": host,
               "pid": pid, "created": ["map-2.yaml"], "obsolete": [], "manifest_sha256": "0" * 64}
    (other / JOURNAL).write_text(json.dumps(journal))
    tmp = other / f"mode.yaml{TEMP_MARK}{host_tag() if who != 'other-host' else 'abcdef'}-{pid}-abcdefgh.tmp"
    tmp.write_text("x")
    assert clean_leftovers(other) == ([] if who != "no-journal-format" else [tmp.name])
    assert orphan.exists() and (other / JOURNAL).exists()


def test_a_failed_save_removes_the_files_it_wrote(config, short_run, other, monkeypatch):
    """A full disk mid-save: the parts already written are removed, the old project stays as it was."""
    import errno

    import core.project.save as project_save_mod

    p = new_project(config, name="New")
    real = project_save_mod.atomic_write_bytes
    calls = []

    def full(path, data):
        calls.append(path)
        if len(calls) == 2:
            raise OSError(errno.ENOSPC, "No space left on device (simulated)")
        return real(path, data)

    monkeypatch.setattr(project_save_mod, "atomic_write_bytes", full)
    (other / "map.yaml").write_text((other / "map.yaml").read_text() + "\n# edited\n")   # parts differ: written
    before = _files(other)
    with pytest.raises(OSError):
        save_project(p, other, episode=short_run, replace=True)
    assert [Path(c).name for c in calls] == ["map-2.yaml", "mode-2.yaml"]   # map-2.yaml was written
    assert _files(other) == before and p.root is None


def test_a_replaced_name_differing_only_in_case_from_a_kept_file_is_not_deleted(config, other):
    """On a case-insensitive disk ``Map.yaml`` of the old manifest is the new project's ``map.yaml``."""
    text = (other / "mode.yaml").read_text()
    (other / "Map.yaml").write_bytes((other / "map.yaml").read_bytes())
    (other / "mode.yaml").write_text(text.replace("map: map.yaml", "map: Map.yaml"))
    save_project(new_project(config, name="New"), other, replace=True)
    assert (other / "Map.yaml").exists() and (other / "map.yaml").exists()
    assert load_project(other).name == "New"


def test_a_journal_never_removes_a_file_outside_the_save_naming_scheme(other):
    """A journal names the files a save created: part names (map-2.yaml, ...) and episodes/ files only; any other
    name in it (a crafted or foreign journal) is ignored, so a user's file cannot be listed away."""
    dead = _dead_pid()
    for name in ("notes.txt", "map-2.yaml", "my-map.yaml"):
        (other / name).write_text("x")
    (other / JOURNAL).write_text(json.dumps({"format": "logicity-save-journal", "host": host_tag(), "pid": dead,
                                             "created": ["notes.txt", "map-2.yaml", "my-map.yaml"], "obsolete": [],
                                             "manifest_sha256": "0" * 64}))
    assert clean_leftovers(other) == ["map-2.yaml"]
    assert (other / "notes.txt").exists() and (other / "my-map.yaml").exists() and not (other / JOURNAL).exists()
