"""Deterministic natural-language descriptions of a frame's true groundings (docs/study.md "Scene descriptions").

Why this shape: a question in a human or LLM study must show exactly the facts the rules decide on, and the
same frame must always read the same (so that two raters, or a rater and a model, see identical text and a
study file can be re-checked later). The input is a :class:`SceneFacts` — the entities of the asked agent's
field of view with their true unary predicates and every true binary relation among them, taken from the
grounding the simulator decided on — and the output is plain text built from fixed templates, in a fixed order:

1. the viewpoint sentence (who is asked about, how many entities it sees),
2. one sentence per entity: concepts and kind (``IsCar`` + ``IsTiro`` → "Car_3 is a tiro car."),
3. intersections (``IsAtInter`` / ``IsInInter``),
4. distance relations (``IsClose``, ``NextTo``; symmetric pairs said once),
5. sides (``LeftOf``, ``RightOf``),
6. priorities (``HigherPri`` as an order "A > B = C"),
7. collisions (``CollidingClose``),
8. any other true predicate of an unknown name, as ``Pred(a, b)``.

Nothing is sorted by dictionary or set order: entities keep the view order (the asked agent first, then the
others in agent order) and relations keep entity order, so the text is a pure function of the facts.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

__all__ = ["SceneFacts", "describe", "facts_from_grounding", "KIND_PREDICATES", "CONCEPT_WORDS", "TEMPLATE_VERSION"]

#: Bumped whenever a template below changes; stored with every question so old study files stay explainable.
TEMPLATE_VERSION = 1

#: Kind predicates and their noun.
KIND_PREDICATES: dict[str, str] = {"IsCar": "car", "IsPedestrian": "pedestrian"}
#: Concept predicates and their word (order = the order they are listed in).
CONCEPT_WORDS: dict[str, str] = {
    "IsAmbulance": "ambulance", "IsBus": "bus", "IsPolice": "police", "IsTiro": "tiro",
    "IsReckless": "reckless", "IsOld": "old", "IsYoung": "young",
}
_INTERSECTION = {"IsAtInter": "at an intersection", "IsInInter": "in an intersection"}
#: Symmetric distance relations: (template for a pair).
_SYMMETRIC = {"IsClose": "{a} and {b} are close to each other", "NextTo": "{a} and {b} are next to each other"}
_ONE_WAY = {
    "IsClose": "{a} is close to {b}", "NextTo": "{a} is next to {b}",
    "LeftOf": "{a} is on the left of {b}", "RightOf": "{a} is on the right of {b}",
    "CollidingClose": "{a} is about to collide with {b}",
}
_DISTANCE = ("IsClose", "NextTo")
_SIDES = ("LeftOf", "RightOf")


@dataclass(frozen=True)
class SceneFacts:
    """The true groundings of one agent's view at one frame, as plain data (JSON in the question bank)."""

    ego: str
    entities: tuple[str, ...]                        # the ego first, then the others of its view
    unary: Mapping[str, tuple[str, ...]]             # entity -> true unary predicates (ontology order)
    relations: tuple[tuple[str, str, str], ...]      # (predicate, a, b): predicate(a, b) is true
    step: int = 0
    world: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"ego": self.ego, "step": self.step, "world": self.world, "entities": list(self.entities),
                "unary": {e: list(self.unary.get(e, ())) for e in self.entities},
                "relations": [list(r) for r in self.relations]}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "SceneFacts":
        ents = tuple(str(e) for e in d["entities"])
        unary = {str(e): tuple(str(p) for p in d.get("unary", {}).get(e, ())) for e in ents}
        rel = tuple((str(p), str(a), str(b)) for p, a, b in d.get("relations", ()))
        return cls(str(d["ego"]), ents, unary, rel, int(d.get("step", 0)), str(d.get("world", "")))


def facts_from_grounding(grounding, ego: int, world: str = "") -> SceneFacts:
    """The facts of ``ego``'s view from a :class:`core.logic.grounding.grounder.Grounding` (the one the engine decided on,
    so CollidingClose coin flips are the ones that counted)."""
    view = grounding.ego_view(ego)
    ents = tuple(r.name for r in view.rows)
    unary = {r.name: tuple(r.unary) for r in view.rows}
    rel = tuple((p, r.name, o) for r in view.rows for p, o in r.relations)
    return SceneFacts(view.ego_name, ents, unary, rel, int(view.step), world)


def _join(items: Sequence[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def _entity_sentence(name: str, preds: Iterable[str]) -> str:
    preds = tuple(preds)
    kind = next((KIND_PREDICATES[p] for p in preds if p in KIND_PREDICATES), "entity")
    concepts = [CONCEPT_WORDS[p] for p in CONCEPT_WORDS if p in preds]
    noun = (", ".join(concepts) + " " if concepts else "") + kind   # "a reckless, tiro car"
    art = "an" if noun[0] in "aeiou" else "a"
    return f"{name} is {art} {noun}."


def _priority_order(entities: Sequence[str], pairs: set[tuple[str, str]]) -> str | None:
    """``A > B = C > D`` when HigherPri over the view is a strict weak order (it is for priority numbers); None
    otherwise (the caller then lists the pairs)."""
    above = {e: sum((e, o) in pairs for o in entities) for e in entities}
    groups: dict[int, list[str]] = {}
    for e in entities:
        groups.setdefault(above[e], []).append(e)
    levels = sorted(groups, reverse=True)
    # check: e > o exactly when e's level is strictly higher
    for e in entities:
        for o in entities:
            if ((e, o) in pairs) != (above[e] > above[o]):
                return None
    return " > ".join(" = ".join(groups[k]) for k in levels)


def describe(facts: SceneFacts, *, header: bool = True) -> str:
    """The description text of ``facts`` (see the module docstring for the order)."""
    ents = list(facts.entities)
    order = {e: i for i, e in enumerate(ents)}
    rel = [r for r in facts.relations if r[1] in order and r[2] in order]
    lines: list[str] = []
    if header:
        others = len(ents) - 1
        lines.append(f"We look at {facts.ego}. It sees {others} other entit{'y' if others == 1 else 'ies'}"
                     + (f": {_join(ents[1:])}." if others else "."))
    lines.append(" ".join(_entity_sentence(e, facts.unary.get(e, ())) for e in ents))
    # intersections
    inter = []
    for pred, words in _INTERSECTION.items():
        who = [e for e in ents if pred in facts.unary.get(e, ())]
        if who:
            inter.append(f"{_join(who)} {'is' if len(who) == 1 else 'are'} {words}.")
    lines.append(" ".join(inter) if inter else "Nobody is at or in an intersection.")
    # distance relations: symmetric pairs said once, in entity order
    dist = []
    for pred in _DISTANCE:
        true = {(a, b) for p, a, b in rel if p == pred}
        for a, b in sorted(true, key=lambda ab: (order[ab[0]], order[ab[1]])):
            if (b, a) in true:
                if order[a] < order[b]:
                    dist.append(_SYMMETRIC[pred].format(a=a, b=b) + ".")
            else:
                dist.append(_ONE_WAY[pred].format(a=a, b=b) + ".")
    lines.append(" ".join(dist) if dist else "No two entities are close to or next to each other.")
    sides = [_ONE_WAY[p].format(a=a, b=b) + "." for p, a, b in _sorted(rel, order, _SIDES)]
    if sides:
        lines.append(" ".join(sides))
    pri = {(a, b) for p, a, b in rel if p == "HigherPri"}
    if pri:
        text = _priority_order(ents, pri)
        if text is not None:
            lines.append(f"Priority, highest first: {text}.")
        else:
            lines.append(" ".join(f"{a} has higher priority than {b}." for _, a, b in
                                  _sorted(rel, order, ("HigherPri",))))
    coll = [_ONE_WAY["CollidingClose"].format(a=a, b=b) + "." for _, a, b in _sorted(rel, order, ("CollidingClose",))]
    if coll:
        lines.append(" ".join(coll))
    known = set(KIND_PREDICATES) | set(CONCEPT_WORDS) | set(_INTERSECTION)
    other_u = [f"{p}({e})" for e in ents for p in facts.unary.get(e, ()) if p not in known]
    known_b = set(_ONE_WAY) | {"HigherPri"}
    other_b = [f"{p}({a}, {b})" for p, a, b in rel if p not in known_b]
    if other_u or other_b:
        lines.append("Also true: " + ", ".join(other_u + other_b) + ".")
    return "\n".join(lines)


def _sorted(rel: Sequence[tuple[str, str, str]], order: Mapping[str, int], preds: Sequence[str]):
    """Relations of ``preds`` in (predicate order, first entity, second entity) order."""
    rank = {p: i for i, p in enumerate(preds)}
    sel = [r for r in rel if r[0] in rank]
    return sorted(sel, key=lambda r: (rank[r[0]], order[r[1]], order[r[2]]))
