"""Drag and drop of agent rows (core.agents.edit.drop_agents): the dragged rows move as a block, in their order,
before the row they are dropped on; dropping a block onto itself changes nothing."""
from __future__ import annotations

from core.agents.edit import drop_agents
from core.agents.spec import AgentSet, AgentSpec
from core.base.codes import Kind


def _set(n: int) -> AgentSet:
    return AgentSet(tuple(AgentSpec(Kind.CAR, i + 1, priority=i + 1) for i in range(n)))


def names(s: AgentSet) -> list[str]:
    return [a.name for a in s]


def test_drop_moves_the_block_before_the_target_row():
    s = _set(6)
    n = names(s)
    out, rows = drop_agents(s, [0, 1], 5)           # dropped between rows 4 and 5
    assert names(out) == n[2:5] + n[0:2] + n[5:] and rows == [3, 4]
    out, rows = drop_agents(s, [4, 1], 0)           # scattered rows keep their order at the top
    assert names(out) == [n[1], n[4], n[0], n[2], n[3], n[5]] and rows == [0, 1]
    out, rows = drop_agents(s, [2], 6)              # at the end
    assert names(out) == n[:2] + n[3:] + [n[2]] and rows == [5]
    assert names(s) == n                            # the argument is left alone


def test_drop_onto_itself_or_out_of_range_clamps():
    s = _set(4)
    n = names(s)
    for before in (1, 2, 3):
        out, rows = drop_agents(s, [1, 2], before)
        assert names(out) == n and rows == [1, 2]
    out, rows = drop_agents(s, [0], 99)
    assert names(out) == n[1:] + [n[0]] and rows == [3]
