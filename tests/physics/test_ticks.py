"""The clusters' tick levels (abound/physics/ticks.py), against values worked by hand,
and both engines taking the same adapted ticks."""
import numpy as np
import pytest

import abound
from placing import scattered
from abound.physics.ticks import next_level, tick_length, warm_share


def test_a_busy_solve_shortens_the_ticks_an_idle_one_lengthens_them():
    # TICK_BUSY 5, TICK_IDLE 2 updates a contact; levels 0 (2 ms) to 6
    assert next_level(0, 5001, 1000) == 1
    assert next_level(3, 5000, 1000) == 3  # (5 a contact: not more than 5)
    assert next_level(3, 2000, 1000) == 3  # (2 a contact: not fewer than 2)
    assert next_level(3, 1999, 1000) == 2
    assert next_level(6, 10 ** 9, 1000) == 6  # (a budget run out: still the shortest)
    assert next_level(0, 0, 1000) == 0
    # a step with no solve (a heap asleep or gone) goes back up towards 2 ms
    assert next_level(6, 0, 0) == 5


def test_tick_lengths_and_warm_shares():
    # 2 ms x 0.8^level; the warm share 0.7 per 2 ms: 0.7^(0.8^level)
    assert tick_length(0) == 0.002
    assert tick_length(1) == pytest.approx(0.0016, rel=1e-12)
    assert tick_length(6) == pytest.approx(0.000524288, rel=1e-12)
    assert warm_share(0) == 0.7
    # per second the same share: (share per tick)^(ticks a second)
    for level in range(7):
        assert warm_share(level) ** (1.0 / tick_length(level)) == pytest.approx(0.7 ** 500.0, rel=1e-9)


def _heap(backend):
    """60 balls dropped into a V, solved as contact clusters (from about 0.4 s
    most of them: a heap in the V by 0.6 s)."""
    sim = abound.Simulation(400, 300, gravity=(0.0, -980.0), backend=backend, contact_clusters=True,
                            rest_speed=10.0, threads=1)
    sim.add_wall(50, 250, 200, 40, restitution=0.3)
    sim.add_wall(350, 250, 200, 40, restitution=0.3)
    sim.add_balls(scattered(60, [150.0, 120.0], [250.0, 280.0], 10.5, seed=3), radius=5.0, restitution=0.3)
    return sim


@pytest.mark.parametrize("level", [0, 3, 6])
def test_both_engines_take_the_same_ticks_and_agree(level, monkeypatch):
    # the level is held (the policy is Python, shared); the engines must give
    # the same state bit for bit at every tick length, the reference running
    # the same source as Python
    monkeypatch.setattr(abound.simulation, "next_level", lambda lvl, updates, solved: level)
    sims = [_heap("reference"), _heap("fast")]
    for sim in sims:
        sim._tick_level = level
        for _ in range(40):
            sim.step(1 / 60)
    assert np.sum(sims[0].modes == abound.simulation.CLUSTER) > 10  # (the heap is a cluster)
    np.testing.assert_array_equal(sims[0].positions, sims[1].positions)
    np.testing.assert_array_equal(sims[0].velocities, sims[1].velocities)


def test_the_level_follows_the_solves_on_both_engines():
    # unheld, both engines move the level the same way, step by step
    levels = []
    for backend in ("reference", "fast"):
        sim = _heap(backend)
        sim._tick_level = 6
        seen = []
        for _ in range(40):
            sim.step(1 / 60)
            seen.append(sim._tick_level)
        levels.append(seen)
    assert levels[0] == levels[1]
    assert min(levels[0]) < 6  # (a small heap's solves are cheap: its ticks lengthen)
