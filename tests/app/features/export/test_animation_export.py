"""Exporting from the studio window (pytest-qt): PNG, GIF and image sequences; an unwritable folder is reported;
Cancel while the GIF encodes writes nothing."""
from __future__ import annotations

import pytest

from tests.support.studio import WAIT, simulate

pytest.importorskip("pytestqt")

from PySide6 import QtWidgets  # noqa: E402


def test_export_png_gif_and_images(studio, qtbot, tmp_path):
    from PIL import Image

    simulate(qtbot, studio, 8)
    png = tmp_path / "view.png"
    assert studio.feature("export").export_png(str(png))
    with Image.open(png) as im:
        assert im.size[0] > 100
    done = []
    exp = studio.feature("export").start([0, 2, 4, 6], "gif", tmp_path / "a.gif", width=200, fps=4)
    exp.finished.connect(lambda ok, msg: done.append(ok))
    qtbot.waitUntil(lambda: bool(done), timeout=WAIT)
    assert done == [True]
    with Image.open(tmp_path / "a.gif") as im:
        assert im.n_frames == 4 and im.size[0] == 200
    done.clear()
    exp = studio.feature("export").start([1, 3, 5], "images", tmp_path / "seq", width=160, show_progress=False)
    exp.finished.connect(lambda ok, msg: done.append(ok))
    qtbot.waitUntil(lambda: bool(done), timeout=WAIT)
    assert sorted(p.name for p in (tmp_path / "seq").iterdir()) == [
        "frame_00001.png", "frame_00003.png", "frame_00005.png"]
    done.clear()
    exp = studio.feature("export").start(list(range(9)), "gif", tmp_path / "c.gif", show_progress=False)
    exp.finished.connect(lambda ok, msg: done.append(ok))
    exp.cancel()
    qtbot.waitUntil(lambda: bool(done), timeout=WAIT)
    assert done == [False] and not (tmp_path / "c.gif").exists()


def test_image_sequence_into_an_unwritable_folder_shows_an_error(studio, qtbot, tmp_path):
    simulate(qtbot, studio, 3)
    blocker = tmp_path / "afile"
    blocker.write_text("x")                  # a folder below a regular file can never be created (even by root)
    dlg = studio.feature("export").dialog()
    dlg.kind.setCurrentIndex(1)
    dlg.out_edit.setText(str(blocker / "seq"))
    dlg._start()                             # what OK does; raised OSError out of the slot before
    qtbot.waitUntil(lambda: studio.last_error is not None, timeout=WAIT)
    title, file, problem = studio.last_error
    assert title == "Could not export the steps" and str(blocker / "seq") in file and "folder" in problem
    prog = studio.window.findChild(QtWidgets.QProgressDialog, "exportProgress")
    assert prog is None or not prog.isVisible()
    studio.last_error = None                 # a GIF there fails in the encoder job: also a dialog
    studio.feature("export").start([0, 1], "gif", blocker / "x.gif", width=100)
    qtbot.waitUntil(lambda: studio.last_error is not None, timeout=WAIT)
    assert studio.last_error[0] == "Could not export the steps"


def test_cancel_while_encoding_the_gif_writes_nothing(studio, qtbot, tmp_path, monkeypatch):
    import threading

    from core.view.export import GifBuilder

    simulate(qtbot, studio, 4)
    release = threading.Event()
    real_encode = GifBuilder.encode
    monkeypatch.setattr(GifBuilder, "encode", lambda self: (release.wait(20), real_encode(self))[1])
    out = tmp_path / "c.gif"
    done = []
    exp = studio.feature("export").start(list(range(5)), "gif", out, width=200)
    exp.finished.connect(lambda ok, m: done.append((ok, m)))
    qtbot.waitUntil(lambda: exp.encode_job is not None, timeout=WAIT)    # encoding runs as a job of the runner
    progress = studio.feature("export").progress_dialog
    assert progress.labelText() == "Encoding the GIF…"
    progress.findChild(QtWidgets.QPushButton).click()     # Cancel
    release.set()
    qtbot.waitUntil(lambda: bool(done), timeout=WAIT)
    assert exp.encode_job.wait(10_000) and not exp.encode_job.is_running()
    assert done[0][0] is False and "cancelled" in done[0][1]
    assert not out.exists() and list(tmp_path.glob("c.gif*")) == []
    assert "cancelled" in studio.last_message
