"""The same balls in pymunk (Chipmunk2D), a fixed-step impulse engine, to compare abound with.

``PymunkWorld(sim)`` copies a :class:`abound.Simulation` as it is now into a
``pymunk.Space``:

- a free ball becomes a dynamic body (its mass, the moment of a disc) with a
  circle (its radius, elasticity = its restitution, friction 0); a pinned
  ball a circle on the static body;
- an interior wall a segment of radius 0 on the static body, elasticity = the
  wall's restitution;
- the box sides, with ``walls="thick"`` (the default), four segments of
  radius ``THICKNESS`` (100 px) lying outside the box with their surface on
  the box side: a ball must get 100 px into a wall within one step to leak
  out. ``walls="thin"`` puts radius-0 segments on the box sides instead, what
  a pymunk program usually does, and fast or resting balls leak through them;
- pymunk multiplies the two elasticities of a contact, which is abound's
  ``restitution_mix = "product"`` (other mixes are approximated by it);
- the space: the same gravity, ``ITERATIONS`` (10) solver iterations, a
  spatial hash (``use_spatial_hash(dim, count)``) with cells of the mean ball
  diameter and 10 cells per shape; pymunk's defaults otherwise (collision_slop
  0.1 px, collision_bias, collision_persistence 3, no damping, no sleeping);
  one ``space.step(dt)`` per frame.

It measures what abound's benchmark measures, the same way (``abound.physics.checks``):
energy (kinetic, rotational included, plus gravitational potential of the
free balls), the largest overlap relative to the radius, the balls whose
centre left the box, and the contact pairs pymunk solved in the last step.
"""
import numpy as np
import pymunk
import pymunk.batch

from abound.physics import checks

THICKNESS = 100.0   # px, radius of the thick box walls
ITERATIONS = 10     # pymunk's solver iterations per step (its default)
HASH_CELLS_PER_SHAPE = 10
WALLS = ("thick", "thin")
_TOUCHING = (0, 1)  # Chipmunk arbiter states FIRST_COLLISION and NORMAL: touching in the last step


class PymunkWorld:
    """A pymunk.Space holding the balls, walls, gravity and restitution of a Simulation."""

    def __init__(self, sim, walls="thick", iterations=ITERATIONS, threads=1):
        if walls not in WALLS:
            raise ValueError(f"walls must be one of {', '.join(WALLS)}, not {walls!r}")
        self.width, self.height = float(sim.width), float(sim.height)
        self.walls = walls
        self.gravity = np.array(sim.gravity, dtype=float)
        self.restitution_mix = sim.restitution_mix
        self.segments = np.asarray(sim.walls, dtype=float).reshape(-1, 4)
        self.radii = np.array(sim.radii, dtype=float)
        self.masses = np.array(sim.masses, dtype=float)
        self.free = ~np.asarray(sim.pinned, dtype=bool)
        self._pos = np.array(sim.positions, dtype=float)  # pinned balls keep these
        self.time = 0.0

        # threads 2: Chipmunk's "hasty" space, whose solver runs on two threads
        space = pymunk.Space(threaded=threads > 1)
        if threads > 1:
            space.threads = int(threads)
        space.gravity = tuple(self.gravity)
        space.iterations = int(iterations)
        shapes, self.bodies = [], []
        for i, ((x, y), (vx, vy), r, m, e) in enumerate(zip(
                sim.positions, sim.velocities, self.radii, self.masses, sim.restitutions)):
            if self.free[i]:
                body = pymunk.Body(float(m), pymunk.moment_for_circle(float(m), 0.0, float(r)))
                body.position = (float(x), float(y))
                body.velocity = (float(vx), float(vy))
                self.bodies.append(body)
                shape = pymunk.Circle(body, float(r))
            else:
                shape = pymunk.Circle(space.static_body, float(r), offset=(float(x), float(y)))
            shape.elasticity = float(e)
            shape.friction = 0.0
            shapes.append(shape)
        for (x0, y0, x1, y1), e in zip(self.segments, sim.wall_restitutions):
            shapes.append(self._segment(space, (x0, y0), (x1, y1), 0.0, e))
        shapes.extend(self._box(space, sim.wall_restitution))
        free_r = self.radii[self.free]
        self.hash_dim = 2.0 * float(free_r.mean()) if len(free_r) else 2.0 * float(self.radii.mean() or 1.0)
        self.hash_count = HASH_CELLS_PER_SHAPE * len(shapes)
        space.use_spatial_hash(self.hash_dim, self.hash_count)
        space.add(*self.bodies, *shapes)
        self.space = space
        # ball index of each dynamic body, looked up by body id (pymunk's order is its own)
        ids = np.array([body.id for body in self.bodies], dtype=np.uintp)
        self._by_id = np.argsort(ids)
        self._sorted_ids = ids[self._by_id]
        self._ball_of_body = np.flatnonzero(self.free)
        self._buffer = pymunk.batch.Buffer()

    @staticmethod
    def _segment(space, a, b, radius, e):
        seg = pymunk.Segment(space.static_body, tuple(map(float, a)), tuple(map(float, b)), float(radius))
        seg.elasticity = float(e)
        seg.friction = 0.0
        return seg

    def _box(self, space, e):
        w, h = self.width, self.height
        if self.walls == "thin":
            t, ends = 0.0, [((0, 0), (0, h)), ((w, 0), (w, h)), ((0, 0), (w, 0)), ((0, h), (w, h))]
        else:  # centre lines THICKNESS outside the box, reaching past the corners
            t = THICKNESS
            ends = [((-t, -t), (-t, h + t)), ((w + t, -t), (w + t, h + t)),
                    ((-t, -t), (w + t, -t)), ((-t, h + t), (w + t, h + t))]
        return [self._segment(space, a, b, t, e) for a, b in ends]

    def settings(self):
        """One line saying how the pymunk side is set up."""
        walls = (f"thick box walls (segments of radius {THICKNESS:g} px outside the box)"
                 if self.walls == "thick" else "thin box walls (radius-0 segments on the box sides)")
        mix = "" if self.restitution_mix == "product" else (
            f" (the scene's restitution_mix {self.restitution_mix!r} approximated by product)")
        return (f"pymunk {pymunk.version}: spatial hash (cell {self.hash_dim:g} px, "
                f"{HASH_CELLS_PER_SHAPE} hash cells per shape), "
                f"{self.space.iterations} iterations, {self.space.threads} thread"
                f"{'s' if self.space.threads > 1 else ''}, {walls}, friction 0, elasticity = product of the two "
                f"restitutions{mix}, collision_slop {self.space.collision_slop:.2g} px, "
                f"one step per frame")

    # -- stepping and state ------------------------------------------------------
    def __len__(self):
        return len(self.radii)

    def step(self, dt):
        self.space.step(float(dt))
        self.time += float(dt)

    def _state(self):
        """(positions (N, 2), velocities (N, 2), angular velocities (N,)) in ball order."""
        buf = self._buffer
        buf.clear()
        fields = (pymunk.batch.BodyFields.BODY_ID | pymunk.batch.BodyFields.POSITION
                  | pymunk.batch.BodyFields.VELOCITY | pymunk.batch.BodyFields.ANGULAR_VELOCITY)
        pymunk.batch.get_space_bodies(self.space, fields, buf)
        ids = np.frombuffer(buf.int_buf(), dtype=np.uintp)
        rows = np.frombuffer(buf.float_buf(), dtype=np.float64).reshape(-1, 5)
        pos, vel, spin = self._pos.copy(), np.zeros_like(self._pos), np.zeros(len(self))
        at = np.minimum(np.searchsorted(self._sorted_ids, ids), max(len(self._sorted_ids) - 1, 0))
        dyn = self._sorted_ids[at] == ids if len(self._sorted_ids) else np.zeros(len(ids), bool)
        balls = self._ball_of_body[self._by_id[at[dyn]]]
        pos[balls], vel[balls], spin[balls] = rows[dyn, 0:2], rows[dyn, 2:4], rows[dyn, 4]
        return pos, vel, spin

    @property
    def positions(self):
        return self._state()[0]

    @property
    def velocities(self):
        return self._state()[1]

    def energy(self):
        """Kinetic (rotation included) plus gravitational potential energy of the free balls."""
        pos, vel, spin = self._state()
        f = self.free
        m, r = self.masses[f], self.radii[f]
        kinetic = 0.5 * np.sum(m * np.einsum("ij,ij->i", vel[f], vel[f])) + 0.25 * np.sum(m * r * r * spin[f] ** 2)
        return float(kinetic - np.sum(m * (pos[f] @ self.gravity)))

    def max_overlap(self):
        """Largest overlap / radius over ball pairs, balls and walls, balls and the box."""
        s = self.segments
        return checks.max_overlap(self.positions, self.radii, self.free, self.width, self.height,
                                  s[:, 0:2], s[:, 2:4])

    def escaped(self):
        """Balls whose centre is outside the box (inside or beyond a wall)."""
        return checks.escaped(self.positions[self.free], self.width, self.height)

    def contacts(self):
        """Contact pairs pymunk solved in the last step (None if this pymunk cannot tell).

        Read from pymunk's arbiter cache, which also keeps pairs that stopped
        touching a few steps ago; a private API, so only used between timed steps.
        """
        try:
            return sum(1 for a in self.space._get_arbiters() if a.state in _TOUCHING)
        except (AttributeError, TypeError):
            return None
