"""Two revisions of the compiled engine side by side in one process: is a refactor as fast?

    python benchmarks/ab_engine.py REV_A REV_B [--scene hot_gas[,galton,...]] [--steps 60] [--rounds 6]
    python benchmarks/ab_engine.py REV_A REV_B --state FILE [--save-state FILE ...]

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

--state starts both from a state saved by ``--save-state FILE --scene S
--balls N --until T`` (the benchmark's scene S of N balls, as
benchmarks/run.py builds it, stepped T simulated seconds by the working
tree's fast backend, then pickled): the pouring 10,000-ball Galton board at
0.8 s, its funnel full, is where a contact solve's cost shows, and getting
there takes a minute.
"""
import argparse
import copy
import importlib
import io
import math
import os
import pickle
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


def save_state(args, dt):
    """Build benchmarks/run.py's scene, step it to --until s, pickle its state to --save-state."""
    import run
    sim = run.build(args.scene, args.balls)
    while sim.time < args.until - 1e-9:
        sim.step(dt)
    with open(args.save_state, "wb") as f:
        pickle.dump((args.scene, len(sim), state(sim)), f)
    print(f"saved {args.scene} ({len(sim)} balls) at {sim.time:.3f} s to {args.save_state}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("rev_a", nargs="?")
    ap.add_argument("rev_b", nargs="?")
    ap.add_argument("--scene", default="hot_gas", help="a shipped scene, or several, comma-separated")
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--state", help="start from this saved state instead (see --save-state)")
    ap.add_argument("--save-state", help="save benchmarks/run.py's --scene of --balls at --until s here, and stop")
    ap.add_argument("--balls", type=int, default=10_000)
    ap.add_argument("--until", type=float, default=0.8)
    args = ap.parse_args()
    dt = 1.0 / 60.0
    if args.save_state:
        save_state(args, dt)
        return
    if not (args.rev_a and args.rev_b):
        ap.error("two revisions to compare")
    with tempfile.TemporaryDirectory() as tmp:
        engines = {}
        for name, rev in (("A", args.rev_a), ("B", args.rev_b)):
            t0 = time.perf_counter()
            engines[name] = load(rev, os.path.join(tmp, name))
            print(f"{name} = {rev}: loaded in {time.perf_counter() - t0:.1f} s", flush=True)
        if args.state:
            with open(args.state, "rb") as f:
                scene, n, saved = pickle.load(f)
            compare(engines, f"{scene} from {args.state}", n, lambda: copy.deepcopy(saved), args, dt)
            return
        for scene in args.scene.split(","):
            sim = Simulation.from_config(scene, backend="reference")
            sim.step(1e-9)  # placed and settled
            compare(engines, scene, len(sim), lambda: state(sim), args, dt)


def compare(engines, scene, n, start, args, dt):
    """Step copies of a state (start() makes one) with both engines in turns; print the medians."""
    for name in engines:
        t0 = time.perf_counter()
        B, W, params = start()
        engines[name].step(tuple(B), tuple(W), params, dt)  # compiles (or loads the cache)
        print(f"{name}: ready for {scene} in {time.perf_counter() - t0:.1f} s", flush=True)
    runs = {name: start() for name in engines}
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
    print(f"scene {scene} ({n} balls), {args.rounds} rounds of {args.steps} steps, one thread")
    print(f"A {args.rev_a}: median {ma:.3f} ms/step")
    print(f"B {args.rev_b}: median {mb:.3f} ms/step")
    print(f"B / A = {mb / ma:.3f}; same final state: {same}")


if __name__ == "__main__":
    main()
