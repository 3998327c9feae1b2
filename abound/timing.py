"""Timing the physics: what ``abound bench`` and ``abound bench --compare pymunk``
(abound/cli/bench.py, abound/compare/bench.py) measure, the same way: step
times and their percentiles, the energy drift, the overlap and escapes of a
run, and the untimed warm-up of a compiled backend.
"""
import math
import time

OVERLAP_SAMPLES = 10  # frames at which the overlap is measured (untimed), the last one included


def percentile(values, q):
    """The q-th percentile (0..100) with linear interpolation, as numpy's default."""
    s = sorted(values)
    if not s:
        return float("nan")
    pos = (len(s) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def warm_up(backend):
    """Step a one-ball simulation so a JIT backend compiles (or loads its cache) untimed;
    on a cold cache, saying so first (minutes of silence looked like a hang)."""
    from abound import Simulation
    from abound.warmup import note_if_cold
    note_if_cold(backend)
    sim = Simulation(100, 100, backend=backend)
    sim.add_ball(50, 50, vx=10.0, radius=5.0)
    sim.add_ball(20, 20, vx=-10.0, radius=5.0)
    sim.step(0.01)


def relative_drift(e0, e1):
    """(e1 - e0) / |e0|, the relative energy change."""
    return (e1 - e0) / abs(e0) if e0 != 0 else (0.0 if e1 == 0 else math.inf)


class Meter:
    """Steps an engine and keeps what ``measure`` reports, a block of frames
    at a time (``abound bench --compare pymunk`` alternates two engines block
    by block, so that both see the same machine load).

    engine: anything with ``step(dt)``, ``energy()``, ``max_overlap()``,
    ``positions``, ``width``, ``height`` and ``time`` (a Simulation, a
    PymunkWorld); its ``step`` returns StepStats, or None (pymunk). frames: the
    frames of the whole run (the overlap is sampled every tenth of them).
    """

    def __init__(self, engine, frames, dt=None):
        self.engine, self.frames, self.dt = engine, frames, dt
        self.every = max(1, frames // OVERLAP_SAMPLES)
        self.e0 = engine.energy()
        self.times, self.done, self.overlap = [], 0, 0.0
        self.bb = self.bw = self.frozen = self.stopped = self.collapsed = self.stuck = 0

    def run(self, frames):
        """Step and time the next ``frames`` frames (no more than the run's)."""
        clock = time.perf_counter
        step = self.engine.step
        for _ in range(min(frames, self.frames - self.done)):
            t0 = clock()
            stats = step(self.dt)
            self.times.append((clock() - t0) * 1000.0)
            self.done += 1
            if stats is not None:
                self.bb += stats.ball_ball
                self.bw += stats.ball_wall
                self.frozen += stats.frozen
                self.collapsed += stats.collapsed
                self.stuck += stats.stuck
                self.stopped += stats.stopped
            if self.done == self.frames or self.done % self.every == 0:
                self.sample()

    def sample(self):
        """Untimed measures between two frames, every tenth of the run."""
        self.overlap = max(self.overlap, self.engine.max_overlap())

    def result(self):
        from abound.physics.checks import escaped
        frames, e1, sim = max(self.done, 1), self.engine.energy(), self.engine
        return {
            "ms_per_frame_median": percentile(self.times, 50),
            "ms_per_frame_p90": percentile(self.times, 90),
            "ball_ball_per_frame": self.bb / frames,
            "ball_wall_per_frame": self.bw / frames,
            "contacts_per_frame": (self.bb + self.bw) / frames,
            "frozen_total": self.frozen,
            "collapsed_total": self.collapsed,
            "stuck_total": self.stuck,
            "stopped_steps": self.stopped,
            "energy_first": self.e0,
            "energy_last": e1,
            "energy_drift": relative_drift(self.e0, e1),
            "max_overlap": self.overlap,
            "escaped": escaped(sim.positions, sim.width, sim.height),
            "sim_time": sim.time,
        }


def measure(sim, frames, dt=None):
    """Step ``sim`` ``frames`` times; returns the result dict (without scene info)."""
    meter = Meter(sim, frames, dt)
    meter.run(frames)
    return meter.result()
