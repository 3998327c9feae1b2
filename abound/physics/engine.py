"""TEMPORARY STUB (being replaced by the real event-driven engine): free flight + box reflection."""
import numpy as np

P_GX, P_GY, P_REST_SPEED, P_MIX, P_BALL_TOI, P_WIDTH, P_HEIGHT = range(7)


def settle_overlaps(balls, walls, params):
    pass


def step(balls, walls, params, dt):
    pos, vel, acc = balls[0], balls[1], balls[2]
    radius, mode = balls[4], balls[7]
    m = mode != 3
    pos[m] += vel[m] * dt + 0.5 * acc[m] * dt * dt
    vel[m] += acc[m] * dt
    w, h = params[P_WIDTH], params[P_HEIGHT]
    for ax, size in ((0, w), (1, h)):
        lo = pos[:, ax] < radius
        hi = pos[:, ax] > size - radius
        pos[lo, ax] = radius[lo]
        pos[hi, ax] = size - radius[hi]
        vel[lo | hi, ax] *= -1
    return np.zeros(4, dtype=np.int64)
