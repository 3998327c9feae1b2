"""Invariant measures used by tests, benchmarks and ``abound bench`` (numpy, O(N) with a cell grid).

They take plain arrays so that they measure any engine's state the same way
(``abound.compare`` applies them to pymunk): ``max_overlap`` is the largest
overlap divided by the smaller radius, ``escaped`` the number of balls whose
centre is outside the box (or not a finite number).
"""
import numpy as np

from abound.physics.world import BOX_WALLS, PINNED

BLOCK = 1 << 16   # candidate pairs handled at once (bounds the temporary arrays)
MAX_BIG = 512     # at most this many balls larger than twice the median radius are paired with all


def max_relative_overlap(sim):
    """Largest overlap divided by the smaller radius, over ball pairs, ball-wall pairs and the box."""
    w = sim._world
    n = w.n
    return max_overlap(w.pos[:n], w.radius[:n], w.mode[:n] != PINNED, w.width, w.height,
                       w.wall_p0[BOX_WALLS:w.nwalls], w.wall_p1[BOX_WALLS:w.nwalls])


def segment_distance(p, p0, p1):
    """Distance (px) of points p (..., 2) to segments p0 -> p1 (..., 2), broadcast
    against each other (a segment of no length: the distance to its point)."""
    d = p1 - p0
    u = np.clip(np.einsum("...i,...i", p - p0, d) / np.maximum(np.einsum("...i,...i", d, d), 1e-300), 0.0, 1.0)
    q = p0 + u[..., None] * d
    return np.hypot(p[..., 0] - q[..., 0], p[..., 1] - q[..., 1])


def max_overlap(pos, radius, free, width, height, seg_p0=(), seg_p1=()):
    """Largest overlap / smaller radius (0 when none; inf when a position is not finite).

    pos (N, 2), radius (N,), free (N,) bool (False: pinned, immovable; pairs of
    two pinned balls and pinned balls against walls are not counted), the box
    [0, width] x [0, height], interior segments from seg_p0[k] to seg_p1[k].
    """
    pos = np.asarray(pos, dtype=float).reshape(-1, 2)
    r = np.asarray(radius, dtype=float)
    free = np.asarray(free, dtype=bool)
    if len(pos) == 0:
        return 0.0
    if not np.all(np.isfinite(pos)):
        return float("inf")
    worst = 0.0
    if free.any():
        p, rf = pos[free], r[free]
        box = np.stack([p[:, 0] - rf, width - p[:, 0] - rf, p[:, 1] - rf, height - p[:, 1] - rf], 1)
        worst = max(worst, float(np.max(-box / rf[:, None])))
        for p0, p1 in zip(np.asarray(seg_p0, dtype=float), np.asarray(seg_p1, dtype=float)):
            dist = segment_distance(p, p0, p1)
            worst = max(worst, float(np.max((rf - dist) / rf)))
    # far-away balls are already counted by the box; clipping keeps the grid's cell codes small
    near = np.clip(pos, [-width, -height], [2.0 * width, 2.0 * height])
    for i, j in _candidate_pairs(near, r):
        keep = free[i] | free[j]
        i, j = i[keep], j[keep]
        if len(i):
            dist = np.hypot(*(pos[i] - pos[j]).T)
            worst = max(worst, float(np.max((r[i] + r[j] - dist) / np.minimum(r[i], r[j]))))
    return max(worst, 0.0)


def escaped(pos, width, height, margin=0.0):
    """Number of balls whose centre is outside the box [0, width] x [0, height], widened
    by margin px on every side (a number, or one a ball), or not finite."""
    pos = np.asarray(pos, dtype=float).reshape(-1, 2)
    with np.errstate(invalid="ignore"):
        inside = ((pos[:, 0] >= -margin) & (pos[:, 0] <= width + margin)
                  & (pos[:, 1] >= -margin) & (pos[:, 1] <= height + margin))
    return int(np.count_nonzero(~inside))


def _candidate_pairs(pos, r):
    """Blocks (i, j) of index pairs, each unordered pair at most once, covering every touching pair.

    Balls up to twice the median radius go into a grid whose cell is the
    largest such diameter, so touching ones share a cell or are neighbours;
    larger balls (pegs among fine grains, a few big marbles) are paired with
    every ball, unless there are more than MAX_BIG of them.
    """
    big = r > 2.0 * np.median(r)
    if np.count_nonzero(big) > MAX_BIG:
        big[:] = False  # many big ones: one coarser grid for all
    bigs = np.flatnonzero(big)
    small = np.flatnonzero(~big)
    for b in bigs:
        others = np.concatenate([small, bigs[bigs > b]])  # big-big pairs once
        for s in range(0, len(others), BLOCK):
            j = others[s:s + BLOCK]
            yield np.full(len(j), b), j
    if len(small) < 2:
        return
    cell = 2.0 * float(r[small].max())
    key = np.floor(pos[small] / cell).astype(np.int64)
    ix, iy = key[:, 0] - key[:, 0].min(), key[:, 1] - key[:, 1].min()
    ny = int(iy.max()) + 3  # a column's codes never run into the next column's, even at iy - 1
    code = ix * ny + iy
    order = np.argsort(code, kind="stable")
    sorted_code = code[order]
    # the cell itself and four of its neighbours: each pair of adjacent cells is seen once
    for dx, dy in ((0, 0), (0, 1), (1, -1), (1, 0), (1, 1)):
        target = (ix + dx) * ny + (iy + dy)
        lo = np.searchsorted(sorted_code, target, "left")
        cnt = np.searchsorted(sorted_code, target, "right") - lo
        for a, b in _chunks(cnt):
            c = cnt[a:b]
            total = int(c.sum())
            if total == 0:
                continue
            first = np.cumsum(c) - c
            i = np.repeat(np.arange(a, b), c)
            j = order[np.arange(total) + np.repeat(lo[a:b] - first, c)]
            if (dx, dy) == (0, 0):
                keep = j > i
                i, j = i[keep], j[keep]
            yield small[i], small[j]


def _chunks(counts):
    """Consecutive ranges [a, b) of indices whose counts add up to about BLOCK each (at least one index)."""
    csum = np.cumsum(counts)
    n, a = len(counts), 0
    while a < n:
        base = int(csum[a - 1]) if a else 0
        b = max(int(np.searchsorted(csum, base + BLOCK, "right")), a + 1)
        yield a, min(b, n)
        a = b


def close_pairs(pos, r, reach):
    """The pairs of balls whose gap |p_i - p_j| - r_i - r_j is at most reach px:
    (pairs (M, 2) int64 with i < j, sorted; their gaps (M,) px)."""
    pos = np.asarray(pos, dtype=float).reshape(-1, 2)
    r = np.asarray(r, dtype=float)
    pairs, gaps = [np.empty((0, 2), dtype=np.int64)], [np.empty(0)]
    if len(r) >= 2:
        # candidates: every pair whose discs, grown by half the reach, touch
        for i, j in _candidate_pairs(pos, r + max(reach, 0.0) / 2.0):
            gap = np.hypot(*(pos[i] - pos[j]).T) - r[i] - r[j]
            keep = gap <= reach
            pairs.append(np.stack([np.minimum(i[keep], j[keep]), np.maximum(i[keep], j[keep])], axis=1))
            gaps.append(gap[keep])
    pairs, gaps = np.concatenate(pairs).astype(np.int64), np.concatenate(gaps)
    order = np.lexsort((pairs[:, 1], pairs[:, 0]))
    return pairs[order], gaps[order]

