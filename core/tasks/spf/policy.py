"""What an SPF policy is: the :class:`Policy` protocol, the built-in policies (the oracle, random, a plain
function) and the checks every action passes.

A policy is asked for an action on an observation (the SPF observation vector, docs/spf.md "Observation"), with
the environment it came from (None where there is none, as in the studio's read-outs of a recording). Evaluation,
the studio's Models panel and a policy driving a recording ask it for more than its action — its action scores and
probabilities, how to name it, where an episode starts (the random policy re-seeds there) — so those members are
part of the protocol, with defaults for a policy that has none of them: callers use them without probing.
:class:`ModelPolicy` adds what a trained run knows (its SPF mode, algorithm and observation layout).

Every action a policy returns is checked (:func:`check_action`: an int 0..3) and a model's action scores must be
finite (:func:`checked_scores`); a wrong value or an exception in the policy becomes a
:class:`~core.base.errors.PolicyError` naming the policy's file, the value and where it happened
(:func:`call_policy`).
"""
from __future__ import annotations

import traceback
from pathlib import Path
from typing import Any, Callable, Protocol, runtime_checkable

import numpy as np

from core.base.errors import LogiCityError, PolicyError

__all__ = ["Policy", "ModelPolicy", "OraclePolicy", "RandomPolicy", "FunctionPolicy", "NUM_ACTIONS",
           "NonFiniteScores", "checked_scores", "check_action", "call_policy", "policy_name", "user_code_error"]

#: the four actions (Slow, Normal, Fast, Stop) every policy chooses from
NUM_ACTIONS = 4
_ACTIONS_TEXT = "an int 0..3 (0 Slow, 1 Normal, 2 Fast, 3 Stop)"


@runtime_checkable
class Policy(Protocol):
    """An SPF policy. Implementations subclass it and inherit the defaults of the optional members.

    ``name`` is how tables and panels name the policy; ``source`` the file (or run folder) it was loaded from, which
    every message about it names (None for a policy that is no file)."""

    name: str
    source: str | None = None

    def __call__(self, obs: np.ndarray, env: Any | None) -> Any:
        """The action for ``obs`` (checked by :func:`check_action`: an int 0..3)."""
        ...

    def begin_episode(self, episode: int) -> None:
        """Called before episode ``episode`` of an evaluation is run (a random policy re-seeds here, so every
        episode's actions are reproducible on their own)."""
        return None

    def scores(self, obs: np.ndarray) -> np.ndarray | None:
        """The four action scores (Q-values or logits) on ``obs``; None for a policy without scores."""
        return None

    def probabilities(self, obs: np.ndarray) -> np.ndarray | None:
        """The four action probabilities on ``obs``; None where the scores are not logits (or there are none)."""
        return None


class ModelPolicy(Policy, Protocol):
    """A policy trained for one SPF mode (a run folder): its observation only means what it was trained on, so the
    mode and the layout ``[[predicate, offset, arity], ...]`` are known (an empty layout: not recorded)."""

    mode: str
    algo: str
    layout: list[list]

    def scores(self, obs: np.ndarray) -> np.ndarray:
        ...


class OraclePolicy(Policy):
    """The mode's expert rules on the current observation (docs/reference.md#spf-oracle); needs the environment."""

    name = "oracle"

    def __call__(self, obs: np.ndarray, env: Any | None) -> int:
        if env is None:
            raise ValueError("the oracle reads the environment's state; it cannot act on an observation alone")
        return int(env.unwrapped.oracle_action())


class RandomPolicy(Policy):
    """Uniform over the four actions, from its own generator (re-seeded per episode from ``seed`` and the episode,
    so runs are reproducible and the environment's generator is untouched)."""

    name = "random"

    def __init__(self, seed: int = 0) -> None:
        self.seed = int(seed)
        self.rng = np.random.default_rng(self.seed)

    def begin_episode(self, episode: int) -> None:
        self.rng = np.random.default_rng([self.seed, int(episode)])

    def __call__(self, obs: np.ndarray, env: Any | None) -> int:
        return int(self.rng.integers(NUM_ACTIONS))


class FunctionPolicy(Policy):
    """A plain function ``fn(obs, env)`` as a policy (a ``.py`` policy file's ``policy``, a test's scripted
    actions)."""

    def __init__(self, fn: Callable[[np.ndarray, Any], Any], name: str, source: str | None = None) -> None:
        self.fn = fn
        self.name = name
        self.source = source

    def __call__(self, obs: np.ndarray, env: Any | None) -> Any:
        return self.fn(obs, env)


class NonFiniteScores(ValueError):
    """A policy model produced NaN or infinite action scores (its argmax would be meaningless)."""

    def __init__(self, scores: np.ndarray) -> None:
        self.scores = np.asarray(scores, np.float64).reshape(-1)
        super().__init__(f"non-finite action scores {np.array2string(self.scores, precision=3)}")


def checked_scores(scores: np.ndarray) -> np.ndarray:
    """``scores`` when all are finite, else :class:`NonFiniteScores` (which :func:`call_policy` reports)."""
    if not np.all(np.isfinite(scores)):
        raise NonFiniteScores(scores)
    return scores


def policy_name(policy: Policy) -> str:
    """How messages and evaluation reports name a policy: its file, else its name."""
    return policy.source or policy.name


def _who(policy: Policy) -> str:
    return "the policy" if policy.source else f"policy {policy.name}"


def user_code_error(exc: BaseException, path: Path) -> tuple[str, int | None]:
    """The problem and line (in ``path``) of an exception raised by a policy file's code."""
    if isinstance(exc, SyntaxError) and exc.filename and Path(exc.filename).resolve() == path.resolve():
        return f"syntax error: {exc.msg}", exc.lineno
    line = None
    for fr in traceback.extract_tb(exc.__traceback__):
        if fr.filename and Path(fr.filename).resolve() == path.resolve():
            line = fr.lineno
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}{': ' + text if text else ''}", line


def check_action(value: Any, policy: Policy, where: str = "") -> int:
    """``value`` as an action 0..3, else a :class:`PolicyError` saying which policy returned what, and ``where``
    (e.g. "at step 3 of easy/val episode 0"). Accepted: Python and numpy integers, and integer arrays holding one
    value (e.g. a ``model.predict`` output)."""
    a = value
    if isinstance(a, np.ndarray) and a.size == 1 and a.dtype.kind in "iu":
        a = a.reshape(-1)[0]
    if isinstance(a, (int, np.integer)) and not isinstance(a, (bool, np.bool_)) and 0 <= int(a) < NUM_ACTIONS:
        return int(a)
    shown = repr(value)
    if len(shown) > 60:
        shown = shown[:57] + "..."
    raise PolicyError(f"{_who(policy)} returned {shown} ({type(value).__name__}){' ' + where if where else ''}; an "
                      f"action must be {_ACTIONS_TEXT}", policy.source)


def call_policy(policy: Policy, obs: np.ndarray, env: Any | None, where: str = "") -> int:
    """Ask ``policy`` for an action and check it (:func:`check_action`); an exception raised by the policy
    becomes a :class:`PolicyError` naming the policy (its file) and ``where``."""
    src = policy.source
    try:
        raw = policy(obs, env)
    except LogiCityError:
        raise
    except NonFiniteScores as exc:  # any model policy (.npz, .safetensors, TorchScript, a run): no argmax of NaN
        raise PolicyError(f"{_who(policy)} computed {exc}{' ' + where if where else ''}; an action needs finite "
                          f"scores", src) from None
    except Exception as exc:  # noqa: BLE001 - user code may raise anything
        msg, line = user_code_error(exc, Path(src)) if src else (f"{type(exc).__name__}: {exc}", None)
        raise PolicyError(f"{_who(policy)} raised {msg}{' ' + where if where else ''}", src,
                          line if src and src.endswith(".py") else None) from None
    return check_action(raw, policy, where)
