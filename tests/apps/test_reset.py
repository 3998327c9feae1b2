"""Reset (the R key, a replay's "reset") goes back to the scene as it started,
every setting included.

Found by reading control.clone: it rebuilt the Simulation without the scene's
contact clusters and rolling friction, so the Galton board jammed on its
funnel again after R (its balls frictionless, one impulse at a time) and the
pool table's balls rolled for ever. The settings are read here from the
shipped TOML files themselves, not from the code under test.
"""
import tomllib

import numpy as np
import pytest

import abound
from abound.control import Controller, clone
from abound.physics import split
from abound.resources import config_path

pytestmark = pytest.mark.filterwarnings("ignore")


def _scene_file(name):
    with open(config_path(name), "rb") as f:
        return tomllib.load(f)


@pytest.mark.parametrize("name", ["galton", "pool_break", "hot_gas"])
def test_reset_keeps_the_scene_settings(name, monkeypatch):
    monkeypatch.setattr(split, "cores", lambda: 2)  # (the default would be 2 threads)
    scene = _scene_file(name)
    sim = abound.Simulation.from_config(name, backend="reference")
    sim.threads = 1  # (set before the controller takes its template: reset keeps it)
    ctl = Controller(sim)
    ctl.sim.threads = 2  # (changed after: reset goes back to the template's)
    ctl.apply({"do": "reset"})
    after = ctl.sim
    assert after.contact_clusters == scene.get("physics", {}).get("contact_clusters", True)
    assert after.rolling_friction == scene["world"].get("rolling_friction", 0.0)
    assert after.threads == 1
    assert len(after) == len(sim)
    np.testing.assert_array_equal(after.positions, sim.positions)


def test_the_pool_table_still_stops_its_balls_after_a_reset():
    # rolling friction 0.1 x 980 px/s^2: a ball at v stops within v / 98 s. After
    # 20 s every ball of the break is still (the cue ball starts at about 1,500
    # px/s), as it is without the reset; without friction they bounce for ever
    sim = abound.Simulation.from_config("pool_break", backend="reference")
    ctl = Controller(sim)
    ctl.advance(30)
    ctl.apply({"do": "reset"})
    v0 = float(np.max(np.linalg.norm(ctl.sim.velocities, axis=1)))
    for _ in range(int(20 * 60)):
        ctl.sim.step(1 / 60)
    assert v0 > 500.0
    assert float(np.max(np.linalg.norm(ctl.sim.velocities, axis=1))) == 0.0


def test_a_table_tilted_at_run_time_can_still_be_reset():
    # rolling friction waits while gravity lies in the plane (it acts only on a
    # level table); the constructor refuses the two together, so clone must not
    # pass them to it at once
    sim = abound.Simulation.from_config("pool_break", backend="reference")
    sim.gravity = (0.0, -98.0)
    copy = clone(sim)
    assert copy.rolling_friction == sim.rolling_friction == 0.1
    assert tuple(copy.gravity) == (0.0, -98.0)
