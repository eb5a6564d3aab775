"""Problems from registered checkers (core/studio/problems.py): sorted errors first, located, and only errors block
a simulation."""
from __future__ import annotations

import pytest

from core.studio import problems as P


@pytest.fixture
def two_checkers():
    P.register_checker("t_city", lambda s: [P.Problem(P.WARNING, "dead-end lane", "city", cells=((3, 4), (3, 5)))])
    P.register_checker("t_agents", lambda s: [P.Problem(P.ERROR, "duplicate name Car_1", "agents", agent="Car_1")])
    yield
    P.unregister_checker("t_city")
    P.unregister_checker("t_agents")


def test_errors_come_first_and_block(two_checkers):
    found = P.collect(None, only=["t_city", "t_agents"])
    assert [p.severity for p in found] == [P.ERROR, P.WARNING]
    assert found[1].location() == "cell (3, 4) +1"
    assert P.blocking_message(found) == "1 error to fix first (see Problems): duplicate name Car_1 (Car_1)"
    assert P.blocking_message(found[1:]) is None


def test_a_checker_name_twice_is_refused(two_checkers):
    with pytest.raises(ValueError):
        P.register_checker("t_city", lambda s: [])
