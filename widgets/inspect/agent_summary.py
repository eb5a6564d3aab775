"""The top of the inspector: who the selected agent is, its facts at the shown step and why it took its action.

Why one read-only rich-text view rather than a title label, a grid of fact labels and an explanation label: each
such label lays its new text out at every seek (a selectable or rich label is a text document of its own), asks
the dock's layout to measure it again and paints itself, a large share of a seek. One document is laid out once
per seek inside a view whose size does not follow its text, so a new step re-lays out nothing around it; its text
stays selectable and copyable (mouse, Ctrl+C, context menu).

What it says is built by :func:`summary_parts` from a :class:`core.view.inspect.AgentReport`, without Qt.
"""
from __future__ import annotations

import html
from dataclasses import dataclass, field

from PySide6 import QtCore, QtGui, QtWidgets

from core.view.inspect import AgentReport

#: The facts, two to a line (the ones alone on their line span it).
FACT_ROWS: tuple[tuple[str, ...], ...] = (("Type", "Direction"), ("Position", "Goal"),
                                          ("Concepts", "Goals reached"), ("Priority",), ("Action",))
#: Lines the explanation reserves (the usual explanation: the fired clause, its witness and the source).
REASON_LINES = 4
EMPTY_TITLE = "No agent selected — click an agent on the map"


@dataclass(frozen=True)
class SummaryParts:
    """What the summary shows, as HTML fragments: ``facts`` maps each name of :data:`FACT_ROWS` to its value."""

    title: str = html.escape(EMPTY_TITLE)
    facts: dict[str, str] = field(default_factory=dict)
    why_title: str = "Why this action"
    why: str = "—"


def summary_parts(r: AgentReport, colour: tuple[int, int, int] | None = None) -> SummaryParts:
    """The summary of report ``r``; ``colour`` is the agent's colour on the map (a swatch before its name)."""
    sw = f"<span style='color:rgb{tuple(colour)}'>&#9679;</span> " if colour is not None else ""
    title = f"{sw}{html.escape(r.name)} <span style='font-weight:normal'>at step {r.step}</span>"
    esc = html.escape
    facts = {
        "Type": esc(f"{r.kind} ({r.detailed})" if r.detailed.lower() != r.kind.lower() else r.kind),
        "Direction": esc(r.heading),
        "Position": f"row {r.position[0]}, col {r.position[1]}",
        "Goal": f"row {r.goal[0]}, col {r.goal[1]}",
        "Concepts": esc(", ".join(r.concepts) or "none"),
        "Goals reached": str(r.goals_reached),
        "Priority": f"{r.priority}  (smaller goes first)",
        "Action": _action_html(r),
    }
    at = "" if r.decision_step in (None, r.step) else f", step {r.decision_step}"
    return SummaryParts(title=title, facts=facts, why_title=f"Why this action (recorded{at})", why=why_html(r))


def _action_html(r: AgentReport) -> str:
    if r.decided is None:
        return html.escape(f"{r.next_action} (nothing simulated yet)")
    moved = "" if r.realised == r.decided else f", moved {r.realised}"
    if r.forced:
        source = f"forced by {r.forced}"
    else:
        source = "rules derived: " + (", ".join(r.derived) if r.derived else "nothing (default Normal)")
    if r.pending:   # the same words as the map's "Action (next)" / "Fired clause" at the newest state
        how = "forced by the user" if r.upcoming else "decided"
        head = (f"<b>{r.next_action}</b> <span style='color:#b35900'>(the newest state: {how} when the "
                f"simulation steps)</span><br>step {r.decision_step}: {r.decided}{moved}")
    else:
        head = f"<b>{r.decided}</b>{moved}"
    return f"{head}<br><span style='color:gray'>{html.escape(source)}</span>"


def why_html(r: AgentReport) -> str:
    """The explanation the simulation recorded for ``r``'s action, and where it comes from."""
    if r.decided is None:
        return "<i>Nothing simulated yet: press Space to play or → to simulate one step.</i>"
    parts = []
    if r.forced:
        parts.append(f"<b>Forced</b> by {html.escape(r.forced)}: not derived by the rules (what the rules "
                     "would have decided is not recorded).")
    elif r.fired_clause >= 0 and r.fired:
        parts.append(f"<b>Fired:</b> <code>{html.escape(r.fired)}</code>")
        if len(r.witness) > 1:
            parts.append("<b>Witness:</b> " + ", ".join(f"{html.escape(v)} = {html.escape(n)}"
                                                        for v, n in r.witness))
        extra = (r.explanation or "").splitlines()[1:]
        if extra:
            parts.append("<br>".join(html.escape(line) for line in extra))
    else:
        parts.append(f"<b>No clause fired:</b> {html.escape(r.explanation or r.decided)}")
    parts.append(f"<span style='color:gray'>Source: {html.escape(r.recorded_note)}.</span>")
    return "<br>".join(parts)


def summary_html(p: SummaryParts, title_pt: float) -> str:
    """The document of ``p``: the title in a ``title_pt`` bold font, the facts two to a line (a table would align
    them, but doubles the time the view takes to read the document at each seek), then the explanation under its
    heading."""
    rows = []
    for keys in FACT_ROWS:
        rows.append("&nbsp;&nbsp;&nbsp;&nbsp;".join(f"<span style='color:gray'>{key}:</span> {p.facts.get(key, '—')}"
                                                    for key in keys))
    return (f"<p style='margin:0'><span style='font-size:{title_pt:g}pt; font-weight:bold'>{p.title}</span></p>"
            "<p style='margin:0'>" + "<br>".join(rows) + "</p>"
            f"<p style='margin-top:6px; margin-bottom:0'><b>{html.escape(p.why_title)}</b></p>"
            f"<p style='margin:0'>{p.why}</p>")


class AgentSummary(QtWidgets.QTextBrowser):
    """A read-only view of :class:`SummaryParts`. Its height is the tallest its document needed for the agent shown
    at this width (never less than the usual summary): growing or shrinking with each step would re-lay out the
    dock below it, so it changes only for another agent, another width or a longer text."""

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.setOpenLinks(False)
        # selectable with the mouse (then Ctrl+C copies), no keyboard navigation: the studio's keys (Space, the
        # arrows) keep working while it has the focus
        self.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
        self.setFrameShape(QtWidgets.QFrame.Shape.NoFrame)
        self.setVerticalScrollBarPolicy(QtCore.Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(QtCore.Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.viewport().setAutoFillBackground(False)   # the dock's own background shows through
        self.setSizePolicy(QtWidgets.QSizePolicy.Policy.Preferred, QtWidgets.QSizePolicy.Policy.Fixed)
        self.document().setDocumentMargin(2)
        self.parts = SummaryParts()
        self._held: tuple[object, int, int] | None = None   # (agent, width, height)
        self._agent: object = None
        self._show()

    # ---- what it shows ----------------------------------------------------------------------------------------
    def show_report(self, r: AgentReport, colour: tuple[int, int, int] | None = None) -> bool:
        """Show ``r``; True when the summary changed height for it (the layout around it has to follow)."""
        self._agent = r.agent
        self.parts = summary_parts(r, colour)
        return self._show()

    def clear_report(self) -> None:
        self._agent = None
        self.parts = SummaryParts()
        self._show()

    def plain_text(self) -> str:
        """What it shows, as text (what Select All and Copy give)."""
        return self.toPlainText()

    def _show(self) -> bool:
        pt = self.font().pointSizeF()
        self.setHtml(summary_html(self.parts, (pt if pt > 0 else 9.0) + 2))
        return self._fit()

    # ---- its height ---------------------------------------------------------------------------------------------
    def floor_height(self) -> int:
        """The usual summary's height: the title, the facts (the action on two lines) and the explanation."""
        fm = self.fontMetrics()
        lines = 1 + len(FACT_ROWS) + 1 + 1 + REASON_LINES
        return int(fm.lineSpacing() * lines + fm.lineSpacing() * 0.6 + 2 * self.document().documentMargin() + 12)

    def _fit(self) -> bool:
        w = self.viewport().width()
        doc = self.document()
        doc.setTextWidth(w)
        need = int(doc.size().height() + 2 * self.frameWidth()) + 1
        held = self._held
        if held is not None and held[0] == self._agent and held[1] == w:
            need = max(need, held[2])
        need = max(need, self.floor_height())
        self._held = (self._agent, w, need)
        if self.height() != need or self.minimumHeight() != need:
            self.setFixedHeight(need)
            return True
        return False

    def resizeEvent(self, ev: QtGui.QResizeEvent) -> None:  # noqa: N802 (Qt name)
        super().resizeEvent(ev)
        if ev.size().width() != ev.oldSize().width():
            self._fit()

    def changeEvent(self, ev: QtCore.QEvent) -> None:  # noqa: N802 (Qt name)
        super().changeEvent(ev)
        if ev.type() in (QtCore.QEvent.Type.FontChange, QtCore.QEvent.Type.StyleChange):
            self._held = None
            self._show()

    def sizeHint(self) -> QtCore.QSize:  # noqa: N802 (Qt name)
        return QtCore.QSize(super().sizeHint().width(), self.height())
