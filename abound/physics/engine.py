"""The event-driven step: every contact in time order, exact parabolas between.

One source, two speeds: the reference backend runs this file as plain Python,
the fast backend compiles it with numba (see backends.py), so it is written in
numba's subset: numpy arrays, scalars, tuples, no Python objects.

Motion. Ball i carries its own clock ``tloc[i]``: its position and velocity
are exact at that time and it moves as p + v t + acc t^2 / 2 after it, with
``acc`` = gravity for a free ball. An event touches only the balls it involves
(they are brought to the event time, "synced"); every other ball's prediction
stays valid. A per-ball counter ``count[i]``, bumped whenever i's trajectory
changes, marks older predictions involving i as stale (lazy invalidation).

Queue. Predicted events in order of (time, lower ball index, kind, other): a
calendar of time buckets whose earliest is a binary heap (see below). Ties
at equal times therefore go to the lower-numbered ball first, and for one
ball: walls (faces, end points, box) before balls before leaving a support;
pairs are ordered by their higher index. The order is part of the semantics:
both backends share it, so they resolve identical sequences.

Broad phase. A uniform grid over the box. Each ball is entered in every cell
that its swept bounding box for the rest of the part overlaps (the bounding
box of its parabola); a ball whose box would cover too many cells (a huge or
very fast ball) goes on a short "big" list instead, checked against everyone.
When a ball's trajectory changes it is entered again for its new sweep; old
entries stay and only cost a wasted exact test. Candidates are the balls
sharing a cell; the exact kernels decide. The step works on a copy of the
balls sorted by grid cell (written back at the end), so that the candidates
of a ball lie close to it in memory.

Rest (the Zeno problem). Under gravity a ball with restitution e < 1 would
bounce infinitely often in finite time, and a pile would touch for ever. We
use a restitution threshold with a supported state and sleeping:
  1. A contact slower than ``rest_speed`` (px/s) is perfectly inelastic: its
     normal approach is removed and nothing bounces back.
  2. A ball whose normal speed towards a *fixed* object (wall, segment end,
     pinned or sleeping ball) is now zero while gravity presses it in SLIDES:
     it moves on the contact's tangent line with gravity projected onto that
     line - still an exact parabola (a straight line), no energy change, no
     overlap. On a flat wall it slides until it reaches the segment's end. On a
     round support (a ball, an end point) the tangent line leaves the surface,
     so the ball leaves the support once the gap reaches HOP_GAP x radius and
     falls back in free flight: rolling off a peg is a series of short exact
     hops, each ending in a slow (inelastic) contact.
  3. A ball slower than ``rest_speed`` after a contact with a fixed object,
     whose fixed contacts hold it against gravity (the direction opposite to
     gravity lies within REST_ANGLE of a contact normal, or between two contact
     normals), goes to SLEEP: velocity zero, no gravity, fixed. Sleeping balls
     cost nothing per step. A contact at rest_speed or faster wakes a sleeper;
     waking spreads to the sleepers it was holding up (those touching it on
     the side opposite gravity) and releases balls sliding on it. Changing
     gravity, the box or the state wakes every ball.
  4. Inelastic collapse. A ball squeezed between a fixed object and a moving
     ball, or in a chain of moving balls, would bounce infinitely often in an
     instant. Between two moving balls a contact within TC_TIME of either
     ball's previous contact is elastic (the TC model of Luding and
     McNamara), so chains end after a few contacts and neither gain nor lose
     energy; against a fixed object bounces lose speed by e each time until
     rest_speed stops them. A ball that still makes COLLAPSE_CONTACTS such
     rapid contacts in one part of a step stops where it is: asleep if it is
     slow and touches something fixed (a pile then sleeps from the bottom
     up), else frozen for the rest of the step (see Budgets). Only contacts
     that would lose energy count (restitution below 1 or slower than
     rest_speed, before the TC model): elastic bounces are no collapse,
     however soon they follow one another - at a million px/s a ball
     crosses 10 px in TC_TIME - and stopping them would destroy energy.
The single dropped ball thus stops at the time the geometric series of its
bounces predicts, up to the last bounces slower than rest_speed.

Parts. A step of dt runs as k equal parts (substeps): the broad phase sweeps
each ball over one part, and when balls are dense and move several diameters
per step, short sweeps meet far fewer candidates (see substeps).
Events are exact whatever k; only round-off differs.

Budgets. A step resolves at most MAX_BALL_EVENTS events per ball and
MAX_EVENTS_BASE + MAX_EVENTS_PER_BALL x N in all, and examines at most
MAX_WORK_BASE + MAX_WORK_PER_BALL x N candidates in its predictions: balls
that sweep much of the box in a step (thousands of px/s in a small box, or a
user's 1e9 px/s) make every cell hold every ball, and each prediction then
meets them all. (A busy scene examines 10 to 30 per ball: a hot gas, a
settling pile or rain.) A ball over its budget is FROZEN for the rest of the
step (it keeps its velocity, stops in place and acts as a fixed obstacle);
over a total budget every ball stops at the time of the first event left
unresolved (at the start of the part, when the first predictions alone
exceed it).
Either way no ball overlaps, leaves the box or gains energy; the step only
loses some time for those balls. StepStats.frozen and .stopped report it.
"""
import math

import numpy as np

from ._jit import kernel, allocating, inlined
from .kernels import (TOUCH_REL, V_EPS, line_toi, pair_toi, mix_restitution,
                      normal_impulse, level_exit_time, ANALYTIC)
from .roots import INF

# parameter vector (backends.make_params)
P_GX, P_GY, P_REST_SPEED, P_MIX, P_BALL_TOI, P_WIDTH, P_HEIGHT, P_FRICTION = 0, 1, 2, 3, 4, 5, 6, 7

# ball modes (world.py)
FREE, SLIDING, ASLEEP, PINNED, FROZEN, ROLLING = 0, 1, 2, 3, 4, 5
# wall kinds (world.py); walls 0..3 are the box
BOX_LINE, SEGMENT = 0, 1
# what a sliding ball slides on
SUP_NONE, SUP_FACE, SUP_BALL, SUP_END = -1, 0, 1, 2
# event kinds, in tie order
EV_WALL, EV_BALL, EV_LEAVE = 0, 1, 2

TC_TIME = 1e-5  # s: contacts this soon after a ball's previous one are elastic
HOP_GAP = 1e-3  # x radius: a ball sliding on a round support leaves it at this gap
SLEEP_TOUCH = 1e-5  # x radius: contacts closer than this hold a ball when it falls asleep
# REST_ANGLE = 1e-6 rad: a single contact holds a ball only where its normal
# is that close to straight up (a level floor). Any steeper, a frictionless
# ball must slide: on a slope, or off the top of a peg (an unstable balance).
# (It was 0.1 rad, and a lone ball slept on a 2 degree slope.)
REST_COS = math.cos(1e-6)
MAX_BALL_EVENTS = 256
COLLAPSE_CONTACTS = 8
MAX_EVENTS_BASE = 100000
MAX_EVENTS_PER_BALL = 400
MAX_WORK_BASE = 1000000  # candidates a step may examine in its predictions ...
MAX_WORK_PER_BALL = 1000  # ... plus this many per ball
MAX_CELLS_PER_BALL = 64
MAX_SUBSTEPS = 8
SWEEP_SAMPLE = 256  # balls sampled for the mean sweep (mean_sweep)
ORDER_TILE = 8  # cells per side of the tiles the working copy is ordered by
# a grid cell's side, in typical swept boxes (mean sweep plus mean diameter):
# wider cells hold more balls but fewer per ball, and fewer cells to visit.
# Paired in one process and in both orders: against cells of one sweep, 1.6
# stepped the hot gas 7.5% faster at 10,000 balls on one thread and 11% at
# 1,000, the Galton board, rain, pool break and default scenes within 2%
# either way; against 1.6, 2.0 stepped the gas 2-3% faster at 10,000 balls
# on two threads, 6% at 1,000, 1.5% at 10,000 on one thread (two runs: 0.95
# and 1.02), the Galton board and a settling pile within 2%; 1.3 and 2.5 less
CELL_SWEEPS = 2.0
# what a split step watches (gather): a ball's watch code is high | low << 2 |
# axis << WATCH_AXIS, high and low its slots (0 to WATCH_SLOTS - 1) in reach
WATCH_SLOTS, WATCH_AXIS = 3, 4
GRID_INT = np.int32  # the grid's entry indices (below 2^31, -1 for none): half the memory of int64
# ball indices read from the grid are unsigned: numba wraps a negative index
# around the array's end, and for every signed index it reads an array with,
# it tests for that (a shift, a conditional move, the shape kept at hand);
# an unsigned index needs none (uint32: mixed with int64 it stays an integer)
BALL_INT = np.uint32
# the cost model of substeps, in units of the fixed cost of predicting one ball in a part
PART_CANDIDATE_COST = 1.3  # a candidate met by the first pass
EVENT_CANDIDATE_COST = 3.4  # a candidate met by the predictions after an event (two balls)
EVENTS_PER_MEETING = 1.6  # events per step / (N x density x diameter x reach)

# stats vector: contacts, events and freezes of the balls the run owns (all of
# them, unless the step is split: split.py), whether the budget stopped it,
# every event the run resolved and every candidate it examined (what its
# budgets count)
S_BALL, S_WALL, S_EVENTS, S_FROZEN, S_STOPPED, S_ALL, S_WORK = 0, 1, 2, 3, 4, 5, 6
N_STATS = 7


# --------------------------------------------------------------------------
# small helpers
# --------------------------------------------------------------------------
@kernel
def is_fixed(mode):
    """Fixed balls do not move and act as infinitely heavy."""
    return mode == ASLEEP or mode == PINNED or mode == FROZEN


@kernel
def lasting(mode):
    """Fixed for longer than this step: something a ball may slide or sleep on
    (a frozen ball is fixed only until the step ends)."""
    return mode == ASLEEP or mode == PINNED


@kernel
def sync(B, i, t):
    """Bring ball i's position and velocity to time t along its parabola
    (motion_at, stored; a fixed ball stays where it is)."""
    pos, vel, tloc, mode = B[0], B[1], B[3], B[7]
    if t != tloc[i]:
        if not is_fixed(mode[i]):
            pos[i, 0], pos[i, 1], vel[i, 0], vel[i, 1], _, _ = motion_at(B, i, t)
        tloc[i] = t


@kernel
def set_free(B, i, gx, gy, fric):
    """Ball i flies free: under gravity (gx, gy), or on a level table with
    rolling friction (fric > 0, px/s^2: then gravity is 0) slowing it at
    fric along its velocity until it stops (mode ROLLING, see roll)."""
    acc, mode, count, sup_kind, sup_idx = B[2], B[7], B[8], B[9], B[10]
    mode[i] = FREE
    acc[i, 0] = gx
    acc[i, 1] = gy
    sup_kind[i] = SUP_NONE
    sup_idx[i] = -1
    count[i] += 1
    if fric > 0.0:
        roll(B, i, fric)


@kernel
def roll(B, i, fric):
    """Free ball i on a level table with rolling friction fric (px/s^2):
    a straight path at constant deceleration fric along its velocity (mode
    ROLLING, acc = -fric v/|v|), a parabola in time like any other until it
    stops after |v| / fric s (predict_stop); at rest it stays FREE, acc 0."""
    vel, acc, mode = B[1], B[2], B[7]
    speed = math.sqrt(vel[i, 0] * vel[i, 0] + vel[i, 1] * vel[i, 1])
    if speed > 0.0:
        mode[i] = ROLLING
        acc[i, 0] = -fric * vel[i, 0] / speed
        acc[i, 1] = -fric * vel[i, 1] / speed
    else:
        mode[i] = FREE
        acc[i, 0] = 0.0
        acc[i, 1] = 0.0


@kernel
def stop_rolling(B, i):
    """Rolling ball i (synced to its stop time) comes to rest: exactly, not
    within the round-off of v + a t."""
    vel, acc, mode, count = B[1], B[2], B[7], B[8]
    vel[i, 0] = 0.0
    vel[i, 1] = 0.0
    acc[i, 0] = 0.0
    acc[i, 1] = 0.0
    mode[i] = FREE
    count[i] += 1


@kernel
def effective_motion(B, i):
    """(vx, vy, ax, ay) of ball i as others see it: zero for fixed balls."""
    vel, acc, mode = B[1], B[2], B[7]
    if is_fixed(mode[i]):
        return 0.0, 0.0, 0.0, 0.0
    return vel[i, 0], vel[i, 1], acc[i, 0], acc[i, 1]


# --------------------------------------------------------------------------
# event queue: a calendar of buckets in time, the earliest one in a heap.
# H = (time (cap,) and ints (cap, 7) of each event slot, meta (4,), next
#      slot (cap,) in a bucket's list or in the free list, first slot of each
#      bucket (buckets,), the heap's slots (cap,), buckets per second (1,)).
# A part's time is cut into equal buckets (about one per two balls); an
# event goes onto the list of its bucket, in any order, and only the current
# bucket's events are kept in a binary heap, ordered by (time, tie key of a,
# kind, tie key of b). When it runs empty the next bucket's list moves into
# it. With an event or two per bucket a push costs a store and a pop a short
# heap: a heap of all events (thousands deep) spent a tenth of a hot gas's
# step comparing times. Many events at one time (a pile's resting contacts)
# share a bucket and its heap, which keeps them in order at log cost.
# meta: events queued, first free slot, current bucket, events in the heap.
# ints columns: tie key of a, kind, tie key of b, a, b, count of a, count of b.
# Tie keys are the balls' public indices (the step works on a spatially
# sorted copy, see step), so ties resolve in the documented order. A bucket's
# index only grows with the time, so events leave in that order exactly.
# --------------------------------------------------------------------------
@kernel
def _sooner(H, s, r):
    """Does the event in slot s come before the one in slot r?"""
    ht, ev = H[0], H[1]
    if ht[s] != ht[r]:
        return ht[s] < ht[r]
    for c in range(3):
        if ev[s, c] != ev[r, c]:
            return ev[s, c] < ev[r, c]
    return False


@allocating
def heap_new(cap, buckets, horizon):
    """An empty queue with room for cap events, for times in [0, horizon] s."""
    nxt = np.arange(1, cap + 1, dtype=np.int64)
    nxt[cap - 1] = -1  # the free slots, in a list
    scale = np.zeros(1, dtype=np.float64)
    if horizon > 0.0:
        scale[0] = buckets / horizon
    meta = np.zeros(4, dtype=np.int64)
    meta[2] = -1  # no bucket in the heap yet
    return (np.empty(cap, dtype=np.float64), np.empty((cap, 7), dtype=np.int64), meta, nxt,
            np.full(buckets, -1, dtype=np.int64), np.empty(cap, dtype=np.int64), scale)


@allocating
def heap_reserve(H, extra):
    """H with room for extra more events (larger copies when needed)."""
    ht, ev, meta, nxt, head, heap, scale = H
    cap = len(ht)
    if meta[0] + extra <= cap:
        return H
    cap2 = max(2 * cap, meta[0] + extra)
    ht2 = np.empty(cap2, dtype=np.float64)
    ev2 = np.empty((cap2, 7), dtype=np.int64)
    nxt2 = np.empty(cap2, dtype=np.int64)
    heap2 = np.empty(cap2, dtype=np.int64)
    ht2[:cap] = ht
    ev2[:cap] = ev
    nxt2[:cap] = nxt
    heap2[:meta[3]] = heap[:meta[3]]
    for s in range(cap, cap2 - 1):
        nxt2[s] = s + 1
    nxt2[cap2 - 1] = meta[1]
    meta[1] = cap
    return ht2, ev2, meta, nxt2, head, heap2, scale


@kernel
def _heap_up(H, s):
    """Put slot s into the current bucket's heap."""
    meta, heap = H[2], H[5]
    k = meta[3]
    meta[3] = k + 1
    while k > 0:
        parent = (k - 1) >> 1
        if not _sooner(H, s, heap[parent]):
            break
        heap[k] = heap[parent]
        k = parent
    heap[k] = s


@kernel
def heap_push(H, t, a, kind, b, ca, cb, key_a, key_b):
    """Insert an event; the caller has reserved room (heap_reserve)."""
    ht, ev, meta, nxt, head, heap, scale = H
    s = meta[1]
    meta[1] = nxt[s]
    meta[0] += 1
    ht[s] = t
    ev[s, 0] = key_a
    ev[s, 1] = kind
    ev[s, 2] = key_b
    ev[s, 3] = a
    ev[s, 4] = b
    ev[s, 5] = ca
    ev[s, 6] = cb
    x = t * scale[0]
    last = len(head) - 1
    if not x < last:  # (also nan)
        bucket = last
    elif x > 0.0:
        bucket = int(x)
    else:
        bucket = 0
    if bucket <= meta[2]:
        _heap_up(H, s)  # the current bucket (or, by round-off, before it)
    else:
        nxt[s] = head[bucket]
        head[bucket] = s


@inlined
def heap_pop(H):
    """Remove the first event (the queue holds one); returns (t, a, kind, b, ca, cb)."""
    ht, ev, meta, nxt, head, heap, scale = H
    while meta[3] == 0:  # the next bucket that holds events goes into the heap
        meta[2] += 1
        s = head[meta[2]]
        head[meta[2]] = -1
        while s >= 0:
            following = nxt[s]
            _heap_up(H, s)
            s = following
    s = heap[0]
    last = meta[3] - 1
    meta[3] = last
    if last > 0:  # the heap's last slot moves into the hole at the root and down
        r = heap[last]
        k = 0
        while True:
            child = 2 * k + 1
            if child >= last:
                break
            if child + 1 < last and _sooner(H, heap[child + 1], heap[child]):
                child += 1
            if not _sooner(H, heap[child], r):
                break
            heap[k] = heap[child]
            k = child
        heap[k] = r
    meta[0] -= 1
    nxt[s] = meta[1]
    meta[1] = s
    return ht[s], ev[s, 3], ev[s, 1], ev[s, 4], ev[s, 5], ev[s, 6]


# --------------------------------------------------------------------------
# broad phase: a uniform grid over the box.
# G = (head (cells,), ent_ball, ent_next, meta int (nent, nx, ny, nbig, query id),
#      cell size, its inverse and the grid's corner (4,), big list (N,), stamp (N,), is_big (N,),
#      start (cells + 1,), cell_ball, span (N, 4), kept box (N, 4), watch (N,),
#      reach (2 x WATCH_SLOTS,): see gather)
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


@kernel
def _cell_span(G, x0, y0, x1, y1):
    meta, size = G[3], G[4]
    nx, ny = meta[1], meta[2]
    # times the inverse cell size, not divided by the size: four divisions
    # were a noticeable part of entering every ball; any monotonic map
    # of coordinates to cells keeps the grid exact
    s, ox, oy = size[1], size[2], size[3]
    ix0 = min(max(int(math.floor((x0 - ox) * s)), 0), nx - 1)
    iy0 = min(max(int(math.floor((y0 - oy) * s)), 0), ny - 1)
    ix1 = min(max(int(math.floor((x1 - ox) * s)), 0), nx - 1)
    iy1 = min(max(int(math.floor((y1 - oy) * s)), 0), ny - 1)
    return ix0, iy0, ix1, iy1


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
         np.empty((n, 4), dtype=GRID_INT), np.empty((n, 4), dtype=np.float64), watch, reach)
    total = grid_count(G, B, dt)
    G = G[:9] + (np.empty(total, dtype=BALL_INT),) + G[10:]
    grid_fill(G)
    return G


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
        if (ix1 - ix0 + 1) * (iy1 - iy0 + 1) > MAX_CELLS_PER_BALL:
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
    ncells = (ix1 - ix0 + 1) * (iy1 - iy0 + 1)
    if ncells > MAX_CELLS_PER_BALL:
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


@kernel
def grid_candidates(G, B, i, T, out):
    """Write the balls that may meet ball i within T seconds, or lie within
    SLEEP_TOUCH of their radius of touching it, into out; returns their count
    (see grid_cell_balls; no kept boxes: for queries about the present, made
    while other balls' boxes may be out of date).

    The rest tests (fixed_contacts, wake) count such a gap as touching. It is
    far wider than the boxes' padding, so without a margin as wide whether
    two balls met would depend on where the cells' edges fall (and a grid
    over another part of the box, a split step's, could decide otherwise).
    A ball entered in cells has a radius of at most MAX_CELLS_PER_BALL / 2 cells."""
    x0, y0, x1, y1 = swept_box(B, i, T)
    pad = SLEEP_TOUCH * (B[4][i] + 0.5 * MAX_CELLS_PER_BALL * G[4][0])
    x0, y0, x1, y1 = x0 - pad, y0 - pad, x1 + pad, y1 + pad
    return grid_cell_balls(G, i, _cell_span(G, x0, y0, x1, y1), out, (x0, y0, x1, y1), False)


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


# --------------------------------------------------------------------------
# prediction
# --------------------------------------------------------------------------
@inlined
def predict_walls(B, W, H, i, t, h, box):
    """Push ball i's first contact with each wall (face or end point) within h.
    box is ball i's kept box (see keep_box): walls it keeps clear of, most of
    them for most balls, are ruled out with a comparison or two."""
    pos, vel, acc, radius, mode, count, sup_kind, sup_idx = B[0], B[1], B[2], B[4], B[7], B[8], B[9], B[10]
    key = B[14]
    wp0, wp1, wn, wt, wlen, wc, we, wkind, wimpulse = W
    r = radius[i]
    touch = TOUCH_REL * r
    px, py, vx, vy, ax, ay = pos[i, 0], pos[i, 1], vel[i, 0], vel[i, 1], acc[i, 0], acc[i, 1]
    x0, y0, x1, y1 = box
    for w in range(len(wc)):
        nx, ny = wn[w, 0], wn[w, 1]
        if wkind[w] == BOX_LINE:
            # the box's corner nearest the line: on its far side means no
            # contact (the box is wider than the ball's sweep by more than touch)
            if nx * (x0 if nx > 0.0 else x1) + ny * (y0 if ny > 0.0 else y1) - wc[w] > 0.0:
                continue
        elif (x1 < min(wp0[w, 0], wp1[w, 0]) or x0 > max(wp0[w, 0], wp1[w, 0])
              or y1 < min(wp0[w, 1], wp1[w, 1]) or y0 > max(wp0[w, 1], wp1[w, 1])):
            continue  # the box misses the segment's bounding box
        on_face = mode[i] == SLIDING and sup_kind[i] == SUP_FACE and sup_idx[i] == w
        best = INF
        part = 0
        if wkind[w] == BOX_LINE:
            gap, vn, an = nx * px + ny * py - wc[w] - r, nx * vx + ny * vy, nx * ax + ny * ay
            # most balls are far from the box sides: rule them out without a root
            if not on_face and _axis_range(gap, vn, an, h)[0] <= touch:
                best, resting = line_toi(gap, vn, an, touch, h, True)
        else:
            sd = nx * px + ny * py - wc[w]
            vn = nx * vx + ny * vy
            an = nx * ax + ny * ay
            near = 1.0 if sd > 0.0 or (sd == 0.0 and vn < 0.0) else -1.0
            if not on_face:
                for side in (near, -near):
                    tc, resting = line_toi(side * sd - r, side * vn, side * an, touch, h, side == near)
                    if tc < best:
                        u = (wt[w, 0] * (px + (vx + 0.5 * ax * tc) * tc - wp0[w, 0])
                             + wt[w, 1] * (py + (vy + 0.5 * ay * tc) * tc - wp0[w, 1]))
                        if 0.0 < u < wlen[w]:  # at an end itself: the end point's contact
                            best = tc
            for end in range(2):
                ex = wp0[w, 0] if end == 0 else wp1[w, 0]
                ey = wp0[w, 1] if end == 0 else wp1[w, 1]
                if mode[i] == SLIDING and sup_kind[i] == SUP_END and sup_idx[i] == 2 * w + end:
                    continue
                tc, resting = pair_toi(ex - px, ey - py, -vx, -vy, -ax, -ay, r, touch, h, ANALYTIC)
                if tc < best:
                    best = tc
                    part = 1 + end
        if best < INF:
            heap_push(H, t + best, i, EV_WALL, 3 * w + part, count[i], 0, key[i], 3 * w + part)


@kernel
def predict_stop(B, H, i, t, h):
    """Push the time rolling ball i (synced to t) stops, |v| / |a| from now,
    if within h. Its path is a parabola only until then: any event predicted
    for later is stale by then (the stop bumps its count)."""
    vel, acc, count, key = B[1], B[2], B[8], B[14]
    speed = math.sqrt(vel[i, 0] * vel[i, 0] + vel[i, 1] * vel[i, 1])
    decel = math.sqrt(acc[i, 0] * acc[i, 0] + acc[i, 1] * acc[i, 1])
    tc = speed / decel
    if tc <= h:
        heap_push(H, t + tc, i, EV_LEAVE, -1, count[i], 0, key[i], -1)


@kernel
def motion_at(B, i, t):
    """(x, y, vx, vy, ax, ay) of ball i at time t, as others see it (a fixed
    ball does not move), without syncing it (sync stores it)."""
    pos, vel, acc, tloc, mode = B[0], B[1], B[2], B[3], B[7]
    if is_fixed(mode[i]):
        return pos[i, 0], pos[i, 1], 0.0, 0.0, 0.0, 0.0
    d = t - tloc[i]
    vx, vy, ax, ay = vel[i, 0], vel[i, 1], acc[i, 0], acc[i, 1]
    if d == 0.0:
        return pos[i, 0], pos[i, 1], vx, vy, ax, ay
    return (pos[i, 0] + (vx + 0.5 * ax * d) * d, pos[i, 1] + (vy + 0.5 * ay * d) * d,
            vx + ax * d, vy + ay * d, ax, ay)


@inlined
def predict_pair(B, H, i, j, t, h, method):
    """Push the first contact of balls i and j within h of time t (i synced to
    t; j's position at t is computed, not stored: a candidate stays as it is)."""
    radius, mode, count, sup_kind, sup_idx, key = B[4], B[7], B[8], B[9], B[10], B[14]
    if is_fixed(mode[i]) and is_fixed(mode[j]):
        return
    if mode[i] == SLIDING and sup_kind[i] == SUP_BALL and sup_idx[i] == j:
        return
    if mode[j] == SLIDING and sup_kind[j] == SUP_BALL and sup_idx[j] == i:
        return
    pix, piy, vix, viy, aix, aiy = motion_at(B, i, t)
    pjx, pjy, vjx, vjy, ajx, ajy = motion_at(B, j, t)
    R = radius[i] + radius[j]
    touch = TOUCH_REL * min(radius[i], radius[j])
    tc, resting = pair_toi(pjx - pix, pjy - piy, vjx - vix, vjy - viy,
                           ajx - aix, ajy - aiy, R, touch, h, method)
    if tc < INF:
        a, b = (i, j) if key[i] < key[j] else (j, i)
        heap_push(H, t + tc, a, EV_BALL, b, count[a], count[b], key[a], key[b])


@kernel
def predict_leave(B, W, H, i, t, h):
    """Push the time sliding ball i leaves its support (segment end, or the gap on a round one)."""
    pos, vel, acc, radius, count, key = B[0], B[1], B[2], B[4], B[8], B[14]
    sup_kind, sup_idx, sup_n, sup_c, sup_r = B[9], B[10], B[11], B[12], B[13]
    if sup_kind[i] == SUP_FACE:
        if sup_r[i] < 0.0:
            return  # a box side has no end
        tx, ty = W[3][sup_idx[i], 0], W[3][sup_idx[i], 1]  # along the segment, from p0
    else:
        tx, ty = -sup_n[i, 1], sup_n[i, 0]
    ox, oy = pos[i, 0] - sup_c[i, 0], pos[i, 1] - sup_c[i, 1]
    s0 = tx * ox + ty * oy
    v = tx * vel[i, 0] + ty * vel[i, 1]
    a = tx * acc[i, 0] + ty * acc[i, 1]
    if sup_kind[i] == SUP_FACE:
        # sup_c holds the segment's p0 and sup_r its length
        tc = level_exit_time(s0, v, a, 0.0, sup_r[i], h)
    else:
        gap = HOP_GAP * radius[i]
        reach = math.sqrt(2.0 * sup_r[i] * gap + gap * gap)
        tc = level_exit_time(s0, v, a, -reach, reach, h)
    if tc < INF:
        heap_push(H, t + tc, i, EV_LEAVE, -1, count[i], 0, key[i], -1)


@inlined
def predict_ball(B, W, H, G, i, t, dt, method, cand):
    """Push the next events of ball i (synced to t), whose trajectory has just
    changed: it is entered in the grid for its new sweep first. The caller has
    reserved room in the grid and the queue (reserve). Returns the number of
    candidates examined."""
    mode = B[7]
    h = dt - t
    box = swept_box(B, i, h)
    keep_box(G, i, box)
    cells = _cell_span(G, box[0], box[1], box[2], box[3])
    grid_enter(G, i, cells)
    fixed_i = is_fixed(mode[i])
    if not fixed_i:
        predict_walls(B, W, H, i, t, h, kept_box(G, i))
        if mode[i] == SLIDING:
            predict_leave(B, W, H, i, t, h)
        elif mode[i] == ROLLING:
            predict_stop(B, H, i, t, h)
    m = grid_cell_balls(G, i, cells, cand, box, True)
    for k in range(m):
        j = cand[k]
        if fixed_i and is_fixed(mode[j]):
            continue
        predict_pair(B, H, i, j, t, h, method)
    return m


@kernel
def first_pass(B, W, H, G, dt, method, resume, stats, most_work, cand):
    """Predict everything at the start of a part: each moving ball's walls and
    support, then every pair that shares a cell, once, in the first cell the
    two share (no per-query bookkeeping), then the big balls' pairs. Pairs of
    fixed balls are skipped. Returns False when the queue needs room (see
    event_loop); resume[2] counts the work done: balls, then cells, then big
    balls (and resume[3] the balls done in the current cell). Counts the
    pairs it examines in stats[S_WORK]; past most_work it sets
    stats[S_STOPPED] and returns True. cand: room for N ball indices."""
    mode, span, radius, kept = B[7], G[10], B[4], G[11]
    meta, start, cell_ball, big, is_big = G[3], G[8], G[9], G[5], G[7]
    n = len(radius)
    nwalls = len(W[0])
    nx = meta[1]
    ncell = len(start) - 1
    while resume[2] < n:
        i = resume[2]
        if not is_fixed(mode[i]):
            if H[2][0] + nwalls + 2 > len(H[0]):
                return False
            predict_walls(B, W, H, i, 0.0, dt, kept_box(G, i))
            if mode[i] == SLIDING:
                predict_leave(B, W, H, i, 0.0, dt)
            elif mode[i] == ROLLING:
                predict_stop(B, H, i, 0.0, dt)
        resume[2] = i + 1
    while resume[2] < n + ncell:
        c = resume[2] - n
        lo, hi = start[c], start[c + 1]
        cx, cy = c % nx, c // nx
        # room for one ball's pairs at a time (resume[3]: the balls done):
        # a crowded cell's pairs could outgrow any queue reserve() makes room
        # for, but a cell holds at most n balls
        while lo + resume[3] < hi:
            p = lo + resume[3]
            if H[2][0] + (hi - p - 1) > len(H[0]):
                return False
            if stats[S_WORK] >= most_work:
                stats[S_STOPPED] = 1
                return True
            stats[S_WORK] += hi - p
            i = cell_ball[p]
            box = kept_box(G, i)
            fixed_i = is_fixed(mode[i])
            # the boxes first, without a branch (see boxes_meet): the balls
            # whose boxes meet i's are collected, then tested further
            met = 0
            for q in range(BALL_INT(p + 1), BALL_INT(hi)):
                j = cell_ball[q]
                cand[met] = j
                met += boxes_meet(kept, j, box)
            for q in range(met):
                j = cand[q]
                if fixed_i and is_fixed(mode[j]):
                    continue
                if max(span[i, 0], span[j, 0]) == cx and max(span[i, 1], span[j, 1]) == cy:
                    predict_pair(B, H, i, j, 0.0, dt, method)
            resume[3] += 1
        resume[3] = 0
        resume[2] += 1
    while resume[2] < n + ncell + meta[3]:
        i = big[resume[2] - n - ncell]
        if H[2][0] + n > len(H[0]):
            return False
        if stats[S_WORK] >= most_work:
            stats[S_STOPPED] = 1
            return True
        stats[S_WORK] += n
        box = kept_box(G, i)
        for j in range(n):
            if j == i or (is_big[j] and j < i) or (is_fixed(mode[i]) and is_fixed(mode[j])):
                continue
            if not boxes_meet(kept, j, box):
                continue
            predict_pair(B, H, i, j, 0.0, dt, method)
        resume[2] += 1
    return True


@kernel
def has_room(H, G, n, nwalls):
    """Is there room in the queue and the grid for one more predict_ball?"""
    return H[2][0] + n + nwalls + 2 <= len(H[0]) and G[3][0] + MAX_CELLS_PER_BALL <= len(G[1])


@allocating
def reserve(H, G, n, nwalls):
    """Room in the queue and the grid for one more predict_ball."""
    return heap_reserve(H, n + nwalls + 2), grid_reserve(G, MAX_CELLS_PER_BALL)


# --------------------------------------------------------------------------
# rest: sliding, sleeping, waking
# --------------------------------------------------------------------------
@kernel
def _held(normals, k, gx, gy):
    """Do contact normals (pointing into the ball) hold it against gravity g?"""
    g = math.sqrt(gx * gx + gy * gy)
    if g == 0.0:
        return False
    ux, uy = -gx / g, -gy / g
    for q in range(k):
        if normals[q, 0] * ux + normals[q, 1] * uy >= REST_COS:
            return True  # one contact under the ball, within REST_ANGLE of straight below
    # two contacts whose normals span -g with non-negative weights: a wedge
    for a in range(k):
        for b in range(a + 1, k):
            # each pair in one order whatever the order the contacts were found
            # in (the grid's): the rounding of its weights then is the same too
            q, r = (a, b) if (normals[a, 0], normals[a, 1]) <= (normals[b, 0], normals[b, 1]) else (b, a)
            det = normals[q, 0] * normals[r, 1] - normals[q, 1] * normals[r, 0]
            if abs(det) < 1e-9:
                continue
            wq = (ux * normals[r, 1] - uy * normals[r, 0]) / det
            wr = (normals[q, 0] * uy - normals[q, 1] * ux) / det
            if wq >= 0.0 and wr >= 0.0:
                return True
    return False


@kernel
def segment_closest(W, w, px, py):
    """The point of segment w nearest to (px, py)."""
    wp0, wt, wlen = W[0], W[3], W[4]
    u = wt[w, 0] * (px - wp0[w, 0]) + wt[w, 1] * (py - wp0[w, 1])
    u = min(max(u, 0.0), wlen[w])
    return wp0[w, 0] + u * wt[w, 0], wp0[w, 1] + u * wt[w, 1]


@kernel
def fixed_contacts(B, W, G, i, normals, cand):
    """Write the unit normals (into ball i) of the fixed things ball i touches -
    walls, segment ends, pinned and sleeping balls, within SLEEP_TOUCH x radius -
    into normals; returns how many (at most len(normals))."""
    pos, radius, mode = B[0], B[4], B[7]
    wp0, wp1, wn, wt, wlen, wc, we, wkind, wimpulse = W
    r = radius[i]
    tol = SLEEP_TOUCH * r
    px, py = pos[i, 0], pos[i, 1]
    k = 0
    for w in range(len(wc)):
        if k >= len(normals):
            break
        if wkind[w] == BOX_LINE:
            if wn[w, 0] * px + wn[w, 1] * py - wc[w] - r <= tol:
                normals[k, 0] = wn[w, 0]
                normals[k, 1] = wn[w, 1]
                k += 1
        else:
            cx, cy = segment_closest(W, w, px, py)
            d = math.sqrt((px - cx) ** 2 + (py - cy) ** 2)
            if 0.0 < d <= r + tol:
                normals[k, 0] = (px - cx) / d
                normals[k, 1] = (py - cy) / d
                k += 1
    m = grid_candidates(G, B, i, 0.0, cand)
    for q in range(m):
        if k >= len(normals):
            break
        j = cand[q]
        if not lasting(mode[j]):
            continue
        dx, dy = px - pos[j, 0], py - pos[j, 1]
        d = math.sqrt(dx * dx + dy * dy)
        if 0.0 < d <= r + radius[j] + tol:
            normals[k, 0] = dx / d
            normals[k, 1] = dy / d
            k += 1
    return k


@kernel
def fall_asleep(B, i):
    vel, acc, mode, count = B[1], B[2], B[7], B[8]
    mode[i] = ASLEEP
    vel[i, 0] = 0.0
    vel[i, 1] = 0.0
    acc[i, 0] = 0.0
    acc[i, 1] = 0.0
    count[i] += 1


@kernel
def try_sleep(B, W, G, i, gx, gy, normals, cand):
    """Put ball i to sleep if its fixed contacts hold it against gravity."""
    if not _held(normals, fixed_contacts(B, W, G, i, normals, cand), gx, gy):
        return False
    fall_asleep(B, i)
    return True


@kernel
def collapse(B, W, G, i, partner, rest_speed, normals, cand):
    """Ball i is caught in an inelastic collapse (COLLAPSE_CONTACTS contacts,
    each within TC_TIME of the one before), its last with partner (-1: a wall).

    The rattle stands for a lasting contact, which loses the relative motion:
    i takes the common velocity of i and a moving partner (momentum kept, energy
    lost), or stops against a fixed one. Then it stops where it is: asleep if
    it is slow and touches something fixed (the pile below it holds it), else
    frozen for the rest of the step. Returns True if it fell asleep.
    """
    vel, inv_mass, mode, count = B[1], B[5], B[7], B[8]
    if partner >= 0 and not is_fixed(mode[partner]):
        wi, wp = 1.0 / inv_mass[i], 1.0 / inv_mass[partner]
        for c in range(2):
            vc = (wi * vel[i, c] + wp * vel[partner, c]) / (wi + wp)
            vel[i, c] = vc
            vel[partner, c] = vc
        count[partner] += 1
    else:
        vel[i, 0] = 0.0
        vel[i, 1] = 0.0
    slow = vel[i, 0] * vel[i, 0] + vel[i, 1] * vel[i, 1] < rest_speed * rest_speed
    if slow and fixed_contacts(B, W, G, i, normals, cand) > 0:
        fall_asleep(B, i)
        return True
    mode[i] = FROZEN
    count[i] += 1
    return False


@kernel
def after_contact(B, W, G, i, fixed_other, nx, ny, skind, sidx, cx, cy, cr, fric,
                  gx, gy, rest_speed, normals, cand):
    """Decide ball i's state after a contact whose normal n points into i.

    Its old support (if any) no longer applies: it is free, unless the contact
    was with a fixed object, left no normal speed and gravity presses it in -
    then it sleeps if slow and held, else slides on the contact's tangent line.
    """
    vel, acc, mode = B[1], B[2], B[7]
    sup_kind, sup_idx, sup_n, sup_c, sup_r = B[9], B[10], B[11], B[12], B[13]
    set_free(B, i, gx, gy, fric)
    if not fixed_other:
        return
    vx, vy = vel[i, 0], vel[i, 1]
    if math.sqrt(vx * vx + vy * vy) < max(rest_speed, V_EPS):
        if try_sleep(B, W, G, i, gx, gy, normals, cand):
            return
    gn = gx * nx + gy * ny
    if gn >= 0.0:
        return
    vn = vx * nx + vy * ny
    if abs(vn) > V_EPS + 1e-12 * math.sqrt(vx * vx + vy * vy):
        return  # it bounced off
    vel[i, 0] = vx - vn * nx
    vel[i, 1] = vy - vn * ny
    mode[i] = SLIDING
    acc[i, 0] = gx - gn * nx
    acc[i, 1] = gy - gn * ny
    sup_kind[i] = skind
    sup_idx[i] = sidx
    sup_n[i, 0] = nx
    sup_n[i, 1] = ny
    sup_c[i, 0] = cx
    sup_c[i, 1] = cy
    sup_r[i] = cr


@kernel
def wake(B, G, j, t, gx, gy, fric, todo, ntodo, cand, stack):
    """Wake sleeping ball j and, transitively, the sleepers it holds up; release
    balls sliding on any of them. Appends every changed ball to todo; stack is
    scratch space for N indices."""
    pos, mode, sup_kind, sup_idx, radius, tloc = B[0], B[7], B[9], B[10], B[4], B[3]
    stack[0] = j
    top = 1
    mode[j] = FREE  # marks it as taken; set_free below does the rest
    while top > 0:
        top -= 1
        k = stack[top]
        tloc[k] = t
        set_free(B, k, gx, gy, fric)
        todo[ntodo] = k
        ntodo += 1
        m = grid_candidates(G, B, k, 0.0, cand)
        for q in range(m):
            s = cand[q]
            if mode[s] == SLIDING and sup_kind[s] == SUP_BALL and sup_idx[s] == k:
                sync(B, s, t)
                set_free(B, s, gx, gy, fric)
                todo[ntodo] = s
                ntodo += 1
                continue
            dx, dy = pos[s, 0] - pos[k, 0], pos[s, 1] - pos[k, 1]
            if math.sqrt(dx * dx + dy * dy) > radius[s] + radius[k] + SLEEP_TOUCH * radius[s]:
                continue
            if mode[s] == ASLEEP and -(dx * gx + dy * gy) > 0.0:
                mode[s] = FREE
                stack[top] = s
                top += 1
    return ntodo


# --------------------------------------------------------------------------
# responses
# --------------------------------------------------------------------------
@kernel
def contact_restitution(e1, e2, params, approach):
    """Restitution of a contact: the mixed value; 0 below rest_speed (the TC
    model may then make a contact between moving balls elastic: resolve_pair)."""
    if approach < params[P_REST_SPEED]:
        return 0.0
    return mix_restitution(e1, e2, int(params[P_MIX]))


@inlined
def resolve_wall(B, W, G, i, code, t, params, tlast, normals, cand, counted):
    """Ball i meets wall code // 3 (part 0: face, 1: end p0, 2: end p1);
    returns whether it bounced off elastically (see resolve_pair), the
    contact's unit normal (into the ball) and its impulse (mass px/s). With
    counted, the bounce's impulse goes on the wall's tally (W[8]; a split
    step counts each event once, in the strip that owns the ball)."""
    pos, vel, rest, inv_mass = B[0], B[1], B[6], B[5]
    wp0, wp1, wn, wt, wlen, wc, we, wkind, wimpulse = W
    gx, gy, rest_speed = params[P_GX], params[P_GY], params[P_REST_SPEED]
    w = code // 3
    part = code - 3 * w
    sync(B, i, t)
    if part == 0:
        nx, ny = wn[w, 0], wn[w, 1]
        if wkind[w] == SEGMENT and nx * pos[i, 0] + ny * pos[i, 1] - wc[w] < 0.0:
            nx, ny = -nx, -ny
        skind, sidx, cx, cy, cr = SUP_FACE, w, wp0[w, 0], wp0[w, 1], wlen[w]
    else:
        ex = wp0[w, 0] if part == 1 else wp1[w, 0]
        ey = wp0[w, 1] if part == 1 else wp1[w, 1]
        dx, dy = pos[i, 0] - ex, pos[i, 1] - ey
        d = math.sqrt(dx * dx + dy * dy)
        if d == 0.0:
            dx, dy, d = 0.0, 1.0, 1.0
        nx, ny = dx / d, dy / d
        skind, sidx, cx, cy, cr = SUP_END, 2 * w + part - 1, ex, ey, d
    if skind == SUP_FACE and wkind[w] == BOX_LINE:
        cr = -1.0  # a box side is an infinite line: a ball slides along it without end
    vn = vel[i, 0] * nx + vel[i, 1] * ny
    elastic = False
    impulse = 0.0
    if vn < 0.0:
        e = contact_restitution(rest[i], we[w], params, -vn)  # no TC model against a wall alone
        elastic = e >= 1.0
        J = normal_impulse(vn, 0.0, 1.0, e)  # the wall is infinitely heavy
        vel[i, 0] += J * nx
        vel[i, 1] += J * ny
        impulse = J / inv_mass[i]  # (J is the change of velocity; a moving ball's mass is finite)
        if counted:
            wimpulse[w] += impulse
    tlast[i] = t
    after_contact(B, W, G, i, True, nx, ny, skind, sidx, cx, cy, cr, params[P_FRICTION], gx, gy, rest_speed,
                  normals, cand)
    return elastic, nx, ny, impulse


@inlined
def resolve_pair(B, W, G, a, b, t, params, tlast, todo, ntodo, normals, cand, stack):
    """Balls a and b meet: wake a sleeper hit hard enough, exchange the normal
    impulse. Returns the new count of balls to predict, whether they
    bounced elastically, the unit normal from a to b and the impulse (mass
    px/s) b took along it. Elastic: at rest_speed or faster with restitution 1, not
    counting the TC model's (such a contact loses no energy, so it is no part
    of an inelastic collapse)."""
    pos, vel, radius, inv_mass, rest, mode = B[0], B[1], B[4], B[5], B[6], B[7]
    gx, gy, rest_speed = params[P_GX], params[P_GY], params[P_REST_SPEED]
    sync(B, a, t)
    sync(B, b, t)
    dx, dy = pos[b, 0] - pos[a, 0], pos[b, 1] - pos[a, 1]
    d = math.sqrt(dx * dx + dy * dy)
    if d == 0.0:
        dx, dy, d = 1.0, 0.0, 1.0
    nx, ny = dx / d, dy / d
    vax, vay, _, _ = effective_motion(B, a)
    vbx, vby, _, _ = effective_motion(B, b)
    vn = (vbx - vax) * nx + (vby - vay) * ny
    if -vn >= rest_speed:
        if mode[a] == ASLEEP:
            ntodo = wake(B, G, a, t, gx, gy, params[P_FRICTION], todo, ntodo, cand, stack)
        if mode[b] == ASLEEP:
            ntodo = wake(B, G, b, t, gx, gy, params[P_FRICTION], todo, ntodo, cand, stack)
    fixed_a = is_fixed(mode[a])
    fixed_b = is_fixed(mode[b])
    elastic = False
    J = 0.0
    if vn < 0.0:
        e = contact_restitution(rest[a], rest[b], params, -vn)
        elastic = e >= 1.0
        # the TC model, for collapse among moving balls: elastic within
        # TC_TIME of either ball's previous contact. Against a fixed one,
        # bounces lose speed by e each time until rest_speed stops them.
        if not (fixed_a or fixed_b) and t - max(tlast[a], tlast[b]) < TC_TIME:
            e = 1.0
        inv_a = 0.0 if fixed_a else inv_mass[a]
        inv_b = 0.0 if fixed_b else inv_mass[b]
        J = normal_impulse(vn, inv_a, inv_b, e)
        if not fixed_a:
            vel[a, 0] -= J * inv_a * nx
            vel[a, 1] -= J * inv_a * ny
        if not fixed_b:
            vel[b, 0] += J * inv_b * nx
            vel[b, 1] += J * inv_b * ny
    tlast[a] = t
    tlast[b] = t
    R = radius[a] + radius[b]
    # (after_contact is called only where it may do more than free the ball:
    # a call passes the whole state, which costs more than a free contact)
    if not fixed_a:
        if lasting(mode[b]):
            after_contact(B, W, G, a, True, -nx, -ny, SUP_BALL, b, pos[b, 0], pos[b, 1], R, params[P_FRICTION],
                          gx, gy, rest_speed, normals, cand)
        else:
            set_free(B, a, gx, gy, params[P_FRICTION])
        todo[ntodo] = a
        ntodo += 1
    if not fixed_b:
        if lasting(mode[a]):
            after_contact(B, W, G, b, True, nx, ny, SUP_BALL, a, pos[a, 0], pos[a, 1], R, params[P_FRICTION],
                          gx, gy, rest_speed, normals, cand)
        else:
            set_free(B, b, gx, gy, params[P_FRICTION])
        todo[ntodo] = b
        ntodo += 1
    return ntodo, elastic, nx, ny, J


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
    low slot s (see keep_box). A ball that slides on a ball left out of perm
    gets support index -1 (split.py keeps that from happening)."""
    sup_kind, sup_idx = B[9], B[10]
    n = len(perm)
    reach = np.empty(2 * WATCH_SLOTS, dtype=np.float64)
    reach[:WATCH_SLOTS] = -INF
    reach[WATCH_SLOTS:] = INF
    P = (np.empty((n, 2)), np.empty((n, 2)), np.empty((n, 2)), np.empty(n), np.empty(n),
         np.empty(n), np.empty(n), np.empty(n, dtype=B[7].dtype), np.empty(n, dtype=B[8].dtype),
         np.empty(n, dtype=B[9].dtype), np.empty(n, dtype=B[10].dtype), np.empty((n, 2)),
         np.empty((n, 2)), np.empty(n), perm, np.zeros(n, dtype=np.int8), reach)
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
def step(B, W, params, dt):
    """Advance every ball exactly dt seconds; returns stats (ball-ball,
    ball-wall, events, frozen, stopped, all events: see S_*).

    Runs on a copy of the balls sorted by space (see spatial_order), written
    back at the end. (split.py runs a large step as strips, on two threads.)
    """
    return step_logged(B, W, params, dt, contact_log(0))


@allocating
def step_logged(B, W, params, dt, log):
    """step, and each contact it resolves appended to log (see contact_log)."""
    n = len(B[4])
    P = gather(B, spatial_order(B, params[P_WIDTH], params[P_HEIGHT], dt))
    own = np.ones(n, dtype=np.bool_)
    stats = np.zeros(N_STATS, dtype=np.int64)
    run_parts(P, W, params, dt, substeps(B, params, dt), stats, np.zeros(n, dtype=np.int64),
              event_budget(n), own, log)
    scatter(P, B, own)
    return stats


LOG_FIELDS = ("t", "a", "b", "wall", "x", "y", "nx", "ny", "impulse")


@allocating
def contact_log(cap):
    """Room for cap contacts, one row each: (time within the step s, ball a,
    ball b or -1, wall or -1 (public indices), contact point x, y px, unit
    normal nx, ny from a towards b or the wall, normal impulse mass px/s
    that b or the wall gave a, opposite to n: see LOG_FIELDS); the count so
    far; the time the current part of the step starts at. cap 0: no log (a
    step then writes nothing, at the cost of one test per contact)."""
    return (np.empty((cap, len(LOG_FIELDS)), dtype=np.float64), np.zeros(1, dtype=np.int64),
            np.zeros(1, dtype=np.float64))


@kernel
def log_contact(B, log, t, a, b, wall, nx, ny, impulse):
    """Append a resolved contact of ball a (synced to t) to log, if it keeps one."""
    rec, count, start = log
    k = count[0]
    if k >= len(rec):
        return
    pos, radius, key = B[0], B[4], B[14]
    rec[k, 0] = start[0] + t
    rec[k, 1] = key[a]
    rec[k, 2] = key[b] if b >= 0 else -1
    rec[k, 3] = wall
    rec[k, 4] = pos[a, 0] + radius[a] * nx
    rec[k, 5] = pos[a, 1] + radius[a] * ny
    rec[k, 6] = nx
    rec[k, 7] = ny
    rec[k, 8] = impulse
    count[0] = k + 1


@kernel
def event_budget(n):
    """The most events a step of n balls resolves (see Budgets)."""
    return MAX_EVENTS_BASE + MAX_EVENTS_PER_BALL * n


@kernel
def work_budget(n):
    """The most candidates a step of n balls examines (see Budgets)."""
    return MAX_WORK_BASE + MAX_WORK_PER_BALL * n


@allocating
def run_parts(P, W, params, dt, k, stats, ball_events, budget, own, log):
    """Advance the working copy P by dt in k equal parts (see substeps);
    adds to stats those of the balls with own[public index] (see S_*), and
    their contacts to log (see contact_log)."""
    for part in range(k):
        log[2][0] = part * (dt / k)
        run_events(P, W, params, dt / k, stats, ball_events, budget, own, log)
        if stats[S_STOPPED]:
            break


@allocating
def split_histogram(B, params, dt, share, bins):
    """What split.py cuts a step of dt by: returns (axis, reach, at (bins,)
    int64, moving). axis: 0 cuts across x (the box's longer side), 1 across
    y; at: how many moving balls lie in each of bins equal slices of the box
    along it; reach: the distance the fastest moving balls but a share of
    them sweep in dt (to 1/1024 of the fastest), plus the largest diameter.
    moving is 0 when a moving ball's state is not finite: such a step is
    not split."""
    pos, vel, acc, radius, mode = B[0], B[1], B[2], B[4], B[7]
    n = len(radius)
    width, height = params[P_WIDTH], params[P_HEIGHT]
    axis = 0 if width >= height else 1
    length = width if axis == 0 else height
    at = np.zeros(bins, dtype=np.int64)
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


@kernel
def substeps(B, params, dt):
    """How many equal parts to run a step of dt in (1 to MAX_SUBSTEPS).

    The result is the same whatever the count - events are exact and the
    parts only split the time - but the broad phase sweeps each ball over
    its part, and each part predicts every ball afresh, while the events
    (about EVENTS_PER_MEETING x N x density x diameter x reach per step,
    whatever k) each predict two balls again. Both meet about
    m = density x (diameter + reach / k)^2 candidates per ball, fewer with
    shorter sweeps. So a step costs about k x N x (1 + PART_CANDIDATE_COST m)
    + events x EVENT_CANDIDATE_COST m (plus a per-event constant), and k
    minimises that: 1 for sparse or slow balls, more when they are dense
    and move several diameters per step. The constants are fitted to step
    times of the hot gas at 1,000 to 10,000 balls with k forced to 1 to 4
    (2-core benchmark machine, November 2026; the fit is within 7% of all
    14 timings and picks the fastest k at each size).
    """
    n = len(B[4])
    if n == 0:
        return 1
    reach, diameter = mean_sweep(B, dt, INF)
    density = n / max(params[P_WIDTH] * params[P_HEIGHT], 1e-300)
    events = EVENTS_PER_MEETING * density * diameter * reach  # per ball
    best, best_cost = 1, INF
    for k in range(1, MAX_SUBSTEPS + 1):
        side = diameter + reach / k
        met = density * side * side
        cost = k * (1.0 + PART_CANDIDATE_COST * met) + events * EVENT_CANDIDATE_COST * met
        if cost < best_cost:
            best, best_cost = k, cost
    return best


@allocating
def run_events(B, W, params, dt, stats, ball_events, budget, own, log):
    """Advance the working copy B (see gather) by dt, every event in time
    order; see step. Adds to stats (see run_parts) and ball_events; over the
    total budget it sets stats[S_STOPPED] and stops."""
    n = len(B[4])
    tloc, mode = B[3], B[7]
    fric = params[P_FRICTION]
    moving = 0
    for i in range(n):
        tloc[i] = 0.0
        moving += not is_fixed(mode[i])
        if fric > 0.0 and mode[i] == FREE:
            roll(B, i, fric)  # (a ball set free outside a step: an edit, a wake-up)
    # events involve moving balls: sized by all balls, a mostly sleeping
    # scene's queue (448 bytes a ball) was mapped, faulted in and unmapped
    # every part (reserve makes room when a part needs more)
    H = heap_new(8 * moving + 64, moving // 2 + 16, dt)
    G = grid_new(B, params[P_WIDTH], params[P_HEIGHT], dt, B[15], B[16])
    S = (np.empty(max(n, 1), dtype=BALL_INT),  # candidates of one query
         np.empty(4 * n + 8, dtype=BALL_INT),  # balls to predict after an event
         np.empty((16, 2), dtype=np.float64),  # contact normals (try_sleep)
         np.empty(max(n, 1), dtype=np.int64),  # wake's stack
         np.full(n, -INF),  # time of each ball's last contact (the TC model)
         np.zeros(n, dtype=np.int64),  # each ball's rapid contacts (collapse)
         np.zeros(4, dtype=np.int64),  # where to resume: to predict, predicted, first pass (2, 3)
         np.zeros(1, dtype=np.float64))  # ... and at what time
    while not event_loop(B, W, H, G, S, params, dt, stats, ball_events, budget, own, log):
        H, G = reserve(H, G, n, len(W[0]))
    # over the budget, every ball stops at the time of the first event left
    # unresolved (event_loop leaves it in S[7]): all earlier ones are resolved
    finish(B, params, S[7][0] if stats[S_STOPPED] else dt)


@kernel
def event_loop(B, W, H, G, S, params, dt, stats, ball_events, budget, own, log):
    """The event loop proper: predict every ball, then pop and resolve events
    until the queue is empty (or the budget is spent). Allocates nothing: when
    the queue or the grid is about to fill it returns False, and the caller
    makes room and calls again; it resumes where it stopped (S[5], S[6]).
    Returns True when done."""
    cand, todo, normals, stack, tlast, rapid, resume, resume_t = S
    mode, count, key = B[7], B[8], B[14]
    rest_speed = max(params[P_REST_SPEED], V_EPS)
    n = len(B[4])
    nwalls = len(W[0])
    gx, gy = params[P_GX], params[P_GY]
    method = int(params[P_BALL_TOI])
    most_work = work_budget(n)
    if resume[2] >= 0:
        if not first_pass(B, W, H, G, dt, method, resume, stats, most_work, cand):
            return False
        resume[2] = -1  # done: balls that go on the big list later are not first-pass work
        if stats[S_STOPPED]:
            resume_t[0] = 0.0
            return True
    while True:
        while resume[1] < resume[0]:  # the balls the last event changed
            if not has_room(H, G, n, nwalls):
                return False
            stats[S_WORK] += predict_ball(B, W, H, G, todo[resume[1]], resume_t[0], dt, method,
                                          cand) + 1
            resume[1] += 1
        if H[2][0] == 0:
            return True
        t, a, kind, b, ca, cb = heap_pop(H)
        if count[a] != ca or (kind == EV_BALL and count[b] != cb):
            continue  # stale: a trajectory changed since this was predicted
        if stats[S_ALL] >= budget or stats[S_WORK] >= most_work:
            stats[S_STOPPED] = 1
            resume_t[0] = t
            return True
        stats[S_ALL] += 1
        mine = own[key[a]]  # an event counts for the owner of its first ball
        if mine:
            stats[S_EVENTS] += 1
        ball_events[a] += 1
        if kind == EV_BALL:
            ball_events[b] += 1
        over = -1
        if ball_events[a] > MAX_BALL_EVENTS and not is_fixed(mode[a]):
            over = a
        elif kind == EV_BALL and ball_events[b] > MAX_BALL_EVENTS and not is_fixed(mode[b]):
            over = b
        if over >= 0:
            sync(B, over, t)
            mode[over] = FROZEN
            count[over] += 1
            if own[key[over]]:
                stats[S_FROZEN] += 1
            todo[0] = over
            ntodo = 1
        elif kind == EV_WALL or kind == EV_BALL:
            rapid_a = t - tlast[a] < TC_TIME
            rapid_b = kind == EV_BALL and t - tlast[b] < TC_TIME
            if kind == EV_WALL:
                elastic, nx, ny, impulse = resolve_wall(B, W, G, a, b, t, params, tlast, normals,
                                                        cand, mine)
                if mine:
                    stats[S_WALL] += 1
                    log_contact(B, log, t, a, -1, b // 3, -nx, -ny, impulse)
                todo[0] = a
                ntodo = 1
            else:
                ntodo, elastic, nx, ny, impulse = resolve_pair(B, W, G, a, b, t, params, tlast, todo,
                                                               0, normals, cand, stack)
                if mine:
                    stats[S_BALL] += 1
                    log_contact(B, log, t, a, b, -1, nx, ny, impulse)
            if elastic:  # it lost no energy: no part of a collapse, however soon
                rapid_a = rapid_b = False
            # (by side, not by index: a wall event's b is a wall code, which
            # may equal a's working index - a's rapid contacts then counted
            # twice, and how they counted hung on the balls' order in memory)
            for side in range(2):
                if not (rapid_a if side == 0 else rapid_b):
                    continue
                x = a if side == 0 else b
                rapid[x] += 1
                if rapid[x] >= COLLAPSE_CONTACTS and not is_fixed(mode[x]):
                    partner = -1 if kind == EV_WALL else (b if side == 0 else a)
                    if not collapse(B, W, G, x, partner, rest_speed, normals, cand) and own[key[x]]:
                        stats[S_FROZEN] += 1
        else:  # EV_LEAVE: a sliding ball leaves its support, a rolling one stops
            sync(B, a, t)
            if mode[a] == ROLLING:
                stop_rolling(B, a)
            else:
                set_free(B, a, gx, gy, params[P_FRICTION])
            todo[0] = a
            ntodo = 1
        resume[0] = ntodo
        resume[1] = 0
        resume_t[0] = t


@kernel
def finish(B, params, t_end):
    """End of a part of a step: bring every ball to t_end (the part's dt, or
    where the budget stopped it), release frozen balls, guard the box.

    All balls go to one time: left at their own clocks, a ball that had no
    event lately would still be where another has since arrived."""
    acc, tloc, radius, mode, count = B[2], B[3], B[4], B[7], B[8]
    gx, gy = params[P_GX], params[P_GY]
    width, height = params[P_WIDTH], params[P_HEIGHT]
    for i in range(len(radius)):
        sync(B, i, t_end)
        tloc[i] = 0.0
        if mode[i] == FROZEN:
            mode[i] = FREE
            acc[i, 0] = gx
            acc[i, 1] = gy
            count[i] += 1
            if params[P_FRICTION] > 0.0:
                roll(B, i, params[P_FRICTION])
        clamp_ball_into_box(B, i, width, height, 0.0)  # (in this loop: one pass over the balls)


@kernel
def clamp_into_box(B, width, height):
    """Keep every centre at least a radius from the box sides (round-off guard;
    a ball wider than the box sits on its middle line, still along that axis).

    The velocity is kept: a ball put back on a side while moving out meets
    that side at once in the next step and bounces with its restitution.
    (Stopping it instead threw away the energy of every ball that round-off
    left 1e-13 px outside - at a million px/s, most of the scene's.)"""
    for i in range(len(B[4])):
        clamp_ball_into_box(B, i, width, height, 0.0)


@kernel
def clamp_ball_into_box(B, i, width, height, depth):
    """clamp_into_box for ball i alone; a centre outside goes depth px inside
    the line it crosses (less where the box is too narrow for that)."""
    pos, vel, radius, mode = B[0], B[1], B[4], B[7]
    if mode[i] == PINNED:
        return
    r = radius[i]
    for ax in range(2):
        size = width if ax == 0 else height
        lo = r
        hi = size - r
        if lo > hi:
            pos[i, ax] = 0.5 * size
            vel[i, ax] = 0.0
        elif pos[i, ax] < lo:
            pos[i, ax] = lo + min(depth, 0.5 * (hi - lo))
        elif pos[i, ax] > hi:
            pos[i, ax] = hi - min(depth, 0.5 * (hi - lo))


@allocating
def settle_overlaps(B, W, params):
    """Push overlapping balls apart (positions only, no velocity): after the
    user adds balls on top of others, edits the state, or shrinks the box.
    Iterated projection, heavier balls moving less, pinned not at all;
    coincident centres separate along a direction set by their indices; balls
    across an interior segment move off it."""
    pos, radius, inv_mass, mode = B[0], B[4], B[5], B[7]
    n = len(radius)
    width, height = params[P_WIDTH], params[P_HEIGHT]
    # Balls outside the box (it shrank) come back in, each at its own depth
    # up to a radius inside the side: clamped onto the side's line, a column
    # of them would lie exactly in line, pushed apart only along it, and
    # more than fit there would never spread into the box.
    for i in range(n):
        clamp_ball_into_box(B, i, width, height, radius[i] * ((0.6180339887498949 * (i + 1)) % 1.0))
    if n < 2:
        push_off_segments(B, W)
        clamp_into_box(B, width, height)
        return
    cand = np.empty(n, dtype=BALL_INT)
    watch, reach = np.zeros(n, dtype=np.int8), np.zeros(2 * WATCH_SLOTS)  # (nothing watched)
    for it in range(200):
        G = grid_new(B, width, height, 0.0, watch, reach)
        worst = 0.0
        for i in range(n):
            m = grid_candidates(G, B, i, 0.0, cand)
            for q in range(m):
                j = cand[q]
                if j < i:
                    continue
                wi = 0.0 if mode[i] == PINNED else inv_mass[i]
                wj = 0.0 if mode[j] == PINNED else inv_mass[j]
                if wi + wj == 0.0:
                    continue
                dx, dy = pos[j, 0] - pos[i, 0], pos[j, 1] - pos[i, 1]
                d = math.sqrt(dx * dx + dy * dy)
                R = radius[i] + radius[j]
                over = R - d
                if over <= 1e-12 * R:
                    continue
                worst = max(worst, over / min(radius[i], radius[j]))
                if d == 0.0:
                    ang = 2.399963 * (i + 1) + 0.7 * j  # golden-angle spread
                    dx, dy, d = math.cos(ang), math.sin(ang), 1.0
                # move a little past contact so round-off leaves no overlap
                push = over * (1.0 + 1e-9) + 1e-12 * R
                si = push * wi / (wi + wj)
                sj = push * wj / (wi + wj)
                pos[i, 0] -= si * dx / d
                pos[i, 1] -= si * dy / d
                pos[j, 0] += sj * dx / d
                pos[j, 1] += sj * dy / d
        worst = max(worst, push_off_segments(B, W))
        clamp_into_box(B, width, height)
        if worst <= 1e-9:
            break


@kernel
def push_off_segments(B, W):
    """Move each free ball that overlaps an interior segment off it, to the side
    its centre is on (a centre on the segment goes to the normal's side);
    returns the largest overlap / radius found."""
    pos, radius, mode = B[0], B[4], B[7]
    wp0, wp1, wn, wt, wlen, wc, we, wkind, wimpulse = W
    worst = 0.0
    for i in range(len(radius)):
        if mode[i] == PINNED:
            continue
        r = radius[i]
        for w in range(len(wc)):
            if wkind[w] != SEGMENT:
                continue
            cx, cy = segment_closest(W, w, pos[i, 0], pos[i, 1])
            dx = pos[i, 0] - cx
            dy = pos[i, 1] - cy
            d = math.sqrt(dx * dx + dy * dy)
            over = r - d
            if over <= 1e-12 * r:
                continue
            worst = max(worst, over / r)
            if d == 0.0:
                dx, dy, d = wn[w, 0], wn[w, 1], 1.0
            push = over * (1.0 + 1e-9) + 1e-12 * r
            pos[i, 0] += push * dx / d
            pos[i, 1] += push * dy / d
    return worst
