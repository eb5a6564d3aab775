"""Gallery of library icons for one semantic: thumbnails with seed and status, accept / reject / reuse.

Why a separate widget: the Render dock shows it under the generation form, and other parts of the studio (an
icon picker, the map legend) can reuse it on the same :class:`core.render.library.IconLibrary`.
"""
from __future__ import annotations

import html

from PySide6.QtCore import QPointF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFont, QIcon, QImage, QPainter, QPixmap, QPolygonF
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from core.base.errors import LogiCityError
from core.render.library import IconLibrary, IconRecord

THUMB = 96
STATUS_COLORS = {"pending": "#c9a227", "accepted": "#2e8b57", "rejected": "#b03a2e"}
FILTERS = (("All", None), ("Pending", "pending"), ("Accepted", "accepted"), ("Rejected", "rejected"))


def compact(button: QPushButton) -> QPushButton:
    """Let a push button be as narrow as its text (styles widen text buttons to 80 px), so narrow docks fit."""
    button.setMinimumWidth(button.fontMetrics().horizontalAdvance(button.text().replace("&&", "&")) + 20)
    return button


def _checker(size: int, cell: int = 8) -> QPixmap:
    pm = QPixmap(size, size)
    pm.fill(QColor(255, 255, 255))
    p = QPainter(pm)
    for y in range(0, size, cell):
        for x in range(0, size, cell):
            if (x // cell + y // cell) % 2:
                p.fillRect(x, y, cell, cell, QColor(222, 222, 222))
    p.end()
    return pm


def thumbnail(path: str, status: str, size: int = THUMB, flagged: bool = False) -> QPixmap:
    """The icon fitted in ``size``² over a checkerboard (shows its alpha), with a status stripe at the bottom and,
    when ``flagged`` (its sidecar has a problem), a warning triangle in the top-right corner."""
    pm = _checker(size)
    img = QImage(path)
    p = QPainter(pm)
    if not img.isNull():
        scaled = img.scaled(size - 6, size - 12, Qt.AspectRatioMode.KeepAspectRatio,
                            Qt.TransformationMode.SmoothTransformation)
        p.drawImage((size - scaled.width()) // 2, (size - 6 - scaled.height()) // 2, scaled)
    p.fillRect(0, size - 5, size, 5, QColor(STATUS_COLORS.get(status, "#888888")))
    if status == "rejected":
        p.fillRect(0, 0, size, size - 5, QColor(255, 255, 255, 140))
    if flagged:
        t = max(size // 4, 12)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        p.setPen(QColor(120, 60, 0))
        p.setBrush(QColor(245, 166, 35))
        p.drawPolygon(QPolygonF([QPointF(size - t - 2, t), QPointF(size - 2, t), QPointF(size - 2 - t / 2, 2)]))
        f = QFont()
        f.setBold(True)
        f.setPixelSize(max(t * 2 // 3, 8))
        p.setFont(f)
        p.setPen(QColor(0, 0, 0))
        p.drawText(size - t - 2, 3, t, t - 2, Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignBottom, "!")
    p.end()
    return pm


class IconGallery(QWidget):
    """Icons of one semantic from the library, newest first."""

    #: icon id, new status (after the library was updated)
    statusChanged = Signal(str, str)
    #: sidecar of an icon whose seed/prompt/settings the user wants to reuse
    reuseRequested = Signal(dict)

    def __init__(self, library: IconLibrary, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.library = library
        self.semantic: str | None = None
        self.list = QListWidget()
        self.list.setViewMode(QListWidget.ViewMode.IconMode)
        self.list.setIconSize(QSize(THUMB, THUMB))
        self.list.setResizeMode(QListWidget.ResizeMode.Adjust)
        self.list.setMovement(QListWidget.Movement.Static)
        self.list.setSpacing(4)
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.list.setMinimumHeight(THUMB // 2)  # a small dock still shows the tops of a row of thumbnails
        self.list.setUniformItemSizes(True)
        self.filter = QComboBox()
        for label, _ in FILTERS:
            self.filter.addItem(label)
        self.accept_btn = QPushButton("Accept")
        self.reject_btn = QPushButton("Reject")
        self.reuse_btn = QPushButton("Reuse")
        self.accept_btn.setToolTip("Use the selected icons in renders and the map view (A)")
        self.reject_btn.setToolTip("Stop using the selected icons; files are kept (R)")
        self.reuse_btn.setToolTip("Copy the selected icon's seed, prompt and settings into the form "
                                  "(Prompts && settings tab)")
        self.details = QLabel()
        self.details.setWordWrap(True)
        self.details.setTextFormat(Qt.TextFormat.RichText)
        self.details.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.details.setStyleSheet("color: #444;")

        self.filter.setToolTip("Show the icons of this status only")
        for b in (self.accept_btn, self.reject_btn, self.reuse_btn):
            compact(b)
        top = QHBoxLayout()
        top.addWidget(self.filter)
        top.addStretch(1)
        top.addWidget(self.accept_btn)
        top.addWidget(self.reject_btn)
        top.addWidget(self.reuse_btn)
        self._top = top
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 4, 0, 0)
        lay.setSpacing(4)
        lay.addLayout(top)
        lay.addWidget(self.list, 1)
        lay.addWidget(self.details)

        self.filter.currentIndexChanged.connect(lambda _i: self.reload())
        self.accept_btn.clicked.connect(lambda: self.set_selected_status("accepted"))
        self.reject_btn.clicked.connect(lambda: self.set_selected_status("rejected"))
        self.reuse_btn.clicked.connect(self._reuse)
        self.list.itemSelectionChanged.connect(self._update_details)
        self.list.itemDoubleClicked.connect(lambda _it: self.set_selected_status("accepted"))
        self._update_buttons()

    def add_button(self, button: QPushButton) -> None:
        """Put another button (e.g. the dock's Import…) at the end of the gallery's button row."""
        self._top.addWidget(button)

    # ----------------------------------------------------------------------------------------- content ----
    def show_semantic(self, semantic: str) -> None:
        self.semantic = semantic
        self.reload()

    def reload(self) -> None:
        self.list.clear()
        if self.semantic is None:
            return
        status = FILTERS[self.filter.currentIndex()][1]
        try:
            recs = self.library.list(self.semantic, status)
        except LogiCityError as exc:  # defensive: the semantic and filter come from our own lists
            self.details.setText(html.escape(str(exc)))
            return
        for rec in reversed(recs):
            self.list.addItem(self._item(rec))
        self._update_details()

    def add_icon(self, icon_id: str) -> None:
        """Show a newly generated icon first (if it belongs to the semantic and filter shown)."""
        try:
            rec = self.library.get(icon_id)
        except LogiCityError:
            return  # removed from disk in the meantime: nothing to show
        status = FILTERS[self.filter.currentIndex()][1]
        if rec.semantic != self.semantic or (status is not None and rec.status != status):
            return
        self.list.insertItem(0, self._item(rec))

    def ids(self) -> list[str]:
        return [self.list.item(i).data(Qt.ItemDataRole.UserRole) for i in range(self.list.count())]

    def selected_ids(self) -> list[str]:
        return [it.data(Qt.ItemDataRole.UserRole) for it in self.list.selectedItems()]

    def select(self, icon_ids: list[str]) -> None:
        self.list.clearSelection()
        for i in range(self.list.count()):
            it = self.list.item(i)
            if it.data(Qt.ItemDataRole.UserRole) in icon_ids:
                it.setSelected(True)

    # ----------------------------------------------------------------------------------------- actions ----
    def set_selected_status(self, status: str) -> None:
        changed = []
        errors = []
        for icon_id in self.selected_ids():
            try:
                rec = self.library.set_status(icon_id, status)
            except LogiCityError as exc:  # removed from disk, read-only folder …
                errors.append(str(exc))
                continue
            changed.append(rec.id)
        if changed or errors:
            keep = set(changed)
            self.reload()
            self.select([i for i in self.ids() if i in keep])
            for icon_id in changed:
                self.statusChanged.emit(icon_id, status)
        if errors:
            self.details.setText("<span style='color:#b03a2e'>" + "<br>".join(html.escape(e) for e in errors)
                                 + "</span>")

    def _reuse(self) -> None:
        ids = self.selected_ids()
        if ids:
            try:
                meta = self.library.metadata(ids[0])
            except LogiCityError as exc:
                self.details.setText(html.escape(str(exc)))
                return
            self.reuseRequested.emit(meta)

    def keyPressEvent(self, event) -> None:  # noqa: N802 - Qt naming
        key = event.key()
        if key == Qt.Key.Key_A:
            self.set_selected_status("accepted")
        elif key == Qt.Key.Key_R:
            self.set_selected_status("rejected")
        else:
            super().keyPressEvent(event)

    # --------------------------------------------------------------------------------------- internals ----
    def _item(self, rec: IconRecord) -> QListWidgetItem:
        seed = f"seed {rec.seed}" if rec.seed is not None else ("imported" if not rec.sidecar_error else "seed ?")
        label = f"{seed}\n{rec.status}"
        tip = f"{rec.id}\n{rec.prompt}"
        if rec.sidecar_error:
            label = "⚠ " + label
            tip += f"\n⚠ {rec.sidecar_error}"
        it = QListWidgetItem(QIcon(thumbnail(str(rec.png), rec.status, flagged=bool(rec.sidecar_error))), label)
        it.setData(Qt.ItemDataRole.UserRole, rec.id)
        it.setToolTip(tip)
        return it

    def _update_details(self) -> None:
        ids = self.selected_ids()
        if len(ids) == 1:
            try:
                rec = self.library.get(ids[0])
            except LogiCityError as exc:
                self.details.setText(f"<span style='color:#b03a2e'>{html.escape(str(exc))}</span>")
                self._update_buttons()
                return
            m = rec.meta
            esc = lambda v: html.escape(str(v), quote=False)  # noqa: E731
            parts = [f"<b>{esc(rec.id)}</b> — {rec.status}"]
            if rec.seed is not None:
                parts.append(f"seed {rec.seed} · {esc(m.get('steps'))} steps · guidance {esc(m.get('guidance'))} · "
                             f"{esc(m.get('scheduler', ''))} · {esc(m.get('model', ''))}")
            if rec.prompt:
                parts.append(f"<i>{esc(rec.prompt)}</i>")
            if rec.warning:
                parts.append(f"<span style='color:#b03a2e'>{esc(rec.warning)}</span>")
            if rec.sidecar_error:
                breakable = esc(rec.sidecar_error).replace("/", "/\u200b")  # long paths may wrap
                parts.append(f"<span style='color:#b03a2e'>⚠ {breakable}</span>")
            self.details.setText("<br>".join(parts))
        elif ids:
            self.details.setText(f"{len(ids)} icons selected")
        else:
            self.details.setText("Select icons to accept, reject or reuse their seed." if self.list.count()
                                 else "No icons yet for this semantic.")
        self._update_buttons()

    def _update_buttons(self) -> None:
        n = len(self.list.selectedItems())
        self.accept_btn.setEnabled(n > 0)
        self.reject_btn.setEnabled(n > 0)
        self.reuse_btn.setEnabled(n == 1)
