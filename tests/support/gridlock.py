"""A real lock-up of the default city as a scene (core/sim/scene.py), shared by the gridlock tests."""
from __future__ import annotations


def lock_scene(*extra):
    """Two cars at the default city's intersection near (87, 95), the pair that locks up with seed 0 (captured
    from that run at step 325): the police car turning in behind the bus stops for it (CollidingClose), the bus at
    the intersection stops for the police car (both IsAtInter, HigherPri). Neither ever goes. ``extra``: more
    SceneAgents after them."""
    from core.sim.scene import Scene, SceneAgent

    return Scene((SceneAgent("car", position=(87, 92), goal=(77, 92), heading="Down", concepts=("police",),
                             priority=6),
                  SceneAgent("car", position=(87, 95), goal=(102, 111), heading="Down", concepts=("bus",),
                             priority=8)) + tuple(extra))
