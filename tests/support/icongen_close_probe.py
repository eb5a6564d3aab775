"""Close the studio (or a Render dock) while icon generation is busy in its QThread (run as a script).

Used by tests/app/test_icongen_close.py in a fresh interpreter: the point is how the *process* ends (exit code,
"QThread: Destroyed while thread … is still running" on stderr), which a pytest process cannot observe on itself.

    python tests/support/icongen_close_probe.py MODEL SCENARIO SLOW_SECONDS LIBRARY

Scenarios:

* ``window-load``: the model load (``from_pretrained``, which cannot be interrupted) is made slow; the main
  window is closed while it runs.
* ``window-post``: the post-processing of the first image is made slow; the main window is closed while it runs
  (the finished image must still be saved).
* ``dock-quit``: a stand-alone Render dock (with its generation controller on a job runner) is closed during a
  slow load and the application quits at once.

Prints one JSON line (what was seen) and exits with the application's exit code.
"""
from __future__ import annotations

import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("LOGICITY_DATA_DIR", tempfile.mkdtemp(prefix="logicity-probe-"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def main(model: str, scenario: str, slow: float, library_dir: str) -> int:
    from PySide6 import QtCore, QtWidgets

    import core.icongen.generator as generator

    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication([])
    busy = threading.Event()        # set by the worker thread when it enters the slow part
    seen: dict = {"scenario": scenario, "messages": []}

    # the slow part: loading the model, or post-processing a finished image
    target = "_load_pipeline" if scenario in ("window-load", "dock-quit") else "postprocess"
    original = getattr(generator, target)

    def slowed(*a, **kw):
        busy.set()
        time.sleep(slow)
        return original(*a, **kw)

    setattr(generator, target, slowed)

    from core.render.library import IconLibrary

    library = IconLibrary(library_dir)
    if scenario.startswith("window"):
        from app.shell.settings import make_settings
        from app.shell.window import MainWindow
        from tests.support.driver import ScriptedDialogs, StudioDriver

        dialogs = ScriptedDialogs()
        win = StudioDriver(MainWindow(make_settings(Path(tempfile.mkdtemp()) / "s.ini"), dialogs=dialogs), dialogs)
        win.answers["unsaved"] = "discard"
        win.window.resize(1280, 820)
        win.window.show()
        dock = win.panel("render")
        dock.library = library
        dock.gallery.library = library
        win.window.statusBar().messageChanged.connect(lambda m: m and seen["messages"].append(m))
        closer = win.window
    else:
        from app.features.icons.controller import IconGenController
        from app.shell.jobs import JobRunner
        from widgets.icons.render_dock import RenderDock

        dock = RenderDock(library, model=model)
        runner = JobRunner()
        dock.controller = IconGenController(dock, runner)   # as the studio's Render panel factory attaches it
        dock.show()
        closer = dock
    dock.model_edit.setText(model)
    dock._check_model(apply_suggestions=False)
    dock.set_semantic("bus")
    dock.count_spin.setValue(2)
    dock.steps_spin.setValue(2)
    dock.guidance_spin.setValue(1.0)
    dock.random_seed_check.setChecked(False)
    dock.seed_spin.setValue(7)
    assert dock.start_generation(), dock.status_label.text()

    def close_when_busy() -> None:
        if not busy.is_set():
            QtCore.QTimer.singleShot(20, close_when_busy)
            return
        seen["closed_at"] = time.monotonic()
        closer.close()
        seen["visible_after_close"] = closer.isVisible()
        seen["dock_status"] = dock.status_label.text()
        if scenario == "dock-quit":
            app.quit()

    def give_up() -> None:
        seen["timed_out"] = True
        print(json.dumps(seen), flush=True)
        os._exit(3)

    QtCore.QTimer.singleShot(20, close_when_busy)
    # generous: three probes start torch and diffusers at once, and a loaded 2-core box takes minutes for that
    QtCore.QTimer.singleShot(int((slow + 150) * 1000), give_up)
    rc = app.exec()
    seen["exec_returned_after"] = round(time.monotonic() - seen.get("closed_at", time.monotonic()), 2)
    seen["saved"] = [r.id for r in library.list()]
    print(json.dumps(seen), flush=True)
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]))
