"""The public face of the physics core: :class:`Simulation`.

A Simulation owns a :class:`~abound.physics.world.World` (numpy arrays) and
hands it to a backend (``reference`` or ``fast``) to step. It imports no
graphics: ``import abound`` must work on a machine without a display.
"""
import dataclasses
from dataclasses import dataclass
import math

import numpy as np

from abound.errors import SceneError
from abound.physics import backends, checks, split
from abound.physics.ticks import next_level
from abound.physics.contact_log import LOG_FIELDS
from abound.physics.constants import CLUSTER_OVERLAP, S_SOLVED, S_STUCK, S_UPDATES
from abound.physics.kernels import TOUCH_REL
from abound.physics.world import World, ASLEEP, CLUSTER, PINNED, BOX_WALLS

from abound.defaults import (BALL_TOI, DEFAULT_DENSITY, DEFAULT_PALETTE, DEFAULT_REST_SPEED,  # noqa: F401
                             MAX_BLACK_HOLES, MAX_MAGNITUDE, MAX_STRENGTH, MAX_WALLS, MIN_POSITIVE, RESTITUTION_MIX,
                             TABLE_GRAVITY)


@dataclass(frozen=True)
class StepStats:
    """What one :meth:`Simulation.step` resolved.

    ball_ball, ball_wall: contacts resolved (ball-wall counts segment faces,
    end points and the box); events: every event processed, including a
    sliding ball leaving its support; frozen: times a ball went over the
    per-ball event budget and stopped for the rest of the step or of its
    part (normally none), and, with contact clusters, a ball wedged among
    cluster balls waited for the next tick (at most 2 ms away) where it is
    (counted each time: a ball may count in each part of a split step, up
    to 8, and at each tick, so this may exceed the number of balls); stopped: a
    step budget ran out, and every ball stopped short of the step's end, at
    the first event left unresolved (normally False); collapsed: balls
    caught in a rattle of rapid lossy contacts (an inelastic collapse) that
    the rest model stopped: asleep where something fixed holds them, else
    frozen for the rest of the step (a few while a heap forms or a layer
    slides; the pymunk backend reports none); stuck: of those, the balls
    put to sleep on a slope or a peg's side, touching a segment or a peg
    that cannot hold them against gravity, where a frictionless ball would
    slide on: the rest model's stand-in for a lasting contact, which only
    contact_clusters solves (abound.JamWarning).
    """

    ball_ball: int = 0
    ball_wall: int = 0
    events: int = 0
    frozen: int = 0
    stopped: bool = False
    collapsed: int = 0
    stuck: int = 0
    # step(contacts=True): every contact resolved, in time order (CONTACT_DTYPE)
    contact_log: np.ndarray = dataclasses.field(default=None, repr=False, compare=False)

    @property
    def contacts(self):
        return self.ball_ball + self.ball_wall


def _rgba(color):
    """A colour given as '#rrggbb', '#rrggbbaa' or (r, g, b[, a]) in 0..1: [r, g, b, a] in 0..1.

    Numbers only in 0..1: a guess at 0..255 from their size (any above 1) had
    read (2, 0, 0) as a near-black and (1, 1, 1) as white."""
    if color is None:
        return None
    if isinstance(color, str):
        s = color.lstrip("#")
        if len(s) not in (6, 8) or any(c not in "0123456789abcdefABCDEF" for c in s):
            raise SceneError(f"colour {color!r} is not '#rrggbb' or '#rrggbbaa'")
        vals = [int(s[k:k + 2], 16) / 255.0 for k in range(0, len(s), 2)]
    else:
        try:
            parts = list(color)
        except TypeError:
            parts = None
        if parts is None or not all(_is_number(c) for c in parts):
            raise SceneError(f"colour {color!r} is not '#rrggbb', '#rrggbbaa' or 3 or 4 numbers") from None
        if len(parts) not in (3, 4):
            raise SceneError(f"colour {color!r} needs 3 or 4 components")
        vals = [float(c) for c in parts]
    if len(vals) == 3:
        vals.append(1.0)
    if not all(0.0 <= v <= 1.0 for v in vals):
        raise SceneError(f"colour {color!r} has components outside 0..1 (for 0..255, write '#rrggbb')")
    return vals


class Simulation:
    """Balls in a box under constant gravity, stepped exactly by events.

    Units are pixels and seconds, y up, origin bottom-left. Public arrays are
    live float64 views into the state: ``positions`` (N, 2), ``velocities``
    (N, 2), ``radii`` (N,), ``masses`` (N,), ``restitutions`` (N,), ``colors``
    (N, 4) RGBA in 0..1, ``pinned`` (N,) bool (a copy), ``modes`` (N,) int8
    (0 free, 1 sliding on a support, 2 asleep, 3 pinned, 4 frozen, 5 rolling to a
    stop on a table with rolling friction, 6 in a contact cluster: see
    contact_clusters). User code may
    write positions and velocities in place or assign them; the next step notices.
    """

    def __init__(self, width=800, height=600, gravity=(0.0, -980.0), backend=None,
                 ball_toi="analytic", wall_restitution=1.0, restitution_mix="product",
                 rest_speed=None, dt=1.0 / 60.0, density=DEFAULT_DENSITY, threads=None,
                 rolling_friction=0.0, contact_clusters=True):
        """An empty box of width x height px (each at most 1e9) with gravity (px/s^2, any
        direction). backend: "fast" (numba), "reference" (plain Python) or None (the best
        here); ball_toi: "analytic" or "bisection"; wall_restitution (0..1) of the four
        sides; restitution_mix: how a contact combines its two restitutions ("product",
        "min", "max", "mean"); rest_speed (px/s, None: the default): slower contacts are
        inelastic; dt (s): the step a bare step() takes; density: mass per px^2 of balls
        given no mass; threads: 1 or 2 (None: 2 on two cores); rolling_friction: mu of a
        level table (gravity (0, 0)); contact_clusters: solve lasting contacts together
        (docs/physics.md). Bad values raise SceneError (docs/api.md)."""
        _check_size(width, height)
        self._world = World(width, height, _check_restitution(wall_restitution, "wall_restitution"))
        self._gravity = _vec2(gravity, "gravity")
        self.backend = backend
        self.ball_toi = ball_toi
        self.restitution_mix = restitution_mix
        self.rest_speed = rest_speed
        self.rolling_friction = rolling_friction
        if self._rolling_friction > 0.0 and np.any(self._gravity):
            # (as a scene file's [world]; set later, with gravity on, it waits for a level table)
            raise SceneError("rolling_friction needs gravity = [0, 0]: rolling friction is for a level table "
                             "seen from above")
        self.contact_clusters = contact_clusters
        self._tick_level = 0  # the clusters' ticks: TICK x TICK_FACTOR^level s at most (physics/ticks.py)
        self.dt = dt
        self.density = _positive(density, "density")
        self.threads = threads
        self._split_backoff = split.Backoff()  # when a split step is worth trying (split.py)
        self._split_balance = split.Balance()  # ... and where to cut
        self.time = 0.0
        self.black_holes = []  # abound.attractors.BlackHole, pulling every free ball (add_black_hole)
        self._field_held = False  # whether the world's field holds black holes' pull (_hold_field)
        self._warned_strength = False  # whether a too strong black hole was said (attractors._too_strong)
        self._warned_jam = False  # whether balls stopped where they cannot rest were said (_say_jammed)
        self.scene = None  # the scene dict this simulation was built from, if any
        self.last_stats = StepStats()
        self._palette_next = 0
        self._dirty = True  # overlaps may need pushing apart before the next step
        # a crushed heap's push apart: steps without progress, and the deepest overlap so far (_still_crushing)
        self._crushed_steps, self._crush_best = 0, math.inf
        self._seen = None  # copy of positions/velocities after the last step

    # -- settings ------------------------------------------------------------
    @property
    def backend(self):
        return self._backend_name

    @backend.setter
    def backend(self, name):
        new = backends.get(name)
        old = getattr(self, "_backend_name", None)
        if new[0] != old and {new[0], old} != {"reference", "fast"}:
            # another engine's state (pymunk leaves balls overlapping, the
            # exact engines leave sleepers): settled before the next step.
            # reference and fast are one engine (the same source and state, the
            # same results bit for bit): between them the run goes on untouched
            # (abound/warmup.py switches so, while a window runs).
            self._dirty = True
        self._backend_name, self._backend = new

    @property
    def threads(self):
        """How many threads a step may run on: 1, or 2 (a crowded scene of the
        fast backend then steps it as strips on two threads, with the same result:
        abound/physics/split.py; on one thread, a very crowded one steps as
        strips in turn, which keep each strip's balls in the core's cache).
        Set None for 2 when this process may use two cores or more."""
        return self._threads

    @threads.setter
    def threads(self, count):
        if count is None:
            count = min(2, split.cores())
        if count not in (1, 2) or isinstance(count, bool):
            raise SceneError(f"threads {count!r} is not 1, 2 or None")
        self._threads = count

    @property
    def step_threads(self):
        """The threads a step actually runs on: threads with the fast backend,
        1 with the others (only the compiled engine splits a step). A step
        that logs its contacts (step(contacts=True)) runs on one thread
        whatever this says."""
        return self._threads if self._splits else 1

    @property
    def _splits(self):
        """Whether a step may run as strips (split.py): only the compiled engine's."""
        return self._backend_name == "fast"

    @property
    def logs_contacts(self):
        """Whether this backend can hand back a step's contacts (step(contacts=True)):
        abound's engines can, pymunk cannot."""
        return hasattr(self._backend, "step_logged")

    @property
    def ball_toi(self):
        return self._ball_toi

    @ball_toi.setter
    def ball_toi(self, method):
        if method not in BALL_TOI:
            raise SceneError(f"ball_toi {method!r} is not one of {', '.join(BALL_TOI)}")
        self._ball_toi = method

    @property
    def restitution_mix(self):
        return self._mix

    @restitution_mix.setter
    def restitution_mix(self, rule):
        if rule not in RESTITUTION_MIX:
            raise SceneError(f"restitution_mix {rule!r} is not one of {', '.join(RESTITUTION_MIX)}")
        self._mix = rule

    @property
    def rest_speed(self):
        return self._rest_speed

    @rest_speed.setter
    def rest_speed(self, v):
        self._rest_speed = DEFAULT_REST_SPEED if v is None else _nonnegative(v, "rest_speed")
        self._release_clusters()  # (rest speed 0: no contact lasts, no tick runs)

    @property
    def time(self):
        """s: the simulated time so far (user code may set it, to a finite number)."""
        return self._time

    @time.setter
    def time(self, v):
        t = _one_number(v, "time")
        if not math.isfinite(t):  # (NaN had stayed NaN; text failed inside step)
            raise SceneError(f"time must be a finite number, not {v!r}")
        self._time = t

    @property
    def dt(self):
        """s: the step a bare ``step()`` takes (the demo's and the saver's fixed step)."""
        return self._dt

    @dt.setter
    def dt(self, v):
        self._dt = _limited(_positive(v, "dt"), "dt")

    @property
    def rolling_friction(self):
        """The coefficient mu of rolling friction on a level table (a top-down
        scene, gravity (0, 0)): a moving ball slows at mu x TABLE_GRAVITY
        px/s^2 along its path until it stops (a straight line travelled at
        constant deceleration, so every contact time stays exact). 0: none.
        It acts only while gravity is (0, 0): a table tilted by gravity in
        its plane has no such straight path."""
        return self._rolling_friction

    @rolling_friction.setter
    def rolling_friction(self, mu):
        self._rolling_friction = _nonnegative(mu, "rolling_friction")

    @property
    def contact_clusters(self):
        """Whether lasting contacts between moving balls are solved together
        (docs/physics.md, "Lasting contacts"): balls lying on one another
        while they move (a funnel full of balls, a heap on a slope) then
        pour as frictionless balls must, instead of stopping where they
        rattle. On by default. The solve is the one approximation: a heap
        may hover up to 1e-3 r above its supports while it moves, and its
        energy with it (bounded, it does not creep). False: the exact
        events alone, where energy never rises and a crowded step may be
        split across two cores (a gas, as hot_gas)."""
        return self._contact_clusters

    @contact_clusters.setter
    def contact_clusters(self, on):
        self._contact_clusters = _flag(on, "contact_clusters")
        self._release_clusters()

    def _release_clusters(self):
        """Set every contact cluster's balls free, with the velocity they held
        back for the next tick, once a setting has stopped the ticks (the flag
        off, or rest speed 0): a step that runs none has no room for them (the
        reference engine raised IndexError, the fast one read past its arrays
        and went NaN). A setting that leaves them running leaves the balls be."""
        w = self._world
        # (the balls first: __init__ sets the two settings before both exist, with no ball yet)
        if np.any(w.mode[:w.n] == CLUSTER) and (not self._contact_clusters or self._rest_speed <= 0.0):
            w.wake_all(self._gravity)

    @property
    def gravity(self):
        """Gravity, a (2,) float64 array in px/s^2; assign to change it at run time."""
        return self._gravity.copy()

    @gravity.setter
    def gravity(self, g):
        self._gravity = _vec2(g, "gravity")
        self._world.wake_all(self._gravity)

    @property
    def wall_restitution(self):
        return float(self._world.wall_e[0])

    @wall_restitution.setter
    def wall_restitution(self, e):
        self._world.set_box_restitution(_check_restitution(e, "wall_restitution"))

    @property
    def width(self):
        return self._world.width

    @property
    def height(self):
        return self._world.height

    # -- state views -----------------------------------------------------------
    def __len__(self):
        return self._world.n

    @property
    def n(self):
        """The number of balls (pegs count: they are pinned balls); also len(sim)."""
        return self._world.n

    @property
    def positions(self):
        """(N, 2) float64 px, each ball's centre (y up, origin bottom-left): a live view;
        what user code writes is checked by the next step()."""
        return self._world.pos[:self._world.n]

    @positions.setter
    def positions(self, value):
        self._world.pos[:self._world.n] = self._whole_array(value, "positions")
        self._dirty = True

    def _whole_array(self, value, name):
        """value as an (N, 2) array for a whole-array assignment: exactly that shape (a
        single (x, y) had been broadcast to every ball, and a wrong count was numpy's
        'could not broadcast')."""
        try:
            arr = _pairs(value, name)  # (numbers only, as everywhere in the API)
        except SceneError:  # (said again with the shape wanted)
            raise SceneError(f"{name} must be an ({self._world.n}, 2) array of numbers") from None
        if arr.shape != (self._world.n, 2):
            raise SceneError(f"{name} must be an ({self._world.n}, 2) array (one row a ball), "
                             f"not shape {arr.shape}; to change some balls, write into "
                             f"sim.{name}[i] instead")
        return arr

    @property
    def velocities(self):
        """(N, 2) float64 px/s, a live view like positions."""
        return self._world.vel[:self._world.n]

    @velocities.setter
    def velocities(self, value):
        self._world.vel[:self._world.n] = self._whole_array(value, "velocities")
        self._dirty = True

    @property
    def radii(self):
        """(N,) px, read-only (as masses, restitutions and modes: written into, a mass of 0
        or a restitution of 5 went into the engine unchecked and its energy grew to NaN;
        a ball's own values are set by adding it)."""
        return _read_only(self._world.radius[:self._world.n])

    @property
    def masses(self):
        """(N,) float64, read-only (see radii); a pinned ball's is kept but acts as infinite."""
        return _read_only(self._world.mass[:self._world.n])

    @property
    def restitutions(self):
        """(N,) float64 in 0..1, read-only (see radii); a contact mixes its two sides'
        by restitution_mix."""
        return _read_only(self._world.rest[:self._world.n])

    @property
    def colors(self):
        """(N, 4) float64 RGBA in 0..1, a live view: the renderer's colour_mode "ball"
        draws these, and user code may write them."""
        return self._world.color[:self._world.n]

    @property
    def modes(self):
        """(N,) int8, read-only: each ball's state, an index into
        abound.physics.world.MODE_NAMES ("free", "sliding", "asleep", "pinned", ...)."""
        return _read_only(self._world.mode[:self._world.n])

    @property
    def pinned(self):
        """(N,) bool, a copy: whether each ball is pinned (set_pinned changes it)."""
        return self._world.mode[:self._world.n] == PINNED

    @property
    def walls(self):
        """Interior segments, (M, 4) float64 rows x0, y0, x1, y1 (a copy)."""
        w = self._world
        return np.hstack([w.wall_p0[BOX_WALLS:w.nwalls], w.wall_p1[BOX_WALLS:w.nwalls]])

    @property
    def wall_restitutions(self):
        w = self._world
        return w.wall_e[BOX_WALLS:w.nwalls].copy()

    @property
    def box_impulses(self):
        """The normal impulse each box side has given the balls in their
        bounces since the simulation was made, (4,) float64 in mass x px/s:
        left, right, bottom, top (a copy). Divided by a side's length and the
        time it is the pressure on it. Balls resting or sliding on a side push
        on it without bouncing: that weight is not in it. The exact backends
        count it; under pymunk it stays as it was."""
        return self._world.wall_impulse[:BOX_WALLS].copy()

    @property
    def wall_impulses(self):
        """The same for the interior segments, (M,) float64 (see box_impulses), in the order of walls."""
        w = self._world
        return w.wall_impulse[BOX_WALLS:w.nwalls].copy()

    # -- building --------------------------------------------------------------
    def add_ball(self, x, y, vx=0.0, vy=0.0, radius=10.0, mass=None, restitution=1.0,
                 pinned=False, color=None):
        """Add one ball; returns its index (int).

        x, y: its centre (px, y up), at least radius from every side of the
        box; vx, vy: its velocity (px/s); radius (px, > 0); mass (> 0, any
        unit: only ratios matter; None means area x density); restitution in
        0..1; pinned: fixed in place (infinite mass); color: "#rrggbb" or 3-4
        numbers in 0..1, None for the palette's next. Each a single number
        (add_balls adds many). A ball that overlaps another is pushed apart at
        the next step, as positions written into ``positions`` are."""
        x, y = _one_number(x, "ball position"), _one_number(y, "ball position")
        vx, vy = _one_number(vx, "ball velocity"), _one_number(vy, "ball velocity")
        for v, name in ((radius, "radius"), (mass, "mass"), (restitution, "restitution")):
            if v is not None:
                _one_number(v, f"ball {name}")
        idx = self.add_balls([(x, y)], [(vx, vy)], radius=radius, mass=mass,
                             restitution=restitution, pinned=pinned,
                             color=None if color is None else [color])
        return int(idx[0])

    def add_balls(self, positions, velocities=None, radius=10.0, mass=None, restitution=1.0,
                  pinned=False, color=None, density=None):
        """Add k balls at once; returns their indices, (k,) int64.

        positions: (k, 2) float px, the centres (x, y; y up), or one (x, y)
        pair for k = 1; velocities: (k, 2) px/s or one (vx, vy) for all, None
        for at rest; radius (px), mass and restitution: one number, or (k,)
        one per ball (as add_ball's); color: None (the palette in turn), one
        colour, or a list of k colours; density: mass per px^2, for balls given
        no mass (None: the simulation's, ``density``; with a mass too, refused).
        Anything else is a SceneError.
        """
        pos = _pairs(positions, "ball position")
        if pos.ndim != 2 or pos.shape[1] != 2:
            raise SceneError(f"ball position: (x, y) pairs are wanted, an array of shape (k, 2), not shape {pos.shape}")
        k = len(pos)
        if k == 0:
            return np.empty(0, dtype=np.int64)  # (no balls: nothing to add)
        vel = np.zeros((k, 2)) if velocities is None else _numbers(velocities, "ball velocity")
        if vel.shape not in ((2,), (k, 2)):
            raise SceneError(f"ball velocity: one (vx, vy) pair or {k} of them are wanted, shape (2,) or ({k}, 2), "
                             f"not shape {vel.shape}")
        vel = np.broadcast_to(vel, (k, 2))
        r = _per_ball(radius, "ball radius", (k,)).copy()
        if not (_within_limit(pos) and _within_limit(vel)):
            raise SceneError(f"ball position and velocity must be finite numbers at most {MAX_MAGNITUDE:g} in size")
        if not (np.all(r >= MIN_POSITIVE) and _within_limit(r)):  # (as a scene file's)
            raise SceneError(f"ball radius must lie in {MIN_POSITIVE:g}..{MAX_MAGNITUDE:g}, as in a scene file")
        # inside the box, as a scene file's balls must be, to round-off (x = r + u (W - 2 r)
        # with u = 1 may come out an ulp beyond W - r)
        box, near = np.array([self.width, self.height]), (r * (1.0 - TOUCH_REL))[:, None]
        outside = np.flatnonzero(~np.all((pos >= near) & (pos <= box - near), axis=1))
        if len(outside):
            q = int(outside[0])
            raise SceneError(f"a ball at ({pos[q, 0]:g}, {pos[q, 1]:g}) of radius {r[q]:g} is not inside the "
                             f"{self.width:g}x{self.height:g} box (its centre must lie at least its radius "
                             f"from every side)")
        if density is not None:  # (checked before the clash below: a typo is a typo)
            density = _positive(density, "ball density")
            if mass is not None:  # (one would win silently; a scene file's [[spawn]] refuses both too)
                raise SceneError("ball mass and ball density: give one of them, not both")
        if mass is not None:
            m = _per_ball(mass, "ball mass", (k,)).copy()
            if not np.all((m >= MIN_POSITIVE) & (m <= MAX_MAGNITUDE)):  # (as a scene file's: 1e300 neared overflow)
                raise SceneError(f"ball mass must lie in {MIN_POSITIVE:g}..{MAX_MAGNITUDE:g}, as in a scene file")
        else:
            density = self.density if density is None else density
            with np.errstate(divide="ignore", over="ignore"):
                m = math.pi * r * r * density
                # the engine divides by it: 1/m must be finite too (no denormal masses)
                if not np.all((m > 0) & np.isfinite(m) & np.isfinite(1.0 / m)):
                    raise SceneError("ball mass must be a positive finite number (so must 1/mass): "
                                     "area x density is not")
        e = _per_ball(restitution, "ball restitution", (k,)).copy()
        if not np.all((e >= 0) & (e <= 1)):
            raise SceneError("ball restitution must lie in 0..1")
        pin = np.asarray(pinned)
        if pin.dtype != np.bool_:  # ("no" would be True)
            raise SceneError(f"pinned must be True or False, not {pinned!r}")
        pin = _broadcast(pin, "pinned", (k,))
        if color is None:
            cols = [_rgba(DEFAULT_PALETTE[(self._palette_next + q) % len(DEFAULT_PALETTE)])
                    for q in range(k)]
            self._palette_next += k
        elif isinstance(color, str) or (len(color) in (3, 4) and np.isscalar(color[0])
                                        and not isinstance(color[0], str)):  # (3 or 4 numbers: one colour)
            cols = [_rgba(color)] * k
        else:
            cols = [_rgba(c) for c in color]
            if len(cols) != k:
                raise SceneError(f"color: {len(cols)} colours for {k} balls (give one, or one per ball)")
        idx = self._world.add_balls(pos, vel, r, m, e, pin, np.asarray(cols), self._gravity)
        self._dirty = True
        return idx

    def _ball_index(self, i):
        """i, if it is a ball's index (0 <= i < n); else IndexError: the
        world's arrays have spare room past n, and -1 would be the last ball.
        Not a whole number (1.5, "3", True: ball 1): SceneError."""
        if isinstance(i, (bool, np.bool_)) or not isinstance(i, (int, np.integer)):
            raise SceneError(f"a ball's index must be a whole number, not {i!r}")
        if not 0 <= i < self.n:
            raise IndexError(f"no ball {i}: there are {self.n}" + (f" (0 to {self.n - 1})" if self.n else ""))
        return i

    def remove_ball(self, i):
        """Remove ball i; the last ball takes index i."""
        i = self._ball_index(i)
        if self._seen is not None and len(self._seen[0]) == self._world.n:
            # (the world moves the last ball into i: so does what the last step left)
            self._seen = tuple(_last_into(a, i) for a in self._seen)
        self._world.remove_ball(i)
        self._world.wake_all(self._gravity)

    def set_pinned(self, i, pinned=True):
        """Pin (fix in place, infinite mass) or release ball i."""
        self._world.set_pinned(self._ball_index(i), _flag(pinned, "pinned"), self._gravity)
        self._world.wake_all(self._gravity)

    def add_black_hole(self, x, y, strength, softening=10.0, horizon=0.0, swallow=False):
        """A black hole at (x, y) px pulling every free ball with GM = strength (px^3/s^2),
        softened over ``softening`` px; with ``swallow``, a ball whose centre crosses
        ``horizon`` px is put back at the top (abound/attractors.py). Returns its index;
        ``black_holes`` is a plain list (remove one from it to take it away)."""
        if len(self.black_holes) >= MAX_BLACK_HOLES:
            raise SceneError(f"too many black holes: at most {MAX_BLACK_HOLES}")
        self.black_holes.append(_checked_hole(x, y, strength, softening, horizon, swallow, "black hole"))
        return len(self.black_holes) - 1

    def _check_black_holes(self):
        """The holes as user code may have left them (a plain list of plain
        dataclasses: a strength set to NaN made every position NaN)."""
        from abound.attractors import BlackHole
        if len(self.black_holes) > MAX_BLACK_HOLES:
            raise SceneError(f"too many black holes: {len(self.black_holes)}, at most {MAX_BLACK_HOLES}")
        for k, h in enumerate(self.black_holes):
            if not isinstance(h, BlackHole):
                raise SceneError(f"black_holes[{k}] must be a BlackHole (add_black_hole makes one), not {h!r}")
            _checked_hole(h.x, h.y, h.strength, h.softening, h.horizon, h.swallow, f"black_holes[{k}]")

    def add_wall(self, x0, y0, x1, y1, restitution=1.0):
        """Add an interior wall segment from (x0, y0) to (x1, y1) (px, y up; two
        distinct points), with restitution in 0..1; returns its index in
        :attr:`walls`."""
        vals = [_number(v, "wall end point") for v in (x0, y0, x1, y1)]
        if not _within_limit(np.array(vals)):
            raise SceneError(f"wall end points must be finite numbers at most {MAX_MAGNITUDE:g} in size, "
                             f"not {tuple(vals)!r}")
        if vals[0] == vals[2] and vals[1] == vals[3]:
            raise SceneError("a wall needs two distinct end points")
        e = _check_restitution(restitution, "wall restitution")
        if len(self.walls) >= MAX_WALLS:
            raise SceneError(f"too many walls: at most {MAX_WALLS:,}")
        idx = self._world.add_segment(*vals, e)
        self._world.wake_all(self._gravity)
        return idx

    def resize(self, width, height):
        """Move the box sides; balls left outside are brought back in, overlaps pushed apart.
        A box narrower or lower than a ball holds it on its middle line, overlapping what it
        must (a window shrunk for a moment): only the box and finite numbers are promised
        then, every promise again once the box is grown back (a heap crushed to a point
        is pushed apart again each step until it is apart: a few steps)."""
        _check_size(width, height)
        self._world.set_box(width, height)
        self._world.wake_all(self._gravity)
        self._dirty = True

    # -- stepping ----------------------------------------------------------------
    def _params(self):
        return backends.make_params(self._gravity, self._rest_speed,
                                    RESTITUTION_MIX.index(self._mix), BALL_TOI.index(self._ball_toi),
                                    self._world.width, self._world.height,
                                    self._rolling_friction * TABLE_GRAVITY, self._contact_clusters, self._tick_level)

    def _notice_user_edits(self):
        n = self._world.n
        colors = self._world.color[:n]
        within = (colors >= 0.0) & (colors <= 1.0)  # (a live view too: a NaN went on to the renderer)
        if not within.all():
            i = int(np.flatnonzero(~within.all(axis=1))[0])
            raise SceneError(f"ball {i}'s color must be 4 numbers in 0..1 (RGBA), not {colors[i].tolist()}")
        if self._seen is not None and len(self._seen[0]) == n and not self._dirty:
            if (np.array_equal(self._seen[0], self._world.pos[:n])
                    and np.array_equal(self._seen[1], self._world.vel[:n])):
                return
        self._dirty = True
        # written from outside (positions, velocities are live arrays): a NaN or
        # an infinity went into the fast engine as NaN everywhere, into the
        # reference one as an exception from deep inside. Only what was written
        # since the last step is held to the limit: the engine's own values may
        # pass it (a ball thrown down at 1e9 px/s falls faster), and an edit of
        # another ball made every later step fail, naming a value nobody wrote
        for k, (name, a) in enumerate((("position", self._world.pos[:n]), ("velocity", self._world.vel[:n]))):
            written = np.ones(n, dtype=bool)
            if self._seen is not None:
                m = min(n, len(self._seen[k]))
                written[:m] = ~np.all(self._seen[k][:m] == a[:m], axis=1)
            with np.errstate(invalid="ignore"):
                bad = ~np.all(np.isfinite(a), axis=1) | (written & ~np.all(np.abs(a) <= MAX_MAGNITUDE, axis=1))
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                raise SceneError(f"ball {i}'s {name} must be finite numbers at most {MAX_MAGNITUDE:g} "
                                 f"in size, not ({float(a[i, 0])!r}, {float(a[i, 1])!r})")
        # a pinned ball does not move: a velocity written into it had been kept, shown, and
        # applied when the ball was released (pinning a moving ball sets its velocity to 0)
        self._world.vel[:n][self._world.mode[:n] == PINNED] = 0.0

    def step(self, dt=None, contacts=False):
        """Advance exactly dt seconds (default: the scene's dt); returns :class:`StepStats`.

        contacts=True: the stats' ``contact_log`` also holds every contact the
        step resolved, in time order, a structured array of CONTACT_DTYPE:
        ``t`` (s from the step's start), ``a`` and ``b`` (ball indices; b is
        -1 for a wall), ``wall`` (-1, or the wall's index: 0-3 the box's
        sides, then the segments in the order added; a peg is a ball),
        ``x``, ``y`` (px, the contact point), ``nx``, ``ny`` (unit normal
        from a towards b or the wall) and ``impulse`` (mass px/s: the normal
        impulse b or the wall gave a, along -n; 0 for a touch that exchanged
        none). Off by default: the step then records nothing. Such a step
        runs on one thread; the pymunk backend cannot log.

        With black holes (:meth:`add_black_hole`) the step runs as sub-steps,
        each ball's pull held constant along one (abound/attractors.py); the
        stats are their sum.
        """
        dt = self.dt if dt is None else _limited(_positive(dt, "step dt"), "step dt")
        if self._backend_name == "fast":
            backends.warn_if_cold(stacklevel=2)  # (the first step of a new install compiles)
        self._notice_user_edits()  # (before the holes' sub-steps read the state)
        if self.black_holes:
            self._check_black_holes()
            return self._step_with_black_holes(dt, contacts)
        if self._field_held:  # (the last black hole was taken away)
            self._hold_field(None)
        return self._step(dt, contacts)

    def _hold_field(self, field):
        """Every free ball flies with gravity plus field[i] (N, 2) px/s^2 until the next
        call (None: 0), as abound/attractors.py holds black holes' pull (and lets go of
        it when it kicks instead, or step when the last hole is gone); all wake to take it."""
        w = self._world
        w.field[:w.n] = 0.0 if field is None else field
        self._field_held = field is not None
        w.wake_all(self._gravity)

    def _step_with_black_holes(self, dt, contacts):
        from abound import attractors
        start = self.time
        parts = []

        def take(h, log=False):
            t0 = self.time
            stats = self._step(h, contacts or log)
            parts.append((t0 - start, stats))
            return stats
        attractors.step(self, dt, take)
        log = None
        if contacts:
            logs = []
            for offset, stats in parts:
                part = stats.contact_log.copy()
                part["t"] += offset
                logs.append(part)
            log = np.concatenate(logs) if logs else np.empty(0, CONTACT_DTYPE)
        self._time = start + dt  # (the sub-steps' sum, without their round-off)
        counted = ("ball_ball", "ball_wall", "events", "frozen", "collapsed", "stuck")
        total = StepStats(**{f: sum(getattr(s, f) for _, s in parts) for f in counted},
                          stopped=any(s.stopped for _, s in parts), contact_log=log)
        self.last_stats = total
        return total

    def _still_crushing(self):
        """Whether to push apart again next step: balls still overlap (more than the
        engine allows: overlapping) after a push apart, in a box that can hold each of
        them, and the pushes still get somewhere. A box shrunk to nothing and grown back
        leaves them all in a heap at one point, more than one push (its 200 sweeps)
        undoes, and the steps after it kept the rest for ever (115 pairs of 200 balls
        after 5 s). Pushed again every step while the deepest overlap halves at least
        every CRUSH_STEPS steps: 60 steps in a row were not enough for 800 balls (free
        pairs 2e-6 r deep kept them overlapping for seconds). Overlaps that cannot come
        apart (pegs left outside a shrunk box) stop it after CRUSH_STEPS steps without
        progress. (Not in a box narrower than a ball: nothing can be apart there.)"""
        n = self._world.n
        if (n < 2 or 2.0 * float(self._world.radius[:n].max()) > min(self.width, self.height)
                or len(self.overlapping()) == 0):
            self._crush_best, self._crushed_steps = math.inf, 0
            return False
        depth = self.max_overlap()
        if depth < 0.5 * self._crush_best:  # progress: the deepest overlap at most half what it was
            self._crush_best, self._crushed_steps = depth, 0
        else:
            self._crushed_steps += 1
        if self._crushed_steps > CRUSH_STEPS:
            self._crush_best, self._crushed_steps = math.inf, 0
            return False
        return True

    def _step(self, dt, contacts):
        """One exact step of dt (see step, which notices user edits once; what
        attractors.py writes between sub-steps goes through the setters or _seen)."""
        w = self._world
        params = self._params()
        if self._dirty:
            w.wake_all(self._gravity)
            self._backend.settle_overlaps(w.ball_arrays(), w.wall_arrays(), params)
            # (again next step while pairs overlap and the pushes get somewhere: overlaps
            # that cannot come apart, pegs left outside a shrunk box, are not chased for ever)
            self._dirty = self._still_crushing()
        if contacts and not self.logs_contacts:
            raise SceneError(f"the {self._backend_name} backend cannot log contacts (step(contacts=True))")
        if np.all((w.mode[:w.n] == ASLEEP) | (w.mode[:w.n] == PINNED)):
            # Nothing moves and nothing can wake a sleeper: a settled scene costs nothing.
            self._time += dt
            self.last_stats = StepStats(contact_log=np.empty(0, CONTACT_DTYPE) if contacts else None)
            return self.last_stats
        log = None
        if contacts:
            # room for as many contacts as the step's event budget: it cannot
            # resolve more (pages never written are never touched)
            log = self._backend.contact_log(self._backend.event_budget(w.n))
            raw = self._backend.step_logged(w.ball_arrays(), w.wall_arrays(), params, dt, log)
        elif self._splits:
            together = self.step_threads == 2
            raw = split.step(self._backend, w.ball_arrays(), w.wall_arrays(), params, dt,
                             together=together,
                             min_moving=split.MIN_MOVING if together else split.ALONE_MIN_MOVING,
                             backoff=self._split_backoff,
                             balance=self._split_balance if together else None)
        else:
            raw = self._backend.step(w.ball_arrays(), w.wall_arrays(), params, dt)
        self._time += dt
        n = w.n
        self._seen = (w.pos[:n].copy(), w.vel[:n].copy())
        if len(raw) > S_SOLVED:  # (pymunk: no solves)
            self._tick_level = next_level(self._tick_level, int(raw[S_UPDATES]), int(raw[S_SOLVED]))
        self.last_stats = StepStats(*(int(v) for v in raw[:4]), stopped=bool(raw[4]),
                                    collapsed=int(raw[7]) if len(raw) > 7 else 0,  # (pymunk: none)
                                    stuck=int(raw[S_STUCK]) if len(raw) > S_STUCK else 0,
                                    contact_log=None if log is None else _contact_records(log))
        if self.last_stats.stuck and not self._warned_jam:
            self._say_jammed()
        return self.last_stats

    def _say_jammed(self):
        """Say once per simulation that balls were stopped where frictionless balls
        cannot rest (abound.JamWarning; StepStats.stuck). The text names no count:
        Python says a warning once per place and text, so a process that runs
        a scene in two simulations says it once."""
        self._warned_jam = True
        import warnings
        from abound.errors import JamWarning
        warnings.warn(JamWarning(
            "balls stopped on a slope or a peg, where frictionless balls cannot rest: with "
            "contact_clusters off a ball caught in a heap sleeps where it touches anything fixed; "
            "set contact_clusters = true ([physics] in a scene file; the default) to let them slide and pour"),
            stacklevel=4)  # (the caller of Simulation.step)

    def touching(self, eps=None):
        """Pairs of balls (M, 2) int64, i < j, whose gap is within eps px
        either way (|distance - r_i - r_j| <= eps): in contact, as the
        circle hit-test classes it. eps None: the engine's own touch
        tolerance (TOUCH_REL x the smaller radius)."""
        reach = None if eps is None else _nonnegative(eps, "eps")
        pairs, gaps, rmin = self._close_pairs(reach)
        return pairs[np.abs(gaps) <= (TOUCH_REL * rmin if reach is None else reach)]

    def overlapping(self):
        """Pairs of balls (M, 2) int64, i < j, that overlap by more than the
        engine promises: none in flight beyond its touch tolerance (TOUCH_REL
        x the smaller radius); a pair of which a ball lies in a contact
        cluster or asleep may overlap by what a cluster's solve leaves, up to
        CLUSTER_OVERLAP x the smaller radius (docs/physics.md). Two pinned balls
        are where user code put them, not the engine's doing: never listed (as
        max_overlap() leaves them out)."""
        pairs, gaps, rmin = self._close_pairs(0.0)
        modes = self._world.mode[pairs]
        held = np.isin(modes, (CLUSTER, ASLEEP)).any(axis=1)
        placed = (modes == PINNED).all(axis=1)
        return pairs[(gaps < -np.where(held, CLUSTER_OVERLAP, TOUCH_REL) * rmin) & ~placed]

    def _close_pairs(self, reach):
        """(pairs, gaps) of the balls closer than reach px (None: the largest touch
        tolerance), and each pair's smaller radius (px)."""
        w, n = self._world, self._world.n
        r = w.radius[:n]
        if reach is None:
            reach = TOUCH_REL * float(r.max(initial=0.0))
        pairs, gaps = checks.close_pairs(w.pos[:n], r, reach)
        return pairs, gaps, np.minimum(r[pairs[:, 0]], r[pairs[:, 1]])

    # -- measures ----------------------------------------------------------------
    def kinetic_energy(self):
        """Kinetic energy of the balls that are not pinned, mass px^2/s^2, a
        cluster ball's velocity held back till the next tick included."""
        w, n = self._world, self._world.n
        free = w.mode[:n] != PINNED
        # a cluster ball's sup_n holds the part of its velocity that rejoin
        # held back till the next tick, which gives it back to share with
        # its neighbours (clusters.py): the ball's own, parked. Left out,
        # the energy fell when a struck ball rejoined and rose at the tick
        v = w.vel[:n] + np.where((w.mode[:n] == CLUSTER)[:, None], w.sup_n[:n], 0.0)
        v2 = np.einsum("ij,ij->i", v, v)
        return float(0.5 * np.sum(w.mass[:n][free] * v2[free]))

    def potential_energy(self):
        """Gravitational potential -m g.p of the free balls, zero at the origin, plus each
        black hole's, -GM m / s (zero far away), s^2 = max(d^2, r^2) + softening^2, less
        inside a ball's core (abound/attractors.py: potential)."""
        w, n = self._world, self._world.n
        free = w.mode[:n] != PINNED
        m, p = w.mass[:n][free], w.pos[:n][free]
        u = float(-np.sum(m * (p @ self._gravity)))
        if self.black_holes:
            from abound.attractors import potential
            u += float(np.sum(m * potential(p, self.black_holes, w.radius[:n][free])))
        return u

    def energy(self):
        """Kinetic plus gravitational (and black holes') potential energy of the balls
        that are not pinned: float, mass x px^2/s^2 (mass in the balls' own unit)."""
        return self.kinetic_energy() + self.potential_energy()

    def max_overlap(self):
        """Largest overlap / radius over ball pairs and ball-wall pairs (0 when none)."""
        from abound.physics.checks import max_relative_overlap
        return max_relative_overlap(self)

    # -- construction from scenes -----------------------------------------------
    @classmethod
    def from_config(cls, source, *, seed=None, backend=None, balls=None, size=None):
        """Build from a scene: a TOML path, a dict (parsed TOML), or None for the default scene.

        seed, backend, balls (total count of random balls) and size (w, h)
        override the scene. Bad scenes raise :class:`~abound.SceneError`.
        """
        return _scene_builder[0](source, seed=seed, backend=backend, balls=balls, size=size)


# abound.scene.build_simulation, which abound.scene puts here when it is
# imported (abound/__init__.py imports it): a scene is built of a
# Simulation, so the scene package imports this module, never the reverse
_scene_builder = [None]


def _checked_hole(x, y, strength, softening, horizon, swallow, name):
    """A BlackHole of these, if each is what it must be (strength: positive and at
    most MAX_STRENGTH, not MAX_MAGNITUDE: GM in px^3/s^2 is large, a saver's hole on
    a 4K screen pulls with 2e9)."""
    from abound.attractors import BlackHole
    x, y = _vec2((x, y), f"{name} position")
    strength = _positive(strength, f"{name} strength")
    if strength > MAX_STRENGTH:
        raise SceneError(f"{name} strength must be at most {MAX_STRENGTH:g} (px^3/s^2), not {strength:g}")
    hole = BlackHole(float(x), float(y), strength,
                     _limited(_nonnegative(softening, f"{name} softening"), f"{name} softening"),
                     _limited(_nonnegative(horizon, f"{name} horizon"), f"{name} horizon"),
                     _flag(swallow, f"{name} swallow"))
    if hole.swallow and hole.horizon == 0.0:  # (as a scene file's [[black_hole]])
        raise SceneError(f"{name}: swallow=True needs a horizon > 0 (px): with none, no ball is ever swallowed")
    return hole


def _check_size(width, height):
    for name, v in (("width", width), ("height", height)):
        _limited(_positive(v, f"box {name}"), f"box {name}")


def _numbers(v, name):
    """v as a float64 array, if it holds numbers (not text, not True/False, which
    numpy would take as 100.0 or 1.0, also among numbers: [True, 0.0] is float)."""
    try:
        a = np.asarray(v)
    except ValueError:  # (ragged: [(1, 2), (3,)])
        raise SceneError(f"{name} must be numbers in a regular array, not {v!r}") from None
    if a.dtype.kind not in "iuf" or (not isinstance(v, np.ndarray) and _holds_bool(v)):
        raise SceneError(f"{name} must be numbers, not {v!r}")
    return a.astype(float)


def _pairs(v, name):
    """v's numbers as rows of (x, y) pairs where it is one pair ((2,): one row) or none
    ([]: no rows); any other shape as it is, for the caller to check."""
    a = _numbers(v, name)
    if a.shape == (2,):
        return a.reshape(1, 2)
    if a.shape == (0,):
        return a.reshape(0, 2)
    return a


def _one_number(v, name):
    """v as a float, if it is one number (an array of them: add_balls)."""
    a = _numbers(v, name)
    if a.ndim:
        raise SceneError(f"{name} must be one number (add_balls adds many balls), not {v!r}")
    return float(a)


def _per_ball(v, name, shape):
    """v's numbers broadcast to shape (k balls' worth), or a SceneError saying why not."""
    return _broadcast(_numbers(v, name), name, shape)


def _broadcast(a, name, shape):
    """The array a broadcast to shape (k balls' worth: one value, or one per ball)."""
    if a.ndim > len(shape):  # ((2, 1) would broadcast against (2,) into nonsense, or fail saying "2 values")
        raise SceneError(f"{name}: shape {a.shape}, where one value or {shape[0]} (shape ({shape[0]},)) are wanted")
    try:
        return np.broadcast_to(a, shape)
    except ValueError:
        raise SceneError(f"{name}: {len(a)} values for {shape[0]} balls (give one, or one per ball)") from None


def _holds_bool(v):
    """Whether True or False lies anywhere in the nested lists and tuples v."""
    if isinstance(v, (bool, np.bool_)):
        return True
    return isinstance(v, (list, tuple)) and any(_holds_bool(x) for x in v)


def _limited(v, name):
    """v (a float), if it is at most MAX_MAGNITUDE in size."""
    if not _within_limit(np.asarray(v)):
        raise SceneError(f"{name} must be at most {MAX_MAGNITUDE:g} in size, not {v!r}")
    return v


def _last_into(a, i):
    """a without its last row, which takes row i's place (as World.remove_ball moves a ball)."""
    b = a[:-1].copy()
    if i < len(b):
        b[i] = a[-1]
    return b


def _within_limit(a):
    """Whether every number of a is finite and at most MAX_MAGNITUDE in size."""
    with np.errstate(invalid="ignore"):
        return bool(np.all(np.abs(a) <= MAX_MAGNITUDE))


def _vec2(v, name):
    try:
        a = _numbers(v, name).reshape(2)
    except ValueError:
        raise SceneError(f"{name} must be two numbers, not {v!r}") from None
    if not _within_limit(a):
        raise SceneError(f"{name} must be finite and at most {MAX_MAGNITUDE:g} in size, not {v!r}")
    return a


CRUSH_STEPS = 60  # steps without progress after which a crushed heap is no longer pushed apart (_still_crushing)


def _read_only(a):
    """A view of ``a`` that cannot be written through."""
    view = a.view()
    view.flags.writeable = False
    return view


def _is_number(v):
    """Whether v is a number: not text, not True/False (float("0.25") and float(True) would take them)."""
    return not isinstance(v, (bool, np.bool_)) and isinstance(v, (int, float, np.integer, np.floating))


def _number(v, name):
    """v as a float, if it is a number (_is_number)."""
    if not _is_number(v):
        raise SceneError(f"{name} must be a number, not {v!r}")
    return float(v)


def _flag(v, name):
    """v as a bool, if it is True or False (bool("no") is True)."""
    if not isinstance(v, (bool, np.bool_)):
        raise SceneError(f"{name} must be True or False, not {v!r}")
    return bool(v)


def _positive(v, name):
    v = _number(v, name)
    if not (v > 0 and math.isfinite(v)):
        raise SceneError(f"{name} must be a positive number, not {v!r}")
    return v


def _nonnegative(v, name):
    v = _number(v, name)
    if not (v >= 0 and math.isfinite(v)):
        raise SceneError(f"{name} must be a number >= 0, not {v!r}")
    return v


def _check_restitution(e, name):
    e = _number(e, name)
    if not 0.0 <= e <= 1.0:
        raise SceneError(f"{name} must lie in 0..1, not {e!r}")
    return e


# the engine's log rows (contact_log.LOG_FIELDS) as named fields; ball and wall indices as integers
CONTACT_DTYPE = np.dtype([(name, "i8" if name in ("a", "b", "wall") else "f8") for name in LOG_FIELDS])


def _contact_records(log):
    """The rows an engine wrote into log (engine.contact_log), as CONTACT_DTYPE."""
    rec, count = log[0], int(log[1][0])
    out = np.empty(count, CONTACT_DTYPE)
    for k, name in enumerate(CONTACT_DTYPE.names):
        out[name] = rec[:count, k]
    return out

