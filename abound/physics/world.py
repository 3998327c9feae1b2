"""The simulation state: structure-of-arrays numpy buffers.

Everything is float64 unless said otherwise; units are pixels, seconds and
pixels/second; y points up and the origin is the bottom-left corner of the box.

Ball arrays have a capacity larger than the number of balls ``n`` so that adding
a ball is amortised O(1); the public views are ``array[:n]``.

Walls: rows 0..3 are the box (left, right, bottom, top), one-sided infinite
lines whose normal points into the box; rows 4.. are user segments, two-sided,
with their end points acting as fixed balls of radius 0.
"""
import numpy as np

# Ball modes (int8). docs/physics.md explains each (abound/physics/constants.py holds them for the engine).
FREE, SLIDING, ASLEEP, PINNED, FROZEN, ROLLING, CLUSTER = 0, 1, 2, 3, 4, 5, 6
MODE_NAMES = ("free", "sliding", "asleep", "pinned", "frozen", "rolling", "cluster")

# Impulses kept per ball for the contact solver's warm start (clusters.py).
WARM_SLOTS = 8

# Wall kinds.
BOX_LINE, SEGMENT = 0, 1
BOX_WALLS = 4


class World:
    """All arrays the engine reads and writes, grown on demand.

    Balls (first ``n`` rows valid):
      pos (N,2) px, vel (N,2) px/s, acc (N,2) px/s^2 (effective: g + field, that
      projected on a support, or 0), field (N,2) px/s^2: what a free ball feels
      besides gravity (black holes' pull, held for a sub-step: attractors.py;
      0 otherwise), tloc (N,) s (local clock within a step), radius (N,) px,
      mass (N,) and inv_mass (N,) (0 for pinned), rest (N,) restitution,
      color (N,4) RGBA in 0..1, mode (N,) int8, count (N,) int64 (bumped whenever
      a ball's trajectory changes: stale events carry an old count),
      sup_kind/sup_idx (N,) int64 and sup_n/sup_c (N,2), sup_r (N,): what a
      sliding ball slides on (see engine), warm_key (N, WARM_SLOTS) int64 and
      warm_lam (N, WARM_SLOTS) mass px/s: the impulses of a cluster ball's
      last solved contacts, keyed by the other ball's index (-2 - w: wall w;
      -1: none), the next solve's first guess (clusters.py).
    Walls: wall_p0/wall_p1 (M,2), wall_n (M,2) unit normal, wall_t (M,2) unit
      tangent, wall_len (M,), wall_c (M,) = n . p0, wall_e (M,) restitution,
      wall_kind (M,) int8, wall_impulse (M,) mass px/s: the normal impulse
      the wall has given balls in their bounces so far (the engine adds to it).
    """

    BALL_FLOAT2 = ("pos", "vel", "acc", "sup_n", "sup_c", "field")
    BALL_FLOAT1 = ("tloc", "radius", "mass", "inv_mass", "rest", "sup_r")
    BALL_INT = ("count", "sup_kind", "sup_idx")
    BALL_WARM = ("warm_key", "warm_lam")

    def __init__(self, width, height, wall_restitution=1.0, capacity=16):
        self.n = 0
        self._alloc_balls(capacity)
        self.nwalls = 0
        self._alloc_walls(8)
        for _ in range(BOX_WALLS):
            self._append_wall(0, 0, 1, 0, wall_restitution, BOX_LINE)
        self.set_box(width, height)

    # -- balls -------------------------------------------------------------
    def _alloc_balls(self, cap):
        old = getattr(self, "pos", None)
        n = self.n
        new = {}
        for name in self.BALL_FLOAT2:
            new[name] = np.zeros((cap, 2))
        for name in self.BALL_FLOAT1:
            new[name] = np.zeros(cap)
        for name in self.BALL_INT:
            new[name] = np.zeros(cap, dtype=np.int64)
        new["color"] = np.ones((cap, 4))
        new["warm_key"] = np.full((cap, WARM_SLOTS), -1, dtype=np.int64)
        new["warm_lam"] = np.zeros((cap, WARM_SLOTS))
        new["mode"] = np.zeros(cap, dtype=np.int8)
        if old is not None:
            for name, arr in new.items():
                arr[:n] = getattr(self, name)[:n]
        self.__dict__.update(new)
        self.capacity = cap

    def add_balls(self, pos, vel, radius, mass, rest, pinned, color, gravity):
        """Append k balls (arrays of length k); returns their indices."""
        k = len(radius)
        if self.n + k > self.capacity:
            self._alloc_balls(max(2 * self.capacity, self.n + k))
        s = slice(self.n, self.n + k)
        self.pos[s] = pos
        self.vel[s] = vel
        self.radius[s] = radius
        self.mass[s] = mass
        self.rest[s] = rest
        self.color[s] = color
        self.tloc[s] = 0.0
        self.count[s] = 0
        self.sup_kind[s] = -1
        self.sup_idx[s] = -1
        self.warm_key[s] = -1
        self.field[s] = 0.0
        self.n += k
        for i in range(s.start, s.stop):
            self.set_pinned(i, bool(pinned[i - s.start]), gravity)
        return np.arange(s.start, s.stop)

    def remove_ball(self, i):
        """Remove ball i; the last ball takes its index (O(1))."""
        last = self.n - 1
        if i != last:
            for name in self.BALL_FLOAT2 + self.BALL_FLOAT1 + self.BALL_INT + self.BALL_WARM + ("color", "mode"):
                arr = getattr(self, name)
                arr[i] = arr[last]
        self.n -= 1
        # (warm_key entries naming the last ball now name ball i: they are a
        # first guess, which the solve corrects, so they are left as they are)

    def set_pinned(self, i, pinned, gravity):
        if pinned:
            self.mode[i] = PINNED
            self.inv_mass[i] = 0.0
            self.vel[i] = 0.0
            self.acc[i] = 0.0
        else:
            self.mode[i] = FREE
            self.inv_mass[i] = 1.0 / self.mass[i]
            self.acc[i] = gravity + self.field[i]
        self.count[i] += 1

    def wake_all(self, gravity):
        """Every ball that is not pinned becomes free (gravity changed, box moved, state edited),
        a contact cluster's ball with the velocity it held back for the next tick (in sup_n:
        clusters.py), which is its own: energy() counts it, and freed it would be lost."""
        n = self.n
        held = self.mode[:n] == CLUSTER
        self.vel[:n][held] += self.sup_n[:n][held]
        self.sup_n[:n][held] = 0.0
        moving = self.mode[:n] != PINNED
        self.mode[:n][moving] = FREE
        self.acc[:n][moving] = gravity + self.field[:n][moving]
        self.sup_kind[:n] = -1
        self.sup_idx[:n] = -1
        self.count[:n] += 1

    # -- walls -------------------------------------------------------------
    def _alloc_walls(self, cap):
        names2 = ("wall_p0", "wall_p1", "wall_n", "wall_t")
        names1 = ("wall_len", "wall_c", "wall_e", "wall_impulse")
        m = self.nwalls
        for name in names2:
            arr = np.zeros((cap, 2))
            if hasattr(self, name):
                arr[:m] = getattr(self, name)[:m]
            setattr(self, name, arr)
        for name in names1:
            arr = np.zeros(cap)
            if hasattr(self, name):
                arr[:m] = getattr(self, name)[:m]
            setattr(self, name, arr)
        kind = np.zeros(cap, dtype=np.int8)
        if hasattr(self, "wall_kind"):
            kind[:m] = self.wall_kind[:m]
        self.wall_kind = kind
        self.wall_capacity = cap

    def _append_wall(self, x0, y0, x1, y1, restitution, kind):
        if self.nwalls == self.wall_capacity:
            self._alloc_walls(2 * self.wall_capacity)
        w = self.nwalls
        self.nwalls += 1
        self.wall_kind[w] = kind
        self.wall_e[w] = restitution
        self._set_wall_geometry(w, x0, y0, x1, y1)
        return w

    def _set_wall_geometry(self, w, x0, y0, x1, y1):
        p0 = np.array([x0, y0], dtype=float)
        p1 = np.array([x1, y1], dtype=float)
        d = p1 - p0
        length = float(np.hypot(d[0], d[1]))
        t = d / length
        n = np.array([-t[1], t[0]])  # left of p0->p1
        self.wall_p0[w] = p0
        self.wall_p1[w] = p1
        self.wall_t[w] = t
        self.wall_n[w] = n
        self.wall_len[w] = length
        self.wall_c[w] = float(n @ p0)

    def add_segment(self, x0, y0, x1, y1, restitution):
        return self._append_wall(x0, y0, x1, y1, restitution, SEGMENT) - BOX_WALLS

    def set_box(self, width, height):
        """The box sides, each drawn so that its left normal points inside."""
        self.width = float(width)
        self.height = float(height)
        w, h = self.width, self.height
        self._set_wall_geometry(0, 0, h, 0, 0)  # left: x = 0, normal +x
        self._set_wall_geometry(1, w, 0, w, h)  # right: x = w, normal -x
        self._set_wall_geometry(2, 0, 0, w, 0)  # bottom: y = 0, normal +y
        self._set_wall_geometry(3, w, h, 0, h)  # top: y = h, normal -y

    def set_box_restitution(self, e):
        self.wall_e[:BOX_WALLS] = e

    # -- views the engine takes --------------------------------------------
    def ball_arrays(self):
        n = self.n
        return (self.pos[:n], self.vel[:n], self.acc[:n], self.tloc[:n], self.radius[:n],
                self.inv_mass[:n], self.rest[:n], self.mode[:n], self.count[:n],
                self.sup_kind[:n], self.sup_idx[:n], self.sup_n[:n], self.sup_c[:n],
                self.sup_r[:n], self.warm_key[:n], self.warm_lam[:n], self.field[:n])

    def wall_arrays(self):
        m = self.nwalls
        return (self.wall_p0[:m], self.wall_p1[:m], self.wall_n[:m], self.wall_t[:m],
                self.wall_len[:m], self.wall_c[:m], self.wall_e[:m], self.wall_kind[:m],
                self.wall_impulse[:m])
