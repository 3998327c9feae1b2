"""Backend ``pymunk``: the same Simulation stepped by pymunk, to see the difference on screen.

Skipped only when pymunk is not installed (CI installs it: the ``compare`` extra).
"""
import json

import numpy as np
import pytest

from abound import Simulation
from abound.scene import build_simulation
from abound.cli import main
from abound.control import Controller

DT = 1.0 / 60.0
G = -980.0


@pytest.fixture(autouse=True)
def pymunk():
    return pytest.importorskip("pymunk")


def test_a_falling_ball_follows_pymunks_integrator_not_the_parabola():
    # Chipmunk moves each body with its old velocity, then adds gravity:
    # after n steps v = g n dt and y = y0 + g dt^2 n (n - 1) / 2, which lags
    # the exact parabola y0 + g (n dt)^2 / 2 by g dt^2 n / 2
    sim = Simulation(640, 2000, gravity=(0.0, G), backend="pymunk")
    sim.add_ball(320.0, 1900.0, radius=10.0)
    for n in range(1, 31):
        sim.step(DT)
        x, y = sim.positions[0]
        assert x == 320.0
        assert y == pytest.approx(1900.0 + G * DT * DT * n * (n - 1) / 2, rel=0, abs=1e-9)
        assert sim.velocities[0, 1] == pytest.approx(G * n * DT, rel=1e-12)
    exact = 1900.0 + G * (30 * DT) ** 2 / 2
    assert y - exact == pytest.approx(-G * DT * DT * 30 / 2, rel=1e-9)  # half a pixel's lag, visible


def test_balls_added_moved_or_removed_between_steps_are_taken_up():
    sim = Simulation(640, 2000, gravity=(0.0, G), backend="pymunk")
    sim.add_ball(100.0, 1900.0, radius=10.0)
    sim.step(DT)
    sim.add_ball(500.0, 1500.0, radius=10.0)  # a new ball: the space is built again
    for _ in range(10):
        sim.step(DT)
    assert len(sim) == 2
    # the new ball started from rest 10 steps ago: 45 steps' worth of g dt^2
    assert sim.positions[1, 1] == pytest.approx(1500.0 + G * DT * DT * 45, abs=1e-9)
    pos = sim.positions
    pos[0] = (300.0, 1000.0)  # moved by the user, at rest
    sim.positions = pos
    sim.velocities = np.zeros((2, 2))
    sim.step(DT)
    assert tuple(sim.positions[0]) == (300.0, 1000.0)  # a step moves with the old (zero) velocity
    assert sim.velocities[0, 1] == pytest.approx(G * DT)
    sim.remove_ball(0)
    sim.step(DT)
    assert len(sim) == 1 and np.all(np.isfinite(sim.positions))


def test_switching_a_running_gas_to_pymunk_and_back():
    sim = build_simulation("hot_gas", balls=300, size=(640, 480), backend="fast")
    for _ in range(5):
        sim.step()
    sim.backend = "pymunk"
    for _ in range(20):
        sim.step()
    assert sim.backend == "pymunk" and len(sim) == 300
    assert np.all(np.isfinite(sim.positions)) and np.all(np.isfinite(sim.velocities))
    assert sim.last_stats.ball_ball > 0  # the pairs pymunk solved
    sim.backend = "fast"
    for _ in range(5):
        sim.step()
    assert sim.backend == "fast" and len(sim) == 300 and sim.max_overlap() < 1e-6


def test_back_on_the_exact_engine_overlaps_pymunk_left_are_pushed_apart_first():
    # a dead ball (restitution 0) resting on a pinned one: pymunk lets it
    # sink about 0.3 px (its collision slop is 0.1 px); the exact engine
    # expects no overlap and would hold the ball where it found it, so the
    # switch separates the two first
    sim = Simulation(640, 480, gravity=(0.0, G), backend="pymunk")
    sim.add_ball(320.0, 100.0, radius=10.0, pinned=True)
    sim.add_ball(320.0, 121.0, radius=10.0, restitution=0.0)
    for _ in range(60):
        sim.step(DT)
    assert sim.max_overlap() > 0.01  # (x radius)
    sim.backend = "fast"
    sim.step(DT)
    assert sim.max_overlap() < 1e-9


def test_a_smaller_box_brings_the_balls_back_in_as_on_the_exact_engine():
    sim = build_simulation("galton", balls=100, backend="pymunk")
    sim.step()
    sim.resize(640, 480)  # what the demo does to fit its window
    sim.step()
    # every centre in the box (pymunk lets a ball a little into its thick
    # walls, but without the exact engine's settling most of them stayed out)
    x, y = sim.positions[~sim.pinned].T
    assert np.all((x > 0) & (x < 640) & (y > 0) & (y < 480))


def test_the_backend_key_cycles_through_pymunk():
    control = Controller(Simulation(200, 200, backend="fast"))
    seen = []
    for _ in range(3):
        control.cycle_backend()
        seen.append(control.sim.backend)
    assert seen == ["reference", "pymunk", "fast"]


def test_the_backend_key_passes_over_the_fast_engine_while_it_compiles():
    # what the demo asks while its warm-up runs: choosing fast then would compile it on the
    # window's thread (a frozen window); from fast itself the cycle still leaves it
    control = Controller(Simulation(200, 200, backend="reference"))
    seen = []
    for _ in range(3):
        control.cycle_backend(skip=("fast",))
        seen.append(control.sim.backend)
    assert seen == ["pymunk", "reference", "pymunk"]
    control.sim.backend = "fast"
    control.cycle_backend(skip=("fast",))
    assert control.sim.backend == "reference"


def test_scene_file_and_cli_pick_pymunk_by_name(tmp_path, capsys):
    path = tmp_path / "one.toml"
    path.write_text("[world]\nwidth = 400\nheight = 300\n[physics]\nbackend = \"pymunk\"\n"
                    "[[balls]]\nx = 200.0\ny = 150.0\nvx = 100.0\nradius = 10.0\n")
    assert build_simulation(path).backend == "pymunk"
    assert main(["bench", str(path), "--frames", "30", "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["backend"] == "pymunk" and r["balls"] == 1
    assert main(["bench", str(path), "--frames", "1", "--backend", "chipmunk"]) == 2


def test_a_ball_that_leaves_the_box_on_pymunk_is_said_once_and_never_on_abounds_engines():
    # 60,000 px/s crosses 1,000 px a step, more than pymunk's box walls are thick (segments
    # of radius 100 px): the ball passes through the one on its right, lost (a flung ball
    # vanished from the demo unsaid)
    import warnings
    from abound import EscapeWarning
    for backend in ("pymunk", "fast"):
        sim = Simulation(640, 480, gravity=(0.0, 0.0), backend=backend)
        sim.add_ball(320.0, 240.0, 60000.0, 0.0, radius=5.0)
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("default")  # (once a place and text)
            for _ in range(10):
                sim.step(DT)
        x, y = sim.positions[0]
        inside = 5.0 <= x <= 635.0 and 5.0 <= y <= 475.0
        escapes = [w for w in said if issubclass(w.category, EscapeWarning)]
        if backend == "pymunk":
            assert not inside and len(escapes) == 1
            assert "pymunk backend" in str(escapes[0].message)
        else:
            assert inside and escapes == []


def test_the_command_line_says_a_ball_left_the_box_in_one_line(tmp_path):
    scene = tmp_path / "fast.toml"
    scene.write_text('[physics]\nbackend = "pymunk"\n[world]\ngravity = [0.0, 0.0]\n'
                     '[[balls]]\nx = 320.0\ny = 240.0\nvx = 60000.0\nvy = 0.0\nradius = 5.0\n')
    import os
    import subprocess
    import sys
    from pathlib import Path
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))  # (this checkout's abound)
    proc = subprocess.run([sys.executable, "-m", "abound", "bench", str(scene), "--frames", "10"],
                          capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    line, = proc.stderr.splitlines()
    assert line.startswith("abound: warning: balls left the box through its walls on the pymunk backend: "), line
    assert "escaped balls:      1" in proc.stdout
