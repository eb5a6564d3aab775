"""Per-frame VAP labels: what one dataset row says about every agent of a rendered frame.

Why here and not in the renderer: the labels come from the simulator's own grounding and decision of the state
shown (never re-derived from pixels), so the boxes, groundings and actions of a row describe exactly one state.
Conventions (docs/vap.md "Dataset"):

* ``direction`` — by default the *upcoming* move, state k → k+1, as the reference's dataset does (it leaks the
  next motion into the model input); ``direction="own"`` uses the heading the agent arrived with (its last
  move), which a single image can show without knowing the future.
* ``h`` — the 9 reasoning inputs per agent: box / image side (4), one-hot direction (left, right, up, down;
  zeros for none), priority / largest priority in the frame.
* ground-truth groundings — unary ``[N, U]`` for every agent; binary ``[N, N, B]`` for every ordered pair that
  lies inside some agent's view (pairs nobody sees stay False, as in the reference); ``sees[a, b]`` when b is in
  a's view (a always sees itself).
* ``action`` — the decided action of the state (the decision, not the realised movement): the first of Slow,
  Normal, Fast, Stop the rules allow. ``label_ref`` is the reference's label, which calls a moving pedestrian
  "Slow" (0); both agree for cars, the only agents supervised and evaluated by default.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from core.base.codes import Action, Heading, Kind

#: Direction names in the one-hot order of ``h`` (none = all zeros).
DIRECTIONS: tuple[str, ...] = ("left", "right", "up", "down")
DIRECTION_NONE = "none"
#: Detailed types in the reference's concept order (first concept that fits the kind wins).
DETAILED_ORDER: tuple[str, ...] = ("ambulance", "bus", "tiro", "old", "young", "police", "reckless")
DETAILED_TYPES: tuple[str, ...] = DETAILED_ORDER + ("normal_car", "normal_pedestrian")
#: Layout of the 9-value reasoning input.
H_FIELDS: tuple[str, ...] = ("x1", "y1", "x2", "y2", "left", "right", "up", "down", "priority")
_HEADING_DIRECTION = {int(Heading.LEFT): "left", int(Heading.RIGHT): "right", int(Heading.UP): "up",
                      int(Heading.DOWN): "down"}
_CAR_CONCEPTS = {"ambulance", "bus", "tiro", "police", "reckless"}
_PED_CONCEPTS = {"old", "young"}


def detailed_type(kind: int, concepts: Sequence[str]) -> str:
    """tiro / bus / ambulance / old / young / police / reckless / normal_car / normal_pedestrian."""
    car = int(kind) == Kind.CAR
    allowed = _CAR_CONCEPTS if car else _PED_CONCEPTS
    cs = set(concepts)
    for c in DETAILED_ORDER:
        if c in cs and c in allowed:
            return c
    return "normal_car" if car else "normal_pedestrian"


def next_directions(pos_now: np.ndarray, pos_next: np.ndarray) -> list[str]:
    """Direction of each agent's move from ``pos_now`` to ``pos_next``: a column change gives right/left, else a
    row change down/up, else none (the reference's rule, which looks one frame ahead)."""
    d = np.asarray(pos_next, np.int64) - np.asarray(pos_now, np.int64)
    out = []
    for dr, dc in d:
        if dc > 0:
            out.append("right")
        elif dc < 0:
            out.append("left")
        elif dr > 0:
            out.append("down")
        elif dr < 0:
            out.append("up")
        else:
            out.append(DIRECTION_NONE)
    return out


def own_directions(headings: np.ndarray) -> list[str]:
    """Direction from each agent's current heading (its last move; none before the first move of a trip)."""
    return [_HEADING_DIRECTION.get(int(h), DIRECTION_NONE) for h in headings]


def direction_heading(name: str) -> int:
    """Heading code of a direction name (Heading.NONE for none)."""
    inv = {v: k for k, v in _HEADING_DIRECTION.items()}
    return inv.get(name, int(Heading.NONE))


def h_vectors(boxes: np.ndarray, directions: Sequence[str], priorities: np.ndarray, image_side: int) -> np.ndarray:
    """float32 [N, 9]: normalised box, one-hot direction, priority / the frame's largest priority."""
    n = len(directions)
    h = np.zeros((n, len(H_FIELDS)), np.float32)
    if n == 0:
        return h
    h[:, :4] = np.asarray(boxes, np.float32) / float(image_side)
    for i, d in enumerate(directions):
        if d in DIRECTIONS:
            h[i, 4 + DIRECTIONS.index(d)] = 1.0
    pr = np.asarray(priorities, np.float32)
    top = float(pr.max()) if pr.size else 0.0
    h[:, 8] = pr / top if top > 0 else 0.0
    return h


def reference_label(kind: int, action: int) -> int:
    """The reference's label code: cars as decided; a pedestrian that is not stopped is 0 ("Slow")."""
    if int(kind) == Kind.CAR:
        return int(action)
    return int(Action.STOP) if int(action) == Action.STOP else int(Action.SLOW)


@dataclass(frozen=True)
class GroundTruth:
    """The state's ground-truth scene graph: unary [N, U], binary [N, N, B], sees [N, N] (all bool)."""

    unary: np.ndarray
    binary: np.ndarray
    sees: np.ndarray


def ground_truth(grounding) -> GroundTruth:
    """Scene graph of one state from the simulator's :class:`core.logic.grounding.grounder.Grounding` of it."""
    onto = grounding.ontology
    n = len(grounding.names)
    sees = np.zeros((n, n), bool)
    ent, valid = grounding.ent, grounding.valid
    rows = np.repeat(np.arange(ent.shape[0]), ent.shape[1])
    cols = ent.reshape(-1)
    ok = valid.reshape(-1)
    sees[rows[ok], cols[ok]] = True
    unary = np.stack([np.asarray(grounding.unary(p.name), bool) for p in onto.unary], axis=1) if onto.unary \
        else np.zeros((n, 0), bool)
    # a pair is written when some agent's view holds both of its agents
    s = sees.astype(np.int32)
    covered = (s.T @ s) > 0
    a = np.arange(n)[:, None]
    b = np.arange(n)[None, :]
    if onto.binary:
        binary = np.stack([np.asarray(grounding.pair(p.name, a, b), bool) & covered for p in onto.binary], axis=2)
    else:
        binary = np.zeros((n, n, 0), bool)
    return GroundTruth(unary, binary, sees)
