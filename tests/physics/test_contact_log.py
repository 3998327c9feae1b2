"""The contacts as data (issue 26, item 3): step(contacts=True), touching(), overlapping().

Each logged contact is checked against values derived here: the closed-form
time, place and impulse of a fall onto the floor and of a head-on hit, the
first contact of the shipped pool break, and conservation of momentum (what
the walls' logged impulses add up to is the whole change of the balls'
momentum); the pair classes against a brute-force count over all pairs.
"""
import math

import numpy as np
import pytest

import abound
from abound.errors import SceneError
from abound.physics.world import MODE_NAMES
from abound.simulation import TABLE_GRAVITY, Simulation
from closed_form import BACKENDS

G = 980.0


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_fall_onto_the_floor_is_logged_where_when_and_how_hard(backend):
    sim = abound.Simulation(400, 400, gravity=(0.0, -G), backend=backend)
    r, h, e = 10.0, 300.0, 0.5
    sim.add_ball(123.0, h, radius=r, restitution=e)
    m = sim.masses[0]
    t_hit = math.sqrt(2.0 * (h - r) / G)
    stats = sim.step(2.0, contacts=True)
    log = stats.contact_log
    assert len(log) == stats.ball_ball + stats.ball_wall >= 1
    first = log[0]
    assert first["t"] == pytest.approx(t_hit, abs=1e-12)
    assert (first["a"], first["b"]) == (0, -1)
    assert 0 <= first["wall"] < 4  # a side of the box
    assert (first["x"], first["y"]) == pytest.approx((123.0, 0.0), abs=1e-9)
    assert (first["nx"], first["ny"]) == pytest.approx((0.0, -1.0), abs=1e-12)
    assert first["impulse"] == pytest.approx(m * (1.0 + e) * G * t_hit, rel=1e-12)
    # the next bounce: up at e v, down again after 2 e v / g
    assert log[1]["t"] == pytest.approx(t_hit + 2.0 * e * G * t_hit / G, abs=1e-9)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_head_on_hit_logs_the_impulse_of_the_closed_form(backend):
    sim = abound.Simulation(1000, 400, gravity=(0.0, 0.0), backend=backend)
    sim.add_ball(100.0, 200.0, vx=300.0, radius=10.0, mass=2.0, restitution=1.0)
    sim.add_ball(400.0, 200.0, vx=-100.0, radius=20.0, mass=5.0, restitution=1.0)
    log = sim.step(1.0, contacts=True).contact_log
    hit = log[log["b"] == 1][0]
    assert hit["t"] == pytest.approx((300.0 - 30.0) / 400.0, abs=1e-12)
    assert hit["a"] == 0 and hit["wall"] == -1
    assert (hit["nx"], hit["ny"]) == pytest.approx((1.0, 0.0), abs=1e-12)
    x0 = 100.0 + 300.0 * hit["t"]
    assert (hit["x"], hit["y"]) == pytest.approx((x0 + 10.0, 200.0), abs=1e-9)
    mu = 2.0 * 5.0 / 7.0
    assert hit["impulse"] == pytest.approx(2.0 * mu * 400.0, rel=1e-12)  # (1 + e) x reduced mass x closing speed


def test_the_walls_logged_impulses_are_the_whole_change_of_momentum():
    # no gravity: only the walls change the total momentum, each by its
    # impulse along -n; ball-ball contacts cancel in pairs
    sim = Simulation.from_config({"world": {"width": 600, "height": 400, "gravity": [0, 0]},
                                  "physics": {"backend": "fast", "seed": 3},
                                  "spawn": [{"count": 200, "radius": [3, 8], "speed": [100, 600],
                                             "restitution": [0.5, 1.0]}]})
    sim.step(1 / 60)  # (places and settles)
    for _ in range(10):
        p0 = sim.masses @ sim.velocities
        stats = sim.step(1 / 60, contacts=True)
        log = stats.contact_log
        assert len(log) == stats.ball_ball + stats.ball_wall
        assert np.all(np.diff(log["t"]) >= 0) and np.all((log["t"] >= 0) & (log["t"] <= 1 / 60))
        walls = log[log["b"] == -1]
        assert np.all(walls["wall"] >= 0) and np.all(log[log["b"] >= 0]["wall"] == -1)
        dp = -(walls["impulse"][:, None] * np.stack([walls["nx"], walls["ny"]], axis=1)).sum(axis=0)
        scale = np.sum(sim.masses * np.hypot(*sim.velocities.T))
        assert sim.masses @ sim.velocities - p0 == pytest.approx(dp, abs=1e-9 * scale)
        assert np.all(log["impulse"] >= 0)


def test_a_users_test_the_cue_ball_hits_the_rack_within_half_a_second():
    # the example README gives: the cue ball (0) meets the rack's first ball
    # (1) when it has rolled 580 - sqrt(28^2 - 2^2) px at 2400 px/s, slowed by
    # the cloth (s = v t - a t^2 / 2)
    sim = Simulation.from_config("pool_break")
    hits = []
    while sim.time < 0.5:
        start = sim.time
        log = sim.step(contacts=True).contact_log
        hits += [(start + c["t"], c["a"], c["b"]) for c in log]  # t counts from the step's start
    when, a_, b_ = hits[0]
    assert (a_, b_) == (0, 1)
    a = sim.rolling_friction * TABLE_GRAVITY
    s = 580.0 - math.sqrt(28.0 ** 2 - 2.0 ** 2)
    t = (2400.0 - math.sqrt(2400.0 ** 2 - 2.0 * a * s)) / a
    assert when == pytest.approx(t, abs=1e-9)


def test_no_log_unless_asked_and_the_pymunk_backend_says_it_cannot():
    sim = abound.Simulation(400, 400, backend="reference")
    sim.add_ball(100.0, 100.0)
    assert sim.step(0.1).contact_log is None
    pytest.importorskip("pymunk")
    sim.backend = "pymunk"
    with pytest.raises(SceneError, match="cannot log contacts"):
        sim.step(0.1, contacts=True)


def _brute_gaps(sim):
    p, r = sim.positions, sim.radii
    i, j = np.triu_indices(len(r), 1)
    return i, j, np.hypot(*(p[i] - p[j]).T) - r[i] - r[j], np.minimum(r[i], r[j])


def test_touching_and_overlapping_classify_every_pair_as_a_brute_force_count_does():
    rng = np.random.default_rng(5)
    sim = abound.Simulation(300, 300, backend="reference")
    for _ in range(300):  # balls dropped anywhere: overlaps, near misses and exact touches
        sim.add_ball(*rng.uniform(10, 290, 2), radius=float(rng.uniform(2, 9)))
    a = sim.positions[0] + [0.0, 0.0]
    sim.add_ball(a[0] + sim.radii[0] + 4.0, a[1], radius=4.0)  # exactly touching ball 0
    i, j, gap, rmin = _brute_gaps(sim)
    tol = 1e-9 * rmin  # the engine's touch tolerance
    assert sim.touching().tolist() == np.stack([i, j], 1)[np.abs(gap) <= tol].tolist()
    assert [0, len(sim) - 1] in sim.touching().tolist()
    assert sim.touching(eps=0.5).tolist() == np.stack([i, j], 1)[np.abs(gap) <= 0.5].tolist()
    assert sim.overlapping().tolist() == np.stack([i, j], 1)[gap < -tol].tolist()
    assert len(sim.overlapping()) > 0
    sim.step(1 / 60)  # the core pushes overlaps apart before it moves anything
    assert len(sim.overlapping()) == 0


def test_overlapping_allows_a_contact_cluster_what_its_solve_may_leave_and_no_more():
    # the shipped rain, thinned: heaps on the floor whose contacts the clusters
    # solve (and put to sleep), where a pair may keep up to 1e-3 of the smaller
    # radius of overlap (docs/physics.md); balls in flight keep none
    sim = abound.Simulation.from_config("rain", balls=600, seed=2)
    held_modes = [MODE_NAMES.index("cluster"), MODE_NAMES.index("asleep")]
    while sim.time < 4.0:
        sim.step(1 / 60)
        i, j, gap, rmin = _brute_gaps(sim)
        held = np.isin(sim._world.mode[i], held_modes) | np.isin(sim._world.mode[j], held_modes)
        tol = np.where(held, 1e-3, 1e-9) * rmin
        assert sim.overlapping().tolist() == np.stack([i, j], 1)[gap < -tol].tolist()
        assert len(sim.overlapping()) == 0, f"at {sim.time:.3f} s"
    assert np.isin(sim._world.mode[:len(sim)], held_modes).sum() > 100  # (heaps formed)
