"""The ticks' point grid: which balls lie within reach of a cluster ball at a tick.

Why not the event grid (grid.py). Its cells are a few swept boxes wide (7
radii in the 10,000-ball Galton board) and hold each ball over its sweep
through the step: a heap ball's listing query met about 42 balls there (54
entries), of which 6 to 8 lie within reach, each read from some seven
arrays. At a tick every ball stands at one point: a grid of those points,
in cells as wide as the farthest reach, holds each ball once, its position
and radius side by side in one row, so a query reads a few short runs of
memory (clusters.tick builds it when a tick lists many of the balls).

Radii differ (pegs of 4 px among balls of 0.7): one cell size for all would
be set by the largest. So balls fall in classes of radius doubling from the
smallest (NEAR_CLASSES; the last takes the rest); each class has cells as
wide as the farthest reach between two of its largest balls, and a query
visits, in each class, the cells within its reach of that class's largest
ball. Cells are hashed into a table of at least twice the balls' number
(no array over the whole box to clear at every tick); a bucket two cells
share is told apart by the cell each row keeps.

NG, the scratch (near_scratch): rows (N, 4) float64 each ball's x, y (px, at
the tick), radius (px) and index, in bucket order; cells (N, 3) int64 each
row's class and cell (ix, iy); start (T + 1,) int64 each bucket's first
row (T a power of two); size (NEAR_CLASSES, 2) px each class's largest
radius (0: no ball) and cell side.
"""
import math

import numpy as np

from ._jit import allocating, kernel
from .constants import CLUSTER_REACH
from .motion import motion_at

NEAR_CLASSES = 8
# a query that would visit more cells than this in a class (a large ball among
# small ones) is left to the event grid (near_balls returns -1)
NEAR_MOST_CELLS = 64
# x reach: what a row may lie beyond reach by and still be handed on (round-off:
# the exact test, clusters._within_reach, decides)
NEAR_MARGIN = 1e-9


@allocating
def near_scratch(n):
    """NG (see the module docstring) for n balls."""
    size = 2
    while size < 2 * n:
        size *= 2
    return (np.empty((n, 4)), np.empty((n, 3), dtype=np.int64), np.zeros(size + 1, dtype=np.int64),
            np.zeros((NEAR_CLASSES, 2)))


@kernel
def _class_of(r, rmin):
    """The class of a radius r px: k where r lies in (2^k, 2^(k+1)] rmin (0 from rmin up)."""
    k = 0
    bound = 2.0 * rmin
    while r > bound and k < NEAR_CLASSES - 1:
        k += 1
        bound *= 2.0
    return k


@kernel
def _bucket(k, ix, iy, mask):
    """The table's bucket of cell (ix, iy) of class k (a spatial hash; mask: its size less 1)."""
    return ((ix * 73856093) ^ (iy * 19349663) ^ (k * 83492791)) & mask


@kernel
def _cell(x, y, side):
    return int(math.floor(x / side)), int(math.floor(y / side))


@kernel
def near_build(B, NG, t, rmin):
    """Enter every ball where it stands at time t s (motion_at); rmin px the
    smallest radius of all."""
    rows, cells, start, size = NG
    radius = B[4]
    n = len(radius)
    mask = len(start) - 2
    for k in range(NEAR_CLASSES):
        size[k, 0] = 0.0
    for j in range(n):
        k = _class_of(radius[j], rmin)
        size[k, 0] = max(size[k, 0], radius[j])
    for k in range(NEAR_CLASSES):
        size[k, 1] = (2.0 + CLUSTER_REACH) * size[k, 0]
    for b in range(len(start)):
        start[b] = 0
    for j in range(n):
        x, y = motion_at(B, j, t)[:2]
        k = _class_of(radius[j], rmin)
        ix, iy = _cell(x, y, size[k, 1])
        start[_bucket(k, ix, iy, mask) + 1] += 1
    for b in range(mask + 1):
        start[b + 1] += start[b]
    for j in range(n):  # (start[b] counts up as b's rows go in, and back down after)
        x, y = motion_at(B, j, t)[:2]
        k = _class_of(radius[j], rmin)
        ix, iy = _cell(x, y, size[k, 1])
        b = _bucket(k, ix, iy, mask)
        p = start[b]
        start[b] = p + 1
        rows[p, 0] = x
        rows[p, 1] = y
        rows[p, 2] = radius[j]
        rows[p, 3] = j
        cells[p, 0] = k
        cells[p, 1] = ix
        cells[p, 2] = iy
    for b in range(mask + 1, 0, -1):
        start[b] = start[b - 1]
    start[0] = 0


@kernel
def near_balls(NG, i, px, py, r, cand):
    """Write into cand the balls but i whose centres lie within reach of ball
    i, of radius r px at (px, py) (r + r_j + CLUSTER_REACH x the smaller
    radius, and NEAR_MARGIN of that), as near_build entered them; returns
    their count, or -1 where a class's cells within reach are more than
    NEAR_MOST_CELLS (then ask the event grid)."""
    rows, cells, start, size = NG
    mask = len(start) - 2
    for k in range(NEAR_CLASSES):  # (first: a query left to the event grid has written nothing)
        side = size[k, 1]
        reach = (r + size[k, 0] + CLUSTER_REACH * min(r, size[k, 0])) * (1.0 + NEAR_MARGIN)
        if side > 0.0 and (math.floor((px + reach) / side) - math.floor((px - reach) / side) + 1) * (
                math.floor((py + reach) / side) - math.floor((py - reach) / side) + 1) > NEAR_MOST_CELLS:
            return -1
    m = 0
    for k in range(NEAR_CLASSES):
        rk, side = size[k, 0], size[k, 1]
        if rk == 0.0:
            continue
        reach = (r + rk + CLUSTER_REACH * min(r, rk)) * (1.0 + NEAR_MARGIN)
        ix0, iy0 = _cell(px - reach, py - reach, side)
        ix1, iy1 = _cell(px + reach, py + reach, side)
        for iy in range(iy0, iy1 + 1):
            for ix in range(ix0, ix1 + 1):
                b = _bucket(k, ix, iy, mask)
                for p in range(start[b], start[b + 1]):
                    # counted, not branched on (as grid._offer): which rows lie
                    # within reach is a coin toss the CPU cannot guess
                    rj = rows[p, 2]
                    dx, dy = px - rows[p, 0], py - rows[p, 1]
                    within = (r + rj + CLUSTER_REACH * min(r, rj)) * (1.0 + NEAR_MARGIN)
                    j = int(rows[p, 3])
                    keep = ((dx * dx + dy * dy <= within * within) & (j != i) & (cells[p, 0] == k)
                            & (cells[p, 1] == ix) & (cells[p, 2] == iy))
                    cand[m] = j
                    m += keep
    return m
