"""Prediction: a ball's next events (walls, pairs, leaving a support, stopping), and the
first pass that predicts every ball at the start of a part.

Part of the event-driven engine (engine.py gathers it; docs/physics.md explains it).
"""
import math

from ._jit import allocating, inlined, kernel
from .kernels import ANALYTIC, TOUCH_REL, V_EPS, level_exit_time, line_toi, pair_toi
from .roots import INF
from .constants import (
    BALL_INT, BOX_LINE, CLUSTER, EV_BALL, EV_LEAVE, EV_WALL, HOP_GAP, MAX_CELLS_PER_BALL, ROLLING, SLIDING,
    SUP_BALL, SUP_END, SUP_FACE, S_STOPPED, S_WORK,
)
from .motion import is_fixed, motion_at
from .queue import heap_push, heap_reserve
from .grid import (
    _axis_range, _cell_span, boxes_meet, grid_cell_balls, grid_enter, grid_reserve, keep_box,
    kept_box, mark_moving, moving_near, swept_box,
)


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
                        # at an end itself: the end point's contact; so too a resting
                        # contact now within touch of an end the ball is moving off (its
                        # centre a round-off inside: it had been held there for ever)
                        ut = wt[w, 0] * vx + wt[w, 1] * vy
                        leaving = tc == 0.0 and resting and ((u >= wlen[w] - touch and ut > V_EPS)
                                                             or (u <= touch and ut < -V_EPS))
                        if 0.0 < u < wlen[w] and not leaving:
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


@kernel
def settled(mode):
    """Fixed, or in a contact cluster: a cluster ball's contacts with fixed
    things and with other cluster balls are the ticks' (clusters.py), not
    the events'."""
    return is_fixed(mode) or mode == CLUSTER


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
    # (a cluster ball is predicted at a tick, whose solve listed its fixed
    # neighbours; one fixed since then predicts its own pairs)
    cluster_i = mode[i] == CLUSTER
    if cluster_i and not moving_near(G, cells):
        return 0  # (its pairs with balls that move free are found from their side)
    if not fixed_i and not cluster_i:
        mark_moving(G, cells)
        predict_walls(B, W, H, i, t, h, kept_box(G, i))
        if mode[i] == SLIDING:
            predict_leave(B, W, H, i, t, h)
        elif mode[i] == ROLLING:
            predict_stop(B, H, i, t, h)
    m = grid_cell_balls(G, i, cells, cand, box, True)
    for k in range(m):
        j = cand[k]
        if (fixed_i and is_fixed(mode[j])) or (cluster_i and settled(mode[j])):
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
        if not settled(mode[i]):
            if H[2][0] + nwalls + 2 > len(H[0]):
                return False
            mark_moving(G, (span[i, 0], span[i, 1], span[i, 2], span[i, 3]))
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
            settled_i = settled(mode[i])
            # the boxes first, without a branch (see boxes_meet): the balls
            # whose boxes meet i's are collected, then tested further
            met = 0
            for q in range(BALL_INT(p + 1), BALL_INT(hi)):
                j = cell_ball[q]
                cand[met] = j
                met += boxes_meet(kept, j, box)
            for q in range(met):
                j = cand[q]
                if settled_i and settled(mode[j]):
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
            if j == i or (is_big[j] and j < i) or (settled(mode[i]) and settled(mode[j])):
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
