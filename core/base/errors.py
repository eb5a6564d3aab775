"""User-facing error types.

Every problem caused by user input (a YAML file, a rule text, a map, an episode file, a checkpoint) is reported
as a :class:`LogiCityError` subclass that names the file, the 1-based line (and column when known) and the
problem, so the GUI can show it in a dialog and the CLI can print it, without a traceback.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


class LogiCityError(Exception):
    """Base class of all errors caused by user input.

    ``str(err)`` gives ``file:line:col: message`` (the parts that are known).
    """

    def __init__(self, message: str, file: str | Path | None = None, line: int | None = None,
                 col: int | None = None) -> None:
        self.message = message
        self.file = str(file) if file is not None else None
        self.line = line
        self.col = col
        super().__init__(self.__str__())

    def location(self) -> str:
        parts = []
        if self.file:
            parts.append(self.file)
        if self.line is not None:
            parts.append(str(self.line))
            if self.col is not None:
                parts.append(str(self.col))
        return ":".join(parts)

    def __str__(self) -> str:  # pragma: no cover - trivial
        loc = self.location()
        return f"{loc}: {self.message}" if loc else self.message

    def with_file(self, file: str | Path) -> "LogiCityError":
        """Return the same error with ``file`` filled in when it was not known where it was raised."""
        if self.file is None:
            self.file = str(file)
            self.args = (self.__str__(),)
        return self


class ConfigError(LogiCityError):
    """A malformed or inconsistent configuration file (map, agents, ontology, mode, project)."""


class RuleError(LogiCityError):
    """A rule text that cannot be parsed or is inconsistent with its ontology."""


class PolicyError(ConfigError):
    """A policy file that cannot be loaded, or a policy that returns something other than an action 0..3."""


class EpisodeFileError(LogiCityError):
    """An episode / dataset / demonstration file that cannot be read."""


def decode_error_location(exc: UnicodeDecodeError) -> tuple[int, int]:
    """1-based (line, column) of the byte a UTF-8 decoder refused, counted in the text decoded before it, so a
    file that is not UTF-8 is reported at ``file:line:col`` like every other input error."""
    data = bytes(exc.object)
    before = data[:exc.start]
    line = before.count(b"\n") + 1
    col = len(before[before.rfind(b"\n") + 1:].decode("utf-8", "replace")) + 1
    return line, col


def read_text_file(path: str | Path, limit: int, error: type["LogiCityError"], what: str = "file",
                   kind: str = "file") -> str:
    """The UTF-8 text of a user's file (a byte-order mark dropped), or ``error`` naming the file and the problem:
    missing; a folder ("is a folder, not a <kind>"); larger than ``limit`` characters ("<what> too large", refused
    before reading: even 4-byte characters would be too many); not UTF-8 (at its line:col); unreadable. One reader
    for rule and YAML files, so they fail alike."""
    p = Path(path)
    try:
        size = p.stat().st_size
        if size > 4 * limit:
            raise error(f"{what} too large ({size} bytes; the limit is {limit} characters)", p, 1, 1)
        return p.read_text(encoding="utf-8-sig")  # a byte-order mark (Windows editors) is not part of the text
    except FileNotFoundError:
        raise error("file not found", p) from None
    except IsADirectoryError:
        raise error(f"is a folder, not a {kind}", p) from None
    except UnicodeDecodeError as exc:
        line, col = decode_error_location(exc)
        raise error(f"not UTF-8 text: byte 0x{exc.object[exc.start]:02x} cannot be decoded", p, line, col) from None
    except OSError as exc:
        raise error(f"cannot read file: {exc.strerror or exc}", p) from None


@dataclass(frozen=True)
class SourcePos:
    """A position in a source file (1-based line and column)."""

    line: int
    col: int


class RouteError(LogiCityError):
    """No path can be planned (car cannot enter a lane, lane graph disconnected, bad map geometry)."""
