"""The broad phase: a uniform grid of the balls' swept boxes over a part of a step.

Part of the event-driven engine (engine.py gathers it; docs/physics.md explains it).
"""
import math

import numpy as np

from ._jit import allocating, inlined, kernel
from .constants import (
    BALL_INT, CELL_SWEEPS, GRID_INT, MAX_CELLS_PER_BALL, SLEEP_TOUCH, SWEEP_SAMPLE, WATCH_AXIS,
    WATCH_SLOTS,
)
from .motion import effective_motion, lasting

# the bits of a cell's mark (G[14]): a ball the clusters do not hold was
# entered there (mark_moving), a lasting ball lies there (mark_lasting)
MOVING, LASTING = 1, 2


# --------------------------------------------------------------------------
# broad phase: a uniform grid over the box.
# G = (head (cells,), ent_ball, ent_next, meta int (nent, nx, ny, nbig, query id),
#      cell size, its inverse and the grid's corner (4,), big list (N,), stamp (N,), is_big (N,),
#      start (cells + 1,), cell_ball, span (N, 4), kept box (N, 4), watch (N,),
#      reach (2 x WATCH_SLOTS,): see gather, marks (cells,) uint8: see MOVING, LASTING)
# At the start of a part of a step every ball is entered at once, cell by cell
# in contiguous runs (cell c holds cell_ball[start[c]:start[c + 1]]), and its
# cell span kept. A ball whose trajectory changes later is entered again only
# in the cells its new sweep adds beyond that span, in per-cell linked lists
# (head, ent_ball, ent_next). Contiguous runs of spatially sorted balls make
# the scan of a cell cheap; old entries stay and only cost a wasted exact test.
# Each ball's latest swept box is kept too (x0, y0, x1, y1): a candidate
# whose box misses the predicted ball's is dropped before the exact test, at
# the cost of one cache line instead of the several its state spans.
# --------------------------------------------------------------------------
@kernel
def _axis_range(x, v, a, T):
    """Range of x + v t + a t^2/2 over t in [0, T]."""
    xe = x + (v + 0.5 * a * T) * T
    lo = min(x, xe)
    hi = max(x, xe)
    # the apex, when it falls within (0, T): it can only when |v| < |a| T
    # (the slack keeps that test from missing one the division finds), and
    # the test spares most balls the division
    if a != 0.0 and abs(v) < abs(a) * T * (1.0 + 1e-12):
        ts = -v / a
        if 0.0 < ts < T:
            xs = x + 0.5 * v * ts
            lo = min(lo, xs)
            hi = max(hi, xs)
    return lo, hi


@kernel
def swept_box(B, i, T):
    """Bounding box (x0, y0, x1, y1) of ball i over the next T seconds."""
    pos, radius = B[0], B[4]
    vx, vy, ax, ay = effective_motion(B, i)
    x0, x1 = _axis_range(pos[i, 0], vx, ax, T)
    y0, y1 = _axis_range(pos[i, 1], vy, ay, T)
    r = radius[i] * (1.0 + 1e-9) + 1e-9
    return x0 - r, y0 - r, x1 + r, y1 + r


@inlined
def clamped_cell(x, origin, inverse_size, count):
    """The cell 0..count-1 along one axis that holds coordinate x (px), the
    outer ones stretching to infinity. Times the inverse cell size, not
    divided by the size: four divisions were a noticeable part of entering
    every ball; any monotonic map of coordinates to cells keeps a grid exact.
    (Also tick_grid.py's.)"""
    return min(max(int(math.floor((x - origin) * inverse_size)), 0), count - 1)


@kernel
def _cell_span(G, x0, y0, x1, y1):
    meta, size = G[3], G[4]
    nx, ny = meta[1], meta[2]
    s, ox, oy = size[1], size[2], size[3]
    return (clamped_cell(x0, ox, s, nx), clamped_cell(y0, oy, s, ny),
            clamped_cell(x1, ox, s, nx), clamped_cell(y1, oy, s, ny))


@kernel
def sweep_length(vx, vy, ax, ay, dt):
    """How far a ball with velocity v and acceleration a can move in dt (px):
    |v| dt + |a| dt^2 / 2."""
    return math.sqrt(vx * vx + vy * vy) * dt + 0.5 * math.sqrt(ax * ax + ay * ay) * dt * dt


@kernel
def mean_sweep(B, dt, cap):
    """(mean distance a ball can move in dt, each capped at cap; mean diameter),
    over every ball, or an evenly strided sample of about SWEEP_SAMPLE of them: the
    means only size the grid and count the parts, and two square roots for
    every ball, four times a step, were 3% of a hot gas's step (the
    mean of 256 random speeds is within a few per cent)."""
    radius = B[4]
    n = len(radius)
    stride = max(1, n // SWEEP_SAMPLE)
    reach = 0.0
    diameter = 0.0
    taken = 0
    for i in range(0, n, stride):
        vx, vy, ax, ay = effective_motion(B, i)
        r = sweep_length(vx, vy, ax, ay, dt)
        # (not r <= cap: also an infinite speed, whose square overflows, times dt = 0)
        reach += r if r <= cap else cap
        diameter += 2.0 * radius[i]
        taken += 1
    return reach / max(taken, 1), diameter / max(taken, 1)


@kernel
def grid_shape(B, width, height, dt):
    """(cell size, nx, ny, x, y) for this step: cells CELL_SWEEPS times the
    size of a typical swept box, over the box's part that holds the balls' centres,
    from corner (x, y). (A split step's strip holds a slice of the box: a
    grid over all of it would spread its cells thin. Sweeps beyond that part
    fall in its outer cells, which stretch to infinity: the grid stays exact.)"""
    pos = B[0]
    n = len(B[4])
    x0, y0, x1, y1 = width, height, 0.0, 0.0
    for i in range(n):
        x0 = min(x0, pos[i, 0])
        y0 = min(y0, pos[i, 1])
        x1 = max(x1, pos[i, 0])
        y1 = max(y1, pos[i, 1])
    x0, y0 = max(x0, 0.0), max(y0, 0.0)
    x1, y1 = min(x1, width), min(y1, height)
    if not (x0 <= x1 and y0 <= y1):  # (no balls)
        x0, y0, x1, y1 = 0.0, 0.0, width, height
    w, hgt = x1 - x0, y1 - y0
    reach, diameter = mean_sweep(B, dt, 0.25 * (width + height))
    h = CELL_SWEEPS * (reach + diameter)
    # at most about 4 cells per ball (and at most 4 million)
    max_cells = min(4 * n + 64, 4000000)
    h = max(h, math.sqrt(w * hgt / max_cells), 1e-6 * (width + height))
    nx = max(1, int(math.ceil(w / h)))
    ny = max(1, int(math.ceil(hgt / h)))
    return h, nx, ny, x0, y0


@allocating
def grid_new(B, width, height, dt, watch, reach):
    """The grid for a part of a step of dt, every ball entered (see above).
    watch (N,) int8 and reach (2 x WATCH_SLOTS,): what a split step watches (see gather)."""
    n = len(B[4])
    h, nx, ny, x0, y0 = grid_shape(B, width, height, dt)
    meta = np.zeros(5, dtype=np.int64)
    meta[1] = nx
    meta[2] = ny
    size = np.empty(4, dtype=np.float64)
    size[0] = h
    size[1] = 1.0 / h
    size[2] = x0
    size[3] = y0
    cap = 2 * n + 64
    G = (np.full(nx * ny, -1, dtype=GRID_INT), np.empty(cap, dtype=BALL_INT),
         np.empty(cap, dtype=GRID_INT), meta, size, np.empty(max(n, 1), dtype=BALL_INT),
         np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.bool_),  # (stamps: query ids, int64)
         np.zeros(nx * ny + 1, dtype=GRID_INT), np.empty(0, dtype=BALL_INT),
         np.empty((n, 4), dtype=GRID_INT), np.empty((n, 4), dtype=np.float64), watch, reach,
         np.zeros(nx * ny, dtype=np.uint8))
    total = grid_count(G, B, dt)
    G = G[:9] + (np.empty(total, dtype=BALL_INT),) + G[10:]
    grid_fill(G)
    return G


@inlined
def too_many_cells(cells):
    """Whether a sweep over the cells (ix0, iy0, ix1, iy1) goes on the big
    list instead of into its cells: more than MAX_CELLS_PER_BALL of them."""
    ix0, iy0, ix1, iy1 = cells
    return (ix1 - ix0 + 1) * (iy1 - iy0 + 1) > MAX_CELLS_PER_BALL


@kernel
def grid_count(G, B, T):
    """First pass of grid_new: each ball's cell span and the cells' counts
    (start[c + 1]), the big balls listed; returns the number of entries."""
    meta, big, is_big, start, span = G[3], G[5], G[7], G[8], G[10]
    nx = meta[1]
    total = 0
    for i in range(len(B[4])):
        x0, y0, x1, y1 = swept_box(B, i, T)
        keep_box(G, i, (x0, y0, x1, y1))
        ix0, iy0, ix1, iy1 = _cell_span(G, x0, y0, x1, y1)
        if too_many_cells((ix0, iy0, ix1, iy1)):
            is_big[i] = True
            big[meta[3]] = i
            meta[3] += 1
            ix0, iy0, ix1, iy1 = 0, 0, -1, -1  # an empty span: re-entries go on the big list
        span[i, 0] = ix0
        span[i, 1] = iy0
        span[i, 2] = ix1
        span[i, 3] = iy1
        for iy in range(iy0, iy1 + 1):
            for ix in range(ix0, ix1 + 1):
                start[iy * nx + ix + 1] += 1
                total += 1
        if lasting(B[7][i]):
            mark_lasting(G, B, i)
    return total


@kernel
def grid_fill(G):
    """Second pass of grid_new: the contiguous runs, balls in index order within a cell."""
    meta, start, cell_ball, span = G[3], G[8], G[9], G[10]
    nx = meta[1]
    ncell = len(start) - 1
    for c in range(ncell):
        start[c + 1] += start[c]
    fill = G[0]  # head is all -1 until the first re-entry: borrow it as the fill cursor
    for c in range(ncell):
        fill[c] = start[c]
    for i in range(len(span)):
        for iy in range(span[i, 1], span[i, 3] + 1):
            for ix in range(span[i, 0], span[i, 2] + 1):
                c = iy * nx + ix
                cell_ball[fill[c]] = i
                fill[c] += 1
    for c in range(ncell):
        fill[c] = -1


@allocating
def grid_reserve(G, extra):
    """G with room for extra more cell entries (larger copies when needed)."""
    ent_ball, ent_next, meta = G[1], G[2], G[3]
    k = meta[0]
    if k + extra <= len(ent_ball):
        return G
    cap = max(2 * len(ent_ball), k + extra)
    e2 = np.empty(cap, dtype=BALL_INT)
    n2 = np.empty(cap, dtype=GRID_INT)
    e2[:k] = ent_ball[:k]
    n2[:k] = ent_next[:k]
    return G[:1] + (e2, n2) + G[3:]


@inlined
def grid_enter(G, i, cells):
    """Enter ball i again, for its new sweep: in the cells (ix0, iy0, ix1,
    iy1) of that sweep that lie outside its span from grid_new (a sweep over
    more than MAX_CELLS_PER_BALL cells puts it on the big list instead). The
    caller has reserved MAX_CELLS_PER_BALL entries (grid_reserve)."""
    head, ent_ball, ent_next, meta, size, big, stamp, is_big = G[:8]
    span = G[10]
    ix0, iy0, ix1, iy1 = cells
    if too_many_cells(cells):
        if not is_big[i]:
            is_big[i] = True
            big[meta[3]] = i  # big holds N entries: each ball goes on it at most once
            meta[3] += 1
        return
    nx = meta[1]
    k = meta[0]
    for iy in range(iy0, iy1 + 1):
        for ix in range(ix0, ix1 + 1):
            if span[i, 0] <= ix <= span[i, 2] and span[i, 1] <= iy <= span[i, 3]:
                continue  # already there
            c = iy * nx + ix
            ent_ball[k] = i
            ent_next[k] = head[c]
            head[c] = k
            k += 1
    meta[0] = k


@inlined
def mark_moving(G, cells):
    """Mark the cells (ix0, iy0, ix1, iy1) of the sweep of a ball the
    clusters do not hold (free, sliding or rolling: predict.settled says
    which are held), for moving_near. Marks stay till the part ends: a
    stale one costs a query, a missing one would lose a pair. A sweep over
    more than MAX_CELLS_PER_BALL cells goes on the big list instead, which
    moving_near reads."""
    marks, nx = G[14], G[3][1]
    ix0, iy0, ix1, iy1 = cells
    if too_many_cells(cells):
        return
    for iy in range(iy0, iy1 + 1):
        for ix in range(ix0, ix1 + 1):
            marks[iy * nx + ix] |= MOVING


@inlined
def moving_near(G, cells):
    """Whether a ball the clusters do not hold may be entered in the cells
    (ix0, iy0, ix1, iy1): one of them is marked (mark_moving), or a ball is
    on the big list. A cluster ball predicted again after its tick looks
    for its pairs with such balls only (its other contacts are the ticks'),
    and deep in a heap there are none near: without this it read some 50
    cell entries to find none, a tenth of a pouring board's frame."""
    return _marked_near(G, cells, MOVING)


@kernel
def mark_lasting(G, B, i):
    """Mark the cells ball i's disc covers where it lies (asleep or pinned:
    lasting), for lasting_near; a big ball's every cell. Marks stay till the
    part ends."""
    marks, nx = G[14], G[3][1]
    x0, y0, x1, y1 = swept_box(B, i, 0.0)
    ix0, iy0, ix1, iy1 = _cell_span(G, x0, y0, x1, y1)
    for iy in range(iy0, iy1 + 1):
        for ix in range(ix0, ix1 + 1):
            marks[iy * nx + ix] |= LASTING


@kernel
def lasting_near(G, B, i, touch):
    """Whether grid_candidates(G, B, i, 0, out, touch) may offer a lasting
    ball (asleep or pinned) within touch x ball i's radius of touching it:
    a cell of its query is marked (mark_lasting), or a ball is on the big
    list. A lasting ball that near covers with its disc a point of the
    query's box, so a cell of the query (the same clamped cells). A slow
    cluster ball tries to sleep at every tick (clusters.tick), and inside a
    heap it touches nothing lasting: its query read some 50 cell entries to
    find none, about a twentieth of the rain's frame."""
    if G[7][i]:
        return True  # (a big ball's query offers every ball)
    x0, y0, x1, y1 = _query_box(G, B, i, 0.0, touch)
    return _marked_near(G, _cell_span(G, x0, y0, x1, y1), LASTING)


@inlined
def _marked_near(G, cells, bit):
    """Whether a cell of (ix0, iy0, ix1, iy1) has the mark bit, or a ball is
    on the big list (then every query offers it)."""
    marks, meta = G[14], G[3]
    ix0, iy0, ix1, iy1 = cells
    if meta[3] > 0 or too_many_cells(cells):
        return True  # (a query of every ball anyway)
    nx = meta[1]
    for iy in range(iy0, iy1 + 1):
        for ix in range(ix0, ix1 + 1):
            if marks[iy * nx + ix] & bit:
                return True
    return False


@kernel
def grid_candidates(G, B, i, T, out, touch=SLEEP_TOUCH):
    """Write the balls that may meet ball i within T seconds, or lie within
    touch x their radius of touching it, into out; returns their count
    (see grid_cell_balls; no kept boxes: for queries about the present, made
    while other balls' boxes may be out of date).

    The rest tests (fixed_contacts, wake) count such a gap as touching. It is
    far wider than the boxes' padding, so without a margin as wide whether
    two balls met would depend on where the cells' edges fall (and a grid
    over another part of the box, a split step's, could decide otherwise).
    A ball entered in cells has a radius of at most MAX_CELLS_PER_BALL / 2 cells."""
    x0, y0, x1, y1 = _query_box(G, B, i, T, touch)
    return grid_cell_balls(G, i, _cell_span(G, x0, y0, x1, y1), out, (x0, y0, x1, y1), False)


@inlined
def _query_box(G, B, i, T, touch):
    """The box grid_candidates reads the cells of: ball i's sweep over T s,
    widened by the touch margin (see there)."""
    x0, y0, x1, y1 = swept_box(B, i, T)
    pad = touch * (B[4][i] + 0.5 * MAX_CELLS_PER_BALL * G[4][0])
    return x0 - pad, y0 - pad, x1 + pad, y1 + pad


@kernel
def keep_box(G, i, box):
    """Keep ball i's swept box (x0, y0, x1, y1), widened by 1e-9 of its
    coordinates' size: far more than the round-off between a box and the
    exact test, so a box test never drops a contact the exact test finds.

    A ball is kept again whenever its trajectory changes, so widening the
    watched reach here (see gather) bounds its whole path."""
    kept, watch, reach = G[11], G[12], G[13]
    x0, y0, x1, y1 = box
    pad = 1e-9 * (1.0 + max(abs(x0), abs(y0), abs(x1), abs(y1)))
    kept[i, 0] = x0 - pad
    kept[i, 1] = y0 - pad
    kept[i, 2] = x1 + pad
    kept[i, 3] = y1 + pad
    # (no branch: every ball of a split step is watched, and a whole step's
    # reach is never read)
    w = watch[i]
    axis = w >> WATCH_AXIS
    high = w & 3
    low = WATCH_SLOTS + ((w >> 2) & 3)
    reach[high] = max(reach[high], kept[i, 2 + axis])  # x1 or y1
    reach[low] = min(reach[low], kept[i, axis])  # x0 or y0


@inlined
def kept_box(G, i):
    """Ball i's kept box (x0, y0, x1, y1)."""
    kept = G[11]
    return kept[i, 0], kept[i, 1], kept[i, 2], kept[i, 3]


@kernel
def boxes_meet(kept, j, box):
    """Whether ball j's kept box meets box (x0, y0, x1, y1): whether they
    overlap along the axis where they overlap least (the boxes are ordered
    and finite, and a - b >= 0 is a >= b in floating point). One comparison
    and no branch: which candidates meet is a coin toss the CPU cannot
    guess, and each wrong guess cost more than the test (callers add the
    answer to a count instead of branching on it: a hot gas steps 11-17%
    faster so, results the same)."""
    ox = min(kept[j, 2], box[2]) - max(kept[j, 0], box[0])
    oy = min(kept[j, 3], box[3]) - max(kept[j, 1], box[1])
    return min(ox, oy) >= 0.0


@inlined
def grid_cell_balls(G, i, cells, out, box, boxed):
    """Write the balls entered in the cells (ix0, iy0, ix1, iy1), and the big
    ones, into out (all N balls but i when i is big); returns their count.
    out must hold N entries; each ball appears once (per-query stamps).
    With boxed, only balls whose kept boxes meet box (ball i's sweep).

    The boxes are exact filters as long as every ball whose trajectory has
    changed is predicted again before the next event (event_loop does so):
    a pair that one side's out-of-date box drops is found from the other."""
    head, ent_ball, ent_next, meta, size, big, stamp, is_big, start, cell_ball = G[:10]
    kept = G[11]
    n = len(stamp)
    meta[4] += 1
    q = meta[4]
    m = 0
    if is_big[i]:
        for j in range(n):
            if j != i and (not boxed or boxes_meet(kept, j, box)):
                out[m] = j
                m += 1
        return m
    ix0, iy0, ix1, iy1 = cells
    nx = meta[1]
    for iy in range(iy0, iy1 + 1):
        for ix in range(ix0, ix1 + 1):
            c = iy * nx + ix
            for k in range(BALL_INT(start[c]), BALL_INT(start[c + 1])):  # (unsigned: see BALL_INT)
                m = _offer(cell_ball[k], i, q, stamp, out, m, kept, box, boxed)
            k = head[c]
            while k >= 0:
                m = _offer(ent_ball[k], i, q, stamp, out, m, kept, box, boxed)
                k = ent_next[k]
    for k in range(meta[3]):
        m = _offer(big[k], i, q, stamp, out, m, kept, box, boxed)
    return m


@kernel
def _offer(j, i, q, stamp, out, m, kept, box, boxed):
    """Add ball j to the m candidates of query q of ball i unless it is i,
    already there or (boxed) its kept box misses box; returns the new count.
    Without a branch (see boxes_meet): j is written anyway, and counted
    only if it is taken."""
    s = stamp[j]
    take = (j != i) & (s != q)
    if boxed:
        take = take & boxes_meet(kept, j, box)
    stamp[j] = q if take else s
    out[m] = j
    return m + take
