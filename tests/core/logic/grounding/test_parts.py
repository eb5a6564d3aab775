"""The grounder's parts: a frozen predicate index every part reads the same rows from, an agent-table cache that
keeps a simulation's table while another world is grounded, and a Grounding made of its tables and slices."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from core.base.codes import Heading, Kind
from core.logic.grounding.grounded import Grounding
from core.logic.grounding.grounder import Grounder
from core.logic.grounding.index import PredicateIndex
from tests.support.logic import blank_city, ontology, snap

CAR, PED, R = Kind.CAR, Kind.PEDESTRIAN, Heading.RIGHT


def test_the_index_lists_each_predicate_at_its_row_and_cannot_change():
    onto = ontology("full")
    ix = PredicateIndex.of(onto)
    assert [ix.unary_row[p.name] for p in onto.unary] == list(range(len(onto.unary)))
    assert [ix.binary_row[p.name] for p in onto.binary] == list(range(len(onto.binary)))
    assert ix.unary_names == tuple(p.name for p in onto.unary)
    assert ix.colliding_names == ("CollidingClose",)
    assert {g for _, g in ix.spatial_unary} == {"is_at_intersection", "is_in_intersection"}
    with pytest.raises(dataclasses.FrozenInstanceError):
        ix.unary_names = ()
    with pytest.raises(TypeError):
        ix.binary_row["NextTo"] = 0


def test_the_agent_cache_keeps_the_last_two_tables():
    g = Grounder(blank_city(), ontology("full"))
    a = snap([(CAR, (10, 10), R, 1, []), (PED, (10, 12), R, 0, [])]).agents
    b = snap([(PED, (3, 3), R, 0, ["old"])]).agents
    c = snap([(CAR, (5, 5), R, 2, [])]).agents
    st_a = g.statics.get(a)
    assert g.statics.get(a) is st_a
    st_b = g.statics.get(b)
    assert g.statics.get(a) is st_a and g.statics.get(b) is st_b       # a view's table does not evict a's
    assert g.statics.get(a) is st_a                                     # a used last, then b
    st_c = g.statics.get(c)                                             # a third: the least recently used goes
    assert g.statics.get(a) is st_a and g.statics.get(c) is st_c and g.statics.get(b) is not st_b

def test_a_grounding_is_its_tables_and_slices():
    g = Grounder(blank_city(), ontology("full"))
    gr = g.ground(snap([(CAR, (10, 10), R, 1, []), (PED, (10, 12), R, 0, [])]), np.random.default_rng(0))
    assert isinstance(gr, Grounding) and gr.slices.tables is gr.tables and gr.grounder is g
    assert gr.tables.index is g.index and gr.slices.plans is g.plans
    assert np.array_equal(gr.unary("IsCar"), gr.tables.unary("IsCar"))
    keys = (("valid", ""), ("u", "IsCar"), ("bxv", "NextTo"))
    assert np.array_equal(gr.var_slices(keys), gr.slices.var_slices(keys))
