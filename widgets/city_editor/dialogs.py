"""The city editor's dialogs: New city (the procedural generator with a live preview) and Resize canvas.

Why the preview is generated in the dialog: the generator is fast (tens of ms for the reference size) and a user
choosing block counts and a seed wants to see the city before replacing theirs; invalid parameters show the
generator's own message instead of a preview, and OK stays disabled until they are valid.
"""
from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets

from core.map.generate import generate_city
from core.map.model import CityMap
from core.view.colouring import semantic_rgb
from widgets.choice_dialog import ok_cancel_buttons


def _pixmap(city: CityMap, side: int = 260) -> QtGui.QPixmap:
    rgb = semantic_rgb(city).copy()
    h, w = rgb.shape[:2]
    img = QtGui.QImage(rgb.data, w, h, 3 * w, QtGui.QImage.Format.Format_RGB888).copy()
    return QtGui.QPixmap.fromImage(img).scaled(side, side, QtCore.Qt.AspectRatioMode.KeepAspectRatio,
                                               QtCore.Qt.TransformationMode.FastTransformation)


class NewCityDialog(QtWidgets.QDialog):
    """Size (blocks × block size), street widths and seed; ``city`` is the generated city once accepted."""

    def __init__(self, parent: QtWidgets.QWidget | None = None, seed: int = 0) -> None:
        super().__init__(parent)
        self.setWindowTitle("New city")
        self.city: CityMap | None = None
        form = QtWidgets.QFormLayout()

        def spin(lo, hi, val, tip):
            s = QtWidgets.QSpinBox()
            s.setRange(lo, hi)
            s.setValue(val)
            s.setToolTip(tip)
            s.valueChanged.connect(self._schedule)
            return s

        self.block_rows = spin(1, 60, 5, "Blocks from top to bottom")
        self.block_cols = spin(1, 60, 5, "Blocks from left to right")
        self.block_size = spin(2, 400, 25, "Cells per block side (inside its sidewalks)")
        self.traffic_width = spin(3, 41, 11, "Traffic street width (odd: a mid lane with a lane on each side)")
        self.traffic_width.setSingleStep(2)
        self.walking_width = spin(1, 20, 5, "Sidewalk width")
        self.seed = spin(0, 2**31 - 1, int(seed), "Random seed of the building types")
        blocks = QtWidgets.QHBoxLayout()
        blocks.addWidget(self.block_rows)
        blocks.addWidget(QtWidgets.QLabel("×"))
        blocks.addWidget(self.block_cols)
        form.addRow("Blocks (rows × columns):", blocks)
        form.addRow("Block size (cells):", self.block_size)
        form.addRow("Traffic street width:", self.traffic_width)
        form.addRow("Sidewalk width:", self.walking_width)
        form.addRow("Seed:", self.seed)
        self.size_label = QtWidgets.QLabel()
        form.addRow("City size:", self.size_label)
        self.preview = QtWidgets.QLabel()
        self.preview.setObjectName("newCityPreview")
        self.preview.setFixedSize(264, 264)
        self.preview.setAlignment(QtCore.Qt.AlignmentFlag.AlignCenter)
        self.preview.setWordWrap(True)
        self.buttons = ok_cancel_buttons(self)
        lay = QtWidgets.QHBoxLayout()
        lay.addLayout(form)
        lay.addWidget(self.preview)
        outer = QtWidgets.QVBoxLayout(self)
        outer.addLayout(lay)
        outer.addWidget(self.buttons)
        self._timer = QtCore.QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self.update_preview)
        self.update_preview()

    def _schedule(self) -> None:
        self._timer.start(150)

    def params(self) -> dict:
        return {"seed": self.seed.value(), "blocks": (self.block_rows.value(), self.block_cols.value()),
                "block_size": self.block_size.value(), "traffic_width": self.traffic_width.value(),
                "walking_width": self.walking_width.value()}

    def update_preview(self) -> None:
        """Generate the city for the current values and show it (or why it cannot be made)."""
        self._timer.stop()
        ok = self.buttons.button(QtWidgets.QDialogButtonBox.StandardButton.Ok)
        try:
            city = generate_city(**self.params())
        except ValueError as exc:
            self.city = None
            self.preview.setPixmap(QtGui.QPixmap())
            self.preview.setText(str(exc))
            self.size_label.setText("—")
            ok.setEnabled(False)
            return
        self.city = city
        self.preview.setPixmap(_pixmap(city))
        self.size_label.setText(f"{city.height} × {city.width} cells, {len(city.buildings)} buildings")
        ok.setEnabled(True)

    def accept(self) -> None:
        if self._timer.isActive():
            self.update_preview()
        if self.city is not None:
            super().accept()


class ResizeDialog(QtWidgets.QDialog):
    """New height and width and where the old city goes (anchor)."""

    ANCHORS = {"Top left": (0.0, 0.0), "Centre": (0.5, 0.5), "Bottom right": (1.0, 1.0)}

    def __init__(self, height: int, width: int, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Resize canvas")
        self.old = (height, width)
        form = QtWidgets.QFormLayout(self)
        self.height_box = QtWidgets.QSpinBox()
        self.height_box.setRange(8, 4096)
        self.height_box.setValue(height)
        self.width_box = QtWidgets.QSpinBox()
        self.width_box.setRange(8, 4096)
        self.width_box.setValue(width)
        self.anchor = QtWidgets.QComboBox()
        self.anchor.addItems(list(self.ANCHORS))
        form.addRow("Height (cells):", self.height_box)
        form.addRow("Width (cells):", self.width_box)
        form.addRow("Keep the city at:", self.anchor)
        buttons = ok_cancel_buttons(self)
        form.addRow(buttons)

    def result_size(self) -> tuple[int, int, tuple[int, int]]:
        """(height, width, anchor offset of the old cells)."""
        h, w = self.height_box.value(), self.width_box.value()
        fr, fc = self.ANCHORS[self.anchor.currentText()]
        return h, w, (int(round((h - self.old[0]) * fr)), int(round((w - self.old[1]) * fc)))
