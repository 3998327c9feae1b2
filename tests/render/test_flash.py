"""``[render] flash`` (issue 26, item 4): a ball flashes white when hit, by the velocity
change the hit gave it, fading over FLASH_SECONDS.

The expected colours come from closed form: a ball dropped from rest from a
height h above its touching point hits the floor after sqrt(2 h / g) at the
speed sqrt(2 g h) and leaves it at e times that, so the hit changed its
velocity by (1 + e) sqrt(2 g h); its flash at time t is that over FULL_DV
times 1 - (t - t_hit) / FLASH_SECONDS, and its centre pixel is its colour
taken that far to white (flat shading, so the centre is the colour itself).
The frames stop before the rebound lands.
"""
import math

import numpy as np
import pytest

from abound import Simulation
from abound.capture import render_frames
from abound.hits import FLASH_SECONDS, FULL_DV, Hits
from abound.render.style import RenderStyle, fit_transform, world_to_image

G, H, R, E, DT = 980.0, 20.0, 10.0, 0.5, 1.0 / 60.0
COLOR = (0.2, 0.4, 0.8)
FLAT_FLASH = RenderStyle(background=(0.0, 0.0, 0.0, 1.0), color_mode="ball", shading=False, flash=True)


def dropped():
    sim = Simulation(120, 90, gravity=(0.0, -G), dt=DT)
    sim.add_ball(60.0, R + H, radius=R, restitution=E, color=COLOR)
    return sim


def test_a_dropped_ball_flashes_by_its_velocity_change_and_fades():
    t_hit = math.sqrt(2 * H / G)
    strength = (1 + E) * math.sqrt(2 * G * H) / FULL_DV
    assert strength < 1.0  # (below the cap: the test can see the proportion)
    second_hit = t_hit + 2 * E * math.sqrt(2 * G * H) / G  # (the rebound's flight)
    frames = list(render_frames(dropped(), frames=int(second_hit / DT), size=(120, 90), every=1,
                                style=FLAT_FLASH))
    twin = dropped()  # stepped by hand, for where the ball is in frame k
    xform = fit_transform(120, 90, 120, 90)
    seen = []
    for k, frame in enumerate(frames):
        if k:
            twin.step()
        t = k * DT
        u, v = world_to_image(twin.positions, xform, 90)[0]
        age = t - t_hit
        f = strength * max(0.0, 1.0 - age / FLASH_SECONDS) if age >= 0 else 0.0
        expected = np.array([c + (1 - c) * f for c in COLOR]) * 255
        got = frame[int(v), int(u), :3].astype(float)
        assert np.all(np.abs(got - expected) <= 1.5), (k, got, expected)
        seen.append(f)
    assert max(seen) > 0.4 and seen[-1] == 0.0  # it flashed, then faded out


def test_the_last_hit_of_a_step_wins_whichever_side_the_ball_was_on():
    """Two contacts of ball 1 in one step, as b then as a: the later one is kept."""
    from abound.simulation import CONTACT_DTYPE
    sim = Simulation(100, 100, gravity=(0.0, 0.0))
    for x in (20.0, 50.0, 80.0):
        sim.add_ball(x, 50.0, radius=5.0, mass=2.0)
    log = np.zeros(2, dtype=CONTACT_DTYPE)
    log[0] = (0.001, 0, 1, -1, 0, 0, 1, 0, 2.0 * 100.0)  # ball 1 as b: dv 100 px/s
    log[1] = (0.004, 1, 2, -1, 0, 0, 1, 0, 2.0 * 300.0)  # ball 1 as a: dv 300 px/s
    hits = Hits()
    hits.record(sim, log, 10.0)
    assert hits.time[1] == pytest.approx(10.004) and hits.strength[1] == pytest.approx(300.0 / FULL_DV)
    assert hits.strength[0] == pytest.approx(100.0 / FULL_DV) and hits.strength[2] == pytest.approx(300.0 / FULL_DV)
    assert np.all(hits.flash(10.004, 3) == pytest.approx([100.0 / FULL_DV * (1 - 0.003 / FLASH_SECONDS),
                                                          300.0 / FULL_DV, 300.0 / FULL_DV]))
    hits.record(sim, log[:0], 0.0)  # time went back (a reset): the hits are forgotten
    assert not hits.flash(0.0, 3).any()


def test_a_pinned_ball_does_not_flash_and_a_touch_does_not_dim_a_knock():
    from abound.simulation import CONTACT_DTYPE
    sim = Simulation(100, 100, gravity=(0.0, 0.0))
    sim.add_ball(20.0, 50.0, radius=5.0, mass=1.0)
    sim.add_ball(50.0, 50.0, radius=5.0, mass=1.0, pinned=True)
    hits = Hits()
    knock = np.zeros(1, dtype=CONTACT_DTYPE)
    knock[0] = (0.0, 0, 1, -1, 0, 0, 1, 0, 2.0 * FULL_DV)  # ball 0 off the pinned ball: dv 2 x FULL_DV
    hits.record(sim, knock, 1.0)
    assert hits.flash(1.0, 2).tolist() == [1.0, 0.0]
    touch = np.zeros(1, dtype=CONTACT_DTYPE)
    touch[0] = (0.0, 0, -1, 0, 0, 0, -1, 0, 0.1 * FULL_DV)  # a touch on a wall a moment later: dv 0.1 FULL_DV
    hits.record(sim, touch, 1.0 + 0.25 * FLASH_SECONDS)
    assert hits.flash(1.0 + 0.25 * FLASH_SECONDS, 2)[0] == pytest.approx(0.75)  # still the knock's light
