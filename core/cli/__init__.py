"""Headless sub-commands of ``main.py``.

Each module in this package named in :data:`COMMANDS` defines ``register(subparsers)`` which adds its parser
and sets ``func=<callable(args) -> int>``. ``main.py`` imports every one of them to build its parser (also for
``--help``), so a command module imports at its top only what ``--help`` loads anyway; a command's own machinery
(the simulator, the rule language, the icon generator, torch, diffusers, z3) is imported in its ``func``.
"""
from __future__ import annotations

import argparse
import difflib
import importlib
import importlib.util
import os
import re
import sys
from pathlib import Path

from core.base.errors import LogiCityError

#: sub-command module names (core/cli/<name>.py), in help order.
COMMANDS: tuple[str, ...] = ("simulate", "render", "icons", "spf", "rules", "episode", "vap", "study", "export")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="main.py",
        description="LogiCity Studio. Without a sub-command, opens the studio (optionally on PROJECT).",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        try:
            mod = importlib.import_module(f"core.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"core.cli.{name}":
                continue  # command not built yet
            raise
        mod.register(sub)
    return parser


def known_commands() -> list[str]:
    return [n for n in COMMANDS if importlib.util.find_spec(f"core.cli.{n}") is not None]


def looks_like_command(word: str) -> bool:
    """True when ``word`` (the first argument of ``main.py``) reads as a sub-command rather than a project:
    a bare word (letters, digits, '-', '_'; no path separator or file extension) naming no existing file or
    folder. ``main.py simulat`` is then a typo to report, while ``main.py path/to/project`` still opens the
    studio on that project."""
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]*", word):
        return False
    return not Path(word).exists()


def unknown_command_message(word: str) -> str:
    """``unknown command 'simulat' (did you mean 'simulate'?) ...`` for a word that is no sub-command."""
    commands = known_commands()
    close = difflib.get_close_matches(word.lower(), commands, n=1, cutoff=0.6)
    hint = f" (did you mean '{close[0]}'?)" if close else ""
    return (f"unknown command {word!r}{hint}; commands: {', '.join(commands)} (python main.py --help). "
            f"To open a project give its folder or project.yaml; there is no file or folder {word!r} here.")


def run_cli(argv: list[str]) -> int:
    """Parse ``argv`` (without the program name) and run the sub-command; user errors print cleanly."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except LogiCityError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into `head` & co. that stopped reading: not an error of ours
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # so the interpreter's final flush does not raise again
        return 141
