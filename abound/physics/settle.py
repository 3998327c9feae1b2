"""Keeping balls inside: the box guard after a part, and pushing overlaps apart after
edits (settle_overlaps).

Part of the event-driven engine (engine.py gathers it; docs/physics.md explains it).
"""
import math

import numpy as np

from ._jit import allocating, kernel
from .constants import BALL_INT, PINNED, P_HEIGHT, P_WIDTH, SEGMENT, WATCH_SLOTS
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
