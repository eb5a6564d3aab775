"""Colours of the map view: static semantics, agent colour-by schemes and their legends.

Why a module of its own: the map view, the legend, the exported PNGs and the screenshot in the README must agree
on colours, and a colour-by scheme ("colour agents by concept ``police``", "by decided action at step k") is a
pure function of recorded data. Colours are ``(r, g, b)`` tuples of ints 0..255.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from core.base.codes import ACTION_NAMES, GARAGE, GAS_STATION, HEADING_NAMES, HOUSE, OFFICE, STORE, Kind
from core.map.model import CityMap
from core.render.semantics import agent_semantic
from core.sim.episode import FIRED_FORCED

#: Colouring-only fired value: the agent's decision of the newest state is not made yet.
_FIRED_PENDING = -3
from core.base.world import KNOWN_CONCEPTS, AgentTable, WorldSnapshot
from core.view.overrides import overrides_at

RGB = tuple[int, int, int]

# ---- static semantics ---------------------------------------------------------------------------------------

#: One colour per static semantic (legend order). Chosen to be told apart with common colour-vision deficits
#: (buildings differ in hue *and* lightness) while agents (saturated, outlined) stay readable on top.
SEMANTIC_COLOURS: dict[str, RGB] = {
    "Ground": (196, 206, 176),
    "Walking Street": (222, 216, 200),
    "Traffic Street": (92, 98, 108),
    "Crossing": (246, 246, 240),
    "Mid Lane": (240, 196, 40),
    "House": (214, 120, 92),
    "Gas Station": (236, 176, 64),
    "Office": (96, 140, 196),
    "Garage": (142, 110, 96),
    "Store": (98, 170, 140),
}

#: Building code -> semantic name (keys of SEMANTIC_COLOURS).
_BUILDING_SEMANTIC = {HOUSE: "House", GAS_STATION: "Gas Station", OFFICE: "Office", GARAGE: "Garage",
                      STORE: "Store"}

#: Overlay colours for intersection lines/boxes (drawn translucently over the map when enabled).
INTERSECTION_COLOURS: dict[str, RGB] = {"Car at-line": (230, 60, 60), "Pedestrian at-line": (60, 110, 230),
                                        "In intersection": (250, 150, 40)}


def semantic_index(city: CityMap) -> tuple[np.ndarray, tuple[str, ...]]:
    """Per cell, the index of its semantic in the returned name tuple (SEMANTIC_COLOURS order)."""
    names = tuple(SEMANTIC_COLOURS)
    idx = np.zeros(city.shape, np.uint8)  # Ground
    s = np.asarray(city.street)
    idx[s == 1.0] = names.index("Walking Street")
    idx[s == 2.0] = names.index("Traffic Street")
    idx[s == -1.0] = names.index("Crossing")
    idx[(s == 2.5) | np.asarray(city.midline, bool)] = names.index("Mid Lane")
    b = np.asarray(city.building)
    for code, name in _BUILDING_SEMANTIC.items():
        idx[b == code] = names.index(name)
    return idx, names


def semantic_rgb(city: CityMap) -> np.ndarray:
    """The static map as uint8 RGB ``[H, W, 3]`` (row-major, row 0 at the top)."""
    idx, names = semantic_index(city)
    lut = np.array([SEMANTIC_COLOURS[n] for n in names], np.uint8)
    return lut[idx]


def intersection_rgba(city: CityMap, alpha: int = 150) -> np.ndarray:
    """Translucent overlay of the intersection layers (car lines, pedestrian lines, boxes) ``[H, W, 4]``."""
    inter = np.asarray(city.intersections)
    out = np.zeros(city.shape + (4,), np.uint8)
    for layer, name in ((2, "In intersection"), (1, "Pedestrian at-line"), (0, "Car at-line")):
        m = inter[layer] != 0
        out[m, :3] = INTERSECTION_COLOURS[name]
        out[m, 3] = alpha if layer != 2 else alpha // 3
    return out


def semantic_at(city: CityMap, row: int, col: int) -> str:
    """Human-readable semantic of one cell, with its intersection role (hover readout)."""
    if not (0 <= row < city.height and 0 <= col < city.width):
        return "outside the map"
    b = int(city.building[row, col])
    if b in _BUILDING_SEMANTIC:
        text = f"{_BUILDING_SEMANTIC[b]} (block {int(city.block[row, col])})"
    else:
        s = float(city.street[row, col])
        text = {1.0: "Walking Street", 2.0: "Traffic Street", -1.0: "Crossing", 2.5: "Mid Lane"}.get(s, "Ground")
        if bool(city.midline[row, col]) and text != "Mid Lane":
            text += " (mid lane)"
    inter = city.intersections[:, row, col]
    roles = []
    if inter[0]:
        roles.append(f"car at-line of intersection {int(inter[0])}")
    if inter[1] and not inter[0]:
        roles.append(f"pedestrian at-line of intersection {int(inter[1])}")
    if inter[2]:
        roles.append(f"inside intersection {int(inter[2])}")
    return text + (", " + ", ".join(roles) if roles else "")


# ---- agent colour-by ---------------------------------------------------------------------------------------

#: A qualitative palette (12 distinct colours) for categorical schemes without fixed colours.
PALETTE: tuple[RGB, ...] = (
    (31, 119, 180), (255, 127, 14), (44, 160, 44), (214, 39, 40), (148, 103, 189), (140, 86, 75),
    (227, 119, 194), (127, 127, 127), (188, 189, 34), (23, 190, 207), (57, 59, 121), (173, 73, 74),
)
KIND_COLOURS: dict[str, RGB] = {"Pedestrian": (200, 40, 190), "Car": (20, 150, 230)}
ACTION_COLOURS: dict[str, RGB] = {"Slow": (250, 190, 20), "Normal": (40, 170, 80), "Fast": (150, 60, 220),
                                  "Stop": (220, 30, 40)}
DETAILED_COLOURS: dict[str, RGB] = {
    "pedestrian": (200, 40, 190), "old": (120, 40, 160), "young": (255, 120, 200),
    "car": (20, 150, 230), "ambulance": (240, 240, 240), "bus": (250, 200, 0), "police": (20, 40, 140),
    "tiro": (60, 200, 120), "reckless": (230, 40, 30),
}
UNKNOWN_COLOUR: RGB = (150, 150, 150)
#: Agents whose action was forced by an override (colour by fired clause).
FORCED_COLOUR: RGB = (40, 40, 40)
YES_NO_COLOURS: tuple[RGB, RGB] = ((235, 80, 30), (170, 170, 170))
#: What "Action (next)" and "Fired clause" say at the newest state: the simulation decides state T only when it
#: steps from it, so nothing is known yet. The inspector says the same words (core/view/inspect.py).
NOT_DECIDED = "not decided yet"


@dataclass(frozen=True)
class Colouring:
    """Result of a colour-by scheme: ``category[i]`` indexes ``labels``/``colours`` (legend order)."""

    title: str
    category: np.ndarray          # int [N]
    labels: tuple[str, ...]
    colours: tuple[RGB, ...]
    notes: tuple[str, ...] = ()   # hover text per label (a clause's text); empty: none

    def note(self, label: str) -> str:
        """The hover text of legend entry ``label`` ('' when it has none)."""
        i = self.labels.index(label) if label in self.labels else -1
        return self.notes[i] if 0 <= i < len(self.notes) else ""

    def rgb(self) -> np.ndarray:
        """uint8 [N, 3] per-agent colours."""
        lut = np.array(self.colours, np.uint8).reshape(-1, 3)
        return lut[self.category] if len(self.category) else np.zeros((0, 3), np.uint8)

    def legend(self, present_only: bool = True) -> list[tuple[str, RGB, int]]:
        """(label, colour, count) for the legend; categories no agent has are left out when asked."""
        counts = np.bincount(self.category, minlength=len(self.labels)) if len(self.category) else \
            np.zeros(len(self.labels), int)
        return [(lab, col, int(c)) for lab, col, c in zip(self.labels, self.colours, counts)
                if c or not present_only]


@dataclass(frozen=True)
class ColourContext:
    """What a scheme may look at: the snapshot at step k and, when recorded, the step records around it."""

    snapshot: WorldSnapshot
    next_actions: np.ndarray | None = None     # decided action of step k (from state k), int [N]
    last_actions: np.ndarray | None = None     # realised action of step k-1 (into state k), int [N]
    fired: np.ndarray | None = None            # fired clause id of step k, int [N]
    clause_labels: Sequence[str] = ()          # label per clause id
    goals_reached: np.ndarray | None = None    # goals reached before state k, int [N]
    clause_texts: Sequence[str] = ()           # full text per clause id (legend hover)


Scheme = Callable[[ColourContext], Colouring]


def detailed_type(agents: AgentTable, i: int) -> str:
    """The agent's icon semantic: its first concept in the reference's icon order, else car/pedestrian."""
    return agent_semantic(int(agents.kinds[i]), agents.concept_names(i))


def _by_kind(ctx: ColourContext) -> Colouring:
    kinds = np.asarray(ctx.snapshot.agents.kinds)
    cat = (kinds == Kind.CAR).astype(np.int64)
    return Colouring("Type", cat, tuple(KIND_COLOURS), tuple(KIND_COLOURS.values()))


def _by_detailed(ctx: ColourContext) -> Colouring:
    labels = tuple(DETAILED_COLOURS)
    a = ctx.snapshot.agents
    cat = np.array([labels.index(detailed_type(a, i)) for i in range(len(a))], np.int64)
    return Colouring("Detailed type", cat, labels, tuple(DETAILED_COLOURS.values()))


def _by_concept(name: str) -> Scheme:
    def scheme(ctx: ColourContext) -> Colouring:
        flags = np.asarray(ctx.snapshot.agents.concepts.get(name, np.zeros(len(ctx.snapshot), bool)))
        cat = np.where(flags, 0, 1).astype(np.int64)
        return Colouring(f"Concept: {name}", cat, (name, f"not {name}"), YES_NO_COLOURS)
    return scheme


def _by_priority(ctx: ColourContext) -> Colouring:
    pr = np.asarray(ctx.snapshot.agents.priorities)
    values = sorted(set(int(p) for p in pr))
    cat = np.array([values.index(int(p)) for p in pr], np.int64)
    return Colouring("Priority", cat, tuple(f"priority {v}" for v in values),
                     tuple(PALETTE[j % len(PALETTE)] for j in range(len(values))))


def _by_action(attr: str, title: str) -> Scheme:
    def scheme(ctx: ColourContext) -> Colouring:
        acts = getattr(ctx, attr)
        # the next action of the newest state is not decided yet; the last one of state 0 does not exist
        labels = ACTION_NAMES + ((NOT_DECIDED,) if attr == "next_actions" else ("no step yet",))
        colours = tuple(ACTION_COLOURS[a] for a in ACTION_NAMES) + (UNKNOWN_COLOUR,)
        n = len(ctx.snapshot)
        cat = np.full(n, len(ACTION_NAMES), np.int64) if acts is None else np.asarray(acts, np.int64)
        return Colouring(title, cat, labels, colours)
    return scheme


def _by_heading(ctx: ColourContext) -> Colouring:
    h = np.asarray(ctx.snapshot.headings, np.int64)
    labels = tuple(HEADING_NAMES[k] for k in (0, 1, 2, 3, -1))
    cat = np.where(h < 0, 4, h)
    colours = (PALETTE[0], PALETTE[1], PALETTE[2], PALETTE[4], UNKNOWN_COLOUR)
    return Colouring("Heading", cat, labels, colours)


def _by_clause(ctx: ColourContext) -> Colouring:
    n = len(ctx.snapshot)
    if ctx.fired is None:
        return Colouring("Fired clause", np.zeros(n, np.int64), (NOT_DECIDED,), (UNKNOWN_COLOUR,))
    fired = np.asarray(ctx.fired, np.int64)
    ids = sorted(set(int(f) for f in fired if f >= 0))
    labels = ["default (no clause)"] + [
        ctx.clause_labels[c] if 0 <= c < len(ctx.clause_labels) else f"clause {c}" for c in ids]
    notes = ["no clause derived an action of the agent's kind: its default action"] + [
        ctx.clause_texts[c] if 0 <= c < len(ctx.clause_texts) else "" for c in ids]
    cat = np.array([0 if f < 0 else 1 + ids.index(int(f)) for f in fired], np.int64)
    colours = (UNKNOWN_COLOUR,) + tuple(PALETTE[c % len(PALETTE)] for c in ids)
    pending = fired == _FIRED_PENDING
    if pending.any():   # the newest state: decided when the simulation steps
        cat[pending] = len(labels)
        labels.append(NOT_DECIDED)
        colours += (UNKNOWN_COLOUR,)
        notes.append("the newest state: the simulation decides it when it steps")
    forced = fired == FIRED_FORCED
    if forced.any():   # an override, not a rule and not the default: its own entry
        cat[forced] = len(labels)
        labels.append("forced (override)")
        colours += (FORCED_COLOUR,)
        notes.append("the action was forced by an override (the user), not derived by the rules")
    return Colouring("Fired clause", cat, tuple(labels), colours, tuple(notes))


def _by_goals(ctx: ColourContext) -> Colouring:
    n = len(ctx.snapshot)
    g = np.zeros(n, np.int64) if ctx.goals_reached is None else np.asarray(ctx.goals_reached, np.int64)
    top = int(g.max()) if n else 0
    labels = tuple(f"{v} goal{'s' if v != 1 else ''}" for v in range(top + 1))
    colours = tuple(_ramp(v / max(top, 1)) for v in range(top + 1))
    return Colouring("Goals reached", g, labels, colours)


def _ramp(t: float) -> RGB:
    """Light-to-dark green ramp for counts."""
    lo, hi = np.array([210, 235, 200]), np.array([20, 110, 50])
    r, g, b = (int(v) for v in lo + (hi - lo) * float(t))
    return r, g, b


def colour_schemes(concepts: Sequence[str] | None = None) -> dict[str, Scheme]:
    """Every colour-by scheme, keyed by its menu label (menu order)."""
    schemes: dict[str, Scheme] = {
        "Type": _by_kind,
        "Detailed type": _by_detailed,
        "Priority": _by_priority,
        "Action (next)": _by_action("next_actions", "Action (next)"),
        "Action (last)": _by_action("last_actions", "Action (last)"),
        "Heading": _by_heading,
        "Fired clause": _by_clause,
        "Goals reached": _by_goals,
    }
    for c in (concepts if concepts is not None else KNOWN_CONCEPTS):
        schemes[f"Concept: {c}"] = _by_concept(c)
    return schemes


DEFAULT_SCHEME = "Type"


def scheme_problem(name: object, concepts: Sequence[str] | None = None) -> str | None:
    """None when ``name`` is a colour-by scheme (see :func:`colour_schemes`), else a message naming it, a close
    match when there is one, and every choice."""
    schemes = colour_schemes(concepts)
    if isinstance(name, str) and name in schemes:
        return None
    hint = ""
    if isinstance(name, str):
        low = name.strip().lower()
        close = ([s for s in schemes if s.lower() == low] or ([s for s in schemes if s.lower().startswith(low)]
                                                               if low else [])
                 or difflib.get_close_matches(name, list(schemes), n=1, cutoff=0.6))
        if close:
            hint = f" (did you mean {' or '.join(repr(c) for c in close[:3])}?)"
    return f"unknown colour-by scheme {name!r}{hint}; choose one of: {', '.join(schemes)}"


def colour_by(name: str, ctx: ColourContext) -> Colouring:
    """Apply the scheme ``name`` (a key of :func:`colour_schemes`); unknown names raise ``KeyError``."""
    schemes = colour_schemes(list(ctx.snapshot.agents.concepts))
    if name not in schemes:
        raise KeyError(f"unknown colour-by scheme {name!r}; choose one of {', '.join(schemes)}")
    return schemes[name](ctx)


def colour_context(episode, k: int, clause_labels: Sequence[str] | None = None,
                   scheme: str | None = None) -> ColourContext:
    """Build the context for state ``k`` of an episode view (EpisodeBuffer or Episode).

    The goals-reached count is an O(k) sum, so it is only computed when ``scheme`` needs it (or is None).
    """
    snap = episode.snapshot(k)
    nxt = fired = last = None
    if k < episode.num_steps:
        rec = episode.step_record(k)
        nxt, fired = np.asarray(rec.decided), np.asarray(rec.fired)
    else:   # the newest state: only what a user override will force is known before the simulation steps
        over = overrides_at(episode.meta, k, len(snap))
        if (over >= 0).any():
            nxt = np.where(over >= 0, over, len(ACTION_NAMES))
            fired = np.where(over >= 0, FIRED_FORCED, _FIRED_PENDING)
    if k > 0:
        last = np.asarray(episode.step_record(k - 1).realised)
    reached = None
    if scheme in (None, "Goals reached"):
        reached = np.asarray(episode.array("reached")[:k]).sum(axis=0) if k > 0 else np.zeros(len(snap), np.int64)
    table = episode.meta.get("clauses", [])
    if clause_labels is None:
        clause_labels = [c.get("label", f"clause {c.get('id')}") for c in table]
    texts = tuple(str(c.get("text", "")) for c in table)
    return ColourContext(snap, nxt, last, fired, tuple(clause_labels), reached, texts)
