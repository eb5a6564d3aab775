"""The episode file format: its tag, versions, arrays and the meaning of the special values.

File format (``.npz``, see docs/formats.md "Episode files"): a ZIP archive whose members are stored
*uncompressed* ``.npy`` arrays plus ``meta.json`` (core/io/archive.py). Because members are stored, the reader
memory-maps each array in place, so opening a long episode is instant and reading step ``k`` is O(1) (a slice of
a memmap), whatever the episode length. ``numpy.load`` can also read the arrays (it ignores ``meta.json``).

Arrays (T = recorded steps, N = agents, V = max witness variables, C = concepts, M = plan cells,
K = recorded coins):

====================  ==================  =====================================================================
name                  shape / dtype       meaning
====================  ==================  =====================================================================
positions             [T+1, N, 2] int16   (row, col) at the start of step k (index T = final state)
headings              [T+1, N] int8       last move heading (-1 none, 0 Left, 1 Right, 2 Up, 3 Down)
goals                 [T+1, N, 2] int16   current goal cell
path_index            [T+1, N] int32      index of the position in the agent's current plan
plan_id               [T+1, N] int32      which plan (row of plan_offsets) is current
priorities            [T+1, N] int32      priority (can change at SPF resets)
concepts              [T+1, N, C] bool    concept flags, C in meta["concepts"] order
holds                 [T, N, 4] bool      action predicates derived by the rules (Slow, Normal, Fast, Stop)
decided               [T, N] int8         the rule decision as one action (default Normal)
realised              [T, N] int8         what the agent did (Slow/Normal/Fast by cells moved, Stop)
fired                 [T, N] int32        id of the clause that fired for the decided action (-1: default,
                                          -2: forced by an action override, not derived by the rules)
witness               [T, N, V] int32     agent index bound to each clause variable (-1: unbound)
reached               [T, N] bool         the agent was found on its goal at step k (goal reached event)
plan_cells            [M, 2] int16        all planned paths, concatenated
plan_offsets          [P+1] int64         plan p is plan_cells[plan_offsets[p]:plan_offsets[p+1]]
plan_agent            [P] int32           agent of plan p
plan_step             [P] int32           first state index at which plan p is current
coin_offsets          [T+1] int64         (version 2) step k's coins are rows coin_offsets[k]:coin_offsets[k+1]
coin_pairs            [K, 2] int32        (version 2) the ordered agent pair (a, b) of each coin
coin_predicate        [K] uint8           (version 2) its CollidingClose predicate: index into
                                          meta["coin_predicates"]
coin_outcome          [K] bool            (version 2) its outcome, as the rule engine saw it
====================  ==================  =====================================================================

The coins (version 2) are the CollidingClose draws of each step after any forced outcome of a scene — exactly
what the engine decided on — ordered by predicate, then by (a, b). ``meta["coins_from_step"]`` is the first step
whose coins are recorded: a version-1 recording continued by this program has none before it. Version 1 files
(no coin arrays) are still read: none of their steps has recorded coins.
"""
from __future__ import annotations

FORMAT_NAME = "logicity-episode"
#: the version this program writes (when the coins are recorded) and the newest it reads
FORMAT_VERSION = 2
#: the version of files without recorded coins (written before they were recorded, or by an exporter that has none)
VERSION_WITHOUT_COINS = 1
#: how the reader names these files in its messages
KIND = "LogiCity episode"
INT32_MAX = 2**31 - 1
#: ``fired`` values that are not clause ids: no rule derived the decided action (default Normal) / the action
#: was forced by an override (a user intervention in the studio, the controlled agent in SPF)
FIRED_DEFAULT = -1
FIRED_FORCED = -2

#: per-state arrays (T+1 rows) and per-step arrays (T rows)
STATE_FIELDS = ("positions", "headings", "goals", "path_index", "plan_id", "priorities", "concepts")
STEP_FIELDS = ("holds", "decided", "realised", "fired", "witness", "reached")
PLAN_FIELDS = ("plan_cells", "plan_offsets", "plan_agent", "plan_step")
COIN_FIELDS = ("coin_offsets", "coin_pairs", "coin_predicate", "coin_outcome")
#: per array: its dimensions (None = any size, a number = that size); see the table above
FIELD_SHAPES: dict[str, tuple[int | None, ...]] = {
    "positions": (None, None, 2), "headings": (None, None), "goals": (None, None, 2), "path_index": (None, None),
    "plan_id": (None, None), "priorities": (None, None), "concepts": (None, None, None),
    "holds": (None, None, 4), "decided": (None, None), "realised": (None, None), "fired": (None, None),
    "witness": (None, None, None), "reached": (None, None),
    "plan_cells": (None, 2), "plan_offsets": (None,), "plan_agent": (None,), "plan_step": (None,),
    "coin_offsets": (None,), "coin_pairs": (None, 2), "coin_predicate": (None,), "coin_outcome": (None,)}
BOOL_FIELDS = ("concepts", "holds", "reached", "coin_outcome")
