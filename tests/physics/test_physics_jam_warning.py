"""Balls the rest model stops where they cannot rest are said (abound.JamWarning).

Without contact_clusters a ball caught in a heap's rattle (an inelastic
collapse) sleeps where it touches anything fixed (rest.collapse), on a slope
too: funnels, ramps and peg boards jam, and a new user saw no reason why.

The checks come from geometry, not from the counts the engine prints. A
frictionless ball on a slope cannot rest there alone: gravity has a part
along the slope that only something fixed below it along the slope can
oppose. So a sleeper that touches the slope and no fixed ball on its
downhill side is one the rest model stopped where it cannot rest (the
ordinary way to sleep, rest.try_sleep, refuses a ball its contacts do not
hold). Where no segment or peg is touched (a heap on a box's floor) the rule
stops balls too, but the scene does not jam, and nothing is said.
"""
import math
import warnings

import numpy as np
import pytest

import abound
from abound.physics.world import MODE_NAMES
from placing import scattered
from test_physics_dense_flow import DROP_SLOPE as SLOPE, clump_over_the_slope

G = 980.0
ASLEEP = MODE_NAMES.index("asleep")


def _clump_on_the_slope(clusters):
    """40 balls of radius 5 dropped in a clump onto a frictionless slope (seed 5)."""
    return clump_over_the_slope(5, clusters)


def _run(sim, seconds):
    """Step 1/60 s at a time; returns (the JamWarnings said, the sum of StepStats.stuck)."""
    stuck = 0
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always", abound.JamWarning)
        for _ in range(int(round(seconds * 60))):
            stuck += sim.step(1 / 60).stuck
    return [w for w in said if issubclass(w.category, abound.JamWarning)], stuck


def _collapses_and_nothing_said(sim, steps):
    """Step 1/60 s at a time: the rest model's collapses stop balls (the test
    reaches the rule), and no step counts one stuck nor says a JamWarning."""
    collapsed = 0
    with warnings.catch_warnings():
        warnings.simplefilter("error", abound.JamWarning)
        for _ in range(steps):
            stats = sim.step(1 / 60)
            collapsed += stats.collapsed
            assert stats.stuck == 0
    assert collapsed > 0, "no ball was caught in a collapse: the test no longer reaches the rule"


def _stuck_on_the_slope(sim):
    """The sleepers that touch the slope (within 1e-6 r) and no fixed ball on
    their downhill side: balls that cannot rest where they lie."""
    x0, y0, x1, y1 = SLOPE
    p0, p1 = np.array([x0, y0]), np.array([x1, y1])
    length = float(np.linalg.norm(p1 - p0))
    t = (p1 - p0) / length  # down the slope
    p, r = sim.positions, sim.radii
    u = np.clip((p - p0) @ t, 0.0, length)
    gap = np.linalg.norm(p - (p0 + u[:, None] * t), axis=1) - r
    asleep = sim.modes == ASLEEP
    fixed = asleep | sim.pinned
    out = []
    for i in np.flatnonzero(asleep & (gap <= 1e-6 * r) & (u > 0.0) & (u < length)):
        d = p - p[i]
        touching = fixed & (np.hypot(d[:, 0], d[:, 1]) <= (r + r[i]) * (1.0 + 1e-6))
        touching[i] = False
        if not np.any(touching & (d @ t > 0.0)):
            out.append(int(i))
    return out


def test_a_clump_that_jams_on_a_slope_is_said_once():
    # clusters off: the clump's rattles stop balls on the slope. The lowest of
    # them has only the slope under it and nothing fixed below it along the
    # slope: the scene jams there, and that is said, once, however long it runs
    sim = _clump_on_the_slope(False)
    said, stuck = _run(sim, 6.0)
    lying = _stuck_on_the_slope(sim)
    assert lying, "no ball jammed on the slope: nothing to say (the rest model let the clump slide)"
    assert stuck >= 1
    assert len(said) == 1, [str(w.message) for w in said]
    assert "contact_clusters = true" in str(said[0].message)


def test_a_clump_that_slides_off_with_contact_clusters_hears_nothing():
    # clusters on: the clump slides off the slope as a group; no ball sleeps
    # on the slope, and the warning stays unsaid
    sim = _clump_on_the_slope(True)
    said, stuck = _run(sim, 6.0)
    assert _stuck_on_the_slope(sim) == []
    assert stuck == 0
    assert said == []


def test_a_heap_on_the_box_floor_is_stopped_by_the_same_rule_and_not_said():
    # 200 balls dropped into a box with no segment or peg: the rest model's
    # collapses stop balls on one another as the heap forms (StepStats.collapsed),
    # and the heap lies on the floor, where it may: no warning
    sim = abound.Simulation(300, 400, gravity=(0.0, -G), backend="fast")
    sim.add_balls(scattered(200, [10.0, 10.0], [290.0, 390.0], 15.0, seed=2), radius=6.0, restitution=0.3)
    _collapses_and_nothing_said(sim, 180)
    assert math.isfinite(sim.energy())


@pytest.mark.parametrize("clusters", [False, True])
def test_balls_stopped_against_pegs_where_nothing_pulls_are_not_said(clusters):
    # gravity (0, 0): a ball needs nothing to hold it, so a rattle's ball stopped
    # against a peg or a segment lies where it may; the advice to turn on contact
    # clusters (which never run without gravity) would be wrong either way
    rng = np.random.default_rng(1)
    sim = abound.Simulation(300, 300, gravity=(0.0, 0.0), backend="fast", contact_clusters=clusters)
    sim.add_wall(20, 150, 280, 150, restitution=0.2)
    pegs = [(x, y) for x in range(40, 280, 40) for y in (60, 240)]
    for x, y in pegs:
        sim.add_ball(x, y, radius=6.0, pinned=True)
    placed = []
    while len(placed) < 250:
        p = rng.uniform(10, 290, 2)
        if abs(p[1] - 150) < 8 or any(np.hypot(*(p - q)) < 11 for q in placed + [np.array(g) for g in pegs]):
            continue
        placed.append(p)
    sim.add_balls(placed, radius=5.0, restitution=0.2)
    sim.velocities = rng.normal(0, 150, sim.velocities.shape) * (~sim.pinned)[:, None]
    _collapses_and_nothing_said(sim, 600)
