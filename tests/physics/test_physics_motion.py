"""Whole-Simulation scenarios against closed-form mechanics.

Every expectation is derived in the test from textbook formulas (tests/helpers/closed_form.py):
parabolas, the bouncing ball's geometric series, the impulse law along the line of
centres at the contact (contact times from numpy.roots), reflection in an unfolded box.
Each runs on both backends, and ball-ball cases with both time-of-impact methods.
"""
import math

import numpy as np
import pytest

import abound
from abound.physics.kernels import BISECTION_TOL
from closed_form import (BACKENDS, TOI_METHODS, bounce_times, contact_time, drop_height_and_speed, fold,
                         free_flight, impulse_response, plane_contact_time, reflect)

# Analytic contact times are exact to rounding: positions agree to ~1e-12 px in
# these scenes; 1e-8 px leaves room for round-off but none for a physics error.
POS_TOL = 1e-8


def _tol(method, speed=0.0, T=0.0, R=1.0):
    """Position/velocity tolerance: rounding, plus for bisection the effect of a contact
    time off by up to BISECTION_TOL (the ball moves speed * dt further, and the contact
    normal turns by speed * dt / R, changing velocities by about speed^2 dt / R)."""
    if method == "bisection":
        return POS_TOL + 10 * BISECTION_TOL * (speed + speed * speed * (1 + T) / R)
    return POS_TOL


def _sim(backend, method="analytic", width=2000.0, height=2000.0, gravity=(0.0, -980.0), **kw):
    kw.setdefault("rest_speed", 0.0)
    return abound.Simulation(width, height, gravity=gravity, backend=backend, ball_toi=method, **kw)


# --------------------------------------------------------------------------
# free flight
# --------------------------------------------------------------------------
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("gravity", [(0.0, -980.0), (0.0, 640.0), (750.0, 0.0), (-600.0, -800.0), (0.0, 0.0)],
                         ids=["down", "up", "sideways", "diagonal", "none"])
def test_free_fall_is_an_exact_parabola(backend, gravity):
    sim = _sim(backend, width=5000.0, height=5000.0, gravity=gravity)
    p0, v0 = (2500.0, 2500.0), (37.3, 91.1)
    sim.add_ball(*p0, *v0, radius=5.0)
    t = 0.0
    for dt in [0.013, 0.1, 1 / 60, 0.2, 0.0007, 1 / 3, 0.05] * 3:
        stats = sim.step(dt)
        t += dt
        p, v = free_flight(p0, v0, gravity, t)
        assert stats.contacts == 0
        assert np.abs(sim.positions[0] - p).max() <= 1e-9 * 2500
        assert np.abs(sim.velocities[0] - v).max() <= 1e-12 * 1000
    assert t > 2.0


# --------------------------------------------------------------------------
# bouncing on the box sides
# --------------------------------------------------------------------------
# gravity along -axis sign: the ball bounces on the side it falls towards
SIDES = {"floor": (1, -1), "ceiling": (1, 1), "left": (0, -1), "right": (0, 1)}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("e", [1.0, 0.8, 0.5])
@pytest.mark.parametrize("side", list(SIDES))
def test_bounce_heights_and_times(backend, e, side):
    axis, sign = SIDES[side]
    g, r, size, h0 = 980.0, 10.0, 600.0, 400.0
    sim = _sim(backend, width=size, height=size, gravity=tuple(sign * g * (k == axis) for k in range(2)))
    start = np.array([size / 2, size / 2])
    # the surface of the ball starts h0 from the side it falls towards
    start[axis] = r + h0 if sign < 0 else size - r - h0
    sim.add_ball(*start, radius=r, restitution=e)
    nbounce = 4
    impacts = bounce_times(h0, g, e, nbounce)
    u0 = g * impacts[0]

    def height():  # of the ball's surface above the side, along the axis
        x = sim.positions[0, axis]
        return x - r if sign < 0 else size - r - x

    # apexes: after impact k the ball rises for u_k / g to e^(2k) h0, the geometric
    # series of heights; walking from apex to apex crosses exactly one impact
    t = 0.0
    for k in range(1, nbounce):
        u_k = u0 * e ** k
        apex = impacts[k - 1] + u_k / g
        stats = sim.step(apex - t)
        t = apex
        assert stats.ball_wall == 1
        assert height() == pytest.approx(e ** (2 * k) * h0, abs=1e-8 * h0)
        assert abs(sim.velocities[0, axis]) <= 1e-9 * u0
        assert sim.positions[0, 1 - axis] == start[1 - axis]  # no sideways drift
    # impact times: just before impact k the ball is in flight, just after it has rebounded
    sim2 = _sim(backend, width=size, height=size, gravity=sim.gravity)
    sim2.add_ball(*start, radius=r, restitution=e)
    sim = sim2
    t = 0.0
    delta = 1e-4
    for k, tk in enumerate(impacts):
        before = sim.step(tk - delta - t)
        t = tk - delta
        assert height() == pytest.approx(drop_height_and_speed(h0, g, e, t)[0], abs=1e-8 * h0)
        assert before.ball_wall == 0
        after = sim.step(2 * delta)
        t = tk + delta
        assert after.ball_wall == 1
        expected_h, expected_v = drop_height_and_speed(h0, g, e, t)
        assert height() == pytest.approx(expected_h, abs=1e-8 * h0)
        assert -sign * sim.velocities[0, axis] == pytest.approx(expected_v, abs=1e-9 * u0)


# --------------------------------------------------------------------------
# ball-ball collisions
# --------------------------------------------------------------------------
def _two_ball_outcome(p1, v1, p2, v2, R, m1, m2, e, g, T):
    """Positions and velocities at T of two free balls meeting once at distance R (both
    under g, so their relative motion is a straight line), from the closed-form contact time."""
    tc = contact_time(np.subtract(p2, p1), np.subtract(v2, v1), (0.0, 0.0), R)
    assert tc is not None and tc < T
    q1, u1 = free_flight(p1, v1, g, tc)
    q2, u2 = free_flight(p2, v2, g, tc)
    n = (q2 - q1) / np.linalg.norm(q2 - q1)
    w1, w2 = impulse_response(u1, u2, m1, m2, n, e)
    a = free_flight(q1, w1, g, T - tc)
    b = free_flight(q2, w2, g, T - tc)
    return np.array([a[0], b[0]]), np.array([a[1], b[1]]), tc


CASES = {
    # name: p1, v1, r1, m1, e1, p2, v2, r2, m2, e2, gravity
    "head-on": ((300, 500), (250, 0), 12, 3.0, 0.7, (500, 500), (-100, 0), 20, 7.0, 0.9, (0, 0)),
    "head-on-falling": ((300, 500), (250, 0), 12, 3.0, 0.7, (500, 500), (-100, 0), 20, 7.0, 0.9, (0, -980)),
    "chase": ((300, 500), (400, 0), 8, 1.0, 1.0, (400, 500), (50, 0), 8, 50.0, 0.5, (0, 0)),
    "glancing": ((300, 400), (250, 20), 12, 3.0, 0.7, (420, 430), (-100, -40), 20, 7.0, 0.9, (300, -400)),
    "glancing-light": ((300, 400), (300, 0), 15, 0.2, 1.0, (450, 418), (0, 0), 10, 9.0, 1.0, (0, -980)),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("method", TOI_METHODS)
@pytest.mark.parametrize("case", list(CASES))
def test_two_ball_collision(backend, method, case):
    p1, v1, r1, m1, e1, p2, v2, r2, m2, e2, g = CASES[case]
    T = 0.6
    pos, vel, tc = _two_ball_outcome(p1, v1, p2, v2, r1 + r2, m1, m2, e1 * e2, g, T)
    sim = _sim(backend, method, gravity=g)
    sim.add_ball(*p1, *v1, radius=r1, mass=m1, restitution=e1)
    sim.add_ball(*p2, *v2, radius=r2, mass=m2, restitution=e2)
    p_before = m1 * np.asarray(v1, float) + m2 * np.asarray(v2, float)
    stats = sim.step(T)
    assert (stats.ball_ball, stats.ball_wall) == (1, 0)
    speed = np.hypot(*np.subtract(v2, v1))
    tol = _tol(method, speed, T, r1 + r2)
    assert np.abs(sim.positions - pos).max() <= tol
    assert np.abs(sim.velocities - vel).max() <= tol * 10 / T
    # momentum changes only by gravity's impulse; kinetic energy of the relative
    # motion drops by (1 - e^2): the textbook laws, checked directly as well
    p_after = m1 * sim.velocities[0] + m2 * sim.velocities[1]
    assert np.abs(p_after - p_before - (m1 + m2) * np.asarray(g, float) * T).max() <= 1e-9 * np.abs(p_before).max()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("method", TOI_METHODS)
@pytest.mark.parametrize("gravity", [(0.0, 0.0), (0.0, -980.0)], ids=["none", "down"])
@pytest.mark.parametrize("r", [1e-3, 1e-7, 1e-9])
def test_tiny_balls_meet_head_on(backend, method, gravity, r):
    """Balls whose size is a billionth of their distance still meet. The quadratic's
    discriminant had cancelled to nothing below r = 1e-7 px: they passed through."""
    # equal, elastic, 200 px apart closing at 200 px/s: they touch when the gap 200 - 2r
    # has closed, then swap velocities (gravity moves both alike: their line stays level)
    sim = _sim(backend, method, gravity=gravity)
    sim.add_ball(900.0, 1500.0, 100.0, 0.0, radius=r, restitution=1.0)
    sim.add_ball(1100.0, 1500.0, -100.0, 0.0, radius=r, restitution=1.0)
    T = 1.5
    tc = (200.0 - 2.0 * r) / 200.0
    stats = sim.step(T)
    assert stats.ball_ball == 1
    x1 = 900.0 + 100.0 * tc - 100.0 * (T - tc)
    assert np.abs(sim.positions[:, 0] - [x1, 2000.0 - x1]).max() <= POS_TOL + 10 * BISECTION_TOL * 200.0
    assert np.all(sim.velocities[:, 0] == [-100.0, 100.0])


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("method", TOI_METHODS)
@pytest.mark.parametrize("r", [1e-3, 1e-7, 1e-9])
def test_tiny_ball_dropped_on_a_tiny_peg_bounces(backend, method, r):
    """The same scale against a pinned ball, where the relative motion is a parabola and
    the contact a root of a quartic whose round-off (eps |dp|^2) dwarfs R^2: the root had
    been found through the peg, and the ball fell on through it."""
    sim = _sim(backend, method, gravity=(0.0, -980.0))
    sim.add_ball(1000.0, 1000.0, radius=r, pinned=True)
    sim.add_ball(1000.0, 1200.0, radius=r, restitution=1.0)
    # falls 200 - 2r from rest, then rises with the speed it hit at
    tc = math.sqrt(2.0 * (200.0 - 2.0 * r) / 980.0)
    T = tc + 0.1
    stats = sim.step(T)
    assert stats.ball_ball == 1
    up, s = 980.0 * tc, T - tc
    tol = POS_TOL + 10 * BISECTION_TOL * up
    assert sim.positions[1, 1] == pytest.approx(1000.0 + 2.0 * r + up * s - 490.0 * s * s, abs=tol)
    assert sim.velocities[1, 1] == pytest.approx(up - 980.0 * s, abs=1e-9 * up)
    assert sim.positions[1, 0] == 1000.0


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("method", TOI_METHODS)
@pytest.mark.parametrize("r", [1e-3, 1e-7, 1e-9])
@pytest.mark.parametrize("angle", [-55.0, -25.0, 10.0, 35.0])
def test_a_tiny_ball_thrown_at_a_tiny_peg_glances_off_it(backend, method, r, angle):
    """Off-centre, along a parabola: the quartic's noise had hidden a third of such
    contacts (the ball flew through the peg) where it did not put them through it."""
    g = np.array([0.0, -980.0])
    peg, R = np.array([1000.0, 1000.0]), 2.0 * r
    n = np.array([math.sin(math.radians(angle)), math.cos(math.radians(angle))])  # peg -> ball
    u = np.array([-math.copysign(120.0, angle), -300.0])  # coming in: u.n < 0
    q, tc = peg + R * n, 0.7
    p, v = free_flight(q, u, g, -tc)  # the parabola run backwards from the contact
    sim = _sim(backend, method, gravity=g)
    sim.add_ball(*peg, radius=r, pinned=True)
    sim.add_ball(*p, *v, radius=r, restitution=1.0)
    T = tc + 0.05
    stats = sim.step(T)
    assert stats.ball_ball == 1
    w = reflect(u, n, 1.0)
    pT, vT = free_flight(q, w, g, T - tc)
    # p is held to the spacing of floats near 1000 px: the normal at the contact,
    # and so the bounce, to that over R (and bisection's contact time to
    # BISECTION_TOL, the ball's place to speed x that)
    speed = np.hypot(*u)
    turn = (4.0 * np.spacing(1000.0) + (10 * BISECTION_TOL * speed if method == "bisection" else 0.0)) / R
    assert np.abs(sim.velocities[1] - vT).max() <= 2.0 * speed * turn + 1e-9 * speed
    assert np.abs(sim.positions[1] - pT).max() <= 2.0 * speed * turn * (T - tc) + POS_TOL + 10 * BISECTION_TOL * speed


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("rule", ["product", "min", "max", "mean"])
def test_restitution_mix_rules(backend, rule):
    e1, e2 = 0.9, 0.4
    e = {"product": e1 * e2, "min": min(e1, e2), "max": max(e1, e2), "mean": 0.5 * (e1 + e2)}[rule]
    # head-on, equal masses, no gravity: relative speed after = e x before
    sim = _sim(backend, gravity=(0.0, 0.0), restitution_mix=rule, wall_restitution=0.5)
    sim.add_ball(500, 500, 300, 0, radius=10, mass=1.0, restitution=e1)
    sim.add_ball(600, 500, -100, 0, radius=10, mass=1.0, restitution=e2)
    stats = sim.step(0.3)  # contact at (100 - 20) / 400 = 0.2 s
    assert stats.ball_ball == 1
    v1, v2 = sim.velocities[:, 0]
    assert v2 - v1 == pytest.approx(e * 400.0, abs=1e-9)
    assert v1 + v2 == pytest.approx(200.0, abs=1e-9)
    # against a box side the ball's restitution mixes with the wall's (0.5) by the same rule
    ew = {"product": e1 * 0.5, "min": 0.5, "max": e1, "mean": 0.5 * (e1 + 0.5)}[rule]
    wall = _sim(backend, gravity=(0.0, 0.0), restitution_mix=rule, wall_restitution=0.5)
    wall.add_ball(100, 500, -500, 0, radius=10, restitution=e1)
    assert wall.step(0.5).ball_wall == 1
    assert wall.velocities[0, 0] == pytest.approx(500 * ew, abs=1e-9)


# --------------------------------------------------------------------------
# pinned pegs
# --------------------------------------------------------------------------
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("method", TOI_METHODS)
@pytest.mark.parametrize("e", [1.0, 0.6])
@pytest.mark.parametrize("drop", [(3.0, 200.0, 0.0, 0.0), (-7.0, 60.0, 40.0, 30.0), (0.4, 0.5, 0.0, 0.0),
                                  (0.0, 0.5, 0.0, 0.0), (0.0, 1e-3, 0.0, 0.0)],
                         ids=["from-high", "thrown", "from-0.5px", "from-0.5px-centred", "from-1e-3px-centred"])
def test_ball_falls_onto_a_pinned_peg(backend, method, e, drop):
    dx, height, vx, vy = drop
    g = np.array([0.0, -980.0])
    peg, rp, r = np.array([200.0, 300.0]), 5.0, 8.0
    p = peg + [dx, rp + r + height]
    v = np.array([vx, vy])
    sim = _sim(backend, method, width=400, height=600, gravity=g)
    sim.add_ball(*peg, radius=rp, pinned=True)
    sim.add_ball(*p, *v, radius=r, restitution=e)
    # contact: the parabola meets the circle of radius r + rp around the peg (numpy.roots)
    tc = contact_time(peg - p, -v, -g, r + rp)
    q, u = free_flight(p, v, g, tc)
    n = (q - peg) / (r + rp)
    w = reflect(u, n, e)
    # deflection: the outgoing velocity is the incoming one mirrored about the normal
    # (scaled by e along it); for e = 1 the angle to the normal is preserved
    if e == 1.0:
        assert math.isclose(abs(u @ n) / np.hypot(*u), abs(w @ n) / np.hypot(*w), rel_tol=1e-12)
    T = tc + min(0.01, e * abs(u @ n) / 980.0)  # before it could come back to the peg
    stats = sim.step(T)
    assert (stats.ball_ball, stats.ball_wall) == (1, 0)
    pT, vT = free_flight(q, w, g, T - tc)
    speed = np.hypot(*u)
    tol = _tol(method, speed, T, r + rp)
    assert np.abs(sim.positions[1] - pT).max() <= tol
    assert np.abs(sim.velocities[1] - vT).max() <= tol * 100
    angle = math.atan2(sim.velocities[1, 0], sim.velocities[1, 1])
    assert angle == pytest.approx(math.atan2(vT[0], vT[1]), abs=1e-9 + tol)
    assert np.all(sim.positions[0] == peg)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("method", TOI_METHODS)
@pytest.mark.parametrize("miss", [1e-6, 1e-3, 0.5])
def test_ball_passes_a_pinned_ball_without_touching(backend, method, miss):
    # falling straight down beside the peg, closest approach R (1 + miss): never touches
    g = np.array([0.0, -980.0])
    peg, rp, r = np.array([200.0, 300.0]), 5.0, 8.0
    R = r + rp
    p = np.array([peg[0] + R * (1 + miss), 400.0])
    sim = _sim(backend, method, width=400, height=600, gravity=g)
    sim.add_ball(*peg, radius=rp, pinned=True)
    sim.add_ball(*p, radius=r)
    T = 0.6  # falls 176.4 px: past the peg, not yet the floor
    assert p[1] - 0.5 * 980 * T * T < peg[1] - R
    stats = sim.step(T)
    assert stats.contacts == 0
    pT, vT = free_flight(p, (0.0, 0.0), g, T)
    assert np.abs(sim.positions[1] - pT).max() <= 1e-9
    # and sideways past it with no gravity
    sim = _sim(backend, method, width=400, height=600, gravity=(0.0, 0.0))
    sim.add_ball(*peg, radius=rp, pinned=True)
    sim.add_ball(20.0, peg[1] + R * (1 + miss), 700.0, 0.0, radius=r)
    stats = sim.step(0.5)
    assert stats.ball_ball == 0
    assert sim.positions[1, 1] == peg[1] + R * (1 + miss)


# --------------------------------------------------------------------------
# interior wall segments: faces and end points
# --------------------------------------------------------------------------
SEG_A, SEG_B = np.array([100.0, 100.0]), np.array([300.0, 220.0])


def _distance_to_segment(p):
    d = SEG_B - SEG_A
    u = np.clip(((p - SEG_A) @ d) / (d @ d), 0.0, 1.0)
    return np.hypot(*(p - (SEG_A + u * d)))


def _approach(q, u, g, tc):
    """Start state that reaches q with velocity u at time tc (the parabola run backwards)."""
    return q - u * tc + 0.5 * g * tc * tc, u - g * tc


def _assert_clear_before(p, v, g, tc, r):
    """Scenario check: the path keeps off the segment until the contact."""
    for t in np.linspace(0.0, tc, 2001)[:-1]:
        assert _distance_to_segment(free_flight(p, v, g, t)[0]) > r


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("gravity", [(0.0, 0.0), (0.0, -980.0), (200.0, -300.0)], ids=["none", "down", "diagonal"])
@pytest.mark.parametrize("side", [1.0, -1.0], ids=["left-side", "right-side"])
@pytest.mark.parametrize("along", [0.2, 0.7])
def test_segment_face_hit_reflects_about_the_normal(backend, gravity, side, along):
    g = np.asarray(gravity, float)
    t_hat = (SEG_B - SEG_A) / np.linalg.norm(SEG_B - SEG_A)
    n = side * np.array([-t_hat[1], t_hat[0]])
    r, e, tc = 6.0, 0.8, 0.2
    q = SEG_A + along * (SEG_B - SEG_A) + r * n
    u = -220.0 * n + 90.0 * t_hat
    p, v = _approach(q, u, g, tc)
    _assert_clear_before(p, v, g, tc, r)
    # the contact time from the closed form, independently of the construction
    assert plane_contact_time(n @ (p - SEG_A) - r, n @ v, n @ g) == pytest.approx(tc, rel=1e-12)
    _check_one_segment_bounce(backend, g, p, v, r, e, tc, q, u, n)


def _check_one_segment_bounce(backend, g, p, v, r, e, tc, q, u, n):
    """A ball launched at p with v meets the segment SEG_A-SEG_B at time tc at q,
    arriving with u, along normal n: 0.05 s later it is where the reflected free
    flight from q puts it."""
    sim = _sim(backend, width=400, height=400, gravity=g)
    sim.add_wall(*SEG_A, *SEG_B, restitution=e)
    sim.add_ball(*p, *v, radius=r)
    T = tc + 0.05
    stats = sim.step(T)
    assert stats.ball_wall == 1
    pT, vT = free_flight(q, reflect(u, n, e), g, T - tc)
    assert np.abs(sim.positions[0] - pT).max() <= POS_TOL
    assert np.abs(sim.velocities[0] - vT).max() <= POS_TOL * 100


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("gravity", [(0.0, 0.0), (0.0, -980.0), (200.0, -300.0)], ids=["none", "down", "diagonal"])
@pytest.mark.parametrize("angle", [-80.0, -45.0, 0.0, 30.0, 60.0, 85.0])
@pytest.mark.parametrize("end", [0, 1])
def test_segment_end_point_hit_is_an_infinitely_heavy_point(backend, gravity, angle, end):
    # the end point acts as a pinned ball of radius 0: reflection about the normal
    # from the end point to the ball's centre at contact
    g = np.asarray(gravity, float)
    t_hat = (SEG_B - SEG_A) / np.linalg.norm(SEG_B - SEG_A)
    n_face = np.array([-t_hat[1], t_hat[0]])
    tip, outward = (SEG_B, t_hat) if end else (SEG_A, -t_hat)
    th = math.radians(angle)
    n = math.cos(th) * outward + math.sin(th) * n_face  # beyond the end: cos > 0
    r, e, tc = 6.0, 0.9, 0.2
    q = tip + r * n
    u = -200.0 * n + 80.0 * np.array([-n[1], n[0]])
    p, v = _approach(q, u, g, tc)
    _assert_clear_before(p, v, g, tc, r)
    assert contact_time(tip - p, -v, -g, r) == pytest.approx(tc, rel=1e-9)
    _check_one_segment_bounce(backend, g, p, v, r, e, tc, q, u, n)


# --------------------------------------------------------------------------
# a very fast ball: many wall contacts in one step
# --------------------------------------------------------------------------
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("velocity", [(1e5, -0.37e5), (-0.61e5, 1.3e5), (2e5, 0.0)])
def test_fast_ball_crosses_the_box_many_times_in_one_step(backend, velocity):
    W, H, r = 800.0, 600.0, 7.0
    p = np.array([123.4, 321.0])
    v = np.array(velocity)
    sim = _sim(backend, width=W, height=H, gravity=(0.0, 0.0))
    sim.add_ball(*p, *v, radius=r)
    T = 0.0731
    stats = sim.step(T)
    # unfold the box: the free straight line, mirrored back at each side
    x, sx, kx = fold(p[0] + v[0] * T, r, W - r)
    y, sy, ky = fold(p[1] + v[1] * T, r, H - r)
    assert kx + ky >= 5
    assert stats.ball_wall == kx + ky
    assert np.abs(sim.positions[0] - [x, y]).max() <= 1e-9 * np.hypot(*v) * T
    assert np.all(sim.velocities[0] == [sx * v[0], sy * v[1]])


# --------------------------------------------------------------------------
# Newton's cradle
# --------------------------------------------------------------------------
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("method", TOI_METHODS)
@pytest.mark.parametrize("count", [2, 5])
def test_newtons_cradle(backend, method, count):
    r, v = 10.0, 300.0
    sim = _sim(backend, method, width=1000, height=200, gravity=(0.0, 0.0))
    sim.add_ball(100.0, 100.0, v, 0.0, radius=r)
    for k in range(count):
        sim.add_ball(300.0 + 2 * r * k, 100.0, radius=r)
    T = 0.8
    stats = sim.step(T)
    assert stats.ball_ball == count
    tc = (300.0 - 2 * r - 100.0) / v
    # the striker stops at the contact, the row passes the momentum through, the last leaves
    expected_x = [100.0 + v * tc] + [300.0 + 2 * r * k for k in range(count - 1)]
    expected_x.append(300.0 + 2 * r * (count - 1) + v * (T - tc))
    tol = _tol(method, v, T, 2 * r)
    assert np.abs(sim.positions[:, 0] - expected_x).max() <= tol
    assert np.abs(sim.velocities[:-1]).max() <= tol
    assert sim.velocities[-1] == pytest.approx([v, 0.0], abs=tol)
    assert np.all(sim.positions[:, 1] == 100.0)


# --------------------------------------------------------------------------
# the two TOI methods agree
# --------------------------------------------------------------------------
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_analytic_and_bisection_agree(backend, seed):
    # six balls thrown at a peg in a small box under gravity: a few contacts each
    rng = np.random.default_rng(seed)
    angles = np.arange(6) * (2 * np.pi / 6)
    inward = -np.stack([np.cos(angles), np.sin(angles)], 1)
    velocities = 300 * inward + rng.uniform(-150, 150, (6, 2))
    sims = []
    for method in TOI_METHODS:
        sim = _sim(backend, method, width=400, height=400, gravity=(0.0, -980.0))
        sim.add_ball(200, 200, radius=12, pinned=True)
        for a, v in zip(angles, velocities):
            sim.add_ball(200 + 120 * np.cos(a), 200 + 120 * np.sin(a), *v, radius=10)
        sims.append(sim)
    ball_ball = contacts = 0
    for _ in range(12):
        a, b = (sim.step(0.05) for sim in sims)
        assert (a.ball_ball, a.ball_wall) == (b.ball_ball, b.ball_wall)
        ball_ball += a.ball_ball
        contacts += a.contacts
    assert ball_ball >= 2 and contacts >= 5, (ball_ball, contacts)
    # each bisection contact is early by at most BISECTION_TOL: balls move by speed x
    # that, normals turn by speed x that / R; a few contacts deep (speeds < 1500 px/s)
    speed = 1500.0
    tol = 10 * BISECTION_TOL * (speed + speed * speed / 20.0)
    assert np.abs(sims[0].positions - sims[1].positions).max() <= tol
