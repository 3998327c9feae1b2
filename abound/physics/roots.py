"""Polynomial roots for times of impact.

Plain Python on floats; the fast backend compiles this same source with numba
(see _jit.py), so only numba-friendly constructs are used here: scalars,
tuples, ``math``.
"""
import math

from ._jit import kernel

INF = math.inf
EPS = 2.220446049250313e-16


@kernel
def quadratic_roots(a, b, c):
    """Real roots of a x^2 + b x + c, ascending: (count, r0, r1).

    Uses q = -(b + sign(b) sqrt(b^2 - 4ac)) / 2, roots q/a and c/q, which never
    subtracts nearly equal numbers (no catastrophic cancellation). a = 0 falls
    back to the linear root (count 1, r0 = r1); no root gives (0, inf, inf).
    """
    if a == 0.0:
        if b == 0.0:
            return 0, INF, INF
        r = -c / b
        return 1, r, r
    disc = b * b - 4.0 * a * c
    if disc < 0.0:
        return 0, INF, INF
    q = -0.5 * (b + math.copysign(math.sqrt(disc), b))
    if q == 0.0:  # b = 0 and c = 0: a double root at 0
        return 2, 0.0, 0.0
    r0 = q / a
    r1 = c / q
    if r0 > r1:
        r0, r1 = r1, r0
    return 2, r0, r1


@kernel
def poly4(c4, c3, c2, c1, c0, t):
    """c4 t^4 + c3 t^3 + c2 t^2 + c1 t + c0 (Horner)."""
    return (((c4 * t + c3) * t + c2) * t + c1) * t + c0


@kernel
def bracketed_root(c4, c3, c2, c1, c0, lo, hi):
    """A root of the quartic (or lower) polynomial in [lo, hi], whose values at
    lo and hi have opposite signs (or vanish at hi).

    Safeguarded Newton: a Newton step is taken when it stays inside the
    bracket, a bisection otherwise; the bracket shrinks at every step, so the
    loop ends at full double precision. Returns the end nearest the root on
    lo's side when the bracket collapses, so that a contact time computed this
    way does not overshoot into overlap.
    """
    flo = poly4(c4, c3, c2, c1, c0, lo)
    if flo == 0.0:
        return lo
    lo_positive = flo > 0.0
    t = 0.5 * (lo + hi)
    for _ in range(200):
        f = poly4(c4, c3, c2, c1, c0, t)
        if f == 0.0:
            return t
        if (f > 0.0) == lo_positive:
            lo = t
        else:
            hi = t
        if hi - lo <= 2.0 * EPS * max(abs(lo), abs(hi)) or hi - lo < 1e-300:
            return lo
        df = ((4.0 * c4 * t + 3.0 * c3) * t + 2.0 * c2) * t + c1
        t_new = 0.5 * (lo + hi)
        if df != 0.0:
            t_newton = t - f / df
            if lo < t_newton < hi:
                if abs(t_newton - t) <= 4.0 * EPS * abs(t):
                    # Newton has converged: t_newton is within a few ulps of the
                    # root. Return it, or a point a few ulps before it, if that
                    # lies on lo's side; else narrow the bracket and go on.
                    for back in (0.0, 8.0 * EPS * abs(t_newton)):
                        tb = t_newton - back
                        if lo <= tb and (poly4(c4, c3, c2, c1, c0, tb) > 0.0) == lo_positive:
                            return tb
                    hi = t_newton - 8.0 * EPS * abs(t_newton)
                    if hi <= lo:
                        return lo  # the root lies within a few ulps after lo
                    t_newton = 0.5 * (lo + hi)
                t_new = t_newton
        t = t_new
    return lo


@kernel
def _crossing_in(c4, c3, c2, c1, c0, a, fa, b, fb):
    """Root where f goes from > 0 at a to <= 0 at b (f monotone on [a, b]), or inf."""
    if fa > 0.0 and fb <= 0.0:
        if fb == 0.0:
            return b
        return bracketed_root(c4, c3, c2, c1, c0, a, b)
    return INF


@kernel
def quartic_minima(c4, c3, c2, c1, h):
    """The local minima in (0, h] of f(t) = c4 t^4 + c3 t^3 + c2 t^2 + c1 t + c0,
    in time order: (count, t0, t1), inf where there is none (a quartic has at
    most two). f' is monotone between the roots of f'' (a quadratic, solved
    in closed form): each such piece holds at most one root of f', a minimum
    where f' rises through zero, refined with :func:`bracketed_root`."""
    d3, d2, d1, d0 = 4.0 * c4, 3.0 * c3, 2.0 * c2, c1  # f'
    n2, q0, q1 = quadratic_roots(12.0 * c4, 6.0 * c3, 2.0 * c2)  # f''
    count, m0, m1 = 0, INF, INF
    a = 0.0
    for k in range(3):
        b = h
        if k < 2:
            b = q0 if k == 0 else q1
            if k >= n2 or not a < b < h:
                continue
        ga = poly4(0.0, d3, d2, d1, d0, a)
        gb = poly4(0.0, d3, d2, d1, d0, b)
        if ga < 0.0 <= gb:  # (a root at b itself counts here, not again from the next piece)
            r = bracketed_root(0.0, d3, d2, d1, d0, a, b)
            if count == 0:
                m0 = r
            else:
                m1 = r
            count += 1
        a = b
    return count, m0, m1


@kernel
def first_down_crossing(c4, c3, c2, c1, c0, h):
    """Earliest t in (0, h] where f(t) = c4 t^4 + ... + c0 falls from > 0 to <= 0.

    Root isolation: f is monotone between the real roots of f' (a cubic);
    those are isolated between the roots of f'' (a quadratic, solved in closed
    form) and refined with :func:`bracketed_root`. Scanning the monotone pieces
    in time order finds the first downward crossing, never a later one, and
    never a crossing where f rises (the balls separating). Returns inf if none.
    """
    d3, d2, d1, d0 = 4.0 * c4, 3.0 * c3, 2.0 * c2, c1  # f'
    n2, q0, q1 = quadratic_roots(12.0 * c4, 6.0 * c3, 2.0 * c2)  # f''
    b1 = INF
    b2 = INF
    if n2 > 0 and 0.0 < q0 < h:
        b1 = q0
    if n2 > 1 and 0.0 < q1 < h and q1 > q0:
        if b1 == INF:
            b1 = q1
        else:
            b2 = q1
    a = 0.0
    p = 0.0
    fp = poly4(c4, c3, c2, c1, c0, 0.0)
    for k in range(3):
        if k == 0:
            b = b1 if b1 < h else h
        elif k == 1:
            b = b2 if b2 < h else h
        else:
            b = h
        if b <= a:
            continue
        # f' is monotone on [a, b]: at most one root r, where f turns.
        ga = poly4(0.0, d3, d2, d1, d0, a)
        gb = poly4(0.0, d3, d2, d1, d0, b)
        if (ga > 0.0 and gb < 0.0) or (ga < 0.0 and gb > 0.0):
            r = bracketed_root(0.0, d3, d2, d1, d0, a, b)
            if r > p:
                fr = poly4(c4, c3, c2, c1, c0, r)
                t = _crossing_in(c4, c3, c2, c1, c0, p, fp, r, fr)
                if t < INF:
                    return t
                p = r
                fp = fr
        fb = poly4(c4, c3, c2, c1, c0, b)
        t = _crossing_in(c4, c3, c2, c1, c0, p, fp, b, fb)
        if t < INF:
            return t
        p = b
        fp = fb
        a = b
        if b >= h:
            break
    return INF
