"""Growable arrays of rows for recordings: appends whose worst case, not only their average, is cheap.

Why a module of its own: an episode buffer (core/sim/episode.py) grows a dozen arrays by one row per step for as
long as a studio session records; the growth policy is independent of what the rows hold.
"""
from __future__ import annotations

import numpy as np

__all__ = ["GrowingRows"]


class GrowingRows:
    """A growable array of rows whose appends never pause to copy the whole history.

    Why: plain doubling copies every recorded row at once when the capacity runs out, a pause as long as the
    recording is large (one step of a long recording of many agents would stall). Here, once the array is 3/4
    full, the next (double-size) array is allocated (``np.zeros``: pages are mapped lazily) and every append
    also copies up to four old rows per row appended into it, so by the time the capacity runs out the old rows
    are (all but a few) copied and the switch is cheap: no append copies more than four rows per row it adds.
    Rows are only written at the end (or after :meth:`truncate`); :meth:`set_row` rewrites a row in both
    allocations.
    """

    __slots__ = ("data", "n", "_next", "_moved")

    def __init__(self, tail: tuple[int, ...], dtype, cap: int = 64) -> None:
        self.data = np.zeros((cap,) + tail, dtype)
        self.n = 0               # rows in use
        self._next: np.ndarray | None = None
        self._moved = 0          # rows of ``data`` already copied into ``_next``

    def used(self) -> np.ndarray:
        """The rows in use (a view, valid until the next append)."""
        return self.data[: self.n]

    def reserve(self, extra: int) -> np.ndarray:
        """Make room for ``extra`` more rows at ``n``; returns the array to write them into (then add them to
        ``n``)."""
        need = self.n + extra
        cap = len(self.data)
        if need > cap:
            if self._next is None or len(self._next) < need:  # only when one append exceeds the spare room
                new_cap = 2 * cap
                while new_cap < need:
                    new_cap *= 2
                self._next = np.zeros((new_cap,) + self.data.shape[1:], self.data.dtype)
                self._moved = 0
            self._next[self._moved: self.n] = self.data[self._moved: self.n]
            self.data, self._next, self._moved = self._next, None, 0
            cap = len(self.data)
        if self._next is None and need > cap - cap // 4:
            self._next = np.zeros((2 * cap,) + self.data.shape[1:], self.data.dtype)
            self._moved = 0
        if self._next is not None:
            stop = min(self.n, self._moved + 4 * max(extra, 1))
            if stop > self._moved:
                self._next[self._moved: stop] = self.data[self._moved: stop]
                self._moved = stop
        return self.data

    def truncate(self, n: int) -> None:
        self.n = n
        self._moved = min(self._moved, n)

    def set_row(self, k: int, value) -> None:
        """Rewrite row ``k`` (< ``n``) in place, in the next allocation too when it is copied there already."""
        self.data[k] = value
        if self._next is not None and k < self._moved:
            self._next[k] = value
