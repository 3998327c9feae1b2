"""Roots and time-of-impact kernels against exact cases and closed forms.

Both backends run the same source; the fast one compiled by numba, so each
kernel is checked in both forms (the compiled copy lives in
abound.physics._compiled once the fast backend is loaded).
"""
import importlib
import math

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

from abound.physics import backends
from closed_form import BACKENDS, contact_time

EPS = np.finfo(float).eps


def _modules(backend):
    backends.get(backend)
    package = "abound.physics._compiled" if backend == "fast" else "abound.physics"
    return (importlib.import_module(package + ".roots"), importlib.import_module(package + ".kernels"))


@pytest.fixture(params=BACKENDS)
def roots(request):
    return _modules(request.param)[0]


@pytest.fixture(params=BACKENDS)
def kernels(request):
    return _modules(request.param)[1]


# --------------------------------------------------------------------------
# quadratic_roots
# --------------------------------------------------------------------------
@pytest.mark.parametrize("small, large", [(1e-8, 1e8), (-1e-8, 1e8), (1e-8, -1e8), (3e-12, 2e7)])
def test_quadratic_roots_without_cancellation(roots, small, large):
    # (x - small)(x - large): b^2 >> 4ac, where the schoolbook formula loses the small root
    a, b, c = 1.0, -(small + large), small * large
    n, r0, r1 = roots.quadratic_roots(a, b, c)
    assert n == 2
    lo, hi = sorted((small, large))
    assert r0 == pytest.approx(lo, rel=4 * EPS)
    assert r1 == pytest.approx(hi, rel=4 * EPS)


def test_quadratic_roots_special_cases(roots):
    assert roots.quadratic_roots(0.0, 2.0, -3.0)[:2] == (1, 1.5)  # linear
    assert roots.quadratic_roots(0.0, 0.0, 1.0)[0] == 0  # constant, no root
    assert roots.quadratic_roots(1.0, 0.0, 1.0)[0] == 0  # complex pair
    assert roots.quadratic_roots(1.0, 0.0, 0.0) == (2, 0.0, 0.0)  # double root at 0
    assert roots.quadratic_roots(2.0, 0.0, -8.0) == (2, -2.0, 2.0)
    assert roots.quadratic_roots(1.0, -2.0, 1.0) == (2, 1.0, 1.0)  # double root
    n, r0, r1 = roots.quadratic_roots(-1.0, 0.0, 4.0)  # a < 0: still ascending
    assert (n, r0, r1) == (2, -2.0, 2.0)


_coord = st.floats(-1e6, 1e6).filter(lambda x: x == 0.0 or abs(x) > 1e-100)


@settings(max_examples=300, deadline=None)
@given(_coord, _coord, st.floats(1e-3, 1e3))
def test_quadratic_roots_match_chosen_roots(x0, x1, scale):
    a, b, c = scale, -scale * (x0 + x1), scale * x0 * x1
    lo, hi = sorted((x0, x1))
    for roots in (_modules(name)[0] for name in BACKENDS):
        n, r0, r1 = roots.quadratic_roots(a, b, c)
        if n == 0:
            # only a (nearly) double root may round to a negative discriminant
            assert hi - lo <= 1e-7 * (abs(x0) + abs(x1))
            continue
        assert n == 2
        # rounding b and c moves root x by at most 2 eps (|x0| + |x1|) |x| / |x0 - x1|:
        # relative to x itself, so a small root keeps its digits (a cancelling
        # formula would make its error relative to the large root instead)
        for got, x in ((r0, lo), (r1, hi)):
            spread = max(hi - lo, 1e-300)
            tol = 8 * EPS * (abs(x0) + abs(x1)) * abs(x) / spread + 8 * EPS * abs(x)
            assert abs(got - x) <= tol, (x0, x1, got)


# --------------------------------------------------------------------------
# first_down_crossing: quartics built from chosen roots
# --------------------------------------------------------------------------
def _poly_from(lead, real_roots, complex_pairs):
    """Coefficients c4..c0 (padded to a quartic) of lead * prod(t - r) * prod((t - p)^2 + q^2)."""
    coeffs = np.array([lead])
    for r in real_roots:
        coeffs = np.polymul(coeffs, [1.0, -r])
    for p, q in complex_pairs:
        coeffs = np.polymul(coeffs, [1.0, -2.0 * p, p * p + q * q])
    return np.concatenate([np.zeros(5 - len(coeffs)), coeffs])


def _root_tolerance(c, t):
    """How far rounding the coefficients can move a simple root t: eps * sum|c_k t^k| / |f'(t)|."""
    size = sum(abs(ck) * abs(t) ** (4 - k) for k, ck in enumerate(c))
    slope = abs(np.polyval(np.polyder(c), t))
    return 64 * EPS * size / slope + 1e-15 * max(1.0, abs(t))


_root = st.floats(-10.0, 10.0, allow_nan=False)


@st.composite
def quartics(draw):
    """(coefficients, true real roots) of a polynomial of degree 2..4 with a positive
    leading coefficient (pair_toi's |d(t)|^2 - R^2 grows at infinity) whose real
    roots are simple and at least 1e-2 apart and whose complex roots keep 0.05 off
    the real axis (so that f is far above its rounding noise away from its real roots). f(0) may
    be negative (balls overlapping now): then the first root rises and must be skipped."""
    degree_real = draw(st.sampled_from([(4, 0), (2, 1), (0, 2), (3, 0), (1, 1), (2, 0)]))
    nreal, npairs = degree_real
    real = sorted(draw(st.lists(_root, min_size=nreal, max_size=nreal)))
    assume(all(b - a > 1e-2 for a, b in zip(real, real[1:])))
    pairs = [(draw(_root), draw(st.floats(0.05, 5.0))) for _ in range(npairs)]
    # no complex pair right next to a real root: such a cluster flattens f around
    # the root to its rounding noise, where no sign is meaningful
    assume(all(abs(p - r) > 0.1 for p, _ in pairs for r in real))
    lead = draw(st.floats(1e-2, 1e2))
    c = _poly_from(lead, real, pairs)
    assume(abs(np.polyval(c, 0.0)) > 1e-9 * np.max(np.abs(c)))
    assume(all(abs(r) > 1e-6 for r in real))
    return c, real


@settings(max_examples=400, deadline=None)
@given(quartics(), st.floats(0.5, 12.0))
def test_first_down_crossing_finds_the_first_falling_root(q, h):
    c, real = q
    assume(all(abs(r - h) > 1e-6 for r in real))  # a root at the horizon: see test_first_down_crossing_horizon
    dc = np.polyder(c)
    falling = [r for r in real if 0.0 < r <= h and np.polyval(dc, r) < 0.0]
    for roots in (_modules(b)[0] for b in BACKENDS):
        t = roots.first_down_crossing(*c, h)
        if not falling:
            assert t == math.inf, (c, h, t)
            continue
        r = falling[0]
        assert abs(t - r) <= _root_tolerance(c, r), (c, h, t, r)
        assert np.polyval(dc, t) < 0.0  # a falling crossing, never a rising one


def test_first_down_crossing_ignores_rising_crossings(roots):
    # f = (t - 1)(t - 2)(t - 3)(t - 4): f(0) > 0, falls at 1
    c = _poly_from(1.0, [1.0, 2.0, 3.0, 4.0], [])
    assert roots.first_down_crossing(*c, 10.0) == pytest.approx(1.0, abs=1e-14)
    # the same curve from t = 1.5 on: f(0) < 0, rises at 0.5, falls at 1.5
    shifted = _poly_from(1.0, [-0.5, 0.5, 1.5, 2.5], [])
    assert np.polyval(shifted, 0.0) < 0.0
    assert roots.first_down_crossing(*shifted, 10.0) == pytest.approx(1.5, abs=1e-14)
    # rising at 0.5 only (then positive for ever): nothing to report
    assert roots.first_down_crossing(*_poly_from(1.0, [-0.5, 0.5], []), 10.0) == math.inf
    # a touch of zero from above that does not cross (positive everywhere): no crossing
    touching = _poly_from(1.0, [], [(2.0, 1e-3), (5.0, 1.0)])
    assert roots.first_down_crossing(*touching, 10.0) == math.inf


def test_first_down_crossing_horizon(roots):
    c = _poly_from(1.0, [1.0, 3.0], [(0.0, 1.0)])
    assert roots.first_down_crossing(*c, 0.999) == math.inf
    assert roots.first_down_crossing(*c, 1.0) == pytest.approx(1.0, abs=1e-15)


@settings(max_examples=300, deadline=None)
@given(st.floats(0.01, 10.0), st.floats(0.01, 10.0), st.floats(1.01, 3.0), st.floats(0.01, 10.0),
       st.booleans())
def test_bracketed_root_on_concave_and_convex_pieces(root, lead, stretch, other, concave):
    # f = a (t - root)(t - s), falling through root on [0, hi]: concave (a < 0, s < 0)
    # or convex (a > 0, s > hi). Newton iterates on a concave piece stay on the far
    # side of the root, so the bracket's near end never moves: the root must not be
    # reported at that end (a ball dropped just above a peg hit it early, hovering).
    hi = root * stretch
    a, s = (-lead, -other) if concave else (lead, hi + other)
    c = [0.0, 0.0, a, -a * (root + s), a * root * s]
    tol = _root_tolerance(np.array(c), root)
    for roots in (_modules(name)[0] for name in BACKENDS):
        t = roots.bracketed_root(*c, 0.0, hi)
        assert abs(t - root) <= tol, (t, root)
        assert np.polyval(c, t) >= 0.0  # on the near (separated) side, or exactly on it


# --------------------------------------------------------------------------
# kernels: line_toi, pair_toi (analytic and bisection)
# --------------------------------------------------------------------------
def test_line_toi_reports_the_approaching_root(kernels):
    # gap 10, rising at 50 px/s, gravity -980: it comes back down through 0 once
    t, resting = kernels.line_toi(10.0, 50.0, -980.0, 1e-9, 1.0, True)
    exact = (50.0 + math.sqrt(50.0 ** 2 + 2 * 980.0 * 10.0)) / 980.0
    assert t == pytest.approx(exact, rel=1e-14) and not resting
    # overlapping and leaving: never reported (the other root is the ball leaving)
    assert kernels.line_toi(-1.0, 5.0, 0.0, 1e-9, 1.0, True)[0] == math.inf
    # touching now and approaching: now
    assert kernels.line_toi(0.0, -3.0, 0.0, 1e-9, 1.0, True) == (0.0, False)
    # touching, no normal speed, pressed in: resting
    assert kernels.line_toi(0.0, 0.0, -980.0, 1e-9, 1.0, True) == (0.0, True)
    # beyond the horizon
    assert kernels.line_toi(10.0, -1.0, 0.0, 1e-9, 9.0, True)[0] == math.inf


def _random_pair(rng, accelerated):
    dp = rng.uniform(-200, 200, 2)
    R = rng.uniform(2.0, 40.0)
    if np.hypot(*dp) <= R * 1.01:
        dp *= 1.5 * R / np.hypot(*dp)
    dv = -dp * rng.uniform(0.5, 3.0) + rng.uniform(-150, 150, 2)
    da = rng.uniform(-1500, 1500, 2) if accelerated else np.zeros(2)
    return dp, dv, da, R


@pytest.mark.parametrize("accelerated", [False, True], ids=["straight", "parabola"])
def test_pair_toi_matches_closed_form_contact_time(kernels, accelerated):
    rng = np.random.default_rng(7 + accelerated)
    h = 2.0
    checked = 0
    for _ in range(300):
        dp, dv, da, R = _random_pair(rng, accelerated)
        expected = contact_time(dp, dv, da, R)
        if expected is not None and expected > h:
            expected = None
        for method in (kernels.ANALYTIC, kernels.BISECTION):
            t, resting = kernels.pair_toi(*dp, *dv, *da, R, 1e-9 * R, h, method)
            assert not resting
            if expected is None:
                assert t == math.inf, (dp, dv, da, R, t)
                continue
            checked += 1
            # contact-time conditioning: a gap error eps*R moves t by eps*R/|closing speed|
            d = dp + dv * expected + 0.5 * da * expected ** 2
            closing = -(d @ (dv + da * expected)) / R
            tol = 1e3 * EPS * (R + np.hypot(*dp)) / closing
            if method == kernels.BISECTION:
                # bisection stops within BISECTION_TOL, on the separated side
                assert expected - kernels.BISECTION_TOL - tol <= t <= expected + tol, (t, expected)
            else:
                assert abs(t - expected) <= tol, (t, expected, tol)
    assert checked > 60  # enough scenes actually meet


def test_pair_toi_touching_cases(kernels):
    R = 10.0
    for method in (kernels.ANALYTIC, kernels.BISECTION):
        # touching and approaching: now
        assert kernels.pair_toi(R, 0.0, -1.0, 0.0, 0.0, 0.0, R, 1e-8, 1.0, method) == (0.0, False)
        # touching and separating on a straight line: never
        assert kernels.pair_toi(R, 0.0, 1.0, 0.0, 0.0, 0.0, R, 1e-8, 1.0, method)[0] == math.inf
        # touching, at rest, pressed together (a ball on a peg under gravity): resting
        assert kernels.pair_toi(0.0, -R, 0.0, 0.0, 0.0, 980.0, R, 1e-8, 1.0, method) == (0.0, True)
        # touching and parting under gravity (a ball bouncing up off a peg): the next
        # contact is when it falls back, 2 v / g later - not now
        for gap in (0.0, -1e-13, 1e-13):
            t, _ = kernels.pair_toi(0.0, R + gap, 0.0, 31.3, 0.0, -980.0, R, 1e-8, 1.0, method)
            assert abs(t - 2 * 31.3 / 980.0) <= kernels.BISECTION_TOL + 1e-12, (method, gap, t)


def test_pair_toi_grazing_miss(kernels):
    # straight relative motion whose closest approach is R (1 + 1e-6): never touches
    R = 10.0
    b = R * (1 + 1e-6)
    for method in (kernels.ANALYTIC, kernels.BISECTION):
        t, _ = kernels.pair_toi(100.0, b, -500.0, 0.0, 0.0, 0.0, R, 1e-9 * R, 1.0, method)
        assert t == math.inf
        # and at closest approach R (1 - 1e-6) it does, at the chord's near end
        b = R * (1 - 1e-6)
        t, _ = kernels.pair_toi(100.0, b, -500.0, 0.0, 0.0, 0.0, R, 1e-9 * R, 1.0, method)
        exact = (100.0 - math.sqrt(R * R - b * b)) / 500.0
        assert abs(t - exact) <= kernels.BISECTION_TOL + 1e-15
        b = R * (1 + 1e-6)


def test_mix_restitution_rules(kernels):
    e1, e2 = 0.9, 0.4
    assert kernels.mix_restitution(e1, e2, kernels.MIX_PRODUCT) == e1 * e2
    assert kernels.mix_restitution(e1, e2, kernels.MIX_MIN) == e2
    assert kernels.mix_restitution(e1, e2, kernels.MIX_MAX) == e1
    assert kernels.mix_restitution(e1, e2, kernels.MIX_MEAN) == 0.5 * (e1 + e2)


def test_normal_impulse_conserves_momentum_and_sets_restitution(kernels):
    m1, m2, e, vn = 2.0, 5.0, 0.6, -7.0
    J = kernels.normal_impulse(vn, 1 / m1, 1 / m2, e)
    # v2 - v1 along n after: vn + J (1/m1 + 1/m2) must be -e vn
    assert vn + J * (1 / m1 + 1 / m2) == pytest.approx(-e * vn, rel=1e-15)
    # an immovable first side: all the change goes to the second
    assert kernels.normal_impulse(vn, 0.0, 1 / m2, e) == pytest.approx(-(1 + e) * vn * m2, rel=1e-15)
