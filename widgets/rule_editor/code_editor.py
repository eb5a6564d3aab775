"""A plain-text code editor for rule text: line-number gutter with clause marks, wavy squiggles with tooltips,
completion, and no undo of its own.

Why no undo here: the rule editor's changes are undone through the session's command stack (widgets/rule_editor/editor.py
explains the contract); the document's undo is switched off and Ctrl+Z / Ctrl+Shift+Z are left to the window's Edit
actions (the ShortcutOverride below). Never imports ``app``.
"""
from __future__ import annotations

from typing import Any, Sequence

from PySide6 import QtCore, QtGui, QtWidgets

from core.logic.lang.highlight_tokens import word_at
from widgets.rule_editor.highlighter import RuleHighlighter

__all__ = ["CodeEditor", "SEVERITY_COLOURS"]

SEVERITY_COLOURS = {"error": "#d1242f", "warning": "#bf8700"}
_TYPING_KEYS = {QtCore.Qt.Key.Key_Backspace, QtCore.Qt.Key.Key_Delete}


class _Gutter(QtWidgets.QWidget):
    """Line numbers; a dot marks the first line of each clause (filled: enabled). Clicking it toggles the clause."""

    def __init__(self, editor: "CodeEditor") -> None:
        super().__init__(editor)
        self.editor = editor
        self.setToolTip("Click the dot next to a clause to enable or disable it")

    def sizeHint(self) -> QtCore.QSize:  # noqa: N802
        return QtCore.QSize(self.editor.gutter_width(), 0)

    def paintEvent(self, event: QtGui.QPaintEvent) -> None:  # noqa: N802
        self.editor.paint_gutter(self, event)

    def mousePressEvent(self, event: QtGui.QMouseEvent) -> None:  # noqa: N802
        cursor = self.editor.cursorForPosition(QtCore.QPoint(0, int(event.position().y())))
        self.editor.clauseToggleRequested.emit(cursor.blockNumber() + 1)


class CodeEditor(QtWidgets.QPlainTextEdit):
    """A plain-text editor with a line-number gutter, squiggles and predicate completion."""

    clauseToggleRequested = QtCore.Signal(int)     # 1-based line

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        font = QtGui.QFontDatabase.systemFont(QtGui.QFontDatabase.SystemFont.FixedFont)
        self.setFont(font)
        self.setLineWrapMode(QtWidgets.QPlainTextEdit.LineWrapMode.NoWrap)
        self.document().setUndoRedoEnabled(False)       # the session's command stack undoes (module docstring)
        self.setTabStopDistance(4 * self.fontMetrics().horizontalAdvance(" "))
        self.highlighter = RuleHighlighter(self.document())
        self.gutter = _Gutter(self)
        self.blockCountChanged.connect(lambda _n: self.setViewportMargins(self.gutter_width(), 0, 0, 0))
        self.updateRequest.connect(self._update_gutter)
        self.setViewportMargins(self.gutter_width(), 0, 0, 0)
        self.clauses: list[Any] = []
        self.diagnostics: list[Any] = []
        self.typing = False                 # the change being made comes from a typed key (see keyPressEvent)
        model = QtCore.QStringListModel(self)
        self.completer = QtWidgets.QCompleter(model, self)
        self.completer.setWidget(self)
        self.completer.setCaseSensitivity(QtCore.Qt.CaseSensitivity.CaseInsensitive)
        self.completer.setCompletionMode(QtWidgets.QCompleter.CompletionMode.PopupCompletion)
        self.completer.activated.connect(self.insert_completion)

    # ---- gutter -------------------------------------------------------------------------------------------------
    def gutter_width(self) -> int:
        digits = len(str(max(1, self.blockCount())))
        return 18 + self.fontMetrics().horizontalAdvance("9") * max(3, digits)

    def resizeEvent(self, event: QtGui.QResizeEvent) -> None:  # noqa: N802
        super().resizeEvent(event)
        cr = self.contentsRect()
        self.gutter.setGeometry(QtCore.QRect(cr.left(), cr.top(), self.gutter_width(), cr.height()))

    def _update_gutter(self, rect: QtCore.QRect, dy: int) -> None:
        if dy:
            self.gutter.scroll(0, dy)
        else:
            self.gutter.update(0, rect.y(), self.gutter.width(), rect.height())

    def paint_gutter(self, gutter: QtWidgets.QWidget, event: QtGui.QPaintEvent) -> None:
        p = QtGui.QPainter(gutter)
        p.fillRect(event.rect(), QtGui.QColor("#f3f4f6"))
        starts = {c.first: c.enabled for c in self.clauses}
        errors = {d.line: d.severity for d in self.diagnostics}
        block = self.firstVisibleBlock()
        top = round(self.blockBoundingGeometry(block).translated(self.contentOffset()).top())
        fh = self.fontMetrics().height()
        w = gutter.width()
        while block.isValid() and top <= event.rect().bottom():
            bottom = top + round(self.blockBoundingRect(block).height())
            if block.isVisible() and bottom >= event.rect().top():
                line = block.blockNumber() + 1
                sev = errors.get(line)
                p.setPen(QtGui.QColor(SEVERITY_COLOURS[sev]) if sev else QtGui.QColor("#8c959f"))
                p.drawText(0, top, w - 14, fh, QtCore.Qt.AlignmentFlag.AlignRight, str(line))
                if line in starts:
                    colour = QtGui.QColor("#2da44e" if starts[line] else "#afb8c1")
                    p.setPen(colour)
                    p.setBrush(colour if starts[line] else QtCore.Qt.BrushStyle.NoBrush)
                    p.drawEllipse(QtCore.QPointF(w - 7, top + fh / 2), 3.5, 3.5)
            block = block.next()
            top = bottom
        p.end()

    # ---- squiggles ----------------------------------------------------------------------------------------------
    def set_diagnostics(self, diagnostics: Sequence[Any]) -> None:
        """Underline each diagnostic (``line``, ``col``, ``length``, ``severity``, ``message``) with a wave."""
        self.diagnostics = list(diagnostics)
        sels = []
        doc = self.document()
        for d in self.diagnostics:
            block = doc.findBlockByNumber(max(0, d.line - 1))
            if not block.isValid():
                continue
            start = block.position() + max(0, min(d.col - 1, block.length() - 1))
            length = max(1, min(d.length, block.position() + block.length() - 1 - start))
            sel = QtWidgets.QTextEdit.ExtraSelection()
            fmt = QtGui.QTextCharFormat()
            fmt.setUnderlineStyle(QtGui.QTextCharFormat.UnderlineStyle.WaveUnderline)
            fmt.setUnderlineColor(QtGui.QColor(SEVERITY_COLOURS.get(d.severity, "#d1242f")))
            fmt.setToolTip(d.message)
            sel.format = fmt
            cur = QtGui.QTextCursor(doc)
            cur.setPosition(min(start, doc.characterCount() - 1))
            cur.setPosition(min(start + length, doc.characterCount() - 1), QtGui.QTextCursor.MoveMode.KeepAnchor)
            if not cur.hasSelection():     # at the end of a line or of the text: underline the character before
                cur.movePosition(QtGui.QTextCursor.MoveOperation.Left, QtGui.QTextCursor.MoveMode.KeepAnchor)
            sel.cursor = cur
            sels.append(sel)
        self.setExtraSelections(sels)
        self.gutter.update()

    def diagnostic_at(self, pos: int) -> Any | None:
        block = self.document().findBlock(pos)
        line, col = block.blockNumber() + 1, pos - block.position() + 1
        for d in self.diagnostics:
            if d.line == line and d.col <= col < d.col + max(1, d.length):
                return d
        return None

    def event(self, e: QtCore.QEvent) -> bool:
        if e.type() == QtCore.QEvent.Type.ToolTip:
            d = self.diagnostic_at(self.cursorForPosition(self.viewport().mapFrom(self, e.pos())).position())
            if d is not None:
                QtWidgets.QToolTip.showText(e.globalPos(), f"{d.severity}: {d.message}", self)
            else:
                QtWidgets.QToolTip.hideText()
            return True
        if e.type() == QtCore.QEvent.Type.ShortcutOverride and (
                e.matches(QtGui.QKeySequence.StandardKey.Undo) or e.matches(QtGui.QKeySequence.StandardKey.Redo)):
            e.ignore()      # leave Ctrl+Z to the window's Edit ▸ Undo (the session's stack)
            return False
        return super().event(e)

    # ---- completion ---------------------------------------------------------------------------------------------
    def set_completions(self, words: Sequence[str]) -> None:
        self.completer.model().setStringList(sorted(set(words)))

    def insert_completion(self, word: str) -> None:
        cur = self.textCursor()
        start, prefix = word_at(cur.block().text(), cur.positionInBlock())
        cur.setPosition(cur.block().position() + start)
        cur.setPosition(cur.block().position() + start + len(prefix), QtGui.QTextCursor.MoveMode.KeepAnchor)
        cur.insertText(word)
        self.setTextCursor(cur)

    def _maybe_complete(self, force: bool) -> None:
        cur = self.textCursor()
        _, prefix = word_at(cur.block().text(), cur.positionInBlock())
        popup = self.completer.popup()
        if len(prefix) < (1 if force else 2):
            popup.hide()
            return
        self.completer.setCompletionPrefix(prefix)
        if self.completer.completionCount() == 0 or (self.completer.completionCount() == 1 and
                                                     self.completer.currentCompletion() == prefix):
            popup.hide()
            return
        popup.setCurrentIndex(self.completer.completionModel().index(0, 0))
        rect = self.cursorRect()
        rect.setWidth(popup.sizeHintForColumn(0) + popup.verticalScrollBar().sizeHint().width() + 8)
        self.completer.complete(rect)

    def keyPressEvent(self, e: QtGui.QKeyEvent) -> None:  # noqa: N802
        popup = self.completer.popup()
        if popup.isVisible() and e.key() in (QtCore.Qt.Key.Key_Return, QtCore.Qt.Key.Key_Enter,
                                             QtCore.Qt.Key.Key_Tab, QtCore.Qt.Key.Key_Escape):
            e.ignore()      # the completer's popup handles these
            return
        force = e.key() == QtCore.Qt.Key.Key_Space and e.modifiers() & QtCore.Qt.KeyboardModifier.ControlModifier
        if force:
            self._maybe_complete(True)
            return
        mods = e.modifiers() & ~(QtCore.Qt.KeyboardModifier.ShiftModifier | QtCore.Qt.KeyboardModifier.KeypadModifier)
        self.typing = not mods and (bool(e.text()) and e.text().isprintable() or e.key() in _TYPING_KEYS
                                    or e.key() in (QtCore.Qt.Key.Key_Return, QtCore.Qt.Key.Key_Enter))
        try:
            super().keyPressEvent(e)
        finally:
            self.typing = False
        if not mods and e.text() and (e.text().isalnum() or e.text() == "_"):
            self._maybe_complete(False)
        elif popup.isVisible():
            popup.hide()
