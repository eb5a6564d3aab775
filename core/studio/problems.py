"""Problems found in what the user is editing: the city, the agents, the rules. One list, shown in the Problems
panel, each entry linked to the cells (city, agent starts) or the lines (rule files) involved.

Why one shape: the city editor's validation, the agent editor's checks and the rule diagnostics are separate
checkers; the panel, the "refuse to simulate on errors" check and the CLI only need severity, text and location.
Checkers are registered by name (:func:`register_checker`) and run by :func:`collect`; each returns a list of
:class:`Problem`. Errors block starting a simulation (the message names the first few); warnings do not.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

ERROR = "error"
WARNING = "warning"


@dataclass(frozen=True)
class Problem:
    """One finding. ``cells`` are (row, col) map cells to highlight; ``agent`` names an agent; ``file``/``line``/
    ``column`` locate it in a text file (1-based); ``source`` is the checker's name ("city", "agents", "rules")."""

    severity: str
    message: str
    source: str
    cells: tuple[tuple[int, int], ...] = ()
    agent: str | None = None
    file: str | None = None
    line: int | None = None
    column: int | None = None
    code: str = ""
    #: False for an error in something the simulation does not run yet (a rule text not applied): listed, but it
    #: does not stop the simulation
    blocks: bool = True

    @property
    def is_error(self) -> bool:
        return self.severity == ERROR

    def location(self) -> str:
        """A short place for lists: "file:line:col", the agent, or the first cell."""
        if self.file:
            return f"{self.file}:{self.line or 1}:{self.column or 1}"
        if self.agent:
            return self.agent
        if self.cells:
            r, c = self.cells[0]
            return f"cell ({r}, {c})" + (f" +{len(self.cells) - 1}" if len(self.cells) > 1 else "")
        return ""


Checker = Callable[[Any], Iterable[Problem]]
_CHECKERS: dict[str, Checker] = {}


def register_checker(name: str, checker: Checker, replace: bool = False) -> None:
    """``checker(session)`` returns the problems of one part of the session (an empty list when it is fine)."""
    if name in _CHECKERS and not replace:
        raise ValueError(f"a problem checker named {name!r} is already registered")
    _CHECKERS[name] = checker


def unregister_checker(name: str) -> None:
    _CHECKERS.pop(name, None)


def collect(session: Any, only: Iterable[str] | None = None) -> list[Problem]:
    """Every registered checker's problems (errors first, then by source and message)."""
    names = list(_CHECKERS) if only is None else [n for n in only if n in _CHECKERS]
    found: list[Problem] = []
    for name in names:
        found.extend(_CHECKERS[name](session))
    return sorted(found, key=lambda p: (not p.is_error, p.source, p.message))


def blocking_message(problems: Iterable[Problem], limit: int = 3) -> str | None:
    """Why a simulation may not start ("2 errors: …"), or None when there is no error."""
    errors = [p for p in problems if p.is_error and p.blocks]
    if not errors:
        return None
    shown = "; ".join(f"{p.message}" + (f" ({p.location()})" if p.location() else "") for p in errors[:limit])
    more = f"; and {len(errors) - limit} more" if len(errors) > limit else ""
    return f"{len(errors)} error{'s' if len(errors) != 1 else ''} to fix first (see Problems): {shown}{more}"


@dataclass
class ProblemList:
    """The last collected problems (the Problems panel's model)."""

    problems: list[Problem] = field(default_factory=list)

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.is_error]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.problems if not p.is_error]
