"""Black holes: attractors that pull every free ball (inverse square, softened), and may swallow it.

A black hole at c with strength GM (px^3/s^2) and softening eps (px) gives a
free ball at p the acceleration GM (c - p) / (|c - p|^2 + eps^2)^(3/2), on top
of gravity.

The pull is held constant along short sub-steps of h: each free ball flies
with gravity plus its own constant field (the engine's per-ball field,
physics/motion.gravity_on), so its path is a parabola and every contact is
still a root of the polynomials the engine solves exactly (two balls with
different fields meet at a root of a quartic, as a ball meets a pinned one).
The field held is the pull's average over the sub-step's two ends, the end
predicted on the free parabola (three fixed-point rounds): the implicit
trapezoidal rule, time-symmetric, so an orbit's energy does not drift. (Held
at the sub-step's start instead, a circular orbit spirals out by 5% an orbit;
at the predicted middle it keeps 1%; the average keeps 1e-7 over 10 orbits.)
Its error in a ball's energy still grows without bound as a ball passes
closer to a centre than the softening smooths (a fall through an unsoftened
hole multiplied it by 6e4), and after a contact the field held is that of a
path the ball no longer takes. So each piece of a sub-step logs its
contacts, and a ball that flew free through it is then given the speed its
own energy asks for where it is: its energy at the piece's start (conserved
exactly along a free flight) plus what its contacts gave or took, each
computed from the log (_contact_work); the direction stays the held pull's
(_keep_energy). A ball feels a hole as a uniform ball feels a point mass:
the inverse square while the centre lies outside it, a pull growing from
zero at its own centre once inside (_towards), the hole's softening on top.

The sub-step, chosen afresh before each one from where the balls are: what
is left of the step divided by the least count k for which it is at most
SUBSTEP times the shortest local dynamical time of a free ball,
sqrt((d^2 + eps^2)^(3/2) / GM) (a circular orbit at d takes 2 pi of them),
so the pull changes little along one; at most MAX_SUBSTEPS a step. (Chosen
once a step, from where the balls were at its start, a ball falling in
passed the centre between two sub-steps: its energy changed by half. Also
bounding it by the time a ball takes to cross its distance to the hole
halved the error of such a pass again, at twice the cost in the hot gas.)

Swallowing (``swallow``): a free ball is taken out when its centre reaches a
hole's horizon and put back, at rest, at the first free place found near the
top of the box (the count stays; where no place is free it stays where it
is). The crossing is an event: before each piece of a sub-step the first
time a free ball's parabola reaches a horizon is solved for (the same
quartic), the step runs to that time, the ball goes, and the sub-step goes
on. A ball whose path a contact changes within a piece (a rare thing so
close to a hole) is taken at the end of the first piece it ends inside; one
that a contact holds off the horizon it was run to is not predicted again
in that sub-step (a ball resting on something just outside a horizon would
otherwise cut every sub-step into MAX_PIECES).

On a table with rolling friction (a rolling ball's path must stay a straight
line for its stop to be exact) and on an outside backend (which has no
field), the pull is a kick at each sub-step's ends instead (kick-drift-kick:
the exact step between two kicks of h / 2), swallowing at the sub-steps' ends.
GL-free.
"""
import math
from dataclasses import dataclass

import numpy as np

from abound.physics.backends import BUILT_IN
from abound.physics.checks import segment_distance
from abound.defaults import TABLE_GRAVITY
from abound.physics.kernels import ANALYTIC
from abound.physics.world import FREE

SUBSTEP = 0.1           # a sub-step at most this times the shortest local dynamical time
MAX_SUBSTEPS = 256      # a step's sub-steps at most
HOLD_ROUNDS = 3         # fixed-point rounds of the trapezoidal field (each evaluates the pull once more)
MAX_PIECES = 64         # pieces a sub-step is cut into at swallowing events; then the rest is run whole
ON_HORIZON = 1e-9       # of the horizon: a ball run to its crossing is there within round-off
RESPAWN_TRIES = 200     # random places tried for a swallowed ball, from the top down
PLACED_ORBIT = 3.0      # s: a placed hole's pull gives this orbit a quarter of the box's smaller side away
PLACED_LIFT = 2.0       # ...or, if stronger, this many times gravity half the box's smaller side away
PLACED_SOFTENING = 0.05  # of the box's smaller side


@dataclass
class BlackHole:
    """x, y: px; strength: GM, px^3/s^2; softening: px; horizon: px (0: none); swallow: bool."""

    x: float
    y: float
    strength: float
    softening: float = 10.0
    horizon: float = 0.0
    swallow: bool = False


def place(sim, x, y, lift=False):
    """A black hole at (x, y) sized to the box, as the demo's middle-click places one: a
    circular orbit a quarter of the box's smaller side away takes PLACED_ORBIT s
    (T = 2 pi sqrt(r^3 / GM)); no horizon. With ``lift`` (the saver's ``black_hole``
    livening, for a scene at rest) at least PLACED_LIFT times gravity half that side away:
    weaker than gravity, it lifted nothing off a still pile. Returns its index."""
    side = min(sim.width, sim.height)
    r = 0.25 * side
    strength = 4.0 * math.pi ** 2 * r ** 3 / PLACED_ORBIT ** 2
    if lift:
        strength = max(strength, PLACED_LIFT * float(np.hypot(*sim.gravity)) * (0.5 * side) ** 2)
    return sim.add_black_hole(x, y, strength, softening=PLACED_SOFTENING * side)


def _towards(hole, positions, radii=None):
    """(d (N, 2) px from each position to the hole, |d|^2 (N,) and s^2 = max(|d|^2, r^2) +
    softening^2 (N,) px^2), r each ball's radius (radii (N,) px; None: points, r = 0).

    The pull on a ball is GM d / s^3: a uniform ball feels a point mass as a point
    does while the mass lies outside it (the inverse square, exactly), and once the
    mass is inside it, a pull growing from 0 at its centre (GM m d / r^3 for a
    sphere), finite; the hole's softening on top. Without that core a ball could
    pass through an unsoftened centre, where the sub-steps cannot follow it (one
    came out of the step with 1e5 times the energy of the whole scene)."""
    d = np.array([hole.x, hole.y]) - positions
    d2 = np.einsum("ij,ij->i", d, d)
    core = d2 if radii is None else np.maximum(d2, radii * radii)
    return d, d2, core + hole.softening * hole.softening


def pull(positions, holes, radii=None):
    """(N, 2) float64 px/s^2: the acceleration every black hole gives a ball at each position
    (of radius radii (N,) px: _towards; none at the very centre of a hole without softening
    on a point: every way is the same there)."""
    acc = np.zeros_like(positions, dtype=np.float64)
    for h in holes:
        d, _, s2 = _towards(h, positions, radii)
        at = s2 > 0.0
        acc[at] += d[at] * (h.strength / (s2[at] * np.sqrt(s2[at])))[:, None]
    return acc


def potential(positions, holes, radii=None):
    """(N,) float64 px^2/s^2: every black hole's potential per unit mass at each position
    (of a ball of radius radii: _towards), -GM / s, and within a ball's core (|d| < r)
    less by GM (r^2 - |d|^2) / (2 s^3), so that the pull is minus its gradient there
    too (-inf at the very centre of a hole without softening, for a point)."""
    u = np.zeros(len(positions))
    for h in holes:
        _, d2, s2 = _towards(h, positions, radii)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # (what is not finite is left alone)
            u -= h.strength / np.sqrt(s2)
            if radii is not None:
                inside = d2 < radii * radii
                u[inside] -= h.strength * (radii[inside] ** 2 - d2[inside]) / (2.0 * s2[inside] ** 1.5)
    return u


def substep(positions, holes, left, most=MAX_SUBSTEPS, radii=None):
    """The next sub-step, s, of the ``left`` s of a step still to run (see the module doc):
    left / k for the least k that makes it at most SUBSTEP times the shortest local
    dynamical time of a ball at ``positions`` (N, 2) (the free ones, of radius radii);
    at least left / ``most`` (the sub-steps the step has left)."""
    return _substep_for(_shortest_time(positions, holes, radii)[0], left, most)[0]


def _shortest_time(positions, holes, radii):
    """(s, k): the shortest local dynamical time of a ball at ``positions`` near any of
    ``holes``, and the index of that hole (inf, -1 where none matters)."""
    shortest, which = math.inf, -1
    for k, h in enumerate(holes if len(positions) else ()):
        _, _, r2 = _towards(h, positions, radii)
        with np.errstate(over="ignore"):
            t = float(np.sqrt(r2.min() ** 1.5 / h.strength))
        if not t >= shortest:  # (NaN too: a ball at an unsoftened hole's centre)
            shortest, which = t, k
    return shortest, which


def _substep_for(shortest, left, most):
    """(the next sub-step, s; whether the ``most`` sub-steps left can follow the pull:
    each at most SUBSTEP x ``shortest``, to round-off) for ``left`` s still to run."""
    if not shortest > 0.0:  # (a ball at an unsoftened hole's centre: as short as allowed)
        return left / max(1, most), False
    if not math.isfinite(shortest):  # (no hole near enough to anything to matter)
        return left, True
    h = left / min(max(1, most), max(1, math.ceil(left / (SUBSTEP * shortest))))
    return h, left <= most * SUBSTEP * shortest * (1.0 + 1e-9)


def followed_strength(softening, radius, dt):
    """px^3/s^2: the strongest pull whose sub-steps MAX_SUBSTEPS a step of dt s can
    follow for a ball of ``radius`` px through the centre of a hole of ``softening`` px
    (there its dynamical time is shortest: sqrt((radius^2 + softening^2)^1.5 / GM))."""
    return (MAX_SUBSTEPS * SUBSTEP / dt) ** 2 * (radius * radius + softening * softening) ** 1.5


def _too_strong(sim, hole, dt):
    """Say once per simulation that ``hole`` pulls too hard for MAX_SUBSTEPS sub-steps
    a step to follow (abound.BlackHoleWarning): balls passing its centre may then
    gain or lose energy (a ball of radius 10 through a hole of softening 10 at
    dt 1/60 s: none at 1e11 px^3/s^2, 4 sub-steps needed for each allowed; a
    quarter of its energy at 3e11, 7 for each). The strength followed is
    followed_strength's for the smallest free ball."""
    if sim._warned_strength:
        return
    sim._warned_strength = True
    import warnings
    from abound.errors import BlackHoleWarning
    h = sim.black_holes[hole]
    r = float(sim.radii[~sim.pinned].min())
    most = followed_strength(h.softening, r, dt)
    need = MAX_SUBSTEPS * math.sqrt(h.strength / most)
    warnings.warn(BlackHoleWarning(
        f"black hole {hole} (strength {h.strength:g}) pulls harder than steps of {dt:g} s can follow: a ball "
        f"of radius {r:.3g} through its centre needs {need:,.0f} sub-steps a step, {MAX_SUBSTEPS} are allowed, "
        f"and balls passing it may gain or lose energy (with its softening, {h.softening:g} px, a strength of "
        f"at most {most:.2g} is followed; a wider softening or a shorter dt also helps)"),
        stacklevel=5)  # (the caller of Simulation.step)


def step(sim, dt, take):
    """Advance ``sim`` by dt in sub-steps (see the module doc); ``take(h)`` takes one
    ordinary step of h (the caller keeps what it returns)."""
    holes = sim.black_holes
    held = holds(sim)
    if not held and sim._field_held:
        sim._hold_field(None)  # (held until now: the kicks take over, not on top of it)
    left = dt
    for count in range(MAX_SUBSTEPS):
        free = ~sim.pinned
        shortest, hole = _shortest_time(sim.positions[free], holes, sim.radii[free])
        h, followed = _substep_for(shortest, left, MAX_SUBSTEPS - count)
        if not followed:
            _too_strong(sim, hole, dt)
        last = h >= left * (1.0 - 1e-9)
        if last:
            h = left  # (no round-off left over)
        if held:
            _held_substep(sim, holes, h, take)
        else:
            kick(sim, holes, 0.5 * h)
            take(h)
            kick(sim, holes, 0.5 * h)
            swallow(sim, holes)
        if last:
            return
        left -= h


def holds(sim):
    """Whether the pull is held as each ball's field (the module doc): on abound's own
    engines, and not on a table where rolling friction is in effect."""
    return sim.backend in BUILT_IN and _grip(sim) == 0.0


def _grip(sim):
    """px/s^2: the rolling friction's deceleration where it is in effect (a level table,
    gravity 0: backends.make_params), else 0."""
    return 0.0 if np.any(sim.gravity) else sim.rolling_friction * TABLE_GRAVITY


def _eaters(holes):
    """The holes that swallow: those with ``swallow`` and a horizon."""
    return [h for h in holes if h.swallow and h.horizon > 0.0]


def _held_substep(sim, holes, h, take):
    """One sub-step of h with each free ball's field held (hold), cut into pieces at the
    swallowing events (crossing). A ball run to its crossing but not on the horizon there
    (a contact changed its path: one held just outside) is not predicted again in this
    sub-step: it is taken at the end if it is inside by then."""
    left = h
    passed = []
    for _ in range(MAX_PIECES):
        field = hold(sim, holes, left)
        t, i = crossing(sim, holes, field, left, passed)
        piece = min(t, left)
        flying = _flights(sim, holes, field)
        stats = take(piece, True)  # (its contacts logged: _keep_energy accounts for them)
        _keep_energy(sim, holes, flying, piece, stats.contact_log)
        left -= piece
        if t <= piece and i not in swallow(sim, holes, i):
            passed.append(i)
        if left <= 0.0 or t > piece:
            return
    hold(sim, holes, left)
    take(left)
    swallow(sim, holes)


def _flights(sim, holes, field):
    """What _keep_energy needs of the balls now, before a piece whose held field is
    ``field`` (N, 2) px/s^2: which fly free, their velocities (N, 2) px/s and
    accelerations (gravity plus the field), and each one's energy per unit mass
    (kinetic, the holes' potential, gravity's), px^2/s^2."""
    w, n = sim._world, len(sim)
    p, v = w.pos[:n], w.vel[:n]
    g = np.asarray(sim.gravity, dtype=np.float64)
    energy = 0.5 * np.einsum("ij,ij->i", v, v) + potential(p, holes, w.radius[:n]) - p @ g
    return w.mode[:n] == FREE, v.copy(), g + field, energy


def _contact_work(sim, flying, log):
    """What the contacts in ``log`` (a piece's contact log) did to each ball: (the change
    of its kinetic energy per unit mass (N,) px^2/s^2, the sum of its velocity changes
    (N, 2) px/s). A ball's velocity just before a contact at t is its start velocity,
    plus its acceleration x t, plus the changes of its earlier contacts (a free ball's
    path between contacts is a parabola); each contact's impulse J along -n on ball a
    (+n on ball b) changes it by dv = J n / m and its energy by v.dv + dv^2 / 2."""
    _, v0, accel, _ = flying
    n = len(sim)
    work, kicks = np.zeros(n), np.zeros((n, 2))
    if log is None or not len(log):
        return work, kicks
    pinned, mass = sim.pinned, sim.masses
    normal = np.stack([log["nx"], log["ny"]], axis=1)
    a, b = log["a"].astype(np.int64), log["b"].astype(np.int64)
    other = b >= 0
    ball = np.concatenate([a, b[other]])
    t = np.concatenate([log["t"], log["t"][other]])
    j = np.concatenate([-log["impulse"], log["impulse"][other]])
    dv = (j / mass[ball])[:, None] * np.concatenate([normal, normal[other]])
    keep = ~pinned[ball]
    ball, t, dv = ball[keep], t[keep], dv[keep]
    order = np.lexsort((t, ball))  # each ball's contacts in time order (a log is in time order: stable)
    ball, t, dv = ball[order], t[order], dv[order]
    total = np.cumsum(dv, axis=0)
    first = np.flatnonzero(np.r_[True, ball[1:] != ball[:-1]])
    start = np.repeat(total[first] - dv[first], np.diff(np.r_[first, len(ball)]), axis=0)
    before = v0[ball] + accel[ball] * t[:, None] + (total - dv - start)
    np.add.at(work, ball, np.einsum("ij,ij->i", before, dv) + 0.5 * np.einsum("ij,ij->i", dv, dv))
    np.add.at(kicks, ball, dv)
    return work, kicks


def _keep_energy(sim, holes, flying, h, log):
    """Give each ball that flew free through the piece of h s just run the speed its
    energy asks for where it is now: its energy at the piece's start plus what its
    contacts (``log``) gave or took (_contact_work). Between contacts a ball's own
    energy is conserved exactly; the held pull conserves it only to the sub-step's
    error, which grows without bound as the softening goes to 0 (a ball falling
    through an unsoftened hole left it with 6e4 times its energy, at softening 1 with
    a quarter more each pass), and after a contact the field held for the path it
    no longer takes is wrong too (the shipped black_hole scene at restitution 1 gained
    a sixth of its kinetic energy in 5 s, ten balls at softening 1 lost 3.8 times
    theirs). Only a ball whose velocity the log explains (start velocity plus its
    acceleration x h plus its contacts' changes, to round-off) is touched: one that
    anything else moved (a rest or budget rule) is left as it is. The direction
    stays the held pull's."""
    free, v0, accel, energy = flying
    w, n = sim._world, len(sim)
    if not n:
        return
    work, kicks = _contact_work(sim, flying, log)
    p, v = w.pos[:n], w.vel[:n]
    expected = v0 + accel * h + kicks
    scale_v = np.abs(v0) + np.abs(accel) * h + np.abs(kicks) + np.abs(v)
    explained = np.all(np.abs(v - expected) <= 1e-9 * scale_v, axis=1)
    speed = np.hypot(v[:, 0], v[:, 1])
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        kinetic = energy + work - potential(p, holes, w.radius[:n]) + p @ np.asarray(sim.gravity, dtype=np.float64)
        # a ball the sub-step's error has put where its energy cannot take it (a pass within
        # a fraction of the softening of the centre, in more sub-steps than a step may have)
        # is left at rest there: the least energy it can have
        scale = np.where(kinetic > 0.0, np.sqrt(2.0 * kinetic / np.einsum("ij,ij->i", v, v)), 0.0)
    fix = free & (w.mode[:n] == FREE) & explained & (speed > 0.0) & np.isfinite(kinetic)
    if fix.any():
        # a speed so slow that its square underflows (1e-160 px/s; kinetic > 0 there): the
        # ratio of squares is infinite; its direction times the speed wanted instead
        tiny = fix & ~np.isfinite(scale)
        vel = w.vel[:n]  # (v: the same live array)
        vel[tiny] = v[tiny] / speed[tiny, None] * np.sqrt(2.0 * kinetic[tiny])[:, None]
        scaled = fix & ~tiny
        vel[scaled] *= scale[scaled, None]
        sim._seen = (w.pos[:n].copy(), w.vel[:n].copy())  # (the engine's own doing, not an edit to push apart)


def hold(sim, holes, h):
    """Set every free ball's field for the next h s: the pull averaged over the ends of its
    parabola (module doc). Returns the field, (N, 2) px/s^2 (0 for pinned balls)."""
    free = ~sim.pinned
    p, v, r = sim.positions[free], sim.velocities[free], sim.radii[free]
    g = np.asarray(sim.gravity, dtype=np.float64)
    start = pull(p, holes, r)
    held = start
    for _ in range(HOLD_ROUNDS):
        held = 0.5 * (start + pull(p + v * h + (0.5 * h * h) * (g + held), holes, r))
    field = np.zeros((len(sim), 2))
    field[free] = held
    sim._hold_field(field)
    return field


def crossing(sim, holes, field, h, passed=()):
    """(t, i): the first time within h (s) that a free ball's centre, on its parabola under
    gravity and its field, reaches a swallowing hole's horizon from outside, and which
    ball (none of ``passed``); (inf, -1) if none does."""
    eaters = _eaters(holes)
    if not eaters or not len(sim):
        return math.inf, -1
    watched = ~sim.pinned
    watched[list(passed)] = False
    free = np.flatnonzero(watched)
    p, v = sim.positions[free], sim.velocities[free]
    a = np.asarray(sim.gravity, dtype=np.float64) + field[free]
    reach = np.hypot(v[:, 0], v[:, 1]) * h + 0.5 * np.hypot(a[:, 0], a[:, 1]) * h * h
    toi = sim._backend.pair_toi  # (the engine's own contact time: ball and hole as two circles)
    best, who = math.inf, -1
    for b in eaters:
        dist = np.hypot(b.x - p[:, 0], b.y - p[:, 1])
        for q in np.flatnonzero((dist > b.horizon) & (dist - b.horizon <= reach)):
            (dx, dy), (vx, vy), (ax, ay) = (b.x, b.y) - p[q], v[q], a[q]
            t, _ = toi(dx, dy, -vx, -vy, -ax, -ay, b.horizon, 0.0, h, ANALYTIC)
            if t < best:
                best, who = t, int(free[q])
    return best, who


def kick(sim, holes, h):
    """Every free ball's velocity += pull x h; on a table with rolling friction, not a ball
    at rest that the pull cannot move (no stronger than the friction: it holds it)."""
    free = ~sim.pinned
    if free.any():
        v = sim.velocities.copy()
        a = pull(sim.positions[free], holes, sim.radii[free])
        grip = _grip(sim)
        if grip > 0.0:
            a[(v[free] == 0.0).all(axis=1) & (np.hypot(a[:, 0], a[:, 1]) <= grip)] = 0.0
        v[free] += a * h
        sim.velocities = v


def swallow(sim, holes, reached=-1, rng=None):
    """Free balls within a swallowing hole's horizon, and ball ``reached`` if it is on one
    (run to its crossing), put back at rest near the top. Returns their indices."""
    eaters = _eaters(holes)
    if not eaters or not len(sim):
        return []
    p = sim.positions
    inside = np.zeros(len(sim), dtype=bool)
    for h in eaters:
        dist = np.hypot(p[:, 0] - h.x, p[:, 1] - h.y)
        inside |= dist < h.horizon
        if reached >= 0:
            inside[reached] |= dist[reached] <= h.horizon * (1.0 + ON_HORIZON)
    inside &= ~sim.pinned
    taken = []
    rng = rng or np.random.default_rng(len(sim) + int(sim.time * 1000.0))
    for i in np.flatnonzero(inside):
        spot = free_place(sim, i, eaters, rng)
        if spot is None:
            continue
        pos, vel = sim.positions.copy(), sim.velocities.copy()
        pos[i], vel[i] = spot, 0.0
        sim.positions, sim.velocities = pos, vel
        taken.append(int(i))
    return taken


def free_place(sim, i, holes, rng):
    """A place for ball i clear of every other ball, wall and horizon: random places tried
    from the top of the box down; None when none is found."""
    r = float(sim.radii[i])
    w, h = sim.width, sim.height
    if 2 * r >= min(w, h):
        return None
    others = np.delete(np.arange(len(sim)), i)
    p, radii = sim.positions[others], sim.radii[others]
    walls = sim.walls
    for t in range(RESPAWN_TRIES):
        depth = (t // 20 + 1) / (RESPAWN_TRIES // 20)  # the top tenth first, then deeper
        x = rng.uniform(r, w - r)
        y = rng.uniform(max(r, h - r - depth * (h - 2 * r)), h - r)
        if len(p) and np.any(np.hypot(p[:, 0] - x, p[:, 1] - y) < radii + r):
            continue
        if len(walls) and np.any(segment_distance(np.array([x, y]), walls[:, :2], walls[:, 2:]) < r):
            continue
        if any(math.hypot(x - b.x, y - b.y) < b.horizon + r for b in holes):
            continue
        return (x, y)
    return None

