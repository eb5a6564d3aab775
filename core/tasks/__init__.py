"""Tasks built on the simulator: Safe Path Following (SPF) environments, episode sets, evaluation, demonstrations.

Importing this package registers the Gymnasium ids ``LogiCity/SPF-{easy,medium,hard,expert}-v0`` (entry point
:class:`core.tasks.spf.env.SPFEnv`; the modules themselves load lazily)::

    import gymnasium as gym
    import core.tasks  # noqa: F401
    env = gym.make("LogiCity/SPF-easy-v0", split="train")
"""
from core.tasks.spf.registration import register_envs

register_envs()
