"""What the Agents panel lists for one recorded state, as plain data (no Qt), and the agents the map marks for the
selected one: the witness of its recorded explanation and the agents sharing its cell.

Why here: "which agent is which" must read the same recorded arrays as the inspector (the action of the shown
decision step, the fired clause's witness), so the panel, the map's witness line and the inspector can never
disagree; the widget only formats these rows and the tests check them without a QApplication.

The shown decision step follows :mod:`core.view.inspect`: at state ``k`` < T it is step ``k`` (the decision taken
from the shown state); at the newest state T nothing is decided yet, so it is step T-1 (the one that led there)
and the row says so (``pending``; the panel shows "Stop (last step)"), as the inspector does.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from core.base.codes import ACTION_NAMES, Kind
from core.sim.episode import FIRED_FORCED
from core.view.colouring import detailed_type
from core.view.overrides import active_intervention

#: The table's columns: (header, AgentRow attribute).
COLUMNS: tuple[tuple[str, str], ...] = (
    ("Name", "name"), ("Type", "detailed"), ("Concepts", "concepts"), ("Action", "action"),
    ("Goals", "goals_reached"), ("Path left", "path_left"))


@dataclass(frozen=True)
class AgentRow:
    """One agent at one state."""

    index: int
    name: str
    kind: str                # "Car" / "Pedestrian"
    detailed: str            # its icon semantic (e.g. "ambulance"), what the Type column shows
    concepts: str            # comma-separated concept names ("" when none)
    action: str              # the action decided during the shown decision step ("—" before any step)
    forced: bool             # that action was forced by an override, not derived by the rules
    goals_reached: int       # goals reached before state k
    path_left: int           # cells left on its planned path (to its current goal)
    position: tuple[int, int]
    pending: bool = False    # the newest state: ``action`` is the last step's (its own is not decided yet)

    def sort_key(self, attribute: str) -> object:
        """What the column ``attribute`` sorts by: numbers as numbers, names naturally (Car_2 before Car_10)."""
        value = getattr(self, attribute)
        if attribute == "name":
            return natural_key(value)
        return value


def natural_key(text: str) -> str:
    """A string that sorts ``text`` naturally as plain text does: every run of digits zero-padded to 9."""
    return re.sub(r"\d+", lambda m: m.group(0).zfill(9), text.lower())


def decision_step(episode, k: int) -> int | None:
    """The step whose decision state ``k`` shows: k, or k-1 at the newest state; None before any step."""
    if k < episode.num_steps:
        return k
    return k - 1 if k > 0 else None


#: The last agent table's fixed columns (name, kind, type, concepts): they change only when the table does.
_STATIC: list = [None, ()]


def _static_columns(agents) -> tuple[tuple[str, str, str, str], ...]:
    if _STATIC[0] is not agents:
        _STATIC[1] = tuple((str(agents.names[i]), Kind(int(agents.kinds[i])).label, detailed_type(agents, i),
                            ", ".join(agents.concept_names(i))) for i in range(len(agents)))
        _STATIC[0] = agents
    return _STATIC[1]


def path_left(episode, k: int) -> np.ndarray:
    """Cells left on every agent's planned path at state ``k`` (vectorised :meth:`EpisodeView.remaining_path`)."""
    pid = np.asarray(episode.array("plan_id")[k], np.int64)
    idx = np.asarray(episode.array("path_index")[k], np.int64)
    off = np.asarray(episode.array("plan_offsets"), np.int64)
    return np.maximum(off[pid + 1] - off[pid] - idx - 1, 0)


def agent_rows(episode, k: int) -> tuple[AgentRow, ...]:
    """Every agent's row at state ``k`` (0..num_steps) of an episode view, in agent order (column by column over
    all agents: the panel refreshes it while playing)."""
    snap = episode.snapshot(k)
    static = _static_columns(snap.agents)
    n = len(static)
    d = decision_step(episode, k)
    pending = d is not None and d < k
    actions = ["—"] * n
    forced = np.zeros(n, bool)
    if d is not None:
        rec = episode.step_record(d)
        actions = [ACTION_NAMES[int(a)] for a in np.asarray(rec.decided)]
        forced = np.asarray(rec.fired) == FIRED_FORCED
        for i in {e.get("agent") for e in episode.meta.get("interventions") or () if isinstance(e, dict)}:
            if isinstance(i, int) and 0 <= i < n and active_intervention(episode.meta, d, i) is not None:
                forced[i] = True
    reached = (np.asarray(episode.array("reached")[:k]).sum(axis=0) if k else np.zeros(n, np.int64)).tolist()
    left = path_left(episode, k).tolist()
    pos = np.asarray(snap.positions).tolist()
    return tuple(AgentRow(i, name, kind, detailed, concepts, actions[i], bool(forced[i]), int(reached[i]),
                          int(left[i]), (int(pos[i][0]), int(pos[i][1])), pending)
                 for i, (name, kind, detailed, concepts) in enumerate(static))


def row_matches(row: AgentRow, query: str) -> bool:
    """The filter box: every whitespace-separated word of ``query`` occurs (case-insensitively) in the row's name,
    kind, type, concepts or action (``forced`` matches forced actions)."""
    words = query.lower().split()
    if not words:
        return True
    hay = " ".join((row.name, row.kind, row.detailed, row.concepts, row.action,
                    "forced" if row.forced else "")).lower()
    return all(w in hay for w in words)


def witness_agents(episode, k: int, agent: int) -> tuple[int, ...]:
    """The agents bound by the recorded explanation of ``agent``'s action shown at state ``k`` (the witness of its
    fired clause, e.g. ``Y = Pedestrian_5``), in variable order without repeats; empty when the action was the
    default, forced, or nothing was decided yet."""
    d = decision_step(episode, k)
    if d is None or not 0 <= agent < len(episode.agents):
        return ()
    rec = episode.step_record(d)
    if int(rec.fired[agent]) < 0 or active_intervention(episode.meta, d, agent) is not None:
        return ()
    out: list[int] = []
    for a in np.asarray(rec.witness[agent]).ravel():
        a = int(a)
        if 0 <= a < len(episode.agents) and a != agent and a not in out:
            out.append(a)
    return tuple(out)


def violation_witnesses(violations, ego: int) -> tuple[int, ...]:
    """The agents bound by the witnesses of violated task rules (``Violation.to_dict()`` entries: ``witness`` =
    [{variable, agent, name}]), the ego left out, in order without repeats: what the Safe Path Following window
    rings on its map."""
    out: list[int] = []
    for v in violations:
        for w in v.get("witness", ()) if isinstance(v, dict) else ():
            a = w.get("agent") if isinstance(w, dict) else None
            if isinstance(a, (int, np.integer)) and a >= 0 and int(a) != ego and int(a) not in out:
                out.append(int(a))
    return tuple(out)


def agents_in_cell(positions: np.ndarray, cell: tuple[int, int]) -> list[int]:
    """Indices of the agents standing in ``cell`` (row, col), in agent order."""
    pos = np.asarray(positions)
    if not len(pos):
        return []
    return [int(i) for i in np.flatnonzero((pos[:, 0] == cell[0]) & (pos[:, 1] == cell[1]))]


def pick_in_cell(positions: np.ndarray, clicked: int, selected: int | None) -> int:
    """What a click that hit agent ``clicked`` selects: when the selected agent shares ``clicked``'s cell, the next
    agent of that cell (cycling back to the first), so clicking the same cell again steps through every agent
    standing there; otherwise ``clicked``."""
    pos = np.asarray(positions)
    sharing = agents_in_cell(pos, (int(pos[clicked, 0]), int(pos[clicked, 1])))
    if selected is None or selected not in sharing or len(sharing) < 2:
        return int(clicked)
    return sharing[(sharing.index(selected) + 1) % len(sharing)]
