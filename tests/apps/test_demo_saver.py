"""The screensaver, headless: opens, draws, quits on key / click / large motion, livens a still pile."""
import math
import time

import numpy as np

import pytest

from abound import Simulation

pyglet = pytest.importorskip("pyglet")
from abound.cli import saver  # noqa: E402
from abound.cli.saver import Liveliness, SaverApp  # noqa: E402


def make_sim():
    sim = Simulation(200, 150, gravity=(0.0, -980.0))
    sim.scene = {"render": {"shading": False}, "saver": {"stillness_energy": 0.02, "stillness_seconds": 0.5,
                                                         "liven": "kick"}}
    sim.add_ball(100.0, 100.0, vx=50.0, radius=10.0)
    return sim


@pytest.fixture
def app(monkeypatch):
    monkeypatch.setattr(saver, "SETTLE_SECONDS", 0.0)
    a = SaverApp(make_sim(), headless=True, size=(200, 150))
    yield a
    a.close()


def test_draws_and_quits_on_a_key(app, monkeypatch):
    exits = []
    monkeypatch.setattr(pyglet.app, "exit", lambda: exits.append(1))
    app.tick(1 / 60)
    app.drawers[0]()
    assert app.frames == 1 and app.sim.time > 0
    app.on_key_press(pyglet.window.key.A, 0)
    assert app.quitting and exits


def test_quits_on_click(app, monkeypatch):
    monkeypatch.setattr(pyglet.app, "exit", lambda: None)
    app.on_mouse_press(10, 10, pyglet.window.mouse.LEFT, 0)
    assert app.quitting


def test_small_motion_is_ignored_large_motion_quits(app, monkeypatch):
    monkeypatch.setattr(pyglet.app, "exit", lambda: None)
    app.on_mouse_motion(51, 50, 1, 0)
    app.on_mouse_motion(55, 52, 4, 2)
    assert not app.quitting
    app.on_mouse_motion(90, 50, 35, -2)
    assert app.quitting


def test_motion_right_after_opening_is_ignored(monkeypatch):
    monkeypatch.setattr(pyglet.app, "exit", lambda: None)
    a = SaverApp(make_sim(), headless=True, size=(200, 150))
    try:
        a.opened = time.perf_counter()
        a.on_mouse_motion(150, 100, 100, 50)
        assert not a.quitting
    finally:
        a.close()


def test_a_settled_pile_is_livened_up():
    sim = Simulation(200, 150, gravity=(0.0, -980.0))
    sim.add_ball(100.0, 10.0, radius=10.0)  # at rest on the floor
    live = Liveliness({"stillness_energy": 0.02, "stillness_seconds": 1.0, "liven": "kick"})
    live.peak = 1e6  # it was moving before
    for _ in range(59):
        assert live.update(sim, 1 / 60) is sim and live.count == 0
    live.update(sim, 1 / 60)
    live.update(sim, 1 / 60)
    assert live.count == 1 and sim.velocities[0, 1] > 0  # kicked upwards


def test_a_wave_fills_the_box_the_window_made_or_is_a_kick_where_it_cannot():
    scene = {"world": {"width": 200.0, "height": 150.0, "gravity": [0.0, -980.0]},
             "physics": {"backend": "reference", "seed": 4},
             "spawn": [{"count": 30, "radius": 6.0}]}
    sim = Simulation.from_config(scene)
    sim.resize(600.0, 400.0)  # the saver's window made the box larger
    live = Liveliness({"liven": "wave"})
    new = live.liven(sim)
    # as many balls as keep the scene's density (docs/screensaver.md)
    assert new is not sim and (new.width, new.height) == (600.0, 400.0) and len(new) == 30 * 8
    # the new wave is spread over the whole new box, not the scene's 200x150 corner
    assert new.positions[:, 0].max() > 200.0 + 6.0 and new.positions[:, 1].max() > 150.0 + 6.0
    crowded = Simulation.from_config(dict(scene, spawn=[{"count": 2, "radius": 30.0}]))
    crowded.resize(70.0, 50.0)  # a preview window lower than one ball (of the one left at its density)
    assert live.liven(crowded) is crowded and (crowded.velocities[:, 1] > 0).all()  # a kick, no error


def test_the_preview_places_the_balls_afresh_before_it_says_the_box_is_crowded(capsys):
    # pile's 10,000 balls in its 1920x1080 box would cover 97% of the 960x540 preview: the
    # saver places them afresh at the scene's density (2,500), which fits, and had said
    # all the same that they could not fit. A box too small even so is still said, once
    density = 10_000 / (1920 * 1080)
    a = SaverApp(saver.build_simulation("pile"), headless=True, size=(960, 540))
    try:
        assert len(a.sim) == round(density * 960 * 540) and (a.sim.width, a.sim.height) == (960, 540)
        assert "cannot hold its balls" not in capsys.readouterr().err
        a.apps[0].on_resize(200, 120)  # (the preview shrunk: 2,500 balls of radius 4 px do not fit)
        err = capsys.readouterr().err
        assert err.count("the 200x120 box cannot hold its balls") == 1, err
    finally:
        a.close()


def test_saver_command_runs_frames_and_windows_conventions(capsys, monkeypatch):
    from abound.cli import main
    assert main(["saver", "/p", "1234"]) == 0
    assert main(["saver", "/c"]) == 0
    assert "scene" in capsys.readouterr().out
    # xscreensaver's window where no GL context can be made on it (no X display here):
    # one line says so, and the saver runs as the other options say (offscreen)
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("XSCREENSAVER_WINDOW", raising=False)
    for root in ("-root", "--root"):
        assert main(["saver", "drop", "--headless", "--frames", "3", root]) == 0
        err = capsys.readouterr().err
        assert len(err.splitlines()) == 1 and "root window" in err, err


def test_a_still_scene_gets_a_black_hole_for_a_while():
    sim = Simulation(400, 300, gravity=(0.0, 0.0))
    sim.add_ball(100.0, 100.0, radius=10.0)  # still, in a weightless box
    live = Liveliness({"stillness_energy": 0.02, "stillness_seconds": 1.0, "liven": "black_hole"})
    live.peak = 1e6
    for _ in range(61):
        live.update(sim, 1 / 60)
    assert live.count == 1 and len(sim.black_holes) == 1
    hole = sim.black_holes[0]
    assert 100.0 <= hole.x <= 300.0 and 75.0 <= hole.y <= 225.0  # in the middle half of the box
    for _ in range(60):
        sim.step()
        live.update(sim, sim.dt)
    assert math.hypot(*sim.velocities[0]) > 10.0  # it pulls
    for _ in range(int(saver.LIVEN_HOLE_SECONDS * 60)):
        live.update(sim, 1 / 60)
    assert sim.black_holes == []  # and goes


def test_a_scene_at_the_most_black_holes_is_livened_with_a_kick_instead():
    # a 65th hole is refused (abound.defaults.MAX_BLACK_HOLES): the livening had ended the saver
    from abound.defaults import MAX_BLACK_HOLES
    sim = Simulation(400, 300, gravity=(0.0, 0.0))
    sim.add_ball(100.0, 100.0, radius=10.0)
    for k in range(MAX_BLACK_HOLES):
        sim.add_black_hole(20.0 + 5.0 * k, 280.0, 1.0)
    live = Liveliness({"stillness_energy": 0.02, "stillness_seconds": 1.0, "liven": "black_hole"})
    live.peak = 1e6
    for _ in range(61):
        live.update(sim, 1 / 60)
    assert live.count == 1 and len(sim.black_holes) == MAX_BLACK_HOLES
    assert math.hypot(*sim.velocities[0]) > 0.0  # kicked


def test_turning_gravity_in_a_weightless_scene_kicks_and_livens_again_when_still():
    # pool_break has gravity (0, 0): a turn leaves it (0, 0). The saver stood still
    # for good: nothing moved, and with the peak energy reset to 0 nothing was "still"
    from abound.scene import build_simulation
    sim = build_simulation("pool_break", backend="reference")
    sim.velocities = np.zeros_like(sim.velocities)  # the table at rest
    live = Liveliness({"stillness_energy": 0.02, "stillness_seconds": 1.0, "liven": "gravity"})
    for _ in range(61):
        live.update(sim, 1 / 60)
    assert live.count == 1 and tuple(sim.gravity) == (0.0, 0.0)
    assert sim.kinetic_energy() > 0.0  # kicked instead
    sim.velocities = np.zeros_like(sim.velocities)  # (as if the table's friction stopped them)
    for _ in range(61):
        live.update(sim, 1 / 60)
    assert live.count == 2  # still again: livened again


def test_turned_gravity_turns_counter_clockwise_and_quarter_turns_are_exact():
    # the rotation of a vector, checked against where a quarter, a half and an
    # eighth turn must take (0, -980) (gravity pointing down); quarter turns
    # exactly, so a scene turned over twice has the gravity it started with
    g = (0.0, -980.0)
    assert saver.turned(g, 90.0) == (980.0, 0.0)     # down turned a quarter anticlockwise: right
    assert saver.turned(g, 180.0) == (0.0, 980.0)    # up
    assert saver.turned(g, -90.0) == (-980.0, 0.0)   # left
    assert saver.turned(saver.turned((3.0, -7.0), 180.0), 180.0) == (3.0, -7.0)
    x, y = saver.turned(g, 45.0)
    assert math.isclose(x, 980.0 / math.sqrt(2.0)) and math.isclose(y, -980.0 / math.sqrt(2.0))
