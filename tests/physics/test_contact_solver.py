"""The contact solver's kernels against independent answers.

project_one (one ball against bounds that do not give way; clusters.rejoin
and a tick's lone balls) is checked against the closed form of a ball in a
wedge and against projected Gauss-Seidel (solve_impulses) run to
convergence on the same bounds: both find the velocity nearest the given
one that meets every bound n.v >= v_min, one by enumeration, one by
iteration. A tick's whole solve (clusters.solve_tick) is checked on balls
that Gauss-Seidel alone does not finish, by the optimality conditions.
"""
import math

import numpy as np
import pytest

from abound.physics import clusters
from abound.physics.contact_solver import project_one, solve_impulses, solver_scratch


def _bounds(normals, v_min):
    cn = np.array(normals, dtype=float).reshape(-1, 2)
    cn /= np.hypot(cn[:, 0], cn[:, 1])[:, None]
    return cn, np.array(v_min, dtype=float)


def test_a_ball_pressed_into_a_wedge_stops_in_its_corner():
    # walls at +-30 degrees from the vertical hold a ball falling at 100 px/s:
    # the only velocity meeting both (n.v >= 0) nearest (0, -100) is rest
    a = math.radians(30.0)
    cn, v_min = _bounds([(math.cos(a), math.sin(a)), (-math.cos(a), math.sin(a))], [0.0, 0.0])
    vx, vy, ok = project_one(0.0, -100.0, cn, v_min, 0, 2, 1e-12)
    assert ok and abs(vx) < 1e-12 and abs(vy) < 1e-12


def test_a_ball_on_one_slope_keeps_its_tangential_speed():
    # one slope of 20 degrees: the normal part goes, the tangential part stays
    t = math.radians(20.0)
    n = (-math.sin(t), math.cos(t))
    cn, v_min = _bounds([n], [0.0])
    v = np.array([30.0, -50.0])
    vx, vy, ok = project_one(v[0], v[1], cn, v_min, 0, 1, 1e-12)
    expect = v - min(0.0, v @ n) * np.array(n)
    assert ok and np.allclose([vx, vy], expect, atol=1e-12, rtol=0)


def test_bounds_no_velocity_meets_are_refused():
    # pushed out both ways along one line: n.v >= 1 and -n.v >= 1
    cn, v_min = _bounds([(1.0, 0.0), (-1.0, 0.0)], [1.0, 1.0])
    vx, vy, ok = project_one(0.0, 0.0, cn, v_min, 0, 2, 1e-9)
    assert not ok and (vx, vy) == (0.0, 0.0)


def test_a_start_that_closes_within_the_slack_is_still_projected():
    # the slack is for the round-off of computed candidates, not a licence:
    # a ball closing on a bound at 1e-3 px/s, with a slack of 0.03, must
    # leave on it, its tangential speed kept (it sank by slack x h, and an
    # event then set it free 3.5e-8 r deep in its neighbour)
    cn, v_min = _bounds([(1.0, 0.0)], [0.0])
    vx, vy, ok = project_one(-1e-3, 5.0, cn, v_min, 0, 1, 0.03)
    assert ok and vx >= v_min[0] and vx == pytest.approx(0.0, abs=1e-15) and vy == 5.0


def _case(seed):
    """k random bounds that some velocity meets, and a velocity to project."""
    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, 7))
    angles = rng.uniform(0.0, 2.0 * math.pi, k)
    cn = np.stack([np.cos(angles), np.sin(angles)], axis=1)
    w = rng.uniform(-50.0, 50.0, 2)  # v_min below n.w: w meets them all
    v_min = cn @ w - rng.uniform(0.0, 20.0, k)
    return cn, v_min, rng.uniform(-200.0, 200.0, 2), k


def _gauss_seidel(cn, v_min, v0, k):
    """solve_impulses on one ball of mass 1 against fixed things: (velocity, converged)."""
    vel = np.array([v0])
    C = (np.zeros(k, dtype=np.int64), np.full(k, -1, dtype=np.int64), cn.copy(), v_min.copy(),
         np.zeros(k), np.zeros(k))
    return vel[0], solve_impulses(vel, np.ones(1), C, k, 1e-11, solver_scratch(1, k)) > 0


SEEDS = range(40)


@pytest.mark.parametrize("seed", SEEDS)
def test_the_nearest_velocity_meets_the_optimality_conditions_and_is_what_gauss_seidel_finds(seed):
    cn, v_min, v0, k = _case(seed)
    vx, vy, ok = project_one(v0[0], v0[1], cn, v_min, 0, k, 1e-9)
    v = np.array([vx, vy])
    assert ok and np.all(cn @ v >= v_min - 1e-9)
    gs, converged = _gauss_seidel(cn, v_min, v0, k)
    if converged:
        np.testing.assert_allclose(v, gs, atol=1e-6, rtol=0)
    _assert_nearest(cn, v_min, v0, v)


def _assert_nearest(cn, v_min, v0, v):
    """The optimality conditions of v as the velocity nearest v0 meeting the
    bounds: its change is a sum of the active bounds' normals, weights >= 0."""
    active = np.nonzero(cn @ v - v_min < 1e-7)[0]
    if len(active) == 0:
        assert np.array_equal(v, v0)
        return
    lam = np.linalg.lstsq(cn[active].T, v - v0, rcond=None)[0]
    assert np.all(lam >= -1e-9), lam
    np.testing.assert_allclose(cn[active].T @ lam, v - v0, atol=1e-7, rtol=0)


def test_gauss_seidel_converges_on_most_of_those():
    # the comparison above is made, not passed by, in most cases
    assert sum(_gauss_seidel(*_case(seed))[1] for seed in SEEDS) >= 30


def _warm_case(seed):
    """A few balls, contacts between them or with fixed things (random normals,
    bounds and velocities), and large impulses left from a last tick (a
    falling ball stopped, say): (vel, inv_mass, C, k)."""
    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(1, 4)), int(rng.integers(1, 6))
    ci = rng.integers(0, n, k)
    cj = rng.integers(-1, n, k)
    cj = np.where(cj == ci, -1, cj)
    angles = rng.uniform(0.0, 2.0 * math.pi, k)
    cn = np.stack([np.cos(angles), np.sin(angles)], axis=1)
    w_j = (cj >= 0) * rng.integers(0, 2, k).astype(float)  # the other ball moves, or is fixed
    v_min = rng.uniform(-2.0, 2.0, k)
    lam = rng.uniform(0.0, 1000.0, k) * (rng.uniform(size=k) < 0.7)
    vel = rng.uniform(-20.0, 20.0, (n, 2))
    inv_mass = 1.0 / rng.uniform(0.5, 3.0, n)
    return vel, inv_mass, (ci.astype(np.int64), cj.astype(np.int64), cn, v_min, w_j, lam), k


def test_a_warm_started_solve_keeps_the_energy_bound():
    # the module's bound: the kinetic energy after a solve is at most the energy
    # before plus sum(lambda (v_min + tol)), since a solve from lambda = 0 only
    # lowers the dual objective D from D(0) = 0. A warm start left from a tick
    # that stopped a fall can start it above 0; whole, it broke the bound in 5
    # of these 600 cases (and threw a ball wedged between two sleepers up at
    # 20 px/s, tick after tick), the solve ending inside its band but above
    # D = 0. Such a solve is scaled back to D's minimum along its impulses
    # and goes on from there: it keeps the bound.
    tol = 1.0
    for seed in range(600):
        vel, inv_mass, C, k = _warm_case(seed)
        before = 0.5 * np.sum(np.sum(vel * vel, axis=1) / inv_mass)
        if solve_impulses(vel, inv_mass, C, k, tol, solver_scratch(len(vel), k)) < 0:
            continue  # (not converged: the caller sets such balls free)
        after = 0.5 * np.sum(np.sum(vel * vel, axis=1) / inv_mass)
        bound = np.sum(C[5] * (C[3] + tol))
        assert after - before <= bound + 1e-9 * (1.0 + abs(bound)), seed


# (angle of the sleepers' normals above the level, degrees; width of the gap
# between their bounds, px/s; impulse each held at the last tick; the floor's
# bound, px/s; the ball's inverse mass): cases Gauss-Seidel alone does not
# finish, found by drawing such balls (benchmarks/solver_study/pressed_level.py);
# in the second and the last four the exact solve's corner misses a bound by
# round-off
PRESSED_LEVEL = [(0.263, 3.769e-4, 148.0, -0.1559, 0.4964), (0.2603, 3.643e-09, 7874.0, -0.3662, 0.006864),
                 (0.05033, 6.62e-08, 8620.0, -0.2663, 0.04653), (0.1179, 0.008966, 5849.0, -0.3451, 0.03103),
                 (0.1201, 0.1984, 291.0, -0.2668, 0.4613), (0.107, 3.483e-05, 1390.0, -0.3328, 0.1541),
                 (0.1333, 2.46e-06, 140.8, -0.3107, 0.7773), (0.004022, 6.92e-10, 6893.0, -0.1427, 0.7705),
                 (0.02034, 1.307e-12, 3150.0, -0.3252, 0.3268)]


def _pressed_level(angle, width, held, floor, inv_mass):
    """A ball on the floor between two sleepers, pressed level: bounds from
    opposite sides a hair apart and the floor's, at a tick of 0.82 ms with 8 px
    balls. (vel, inv_mass, contacts, tol, slack)"""
    a = math.radians(angle)
    cn = np.array([(0.0, 1.0), (math.cos(a), math.sin(a)), (-math.cos(a), math.sin(a))])
    C = (np.zeros(3, dtype=np.int64), np.full(3, -1, dtype=np.int64), cn, np.array([floor, 0.0, -width]),
         np.zeros(3), np.array([0.0, held, held]))
    r, h = 8.0, 0.00082
    return (np.array([[0.0, -980.0 * h]]), np.array([inv_mass]), C, clusters.solver_tol(r, h, 0.0, -980.0),
            clusters.ROUND_OFF * r / h)


@pytest.mark.parametrize("case", PRESSED_LEVEL)
def test_a_ball_pressed_level_between_two_sleepers_is_solved_exactly_at_its_tick(case):
    # Gauss-Seidel ran out of budget on such a ball at every tick: the tick
    # set it loose, it met the floor at once and rejoined with the same push,
    # for ever (32 collapses a step, the ticks at their shortest). The tick's
    # solve gives a ball that touches only fixed things its nearest velocity
    vel, inv_mass, C, tol, slack = _pressed_level(*case)
    assert solve_impulses(vel.copy(), inv_mass, tuple(a.copy() for a in C), 3, tol, solver_scratch(1, 3)) < 0
    v0, cn, v_min = vel[0].copy(), C[2].copy(), C[3].copy()  # (the solve may lower a bound it misses by round-off)
    # (what solve_tick reads of the tick's scratch: the listed balls' ranks
    # Q[1], the contacts Q[3], their counts Q[5], marks Q[6], the solve's Q[13])
    Q = [None, np.zeros(1, dtype=np.int64), None, C, None, np.array([3, 1, 0, 0, 0, 0]),
         np.zeros(1, dtype=np.int64)] + [None] * 6 + [solver_scratch(1, 3)]
    assert clusters.solve_tick(vel, inv_mass, Q, 3, tol, slack) >= 0
    v = vel[0]
    assert np.all(cn @ v >= v_min - slack)
    assert np.any(cn @ v - v_min < 1e-7)  # (v0 meets none: some bound holds it)
    _assert_nearest(cn, v_min, v0, v)
