"""The contacts a step resolved, as data (Simulation.step(contacts=True)).

Part of the event-driven engine (engine.py gathers it; docs/physics.md explains it).
"""
import numpy as np

from ._jit import allocating, kernel


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
