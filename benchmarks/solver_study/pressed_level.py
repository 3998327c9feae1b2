"""How often a tick's solve runs out of budget on a ball pressed level between two sleepers.

Draws balls as tests/physics/test_contact_solver.py's pressed-level case
builds them (a ball on the floor between two sleepers, bounds from opposite
sides a hair apart, impulses held from the last tick) and counts the solves
that run out of budget: Gauss-Seidel alone (contact_solver.solve_impulses)
and the tick's solve (clusters.solve_tick: the exact solve of each lone
ball, then Gauss-Seidel). Prints the counts, and the first cases that run
Gauss-Seidel alone out of budget (the test's cases came from such draws)::

    python benchmarks/solver_study/pressed_level.py [--draws 20000] [--seed 7]

On the reference engine (the kernels as Python): about a minute for 20,000.
"""
import argparse
import sys
from pathlib import Path

import numpy as np

from abound.physics import clusters
from abound.physics.contact_solver import solve_impulses, solver_scratch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "physics"))
from test_contact_solver import _pressed_level  # noqa: E402  (the test's case, one source)


def draw(rng):
    """(angle deg, width px/s, held impulse, floor bound px/s, inverse mass), 4 digits."""
    case = (10 ** rng.uniform(-3, 1.5), 10 ** rng.uniform(-12, 0), 10 ** rng.uniform(0, 4) * rng.integers(0, 2),
            0.4 * rng.uniform(-1, 1), 10 ** rng.uniform(-3, 0))
    return tuple(float("%.4g" % x) for x in case)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=20000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    alone, tick, found = 0, 0, []
    for _ in range(args.draws):
        case = draw(rng)
        vel, inv_mass, C, tol, slack = _pressed_level(*case)
        if solve_impulses(vel.copy(), inv_mass, tuple(a.copy() for a in C), 3, tol, solver_scratch(1, 3)) < 0:
            alone += 1
            found.append(case)
        Q = [None, np.zeros(1, dtype=np.int64), None, C, None, np.array([3, 1, 0, 0, 0, 0]),
             np.zeros(1, dtype=np.int64)] + [None] * 6 + [solver_scratch(1, 3)]
        tick += clusters.solve_tick(vel, inv_mass, Q, 3, tol, slack) < 0
    print(f"{args.draws} balls pressed level: Gauss-Seidel alone ran out of budget on {alone}, "
          f"the tick's solve on {tick}")
    print("first cases Gauss-Seidel alone does not finish:", found[:6])


if __name__ == "__main__":
    main()
