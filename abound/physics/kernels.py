"""Scalar time-of-impact and response kernels: the math, written once.

The reference backend calls these as plain Python; the fast backend compiles
this same file with numba. All positions are px, velocities px/s,
accelerations px/s^2, times s. A time of impact (TOI) is measured from "now"
and searched in [0, h]; ``inf`` means no contact in the horizon.

Every TOI answers (t, resting): resting means the two sides touch now with no
normal speed while their accelerations press them together (a ball lying on
the floor). The engine turns such contacts into a sliding or sleeping state
instead of an endless series of zero-time bounces (see docs/physics.md).
"""
import math

from ._jit import kernel
from .roots import INF, quadratic_roots, first_down_crossing, quartic_minima

# Normal speeds below V_EPS px/s at a touching contact count as zero: they are
# round-off of a velocity that a response has just made tangential.
V_EPS = 1e-6
# Gaps below TOUCH_REL x radius count as touching (round-off of contact positions).
TOUCH_REL = 1e-9

ANALYTIC, BISECTION = 0, 1
MIX_PRODUCT, MIX_MIN, MIX_MAX, MIX_MEAN = 0, 1, 2, 3

# Bisection method: stop when the bracket is this narrow (s) ...
BISECTION_TOL = 1e-12
# ... and hand over to the analytic method after this many advancement steps (a graze).
BISECTION_MAX_STEPS = 10000


@kernel
def line_toi(gap, vn, an, touch, h, allow_now):
    """Ball against a line: the gap (px) between the ball's surface and the line
    is gap + vn t + an t^2 / 2 (vn, an: normal velocity and acceleration, negative
    towards the line). Returns (t, resting) for the first time in [0, h] at which
    the gap closes while the ball approaches; the other root (the ball leaving)
    is never reported. allow_now=False skips the touching-now test (used for the
    far face of a segment, which a ball on the near side cannot touch now).
    """
    if allow_now and gap <= touch:
        if vn < -V_EPS:
            return 0.0, False
        if an < 0.0 and (vn <= V_EPS or vn * vn <= -2.0 * an * touch):
            return 0.0, True  # resting: see pair_toi
        # inside the line by round-off and moving out: a contact if it comes back
        # (not deeper). A deeper gap is a ball beyond a segment's end, overlapping
        # only the line's extension: its contact with the face is where the gap
        # really closes, later than its return to the present depth.
        if gap >= -touch:
            gap = max(gap, 0.0)
    n, r0, r1 = quadratic_roots(0.5 * an, vn, gap)
    if n > 0 and 0.0 <= r0 <= h and vn + an * r0 < 0.0:
        return r0, False
    if n > 1 and 0.0 <= r1 <= h and vn + an * r1 < 0.0:
        return r1, False
    return INF, False


@kernel
def pair_toi(dx, dy, dvx, dvy, dax, day, R, touch, h, method):
    """Two circles whose centres are dp = (dx, dy) apart (second minus first),
    with relative velocity dv and relative acceleration da, touching at distance R.

    da = 0 (both balls free under the same gravity: it cancels) makes the
    relative motion a straight line and the contact time the root of a
    quadratic; otherwise (a pinned, sleeping or sliding partner, an end
    point, or two balls with different fields: motion.gravity_on) it is a
    parabola and the contact time the first downward crossing of a quartic.
    method BISECTION refines the time by bisection instead.
    Returns (t, resting).
    """
    # Most candidates of a broad phase are far apart or moving apart: rule
    # them out without a square root. Far: farther than R plus what the
    # motion can close within h, bounded above with 1-norms (the exact
    # test below would also answer inf). Apart: moving apart in a straight
    # line and not touching.
    d2 = dx * dx + dy * dy
    reach = (abs(dvx) + abs(dvy)) * h + 0.5 * (abs(dax) + abs(day)) * h * h
    far = R + max(touch, reach)
    if reach < INF and d2 > far * far:  # (not for an infinite horizon, nor nan)
        return INF, False
    linear = dax == 0.0 and day == 0.0
    near = R + touch
    if linear and dx * dvx + dy * dvy >= 0.0 and d2 > near * near:
        return INF, False
    dist = math.sqrt(d2)
    if dist == 0.0:
        return INF, False  # coincident centres: settle_overlaps separates them
    if dist < R:
        # Already overlapping (by round-off, or pushed by a fallback): the
        # contact is at the present distance, so that a pair moving apart now
        # but pulled back later is stopped there instead of sinking deeper.
        R = dist
    gap = dist - R
    vn = (dx * dvx + dy * dvy) / dist  # rate of change of the distance
    if gap <= touch:
        if vn < -V_EPS:
            return 0.0, False
        if linear:
            if vn >= 0.0:
                return INF, False  # touching and not approaching on a straight line: never
            # closing slower than V_EPS (what a response left in round-off: a
            # ball pressed into a corner by an inelastic collapse, without
            # gravity): on a straight line it would sink in at that speed for
            # ever (1e-6 r in seconds). The contact is where the overlap
            # reaches half the touch (touch itself: the positions' round-off
            # took a pair of the shrunk hot gas 1e-15 r past it); its response
            # leaves a residue of the velocities' round-off, which takes ages
            # to sink another half
            R -= 0.5 * touch
            return pair_toi_linear(dx, dy, dvx, dvy, R, dist - R, dist, h), False
        # second derivative of the distance: pressing if negative. Pressed
        # together and parting too slowly to open a gap of touch before they
        # meet again (vn^2 / 2|an| <= touch): a resting contact, now. (Solving
        # for the return would be solving round-off.)
        v2 = dvx * dvx + dvy * dvy
        an = (dx * dax + dy * day) / dist + (v2 - vn * vn) / dist
        if an < 0.0 and (vn <= V_EPS or vn * vn <= -2.0 * an * touch):
            return 0.0, True
    speed = math.sqrt(dvx * dvx + dvy * dvy)
    accel = math.sqrt(dax * dax + day * day)
    if gap > speed * h + 0.5 * accel * h * h:
        return INF, False  # cannot close the gap within the horizon
    if method == BISECTION:
        return pair_toi_bisection(dx, dy, dvx, dvy, dax, day, R, touch, h), False
    if linear:
        return pair_toi_linear(dx, dy, dvx, dvy, R, gap, dist, h), False
    return pair_toi_parabola(dx, dy, dvx, dvy, dax, day, gap * (dist + R), R, h), False


@kernel
def _relative_at(dx, dy, dvx, dvy, dax, day, t):
    """Relative position and velocity at time t, from their components."""
    return dx + (dvx + 0.5 * dax * t) * t, dy + (dvy + 0.5 * day * t) * t, dvx + dax * t, dvy + day * t


@kernel
def _pair_quartic(dx, dy, dvx, dvy, dax, day, c0):
    """Coefficients (c4, c3, c2, c1, c0) of |dp + dv t + da t^2/2|^2 - R^2."""
    return (0.25 * (dax * dax + day * day), dvx * dax + dvy * day,
            dvx * dvx + dvy * dvy + dx * dax + dy * day, 2.0 * (dx * dvx + dy * dvy), c0)


@kernel
def pair_toi_parabola(dx, dy, dvx, dvy, dax, day, c0, R, h):
    """First time in (0, h] at which |dp + dv t + da t^2/2|^2 - R^2, a quartic
    whose value now is c0 (given as gap (|dp| + R), without cancellation),
    falls through zero; inf if it does not."""
    c4, c3, c2, c1, c0 = _pair_quartic(dx, dy, dvx, dvy, dax, day, c0)
    if R * R >= 1e-6 * c0:
        return first_down_crossing(c4, c3, c2, c1, c0, h)
    # R^2 is below the quartic's round-off, eps |dp|^2 (a ball of 1e-8 px 200 px
    # from a peg): its computed values near the contact are noise, which hid
    # the crossing (the balls passed through each other) or put it through the
    # peg. The times of its minima are well conditioned, and about each, in
    # time order, then about h, the quartic is expanded again from the
    # relative position there, whose components are exact to eps |dp|: the
    # first place where the balls overlap ends the piece the contact lies in,
    # found from there backwards (the first fall of -f(t - s) through zero)
    n, m0, m1 = quartic_minima(c4, c3, c2, c1, h)
    before = 0.0
    for k in range(n + 1):
        tm = m0 if k == 0 and n > 0 else (m1 if k == 1 and n > 1 else h)
        px, py, ux, uy = _relative_at(dx, dy, dvx, dvy, dax, day, tm)
        q4, q3, q2, q1, q0 = _pair_quartic(px, py, ux, uy, dax, day, px * px + py * py - R * R)
        if q0 <= 0.0:
            if q0 == 0.0:
                return tm
            back = first_down_crossing(-q4, q3, -q2, q1, -q0, tm - before)
            return tm - back if back < INF else tm
        before = tm
        if tm >= h:
            break
    return INF


@kernel
def pair_toi_linear(dx, dy, dvx, dvy, R, gap, dist, h):
    """Swept circle test, straight relative motion: the smaller root of
    |dp + dv t|^2 = R^2, as t = C / (-B + sqrt(B^2 - A C)), which stays exact
    when the balls are close (no cancellation)."""
    B = dx * dvx + dy * dvy
    if B >= 0.0:
        return INF  # moving apart or sideways
    A = dvx * dvx + dvy * dvy
    C = gap * (dist + R)
    disc = B * B - A * C
    if disc <= 1e-8 * (B * B):
        # B^2 - A C cancels where the closest approach is near R, or R is tiny
        # beside the distance (radii of 1e-7 px 200 px apart tunnelled): the same
        # quantity by Lagrange's identity, A R^2 - (dp x dv)^2, does not. Only
        # here, so that every other root keeps its bits
        cross = dx * dvy - dy * dvx
        disc = A * R * R - cross * cross
    if disc <= 0.0:
        return INF  # closest approach is farther than R (or a graze)
    t = C / (-B + math.sqrt(disc))
    if t > h:
        return INF
    return t if t > 0.0 else 0.0


@kernel
def _separation(dx, dy, dvx, dvy, dax, day, R, t):
    px, py, _, _ = _relative_at(dx, dy, dvx, dvy, dax, day, t)
    return math.sqrt(px * px + py * py) - R


@kernel
def _parted(dx, dy, dvx, dvy, dax, day, R, h):
    """For touching balls that are parting: (t, False) for the first probe time
    t = BISECTION_TOL x 2^k at which they are apart; (t, True) for a probe at
    which they approach again without having been seen apart (an excursion too
    short to resolve: the contact is at t); (inf, False) if neither within h."""
    t = BISECTION_TOL
    while t <= h:
        px, py, ux, uy = _relative_at(dx, dy, dvx, dvy, dax, day, t)
        if math.sqrt(px * px + py * py) - R > 0.0:
            return t, False
        if px * ux + py * uy < 0.0:
            return t, True
        t *= 2.0
    return INF, False


@kernel
def pair_toi_bisection(dx, dy, dvx, dvy, dax, day, R, touch, h):
    """Contact time by bisection on the separation s(t) = |dp(t)| - R.

    Straight relative motion (da = 0): s is convex and lowest at the closest
    approach, so s there says whether the balls meet, and [now, closest
    approach] brackets the first contact. On a parabola, bracketing by
    conservative advancement: from a time with s > 0, the gap cannot close
    sooner than tau with |v| tau + |da| tau^2 / 2 = s (|v| the relative speed
    now), so [t, t + tau] is contact-free and no contact is ever skipped,
    however small and fast the balls; a probe at 2 tau finds a time with
    s <= 0. Bisection then narrows [s > 0, s <= 0] to BISECTION_TOL and returns
    the s > 0 end, so the balls never overlap at the contact. Advancement
    crawls when the balls graze (a tiny separation, a large tangential speed):
    after BISECTION_MAX_STEPS, or when it cannot progress in floating point,
    the analytic root isolation finishes the search - giving up with "no
    contact" would let the balls pass through each other.

    Balls touching now (s <= touch) are parting: pair_toi has answered the
    approaching and resting cases. The contact to find is the next one, after
    they part (like the analytic method's first *downward* crossing), so the
    search starts at the first doubling probe at which they are apart. (With
    s > 0 but within round-off of R, say 2e-15 px just after a contact, the
    advancement's first probe, s / |v| later, read s <= 0 in |dp| - R: a
    contact found again at once, no impulse, eight times, then the collapse
    rule stopped the pair dead.)
    """
    accel = math.sqrt(dax * dax + day * day)
    t = 0.0
    if _separation(dx, dy, dvx, dvy, dax, day, R, 0.0) <= touch:
        t, again = _parted(dx, dy, dvx, dvy, dax, day, R, h)
        if again or t == INF:
            return t
    t0 = t
    for _ in range(BISECTION_MAX_STEPS):
        px = dx + (dvx + 0.5 * dax * t) * t
        py = dy + (dvy + 0.5 * day * t) * t
        vx = dvx + dax * t
        vy = dvy + day * t
        s = math.sqrt(px * px + py * py) - R
        if s <= 0.0:
            return t
        if accel == 0.0:
            b = px * vx + py * vy
            if b >= 0.0:
                return INF  # moving apart: never
            hi = min(t - b / (vx * vx + vy * vy), h)  # the closest approach
            if _separation(dx, dy, dvx, dvy, dax, day, R, hi) > 0.0:
                return INF  # they pass each other
            return _bisect_contact(dx, dy, dvx, dvy, dax, day, R, t, hi)
        w = math.sqrt(vx * vx + vy * vy)
        tau = 2.0 * s / (w + math.sqrt(w * w + 2.0 * accel * s))
        lo = t + tau
        if lo > h:
            return INF
        hi = min(t + 2.0 * tau, h)
        if _separation(dx, dy, dvx, dvy, dax, day, R, hi) <= 0.0:
            return _bisect_contact(dx, dy, dvx, dvy, dax, day, R, lo, hi)
        if lo <= t:
            break  # no progress possible in floating point
        t = lo
    # the crawl did not finish: the quartic's first crossing after t0 (where they are apart)
    px, py, vx, vy = _relative_at(dx, dy, dvx, dvy, dax, day, t0)
    dist = math.sqrt(px * px + py * py)
    return t0 + pair_toi_parabola(px, py, vx, vy, dax, day, (dist - R) * (dist + R), R, h - t0)


@kernel
def _bisect_contact(dx, dy, dvx, dvy, dax, day, R, lo, hi):
    """Narrow [lo, hi] (separation > 0 at lo, <= 0 at hi) to BISECTION_TOL; returns the lo end."""
    while hi - lo > BISECTION_TOL:
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break  # neighbouring floats
        if _separation(dx, dy, dvx, dvy, dax, day, R, mid) > 0.0:
            lo = mid
        else:
            hi = mid
    return lo


@kernel
def mix_restitution(e1, e2, rule):
    """Restitution of a contact from its two sides' values."""
    if rule == MIX_PRODUCT:
        return e1 * e2
    if rule == MIX_MIN:
        return min(e1, e2)
    if rule == MIX_MAX:
        return max(e1, e2)
    return 0.5 * (e1 + e2)


@kernel
def normal_impulse(vn, inv_m1, inv_m2, e):
    """Impulse magnitude J along the unit normal n for a relative normal
    velocity vn = (v2 - v1) . n < 0: v1 -= J inv_m1 n, v2 += J inv_m2 n.

    From momentum conservation and vn' = -e vn: J = -(1 + e) vn / (1/m1 + 1/m2).
    Kinetic energy changes by -(1 - e^2) vn^2 / (2 (1/m1 + 1/m2)) <= 0. An
    infinitely heavy side (wall, end point, pinned ball) has inv_m = 0.
    """
    return -(1.0 + e) * vn / (inv_m1 + inv_m2)


@kernel
def level_exit_time(x0, v, a, lo, hi, h):
    """First t in [0, h] at which x(t) = x0 + v t + a t^2/2 leaves [lo, hi]
    (rising through hi or falling through lo), or inf. At or past an end and
    moving out, it leaves now: a ball that reaches a support's end by another
    event (say a contact with the face right at a segment's end) must not go
    on sliding along the line's extension."""
    if x0 >= hi and (v > 0.0 or (v == 0.0 and a > 0.0)):
        return 0.0
    if x0 <= lo and (v < 0.0 or (v == 0.0 and a < 0.0)):
        return 0.0
    best = INF
    n, r0, r1 = quadratic_roots(0.5 * a, v, x0 - hi)
    if n > 0 and 0.0 < r0 <= h and v + a * r0 > 0.0:
        best = r0
    elif n > 1 and 0.0 < r1 <= h and v + a * r1 > 0.0:
        best = r1
    n, r0, r1 = quadratic_roots(0.5 * a, v, x0 - lo)
    if n > 0 and 0.0 < r0 <= h and v + a * r0 < 0.0:
        best = min(best, r0)
    elif n > 1 and 0.0 < r1 <= h and v + a * r1 < 0.0:
        best = min(best, r1)
    return best
