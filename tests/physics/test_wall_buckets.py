"""The coarse grid of walls a cluster ball's wall loops read (clusters.wall_buckets):
every wall that rest.far_from_wall keeps for a ball is in the ball's cell, in index
order, so the loops list the same contacts in the same order as a loop over all
walls; and the cells leave out the walls far away (else they would gain nothing)."""
import numpy as np

from abound.physics.clusters import _walls_near, wall_buckets
from abound.physics.constants import CLUSTER_REACH
from abound.physics.rest import far_from_wall
from abound.physics.world import World

# Q[20] is the 21st field of the clusters' scratch; these tests pass a tuple with only it
FIELD = 20


def _walls_of_cell(buckets, x, y):
    Q = (None,) * FIELD + (buckets,)
    first, last = _walls_near(Q, x, y)
    return [int(w) for w in buckets[3][first:last]]


def _world(rng, width, height, segments):
    world = World(width, height)
    for _ in range(segments):
        x0, y0 = rng.uniform(-0.2 * width, 1.2 * width), rng.uniform(-0.2 * height, 1.2 * height)
        length = rng.choice([2.0, 30.0, 600.0])
        a = rng.uniform(0.0, 2.0 * np.pi)
        world.add_segment(x0, y0, x0 + length * np.cos(a), y0 + length * np.sin(a), 1.0)
    return world


def test_every_wall_within_reach_is_in_the_cell_in_index_order():
    rng = np.random.default_rng(7)
    for case in range(20):
        width, height = rng.uniform(100.0, 2000.0), rng.uniform(100.0, 2000.0)
        world = _world(rng, width, height, int(rng.integers(0, 40)))
        W = world.wall_arrays()
        rmax = rng.choice([0.7, 5.0, 40.0])
        buckets = wall_buckets(W, rmax, True)
        for _ in range(300):
            # where balls lie (and a few beyond the box, where round-off may put one)
            x, y = rng.uniform(-0.1 * width, 1.1 * width), rng.uniform(-0.1 * height, 1.1 * height)
            cell = _walls_of_cell(buckets, x, y)
            assert cell == sorted(set(cell))  # index order, each once
            for r in (rmax, 0.3 * rmax):
                near = [w for w in range(len(W[0])) if not far_from_wall(W, w, x, y, r + CLUSTER_REACH * r)]
                assert set(near) <= set(cell), (case, x, y, r)


def test_the_cells_leave_out_walls_far_away():
    # two short segments at opposite corners of a large box: a ball at one has the
    # box's sides and its own segment in its cell, not the other segment
    world = World(1600, 1200)
    world.add_segment(100, 100, 120, 110, 1.0)  # wall 4
    world.add_segment(1500, 1100, 1520, 1110, 1.0)  # wall 5
    buckets = wall_buckets(world.wall_arrays(), 2.0, True)
    assert _walls_of_cell(buckets, 110, 105) == [0, 1, 2, 3, 4]
    assert _walls_of_cell(buckets, 1510, 1105) == [0, 1, 2, 3, 5]
    assert _walls_of_cell(buckets, 800, 600) == [0, 1, 2, 3]


def test_a_box_without_segments_is_one_cell_of_its_sides():
    buckets = wall_buckets(World(300, 200).wall_arrays(), 3.0, True)
    for x, y in ((1.0, 1.0), (150.0, 100.0), (299.0, 199.0), (-5.0, 500.0)):
        assert _walls_of_cell(buckets, x, y) == [0, 1, 2, 3]
