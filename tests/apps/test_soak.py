"""Soak: the screensaver's headless tick path for a long stretch of simulated time.

The saver must run for days: memory flat, the state sane, and never still
for long (it livens a settled pile up). :func:`soak` runs ``SaverApp.tick``
one fixed step at a time and checks, as it goes:

* no NaN or infinity, every ball inside the box, and overlaps (ball-ball and
  ball-wall, as a fraction of the smaller radius) within 1e-6 for balls in
  flight and 1e-3 where a ball is resting (sliding, asleep, frozen or slower
  than the scene's rest speed);
* the number of balls never grows, and the livening happens again and again;
* a frame drawn every ``draw_every`` seconds of simulated time differs from
  the one before (the picture keeps changing);
* memory is flat after the warm-up: the Python/numpy heap (tracemalloc) and
  the process's resident size stay within a fixed margin of their level then.

The full soak (an hour of simulated time at 1,000 balls, issue 6) and its
ten-minute version are marked ``soak`` and left out of the default run
(``python -m pytest -m soak`` runs them); a small version runs by default.
Frame-time drift is a benchmark's business, not a test's.
"""
import os
import tracemalloc

import numpy as np
import pytest

from abound import Simulation
from invariants import IN_FLIGHT, RESTING, overlaps

pyglet = pytest.importorskip("pyglet")
from abound.cli.saver import SaverApp  # noqa: E402

DT = 1.0 / 60.0
W, H = 1280, 720


def soak_scene(balls, radius=(5.0, 9.0), stillness_seconds=3.0, liven="wave", seed=7):
    """The default scene's shape (box, two shelves) with ``balls`` lossy balls, so piles settle."""
    return {
        "world": {"width": W, "height": H, "gravity": [0.0, -980.0]},
        "physics": {"backend": "fast", "seed": seed, "dt": DT},
        "spawn": [{"count": balls, "radius": list(radius), "speed": [100.0, 500.0],
                   "restitution": [0.6, 0.9]}],
        "walls": [{"x0": 160.0, "y0": 420.0, "x1": 520.0, "y1": 320.0},
                  {"x0": 760.0, "y0": 320.0, "x1": 1120.0, "y1": 420.0}],
        "render": {"shading": False, "trails": 0.0, "hud": False},
        "saver": {"stillness_energy": 0.02, "stillness_seconds": stillness_seconds, "liven": liven},
    }


def rss_bytes():
    with open(f"/proc/{os.getpid()}/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def soak(scene, seconds, *, draw_every=60.0, check_every=1.0, warmup=None, heap_margin=2 << 20,
         rss_margin=64 << 20, min_livenings=2):
    """Run the headless saver for ``seconds`` of simulated time, checking as it goes; returns a summary."""
    sim = Simulation.from_config(scene)
    n0 = len(sim)
    app = SaverApp(sim, headless=True, size=(int(sim.width), int(sim.height)))  # the box stays the box
    steps = int(round(seconds / DT))
    draw_steps = int(round(draw_every / DT))
    check_steps = int(round(check_every / DT))
    warm_steps = int(round((warmup if warmup is not None else min(0.25 * seconds, 120.0)) / DT))
    last_frame = None
    frames = worst_flight = worst_rest = 0
    first_bad_overlap = first_outside = None  # the run goes on, so that every check reports
    heap0 = rss0 = None
    heap_peak = rss_peak = 0
    tracemalloc.start()
    try:
        for k in range(1, steps + 1):
            app.tick(DT)  # exactly one physics step, then the saver's stillness check
            sim = app.sim
            assert len(sim) <= n0, f"the ball count grew to {len(sim)} at step {k}"
            if not (np.all(np.isfinite(sim.positions)) and np.all(np.isfinite(sim.velocities))):
                raise AssertionError(f"NaN or infinity in the state at step {k} (t = {k * DT:.2f} s)")
            if k % check_steps == 0:
                flight, rest = overlaps(sim)
                worst_flight, worst_rest = max(worst_flight, flight), max(worst_rest, rest)
                if first_bad_overlap is None and (flight > IN_FLIGHT or rest > RESTING):
                    first_bad_overlap = k
                inside = ((sim.positions >= 0) & (sim.positions <= [sim.width, sim.height])).all()
                if first_outside is None and not inside:
                    first_outside = k
            if k % draw_steps == 0:
                app.drawers[0]()
                frame = app.apps[0].read_frame()
                frames += 1
                if last_frame is not None:
                    changed = np.any(frame != last_frame, axis=2).sum()
                    assert changed > 100, f"the picture at step {k} is the one {draw_every:g} s before"
                last_frame = frame
            if k == warm_steps:
                heap0, rss0 = tracemalloc.get_traced_memory()[0], rss_bytes()
            elif k > warm_steps and k % check_steps == 0:
                heap_peak = max(heap_peak, tracemalloc.get_traced_memory()[0])
                rss_peak = max(rss_peak, rss_bytes())
        livenings = app.live.count
    finally:
        tracemalloc.stop()
        app.close()
    problems = []
    if first_bad_overlap is not None:
        problems.append(f"overlaps up to {worst_flight:.3g} x radius in flight (bound {IN_FLIGHT:g}) and "
                        f"{worst_rest:.3g} resting (bound {RESTING:g}), first over a bound at step {first_bad_overlap}")
    if first_outside is not None:
        problems.append(f"a ball's centre left the box at step {first_outside}")
    if heap_peak - heap0 > heap_margin:
        problems.append(f"the heap grew by {(heap_peak - heap0) / 1e6:.1f} MB after warm-up")
    if rss_peak - rss0 > rss_margin:
        problems.append(f"the resident size grew by {(rss_peak - rss0) / 1e6:.1f} MB after warm-up")
    if livenings < min_livenings:
        problems.append(f"livened {livenings} times in {seconds:g} s, expected at least {min_livenings}")
    assert not problems, "; ".join(problems)
    return {"livenings": livenings, "frames": frames, "heap_growth": heap_peak - heap0,
            "rss_growth": rss_peak - rss0, "overlap_in_flight": worst_flight, "overlap_resting": worst_rest}


@pytest.mark.soak
def test_saver_soak_one_hour_1000_balls():
    soak(soak_scene(1000), 3600.0, min_livenings=10)


@pytest.mark.soak
def test_saver_soak_ten_minutes_1000_balls():
    soak(soak_scene(1000), 600.0, min_livenings=3)


def test_saver_soak_short():
    """The same checks at a scale the default run affords: a few dozen balls that settle and are livened."""
    soak(soak_scene(40, stillness_seconds=1.0), 40.0, draw_every=5.0, warmup=10.0, min_livenings=2)
