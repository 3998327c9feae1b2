"""The balls in space order: the step's sorted working copy (gather, scatter) and what a
split step (split.py) cuts it into strips by.

Part of the event-driven engine (engine.py gathers it; docs/physics.md explains it).
"""
import math

import numpy as np

from ._jit import allocating, inlined, kernel
from .roots import INF
from .constants import (
    FREE, ORDER_TILE, P_HEIGHT, P_WIDTH, ROLLING, SLIDING, SUP_BALL, WATCH_AXIS, WATCH_SLOTS,
)
from .grid import grid_shape, sweep_length
from .clusters import clusters_wanted


# --------------------------------------------------------------------------
# the step
# --------------------------------------------------------------------------
@allocating
def spatial_order(B, width, height, dt):
    """Ball indices sorted by grid cell, tile by tile (stable: ties keep index order).

    Neighbours in space become neighbours in memory: the exact tests read
    each candidate's state, and in index order those reads would miss the
    cache on every array once N is large.
    """
    pos = B[0]
    n = len(pos)
    h, nx, ny, x0, y0 = grid_shape(B, width, height, dt)
    # cells in square tiles of ORDER_TILE x ORDER_TILE, tile after tile: in
    # plain row order a ball's neighbours in the row above would be a whole
    # row of the box away in memory
    T = ORDER_TILE
    ntx = (nx + T - 1) // T
    nkeys = ntx * ((ny + T - 1) // T) * T * T
    cell = np.empty(n, dtype=np.int64)
    start = np.zeros(nkeys + 1, dtype=np.int64)
    for i in range(n):
        ix = min(max(int(math.floor((pos[i, 0] - x0) / h)), 0), nx - 1)
        iy = min(max(int(math.floor((pos[i, 1] - y0) / h)), 0), ny - 1)
        cell[i] = ((iy // T) * ntx + ix // T) * T * T + (iy % T) * T + ix % T
        start[cell[i] + 1] += 1
    for c in range(nkeys):
        start[c + 1] += start[c]
    perm = np.empty(n, dtype=np.int64)
    for i in range(n):
        perm[start[cell[i]]] = i
        start[cell[i]] += 1
    return perm


@allocating
def gather(B, perm):
    """The balls perm (all of them, or those of a split step's strip) in that
    order: the working copy a step runs on. It holds the balls' arrays, perm
    itself (P[14]: each ball's public index, its tie key) and what a split
    step watches: P[15] (N,) int8, each ball's watch code (see WATCH_SLOTS:
    split.py sets them, here all 0), and P[16] (2 x WATCH_SLOTS,) float64, in
    slot s the highest coordinate along the axis that the paths of the balls
    with high slot s reached, in slot WATCH_SLOTS + s the lowest of those with
    low slot s (see keep_box). P[17] and P[18] are B[14] and B[15], the
    contact solver's warm start (world.py: keyed by public index, as P[14]
    names the balls), and P[19] is B[16], each ball's field (world.py: read,
    never written, so scatter leaves it). A ball that slides on a ball left out of perm gets
    support index -1 (split.py keeps that from happening)."""
    sup_kind, sup_idx = B[9], B[10]
    n = len(perm)
    reach = np.empty(2 * WATCH_SLOTS, dtype=np.float64)
    reach[:WATCH_SLOTS] = -INF
    reach[WATCH_SLOTS:] = INF
    P = (np.empty((n, 2)), np.empty((n, 2)), np.empty((n, 2)), np.empty(n), np.empty(n),
         np.empty(n), np.empty(n), np.empty(n, dtype=B[7].dtype), np.empty(n, dtype=B[8].dtype),
         np.empty(n, dtype=B[9].dtype), np.empty(n, dtype=B[10].dtype), np.empty((n, 2)),
         np.empty((n, 2)), np.empty(n), perm, np.zeros(n, dtype=np.int8), reach,
         np.empty((n, B[14].shape[1]), dtype=B[14].dtype), np.empty((n, B[15].shape[1])),
         np.empty((n, 2)))
    _copy_rows(P, B, perm)
    sliding = 0
    for k in range(n):
        sliding += sup_kind[perm[k]] == SUP_BALL
    if sliding == 0:  # (a strip of a split step gathers a few times in one: no pass over all N)
        return P
    # where each support sits in perm: rank[j] is only read where perm
    # confirms it, so it needs no filling (a sparse set)
    rank = np.empty(len(B[4]), dtype=np.int64)
    for k in range(n):
        rank[perm[k]] = k
    for k in range(n):
        if sup_kind[perm[k]] == SUP_BALL:
            j = sup_idx[perm[k]]
            q = rank[j]
            P[10][k] = q if 0 <= q < n and perm[q] == j else -1
    return P


@kernel
def _copy_rows(P, B, perm):
    """P's balls from B's rows perm, in one pass (numba's indexing by an
    index array, array by array, took four times as long)."""
    for k in range(len(perm)):
        i = perm[k]
        _copy_state(P, k, B, i)
        P[4][k] = B[4][i]
        P[5][k] = B[5][i]
        P[6][k] = B[6][i]
        P[10][k] = B[10][i]
        P[19][k, 0] = B[16][i, 0]
        P[19][k, 1] = B[16][i, 1]
        for s in range(B[14].shape[1]):
            P[17][k, s] = B[14][i, s]
            P[18][k, s] = B[15][i, s]


@kernel
def scatter(P, B, own):
    """Write the working copy P back into the public arrays B: the balls
    whose own[public index] is True."""
    perm = P[14]
    for k in range(len(perm)):
        i = perm[k]
        if not own[i]:
            continue
        _copy_state(B, i, P, k)
        B[10][i] = perm[P[10][k]] if P[9][k] == SUP_BALL else P[10][k]
        for s in range(B[14].shape[1]):
            B[14][i, s] = P[17][k, s]
            B[15][i, s] = P[18][k, s]


@inlined
def _copy_state(D, d, S, s):
    """Ball s of S into row d of D (working copies or the public arrays):
    what a step changes, all but the support index (gather and scatter
    translate it). Radius, inverse mass and restitution (4 to 6) never change
    in a step."""
    for c in range(2):
        D[0][d, c] = S[0][s, c]
        D[1][d, c] = S[1][s, c]
        D[2][d, c] = S[2][s, c]
        D[11][d, c] = S[11][s, c]
        D[12][d, c] = S[12][s, c]
    D[3][d] = S[3][s]
    D[7][d] = S[7][s]
    D[8][d] = S[8][s]
    D[9][d] = S[9][s]
    D[13][d] = S[13][s]


@allocating
def split_histogram(B, params, dt, share, bins):
    """What split.py cuts a step of dt by: returns (axis, reach, at (bins,)
    int64, moving). axis: 0 cuts across x (the box's longer side), 1 across
    y; at: how many moving balls lie in each of bins equal slices of the box
    along it; reach: the distance the fastest moving balls but a share of
    them sweep in dt (to 1/1024 of the fastest), plus the largest diameter.
    moving is 0 when a moving ball's state is not finite, or the step runs
    contact clusters (clusters_wanted: a tick solves contacts across the
    box at once, which strips run apart would not do alike): such a step is
    not split."""
    pos, vel, acc, radius, mode = B[0], B[1], B[2], B[4], B[7]
    n = len(radius)
    width, height = params[P_WIDTH], params[P_HEIGHT]
    axis = 0 if width >= height else 1
    length = width if axis == 0 else height
    at = np.zeros(bins, dtype=np.int64)
    if clusters_wanted(B, params):
        return axis, 0.0, at, 0
    sweeps = np.empty(n, dtype=np.float64)
    moving = 0
    top = 0.0
    rmax = 0.0
    for i in range(n):
        rmax = max(rmax, radius[i])
        if mode[i] != FREE and mode[i] != SLIDING and mode[i] != ROLLING:
            continue
        s = sweep_length(vel[i, 0], vel[i, 1], acc[i, 0], acc[i, 1], dt)
        if not (math.isfinite(s) and math.isfinite(pos[i, axis])):
            return axis, INF, at, 0
        moving += 1
        # (clamped as a float: converting one beyond the int range is undefined)
        at[int(min(max(pos[i, axis] / length * bins, 0.0), bins - 1.0))] += 1
        sweeps[moving - 1] = s
        top = max(top, s)
    if moving == 0:
        return axis, 0.0, at, 0
    fine = 1024
    fast = np.zeros(fine + 1, dtype=np.int64)
    for q in range(moving):
        fast[int(min(sweeps[q] / max(top, 1e-300), 1.0) * fine)] += 1
    allowed = int(share * moving)
    c = fine
    seen = fast[fine]
    while c > 0 and seen + fast[c - 1] <= allowed:
        c -= 1
        seen += fast[c]
    return axis, c / fine * top + 2.0 * rmax, at, moving


@kernel
def split_band(x, cut, w_in, w_out):
    """The band (0 to 5, split.py) of coordinate x about a cut."""
    return ((x >= cut - w_out) + (x >= cut - w_in) + (x >= cut) + (x >= cut + w_in)
            + (x >= cut + w_out))


@allocating
def strip_members(x, order, cuts, w_in, w_out, axis):
    """The balls each strip of a split step runs (split.py): those of its own
    slice of the box, between two cuts (-INF and INF beyond the first and
    the last), and of the bands w_in + w_out wide beyond each of its cuts.
    x (N,): the balls' coordinates along axis at the start of the step;
    order (N,): the order to list them in; cuts (K - 1,) ascending.

    Returns (home (N,) int64: the strip whose slice holds each ball, by
    public index; members (M,) int64: public indices, strip after strip, in
    the order of order; codes (M,) int8: their watch codes, see gather;
    start (K + 1,): strip s's members are members[start[s]:start[s + 1]]).
    Watch slots, as split.py's test 2 needs them: high 2: band 1 of the low
    cut, 1: the rest of bands 0 and 1 of the high cut, 0: the others; low 2:
    band 4 of the high cut, 1: the rest of bands 4 and 5 of the low cut, 0:
    the others."""
    n = len(order)
    strips = len(cuts) + 1
    home = np.empty(n, dtype=np.int64)
    # each ball's codes in strips home - 1, home and home + 1 (-1: not run
    # there; cuts lie far apart, so no strip further off runs it), worked
    # out once, in index order, and read in the order of order
    near = np.full((n, 3), -1, dtype=np.int8)
    start = np.zeros(strips + 1, dtype=np.int64)
    for i in range(n):
        s = 0
        while s < strips - 1 and x[i] >= cuts[s]:
            s += 1
        home[i] = s
        for t in range(max(s - 1, 0), min(s + 2, strips)):
            near[i, t - s + 1] = _strip_code(x[i], cuts, t, w_in, w_out, axis)
            start[t + 1] += near[i, t - s + 1] >= 0
    for t in range(strips):
        start[t + 1] += start[t]
    members = np.empty(start[strips], dtype=np.int64)
    codes = np.empty(start[strips], dtype=np.int8)
    fill = start[:strips].copy()
    for k in range(n):
        i = order[k]
        for d in range(3):
            if near[i, d] >= 0:
                t = home[i] + d - 1
                members[fill[t]] = i
                codes[fill[t]] = near[i, d]
                fill[t] += 1
    return home, members, codes, start


@kernel
def _strip_code(x, cuts, t, w_in, w_out, axis):
    """The watch code of a ball at coordinate x in strip t, or -1 if strip t
    does not run it (see strip_members)."""
    below = 5 if t == 0 else split_band(x, cuts[t - 1], w_in, w_out)
    above = 0 if t == len(cuts) else split_band(x, cuts[t], w_in, w_out)
    if below == 0 or above == 5:
        return -1
    high = 2 if below == 1 else (1 if above <= 1 else 0)
    low = 2 if above == 4 else (1 if below >= 4 else 0)
    return high | (low << 2) | (axis << WATCH_AXIS)


@kernel
def inner_bands_agree(PL, PR, events_l, events_r, x, lo, hi):
    """Test 1 of a split step at one cut (split.py): the balls whose
    coordinate x (by public index) lies in [lo, hi) (bands 2 and 3), which
    both strips beside the cut ran (working copies PL and PR after the step,
    with their events per ball), ended in the same state, bit for bit, after
    the same number of events. Both copies hold them in the same order (both
    follow one spatial order)."""
    key_l, key_r = PL[14], PR[14]
    q = 0
    for k in range(len(key_l)):
        i = key_l[k]
        if not (x[i] >= lo and x[i] < hi):
            continue
        while q < len(key_r) and not (x[key_r[q]] >= lo and x[key_r[q]] < hi):
            q += 1
        if q == len(key_r) or key_r[q] != i:
            return False
        if events_l[k] != events_r[q] or not _same_ball(PL, k, PR, q):
            return False
        q += 1
    for r in range(q, len(key_r)):
        if x[key_r[r]] >= lo and x[key_r[r]] < hi:
            return False
    return True


@kernel
def _same_ball(P, k, Q, q):
    """Is ball k of working copy P in the same state as ball q of Q, bit for bit?"""
    for c in range(2):
        if (P[0][k, c] != Q[0][q, c] or P[1][k, c] != Q[1][q, c] or P[2][k, c] != Q[2][q, c]
                or P[11][k, c] != Q[11][q, c] or P[12][k, c] != Q[12][q, c]):
            return False
    if (P[3][k] != Q[3][q] or P[7][k] != Q[7][q] or P[8][k] != Q[8][q]
            or P[9][k] != Q[9][q] or P[13][k] != Q[13][q]):
        return False
    if P[9][k] == SUP_BALL:  # the support, by public index
        return P[10][k] >= 0 and Q[10][q] >= 0 and P[14][P[10][k]] == Q[14][Q[10][q]]
    return P[10][k] == Q[10][q]
