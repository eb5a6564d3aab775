"""A trained SPF policy driving an ego where the evaluation episodes do not reach: live in the SPF play window, and
as a branch of any recorded studio episode from a chosen step (no Qt; the studio's Models panel and SPF window
call it).

Why a branch is computed here and then re-simulated by the studio: the studio's recording is made by its simulation
worker, and a recorded step is only trustworthy if that worker produced it. So :func:`drive_branch` steps a new
simulation of the recording, built exactly as the worker builds it (the studio's
:func:`core.studio.apply.new_simulation`), with the recording's forced actions to state ``k``, lets the policy
choose the chosen agent's action on the very grounding each step is decided on, and returns those actions as the
studio's ordinary forced actions (``{"step", "agent", "action"}``, sticky, the last one ``None`` = back to the
rules). The studio adds them with one undoable command and its worker simulates the steps; the ego's recorded cells
are then compared with the branch's (:meth:`BranchDrive.matches`), so a divergence is reported instead of showing a
run that did not happen.

The policy reads the SPF observation of the ego (its first five view entities, docs/spf.md "Observation"); it is
only meaningful when the project's ontology gives the layout the policy was trained on, which
:func:`check_layout` demands. The oracle and the judge are the *policy's* mode's ``expert`` and ``task`` rule
sections evaluated on that observation (the same code as the SPF environment), so "model vs oracle" and the
violations mean what they mean in ``spf eval``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from core.base.codes import Action, Kind
from core.base.errors import LogiCityError
from core.logic.engines.compiled import check_task
from core.tasks.spf.evaluate import episode_result
from core.tasks.spf.learning.replay import ModelEpisode, ModelStep, observation_facts
from core.tasks.spf.policy import ModelPolicy, Policy, call_policy
from core.tasks.spf.rules import ObservationLayout, ViewRules
from core.tasks.spf.settings import SPFMode, load_spf_mode
from core.view.overrides import overrides_at

__all__ = ["ObservedView", "observed_view", "readout", "DriveRules", "check_layout", "BranchDrive", "drive_branch",
           "branch_problem"]


@dataclass(frozen=True)
class ObservedView:
    """What the ego's observation covered at one state, for the map: its field-of-view box (inclusive rows and
    columns ``r0, r1, c0, c1``) and the real entities of the observation (ego first) with their cells."""

    ego: int
    box: tuple[int, int, int, int]
    agents: tuple[int, ...]
    names: tuple[str, ...]
    cells: tuple[tuple[int, int], ...]


def observed_view(grounding: Any, ego: int, fov: int) -> ObservedView:
    """The :class:`ObservedView` of ``ego`` in ``grounding`` (its first ``fov`` view entities)."""
    snap = grounding.snapshot
    pos = np.asarray(snap.positions)
    box = grounding.grounder.fov_boxes(pos, np.asarray(snap.headings))[ego]
    agents = tuple(int(a) for a in list(grounding.entities(ego))[:fov])
    names = tuple(grounding.names[a] for a in agents)
    cells = tuple((int(pos[a, 0]), int(pos[a, 1])) for a in agents)
    return ObservedView(int(ego), tuple(int(x) for x in box), agents, names, cells)   # type: ignore[arg-type]


def readout(policy: Policy, obs: np.ndarray,
            where: str = "") -> tuple[int, tuple[float, ...], tuple[float, ...] | None]:
    """The policy's action on ``obs`` with its scores (Q-values or logits) and probabilities (None for Q-values);
    a policy without scores (oracle, random, a .py policy) gives ``()``. Non-finite scores are refused with the
    evaluation's message (:func:`core.tasks.spf.policy.call_policy`)."""
    a = call_policy(policy, obs, None, where)
    scores = policy.scores(obs)
    probs = policy.probabilities(obs)
    return (a, () if scores is None else tuple(float(x) for x in scores),
            None if probs is None else tuple(float(p) for p in probs))


def check_layout(policy: ModelPolicy, ontology: Any, fov: int, where: str = "this project") -> list:
    """The observation layout of ``ontology`` as ``[[predicate, offset, arity], ...]``; a
    :class:`~core.base.errors.LogiCityError` when it is not the one the policy was trained on (its observation would
    mean something else)."""
    lay = ObservationLayout.of(ontology, fov)
    have = [[name, int(off), int(ar)] for name, (off, ar) in lay.blocks.items()]
    want = [list(x) for x in policy.layout]
    if want and have != want:
        diff = next((f"{w} vs {h}" for w, h in zip(want, have) if w != h), f"{len(want)} predicates vs {len(have)}")
        raise LogiCityError(f"the model ({policy.algo} for SPF {policy.mode}) reads another observation than "
                            f"{where}'s ontology gives (first difference, trained vs here: {diff}); open a project "
                            f"with the {policy.mode} ontology")
    return have


@dataclass
class DriveRules:
    """The policy's mode's oracle (``expert``) and judge (``task``) over an observation layout, with the action
    costs that make the SPF reward."""

    mode: SPFMode
    expert: ViewRules
    judge: ViewRules
    layout: list

    @classmethod
    def for_policy(cls, policy: ModelPolicy, ontology: Any, where: str = "this project") -> "DriveRules":
        spf = load_spf_mode(policy.mode, "test")
        fov = spf.settings.fov_entities
        layout = check_layout(policy, ontology, fov, where)
        lay = ObservationLayout.of(ontology, fov)
        return cls(spf, ViewRules(spf.config.rules.program("expert"), lay),
                   ViewRules(spf.config.rules.task(), lay), layout)

    @property
    def fov(self) -> int:
        return self.mode.settings.fov_entities

    def violations(self, grounding: Any, ego: int, action: int) -> tuple[str, ...]:
        """The violated task rules with the clause and its witness, as the SPF environment reports them."""
        tc = check_task(self.mode.config.rules.task(), grounding, ego, action)
        return tuple(f"{d.get('rule', '?')}: {d.get('text') or d.get('clause', '')}"
                     for d in (v.to_dict() for v in tc.violations))


@dataclass
class BranchDrive:
    """A policy driving agent ``ego`` from state ``start`` of a recording: the per-step record (an
    :class:`~core.tasks.spf.learning.replay.ModelEpisode`, steps numbered from 1 = the step from state ``start``),
    what the ego saw at each of those states, the forced actions that make the studio's simulation repeat it, and
    the ego's cells at states ``start .. start + len(steps)`` for the check."""

    start: int
    ego: int
    ego_name: str
    episode: ModelEpisode
    views: list[ObservedView] = field(default_factory=list)
    entries: list[dict] = field(default_factory=list)
    cells: list[tuple[int, int]] = field(default_factory=list)
    observations: list[np.ndarray] = field(default_factory=list)
    reached: bool = False

    @property
    def end(self) -> int:
        """The state the branch ends at (the ego follows the rules again from there)."""
        return self.start + len(self.episode.steps)

    def matches(self, positions: np.ndarray) -> int | None:
        """Compare with recorded positions ``[T+1, N, 2]``: None when the ego stood on the same cells at every
        state of the branch, else the first state where it did not (or the first one missing)."""
        for j, cell in enumerate(self.cells):
            k = self.start + j
            if k >= len(positions) or tuple(int(x) for x in positions[k][self.ego]) != cell:
                return k
        return None


def branch_problem(config: Any, history: Any, k: int, ego: int | None) -> str | None:
    """Why the agent ``ego`` cannot be driven from state ``k`` of ``history`` (None when it can)."""
    if history is None or config is None:
        return "no recording is shown"
    if ego is None:
        return "select the agent the model should drive (a car) on the map first"
    if not 0 <= ego < len(history.agents):
        return f"no agent {ego} in the recording"
    if int(history.agents.kinds[ego]) != int(Kind.CAR):
        return f"{history.agents.names[ego]} is not a car; SPF models drive a car"
    if not 0 <= k <= history.num_steps:
        return f"step {k} is not recorded"
    return None


def _cell(positions: np.ndarray, i: int) -> tuple[int, int]:
    row, col = positions[i]
    return int(row), int(col)


def _overrides(interventions: Sequence[Mapping], k: int, n: int) -> dict:
    row = overrides_at({"interventions": list(interventions)}, k, n)
    return {int(i): Action(int(a)) for i, a in enumerate(row) if a >= 0}


def drive_branch(sim: Any, interventions: Sequence[Mapping], k: int, ego: int, policy: ModelPolicy,
                 max_steps: int = 200,
                 cancelled: Callable[[], bool] | None = None,
                 progress: Callable[[int, int], None] | None = None) -> BranchDrive:
    """Let ``policy`` drive agent ``ego`` from state ``k`` of a recording, for at most ``max_steps`` steps or until
    the ego reaches its goal or breaks a dead task rule (an SPF episode ends there too); everyone else follows the
    rules. ``sim`` is a new simulation of the recording at state 0, built as the studio's worker builds it (start
    scene, seed, agent schedule), and ``interventions`` the recording's forced actions. Raises
    :class:`~core.base.errors.LogiCityError` when the policy's layout does not fit the simulation's ontology."""
    rules = DriveRules.for_policy(policy, sim.config.ontology)
    fov = rules.fov
    n = len(sim.agents)
    total = int(k) + int(max_steps)
    while sim.step_index < k:                       # the recording's steps, exactly as the worker re-simulates
        if cancelled and cancelled():
            raise InterruptedError("cancelled")
        sim.step(_overrides(interventions, sim.step_index, n) or None)
        if progress and sim.step_index % 20 == 0:
            progress(sim.step_index, total)
    name = sim.agents.names[ego]
    out = BranchDrive(int(k), int(ego), name, ModelEpisode(rules.mode.name, "branch", int(k), policy.name))
    out.cells.append(_cell(sim.positions, ego))
    path_length = 4 * max(1, len(sim.paths[ego]))
    actions, oracle, rewards = [], [], []
    last = None
    for t in range(1, int(max_steps) + 1):
        if cancelled and cancelled():
            break
        sim.apply_schedules()   # what step() does first when it grounds the state itself
        g, d = sim.decide()
        obs = g.observation(ego, fov)
        n_real = min(int(g.valid[ego].sum()), fov)
        names = g.entity_names(ego, fov)
        a, scores, probs = readout(policy, obs)
        o_star = int(rules.expert.decide(obs, n_real).action)
        check = rules.judge.check(obs, n_real, a)
        viol = rules.violations(g, ego, a) if check.violated else ()
        out.views.append(observed_view(g, ego, fov))
        out.observations.append(obs)
        if a != last:
            out.entries.append({"step": int(sim.step_index), "agent": int(ego), "action": int(a)})
            last = a
        forced = _overrides(interventions, sim.step_index, n)
        forced[ego] = Action(a)
        res = sim.step(forced, prepared=(g, d))
        if check.fail:
            r = float(check.reward)
        else:
            r = (rules.mode.settings.action_cost[a] + float(check.reward)) / path_length
        out.episode.steps.append(ModelStep(t, a, o_star, scores, probs, tuple(names),
                                           observation_facts(obs, rules.layout, names, fov), r, viol,
                                           out.cells[-1]))
        out.cells.append(_cell(sim.positions, ego))
        actions.append(a)
        oracle.append(o_star)
        rewards.append(r)
        out.reached = bool(res.reached[ego])
        out.episode.success, out.episode.fail = out.reached, bool(check.fail)
        if progress:
            progress(sim.step_index, total)
        if out.reached or check.fail:
            break
    out.entries.append({"step": int(sim.step_index), "agent": int(ego), "action": None})
    out.episode.result = episode_result(int(k), actions, oracle, rewards, out.episode.success, out.episode.fail,
                                        int(max_steps), rules.mode.settings.eval_actions)
    return out
