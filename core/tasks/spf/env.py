"""Safe Path Following (SPF) as a Gymnasium environment: drive the ego car to its goal without breaking rules.

``gymnasium.make("LogiCity/SPF-easy-v0")`` (also ``-medium``, ``-hard``, ``-expert``; ``import core.tasks`` first)
or ``SPFEnv("easy", split="train")``. Semantics follow the reference's SPF task
(docs/reference.md#safe-path-following); every deliberate difference is listed in docs/spf.md.

* Observation: float32 0/1 vector, the ego's grounding over its first ``fov_entities`` (5) view entities — ego first,
  then in-view agents in agent order, placeholders (all 0) for missing ones; predicates in ontology order, unary
  blocks ``P(e0..e4)``, binary blocks ``P(ei, ej)`` row-major (docs/reference.md#spf-observation): 85 / 140 / 205
  values for easy / medium / hard+expert. ``env.unwrapped.layout.describe()`` lists the index ranges.
* Action: ``Discrete(4)`` = Slow, Normal, Fast, Stop (:class:`core.base.codes.Action`).
* Step (docs/reference.md#spf-step-and-termination): the task rules judge the chosen action on the observation the
  policy saw; then the ego's action and every other agent's rule decision — all taken on that same snapshot — are
  applied simultaneously.
* Reward (docs/reference.md#spf-reward): a dead violation ends the episode with reward = the violated rules' rewards
  (not normalised); otherwise ``(action_cost[a] + rule_reward) / path_length`` with
  ``path_length = 4 · len(planned path)``; ``overtime_cost`` is added when the horizon truncates the episode.
  ``info["reward_components"]`` splits it.
* Termination: the ego's goal-reached flag (set on the step after it arrives,
  docs/reference.md#goal-arrival-and-new-trips) → ``is_success``; a dead violation → ``fail``. Truncation:
  ``max_horizon`` steps.
* Reset: ``reset(seed=s)`` builds a fresh world from ``s`` (all agents sampled), then re-initialises the ego;
  ``reset()`` without a seed keeps the background world running (reference behaviour: background agents are
  never reset) and re-initialises only the ego: new start/goal, priority uniform in 1..max_priority−1, concept
  from the split's ``reset_dist``. ``reset(options={"episode": k})`` starts episode ``k`` of the split's episode
  set (exact start state, re-seeded generator); ``options={"start_state": StartState}`` any saved state.

All randomness comes from ``self.np_random`` (the simulation uses that very generator). The env pickles (its
state is rebuilt from the mode file and restored exactly).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from core.base.codes import ACTION_NAMES, Action
from core.base.world import KNOWN_CONCEPTS
from core.logic.engines.compiled import check_task
from core.render.renderer import Renderer
from core.sim.checkpoint import capture, restore
from core.sim.simulation import Simulation
from core.tasks.spf.episodes import EpisodeSet, load_episode_set
from core.tasks.spf.rules import ObservationLayout, ViewRules
from core.tasks.spf.settings import NORMAL, SPFMode, load_spf_mode
from core.tasks.spf.state import StartState

if TYPE_CHECKING:
    from core.logic.engines.decisions import Decisions
    from core.logic.grounding.grounder import Grounding

__all__ = ["SPFEnv", "ENV_IDS", "ACTION_NAMES"]

ENV_IDS = {m: f"LogiCity/SPF-{m}-v0" for m in ("easy", "medium", "hard", "expert")}
#: bound of the per-env memo of oracle decisions / task checks (cleared when full)
MEMO_LIMIT = 50_000


def as_action(value: Any, who: str = "action") -> int:
    """``value`` as an action index 0..3 (Slow, Normal, Fast, Stop). Python and numpy integers are accepted, and
    integer arrays holding one value (what vectorised RL code passes); a bool or a float (``1.5``, ``True``) is a
    :class:`TypeError` — silently truncating it would train on actions the agent never chose."""
    a = value
    if isinstance(a, np.ndarray) and a.size == 1 and a.dtype.kind in "iu":
        a = a.reshape(-1)[0]
    if isinstance(a, (bool, np.bool_)) or not isinstance(a, (int, np.integer)):
        raise TypeError(f"{who} must be an integer 0..3 (Slow, Normal, Fast, Stop), got {value!r} "
                        f"({type(value).__name__})")
    if not 0 <= int(a) < 4:
        raise ValueError(f"{who} must be 0..3 (Slow, Normal, Fast, Stop), got {int(a)}")
    return int(a)


class SPFEnv(gym.Env):
    metadata = {"render_modes": ["rgb_array"], "render_fps": 4}

    def __init__(self, mode: str = "easy", split: str = "train", *, max_horizon: int | None = None,
                 record: bool = False, engine: str | None = None, episodes: Any = None,
                 render_mode: str | None = None) -> None:
        """``mode``: easy/medium/hard/expert or an SPF mode file; ``split``: agent set and reset settings
        (train/val/test); ``max_horizon`` overrides the split's; ``record`` keeps an episode buffer on the
        simulation (studio replay); ``episodes``: an :class:`~core.tasks.spf.episodes.EpisodeSet` or a path
        (default: the split's shipped set, loaded on first use)."""
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None")
        self.render_mode = render_mode
        self._init_args = dict(mode=mode, split=split, max_horizon=max_horizon, record=record, engine=engine,
                               episodes=episodes.path if isinstance(episodes, EpisodeSet) else episodes,
                               render_mode=render_mode)
        self.spf: SPFMode = load_spf_mode(mode, split)
        self.settings = self.spf.settings
        self.split_settings = self.spf.split_settings
        cfg = self.spf.config
        self.ego = self.spf.ego_index
        self.fov = self.settings.fov_entities
        self.max_horizon = int(max_horizon if max_horizon is not None else self.split_settings.max_horizon)
        self.action_cost = self.settings.action_cost
        self.overtime_cost = self.settings.overtime_cost
        self.sim = Simulation(cfg, seed=0, record=record, engine=engine, view_limits={self.ego: self.fov})
        self.base_agents = cfg.agents.table()
        self.layout = ObservationLayout.of(cfg.ontology, self.fov)
        self.expert = ViewRules(cfg.rules.program("expert"), self.layout)
        self.judge = ViewRules(cfg.rules.task(), self.layout)
        self.observation_space = spaces.Box(0.0, 1.0, shape=(self.layout.size,), dtype=np.float32)
        self.action_space = spaces.Discrete(4)
        self._episodes = episodes
        self._world_ready = False
        self.t = 0
        self.path_length = 1
        self.episode_index: int | None = None
        self.start_state: StartState | None = None
        self._grounding: Grounding | None = None
        self._decisions: Decisions | None = None
        self._obs = np.zeros(self.layout.size, np.float32)
        self._n_real = 1
        self._key = (b"", 0)
        self._oracle: Action | None = None
        # oracle decisions and task checks are pure functions of (observation, real entities[, action]); the
        # same views recur most steps (~80 %), so results are memoised (bounded) per view
        self._decide_memo: dict = {}
        self._check_memo: dict = {}
        self._pre_ground_rng: Mapping[str, Any] | None = None
        self._renderer = None

    @property
    def unwrapped(self) -> SPFEnv:
        """This environment (what ``gym.Env.unwrapped`` gives, typed as the SPF environment)."""
        return self

    # ---- episode sets --------------------------------------------------------------------------------------
    @property
    def episodes(self):
        """The episode set of this split (loaded on first use)."""
        if not isinstance(self._episodes, EpisodeSet):
            self._episodes = load_episode_set(self.spf, self._episodes)
        return self._episodes

    # ---- gymnasium API ---------------------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        opts = dict(options or {})
        unknown = set(opts) - {"episode", "start_state"}
        if unknown:
            raise ValueError(f"unknown reset option(s) {sorted(unknown)} (known: episode, start_state)")
        self.episode_index = None
        if "episode" in opts or "start_state" in opts:
            if "start_state" in opts:
                state = opts["start_state"]
            else:
                self.episode_index = int(opts["episode"])
                state = self.episodes.state(self.episode_index)
            self._restore(state)
        else:
            if seed is not None or not self._world_ready:
                self.sim.restart(rng=self.np_random, agents=self.base_agents)
                self._world_ready = True
            self._reset_ego()
            self.start_state = None
        self.t = 0
        self.sim.reset_recording()  # one recorded episode per SPF episode (record=True: studio replay)
        self._prepare()
        return self._obs.copy(), self._reset_info()

    def step(self, action):
        if self._grounding is None:
            raise RuntimeError("call reset() before step()")
        a = as_action(action)
        check = self.check_action(a)
        violations = self._explain(a) if check.violated else ()
        out = self.sim.step({self.ego: Action(a)}, prepared=(self._grounding, self._decisions))
        self.t += 1
        success = bool(out.reached[self.ego])
        terminated = success or check.fail
        truncated = (not terminated) and self.t >= self.max_horizon
        if check.fail:
            cost_part, rule_part = 0.0, float(check.reward)
        else:
            cost_part = self.action_cost[a] / self.path_length
            rule_part = float(check.reward) / self.path_length
        overtime = self.overtime_cost if truncated else 0.0
        reward = cost_part + rule_part + overtime
        self._prepare()
        info = {
            "is_success": success,
            "fail": bool(check.fail),
            "reward_components": {"action_cost": cost_part, "rule": rule_part, "overtime": overtime},
            "path_length": self.path_length,
            "violations": violations,
            "realised_action": int(out.realised[self.ego]),
            "oracle_action": int(self.oracle_action()),
            "step": self.t,
            "steps_left": self.max_horizon - self.t,
        }
        return self._obs.copy(), float(reward), bool(terminated), bool(truncated), info

    def render(self):
        if self.render_mode != "rgb_array":
            return None
        if self._renderer is None:
            self._renderer = Renderer(self.sim.city, px_per_cell=2)
        frame = self._renderer.render(self.sim.snapshot())
        return np.asarray(frame.image)[..., :3].copy()

    # ---- oracle and inspection ----------------------------------------------------------------------------
    def oracle_action(self) -> Action:
        """The expert rules' action for the current observation (docs/reference.md#spf-oracle)."""
        if self._oracle is None:
            self._oracle = self.oracle_decision().action
        return self._oracle

    def oracle_decision(self):
        """The expert rules' full decision (derived actions, fired clauses) for the current observation."""
        d = self._decide_memo.get(self._key)
        if d is None:
            if len(self._decide_memo) >= MEMO_LIMIT:
                self._decide_memo.clear()
            d = self._decide_memo[self._key] = self.expert.decide(self._obs, self._n_real)
        return d

    def check_action(self, action: int):
        """What the task rules would say about ``action`` now (no step is taken)."""
        key = (self._key, int(action))
        c = self._check_memo.get(key)
        if c is None:
            if len(self._check_memo) >= MEMO_LIMIT:
                self._check_memo.clear()
            c = self._check_memo[key] = self.judge.check(self._obs, self._n_real, int(action))
        return c

    @property
    def grounding(self) -> Grounding | None:
        """The logic core's grounding of the current state (the observation is its ego view)."""
        return self._grounding

    @property
    def view_entities(self) -> list[str]:
        """Names of the observation's entities (``PH`` for placeholders)."""
        assert self._grounding is not None, "reset() first"
        return self._grounding.entity_names(self.ego, self.fov)

    @property
    def ego_concept(self) -> str:
        ag = self.sim.agents
        for c in KNOWN_CONCEPTS:
            if ag.concepts[c][self.ego]:
                return c
        return NORMAL

    def _explain(self, action: int) -> tuple[dict, ...]:
        assert self._grounding is not None, "reset() first"
        tc = check_task(self.spf.config.rules.task(), self._grounding, self.ego, action)
        return tuple(v.to_dict() for v in tc.violations)

    # ---- internals ---------------------------------------------------------------------------------------------
    def _reset_ego(self) -> None:
        rng = self.np_random
        ss = self.split_settings
        self.sim.reset_agent(self.ego)
        priority = int(rng.integers(1, ss.max_priority))
        concepts = None
        if ss.reset_dist:
            names = ss.concepts
            p = np.array([q for _, q in ss.reset_dist], dtype=float)
            concept = names[int(rng.choice(len(names), p=p / p.sum()))]
            concepts = [] if concept == NORMAL else [concept]
        self.sim.set_agents(self.sim.agents.with_agent(self.ego, priority=priority, concepts=concepts))
        self.path_length = 4 * len(self.sim.paths[self.ego])

    def _restore(self, state: StartState) -> None:
        state.apply(self.sim)
        self._np_random, self._np_random_seed = gym.utils.seeding.np_random(int(state.seed))
        self.sim.rng = self._np_random
        self._world_ready = True
        self.start_state = state
        self.path_length = 4 * len(self.sim.paths[self.ego])

    def _prepare(self) -> None:
        """Ground the current state once: the observation, the oracle, the task check and the next simulation
        step all use this grounding (CollidingClose coins are drawn here)."""
        self.sim.rng = self.np_random
        self._pre_ground_rng = self.np_random.bit_generator.state
        g, d = self.sim.decide()
        self._grounding, self._decisions = g, d
        self._obs = g.observation(self.ego, self.fov)
        self._n_real = min(int(g.valid[self.ego].sum()), self.fov)
        self._key = (self._obs.tobytes(), self._n_real)
        self._oracle = None

    def _reset_info(self) -> dict:
        return {"oracle_action": int(self.oracle_action()), "path_length": self.path_length,
                "concept": self.ego_concept, "priority": int(self.sim.agents.priorities[self.ego]),
                "episode": self.episode_index, "step": 0, "steps_left": self.max_horizon}

    # ---- pickling: rebuild from the mode file, then restore the exact state ---------------------------------
    def __getstate__(self) -> dict:
        state = {"init": self._init_args, "ready": self._world_ready}
        if self._grounding is not None:
            cp = capture(self.sim)
            state.update(checkpoint=cp, rng=self._pre_ground_rng, seed=self._np_random_seed, t=self.t,
                         path_length=self.path_length, episode_index=self.episode_index,
                         start_state=self.start_state)
        return state

    def __setstate__(self, state: dict) -> None:
        type(self).__init__(self, **state["init"])
        self._world_ready = state["ready"]
        if "checkpoint" in state:
            restore(self.sim, state["checkpoint"])
            gen = np.random.Generator(np.random.PCG64())
            gen.bit_generator.state = state["rng"]
            self._np_random, self._np_random_seed = gen, state["seed"]
            self.t, self.path_length = state["t"], state["path_length"]
            self.episode_index, self.start_state = state["episode_index"], state["start_state"]
            self._prepare()



