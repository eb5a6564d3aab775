"""Render dock (pytest-qt, offscreen): background generation with progress, cancel, gallery accept/reject,
``iconsChanged`` reaching a renderer at once, reuse of seeds, clear messages without a model.

The dock only asks for generations; the studio's IconGenController runs them on a JobRunner, so the generation
tests attach one (as the Render panel's factory does)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from PySide6.QtCore import Qt

from core.render.icons import IconSet
from core.render.library import IconLibrary
from core.render.renderer import Renderer
from widgets.icons.render_dock import RenderDock

pytestmark = [pytest.mark.gui, pytest.mark.usefixtures("icon_user_data")]


@pytest.fixture
def library(tmp_path) -> IconLibrary:
    return IconLibrary(tmp_path / "lib")


@pytest.fixture
def runner(qapp):
    from app.shell.jobs import JobRunner

    r = JobRunner()
    yield r
    assert r.shutdown(60_000), "a generation was left running"


def make_dock(qtbot, library, model, runner=None, **form) -> RenderDock:
    dock = RenderDock(library, model=str(model) if model else None)
    qtbot.addWidget(dock)
    if runner is not None:
        from app.features.icons.controller import IconGenController

        dock.controller = IconGenController(dock, runner)
    dock.set_semantic(form.get("semantic", "bus"))
    dock.count_spin.setValue(form.get("n", 2))
    dock.steps_spin.setValue(form.get("steps", 2))
    dock.guidance_spin.setValue(1.0)
    dock.random_seed_check.setChecked(False)
    dock.seed_spin.setValue(form.get("seed", 5))
    return dock


def test_generate_in_background_with_step_progress(qtbot, library, tiny_sd_model, runner):
    dock = make_dock(qtbot, library, tiny_sd_model, runner, n=3, steps=2, seed=5)
    assert dock.model_info.text().startswith("folder: StableDiffusionPipeline")
    progress = []
    with qtbot.waitSignal(dock.generationFinished, timeout=120_000) as fin:
        qtbot.mouseClick(dock.generate_btn, Qt.MouseButton.LeftButton)
        assert dock.is_generating() and not dock.generate_btn.isEnabled() and dock.cancel_btn.isEnabled()
        dock.controller.handle.progress.connect(progress.append)
    assert fin.args == [3, False]
    assert not dock.is_generating() and dock.generate_btn.isEnabled()
    assert dock.progress_bar.value() == 1000 and dock.status_label.text().startswith("Done: 3")
    steps_seen = {(first, step) for _d, _t, step, _s, first in progress if first >= 0}
    assert {(k, s) for k in range(3) for s in (1, 2)} <= steps_seen
    recs = library.list("bus")
    assert sorted(r.seed for r in recs) == [5, 6, 7]
    assert len(dock.gallery.ids()) == 3 and set(dock.gallery.ids()) == {r.id for r in recs}
    assert all(r.meta["prompt"].endswith(dock.style_edit.text()) for r in recs)


def test_accept_reject_emit_icons_changed_and_renderer_updates(qtbot, library, tiny_sd_model, runner):
    from core.base.codes import Heading, Kind
    from tests.support.render import small_city, snapshot

    dock = make_dock(qtbot, library, tiny_sd_model, runner, n=2, semantic="car")
    with qtbot.waitSignal(dock.generationFinished, timeout=120_000):
        dock.start_generation()
    icons = IconSet.load(library=library)
    renderer = Renderer(small_city(), icons, 8)
    state = {"icons": icons}

    def on_change(semantic: str) -> None:  # what the map view does
        state["icons"] = state["icons"].reload(semantic, library)
        renderer.set_icons(state["icons"])

    dock.iconsChanged.connect(on_change)
    first = dock.gallery.ids()[0]
    dock.gallery.select([first])
    with qtbot.waitSignal(dock.iconsChanged, timeout=5000) as sig:
        qtbot.mouseClick(dock.gallery.accept_btn, Qt.MouseButton.LeftButton)
    assert sig.args == ["car"] and library.get(first).status == "accepted"
    assert state["icons"].sources["car"] == (first,)
    frame = renderer.render(snapshot([(Kind.CAR, [], (15, 20), int(Heading.UP))]))
    assert frame.placements[0].variant == 0
    expected = renderer.sprite_rgba("car", 0, int(Heading.UP))
    x1, y1, x2, y2 = frame.boxes[0]
    assert (y2 - y1, x2 - x1) == expected.shape[:2]
    dock.gallery.select([first])
    with qtbot.waitSignal(dock.iconsChanged, timeout=5000):
        dock.gallery.set_selected_status("rejected")
    assert library.get(first).status == "rejected"
    assert not state["icons"].from_library["car"]  # back to the default art


def test_cancel_keeps_finished_images(qtbot, library, tiny_sd_model, runner):
    dock = make_dock(qtbot, library, tiny_sd_model, runner, n=30, steps=3, semantic="police")
    first_image = []

    def on_image(saved):
        first_image.append(saved.icon_id)
        dock.cancel_generation()

    with qtbot.waitSignal(dock.generationFinished, timeout=120_000) as fin:
        dock.start_generation()
        dock.controller.handle.posted.connect(on_image)
    n, cancelled = fin.args
    assert cancelled and 1 <= n < 30
    assert len(library.list("police")) == n and len(dock.gallery.ids()) == n
    assert "Cancelled" in dock.status_label.text() and "kept" in dock.status_label.text()


def test_reuse_fills_form_from_sidecar(qtbot, library, tiny_sd_model, runner):
    dock = make_dock(qtbot, library, tiny_sd_model, runner, n=1, semantic="tiro", seed=1234)
    dock.prompts_edit.setPlainText("green learner car")
    with qtbot.waitSignal(dock.generationFinished, timeout=120_000):
        dock.start_generation()
    rec = library.list("tiro")[0]
    dock.seed_spin.setValue(1)
    dock.prompts_edit.setPlainText("something else")
    dock.count_spin.setValue(9)
    dock.batch_spin.setValue(4)
    dock.size_combo.setCurrentIndex(1)          # 512 × 512: not what the tiny model made
    dock.post_combo.setCurrentIndex(3)          # keep as is
    dock.random_seed_check.setChecked(True)
    dock.gallery.select([rec.id])
    qtbot.mouseClick(dock.gallery.reuse_btn, Qt.MouseButton.LeftButton)
    assert dock.seed_spin.value() == 1234 and dock.descriptions() == ["green learner car"]
    assert dock.count_spin.value() == 1 and dock.batch_spin.value() == 1 and not dock.random_seed_check.isChecked()
    req = dock.build_request()
    assert req.prompts[0] == rec.prompt and req.post == rec.meta["post"]
    assert req.width is None                    # the model's default size made the original
    # and the same image comes out again
    with qtbot.waitSignal(dock.generationFinished, timeout=120_000):
        dock.start_generation()
    again = [r for r in library.list("tiro") if r.id != rec.id]
    assert len(again) == 1
    with Image.open(rec.raw_png) as a, Image.open(again[0].raw_png) as b:
        assert a.size == b.size and np.array_equal(np.asarray(a), np.asarray(b))


def test_random_seed_is_shown_before_the_run(qtbot, library, tiny_sd_model, runner):
    dock = make_dock(qtbot, library, tiny_sd_model, runner, n=1, seed=0)
    dock.random_seed_check.setChecked(True)
    with qtbot.waitSignal(dock.generationFinished, timeout=120_000):
        dock.start_generation()
    shown = dock.seed_spin.value()
    assert library.list("bus")[0].seed == shown


def test_without_a_model_the_dock_explains(qtbot, library):
    dock = RenderDock(library, model=None)
    qtbot.addWidget(dock)
    assert "No text-to-image model is configured" in dock.model_info.text()
    assert dock.start_generation() is False and not dock.is_generating()
    assert dock.gallery.list.count() == 0


def test_model_that_fails_to_load_reports_in_the_dock(qtbot, library, tmp_path, runner):
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "model_index.json").write_text(json.dumps({"_class_name": "StableDiffusionPipeline",
                                                         "unet": ["diffusers", "UNet2DConditionModel"]}))
    dock = make_dock(qtbot, library, broken, runner, n=1)
    with qtbot.waitSignal(dock.generationFinished, timeout=120_000) as fin:
        assert dock.start_generation()
    assert fin.args == [0, False]
    assert "Generation failed" in dock.status_label.text()


def test_semantic_switch_loads_bank_style_and_gallery(qtbot, library, tiny_sd_model):
    from PIL import Image

    library.add("office", Image.new("RGBA", (20, 20), (9, 9, 9, 255)), {"seed": 3})
    dock = make_dock(qtbot, library, tiny_sd_model, semantic="office")
    assert "office building" in dock.style_edit.text() and len(dock.gallery.ids()) == 1
    assert len(dock.descriptions()) == 4  # suggested from the bank for the default count
    dock.set_semantic("crossing")
    assert "seamless" in dock.style_edit.text() and dock.gallery.ids() == []
    assert dock.build_request().post == "tile"
    dock.gallery.filter.setCurrentIndex(2)  # accepted only
    dock.set_semantic("office")
    assert dock.gallery.ids() == []
    dock.gallery.filter.setCurrentIndex(0)
    assert len(dock.gallery.ids()) == 1
    assert np.asarray(Image.open(library.list("office")[0].png)).shape == (20, 20, 4)


def _write_bad_icons(root: Path) -> dict[str, Path]:
    """Three walking-street icons with broken sidecars (wrong seed type, wrong postprocess type, not JSON)."""
    from PIL import Image

    folder = root / "walking_street"
    folder.mkdir(parents=True, exist_ok=True)
    sides = {}
    for stem, text in (("x1", '{"seed": "abc"}'), ("x2", '{"seed": 4, "postprocess": "oops"}'),
                       ("x3", '{"seed": 4,')):
        Image.new("RGBA", (16, 16), (9, 9, 9, 255)).save(folder / f"{stem}.png")
        (folder / f"{stem}.json").write_text(text)
        sides[stem] = folder / f"{stem}.json"
    return sides


def test_bad_sidecars_are_flagged_in_the_gallery_not_raised(qtbot, library):
    sides = _write_bad_icons(library.root)
    dock = RenderDock(library, model=None)  # building the gallery must not raise ValueError (seed "abc")
    qtbot.addWidget(dock)
    dock.set_semantic("walking_street")
    gallery = dock.gallery
    assert len(gallery.ids()) == 3
    for i in range(gallery.list.count()):
        item = gallery.list.item(i)
        stem = item.data(Qt.ItemDataRole.UserRole).split("/")[1]
        assert item.text().startswith("⚠"), item.text()
        assert str(sides[stem]) in item.toolTip()
    fields = {"x1": "'seed'", "x2": "'postprocess'", "x3": "not valid JSON"}
    for stem, words in fields.items():
        gallery.select([f"walking_street/{stem}"])  # selecting x2 must not raise AttributeError
        text = gallery.details.text().replace("\u200b", "")
        assert words in text and sides[stem].name in text and "⚠" in text
    gallery.select(["walking_street/x1"])
    qtbot.mouseClick(gallery.reuse_btn, Qt.MouseButton.LeftButton)  # reuse with a bad seed: seed kept as it was
    assert dock.count_spin.value() == 1
    with qtbot.waitSignal(dock.iconsChanged, timeout=5000):
        gallery.set_selected_status("accepted")
    assert library.get("walking_street/x1").status == "accepted"


def test_the_dock_asks_for_generations_and_runs_none_itself(qtbot, library, tiny_sd_model):
    """Without a controller attached, Generate only emits the order (the widget drives no thread)."""
    dock = make_dock(qtbot, library, tiny_sd_model, n=2, seed=9)
    orders = []
    dock.generateRequested.connect(orders.append)
    assert dock.start_generation() is False and not dock.is_generating()
    (order,) = orders
    assert order.model == str(tiny_sd_model) and order.request.n == 2 and order.request.seed == 9
    assert "no icon generator is attached" in dock.status_label.text()
    assert dock.generate_btn.isEnabled() and not library.list("bus")
