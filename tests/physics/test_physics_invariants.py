"""Invariants on seeded random scenes, energy conservation, and backend agreement.

The issue's bounds: after any step with in-flight collisions no two balls and no
ball and wall overlap by more than 1e-6 x radius; total energy never rises when
every restitution is <= 1; with every restitution 1 and rest_speed 0, energy stays
within 1e-9 relative over 100,000 collisions. The two backends run the same
source: on short scenes they agree to 1e-9 relative, contact for contact; on a
long run, contacts per second, the pressure on the walls and the energy agree
within 2%. The walls' impulse tallies, which give the pressure, balance the
balls' momentum. These are the event engine's promises: the scenes turn
contact_clusters off, except where a test names them (docs/physics.md: a
cluster's solve lets a heap hover up to 1e-3 r, and its energy with it).
"""
import numpy as np
import pytest

import abound
from closed_form import BACKENDS, TOI_METHODS
from energy_fuzz import struck_crowd
from invariants import hover_band

IN_FLIGHT_OVERLAP = 1e-6  # x radius, after steps with collisions in flight
CLUSTER_OVERLAP = 1e-3  # x radius, where contact clusters solve lasting contacts


def _random_scene(seed, backend, n=12, size=(300.0, 240.0), gravity=(0.0, -980.0), method="analytic",
                  restitution=(0.3, 1.0), speed=600.0, rest_speed=None, pegs=2, walls=True,
                  contact_clusters=False):
    """Balls of mixed sizes and masses thrown around a box with a few pegs and walls."""
    rng = np.random.default_rng(seed)
    W, H = size
    sim = abound.Simulation(W, H, gravity=gravity, backend=backend, ball_toi=method, rest_speed=rest_speed,
                            wall_restitution=float(rng.uniform(*restitution)), contact_clusters=contact_clusters)
    if walls:
        sim.add_wall(0.2 * W, 0.35 * H, 0.45 * W, 0.25 * H, restitution=float(rng.uniform(*restitution)))
        sim.add_wall(0.6 * W, 0.7 * H, 0.85 * W, 0.75 * H, restitution=float(rng.uniform(*restitution)))
    placed = []
    for k in range(pegs):
        p = np.array([W * (0.3 + 0.4 * k / max(pegs - 1, 1)), 0.55 * H])
        sim.add_ball(*p, radius=6.0, pinned=True, restitution=float(rng.uniform(*restitution)))
        placed.append((p, 6.0))
    segments = sim.walls
    while len(placed) < pegs + n:
        r = rng.uniform(4.0, 12.0)
        p = rng.uniform([r, r], [W - r, H - r])
        if any(np.hypot(*(p - q)) < r + rq + 1.0 for q, rq in placed):
            continue
        if any(_segment_distance(p, seg) < r + 1.0 for seg in segments):
            continue
        placed.append((p, r))
        v = rng.normal(0.0, speed / 2, 2)
        sim.add_ball(*p, *v, radius=r, mass=float(rng.uniform(0.5, 3.0)) * r * r,
                     restitution=float(rng.uniform(*restitution)))
    return sim


def _segment_distance(p, seg):
    a, b = seg[:2], seg[2:]
    d = b - a
    u = np.clip(((p - a) @ d) / (d @ d), 0.0, 1.0)
    return np.hypot(*(p - (a + u * d)))


def _assert_sane(sim):
    pos = sim.positions
    assert np.all(np.isfinite(pos)) and np.all(np.isfinite(sim.velocities))
    r = sim.radii
    free = ~sim.pinned
    assert np.all(pos[free, 0] >= r[free] * (1 - 1e-12)) and np.all(pos[free, 0] <= sim.width - r[free] * (1 - 1e-12))
    assert np.all(pos[free, 1] >= r[free] * (1 - 1e-12)) and np.all(pos[free, 1] <= sim.height - r[free] * (1 - 1e-12))


def _run_checked(sim, steps, overlap_bound, band=None, dt=1 / 60):
    """Step (dt s), checking after every step: finite, inside the box, overlaps within
    the bound, energy never rising (up to rounding) above the lowest it has reached
    by more than band(sim) (None: 0). Returns the contacts resolved."""
    lowest = sim.energy()
    contacts = 0
    for _ in range(steps):
        stats = sim.step(dt)
        contacts += stats.contacts
        _assert_sane(sim)
        assert sim.max_overlap() <= overlap_bound
        e = sim.energy()
        allowed = band(sim) if band else 0.0
        assert e <= lowest + allowed + 1e-10 * abs(lowest) + 1e-9, (e, lowest, allowed)
        lowest = min(lowest, e)
    return contacts



@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("method", TOI_METHODS)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_scenes_in_flight(backend, method, seed):
    # no gravity: every contact is a collision in flight, restitutions 0.3..1
    sim = _random_scene(seed, backend, method=method, gravity=(0.0, 0.0))
    contacts = _run_checked(sim, 40 if backend == "reference" else 200, IN_FLIGHT_OVERLAP)
    assert contacts >= 15


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("method", TOI_METHODS)
@pytest.mark.parametrize("seed", [1, 3, 5])
@pytest.mark.parametrize("clusters", [False, True], ids=["events", "clusters"])
def test_random_scenes_under_gravity(backend, method, seed, clusters):
    # restitutions 0.3..1 under gravity: balls collide in flight, bounce, slide and
    # gather on the floor and the segments, pressing on each other. Seed 5 sank a ball
    # into a sliding one, seed 1 into a sleeping one (bounces below rounding, unseen).
    # With contact clusters (the default) the heaps' balls may hover up to
    # 1e-3 r, and the energy with them; the events alone let it never rise
    sim = _random_scene(seed, backend, method=method, contact_clusters=clusters)
    bound, band = (CLUSTER_OVERLAP, hover_band) if clusters else (IN_FLIGHT_OVERLAP, None)
    contacts = _run_checked(sim, 40 if backend == "reference" else 200, bound, band)
    assert contacts >= 20


def test_the_energy_counts_the_velocity_a_cluster_ball_holds_back():
    # with contact clusters, a cluster ball struck by a free one keeps the
    # part of its new velocity that would drive it into its neighbours
    # parked until the next tick (clusters.rejoin), where the solve shares
    # it out. It is the ball's own: left out of the energy, seed 1's energy
    # fell at the strike and rose by 2% at the tick (t = 2.45 s) in a step
    # with no event. Counted, it never rises here (a tick's tolerance may
    # lift a heap's balls by up to 1e-3 r, contact_solver.py: this scene's
    # three cluster balls, not measurably)
    sim = _random_scene(1, "fast", contact_clusters=True)
    _run_checked(sim, 160, IN_FLIGHT_OVERLAP)


@pytest.mark.parametrize("seed", [64, 169, 182, 579])
def test_a_cluster_ball_struck_again_before_its_tick_meets_the_strike_with_what_it_held_back(seed):
    # a struck cluster ball holds back what would drive it into its neighbours
    # till the tick (clusters.rejoin), and energy() counts it as the ball's.
    # Struck again before the tick, the event met only the velocity it moved
    # with, k held apart: the counted energy changed by m (u - w).k (u and w
    # its velocities after and before the strike), which no event made. These
    # four of 600 such scenes rose 42 to 244 times the hover band in one step
    # (12 of the 600 rose above it; 1, by 1.27 times, with this fix; once a
    # lone ball's tick is solved exactly, none of the first 300, and at
    # 8722af1 1 of the first 500, seed 185 by 11.2 times: another cause, the
    # tick's reaction rejoin gives back, it seemed: the next test). The strike now
    # meets all of it
    sim, dt = struck_crowd(seed)  # (tests/helpers/energy_fuzz.py: the fuzzer's scene)
    _run_checked(sim, 120, CLUSTER_OVERLAP, hover_band, dt)


@pytest.mark.parametrize("kind, seed", [("strong", 185), ("weak", 85)])
def test_a_ball_stopped_between_ticks_lets_no_cluster_ball_run_into_it(kind, seed):
    # a ball that stops between two ticks (it waits for the tick, FROZEN, or
    # falls asleep) is a fixed thing to the events, and no event watches a
    # cluster ball against a fixed one: a cluster ball solved to follow it
    # ran on into it (2.9e-3 r in the heavy balls on light ones, which the
    # ticks then open, tests/physics/test_robust_scenes.py). Those cluster
    # balls now go free at that instant (clusters.release_closing) and meet
    # it as an ordinary event. These two fuzzed crowds, the fuzzer's only
    # finds in its first 500 of each kind at eed8d33, rose 11.2 (strong 185)
    # and 22.4 (weak 85) times the hover band in a step (the last notes put
    # it down to the tick's reaction that rejoin gives back; giving back
    # gravity's kick alone where that reaction works on the strike, with the
    # release, made two of strong seeds 500-1,499 rise). With the release,
    # none of the first 1,500 of either kind rises
    sim, dt = struck_crowd(seed, kind)
    _run_checked(sim, 120, CLUSTER_OVERLAP, hover_band, dt)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("gravity", [(0.0, -980.0), (0.0, 0.0), (400.0, -300.0)], ids=["down", "none", "diagonal"])
def test_elastic_energy_is_conserved(backend, gravity):
    # every restitution 1, rest_speed 0: 100,000 collisions on the fast backend
    target = 100_000 if backend == "fast" else 1_500
    sim = _random_scene(7, backend, n=30, size=(400.0, 300.0), gravity=gravity, restitution=(1.0, 1.0),
                        speed=800.0, rest_speed=0.0)
    e0 = sim.energy()
    contacts = 0
    while contacts < target:
        stats = sim.step(1 / 30)
        contacts += stats.contacts
        assert stats.frozen == 0
    assert abs(sim.energy() - e0) <= 1e-9 * abs(e0), (sim.energy(), e0)
    assert sim.max_overlap() <= IN_FLIGHT_OVERLAP
    _assert_sane(sim)


@pytest.mark.parametrize("method", TOI_METHODS)
@pytest.mark.parametrize("seed", [4, 5, 6, 7])
def test_backends_agree(method, seed):
    # short scenes, a few contacts per ball: the same source gives the same numbers
    sims = [_random_scene(seed, backend, method=method, n=10) for backend in BACKENDS]
    contacts = 0
    for _ in range(30):
        a, b = (sim.step(1 / 60) for sim in sims)
        assert a == b
        contacts += a.contacts
        scale = np.abs(sims[0].positions).max()
        assert np.abs(sims[0].positions - sims[1].positions).max() <= 1e-9 * scale
        assert np.abs(sims[0].velocities - sims[1].velocities).max() <= 1e-9 * max(1.0, np.abs(sims[0].velocities).max())
    assert contacts >= 10


def _hot_gas(backend, n=160, size=(480.0, 320.0), seed=21):
    """A gas of balls of mixed masses, restitution 1, on a grid with random speeds of 300-600 px/s."""
    rng = np.random.default_rng(seed)
    W, H = size
    sim = abound.Simulation(W, H, gravity=(0.0, -980.0), backend=backend, rest_speed=0.0)
    cols = 16
    k = np.arange(n)
    pos = np.stack([(k % cols + 0.5) * W / cols, (k // cols + 0.5) * H / ((n + cols - 1) // cols)], 1)
    angle, speed = rng.uniform(0.0, 2 * np.pi, n), rng.uniform(300.0, 600.0, n)
    sim.add_balls(pos, np.stack([speed * np.cos(angle), speed * np.sin(angle)], 1), radius=4.0,
                  mass=rng.uniform(1.0, 3.0, n))
    return sim


def _momentum(sim):
    return (sim.masses[:, None] * sim.velocities).sum(axis=0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_box_impulses_balance_the_balls_momentum(backend):
    # ball-ball impulses cancel in pairs, so over any time T the box sides alone
    # change the total momentum, besides gravity's M g T:
    #   left - right = dP_x,   bottom - top = dP_y + M |g| T
    sim = _hot_gas(backend, n=60, size=(300.0, 200.0))
    p0, steps = _momentum(sim), 120
    for _ in range(steps):
        assert sim.step(1 / 60).frozen == 0
    T = steps / 60
    left, right, bottom, top = sim.box_impulses
    dp = _momentum(sim) - p0
    weight = sim.masses.sum() * 980.0 * T
    assert min(left, right, bottom, top) > 0.0
    assert left - right == pytest.approx(dp[0], abs=1e-9 * (left + right))
    assert bottom - top == pytest.approx(dp[1] + weight, rel=1e-9)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_ball_bouncing_on_a_segment_gives_it_two_m_v_per_bounce(backend):
    # e = 1, dropped from rest 50 px above a level segment: it meets it at
    # v = sqrt(2 g h) each time and leaves at -v, an impulse of 2 m v per bounce
    sim = abound.Simulation(200.0, 400.0, gravity=(0.0, -980.0), backend=backend, rest_speed=0.0)
    sim.add_wall(50.0, 100.0, 150.0, 100.0)
    r, m, h = 5.0, 2.5, 50.0
    sim.add_ball(100.0, 100.0 + r + h, radius=r, mass=m)
    bounces = sum(sim.step(1 / 60).ball_wall for _ in range(120))
    assert bounces == 3  # in 2 s: at sqrt(2 h / g) = 0.319 s, then every 0.639 s
    assert sim.wall_impulses == pytest.approx([bounces * 2 * m * np.sqrt(2 * 980.0 * h)], rel=1e-9)
    assert np.all(sim.box_impulses == 0.0)


def test_backends_agree_on_the_statistics_of_a_long_run():
    # 20 s of a hot gas, some 300 contacts per ball: chaos may make the two
    # backends' trajectories part (not here: the same source gives the same
    # bits), so what is compared is what a long run measures - contacts per
    # second, the pressure on each side of the box, the energy - each within 2%
    steps = 1200
    T = steps / 60
    measured = []
    for backend in BACKENDS:
        sim = _hot_gas(backend)
        e0 = sim.energy()
        ball_ball = ball_wall = 0
        for _ in range(steps):
            stats = sim.step(1 / 60)
            assert stats.frozen == 0
            ball_ball += stats.ball_ball
            ball_wall += stats.ball_wall
        # restitution 1: each conserves the energy on its own
        assert sim.energy() == pytest.approx(e0, rel=1e-9)
        lengths = np.array([sim.height, sim.height, sim.width, sim.width])
        measured.append(np.array([ball_ball / T, ball_wall / T, *(sim.box_impulses / lengths / T), sim.energy()]))
    fast, reference = measured
    assert fast[0] > 10 * 160 / 2  # (a hot gas: every ball meets others many times a second)
    np.testing.assert_allclose(fast, reference, rtol=0.02)
