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
