"""The grid a tick lists contacts by offers every ball within reach, once.

tick_grid.py enters the balls' places at a tick's time in cells and
answers, for a ball, the balls entered in the cells its reach meets, or
-1 where its reach leaves the grid (the tick then asks the event grid).
What it must not do is miss a ball whose gap to it is within
CLUSTER_REACH x the smaller radius: checked here against every pair, by
brute force, with grains and pegs of other sizes (a peg larger than every
listed ball is entered in several cells), balls in flight (their places
at the tick's time, not at their last sync), pinned balls, and balls far
outside the listed balls' rectangle. Both the plain-Python kernels and the
compiled ones.
"""
import numpy as np
import pytest

from abound.physics.backends import get
from abound.physics.constants import CLUSTER_REACH, PINNED
from abound.physics.world import World

T = 0.37  # s: the tick's time (the balls were synced at 0)


def _balls(seed, n=400):
    """n balls, every second one placed within reach of the one before it
    (at the tick's time), in a random direction, at a random gap up to the
    reach: pairs on the edge of being listed are what a grid could miss."""
    rng = np.random.default_rng(seed)
    world = World(400.0, 300.0)
    radius = rng.choice([0.7, 1.2, 4.0, 9.0], n, p=[0.5, 0.3, 0.15, 0.05])
    pos = rng.uniform([0.0, 0.0], [400.0, 300.0], (n, 2))
    angle = rng.uniform(0.0, 2.0 * np.pi, n // 2)
    a, b = np.arange(0, n, 2), np.arange(1, n, 2)
    gap = rng.uniform(0.0, 1.0, n // 2) ** 0.25 * CLUSTER_REACH * np.minimum(radius[a], radius[b])
    d = radius[a] + radius[b] + gap
    pos[b] = pos[a] + np.stack([np.cos(angle), np.sin(angle)], 1) * d[:, None]
    pinned = rng.random(n) < 0.15
    world.add_balls(pos, np.zeros((n, 2)), radius, radius * radius, np.full(n, 0.5), pinned,
                    np.zeros((n, 4)), (0.0, -980.0))
    B = world.ball_arrays()
    # in flight: synced at 0 where it would be at T now, its place at T the pairs' (a pinned one stays)
    vel = rng.normal(0.0, 30.0, (n, 2))
    acc = np.where(pinned[:, None], 0.0, [0.0, -980.0])
    vel[pinned] = 0.0
    B[1][:] = vel
    B[2][:] = acc
    B[0][:] = pos - (vel + 0.5 * acc * T) * T
    return B, rng


def _places(B, t):
    """Each ball's centre at time t, from its state (a pinned ball stays put)."""
    d = (t - B[3])[:, None]
    moving = (B[7] != PINNED)[:, None]
    return np.where(moving, B[0] + (B[1] + 0.5 * B[2] * d) * d, B[0])


def _grid_module(backend):
    if backend == "fast":
        get("fast")  # (compiles the engine package, tick_grid with it)
        import abound.physics._compiled.tick_grid as grid
        return grid
    import abound.physics.tick_grid as grid
    return grid


def _query_all(grid, B, rng, listed_share):
    """Build a grid for a random listed share of the small moving balls (the
    rest, some far away), query every ball; yields (i, offered or None, within)."""
    n = len(B[4])
    places = _places(B, T)
    far = 2 * rng.choice(n // 2, 10, replace=False)
    far = np.concatenate([far, far + 1])  # (pairs: each has a ball within reach out there)
    jump = np.tile(rng.choice([-1.0, 1.0], (10, 2)) * 5000.0, (2, 1))
    places[far] += jump
    B[0][far] += jump
    movers = np.flatnonzero((B[7] != PINNED) & (B[4] < 2.0))
    order = rng.permutation(movers)[: int(listed_share * len(movers))]
    B[0][order] = places[order]  # (listed balls are synced to the tick)
    B[3][order] = T
    TG = grid.tick_grid_scratch(B, True)
    assert grid.tick_grid_build(TG, B, T, order, len(order))
    cand = np.empty(n, dtype=np.int64)
    for i in range(n):
        saved = B[0][i].copy(), B[3][i]
        B[0][i], B[3][i] = places[i], T
        m = grid.tick_grid_near(TG, B, i, cand)
        B[0][i], B[3][i] = saved
        d = np.hypot(*(places - places[i]).T)
        small = np.minimum(B[4], B[4][i])
        within = np.flatnonzero((d - B[4] - B[4][i] <= CLUSTER_REACH * small) & (np.arange(n) != i))
        yield i, (cand[:m].copy() if m >= 0 else None), within


@pytest.mark.parametrize("backend", ["reference", "fast"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_every_ball_within_reach_is_offered_once(backend, seed):
    grid = _grid_module(backend)
    B, rng = _balls(seed)
    answered, offered = 0, 0
    for i, got, within in _query_all(grid, B, rng, 0.5):
        if got is None:
            continue  # (its reach leaves the grid: the tick asks the event grid)
        assert len(set(got.tolist())) == len(got) and i not in got
        assert set(within.tolist()) <= set(got.tolist()), f"ball {i}: missed {set(within) - set(got)}"
        answered += 1
        offered += len(got)
    # the grid answers most balls, and it is a grid, not a list of everything
    assert answered > 0.5 * len(B[4])
    assert offered < 0.2 * answered * len(B[4])


def test_a_query_that_leaves_the_grid_is_not_answered():
    grid = _grid_module("reference")
    B, rng = _balls(4)
    far = [i for i, got, within in _query_all(grid, B, rng, 0.05) if got is None]
    assert far  # (the 20 far balls at least)
