"""The physics core's promises, checked from a Simulation's state after a step.

Shared by the robustness tests (issue 7) and the soak test. Everything is
computed here from the public state (positions, radii, modes, masses,
gravity, walls) with numpy, not taken from the engine's own measures:

* no NaN or infinity in positions and velocities;
* every ball that is not pinned lies inside the box (its whole disc);
* overlaps (ball-ball, ball-box, ball-segment, as a fraction of the smaller
  radius) at most IN_FLIGHT where both sides are in flight and RESTING where a
  ball rests (issue 2's bounds);
* energy (kinetic + gravitational potential of the unpinned balls) never
  rises by more than round-off (every restitution is at most 1); with contact
  clusters (the default) a heap's solve may leave its balls hovering up to
  1e-3 r above their supports (docs/physics.md), so there it may stand above
  the lowest it has reached by no more than every ball lifted by that much,
  its supports' hovers included (hover_band);
* a step resolves at most the total event budget documented in docs/physics.md (Budgets).
"""
import numpy as np

from abound.physics import loop  # (the budgets' home: tests patch them there)
from abound.physics.world import ASLEEP, CLUSTER, FREE, FROZEN, PINNED, SLIDING

IN_FLIGHT = 1e-6   # largest overlap / radius where both sides are in flight
RESTING = 1e-3     # ... where a ball rests (or slides, or sleeps)
ROUND_OFF = 1e-9   # energy may rise by this fraction of its scale (see energy_scale), no more


def resting_balls(sim):
    """Balls that rest: sliding, asleep, frozen or in a contact cluster (lasting
    contacts: issue 23's bound is RESTING), or free and slower than the rest speed."""
    modes = sim.modes
    speed = np.hypot(*sim.velocities.T)
    return np.isin(modes, (SLIDING, ASLEEP, FROZEN, CLUSTER)) | ((modes == FREE) & (speed < sim.rest_speed))


def overlaps(sim):
    """(largest overlap / radius in flight, largest where a ball rests), over ball pairs, the box and walls.

    A pair rests when either of its (unpinned) balls rests; pinned balls rest
    against nothing of their own.
    """
    pos, r = sim.positions, sim.radii
    pinned = sim.modes == PINNED
    rest = resting_balls(sim) & ~pinned
    flight_worst = rest_worst = 0.0

    def account(ov, rests):
        nonlocal flight_worst, rest_worst
        if ov.size:
            flight_worst = max(flight_worst, float(np.max(ov[~rests], initial=0.0)))
            rest_worst = max(rest_worst, float(np.max(ov[rests], initial=0.0)))

    free = ~pinned
    # the box: how far each ball pokes through each side
    poke = np.stack([r - pos[:, 0], pos[:, 0] + r - sim.width, r - pos[:, 1], pos[:, 1] + r - sim.height], 1)
    account((poke.max(axis=1) / r)[free], rest[free])
    # interior segments, end points included
    for x0, y0, x1, y1 in sim.walls:
        p0, d = np.array([x0, y0]), np.array([x1 - x0, y1 - y0])
        u = np.clip(((pos - p0) @ d) / (d @ d), 0.0, 1.0)
        dist = np.hypot(*(pos - (p0 + u[:, None] * d)).T)
        account(((r - dist) / r)[free], rest[free])
    # ball pairs (i < j, not both pinned), in blocks of rows to bound memory
    n = len(r)
    for a in range(0, n, 512):
        i, j = np.nonzero(np.arange(a, min(a + 512, n))[:, None] < np.arange(n)[None, :])
        i += a
        keep = ~(pinned[i] & pinned[j])
        i, j = i[keep], j[keep]
        dist = np.hypot(*(pos[i] - pos[j]).T)
        account((r[i] + r[j] - dist) / np.minimum(r[i], r[j]), rest[i] | rest[j])
    return flight_worst, rest_worst


def energy_scale(sim):
    """The size of the terms the energy sums: kinetic energy plus, per unpinned
    ball, m |g| (width + height), a bound on its potential anywhere in the box."""
    free = sim.modes != PINNED
    reach = float(np.hypot(*sim.gravity)) * (sim.width + sim.height)
    return sim.kinetic_energy() + float(np.sum(sim.masses[free])) * reach


def hover_band(sim):
    """How far above the lowest energy it has reached a simulation whose
    contact clusters run (contact_clusters on, a rest speed, gravity) may
    stand: the energy of every unpinned ball lifted by its hover. 0 where
    they do not run: there energy never rises.

    The solve leaves each lasting contact open by at most RESTING x the
    smaller radius (docs/physics.md), at most RESTING / 2 of the distance
    between the two centres; along a ball's chain of supports down to the
    floor these add up, so a ball whose top stands H above the bottom of the
    lowest ball (along gravity) hovers at most RESTING x H / 2 (its radius
    on a floor: H = 2 r). Evaluated on the state as it is."""
    if not (sim.contact_clusters and sim.rest_speed > 0.0):
        return 0.0
    free = sim.modes != PINNED
    g = np.asarray(sim.gravity, dtype=float)
    strength = float(np.hypot(*g))
    if strength == 0.0 or not np.any(free):
        return 0.0
    up = -g / strength
    r = sim.radii[free]
    height = sim.positions[free] @ up
    tops = height + r - np.min(height - r)
    return float(np.sum(sim.masses[free] * 0.5 * tops)) * RESTING * strength


def energy_excess(sim, energy, e0, lowest, scale):
    """How far energy (after a step that began at e0) stands above what the
    promise allows: e0, or within one hover band of the lowest energy reached,
    plus ROUND_OFF x scale (energy_scale before the step). <= 0: kept."""
    return energy - (max(e0, lowest + hover_band(sim)) + ROUND_OFF * scale)


def event_budget(n):
    """The total events one step may resolve with n balls (docs/physics.md, "Budgets")."""
    return loop.MAX_EVENTS_BASE + loop.MAX_EVENTS_PER_BALL * n


class StepChecker:
    """Steps a Simulation and checks every promise after each step.

    ``edited()`` before a step says the state was changed from outside (the
    box resized, gravity switched): that step may push balls apart or count
    potential energy against a new gravity, so its energy is not compared.
    """

    def __init__(self, sim, in_flight=IN_FLIGHT, resting=RESTING, inside=True):
        self.sim = sim
        self.in_flight, self.resting, self.inside = in_flight, resting, inside
        self.steps = 0
        self.worst = [0.0, 0.0]   # overlaps seen: in flight, resting
        self.events = 0
        self.frozen = 0
        self._energy = None
        self.edited()

    def edited(self):
        self._energy = None
        self._lowest = None

    def step(self, dt=None):
        sim = self.sim
        before = None
        if self._energy is None:
            self._energy = sim.energy(), energy_scale(sim)
            self._lowest = self._energy[0]
        else:
            before = self._energy
        stats = sim.step(dt)
        self.steps += 1
        self.events += stats.events
        self.frozen += stats.frozen
        where = f"step {self.steps} (t = {sim.time:.6g} s)"
        assert np.all(np.isfinite(sim.positions)) and np.all(np.isfinite(sim.velocities)), \
            f"NaN or infinity in the state after {where}"
        if self.inside:
            self.check_inside(where)
        flight, rest = overlaps(sim)
        self.worst = [max(self.worst[0], flight), max(self.worst[1], rest)]
        assert flight <= self.in_flight, f"overlap {flight:.3g} x radius in flight after {where}"
        assert rest <= self.resting, f"overlap {rest:.3g} x radius at rest after {where}"
        energy = sim.energy()
        if before is not None:
            e0, scale = before
            # (or a cluster's hover: within one band of the lowest since the last edit)
            assert energy_excess(sim, energy, e0, self._lowest, scale) <= 0.0, \
                f"energy rose from {e0!r} to {energy!r} (scale {scale:.3g}) in {where}"
        self._energy = energy, energy_scale(sim)
        self._lowest = min(self._lowest, energy)
        assert stats.events <= event_budget(len(sim)), f"{stats.events} events in {where}"
        return stats

    def check_inside(self, where=""):
        sim = self.sim
        free = sim.modes != PINNED
        pos, r = sim.positions[free], sim.radii[free]
        size = np.array([sim.width, sim.height])
        fits = 2.0 * r[:, None] <= size
        # a ball wider than the box sits on its middle line (settle.clamp_into_box)
        ok = np.where(fits, (pos >= r[:, None]) & (pos <= size - r[:, None]), pos == 0.5 * size)
        assert ok.all(), f"a ball is outside the box after {where}: {pos[~ok.all(axis=1)][:3]}"
