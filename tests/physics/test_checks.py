"""The invariant measures of abound.physics.checks against a brute-force re-computation and known cases."""
import math

import numpy as np
import pytest

from abound import Simulation
from abound.physics import checks


def brute_max_overlap(pos, r, free, width, height, segments):
    """Every pair, every ball against the box and every segment, with plain Python."""
    worst = 0.0
    n = len(pos)
    for i in range(n):
        x, y = pos[i]
        if free[i]:
            worst = max(worst, (r[i] - x) / r[i], (x + r[i] - width) / r[i],
                        (r[i] - y) / r[i], (y + r[i] - height) / r[i])
            for x0, y0, x1, y1 in segments:
                dx, dy = x1 - x0, y1 - y0
                u = min(1.0, max(0.0, ((x - x0) * dx + (y - y0) * dy) / (dx * dx + dy * dy)))
                worst = max(worst, (r[i] - math.hypot(x - x0 - u * dx, y - y0 - u * dy)) / r[i])
        for j in range(i + 1, n):
            if free[i] or free[j]:
                d = math.hypot(x - pos[j][0], y - pos[j][1])
                worst = max(worst, (r[i] + r[j] - d) / min(r[i], r[j]))
    return worst


@pytest.mark.parametrize("seed", range(12))
def test_grid_overlap_equals_brute_force(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 150))
    width, height = 400.0, 300.0
    r = rng.uniform(1.0, 6.0, n)
    if seed % 3 == 0:
        r[:4] = rng.uniform(20.0, 60.0, min(4, n))  # a few big balls among small ones
    pos = np.column_stack([rng.uniform(-10, width + 10, n), rng.uniform(-10, height + 10, n)])
    free = rng.random(n) > 0.2
    segments = rng.uniform(0.0, 300.0, (3, 4))
    got = checks.max_overlap(pos, r, free, width, height, segments[:, :2], segments[:, 2:])
    assert got == pytest.approx(brute_max_overlap(pos, r, free, width, height, segments), abs=1e-12)


def test_known_overlaps_through_the_simulation():
    sim = Simulation(1000, 1000)
    sim.add_ball(100.0, 100.0, radius=10.0)
    sim.add_ball(117.0, 100.0, radius=8.0)        # 10 + 8 - 17 = 1 px: 1/8 of the smaller radius
    sim.add_ball(500.0, 500.0, radius=10.0)
    sim.positions[2] = (500.0, 995.0)             # 5 px into the top: 1/2 (add_ball refuses it there)
    assert sim.max_overlap() == pytest.approx(0.5)
    sim.positions[2] = (500.0, 500.0)
    assert sim.max_overlap() == pytest.approx(1 / 8)
    sim.add_wall(600.0, 400.0, 600.0, 600.0)
    sim.positions[2] = (607.0, 450.0)             # 3 px over the wall's face: 3/10
    assert sim.max_overlap() == pytest.approx(0.3)
    sim.positions[1] = (100.0, 300.0)
    sim.positions[2] = (500.0, 500.0)
    assert sim.max_overlap() == 0.0


def test_pinned_pairs_and_pinned_balls_in_walls_do_not_count():
    pos = np.array([[10.0, 10.0], [15.0, 10.0], [3.0, 50.0]])
    r = np.array([5.0, 5.0, 5.0])
    assert checks.max_overlap(pos, r, [False, False, False], 100, 100) == 0.0
    assert checks.max_overlap(pos, r, [True, False, False], 100, 100) == pytest.approx(1.0)
    assert checks.max_overlap(pos, r, [False, False, True], 100, 100) == pytest.approx(2 / 5)


def test_dense_lattice_of_fine_balls_with_pegs():
    # 40,000 touching-but-not-overlapping balls plus big pegs in gaps: exactly zero, then one planted overlap
    k = 200
    xs, ys = np.meshgrid(np.arange(k) * 2.0 + 1.0, np.arange(k) * 2.0 + 1.0)
    pos = np.column_stack([xs.ravel(), ys.ravel()])
    r = np.full(len(pos), 1.0)
    pos = np.vstack([pos, [[1000.0, 1000.0], [1100.0, 1000.0]]])
    r = np.append(r, [40.0, 40.0])
    free = np.ones(len(pos), bool)
    assert checks.max_overlap(pos, r, free, 2000, 2000) == pytest.approx(0.0, abs=1e-12)
    pos[-1] = (1079.0, 1000.0)                    # the pegs overlap by 1 px: 1/40
    assert checks.max_overlap(pos, r, free, 2000, 2000) == pytest.approx(1 / 40)
    pos[500] += (0.0, 0.5)                        # a fine ball 0.5 px into its neighbour: 1/2
    assert checks.max_overlap(pos, r, free, 2000, 2000) == pytest.approx(0.5)


def test_escaped_counts_centres_outside_and_nan():
    pos = np.array([[5.0, 5.0], [-0.1, 5.0], [5.0, 100.5], [np.nan, 1.0], [100.0, 100.0]])
    assert checks.escaped(pos, 100, 100) == 3
    assert checks.max_overlap(pos, np.ones(5), np.ones(5, bool), 100, 100) == math.inf
