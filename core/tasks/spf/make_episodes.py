"""Making SPF evaluation episode sets: the deterministic procedure behind ``python main.py spf make-episodes``.

The procedure (docs/reference.md#spf-episode-sets, adapted): try k = 0, 1, 2, ... with seed ``base_seed * 1_000_000
+ k``: build a fresh world from that seed and reset the ego (start, goal, priority, concept drawn as in training
resets for this split), capture the start state, then replay it exactly as an evaluation would (restore + re-seed)
while the oracle drives. Keep the episode when the oracle reaches the goal within the split's ``max_horizon``, chose
the target action (Stop) at least once, and the quota of the ego's concept is not full yet. Quotas split the episode
count evenly over the concepts of the split's ``reset_dist`` (remainder to the first ones). Because acceptance ran
the very replay that evaluation runs, the oracle scores TSR = 1.00 on every shipped set.

Why a module of its own: making a set runs the environment (:class:`core.tasks.spf.env.SPFEnv`), and the
environment reads its episodes from :mod:`core.tasks.spf.episodes`; keeping the procedure here keeps that
dependency one-way.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

from core.base.codes import ACTION_NAMES, Action
from core.tasks.spf.env import SPFEnv
from core.tasks.spf.episodes import DEFAULT_COUNTS, SEED_STRIDE, EpisodeSet, quotas_for
from core.tasks.spf.settings import load_spf_mode
from core.tasks.spf.state import StartState

__all__ = ["make_episode_set"]


def make_episode_set(mode: str, split: str, count: int | None = None, base_seed: int = 0,
                     target_action: int = int(Action.STOP), max_tries: int = 20000,
                     progress: Callable[[int, int, int], None] | None = None) -> EpisodeSet:
    """Run the creation procedure (module docstring). ``progress(accepted, total, tries)`` is called per try."""
    spf = load_spf_mode(mode, split)
    total = DEFAULT_COUNTS.get(split, 100) if count is None else int(count)
    env = SPFEnv(mode, split)
    quotas = quotas_for(spf.split_settings.concepts, total)
    have = {c: 0 for c in quotas}
    states: list[StartState] = []
    tries = 0
    while len(states) < total:
        if tries >= max_tries:
            raise RuntimeError(f"only {len(states)} of {total} episodes after {max_tries} tries "
                               f"(quotas {have} of {quotas})")
        seed = base_seed * SEED_STRIDE + tries
        tries += 1
        env.reset(seed=seed)
        concept = env.ego_concept
        if have.get(concept, 0) >= quotas.get(concept, 0):
            if progress:
                progress(len(states), total, tries)
            continue
        state = StartState.capture(env.sim, seed, {"concept": concept})
        steps, ok, used = _oracle_rollout(env, state, target_action)
        if ok and used:
            have[concept] += 1
            states.append(StartState(state.positions, state.headings, state.goals, state.path_index,
                                     state.reach_goal, state.wait, state.paths, state.priorities, state.concepts,
                                     seed, {"concept": concept, "oracle_step": steps, "index": len(states)}))
        if progress:
            progress(len(states), total, tries)
    meta = {
        "mode": spf.name, "split": split, "agents": list(spf.config.agents.table().names),
        "ego": spf.settings.ego, "base_seed": int(base_seed), "seed_stride": SEED_STRIDE, "tries": tries,
        "quotas": quotas, "target_action": ACTION_NAMES[target_action],
        "max_horizon": env.max_horizon,
        "command": f"python main.py spf make-episodes --mode {spf.name} --split {split} --n {total} "
                   f"--seed {base_seed}",
        "agent_file": Path(spf.config.files["agents"]).name,
    }
    return EpisodeSet(states, meta)


def _oracle_rollout(env, state: StartState, target_action: int) -> tuple[int, bool, bool]:
    """Replay ``state`` as an evaluation does, the oracle driving: (steps, success, target action used)."""
    env.reset(options={"start_state": state})
    used = False
    steps = 0
    while True:
        a = int(env.oracle_action())
        used = used or a == target_action
        _, _, term, trunc, info = env.step(a)
        steps += 1
        if term or trunc:
            return steps, bool(info["is_success"]) and not info["fail"], used
