"""Syntax and semantic colouring of rule text: a ``QSyntaxHighlighter`` over :mod:`core.logic.lang.highlight_tokens`.

Why the classification is not here: it must agree with the parser and be testable without Qt; this class only maps
each token kind to a text format. Semantic colours need the ontology (``set_predicates``): the action in a head, a
known predicate, an unknown one (red, underlined like a misspelling), an action used in a body, variables and the
ego. The block state carries the lexer state across lines, so a body that continues on the next line is still a
body.
"""
from __future__ import annotations

from PySide6 import QtGui

from core.logic.lang.highlight_tokens import START, classify_line

__all__ = ["RuleHighlighter", "FORMAT_COLOURS"]

#: kind → (colour, bold, italic); the legend in the rule editor's tooltip names the same kinds.
FORMAT_COLOURS: dict[str, tuple[str, bool, bool]] = {
    "comment": ("#6a737d", False, True),
    "disabled": ("#9aa0a6", False, True),
    "directive": ("#8250df", True, False),
    "string": ("#0a7f3f", False, False),
    "number": ("#b35900", False, False),
    "punct": ("#57606a", False, False),
    "keyword": ("#cf222e", True, False),
    "label": ("#953800", False, True),
    "head": ("#0550ae", True, False),
    "head-error": ("#d1242f", True, False),
    "predicate": ("#116329", False, False),
    "action": ("#0550ae", False, False),
    "unknown": ("#d1242f", False, False),
    "variable": ("#8a4600", False, False),
    "ego": ("#6639ba", True, False),
    "anonymous": ("#8a4600", False, True),
    "error": ("#d1242f", True, False),
}


def _formats() -> dict[str, QtGui.QTextCharFormat]:
    out = {}
    for kind, (colour, bold, italic) in FORMAT_COLOURS.items():
        f = QtGui.QTextCharFormat()
        f.setForeground(QtGui.QColor(colour))
        if bold:
            f.setFontWeight(QtGui.QFont.Weight.Bold)
        f.setFontItalic(italic)
        if kind in ("unknown", "head-error", "error"):
            f.setUnderlineStyle(QtGui.QTextCharFormat.UnderlineStyle.DotLine)
            f.setUnderlineColor(QtGui.QColor(colour))
        if kind == "disabled":
            f.setFontStrikeOut(True)
        out[kind] = f
    return out


class RuleHighlighter(QtGui.QSyntaxHighlighter):
    """Colours a rule document; ``set_predicates({name: is_action})`` switches on the semantic colours."""

    def __init__(self, document: QtGui.QTextDocument) -> None:
        super().__init__(document)
        self._formats = _formats()
        self._predicates: dict[str, bool] | None = None

    def set_predicates(self, predicates: dict[str, bool] | None) -> None:
        if predicates != self._predicates:
            self._predicates = dict(predicates) if predicates is not None else None
            self.rehighlight()

    def kind_at(self, block: QtGui.QTextBlock, col: int) -> str | None:
        """The token kind at 0-based ``col`` of ``block`` (tests and tooltips)."""
        prev = block.previous()
        state = prev.userState() if prev.isValid() and prev.userState() >= 0 else START
        spans, _ = classify_line(block.text(), state, self._predicates)
        for s in spans:
            if s.start <= col < s.start + s.length:
                return s.kind
        return None

    def highlightBlock(self, text: str) -> None:  # noqa: N802 - Qt's name
        prev = self.previousBlockState()
        spans, state = classify_line(text, prev if prev >= 0 else START, self._predicates)
        for s in spans:
            fmt = self._formats.get(s.kind)
            if fmt is not None:
                self.setFormat(s.start, s.length, fmt)
        self.setCurrentBlockState(int(state))


