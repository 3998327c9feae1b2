"""Black holes (issue 26, item 1): an orbit's energy error at the default sub-step, and what a
black hole costs the hot gas. Writes black_holes_results.md and its section of BENCHMARKS.md.

    python benchmarks/black_holes.py [--frames 120]

1. A ball on a circular orbit (radius 200 px, GM 4e7 px^3/s^2, no softening,
   no gravity) for 10 orbits at the scene step 1/60 s and the default
   sub-step (abound/attractors.py: SUBSTEP of the local dynamical time):
   the largest relative energy error, the radius range, the measured period
   against 2 pi sqrt(r^3 / GM). Also at smaller radii, where the sub-steps
   get more.
2. The 10,000-ball hot gas with and without a black hole at its centre
   (a 3 s orbit a quarter of the box's height away, softening 5% of it, as
   the demo's middle-click places one), the two stepped in turns of 10
   frames: median ms per frame.
"""
import argparse
import datetime
import math
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from frame_loop import cpu, put_section  # noqa: E402

TITLE = "## Black holes (issue 26)"


def orbit(radius, gm=4.0e7, orbits=10):
    from abound import Simulation
    from abound.attractors import substep
    sim = Simulation(4 * radius + 200, 4 * radius + 200, gravity=(0.0, 0.0), dt=1 / 60)
    c = 2 * radius + 100
    sim.add_black_hole(c, c, gm, softening=0.0)
    v = math.sqrt(gm / radius)
    sim.add_ball(c + radius, c, vy=v, radius=2.0)
    e0 = 0.5 * v * v - gm / radius
    period = 2 * math.pi * math.sqrt(radius ** 3 / gm)
    worst, rs, angles, times = 0.0, [], [], []
    k = round(sim.dt / substep(sim.positions, sim.black_holes, sim.dt))
    while sim.time < orbits * period:
        sim.step()
        d = sim.positions[0] - c
        r = math.hypot(*d)
        vv = sim.velocities[0]
        worst = max(worst, abs((0.5 * vv @ vv - gm / r) - e0) / abs(e0))
        rs.append(r)
        angles.append(math.atan2(d[1], d[0]))
        times.append(sim.time)
    measured = 2 * math.pi / np.polyfit(times, np.unwrap(angles), 1)[0]
    return {"radius": radius, "substeps": k, "energy_error": worst, "r_min": min(rs), "r_max": max(rs),
            "period": period, "period_measured": measured}


def gas_cost(frames):
    from abound import Simulation
    plain, pulled = Simulation.from_config("hot_gas"), Simulation.from_config("hot_gas")
    from abound.attractors import place
    place(pulled, pulled.width / 2, pulled.height / 2)
    for sim in (plain, pulled):
        sim.step()
    times = {id(plain): [], id(pulled): []}
    for _ in range(frames // 10):
        for sim in (plain, pulled):
            for _ in range(10):
                t0 = time.perf_counter()
                sim.step()
                times[id(sim)].append((time.perf_counter() - t0) * 1000.0)
    return statistics.median(times[id(plain)]), statistics.median(times[id(pulled)])


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--frames", type=int, default=120, help="frames of the hot gas each way (default 120)")
    opts = p.parse_args(argv)
    rows = [orbit(r) for r in (200.0, 50.0, 12.0)]
    plain, pulled = gas_cost(opts.frames)
    out = [TITLE, "",
           f"Machine: {cpu()}; Python {platform.python_version()}. Date: "
           f"{datetime.datetime.now():%Y-%m-%d %H:%M} UTC. Command: `python benchmarks/black_holes.py "
           f"--frames {opts.frames}` (its docstring says how).", "",
           "A circular orbit, 10 orbits, GM 4e7 px³/s², step 1/60 s, the default sub-step:", "",
           "| radius, px | sub-steps a step | largest energy error | radius range, px | period, s | measured, s |",
           "|---:|---:|---:|---|---:|---:|"]
    out += [f"| {r['radius']:g} | {r['substeps']} | {r['energy_error']:.1e} | {r['r_min']:.2f}-{r['r_max']:.2f} "
            f"| {r['period']:.4f} | {r['period_measured']:.4f} |" for r in rows]
    out += ["", f"The hot gas (10,000 balls), median ms a frame, in turns: {plain:.2f} without a black hole, "
            f"{pulled:.2f} with one ({pulled / plain:.2f}x: the sub-steps, each an exact step whose pairs "
            "meet at roots of quartics, every ball woken to take its new field, the pull evaluated four "
            "times a sub-step)."]
    text = "\n".join(out) + "\n"
    (HERE / "black_holes_results.md").write_text(text)
    put_section(TITLE, text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
