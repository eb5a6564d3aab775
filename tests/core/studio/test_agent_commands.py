"""Agent-editor commands on the session (core/studio/agent_sets.py): undo/redo equality, tabs of split modes, the
Problems checker, and the project round trip (save → load → equal agent sets)."""
from __future__ import annotations

import random

import pytest

from core.base.codes import Kind
from core.project.load import load_project
from core.project.model import new_project
from core.sim.config import load_mode
from core.studio import agent_sets as A
from core.studio.problems import blocking_message, collect
from core.studio.session import Session
from tests.support.paths import MODES


def open_session(mode: str) -> Session:
    s = Session()
    s.open(new_project(load_mode(MODES / mode)))
    return s


def every_tab(s: Session) -> tuple:
    return A.agent_state(s), tuple(A.agent_set(s, t) for t in A.tabs(s)), A.active_tab(s)


def test_random_edit_sequences_undo_and_redo_to_equal_sessions():
    s = open_session("spf_easy.yaml")
    assert A.tabs(s) == ("train", "val", "test") and A.active_tab(s) == "train"
    rng = random.Random(4)
    states = [every_tab(s)]
    for _ in range(40):
        tab = rng.choice(A.tabs(s))
        n = len(A.agent_set(s, tab))
        rows = sorted(rng.sample(range(n), k=min(n, rng.randint(1, 3)))) if n else []
        op = rng.choice(["add", "dup", "del", "move", "edit", "place", "gen", "active"])
        if op == "add" or not rows:
            cmd = A.add(s, tab, rng.choice([Kind.CAR, Kind.PEDESTRIAN]), index=rng.randint(0, n))
        elif op == "dup":
            cmd = A.duplicate(s, tab, rows)
        elif op == "del":
            cmd = A.delete(s, tab, rows)
        elif op == "move":
            cmd = A.move(s, tab, rows, rng.choice([-2, -1, 1, 3]))
        elif op == "edit":
            cmd = A.edit(s, tab, rows, add_concepts=[rng.choice(["old", "tiro", "ambulance"])])
        elif op == "place":
            cmd = A.place(s, tab, rows[0], start=rng.choice([(10, 31), None]), goal=rng.choice([(230, 209), None]))
        elif op == "gen":
            cmd = A.generate(s, tab, {Kind.CAR: {"normal": 2, "tiro": 1}, Kind.PEDESTRIAN: {"old": 1}},
                             rng.randint(0, 9))
        else:
            cmd = A.SetActiveAgentSet(tab)
        s.execute(cmd)
        states.append(every_tab(s))
    assert s.modified
    for want in reversed(states[:-1]):
        assert s.stack.undo()
        assert every_tab(s) == want
    assert not s.modified                     # back at the opened (clean) state
    for want in states[1:]:
        assert s.stack.redo()
        assert every_tab(s) == want


def test_editing_the_active_set_changes_what_is_simulated_and_forgets_the_source_file():
    s = open_session("default.yaml")
    assert A.tabs(s) == ("agents",)
    source = s.project.config.files["agents"]
    events = []
    s.events.agents.connect(lambda e: events.append(e.value))
    s.execute(A.edit(s, "agents", [0], priority=9))
    assert s.project.config.agents.agents[0].priority == 9 and "agents" not in s.project.config.files
    s.stack.undo()
    assert s.project.config.files["agents"] == source and events == ["agents", "agents"]


def test_checker_lists_agent_problems_and_blocks(tmp_path):
    s = open_session("spf_easy.yaml")
    assert blocking_message(collect(s, only=["agents"])) is None
    s.execute(A.add(s, "val", Kind.PEDESTRIAN, concepts=["ambulance"]))
    s.execute(A.place(s, "train", 0, start=(20, 20)))
    probs = collect(s, only=["agents"])
    assert {(p.agent, p.severity) for p in probs} >= {("Pedestrian_4", "error"), ("Car_1", "error")}
    assert any(p.message.startswith("val: Pedestrian_4") for p in probs)
    assert any(p.cells == ((20, 20),) for p in probs)
    why = blocking_message(probs)
    assert why is not None and "ambulance" in why
    with pytest.raises(Exception, match="cannot save the val agent set"):   # never writes a file it cannot read
        s.save(tmp_path / "bad")
    assert not (tmp_path / "bad" / "project.yaml").exists()


def test_round_trip_save_load_gives_equal_agent_sets(tmp_path):
    s = open_session("spf_easy.yaml")
    s.execute(A.place(s, "train", 0, start=(10, 31), goal=(230, 209)))
    s.execute(A.generate(s, "test", {Kind.CAR: {"normal": 3, "ambulance": 1}, Kind.PEDESTRIAN: {"old": 2}}, 3))
    s.execute(A.duplicate(s, "val", [1]))
    s.execute(A.SetActiveAgentSet("test"))
    s.save(tmp_path / "p")
    again = Session()
    again.open(load_project(tmp_path / "p"))
    assert [A.agent_set(again, t) for t in A.tabs(again)] == [A.agent_set(s, t) for t in A.tabs(s)]
    assert A.active_tab(again) == "test" and again.project.config.agents == s.project.config.agents
    mode = (tmp_path / "p" / "mode.yaml").read_text()
    assert "agents_val:" in mode and "agents_test:" in mode
    assert "start: [10, 31]" in (tmp_path / "p" / again.project.parts["agents_train"]).read_text()
