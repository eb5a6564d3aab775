"""Live validation of a city being edited: every finding at once, each with the cells involved (no Qt).

Why besides :mod:`core.map.validate`: loading a file stops at the first error and names a file line; an editor
needs the whole list, located on the map, while the city is still wrong. The rules (docs/city-editor.md,
"Validation"):

errors (the simulation will not start, and a saved city would not load):
  * ``traffic-width`` — a traffic street not odd and at least 3 cells wide (no mid lane with a lane each side);
  * ``no-traffic`` / ``no-lanes`` — no traffic street, or none long enough between junctions to hold a lane;
  * ``lane-geometry`` — a lane end off the drivable cells or outside any junction (a street ending in nothing);
  * ``dead-end-lane`` — a lane whose end leads nowhere, or whose start nothing leads to;
  * ``lane-graph-split`` — the car lane graph is not strongly connected (some car goals unreachable);
  * ``paved-block`` — a city block paved entirely with walking street (no lot for buildings);
  * ``walking-split`` — pedestrian goal cells in more than one walking network (some walks unreachable);
  * ``no-start-cells`` — an agent type of the project's agents has no valid start cell;
  * anything else :func:`core.map.validate.validate_city` refuses (``invalid``).

warnings (the city runs; the user probably did not mean it):
  * ``building-unreachable-car`` / ``building-unreachable-pedestrian`` — a destination building no car / no
    pedestrian can reach (no traffic cell in reach, no sidewalk beside it), so it is never a goal;
  * ``isolated-walking`` — a walking area not connected to the main walking network.

Graphs with networkx: strongly connected components and degrees of the lane graph (:mod:`core.map.lanes`); the
walking network is the 4-connected walkable cells (the pedestrian planner's moves).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

import networkx as nx
import numpy as np
from scipy import ndimage

from core.base.codes import BUILDING_NAMES, HOUSE, OFFICE, STREET_TRAFFIC, STREET_WALKING, Kind
from core.base.errors import ConfigError
from core.map.lanes import LaneGeometryError
from core.map.layers import _region_cores, paint_streets
from core.map.model import CityMap
from core.map.sampling import CAR_TARGETS, PEDESTRIAN_TARGETS, StartGoalSampler, _cross_dilate, map_widths
from core.map.validate import MIN_TRAFFIC_WIDTH, check_spec

__all__ = ["Finding", "city_findings", "ERROR", "WARNING"]

ERROR = "error"
WARNING = "warning"
#: at most this many cells per finding are listed (a highlight of a whole street is enough)
MAX_CELLS = 4000
#: at most this many findings of one kind (then one more saying how many were left out)
MAX_PER_CODE = 25


@dataclass(frozen=True)
class Finding:
    severity: str
    code: str
    message: str
    cells: tuple[tuple[int, int], ...] = ()

    @property
    def is_error(self) -> bool:
        return self.severity == ERROR


def _cells(mask_or_cells: Any) -> tuple[tuple[int, int], ...]:
    arr = np.asarray(mask_or_cells)
    pts = np.argwhere(arr) if arr.dtype == bool else arr.reshape(-1, 2)
    if len(pts) > MAX_CELLS:
        pts = pts[np.linspace(0, len(pts) - 1, MAX_CELLS).astype(int)]
    return tuple((int(r), int(c)) for r, c in pts)


def _rect_cells(r0: int, c0: int, r1: int, c1: int) -> tuple[tuple[int, int], ...]:
    rr, cc = np.mgrid[r0:r1 + 1, c0:c1 + 1]
    return _cells(np.stack([rr.ravel(), cc.ravel()], 1))


def city_findings(city: CityMap, agents: Any = None) -> list[Finding]:
    """Every finding of ``city`` (errors first); ``agents`` (an AgentSet) adds the start-cell check per type."""
    out: list[Finding] = []
    out += _street_findings(city)
    lane_errors = [f for f in out if f.is_error]
    if not lane_errors:
        out += _lane_findings(city)
    out += _block_findings(city)
    out += _walking_findings(city)
    out += _building_findings(city)
    if agents is not None:
        out += _start_findings(city, agents)
    if not any(f.is_error for f in out):   # whatever else loading would refuse (e.g. a street ending beside another)
        try:
            check_spec(city.height, city.width, city.streets, city.buildings)
        except ConfigError as exc:
            out.append(Finding(ERROR, "invalid", exc.message))
    out = _limit(out)
    return sorted(out, key=lambda f: (not f.is_error,))


def _limit(found: list[Finding]) -> list[Finding]:
    out: list[Finding] = []
    seen: dict[str, int] = {}
    for f in found:
        seen[f.code] = seen.get(f.code, 0) + 1
        if seen[f.code] <= MAX_PER_CODE:
            out.append(f)
    for code, n in seen.items():
        if n > MAX_PER_CODE:
            sev = next(f.severity for f in found if f.code == code)
            out.append(Finding(sev, code, f"… and {n - MAX_PER_CODE} more of the same kind ({code})"))
    return out


def _street_findings(city: CityMap) -> list[Finding]:
    out = []
    traffic = [s for s in city.streets if s.kind == "traffic"]
    if not traffic:
        return [Finding(ERROR, "no-traffic", "the city has no traffic street: cars need at least one")]
    for s in traffic:
        if s.width < MIN_TRAFFIC_WIDTH or s.width % 2 == 0:
            rs, cs = s.footprint()
            out.append(Finding(ERROR, "traffic-width",
                               f"{s.orientation} traffic street at ({s.row}, {s.col}) is {s.width} cells wide: "
                               f"a traffic street must be odd and at least {MIN_TRAFFIC_WIDTH} wide (a mid lane "
                               "with one lane on each side)",
                               _rect_cells(rs.start, cs.start, rs.stop - 1, cs.stop - 1)))
    return out


def _lane_findings(city: CityMap) -> list[Finding]:
    try:
        lanes = city.lane_graph
    except LaneGeometryError as exc:
        r, c = exc.cell
        return [Finding(ERROR, "lane-geometry", f"{exc.message}", _rect_cells(r - 1, c - 1, r + 1, c + 1))]
    if not lanes.lanes:
        return [Finding(ERROR, "no-lanes", "the traffic streets form no lane: each needs a straight stretch of at "
                                           "least 2 cells between junctions")]
    g = lanes.graph
    out = []
    for ln in lanes.lanes:
        cells = _lane_cells(ln)
        if g.out_degree(ln.end) == 0:
            out.append(Finding(ERROR, "dead-end-lane", f"dead-end lane: cars driving from {ln.start} to {ln.end} "
                                                       "cannot go on (the street ends without a junction)", cells))
        if g.in_degree(ln.start) == 0:
            out.append(Finding(ERROR, "dead-end-lane", f"lane from {ln.start} to {ln.end} cannot be entered from "
                                                       "any other lane", cells))
    sccs = sorted(nx.strongly_connected_components(g), key=len, reverse=True)
    if len(sccs) > 1:
        main = sccs[0]
        cut = [ln for ln in lanes.lanes if ln.start not in main or ln.end not in main]
        cut_cells = np.concatenate([np.asarray(_lane_cells(ln)) for ln in cut]) if cut else np.zeros((0, 2), int)
        out.append(Finding(ERROR, "lane-graph-split",
                           f"the car lane graph is not strongly connected: {len(sccs)} parts; {len(cut)} lanes "
                           "cannot reach (or be reached from) the main network, so some car goals are unreachable",
                           _cells(cut_cells)))
    return out


def _lane_cells(ln) -> tuple[tuple[int, int], ...]:
    (r0, c0), (r1, c1) = ln.start, ln.end
    return _rect_cells(min(r0, r1), min(c0, c1), max(r0, r1), max(c0, c1))


def _block_findings(city: CityMap) -> list[Finding]:
    cover = paint_streets(city.height, city.width, city.streets)
    regions, cores = _region_cores(cover)
    out = []
    for k, core in enumerate(cores):
        if core is None:
            out.append(Finding(ERROR, "paved-block", "a city block is paved entirely with walking street; a block "
                                                     "needs buildings or empty lots inside its sidewalks",
                               _cells(regions == k + 1)))
    return out


def _walking_findings(city: CityMap) -> list[Finding]:
    walk_lab, n = ndimage.label(city.walkable)
    if n == 0:
        return []
    goals = (city.street == STREET_WALKING) & ndimage.binary_dilation(
        np.isin(city.building, (HOUSE, OFFICE)), structure=np.ones((3, 3), bool))
    sizes = np.bincount(walk_lab.ravel(), minlength=n + 1)
    sizes[0] = 0
    goal_parts = np.unique(walk_lab[goals])
    goal_parts = goal_parts[goal_parts > 0]
    out = []
    if len(goal_parts) > 1:
        counts = np.bincount(walk_lab[goals], minlength=n + 1)
        main = int(np.argmax(counts))
        for part in goal_parts:
            if part == main:
                continue
            out.append(Finding(ERROR, "walking-split",
                               f"pedestrian goal cells ({int(counts[part])}) lie in a walking network not connected "
                               "to the main one by walking streets or crossings: some walks are unreachable",
                               _cells(goals & (walk_lab == part))))
        main_part = main
    else:
        main_part = int(goal_parts[0]) if len(goal_parts) else int(np.argmax(sizes))
    boxes = ndimage.find_objects(walk_lab)
    goal_set = set(goal_parts.tolist())
    for part in range(1, n + 1):
        if part == main_part or part in goal_set:
            continue
        sl = boxes[part - 1]
        cells = np.argwhere(walk_lab[sl] == part) + (sl[0].start, sl[1].start)
        out.append(Finding(WARNING, "isolated-walking",
                           f"isolated walking area ({int(sizes[part])} cells) not connected to the main walking "
                           "network", _cells(cells)))
    return out


def _building_findings(city: CityMap) -> list[Finding]:
    out = []
    ww = _walking_width(city)
    traffic_reach = _cross_dilate(city.street == STREET_TRAFFIC, ww + 1)
    sidewalk_near = ndimage.binary_dilation(city.street == STREET_WALKING, structure=np.ones((3, 3), bool))
    for targets, reach, who, code in ((CAR_TARGETS, traffic_reach, "cars", "building-unreachable-car"),
                                      (PEDESTRIAN_TARGETS, sidewalk_near, "pedestrians",
                                       "building-unreachable-pedestrian")):
        lab, n = ndimage.label(np.isin(city.building, targets))
        if n == 0:
            continue
        hit = ndimage.maximum(reach, lab, index=np.arange(1, n + 1))
        boxes = ndimage.find_objects(lab)
        missed = np.flatnonzero(~np.asarray(hit, bool))
        for i in missed[:MAX_PER_CODE]:     # the rest are only counted (_limit says how many)
            sl = boxes[i]
            cells = np.argwhere(lab[sl] == i + 1) + (sl[0].start, sl[1].start)
            r, c = (int(v) for v in cells[0])
            name = _building_name(city, r, c)
            out.append(Finding(WARNING, code, f"{name} at ({r}, {c}) cannot be reached by {who}: it is never a "
                                              "goal", _cells(cells)))
        out.extend(Finding(WARNING, code, "") for _ in missed[MAX_PER_CODE:])
    return out


def _building_name(city: CityMap, r: int, c: int) -> str:
    return BUILDING_NAMES.get(int(city.building[r, c]), "building")


def _walking_width(city: CityMap) -> int:
    return map_widths(city)[0]


def _start_findings(city: CityMap, agents: Iterable[Any]) -> list[Finding]:
    kinds = {Kind(int(a.kind)) for a in agents}
    if not kinds:
        return []
    try:
        sampler = StartGoalSampler(city)
    except Exception as exc:  # noqa: BLE001 - a city the sampler cannot read is reported, not raised
        return [Finding(ERROR, "no-start-cells", f"start cells cannot be computed: {exc}")]
    out = []
    for kind in sorted(kinds):
        if not len(sampler.candidate_cells(kind)):
            what = ("a walking-street cell next to a House or Office" if kind == Kind.PEDESTRIAN else
                    "a traffic cell within reach of a Gas Station, Garage or Store")
            out.append(Finding(ERROR, "no-start-cells", f"no valid start cell for {kind.label.lower()}s: they need "
                                                        f"{what}"))
    return out
