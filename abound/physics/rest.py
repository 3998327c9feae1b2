"""Rest: sliding on supports, falling asleep where fixed contacts hold a ball, waking,
and the inelastic collapse (see docs/physics.md).

Part of the event-driven engine (engine.py gathers it; docs/physics.md explains it).
"""
import math

from ._jit import kernel
from .kernels import TOUCH_REL, V_EPS
from .constants import ASLEEP, BOX_LINE, CLUSTER_SLOP, FREE, FROZEN, PINNED, REST_COS, SLEEP_TOUCH, SLEEP_TOUCH_CLUSTER, SLIDING, SUP_BALL
from .motion import gravity_on, is_fixed, lasting, motion_at, set_free, sync
from .grid import grid_candidates, lasting_near, mark_lasting

NO_LOADS = -1.0  # try_sleep's reach where no awake ball's push is counted (see load_reach)


# --------------------------------------------------------------------------
# rest: sliding, sleeping, waking
# --------------------------------------------------------------------------
@kernel
def held(normals, k, gx, gy):
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
def wall_gap(W, w, px, py, r):
    """(gap px, nx, ny): how far a ball of radius r centred at (px, py) is
    from wall w (a box side or a segment, end points included) and the unit
    normal from the wall into it; an infinite gap where the centre lies on a
    segment (no normal)."""
    wn, wc, wkind = W[2], W[5], W[7]
    if wkind[w] == BOX_LINE:
        return wn[w, 0] * px + wn[w, 1] * py - wc[w] - r, wn[w, 0], wn[w, 1]
    cx, cy = segment_closest(W, w, px, py)
    dx, dy = px - cx, py - cy
    d = math.sqrt(dx * dx + dy * dy)
    if d == 0.0:
        return math.inf, 0.0, 0.0
    return d - r, dx / d, dy / d


@kernel
def far_from_wall(W, w, px, py, reach):
    """Whether the point (px, py) lies more than 2 x reach px (twice, for
    round-off) outside segment w's bounding box, so farther than reach from
    the segment: the loops over the walls for one ball skip such a segment
    without the cost of wall_gap (the tick's listing took a fifth less time
    in the 10,000-ball Galton board, whose funnel and bins are 40 segments).
    Never for a box side (an infinite line)."""
    if W[7][w] == BOX_LINE:
        return False
    wp0, wp1 = W[0], W[1]
    pad = 2.0 * reach
    return (px + pad < min(wp0[w, 0], wp1[w, 0]) or px - pad > max(wp0[w, 0], wp1[w, 0])
            or py + pad < min(wp0[w, 1], wp1[w, 1]) or py - pad > max(wp0[w, 1], wp1[w, 1]))


@kernel
def fixed_contacts(B, W, G, i, normals, cand, touch):
    """Write the unit normals (into ball i) of the fixed things ball i touches -
    walls, segment ends, pinned and sleeping balls, within touch x radius -
    into normals; returns how many (at most len(normals)), and how many of
    them are a scene's fixtures, segments and pinned balls (pegs): not the
    box, not a sleeper (collapse)."""
    pos, radius, mode = B[0], B[4], B[7]
    wp0, wp1, wn, wt, wlen, wc, we, wkind, wimpulse = W
    r = radius[i]
    tol = touch * r
    px, py = pos[i, 0], pos[i, 1]
    k = fixtures = 0
    for w in range(len(wc)):
        if k >= len(normals):
            break
        if far_from_wall(W, w, px, py, r + tol):
            continue
        if wkind[w] == BOX_LINE:
            if wn[w, 0] * px + wn[w, 1] * py - wc[w] - r <= tol:
                normals[k, 0] = wn[w, 0]
                normals[k, 1] = wn[w, 1]
                k += 1
        else:
            cx, cy = segment_closest(W, w, px, py)
            dx, dy = px - cx, py - cy
            d = math.sqrt(dx * dx + dy * dy)
            if 0.0 < d <= r + tol:
                normals[k, 0] = dx / d
                normals[k, 1] = dy / d
                k += 1
                fixtures += 1
    m = grid_candidates(G, B, i, 0.0, cand, touch) if lasting_near(G, B, i, touch) else 0
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
            if mode[j] == PINNED:
                fixtures += 1
    return k, fixtures


@kernel
def fall_asleep(B, G, i):
    """Put ball i to sleep where it lies (a lasting ball: grid.mark_lasting)."""
    vel, acc, mode, count = B[1], B[2], B[7], B[8]
    mode[i] = ASLEEP
    mark_lasting(G, B, i)
    vel[i, 0] = 0.0
    vel[i, 1] = 0.0
    acc[i, 0] = 0.0
    acc[i, 1] = 0.0
    count[i] += 1


@kernel
def try_sleep(B, W, G, i, gx, gy, normals, cand, touch=SLEEP_TOUCH, reach=NO_LOADS):
    """Put ball i to sleep if its fixed contacts (within touch x its radius)
    hold it against gravity (gx, gy) and its field (gravity_on) and against
    the push of every awake ball within reach that lies on it (loads_held;
    NO_LOADS: none counted), and it overlaps nothing beyond round-off
    (apart)."""
    bx, by = gravity_on(B, i, gx, gy)
    k = fixed_contacts(B, W, G, i, normals, cand, touch)[0]
    if not held(normals, k, bx, by):
        return False
    if not loads_held(B, W, G, i, gx, gy, normals, k, cand, reach):
        return False
    if not apart(B, W, G, i, cand):
        return False
    fall_asleep(B, G, i)
    return True


@kernel
def load_reach(seed):
    """How far (x the smaller radius) an awake ball may lie from a ball
    after an event for its push to keep that ball from sleeping (try_sleep):
    CLUSTER_SLOP in a step that runs contact clusters (seed not empty), so
    that the ball kept awake touches the pressing one within the reach a
    tick joins a moving ball to its cluster by (clusters._list_balls): the
    two then sleep together, as an island, or the one above sleeps first
    and this one after it, alone. In a step without clusters none
    (NO_LOADS): there nothing would ever sleep such a pair together (a
    ball that rattles under such a load falls asleep wherever it touches
    something fixed anyway: collapse), and the ball kept awake would slide
    at rest on the floor for ever."""
    return CLUSTER_SLOP if len(seed) > 0 else NO_LOADS


@kernel
def loads_held(B, W, G, i, gx, gy, normals, k, cand, reach):
    """Whether ball i's k fixed contacts (normals, into it) also hold it
    against the push of each awake ball (not asleep, not pinned) that lies
    on it: touches it (within reach x the smaller radius, whatever the
    reach of its fixed contacts: a cluster ball hovers above what it lies
    on, clusters.SOLVER_TOL; NO_LOADS: no ball counts) from above, so that what
    that ball falls with (gravity_on) presses it onto i. A sleeper is a
    fixed thing, infinitely heavy: asleep under such a ball it would take a
    push its contacts cannot hold, and hold the ball up (a frictionless
    pyramid of three placed touching on the floor stood for ever: each
    bottom ball fell asleep on the floor at its first contact, before the
    top ball's sideways push, along the line of centres, was known, and the
    top ball then slept in the wedge of two sleepers). How hard the ball
    pushes is not known here (it is the contact's, and the solve's), so
    each push is held whatever its size: the normals of its fixed contacts
    and of the awake balls touching it that do not lie on it (a row's
    neighbours, which push back) span the line from its centre to i's, as
    held asks of gravity (the sum of pushes each held, and gravity, is
    held). So a ball under one stacked straight above it, or pressed into
    a corner, still sleeps, and so does a row's ball on a floor between
    two neighbours (a pyramid in a box that fits its bottom row sleeps at
    once, bottom up: kept awake there, its jammed rows rattled, 1,500
    collapses a step); the end ball of a row, under a ball in the hollow
    beside it, does not, until the two sleep together (an island:
    clusters._islands, as Box2D sleeps whole islands), or the ball above
    sleeps first. Neighbours level with it, and those lying on a wall
    straight below them (a row on a floor, whatever their sizes), do not
    press on it: their weight is not pushed into it. (A push passed on
    along a row is not followed: a row's end ball with no ball on it may
    sleep while a ball in a hollow further along pushes the row into it.)"""
    pos, radius, mode, tloc = B[0], B[4], B[7], B[3]
    r = radius[i]
    if reach < 0.0:
        return True
    # pass 0: the awake balls beside or under it that touch it are supports too
    # (a row's neighbour pushes back); pass 1: each ball lying on it is held
    n = k
    for p in range(2):
        for q in range(grid_candidates(G, B, i, 0.0, cand, reach)):
            j = cand[q]
            if j == i or lasting(mode[j]):
                continue
            x, y, _, _, _, _ = motion_at(B, j, tloc[i])
            dx, dy = pos[i, 0] - x, pos[i, 1] - y
            d = math.sqrt(dx * dx + dy * dy)
            if d == 0.0 or d > r + radius[j] + reach * min(r, radius[j]):
                continue
            sx, sy = gravity_on(B, j, gx, gy)
            lies = dx * sx + dy * sy > 0.0 and not _on_a_floor(W, x, y, radius[j], sx, sy, reach)
            if p == 0:
                if not lies and n < len(normals):
                    normals[n, 0] = dx / d
                    normals[n, 1] = dy / d
                    n += 1
            elif lies and not held(normals, n, dx, dy):  # (its push on i is along d, from it to i)
                return False
    return True


@kernel
def _on_a_floor(W, x, y, r, sx, sy, reach):
    """Whether a ball of radius r centred at (x, y), falling with (sx, sy),
    lies on a wall (within reach x r) straight below it (within REST_ANGLE,
    as held asks of one contact): that wall takes its weight, so it presses
    nothing beside it (two balls of different sizes side by side on a floor:
    the larger one's centre is higher, yet it does not push the smaller)."""
    s = math.sqrt(sx * sx + sy * sy)
    if s == 0.0:
        return False
    for w in range(len(W[5])):
        if far_from_wall(W, w, x, y, r + reach * r):
            continue
        gap, nx, ny = wall_gap(W, w, x, y, r)
        if gap <= reach * r and -(nx * sx + ny * sy) / s >= REST_COS:
            return True
    return False


@kernel
def apart(B, W, G, i, cand):
    """Whether ball i (synced to its own time) overlaps no wall and no other
    ball by more than round-off (TOUCH_REL x the smaller radius): only then
    may it fall asleep. A sleeper keeps the gaps it lies with, and woken it
    flies free with them, where a free ball may overlap by round-off only (in
    a V full of cluster balls, two in a corner, each held by the floor,
    slept 4.6e-5 r deep in each other - what a solve had left - and flew so
    when a late ball woke them). The exact events leave no such overlap:
    only a ball that a contact cluster's solve moved can have one."""
    pos, radius, tloc = B[0], B[4], B[3]
    r = radius[i]
    for w in range(len(W[5])):
        if far_from_wall(W, w, pos[i, 0], pos[i, 1], r):
            continue
        if wall_gap(W, w, pos[i, 0], pos[i, 1], r)[0] < -TOUCH_REL * r:
            return False
    for q in range(grid_candidates(G, B, i, 0.0, cand, SLEEP_TOUCH)):
        j = cand[q]
        if j == i:
            continue
        x, y, _, _, _, _ = motion_at(B, j, tloc[i])
        dx, dy = pos[i, 0] - x, pos[i, 1] - y
        if math.sqrt(dx * dx + dy * dy) < r + radius[j] - TOUCH_REL * min(r, radius[j]):
            return False
    return True


NOT_ASLEEP, ASLEEP_ANYWHERE, ASLEEP_STUCK = 0, 1, 2  # what collapse did


@kernel
def collapse(B, W, G, i, partner, gx, gy, rest_speed, normals, cand, seed):
    """Ball i is caught in an inelastic collapse (COLLAPSE_CONTACTS contacts,
    each within TC_TIME of the one before), its last with partner (-1: a wall).

    The rattle stands for a lasting contact, which loses the relative motion:
    i takes the common velocity of i and a moving partner (momentum kept, energy
    lost), or stops against a fixed one. Then it stops where it is: asleep if
    it is slow and touches something fixed (the pile below it), else frozen
    for the rest of the step. Returns ASLEEP_STUCK if it fell asleep where
    its fixed contacts do not hold it against gravity (held) and one of them
    is a segment or a peg (fixed_contacts' fixtures: on a slope, on a peg's side,
    where a frictionless ball slides on and only contact clusters let it;
    a heap on the floor is left out, whose balls this rule sleeps on one
    another all the time; and where nothing pulls: gravity (0, 0) needs no
    holding), ASLEEP_ANYWHERE if anywhere else, NOT_ASLEEP if not.

    In a step that runs contact clusters (seed not empty) both keep the
    common velocity and are marked to join the clusters (the event loop
    then holds them in, clusters.rejoin): a last resort, as a lasting
    contact joins them before it rattles (resolve_pair). Not frozen: a
    frozen ball is fixed, and the balls that pressed on it until the tick
    lost their momentum to it (a clump on a slope slid at 0.4 g sin theta).
    """
    vel, inv_mass, mode, count = B[1], B[5], B[7], B[8]
    if partner >= 0 and not is_fixed(mode[partner]):
        wi, wp = 1.0 / inv_mass[i], 1.0 / inv_mass[partner]
        for c in range(2):
            vc = (wi * vel[i, c] + wp * vel[partner, c]) / (wi + wp)
            vel[i, c] = vc
            vel[partner, c] = vc
        count[partner] += 1
        if len(seed) > 0:
            seed[partner] = True
    elif len(seed) == 0:
        vel[i, 0] = 0.0
        vel[i, 1] = 0.0
    if len(seed) > 0:
        seed[i] = True
        count[i] += 1
        return NOT_ASLEEP
    slow = vel[i, 0] * vel[i, 0] + vel[i, 1] * vel[i, 1] < rest_speed * rest_speed
    # (any fixed contact: a rattle at rest_speed is a pile settling; demanding
    # contacts that hold it against gravity, as try_sleep does, kept piles
    # from falling asleep: tests/physics/test_physics_settle.py)
    k, fixtures = fixed_contacts(B, W, G, i, normals, cand, SLEEP_TOUCH) if slow else (0, 0)
    bx, by = gravity_on(B, i, gx, gy)
    if k > 0 and (bx != 0.0 or by != 0.0) and not _under(normals, k, bx, by):
        k = 0  # (only things beside or above it: a box's side bore a ball asleep on it for ever)
    if k > 0:
        fall_asleep(B, G, i)
        if fixtures > 0 and (bx != 0.0 or by != 0.0) and not held(normals, k, bx, by):
            return ASLEEP_STUCK
        return ASLEEP_ANYWHERE
    mode[i] = FROZEN
    count[i] += 1
    return NOT_ASLEEP


@kernel
def _under(normals, k, bx, by):
    """Whether any of k contact normals (pointing into the ball) pushes it at
    all against what it falls with (bx, by): something lies under it. A
    vertical wall's does not, nor a ceiling's: a ball stopped against one
    alone (its partner in a rattle moving off) hung there asleep, with
    nothing under it, until something struck it."""
    for q in range(k):
        if normals[q, 0] * bx + normals[q, 1] * by < 0.0:
            return True
    return False


@kernel
def after_contact(B, W, G, i, fixed_other, nx, ny, skind, sidx, cx, cy, cr, fric,
                  gx, gy, rest_speed, normals, cand, reach):
    """Decide ball i's state after a contact whose normal n points into i.

    Its old support (if any) no longer applies: it is free, unless the contact
    was with a fixed object, left no normal speed and gravity presses it in -
    then it sleeps if slow and held (against the awake balls within reach
    that lie on it too: load_reach), else slides on the contact's tangent line.
    """
    vel, acc, mode = B[1], B[2], B[7]
    sup_kind, sup_idx, sup_n, sup_c, sup_r = B[9], B[10], B[11], B[12], B[13]
    set_free(B, i, gx, gy, fric)
    if not fixed_other:
        return
    vx, vy = vel[i, 0], vel[i, 1]
    if math.sqrt(vx * vx + vy * vy) < max(rest_speed, V_EPS):
        if try_sleep(B, W, G, i, gx, gy, normals, cand, SLEEP_TOUCH, reach):
            return
    bx, by = gravity_on(B, i, gx, gy)
    gn = bx * nx + by * ny
    if gn >= 0.0:
        return
    vn = vx * nx + vy * ny
    if abs(vn) > V_EPS + 1e-12 * math.sqrt(vx * vx + vy * vy):
        return  # it bounced off
    vel[i, 0] = vx - vn * nx
    vel[i, 1] = vy - vn * ny
    mode[i] = SLIDING
    acc[i, 0] = bx - gn * nx
    acc[i, 1] = by - gn * ny
    sup_kind[i] = skind
    sup_idx[i] = sidx
    sup_n[i, 0] = nx
    sup_n[i, 1] = ny
    sup_c[i, 0] = cx
    sup_c[i, 1] = cy
    sup_r[i] = cr


@kernel
def wake(B, G, j, t, gx, gy, fric, todo, ntodo, cand, stack):
    """Wake sleeping ball j and, transitively, the sleepers it holds up (those
    above it within SLEEP_TOUCH_CLUSTER of their radius); release balls
    sliding on any of them. The reach is the widest gap a ball may fall
    asleep across (a cluster ball's, where the solve leaves gaps of that
    order): a sleeper held across it is held by what wakes, and must wake
    with it. (An island of cluster balls falls asleep joined by gaps up to
    LEAVE_GAP, which this does not reach: issue 23. Widening it to LEAVE_GAP
    kept plain piles from ever falling asleep.) Appends every changed ball
    to todo; stack is scratch space for N indices."""
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
        m = grid_candidates(G, B, k, 0.0, cand, SLEEP_TOUCH_CLUSTER)
        for q in range(m):
            s = cand[q]
            if mode[s] == SLIDING and sup_kind[s] == SUP_BALL and sup_idx[s] == k:
                sync(B, s, t)
                set_free(B, s, gx, gy, fric)
                todo[ntodo] = s
                ntodo += 1
                continue
            if mode[s] != ASLEEP:
                continue
            dx, dy = pos[s, 0] - pos[k, 0], pos[s, 1] - pos[k, 1]
            if math.sqrt(dx * dx + dy * dy) > radius[s] + radius[k] + SLEEP_TOUCH_CLUSTER * radius[s]:
                continue
            sx, sy = gravity_on(B, s, gx, gy)  # (what presses it onto k)
            if -(dx * sx + dy * sy) > 0.0:
                mode[s] = FREE
                stack[top] = s
                top += 1
    return ntodo
