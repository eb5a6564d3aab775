"""Studio entry point: ``run_studio(argv)`` (``python main.py [PROJECT] [--screenshot out.png]``).

Without a project the bundled default city (configs/modes/default.yaml) opens, ready to play. ``--screenshot``
opens the studio, lets it settle (optionally simulating some steps and selecting an agent), saves the main
window as a PNG and exits; it works with ``QT_QPA_PLATFORM=offscreen`` as well as under Xvfb.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Protocol, cast


class _ColourSchemes(Protocol):
    """What a screenshot run asks of the View feature's controller (the shell never imports a feature)."""

    def set_colour_scheme(self, name: str) -> None: ...


def _window_size(text: str) -> tuple[int, int]:
    """argparse type for ``--size WxH``."""
    w, sep, h = text.lower().partition("x")
    try:
        size = (int(w), int(h))
    except ValueError:
        size = (0, 0)
    if not sep or min(size) < 100 or max(size) > 10000:
        raise argparse.ArgumentTypeError(f"expected WIDTHxHEIGHT in pixels (100..10000), e.g. 1440x900, got {text!r}")
    return size


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="main.py", description="LogiCity Studio")
    p.add_argument("project", nargs="?", help="project folder, its project.yaml, a mode file, or an episode file "
                   "(.npz, e.g. from 'main.py simulate --out', or a reference LogiCity run .pkl, read without "
                   "executing pickle code; shown as a read-only replay) "
                   "(default: the bundled default city)")
    p.add_argument("--screenshot", metavar="OUT.png", help="save the main window as PNG once settled, then exit")
    p.add_argument("--steps", type=int, default=0, help="with --screenshot: simulate this many steps first")
    p.add_argument("--select", metavar="AGENT", help="select this agent (e.g. Car_3; ids are case-sensitive)")
    p.add_argument("--colour-by", metavar="SCHEME", help="colour agents by this scheme (e.g. 'Action (next)')")
    p.add_argument("--show-step", type=int, help="with --screenshot: show this step after simulating")
    p.add_argument("--size", type=_window_size, default=(1440, 900),
                   help="with --screenshot: window size WxH (default 1440x900)")
    p.add_argument("--dock", action="append", default=[],
                   help="with --screenshot: also save this dock alone as OUT-<dock>.png (repeatable)")
    p.add_argument("--settle-ms", type=int, default=700, help="with --screenshot: wait this long before the grab")
    p.add_argument("--seed", type=int, help="random seed for a new simulation")
    return p


def agent_problem(name: str, names: list[str] | tuple[str, ...]) -> str | None:
    """None when ``name`` is one of the agent ids ``names``, else a message naming it and a few valid ids."""
    if name in names:
        return None
    import difflib

    same = [n for n in names if n.lower() == name.lower()]
    close = same or difflib.get_close_matches(name, list(names), n=1, cutoff=0.6)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    shown = ", ".join(names[:8]) + (f", … ({len(names)} agents)" if len(names) > 8 else "")
    return f"no agent {name!r} in this city{hint}; agent ids are case-sensitive, e.g. {shown}"


def run_studio(argv: list[str]) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.colour_by is not None:   # checked before any window opens: a bad scheme would break every redraw
        from core.view.colouring import scheme_problem

        problem = scheme_problem(args.colour_by)
        if problem is not None:
            parser.print_usage(sys.stderr)
            print(f"{parser.prog}: error: --colour-by: {problem}", file=sys.stderr)
            return 2
    from PySide6 import QtCore, QtWidgets

    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication(sys.argv[:1])
    app.setApplicationName("LogiCity Studio")
    app.setOrganizationName("LogiCity")
    from app.shell import gui_gc

    gui_gc.install()   # cyclic garbage is freed in the GUI thread, never in a job thread (app/shell/gui_gc.py)
    from app.shell.dialogs import UnattendedDialogs
    from app.shell.settings import make_settings
    from app.shell.window import MainWindow
    from core.base.paths import DEFAULT_MODE

    settings = make_settings()
    if args.screenshot:   # a screenshot must not depend on (or change) the user's remembered layout
        import tempfile

        settings = make_settings(Path(tempfile.mkdtemp(prefix="logicity-shot-")) / "studio.ini")
        # unattended: never wait for an answer (e.g. "Unsaved changes" on quit)
        win = MainWindow(settings, dialogs=UnattendedDialogs(), unattended=True)
        win.resize(*args.size)
    else:
        win = MainWindow(settings)
    host, session = win.host, win.session
    projects, playback = host.projects, host.playback
    if args.colour_by:
        session.restore_view(colour_by=args.colour_by)
    target = args.project or DEFAULT_MODE
    if args.seed is not None:
        from core.project.load import is_project

        if not is_project(target):
            from core.project.model import new_project
            from core.sim.config import load_mode

            try:
                project = new_project(load_mode(target), seed=args.seed)
                projects.install(project, None)
                opened = True
            except Exception:  # noqa: BLE001 - fall back to open_path, which reports the error
                opened = projects.open_path(target, ask_save=False)
        else:
            opened = projects.open_path(target, ask_save=False)
    else:
        opened = projects.open_path(target, ask_save=False)
    if args.select and session.project is not None:
        problem = agent_problem(args.select, tuple(session.project.config.agents.table().names))
        if problem is not None:
            print(f"{parser.prog}: error: --select: {problem}", file=sys.stderr)
            session.mark_saved()   # nothing of the user's to save: quit without asking
            win.close()
            return 2
    win.show()
    if not args.screenshot:
        if args.select:
            playback.when_ready(lambda: host.selection.select_by_name(args.select))
        return app.exec()

    out = Path(args.screenshot)
    result = {"rc": 0 if opened else 1}  # a project that could not be opened: the grab shows the error, rc 1

    def grab() -> None:
        app.processEvents()
        host.drawing.flush_redraw()
        app.processEvents()
        out.parent.mkdir(parents=True, exist_ok=True)
        pix = win.grab()
        if not pix.save(str(out), "PNG"):
            print(f"could not write {out}", file=sys.stderr)
            result["rc"] = 1
        else:
            print(f"saved {out} ({pix.width()}x{pix.height()})")
        for name in args.dock:
            dock = win.docks.get(name)
            if dock is None:
                print(f"no dock {name!r} (docks: {', '.join(win.docks)})", file=sys.stderr)
                result["rc"] = 1
                continue
            p = out.with_name(f"{out.stem}-{name}{out.suffix}")
            if not dock.isVisible():  # a hidden (or tabbed-away) dock: show it so the grab has content
                dock.show()
                dock.raise_()
                app.processEvents()
            dock.grab().save(str(p), "PNG")
            print(f"saved {p}")
        session.mark_saved()   # a screenshot run has nothing to save
        win.close()
        app.quit()

    def settled() -> None:
        if args.select:
            host.selection.select_by_name(args.select)
        if args.colour_by:
            cast(_ColourSchemes, win.features["view"]).set_colour_scheme(args.colour_by)
        if args.show_step is not None:
            playback.set_cursor(args.show_step)
        QtCore.QTimer.singleShot(args.settle_ms, grab)

    def ready() -> None:
        if args.steps > 0:
            playback.run_steps_then(args.steps, settled)
        else:
            settled()

    if session.project is None:   # the project failed to open: the error dialog is part of the picture
        QtCore.QTimer.singleShot(args.settle_ms, grab)
    else:
        playback.when_ready(ready)
    def give_up() -> None:   # never hang: after two minutes report where every thread is and exit
        import faulthandler

        print(f"screenshot timed out (steps recorded: {session.num_steps})", file=sys.stderr)
        faulthandler.dump_traceback(file=sys.stderr, all_threads=True)
        result.update(rc=2)
        session.mark_saved()   # a screenshot run has nothing to save: quit without asking
        win.close()
        app.quit()

    QtCore.QTimer.singleShot(120_000, give_up)
    app.exec()
    return result["rc"]
