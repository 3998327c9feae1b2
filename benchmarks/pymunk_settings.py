"""abound against pymunk set tighter, on one state of the pouring Galton board.

    python benchmarks/pymunk_settings.py [--balls 10000] [--start 0.8] [--substeps 1,10]
                                         [--turn 6] [--rounds 4]

``run.py`` times both engines from the board's build, each on its own
trajectory: pymunk's balls sink into one another and into the pegs (its
largest overlap there is several radii), so its heap is not abound's heap.
This script times both from the same state instead: it builds the board
as ``run.py`` does (``run.build``), steps abound to ``--start`` seconds
(untimed: the funnel's heap then forms), copies that state into one pymunk
space per entry of ``--substeps`` (1: ``run.py``'s settings, 10 iterations
and one step a frame; k > 1: k steps of 1/(60 k) s a frame, collision_slop
1e-3 of the smallest radius, abound's overlap bound), and steps them in
turns of ``--turn`` frames, ``--rounds`` times. Prints the median ms a
frame of each and the largest overlap each left (``checks.max_overlap``, a
fraction of the smaller radius of a pair), as a Markdown table.
"""
import argparse
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import numpy as np  # noqa: E402

import run  # noqa: E402
from abound.physics import checks  # noqa: E402

DT = 1.0 / 60.0
CLUSTER_BOUND = 1e-3  # x the smallest radius: abound's overlap bound in contact clusters


def abound_overlap(sim):
    seg = np.asarray(sim.walls, dtype=float).reshape(-1, 4)
    return checks.max_overlap(sim.positions, sim.radii, ~np.asarray(sim.pinned), sim.width, sim.height,
                              seg[:, :2], seg[:, 2:])


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--balls", type=int, default=10_000)
    p.add_argument("--start", type=float, default=0.8, help="simulated s abound runs first, untimed")
    p.add_argument("--substeps", default="1,10", help="pymunk steps a frame, one space for each")
    p.add_argument("--turn", type=int, default=6, help="frames a turn")
    p.add_argument("--rounds", type=int, default=4)
    opts = p.parse_args(argv)
    from abound.compare.pymunk_world import PymunkWorld
    sim = run.build("galton", opts.balls)
    t0 = time.perf_counter()
    while sim.time < opts.start - 1e-9:
        sim.step(DT)
    print(f"abound stepped to {sim.time:.2f} s in {time.perf_counter() - t0:.0f} s (untimed)", file=sys.stderr)
    rmin = float(sim.radii.min())
    sides = {"abound": lambda: sim.step(DT)}
    worlds = {}
    for k in (int(v) for v in opts.substeps.split(",")):
        world = PymunkWorld(sim)
        if k > 1:
            world.space.collision_slop = CLUSTER_BOUND * rmin
        label = (f"pymunk, {world.space.iterations} iterations, {k} step{'s' if k > 1 else ''} a frame, collision_slop "
                 f"{world.space.collision_slop:.2g} px")
        worlds[label] = world
        sides[label] = (lambda w, k: lambda: [w.step(DT / k) for _ in range(k)])(world, k)
    times = {label: [] for label in sides}
    for r in range(opts.rounds):
        for label, step in sides.items():
            for _ in range(opts.turn):
                t = time.perf_counter()
                step()
                times[label].append(time.perf_counter() - t)
        print(f"round {r + 1} of {opts.rounds} done", file=sys.stderr)
    overlap = {"abound": abound_overlap(sim), **{label: w.max_overlap() for label, w in worlds.items()}}
    base = statistics.median(times["abound"])
    print(f"{opts.balls:,}-ball Galton board from abound's state at {opts.start:g} s, "
          f"{opts.rounds} turns of {opts.turn} frames each; smallest radius {rmin:.3g} px")
    print()
    print("| engine | ms a frame (median) | over abound | largest overlap after (x radius) |")
    print("|---|---:|---:|---:|")
    for label, ts in times.items():
        ms = 1e3 * statistics.median(ts)
        print(f"| {label} | {ms:.1f} | {statistics.median(ts) / base:.2f} | {overlap[label]:.2g} |")


if __name__ == "__main__":
    main()
