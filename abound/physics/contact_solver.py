"""Lasting contacts: one normal impulse per contact, solved together.

Why. A frictionless ball pressed against others while they all move (a layer
sliding down a slope, balls pouring through a funnel) touches its neighbours
for as long as they move together. Resolved one impulse at a time, such a
contact is the inelastic collapse: infinitely many ever smaller bounces in a
finite time. The TC model keeps them elastic, so the layer rattles for ever;
stopping the balls puts them to sleep where nothing can hold them. A set of
lasting contacts has to be solved as a set.

What. clusters.py gathers the balls that touch slowly and lastingly (mode
CLUSTER) at ticks h apart and lists their contacts, with one another and
with fixed things (walls, segment ends, pinned and sleeping balls). This
module finds one impulse lambda >= 0 per contact, along its normal
(frictionless), such that at the END of the tick each contact's gap is at
least a target ("speculative contacts", as Box2D v3 uses them): with gap d,
relative normal velocity v (positive: opening) and relative normal
acceleration a (0 between two free balls: gravity cancels; gravity's normal
part against a fixed thing), the new v' must satisfy

    d + v' h + a h^2 / 2 >= target   where a <= 0,
    d + v' h             >= target   where a > 0 (a ball under a ceiling).

Between ticks the balls move on their exact parabolas. Where a <= 0 the
normal gap is concave in time, >= 0 at both ends, so >= 0 throughout; where
a > 0 the linear bound keeps it above the straight line between d and the
target. For discs the distance of the centres grows at least as fast as its
normal part (|c + u| >= (c + u).c / |c| = |c| + u_n), so the bound on the
normal gap bounds the true gap, whatever the tangential motion and whatever
d. target = min(d, TARGET_GAP x radius): a gap that is open closes to a
hair's breadth by the end of the tick and none is pushed wider than it is
(no energy is made from positions); an overlap (d < 0, what round-off or an
unconverged solve left) is opened within one tick.

How. Projected Gauss-Seidel on the impulses (each contact in turn gets the
impulse that meets its bound, the running sum clamped at >= 0), until no
impulse changes a velocity by more than tol or after a number of sweeps set
by the contacts' count (SOLVER_WORK). Each sweep lowers the dual objective
lambda.A.lambda / 2 + lambda.(v - v_min) from 0, so the kinetic energy after
the solve is at most the energy before plus sum(lambda v_min): contacts with
v_min <= 0 (all between moving balls that do not overlap) only remove
energy; against a fixed thing under gravity v_min = -a h / 2 lifts a ball
exactly as far as gravity brings it back by the next tick.

Exactness never rests on convergence: the ticks' caller checks every
contact's bound after the solve, and a ball with a bound left unmet beyond
round-off is set free, its contacts then watched by the exact events.

Why this and not an exact LCP: the clusters are small (tens to hundreds of
balls), the sub-step h is short (about 2 ms), and each tick starts from
velocities the last tick made consistent: Gauss-Seidel converges in a few
sweeps for the layers and heaps of these scenes, and costs a few
multiplications per contact per sweep.
"""
from ._jit import kernel

TARGET_GAP = 1e-6  # x the smaller radius: the gap a closing contact ends a tick at
# Gauss-Seidel sweeps at most per solve: SOLVER_WORK contact updates, at
# least SOLVER_MIN_SWEEPS and at most SOLVER_MAX_SWEEPS sweeps
SOLVER_WORK = 1000000
SOLVER_MIN_SWEEPS = 128
SOLVER_MAX_SWEEPS = 1000


@kernel
def speculative_min_speed(gap, an, h, target):
    """The least relative normal velocity (px/s, positive opening) that keeps a
    contact's gap (px) at or above 0 through a tick of h s and at or above
    target (px, target <= max(gap, 0)) at its end, given the contact's
    relative normal acceleration an (px/s^2; see the module docstring)."""
    v = (target - gap) / h
    if an < 0.0:
        v -= 0.5 * an * h
    return v


@kernel
def normal_speed(vel, C, c):
    """Relative normal velocity of contact c (px/s, positive opening)."""
    ci, cj, cn, v_min, w_j, lam = C
    i, j = ci[c], cj[c]
    vn = vel[i, 0] * cn[c, 0] + vel[i, 1] * cn[c, 1]
    if j >= 0 and w_j[c] > 0.0:
        vn -= vel[j, 0] * cn[c, 0] + vel[j, 1] * cn[c, 1]
    return vn


@kernel
def solve_impulses(vel, inv_mass, C, nc, tol):
    """Projected Gauss-Seidel over contacts 0..nc-1 of C; changes vel in place.

    vel (N, 2) float64 px/s, inv_mass (N,) 1/mass. C = (ci (M,) int64, the
    moving ball; cj (M,) int64, the other ball or < 0 for a wall; cn (M, 2)
    unit normal from the other side into ci; v_min (M,) px/s; w_j (M,) float64,
    1 when cj moves with the impulse, 0 when it is fixed; lam (M,) impulses,
    mass px/s: read as the first guess (warm start: a lasting contact's last
    impulse, or 0), written). tol px/s: a sweep that changes no velocity by more has
    converged. Returns the sweeps used, or -1 if it did not converge."""
    ci, cj, cn, v_min, w_j, lam = C
    for c in range(nc):  # warm start: the impulses lam holds, applied first
        i, j = ci[c], cj[c]
        vel[i, 0] += lam[c] * inv_mass[i] * cn[c, 0]
        vel[i, 1] += lam[c] * inv_mass[i] * cn[c, 1]
        if j >= 0 and w_j[c] > 0.0:
            vel[j, 0] -= lam[c] * inv_mass[j] * cn[c, 0]
            vel[j, 1] -= lam[c] * inv_mass[j] * cn[c, 1]
    sweeps = max(SOLVER_MIN_SWEEPS, min(SOLVER_MAX_SWEEPS, SOLVER_WORK // max(nc, 1)))
    for sweep in range(sweeps):
        biggest = 0.0
        for q in range(nc):
            # forward and backward in turn (symmetric Gauss-Seidel): a
            # heap's weight then travels both ways through its contacts
            c = q if sweep % 2 == 0 else nc - 1 - q
            i, j = ci[c], cj[c]
            nx, ny = cn[c, 0], cn[c, 1]
            inv_i = inv_mass[i]
            inv_j = 0.0
            if j >= 0:
                inv_j = inv_mass[j] * w_j[c]
            k = inv_i + inv_j
            new = max(lam[c] + (v_min[c] - normal_speed(vel, C, c)) / k, 0.0)
            d = new - lam[c]
            if d == 0.0:
                continue
            lam[c] = new
            vel[i, 0] += d * inv_i * nx
            vel[i, 1] += d * inv_i * ny
            if inv_j > 0.0:
                vel[j, 0] -= d * inv_j * nx
                vel[j, 1] -= d * inv_j * ny
            biggest = max(biggest, abs(d) * k)
        if biggest <= tol:
            return sweep + 1
    return -1


@kernel
def _meets(vx, vy, cn, v_min, k, slack):
    """Whether velocity (vx, vy) px/s meets every bound cn[c].v >= v_min[c] - slack."""
    for c in range(k):
        if cn[c, 0] * vx + cn[c, 1] * vy < v_min[c] - slack:
            return False
    return True


@kernel
def project_one(vx, vy, cn, v_min, k, slack):
    """The velocity nearest (vx, vy) px/s that meets k bounds n_c.v >= v_min[c]
    on one ball against things that do not give way (cn (>=k, 2) unit
    normals into the ball, v_min (>=k,) px/s), exactly: returns
    (vx', vy', True), or (vx, vy, False) where no velocity meets them all
    (the ball is wedged). slack px/s: what a bound may miss by in round-off.

    One ball's bounds are half-planes of its velocity, and the nearest point
    of their intersection is the point itself, or its projection on one
    bound's line, or the corner of two lines: the nearest of those
    candidates that meets every bound is the answer (the minimum of a
    convex problem lies on the fewest active bounds that hold it). Exact in
    O(k^3) for the handful of contacts one ball has, where Gauss-Seidel on
    two nearly parallel bounds (a ball in a narrow wedge) takes thousands of
    sweeps and may not converge at all."""
    if _meets(vx, vy, cn, v_min, k, slack):
        return vx, vy, True
    best, bx, by, found = 0.0, vx, vy, False
    for a in range(k):  # on one bound's line
        ax, ay = cn[a, 0], cn[a, 1]
        s = v_min[a] - (ax * vx + ay * vy)
        if s <= 0.0:
            continue  # (met already: its line is not the nearest point)
        px, py = vx + s * ax, vy + s * ay
        d2 = s * s
        if (not found or d2 < best) and _meets(px, py, cn, v_min, k, slack):
            best, bx, by, found = d2, px, py, True
    for a in range(k):  # at the corner of two lines
        for b in range(a + 1, k):
            ax, ay, bxn, byn = cn[a, 0], cn[a, 1], cn[b, 0], cn[b, 1]
            det = ax * byn - ay * bxn
            if abs(det) < 1e-12:
                continue  # parallel: no corner
            px = (v_min[a] * byn - ay * v_min[b]) / det
            py = (ax * v_min[b] - v_min[a] * bxn) / det
            dx, dy = px - vx, py - vy
            d2 = dx * dx + dy * dy
            if (not found or d2 < best) and _meets(px, py, cn, v_min, k, slack):
                best, bx, by, found = d2, px, py, True
    if not found:
        return vx, vy, False
    return bx, by, True
