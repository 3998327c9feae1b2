"""A lone frictionless ball on a slope slides off it with acceleration g sin(theta).

Checked against the closed form s = g sin(theta) t^2 / 2 for the distance
along a segment from rest, on both backends, at shallow and steep angles
(a frictionless ball can rest only where gravity lies inside the cone of
its contact normals: on a slope it never can). Layers of balls on slopes
are issue 23's (tests/physics/test_physics_dense_flow.py).
"""
import math

import numpy as np
import pytest

import abound
from abound.physics.world import ASLEEP
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


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_ball_sliding_off_a_segment_end_is_not_held_there(backend):
    # a new user's 2-degree slope, inelastic throughout: the ball's centre came over
    # the lower end to within 1e-9 px, moving off it at 234 px/s, and the face's
    # resting contact, accepted there by round-off (0 < u < length), held it on
    # the end for ever. It must fly off and come to rest on the floor beyond
    sim = abound.Simulation(1200, 800, gravity=(0.0, -G), backend=backend, wall_restitution=0.0)
    sim.add_wall(100.0, 400.0, 1100.0, 365.0792, restitution=0.0)
    sim.add_ball(300.306, 403.512, radius=10.0, restitution=0.0)
    collapsed = 0
    for _ in range(12 * 60):
        collapsed += sim.step(1.0 / 60.0).collapsed
    x, y = sim.positions[0]
    assert x > 1100.0 + 10.0, "held at the slope's end"
    assert y == pytest.approx(10.0, abs=1e-6)  # on the floor
    assert collapsed == 0
