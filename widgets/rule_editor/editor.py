"""The rule editor: a code editor for ``.rules`` text with colouring, squiggles, completion, comment toggling,
find/replace, go to line and per-clause enable/disable. One :class:`RuleEditorPage` per rule file, in the tabs of a
:class:`RuleEditor`.

Why the editor does not keep its own undo: every change is announced as ``edited(key, before, after, typing)``; the
controller turns it into an undoable command on the session's stack (typing bursts merge there), and when that
stack undoes it the page receives the old text through :meth:`RuleEditorPage.set_text`. The document's own undo is
switched off and Ctrl+Z / Ctrl+Shift+Z are left to the window's Edit actions, so the two never fight.

Diagnostics come from outside too (computed off the GUI thread): :meth:`RuleEditorPage.set_diagnostics` draws a
wavy underline at each ``line:col`` (red errors, amber warnings) and lists them under the editor; hovering a
squiggle shows its message. The widget never imports ``app``.
"""
from __future__ import annotations

from typing import Any, Sequence

from PySide6 import QtCore, QtGui, QtWidgets

from core.logic.lang.highlight_tokens import clause_spans, set_clause_enabled, toggle_comment
from core.studio.rule_commands import text_diff
from widgets.rule_editor.code_editor import SEVERITY_COLOURS, CodeEditor

__all__ = ["CodeEditor", "RuleEditorPage", "RuleEditor", "SEVERITY_COLOURS"]

#: Quiet time (ms) after typing before the gutter's clause marks are recomputed (a whole-text scan).
CLAUSE_REFRESH_MS = 250


class _MiniBar(QtWidgets.QWidget):
    """Find / replace / go-to-line bar under the editor (Ctrl+F, Ctrl+H, Ctrl+L; Escape closes it)."""

    def __init__(self, page: "RuleEditorPage") -> None:
        super().__init__(page)
        self.page = page
        lay = QtWidgets.QGridLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        self.find = QtWidgets.QLineEdit(placeholderText="Find")
        self.replace = QtWidgets.QLineEdit(placeholderText="Replace with")
        self.goto = QtWidgets.QLineEdit(placeholderText="Go to line (Enter)")
        self.goto.setValidator(QtGui.QIntValidator(1, 10**7, self))
        self.case = QtWidgets.QCheckBox("Aa")
        self.case.setToolTip("Match case")
        self.status = QtWidgets.QLabel()
        b = {name: QtWidgets.QPushButton(text) for name, text in (("prev", "↑"), ("next", "↓"),
                                                                    ("one", "Replace"), ("all", "All"))}
        b["prev"].setToolTip("Previous match (Shift+Enter)")
        b["next"].setToolTip("Next match (Enter)")
        b["all"].setToolTip("Replace every match (one undo step)")
        self.buttons = b
        lay.addWidget(self.find, 0, 0)
        lay.addWidget(self.case, 0, 1)
        lay.addWidget(b["prev"], 0, 2)
        lay.addWidget(b["next"], 0, 3)
        lay.addWidget(self.replace, 1, 0)
        lay.addWidget(b["one"], 1, 2)
        lay.addWidget(b["all"], 1, 3)
        lay.addWidget(self.goto, 2, 0)
        lay.addWidget(self.status, 3, 0, 1, 4)
        b["next"].clicked.connect(lambda: page.find_next(False))
        b["prev"].clicked.connect(lambda: page.find_next(True))
        b["one"].clicked.connect(page.replace_one)
        b["all"].clicked.connect(page.replace_all)
        self.find.returnPressed.connect(lambda: page.find_next(
            bool(QtWidgets.QApplication.keyboardModifiers() & QtCore.Qt.KeyboardModifier.ShiftModifier)))
        self.replace.returnPressed.connect(page.replace_one)
        self.goto.returnPressed.connect(lambda: page.goto_line(int(self.goto.text() or 0)))
        QtGui.QShortcut(QtGui.QKeySequence("Escape"), self, activated=page.close_bar,
                        context=QtCore.Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.hide()

    def show_mode(self, mode: str) -> None:
        find = mode in ("find", "replace")
        for w in (self.find, self.case, self.buttons["prev"], self.buttons["next"]):
            w.setVisible(find)
        for w in (self.replace, self.buttons["one"], self.buttons["all"]):
            w.setVisible(mode == "replace")
        self.goto.setVisible(mode == "goto")
        self.status.clear()
        self.show()
        target = self.goto if mode == "goto" else self.find
        target.setFocus()
        target.selectAll()


class RuleEditorPage(QtWidgets.QWidget):
    """One rule file: the editor, its find/go-to bar and its diagnostics list."""

    edited = QtCore.Signal(str, str, str, bool)       # key, text before, text after, typed (merges per burst)
    diagnosticActivated = QtCore.Signal(int, int)     # line, col

    def __init__(self, key: str, title: str, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.key = key
        self.title = title
        self.setObjectName(f"ruleEditorPage_{key}")
        lay = QtWidgets.QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.editor = CodeEditor(self)
        self.bar = _MiniBar(self)
        self.problems = QtWidgets.QListWidget(self)
        self.problems.setObjectName("ruleDiagnostics")
        self.problems.setWordWrap(True)
        self.summary = QtWidgets.QLabel("No problems")
        split = QtWidgets.QSplitter(QtCore.Qt.Orientation.Horizontal, self)
        left = QtWidgets.QWidget()
        ll = QtWidgets.QVBoxLayout(left)
        ll.setContentsMargins(0, 0, 0, 0)
        ll.addWidget(self.editor, 1)
        ll.addWidget(self.bar)
        split.addWidget(left)
        right = QtWidgets.QWidget()      # the problems beside the text: a rule line is long, the dock is wide
        rl = QtWidgets.QVBoxLayout(right)
        rl.setContentsMargins(0, 0, 0, 0)
        rl.addWidget(self.summary)
        rl.addWidget(self.problems, 1)
        split.addWidget(right)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 1)
        self.editor.setMinimumHeight(90)
        lay.addWidget(split)
        self._shadow = ""              # the text last announced / set (what "before" is for the next change)
        self._applying = False
        self._clause_timer = QtCore.QTimer(self)
        self._clause_timer.setSingleShot(True)
        self._clause_timer.setInterval(CLAUSE_REFRESH_MS)
        self._clause_timer.timeout.connect(self._refresh_clauses)
        self.editor.textChanged.connect(self._on_text_changed)
        self.editor.clauseToggleRequested.connect(self.toggle_clause)
        self.problems.itemActivated.connect(self._on_problem_activated)
        self.problems.itemClicked.connect(self._on_problem_activated)
        ctx = QtCore.Qt.ShortcutContext.WidgetWithChildrenShortcut
        self.actions_by_name: dict[str, QtGui.QAction] = {}
        for name, text, keys, slot in (
                ("comment", "Toggle comment", "Ctrl+/", self.toggle_comment),
                ("find", "Find…", "Ctrl+F", lambda: self.bar.show_mode("find")),
                ("replace", "Replace…", "Ctrl+H", lambda: self.bar.show_mode("replace")),
                ("goto", "Go to line…", "Ctrl+L", lambda: self.bar.show_mode("goto")),
                ("clause", "Enable/disable clause", "Ctrl+Shift+D", lambda: self.toggle_clause(self.current_line())),
                ("complete", "Complete name", "Ctrl+Space", lambda: self.editor._maybe_complete(True))):
            act = QtGui.QAction(text, self)
            act.setShortcut(QtGui.QKeySequence(keys))
            act.setShortcutContext(ctx)
            act.triggered.connect(slot)
            self.addAction(act)
            self.actions_by_name[name] = act
        self.editor.setContextMenuPolicy(QtCore.Qt.ContextMenuPolicy.CustomContextMenu)
        self.editor.customContextMenuRequested.connect(self._context_menu)

    # ---- text -----------------------------------------------------------------------------------------------------
    def text(self) -> str:
        return self.editor.toPlainText()

    def set_text(self, text: str) -> None:
        """Show ``text`` (from the model: load, undo, redo) changing only the stretch that differs, so the caret,
        the scroll position and the colouring of the rest stay."""
        current = self.editor.toPlainText()
        self._shadow = text
        if current == text:
            return
        self._applying = True
        try:
            if any(ord(ch) > 0xFFFF for ch in text) or any(ord(ch) > 0xFFFF for ch in current):
                self.editor.setPlainText(text)   # positions differ from Qt's UTF-16 ones: replace it all
            else:
                pos, removed, inserted = text_diff(current, text)
                cur = QtGui.QTextCursor(self.editor.document())
                cur.setPosition(pos)
                cur.setPosition(pos + len(removed), QtGui.QTextCursor.MoveMode.KeepAnchor)
                cur.insertText(inserted)
                self.editor.setTextCursor(cur)
        finally:
            self._applying = False
        self._refresh_clauses()

    def _on_text_changed(self) -> None:
        if self._applying:
            return
        after = self.editor.toPlainText()
        before, self._shadow = self._shadow, after
        if before != after:
            self._clause_timer.start()      # the gutter's clause marks follow once typing pauses
            self.edited.emit(self.key, before, after, bool(self.editor.typing))

    def _replace_text(self, new: str, cursor_pos: int | None = None) -> None:
        """A user edit made by a command of the page (comment, clause, replace all): one undo step."""
        before = self._shadow
        self.set_text(new)
        if cursor_pos is not None:
            cur = self.editor.textCursor()
            cur.setPosition(max(0, min(cursor_pos, len(new))))
            self.editor.setTextCursor(cur)
        if before != new:
            self.edited.emit(self.key, before, new, False)

    def _refresh_clauses(self) -> None:
        self._clause_timer.stop()
        self.editor.clauses = clause_spans(self.editor.toPlainText())
        self.editor.gutter.update()

    # ---- diagnostics ----------------------------------------------------------------------------------------------
    def set_diagnostics(self, diagnostics: Sequence[Any]) -> None:
        self.editor.set_diagnostics(diagnostics)
        self.problems.clear()
        errors = sum(1 for d in diagnostics if d.severity == "error")
        warnings = len(diagnostics) - errors
        self.summary.setText("No problems" if not diagnostics else
                             f"{errors} error{'s' * (errors != 1)}, {warnings} warning{'s' * (warnings != 1)}")
        for d in diagnostics:
            item = QtWidgets.QListWidgetItem(f"{d.line}:{d.col}  {d.severity}: {d.message}  [{d.code}]")
            item.setForeground(QtGui.QColor(SEVERITY_COLOURS.get(d.severity, "#d1242f")))
            item.setData(QtCore.Qt.ItemDataRole.UserRole, (d.line, d.col))
            self.problems.addItem(item)

    def _on_problem_activated(self, item: QtWidgets.QListWidgetItem) -> None:
        line, col = item.data(QtCore.Qt.ItemDataRole.UserRole)
        self.goto_line(line, col)
        self.diagnosticActivated.emit(line, col)

    # ---- navigation -----------------------------------------------------------------------------------------------
    def current_line(self) -> int:
        return self.editor.textCursor().blockNumber() + 1

    def goto_line(self, line: int, col: int = 1) -> None:
        doc = self.editor.document()
        block = doc.findBlockByNumber(max(0, min(int(line), doc.blockCount()) - 1))
        cur = QtGui.QTextCursor(block)
        cur.setPosition(block.position() + max(0, min(col - 1, block.length() - 1)))
        self.editor.setTextCursor(cur)
        self.editor.centerCursor()
        self.editor.setFocus()
        if self.bar.goto.isVisible():
            self.bar.hide()

    def close_bar(self) -> None:
        self.bar.hide()
        self.editor.setFocus()

    # ---- commands -------------------------------------------------------------------------------------------------
    def toggle_comment(self) -> None:
        cur = self.editor.textCursor()
        doc = self.editor.document()
        first = doc.findBlock(cur.selectionStart()).blockNumber()
        last_block = doc.findBlock(cur.selectionEnd())
        last = last_block.blockNumber()
        if cur.hasSelection() and last > first and cur.selectionEnd() == last_block.position():
            last -= 1       # a selection ending at the start of a line does not take that line
        lines = self.text().split("\n")
        lines[first:last + 1] = toggle_comment(lines[first:last + 1])
        new = "\n".join(lines)
        self._replace_text(new, sum(len(ln) + 1 for ln in lines[:first]))

    def toggle_clause(self, line: int) -> bool:
        """Enable the clause at ``line`` when it is disabled, else disable it; False when no clause is there."""
        text = self.text()
        for c in clause_spans(text):
            if c.first <= line <= c.last:
                res = set_clause_enabled(text, line, not c.enabled)
                if res is not None:
                    self._replace_text(res[0])
                    self.goto_line(line)
                    return True
        return False

    def _flags(self) -> QtGui.QTextDocument.FindFlag:
        f = QtGui.QTextDocument.FindFlag(0)
        if self.bar.case.isChecked():
            f |= QtGui.QTextDocument.FindFlag.FindCaseSensitively
        return f

    def find_next(self, backward: bool = False) -> bool:
        needle = self.bar.find.text()
        if not needle:
            return False
        flags = self._flags() | (QtGui.QTextDocument.FindFlag.FindBackward if backward else
                                 QtGui.QTextDocument.FindFlag(0))
        found = self.editor.find(needle, flags)
        if not found:   # wrap around
            cur = self.editor.textCursor()
            cur.movePosition(QtGui.QTextCursor.MoveOperation.End if backward else QtGui.QTextCursor.MoveOperation.Start)
            self.editor.setTextCursor(cur)
            found = self.editor.find(needle, flags)
        self.bar.status.setText("" if found else f"'{needle}' not found")
        return found

    def _matches(self, s: str) -> bool:
        needle = self.bar.find.text()
        return s == needle if self.bar.case.isChecked() else s.lower() == needle.lower()

    def replace_one(self) -> None:
        cur = self.editor.textCursor()
        if cur.hasSelection() and self._matches(cur.selectedText()):
            text = self.text()
            a, b = cur.selectionStart(), cur.selectionEnd()
            self._replace_text(text[:a] + self.bar.replace.text() + text[b:], a + len(self.bar.replace.text()))
        self.find_next(False)

    def replace_all(self) -> int:
        needle, repl = self.bar.find.text(), self.bar.replace.text()
        if not needle:
            return 0
        text = self.text()
        if self.bar.case.isChecked():
            count, new = text.count(needle), text.replace(needle, repl)
        else:
            import re

            new, count = re.subn(re.escape(needle), lambda m: repl, text, flags=re.IGNORECASE)
        if count:
            self._replace_text(new, self.editor.textCursor().position())
        self.bar.status.setText(f"{count} replaced")
        return count

    def _context_menu(self, pos: QtCore.QPoint) -> None:
        menu = self.editor.createStandardContextMenu()
        for a in menu.actions():     # the document's own undo is off; the window's Edit menu undoes
            if a.text().replace("&", "").startswith(("Undo", "Redo")):
                menu.removeAction(a)
        menu.addSeparator()
        for name in ("clause", "comment", "find", "replace", "goto"):
            menu.addAction(self.actions_by_name[name])
        menu.exec(self.editor.mapToGlobal(pos))


class RuleEditor(QtWidgets.QWidget):
    """Tabs of :class:`RuleEditorPage`, one per rule file, with the editor's toolbar (Analyze, Apply, Save)."""

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ruleEditor")
        lay = QtWidgets.QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        self.toolbar = QtWidgets.QToolBar(self)
        self.toolbar.setIconSize(QtCore.QSize(16, 16))
        self.toolbar.setToolButtonStyle(QtCore.Qt.ToolButtonStyle.ToolButtonTextOnly)
        lay.addWidget(self.toolbar)
        self.tabs = QtWidgets.QTabWidget(self)
        lay.addWidget(self.tabs)
        self.pages: dict[str, RuleEditorPage] = {}
        self.placeholder = QtWidgets.QLabel("Open a project to edit its rules.")
        self.placeholder.setAlignment(QtCore.Qt.AlignmentFlag.AlignCenter)
        self.tabs.addTab(self.placeholder, "Rules")

    def set_documents(self, documents: Sequence[tuple[str, str, str]]) -> list[RuleEditorPage]:
        """One page per ``(key, title, text)``; replaces the pages shown before."""
        self.tabs.clear()
        for page in self.pages.values():
            page.deleteLater()
        self.pages = {}
        for key, title, text in documents:
            page = RuleEditorPage(key, title)
            page.set_text(text)
            self.pages[key] = page
            self.tabs.addTab(page, title)
        if not self.pages:
            self.tabs.addTab(self.placeholder, "Rules")
        return list(self.pages.values())

    def page(self, key: str | None = None) -> RuleEditorPage | None:
        if key is not None:
            return self.pages.get(key)
        w = self.tabs.currentWidget()
        return w if isinstance(w, RuleEditorPage) else None
