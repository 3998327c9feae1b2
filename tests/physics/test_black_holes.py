"""Black holes (issue 26, item 1; abound/attractors.py) against closed form, on both engines.

A ball on a circular orbit of radius r about a hole of strength GM keeps r
within 1% over 10 orbits, and goes round in 2 pi sqrt(r^3 / GM) within 1%; a
ball let go from rest at r0 reaches r0 / 2 after sqrt(r0^3 / (2 GM)) (1/2 +
pi/4) (the radial Kepler fall, x = 1/2 in sqrt(x (1 - x)) + arccos sqrt(x));
a swallowing hole puts a ball that crosses its horizon back at the top, at
rest, the count kept, even one whose chord through the horizon lies within
a sub-step. Along a sub-step a ball's acceleration is constant: gravity
plus the pull averaged over the parabola's ends; it goes with the last hole.
"""
import math
import re

import numpy as np
import pytest

from abound import SceneError, Simulation
from abound.attractors import substep

GM, R = 4.0e7, 200.0
BACKENDS = ["reference", "fast"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_circular_orbit_keeps_its_radius_and_period(backend):
    sim = Simulation(1000, 1000, gravity=(0.0, 0.0), dt=1 / 60, backend=backend)
    sim.add_black_hole(500.0, 500.0, GM, softening=0.0)
    sim.add_ball(500.0 + R, 500.0, vy=math.sqrt(GM / R), radius=5.0)
    period = 2 * math.pi * math.sqrt(R ** 3 / GM)
    radii, angles, times = [], [], []
    while sim.time < 10 * period:
        sim.step()
        d = sim.positions[0] - 500.0
        radii.append(math.hypot(*d))
        angles.append(math.atan2(d[1], d[0]))
        times.append(sim.time)
    assert max(abs(r - R) for r in radii) < 0.01 * R
    rate = np.polyfit(times, np.unwrap(angles), 1)[0]  # rad/s, fitted over the 10 orbits
    assert 2 * math.pi / rate == pytest.approx(period, rel=0.01)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_ball_falls_in_from_rest_in_the_radial_kepler_time(backend):
    r0 = 400.0
    sim = Simulation(1000, 1000, gravity=(0.0, 0.0), dt=1 / 240, backend=backend)
    sim.add_black_hole(100.0, 500.0, GM, softening=0.0)
    sim.add_ball(100.0 + r0, 500.0, radius=5.0)
    expected = math.sqrt(r0 ** 3 / (2 * GM)) * (0.5 + math.pi / 4)
    prev_t, prev_r = 0.0, r0
    while True:
        sim.step()
        r = sim.positions[0, 0] - 100.0
        if r <= r0 / 2:
            t = prev_t + (prev_r - r0 / 2) / (prev_r - r) * (sim.time - prev_t)  # (between two steps)
            break
        prev_t, prev_r = sim.time, r
    assert t == pytest.approx(expected, rel=0.01)


def test_a_swallowed_ball_comes_back_at_the_top_at_rest():
    sim = Simulation(400, 300, gravity=(0.0, 0.0), dt=1 / 60)
    sim.add_black_hole(200.0, 150.0, 1.0e7, softening=5.0, horizon=15.0, swallow=True)
    sim.add_ball(260.0, 150.0, radius=5.0)   # falls straight in
    sim.add_ball(50.0, 40.0, radius=5.0)     # far, slow to fall
    swallowed_at = None
    for k in range(120):
        before = sim.positions[0].copy()
        sim.step()
        if sim.positions[0, 1] > 200.0 and before[1] < 200.0:
            swallowed_at = k
            break
    assert swallowed_at is not None, "the ball never came back"
    assert len(sim) == 2
    x, y = sim.positions[0]
    assert y >= 300 - 5 - 0.1 * (300 - 10) - 1e-9 and 5 <= x <= 395  # in the top tenth of the box
    assert np.hypot(*(sim.positions[0] - sim.positions[1])) >= 10.0
    # at rest when put back: within the step it came back in, only the pull has moved it since
    assert np.hypot(*sim.velocities[0]) < 1.0e7 / 100.0 ** 2 * sim.dt * 1.01


def test_black_holes_come_from_the_scene_and_bad_ones_are_refused(tmp_path):
    sim = Simulation.from_config("black_hole")
    assert len(sim.black_holes) == 1 and sim.black_holes[0].swallow
    with pytest.raises(SceneError, match="strength"):
        Simulation.from_config({"black_holes": [{"x": 1.0, "y": 2.0, "strength": 0.0}]})
    with pytest.raises(SceneError, match="strength"):
        Simulation.from_config({"black_holes": [{"x": 1.0, "y": 2.0}]})


def test_a_step_with_a_black_hole_logs_its_contacts_in_one_time_line():
    """Sub-steps' contacts come back in one log of the whole step, times from its start."""
    sim = Simulation(300, 300, gravity=(0.0, 0.0), dt=1 / 30)
    sim.add_black_hole(150.0, 150.0, 2.0e7, softening=30.0)
    sim.add_ball(40.0, 150.0, vx=-1800.0, radius=10.0)  # hits the left wall half way through the step
    stats = sim.step(contacts=True)
    log = stats.contact_log
    assert stats.ball_wall == len(log) == 1
    assert 0.0 < log["t"][0] < 1 / 30 and log["wall"][0] >= 0


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_sub_step_is_a_parabola_with_the_pull_averaged_over_its_ends(backend):
    """Within a sub-step a ball's acceleration is constant (its path a parabola, every
    contact exact): gravity plus the pull averaged over the parabola's two ends (the
    implicit trapezoidal rule, solved here to convergence, independently). At its end
    the ball keeps the parabola's direction and the speed its energy asks for there
    (kinetic plus the hole's and gravity's potential, as at the start)."""
    gm, g = 2.0e7, np.array([0.0, -300.0])
    sim = Simulation(1000, 1000, gravity=tuple(g), dt=1 / 600, backend=backend)
    sim.add_black_hole(500.0, 500.0, gm, softening=20.0)
    p0, v0 = np.array([700.0, 560.0]), np.array([-120.0, 250.0])
    sim.add_ball(*p0, vx=v0[0], vy=v0[1], radius=4.0)

    def pull(p):
        d = np.array([500.0, 500.0]) - p
        return gm * d / (d @ d + 20.0 ** 2) ** 1.5

    h = sim.dt  # one sub-step: far slower than the hole's dynamical time here
    a = g + pull(p0)
    for _ in range(50):
        a = g + 0.5 * (pull(p0) + pull(p0 + v0 * h + 0.5 * a * h * h))
    sim.step()
    p1 = p0 + v0 * h + 0.5 * a * h * h
    assert np.allclose(sim.positions[0], p1, rtol=0, atol=1e-9)

    def energy(p, v):  # per unit mass
        return 0.5 * v @ v - gm / math.sqrt((p - 500.0) @ (p - 500.0) + 20.0 ** 2) - g @ p
    v1 = v0 + a * h
    speed = math.sqrt(2.0 * (energy(p0, v0) - energy(p1, np.zeros(2))))
    assert np.allclose(sim.velocities[0], v1 / np.linalg.norm(v1) * speed, rtol=0, atol=1e-9)
    assert not np.allclose(sim.velocities[0], v1, rtol=0, atol=1e-7)  # (the parabola's own speed is off)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_ball_grazing_the_horizon_within_a_sub_step_is_swallowed(backend):
    """Swallowing is an event at the crossing, not a test at the sub-steps' ends: a fast
    ball whose chord through the horizon is far shorter than a sub-step's flight goes."""
    # (a rolling friction set with gravity on is not in effect: the pull is still held)
    sim = Simulation(2000, 1000, gravity=(0.0, -1e-3), dt=1 / 60, backend=backend)
    sim.rolling_friction = 0.1  # (the constructor refuses it with gravity on, as a scene file does)
    sim.add_black_hole(1000.0, 500.0, 1.0e3, softening=0.0, horizon=20.0, swallow=True)
    sim.add_ball(650.0, 515.0, vx=6000.0, radius=3.0)  # 15 px off the centre's line: a 26 px chord
    for _ in range(4):  # ends at x = 750, 850, 950 and (not swallowed) 1050: never inside
        assert substep(sim.positions, sim.black_holes, sim.dt) == sim.dt  # (a weak hole: one sub-step)
        sim.step()
    x, y = sim.positions[0]
    assert y >= 1000 - 3 - 0.1 * (1000 - 6) - 1e-9, "the ball flew through the horizon"
    assert math.hypot(*sim.velocities[0]) < 1.0  # put back at rest: only the weak pull since


def test_once_the_last_black_hole_goes_a_ball_falls_under_gravity_alone():
    """The pull held for a sub-step (the ball's field) goes with the hole: after it, a
    free ball's path is gravity's parabola from where it was."""
    sim = Simulation(1000, 1000, gravity=(0.0, -500.0), dt=1 / 60)
    sim.add_black_hole(500.0, 500.0, 4.0e7, softening=10.0)
    sim.add_ball(300.0, 700.0, vx=40.0, radius=4.0)
    for _ in range(3):
        sim.step()
    sim.black_holes.clear()
    p0, v0 = sim.positions[0].copy(), sim.velocities[0].copy()
    sim.step(0.1)
    t, g = 0.1, np.array([0.0, -500.0])
    assert np.allclose(sim.positions[0], p0 + v0 * t + 0.5 * g * t * t, rtol=0, atol=1e-9)
    assert np.allclose(sim.velocities[0], v0 + g * t, rtol=0, atol=1e-9)


@pytest.mark.parametrize("ball_toi", ["analytic", "bisection"])
@pytest.mark.parametrize("backend, balls, steps", [("reference", 30, 60), ("fast", 60, 120)])
def test_balls_with_different_pulls_meet_exactly_and_keep_the_energy(backend, balls, steps, ball_toi):
    """Balls on crossing orbits have different fields, so each pair meets at a root of a
    quartic: none ever overlaps, and the total energy (kinetic plus the softened
    potential -GM m / sqrt(d^2 + eps^2)) stays within 1e-9 through hundreds of contacts,
    as an elastic scene's must. (It drifted by up to 1%: after a contact a ball flew on
    in the field held for the path it no longer took. By bisection, a pair just parted,
    within round-off of touching, was found in contact again at once, eight times with
    no impulse, and the collapse rule stopped it dead: 1.3% of the energy gone.)"""
    gm, eps = 2.0e7, 20.0
    sim = Simulation(600, 600, gravity=(0.0, 0.0), dt=1 / 60, backend=backend, ball_toi=ball_toi)
    sim.add_black_hole(300.0, 300.0, gm, softening=eps)
    rng = np.random.default_rng(3)
    for k in range(balls):
        a, r = 2 * math.pi * k / balls, 150.0 + 30.0 * (k % 3)
        s = math.sqrt(gm / r) * rng.choice([-1.0, 1.0]) * rng.uniform(0.6, 1.0)  # both ways round
        sim.add_ball(300 + r * math.cos(a), 300 + r * math.sin(a), vx=-s * math.sin(a), vy=s * math.cos(a),
                     radius=6.0)

    def energy():  # a ball of radius r feels the hole through its core once d < r (docs/api.md)
        d2 = np.sum((sim.positions - 300.0) ** 2, 1)
        s2 = np.maximum(d2, 36.0) + eps * eps
        u = -gm / np.sqrt(s2) - np.where(d2 < 36.0, gm * (36.0 - d2) / (2.0 * s2 ** 1.5), 0.0)
        return float(np.sum(sim.masses * (0.5 * np.sum(sim.velocities ** 2, 1) + u)))
    e0, contacts = energy(), 0
    for _ in range(steps):
        stats = sim.step()
        contacts += stats.ball_ball
        assert len(sim.overlapping()) == 0 and stats.collapsed == 0
        assert energy() == pytest.approx(e0, rel=1e-9)
    assert contacts >= balls // 2


def test_a_ball_held_just_outside_a_horizon_does_not_cut_the_step_into_pieces(monkeypatch):
    """Its parabola crosses the horizon, the peg it rests on keeps it out: run once to
    the crossing, it is not predicted again in that sub-step."""
    sim = Simulation(1000, 400, gravity=(0.0, -980.0), dt=1 / 60, backend="reference")
    sim.add_black_hole(500.0, 100.0, 10.0, softening=0.0, horizon=80.0 - 1e-6, swallow=True)
    sim.add_ball(500.0, 160.0, radius=10.0, pinned=True)
    sim.add_ball(500.0, 180.0, radius=10.0)  # resting on the peg, 1e-6 px above the horizon
    taken = []
    real = sim._step
    monkeypatch.setattr(sim, "_step", lambda h, contacts: taken.append(h) or real(h, contacts))
    for _ in range(5):
        sim.step()
    assert len(taken) <= 2 * 5  # a piece to the crossing and the rest, each sub-step (one a step here)
    assert sim.positions[1] == pytest.approx((500.0, 180.0), abs=1e-6)  # still there: not swallowed


def test_a_pull_held_until_friction_takes_over_is_let_go():
    """Rolling friction switched on, the pull becomes kicks (a rolling path stays a straight
    line): the field held until then must go, or the pull counts twice (a ball stopped
    against a peg then slid round it, pressed by the stale field). The balls then move
    exactly as in a sim that kicked from the start."""
    def table(friction):
        sim = Simulation(1000, 1000, gravity=(0.0, 0.0), dt=1 / 60, rolling_friction=friction, rest_speed=5.0)
        sim.add_black_hole(500.0, 500.0, 4.0e6, softening=10.0)
        sim.add_ball(700.0, 500.0, radius=10.0, pinned=True)
        sim.add_ball(740.0, 508.0, vx=-30.0, radius=10.0, restitution=0.0)  # stops against the peg
        return sim
    held, kicked = table(0.0), table(0.001)
    held.step()
    held.rolling_friction = 0.001
    for sim in (held, kicked):  # (both from one state, both edited alike)
        sim.positions, sim.velocities = held.positions.copy(), held.velocities.copy()
    for _ in range(60):
        held.step()
        kicked.step()
    assert np.array_equal(held.positions, kicked.positions)
    assert np.array_equal(held.velocities, kicked.velocities)


def test_a_ball_at_the_centre_of_a_hole_without_softening_stays_a_number():
    """The pull's direction is undefined there (GM d / |d|^3 is 0/0): by symmetry it is none,
    so the ball stays put without gravity; no NaN reaches the state."""
    sim = Simulation(400, 400, gravity=(0.0, 0.0), dt=1 / 60)
    sim.add_black_hole(200.0, 200.0, 1.0e6, softening=0.0)
    sim.add_ball(200.0, 200.0, radius=5.0)
    sim.add_ball(100.0, 300.0, radius=5.0)
    for _ in range(3):
        sim.step()
    assert np.all(np.isfinite(sim.positions)) and np.all(np.isfinite(sim.velocities))
    assert np.array_equal(sim.positions[0], (200.0, 200.0)) and np.array_equal(sim.velocities[0], (0.0, 0.0))


def test_a_fall_through_the_centre_comes_back_to_where_it_began():
    """The sub-step is chosen before each one: a ball let go 500 px from a softened hole
    falls through the centre and climbs out to 500 px on the far side (within 3%; the
    energy per unit mass, kinetic plus -GM / sqrt(d^2 + eps^2), as at the start within 3%
    once out). Chosen once a step from where the balls were at its start, the pass fell
    between sub-steps: the ball flew out to the box's wall."""
    gm, eps = 1.0e8, 10.0
    sim = Simulation(2000, 2000, gravity=(0.0, 0.0), dt=1 / 60)
    sim.add_black_hole(1000.0, 1000.0, gm, softening=eps)
    sim.add_ball(1500.0, 1000.0, radius=2.0)
    e0 = -gm / math.hypot(500.0, eps)
    farthest, crossed = 0.0, False
    while sim.time < 2.6:  # in ~1.25 s, out again by ~2.5 s
        sim.step()
        x = sim.positions[0, 0] - 1000.0
        crossed = crossed or x < 0.0
        if crossed:
            farthest = max(farthest, -x)
    assert crossed and farthest == pytest.approx(500.0, rel=0.03)
    v2 = float(sim.velocities[0] @ sim.velocities[0])
    assert 0.5 * v2 - gm / math.hypot(sim.positions[0, 0] - 1000.0, eps) == pytest.approx(e0, rel=0.03)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("eps", [0.0, 1.0, 10.0])
def test_a_ball_falling_through_a_hole_again_and_again_keeps_its_energy(backend, eps):
    """A lone ball's energy (kinetic plus -GM / sqrt(d^2 + eps^2)) is conserved along its
    flight, however close to the centre it passes: each sub-step gives a ball that met
    nothing the speed its energy asks for where it ends. With the held pull alone, a ball
    falling through an unsoftened hole (softening is 0..1e5 in a scene) left it with 6e4
    times its energy, at softening 1 gained a quarter a pass, at 10 a few per cent. Five
    seconds, each step checked; it stays on the vertical line it started on, between
    its turning points 240 px above and below the centre, through which a softened hole
    lets it pass every time. (Without softening the radial orbit is a collision: it may
    pass through or turn back there, as the regularised Kepler problem's does.)"""
    gm = 4.0e7
    sim = Simulation(1280, 720, gravity=(0.0, 0.0), backend=backend)
    sim.add_black_hole(640.0, 360.0, gm, softening=eps)
    sim.add_ball(640.0, 600.0, radius=5.0)
    e0 = sim.energy()
    passes, side = 0, 1.0
    for _ in range(300):
        sim.step(1 / 60)
        assert sim.energy() == pytest.approx(e0, rel=1e-9, abs=0.0)
        x, y = sim.positions[0]
        assert x == pytest.approx(640.0, abs=1e-6) and 120.0 - 1e-6 <= y <= 600.0 + 1e-6
        if (y - 360.0) * side < 0.0:
            passes, side = passes + 1, -side
    assert passes >= 4 or eps == 0.0


def test_the_energy_counts_the_holes_potential():
    """Simulation.energy: kinetic, gravity's and every hole's -GM m / sqrt(d^2 + eps^2)."""
    sim = Simulation(1000, 1000, gravity=(0.0, -100.0), dt=1 / 60)
    sim.add_black_hole(500.0, 500.0, 2.0e6, softening=30.0)
    sim.add_ball(800.0, 900.0, vx=20.0, radius=5.0, mass=2.0)
    expected = 0.5 * 2.0 * 400.0 + 2.0 * 100.0 * 900.0 - 2.0 * 2.0e6 / math.sqrt(300.0 ** 2 + 400.0 ** 2 + 30.0 ** 2)
    assert sim.energy() == pytest.approx(expected, rel=1e-12)


def test_a_ball_on_a_table_that_the_pull_cannot_move_stays_put():
    """Rolling friction holds a ball at rest where the pull is weaker than it (kicks would
    creep it along, stop by stop); where the pull is stronger, it rolls in."""
    sim = Simulation(800, 600, gravity=(0.0, 0.0), dt=1 / 60, rolling_friction=0.1)  # grip 98 px/s^2
    sim.add_black_hole(400.0, 300.0, 1.0e6, softening=5.0)
    sim.add_ball(600.0, 300.0, radius=5.0)  # pull 25 px/s^2
    sim.add_ball(400.0, 380.0, radius=5.0)  # pull 156 px/s^2
    for _ in range(120):
        sim.step()
    assert np.array_equal(sim.positions[0], (600.0, 300.0))
    assert sim.positions[1, 1] < 370.0


def test_a_livening_hole_lifts_balls_against_gravity():
    """The saver's black_hole livening places a hole that pulls at least twice gravity half
    the box's smaller side away: balls at rest on the floor below it rise. (Apart: a row
    of touching balls, pulled together sideways as they rise, rattles, and the rapid-contact
    collapse rule puts the rattlers to sleep on the floor, as it does in a settling pile;
    issue 26's closing note.)"""
    from abound.attractors import place
    sim = Simulation(800, 600, gravity=(0.0, -980.0), dt=1 / 60)
    sim.add_balls([(x, 10.0) for x in range(250, 560, 30)], radius=10.0)
    place(sim, 400.0, 300.0, lift=True)
    for _ in range(30):
        sim.step()
    assert sim.positions[:, 1].max() > 100.0


def test_swallow_must_be_true_or_false():
    sim = Simulation(100, 100)
    with pytest.raises(SceneError, match="swallow"):
        sim.add_black_hole(50.0, 50.0, 1.0e6, swallow="no")


@pytest.mark.parametrize("softening, bound", [(20.0, 1e-9), (1.0, 1e-3), (0.0, 1e-3)])
def test_the_shipped_black_hole_at_restitution_one_keeps_its_energy(softening, bound):
    """The shipped scene's 240 balls, every contact elastic, no swallowing: they fall in,
    swing round and knock into one another near the centre. Its energy gained a sixth of
    its kinetic energy in 5 s at the scene's softening of 20 px, and at softening 0 (a
    scene may ask for it) 3e5 times; now each ball's energy is kept through its contacts,
    to round-off at the scene's softening. Unsoftened, a ball whose radius (4 to 7 px
    here) takes in the centre feels a spring (its core); colliding within a pixel or two
    of the centre it can then still end a piece where the held pull put it a little off
    its path, higher than its energy reaches (it is left at rest there): at most 1e-3 of
    the kinetic energy in these 3 s. Each step checked."""
    import tomllib
    from abound.resources import config_path
    scene = tomllib.loads(config_path("black_hole").read_text())
    scene["black_holes"][0].update(softening=softening, swallow=False)
    scene["spawn"][0]["restitution"] = 1.0
    scene["world"].update(wall_restitution=1.0, rest_speed=0.0)
    sim = Simulation.from_config(scene)
    e0, k0 = sim.energy(), sim.kinetic_energy()
    contacts = 0
    for _ in range(180):
        stats = sim.step()
        contacts += stats.ball_ball
        assert abs(sim.energy() - e0) <= bound * k0, f"{(sim.energy() - e0) / k0:.3g} of the kinetic energy at {sim.time:.2f} s"
    assert contacts > 50


@pytest.mark.parametrize("backend", BACKENDS)
def test_inside_a_ball_an_unsoftened_hole_pulls_as_a_spring(backend):
    """A uniform ball feels a point mass inside it pulling its centre back in
    proportion to the distance, GM d / r^3: let go 6 px from an unsoftened hole's
    centre, a ball of radius 10 swings through it in simple harmonic motion,
    x(t) = 6 cos(w t), w^2 = GM / r^3: its period within 1% (the pull is held along
    sub-steps of a tenth of 1/w: the phase drifts a little), its amplitude kept (its
    energy is). (With the bare inverse square it fell into the singular centre.)"""
    gm, r, x0 = 4.0e6, 10.0, 6.0
    sim = Simulation(400, 400, gravity=(0.0, 0.0), dt=1 / 240, backend=backend)
    sim.add_black_hole(200.0, 200.0, gm, softening=0.0)
    sim.add_ball(200.0 + x0, 200.0, radius=r)
    period = 2.0 * math.pi * math.sqrt(r ** 3 / gm)  # 0.099 s
    crossings, prev = [], (x0, 0.0)
    for _ in range(240):
        sim.step()
        x = sim.positions[0, 0] - 200.0
        assert abs(x) <= x0 * (1.0 + 1e-9) and sim.positions[0, 1] == 200.0
        if (x < 0.0) != (prev[0] < 0.0):
            crossings.append(prev[1] + (sim.time - prev[1]) * prev[0] / (prev[0] - x))
        prev = (x, sim.time)
    assert len(crossings) >= 19
    measured = 2.0 * (crossings[-1] - crossings[0]) / (len(crossings) - 1)
    assert measured == pytest.approx(period, rel=0.01)
    swing = 0.5 * float(sim.velocities[0] @ sim.velocities[0]) + 0.5 * gm / r ** 3 * (sim.positions[0, 0] - 200.0) ** 2
    assert swing == pytest.approx(0.5 * gm / r ** 3 * x0 ** 2, rel=1e-9)  # the amplitude, from the energy



def _energy_kept(v, budget):
    """One free ball at (300, 200) with velocity v (px/s), no contacts, put through
    _keep_energy with an energy per unit mass of `budget` plus the hole's potential
    there (gravity off: px^2/s^2). Returns its velocity after."""
    from abound.attractors import _keep_energy, potential
    sim = Simulation(600, 400, gravity=(0.0, 0.0), backend="reference")
    sim.add_ball(300.0, 200.0, radius=5.0)
    holes = [sim.black_holes[sim.add_black_hole(100.0, 200.0, 4e6, softening=10.0)]]
    sim.velocities[0] = v
    u = potential(sim.positions, holes, sim.radii)[0]
    flying = (np.array([True]), sim.velocities.copy(), np.zeros((1, 2)), np.array([budget + u]))
    _keep_energy(sim, holes, flying, 0.01, None)
    return sim.velocities[0].copy()


def test_keeping_the_energy_gives_the_speed_the_energy_asks_for_whatever_the_speed():
    import warnings
    # its energy asks for speed sqrt(2 K) along the direction it has: 50 px/s
    assert np.allclose(_energy_kept((30.0, 40.0), 0.5 * 50.0 ** 2), (30.0, 40.0), rtol=1e-12)
    assert np.allclose(_energy_kept((3.0, 4.0), 0.5 * 50.0 ** 2), (30.0, 40.0), rtol=1e-12)
    # so slow that the square of its speed underflows (1e-320): the ratio of squares was
    # infinite (a RuntimeWarning in the demo's terminal, and an infinite velocity)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        v = _energy_kept((1e-160, 0.0), 0.5 * 50.0 ** 2)
    assert np.allclose(v, (50.0, 0.0), rtol=1e-12), v
    # an energy below what its place asks for (the sub-step's error): left at rest, the
    # least it can have (a change had left it its 30 px/s, more energy than it has)
    assert np.array_equal(_energy_kept((30.0, 0.0), -100.0), (0.0, 0.0))


def _three_through_the_centre(strength):
    """Three elastic balls of radius 10 falling through a hole of softening 10 and
    meeting there, again and again (rest speed 0: every contact keeps the energy)."""
    sim = Simulation(800, 600, gravity=(0.0, 0.0), backend="fast", rest_speed=0.0, wall_restitution=1.0)
    for k in range(3):
        sim.add_ball(200.0 + 150.0 * k, 300.0, radius=10.0, restitution=1.0)
    sim.add_black_hole(400.0, 300.0, strength, softening=10.0)
    return sim


def test_a_hole_too_strong_for_the_sub_steps_says_so_once():
    # a pull is followed while a step's MAX_SUBSTEPS sub-steps can each be a tenth of
    # the shortest dynamical time, a ball's at the centre: (r^2 + eps^2)^1.5 / GM =
    # (10 dt / MAX_SUBSTEPS)^2. At that strength three balls falling through the
    # centre and meeting there for 60 steps hear nothing; at 50 times it (300 times
    # the shipped scene's pull) what the sub-steps cannot follow is said, once, naming
    # the strength followed. (Unsaid, such a hole had turned the energy over: the
    # energy ratio read -1.9 after a second)
    import warnings
    from abound import BlackHoleWarning
    followed = (256 * 0.1 * 60) ** 2 * (10.0 ** 2 + 10.0 ** 2) ** 1.5
    sim = _three_through_the_centre(followed)
    with warnings.catch_warnings():
        warnings.simplefilter("error", BlackHoleWarning)
        for _ in range(60):
            sim.step(1 / 60)
    sim = _three_through_the_centre(50.0 * followed)
    with pytest.warns(BlackHoleWarning, match=re.escape(f"at most {followed:.2g} is followed")) as said:
        for _ in range(60):
            sim.step(1 / 60)
    assert sum(issubclass(w.category, BlackHoleWarning) for w in said) == 1
