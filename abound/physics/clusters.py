"""Contact clusters: the balls whose contacts last, solved together at ticks.

A ball that lies on moving balls, or has moving balls lying on it (a layer
sliding down a slope, a funnel full of balls, a heap in a bin), is in mode
CLUSTER. Cluster balls fly free under gravity between ticks at most TICK
apart (equal divisions of a part of a step; shorter where heaps are deep:
ticks.py); at each tick their contacts with
one another and with fixed things are listed and one impulse per contact
keeps every gap open until the next tick (contact_solver.py says why and
how). Every impact stays an exact event: a free ball that hits a cluster
ball, fast or slow, is an ordinary event with its restitution.

What the events leave to the ticks. A cluster ball's velocity after a tick
keeps each listed contact open until the next tick; a contact not listed is
farther than CLUSTER_REACH x the smaller radius, and a cluster ball moves at
most half that far in a tick (a faster one is set free). So no event is
predicted between two cluster balls, or between a cluster ball and a wall or
a fixed ball it listed; only free balls' events involve cluster balls. An
event sets its cluster ball free: its new velocity was solved against no
neighbour, and the events watch all its contacts until the next tick, where
it joins again. A bound the solve leaves unmet (not converged) sets the ball
free too: exactness never rests on convergence.

Joining and leaving. A moving ball joins at a tick when it touches a listed
ball (within CLUSTER_SLOP of its radius, or closes that far within the tick)
slower than rest_speed, or when an event marked it (a slow contact between
moving balls, or a rattle: seed), unless it would cross more than half the
smallest radius in the tick (_too_fast: an early tick's island, and a
cluster ball struck fast just before a tick, are not yet held to that;
the solve's end sets them free). A cluster ball leaves when it is no longer
within LEAVE_GAP of anything (it flies free; a ball dropped alone on a
support slides or sleeps exactly, as the events run it, but one that leaves
a cluster along a wall or into a corner would start there in contact, where
round-off decides its first event), and falls asleep
where fixed contacts hold it (strictly: REST_COS), against the push of
every awake ball that lies on it too (rest.loads_held), or with its island (the
balls it touches) when the whole island has been slow for ISLAND_SLEEP_TIME
and leans on something fixed, each of its balls held where it lies
(_supported); either way only where it overlaps nothing beyond round-off
(rest.apart: woken, a sleeper flies free with the gaps it lies with).

Q, the ticks' scratch (cluster_scratch): (order (N,) the listed balls, rank
(N,) each ball's place in it or -1, touches (N,) int64 what each listed
ball touches (within LEAVE_GAP: 2 for a moving listed ball, 1 for a fixed
thing; 0: it leaves), C the contacts (contact_solver.solve_impulses),
gap (M,) px each contact's gap, counts (6,) int64 (contacts listed, balls
listed, balls put to sleep jammed, 1 during an early tick, and the step's
solves' updates and contacts: ticks.next_level), island (N,)
union-find, state (N,) uint8 each island's (_islands), under (N,) whether a
listed ball lies under something fixed, loose (N,) whether a listed ball's
bounds were not all met, seed (N,) balls to join at the next tick, rmin (2,)
px the smallest radius of all and the time of the last early tick (s), rejoined (N,) s the time a ball last
rejoined since the last tick, or -1, the solve's scratch
(contact_solver.solver_scratch), joined_by (N,) int64 for each listed ball
the place of the one whose contacts it joined by, or -1: a pair whose later
ball joined after the earlier one's contacts were listed, by a third, has
its contact listed from the later ball's side), before (N, 2) px/s each
listed ball's velocity before the solve, unsettled (N,) bool
(_take_back) and ahead (N, 2) px/s^2 what each cluster ball's
velocity holds for each second left of its tick (see take_ahead), sets
(N, SET_FIELDS) what _take_back sums over each set (GAIN ... RESTLESS),
jammed (N,) bool the listed balls a jam puts to sleep, and the grid of the
places a large tick lists by (tick_grid.py). Each ball's last impulses,
the next solve's first guess, are the state's (world.py: warm_key,
warm_lam; _keep_impulses).
"""
import math

import numpy as np

from ._jit import allocating, kernel
from .kernels import TOUCH_REL, V_EPS
from .constants import (
    CLUSTER, CLUSTER_REACH, CLUSTER_SLOP, EV_TICK, FROZEN, ISLAND_SLEEP_TIME, LEAVE_GAP,
    P_CLUSTERS, P_FRICTION, P_GX, P_GY, P_REST_SPEED, P_TICK, P_WARM, SLEEP_TOUCH_CLUSTER, TICK,
)
from .contact_solver import (
    SOLVER_BAND, TARGET_GAP, normal_speed, off_band, project_one, solve_budget, solve_impulses, solver_scratch,
    speculative_min_speed, wedged,
)
from .motion import gravity_on, is_fixed, motion_at, set_free, sync
from .grid import _cell_span, grid_cell_balls
from .tick_grid import TICK_GRID_SHARE, tick_grid_build, tick_grid_near, tick_grid_scratch
from .queue import heap_push
from .rest import fall_asleep, far_from_wall, held, try_sleep, wall_gap

# x radius / h (px/s): the solve stops when every contact's bound is met
# and none pushes more than SOLVER_BAND (2) SOLVER_TOL beyond it
# (contact_solver): a heap's balls may hover up to 1e-3 r apart while it is
# awake. 2.5e-4 instead of 1.25e-4 cut the rain's updates from 12 to 7 a
# contact a tick and its frames, the hourglass's and the 10,000-ball Galton
# board's by a third (BENCHMARKS.md). 5e-4 with a band of 2 instead of
# 2.5e-4 with 4 (the same band, 1e-3 r / h, each update aimed at its middle
# rather than a quarter up) made the pouring 10,000-ball board's frames
# 0.66 of their time (paired in turns from its state at 0.8 s); 5e-4 with
# 4 (0.55) doubled the band, and how high a heap hovers: a cluster ball's
# energy then rose by up to m g 2e-3 r in a step without an event. No
# overlap comes of it (the bound below is met exactly, whatever the
# tolerance); a bound
# left unmet by more than UNMET after it (the solve's budget ran out) sets
# its balls free (their contacts then are the events'). UNMET x radius is
# also the most a cluster contact can overlap by the next tick, and the
# next tick keeps it from deepening. ROUND_OFF: what an exact projection
# (rejoin's, a tick's lone balls': _solve_lone) may miss a bound by, and so
# the most _solve_lone lowers one
SOLVER_TOL = 5e-4
# x radius (px): the most the tolerance may throw a ball up by. A heap's
# contacts push apart at up to SOLVER_BAND tol, and a ball thrown up at
# that rises (SOLVER_BAND tol)^2 / 2|g|: where gravity is weak or ticks
# short, more than the hover the band allows for positions. At 5 px/s^2
# (tol 1.5 px/s) a 120-ball pile's awake balls still moved at a median
# 1 px/s after 20 s, its energy rising by up to 2e-3 of sum(m |g| r) in a
# step (with the bound: at rest, 2.5e-5); two balls pressed into a wall at
# 1 px/s^2 flew apart at a tol of 0.25 px/s, the energy up 34 times
# m |g| 1e-3 r a ball. So tol is at most what throws a ball no higher than
# SOLVER_TOL_RISE x rmin
SOLVER_TOL_RISE = 1e-3
# (1e-5 let a candidate on one bound's line close on another at 0.03 px/s:
# a ball rejoining on the floor beside a neighbour 5e-4 r higher sank 1.5e-8 r
# into it by its next event, which set them free so)
ROUND_OFF = 1e-9
UNMET = 5e-4
PUSH_OUT = 0.2
# x a set's allowance (_take_back): the most a solve may raise a set's kinetic
# energy by before it is taken back. Measured per set (x the allowance), in
# solves that did not run out of budget: at most 0.84 in the first 5 s of
# the 350-ball Galton board but for one set of 14 (52: a row between
# sleepers, its impulses 49 times its weight), 0.78 in the first 4 s of the
# default scene; 20 to 374 where the peg board's rows threw balls up
ENERGY_GUARD = 4.0
# x a set's weight (_take_back): impulses larger than this in a set the solve
# did not settle say that fixed things hold it rigidly (a flat arch: a wedge
# of angle a takes m |g| h / (2 sin a), 100 times the weight below 0.3 degrees)
JAM_IMPULSE = 100.0
# _take_back's sums over a set of listed balls (Q[18], at its root's place):
# kinetic energy the solve gave it, its allowance, its largest impulse, its
# weight, 1 where it touches something fixed, 1 where it may not sleep (a
# ball not slow, or an overlap)
GAIN, ALLOWANCE, IMPULSE, WEIGHT, FIXED, RESTLESS = range(6)
SET_FIELDS = 6
# x: the share of its last impulse a contact between two slow cluster balls
# (sup_r > 0; or one and a fixed thing) starts its solve from. The solve
# takes any impulses that meet the bounds, each contact pushing up to
# SOLVER_BAND tol beyond its own; started from the last tick's in full, a
# resting heap keeps that push (a tick's correction is applied again the
# next, the solve stops inside the band), and down a column of contacts
# the pushes add up: an 800-ball heap in a V-shaped cup, about 25 balls
# deep, jittered at 3.6 px/s (median) and up to 40 px/s at its top for
# ever, never slow for ISLAND_SLEEP_TIME, 25 ms a step. Starting from 0.7 of
# it, the same heap's balls in the offline ticks kept below 5 px/s and
# the solve took 11 updates a contact instead of 7, until it slept.
# Flowing contacts (a ball faster than twice rest_speed: sup_r 0) start
# from all of it. (WARM_SETTLING, constants.py: at ticks of TICK; shorter
# ones start from params[P_WARM], ticks.warm_share.)
ISLAND_AWAKE, ISLAND_ASLEEP, ISLAND_FIXED = 0, 1, 2  # _islands' states (bit 1: touches a fixed thing)
STRUCK, WEDGED, REJOINED = -1, 0, 1  # what rejoin did


@kernel
def clusters_wanted(B, params):
    """Whether a step runs ticks: when the simulation asks for them
    (P_CLUSTERS), under gravity, with a rest speed (only
    then do contacts last; a gas of elastic balls, rest speed 0, never
    runs one), and with a ball that moves. A split step (split.py) runs
    none and is chosen only when this is False: both then do the same."""
    if params[P_CLUSTERS] == 0.0 or params[P_REST_SPEED] <= 0.0 or (params[P_GX] == 0.0 and params[P_GY] == 0.0):
        return False
    mode = B[7]
    for i in range(len(mode)):
        if not is_fixed(mode[i]):
            return True
    return False


@allocating
def cluster_scratch(B, on):
    """Q (see the module docstring) for the balls B; empty unless on. Room for
    16 contacts a ball (a disc touches at most 6 of its size, and walls;
    the reach lists a few more): more cannot be listed, and a ball whose
    contact found no room is set free."""
    n = len(B[4]) if on else 0
    m = 16 * n + 16 if on else 0
    rmin = np.array([np.inf, -1.0])  # (and the time of the last early tick: early_tick)
    if n:
        rmin[0] = np.min(B[4])
    return (np.empty(n, dtype=np.int64), np.full(n, -1, dtype=np.int64), np.zeros(n, dtype=np.int64),
            (np.empty(m, dtype=np.int64), np.empty(m, dtype=np.int64), np.empty((m, 2)),
             np.empty(m), np.empty(m), np.empty(m)),
            np.empty(m), np.zeros(6, dtype=np.int64), np.empty(n, dtype=np.int64),
            np.empty(n, dtype=np.uint8), np.zeros(n, dtype=np.bool_), np.zeros(n, dtype=np.bool_),
            np.zeros(n, dtype=np.bool_), rmin, np.full(n, -1.0), solver_scratch(n, m),
            np.empty(n, dtype=np.int64), np.empty((n, 2)), np.zeros(n, dtype=np.bool_), np.zeros((n, 2)),
            np.zeros((n, SET_FIELDS)), np.zeros(n, dtype=np.bool_), tick_grid_scratch(B, on))


@kernel
def ticks_per_part(dt, params):
    """How many equal sub-steps of at most params[P_TICK] s (ticks.py) a
    part of dt s is cut into."""
    return max(1, int(math.ceil(dt / params[P_TICK] - 1e-9)))


@kernel
def until_next_tick(t, dt, params):
    """s from time t of a part of dt s to its next tick (or its end)."""
    K = ticks_per_part(dt, params)
    k = math.floor(t * K / dt) + 1.0
    t_next = min(dt, k * dt / K)
    if t_next <= t:  # (t is tick k's own instant, t K / dt rounded below k: the tick after it)
        t_next = min(dt, (k + 1.0) * dt / K)
    return t_next - t


@kernel
def push_tick(H, dt, k, params):
    """Queue tick k of a part of dt (at k dt / ticks_per_part; none past the
    part: the next part starts with one). Each tick queues the next when it
    is popped, so the queue holds one at a time, however long the step. A
    tick's tie key is -1: it comes first among the events of its time."""
    K = ticks_per_part(dt, params)
    if k < K:
        heap_push(H, k * dt / K, 0, EV_TICK, k, 0, 0, -1, k)


@kernel
def _join(B, Q, i, t, h, gx, gy, by):
    """List moving ball i (synced to t) for this tick, in mode CLUSTER: it
    takes the tick's gravity as a kick now, g h, and moves in a straight
    line until the next tick (semi-implicit Euler: a ball at rest on
    others then stays at rest, where a parabola between ticks would hop).
    A cluster ball has no support, so its sup_r holds how long it has been
    slow (s, see ISLAND_SLEEP_TIME): 0 when it joins; and its sup_n the
    velocity rejoin held back (given back here). by: the place in the list
    of the listed ball whose contacts it joins by, or -1."""
    vel, acc = B[1], B[2]
    order, rank, touches, counts = Q[0], Q[1], Q[2], Q[5]
    sync(B, i, t)
    ax, ay = gravity_on(B, i, gx, gy)  # (by is taken: the joining ball's place)
    if B[7][i] != CLUSTER or counts[3] == 0:
        Q[17][i, 0] = ax  # (an early tick's cluster ball still holds the rest of its last tick: early_tick)
        Q[17][i, 1] = ay
    if B[7][i] != CLUSTER:
        B[13][i] = 0.0
        B[11][i, 0] = 0.0
        B[11][i, 1] = 0.0
        for s in range(B[17].shape[1]):
            B[17][i, s] = -1
        set_free(B, i, gx, gy, 0.0)
        B[7][i] = CLUSTER
    else:
        _give_back(B, i)
    vel[i, 0] += ax * h
    vel[i, 1] += ay * h
    acc[i, 0] = 0.0
    acc[i, 1] = 0.0
    q = counts[1]
    rank[i] = q
    order[q] = i
    touches[q] = 0
    Q[14][q] = by
    Q[8][q] = False  # under
    Q[9][q] = False  # loose
    counts[1] = q + 1


@kernel
def _solve_lone(vel, Q, nc, slack):
    """Each listed ball of the tick that touches only fixed things (no contact
    with another listed ball) takes its exact nearest velocity (project_one,
    as rejoin's), its contacts' impulses 0 (no warm start) and their bounds
    lowered to what it meets where round-off left it a hair short (within
    slack px/s); the Gauss-Seidel that follows finds them met and leaves
    them. A ball no velocity frees (wedged) is left to it, as before.
    (Gauss-Seidel ran out of budget on a ball pressed level between two
    sleepers on the floor - bounds from opposite sides a hair apart - so
    the solve set it loose at every tick, it met the floor at once,
    rejoined with the same push held back, and did so for ever: 32
    collapses a step, every tick at the shortest.) A fixed
    contact is listed while its own ball is, so a ball's fixed contacts are
    one run of the list. Uses Q[6] (the islands' parents, set afresh after
    the solve) as scratch."""
    rank, counts, mark = Q[1], Q[5], Q[6]
    ci, cj, cn, v_min, w_j, lam = Q[3]
    for q in range(counts[1]):
        mark[q] = 0
    for c in range(nc):
        if w_j[c] > 0.0:
            mark[rank[ci[c]]] = 1
            mark[rank[cj[c]]] = 1
    c = 0
    while c < nc:
        i = ci[c]
        e = c + 1
        while e < nc and ci[e] == i:
            e += 1
        if mark[rank[i]] == 0:
            vx, vy, met = project_one(vel[i, 0], vel[i, 1], cn, v_min, c, e, slack)
            if met:
                vel[i, 0] = vx
                vel[i, 1] = vy
                for d in range(c, e):
                    lam[d] = 0.0
                    # a corner of two bounds may miss one by round-off
                    # (within slack): Gauss-Seidel would take that for
                    # unmet and push the two bounds against each other
                    # until its budget ran out. The bound is what was met,
                    # computed as Gauss-Seidel computes a contact's normal
                    # speed (the same products, no fused multiply-add), so
                    # that it finds it met to the bit
                    v_min[d] = min(v_min[d], cn[d, 0] * vx + cn[d, 1] * vy)
        c = e


@kernel
def solve_tick(vel, inv_mass, Q, nc, tol, slack):
    """The tick's impulses for its nc listed contacts (Q[3]): each ball that
    touches only fixed things exactly (_solve_lone, slack px/s its round-off),
    then the rest by Gauss-Seidel to tol px/s (contact_solver.solve_impulses,
    whose count of updates it returns: < 0 where it ran out of budget)."""
    _solve_lone(vel, Q, nc, slack)
    return solve_impulses(vel, inv_mass, Q[3], nc, tol, Q[13])


@kernel
def _give_back(B, i):
    """Give cluster ball i the velocity rejoin held back since the last tick
    (sup_n, px/s): the tick's solve then shares it with its neighbours, as
    their masses say."""
    B[1][i, 0] += B[11][i, 0]
    B[1][i, 1] += B[11][i, 1]
    B[11][i, 0] = 0.0
    B[11][i, 1] = 0.0


@kernel
def _leave(B, i, h, gx, gy):
    """Listed ball i leaves the clusters before its tick's solve: it gives
    back the tick's kick and flies free on its parabola."""
    bx, by = gravity_on(B, i, gx, gy)
    B[1][i, 0] -= bx * h
    B[1][i, 1] -= by * h
    set_free(B, i, gx, gy, 0.0)


@kernel
def _target(gap, target):
    """The gap (px) a contact of gap px now must keep at the end of the tick:
    an open one closes to target at most, never opens wider; an overlap
    (what an unconverged solve left) opens by PUSH_OUT of itself each tick,
    slowly enough to add next to no energy, with a moving ball or a fixed
    thing alike. (Letting one with a fixed thing only deepen no further, so
    that a ball wedged between fixed things is not asked to open them all,
    let a cluster ball resting on a sleeper sink by what each solve left
    unmet: 1.4e-3 r in 9 s of the Galton board, against none above 1e-3 r
    in 30 s this way.)"""
    if gap >= 0.0:
        return min(gap, target)
    return (1.0 - PUSH_OUT) * gap


@kernel
def _drop_leavers(B, Q):
    """Drop from the tick's contacts those of the listed balls that left
    (touches 0): the events watch them now."""
    rank, touches = Q[1], Q[2]
    ci, cj, cn, v_min, w_j, lam = Q[3]
    gap, counts = Q[4], Q[5]
    k = 0
    for c in range(counts[0]):
        if touches[rank[ci[c]]] == 0 or (w_j[c] > 0.0 and touches[rank[cj[c]]] == 0):
            continue
        ci[k], cj[k], v_min[k], w_j[k], lam[k], gap[k] = ci[c], cj[c], v_min[c], w_j[c], lam[c], gap[c]
        cn[k, 0], cn[k, 1] = cn[c, 0], cn[c, 1]
        k += 1
    counts[0] = k


@kernel
def _add_contact(B, Q, i, j, nx, ny, gap, vn, an, h, target, movable, warm):
    """List the contact of ball i with j (a ball, or -2 - w for wall w): its
    normal n into i, gap px, relative normal velocity vn and acceleration
    an; movable when j moves with the impulses; warm: the share of its last
    impulse it starts from between two slow balls (params[P_WARM]). No room: i is loose."""
    ci, cj, cn, v_min, w_j, lam = Q[3]
    counts = Q[5]
    c = counts[0]
    if c >= len(ci):
        Q[9][Q[1][i]] = True  # loose
        return
    ci[c] = i
    cj[c] = j
    cn[c, 0] = nx
    cn[c, 1] = ny
    Q[4][c] = gap
    v_min[c] = speculative_min_speed(gap, an, h, _target(gap, target))
    w_j[c] = 1.0 if movable else 0.0
    lam[c] = 0.0 if counts[3] else _warm(B, i, j)
    if B[13][i] > 0.0 and (not movable or B[13][j] > 0.0):
        lam[c] *= warm  # (both slow: a heap coming to rest, see WARM_SETTLING: params[P_WARM])
    counts[0] = c + 1


@kernel
def _warm(B, i, j):
    """The impulse the contact of balls i and j (j < 0: a wall, -2 - w) took
    at the last tick (mass px/s), as cluster ball i kept it, or 0. Kept by
    public index (P[14]): they outlast the step's working copy."""
    pub, key, lam = B[14], B[17], B[18]
    kj = pub[j] if j >= 0 else j
    for s in range(key.shape[1]):
        if key[i, s] == kj:
            return lam[i, s]
    return 0.0


@kernel
def _keep(B, i, kj, lam_c):
    """Keep impulse lam_c of ball i's contact with kj (a public index, or a wall's -2 - w)."""
    key, lam = B[17], B[18]
    for s in range(key.shape[1]):
        if key[i, s] == -1:
            key[i, s] = kj
            lam[i, s] = lam_c
            return


@kernel
def _keep_impulses(B, Q):
    """Keep each listed contact's impulse for the next tick's warm start, in
    the slots of both its balls when both move (a contact listed again, from
    either side, starts from it: a heap's impulses change little from tick
    to tick, and Gauss-Seidel gains on them from tick to tick and step to
    step instead of starting over). Contacts that took none are not kept (0
    is the guess for a contact not found); a ball's slots are emptied when
    it joins (_join)."""
    order, pub, key = Q[0], B[14], B[17]
    ci, cj, w_j, slam = Q[3][0], Q[3][1], Q[3][4], Q[3][5]
    for q in range(Q[5][1]):
        for s in range(key.shape[1]):
            key[order[q], s] = -1
    for c in range(Q[5][0]):
        if slam[c] == 0.0:
            continue
        i, j = ci[c], cj[c]
        _keep(B, i, pub[j] if j >= 0 else j, slam[c])
        if w_j[c] > 0.0:
            _keep(B, j, pub[i], slam[c])


@kernel
def _list_walls(B, W, Q, i, h, warm):
    """List ball i's contacts with the walls (faces and end points) within reach."""
    pos, vel, radius = B[0], B[1], B[4]
    wc = W[5]
    r = radius[i]
    px, py = pos[i, 0], pos[i, 1]
    for w in range(len(wc)):
        if far_from_wall(W, w, px, py, r + CLUSTER_REACH * r):
            continue
        gap, nx, ny = wall_gap(W, w, px, py, r)
        if gap > CLUSTER_REACH * r:
            continue
        _add_contact(B, Q, i, -2 - w, nx, ny, gap, vel[i, 0] * nx + vel[i, 1] * ny, 0.0, h,
                     TARGET_GAP * r, False, warm)
        if gap <= LEAVE_GAP * r:
            Q[2][Q[1][i]] += 1  # touches


@kernel
def _within_reach(B, px, py, r, j, t):
    """Ball j at time t seen from a ball of radius r px centred at (px, py):
    (gap px, the unit normal from j to it, j's velocity px/s, the smaller
    radius px); an infinite gap where j lies beyond CLUSTER_REACH x the
    smaller radius or on the centre (no normal)."""
    pjx, pjy, vjx, vjy, ajx, ajy = motion_at(B, j, t)
    dx, dy = px - pjx, py - pjy
    d = math.sqrt(dx * dx + dy * dy)
    small = min(r, B[4][j])
    gap = d - r - B[4][j]
    if d == 0.0 or gap > CLUSTER_REACH * small:
        return math.inf, 0.0, 0.0, vjx, vjy, small
    return gap, dx / d, dy / d, vjx, vjy, small


@kernel
def _near(B, G, i, cand):
    """Write into cand the balls whose event-grid cells meet ball i's reach
    (its radius plus CLUSTER_REACH of it, around where it is now); returns
    their count. (A tick that lists many balls looks in tick_grid.py's
    grid of the balls' places instead.)"""
    pos, r = B[0], B[4][i]
    pad = r + CLUSTER_REACH * r
    x0, y0, x1, y1 = pos[i, 0] - pad, pos[i, 1] - pad, pos[i, 0] + pad, pos[i, 1] + pad
    return grid_cell_balls(G, i, _cell_span(G, x0, y0, x1, y1), cand, (x0, y0, x1, y1), False)


@kernel
def _list_balls(B, G, Q, i, t, h, gx, gy, rest_speed, cand, warm):
    """List ball i's contacts with other balls within reach; moving balls
    not yet listed that touch it slowly (or close to touching within h)
    join the list."""
    pos, vel, radius, mode = B[0], B[1], B[4], B[7]
    rank, touches = Q[1], Q[2]
    r = radius[i]
    m = tick_grid_near(Q[20], B, i, cand) if Q[20][5][2] else -1
    if m < 0:
        m = _near(B, G, i, cand)
    for q in range(m):
        j = cand[q]
        if rank[j] >= 0 and rank[j] < rank[i] and Q[14][rank[i]] <= rank[j]:
            continue  # listed from j's side (i was listed when j's contacts were, or by them)
        gap, nx, ny, vjx, vjy, small = _within_reach(B, pos[i, 0], pos[i, 1], r, j, t)
        if gap == math.inf:
            continue
        fixed = is_fixed(mode[j])
        vn = (vel[i, 0] - vjx) * nx + (vel[i, 1] - vjy) * ny
        if not fixed and rank[j] < 0:
            if Q[5][3]:
                continue  # (an early tick lists its island alone: the others keep the last tick's paths)
            # a moving ball not listed joins if this is a lasting contact
            if abs(vn) >= rest_speed or gap > CLUSTER_SLOP * small + max(0.0, -vn) * h:
                continue  # (else it stays the events')
            if _too_fast(vel, j, h, Q[11][0]):
                continue  # (sliding past: its other contacts would be impacts, see tick)
            _join(B, Q, j, t, h, gx, gy, rank[i])
            vn = (vel[i, 0] - vel[j, 0]) * nx + (vel[i, 1] - vel[j, 1]) * ny
        # (between ticks a cluster ball moves in a straight line, a fixed one not at all)
        _add_contact(B, Q, i, j, nx, ny, gap, vn, 0.0, h, TARGET_GAP * small, not fixed, warm)
        if gap <= LEAVE_GAP * small:
            touches[rank[i]] += 1 if fixed else 2
            if not fixed:
                touches[rank[j]] += 2


@kernel
def solver_tol(rmin, h, gx, gy):
    """The tick's solve tolerance (px/s) for a tick of h s, rmin the smallest
    radius (px) and gravity (gx, gy) px/s^2: SOLVER_TOL x rmin / h, at most
    the speed that, pushed SOLVER_BAND times over, throws a ball up by
    SOLVER_TOL_RISE x rmin."""
    rise = math.sqrt(2.0 * math.sqrt(gx * gx + gy * gy) * SOLVER_TOL_RISE * rmin) / SOLVER_BAND
    return min(SOLVER_TOL * rmin / h, rise)


@kernel
def _too_fast(vel, i, h, rmin):
    """Whether ball i moves too fast to join a cluster for a tick of h s: it
    would cross more than half CLUSTER_REACH x rmin (the smallest radius, px)
    in it, as no cluster ball may (tick sets such a one free after the solve).
    Its contacts would close faster than lasting ones do, and the solve,
    which keeps gaps open and bounces nothing, would take them as perfectly
    inelastic impacts: restitution is the events'."""
    return math.sqrt(vel[i, 0] * vel[i, 0] + vel[i, 1] * vel[i, 1]) * h > 0.5 * CLUSTER_REACH * rmin


@kernel
def tick(B, W, G, Q, t, h, params, todo, ntodo, normals, cand):
    """Solve the clusters' contacts at time t for a sub-step of h s: list
    the cluster balls and the marked ones (seed), and the moving balls that
    touch them lastingly, transitively; find the impulses; then each listed
    ball leaves, falls asleep, is set free or stays (see the module
    docstring). Appends every listed ball to todo (to predict again);
    returns the new count."""
    vel, inv_mass, mode, count = B[1], B[5], B[7], B[8]
    order, rank, touches = Q[0], Q[1], Q[2]
    counts, under, loose, seed = Q[5], Q[8], Q[9], Q[10]
    gx, gy = params[P_GX], params[P_GY]
    rest_speed = max(params[P_REST_SPEED], V_EPS)
    rmin = Q[11][0]
    counts[0] = 0
    counts[1] = 0
    early = counts[3] != 0  # (early_tick: only the island it gathered, marked rank -2)
    for i in range(len(mode)):
        if early:
            if rank[i] == -2:
                rank[i] = -1
                Q[12][i] = -1.0
                seed[i] = False
                _join(B, Q, i, t, h, gx, gy, -1)
            continue
        Q[12][i] = -1.0  # (rejoin: once an instant)
        # (a seed frozen by a rattle, rest.collapse, joins too)
        if mode[i] == CLUSTER and B[13][i] > 0.0 and vel[i, 0] * vel[i, 0] + vel[i, 1] * vel[i, 1] < rest_speed * rest_speed:
            # slow, and held by fixed things: it sleeps before the solve,
            # which then holds its neighbours off it. Held against the push
            # of every awake ball of its island (within LEAVE_GAP) that lies
            # on it as well (rest.loads_held): a bottom ball of a pyramid of
            # three on the floor slept so, pushed sideways by the top one,
            # which then slept in the wedge of two sleepers, the pyramid
            # standing for ever. Such a ball sleeps with its island instead
            # (_islands), or alone once the balls on it are asleep
            sync(B, i, t)
            if try_sleep(B, W, G, i, gx, gy, normals, cand, SLEEP_TOUCH_CLUSTER, LEAVE_GAP):
                todo[ntodo] = i
                ntodo += 1
                seed[i] = False
                continue
        if seed[i] and mode[i] != CLUSTER and _too_fast(vel, i, h, rmin):
            # marked by a contact that was no lasting one after all (a light
            # ball rattling between a wall and a heavy one at 1e6 px/s): the
            # solve would stop it as a perfectly inelastic impact. The events keep it
            if mode[i] == FROZEN:
                sync(B, i, t)
                set_free(B, i, gx, gy, params[P_FRICTION])
                todo[ntodo] = i
                ntodo += 1
        elif mode[i] == CLUSTER or (seed[i] and (mode[i] == FROZEN or not is_fixed(mode[i]))):
            _join(B, Q, i, t, h, gx, gy, -1)
        seed[i] = False
    if counts[1] == 0:
        return ntodo
    Q[20][5][2] = 0  # (an early tick lists its island by the event grid: balls have moved since the last tick)
    if not early and counts[1] * TICK_GRID_SHARE >= len(mode):
        tick_grid_build(Q[20], B, t, order, counts[1])
    q = 0
    warm = params[P_WARM]
    while q < counts[1]:  # (the list grows as moving balls join)
        i = order[q]
        _list_walls(B, W, Q, i, h, warm)
        _list_balls(B, G, Q, i, t, h, gx, gy, rest_speed, cand, warm)
        q += 1
    for q in range(counts[1]):
        if touches[q] == 0:
            _leave(B, order[q], h, gx, gy)  # it lands on what it touched, if anything, as a lone ball
    _drop_leavers(B, Q)
    C = Q[3]
    nc = counts[0]
    for q in range(counts[1]):
        Q[15][q, 0] = vel[order[q], 0]
        Q[15][q, 1] = vel[order[q], 1]
    tol = solver_tol(rmin, h, gx, gy)
    updates = solve_tick(vel, inv_mass, Q, nc, tol, ROUND_OFF * rmin / h)
    stuck = updates < 0
    counts[4] += solve_budget(nc) if stuck else updates  # (ticks.next_level)
    counts[5] += nc
    ci, cj, cn, v_min, w_j = C[0], C[1], C[2], C[3], C[4]
    for c in range(nc):
        if v_min[c] - normal_speed(vel, C, c) > UNMET * rmin / h:
            loose[rank[ci[c]]] = True
            if w_j[c] > 0.0:
                loose[rank[cj[c]]] = True
        # not converged: the slow balls of the set that lie under something
        # fixed are jammed (see contact_solver.py): they sleep where they are
        if stuck and w_j[c] == 0.0 and _pressed_into(B, ci[c], cn[c, 0], cn[c, 1], gx, gy):
            under[rank[ci[c]]] = True
    _take_back(B, Q, tol, stuck, h, gx, gy, rest_speed)
    if not early:
        _keep_impulses(B, Q)
    island, state, jammed = Q[6], Q[7], Q[19]
    _islands(B, Q, h, rest_speed, gx, gy, normals)
    for q in range(counts[1]):
        i = order[q]
        rank[i] = -1
        todo[ntodo] = i
        ntodo += 1
        v2 = vel[i, 0] * vel[i, 0] + vel[i, 1] * vel[i, 1]
        if jammed[q] or state[_root(island, q)] == ISLAND_ASLEEP:
            counts[2] += 1 if jammed[q] else 0  # (a flat arch, held where it lies: _take_back)
            fall_asleep(B, G, i)
            continue
        if under[q] and v2 < rest_speed * rest_speed and try_sleep(B, W, G, i, gx, gy, normals, cand,
                                                                     SLEEP_TOUCH_CLUSTER, LEAVE_GAP):
            counts[2] += 1  # pressed up against a fixed thing above it, and held: it stays where it is
            continue
        if touches[q] == 0:
            continue  # (it has left: _leave)
        if loose[q] or _too_fast(vel, i, h, rmin):  # (see the module docstring)
            # the events watch its contacts until the next tick, on the
            # parabola that ends the tick at the solved velocity (the kick
            # kept as well would be speed from nowhere)
            _leave(B, i, h, gx, gy)
            continue
        Q[17][i, 0] += (vel[i, 0] - Q[15][q, 0]) / h  # (the kick, and now what the solve gave it)
        Q[17][i, 1] += (vel[i, 1] - Q[15][q, 1]) / h
        count[i] += 1
    return ntodo


@kernel
def take_ahead(B, Q, i, t, dt, params):
    """Cluster ball i is about to meet an event at t: sync it, and take from its
    velocity what it holds for the rest of its tick, so that the event
    meets the velocity it has at t. rejoin gives it back, or, where the ball
    stays free, its parabola takes gravity over that time.

    From its tick on, a cluster ball's velocity holds the whole tick's
    change: gravity's kick and what its contacts' impulses gave it
    (semi-implicit Euler, _join), ahead (Q[17], px/s^2) for each second of
    the tick. Met with the rest of that in it, an elastic event handed the
    rest to the free ball that struck it, and the ball, set free, gave it
    back from its new velocity: the energy changed by m k.(u - w) (k the
    rest, u and w its velocities after and before; a V of 400 elastic balls
    rose 2.3e5 in one step where a ball struck one of two cluster balls
    falling together). Taking back the kick alone would give a ball its
    support holds (kick and reaction about 0) g h upward. What this costs:
    a struck ball that stays free leaves out its share of its contacts'
    impulses for the rest of the tick, which its neighbours took in full at
    the tick, so momentum is off by up to m (ahead - g) h (about m |g| TICK
    for a ball its neighbours held up) - a discretisation error of the
    tick, where the energy error it replaces was the impact's."""
    sync(B, i, t)
    h = until_next_tick(t, dt, params)
    B[1][i, 0] -= Q[17][i, 0] * h
    B[1][i, 1] -= Q[17][i, 1] * h


@kernel
def let_go(B, Q, i, t, dt, params):
    """Cluster ball i meets an event, or leaves its cluster, at t with what it
    has then: its velocity at t (take_ahead) and the push it held back
    (_give_back), which energy() counts as its own."""
    take_ahead(B, Q, i, t, dt, params)
    _give_back(B, i)


@kernel
def release_closing(B, G, Q, y, t, dt, params, cand, todo, ntodo):
    """Ball y (synced to t) has just become fixed between two ticks (it waits
    for the tick, FROZEN, or fell asleep): set free each cluster ball whose
    straight path until the next tick would run into it, and append it to
    todo (to predict again); returns the new count. Those balls' velocities
    were solved with y moving, or not listed against it at all, and no event
    watches a cluster ball against a fixed one: left in its cluster, a ball
    solved to follow y at 66 px/s ran 2.9e-3 r into it when y stopped, and
    the pair, both set free later, lay overlapping (the heavy balls on light
    ones of tests/physics/test_robust_scenes.py, seed 1, stepped with a
    trial rejoin). Set free, its contact with y is an ordinary event, with
    its restitution."""
    pos, vel, radius, mode, count = B[0], B[1], B[4], B[7], B[8]
    h = until_next_tick(t, dt, params)
    m = _near(B, G, y, cand)
    for q in range(m):
        j = cand[q]
        if j == y or mode[j] != CLUSTER or ntodo >= len(todo):
            continue
        # (a cluster ball moves in a straight line until the next tick: the
        # gap is least where it passes closest to y, or at the tick)
        pjx, pjy, vjx, vjy, _, _ = motion_at(B, j, t)
        dx, dy = pjx - pos[y, 0], pjy - pos[y, 1]
        closing = dx * vjx + dy * vjy
        if closing >= 0.0:
            continue
        s = min(h, -closing / (vjx * vjx + vjy * vjy))
        ex, ey = dx + vjx * s, dy + vjy * s
        if ex * ex + ey * ey >= (radius[y] + radius[j]) * (radius[y] + radius[j]):
            continue
        let_go(B, Q, j, t, dt, params)
        set_free(B, j, params[P_GX], params[P_GY], 0.0)
        count[j] += 1
        todo[ntodo] = j
        ntodo += 1
    return ntodo


@kernel
def _take_back(B, Q, tol, stuck, h, gx, gy, rest_speed):
    """After a solve: every set of listed balls joined by contacts between
    moving balls that the solve did not settle takes back the velocities it
    had before the solve, its contacts' impulses are dropped, and its balls
    are loose: they leave the clusters, and the exact events take their
    contacts (exactness never rests on convergence; energy neither). A set
    is unsettled when

    * the solve ran out of budget (stuck) and one of its contacts is off its
      band (its bound unmet, or pushing too hard). What such a solve leaves
      is not a velocity anything asked for: in a wedge of nearly level
      contacts between fixed things (two balls in a row between a sleeper
      and the box's side, on the floor) its impulses grew to 1e7 mass px/s,
      and their vertical parts of 1e-3 threw a ball up at 273 px/s, the
      energy up by a tenth in a step (a new user's V of 60 balls);
    * or its kinetic energy rose by more than ENERGY_GUARD times its
      allowance, sum(m (|g| h + SOLVER_BAND tol)^2 / 2): as much as each of
      its balls, at rest, would gain from being lifted off a support at the
      top of the band. The solve's own bound on the gain, sum(lam (v_min +
      tol)) (contact_solver.py), grows with the impulses, and in a row of
      balls between two sleepers they are nearly free: pushes along the row
      balance, whatever their size. A solve that held a ball up by such a row
      (1e6 mass px/s along normals 0.002 off the level) left those impulses
      to the next tick's warm start, which met normals turned by a few
      thousandths and threw the row's balls up at 60 px/s: the energy rose
      by five hover bands in a step with no event (a new user's peg board,
      heap balls struck by a heavy ball).

    A set the fixed things hold rigidly is jammed, not loose: where its
    largest impulse is more than JAM_IMPULSE times its weight, sum(m (|g| h +
    |v|)) (the most a heap's contacts take: a column's weight, or stopping
    it), every ball of it is slower than rest_speed, it touches something
    fixed and overlaps nothing beyond round-off, its balls fall asleep where
    they lie. Such a set is a flat arch: a chain of balls between two
    sleepers a hair too long to lie straight (what it would settle into is
    round-off away). Set loose, two such balls met their sleepers again at
    once, the collapse froze them till the next tick, whose solve ran out of
    budget again: 104 events and 10 ms a step for ever (a new user's bucket
    turned back upright).

    A ball of a set the solve ran out of budget on is wedged, and sleeps where
    it lies too, where no velocity keeps it off the fixed things it touches
    (contact_solver.wedged: it overlaps fixed things on opposite sides, a
    ball wider than its box or pressed into a corner by one). No tick can
    push such an overlap out, and each spent its whole budget on it: a ball
    of 80 px in a box of 100 px, with a small one under it in a corner,
    cost 7 ms a step on the fast engine and 4 s on the reference, for ever.
    A ball it overlaps sleeps at the next tick, the sleeper a fixed thing to it.

    A ball of an unsettled set with a contact that overlaps beyond round-off
    (which the clusters allow, up to CLUSTER_OVERLAP, and a free ball may not
    have) stays instead, stopped until the next tick. Sets the solve settled
    keep its impulses. A set's balls are those of the contacts listed (Q[6]:
    _islands sets it afresh after)."""
    vel, inv_mass, radius = B[1], B[5], B[4]
    order, rank, loose, parent = Q[0], Q[1], Q[9], Q[6]
    ci, cj, _, v_min, w_j, lam = Q[3]
    gap, sets, jammed, unsettled = Q[4], Q[18], Q[19], Q[16]
    nc, nl = Q[5][0], Q[5][1]
    for q in range(nl):
        parent[q] = q
        unsettled[q] = False
        for k in range(SET_FIELDS):
            sets[q, k] = 0.0
    for c in range(nc):
        if w_j[c] > 0.0:
            _union(parent, rank[ci[c]], rank[cj[c]])
    for q in range(nl):
        i = order[q]
        if inv_mass[i] == 0.0:
            continue
        m = 1.0 / inv_mass[i]
        a = _root(parent, q)
        ux, uy = Q[15][q, 0], Q[15][q, 1]
        bx, by = gravity_on(B, i, gx, gy)
        g = math.sqrt(bx * bx + by * by)
        band = g * h + SOLVER_BAND * tol
        sets[a, GAIN] += 0.5 * m * (vel[i, 0] * vel[i, 0] + vel[i, 1] * vel[i, 1] - ux * ux - uy * uy)
        sets[a, ALLOWANCE] += 0.5 * m * band * band
        sets[a, WEIGHT] += m * (g * h + math.sqrt(ux * ux + uy * uy))
        wx, wy = ux - bx * h, uy - by * h  # (what it had before the tick's kick)
        if wx * wx + wy * wy >= rest_speed * rest_speed:
            sets[a, RESTLESS] = 1.0
    for c in range(nc):
        a = _root(parent, rank[ci[c]])
        sets[a, IMPULSE] = max(sets[a, IMPULSE], lam[c])
        if stuck and off_band(normal_speed(vel, Q[3], c) - v_min[c], lam[c], tol):
            unsettled[a] = True
        if _overlaps(B, Q, c):
            sets[a, RESTLESS] = 1.0  # (it may not sleep so)
        if w_j[c] == 0.0 and gap[c] <= LEAVE_GAP * radius[ci[c]]:
            sets[a, FIXED] = 1.0
    for q in range(nl):
        if parent[q] == q and sets[q, GAIN] > ENERGY_GUARD * sets[q, ALLOWANCE]:
            unsettled[q] = True
    for q in range(nl):
        a = _root(parent, q)
        if unsettled[a]:
            i = order[q]
            vel[i, 0] = Q[15][q, 0]
            vel[i, 1] = Q[15][q, 1]
            loose[q] = True
        jammed[q] = (unsettled[a] and sets[a, RESTLESS] == 0.0 and sets[a, FIXED] == 1.0
                     and sets[a, IMPULSE] > JAM_IMPULSE * sets[a, WEIGHT])
        if stuck and unsettled[a] and not jammed[q] and inv_mass[order[q]] > 0.0:
            jammed[q] = wedged(Q[3], Q[13], order[q], tol)
    for c in range(nc):
        if unsettled[_root(parent, rank[ci[c]])]:
            lam[c] = 0.0
            if _overlaps(B, Q, c):
                # an overlap the clusters allow, which a free ball may not
                # have: its moving balls stay, stopped until the next tick (no
                # energy gained, the overlap no deeper), whose solve pushes it out
                _stop_in_cluster(B, Q, ci[c])
                if w_j[c] > 0.0:
                    _stop_in_cluster(B, Q, cj[c])


@kernel
def _overlaps(B, Q, c):
    """Whether listed contact c overlaps beyond round-off (TOUCH_REL x the
    smaller radius): what the clusters allow and a free or sleeping ball may not have."""
    radius = B[4]
    i, j = Q[3][0][c], Q[3][1][c]
    small = min(radius[i], radius[j]) if j >= 0 else radius[i]
    return Q[4][c] < -TOUCH_REL * small


@kernel
def _stop_in_cluster(B, Q, i):
    """Listed ball i stays in its cluster at rest until the next tick
    (_take_back), holding nothing for the rest of it (take_ahead:
    an event meets it at rest, and a ball it sets free does not move on
    into the overlap it was stopped in)."""
    B[1][i, 0] = 0.0
    B[1][i, 1] = 0.0
    q = Q[1][i]
    Q[9][q] = False  # (not loose)
    Q[15][q, 0] = 0.0  # (the rate the tick's end adds: 0)
    Q[15][q, 1] = 0.0
    Q[17][i, 0] = 0.0
    Q[17][i, 1] = 0.0


@kernel
def _union(island, a, b):
    """Join the sets of listed balls a and b (places in the list; union-find)."""
    a, b = _root(island, a), _root(island, b)
    if a != b:
        island[max(a, b)] = min(a, b)


@kernel
def _root(island, q):
    """The island of listed ball q (union-find, with path halving)."""
    while island[q] != q:
        island[q] = island[island[q]]
        q = island[q]
    return q


@kernel
def _islands(B, Q, h, rest_speed, gx, gy, normals):
    """After a tick's solve: add h to the slow time (sup_r) of each listed
    ball slower than rest_speed (0 for those faster than twice that), and mark the islands
    (sets of listed balls joined by touching contacts) to put to sleep:
    those whose every ball has been slow for ISLAND_SLEEP_TIME and that
    touch something fixed, each ball held where it lies (_supported)."""
    vel, radius, slow = B[1], B[4], B[13]
    order, rank = Q[0], Q[1]
    ci, cj, w_j = Q[3][0], Q[3][1], Q[3][4]
    gap = Q[4]
    nc, nl = Q[5][0], Q[5][1]
    island, state = Q[6], Q[7]
    for q in range(nl):
        island[q] = q
        state[q] = ISLAND_ASLEEP
    for c in range(nc):
        if w_j[c] > 0.0 and gap[c] <= LEAVE_GAP * radius[ci[c]]:
            _union(island, rank[ci[c]], rank[cj[c]])
    for q in range(nl):
        i = order[q]
        v2 = vel[i, 0] * vel[i, 0] + vel[i, 1] * vel[i, 1]
        if v2 < rest_speed * rest_speed:
            slow[i] += h
        elif v2 >= 4.0 * rest_speed * rest_speed:
            slow[i] = 0.0  # (between one and two rest speeds it neither gains nor loses: a
            # heap at rest takes an odd kick from a solve that has not converged)
        if slow[i] < ISLAND_SLEEP_TIME:
            state[_root(island, q)] = ISLAND_AWAKE
    for c in range(nc):
        # an island sleeps with no overlap that the solve has yet to push
        # out: woken, its balls fly free with their gaps as they lie, and a
        # free pair may overlap by round-off only (a heap in a V, hit by a
        # late ball, set two corner balls free 4.6e-5 r deep in each other)
        if gap[c] < -TOUCH_REL * radius[ci[c]]:
            state[_root(island, rank[ci[c]])] = ISLAND_AWAKE
    for c in range(nc):  # an island with no fixed contact is falling: it stays awake
        if w_j[c] == 0.0 and gap[c] <= LEAVE_GAP * radius[ci[c]]:
            a = _root(island, rank[ci[c]])
            if state[a] & ISLAND_ASLEEP:
                state[a] |= ISLAND_FIXED
    for q in range(nl):
        if _root(island, q) == q:
            state[q] = ISLAND_ASLEEP if state[q] == ISLAND_ASLEEP | ISLAND_FIXED else ISLAND_AWAKE
    for q in range(nl):  # and each of its balls is held where it lies
        a = _root(island, q)
        if state[a] == ISLAND_ASLEEP and not _supported(B, Q, order[q], gx, gy, normals):
            state[a] = ISLAND_AWAKE


@kernel
def _supported(B, Q, i, gx, gy, normals):
    """Whether listed ball i can be held against gravity (rest.held) by what
    it touches (within LEAVE_GAP) in the last solve's contacts, fixed things
    and moving balls: a normal within REST_ANGLE of straight up, or two
    that span it (a wedge: a floor, a hollow of two balls, a groove whose
    far side is a neighbour). So an island sleeps only where each of its
    balls could rest: never with a ball balanced on one other off the
    vertical (a stack of two on a peg's top: the upper ball has the lower
    one only), nor with a chain on a slope (its lowest ball has only the
    slope below it and its uphill neighbour's push, which presses it down
    the slope, not up)."""
    radius = B[4]
    ci, cn = Q[3][0], Q[3][2]
    gap = Q[4]
    first, touching = Q[13][0], Q[13][1]
    k = 0
    for p in range(first[i], first[i + 1]):
        c = touching[p]
        if gap[c] > LEAVE_GAP * radius[ci[c]] or k >= len(normals):
            continue
        s = 1.0 if ci[c] == i else -1.0  # (cn points into ci)
        normals[k, 0] = s * cn[c, 0]
        normals[k, 1] = s * cn[c, 1]
        k += 1
    bx, by = gravity_on(B, i, gx, gy)
    return held(normals, k, bx, by)


@kernel
def _pressed_into(B, i, nx, ny, gx, gy):
    """Whether what ball i falls with (gravity_on) presses it along n, into a
    thing that n points away from: it lies under that thing."""
    bx, by = gravity_on(B, i, gx, gy)
    return nx * bx + ny * by > 0.0


@kernel
def rejoin(B, W, G, Q, i, t, dt, params, cand, in_cluster):
    """Cluster ball i (synced to t) has just been hit by a free ball: an
    exact event gave it a new velocity, solved against none of its
    neighbours. Keep it in its cluster until the next tick with the nearest
    velocity that keeps its listed contacts open until then, its neighbours
    taken as they move (no event can have changed them since the tick, or
    they would be free). What that holds back, the velocity it would press
    into them with, it keeps (sup_n) and gets back at the next tick, whose
    solve shares it with them: no momentum is lost, the push only waits
    for the tick (at most TICK). Like every cluster ball it then moves in a
    straight line until the next tick, its velocity holding what the rest
    of the tick gives it (take_ahead): what it held before the event, or,
    new to the clusters, gravity's kick. Without such a velocity (wedged)
    it stays free, on its parabola from here with the velocity the event
    left, and the events watch its contacts. dt: the part's length;
    in_cluster: whether i was in a cluster before the event (take_ahead
    took what it held for the rest of the tick; else it holds nothing back
    yet, and its sup_n is some support's). Returns
    REJOINED; WEDGED (no velocity keeps it off its neighbours); or STRUCK
    (struck again at the instant it rejoined, see below, or only a velocity
    faster than its own and than the balls around it would keep it off
    them: an impact). In the last two it stays free.

    Once an instant at most (Q[12]): a ball struck again at the time it
    rejoined stays free until the next tick. (A ball rattling at one instant
    between a free one and a wall, rejoining at every rattle, was sent back into the free one each
    time and gained speed: energy rose by whole percents in the hourglass.
    A rattling pair, rest.collapse, rejoins the same way.)"""
    pos, vel, acc, radius, mode, count = B[0], B[1], B[2], B[4], B[7], B[8]
    h = until_next_tick(t, dt, params)
    if not in_cluster:
        B[11][i, 0] = 0.0
        B[11][i, 1] = 0.0
        Q[17][i, 0], Q[17][i, 1] = gravity_on(B, i, params[P_GX], params[P_GY])
    if h <= 0.0 or Q[12][i] == t:
        _give_back(B, i)
        return STRUCK
    ux, uy = vel[i, 0], vel[i, 1]  # (what the event left)
    vx, vy = ux + Q[17][i, 0] * h, uy + Q[17][i, 1] * h
    ci, cj, cn, v_min, w_j, lam = Q[3]
    r = radius[i]
    px, py = pos[i, 0], pos[i, 1]
    k = 0
    wc = W[5]
    for w in range(len(wc)):
        if far_from_wall(W, w, px, py, r + CLUSTER_REACH * r):
            continue
        gap, nx, ny = wall_gap(W, w, px, py, r)
        if gap > CLUSTER_REACH * r or k >= len(ci):
            continue
        k = _add_fixed(Q, k, i, nx, ny, gap, 0.0, h, TARGET_GAP * r)
    m = _near(B, G, i, cand)
    rest_speed = max(params[P_REST_SPEED], V_EPS)
    fastest2 = max(vx * vx + vy * vy, rest_speed * rest_speed)  # (see below)
    for q in range(m):
        j = cand[q]
        if not (is_fixed(mode[j]) or mode[j] == CLUSTER) or k >= len(ci):
            continue  # (a free neighbour's contact is the events')
        gap, nx, ny, vjx, vjy, small = _within_reach(B, px, py, r, j, t)
        if gap == math.inf:
            continue
        k = _add_fixed(Q, k, i, nx, ny, gap, vjx * nx + vjy * ny, h, TARGET_GAP * small)
        fastest2 = max(fastest2, vjx * vjx + vjy * vjy)
    rmin = Q[11][0]
    slack = ROUND_OFF * rmin / h  # (what the exact projection may miss a bound by)
    met = k < len(ci)
    result = REJOINED
    if met:
        # one ball against fixed bounds: the exact nearest velocity
        # (contact_solver.project_one), not an iterative solve
        vel[i, 0], vel[i, 1], met = project_one(vx, vy, cn, v_min, 0, k, slack)
        for c in range(k):
            met = met and v_min[c] - normal_speed(vel, Q[3], c) <= UNMET * rmin / h
        speed2 = vel[i, 0] * vel[i, 0] + vel[i, 1] * vel[i, 1]
        met = met and math.sqrt(speed2) * h <= 0.5 * CLUSTER_REACH * rmin
        # and no faster than it was, than rest_speed or than the balls
        # within its reach: they are taken as they move, as if nothing
        # could slow them, and a ball driven off faster than any of them
        # passed the speed on to the free balls that hit it before the tick,
        # and they to the next (a cascade in the hourglass's neck raised the
        # energy). That is an impact: the events'
        if met and speed2 > fastest2:
            result = STRUCK
    if not met:
        result = WEDGED
    if result != REJOINED:
        vel[i, 0] = ux
        vel[i, 1] = uy
        _give_back(B, i)
        return result
    # it holds back what it presses into its neighbours, but none of the
    # kick (or what it holds for the rest of the tick) that they block:
    # that is their reaction's (held back, it read as energy the ball never
    # had, m v.g h: a heavy ball fallen along the floor onto a light one at
    # the wall read 7e4 above the start). So the lesser of what it presses
    # in with the kick and without it (where the kick pulls it off a
    # neighbour its own velocity closes on, the press without it overstates
    # the push by up to the kick)
    hx, hy = vx - vel[i, 0], vy - vel[i, 1]
    qx, qy, own = project_one(ux, uy, cn, v_min, 0, k, slack)
    if own and (ux - qx) * (ux - qx) + (uy - qy) * (uy - qy) < hx * hx + hy * hy:
        hx, hy = ux - qx, uy - qy
    B[11][i, 0] += hx
    B[11][i, 1] += hy
    # and holds for the rest of the tick what it was given beyond that
    Q[17][i, 0] = (vel[i, 0] - ux + hx) / h
    Q[17][i, 1] = (vel[i, 1] - uy + hy) / h
    mode[i] = CLUSTER
    acc[i, 0] = 0.0
    acc[i, 1] = 0.0
    count[i] += 1
    Q[12][i] = t
    return REJOINED


@kernel
def _add_fixed(Q, k, i, nx, ny, gap, un, h, target):
    """Contact k of rejoin: ball i against something that does not give way,
    moving along the normal n (into i) at un px/s; returns k + 1."""
    ci, cj, cn, v_min, w_j, lam = Q[3]
    ci[k] = i
    cj[k] = -1
    cn[k, 0] = nx
    cn[k, 1] = ny
    v_min[k] = un + speculative_min_speed(gap, 0.0, h, _target(gap, target))
    w_j[k] = 0.0
    lam[k] = 0.0
    return k + 1


EARLY_ISLAND = 64  # balls at most in an island solved at once for a ball that cannot join it (early_tick;
# 256 cost the pouring 1,000-ball Galton board a fifth more time, its heap's islands solved again and
# again; a sliding clump of 50 fits)


@kernel
def early_tick(B, W, G, Q, y, t, dt, params, todo, ntodo, normals, cand):
    """Free ball y (synced to t) lies on cluster balls, and rejoin found no
    velocity of its own that keeps it off them until the next tick. Solve its
    island now, for the rest of the tick: y and the cluster balls that touch
    it, transitively (within CLUSTER_REACH), at most EARLY_ISLAND of them, as
    a tick solves all (their kick of gravity is the rest of the tick's, their
    contacts' impulses start from 0: their velocities hold the last tick's
    already). Returns the new count of todo, or -1 where the island is
    larger or one was solved at this instant already (then nothing has
    changed, and y waits for the tick where it is, as a fixed thing: in a
    fast clump, whose balls then struck it as a wall, that cost the clump a
    quarter of its pace down a 40 degree slope)."""
    pos, vel, radius, mode = B[0], B[1], B[4], B[7]
    order, rank, counts = Q[0], Q[1], Q[5]
    gx, gy = params[P_GX], params[P_GY]
    h = until_next_tick(t, dt, params)
    if h <= 0.0 or Q[11][1] == t:
        return -1
    # the island: breadth first from y over cluster balls within reach
    size = 1
    order[0] = y
    rank[y] = 0
    q = 0
    while q < size and size <= EARLY_ISLAND:
        i = order[q]
        q += 1
        sync(B, i, t)  # (a cluster ball's place is its last sync's: where it is now, along the same path)
        r = radius[i]
        m = _near(B, G, i, cand)
        for k in range(m):
            j = cand[k]
            if rank[j] >= 0 or not (mode[j] == CLUSTER or mode[j] == FROZEN):
                continue
            gap, nx, ny, vjx, vjy, small = _within_reach(B, pos[i, 0], pos[i, 1], r, j, t)
            if gap == math.inf:
                continue
            rank[j] = size
            order[size] = j
            size += 1
            if size > EARLY_ISLAND:
                break
    for k in range(size):
        rank[order[k]] = -1
    if size > EARLY_ISLAND:
        return -1
    Q[11][1] = t
    for k in range(size):
        i = order[k]
        if mode[i] == CLUSTER:  # (it moves on the last tick's kick, given up to t_next: keep up to t)
            ax, ay = gravity_on(B, i, gx, gy)
            vel[i, 0] -= ax * h
            vel[i, 1] -= ay * h
        rank[i] = -2  # (tick lists these alone)
    counts[3] = 1
    ntodo = tick(B, W, G, Q, t, h, params, todo, ntodo, normals, cand)
    counts[3] = 0
    return ntodo
