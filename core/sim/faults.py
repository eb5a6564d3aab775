"""Which part of the simulator a failed step failed in, for an error message a user can act on.

Why: a step runs grounding, the rule engine, the route planners, the movement rules and the recording; "step 40
failed: KeyError 3" says nothing about where to look (a rule file? a map whose lanes do not connect?). The studio
names the component instead of the mode file. The component is read from the exception's traceback (innermost
frame in a known module), so no extra work is done on the step's hot path.
"""
from __future__ import annotations

from types import TracebackType

#: package -> component, for frames in any module of the package
PACKAGE_COMPONENTS: dict[str, str] = {
    "core.logic.grounding": "grounding",
}

#: module -> component, for frames inside the component's own code
MODULE_COMPONENTS: dict[str, str] = {
    "core.logic.lang.registry": "grounding",
    "core.logic.lang.ontology": "grounding",
    "core.logic.engines.compiled": "rule engine",
    "core.logic.engines.compiled_clauses": "rule engine",
    "core.logic.engines.z3engine": "rule engine",
    "core.logic.engines.decisions": "rule engine",
    "core.logic.lang.program": "rule engine",
    "core.map.lanes": "planner",
    "core.map.walking": "planner",
    "core.map.sampling": "start/goal sampler",
    "core.sim.movement": "movement",
    "core.sim.episode": "recording",
}

#: functions of core.sim.simulation that belong to one component (the rest dispatch to components)
SIMULATION_FUNCTIONS: dict[str, str] = {
    "_new_trip": "planner", "_plan": "planner", "set_trip": "planner", "_global_moves": "movement",
    "_record_state": "recording",
}

#: names of the functions the simulation calls in each component (used when the failing function is not in a known
#: module, e.g. a plug-in engine or a replaced function)
CALLEE_COMPONENTS: dict[str, str] = {
    "ground": "grounding", "decide": "rule engine", "route": "planner", "walk_path": "planner",
    "move_choice": "movement", "move_from": "movement", "sample_start": "start/goal sampler",
    "sample_goal": "start/goal sampler", "resample_goal": "start/goal sampler", "append_step": "recording",
    "append_state": "recording", "add_plan": "recording",
}

SIMULATION_MODULE = "core.sim.simulation"
DEFAULT_COMPONENT = "simulation step"


def _frames(tb: TracebackType | None) -> list[tuple[str, str]]:
    out = []
    while tb is not None:
        code = tb.tb_frame.f_code
        out.append((str(tb.tb_frame.f_globals.get("__name__", "")), code.co_name))
        tb = tb.tb_next
    return out


def failing_component(exc: BaseException) -> str:
    """The simulator component ``exc`` was raised in: grounding, rule engine, planner, start/goal sampler,
    movement, recording, or "simulation step" when it cannot be told."""
    frames = _frames(exc.__traceback__)
    for module, func in reversed(frames):   # innermost first
        if module in MODULE_COMPONENTS:
            return MODULE_COMPONENTS[module]
        package = module.rpartition(".")[0]
        if package in PACKAGE_COMPONENTS:
            return PACKAGE_COMPONENTS[package]
        if module == SIMULATION_MODULE and func in SIMULATION_FUNCTIONS:
            return SIMULATION_FUNCTIONS[func]
    # not raised inside a known module: name the function the simulation called last
    for i in range(len(frames) - 1, -1, -1):
        if frames[i][0] == SIMULATION_MODULE:
            if i + 1 < len(frames):
                callee = frames[i + 1][1]
                return CALLEE_COMPONENTS.get(callee) or SIMULATION_FUNCTIONS.get(callee, DEFAULT_COMPONENT)
            break
    return DEFAULT_COMPONENT
