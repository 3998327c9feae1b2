"""Where a tick's listing looks: a grid of the balls' places at the tick.

Why. A tick lists each cluster ball's contacts within reach (clusters.py).
The event grid (grid.py) holds a ball in every cell its sweep over a part
of a step covers, in cells sized for those sweeps: deep in the pouring
10,000-ball Galton board's heap a ball's reach met about 54 entries there,
6 to 8 of them within reach. At a tick every ball is at one place, so a
grid of the places, in cells of TICK_CELL x r_big (the largest radius of
the balls the tick lists at first), offers 14 on average there (5.7 of
them within reach; every tenth cluster ball of the board at 0.8 s), for a
counting sort a tick. A tick that lists
fewer than one ball in TICK_GRID_SHARE uses the event grid instead
(clusters._near): a few moving balls beside a large settled pile are not
worth placing every ball for.

Exact. A ball j within reach of ball i (gap <= CLUSTER_REACH x the smaller
radius) has its centre within (1 + CLUSTER_REACH) r_i + r_j of i's on each
axis. A query takes every cell within (1 + CLUSTER_REACH) r_i + r_big of
i's centre (widened by round-off), and a ball larger than r_big (a peg
among grains) is entered in every cell within r_j - r_big of its centre,
so that the two boxes meet in a cell whenever the balls are within reach.
The grid covers the listed balls' rectangle and a margin; a ball whose
box misses it is not entered, and a query whose box leaves it returns -1
(the caller asks the event grid): no ball is missed.

TG (tick_grid_scratch): (start (cells + 1,) int64 where each cell's
entries begin in ball, ball (entries,) int64 the balls cell by cell, span
(N, 4) int64 each ball's cells (ix0, iy0, ix1, iy1; ix0 -1: not entered),
stamp (N,) int64 the last query that offered each ball, meta (6,) float64
(1 / cell size px, the grid's rectangle x0, y0, x1, y1 px, r_big px),
dims (4,) int64 (cells across, cells up, 1 when built for the
current tick else 0, the last query's number)).
"""
import math

import numpy as np

from ._jit import allocating, kernel
from .constants import CLUSTER_REACH
from .grid import clamped_cell
from .motion import motion_at

# x r_big: the cells' size, half the farthest centre distance at which the
# contact of two balls of radius r_big is listed ((2 + CLUSTER_REACH) r)
TICK_CELL = 0.5 * (2.0 + CLUSTER_REACH)
# a tick places the balls only when it lists at least one ball in this many
TICK_GRID_SHARE = 8
# x r_big: the margin around the listed balls' rectangle (room for the
# queries of the balls that join as the listing goes)
TICK_MARGIN = 3.0 * (2.0 + CLUSTER_REACH)
TICK_CELLS_PER_BALL = 16  # the grid's most cells, a ball (and 1,024 more)
TICK_ENTRIES_PER_BALL = 8  # room for entries, a ball: more cells than that are never entered (and 1,024 more)


@allocating
def tick_grid_scratch(B, on):
    """TG (see the module docstring) for the balls B; no room unless on.
    Nothing is cleared here: tick_grid_build clears what it uses. (Cleared
    here, the cells alone would cost every step with clusters, a tick or
    not: numba's np.zeros of their size took 1.2 ms for 10,000 balls and
    6.3 ms for 50,000, fresh pages each time.)"""
    n = len(B[4]) if on else 0
    cells = TICK_CELLS_PER_BALL * n + 1024 if on else 1
    return (np.empty(cells + 1, dtype=np.int64), np.empty(TICK_ENTRIES_PER_BALL * n + 1024, dtype=np.int64),
            np.empty((n, 4), dtype=np.int64), np.empty(n, dtype=np.int64), np.zeros(6),
            np.zeros(4, dtype=np.int64))


@kernel
def _axis_cells(meta, lo, hi, axis, count):
    """The cells (i0, i1) along axis (0: x, 1: y) that [lo, hi] px meets, clamped."""
    return clamped_cell(lo, meta[1 + axis], meta[0], count), clamped_cell(hi, meta[1 + axis], meta[0], count)


@kernel
def tick_grid_build(TG, B, t, order, listed):
    """Enter every ball at its place at time t (s) whose box meets the
    rectangle of the listed balls order[:listed] (synced to t) and its
    margin, and mark TG built; returns False (TG left unbuilt) where the
    room would not hold the entries."""
    start, ball, span, stamp, meta, dims = TG
    pos, radius = B[0], B[4]
    n = len(radius)
    dims[2] = 0
    r_big = 0.0
    x0, y0, x1, y1 = math.inf, math.inf, -math.inf, -math.inf
    for q in range(listed):
        i = order[q]
        r_big = max(r_big, radius[i])
        x0, y0 = min(x0, pos[i, 0]), min(y0, pos[i, 1])
        x1, y1 = max(x1, pos[i, 0]), max(y1, pos[i, 1])
    margin = TICK_MARGIN * r_big
    x0, y0, x1, y1 = x0 - margin, y0 - margin, x1 + margin, y1 + margin
    most = len(start) - 1
    size = max(TICK_CELL * r_big, math.sqrt((x1 - x0) * (y1 - y0) / most), 1e-9 * (x1 - x0 + y1 - y0))
    nx = max(1, min(int(math.ceil((x1 - x0) / size)), most))
    ny = max(1, min(int(math.ceil((y1 - y0) / size)), most // nx))
    meta[0], meta[1], meta[2], meta[3], meta[4], meta[5] = 1.0 / size, x0, y0, x1, y1, r_big
    dims[0], dims[1] = nx, ny
    dims[3] = 0  # (queries count from 1 again: every stamp is cleared below)
    cells = nx * ny
    for c in range(cells + 1):
        start[c] = 0
    entries = 0
    for j in range(n):
        x, y, _vx, _vy, _ax, _ay = motion_at(B, j, t)
        e = max(radius[j] - r_big, 0.0)
        span[j, 0] = -1
        stamp[j] = 0
        if x + e < x0 or x - e > x1 or y + e < y0 or y - e > y1:
            continue  # (no query reaches it: those that would leave the grid ask the event grid)
        ix0, ix1 = _axis_cells(meta, x - e, x + e, 0, nx)
        iy0, iy1 = _axis_cells(meta, y - e, y + e, 1, ny)
        span[j, 0], span[j, 1], span[j, 2], span[j, 3] = ix0, iy0, ix1, iy1
        entries += (ix1 - ix0 + 1) * (iy1 - iy0 + 1)
        for iy in range(iy0, iy1 + 1):
            for ix in range(ix0, ix1 + 1):
                start[iy * nx + ix + 1] += 1
    if entries > len(ball):
        return False
    for c in range(cells):
        start[c + 1] += start[c]
    for j in range(n):  # (start[c] counts up as c's entries go in, and back down after)
        if span[j, 0] < 0:
            continue
        for iy in range(span[j, 1], span[j, 3] + 1):
            for ix in range(span[j, 0], span[j, 2] + 1):
                c = iy * nx + ix
                ball[start[c]] = j
                start[c] += 1
    for c in range(cells, 0, -1):
        start[c] = start[c - 1]
    start[0] = 0
    dims[2] = 1
    return True


@kernel
def tick_grid_near(TG, B, i, cand):
    """Write into cand, once each, every ball but i entered in a cell within
    (1 + CLUSTER_REACH) r_i + r_big of ball i's centre (where it is now:
    synced to the tick), row by row; returns their count, or -1 where that
    box leaves the grid (ask the event grid)."""
    start, ball, span, stamp, meta, dims = TG
    pos, r = B[0], B[4][i]
    pad = ((1.0 + CLUSTER_REACH) * r + meta[5]) * (1.0 + 1e-9) + 1e-9  # (round-off)
    x, y = pos[i, 0], pos[i, 1]
    if x - pad < meta[1] or x + pad > meta[3] or y - pad < meta[2] or y + pad > meta[4]:
        return -1
    ix0, ix1 = _axis_cells(meta, x - pad, x + pad, 0, dims[0])
    iy0, iy1 = _axis_cells(meta, y - pad, y + pad, 1, dims[1])
    nx = dims[0]
    dims[3] += 1
    q = dims[3]
    m = 0
    for iy in range(iy0, iy1 + 1):
        for k in range(start[iy * nx + ix0], start[iy * nx + ix1 + 1]):  # (a row of cells is one run)
            j = ball[k]
            s = stamp[j]
            take = (j != i) & (s != q)  # (written anyway, counted if taken: no branch to guess)
            stamp[j] = q if take else s
            cand[m] = j
            m += 1 if take else 0
    return m
