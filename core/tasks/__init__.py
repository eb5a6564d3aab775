"""Tasks built on the simulator: Safe Path Following (SPF) environments, episode sets, evaluation, demonstrations.

Importing this package registers the Gymnasium ids ``LogiCity/SPF-{easy,medium,hard,expert}-v0`` (entry point
:class:`core.tasks.spf.SPFEnv`; the modules themselves load lazily)::

    import gymnasium as gym
    import core.tasks  # noqa: F401
    env = gym.make("LogiCity/SPF-easy-v0", split="train")
"""


def _register() -> None:
    try:
        import gymnasium as gym
    except ImportError:  # pragma: no cover - gymnasium is a pinned dependency
        return
    for mode in ("easy", "medium", "hard", "expert"):
        env_id = f"LogiCity/SPF-{mode}-v0"
        if env_id not in gym.registry:
            gym.register(id=env_id, entry_point="core.tasks.spf:SPFEnv", kwargs={"mode": mode})


_register()
