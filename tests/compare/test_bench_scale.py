"""Invariants at scale (issue 3, item 8): a 10,000-ball hot gas stepped a few frames by the fast backend.

The scene is the benchmark's hot gas (configs/hot_gas.toml: radius 3, speeds
750..1500 px/s, restitution 1, 1920x1080, gravity 980 px/s^2), built here on
a jittered lattice so that the test does not depend on the random placement.
No wall-clock limits: only the physics is checked.
"""
import math

import numpy as np
import pytest

from abound import Simulation
from abound.physics.checks import escaped

N, R, W, H, G = 10_000, 3.0, 1920.0, 1080.0, 980.0
V_MIN, V_MAX = 750.0, 1500.0
FRAMES = 3


def hot_gas(seed=1):
    rng = np.random.default_rng(seed)
    cols, rows = 134, 75                 # 10,050 cells of 14.3 x 14.4 px
    sx, sy = W / cols, H / rows
    ij = np.array([(i, j) for j in range(rows) for i in range(cols)])[:N]
    jitter = rng.uniform(-3.0, 3.0, (N, 2))  # cells minus jitter still leave > 2R between centres
    pos = (ij + 0.5) * (sx, sy) + jitter
    speed = rng.uniform(V_MIN, V_MAX, N)
    angle = rng.uniform(0.0, 2.0 * math.pi, N)
    vel = np.column_stack([speed * np.cos(angle), speed * np.sin(angle)])
    sim = Simulation(W, H, gravity=(0.0, -G), backend="fast")
    sim.add_balls(pos, vel, radius=R, restitution=1.0)
    return sim


@pytest.fixture(scope="module")
def stepped():
    pytest.importorskip("numba")
    sim = hot_gas()
    assert sim.max_overlap() == 0.0  # the lattice start is overlap-free
    e0 = sim.energy()
    stats = [sim.step(1.0 / 60.0) for _ in range(FRAMES)]
    return sim, e0, stats


def test_no_nan_and_no_ball_leaves_the_box(stepped):
    sim, _, _ = stepped
    assert len(sim) == N
    assert np.all(np.isfinite(sim.positions)) and np.all(np.isfinite(sim.velocities))
    assert escaped(sim.positions, W, H) == 0
    # the whole disc inside, up to the overlap bound below
    p = sim.positions
    assert np.all(p >= R - 1e-6 * R) and np.all(p <= np.array([W, H]) - R + 1e-6 * R)


def test_overlaps_stay_below_a_millionth_of_the_radius(stepped):
    sim, _, stats = stepped
    # the scene really is busy: thousands of collisions per frame, walls included
    assert all(s.ball_ball > 1000 and s.ball_wall > 10 for s in stats)
    assert sum(s.frozen for s in stats) == 0
    assert sim.max_overlap() <= 1e-6


def test_energy_does_not_rise(stepped):
    sim, e0, stats = stepped
    e1 = sim.energy()
    assert e1 <= e0 * (1 + 1e-9)  # elastic: constant but for rounding ...
    # ... and only contacts slower than the rest speed are inelastic (by design): each loses at most
    # (1/2) m rest_speed^2 (a wall; (1/2)(m/2) rest_speed^2 between two equal balls)
    m = math.pi * R * R
    contacts = sum(s.contacts for s in stats)
    assert e0 - e1 <= contacts * 0.5 * m * sim.rest_speed ** 2


def test_benchmark_scene_files_are_the_issues_scenes():
    from pathlib import Path
    from abound.scene import load_scene
    configs = Path(__file__).resolve().parents[2] / "configs"
    gas = load_scene(configs / "hot_gas.toml")
    assert (gas["world"]["width"], gas["world"]["height"], gas["world"]["gravity"]) == (W, H, [0.0, -G])
    assert gas["world"]["wall_restitution"] == 1.0
    [group] = gas["spawn"]
    # (a number in a scene file is the range [number, number])
    assert (group["count"], group["radius"], group["speed"], group["restitution"]) == (
        N, [R, R], [V_MIN, V_MAX], [1.0, 1.0])
    assert group["angle"] == [0.0, 360.0]
    pile = load_scene(configs / "pile.toml")
    assert (pile["world"]["width"], pile["world"]["height"], pile["world"]["gravity"]) == (W, H, [0.0, -G])
    [group] = pile["spawn"]
    assert (group["count"], group["radius"], group["speed"], group["restitution"]) == (
        N, [4.0, 4.0], [0.0, 0.0], [0.5, 0.5])
