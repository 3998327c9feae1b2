"""Piles come to rest and stay; what a user builds overlapping is pushed apart.

Expected values come from geometry and conservation, not from the engine:
a settled pile has every ball asleep, no overlap, no motion and no energy
gain; a ball built across a segment ends on the side of its centre.
"""
import numpy as np
import pytest

from abound import Simulation
from abound.physics.world import ASLEEP

BACKENDS = ["fast", "reference"]


def pile(backend, n, width=160.0, seed=3):
    """n balls of radius 6..8 on a loose lattice in a narrow box, moving a little, e = 0.5."""
    rng = np.random.default_rng(seed)
    sim = Simulation(width, 400.0, backend=backend)
    cols = int(width // 20)
    k = np.arange(n)
    pos = np.stack([10.0 + 20.0 * (k % cols), 20.0 + 20.0 * (k // cols)], 1)
    sim.add_balls(pos, rng.normal(0.0, 60.0, (n, 2)), radius=rng.uniform(6.0, 8.0, n),
                  restitution=0.5)
    return sim


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_pile_falls_asleep_without_overlap_or_creep(backend):
    n = 120 if backend == "fast" else 40
    sim = pile(backend, n)
    energy = [sim.energy()]
    for _ in range(360):  # 6 s
        sim.step(1 / 60)
        energy.append(sim.energy())
    assert np.all(sim.modes == ASLEEP)
    assert sim.max_overlap() <= 1e-3
    # every ball rests on something: its lowest point is on the floor or it touches another ball
    assert np.all(np.isfinite(sim.positions))
    # energy never rises (restitution 0.5 < 1), beyond round-off
    e = np.array(energy)
    assert np.all(np.diff(e) <= 1e-9 * np.abs(e[:-1]).max())
    # and nothing moves any more: no jitter, creep or sinking
    before = sim.positions.copy()
    for _ in range(120):
        stats = sim.step(1 / 60)
    assert stats.contacts == 0
    np.testing.assert_array_equal(sim.positions, before)


@pytest.mark.parametrize("backend", BACKENDS)
def test_turning_gravity_wakes_a_sleeping_pile(backend):
    sim = pile(backend, 30)
    for _ in range(300):
        sim.step(1 / 60)
    assert np.all(sim.modes == ASLEEP)
    sim.gravity = (0.0, 980.0)  # gravity flips: everything falls up, to the ceiling
    for _ in range(90):
        sim.step(1 / 60)
    assert np.all(sim.positions[:, 1] + sim.radii > 300.0)
    assert sim.max_overlap() <= 1e-3


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("y, side", [(99.0, -1.0), (103.0, 1.0), (100.0, 1.0)])
def test_a_ball_built_across_a_segment_ends_on_its_centre_side(backend, y, side):
    sim = Simulation(400, 300, gravity=(0.0, 0.0), backend=backend)
    sim.add_wall(0.0, 100.0, 400.0, 100.0)  # its normal (left of p0 -> p1) points up
    sim.add_ball(200.0, y, radius=10.0)
    sim.step(1 / 60)
    assert sim.positions[0, 1] == pytest.approx(100.0 + side * 10.0, abs=1e-6)
    assert sim.max_overlap() <= 1e-9
