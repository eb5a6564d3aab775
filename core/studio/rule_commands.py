"""The rule and ontology editors' model and their undoable edits (no Qt).

Why a workspace apart from the running configuration: the text in the rule editor is the project's rule file as the
user writes it — half-typed, with errors, comments and disabled clauses — while the simulation keeps running the
rules last *applied*. :class:`RuleWorkspace` holds the editor texts (one :class:`RuleDocument` per rule file of the
project) and the edited ontology; Apply turns them into a configuration (:meth:`RuleWorkspace.config_for`), and
saving the project writes the texts as they are (``Project.texts``), never a re-serialisation that would drop the
user's comments.

Edits are :class:`~core.studio.stack.Command`s on the session's stack, so Edit ▸ Undo, the History panel and the
unsaved-changes flag cover them:

* :class:`EditRuleText` — one change of a document's text. Consecutive keystrokes merge into one undo step while
  they form a *typing burst*: the same document, each edit continuing where the previous one left the caret
  (typing on, or backspacing), less than :data:`BURST_SECONDS` apart, and no line break typed. Pastes, clause
  toggles, comment toggles and replacements are single steps (``typing=False``).
* :class:`AddConceptPredicate`, :class:`RemovePredicate`, :class:`SetPredicateParams` — ontology edits, validated
  by the ontology loader before they are pushed (a bad parameter is a :class:`~core.base.errors.ConfigError` naming it).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Mapping

from core.base.errors import ConfigError, LogiCityError
from core.io.yamlio import dump_yaml, loads_yaml
from core.logic.lang.ontology import Ontology, ontology_from_data
from core.logic.lang.program import parse_rules
from core.logic.lang.registry import REGISTRY
from core.studio.events import EmitterGroup, EventEmitter
from core.studio.stack import Command

__all__ = ["RuleDocument", "RuleWorkspace", "EditRuleText", "AddConceptPredicate", "RemovePredicate",
           "SetPredicateParams", "SetPredicateGrounding", "BURST_SECONDS", "MERGE_RULE_TEXT", "text_diff", "concept_groundings"]

#: Longest pause (seconds) between two keystrokes of one typing burst (one undo step).
BURST_SECONDS = 1.0
#: merge id of :class:`EditRuleText` (other commands use small numbers; see core/studio/commands.py)
MERGE_RULE_TEXT = 1201


def text_diff(before: str, after: str) -> tuple[int, str, str]:
    """The single changed stretch between two texts: (position, removed text, inserted text).

    Runs on every keystroke: the common prefix and suffix are found by bisection over slice comparisons (done in
    C), not character by character in Python, which a long rule file would make noticeable while typing."""
    n = min(len(before), len(after))
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if before[:mid] == after[:mid]:
            lo = mid
        else:
            hi = mid - 1
    p = lo
    lo, hi = 0, n - p
    lb, la = len(before), len(after)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if before[lb - mid:] == after[la - mid:]:
            lo = mid
        else:
            hi = mid - 1
    s = lo
    return p, before[p:lb - s], after[p:la - s]


@dataclass
class RuleDocument:
    """One rule file of the project: ``key`` (its project role, e.g. ``rules``), a title for its tab, the file it
    came from (None for a rule set that was never a file) and the current text."""

    key: str
    title: str
    path: Path | None
    text: str


class WorkspaceEvents(EmitterGroup):
    """The events of a :class:`RuleWorkspace` (one emitter per annotated name)."""

    text: EventEmitter
    ontology: EventEmitter

    def __init__(self, source: Any) -> None:
        super().__init__(source, *WorkspaceEvents.__annotations__)


class RuleWorkspace:
    """The rule editor's documents and the edited ontology. Events (``workspace.events.<name>``): ``text``
    (``key``, ``value`` = new text, ``command`` = the command or None), ``ontology`` (``value`` = the new
    :class:`Ontology`)."""

    def __init__(self, documents: list[RuleDocument], ontology: Ontology, section: str | None = None) -> None:
        self.events = WorkspaceEvents(self)
        self.documents = {d.key: d for d in documents}
        self.ontology = ontology
        self.ontology_changed = False
        #: the rule section that drives the simulation (None: the file's only one)
        self.section = section

    @classmethod
    def from_config(cls, config: Any, texts: Mapping[str, str] | None = None) -> "RuleWorkspace":
        """The workspace of a simulation configuration: its rule file's own text (``texts`` overrides, e.g. a
        project's unsaved texts), else the parsed rules written out."""
        texts = dict(texts or {})
        src = (config.files or {}).get("rules")
        path = Path(src) if src else None
        text = texts.get("rules")
        if text is None and path is not None:
            try:
                text = path.read_text(encoding="utf-8-sig")
            except OSError:
                text = None
        if text is None:
            text = config.rules.to_text()
        title = path.name if path is not None else "rules.rules"
        return cls([RuleDocument("rules", title, path, text)], config.ontology, config.rule_section)

    # ---- texts ------------------------------------------------------------------------------------------------
    def text(self, key: str = "rules") -> str:
        return self.documents[key].text

    def set_text(self, key: str, text: str, source: Any = None) -> None:
        doc = self.documents[key]
        if doc.text != text:
            doc.text = text
            self.events.text.emit(key=key, value=text, command=source)

    # ---- ontology ---------------------------------------------------------------------------------------------
    def set_ontology(self, ontology: Ontology) -> None:
        self.ontology = ontology
        self.ontology_changed = True
        self.events.ontology.emit(value=ontology)

    def predicate_kinds(self) -> dict[str, bool]:
        """name → is an action (what the highlighter needs)."""
        return {p.name: p.is_action for p in self.ontology.predicates}

    # ---- applying and saving ----------------------------------------------------------------------------------
    def rule_file(self, key: str = "rules", strict: bool = True):
        """The document parsed against the edited ontology (raises a located RuleError when it has errors).
        ``strict=False`` accepts a program that is not stratified (the analysis then shows its cycles)."""
        doc = self.documents[key]
        return parse_rules(doc.text, self.ontology, str(doc.path) if doc.path else doc.title, strict=strict)

    def config_for(self, config: Any, key: str = "rules") -> Any:
        """``config`` running the edited rules and ontology. The file roles that no longer describe what runs are
        dropped, so the episode embeds the texts actually used (core.sim.replay.config_texts)."""
        rules = self.rule_file(key)
        rules.program(self.section)     # the section the simulation runs must still exist (KeyError otherwise)
        drop = {"rules"} | ({"ontology"} if self.ontology_changed else set())
        files = {k: v for k, v in (config.files or {}).items() if k not in drop}
        return replace(config, rules=rules, ontology=self.ontology, files=files)

    def texts(self) -> dict[str, str]:
        """The part texts a project save writes (role → text): the rule file as typed, and the ontology when
        it was edited."""
        out = {k: d.text for k, d in self.documents.items()}
        if self.ontology_changed:
            out["ontology"] = self.ontology.to_yaml()
        return out


class EditRuleText(Command):
    """Replace a document's text ``before`` → ``after`` (see the module docstring for merging)."""

    id = MERGE_RULE_TEXT

    def __init__(self, workspace: RuleWorkspace, key: str, before: str, after: str, *, typing: bool = True,
                 text: str | None = None, when: float | None = None) -> None:
        self.workspace = workspace
        self.key = key
        self.before = before
        self.after = after
        self.typing = typing
        self.when = time.monotonic() if when is None else when
        pos, removed, inserted = text_diff(before, after)
        self.caret = pos + len(inserted)          # where the caret is after this edit
        self.line_break = "\n" in inserted
        self.text = text or ("Type in " + workspace.documents[key].title if typing else "Edit rules")

    def do(self, target: Any) -> None:
        self.workspace.set_text(self.key, self.after, self)

    def undo(self, target: Any) -> None:
        self.workspace.set_text(self.key, self.before, self)

    def merge_with(self, other: Command) -> bool:
        if not (isinstance(other, EditRuleText) and other.workspace is self.workspace and other.key == self.key
                and self.typing and other.typing and not self.line_break and not other.line_break
                and 0 <= other.when - self.when <= BURST_SECONDS and other.before == self.after):
            return False
        pos, removed, inserted = text_diff(other.before, other.after)
        typed_on = pos == self.caret and not removed
        backspaced = not inserted and pos + len(removed) == self.caret
        if not (typed_on or backspaced):
            return False
        self.after = other.after
        self.when = other.when
        self.caret = other.caret
        return True


def concept_groundings() -> list[str]:
    """Registry functions a *concept* predicate (a unary semantic one, like IsAmbulance) may use."""
    return [s.name for s in REGISTRY.values() if s.arity == 1 and s.kind == "semantic"]


def _rebuild(onto: Ontology, predicates: list[dict[str, Any]]) -> Ontology:
    """A new ontology from edited predicate entries, validated exactly as a file is (errors name the item)."""
    data = onto.to_dict()
    data["predicates"] = predicates
    try:
        return ontology_from_data(loads_yaml(dump_yaml(data), "<ontology editor>"), onto.source)
    except LogiCityError as exc:
        raise ConfigError(exc.message) from None


class _OntologyEdit(Command):
    def __init__(self, workspace: RuleWorkspace) -> None:
        self.workspace = workspace
        self.old: Ontology | None = None
        self.old_changed = False
        self.new: Ontology | None = None

    def do(self, target: Any) -> None:
        if self.old is None:
            self.old, self.old_changed = self.workspace.ontology, self.workspace.ontology_changed
        assert self.new is not None
        self.workspace.set_ontology(self.new)

    def undo(self, target: Any) -> None:
        assert self.old is not None
        self.workspace.set_ontology(self.old)
        self.workspace.ontology_changed = self.old_changed


def _predicate(onto: Ontology, name: str, action_refused: str | None = None):
    """Predicate ``name`` of ``onto``; a ConfigError when there is none or, with ``action_refused`` (why), when it is
    an action predicate."""
    p = onto.get(name)
    if p is None:
        raise ConfigError(f"no predicate {name!r} in the ontology")
    if action_refused is not None and p.is_action:
        raise ConfigError(f"{name} {action_refused}")
    return p


def _with_changed(onto: Ontology, name: str, change: Callable[[dict], None]) -> Ontology:
    """``onto`` with the dict of predicate ``name`` changed in place by ``change``."""
    preds = [p.to_dict() for p in onto.predicates]
    for d in preds:
        if d["name"] == name:
            change(d)
    return _rebuild(onto, preds)


class AddConceptPredicate(_OntologyEdit):
    """Add a unary semantic predicate ``name`` grounded by registry function ``grounding`` (after the last
    non-action predicate: the SPF observation layout grows at its end)."""

    def __init__(self, workspace: RuleWorkspace, name: str, grounding: str, description: str = "") -> None:
        super().__init__(workspace)
        onto = workspace.ontology
        if name in onto:
            raise ConfigError(f"the ontology already has a predicate {name!r}")
        if grounding not in concept_groundings():
            raise ConfigError(f"{grounding!r} is not a concept grounding (choose one of "
                              f"{', '.join(concept_groundings())})")
        preds = [p.to_dict() for p in onto.predicates]
        at = max((i + 1 for i, p in enumerate(onto.predicates) if not p.is_action), default=0)
        preds.insert(at, {"name": name, "arity": 1, "kind": "semantic", "grounding": grounding,
                          "description": description or REGISTRY[grounding].doc})
        self.new = _rebuild(onto, preds)
        self.text = f"Add predicate {name}"


class RemovePredicate(_OntologyEdit):
    """Remove a non-action predicate (rules that use it get an unknown-predicate diagnostic at once)."""

    def __init__(self, workspace: RuleWorkspace, name: str) -> None:
        super().__init__(workspace)
        onto = workspace.ontology
        _predicate(onto, name, "is an action predicate; actions cannot be removed")
        self.new = _rebuild(onto, [q.to_dict() for q in onto.predicates if q.name != name])
        self.text = f"Remove predicate {name}"


class SetPredicateParams(_OntologyEdit):
    """Set the grounding parameters of predicate ``name`` (validated by the registry's checks)."""

    def __init__(self, workspace: RuleWorkspace, name: str, params: Mapping[str, Any]) -> None:
        super().__init__(workspace)
        onto = workspace.ontology
        _predicate(onto, name)
        self.new = _with_changed(onto, name, lambda d: d.update(params=dict(params)))
        self.text = f"Set parameters of {name}"


class SetPredicateGrounding(_OntologyEdit):
    """Ground predicate ``name`` by another registry function of its arity (its parameters back to that function's
    defaults); ``None`` declares it not grounded yet (always false)."""

    def __init__(self, workspace: RuleWorkspace, name: str, grounding: str | None) -> None:
        super().__init__(workspace)
        onto = workspace.ontology
        _predicate(onto, name, "is an action predicate: it is decided by the rules, not grounded")

        def regrounded(d: dict) -> None:
            d["grounding"] = grounding
            d.pop("params", None)

        self.new = _with_changed(onto, name, regrounded)
        self.text = f"Ground {name} by {grounding or 'nothing'}"
