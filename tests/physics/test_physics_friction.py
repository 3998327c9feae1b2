"""Rolling friction on a level table (issue 26, item 2): closed forms.

With ``rolling_friction = mu`` and no gravity in the plane, a moving ball
slows at a = mu x TABLE_GRAVITY along its path: s(t) = v t - a t^2 / 2 until
it stops after T = v / a, at D = v^2 / (2 a). Every check derives its value
from these and from conservation of momentum at a contact, not from the
engine.
"""
import math

import numpy as np
import pytest

import abound
from abound.errors import SceneError
from abound.physics.world import FREE
from abound.simulation import TABLE_GRAVITY, Simulation
from closed_form import BACKENDS

MU = 0.2
A = MU * TABLE_GRAVITY


def table(backend, mu=MU):
    return abound.Simulation(1000, 1000, gravity=(0.0, 0.0), backend=backend, rolling_friction=mu)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_ball_slows_along_its_path_and_stops_at_v2_over_2a(backend):
    sim = table(backend)
    v0 = np.array([300.0, 40.0])
    sim.add_ball(100.0, 500.0, vx=v0[0], vy=v0[1], radius=10.0)
    v = float(np.hypot(*v0))
    u = v0 / v
    T, D = v / A, v * v / (2.0 * A)
    t = 0.0
    for frac in (0.1, 0.5, 0.9, 0.999):  # still rolling: on the parabola in time
        sim.step(frac * T - t)
        t = frac * T
        assert sim.positions[0] == pytest.approx([100.0, 500.0] + (v * t - 0.5 * A * t * t) * u, abs=1e-9)
        assert sim.velocities[0] == pytest.approx((v - A * t) * u, abs=1e-9)
    sim.step(0.002 * T)  # past T: stopped exactly where the closed form says, at rest
    assert sim.positions[0] == pytest.approx([100.0, 500.0] + D * u, abs=1e-9)
    assert np.array_equal(sim.velocities[0], [0.0, 0.0])
    assert sim.modes[0] == FREE
    at_rest = sim.positions.copy()
    sim.step(1.0)
    assert np.array_equal(sim.positions, at_rest)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_ball_stopping_exactly_at_another_ball_touches_it_without_moving_it(backend):
    # the stopping distance equals the gap: the contact comes at the stop,
    # with no speed left, so there is nothing to exchange
    sim = table(backend)
    r, gap = 10.0, 150.0
    v = math.sqrt(2.0 * A * gap)
    sim.add_ball(100.0, 500.0, vx=v, radius=r)
    sim.add_ball(100.0 + 2 * r + gap, 500.0, radius=r)
    for _ in range(120):
        sim.step(1 / 60)
    assert sim.positions[0] == pytest.approx([100.0 + gap, 500.0], abs=1e-6)
    assert np.array_equal(sim.positions[1], [100.0 + 2 * r + gap, 500.0])
    assert np.hypot(*(sim.positions[1] - sim.positions[0])) >= 2 * r - 1e-9
    assert np.array_equal(sim.velocities, np.zeros((2, 2)))


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_rolling_ball_hands_its_speed_to_a_resting_one(backend):
    # equal masses, restitution 1: at the contact the moving ball gives all
    # its speed sqrt(v^2 - 2 a gap) to the other (momentum and energy), stops
    # there, and the other rolls that speed's stopping distance further
    sim = table(backend)
    r, gap, v = 10.0, 150.0, 400.0
    sim.add_ball(100.0, 500.0, vx=v, radius=r, restitution=1.0)
    sim.add_ball(100.0 + 2 * r + gap, 500.0, radius=r, restitution=1.0)
    hit = v * v - 2.0 * A * gap
    for _ in range(240):
        sim.step(1 / 60)
    assert sim.positions[0] == pytest.approx([100.0 + gap, 500.0], abs=1e-6)
    assert sim.positions[1] == pytest.approx([100.0 + 2 * r + gap + hit / (2.0 * A), 500.0], abs=1e-6)
    assert np.array_equal(sim.velocities, np.zeros((2, 2)))


def test_the_pool_break_comes_to_rest_within_the_closed_form_bound():
    # equal balls: the kinetic energy E falls at a sum(m |v_i|) >= a sqrt(2 m E),
    # so sqrt(E) falls at least linearly and is 0 by v_max / a after the
    # break (v_max: the cue ball's speed; bounces off the cushions only lose)
    sim = Simulation.from_config("pool_break")
    assert len(set(sim.masses)) == 1
    a = sim.rolling_friction * TABLE_GRAVITY
    v_max = float(np.max(np.hypot(*sim.velocities.T)))
    steps = math.ceil(v_max / a * 60) + 1
    for _ in range(steps):
        sim.step(1 / 60)
        assert sim.max_overlap() <= 1e-6
    assert np.array_equal(sim.velocities, np.zeros_like(sim.velocities))
    r = sim.radii[:, None]
    assert np.all((sim.positions >= r) & (sim.positions <= [1280.0, 720.0] - r))


def test_rolling_friction_needs_a_level_table(tmp_path):
    scene = tmp_path / "tilted.toml"
    scene.write_text("[world]\ngravity = [0.0, -980.0]\nrolling_friction = 0.1\n")
    with pytest.raises(SceneError, match=r"rolling_friction.*gravity = \[0, 0\]"):
        Simulation.from_config(str(scene))
    with pytest.raises(SceneError, match="rolling_friction"):
        table("reference", mu=-0.1)


@pytest.mark.parametrize("backend", BACKENDS)
def test_friction_pauses_while_gravity_tilts_the_table_and_resumes_when_level(backend):
    # docs/api.md: refused in the constructor with gravity on; gravity set later
    # (the demo's G key, a saver's turn) pauses it, for a tilted table has no
    # straight path to slow along: the ball then flies free under gravity alone
    sim = table(backend)
    sim.add_ball(100.0, 500.0, vx=300.0, radius=10.0)
    sim.step(0.5)
    assert sim.velocities[0] == pytest.approx([300.0 - A * 0.5, 0.0], abs=1e-9)
    v = sim.velocities[0].copy()
    sim.gravity = (0.0, -100.0)
    sim.step(0.5)
    assert sim.velocities[0] == pytest.approx(v + [0.0, -50.0], abs=1e-9)  # no friction: gravity only
    sim.gravity = (0.0, 0.0)
    v = sim.velocities[0].copy()
    speed = float(np.hypot(*v))
    sim.step(0.25)
    assert sim.velocities[0] == pytest.approx(v * (speed - A * 0.25) / speed, abs=1e-9)  # slowing again
