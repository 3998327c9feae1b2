"""Physics beside drawing (issue 27, item 2): the steps run on a worker thread while the
frame before them is drawn from a snapshot; the order of steps and inputs is a serial loop's.

Each test runs the pipelined DemoApp beside a serial one (steps, then drawing) fed
the same clock and the same inputs, headless, and compares what they must share:
the states, bit for bit (abound.control.state_digest), and the frames: the pipelined
frame k shows the state after k - 1 batches of steps, which the serial loop showed
in its frame k - 1.
"""
import sys

import numpy as np
import pytest

from abound import Simulation
from abound.control import state_digest
from abound.snapshot import Snapshot

pyglet = pytest.importorskip("pyglet")
from abound.cli.demo import DemoApp  # noqa: E402

DT = 1.0 / 60.0


def make_sim():
    sim = Simulation(240, 180, gravity=(0.0, -980.0), dt=DT, backend="reference")
    sim.scene = {"render": {"background": "#000000", "shading": False, "color_mode": "ball", "hud": False}}
    rng = np.random.default_rng(4)
    for k in range(12):
        sim.add_ball(20.0 + 18.0 * k, 90.0 + 40.0 * rng.random(), vx=rng.uniform(-150, 150),
                     vy=rng.uniform(-100, 100), radius=7.0, color="#ff8000" if k % 2 else "#00c0ff")
    return sim


@pytest.fixture
def apps():
    pipelined = DemoApp(make_sim(), headless=True, visible=False, vsync=False, pipelined=True, exact=True)
    serial = DemoApp(make_sim(), headless=True, visible=False, vsync=False, pipelined=False, exact=True)
    yield pipelined, serial
    pipelined.close()
    serial.close()


def frame(app):
    app.window.switch_to()
    app.draw()
    return app.read_frame()


def test_the_pipelined_frame_shows_the_state_before_the_steps_it_ran_beside(apps):
    pipelined, serial = apps
    assert pipelined.pipelined and not serial.pipelined
    shown = []
    for k in range(8):
        assert pipelined.tick(DT) == serial.tick(DT) == 1
        shown.append((frame(pipelined), frame(serial)))
        assert state_digest(pipelined.sim) == state_digest(serial.sim)  # (reading sim waits for the steps)
    for k in range(1, 8):
        assert np.array_equal(shown[k][0], shown[k - 1][1]), k
    assert not np.array_equal(shown[7][1], shown[6][1])  # (the balls moved: the comparison can fail)


def test_inputs_land_between_steps_in_the_serial_order(apps):
    """A key pressed while the worker steps waits for the step, as it would have in a
    serial loop, then applies: the two runs stay identical, bit for bit."""
    k = pyglet.window.key
    presses = {2: k.G, 3: "+", 5: k.LEFT, 6: "-", 9: k.UP}  # (+ and - come as text)
    for app in apps:
        for f in range(12):
            app.tick(DT)
            app.draw()  # (the pipelined app draws while its step runs)
            if f in presses:
                if isinstance(presses[f], str):
                    app.on_text(presses[f])
                else:
                    app.on_key_press(presses[f], 0)
    pipelined, serial = apps
    assert pipelined.control.steps == serial.control.steps == 12
    assert state_digest(pipelined.sim) == state_digest(serial.sim)
    assert len(pipelined.sim) == len(make_sim())  # one added, one removed


def test_a_snapshot_keeps_its_state_while_the_simulation_steps():
    sim = make_sim()
    snap = Snapshot(sim)
    before = sim.positions.copy(), sim.velocities.copy()
    for _ in range(10):
        sim.step()
    assert not np.array_equal(sim.positions, before[0])
    assert np.array_equal(snap.positions, before[0]) and np.array_equal(snap.velocities, before[1])
    assert snap.time == 0.0 and len(snap) == len(sim)


def test_an_error_in_the_worker_surfaces_at_the_next_read(apps):
    pipelined, _ = apps

    def broken(dt=None, contacts=False):
        raise RuntimeError("a step failed on the worker")
    pipelined.sim.step = broken
    pipelined.tick(DT)  # returns at once: the step runs, and fails, on the worker
    with pytest.raises(RuntimeError, match="failed on the worker"):
        pipelined.sim


def test_the_worker_shortens_the_switch_interval_while_it_lives(apps):
    """(abound/worker.py: at 5 ms a step waits up to 5 ms for the GIL at each hand-over)"""
    from abound import worker
    before = sys.getswitchinterval()
    pipelined, _ = apps
    pipelined.tick(DT)
    assert sys.getswitchinterval() == min(before, worker.SWITCH_INTERVAL)
    pipelined.close()
    assert sys.getswitchinterval() == before


def test_the_hud_says_when_the_machine_cannot_keep_up(apps):
    """A step of 40 ms beside 10 ms of drawing: one step a frame of 40 ms, 0.42 x real time."""
    pipelined, _ = apps
    pacer = pipelined.pacer
    elapsed = DT
    for _ in range(60):
        steps = pacer.steps(elapsed)
        pacer.took_steps(steps, 0.040 * steps)
        pacer.took_draw(0.010)
        elapsed = max(0.040 * steps, 0.010, DT)
    text = pipelined.hud_text(pipelined.sim)
    assert f"slow motion: {DT / 0.040:.2f}x real time" in text
