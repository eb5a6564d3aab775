"""The breakpoint condition builder: a dialog that composes a :class:`core.sim.breakpoints.Breakpoint`.

Why a dialog built from the core dataclass: every combination the user can pick is checked by the same constructor
that checks project.yaml, so the dialog cannot make a breakpoint the file format would refuse; the preview line is
the text the Breakpoints dock will show. It knows nothing of the session: it is given the agent names and clause
labels to offer and returns the breakpoint (or None).
"""
from __future__ import annotations

from typing import Sequence

from PySide6 import QtWidgets

from core.base.codes import ACTION_NAMES
from core.base.world import KNOWN_CONCEPTS
from core.sim.breakpoints import TYPES, Breakpoint, default_mode
from widgets.choice_dialog import ok_cancel_buttons

#: (kind, entry in the Condition box)
CONDITIONS = (("action", "Action decided"), ("clause", "Clause fired"), ("goal", "Goal reached"),
              ("gridlock", "Gridlock detected"), ("step", "Step reached"))
#: (subject field, entry in the Subject box)
SUBJECTS = (("any", "Any agent"), ("agent", "Agent"), ("type", "Any agent of type"),
            ("concept", "Any agent with concept"))


class BreakpointDialog(QtWidgets.QDialog):
    """Pick condition, subject, action / clause / step and when/while; :meth:`breakpoint` is the result."""

    def __init__(self, names: Sequence[str], clauses: Sequence[str] = (), initial: Breakpoint | None = None,
                 parent: QtWidgets.QWidget | None = None, step: int = 0) -> None:
        super().__init__(parent)
        self.setWindowTitle("Edit breakpoint" if initial is not None else "Add breakpoint")
        self.names = tuple(names)
        self.condition = QtWidgets.QComboBox()
        for kind, text in CONDITIONS:
            self.condition.addItem(text, kind)
        self.subject = QtWidgets.QComboBox()
        for key, text in SUBJECTS:
            self.subject.addItem(text, key)
        self.who = QtWidgets.QComboBox()          # the agent / type / concept, per subject
        self.action = QtWidgets.QComboBox()
        self.action.addItems(list(ACTION_NAMES))
        self.action.setCurrentText("Stop")
        self.clause = QtWidgets.QComboBox()
        self.clause.setEditable(True)              # a label (Stop#7) or an id; the recording's clauses offered
        self.clause.addItems(list(clauses))
        self.step = QtWidgets.QSpinBox()
        self.step.setRange(0, 10**9)
        self.step.setValue(step)
        self.when = QtWidgets.QRadioButton("when it starts (edge: once, in the step it becomes true)")
        self.while_ = QtWidgets.QRadioButton("while it holds (level: every step it is true)")
        self.when.setChecked(True)
        self.mode_box = QtWidgets.QGroupBox("Pause")
        mode_lay = QtWidgets.QVBoxLayout(self.mode_box)
        mode_lay.addWidget(self.when)
        mode_lay.addWidget(self.while_)
        self.enabled = QtWidgets.QCheckBox("Enabled")
        self.enabled.setChecked(True)
        self.preview = QtWidgets.QLabel()
        self.preview.setWordWrap(True)
        self.preview.setObjectName("breakpointPreview")

        form = QtWidgets.QFormLayout()
        form.addRow("Condition", self.condition)
        form.addRow("Subject", self.subject)
        form.addRow("", self.who)
        form.addRow("Action", self.action)
        form.addRow("Clause", self.clause)
        form.addRow("Step", self.step)
        self.form = form
        self.buttons = ok_cancel_buttons(self)
        lay = QtWidgets.QVBoxLayout(self)
        lay.addLayout(form)
        lay.addWidget(self.mode_box)
        lay.addWidget(self.enabled)
        lay.addWidget(self.preview)
        lay.addWidget(self.buttons)
        self.setMinimumWidth(440)

        self.subject.currentIndexChanged.connect(self._fill_who)
        for w in (self.condition, self.subject, self.who, self.action):
            w.currentIndexChanged.connect(self._update)
        self.clause.currentTextChanged.connect(self._update)
        self.step.valueChanged.connect(self._update)
        self.when.toggled.connect(self._update)
        self.enabled.toggled.connect(self._update)
        self._fill_who()
        if initial is not None:
            self.set_breakpoint(initial)
        self._update()

    # ---- filling ----------------------------------------------------------------------------------------------
    def _fill_who(self) -> None:
        key = self.subject.currentData()
        items = {"agent": self.names, "type": TYPES, "concept": tuple(KNOWN_CONCEPTS)}.get(key, ())
        self.who.blockSignals(True)
        self.who.clear()
        self.who.addItems(list(items))
        self.who.blockSignals(False)
        self.who.setVisible(bool(items))
        self._update()

    def set_breakpoint(self, bp: Breakpoint) -> None:
        """Show ``bp`` (Edit)."""
        self.condition.setCurrentIndex(self.condition.findData(bp.kind))
        key, value = next(((k, getattr(bp, k)) for k in ("agent", "type", "concept") if getattr(bp, k) is not None),
                          ("any", None))
        self.subject.setCurrentIndex(self.subject.findData(key))
        if value is not None:
            if self.who.findText(value) < 0:
                self.who.addItem(value)         # an agent of another city: keep it rather than change the subject
            self.who.setCurrentText(value)
        if bp.action is not None:
            self.action.setCurrentText(bp.action)
        if bp.clause is not None:
            self.clause.setCurrentText(str(bp.clause))
        if bp.step is not None:
            self.step.setValue(int(bp.step))
        (self.when if bp.mode in (None, "when") else self.while_).setChecked(True)
        self.enabled.setChecked(bp.enabled)

    # ---- the result -------------------------------------------------------------------------------------------
    def _fields(self) -> dict:
        kind = self.condition.currentData()
        d: dict = {"kind": kind, "enabled": self.enabled.isChecked()}
        if kind == "step":
            d["step"] = self.step.value()
            return d
        key = self.subject.currentData()
        if key != "any" and self.who.currentText():
            d[key] = self.who.currentText()
        if kind == "action":
            d["action"] = self.action.currentText()
        if kind == "clause":
            text = self.clause.currentText().strip()
            d["clause"] = int(text) if text.isdigit() else text
        if default_mode(kind) is not None:
            d["mode"] = "when" if self.when.isChecked() else "while"
        return d

    def breakpoint(self) -> Breakpoint | None:
        """The breakpoint the dialog shows, or None when its fields do not make one (the preview says why)."""
        try:
            return Breakpoint(**self._fields())
        except (ValueError, TypeError):
            return None

    def problem(self) -> str | None:
        try:
            Breakpoint(**self._fields())
        except (ValueError, TypeError) as exc:
            return str(exc)
        return None

    def _update(self) -> None:
        kind = self.condition.currentData()
        for w, shown in ((self.action, kind == "action"), (self.clause, kind == "clause"), (self.step, kind == "step"),
                         (self.subject, kind != "step"), (self.mode_box, default_mode(kind) is not None)):
            w.setVisible(shown)
            label = self.form.labelForField(w)
            if label is not None:
                label.setVisible(shown)
        self.who.setVisible(kind != "step" and self.subject.currentData() != "any")
        bp = self.breakpoint()
        ok = self.buttons.button(QtWidgets.QDialogButtonBox.StandardButton.Ok)
        ok.setEnabled(bp is not None)
        self.preview.setText(bp.explain() if bp is not None else f"Not a breakpoint yet: {self.problem()}")

