"""The pymunk side of ``abound bench --compare pymunk`` (abound.compare): the same scene, built faithfully.

Skipped only when pymunk is not installed (CI installs it: the ``compare`` extra).
"""
import json
import math
import sys

import numpy as np
import pytest

from abound import Simulation
from abound.cli import main

DT = 1.0 / 60.0


def scene():
    sim = Simulation(640, 480, gravity=(0.0, -980.0), wall_restitution=0.9, backend="reference")
    sim.add_ball(100.0, 300.0, vx=120.0, vy=-40.0, radius=8.0, restitution=0.7)
    sim.add_ball(300.0, 200.0, vx=-50.0, radius=12.0, mass=5.0, restitution=1.0)
    sim.add_ball(500.0, 400.0, radius=4.0, restitution=0.5)
    sim.add_ball(320.0, 100.0, radius=6.0, pinned=True, restitution=0.6)
    sim.add_wall(50.0, 50.0, 250.0, 80.0, restitution=0.4)
    return sim


@pytest.fixture
def pymunk():
    return pytest.importorskip("pymunk")


def test_same_bodies_masses_radii_positions_and_settings(pymunk):
    from abound.compare.pymunk_world import PymunkWorld, ITERATIONS
    sim = scene()
    world = PymunkWorld(sim)
    space = world.space
    assert tuple(space.gravity) == (0.0, -980.0)
    assert space.iterations == ITERATIONS == 10
    dynamic = [b for b in space.bodies if b.body_type == pymunk.Body.DYNAMIC]
    assert len(dynamic) == 3                                     # the pinned ball is static
    circles = [s for s in space.shapes if isinstance(s, pymunk.Circle)]
    assert len(circles) == len(sim) == 4
    by_body = {s.body: s for s in circles if s.body.body_type == pymunk.Body.DYNAMIC}
    for i in range(3):
        body = dynamic[i]
        assert body.mass == pytest.approx(sim.masses[i])
        assert tuple(body.position) == tuple(sim.positions[i])
        assert tuple(body.velocity) == tuple(sim.velocities[i])
        assert by_body[body].radius == sim.radii[i]
        assert by_body[body].elasticity == sim.restitutions[i]
        assert by_body[body].friction == 0.0
    assert sim.masses[0] == pytest.approx(math.pi * 64.0) and dynamic[1].mass == 5.0
    peg = next(s for s in circles if s.body is space.static_body)
    assert tuple(peg.offset) == (320.0, 100.0) and peg.radius == 6.0 and peg.elasticity == 0.6
    # the read-back arrays are in abound's ball order
    assert np.array_equal(world.positions, sim.positions)
    assert np.array_equal(world.velocities, sim.velocities)
    assert world.energy() == pytest.approx(sim.energy(), rel=1e-12)
    segments = [s for s in space.shapes if isinstance(s, pymunk.Segment)]
    assert len(segments) == 1 + 4
    inner = next(s for s in segments if s.radius == 0.0)
    assert (tuple(inner.a), tuple(inner.b), inner.elasticity) == ((50.0, 50.0), (250.0, 80.0), 0.4)
    settings = world.settings()
    assert "spatial hash" in settings and "10 iterations" in settings and "thick" in settings


@pytest.mark.parametrize("walls", ["thick", "thin"])
def test_box_walls_surface_lies_on_the_box_sides(pymunk, walls):
    from abound.compare.pymunk_world import PymunkWorld, THICKNESS
    world = PymunkWorld(scene(), walls=walls)
    box = [s for s in world.space.shapes if isinstance(s, pymunk.Segment) and s.elasticity == 0.9]
    assert len(box) == 4 and all(s.radius == (THICKNESS if walls == "thick" else 0.0) for s in box)
    for x, y in [(0.0, 240.0), (640.0, 240.0), (320.0, 0.0), (320.0, 480.0)]:
        # the nearest wall surface to each side's midpoint is at distance 0
        assert min(abs(s.point_query((x, y)).distance) for s in box) == pytest.approx(0.0, abs=1e-9)
    inside = min(s.point_query((320.0, 240.0)).distance for s in box)
    assert inside == pytest.approx(240.0)


def test_free_flight_follows_pymunks_integrator(pymunk):
    # one ball, no contacts: Chipmunk moves a body with the velocity of the previous step, then adds
    # g dt to the velocity: x_k = x_0 + k v_0 dt + g dt^2 k (k - 1) / 2, v_k = v_0 + k g dt
    from abound.compare.pymunk_world import PymunkWorld
    sim = Simulation(1000, 1000, backend="reference")
    sim.add_ball(200.0, 800.0, vx=30.0, vy=50.0, radius=5.0)
    world = PymunkWorld(sim)
    k = 20
    for _ in range(k):
        world.step(DT)
    x = 200.0 + 30.0 * k * DT
    y = 800.0 + 50.0 * k * DT - 980.0 * DT * DT * k * (k - 1) / 2
    assert world.positions[0] == pytest.approx((x, y), abs=1e-9)
    assert world.velocities[0] == pytest.approx((30.0, 50.0 - 980.0 * k * DT), abs=1e-9)
    assert world.time == pytest.approx(k * DT)


@pytest.mark.parametrize("walls, leaks", [("thin", 1), ("thick", 0)])
def test_thin_walls_let_a_fast_ball_through(pymunk, walls, leaks):
    # 3,000 px/s is 50 px per step: past a thin floor in one step, not through 100 px of wall
    from abound.compare.pymunk_world import PymunkWorld
    sim = Simulation(400, 400, gravity=(0.0, 0.0), backend="reference")
    sim.add_ball(200.0, 30.0, vy=-3000.0, radius=3.0)
    world = PymunkWorld(sim, walls=walls)
    for _ in range(5):
        world.step(DT)
    assert world.escaped() == leaks


def test_cli_compare_json(pymunk, tmp_path, capsys):
    path = tmp_path / "one.toml"
    path.write_text("[world]\nwidth = 400\nheight = 300\n[physics]\nbackend = \"reference\"\ndt = 0.02\n"
                    "[[balls]]\nx = 200.0\ny = 150.0\nvx = 100.0\nradius = 10.0\n")
    assert main(["bench", str(path), "--compare", "pymunk", "--frames", "50", "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    a, p = r["abound"], r["pymunk"]
    assert r["balls"] == 1 and "pymunk" in r["pymunk_settings"]
    assert a["sim_time"] == pytest.approx(1.0) and p["sim_time"] == pytest.approx(1.0)
    assert a["energy_first"] == pytest.approx(p["energy_first"])   # the same start
    assert a["escaped"] == 0 and p["escaped"] == 0
    assert r["ratio"] == pytest.approx(p["ms_per_frame_median"] / a["ms_per_frame_median"])


def test_cli_compare_text(pymunk, capsys):
    assert main(["bench", "--balls", "20", "--frames", "3", "--backend", "reference",
                 "--compare", "pymunk", "--pymunk-walls", "thin"]) == 0
    out = capsys.readouterr().out
    for label in ("abound (reference)", "pymunk", "thin box walls", "ms per frame, median",
                  "energy drift", "largest overlap", "escaped balls", "ratio: pymunk ms / abound ms"):
        assert label in out


def test_cli_compare_without_pymunk_is_one_line(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "pymunk", None)  # as if it were not installed
    assert main(["bench", "--compare", "pymunk", "--frames", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("abound: error:") and 'pip install "abound[compare]"' in err[0]
