"""The project's agent sets in the session, and the agent editor's undoable commands (no Qt).

A project has one agent set (mode key ``agents``) or, for SPF/VAP modes, one per split (``agents_train``,
``agents_val``, ``agents_test``): the editor shows them as tabs. The *active* set is the one the studio simulates
(``config.agents``); for a split mode it is the split whose set it equals (``train`` when the mode was opened).

Where the sets live: ``project.config.agents`` (the active one) and ``project.config.extra["agent_sets"]``
(``{split: AgentSet}``, read from the split files the first time they are needed). An edited set forgets the file
it was read from (``config.files["agents"]`` / ``extra["agent_files"][split]``), so the next save writes the
edited set instead of copying the old file; undo puts the file back, so undoing to the saved state saves
byte-identical files again.

Every edit is a :class:`AgentSetEdit` run through ``session.execute``: it computes the new set from the current
one when first done, keeps exactly the fields it replaced and restores them on undo (undo/redo equality is tested
in tests/core/studio/test_agent_commands.py). The ``agents`` session event (value = the tab) tells the views.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, Iterable, Mapping

from core.agents.edit import (
    Cell,
    add_agent,
    agent_problems,
    delete_agents,
    drop_agents,
    duplicate_agents,
    edit_agents,
    generate_composition,
    move_agents,
    reorder_agents,
    set_cells,
)
from core.agents.io import load_agent_set
from core.agents.spec import AgentSet
from core.base.codes import Kind
from core.studio.problems import ERROR, Problem, register_checker
from core.studio.stack import Command

__all__ = ["SPLITS", "MAIN", "tabs", "agent_set", "active_tab", "AgentSetEdit", "SetActiveAgentSet", "add",
           "duplicate", "delete", "move", "drop", "reorder", "edit", "place", "generate", "replace_set",
           "check_agents", "agent_state"]

SPLITS = ("train", "val", "test")
#: the tab of a project with a single agent set (mode key ``agents``)
MAIN = "agents"


def _config(session: Any) -> Any:
    if session.project is None:
        raise ValueError("no project is open")
    return session.project.config


def _split_sets(config: Any) -> dict[str, AgentSet]:
    """``{split: AgentSet}`` of a split mode (read from ``extra["agent_files"]`` once and kept in
    ``extra["agent_sets"]``); empty for a single-set project."""
    extra = config.extra if config.extra is not None else {}
    sets = extra.get("agent_sets")
    if sets is None:
        files = extra.get("agent_files") or {}
        if not files:
            return {}

        sets = {split: load_agent_set(files[split]) for split in SPLITS if split in files}
        extra["agent_sets"] = sets     # a cache of what the files hold, not an edit
    return dict(sets)


def tabs(session: Any) -> tuple[str, ...]:
    """The editor's tabs: ``("agents",)`` or the splits of an SPF/VAP mode."""
    sets = _split_sets(_config(session))
    return tuple(s for s in SPLITS if s in sets) or (MAIN,)


def agent_set(session: Any, tab: str) -> AgentSet:
    cfg = _config(session)
    if tab == MAIN:
        return cfg.agents
    sets = _split_sets(cfg)
    if tab not in sets:
        raise KeyError(f"no agent set {tab!r} (tabs: {', '.join(tabs(session))})")
    return sets[tab]


def active_tab(session: Any) -> str:
    """The tab whose set the studio simulates."""
    cfg = _config(session)
    sets = _split_sets(cfg)
    want = (cfg.extra or {}).get("active_agents")
    if want in sets and sets[want] == cfg.agents:
        return want
    for split in SPLITS:
        if split in sets and sets[split] == cfg.agents:
            return split
    return MAIN


def agent_state(session: Any) -> tuple:
    """Everything the agent commands change, as comparable values (undo must restore an equal one)."""
    cfg = _config(session)
    extra = cfg.extra or {}
    return (cfg.agents, tuple(sorted((cfg.files or {}).items())), tuple(sorted(_split_sets(cfg).items())),
            tuple(sorted((extra.get("agent_files") or {}).items())), extra.get("active_agents"))


def _put(session: Any, tab: str, new: AgentSet) -> None:
    """Make ``new`` the set of ``tab`` (and the simulated set when ``tab`` is the active one)."""
    cfg = _config(session)
    active = active_tab(session)
    extra = dict(cfg.extra or {})
    agents, files = cfg.agents, dict(cfg.files or {})
    if tab != MAIN:
        sets = _split_sets(cfg)
        sets[tab] = new
        extra["agent_sets"] = sets
        extra["agent_files"] = {k: v for k, v in (extra.get("agent_files") or {}).items() if k != tab}
    if tab == active:
        agents = new
        files.pop("agents", None)
        extra["active_agents"] = tab
    session.project.config = replace(cfg, agents=new if tab == active else agents, files=files, extra=extra)


class _Saved:
    """The config fields an agent command replaces (restored exactly on undo)."""

    def __init__(self, cfg: Any) -> None:
        extra = cfg.extra or {}
        self.agents = cfg.agents
        self.files = dict(cfg.files or {})
        self.keys = {k: extra[k] for k in ("agent_sets", "agent_files", "active_agents") if k in extra}

    def restore(self, session: Any) -> None:
        cfg = _config(session)
        extra = {k: v for k, v in (cfg.extra or {}).items() if k not in ("agent_sets", "agent_files",
                                                                           "active_agents")}
        extra.update({k: (dict(v) if isinstance(v, dict) else v) for k, v in self.keys.items()})
        session.project.config = replace(cfg, agents=self.agents, files=dict(self.files), extra=extra)


class AgentSetEdit(Command):
    """Replace the set of ``tab`` by ``change(current set)`` (computed at the first ``do``); undo puts back exactly
    what it replaced. ``rows``: the table rows to select after it (the editor keeps the edited rows selected)."""

    def __init__(self, tab: str, change: Callable[[AgentSet], AgentSet], text: str,
                 rows: Iterable[int] | None = None) -> None:
        self.tab = tab
        self.change = change
        self.text = text
        self.rows = list(rows) if rows is not None else None
        self.saved: _Saved | None = None
        self.new: AgentSet | None = None

    def do(self, target: Any) -> None:
        if self.new is None:
            self.new = self.change(agent_set(target, self.tab))
        self.saved = _Saved(_config(target))
        _put(target, self.tab, self.new)
        target.events.agents.emit(value=self.tab)

    def undo(self, target: Any) -> None:
        assert self.saved is not None
        self.saved.restore(target)
        target.events.agents.emit(value=self.tab)


class SetActiveAgentSet(Command):
    """Simulate the set of ``tab`` (a split of an SPF/VAP mode) from the next Apply on."""

    def __init__(self, tab: str) -> None:
        self.tab = tab
        self.text = f"Simulate the {tab} agents"
        self.saved: _Saved | None = None

    def do(self, target: Any) -> None:
        cfg = _config(target)
        self.saved = _Saved(cfg)
        new = agent_set(target, self.tab)
        files = dict(cfg.files or {})
        if new != cfg.agents:
            files.pop("agents", None)
        target.project.config = replace(cfg, agents=new, files=files,
                                        extra={**(cfg.extra or {}), "active_agents": self.tab})
        target.events.agents.emit(value=self.tab)

    def undo(self, target: Any) -> None:
        assert self.saved is not None
        self.saved.restore(target)
        target.events.agents.emit(value=self.tab)


# ---- the editor's operations, as commands -------------------------------------------------------------------------

def _names(rows: Iterable[int], aset: AgentSet) -> str:
    rows = sorted(rows)
    names = [aset.agents[i].name for i in rows if 0 <= i < len(aset)]
    return ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")


def add(session: Any, tab: str, kind: Kind, index: int | None = None, **fields: Any) -> AgentSetEdit:
    n = len(agent_set(session, tab))
    row = n if index is None else max(0, min(int(index), n))
    return AgentSetEdit(tab, lambda s: add_agent(s, kind, index=row, **fields), f"Add a {kind.label.lower()}",
                        rows=[row])


def duplicate(session: Any, tab: str, rows: Iterable[int]) -> AgentSetEdit:
    rows = sorted(set(rows))
    aset = agent_set(session, tab)
    new_rows = [r + k + 1 for k, r in enumerate(rows)]
    return AgentSetEdit(tab, lambda s: duplicate_agents(s, rows), f"Duplicate {_names(rows, aset)}", rows=new_rows)


def delete(session: Any, tab: str, rows: Iterable[int]) -> AgentSetEdit:
    rows = sorted(set(rows))
    aset = agent_set(session, tab)
    left = len(aset) - len(rows)
    after = [min(rows[0], left - 1)] if rows and left > 0 else []
    return AgentSetEdit(tab, lambda s: delete_agents(s, rows), f"Delete {_names(rows, aset)}", rows=after)


def move(session: Any, tab: str, rows: Iterable[int], delta: int) -> AgentSetEdit:
    rows = sorted(set(rows))
    aset = agent_set(session, tab)
    _, new_rows = move_agents(aset, rows, delta)
    return AgentSetEdit(tab, lambda s: move_agents(s, rows, delta)[0],
                        f"Move {_names(rows, aset)} {'up' if delta < 0 else 'down'}", rows=new_rows)


def drop(session: Any, tab: str, rows: Iterable[int], before: int) -> AgentSetEdit:
    """The rows dragged in the table and dropped before row ``before`` (one undoable step)."""
    rows = sorted(set(rows))
    aset = agent_set(session, tab)
    _, new_rows = drop_agents(aset, rows, before)
    return AgentSetEdit(tab, lambda s: drop_agents(s, rows, before)[0], f"Move {_names(rows, aset)} (drag)",
                        rows=new_rows)


def reorder(session: Any, tab: str, order: list[int]) -> AgentSetEdit:
    return AgentSetEdit(tab, lambda s: reorder_agents(s, order), "Reorder agents", rows=None)


def edit(session: Any, tab: str, rows: Iterable[int], what: str = "", **changes: Any) -> AgentSetEdit:
    """Change the chosen rows at once (:func:`core.agents.edit.edit_agents` keywords)."""
    rows = sorted(set(rows))
    aset = agent_set(session, tab)
    return AgentSetEdit(tab, lambda s: edit_agents(s, rows, **changes),
                        f"{what or 'Edit'} {_names(rows, aset)}".strip(), rows=rows)


def place(session: Any, tab: str, row: int, *, start: Cell | None | Any = ..., goal: Cell | None | Any = ...
          ) -> AgentSetEdit:
    """Set or clear (None) agent ``row``'s start and/or goal (a click on the map)."""
    aset = agent_set(session, tab)
    changes = {k: v for k, v in (("start", start), ("goal", goal)) if v is not ...}
    what = " and ".join(("clear " if v is None else "set ") + k for k, v in changes.items())
    return AgentSetEdit(tab, lambda s: set_cells(s, row, **changes),
                        f"{aset.agents[row].name}: {what}" + "".join(
                            f" {tuple(v)}" for v in changes.values() if v is not None), rows=[row])


def generate(session: Any, tab: str, counts: Mapping[Kind, Mapping[str, int]], seed: int) -> AgentSetEdit:
    """Replace the tab's set by a generated composition (one undoable step)."""
    total = sum(int(n) for per in counts.values() for n in per.values())
    return AgentSetEdit(tab, lambda s: generate_composition(counts, seed),
                        f"Generate {total} agents (seed {seed})", rows=[])


def replace_set(session: Any, tab: str, new: AgentSet, what: str = "Import agents") -> AgentSetEdit:
    return AgentSetEdit(tab, lambda s: new, f"{what} ({len(new)} agents)", rows=[])


# ---- problems -------------------------------------------------------------------------------------------------------

def check_agents(session: Any) -> list[Problem]:
    """The "agents" checker of the Problems panel: every tab's problems on the project's city and ontology."""
    if getattr(session, "project", None) is None:
        return []
    cfg = session.project.config
    names = tabs(session)
    ego = ((cfg.extra or {}).get("spf") or {}).get("ego")
    out: list[Problem] = []
    for tab in names:
        issues = agent_problems(agent_set(session, tab), cfg.city, cfg.ontology,
                                tab=tab if len(names) > 1 else None, ego=ego)
        out += [Problem(i.severity, i.message, "agents", cells=i.cells, agent=i.name, code=i.code or "agents")
                for i in issues]
    return out


register_checker("agents", check_agents, replace=True)


def has_errors(session: Any) -> bool:
    return any(p.severity == ERROR for p in check_agents(session))
