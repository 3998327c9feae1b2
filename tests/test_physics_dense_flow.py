"""Dense flow: frictionless balls slide off slopes and pour through funnels.

A frictionless ball can rest only where gravity lies within the cone of its
contact normals; on a slope it slides with acceleration g sin(theta), alone or
in a layer. The checks here come from that and from conservation of momentum,
not from the engine: the closed-form slide time of a lone ball; the centre of
mass of a clump on a slope, whose only forces along the slope are gravity's
(the slope pushes along its normal, the balls push one another in pairs); the
shipped scenes, whose balls must all end below the slopes and pegs that
cannot hold them; and heaps that can hold themselves, which must not creep.
"""
import math
from importlib import resources

import numpy as np
import pytest

import abound
from abound.physics.world import ASLEEP, PINNED
from closed_form import BACKENDS

G = 980.0


def _slope(sim, theta_deg, top, length):
    """Add a segment falling to the right at theta from top; returns (unit
    tangent down the slope, unit normal up from it, end point)."""
    th = math.radians(theta_deg)
    t = np.array([math.cos(th), -math.sin(th)])
    n = np.array([math.sin(th), math.cos(th)])
    end = np.asarray(top) + length * t
    sim.add_wall(*top, *end, restitution=0.5)
    return t, n, end


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("theta", [2.0, 10.0, 35.0, 60.0])
def test_a_lone_ball_slides_off_a_segment_in_the_closed_form_time(backend, theta):
    # a ball at rest on the slope, 20 px below its top end: it reaches the
    # lower end (its contact point passes it) after sqrt(2 L / (g sin theta))
    r, length, u0 = 5.0, 400.0, 20.0
    sim = abound.Simulation(1000, 1000, gravity=(0.0, -G), backend=backend)
    top = np.array([100.0, 900.0])
    t, n, end = _slope(sim, theta, top, length)
    sim.add_ball(*(top + u0 * t + r * (1.0 + 1e-9) * n), radius=r, restitution=0.5)
    L = length - u0
    T = math.sqrt(2.0 * L / (G * math.sin(math.radians(theta))))

    def along():  # where the contact point is along the segment, from its top
        return float((sim.positions[0] - top) @ t)

    sim.step(0.5 * T)
    assert along() - u0 == pytest.approx(0.25 * L, rel=0.01)  # s = g sin(theta) t^2 / 2
    assert sim.modes[0] != ASLEEP
    sim.step(0.49 * T)
    assert along() < length, "it left the slope before 0.99 T"
    sim.step(0.02 * T)
    assert along() > length, "it was still on the slope at 1.01 T"


def _clump_on_a_slope(backend, count, theta):
    sim = abound.Simulation(1400, 900, gravity=(0.0, -G), backend=backend)
    top = np.array([60.0, 860.0])
    t, n, end = _slope(sim, theta, top, 1300.0)
    rng = np.random.default_rng(11)
    placed = []
    while len(placed) < count:  # a clump over the slope's first 200 px, up to 80 px above it
        u, h = rng.uniform([40.0, 6.0], [240.0, 86.0])
        p = top + u * t + h * n
        if all(np.hypot(*(p - q)) > 10.2 for q in placed):
            placed.append(p)
    sim.add_balls(np.array(placed), radius=5.0, restitution=0.5)
    return sim, top, t, end


def test_both_backends_solve_a_small_clump_alike():
    # the reference backend runs the same solver code as the compiled one:
    # 12 balls dropped on the slope end in the same state, bit for bit
    runs = []
    for backend in BACKENDS:
        sim, *_ = _clump_on_a_slope(backend, 12, 20.0)
        for _ in range(30):
            sim.step(1 / 60)
        runs.append((sim.positions.copy(), sim.velocities.copy(), sim.modes.copy()))
    for a, b in zip(*runs):
        assert np.array_equal(a, b)


def test_a_clump_on_a_slope_slides_as_a_group_at_g_sin_theta(backend="fast"):
    # 50 balls dropped on a 20 degree frictionless slope: gravity is the only
    # force along the slope (the slope pushes along its normal, the balls push
    # one another in equal and opposite pairs), so the centre of mass moves
    # along the slope at g sin(theta) whatever the balls do among themselves,
    # and no ball can stop on it
    theta = 20.0
    sim, top, t, end = _clump_on_a_slope(backend, 50, theta)
    m = sim.masses

    def com_speed():
        return float(m @ (sim.velocities @ t) / m.sum())

    for _ in range(18):  # 0.3 s: landed
        sim.step(1 / 60)
    assert np.all(sim.modes != ASLEEP)
    v0, t0 = com_speed(), sim.time
    while np.max((sim.positions - top) @ t) < 1200.0 and sim.time < 3.0:
        sim.step(1 / 60)
        assert sim.max_overlap() <= 1e-3
        assert np.all(sim.modes != ASLEEP), "a ball fell asleep on a frictionless slope"
    accel = (com_speed() - v0) / (sim.time - t0)
    assert sim.time - t0 > 0.5
    assert accel == pytest.approx(G * math.sin(math.radians(theta)), rel=0.05)


def test_a_clump_dropped_on_a_slope_slides_off_it():
    # 40 balls dropped in a clump on an 18 degree frictionless slope. Nothing
    # fixed can hold a ball there: the slope's normal is 18 degrees off the
    # vertical and there is no other fixed thing on it, so no ball, alone or
    # leaning on others, can rest on it - the layer's weight has a component
    # along the slope that nothing opposes. Within 6 s every ball has gone
    # over the lower end (300 px up) and fallen to the floor (as in pymunk
    # with friction 0, the backend "pymunk": all 40 reach the floor).
    x0, y0, x1, y1 = 100.0, 500.0, 700.0, 300.0
    sim = abound.Simulation(1200, 700, gravity=(0.0, -G), backend="fast")
    sim.add_wall(x0, y0, x1, y1, restitution=0.5)
    rng = np.random.default_rng(5)
    placed = []
    while len(placed) < 40:
        p = rng.uniform([160.0, 540.0], [320.0, 680.0])
        if all(np.hypot(*(p - q)) > 10.5 for q in placed):
            placed.append(p)
    sim.add_balls(np.array(placed), radius=5.0, restitution=0.5)
    for _ in range(6 * 60):
        sim.step(1 / 60)
        assert sim.max_overlap() <= 1e-3
    on_slope = sim.positions[:, 1] > y1
    assert not on_slope.any(), f"{on_slope.sum()} balls still on the slope, {np.sum(sim.modes[on_slope] == ASLEEP)} asleep"


def _shipped(name, balls=None):
    return abound.Simulation.from_config(str(resources.files("abound.configs") / f"{name}.toml"),
                                         backend="fast", balls=balls)


def test_the_shipped_galton_board_pours_into_its_bins():
    # after 30 s every ball that entered the board has passed the funnel (16
    # degree slopes), the chute and the nine rows of pegs, none of which can
    # hold a frictionless ball, and lies in the bins (below their tops, 170 px)
    sim = _shipped("galton")
    for _ in range(30 * 60):
        sim.step()
        assert not sim.last_stats.stopped
    free = sim.modes != PINNED
    p = sim.positions[free]
    in_bins = (p[:, 1] < 170.0) & (p[:, 0] > 240.0) & (p[:, 0] < 1040.0)
    assert in_bins.mean() >= 0.97, f"{np.sum(~in_bins)} of {len(p)} balls outside the bins"
    # none left on the funnel, in the chute or among the pegs (the lowest row at y = 198)
    assert not np.any(p[:, 1] > 190.0)
    assert sim.max_overlap() <= 1e-3


def test_the_shipped_rain_runs_off_its_roofs():
    # the three tilted roofs (15-16 degrees, no lips) hold no ball after 30 s
    # (300 of the scene's 3,000 drops, to keep the test short: the roofs are
    # the same, the heaps on them smaller)
    sim = _shipped("rain", balls=300)
    roofs = [(120.0, 330.0, 420.0, 250.0), (500.0, 200.0, 780.0, 280.0), (860.0, 300.0, 1160.0, 220.0)]
    for _ in range(30 * 60):
        sim.step()
    p, r = sim.positions, sim.radii
    for x0, y0, x1, y1 in roofs:
        a, b = np.array([x0, y0]), np.array([x1, y1])
        t = (b - a) / np.hypot(*(b - a))
        u = (p - a) @ t
        foot = a + np.clip(u, 0.0, np.hypot(*(b - a)))[:, None] * t
        d = np.hypot(*(p - foot).T)
        above = (u > 0) & (u < np.hypot(*(b - a))) & (d < 3 * r) & (p[:, 1] > foot[:, 1])
        assert not above.any(), f"{above.sum()} balls on the roof from {x0:g},{y0:g}"


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_pyramid_in_a_box_stays_put(backend):
    # stacks that hold themselves: a pyramid of touching balls on the floor of
    # a box (each ball in the hollow of two below it, the bottom row between
    # the box sides), and balls in a V-shaped cup of two segments: once at
    # rest, no ball creeps (moves more than 1e-3 r over 60 s)
    r = 5.0
    sim = abound.Simulation(10 * r * 2, 400, gravity=(0.0, -G), backend=backend)
    rows = 10
    pts = []
    for row in range(rows):
        for k in range(rows - row):
            pts.append((r + 2 * r * k + r * row, r + row * r * math.sqrt(3.0)))
    sim.add_balls(np.array(pts) * [1.0, 1.0 + 1e-9] + [0.0, 1e-9], radius=r, restitution=0.5)
    for _ in range(60):
        sim.step(1 / 60)
    settled = sim.positions.copy()
    for _ in range(60):
        sim.step(1.0)
        assert sim.max_overlap() <= 1e-3
    assert np.max(np.hypot(*(sim.positions - settled).T)) <= 1e-3 * r
