"""The whole city as a PettingZoo ``ParallelEnv``: every agent (car or pedestrian) is a learner.

``CityParallelEnv(mode="easy")`` — any SPF mode (or mode file with ``task``/``expert`` sections); agent ids are
the agent names (``Car_1``, ``Pedestrian_3``, ...), in agent-file order.

Each agent is treated like the SPF ego (docs/reference.md#safe-path-following): its view is truncated to
``fov_entities`` entities, its observation is its grounding vector over that view (same layout as the single-agent
env), its action space is ``Discrete(4)`` (Slow, Normal, Fast, Stop; pedestrians have no Slow/Fast moves and walk at
their only speed, as in the simulator), and its reward is the SPF reward of its chosen action on what it saw: the
violated task rules' rewards when a dead rule is violated, else
``(action_cost[a] + rule reward) / (4 · len(its current planned path))``. The city never ends for an agent: agents
keep their trips going, nobody terminates, all are truncated together after ``max_cycles`` steps.

Default policy: ``env.rule_actions()`` is the rule engine's decision for every agent on the current state
(the simulator's ``sim`` rules on the same truncated views); it is also ``infos[agent]["rule_action"]``, and
any agent missing from the ``actions`` dict of :meth:`step` follows it. ``rule_actions(expert=True)`` gives
the expert rules' decision instead.

All randomness flows from one generator seeded by ``reset(seed=...)``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv

from core.base.codes import Action
from core.logic.engines.compiled import CompiledEngine, TaskChecker
from core.sim.movement import DECIDED_TABLE
from core.sim.simulation import Simulation
from core.tasks.spf.env import as_action
from core.tasks.spf.rules import ObservationLayout
from core.tasks.spf.settings import load_spf_mode

if TYPE_CHECKING:
    from core.logic.engines.decisions import Decisions
    from core.logic.grounding.grounder import Grounding

__all__ = ["CityParallelEnv", "parallel_env"]


class CityParallelEnv(ParallelEnv):
    metadata = {"name": "logicity_city_v0", "render_modes": [], "is_parallelizable": True}

    def __init__(self, mode: str = "easy", split: str = "train", max_cycles: int = 300, *,
                 truncate_views: bool = True, engine: str | None = None) -> None:
        self.spf = load_spf_mode(mode, split)
        cfg = self.spf.config
        st = self.spf.settings
        self.fov = st.fov_entities
        self.max_cycles = int(max_cycles)
        self.action_cost = np.asarray(st.action_cost, dtype=float)
        table = cfg.agents.table()
        self.possible_agents = list(table.names)
        self.agents: list[str] = []
        n = len(self.possible_agents)
        limits = {i: self.fov for i in range(n)} if truncate_views else None
        self.sim = Simulation(cfg, seed=0, record=False, engine=engine, view_limits=limits)
        self.layout = ObservationLayout.of(cfg.ontology, self.fov)
        self.expert_engine = CompiledEngine(cfg.rules.program("expert"))
        self.checker = TaskChecker(cfg.rules.task())
        self.task = cfg.rules.task()
        self._obs_space = spaces.Box(0.0, 1.0, shape=(self.layout.size,), dtype=np.float32)
        self._act_space = spaces.Discrete(4)
        self._rng: np.random.Generator | None = None
        self._grounding: Grounding | None = None
        self._decisions: Decisions | None = None
        self.cycles = 0

    def observation_space(self, agent: str) -> spaces.Box:
        return self._obs_space

    def action_space(self, agent: str) -> spaces.Discrete:
        return self._act_space

    # ---- API -------------------------------------------------------------------------------------------------
    def reset(self, seed: int | None = None, options: dict | None = None):
        if seed is not None or self._rng is None:
            self._rng = np.random.default_rng(seed)
        self.sim.restart(rng=self._rng)
        self.agents = list(self.possible_agents)
        self.cycles = 0
        self._prepare()
        return self._observations(), self._infos(self.agents, None, None, None)

    def step(self, actions: dict):
        if self._grounding is None:
            raise RuntimeError("call reset() before step()")
        rule = self._rule_array()
        chosen = rule.copy()
        for name, a in actions.items():
            i = self.possible_agents.index(name)
            chosen[i] = as_action(a, f"action of {name}")
        reward_rule, fail = self.checker.check_all(self._grounding, chosen)
        plen = np.array([4 * len(p) for p in self.sim.paths], dtype=float)
        rewards_arr = np.where(fail, reward_rule, (self.action_cost[chosen] + reward_rule) / plen)
        out = self.sim.step({i: Action(int(a)) for i, a in enumerate(chosen)},
                            prepared=(self._grounding, self._decisions))
        self.cycles += 1
        truncate = self.cycles >= self.max_cycles
        self._prepare()
        names = self.agents
        obs = self._observations()
        rewards = {nm: float(rewards_arr[i]) for i, nm in enumerate(self.possible_agents) if nm in names}
        terms = {nm: False for nm in names}
        truncs = {nm: truncate for nm in names}
        infos = self._infos(names, out, fail, reward_rule)
        if truncate:
            self.agents = []
        return obs, rewards, terms, truncs, infos

    def close(self) -> None:
        pass

    def state(self) -> np.ndarray:
        """Global state: every agent's (row, col, heading) as float32 [3N]."""
        s = np.concatenate([self.sim.positions.astype(np.float32), self.sim.headings[:, None].astype(np.float32)],
                           axis=1)
        return s.reshape(-1)

    # ---- default policies ---------------------------------------------------------------------------------
    def rule_actions(self, expert: bool = False) -> dict[str, int]:
        """The rule engine's decision per agent on the current state (``expert``: the expert rules)."""
        arr = self._rule_array(expert)
        return {nm: int(arr[i]) for i, nm in enumerate(self.possible_agents) if nm in self.agents}

    def _rule_array(self, expert: bool = False) -> np.ndarray:
        assert self._grounding is not None and self._decisions is not None, "call reset() first"
        d = self.expert_engine.decide(self._grounding) if expert else self._decisions
        codes = (np.asarray(d.holds) @ np.array([1, 2, 4, 8])).tolist()
        return np.array([int(DECIDED_TABLE[self.sim.kinds[i]][c]) for i, c in enumerate(codes)], dtype=np.int64)

    # ---- internals ---------------------------------------------------------------------------------------------
    def _prepare(self) -> None:
        assert self._rng is not None   # reset() made it
        self.sim.rng = self._rng
        self._grounding, self._decisions = self.sim.decide()

    def _observations(self) -> dict[str, np.ndarray]:
        g = self._grounding
        assert g is not None, "call reset() first"
        return {nm: g.observation(i, self.fov) for i, nm in enumerate(self.possible_agents) if nm in self.agents}

    def _infos(self, names: list[str], out, fail, reward_rule) -> dict[str, dict]:
        rule = self._rule_array()
        infos = {}
        live = set(names)
        for i, nm in enumerate(self.possible_agents):
            if nm not in live:
                continue
            info: dict[str, Any] = {"rule_action": int(rule[i])}
            if out is not None:
                info.update(fail=bool(fail[i]), rule_reward=float(reward_rule[i]),
                            reached_goal=bool(out.reached[i]), realised_action=int(out.realised[i]))
            infos[nm] = info
        return infos


def parallel_env(**kwargs) -> CityParallelEnv:
    """PettingZoo-style constructor."""
    return CityParallelEnv(**kwargs)
