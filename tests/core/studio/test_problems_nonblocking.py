"""An error in something the simulation does not run yet (an unapplied rule text) is listed but does not block."""
from __future__ import annotations

from core.studio import problems as P


def test_non_blocking_errors_are_listed_but_do_not_block():
    rule = P.Problem(P.ERROR, "unknown predicate 'IsAmbulanc'", "rules", file="sim.rules", line=3, column=12,
                     blocks=False)
    city = P.Problem(P.ERROR, "dead-end lane", "city", cells=((1, 2),))
    assert rule.is_error and rule.location() == "sim.rules:3:12"
    assert P.blocking_message([rule]) is None
    assert P.blocking_message([rule, city]) == "1 error to fix first (see Problems): dead-end lane (cell (1, 2))"
