"""A failed step names the simulator component it failed in (core/sim/faults.py): frames in every module of the
grounding package count as "grounding" — not just core/logic/grounding/grounder.py, which delegates to its parts
(field_of_view, coins, pair_geometry, predicate_tables, view_slices, ...)."""
from __future__ import annotations

import pytest

from core.sim.faults import failing_component
from tests.support.logic import CAR, PED, R, ground


def test_an_error_inside_the_view_slices_is_a_grounding_error():
    g = ground([(CAR, (10, 10), R, 1, []), (PED, (10, 12), R, 0, [])])
    with pytest.raises(KeyError) as err:   # raised in core/logic/grounding/gather_plans.py, listed nowhere by name
        g.var_slices((("bxv", "NoSuchPredicate"),))
    assert failing_component(err.value) == "grounding"
