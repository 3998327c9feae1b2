"""Frame-time drift of the screensaver over a long run (a benchmark, not a test).

    python benchmarks/soak_frame_time.py --balls 1000 --minutes 60 --window 60

Runs the saver's physics path (one fixed step of 1/60 s, then the stillness
check that livens a settled pile) on the soak scene of ``tests/apps/test_soak.py``
and prints, per window of simulated time, the median, p90 and mean milliseconds a
step took, the events per step and how often it was livened; at the end, the
slope of the median over the run (drift). No window and no drawing: the
drawing cost does not drift with the state.
"""
import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "helpers"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "apps"))  # test_soak

from abound import Simulation  # noqa: E402
from abound.cli.saver import Liveliness  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--balls", type=int, default=1000)
    ap.add_argument("--minutes", type=float, default=60.0, help="simulated minutes (default 60)")
    ap.add_argument("--window", type=float, default=60.0, help="simulated seconds per report line (default 60)")
    args = ap.parse_args()
    from test_soak import DT, soak_scene
    sim = Simulation.from_config(soak_scene(args.balls))
    live = Liveliness(sim.scene["saver"])
    per_window = int(round(args.window / DT))
    total = int(round(args.minutes * 60.0 / DT))
    medians = []
    times, events = [], 0
    print(f"{args.balls} balls, {args.minutes:g} simulated minutes, backend {sim.backend}")
    print("   sim t      median ms   p90 ms   mean ms   events/step   livenings")
    for k in range(1, total + 1):
        t0 = time.perf_counter()
        events += sim.step().events
        times.append(time.perf_counter() - t0)
        sim = live.update(sim, sim.dt)
        if k % per_window == 0:
            ms = np.array(times) * 1e3
            medians.append(float(np.median(ms)))
            print(f"{k * DT:8.0f} s   {medians[-1]:9.3f}   {np.percentile(ms, 90):7.3f}   {ms.mean():7.3f}   "
                  f"{events / len(times):11.1f}   {live.count:9d}", flush=True)
            times, events = [], 0
    if len(medians) >= 2:
        slope = np.polyfit(np.arange(len(medians)) * args.window / 60.0, medians, 1)[0]
        print(f"drift of the median: {slope:+.4f} ms per simulated minute")


if __name__ == "__main__":
    main()
