"""Per-ball motion: clocks and syncing (each ball exact at its own time, a parabola after
it), the modes a ball flies in (free, rolling on a table), and where a ball is at a time.

Part of the event-driven engine (engine.py gathers it; docs/physics.md explains it).
"""
import math

from ._jit import kernel
from .constants import ASLEEP, FREE, FROZEN, PINNED, ROLLING, SUP_NONE


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
def gravity_on(B, i, gx, gy):
    """(ax, ay) px/s^2: what free ball i falls with, gravity (gx, gy) plus its
    field (the working copy's P[19], strips.gather: a black hole's pull, held
    constant for a sub-step by attractors.py; 0 without one). Whatever the
    engine takes gravity for - flight, sliding, support, a tick's kick - it
    takes this for ball i."""
    f = B[19]
    return gx + f[i, 0], gy + f[i, 1]


@kernel
def set_free(B, i, gx, gy, fric):
    """Ball i flies free: under gravity (gx, gy) and its field (gravity_on),
    or on a level table with rolling friction (fric > 0, px/s^2: then
    gravity is 0, and attractors.py holds no field) slowing it at fric
    along its velocity until it stops (mode ROLLING, see roll)."""
    acc, mode, count, sup_kind, sup_idx = B[2], B[7], B[8], B[9], B[10]
    mode[i] = FREE
    acc[i, 0], acc[i, 1] = gravity_on(B, i, gx, gy)
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
