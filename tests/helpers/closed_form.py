"""Closed-form physics for the physics tests, independent of abound's engine.

Everything here is textbook mechanics written directly with numpy: parabolas,
the bouncing ball's geometric series, the 1D impulse law along the line of
centres, reflection in an unfolded box, and polynomial contact times solved
with numpy.roots and polished by Newton's method. None of it calls abound.
"""
import math

import numpy as np

BACKENDS = ("reference", "fast")
TOI_METHODS = ("analytic", "bisection")


def free_flight(p, v, g, t):
    """Position and velocity after t seconds of free flight under constant g."""
    p, v, g = (np.asarray(a, dtype=float) for a in (p, v, g))
    return p + v * t + 0.5 * g * t * t, v + g * t


def drop_height_and_speed(h0, g, e, t):
    """A ball dropped from rest h0 above a floor (distance of its surface from
    the floor), gravity magnitude g, restitution e, every bounce elastic-law
    v' = e v: (height above the floor, velocity along the upward normal) at t.

    First impact at t1 = sqrt(2 h0 / g) with speed u0 = g t1; after impact k
    the ball leaves at u_k = e^k u0 and flies 2 u_k / g.
    """
    t1 = math.sqrt(2.0 * h0 / g)
    if t < t1:
        return h0 - 0.5 * g * t * t, -g * t
    u = e * g * t1
    start = t1
    while u > 0.0:
        flight = 2.0 * u / g
        if t < start + flight:
            tau = t - start
            return u * tau - 0.5 * g * tau * tau, u - g * tau
        start += flight
        u *= e
    return 0.0, 0.0


def bounce_times(h0, g, e, count):
    """Times of the first `count` impacts of the dropped ball: t1, then the
    geometric series t1 + 2 u0 (e + e^2 + ... + e^k) / g."""
    t1 = math.sqrt(2.0 * h0 / g)
    u0 = g * t1
    times = [t1]
    for k in range(1, count):
        times.append(times[-1] + 2.0 * u0 * e ** k / g)
    return times


def impulse_response(v1, v2, m1, m2, n, e):
    """Post-contact velocities of two balls: the textbook 1D law along the unit
    normal n (from ball 1 to ball 2), tangential parts unchanged. m = inf is
    an immovable body."""
    v1, v2, n = (np.asarray(a, dtype=float) for a in (v1, v2, n))
    u1, u2 = v1 @ n, v2 @ n
    if math.isinf(m1):
        w1, w2 = u1, u1 + e * (u1 - u2)
    elif math.isinf(m2):
        w1, w2 = u2 + e * (u2 - u1), u2
    else:
        w1 = (m1 * u1 + m2 * u2 + m2 * e * (u2 - u1)) / (m1 + m2)
        w2 = (m1 * u1 + m2 * u2 + m1 * e * (u1 - u2)) / (m1 + m2)
    return v1 + (w1 - u1) * n, v2 + (w2 - u2) * n


def reflect(v, n, e=1.0):
    """Velocity after hitting an immovable surface with unit normal n."""
    v, n = np.asarray(v, dtype=float), np.asarray(n, dtype=float)
    return v - (1.0 + e) * (v @ n) * n


def polish_root(coeffs, t, iterations=4):
    """Newton steps on a polynomial (highest power first) from t."""
    d = np.polyder(coeffs)
    for _ in range(iterations):
        slope = np.polyval(d, t)
        if slope == 0.0:
            break
        t = t - np.polyval(coeffs, t) / slope
    return float(t)


def contact_time(dp, dv, da, R):
    """First time t > 0 at which |dp + dv t + da t^2/2| = R while the distance
    is shrinking (dp, dv, da: relative position, velocity, acceleration), or
    None. Solved as the quartic |d(t)|^2 - R^2 = 0 with numpy.roots."""
    dp, dv, da = (np.asarray(a, dtype=float) for a in (dp, dv, da))
    coeffs = [0.25 * da @ da, dv @ da, dv @ dv + dp @ da, 2.0 * dp @ dv, dp @ dp - R * R]
    candidates = []
    for z in np.roots(coeffs):
        if abs(z.imag) <= 1e-6 * max(1.0, abs(z)):
            candidates.append(polish_root(np.trim_zeros(coeffs, "f"), z.real))
    for t in sorted(candidates):
        if t <= 0.0:
            continue
        d = dp + dv * t + 0.5 * da * t * t
        if d @ (dv + da * t) < 0.0:
            return t
    return None


def plane_contact_time(gap, vn, an):
    """First t > 0 at which gap + vn t + an t^2/2 = 0 while closing, or None."""
    coeffs = np.trim_zeros([0.5 * an, vn, gap], "f")
    roots = sorted(polish_root(coeffs, z.real) for z in np.roots(coeffs) if abs(z.imag) < 1e-12)
    for t in roots:
        if t > 0.0 and vn + an * t < 0.0:
            return t
    return None


def fold(x, lo, hi):
    """Unfold the box: a point moving freely on a line, mirrored at lo and hi.
    Returns (folded position, direction sign, number of mirror crossings)."""
    span = hi - lo
    k = math.floor((x - lo) / span)
    s = (x - lo) - k * span
    if k % 2 == 0:
        return lo + s, 1.0, abs(k)
    return hi - s, -1.0, abs(k)


def normal_cdf(x, mu=0.0, sigma=1.0):
    """The normal distribution's cumulative probability at x: (1 + erf(z / sqrt 2)) / 2."""
    return 0.5 * (1.0 + math.erf((x - mu) / (sigma * math.sqrt(2.0))))


def chi2_sf(x, dof):
    """P(X > x) for X chi-square with dof degrees of freedom: the regularized
    upper incomplete gamma function Q(dof / 2, x / 2), by its power series
    below a + 1 and its continued fraction (modified Lentz) above it, to
    about 1e-14 (Numerical Recipes, gammq)."""
    a, x = 0.5 * dof, 0.5 * x
    if x <= 0.0:
        return 1.0
    front = math.exp(-x + a * math.log(x) - math.lgamma(a))
    if x < a + 1.0:  # P(a, x) = front * sum_k x^k / (a (a + 1) ... (a + k))
        term = total = 1.0 / a
        ap = a
        while abs(term) > 1e-16 * abs(total):
            ap += 1.0
            term *= x / ap
            total += term
        return max(0.0, 1.0 - front * total)
    tiny = 1e-300  # Q(a, x) = front / (x + 1 - a - 1 (1 - a) / (x + 3 - a - ...))
    b = x + 1.0 - a
    c, d = 1.0 / tiny, 1.0 / b
    h = d
    for i in range(1, 10000):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1.0 / d
        h *= d * c
        if abs(d * c - 1.0) < 1e-16:
            break
    return front * h


def chi_square_against_normal(values, edges, min_expected=5.0):
    """Pearson's chi-square of the counts of values in the bins between edges
    against a normal fitted to the values (their mean and standard deviation,
    truncated to the bins' span). Bins are pooled from each tail until every
    expected count is at least min_expected; the fit costs two degrees of
    freedom. Returns (statistic, degrees of freedom, p-value, observed, expected)."""
    values = np.asarray(values, dtype=float)
    edges = np.asarray(edges, dtype=float)
    observed = np.histogram(values, bins=edges)[0].astype(float)
    mu, sigma = float(values.mean()), float(values.std(ddof=1))
    cdf = np.array([normal_cdf(e, mu, sigma) for e in edges])
    expected = observed.sum() * np.diff(cdf) / (cdf[-1] - cdf[0])
    obs, exp = list(observed), list(expected)
    while len(exp) > 1 and exp[0] < min_expected:  # pool the left tail into its neighbour
        o, e = obs.pop(0), exp.pop(0)
        obs[0] += o
        exp[0] += e
    while len(exp) > 1 and exp[-1] < min_expected:  # and the right tail
        o, e = obs.pop(), exp.pop()
        obs[-1] += o
        exp[-1] += e
    obs, exp = np.array(obs), np.array(exp)
    stat = float(np.sum((obs - exp) ** 2 / exp))
    dof = len(obs) - 1 - 2
    return stat, dof, chi2_sf(stat, dof), obs, exp
