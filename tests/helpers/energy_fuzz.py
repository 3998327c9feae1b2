"""Fuzzed crowds for the contact clusters' energy promise, and a fuzzer that runs them.

Each seed builds a crowd (issue 23's fuzzer): 20-90 balls, radii 0.2-25 px,
masses 1e-3 to 1e3, a third of them thrown at up to 5e5 px/s, in a 500 x 250
box under gravity in any direction, with contact clusters on - heaps whose
balls free balls strike again and again within a tick. ``strong`` gravity is
100-5,000 px/s^2 with restitutions 1, 1, 0.8 or 0.3; ``weak`` is 5-150 px/s^2
with 1, 0, 0.8 or 0.3 (a small hover band: energy faults show at a smaller
size). The tests run the seeds the fuzzer found failing
(tests/physics/test_physics_invariants.py); run it to look for more::

    python tests/helpers/energy_fuzz.py strong 0 300 [--backend fast]

It prints each seed whose energy() broke the promise StepChecker checks
(invariants.energy_excess: no rise in a step but within one hover band of
the lowest reached, plus round-off), and how high it stood, then a count.
"""
import argparse
import warnings

import numpy as np

import abound
from invariants import energy_excess, energy_scale, hover_band

KINDS = {"strong": ((100.0, 5000.0), (1.0, 1.0, 0.8, 0.3)),
         "weak": ((5.0, 150.0), (1.0, 0.0, 0.8, 0.3))}


def struck_crowd(seed, kind="strong", backend="fast"):
    """The crowd of ``seed``: (sim, dt), dt 1/60 or 1/240 s."""
    (g_low, g_high), restitutions = KINDS[kind]
    rng = np.random.default_rng(seed)
    W, H = 500.0, 250.0
    angle, strength = rng.uniform(0, 2 * np.pi), np.exp(rng.uniform(np.log(g_low), np.log(g_high)))
    sim = abound.Simulation(W, H, gravity=(strength * np.cos(angle), strength * np.sin(angle)), backend=backend,
                            rest_speed=float(rng.choice([5.0, 20.0, 50.0])), contact_clusters=True,
                            wall_restitution=float(rng.choice([0.0, 1.0])),
                            restitution_mix=str(rng.choice(["product", "min", "max"])))
    n, tries = int(rng.integers(20, 90)), 0
    while sim.n < n and tries < 5000:
        tries += 1
        r = np.exp(rng.uniform(np.log(0.2), np.log(25)))
        x, y = rng.uniform(r, W - r), rng.uniform(r, H - r)
        if sim.n and np.any(np.hypot(*(sim.positions - (x, y)).T) < sim.radii + r):
            continue
        speed = np.exp(rng.uniform(0, np.log(5e5 if rng.random() < 0.3 else 50)))
        heading = rng.uniform(0, 6.3)
        sim.add_ball(x, y, speed * np.cos(heading), speed * np.sin(heading), radius=r,
                     mass=float(np.exp(rng.uniform(np.log(1e-3), np.log(1e3)))),
                     restitution=float(rng.choice(restitutions)))
    return sim, float(rng.choice([1 / 60, 1 / 240]))


def worst_rise(sim, dt, steps=120):
    """(the highest energy() stood above the lowest it had reached, in hover
    bands, at a step that broke the promise (energy_excess > 0), or 0; that step)."""
    worst, at = 0.0, None
    e0 = lowest = sim.energy()
    for k in range(steps):
        scale = energy_scale(sim)
        sim.step(dt)
        e1 = sim.energy()
        if energy_excess(sim, e1, e0, lowest, scale) > 0.0:
            ratio = (e1 - lowest) / max(hover_band(sim), 1e-300)
            if ratio > worst:
                worst, at = ratio, k
        e0, lowest = e1, min(lowest, e1)
    return worst, at


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kind", choices=sorted(KINDS))
    parser.add_argument("first", type=int)
    parser.add_argument("end", type=int)
    parser.add_argument("--backend", default="fast")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")  # (the jam warnings of crowds that settle on slopes)
    bad = 0
    for seed in range(args.first, args.end):
        worst, at = worst_rise(*struck_crowd(seed, args.kind, args.backend))
        if at is not None:
            bad += 1
            print(f"seed {seed}: energy stood {worst:.3g} hover bands above its lowest in step {at}", flush=True)
    print(f"{args.kind}, {args.backend}, seeds {args.first}-{args.end - 1}: {bad} rose above the band")


if __name__ == "__main__":
    main()
