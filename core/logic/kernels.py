"""Compiled (numba) loops for the per-step work of large scenes: in-view domains, CollidingClose coin pairs, the
compiled engine's one-variable truth slices and its one-variable clause bodies.

Why: above :data:`core.logic.grounding.grounder.DENSE_PAIR_AGENTS` agents the numpy path of a step is a long chain of
calls on small [N, K] arrays; their per-call overhead and intermediate arrays, not the element work, set the cost
(docs/performance.md). Each kernel here replaces one such chain by a single loop over the agents.

Exactness: every kernel computes the same values as the numpy code it replaces (same integer thresholds, the
same float comparison for the straight-ahead test, the same orders), so decisions, coin draws and episodes do
not change; tests/core/logic/test_kernels.py compares each kernel with its numpy twin and
tests/core/sim/test_kernel_episodes.py whole episodes. This module imports numba at import time; callers go
through :mod:`core.logic.fast`, which imports it lazily and falls back to numpy when numba is missing.

Compiled on first use and cached on disk (``cache=True``: ``__pycache__`` next to this file, or numba's
per-user cache directory when that is not writable), so only the first large scene on a machine pays the
compilation (a few seconds).
"""
from __future__ import annotations

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

# grounding codes of the binary predicates the slice kernel evaluates (others fall back to numpy)
G_NONE, G_CLOSE, G_NEXT, G_PRI, G_LEFT, G_RIGHT, G_COLL = 0, 1, 2, 3, 4, 5, 6
# slice kinds: the domain mask, P(V), P(X, V), P(V, X), P(V, V), left to the caller (numpy)
K_VALID, K_UNARY, K_XV, K_VX, K_VV, K_SKIP = 0, 1, 2, 3, 4, 5

# (d_row, d_col) per heading index; the last row (heading -1) is the zero vector (as pair_geometry._DIRS)
_DR = np.array([0, 0, -1, 1, 0], dtype=np.int64)
_DC = np.array([-1, 1, 0, 0, 0], dtype=np.int64)


@njit(cache=True, nogil=True)
def _grid(pos, side):
    """Agents bucketed on a grid of ``side``-cell squares over the positions' bounding box: (order, starts,
    r_min, c_min, rows, cols); ``order[starts[b]:starts[b + 1]]`` are bucket b's agents in ascending order."""
    n = pos.shape[0]
    rmin, rmax, cmin, cmax = pos[0, 0], pos[0, 0], pos[0, 1], pos[0, 1]
    for i in range(1, n):
        r, c = pos[i, 0], pos[i, 1]
        rmin, rmax = min(rmin, r), max(rmax, r)
        cmin, cmax = min(cmin, c), max(cmax, c)
    rows = (rmax - rmin) // side + 1
    cols = (cmax - cmin) // side + 1
    starts = np.zeros(rows * cols + 1, dtype=np.int64)
    bucket = np.empty(n, dtype=np.int64)
    for i in range(n):
        b = ((pos[i, 0] - rmin) // side) * cols + (pos[i, 1] - cmin) // side
        bucket[i] = b
        starts[b + 1] += 1
    for b in range(rows * cols):
        starts[b + 1] += starts[b]
    fill = starts[:-1].copy()
    order = np.empty(n, dtype=np.int64)
    for i in range(n):  # ascending agents: each bucket's run stays sorted
        order[fill[bucket[i]]] = i
        fill[bucket[i]] += 1
    return order, starts, rmin, cmin, rows, cols


@njit(cache=True, nogil=True)
def domains(pos, boxes, lim, side):
    """Every ego's domain (docs/reference.md#who-is-in-view): int32 ent [N, K], the ego first, then the other
    agents inside its box in ascending order, at most ``lim[ego]`` entities, -1 pads; K = the largest domain.
    Returns (ent, ok); ok is False when some ego is not inside its own box (off the map), which the caller
    leaves to the general numpy path."""
    n = pos.shape[0]
    order, starts, rmin, cmin, rows, cols = _grid(pos, side)
    buf = np.empty(n, dtype=np.int64)
    cap = 16 * n
    flat = np.empty(cap, dtype=np.int32)
    off = np.zeros(n + 1, dtype=np.int64)
    kmax = 1
    for q in range(n):
        r0, r1, c0, c1 = boxes[q, 0], boxes[q, 1], boxes[q, 2], boxes[q, 3]
        # the agents inside the box (r0, r1, c0, c1), ascending, into buf[:m] (written out here: a helper
        # taking the arrays costs reference counting per call); floor division: a box partly or wholly outside
        # the agents' bounding box gives a clipped or empty bucket range
        m = 0
        for br in range(max((r0 - rmin) // side, 0), min((r1 - rmin) // side, rows - 1) + 1):
            for bc in range(max((c0 - cmin) // side, 0), min((c1 - cmin) // side, cols - 1) + 1):
                bk = br * cols + bc
                for t in range(starts[bk], starts[bk + 1]):
                    ag = order[t]
                    rr, cc = pos[ag, 0], pos[ag, 1]
                    if r0 <= rr <= r1 and c0 <= cc <= c1:
                        i = m   # insertion into the sorted run
                        while i > 0 and buf[i - 1] > ag:
                            buf[i] = buf[i - 1]
                            i -= 1
                        buf[i] = ag
                        m += 1
        found = False
        for j in range(m):
            if buf[j] == q:
                found = True
                break
        if not found:
            return np.full((n, 1), -1, dtype=np.int32), False
        k = min(m, lim[q])
        if off[q] + k > cap:
            while off[q] + k > cap:
                cap *= 2
            grown = np.empty(cap, dtype=np.int32)
            grown[: off[q]] = flat[: off[q]]
            flat = grown
        at = off[q]
        flat[at] = q
        w = 1
        for j in range(m):
            if w >= k:
                break
            if buf[j] != q:
                flat[at + w] = buf[j]
                w += 1
        off[q + 1] = at + k
        kmax = max(kmax, k)
    ent = np.full((n, kmax), -1, dtype=np.int32)
    for q in range(n):
        for j in range(off[q + 1] - off[q]):
            ent[q, j] = flat[off[q] + j]
    return ent, True


@njit(cache=True, nogil=True, inline="always")
def _ahead(ha, dr, dc, d2, c2):
    """b straight ahead of a (angle below the predicate's, which is < π/2): dot > 0 and dot² > cos²·d²."""
    dot = _DR[ha] * dr + _DC[ha] * dc
    return dot > 0 and dot * dot > c2 * d2


@njit(cache=True, nogil=True)
def coin_keys(pos, head, reach, reach2, is_car, c2, side):
    """The ordered pairs (a, b) that draw a CollidingClose coin, as keys a·N + b ascending
    (coins.draw_coins): a has moved, b ≠ a within a's reach (d² ≤ reach2[a]) and on a's cell or,
    a being a pedestrian, straight ahead of a. ``reach`` float64 [N] (the search box), ``c2`` = cos²(angle)."""
    n = pos.shape[0]
    order, starts, rmin, cmin, rows, cols = _grid(pos, side)
    buf = np.empty(n, dtype=np.int64)
    cap = 4 * n + 16
    keys = np.empty(cap, dtype=np.int64)
    m_all = 0
    for a in range(n):
        ha = head[a]
        if ha < 0:
            continue
        ri = np.int64(np.ceil(reach[a]))
        pr, pc = pos[a, 0], pos[a, 1]
        r0, r1, c0, c1 = pr - ri, pr + ri, pc - ri, pc + ri
        # the agents inside the box (r0, r1, c0, c1), ascending, into buf[:m] (written out here: a helper
        # taking the arrays costs reference counting per call); floor division: a box partly or wholly outside
        # the agents' bounding box gives a clipped or empty bucket range
        m = 0
        for br in range(max((r0 - rmin) // side, 0), min((r1 - rmin) // side, rows - 1) + 1):
            for bc in range(max((c0 - cmin) // side, 0), min((c1 - cmin) // side, cols - 1) + 1):
                bk = br * cols + bc
                for t in range(starts[bk], starts[bk + 1]):
                    ag = order[t]
                    rr, cc = pos[ag, 0], pos[ag, 1]
                    if r0 <= rr <= r1 and c0 <= cc <= c1:
                        i = m   # insertion into the sorted run
                        while i > 0 and buf[i - 1] > ag:
                            buf[i] = buf[i - 1]
                            i -= 1
                        buf[i] = ag
                        m += 1
        car = is_car[a]
        for j in range(m):
            b = buf[j]
            if b == a:
                continue
            dr = pos[b, 0] - pr
            dc = pos[b, 1] - pc
            d2 = dr * dr + dc * dc
            if d2 > reach2[a]:
                continue
            if d2 == 0 or (not car and _ahead(ha, dr, dc, d2, c2)):
                if m_all == cap:
                    cap *= 2
                    grown = np.empty(cap, dtype=np.int64)
                    grown[:m_all] = keys[:m_all]
                    keys = grown
                keys[m_all] = a * n + b
                m_all += 1
    return keys[:m_all].copy()


@njit(cache=True, nogil=True)
def slice_bits(ent, pos, head, priority, is_car, unary, spec, ipar, fpar, reach2, coin_k, coin_v, coin_off, out):
    """The compiled engine's one-variable slices (view_slices.ViewSlices._sparse_var_slices) as bit rows: bit j of
    ``out[s, e]`` (uint64 [≥S, E], K ≤ 64) is slot s's truth for entity j of view e. Slot s has kind
    ``spec[s, 0]`` (K_*), grounding ``spec[s, 1]`` (G_*), unary row / CollidingClose index ``spec[s, 2]``;
    ``ipar[s]`` = (lo2, hi2) integer squared-distance bounds, ``fpar[s]`` = cos²(angle). Pairs are (ego, V) for
    K_XV and (V, ego) for K_VX; padding and the ego's own column are False (a pair of equal agents). Slots of
    kind K_SKIP are left untouched. One pass over the view entries: each entry's geometry serves every slot;
    everything is written out in this loop (a helper taking arrays costs reference counting per call)."""
    e, k = ent.shape
    n = pos.shape[0]
    s_n = spec.shape[0]
    word = np.zeros(s_n, dtype=np.uint64)
    for q in range(e):
        word[:] = 0
        x = ent[q, 0]
        for j in range(k):
            v = ent[q, j]
            if v < 0:
                continue
            bit = np.uint64(j)
            pair = j > 0 and x >= 0
            dr = dc = d2 = 0
            if pair:   # (ego, V); (V, ego) is the same pair mirrored: offsets negated, same distance
                dr = pos[v, 0] - pos[x, 0]
                dc = pos[v, 1] - pos[x, 1]
                d2 = dr * dr + dc * dc
            for s in range(s_n):
                kind = spec[s, 0]
                val = False
                if kind == K_VALID:
                    val = True
                elif kind == K_UNARY:
                    val = unary[spec[s, 2], v]
                elif pair and (kind == K_XV or kind == K_VX):
                    if kind == K_XV:
                        a, b, pdr, pdc = x, v, dr, dc
                    else:
                        a, b, pdr, pdc = v, x, -dr, -dc
                    g = spec[s, 1]
                    if g == G_CLOSE:
                        val = ipar[s, 0] < d2 <= ipar[s, 1]
                    elif g == G_NEXT:
                        val = d2 < ipar[s, 1]
                    elif g == G_PRI:
                        val = priority[a] < priority[b]
                    elif g == G_LEFT or g == G_RIGHT:
                        hb = head[b]
                        if hb >= 0:
                            z = _DC[hb] * pdr - _DR[hb] * pdc
                            val = z > 0 if g == G_LEFT else z < 0
                    elif g == G_COLL:
                        row = spec[s, 2]
                        ha = head[a]
                        if ha >= 0 and d2 <= reach2[row, a]:
                            dot = _DR[ha] * pdr + _DC[ha] * pdc
                            ahead = dot > 0 and dot * dot > fpar[s] * d2
                            if d2 == 0 or (ahead and not is_car[a]):
                                key = a * n + b   # its coin: binary search in the predicate's sorted keys
                                lo, hi = coin_off[row], coin_off[row + 1]
                                i0, i1 = lo, hi
                                while i0 < i1:
                                    mid = (i0 + i1) >> 1
                                    if coin_k[mid] < key:
                                        i0 = mid + 1
                                    else:
                                        i1 = mid
                                val = i0 < hi and coin_k[i0] == key and coin_v[i0]
                            else:
                                val = ahead and is_car[a]
                word[s] |= np.uint64(val) << bit
        for s in range(s_n):
            if spec[s, 0] != K_SKIP:
                out[s, q] = word[s]


@njit(cache=True, nogil=True)
def pack_bits(t, out):
    """bool [S, E, K] (K ≤ 64) → uint64 [S, E] into ``out``: bit j = t[s, e, j]."""
    one = np.uint64(1)
    for s in range(t.shape[0]):
        for q in range(t.shape[1]):
            word = np.uint64(0)
            for j in range(t.shape[2]):
                if t[s, q, j]:
                    word |= one << np.uint64(j)
            out[s, q] = word


@njit(cache=True, nogil=True)
def unpack_rows(bits, idx, rows, k):
    """bool [len(idx), len(rows), k]: slots ``idx`` of the views ``rows``, unpacked (t1[idx[:, None], rows])."""
    out = np.zeros((idx.shape[0], rows.shape[0], k), dtype=np.bool_)
    one = np.uint64(1)
    for a in range(idx.shape[0]):
        for b in range(rows.shape[0]):
            word = bits[idx[a], rows[b]]
            for j in range(k):
                out[a, b, j] = (word >> np.uint64(j)) & one != 0
    return out


@njit(cache=True, nogil=True)
def flat_bodies(t0, b1, idx0, idx1, var_rows):
    """One-variable clause bodies (compiled_clauses.FlatGroup.evaluate without action literals) on bit rows: body[c, e]
    = every ego literal t0[idx0[c]] holds and some entity j has every bit b1[idx1[c]] set (the domain mask among
    them); wit[c, e] = the lowest such j (0 when none, as argmax), -1 for a clause without a variable.
    T0 has at most 64 rows (the caller checks): each ego's row of T0 becomes one word, so a clause's ego
    literals are one mask test."""
    c_n = idx0.shape[0]
    e = t0.shape[1]
    body = np.empty((c_n, e), dtype=np.bool_)
    wit = np.empty((c_n, e), dtype=np.int64)
    one = np.uint64(1)
    high = np.uint64(0x8000000000000000)
    ego = np.zeros(e, dtype=np.uint64)
    for r in range(t0.shape[0]):
        bit = one << np.uint64(r)
        for q in range(e):
            if t0[r, q]:
                ego[q] |= bit
    for c in range(c_n):
        need = np.uint64(0)
        for i in range(idx0.shape[1]):
            need |= one << np.uint64(idx0[c, i])
        if var_rows[c]:
            for q in range(e):
                m = b1[idx1[c, 0], q]
                for i in range(1, idx1.shape[1]):
                    m &= b1[idx1[c, i], q]
                body[c, q] = ((ego[q] & need) == need) & (m != 0)
                w = trailing_zeros(m | high)
                wit[c, q] = w if m != 0 else 0
        else:
            for q in range(e):
                body[c, q] = (ego[q] & need) == need
                wit[c, q] = -1
    return body, wit


@njit(cache=True, nogil=True)
def select(base, wit, ent, head_act, head_rows, head_idxa, all_idxa, sel_rows, clause_ids, con_rows, con_ids, v):
    """compiled.CompiledEngine.decide after the clause bodies, per ego in one loop: heads in stratum order (head
    h = action ``head_act[h]`` holds iff one of its clauses ``head_rows[h]`` (-1 padded) has its body and its
    action literals ``head_idxa[h, r]`` true — rows of the action table: 0-3 a, 4-7 not a, 8 true); then per
    action the first clause of ``sel_rows[a]`` whose full body holds (the fired clause, as argmax: the first row
    when none), the constraints ``con_rows`` (a violated one clears every action), and the witnesses turned into
    agent indices (local index -1 → -1). Returns (holds, clause, witness, unsat, violated, vwit)."""
    c_n, e = base.shape
    k = ent.shape[1]
    holds = np.zeros((e, 4), dtype=np.bool_)
    clause = np.full((e, 4), -1, dtype=np.int32)
    witness = np.full((e, 4, v), -1, dtype=np.int32)
    unsat = np.zeros(e, dtype=np.bool_)
    violated = np.full(e, -1, dtype=np.int32)
    vwit = np.full((e, v), -1, dtype=np.int32)
    acts = np.empty(9, dtype=np.bool_)
    full = np.empty(c_n, dtype=np.bool_)
    for q in range(e):
        acts[:4] = False
        acts[4:] = True
        for h in range(head_act.shape[0]):
            any_ = False
            for i in range(head_rows.shape[1]):
                r = head_rows[h, i]
                if r < 0:
                    break
                b = base[r, q]
                for j in range(head_idxa.shape[2]):
                    b = b and acts[head_idxa[h, i, j]]
                any_ = any_ or b
            a = head_act[h]
            acts[a] = any_
            acts[4 + a] = not any_
        for c in range(c_n):
            b = base[c, q]
            for j in range(all_idxa.shape[1]):
                b = b and acts[all_idxa[c, j]]
            full[c] = b
        un = False
        cf = 0
        for i in range(con_rows.shape[0]):
            if full[con_rows[i]]:
                un = True
                cf = i
                break
        if un:
            unsat[q] = True
            violated[q] = con_ids[cf]
            for t in range(v):
                w = wit[con_rows[cf], q, t]
                vwit[q, t] = ent[q, w] if 0 <= w < k else -1
            continue   # a violated constraint: nothing holds
        for a in range(4):
            if not acts[a]:
                continue
            holds[q, a] = True
            fr = sel_rows[a, 0]
            for i in range(sel_rows.shape[1]):
                if full[sel_rows[a, i]]:
                    fr = sel_rows[a, i]
                    break
            clause[q, a] = clause_ids[fr]
            for t in range(v):
                w = wit[fr, q, t]
                witness[q, a, t] = ent[q, w] if 0 <= w < k else -1
    return holds, clause, witness, unsat, violated, vwit


@njit(cache=True, nogil=True)
def choose_moves(moves, start, path_index, agents, codes, is_car, local_cols, stop_col):
    """core.sim.move_arena.MoveArena.choose in one loop: per agent a of ``agents``, its table row
    ``moves[start[a] + path_index[a]]`` (new path index per move column, -1 = not a global move) and the local
    moves ``local_cols[is_car[a], codes[a]]`` give the column chosen (``stop_col`` = no move) or a draw among
    ``pool`` (npool > 1). Returns (col, row, draw positions, pool, npool), as Choice holds them."""
    m = agents.shape[0]
    nc = local_cols.shape[2]
    col = np.full(m, stop_col, dtype=np.intp)
    row = np.empty((m, moves.shape[1]), dtype=moves.dtype)
    pool = np.zeros((m, nc), dtype=np.bool_)
    npool = np.zeros(m, dtype=np.int64)
    draw = np.empty(m, dtype=np.intp)
    nd = 0
    glob = np.zeros(nc, dtype=np.bool_)
    for r in range(m):
        a = agents[r]
        at = start[a] + path_index[a]
        n_glob = 0
        first_glob = -1
        for c in range(moves.shape[1]):
            v = moves[at, c]
            row[r, c] = v
            glob[c] = v >= 0
            if v >= 0:
                n_glob += 1
                if first_glob < 0:
                    first_glob = c
        local = local_cols[is_car[a], codes[a]]
        n_local = 0
        first_local = -1
        n_both = 0
        for c in range(nc):
            if local[c]:
                n_local += 1
                if first_local < 0:
                    first_local = c
                if glob[c]:
                    n_both += 1
        # the pool (local ∩ global, else global) of every agent, as Choice holds it
        cnt = 0
        first = -1
        for c in range(nc):
            p = (local[c] and glob[c]) if n_both > 0 else glob[c]
            pool[r, c] = p
            if p:
                cnt += 1
                if first < 0:
                    first = c
        npool[r] = cnt
        c_ = stop_col
        if n_local == 1:
            c_ = first_local
        elif n_glob <= 1:
            c_ = first_glob if n_glob == 1 else stop_col
        elif cnt == 1:
            c_ = first
        elif cnt > 1:
            draw[nd] = r
            nd += 1
        col[r] = c_ if glob[c_] else stop_col
    return col, row, draw[:nd].copy(), pool, npool
