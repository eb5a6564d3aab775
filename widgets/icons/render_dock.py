"""Render dock: generate icons with a local diffusion model, review them, accept or reject them.

Give it an :class:`IconLibrary`; it emits ``iconsChanged(semantic)`` whenever the accepted icons of a semantic
change, so the map view can reload them at once (``IconSet.reload`` + ``Renderer.set_icons``).

A view, not a runner: Generate emits ``generateRequested(IconGenOrder)`` and Cancel ``cancelRequested()``; whoever
runs generation (the studio's :class:`app.features.icons.controller.IconGenController`, on the job runner) answers through
:meth:`RenderDock.generation_started`, :meth:`show_progress`, :meth:`show_status`, :meth:`add_image` and
:meth:`generation_finished`. Every finished image is saved with its sidecar before it appears, so nothing is lost on
cancel.
"""
from __future__ import annotations

import html
import re
import secrets
from dataclasses import dataclass

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from core.base.errors import LogiCityError
from core.icongen.generator import SCHEDULERS, GenerationRequest
from core.icongen.models import ModelError, configured_model, resolve_model, set_configured_model, suggested_settings
from core.icongen.prompts import PromptBank
from core.render.library import IconLibrary
from core.render.semantics import LABELS, SEMANTICS
from widgets.icons.icon_gallery import IconGallery, compact

SIZES = (("model default", None), ("512 × 512", 512), ("768 × 768", 768), ("1024 × 1024", 1024))
POSTS = (("from prompt bank", None), ("remove background", "alpha"), ("make seamless tile", "tile"),
         ("keep as is", "none"))
MAX_SEED = 2 ** 31 - 1


@dataclass(frozen=True)
class IconGenOrder:
    """What Generate asks for: the model (folder or file), the validated request and the device."""

    model: str
    request: GenerationRequest
    device: str = "auto"


class ElidedLabel(QLabel):
    """A one-line label that shows as much of its text as fits and "…" for the rest; the tooltip has it all.

    ``text()`` is the full text. Used for the model line so a long path or help text never makes the dock taller
    or wider."""

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(text, parent)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.NoTextInteraction)

    def setText(self, text: str) -> None:  # noqa: N802 - Qt naming
        super().setText(text)
        self.setToolTip(text)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt naming
        return QSize(min(self.fontMetrics().horizontalAdvance(self._line()), 300), self.fontMetrics().height() + 2)

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt naming
        return QSize(20, self.fontMetrics().height() + 2)

    def _line(self) -> str:
        return " ".join(self.text().split())

    def paintEvent(self, _event) -> None:  # noqa: N802 - Qt naming
        p = QPainter(self)
        rect = self.contentsRect()
        shown = self.fontMetrics().elidedText(self._line(), Qt.TextElideMode.ElideRight, rect.width())
        self.style().drawItemText(p, rect, int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter),
                                  self.palette(), self.isEnabled(), shown, self.foregroundRole())
        p.end()


class _StatusLabel(QLabel):
    """The job's status: word-wrapped (errors must be readable) and taking no room while there is nothing to say."""

    def __init__(self) -> None:
        super().__init__("")
        self.setWordWrap(True)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.setVisible(False)

    def setText(self, text: str) -> None:  # noqa: N802 - Qt naming
        super().setText(text)
        self.setVisible(bool(text))


def _as_html(text: str) -> str:
    """A help text written for an 80-column terminal (hard line breaks, "  * " bullets, `code`) as HTML that
    wraps to any width: lines are joined into paragraphs and bullets, back-quoted parts shown as code."""
    blocks: list[str] = []
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        new_block = not blocks or line.startswith("  * ") or blocks[-1].rstrip().endswith((".", ":", ";")) \
            and not line.startswith("    ")
        if new_block:
            blocks.append(stripped)
        else:
            blocks[-1] += " " + stripped
    out = []
    for b in blocks:
        b = html.escape(b, quote=False)
        b = re.sub(r"`([^`]+)`", r"<code>\1</code>", b)
        out.append(f"<p style='margin:0 0 4px {12 if b.startswith('* ') else 0}px'>"
                   + ("• " + b[2:] if b.startswith("* ") else b) + "</p>")
    return "".join(out)


def _scrolled(page: QWidget) -> QScrollArea:
    area = QScrollArea()
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    area.setWidget(page)
    return area


class RenderDock(QWidget):
    """Icon generation form + gallery. ``iconsChanged(semantic)`` after accept/reject/import."""

    iconsChanged = Signal(str)
    #: images saved, cancelled
    generationFinished = Signal(int, bool)
    #: Generate was pressed with a valid form (an IconGenOrder); the runner answers with generation_started()
    generateRequested = Signal(object)
    cancelRequested = Signal()

    def __init__(self, library: IconLibrary, bank: PromptBank | None = None, model: str | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.library = library
        self.running_request: GenerationRequest | None = None   # set while a generation runs (see the docstring)
        self._failed: str | None = None
        self._model_error: str | None = None   # why the configured model cannot be used (see _check_model)
        self._bank_error: str | None = None
        try:
            self.bank = bank or PromptBank.load()
        except LogiCityError as exc:  # a broken user copy must not break the dock
            self._bank_error = str(exc)
            from core.icongen.prompts import DEFAULT_PROMPT_FILE

            self.bank = PromptBank.load(DEFAULT_PROMPT_FILE)
        self._build()
        self.model_edit.setText(model if model is not None else (configured_model() or ""))
        self._check_model(apply_suggestions=True)
        self._semantic_changed()

    # ------------------------------------------------------------------------------------------- layout ----
    def _build(self) -> None:
        self.model_edit = QLineEdit()
        self.model_edit.setPlaceholderText("diffusers folder (model_index.json) or .safetensors file")
        self.browse_dir_btn = QPushButton("Folder…")
        self.browse_file_btn = QPushButton("File…")
        self.model_info = QLabel()
        self.model_info.setWordWrap(True)
        self.model_info.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.semantic_combo = QComboBox()
        self.semantic_combo.setToolTip("What to draw: the map or agent semantic the icons are for")
        for s in SEMANTICS:
            self.semantic_combo.addItem(LABELS[s], s)
        self.prompts_edit = QPlainTextEdit()
        self.prompts_edit.setPlaceholderText("one subject description per line; image k uses line k (cycled)")
        self.prompts_edit.setMaximumHeight(90)
        self.suggest_btn = QPushButton("Suggest from bank")
        self.style_edit = QLineEdit()
        self.style_edit.setToolTip("appended to every description: keeps viewpoint and look consistent")
        self.negative_edit = QLineEdit()
        self.count_spin = QSpinBox()
        self.count_spin.setRange(1, 500)
        self.count_spin.setValue(4)
        self.steps_spin = QSpinBox()
        self.steps_spin.setRange(1, 200)
        self.steps_spin.setValue(20)
        self.guidance_spin = QDoubleSpinBox()
        self.guidance_spin.setRange(0.0, 30.0)
        self.guidance_spin.setSingleStep(0.5)
        self.guidance_spin.setValue(7.0)
        self.seed_spin = QSpinBox()
        self.seed_spin.setRange(0, MAX_SEED)
        self.seed_spin.setToolTip("first seed; image k uses seed + k (shown on every result, reusable)")
        self.random_seed_check = QCheckBox("random each run")
        self.random_seed_check.setToolTip("draw a new random first seed every time Generate is pressed")
        self.random_seed_check.setChecked(True)
        self.batch_spin = QSpinBox()
        self.batch_spin.setRange(1, 16)
        self.size_combo = QComboBox()
        for label, _ in SIZES:
            self.size_combo.addItem(label)
        self.scheduler_combo = QComboBox()
        for name in SCHEDULERS:
            self.scheduler_combo.addItem(name)
        self.post_combo = QComboBox()
        for label, _ in POSTS:
            self.post_combo.addItem(label)
        self.device_combo = QComboBox()
        for d in ("auto", "cuda", "mps", "cpu"):
            self.device_combo.addItem(d)

        self.generate_btn = QPushButton("Generate")
        self.generate_btn.setDefault(True)
        self.cancel_btn = QPushButton("Cancel")
        self.cancel_btn.setEnabled(False)
        self.progress_bar = QProgressBar()
        self.progress_bar.setRange(0, 1000)
        self.progress_bar.setTextVisible(False)
        self.progress_bar.setMinimumWidth(40)
        self.status_label = _StatusLabel()
        self.model_summary = ElidedLabel()
        self.model_help_btn = QPushButton("How to set up a model…")
        self.model_help_btn.setToolTip("Show where to put Stable Diffusion weights and how to point the studio at "
                                       "them (Model tab)")
        self.import_btn = QPushButton("Import…")
        self.import_btn.setToolTip("Add your own PNG/JPEG icons for this semantic (accepted at once)")

        self.gallery = IconGallery(self.library)
        self.gallery.add_button(self.import_btn)
        for b in (self.generate_btn, self.cancel_btn, self.import_btn, self.model_help_btn, self.browse_dir_btn,
                  self.browse_file_btn):
            compact(b)

        # --- always visible (compact, so the gallery keeps the height when the dock is small): what to draw,
        # Generate/Cancel/progress, the model in one line, the job's status
        run_row = QHBoxLayout()
        run_row.addWidget(self.semantic_combo, 2)
        run_row.addWidget(self.generate_btn)
        run_row.addWidget(self.cancel_btn)
        run_row.addWidget(self.progress_bar, 1)
        model_line = QHBoxLayout()
        model_line.addWidget(self.model_summary, 1)
        model_line.addWidget(self.model_help_btn)

        # --- tabs: the results (default), the generation settings, the model set-up
        form_page = QWidget()
        form = QFormLayout(form_page)
        prompts_row = QVBoxLayout()
        prompts_row.addWidget(self.prompts_edit)
        prompts_row.addWidget(self.suggest_btn, 0, Qt.AlignmentFlag.AlignRight)
        form.addRow("Prompts", prompts_row)
        form.addRow("Style", self.style_edit)
        form.addRow("Negative", self.negative_edit)
        # two fields per row, so the page fits the dock's usual width without scrolling sideways
        for left, w1, right, w2 in (("Count", self.count_spin, "Batch", self.batch_spin),
                                    ("Steps", self.steps_spin, "Guidance", self.guidance_spin),
                                    ("Size", self.size_combo, "Scheduler", self.scheduler_combo),
                                    ("After", self.post_combo, "Device", self.device_combo)):
            row = QHBoxLayout()
            row.addWidget(w1, 1)
            row.addWidget(QLabel(right))
            row.addWidget(w2, 1)
            form.addRow(left, row)
        seed_row = QHBoxLayout()
        seed_row.addWidget(self.seed_spin, 1)
        seed_row.addWidget(self.random_seed_check)
        form.addRow("Seed", seed_row)

        model_page = QWidget()
        mb = QVBoxLayout(model_page)
        model_row = QHBoxLayout()
        model_row.addWidget(self.model_edit, 1)
        model_row.addWidget(self.browse_dir_btn)
        model_row.addWidget(self.browse_file_btn)
        mb.addLayout(model_row)
        mb.addWidget(self.model_info)
        mb.addStretch(1)

        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self.gallery, "Results")
        self.tabs.addTab(_scrolled(form_page), "Prompts && settings")
        self.model_tab = _scrolled(model_page)
        self.tabs.addTab(self.model_tab, "Model")
        self.tabs.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Expanding)

        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 6, 6, 6)
        lay.setSpacing(4)
        lay.addLayout(run_row)
        lay.addLayout(model_line)
        lay.addWidget(self.status_label)
        lay.addWidget(self.tabs, 1)

        self.browse_dir_btn.clicked.connect(self._browse_dir)
        self.browse_file_btn.clicked.connect(self._browse_file)
        self.model_edit.editingFinished.connect(lambda: self._check_model(apply_suggestions=True, remember=True))
        self.semantic_combo.currentIndexChanged.connect(lambda _i: self._semantic_changed())
        self.suggest_btn.clicked.connect(self.suggest_prompts)
        self.generate_btn.clicked.connect(self.start_generation)
        self.cancel_btn.clicked.connect(self.cancel_generation)
        self.import_btn.clicked.connect(self._import)
        self.model_help_btn.clicked.connect(lambda: self.tabs.setCurrentWidget(self.model_tab))
        self.gallery.statusChanged.connect(self._status_changed)
        self.gallery.reuseRequested.connect(self.reuse)
        if self._bank_error:
            self.status_label.setText(f"Your prompt bank has an error (using the default): {self._bank_error}")

    # ---------------------------------------------------------------------------------------- public API ----
    @property
    def semantic(self) -> str:
        return self.semantic_combo.currentData()

    def set_semantic(self, semantic: str) -> None:
        self.semantic_combo.setCurrentIndex(SEMANTICS.index(semantic))

    def descriptions(self) -> list[str]:
        return [ln.strip() for ln in self.prompts_edit.toPlainText().splitlines() if ln.strip()]

    def build_request(self) -> GenerationRequest:
        """The request the form describes (full prompts = description + ", " + style)."""
        entry = self.bank[self.semantic]
        style = self.style_edit.text().strip()
        descs = self.descriptions() or self.bank.suggest(self.semantic, self.count_spin.value(),
                                                         seed=self.seed_spin.value())
        size = SIZES[self.size_combo.currentIndex()][1]
        post = POSTS[self.post_combo.currentIndex()][1] or entry.post
        return GenerationRequest(
            semantic=self.semantic, prompts=tuple(entry.full_prompt(d, style) for d in descs),
            negative_prompt=self.negative_edit.text().strip(), n=self.count_spin.value(),
            steps=self.steps_spin.value(), guidance=float(self.guidance_spin.value()), seed=self.seed_spin.value(),
            width=size, height=size, batch_size=self.batch_spin.value(),
            scheduler=self.scheduler_combo.currentText(), post=post)

    def start_generation(self) -> bool:
        """Validate, then ask for a generation (``generateRequested``). Returns False (and says why) when it cannot
        start: a bad form, no usable model, or nobody to run it."""
        if self.running_request is not None:
            return False
        if not self._check_model(apply_suggestions=False):
            # say so where the user looks after clicking Generate, and open the set-up instructions
            if self.model_edit.text().strip():
                first = (self._model_error or "").strip().splitlines()[0] if self._model_error else ""
                self.status_label.setText(f"Cannot generate: model problem: {first} The Model tab has the "
                                          f"details and how to point the studio at a model.")
            else:
                self.status_label.setText("Cannot generate: no text-to-image model is configured. The Model tab "
                                          "shows how to point the studio at Stable Diffusion weights on this "
                                          "computer (a diffusers folder or a .safetensors file; nothing is "
                                          "downloaded automatically).")
            self.tabs.setCurrentWidget(self.model_tab)
            return False
        if self.random_seed_check.isChecked():
            self.seed_spin.setValue(secrets.randbelow(MAX_SEED))
        try:
            req = self.build_request()
            req.validate()
        except (LogiCityError, ValueError) as exc:
            self.status_label.setText(f"Cannot generate: {exc}")
            return False
        self.generateRequested.emit(IconGenOrder(self.model_edit.text().strip(), req,
                                                 self.device_combo.currentText()))
        if self.running_request is None:   # nobody runs generation for this dock
            self.status_label.setText("Cannot generate: no icon generator is attached to this panel.")
            return False
        return True

    def cancel_generation(self) -> None:
        if self.running_request is not None:
            self.cancelRequested.emit()
            self.cancel_btn.setEnabled(False)
            self.status_label.setText("cancelling after the current step… (finished images are kept)")

    def is_generating(self) -> bool:
        return self.running_request is not None

    # ---- called by whoever runs generation (see the module docstring) -----------------------------------------
    def generation_started(self, request: GenerationRequest) -> None:
        self.running_request = request
        self._failed = None
        self._set_running(True)
        self.progress_bar.setValue(0)
        self.status_label.setText(f"starting: {request.n} image(s), seeds {request.seed}…"
                                  f"{request.seed + request.n - 1}")
        self.tabs.setCurrentWidget(self.gallery)  # the new images appear there

    def show_status(self, text: str) -> None:
        self.status_label.setText(text)

    def show_progress(self, done: int, total: int, step: int, steps: int, first: int) -> None:
        """images done, images total, denoising step, steps, first image of the batch being denoised (-1: none)."""
        req = self.running_request
        per = 1000 // max(total, 1)
        batch = max(req.batch_size if req else 1, 1)
        n_batch = min(batch, total - done) if first >= 0 else 0
        self.progress_bar.setValue(min(1000, done * per + (n_batch * per * step) // max(steps, 1)))
        if first >= 0:
            seed = f" (seed {req.seed + first})" if req else ""
            self.status_label.setText(f"image {first + 1}/{total}{seed} · step {step}/{steps}")

    def add_image(self, icon_id: str) -> None:
        """A generated icon, already saved in the library."""
        self.gallery.add_icon(icon_id)

    def generation_finished(self, n: int, cancelled: bool, error: str | None = None) -> None:
        """The run ended: ``n`` images saved, whether it was cancelled, the error text when it failed."""
        self.running_request = None
        self._failed = error
        self._set_running(False)
        if error:
            self.status_label.setText(f"Generation failed: {error}"
                                      + (f" ({n} image(s) saved before are kept)" if n else ""))
        elif cancelled:
            self.status_label.setText(f"Cancelled: {n} finished image(s) kept.")
        else:
            self.progress_bar.setValue(1000)
            self.status_label.setText(f"Done: {n} image(s). Select and Accept the good ones.")
        self.generationFinished.emit(n, cancelled)

    def suggest_prompts(self) -> None:
        n = min(self.count_spin.value(), 8)
        self.prompts_edit.setPlainText("\n".join(self.bank.suggest(self.semantic, n)))

    def reuse(self, meta: dict) -> None:
        """Fill the form from an icon's sidecar so the same image (or variations) can be made again."""
        def get(key, ok) -> object:  # a hand-edited sidecar may hold anything: use only fields of the right type
            v = meta.get(key)
            return v if v is not None and not isinstance(v, bool) and isinstance(v, ok) else None

        prompt = get("prompt", str) or ""
        style = self.style_edit.text().strip()
        suffix = ", " + style
        if style and prompt.endswith(suffix):
            desc = prompt[: -len(suffix)]
        else:  # made with another style: put the whole prompt in the box and no extra style
            desc = prompt
            self.style_edit.setText("")
        self.prompts_edit.setPlainText(desc)
        if get("negative_prompt", str) is not None:
            self.negative_edit.setText(meta["negative_prompt"])
        seed = get("seed", int)
        if seed is not None and 0 <= seed <= MAX_SEED:
            self.seed_spin.setValue(seed)
        self.random_seed_check.setChecked(False)
        if get("steps", int):
            self.steps_spin.setValue(meta["steps"])
        if get("guidance", (int, float)) is not None:
            self.guidance_spin.setValue(float(meta["guidance"]))
        choice = get("scheduler_choice", str)
        if choice in SCHEDULERS:
            self.scheduler_combo.setCurrentText(choice)
        # size: the generated size when the form offers it, else the model default (what made an off-list size)
        size = get("generated_width", int)
        sizes = [px for _, px in SIZES]
        self.size_combo.setCurrentIndex(sizes.index(size) if size in sizes[1:] else 0)
        post = get("post", str)
        posts = [p for _, p in POSTS]
        if post in posts[1:]:
            self.post_combo.setCurrentIndex(posts.index(post))
        self.count_spin.setValue(1)
        # batch 1 (as the form will make one image): a larger batch may differ in the last bit (see docs)
        self.batch_spin.setValue(1)
        self.status_label.setText(f"form filled from {get('semantic', str) or ''} seed {seed}")

    # -------------------------------------------------------------------------------------------- slots ----
    def _semantic_changed(self) -> None:
        entry = self.bank[self.semantic]
        self.style_edit.setText(entry.style)
        self.negative_edit.setText(entry.negative)
        self.style_edit.setCursorPosition(0)
        self.negative_edit.setCursorPosition(0)
        self.prompts_edit.setPlainText("\n".join(self.bank.suggest(self.semantic, min(self.count_spin.value(), 8))))
        self.gallery.show_semantic(self.semantic)

    def _check_model(self, apply_suggestions: bool, remember: bool = False) -> bool:
        text = self.model_edit.text().strip()
        try:
            src = resolve_model(text or None)
        except ModelError as exc:
            self._model_error = str(exc)
            self.model_info.setText(_as_html(str(exc)))
            self.model_info.setStyleSheet("color: #b03a2e;")
            self.model_summary.setText("No model configured yet" if not text else f"Model problem: {exc}")
            self.model_summary.setStyleSheet("color: #b03a2e;")
            self.model_help_btn.setVisible(True)
            self.generate_btn.setToolTip("configure a model first (Model tab)")
            return False
        self._model_error = None
        sug = suggested_settings(src)
        self.model_info.setText(f"{src.kind.replace('_', ' ')}: {src.pipeline_class} — suggested: {sug.note}")
        self.model_info.setStyleSheet("color: #2e6b3f;")
        self.model_summary.setText(f"Model: {src.name} ({src.pipeline_class}) — suggested: {sug.note}")
        self.model_summary.setStyleSheet("color: #2e6b3f;")
        self.model_help_btn.setVisible(False)
        self.generate_btn.setToolTip("")
        if not text:
            self.model_edit.setText(str(src.path))
        if apply_suggestions:
            self.steps_spin.setValue(sug.steps)
            self.guidance_spin.setValue(sug.guidance)
        if remember:
            set_configured_model(src.path)
        return True

    def _browse_dir(self) -> None:
        d = QFileDialog.getExistingDirectory(self, "Diffusers model folder")
        if d:
            self.model_edit.setText(d)
            self._check_model(apply_suggestions=True, remember=True)

    def _browse_file(self) -> None:
        f, _ = QFileDialog.getOpenFileName(self, "Stable Diffusion checkpoint", "", "Safetensors (*.safetensors)")
        if f:
            self.model_edit.setText(f)
            self._check_model(apply_suggestions=True, remember=True)

    def _import(self) -> None:
        files, _ = QFileDialog.getOpenFileNames(self, f"Import {LABELS[self.semantic]} icons", "",
                                                "Images (*.png *.jpg *.jpeg *.webp)")
        for f in files:
            try:
                self.library.import_image(self.semantic, f)
            except LogiCityError as exc:
                self.status_label.setText(str(exc))
        if files:
            self.gallery.reload()
            self.iconsChanged.emit(self.semantic)

    def _status_changed(self, icon_id: str, status: str) -> None:
        self.iconsChanged.emit(icon_id.split("/", 1)[0])

    def _set_running(self, running: bool) -> None:
        self.generate_btn.setEnabled(not running)
        self.cancel_btn.setEnabled(running)
        for w in (self.model_edit, self.browse_dir_btn, self.browse_file_btn, self.semantic_combo):
            w.setEnabled(not running)

    def closeEvent(self, event) -> None:  # noqa: N802 - Qt naming
        self.cancel_generation()  # a run still busy finishes on its own (its runner keeps it); quitting waits for it
        super().closeEvent(event)
