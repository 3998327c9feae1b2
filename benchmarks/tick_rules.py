"""Rules for the clusters' tick length side by side, on one compiled engine.

    python benchmarks/ab_engine.py --save-state /tmp/g10k.pkl --scene galton --balls 10000 --until 0.8
    python benchmarks/tick_rules.py /tmp/g10k.pkl --steps 32 --block 4 --rules 5:2,8:3,3:1.2,pin4

The tick level is moved between steps in plain Python (abound/physics/ticks.py:
up a level, TICK_FACTOR as long, after a step whose solves took more than BUSY
updates a contact; down after one with fewer than IDLE, or none), so other
rules need no second compile. Each rule steps its own copy of the saved state
(benchmarks/ab_engine.py --save-state) on this checkout's fast engine, one
thread, in blocks of --block steps taken in turns (the order flips each
round). A rule is BUSY:IDLE (the shipped one is 5:2), or pinL: level L always.
Prints each rule's total and median time a step and the levels it ran at.
The copies' paths diverge (other ticks, other round-off): run a rule twice to
see the noise.
"""
import argparse
import collections
import copy
import math
import os
import pickle
import statistics
import sys
import time

os.environ.setdefault("NUMBA_NUM_THREADS", "1")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from abound.physics.backends import get  # noqa: E402
from abound.physics import ticks  # noqa: E402
from abound.physics.constants import P_TICK, P_WARM, S_SOLVED, S_UPDATES, TICK, TICK_FACTOR  # noqa: E402
from abound.physics.ticks import tick_length, warm_share  # noqa: E402


def next_level(rule, level, updates, solved):
    """ticks.next_level with this rule's thresholds, or its pinned level."""
    if rule[0] == "pin":
        return rule[1]
    return ticks.next_level(level, updates, solved, busy=rule[0], idle=rule[1])


def parse(text):
    if text.startswith("pin"):
        return ("pin", int(text[3:]))
    busy, idle = text.split(":")
    return (float(busy), float(idle))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("state")
    ap.add_argument("--steps", type=int, default=32)
    ap.add_argument("--block", type=int, default=4)
    ap.add_argument("--rules", default="5:2,8:3,3:1.2,5:2")
    args = ap.parse_args()
    engine = get("fast")[1]
    with open(args.state, "rb") as f:
        scene, n, saved = pickle.load(f)
    runs = []
    for text in args.rules.split(","):
        rule = parse(text)
        B, W, params = copy.deepcopy(saved)
        level = round(math.log(params[P_TICK] / TICK, TICK_FACTOR))
        if rule[0] == "pin":
            level = rule[1]
        params[P_TICK], params[P_WARM] = tick_length(level), warm_share(level)
        runs.append(dict(text=text, rule=rule, B=tuple(B), W=tuple(W), params=params, level=level,
                         times=[], levels=collections.Counter()))
    dt = 1.0 / 60.0
    done, rnd = 0, 0
    while done < args.steps:
        for R in runs if rnd % 2 == 0 else runs[::-1]:
            for _ in range(args.block):
                t0 = time.perf_counter()
                raw = engine.step(R["B"], R["W"], R["params"], dt)
                R["times"].append(time.perf_counter() - t0)
                R["levels"][R["level"]] += 1
                R["level"] = next_level(R["rule"], R["level"], int(raw[S_UPDATES]), int(raw[S_SOLVED]))
                R["params"][P_TICK], R["params"][P_WARM] = tick_length(R["level"]), warm_share(R["level"])
        done += args.block
        rnd += 1
    print(f"{scene} ({n} balls) from {args.state}: {done} steps a rule, blocks of {args.block}, one thread")
    for R in runs:
        ms = [1000.0 * t for t in R["times"]]
        print(f"rule {R['text']:>8}: total {sum(ms) / 1000.0:.1f} s, mean {statistics.mean(ms):.1f} ms, "
              f"median {statistics.median(ms):.1f} ms a step; levels {sorted(R['levels'].items())}")


if __name__ == "__main__":
    main()
