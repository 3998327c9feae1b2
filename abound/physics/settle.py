"""Keeping balls inside: the box guard after a part, and pushing overlaps apart after
edits (settle_overlaps).

Part of the event-driven engine (engine.py gathers it; docs/physics.md explains it).
"""
import math

import numpy as np

from ._jit import allocating, kernel
from .constants import BALL_INT, PINNED, P_GX, P_GY, P_HEIGHT, P_WIDTH, SEGMENT, WATCH_SLOTS
from .grid import grid_candidates, grid_new
from .rest import segment_closest


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
    Iterated projection, heavier balls moving less (but at least a quarter
    of a push: LEAST_SHARE), pinned not at all;
    coincident centres separate along a direction set by their indices; balls
    across an interior segment move off it. A ball the projection cannot
    take off the fixed things it overlaps (wider than a slot between two
    walls, than the gap between two pegs: each push drives it into the
    other) is moved to the nearest place clear of them (_escape), and the
    projection runs again."""
    radius = B[4]
    n = len(radius)
    width, height = params[P_WIDTH], params[P_HEIGHT]
    # Balls outside the box (it shrank) come back in, each at its own depth
    # up to a radius inside the side: clamped onto the side's line, a column
    # of them would lie exactly in line, pushed apart only along it, and
    # more than fit there would never spread into the box.
    for i in range(n):
        clamp_ball_into_box(B, i, width, height, radius[i] * ((0.6180339887498949 * (i + 1)) % 1.0))
    if n == 0:
        return
    cand = np.empty(n, dtype=BALL_INT)
    watch, reach = np.zeros(n, dtype=np.int8), np.zeros(2 * WATCH_SLOTS)  # (nothing watched)
    placed = B[0].copy()  # (where the user put them: the first escape looks from there)
    for attempt in range(ESCAPES + 1):
        if _push_apart(B, W, width, height, cand, watch, reach) <= 1e-9 or attempt == ESCAPES:
            break  # (apart: nothing to escape from)
        G = grid_new(B, width, height, 0.0, watch, reach)
        if attempt > 0:
            placed[:, :] = B[0]  # (from where the last escape and projection left them)
        moved = False
        for i in range(n):
            moved |= _escape(B, W, G, i, placed[i, 0], placed[i, 1], width, height, params[P_GX], params[P_GY], cand)
        if not moved:
            break


# how many times settle_overlaps moves the balls the projection leaves on
# fixed things, and projects again (each time, balls it pushed back on may
# need it again: a ball moved clear of a peg, then pushed by its neighbours)
ESCAPES = 3
# the least share of a push apart a ball takes, whatever the masses (_push_apart):
# 3 to 1 and beyond move alike; an overlap against walls then shrinks to
# (1 - 1/4)^200, 1e-25 of itself, within the passes
LEAST_SHARE = 0.25
RING_STEP = 1.189207115002721  # 2^(1/4): _escape's rings, four to a doubling of the distance


@allocating
def _push_apart(B, W, width, height, cand, watch, reach):
    """settle_overlaps' projection: at most 200 passes over every
    overlapping pair and every ball on a segment, until none overlaps by
    more than 1e-9 of its radius; returns the deepest overlap it left, /
    radius."""
    pos, radius, inv_mass, mode = B[0], B[4], B[5], B[7]
    n = len(radius)
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
                if wi > 0.0 and wj > 0.0 and min(si, sj) < LEAST_SHARE * push:
                    # heavier moving less, but at least LEAST_SHARE of the push: a light
                    # ball wedged on walls under a heavy one 1,000 times its mass moved the
                    # heavy one by 1/1001 of their overlap a pass and was pushed straight
                    # back, and 200 passes left it overlapping (a fuzzer's find)
                    least = LEAST_SHARE * push
                    si, sj = (least, push - least) if si < sj else (push - least, least)
                pos[i, 0] -= si * dx / d
                pos[i, 1] -= si * dy / d
                pos[j, 0] += sj * dx / d
                pos[j, 1] += sj * dy / d
        worst = max(worst, push_off_segments(B, W))
        clamp_into_box(B, width, height)
        if worst <= 1e-9:
            break
    return worst


@kernel
def _fixed_overlap(B, W, G, i, x, y, cand):
    """How deep ball i would overlap the fixed things (interior segments,
    pinned balls; not the box's sides) with its centre at (x, y), as a fraction
    of its radius (negative: that far clear of all of them), and the sum of
    the unit pushes off those it overlaps (nx, ny)."""
    pos, radius, mode = B[0], B[4], B[7]
    wc, wkind = W[5], W[7]
    r = radius[i]
    deepest, nx, ny = -math.inf, 0.0, 0.0
    for w in range(len(wc)):
        if wkind[w] != SEGMENT:
            continue  # (the box's sides: _clear)
        cx, cy = segment_closest(W, w, x, y)
        dx, dy = x - cx, y - cy
        d = math.sqrt(dx * dx + dy * dy)
        over = (r - d) / r
        if over > 0.0 and d > 0.0:
            nx += dx / d
            ny += dy / d
        deepest = max(deepest, over)
    px, py = pos[i, 0], pos[i, 1]
    pos[i, 0], pos[i, 1] = x, y  # (the grid's query is about ball i where it would be)
    m = grid_candidates(G, B, i, 0.0, cand)
    pos[i, 0], pos[i, 1] = px, py
    for q in range(m):
        j = cand[q]
        if mode[j] != PINNED:
            continue
        dx, dy = x - pos[j, 0], y - pos[j, 1]
        d = math.sqrt(dx * dx + dy * dy)
        over = (r + radius[j] - d) / r
        if over > 0.0 and d > 0.0:
            nx += dx / d
            ny += dy / d
        deepest = max(deepest, over)
    return deepest, nx, ny


@kernel
def _escape(B, W, G, i, x0, y0, width, height, gx, gy, cand):
    """Move ball i, if it still overlaps a fixed thing by more than 1e-9 of
    its radius, to the nearest place found clear of them all from (x0, y0)
    (where it was put: the projection may have left it anywhere along its
    round of pushes), on rings
    (distances r / 8 x RING_STEP^k, 32 directions, from the nearest to
    the sum of the pushes off what it overlaps, or up against gravity where
    they cancel); on the first ring with a clear place, each clear
    direction is followed in to where it stops being clear (bisection),
    and the nearest of those is taken (a ball wider than a slot between two
    level walls leaves it on the nearer side, square to the walls). Other
    balls are not looked at: the projection pushes them apart after.
    Returns whether it moved."""
    pos, radius, mode = B[0], B[4], B[7]
    r = radius[i]
    if mode[i] == PINNED or 2.0 * r > min(width, height):
        return False  # (a ball wider than the box is held on its middle line)
    if _fixed_overlap(B, W, G, i, pos[i, 0], pos[i, 1], cand)[0] <= 1e-9:
        return False
    nx, ny = _fixed_overlap(B, W, G, i, x0, y0, cand)[1:]
    if nx * nx + ny * ny > 1e-12:
        aim = math.atan2(ny, nx)
    elif gx != 0.0 or gy != 0.0:
        aim = math.atan2(-gy, -gx)
    else:
        aim = 0.5 * math.pi
    far = 2.0 * math.sqrt(width * width + height * height)
    near, d = 0.0, r * 0.125
    while True:
        if d > far:
            return False
        best, bx, by = math.inf, x0, y0
        for s in range(32):
            step = (s + 1) // 2 if s % 2 == 1 else -(s // 2)  # 0, 1, -1, 2, -2, ..., 16
            a = aim + step * (2.0 * math.pi / 32.0)
            c, sn = math.cos(a), math.sin(a)
            if not _clear(B, W, G, i, x0 + d * c, y0 + d * sn, width, height, cand):
                continue
            lo, hi = near, d  # (the ring before found nothing clear: the edge lies between)
            for _ in range(30):
                mid = 0.5 * (lo + hi)
                if _clear(B, W, G, i, x0 + mid * c, y0 + mid * sn, width, height, cand):
                    hi = mid
                else:
                    lo = mid
            if hi < best:
                best, bx, by = hi, x0 + hi * c, y0 + hi * sn
        if best < math.inf:
            pos[i, 0], pos[i, 1] = bx, by
            return True
        near, d = d, d * RING_STEP


@kernel
def _clear(B, W, G, i, x, y, width, height, cand):
    """Whether ball i, centred at (x, y), lies inside the box and clear of
    every fixed thing by 1e-9 of its radius."""
    r = B[4][i]
    inside = r * (1.0 - 1e-9)  # (a place on the box's line, less round-off: clamp_into_box puts it back)
    return (inside <= x <= width - inside and inside <= y <= height - inside
            and _fixed_overlap(B, W, G, i, x, y, cand)[0] < -1e-9)


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
