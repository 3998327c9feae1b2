"""Lasting contacts: one normal impulse per contact, solved together.

Why. A frictionless ball pressed against others while they all move (a layer
sliding down a slope, balls pouring through a funnel) touches its neighbours
for as long as they move together. Resolved one impulse at a time, such a
contact is the inelastic collapse: infinitely many ever smaller bounces in a
finite time. The TC model keeps them elastic, so the layer rattles for ever;
stopping the balls puts them to sleep where nothing can hold them. A set of
lasting contacts has to be solved as a set.

What. clusters.py gathers the balls that touch slowly and lastingly (mode
CLUSTER) at ticks h apart and lists their contacts, with one another and
with fixed things (walls, segment ends, pinned and sleeping balls). This
module finds one impulse lambda >= 0 per contact, along its normal
(frictionless), such that at the END of the tick each contact's gap is at
least a target ("speculative contacts", as Box2D v3 uses them): with gap d,
relative normal velocity v (positive: opening) and relative normal
acceleration a (0 between two free balls: gravity cancels; gravity's normal
part against a fixed thing), the new v' must satisfy

    d + v' h + a h^2 / 2 >= target   where a <= 0,
    d + v' h             >= target   where a > 0 (a ball under a ceiling).

Between ticks the balls move on their exact parabolas. Where a <= 0 the
normal gap is concave in time, >= 0 at both ends, so >= 0 throughout; where
a > 0 the linear bound keeps it above the straight line between d and the
target. For discs the distance of the centres grows at least as fast as its
normal part (|c + u| >= (c + u).c / |c| = |c| + u_n), so the bound on the
normal gap bounds the true gap, whatever the tangential motion and whatever
d. target = min(d, TARGET_GAP x radius): a gap that is open closes to a
hair's breadth by the end of the tick and none is pushed wider than it is
but for the solve's tolerance (How, below: no energy is made from positions
beyond that); an overlap (d < 0, what round-off or an
unconverged solve left) is opened within one tick.

How. Projected Gauss-Seidel on the impulses (each contact in turn gets the
impulse that meets its bound with tol to spare, the running sum clamped
at >= 0): every contact is checked once, then again each time an update
next to it may have moved it, and updated when its bound is unmet or it
pushes more than SOLVER_BAND tol beyond it (a work queue), until none is
left or after a number of updates set by the
contacts' count (SOLVER_WORK). Each update lowers the dual objective
lambda.A.lambda / 2 + lambda.(v - v_min - tol) from 0 (a warm start may
begin above it: a solve that ends above 0 has its impulses scaled back to
D's minimum along them and goes on, solve_impulses), so the kinetic
energy after the solve is at most the energy before plus
sum(lambda (v_min + tol)): contacts with v_min + tol <= 0 (between moving
balls, all but those whose gap is within tol h of its target) only remove
energy; against a fixed
thing under gravity v_min = -a h / 2 lifts a ball exactly as far as
gravity brings it back by the next tick, and tol lifts it by tol h more
(up to SOLVER_BAND tol h, 1e-3 of the smallest radius, where the solve
stops short of the middle of its band: a heap's balls hover within that
of each other while it is awake).

Exactness never rests on convergence: the ticks' caller checks every
contact's bound after the solve, and a ball with a bound left unmet beyond
round-off is set free, its contacts then watched by the exact events.

Why this and not an exact LCP: each tick starts from velocities the last
tick made consistent and from its impulses (warm start), the sub-step h is
short (2 ms, down to 0.52 ms where a heap is deep: ticks.py says
why), and an update costs a few multiplications. A heap's
error dies away slowly under Gauss-Seidel (a few per cent a sweep where
it is tall), but the bounds only need meeting within tol, and in a
flowing heap most contacts meet theirs after a few updates: the queue
stops there, 3 to 14 updates a contact on captured ticks of the
1,000-ball Galton board, the hourglass and the rain (with a band of 2
tol and tol 1.25e-4 r / h), 22 to 31 on the 10,000-ball board's heap,
about 85 balls tall (with 4); 7 on the rain at 4 s with tol 2.5e-4 r / h
(clusters.SOLVER_TOL). (An accelerated projected gradient,
Nesterov's with restarts, needed about 100 iterations of three passes
over the contacts each for the same accuracy on the rain's ticks. Nor
would a block solve let the ticks grow: on solves captured from the
hourglass and the pouring 10,000-ball board at ticks of 1.28 to 8 ms, an
active set method with an exact sparse LU of the pushing contacts needed
8 to 19 factorisations a solve, each dearer than the whole queue at the
short ticks, and met no stopping rule in 50 at 4 ms on the board:
benchmarks/solver_study, BENCHMARKS.md.)
"""
import numpy as np

from ._jit import allocating, inlined, kernel

TARGET_GAP = 1e-6  # x the smaller radius: the gap a closing contact ends a tick at
# contact updates at most per solve: SOLVER_WORK, at least SOLVER_MIN_SWEEPS
# and at most SOLVER_MAX_SWEEPS times the contacts' count
SOLVER_WORK = 1000000
SOLVER_MIN_SWEEPS = 128
SOLVER_MAX_SWEEPS = 1000
# x tol: how far beyond its bound a contact may push before the solve updates it
# again. The bound below is the one that matters (no overlap); above, the
# band only decides how close to the middle a heap's error must die away:
# 4 instead of 2 halved the updates of the 10,000-ball Galton board's ticks
# (a sliding clump still accelerates at g sin(theta): the aim, v_min + tol,
# is what a looser solve would turn into friction); then 2 with twice the
# tol (clusters.SOLVER_TOL), the same band aimed at its middle, cut them again
SOLVER_BAND = 2.0
# _pack's columns: a contact's normal, v_min, impulse, its two sides' inverse
# masses (as _inverse_masses gives them) and balls (the other one -1 where it
# does not move with the impulse), 64 bytes a contact
K_NX, K_NY, K_VMIN, K_LAM, K_INV_I, K_INV_J, K_I, K_J = range(8)
PACKED = 8


@kernel
def speculative_min_speed(gap, an, h, target):
    """The least relative normal velocity (px/s, positive opening) that keeps a
    contact's gap (px) at or above 0 through a tick of h s and at or above
    target (px, target <= max(gap, 0)) at its end, given the contact's
    relative normal acceleration an (px/s^2; see the module docstring)."""
    v = (target - gap) / h
    if an < 0.0:
        v -= 0.5 * an * h
    return v


@inlined
def normal_speed(vel, C, c):
    """Relative normal velocity of contact c (px/s, positive opening)."""
    ci, cj, cn, v_min, w_j, lam = C
    i, j = ci[c], cj[c]
    vn = vel[i, 0] * cn[c, 0] + vel[i, 1] * cn[c, 1]
    if j >= 0 and w_j[c] > 0.0:
        vn -= vel[j, 0] * cn[c, 0] + vel[j, 1] * cn[c, 1]
    return vn


@kernel
def ring_size(m):
    """The length of the solve's queue for up to m contacts: the least power
    of two >= m (a position in the ring is then a mask away, see _gauss_seidel)."""
    size = 1
    while size < m:
        size *= 2
    return size


@allocating
def solver_scratch(n, m):
    """The solve's scratch for n balls and room for m contacts: (first (n + 1,)
    int64 where each ball's contacts start in touching, touching (2m,) int64
    the contacts of each ball in turn, queue (ring_size(m),) int64 the
    contacts to update, a ring, queued (m,) bool whether a contact is in it,
    start (m,) float64 px/s each contact's normal speed before the solve,
    packed (m, PACKED) float64 what an update reads of each contact, in one
    row: see _pack)."""
    return (np.zeros(n + 1, dtype=np.int64), np.empty(2 * m, dtype=np.int64), np.empty(ring_size(m), dtype=np.int64),
            np.zeros(m, dtype=np.bool_), np.empty(m), np.empty((m, PACKED)))


@kernel
def _list_touching(C, nc, S):
    """Fill S's first and touching: each ball's contacts among 0..nc-1 of C
    (a fixed partner's contacts are not its own: no impulse moves it)."""
    ci, cj, w_j = C[0], C[1], C[4]
    first, touching = S[0], S[1]
    n = len(first) - 1
    for b in range(n + 1):
        first[b] = 0
    for c in range(nc):
        first[ci[c] + 1] += 1
        if cj[c] >= 0 and w_j[c] > 0.0:
            first[cj[c] + 1] += 1
    for b in range(n):
        first[b + 1] += first[b]
    for c in range(nc):  # (first[b] counts up as b's contacts go in, and back down after)
        touching[first[ci[c]]] = c
        first[ci[c]] += 1
        if cj[c] >= 0 and w_j[c] > 0.0:
            touching[first[cj[c]]] = c
            first[cj[c]] += 1
    for b in range(n, 0, -1):
        first[b] = first[b - 1]
    first[0] = 0


@inlined
def off_band(w, lam, tol):
    """Whether a contact is off the band its solve aims for, given w, its
    normal speed less v_min (px/s), and lam, its impulse: its bound unmet
    (w < 0), or pushing (lam > 0) harder than the bound needs by more
    than SOLVER_BAND tol px/s."""
    return w < 0.0 or (lam > 0.0 and w > SOLVER_BAND * tol)


@inlined
def _inverse_masses(inv_mass, C, c):
    """(1/mass of contact c's ball, of its other side where that moves with the impulse, else 0)."""
    j = C[1][c]
    return inv_mass[C[0][c]], (inv_mass[j] * C[4][c] if j >= 0 else 0.0)


@inlined
def _push(vel, C, c, inv_i, inv_j, d):
    """An impulse d (mass px/s) along contact c's normal: into its ball, out of the other side."""
    i, j, nx, ny = C[0][c], C[1][c], C[2][c, 0], C[2][c, 1]
    vel[i, 0] += d * inv_i * nx
    vel[i, 1] += d * inv_i * ny
    if inv_j > 0.0:
        vel[j, 0] -= d * inv_j * nx
        vel[j, 1] -= d * inv_j * ny


@kernel
def _apply(vel, inv_mass, C, nc, share):
    """Apply share x each impulse lam holds to the velocities."""
    lam = C[5]
    for c in range(nc):
        inv_i, inv_j = _inverse_masses(inv_mass, C, c)
        _push(vel, C, c, inv_i, inv_j, share * lam[c])


@kernel
def solve_budget(nc):
    """The most updates a solve of nc contacts makes (see solve_impulses)."""
    return max(SOLVER_MIN_SWEEPS * nc, min(SOLVER_MAX_SWEEPS * nc, SOLVER_WORK))


@kernel
def solve_impulses(vel, inv_mass, C, nc, tol, S):
    """Projected Gauss-Seidel over contacts 0..nc-1 of C, on the contacts
    that need it; changes vel in place.

    vel (N, 2) float64 px/s, inv_mass (N,) 1/mass. C = (ci (M,) int64, the
    moving ball; cj (M,) int64, the other ball or < 0 for a wall; cn (M, 2)
    unit normal from the other side into ci; v_min (M,) px/s; w_j (M,) float64,
    1 when cj moves with the impulse, 0 when it is fixed; lam (M,) impulses,
    mass px/s: read as the first guess (warm start: a lasting contact's last
    impulse, or 0), written). S: solver_scratch(N, M).

    Every contact off its band (off_band: its bound unmet, or its push
    more than SOLVER_BAND tol beyond what the bound needs) is updated, in order, to
    meet its bound with tol px/s to spare; then a contact comes up again,
    a queue, first in first out, when an update of another contact of one
    of its balls may have moved it off the band, and is updated if it has.
    An update settles its own contact, and every later change of one of
    its balls brings it up again, so an empty queue means every bound is
    met, none pushed by more than SOLVER_BAND tol beyond it: the solve stops at the
    accuracy asked for, however slowly the rest of a heap's error would
    die away, and what it leaves is never an overlap (a tolerance on both
    sides let the rain's settled heap sink by a tol a tick, to 7e-4 r
    against the push-out). A contact is checked when it comes up, not when
    a neighbour changes: a ball in a heap has up to six contacts, and
    checking each neighbour of every update at once cost three times the
    solve on the 10,000-ball Galton board's heap (26,500 contacts a tick,
    ~50 updates a contact either way). (Queueing every neighbour of a change
    larger than a threshold instead, the rain's heap of 2,000 balls spent
    its whole budget on changes too small to matter and stopped short of
    the bounds anyway: 160 updates a contact, against 9 to 14 now, half
    the time.)
    Returns the updates made, or -1 if the queue was not empty after
    SOLVER_WORK of them (at least SOLVER_MIN_SWEEPS, at most
    SOLVER_MAX_SWEEPS times nc)."""
    v_min, lam = C[3], C[5]
    start = S[4]
    if nc == 0:
        return 0
    for c in range(nc):
        start[c] = normal_speed(vel, C, c)
    _apply(vel, inv_mass, C, nc, 1.0)  # warm start: the impulses lam holds, applied first
    _list_touching(C, nc, S)
    budget = solve_budget(nc)
    updates = _gauss_seidel(vel, inv_mass, C, nc, tol, S, budget)
    if updates < 0:
        return -1
    # the energy bound: D(lam) = lam.A.lam / 2 + lam.(v - v_min - tol) <= 0,
    # v the speeds before the solve (module docstring). Updates only lower D,
    # from D(0) = 0; a warm start may begin above it. One that stopped a
    # falling ball last tick did, in a wedge of nearly level contacts (a chain
    # of two balls a hair too long for the gap between two sleepers): 0.7 of
    # that impulse threw a ball up at 20 px/s while each contact's normal
    # speed, 1/8 of that, lay inside the band, so the solve ended there; the
    # energy rose by thousands a step, and the pair never slept. (Scaling the
    # warm start itself, before the solve, where D(1) > 0 cut the warm start
    # of the whole tick in half the hourglass's solves: 1.12x its time.)
    # Rare: none of 1,654 solves of the pouring hourglass's first 2 s ended
    # above 0 (one of the 40-ball galton's and hourglass's digest runs did)
    lin, curve = 0.0, 0.0
    for c in range(nc):
        if lam[c] != 0.0:
            lin += lam[c] * (start[c] - v_min[c] - tol)
            curve += lam[c] * (normal_speed(vel, C, c) - start[c])  # (A lam)_c: lam.A.lam summed
    if curve > 0.0 and 0.5 * curve + lin > 0.0:
        share = max(-lin / curve, 0.0)  # D's minimum along s lam, below 0
        _apply(vel, inv_mass, C, nc, share - 1.0)
        for c in range(nc):
            lam[c] *= share
        more = _gauss_seidel(vel, inv_mass, C, nc, tol, S, budget - updates)
        if more < 0:
            return -1
        updates += more
    return updates


@kernel
def _pack(inv_mass, C, nc, K):
    """Copy what an update reads of each of contacts 0..nc-1 of C into its
    row of K (see PACKED). The queue takes contacts in an order the
    contact arrays do not follow, and each check read a line of each of six
    arrays and of inv_mass twice over: from one row of 64 bytes instead, the
    pouring 10,000-ball Galton board's steps took 0.945 of their time, the
    same solve bit for bit (benchmarks/ab_engine.py --state, BENCHMARKS.md)."""
    ci, cj, cn, v_min, w_j, lam = C
    for c in range(nc):
        inv_i, inv_j = _inverse_masses(inv_mass, C, c)
        j = cj[c]
        K[c, K_NX] = cn[c, 0]
        K[c, K_NY] = cn[c, 1]
        K[c, K_VMIN] = v_min[c]
        K[c, K_LAM] = lam[c]
        K[c, K_INV_I] = inv_i
        K[c, K_INV_J] = inv_j
        K[c, K_I] = ci[c]
        K[c, K_J] = j if j >= 0 and w_j[c] > 0.0 else -1


@kernel
def _gauss_seidel(vel, inv_mass, C, nc, tol, S, budget):
    """solve_impulses' queue, every contact in it at first; returns the
    updates made, or -1 if it was not empty after budget of them. Works on
    the contacts packed (_pack) and writes their impulses back into C; the
    same arithmetic, in the same order, as normal_speed and _push.

    A check costs less than the updates and their queueing: two ways to
    check fewer contacts made the same solve, bit for bit, and were slower.
    Each kept every contact's slack (how far its normal speed may move
    before it can leave its band), took |d| k off it for every other
    contact of a ball of inverse mass k that an impulse d moved, and passed
    over a contact that came up with slack left. Kept for every contact,
    to both edges of its band and recomputed after every update: 1.14
    times the time. Kept only for contacts that push nothing, most of them
    open: 1.01 times that."""
    first, touching, queue, queued, K = S[0], S[1], S[2], S[3], S[5]
    _pack(inv_mass, C, nc, K)
    for c in range(nc):
        queue[c] = c
        queued[c] = True
    # (a ring of a power of two >= nc, the queue's most: a place in it is a
    # mask away, not a comparison; first in, first out, as in a ring of nc)
    mask = ring_size(nc) - 1
    head, size = 0, nc
    updates = 0
    stopped = False
    while size > 0:
        c = queue[head]
        head = (head + 1) & mask
        size -= 1
        queued[c] = False
        nx, ny = K[c, K_NX], K[c, K_NY]
        i, j = int(K[c, K_I]), int(K[c, K_J])
        vn = vel[i, 0] * nx + vel[i, 1] * ny
        if j >= 0:
            vn -= vel[j, 0] * nx + vel[j, 1] * ny
        w = vn - K[c, K_VMIN]
        lam_c = K[c, K_LAM]
        if not off_band(w, lam_c, tol):
            continue
        if updates >= budget:
            stopped = True  # (queued is set afresh by the next solve)
            break
        updates += 1
        inv_i, inv_j = K[c, K_INV_I], K[c, K_INV_J]
        # (aimed at the middle of the band: v_min + tol)
        new = max(lam_c + (tol - w) / (inv_i + inv_j), 0.0)
        d = new - lam_c
        if d == 0.0:
            continue
        K[c, K_LAM] = new
        vel[i, 0] += d * inv_i * nx
        vel[i, 1] += d * inv_i * ny
        if inv_j > 0.0:
            vel[j, 0] -= d * inv_j * nx
            vel[j, 1] -= d * inv_j * ny
        for side in range(2):  # the other contacts of the balls it moved: checked when they come up
            b = i if side == 0 else j
            if side == 1 and inv_j == 0.0:
                break
            for p in range(first[b], first[b + 1]):
                # without a branch (as grid._offer): e is written at the
                # tail anyway and counted only if it goes in. Whether a
                # neighbour is queued already is a coin toss the CPU cannot
                # guess. (The tail is free: c is out of the queue, so at
                # most nc - 1 are in it)
                e = touching[p]
                was = queued[e]
                take = (not was) & (e != c)
                queue[(head + size) & mask] = e
                queued[e] = was | take
                size += take
    lam = C[5]
    for c in range(nc):
        lam[c] = K[c, K_LAM]
    return -1 if stopped else updates


@kernel
def _meets(vx, vy, cn, v_min, first, end, slack):
    """Whether velocity (vx, vy) px/s meets every bound cn[c].v >= v_min[c] - slack,
    c from first to end - 1."""
    for c in range(first, end):
        if cn[c, 0] * vx + cn[c, 1] * vy < v_min[c] - slack:
            return False
    return True


@kernel
def project_one(vx, vy, cn, v_min, first, end, slack):
    """The velocity nearest (vx, vy) px/s that meets the bounds n_c.v >= v_min[c],
    c from first to end - 1, on one ball against things that do not give way
    (cn (>=end, 2) unit normals into the ball, v_min (>=end,) px/s), exactly: returns
    (vx', vy', True), or (vx, vy, False) where no velocity meets them all
    (the ball is wedged). slack px/s: what a bound may miss by in round-off
    (the candidates are computed; (vx, vy) stands where none of them meets
    every bound and it does, within slack).

    One ball's bounds are half-planes of its velocity, and the nearest point
    of their intersection is the point itself, or its projection on one
    bound's line, or the corner of two lines: the nearest of those
    candidates that meets every bound is the answer (the minimum of a
    convex problem lies on the fewest active bounds that hold it). Exact in
    O(k^3) for the handful of contacts one ball has, where Gauss-Seidel on
    two nearly parallel bounds (a ball in a narrow wedge) takes thousands of
    sweeps and may not converge at all."""
    # (the start itself only where it meets every bound exactly: one that
    # closes within the slack is no round-off of a projection, and it lets
    # the ball sink by slack x h, which it keeps when an event sets it free)
    if _meets(vx, vy, cn, v_min, first, end, 0.0):
        return vx, vy, True
    best, bx, by, found = 0.0, vx, vy, False
    for a in range(first, end):  # on one bound's line
        ax, ay = cn[a, 0], cn[a, 1]
        s = v_min[a] - (ax * vx + ay * vy)
        if s <= 0.0:
            continue  # (met already: its line is not the nearest point)
        px, py = vx + s * ax, vy + s * ay
        d2 = s * s
        if (not found or d2 < best) and _meets(px, py, cn, v_min, first, end, slack):
            best, bx, by, found = d2, px, py, True
    for a in range(first, end):  # at the corner of two lines
        for b in range(a + 1, end):
            ax, ay, bxn, byn = cn[a, 0], cn[a, 1], cn[b, 0], cn[b, 1]
            det = ax * byn - ay * bxn
            if abs(det) < 1e-12:
                continue  # parallel: no corner
            px = (v_min[a] * byn - ay * v_min[b]) / det
            py = (ax * v_min[b] - v_min[a] * bxn) / det
            dx, dy = px - vx, py - vy
            d2 = dx * dx + dy * dy
            if (not found or d2 < best) and _meets(px, py, cn, v_min, first, end, slack):
                best, bx, by, found = d2, px, py, True
    if not found:
        return vx, vy, _meets(vx, vy, cn, v_min, first, end, slack)
    return bx, by, True


@kernel
def wedged(C, S, i, slack):
    """Whether no velocity of ball i meets, within slack px/s, the bounds of
    its contacts with fixed things among those the last solve of C took
    (S's first and touching, as solve_impulses listed them): bounds from
    opposite sides that both push out an overlap (a ball wider than its
    box, pressed by both sides; a small ball under a big one wedged in a
    corner). No solve can meet them: Gauss-Seidel spends its whole budget
    on them at every tick. Without an overlap a velocity always meets them
    (minus half of gravity's kick keeps every gap as it is). Uses S's start
    and packed as scratch: the solve is done with them."""
    ci, cn, v_min, w_j = C[0], C[2], C[3], C[4]
    first, touching, bounds, normals = S[0], S[1], S[4], S[5]
    k = 0
    for s in range(first[i], first[i + 1]):
        c = touching[s]
        if ci[c] == i and w_j[c] == 0.0:
            normals[k, 0] = cn[c, 0]
            normals[k, 1] = cn[c, 1]
            bounds[k] = v_min[c]
            k += 1
    if k < 2:
        return False  # (one bound alone is always met)
    return not project_one(0.0, 0.0, normals, bounds, 0, k, slack)[2]
