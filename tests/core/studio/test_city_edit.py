"""City edit commands in the session (core/studio/city_edit.py), without Qt: a stroke is one undo step, undo/redo
restore an equal city (and the map file, so a save after undoing to the saved state copies the file again), New city
and resize are undoable, the Problems checker reports the edited city, and save -> load gives an equal city."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from core.base.codes import Kind
from core.map.edit import Patch, plan_rect, plan_stroke, resized
from core.map.generate import generate_city
from core.project.load import load_project
from core.project.model import new_project
from core.sim.config import load_mode
from core.studio import city_edit
from core.studio.city_edit import CityEdit, ReplaceCity, city_state, draft_of, new_stroke_id
from core.studio.problems import collect
from core.studio.session import Session
from tests.support.paths import DEFAULT_MODE


@pytest.fixture
def session():
    s = Session()
    s.open(new_project(load_mode(DEFAULT_MODE)))
    return s


def _stroke(session, points, kind, size=1, stroke=None):
    d = draft_of(session)
    p = plan_stroke(d, points, kind, size)
    return session.execute(CityEdit(p, f"Paint {kind}", stroke=stroke))


def test_a_stroke_of_many_pieces_is_one_undo_step_and_undo_restores_an_equal_city(session):
    cfg = session.project.config
    original, file = cfg.city, cfg.files.get("map")
    assert file is not None
    s0 = city_state(session)
    sid = new_stroke_id()
    assert not _stroke(session, [(13, 40)], "House", 3, sid)
    assert _stroke(session, [(13, 40), (13, 60)], "House", 3, sid)      # merged
    assert session.stack.count == 1 and session.stack.undo_text() == "Paint House"
    s1 = city_state(session)
    assert s1 != s0 and "map" not in cfg.files and session.modified
    assert (cfg.city.building[12:15, 39:62] == 3).all()
    session.stack.undo()
    assert city_state(session) == s0 and cfg.city is original and cfg.files["map"] == file
    assert not session.modified
    session.stack.redo()
    assert city_state(session) == s1


def test_random_sequences_of_tools_undo_to_equal_states(session):
    rng = np.random.default_rng(5)
    kinds = ["walking", "traffic", "crossing", "House", "Store", "empty"]
    states = [city_state(session)]
    for i in range(12):
        d = draft_of(session)
        r, c = (int(v) for v in rng.integers(0, 240, 2))
        if i % 3 == 0:
            p = plan_rect(d, (r, c), (min(r + 20, 240), min(c + 20, 240)), kinds[i % len(kinds)])
        else:
            p = plan_stroke(d, [(r, c), (r, min(c + 9, 240))], kinds[i % len(kinds)], int(rng.integers(1, 5)))
        session.execute(CityEdit(p, "edit"))
        states.append(city_state(session))
    for k in range(len(states) - 1, 0, -1):
        session.stack.undo()
        assert city_state(session) == states[k - 1]
    for k in range(1, len(states)):
        session.stack.redo()
        assert city_state(session) == states[k]


def test_new_city_and_resize_are_undoable(session):
    s0 = city_state(session)
    new = generate_city(4, blocks=(2, 2))
    session.execute(ReplaceCity(new, "New city"))
    assert session.project.config.city is new and draft_of(session).shape == new.shape
    d = resized(draft_of(session), new.height + 20, new.width)
    from core.map.derived import CityBuilder

    session.execute(ReplaceCity(CityBuilder().build(d), "Resize canvas"))
    assert session.project.config.city.shape == (new.height + 20, new.width)
    session.stack.undo()
    session.stack.undo()
    assert city_state(session) == s0


def test_the_city_checker_reports_the_edited_city(session):
    assert [p for p in collect(session, only=["city"])] == []
    d = draft_of(session)
    session.execute(CityEdit(plan_rect(d, (46, 100), (56, 104), "empty"), "Erase"))
    found = collect(session, only=["city"])
    assert found and found[0].is_error and found[0].source == "city" and found[0].cells
    session.stack.undo()
    assert collect(session, only=["city"]) == []


def test_save_load_round_trip_gives_an_equal_city(session, tmp_path):
    _stroke(session, [(13, 40), (13, 60)], "Office", 3)
    d = draft_of(session)
    session.execute(CityEdit(plan_rect(d, (20, 20), (24, 30), "walking"), "Fill"))
    before = city_state(session)
    path = session.save(tmp_path / "proj")
    loaded = load_project(path)
    other = Session()
    other.open(loaded)
    after = city_state(other)
    assert {k: v for k, v in after.items() if k != "map_file"} == {k: v for k, v in before.items()
                                                                     if k != "map_file"}
    # and editing the loaded city goes on from the same cells (painted buildings now carry their block ids)
    assert draft_of(other).to_spec() == draft_of(session).to_spec()
    assert city_edit.check_city(other) == []


def test_the_start_cell_check_follows_the_agent_types(session):
    """A city without Houses/Offices is fine for cars only: the check changes with the agents, not only the city."""
    d = draft_of(session)
    bld = (d.cells >> 3) & 7
    cells = d.cells.copy()
    cells[(bld == 3) | (bld == 5)] = 7 << 3                  # every House / Office becomes a Store
    session.execute(CityEdit(Patch(0, 0, d.cells.copy(), cells), "No homes"))
    cfg = session.project.config
    assert any(p.code == "no-start-cells" for p in collect(session, only=["city"]))
    cfg.agents = replace(cfg.agents, agents=tuple(a for a in cfg.agents if a.kind == Kind.CAR))
    assert not any(p.code == "no-start-cells" for p in collect(session, only=["city"]))
