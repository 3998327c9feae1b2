"""What the contacts a step resolved look like: each ball's last hit, for ``[render] flash``.

A step asked for its contacts (``Simulation.step(contacts=True)``) hands back
every contact with its time and normal impulse. :class:`Hits` keeps, per
ball, the time and the strength of the last one, and :meth:`Hits.flash`
turns them into a brightness for the renderer: a ball goes white by the
strength of its hit, fading linearly to its own colour over FLASH_SECONDS.

Strength is the velocity change the hit gave the ball, J / m, over FULL_DV
(at most 1): a touch barely shows, a hard knock shows white; a pinned ball,
whose velocity no hit changes, does not flash; a hit on a ball still
flashing restarts the fade from the brighter of the two. Times are
simulated time, so the same run flashes the same way in the demo and in
``abound capture``. GL-free.
"""
import numpy as np

FLASH_SECONDS = 0.15   # s: how long a flash takes to fade
FULL_DV = 600.0        # px/s: a hit that changes a ball's velocity by this much flashes it fully white


class Hits:
    """Each ball's last hit: time (simulated s, -inf for none) and strength (0..1).

    Ball indices are the simulation's; balls added at the end start unhit,
    and the arrays follow the simulation's ball count.
    """

    def __init__(self):
        self.clear()

    def _fit(self, n):
        k = len(self.time)
        if k < n:
            self.time = np.concatenate([self.time, np.full(n - k, -np.inf)])
            self.strength = np.concatenate([self.strength, np.zeros(n - k)])
        elif k > n:
            self.time, self.strength = self.time[:n], self.strength[:n]

    def record(self, sim, log, start):
        """Take in one step's contact log (CONTACT_DTYPE records), the step having begun at
        simulated time ``start``: each ball's last hit in it replaces the one before.
        A step that starts before the last one (a reset) forgets every hit."""
        if start < self.latest:
            self.clear()
        self.latest = start
        self._fit(len(sim))
        if log is None or not len(log):
            return
        a, b = log["a"], log["b"]
        balls = np.concatenate([a, b[b >= 0]])
        t = np.concatenate([log["t"], log["t"][b >= 0]])
        impulse = np.abs(np.concatenate([log["impulse"], log["impulse"][b >= 0]]))
        # each ball's last contact of the step: the first in reverse time order
        order = np.argsort(t, kind="stable")[::-1]
        balls, first = np.unique(balls[order], return_index=True)
        last = order[first]
        now = start + t[last]
        hit = np.minimum(impulse[last] / sim.masses[balls] / FULL_DV, 1.0)
        hit[sim.pinned[balls]] = 0.0  # a pinned ball's velocity does not change: it does not flash
        # a light touch does not dim a ball still white from a hard knock: the brighter wins
        still = self.strength[balls] * np.clip(1.0 - (now - self.time[balls]) / FLASH_SECONDS, 0.0, 1.0)
        self.time[balls] = now
        self.strength[balls] = np.maximum(hit, still)

    def flash(self, now, n):
        """(n,) float64 in 0..1: how white each ball is at simulated time ``now``."""
        self._fit(n)
        age = now - self.time
        fade = np.clip(1.0 - age / FLASH_SECONDS, 0.0, 1.0)
        return np.where(age >= 0.0, self.strength * fade, 0.0)

    def clear(self):
        """Forget every hit (after a reset: the new state has no history)."""
        self.time = np.full(0, -np.inf)
        self.strength = np.zeros(0)
        self.latest = -np.inf  # start of the last step recorded
