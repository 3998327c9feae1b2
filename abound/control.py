"""The demo's controls as plain data: every input that changes the simulation is an *action*.

An action is a small JSON-able dict, ``{"do": <kind>, ...}``, holding concrete
values (the new gravity vector, the added ball's position and velocity, the
index of the ball to pin), never a key or a random draw. :meth:`Controller.apply`
is the one place actions take effect, for the live demo window and for a
replay alike, so a replay runs the same code as the run it reproduces. The
window turns keys and mouse gestures into actions (:meth:`Controller.tilt`,
:meth:`Controller.add_random_ball`...); the controller counts the physics
steps it takes, and an attached recorder (:mod:`abound.replay`) stamps each
action with the step index at which it applies.

Kinds: ``pause`` (paused), ``step``, ``gravity`` (g), ``reset``,
``backend`` (name), ``ball_toi`` (name), ``add`` (x, y, vx, vy, radius),
``remove`` (the last ball), ``fling`` (x, y, vx, vy: world start point and
velocity), ``pin`` (ball, pinned), ``resize`` (width, height), ``hole`` (x, y:
a black hole there, or the one within HOLE_PICK px of it taken away). GL-free.

Steps may also run on a worker thread (:meth:`Controller.advance_in_background`)
while the window draws the frame before them from a :class:`abound.snapshot.Snapshot`
(the compiled engine releases the GIL). Everything that reads or changes the
simulation through the controller (``sim``, :meth:`Controller.apply`) first
waits for those steps, so an input never lands in the middle of a step and
the order of steps and actions is the one a serial loop would have.
"""
import hashlib
import math

import numpy as np

from abound.defaults import MAX_BLACK_HOLES
from abound.physics import backends

FLING_RADIUS = 12.0    # px, radius of a flung ball
HOLE_PICK = 20.0       # px: a click this near a black hole takes it away
ADD_RADIUS = (6.0, 14.0)
TILT_DEGREES = 15.0
GRAVITY_FACTOR = 1.25
BACKENDS = backends.NAMES
BALL_TOI = ("analytic", "bisection")

# the fields of each kind, with the type their values must have (checked when a log is read)
ACTIONS = {
    "pause": {"paused": bool},
    "step": {},
    "gravity": {"g": "vec2"},
    "reset": {},
    "backend": {"name": BACKENDS},
    "ball_toi": {"name": BALL_TOI},
    "add": {"x": float, "y": float, "vx": float, "vy": float, "radius": float},
    "remove": {},
    "fling": {"x": float, "y": float, "vx": float, "vy": float},
    "pin": {"ball": int, "pinned": bool},
    "resize": {"width": float, "height": float},
    "hole": {"x": float, "y": float},
}
# kinds after which the HUD's energy drift starts again from the current energy
_ENERGY_CHANGES = {"gravity", "reset", "add", "remove", "fling", "pin", "hole"}
# kinds after which the picture starts afresh (motion trails are dropped)
_PICTURE_RESTARTS = {"reset", "resize"}


class Controller:
    """Owns the running Simulation and applies actions to it.

    sim: the Simulation (its state now is what ``reset`` returns to).
    ``steps`` counts every physics step taken through the controller since it
    was made (``reset`` does not restart it); ``epoch`` grows whenever the
    picture must start afresh, so views know to drop their motion trails.
    ``recorder``: an object with ``action(step, action)`` (see
    :class:`abound.replay.ReplayWriter`), told of every applied action.
    """

    def __init__(self, sim, recorder=None):
        self._sim = sim
        self._pending = None  # the Future of steps running on the worker thread
        self._worker = None   # an abound.worker.Worker, made on first use
        self.template = clone(sim)
        self.paused = False
        self._steps = 0
        self.epoch = 0
        self.changes = 0  # actions applied so far (a snapshot older than the last one is stale)
        # called as listener(sim, contact_log, start) after each step; while there are any,
        # steps log their contacts (Simulation.step(contacts=True): one thread a step)
        self.listeners = []
        self._contacts = 0  # contacts resolved by the last advance
        self.recorder = recorder
        self.energy0 = sim.energy()
        self._rng = np.random.default_rng(12345)

    @property
    def sim(self):
        """The Simulation (after the steps running in the background, if any)."""
        self.wait()
        return self._sim

    @sim.setter
    def sim(self, sim):
        self.wait()
        self._sim = sim

    @property
    def steps(self):
        """Steps taken through the controller (after those running in the background)."""
        self.wait()
        return self._steps

    @property
    def contacts(self):
        """Contacts resolved by the last advance (after those running in the background)."""
        self.wait()
        return self._contacts

    # -- time ------------------------------------------------------------------------
    def advance(self, steps):
        """Take ``steps`` physics steps of the scene's dt (whether paused or not)."""
        sim = self.sim
        contacts = 0
        for _ in range(steps):
            contacts += heard_step(sim, self.listeners).contacts
        self._steps += steps
        self._contacts = contacts

    def advance_in_background(self, run, steps):
        """Start ``run(steps)`` (a function taking the steps through :meth:`advance`)
        on the worker thread and return at once; reading ``sim`` waits for it."""
        self.wait()
        if self._worker is None:
            from abound.worker import Worker
            self._worker = Worker()
        self._pending = self._worker.submit(run, steps)

    @property
    def busy(self):
        """Whether steps are running on the worker thread now."""
        return self._pending is not None and not self._pending.done()

    def wait(self):
        """Wait for the background steps (their exception, if one was raised, is raised here).
        The worker itself never waits: it is the one running them."""
        pending = self._pending
        if pending is None or self._worker.here():
            return
        self._pending = None
        pending.result()

    def snapshot(self):
        """A drawable copy of the state now (:class:`abound.snapshot.Snapshot`)."""
        from abound.snapshot import Snapshot
        return Snapshot(self.sim, self.changes)

    def close(self):
        """Wait for the background steps and let the worker thread go."""
        try:
            self.wait()
        finally:
            if self._worker is not None:
                self._worker.close()
                self._worker = None

    # -- the one place inputs take effect ----------------------------------------------
    def apply(self, action):
        """Apply one action (a dict, see the module doc); the recorder hears of it first."""
        kind = action["do"]
        self.changes += 1
        if self.recorder is not None:
            self.recorder.action(self.steps, action)
        sim = self.sim
        if kind == "pause":
            self.paused = bool(action["paused"])
        elif kind == "step":
            self.advance(1)
        elif kind == "gravity":
            sim.gravity = action["g"]
        elif kind == "reset":
            width, height = sim.width, sim.height
            self.sim = clone(self.template)
            self.sim.resize(width, height)  # the box stays the window's size
        elif kind == "backend":
            sim.backend = action["name"]
        elif kind == "ball_toi":
            sim.ball_toi = action["name"]
        elif kind == "add":
            sim.add_ball(action["x"], action["y"], vx=action["vx"], vy=action["vy"], radius=action["radius"])
        elif kind == "remove":
            if len(sim):
                sim.remove_ball(len(sim) - 1)
        elif kind == "fling":
            r = _fitting(FLING_RADIUS, sim)
            x = min(max(action["x"], r), sim.width - r)
            y = min(max(action["y"], r), sim.height - r)
            sim.add_ball(x, y, vx=action["vx"], vy=action["vy"], radius=r)
        elif kind == "pin":
            sim.set_pinned(action["ball"], action["pinned"])
        elif kind == "resize":
            sim.resize(action["width"], action["height"])
        elif kind == "hole":
            x, y = action["x"], action["y"]
            near = [h for h in sim.black_holes if math.hypot(h.x - x, h.y - y) <= HOLE_PICK]
            if near:
                sim.black_holes.remove(near[0])
            elif len(sim.black_holes) < MAX_BLACK_HOLES:  # (at the most a scene may hold: no new one)
                from abound.attractors import place
                place(sim, x, y)
        else:
            raise ValueError(f"unknown action {kind!r}")
        if kind in _ENERGY_CHANGES:
            self.energy0 = self.sim.energy()
        if kind in _PICTURE_RESTARTS:
            self.epoch += 1

    # -- intents: what a key or gesture means, as a concrete action ---------------------
    def toggle_pause(self):
        self.apply({"do": "pause", "paused": not self.paused})

    def single_step(self):
        self.apply({"do": "step"})

    def set_gravity(self, g):
        self.apply({"do": "gravity", "g": [float(g[0]), float(g[1])]})

    def tilt(self, degrees):
        self.set_gravity(rotate(self.sim.gravity, degrees))

    def scale_gravity(self, factor):
        self.set_gravity(self.sim.gravity * factor)

    def flip_gravity(self):
        self.set_gravity(-self.sim.gravity)

    def reset(self):
        self.apply({"do": "reset"})

    def next_backend(self, skip=()):
        """The backend after the current one that can run here (pymunk too, when it is
        installed), passing over those in skip (the demo skips the fast engine while it
        compiles: choosing it then would compile it on the window's thread)."""
        names = [n for n in backends.available() if n not in skip or n == self.sim.backend]
        i = names.index(self.sim.backend) if self.sim.backend in names else -1
        return names[(i + 1) % len(names)]

    def cycle_backend(self, skip=()):
        """Onto next_backend(skip)."""
        self.apply({"do": "backend", "name": self.next_backend(skip)})

    def cycle_ball_toi(self):
        self.apply({"do": "ball_toi", "name": BALL_TOI[(BALL_TOI.index(self.sim.ball_toi) + 1) % len(BALL_TOI)]})

    def add_random_ball(self):
        """A ball of random size and velocity near the top; returns its index."""
        sim = self.sim
        r = _fitting(float(self._rng.uniform(*ADD_RADIUS)), sim)
        x = float(self._rng.uniform(r, max(r, sim.width - r)))
        y = float(max(r, sim.height - 2 * r))
        v = self._rng.uniform(-200, 200, 2)
        self.apply({"do": "add", "x": x, "y": y, "vx": float(v[0]), "vy": float(v[1]), "radius": r})
        return len(self.sim) - 1

    def remove_last_ball(self):
        if len(self.sim):
            self.apply({"do": "remove"})

    def fling(self, x, y, vx, vy):
        """A new ball starting at world point (x, y) (kept inside the box) with velocity (vx, vy)."""
        self.apply({"do": "fling", "x": float(x), "y": float(y), "vx": float(vx), "vy": float(vy)})
        return len(self.sim) - 1

    def toggle_pin(self, i):
        self.apply({"do": "pin", "ball": int(i), "pinned": not bool(self.sim.pinned[i])})

    def toggle_black_hole(self, x, y):
        """A black hole at world point (x, y), or the one there taken away."""
        self.apply({"do": "hole", "x": float(x), "y": float(y)})

    def resize(self, width, height):
        """The box becomes width x height; a resize to the current size does nothing."""
        if (float(width), float(height)) != (self.sim.width, self.sim.height):
            self.apply({"do": "resize", "width": float(width), "height": float(height)})


def heard_step(sim, listeners, take=None):
    """One step of ``sim`` (``take(contacts=...)``, default ``sim.step``); when there are
    listeners and the backend can log, the step logs its contacts and each listener is
    called as ``listener(sim, contact_log, start)``. Returns the StepStats."""
    take = take or sim.step
    if not listeners or not sim.logs_contacts:
        return take()
    start = sim.time
    stats = take(contacts=True)
    for listener in listeners:
        listener(sim, stats.contact_log, start)
    return stats


def _fitting(r, sim):
    """Radius r, or less in a box shrunk smaller than such a ball (add_ball refuses a ball
    that is not inside the box)."""
    return min(r, 0.5 * sim.width, 0.5 * sim.height)


def clone(sim):
    """A fresh Simulation with ``sim``'s settings, balls and walls (what ``reset`` goes back to)."""
    from abound import Simulation
    s = Simulation(sim.width, sim.height, gravity=sim.gravity, backend=sim.backend, ball_toi=sim.ball_toi,
                   wall_restitution=sim.wall_restitution, restitution_mix=sim.restitution_mix,
                   rest_speed=sim.rest_speed, dt=sim.dt, density=sim.density, threads=sim.threads,
                   contact_clusters=sim.contact_clusters)
    s.rolling_friction = sim.rolling_friction  # (the setter: with gravity in the plane it waits, the constructor refuses)
    for (x0, y0, x1, y1), e in zip(sim.walls, sim.wall_restitutions):
        s.add_wall(x0, y0, x1, y1, restitution=e)
    for h in sim.black_holes:
        s.add_black_hole(h.x, h.y, h.strength, h.softening, h.horizon, h.swallow)
    if len(sim):
        s.add_balls(sim.positions.copy(), sim.velocities.copy(), radius=sim.radii.copy(),
                    mass=sim.masses.copy(), restitution=sim.restitutions.copy(), pinned=sim.pinned,
                    color=[tuple(c) for c in sim.colors])
    s.scene = sim.scene
    return s


def rotate(g, degrees):
    """The vector g turned counter-clockwise by ``degrees``."""
    a = math.radians(degrees)
    c, s = math.cos(a), math.sin(a)
    return np.array([c * g[0] - s * g[1], s * g[0] + c * g[1]])


def state_digest(sim):
    """A short hash of everything that makes up a simulation's state (to check replays bit for bit)."""
    h = hashlib.sha256()
    for a in (sim.positions, sim.velocities, sim.radii, sim.masses, sim.restitutions, sim.colors, sim.modes,
              sim.walls, sim.gravity, np.array([sim.width, sim.height, sim.time])):
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:16]
