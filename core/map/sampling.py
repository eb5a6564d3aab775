"""Start/goal sampling for agents (docs/reference.md#start-and-goal-sampling and
docs/reference.md#goal-arrival-and-new-trips).

Candidate cells:

* Pedestrians: walking-street cells (code exactly 1; crossings excluded) with a House or Office cell in their
  8-neighbourhood.
* Cars (``variant="master"``, the default): traffic cells (code exactly 2) from which a cross-shaped kernel
  of reach ``walking_width + 1`` (13×13 on the reference, so only curb rows/columns) hits a Gas Station,
  Garage or Store cell. ``variant="vis"`` uses reach ``walking_width + 4`` (19×19) and keeps only
  eastbound/southbound lane cells, reproducing the vis branch's ``permitted_sg`` mask including its slicing
  bug (reversed slice bounds drop the westbound and northbound lanes), for the initial pick only.

``agent_region`` (``region``) removes candidates with ``row >= region`` or ``col >= region``.

Goals exclude the start's *nearest block* (block of the building cell nearest to the start in Manhattan
distance, first in row-major order), dilated by a square kernel: reach ``(walking_width + 2) // 2`` for
pedestrians (7×7 on the reference) and ``(walking_width + traffic_width // 2 + 1) // 2`` for cars (11×11);
a car's goal also never equals its start. Every random pick is ``rng.integers(n)`` over the candidate cells in
row-major order, so runs are reproducible from the numpy Generator passed in.

Deliberate deviation: where the exclusion leaves no goal at all (e.g. a 1×1-block city) the reference would
crash; here the goal is drawn from all candidates except the start cell instead (docs/planning.md).
"""
from __future__ import annotations

from collections import Counter
from typing import Literal

import numpy as np
from scipy import ndimage

from core.base.codes import GARAGE, GAS_STATION, HOUSE, OFFICE, STORE, STREET_TRAFFIC, STREET_WALKING, Kind
from core.base.errors import ConfigError
from core.map.model import CityMap

__all__ = ["StartGoalSampler", "Variant", "map_widths"]

Variant = Literal["master", "vis"]
Cell = tuple[int, int]

PEDESTRIAN_TARGETS = (HOUSE, OFFICE)
CAR_TARGETS = (GAS_STATION, GARAGE, STORE)


def map_widths(city: CityMap) -> tuple[int, int]:
    """``(walking_width, traffic_width)``: the most common width of each street kind (5, 11 on the reference)."""
    def mode(kind: str, default: int) -> int:
        widths = Counter(s.width for s in city.streets if s.kind == kind)
        if not widths:
            return default
        best = max(widths.values())
        return min(wd for wd, n in widths.items() if n == best)
    return mode("walking", 5), mode("traffic", 11)


def _cross_dilate(mask: np.ndarray, reach: int) -> np.ndarray:
    """Cells whose centre row or centre column of a (2·reach+1)² window hits ``mask``."""
    size = 2 * reach + 1
    rows = ndimage.maximum_filter1d(mask.view(np.uint8), size, axis=1, mode="constant") > 0
    cols = ndimage.maximum_filter1d(mask.view(np.uint8), size, axis=0, mode="constant") > 0
    return rows | cols


class StartGoalSampler:
    """Candidate masks and random start/goal picks for one city and one ``agent_region``.

    Masks are computed once; the object is read-only after construction and may be shared between threads
    (each caller passes its own numpy Generator).
    """

    def __init__(self, city: CityMap, region: int | None = None, *, variant: Variant = "master",
                 walking_width: int | None = None, traffic_width: int | None = None) -> None:
        if variant not in ("master", "vis"):
            raise ValueError(f"unknown sampling variant {variant!r} (expected 'master' or 'vis')")
        self.city = city
        self.region = region
        self.variant = variant
        ww, tw = map_widths(city)
        self.walking_width = ww if walking_width is None else int(walking_width)
        self.traffic_width = tw if traffic_width is None else int(traffic_width)
        self.car_reach = self.walking_width + (4 if variant == "vis" else 1)
        self.ped_exclude_reach = (self.walking_width + 2) // 2
        self.car_exclude_reach = (self.walking_width + self.traffic_width // 2 + 1) // 2

        region_mask = np.ones(city.shape, dtype=bool)
        if region is not None:
            region_mask[int(region):, :] = False
            region_mask[:, int(region):] = False
        self.region_mask = region_mask

        ped = city.street == STREET_WALKING
        ped &= ndimage.binary_dilation(np.isin(city.building, PEDESTRIAN_TARGETS), structure=np.ones((3, 3), bool))
        car = (city.street == STREET_TRAFFIC) & _cross_dilate(np.isin(city.building, CAR_TARGETS), self.car_reach)
        # Masks remembered for re-sampling after arrival (vis does not apply permitted_sg there;
        # docs/reference.md#goal-arrival-and-new-trips).
        self._desired = {Kind.PEDESTRIAN: ped & region_mask, Kind.CAR: car & region_mask}
        if variant == "vis":
            permitted = city.lane_graph.lane_cells(headings=((0, 1), (1, 0)))
            car = car & permitted
        self._initial = {Kind.PEDESTRIAN: ped & region_mask, Kind.CAR: car & region_mask}
        self._cells = {k: np.argwhere(m).astype(np.int32) for k, m in self._initial.items()}
        # goal picks filter these row-major cell lists instead of scanning whole-map masks (same cells, same order)
        self._goal_cells = {(k, resample): np.argwhere(m).astype(np.int64)
                            for resample, masks in ((False, self._initial), (True, self._desired))
                            for k, m in masks.items()}
        for m in list(self._desired.values()) + list(self._initial.values()):
            m.setflags(write=False)
        blocks = city.block
        self._bcells = np.argwhere(blocks > 0).astype(np.int64)
        self._bids = blocks[blocks > 0].astype(np.int64)  # boolean indexing is row-major, like argwhere
        # block id -> bounding slices (scipy.ndimage.find_objects; None for ids without cells)
        self._block_box = ndimage.find_objects(blocks.astype(np.int64)) if blocks.size and blocks.max() > 0 else []
        self._dilated: dict[tuple[int, int], tuple[int, int, np.ndarray]] = {}

    # ------------------------------------------------------------------ masks
    def candidates(self, kind: Kind) -> np.ndarray:
        """Bool ``[H, W]`` mask of start (and base goal) cells for ``kind`` (region applied; read-only)."""
        return self._initial[Kind(kind)]

    def candidate_cells(self, kind: Kind) -> np.ndarray:
        """The candidate cells of :meth:`candidates` as int32 ``[N, 2]`` in row-major order."""
        return self._cells[Kind(kind)]

    def nearest_block(self, cell) -> int:
        """Block id of the building cell nearest to ``cell`` (Manhattan; first minimum in row-major order)."""
        if not len(self._bids):
            return 0
        d = np.abs(self._bcells[:, 0] - int(cell[0])) + np.abs(self._bcells[:, 1] - int(cell[1]))
        return int(self._bids[int(np.argmin(d))])

    def excluded(self, kind: Kind, cell) -> np.ndarray:
        """Cells excluded as goals for an agent at ``cell``: its nearest block, dilated (bool ``[H, W]``)."""
        r0, c0, window = self._excluded_window(kind, cell)
        mask = np.zeros(self.city.shape, dtype=bool)
        mask[r0: r0 + window.shape[0], c0: c0 + window.shape[1]] = window
        mask.setflags(write=False)
        return mask

    def _excluded_window(self, kind: Kind, cell) -> tuple[int, int, np.ndarray]:
        """:meth:`excluded` as (first row, first column, the mask inside that window); outside it nothing is
        excluded. Cached per (block, reach).

        Why a window: dilating one block over the whole map (scipy, square kernel) took tens of milliseconds on
        a 517² city — inside a step whenever an agent re-sampled its goal near a block not seen before — and
        cached whole-map masks for every block. The dilation can only reach ``reach`` cells beyond the block's
        bounding box, so dilating that box plus a ``reach`` margin (clipped to the map, as the whole-map
        dilation is) gives the same cells."""
        kind = Kind(kind)
        block = self.nearest_block(cell)
        reach = self.car_exclude_reach if kind is Kind.CAR else self.ped_exclude_reach
        key = (block, reach)
        hit = self._dilated.get(key)
        if hit is None:
            box = self._block_box[block - 1] if 0 < block <= len(self._block_box) else None
            if box is None:
                hit = (0, 0, np.zeros((0, 0), dtype=bool))
            else:
                h, w = self.city.shape
                r0, r1 = max(0, box[0].start - reach), min(h, box[0].stop + reach)
                c0, c1 = max(0, box[1].start - reach), min(w, box[1].stop + reach)
                size = 2 * reach + 1
                window = ndimage.binary_dilation(self.city.block[r0:r1, c0:c1] == block,
                                                 structure=np.ones((size, size), bool))
                window.setflags(write=False)
                hit = (r0, c0, window)
            self._dilated[key] = hit
        return hit

    def goal_candidates(self, kind: Kind, start, *, resample: bool = False) -> np.ndarray:
        """Goal mask for an agent starting at ``start`` (``resample=True``: the re-sample after arrival,
        docs/reference.md#goal-arrival-and-new-trips)."""
        kind = Kind(kind)
        base = self._desired[kind] if resample else self._initial[kind]
        mask = base & ~self.excluded(kind, start)
        if kind is Kind.CAR and not resample:
            mask[int(start[0]), int(start[1])] = False
        return mask

    # ------------------------------------------------------------------ random picks
    def _pick(self, cells: np.ndarray, rng: np.random.Generator) -> Cell:
        i = int(rng.integers(len(cells)))
        return int(cells[i, 0]), int(cells[i, 1])

    def _no_cells(self, kind: Kind, what: str) -> ConfigError:
        need = "a House or Office next to a walking street" if kind is Kind.PEDESTRIAN else \
            "a Gas Station, Garage or Store near a traffic street"
        where = f" inside agent_region {self.region}" if self.region is not None else ""
        return ConfigError(f"map {self.city.name!r} has no {what} cells for {Kind(kind).label.lower()}s{where} "
                           f"(needs {need})", self.city.source)

    def sample_start(self, kind: Kind, rng: np.random.Generator) -> Cell:
        """A start cell, uniform over :meth:`candidate_cells`."""
        cells = self._cells[Kind(kind)]
        if not len(cells):
            raise self._no_cells(Kind(kind), "start")
        return self._pick(cells, rng)

    def _sample_goal(self, kind: Kind, start, rng: np.random.Generator, resample: bool) -> Cell:
        kind = Kind(kind)
        # = np.argwhere(self.goal_candidates(kind, start, resample=resample)), without the whole-map scan
        base_cells = self._goal_cells[(kind, resample)]
        r0, c0, window = self._excluded_window(kind, start)
        rr, cc = base_cells[:, 0] - r0, base_cells[:, 1] - c0
        inside = (rr >= 0) & (rr < window.shape[0]) & (cc >= 0) & (cc < window.shape[1])
        keep = np.ones(len(base_cells), dtype=bool)
        keep[inside] = ~window[rr[inside], cc[inside]]
        if kind is Kind.CAR and not resample:
            keep &= (base_cells[:, 0] != int(start[0])) | (base_cells[:, 1] != int(start[1]))
        cells = base_cells[keep]
        if not len(cells):
            # Deliberate fallback (the reference would fail): any candidate except the start itself.
            base = (self._desired[kind] if resample else self._initial[kind]).copy()
            base[int(start[0]), int(start[1])] = False
            cells = np.argwhere(base)
            if not len(cells):
                raise self._no_cells(kind, "goal")
        return self._pick(cells, rng)

    def sample_goal(self, kind: Kind, start, rng: np.random.Generator) -> Cell:
        """A goal for a trip from ``start`` (docs/reference.md#start-and-goal-sampling), uniform over
        :meth:`goal_candidates`."""
        return self._sample_goal(kind, start, rng, resample=False)

    def resample_goal(self, kind: Kind, new_start, rng: np.random.Generator) -> Cell:
        """The next goal after arrival (docs/reference.md#goal-arrival-and-new-trips): the remembered candidate
        mask minus the new start's block."""
        return self._sample_goal(kind, new_start, rng, resample=True)
