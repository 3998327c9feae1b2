"""Black holes: attractors that pull every free ball (inverse square, softened), and may swallow it.

A black hole at c with strength GM (px^3/s^2) and softening eps (px) gives a
free ball at p the acceleration GM (c - p) / (|c - p|^2 + eps^2)^(3/2), on top
of gravity. A step with black holes runs as sub-steps of h, each the leapfrog
splitting (kick-drift-kick): every free ball's velocity is kicked by the pull
at its position times h / 2; the exact engine takes an ordinary step of h
(each ball on its parabola under gravity, every contact found and resolved in
time order); a second kick of h / 2 at the new positions ends it. Every
contact is exact for the path that is simulated (between two kicks each ball
is on a parabola, as everywhere else in abound); the pull is held as a kick
at the sub-step's ends instead of as a constant acceleration along it, which
keeps the engine's pairs moving with one acceleration (their relative motion
linear), and makes the scheme symplectic: an orbit's energy oscillates within
O(h^2) but does not drift.

The sub-step: h = dt / k with k the least count for which h is at most
SUBSTEP times the shortest local dynamical time of a free ball,
sqrt((d^2 + eps^2)^(3/2) / GM) (a circular orbit at d takes 2 pi of them), so
the pull changes little along one; at most MAX_SUBSTEPS a step.

Swallowing (``swallow``): after each sub-step, a free ball whose centre lies
within a hole's horizon is taken out and put back, at rest, at the first free
place found near the top of the box (the count stays; where no place is free
it stays where it is). The test is at the sub-steps' ends: a ball that
crosses the horizon and leaves it within one sub-step is not swallowed.
GL-free.
"""
import math
from dataclasses import dataclass

import numpy as np

from abound.physics.checks import segment_distance

SUBSTEP = 0.1           # h at most this times the shortest local dynamical time
MAX_SUBSTEPS = 64       # a step's sub-steps at most
RESPAWN_TRIES = 200     # random places tried for a swallowed ball, from the top down
PLACED_ORBIT = 3.0      # s: a placed hole's pull gives this orbit a quarter of the box's smaller side away
PLACED_SOFTENING = 0.05  # of the box's smaller side


@dataclass
class BlackHole:
    """x, y: px; strength: GM, px^3/s^2; softening: px; horizon: px (0: none); swallow: bool."""

    x: float
    y: float
    strength: float
    softening: float = 10.0
    horizon: float = 0.0
    swallow: bool = False


def place(sim, x, y):
    """A black hole at (x, y) sized to the box, as the demo's middle-click and the saver's
    ``black_hole`` livening place one: a circular orbit a quarter of the box's smaller side
    away takes PLACED_ORBIT s (T = 2 pi sqrt(r^3 / GM)); no horizon. Returns its index."""
    side = min(sim.width, sim.height)
    r = 0.25 * side
    return sim.add_black_hole(x, y, 4.0 * math.pi ** 2 * r ** 3 / PLACED_ORBIT ** 2,
                              softening=PLACED_SOFTENING * side)


def _towards(hole, positions):
    """(d (N, 2) px from each position to the hole, |d|^2 + softening^2 (N,) px^2)."""
    d = np.array([hole.x, hole.y]) - positions
    return d, np.einsum("ij,ij->i", d, d) + hole.softening * hole.softening


def pull(positions, holes):
    """(N, 2) float64 px/s^2: the acceleration every black hole gives a ball at each position."""
    acc = np.zeros_like(positions, dtype=np.float64)
    for h in holes:
        d, r2 = _towards(h, positions)
        acc += d * (h.strength / (r2 * np.sqrt(r2)))[:, None]
    return acc


def substeps(positions, holes, dt):
    """How many sub-steps a step of dt takes (see the module doc)."""
    if not len(positions):
        return 1
    shortest = math.inf
    for h in holes:
        _, r2 = _towards(h, positions)
        shortest = min(shortest, float(np.sqrt(r2.min() ** 1.5 / h.strength)))
    if not math.isfinite(shortest) or shortest <= 0.0:
        return MAX_SUBSTEPS
    return int(min(MAX_SUBSTEPS, max(1, math.ceil(dt / (SUBSTEP * shortest)))))


def step(sim, dt, take):
    """Advance ``sim`` by dt in kick-drift-kick sub-steps; ``take(h)`` takes one ordinary
    step of h (the caller keeps what it returns)."""
    holes = sim.black_holes
    k = substeps(sim.positions[~sim.pinned], holes, dt)
    h = dt / k
    for _ in range(k):
        kick(sim, holes, 0.5 * h)
        take(h)
        kick(sim, holes, 0.5 * h)
        swallow(sim, holes)


def kick(sim, holes, h):
    """Every free ball's velocity += pull x h."""
    free = ~sim.pinned
    if free.any():
        v = sim.velocities.copy()
        v[free] += pull(sim.positions[free], holes) * h
        sim.velocities = v


def swallow(sim, holes, rng=None):
    """Free balls within a swallowing hole's horizon, put back at rest near the top."""
    eaters = [h for h in holes if h.swallow and h.horizon > 0.0]
    if not eaters or not len(sim):
        return 0
    p = sim.positions
    inside = np.zeros(len(sim), dtype=bool)
    for h in eaters:
        inside |= np.hypot(p[:, 0] - h.x, p[:, 1] - h.y) < h.horizon
    inside &= ~sim.pinned
    taken = 0
    rng = rng or np.random.default_rng(len(sim) + int(sim.time * 1000.0))
    for i in np.flatnonzero(inside):
        spot = free_place(sim, i, eaters, rng)
        if spot is None:
            continue
        pos, vel = sim.positions.copy(), sim.velocities.copy()
        pos[i], vel[i] = spot, 0.0
        sim.positions, sim.velocities = pos, vel
        taken += 1
    return taken


def free_place(sim, i, holes, rng):
    """A place for ball i clear of every other ball, wall and horizon: random places tried
    from the top of the box down; None when none is found."""
    r = float(sim.radii[i])
    w, h = sim.width, sim.height
    if 2 * r >= min(w, h):
        return None
    others = np.delete(np.arange(len(sim)), i)
    p, radii = sim.positions[others], sim.radii[others]
    walls = sim.walls
    for t in range(RESPAWN_TRIES):
        depth = (t // 20 + 1) / (RESPAWN_TRIES // 20)  # the top tenth first, then deeper
        x = rng.uniform(r, w - r)
        y = rng.uniform(max(r, h - r - depth * (h - 2 * r)), h - r)
        if len(p) and np.any(np.hypot(p[:, 0] - x, p[:, 1] - y) < radii + r):
            continue
        if len(walls) and np.any(segment_distance(np.array([x, y]), walls[:, :2], walls[:, 2:]) < r):
            continue
        if any(math.hypot(x - b.x, y - b.y) < b.horizon + r for b in holes):
            continue
        return (x, y)
    return None

