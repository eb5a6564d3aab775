"""The Gymnasium ids of the SPF tasks, ``LogiCity/SPF-{easy,medium,hard,expert}-v0`` (entry point
:class:`core.tasks.spf.env.SPFEnv`). Importing :mod:`core.tasks` registers them; this module imports nothing of the
environment itself, so registering stays cheap."""
from __future__ import annotations

MODES = ("easy", "medium", "hard", "expert")


def register_envs() -> None:
    """Register the SPF ids with Gymnasium (idempotent)."""
    try:
        import gymnasium as gym
    except ImportError:  # pragma: no cover - gymnasium is a pinned dependency
        return
    for mode in MODES:
        env_id = f"LogiCity/SPF-{mode}-v0"
        if env_id not in gym.registry:
            gym.register(id=env_id, entry_point="core.tasks.spf.env:SPFEnv", kwargs={"mode": mode})
