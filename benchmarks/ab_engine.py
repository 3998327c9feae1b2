"""Two revisions of the compiled engine side by side in one process: is a refactor as fast?

    python benchmarks/ab_engine.py REV_A REV_B [--scene hot_gas[,galton,...]] [--steps 60] [--rounds 6]

Each revision's abound/physics is taken from git (git archive) into a
temporary folder and compiled by numba as a package of its own, so both run
in this process on the same machine load. Both step copies of one state (the
scene built by the working tree's Simulation) with their own ``step(B, W,
params, dt)`` on one thread, in blocks of --steps, alternating A B, B A, ...
(the order flips each round: the engine that runs second in a pair tends to
gain a little), each moving its own clusters' tick level as Simulation.step
does. Prints the median ms per step of each, their ratio B / A, and
whether the two ended in the same state (a pure refactor must). Several
scenes (comma-separated) share one compile of each revision, one after the
other.
"""
import argparse
import importlib
import io
import math
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import types
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from abound import Simulation  # noqa: E402
from abound.physics.constants import P_TICK, P_WARM, S_SOLVED, S_UPDATES, TICK, TICK_FACTOR  # noqa: E402
from abound.physics.ticks import next_level, tick_length, warm_share  # noqa: E402


def load(rev, folder):
    """The compiled engine of git revision rev, unpacked into folder."""
    data = subprocess.run(["git", "-C", str(REPO), "archive", rev, "abound/physics"],
                          capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(folder)
    physics = os.path.join(folder, "abound", "physics")
    tag = "ab_" + "".join(c if c.isalnum() else "_" for c in rev)
    top = types.ModuleType(tag)
    top.__path__ = []
    sys.modules[tag] = top
    pkg = types.ModuleType(tag + "._compiled")  # _jit compiles a package of this name
    pkg.__path__ = [physics]
    sys.modules[tag + "._compiled"] = pkg
    return importlib.import_module(tag + "._compiled.engine")


def adapt_ticks(params, raw):
    """Move the clusters' tick level as Simulation.step does (physics/ticks.py),
    for an engine that reports its solves (older ones do not, and keep 2 ms)."""
    if len(raw) > S_SOLVED and len(params) > P_WARM:
        level = next_level(round(math.log(params[P_TICK] / TICK, TICK_FACTOR)), int(raw[S_UPDATES]),
                           int(raw[S_SOLVED]))
        params[P_TICK] = tick_length(level)
        params[P_WARM] = warm_share(level)


def state(sim):
    w = sim._world
    return [a.copy() for a in w.ball_arrays()], [a.copy() for a in w.wall_arrays()], sim._params()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("rev_a")
    ap.add_argument("rev_b")
    ap.add_argument("--scene", default="hot_gas", help="a shipped scene, or several, comma-separated")
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--rounds", type=int, default=6)
    args = ap.parse_args()
    dt = 1.0 / 60.0
    with tempfile.TemporaryDirectory() as tmp:
        engines = {}
        for name, rev in (("A", args.rev_a), ("B", args.rev_b)):
            t0 = time.perf_counter()
            engines[name] = load(rev, os.path.join(tmp, name))
            print(f"{name} = {rev}: loaded in {time.perf_counter() - t0:.1f} s", flush=True)
        for scene in args.scene.split(","):
            compare(engines, scene, args, dt)


def compare(engines, scene, args, dt):
    """Step copies of the shipped scene's start with both engines in turns; print the medians."""
    sim = Simulation.from_config(scene, backend="reference")
    sim.step(1e-9)  # placed and settled
    for name in engines:
        t0 = time.perf_counter()
        B, W, params = state(sim)
        engines[name].step(tuple(B), tuple(W), params, dt)  # compiles (or loads the cache)
        print(f"{name}: ready for {scene} in {time.perf_counter() - t0:.1f} s", flush=True)
    runs = {name: state(sim) for name in engines}
    times = {name: [] for name in engines}
    for r in range(args.rounds):
        for name in ("A", "B") if r % 2 == 0 else ("B", "A"):
            B, W, params = runs[name]
            step = engines[name].step
            for _ in range(args.steps):
                t0 = time.perf_counter()
                raw = step(tuple(B), tuple(W), params, dt)
                times[name].append((time.perf_counter() - t0) * 1000.0)
                adapt_ticks(params, raw)
    ma, mb = statistics.median(times["A"]), statistics.median(times["B"])
    same = all(np.array_equal(x, y) for x, y in zip(runs["A"][0], runs["B"][0]))
    print(f"scene {scene} ({len(sim)} balls), {args.rounds} rounds of {args.steps} steps, one thread")
    print(f"A {args.rev_a}: median {ma:.3f} ms/step")
    print(f"B {args.rev_b}: median {mb:.3f} ms/step")
    print(f"B / A = {mb / ma:.3f}; same final state: {same}")


if __name__ == "__main__":
    main()
