"""The inspector's content for one agent at one recorded state, as plain data (no Qt).

Why: the GUI test "inspector shows what the simulation recorded" compares the dock with this report and this
report with the episode; keeping the extraction here makes the dock a formatter.

At the newest state T nothing has been decided yet (the simulation decides state T when it steps from it):
``pending`` is True and ``next_action`` says :data:`~core.view.colouring.NOT_DECIDED`, as the map's "Action (next)"
and "Fired clause" colourings do there; the decision and explanation fields then describe the previous step (the
one that led to the shown state), ``decision_step`` says which.

Sources — the explanation is the one the simulation recorded, never re-derived:

* recorded in the episode: identity, position, heading, goal, the decided and realised action, the actions the
  rules derived (``holds``), the clause that fired for the decided action and its witness (``fired`` /
  ``witness``), whether the action was forced by an override (``fired`` = -2, or a user intervention in the
  episode's ``interventions``);
* grounded again from the recorded snapshot (the truth values are not recorded): the table of true predicates in
  the agent's field of view — of that one view only (:meth:`Inspector.view_rows`: the agents inside its box,
  grounded as a world of their own), not every agent's, so a report costs what it shows, not the size of the city.
  Its CollidingClose coin flips are the ones the simulation drew at that step, recorded in the episode
  (:meth:`EpisodeView.coins <core.sim.episode.EpisodeView.coins>`, set with ``Grounder.ground(forced_coins=)``), so
  the table holds exactly the truth values the rule engine decided on; a coin is never drawn again. An episode of
  the format before coins were recorded has none: there the pairs named by the recorded firing's CollidingClose
  literals are set as that firing proves they were, the others are drawn from a fixed seed, and the report says
  so (``coins``, ``regrounded_note``).
"""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from core.base.codes import ACTION_NAMES, HEADING_NAMES, Kind
from core.base.world import AgentTable, WorldSnapshot
from core.logic.engines.decisions import make_firing
from core.logic.grounding.grounder import Grounder
from core.logic.lang.syntax import EGO, Clause
from core.sim.compiled import CompiledProject, compiled_project
from core.sim.episode import FIRED_FORCED, CoinOutcomes
from core.sim.rule_segments import clauses_for
from core.view.colouring import NOT_DECIDED, detailed_type
from core.view.overrides import active_intervention, overrides_at  # noqa: F401  (re-exported)

#: (clause, agent, witness) of a recorded firing: the clause object, the agent's index, its witness row
Firing = tuple[Clause, int, np.ndarray]

#: View tables an inspector keeps (:meth:`Inspector.view_rows`): a few hundred small tuples.
VIEW_CACHE_SIZE = 256

#: Where each part of a report comes from, as the dock says it.
RECORDED_NOTE = "from the recorded episode: the clause and witness the simulation used"
#: Where the view table's CollidingClose coin flips come from (:attr:`AgentReport.coins`): the step's recorded
#: coins; none recorded (an episode file of the format before they were); no decision yet (state 0, nothing
#: stepped), so no coin was drawn.
COINS_RECORDED, COINS_NOT_RECORDED, COINS_NOT_DRAWN = "recorded", "not recorded", "not drawn yet"
NO_COINS_NOTE = ("; CollidingClose coin flips were not recorded in this episode (an older file format), so the "
                 "true-predicates table re-draws them")
REGROUNDED_NOTES = {
    COINS_RECORDED: "re-grounded from the recorded state with the CollidingClose coin flips the simulation drew "
                    "at that step (recorded): the truth values the rule engine decided on",
    COINS_NOT_RECORDED: "re-grounded from the recorded state; this episode does not record CollidingClose coin "
                        "flips (an episode file of an older format), so they are re-drawn, except the pairs the "
                        "recorded clause names",
    COINS_NOT_DRAWN: "grounded from the recorded state; nothing is decided yet, so no CollidingClose coin was "
                     "drawn: they are drawn here from a fixed seed",
}


@dataclass(frozen=True)
class ViewRow:
    """One entity in the agent's view: its true unary predicates and true relations to other entities."""

    name: str
    agent: int
    unary: tuple[str, ...]
    relations: tuple[str, ...]   # rendered "Pred(this, other)"


@dataclass(frozen=True)
class AgentReport:
    agent: int
    name: str
    kind: str
    detailed: str
    concepts: tuple[str, ...]
    priority: int
    step: int
    position: tuple[int, int]
    heading: str
    goal: tuple[int, int]
    goals_reached: int
    decision_step: int | None     # the step whose decision is shown: k, or k-1 at the newest state
    decided: str | None           # action decided during decision_step (None: nothing recorded yet)
    realised: str | None
    derived: tuple[str, ...]      # recorded action predicates the rules derived (empty: none, or forced)
    fired: str | None             # recorded fired clause with its witness, rendered
    fired_clause: int             # recorded clause id (-1: default, -2: forced)
    witness: tuple[tuple[str, str], ...]   # (variable, agent name) of the recorded firing
    forced: str | None            # who forced the action ("the user (override set at step 12)"), None: rules
    explanation: str | None       # the recorded explanation as text (None: nothing decided yet)
    view: tuple[ViewRow, ...]     # re-grounded (see regrounded_note)
    actions: np.ndarray           # int8 [T] decided action per recorded step
    view_error: str | None = None  # why the view table could not be re-grounded
    pending: bool = False          # state ``step`` is the newest: its own decision is not known yet
    upcoming: str | None = None    # at the newest state: the action a user override will force when it steps
    coins: str = COINS_RECORDED    # where the view table's CollidingClose coin flips come from (REGROUNDED_NOTES)

    @property
    def next_action(self) -> str:
        """The decision of the shown state itself, as the "Action (next)" colouring names it."""
        if self.pending:
            return self.upcoming or NOT_DECIDED
        return NOT_DECIDED if self.decided is None else self.decided

    @property
    def recorded_note(self) -> str:
        """Where the explanation comes from — and, for an episode without recorded coins, that the table's
        CollidingClose flips are not the run's (said here too: the dock shows this note in its text)."""
        return RECORDED_NOTE + (NO_COINS_NOTE if self.coins == COINS_NOT_RECORDED else "")

    @property
    def regrounded_note(self) -> str:
        return REGROUNDED_NOTES[self.coins]


class Inspector:
    """Builds reports for a project's configuration (ontology, program, city) over any episode view."""

    def __init__(self, config: Any) -> None:
        self.config = config
        self._views: OrderedDict[tuple, tuple[tuple[ViewRow, ...], Any]] = OrderedDict()   # view_rows

    @property
    def project(self) -> CompiledProject:
        """The config's compiled project (core/sim/compiled.py), shared with the simulation and the map."""
        return compiled_project(self.config)

    @property
    def program(self):
        return self.project.program

    @property
    def grounder(self) -> Grounder:
        return self.project.grounder

    def _proven_coins(self, clause: Clause, agent: int, witness: np.ndarray, snap,
                      local: Mapping[int, int] | None = None) -> dict[tuple[str, int, int], bool]:
        """CollidingClose values the recorded firing proves: its literals over coin-drawing pairs held as written
        (a positive literal was true, a negated one false). ``local`` maps global agent indices to those of
        ``snap`` when it holds some of the agents only (agents missing from it are left out)."""
        colliding = {p.name for p in self.config.ontology.grounded if p.grounding == "colliding_close"}
        lits = [lit for lit in clause.body if lit.pred in colliding and len(lit.args) == 2]
        if not lits:
            return {}
        at = (lambda a: int(a)) if local is None else (lambda a: local.get(int(a)))
        who = {EGO: at(agent)}
        who.update({v: at(a) for v, a in zip(clause.variables, witness) if a >= 0})
        pairs = {name: {(int(a), int(b)) for a, b in arr} for name, arr in self.grounder.coin_pairs(snap).items()}
        out = {}
        for lit in lits:
            a, b = who.get(lit.args[0]), who.get(lit.args[1])
            if a is not None and b is not None and (a, b) in pairs.get(lit.pred, ()):
                out[(lit.pred, a, b)] = bool(lit.positive)
        return out

    def report(self, episode, k: int, agent: int, *, recompute: bool = True, seed: int = 0) -> AgentReport:
        """The report of ``agent`` at state ``k``. ``recompute`` re-grounds the view table (with the step's
        recorded coin flips; ``seed`` seeds the generator of those not recorded); everything else is read from the
        episode."""
        snap = episode.snapshot(k)
        agents = snap.agents
        names = tuple(agents.names)
        d = k if k < episode.num_steps else (k - 1 if k > 0 else None)
        decided = realised = fired_text = forced = explanation = None
        derived: tuple[str, ...] = ()
        fired_clause = -1
        witness: tuple[tuple[str, str], ...] = ()
        firing: Firing | None = None
        if d is not None:
            rec = episode.step_record(d)
            decided = ACTION_NAMES[int(rec.decided[agent])]
            realised = ACTION_NAMES[int(rec.realised[agent])]
            fired_clause = int(rec.fired[agent])
            user = active_intervention(episode.meta, d, agent)
            if fired_clause == FIRED_FORCED or user is not None:
                forced = (f"the user (action override set at step {user['step']})" if user is not None else
                          "an action override given to the simulation (e.g. the controlled agent in Safe Path "
                          "Following)")
                explanation = f"{decided} — forced by {forced}; not derived by the rules"
            else:
                derived = tuple(ACTION_NAMES[a] for a in range(4) if rec.holds[agent, a])
                clauses = clauses_for(episode.meta, self.program)   # the program that decided step d (rule branches)
                if 0 <= fired_clause < len(clauses):
                    f = make_firing(clauses[fired_clause], agent, np.asarray(rec.witness[agent]), names)
                    fired_text = str(f)
                    witness = tuple((v, n) for v, _, n in f.binding)
                    firing = (clauses[fired_clause], agent, np.asarray(rec.witness[agent]))
                    others = [a for a in derived if a != decided]
                    explanation = fired_text + (f"\nalso derived: {', '.join(others)} (their clauses are not "
                                                "recorded)" if others else "")
                elif fired_clause >= 0:
                    explanation = f"{decided} — clause {fired_clause} is not in this project's rules"
                else:
                    kind = Kind(int(agents.kinds[agent])).label.lower()
                    why = "no rule derived an action for this agent" if not derived else \
                        f"the derived {', '.join(derived)} is not an action of a {kind}"
                    fired_text = explanation = f"{decided} (default: {why})"
        view: tuple[ViewRow, ...] = ()
        view_error = None
        coins = episode.coins(d) if d is not None else None
        source = COINS_NOT_DRAWN if d is None else COINS_RECORDED if coins is not None else COINS_NOT_RECORDED
        if recompute:
            try:
                shown = snap if d in (None, k) else episode.snapshot(d)
                view = self.view_rows(shown, agent, firing, seed, coins)
            except Exception as exc:  # never let a logic-core problem take the inspector down
                view_error = f"could not re-ground the view: {type(exc).__name__}: {exc}"
        pos = snap.positions[agent]
        goal = episode.goals(k)[agent]
        reached = int(np.asarray(episode.array("reached")[:k, agent]).sum()) if k else 0
        return AgentReport(
            agent=agent, name=names[agent], kind=Kind(int(agents.kinds[agent])).label,
            detailed=detailed_type(agents, agent), concepts=tuple(agents.concept_names(agent)),
            priority=int(agents.priorities[agent]), step=k, position=(int(pos[0]), int(pos[1])),
            heading=HEADING_NAMES[int(snap.headings[agent])], goal=(int(goal[0]), int(goal[1])),
            goals_reached=reached, decision_step=d, decided=decided, realised=realised, derived=derived,
            fired=fired_text, fired_clause=fired_clause, witness=witness, forced=forced, explanation=explanation,
            view=view, actions=np.asarray(episode.array("decided")[:, agent], np.int8).copy(), view_error=view_error,
            pending=k >= episode.num_steps, upcoming=self._upcoming(episode, k, agent), coins=source)

    def view_rows(self, snap, agent: int, firing: Firing | None = None, seed: int = 0,
                  coins: CoinOutcomes | None = None) -> tuple[ViewRow, ...]:
        """The true-predicates table of ``agent``'s view of ``snap``, re-grounded for that view only. ``coins``: the
        CollidingClose coins the simulation drew when it decided ``snap`` (:meth:`EpisodeView.coins
        <core.sim.episode.EpisodeView.coins>`), every one of the view's set as recorded. Without them,
        ``firing`` = (clause, agent, witness) of the recorded firing, whose proven coins are kept, and ``seed``
        draws the rest.

        Kept for the last :data:`VIEW_CACHE_SIZE` views asked for (scrubbing back and forth shows the same states
        again), by what they are computed from — the state's agents, positions and headings, the agent, the
        coins, the firing and the seed — so a branch, a new recording or an edited agent can never be served a
        stale table."""
        key = _view_key(snap, agent, firing, seed, coins)
        hit = self._views.get(key)
        if hit is not None:
            self._views.move_to_end(key)
            return hit[0]
        rows = self._view_rows(snap, agent, firing, seed, coins)
        self._views[key] = (rows, firing)   # (the firing's clause is kept alive: the key holds its id)
        while len(self._views) > VIEW_CACHE_SIZE:
            self._views.popitem(last=False)
        return rows

    def _view_rows(self, snap, agent: int, firing: Firing | None, seed: int,
                   coins: CoinOutcomes | None) -> tuple[ViewRow, ...]:
        sub, members = view_world(self.grounder, snap, agent)
        local = {int(a): i for i, a in enumerate(members)}
        if coins is not None:
            forced = recorded_coins(coins, members, len(snap), self.grounder.index.colliding_names)
        else:
            forced = self._proven_coins(*firing, sub, local) if firing is not None else {}
        g = self.grounder.ground(sub, np.random.default_rng(seed), forced_coins=forced or None)
        if coins is not None and sum(len(keys) for keys, _ in g.coins.values()) != len(forced):
            # every coin of the view is one of the step's (a coin depends on its pair alone); a coin drawn here
            # that the step did not record means the recording was decided with another ontology
            raise ValueError("the recorded CollidingClose coins do not match this project's ontology")
        return view_table(g, local[int(agent)], members)

    @staticmethod
    def _upcoming(episode, k: int, agent: int) -> str | None:
        if k < episode.num_steps:
            return None
        e = active_intervention(episode.meta, k, agent)
        return None if e is None else ACTION_NAMES[int(e["action"])]


def _view_key(snap, agent: int, firing: Firing | None, seed: int, coins: CoinOutcomes | None) -> tuple:
    """What a view table is computed from (see :meth:`Inspector.view_rows`), as a hashable key."""
    a = snap.agents
    who = (a.names, np.asarray(a.kinds).tobytes(), np.asarray(a.priorities).tobytes(),
           tuple((c, np.asarray(v).tobytes()) for c, v in sorted(a.concepts.items())))
    fired = None if firing is None else (id(firing[0]), int(firing[1]), np.asarray(firing[2]).tobytes())
    drawn = None if coins is None else tuple((name, np.asarray(pairs).tobytes(), np.asarray(outcomes).tobytes())
                                             for name, (pairs, outcomes) in coins.items())
    return (int(agent), int(seed), fired, drawn, np.asarray(snap.positions).tobytes(),
            np.asarray(snap.headings).tobytes(), who)


def recorded_coins(coins: CoinOutcomes, members: np.ndarray, n: int, names: tuple[str, ...]
                   ) -> dict[tuple[str, int, int], bool]:
    """The recorded coins of a step between agents of ``members`` (global indices ascending, of ``n`` agents),
    keyed by their indices in the world of those agents (:func:`view_world`), for ``Grounder.ground(forced_coins=)``;
    only the CollidingClose predicates ``names`` of the grounder's ontology."""
    at = np.full(n, -1, np.int64)
    at[np.asarray(members, np.int64)] = np.arange(len(members))
    out: dict[tuple[str, int, int], bool] = {}
    for name in names:
        pairs, outcomes = coins.get(name, (np.zeros((0, 2), np.int64), np.zeros(0, bool)))
        if not len(outcomes):
            continue
        pairs = np.asarray(pairs, np.int64)
        a, b = at[pairs[:, 0]], at[pairs[:, 1]]
        keep = np.flatnonzero((a >= 0) & (b >= 0))
        out.update(((name, int(a[i]), int(b[i])), bool(outcomes[i])) for i in keep.tolist())
    return out


def view_world(grounder, snap, agent: int) -> tuple[WorldSnapshot, np.ndarray]:
    """(the world of the agents inside ``agent``'s field of view, their global indices ascending).

    Why this is the same view: an agent's domain is the agents inside its box, itself first, the others in agent
    order; a unary predicate depends on its agent alone and a binary one on its pair alone (CollidingClose coins
    are drawn per pair), so grounding these agents as a world of their own gives the view's table — at the cost
    of its size, not the city's."""
    pos = np.asarray(snap.positions, np.int64)
    head = np.asarray(snap.headings, np.int64)
    r0, r1, c0, c1 = (int(v) for v in grounder.fov_boxes(pos[agent:agent + 1], head[agent:agent + 1])[0])
    inside = (pos[:, 0] >= r0) & (pos[:, 0] <= r1) & (pos[:, 1] >= c0) & (pos[:, 1] <= c1)
    inside[agent] = True
    members = np.flatnonzero(inside)
    a = snap.agents
    table = AgentTable(tuple(a.names[i] for i in members), np.asarray(a.kinds)[members].copy(),
                       np.asarray(a.priorities)[members].copy(),
                       {c: np.asarray(v)[members].copy() for c, v in a.concepts.items()})
    sub = WorldSnapshot(snap.step, table, np.asarray(snap.positions)[members].copy(),
                        np.asarray(snap.headings)[members].copy())
    return sub, members


def view_table(g, ego: int, members: np.ndarray | None = None) -> tuple[ViewRow, ...]:
    """The rows of ``ego``'s view in grounding ``g`` (the ego first): true unary predicates and true relations,
    read from the per-view tables (one array operation per predicate, not one per pair).
    ``members`` maps ``g``'s agent indices to global ones (a :func:`view_world` grounding)."""
    ents = np.asarray(g.entities(ego), np.int64)
    k = len(ents)
    names = [g.names[a] for a in ents]
    onto = g.ontology
    unary: list[list[str]] = [[] for _ in range(k)]
    preds = [p.name for p in onto.unary]
    if preds:   # every unary row of the ego's view at once; nonzero runs predicate by predicate (ontology order)
        held = np.stack([np.asarray(g.unary_local(name))[ego, :k] for name in preds])
        for u, i in zip(*(x.tolist() for x in np.nonzero(held))):
            unary[i].append(preds[u])
    rel: list[list[str]] = [[] for _ in range(k)]
    for p in onto.binary:   # relations in ontology order, then entity order (as Grounding.ego_view)
        # the ego's view only (binary_view: not every view's table of the grounding)
        ii, jj = np.nonzero(np.asarray(g.binary_view(p.name, ego))[:k, :k])
        heads = [f"{p.name}({n}, " for n in names]
        for i, j in zip(ii.tolist(), jj.tolist()):
            rel[i].append(heads[i] + names[j] + ")")
    glob = ents if members is None else np.asarray(members)[ents]
    return tuple(ViewRow(names[i], int(a), tuple(unary[i]), tuple(rel[i])) for i, a in enumerate(glob.tolist()))
