"""The city editor's mouse tools on the map (widgets/map_tools.py protocol): paint with a brush, rectangle fill,
eyedropper and select/move a block.

Why a stroke is previewed in the draft and committed on release: the painted cells must show while the mouse
moves (the draft is patched and the patch's cells recoloured at once, see core/view/city_draft.py); the derived
layers, the undo step and the validation follow once per stroke, when the button is released
(:class:`core.studio.city_edit.CityEdit`), so a long stroke is one undo step and the map settles once.
"""
from __future__ import annotations

from typing import Any, Protocol

from core.map.edit import Patch, block_rect, brush_offsets, pick, plan_move, plan_rect, plan_stroke
from core.studio import city_edit
from core.studio.city_edit import CityEdit, new_stroke_id
from core.view.city_draft import PAINT_RGB, draft_rgb
from widgets.map_tools import CellEvent, MapTool, paint_cells


class Editor(Protocol):
    """What the tools use of the city editor's controller (app/features/city_editor/controller.py)."""

    session: Any
    map: Any
    kind: str
    snap: bool

    def brush_size(self, kind: str) -> int: ...

    def select_tool(self, key: str, activate: bool = True) -> None: ...

    def execute(self, command: Any) -> None: ...

    def status(self, text: str, ms: int = 6000) -> None: ...

LABELS = {"walking": "walking street", "traffic": "traffic street", "crossing": "crossing", "empty": "erase"}


def _rgba(kind: str, alpha: int = 110) -> tuple[int, int, int, int]:
    r, g, b = PAINT_RGB.get(kind, (255, 255, 255))
    return (r, g, b, alpha)


class _Tool(MapTool):
    def __init__(self, ctl: Editor) -> None:
        self.ctl = ctl

    @property
    def session(self) -> Any:
        return self.ctl.session

    @property
    def draft(self):
        return city_edit.draft_of(self.session)

    def commit(self, patch: Patch | None, text: str, stroke: int | None = None) -> None:
        if patch is not None and patch.changed:
            self.ctl.execute(CityEdit(patch, text, stroke=stroke))


class PaintTool(_Tool):
    """Paint ``kind`` with the editor's brush along the mouse path (snapped to a straight line when snapping is
    on: the stroke keeps to the row or column it started on)."""

    def __init__(self, ctl: Editor, kind: str) -> None:
        super().__init__(ctl)
        self.kind = kind
        self.name = kind
        self.points: list[tuple[int, int]] = []
        self.patch: Patch | None = None
        self.stroke: int | None = None

    def _brush_rect(self, r: int, c: int) -> tuple[int, int, int, int]:
        lo, hi = brush_offsets(self.ctl.brush_size(self.kind))
        return (r - lo, c - lo, r + hi, c + hi)

    def hover(self, ev: CellEvent | None) -> None:
        if ev is None:
            self.ctl.map.tools.clear_preview()
        else:
            self.ctl.map.tools.set_preview([self._brush_rect(ev.row, ev.col)], _rgba(self.kind))

    def press(self, ev: CellEvent) -> None:
        self.points = [ev.cell]
        self.stroke = new_stroke_id()
        self.patch = None
        self._update()

    def drag(self, ev: CellEvent) -> None:
        cell = ev.cell
        if self.ctl.snap and self.points:
            r0, c0 = self.points[0]
            cell = (r0, cell[1]) if abs(cell[1] - c0) >= abs(cell[0] - r0) else (cell[0], c0)
            self.points = [self.points[0], cell]
        else:
            self.points.append(cell)
        self.ctl.map.tools.set_preview([self._brush_rect(*cell)], _rgba(self.kind))
        self._update()

    def _update(self) -> None:
        """Re-plan the whole stroke from its first point (the traffic orientation follows the whole stroke)."""
        self._revert()
        patch = plan_stroke(self.draft, self.points, self.kind, self.ctl.brush_size(self.kind))
        if patch is not None:
            city_edit.preview(self.session, patch)
            paint_cells(self.ctl.map, patch.r0, patch.c0, draft_rgb(patch.after))
        self.patch = patch

    def _revert(self) -> None:
        if self.patch is not None:
            city_edit.revert_preview(self.session, self.patch)
            paint_cells(self.ctl.map, self.patch.r0, self.patch.c0, draft_rgb(self.patch.before))
            self.patch = None

    def release(self, ev: CellEvent) -> None:
        patch, self.patch = self.patch, None
        self.commit(patch, f"Paint {LABELS.get(self.kind, self.kind)}", self.stroke)
        self.points = []

    def cancel(self) -> None:
        self._revert()
        self.points = []
        self.ctl.map.tools.clear_preview()

    def deactivated(self) -> None:
        self.cancel()


class RectTool(_Tool):
    """Drag a rectangle; on release it is filled with the editor's current paint kind."""

    name = "rect"

    def __init__(self, ctl: Editor) -> None:
        super().__init__(ctl)
        self.start: tuple[int, int] | None = None

    def hover(self, ev: CellEvent | None) -> None:
        if ev is None:
            self.ctl.map.tools.clear_preview()
        elif self.start is None:
            self.ctl.map.tools.set_preview([(ev.row, ev.col, ev.row, ev.col)], _rgba(self.ctl.kind))

    @staticmethod
    def _rect(start: tuple[int, int], cell: tuple[int, int]) -> tuple[int, int, int, int]:
        (ra, ca), (rb, cb) = start, cell
        return (min(ra, rb), min(ca, cb), max(ra, rb), max(ca, cb))

    def press(self, ev: CellEvent) -> None:
        self.start = ev.cell
        self.ctl.map.tools.set_preview([self._rect(ev.cell, ev.cell)], _rgba(self.ctl.kind))

    def drag(self, ev: CellEvent) -> None:
        if self.start is not None:
            self.ctl.map.tools.set_preview([self._rect(self.start, ev.cell)], _rgba(self.ctl.kind))
            r0, c0, r1, c1 = self._rect(self.start, ev.cell)
            self.ctl.status(f"Rectangle {r1 - r0 + 1} × {c1 - c0 + 1} cells", 3000)

    def release(self, ev: CellEvent) -> None:
        if self.start is None:
            return
        start, self.start = self.start, None
        self.ctl.map.tools.clear_preview()
        kind = self.ctl.kind
        self.commit(plan_rect(self.draft, start, ev.cell, kind), f"Fill rectangle with {LABELS.get(kind, kind)}")

    def cancel(self) -> None:
        self.start = None
        self.ctl.map.tools.clear_preview()


class PickTool(_Tool):
    """The eyedropper: a click takes the kind under the cursor and switches to painting it."""

    name = "pick"

    def press(self, ev: CellEvent) -> None:
        kind = pick(self.draft, ev.row, ev.col)
        if kind is None:
            return
        if kind in ("traffic_h", "traffic_v"):
            kind = "traffic"
        self.ctl.select_tool(kind)
        self.ctl.status(f"Picked {LABELS.get(kind, kind)}", 4000)


class MoveTool(_Tool):
    """Select a city block (the traffic-free area under the cursor) and drag it somewhere else."""

    name = "move"

    def __init__(self, ctl: Editor) -> None:
        super().__init__(ctl)
        self.rect: tuple[int, int, int, int] | None = None
        self.origin: tuple[int, int] | None = None
        self.offset = (0, 0)

    def hover(self, ev: CellEvent | None) -> None:
        if ev is None or self.origin is not None:
            return
        rect = block_rect(self.draft, ev.row, ev.col)
        if rect is None:
            self.ctl.map.tools.clear_preview()
        else:
            self.ctl.map.tools.set_preview([rect], (255, 235, 59, 40), (255, 235, 59, 255))

    def press(self, ev: CellEvent) -> None:
        self.rect = block_rect(self.draft, ev.row, ev.col)
        self.origin = ev.cell if self.rect is not None else None
        self.offset = (0, 0)

    def drag(self, ev: CellEvent) -> None:
        if self.rect is None or self.origin is None:
            return
        self.offset = (ev.row - self.origin[0], ev.col - self.origin[1])
        t, l, b, r = self.rect
        dr, dc = self.offset
        self.ctl.map.tools.set_preview([self.rect, (t + dr, l + dc, b + dr, r + dc)], (255, 235, 59, 50),
                                       (255, 235, 59, 255))

    def release(self, ev: CellEvent) -> None:
        rect, self.rect, self.origin = self.rect, None, None
        self.ctl.map.tools.clear_preview()
        if rect is not None:
            dr, dc = self.offset
            self.commit(plan_move(self.draft, rect, dr, dc), f"Move block by ({dr}, {dc})")

    def cancel(self) -> None:
        self.rect = self.origin = None
        self.ctl.map.tools.clear_preview()

