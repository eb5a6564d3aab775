"""Icon generation as a job of the studio's :class:`app.shell.jobs.JobRunner`, and the controller of the Render panel.

Why a job function: the generator's callbacks run in the job's thread and only send messages (progress, status,
each saved icon), which the runner delivers in the GUI thread; the GUI never touches torch objects. Cancelling
sets the job's event, read after every denoising step, so it works while the thread is busy inside diffusers.
Each image is written to the library before its message is sent, so cancelling or closing the studio never loses a
finished image. A model that is loading cannot be interrupted: the runner's registry keeps the job until it ends
and quitting waits for it, saying :data:`WAITING_MESSAGE`.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from app.shell.features import FeatureController
from app.shell.jobs import CANCELLED, FAILED, JobContext, JobHandle, JobOutcome, JobRunner
from core.icongen.generator import GenerationRequest
from core.render.library import IconLibrary

WAITING_MESSAGE = "waiting for the icon generator to stop… (a model that is loading cannot be interrupted; " \
                  "finished images are saved)"
KIND = "icon generation"


@dataclass(frozen=True)
class IconSaved:
    """A partial result of the job: an icon saved in the library."""

    icon_id: str


def generate_icons(ctx: JobContext, model: str | Path | None, request: GenerationRequest, library: IconLibrary,
                   device: str = "auto", dtype: str | None = None, save_status: str = "pending") -> int:
    """Run ``request`` (in the job's thread): progress ``(images_done, images_total, step, steps, first image of
    the batch being denoised or -1)``, status lines, an :class:`IconSaved` per image. Returns the images saved.

    Errors a user can act on (no model, bad path) are LogiCityErrors; out of memory says what to try."""
    from core.icongen.generator import IconGenerator, save_to_library

    saved = 0

    def on_progress(p) -> None:
        ctx.progress(p.images_done, p.images_total, p.step, p.steps, p.batch[0] if p.batch else -1)

    def on_image(icon) -> None:
        nonlocal saved
        rec = save_to_library(library, icon, request.semantic, save_status)
        saved += 1
        ctx.post(IconSaved(rec.id))

    try:
        gen = IconGenerator(model, device=device, dtype=dtype)
        gen.generate(request, on_progress=on_progress, on_image=on_image, should_cancel=lambda: ctx.cancelled,
                     status=ctx.status)
    except MemoryError:
        raise MemoryError("out of memory: try a smaller batch or size, or a GPU") from None
    return saved


class IconGenController(FeatureController):
    """Runs the generations a :class:`widgets.icons.render_dock.RenderDock` asks for, one at a time, on ``jobs``.

    ``idle`` is emitted when a run has ended (the window waits for it when closing during a model load)."""

    waiting_message = WAITING_MESSAGE

    def __init__(self, dock, jobs: JobRunner) -> None:
        super().__init__(dock)
        self.dock = dock
        self.jobs = jobs
        self.handle: JobHandle | None = None
        self._saved = 0
        dock.generateRequested.connect(self.start)
        dock.cancelRequested.connect(self.cancel)

    def start(self, order) -> bool:
        """Start generating ``order`` (a :class:`widgets.icons.render_dock.IconGenOrder`); False while one runs."""
        if self.handle is not None:
            return False
        library = self.dock.library
        self._saved = 0
        h = self.jobs.start(lambda ctx: generate_icons(ctx, order.model, order.request, library, device=order.device),
                            kind=KIND, key="icongen", report=False, waiting_message=WAITING_MESSAGE)
        self.handle = h
        h.progress.connect(lambda v: self.dock.show_progress(*v))
        h.status.connect(self.dock.show_status)
        h.posted.connect(self._on_saved)
        h.finished.connect(self._on_finished)
        self.dock.generation_started(order.request)
        return True

    def cancel(self) -> None:
        if self.handle is not None:
            self.handle.cancel()

    def is_running(self) -> bool:
        return self.handle is not None

    def shutdown(self, wait_ms: int = 60_000) -> bool:
        """Cancel a running generation and wait up to ``wait_ms`` for it; True when none is running any more.

        False means it is still busy in something that cannot be interrupted (loading a model, saving an image):
        the job lives on (the runner's registry keeps it and quitting waits for it); ``idle`` follows when it
        ends. Images finished so far are saved."""
        h = self.handle
        if h is None:
            return True
        h.cancel()
        self.dock.cancel_btn.setEnabled(False)
        if h.wait(wait_ms):
            return True
        self.dock.show_status(WAITING_MESSAGE[:1].upper() + WAITING_MESSAGE[1:])
        return False

    def _on_saved(self, value) -> None:
        if isinstance(value, IconSaved):
            self._saved += 1
            self.dock.add_image(value.icon_id)

    def _on_finished(self, outcome: JobOutcome) -> None:
        self.handle = None
        n = outcome.result if isinstance(outcome.result, int) else self._saved
        error = outcome.error.message if outcome.status == FAILED and outcome.error is not None else None
        self.dock.generation_finished(n, outcome.status == CANCELLED, error)
        self.idle.emit()
