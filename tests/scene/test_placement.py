"""Random placement against walls: a candidate is free exactly when no wall comes within its radius.

Checked against the distance from the point to each segment computed here
by brute force, for short walls (filed in the placement grid's cells) and
for walls too long to file (checked against every ball): a long wall
across a large box with small balls had been filed under every cell of its
bounding box (a 10,000 px diagonal: 6 GB to check the scene).
"""
import math

import numpy as np
from hypothesis import assume, given, settings, strategies as st

from abound import Simulation
from abound.scene.placement import MAX_SEGMENT_CELLS, Placer


def _distance(px, py, x0, y0, x1, y1):
    ex, ey = x1 - x0, y1 - y0
    L2 = ex * ex + ey * ey
    u = 0.0 if L2 == 0 else min(1.0, max(0.0, ((px - x0) * ex + (py - y0) * ey) / L2))
    return math.hypot(px - (x0 + u * ex), py - (y0 + u * ey))


coord = st.floats(-50.0, 250.0)


@settings(max_examples=60, deadline=None)
@given(seg=st.tuples(coord, coord, coord, coord), cell=st.sampled_from([0.05, 1.0, 7.0]), seed=st.integers(0, 2**31))
def test_a_point_is_free_exactly_when_no_wall_is_within_its_radius(seg, cell, seed):
    assume(math.hypot(seg[2] - seg[0], seg[3] - seg[1]) > 1e-3)  # (a scene refuses a wall of length 0)
    placer = Placer(cell)
    placer.add_segment(*seg)
    rng = np.random.default_rng(seed)
    r = cell / 2
    # points near the wall (where the answer changes) and anywhere
    t = rng.random(300)
    near = np.stack([seg[0] + t * (seg[2] - seg[0]), seg[1] + t * (seg[3] - seg[1])], 1)
    near += rng.normal(0.0, r, near.shape)
    anywhere = rng.uniform(-60.0, 260.0, (300, 2))
    for x, y in np.concatenate([near, anywhere]).tolist():
        d = _distance(x, y, *seg)
        if abs(d - r) < 1e-9 * max(1.0, r):
            continue  # (on the edge: either answer is a rounding)
        assert placer.free(x, y, r) == (d >= r), (x, y, d, r)


def test_a_long_wall_is_filed_in_bounded_memory_and_still_keeps_balls_off():
    placer = Placer(0.5)
    placer.add_segment(0.0, 0.0, 1e9, 1e9)  # (its bounding box: 4e18 cells of 0.5 px)
    placer.add_segment(0.0, 100.0, 3000.0, 100.0)  # 12,000 half cells: not filed either
    placer.add_segment(0.0, 200.0, 100.0, 200.0)  # filed
    assert sum(len(v) for v in placer.seg_cells.values()) <= 9 * (MAX_SEGMENT_CELLS + 1)
    assert not placer.free(50.0, 50.2, 0.25) and placer.free(50.0, 50.5, 0.25)
    assert not placer.free(1234.0, 100.1, 0.25) and placer.free(1234.0, 100.3, 0.25)
    assert not placer.free(50.0, 199.8, 0.25) and placer.free(50.0, 199.7, 0.25)


def test_small_balls_spawned_beside_a_wall_across_the_box_do_not_touch_it():
    scene = {"world": {"width": 1280, "height": 720},
             "walls": [{"x0": 0, "y0": 0, "x1": 1280, "y1": 720}],
             "spawn": [{"count": 2000, "radius": 0.25}]}
    sim = Simulation.from_config(scene)
    assert len(sim) == 2000
    d = np.array([_distance(x, y, 0.0, 0.0, 1280.0, 720.0) for x, y in sim.positions])
    assert d.min() >= 0.25
