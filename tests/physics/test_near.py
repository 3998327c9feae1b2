"""The ticks' point grid (abound/physics/near.py) against a brute-force search.

Whatever the cell sizes, the classes and the hash, a query must hand on
every ball within reach (r_i + r_j + CLUSTER_REACH x the smaller radius) of
where it stands at the tick, and nothing farther than the round-off margin
beyond: the clusters' listing relies on it (a contact not listed is farther
than reach). Checked on both backends with radii from 0.6 to 30 px.
"""
import importlib

import numpy as np
import pytest

from abound.physics import backends
from abound.physics.constants import CLUSTER_REACH, FROZEN, SLIDING
from closed_form import BACKENDS


def _near(backend):
    backends.get(backend)
    package = "abound.physics._compiled" if backend == "fast" else "abound.physics"
    return importlib.import_module(package + ".near")


def _balls(seed):
    """Balls of three sizes in a 200 x 150 px box, flying (on parabolas from t = 0) and fixed."""
    rng = np.random.default_rng(seed)
    radius = np.concatenate([rng.uniform(0.6, 0.8, 500), rng.uniform(2.0, 5.0, 60), rng.uniform(10.0, 30.0, 6)])
    n = len(radius)
    pos = rng.uniform([0.0, 0.0], [200.0, 150.0], (n, 2))
    vel = rng.normal(0.0, 20.0, (n, 2))
    acc = np.tile([0.0, -980.0], (n, 1))
    tloc = rng.uniform(0.0, 0.01, n)
    mode = np.where(rng.random(n) < 0.2, FROZEN, SLIDING).astype(np.int8)  # (FROZEN: fixed, where it is)
    return (pos, vel, acc, tloc, radius, np.zeros(n), np.zeros(n), mode)


def _at(B, t):
    """Where each ball stands at time t (as motion_at puts it)."""
    pos, vel, acc, tloc, mode = B[0], B[1], B[2], B[3], B[7]
    d = (t - tloc)[:, None]
    moved = pos + (vel + 0.5 * acc * d) * d
    return np.where((mode == FROZEN)[:, None], pos, moved)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("seed", [0, 1])
def test_a_query_finds_every_ball_within_reach_and_none_beyond(backend, seed):
    near = _near(backend)
    B = _balls(seed)
    n, t = len(B[4]), 0.02
    radius = B[4]
    NG = near.near_scratch(n)
    near.near_build(B, NG, t, float(radius.min()))
    xy = _at(B, t)
    cand = np.empty(n, dtype=np.int64)
    asked = 0
    for i in range(n):
        m = near.near_balls(NG, i, xy[i, 0], xy[i, 1], radius[i], cand)
        dist = np.hypot(*(xy - xy[i]).T)
        reach = radius[i] + radius + CLUSTER_REACH * np.minimum(radius[i], radius)
        if m < 0:  # left to the event grid: only a ball far larger than the smallest class's
            assert radius[i] > 10.0
            continue
        asked += 1
        found = cand[:m]
        assert len(set(found.tolist())) == m, "a ball handed on twice"
        within = np.flatnonzero((dist <= reach) & (np.arange(n) != i))
        assert set(within.tolist()) <= set(found.tolist()), i
        assert np.all(dist[found] <= reach[found] * (1.0 + 2e-9)) and i not in found
    assert asked >= n - 6  # (the six large balls may be left to the event grid; no other)
