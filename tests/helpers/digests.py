"""Digests of what every shipped scene does: a guard for changes that must not change behaviour.

A digest is the SHA-256 of each step's counts (every field of its
StepStats: contacts, events, frozen, stopped) and of the final state (positions, velocities, modes:
their float64 / int8 bytes). It changes if a single event is resolved
differently or a single bit of the state differs. ``tests/helpers/digests.json``
holds the digests recorded before a refactor (issue 25: the physics core
split into modules); ``tests/physics/test_digests.py`` recomputes them.

They are of float bits, so of the machine too: the same commit gave other
digests for `default` and `galton` on another machine of this kind (a
transcendental function rounded differently somewhere, or its library); a
machine whose HEAD does not match records its own, and says so.

Record them again only for a change that is meant to change behaviour,
and say so in its commit::

    python tests/helpers/digests.py --write
"""
import dataclasses
import hashlib
import json
import sys
from pathlib import Path

import numpy as np

from abound.resources import config_names
from abound.errors import SceneError
from abound.simulation import Simulation

FILE = Path(__file__).with_name("digests.json")

# (backend, threads, balls (None: the scene's own), steps). The reference
# backend is pure Python: a few balls; the fast one on one thread and on two
# (a crowded scene then steps as strips, split.py), with the scene's own
# balls, and the 10,000-ball gas for fewer steps
RUNS = {
    "reference": ("reference", 1, 40, 40),
    "fast-as-reference": ("fast", 1, 40, 40),
    "fast": ("fast", 1, None, 240),
    "fast-2-threads": ("fast", 2, None, 240),
}
STEPS_AT_MOST_BALLS = 100_000  # balls x steps: the 10,000-ball scene gets 10 steps, the 2,000-grain hourglass 50 (its pour with contact clusters costs seconds a step)


def digest(scene, backend, threads, balls, steps):
    """The digest of ``steps`` steps of 1/60 s of shipped ``scene``."""
    try:
        sim = Simulation.from_config(scene, backend=backend, balls=balls, seed=7)
    except SceneError:  # a scene of explicit balls only: its own
        sim = Simulation.from_config(scene, backend=backend, seed=7)
    sim.threads = threads
    steps = min(steps, max(1, STEPS_AT_MOST_BALLS // max(len(sim), 1)))
    h = hashlib.sha256()
    for _ in range(steps):
        s = sim.step(1.0 / 60.0)
        h.update(np.array([int(getattr(s, f.name)) for f in dataclasses.fields(s) if f.name != "contact_log"],
                          dtype=np.int64).tobytes())
    for arr in (sim.positions, sim.velocities, sim.modes):
        h.update(np.ascontiguousarray(arr).tobytes())
    return f"{steps} steps: {h.hexdigest()}"


def all_digests():
    return {run: {scene: digest(scene, *RUNS[run]) for scene in config_names()} for run in RUNS}


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python tests/helpers/digests.py --write   (records tests/helpers/digests.json anew)")
    FILE.write_text(json.dumps(all_digests(), indent=1, sort_keys=True) + "\n")
    print(f"wrote {FILE}")
