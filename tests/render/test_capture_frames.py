"""Frame-capture tests: balls appear where the physics says, with the state's colours and sizes.

Expected pixels are derived independently of OpenGL, from the state and the
pure functions of abound.render.style: a ball centred at image point (u, v)
has its coverage-weighted centroid at pixel indices (v - 0.5, u - 0.5), and
its coverage sums to pi r^2.
"""
import math

import numpy as np
import pytest

from abound import Simulation
from abound.capture import capture_frame, render_frames
from abound.render.measure import centroid_and_radius
from abound.render.style import RenderStyle, fit_transform, speed_colors, world_to_image

BG = (0.0, 0.0, 0.0, 1.0)
FLAT = RenderStyle(background=BG, color_mode="ball", shading=False, trails=0.0)
G = 980.0
DT = 1.0 / 60.0


def _check_balls(frame, sim, style, transform, tol=0.5):
    h = frame.shape[0]
    uv = world_to_image(sim.positions, transform, h)
    for i in range(len(sim)):
        color = sim.colors[i] if style.color_mode != "speed" else speed_colors(sim.velocities[i:i + 1])[0]
        r_px = sim.radii[i] * transform[0]
        u, v = uv[i]
        m = int(r_px) + 3
        box = (int(v) - m, int(v) + m + 1, int(u) - m, int(u) + m + 1)
        (row, col), radius = centroid_and_radius(frame, style.background, color, box)
        assert abs(row - (v - 0.5)) < tol and abs(col - (u - 0.5)) < tol, (i, (row, col), (v - 0.5, u - 0.5))
        assert abs(radius - r_px) < tol, (i, radius, r_px)
        # the centre pixel is the ball's own colour
        centre = frame[int(v), int(u), :3].astype(int)
        expected = np.round(np.asarray(color[:3]) * 255).astype(int)
        assert np.all(np.abs(centre - expected) <= 1), (i, centre, expected)
        assert frame[int(v), int(u), 3] == 255


def _placement_sim(w=320, h=240):
    sim = Simulation(w, h, gravity=(0.0, 0.0))
    sim.add_ball(60.3, 70.6, radius=5.3, color="#ff4040")
    sim.add_ball(150.75, 180.2, vx=300.0, radius=12.7, color="#40ff80")
    sim.add_ball(250.1, 90.45, vy=-900.0, radius=31.2, color="#5080ff")
    sim.add_ball(40.5, 200.5, radius=2.4, color="#ffffff")
    return sim


def test_placement_radius_and_colour():
    sim = _placement_sim()
    frame = capture_frame(sim, (320, 240), FLAT)
    assert frame.shape == (240, 320, 4) and frame.dtype == np.uint8
    _check_balls(frame, sim, FLAT, (1.0, 0.0, 0.0))


def test_placement_scaled_into_a_smaller_frame():
    sim = _placement_sim(640, 480)
    for i in range(len(sim)):
        sim.positions[i] *= 2.0
    frame = capture_frame(sim, (400, 300), FLAT)  # scale 0.625
    _check_balls(frame, sim, FLAT, fit_transform(640, 480, 400, 300))


def test_colour_by_speed():
    sim = _placement_sim()
    style = RenderStyle(background=BG, color_mode="speed", shading=False)
    frame = capture_frame(sim, (320, 240), style)
    _check_balls(frame, sim, style, (1.0, 0.0, 0.0))


def test_big_ball_radius_200():
    sim = Simulation(500, 500, gravity=(0.0, 0.0))
    sim.add_ball(250.25, 240.5, radius=200.0, color="#e0c020")
    frame = capture_frame(sim, (500, 500), FLAT)
    _check_balls(frame, sim, FLAT, (1.0, 0.0, 0.0))


def test_dropped_ball_follows_the_closed_form_and_bounces_on_time():
    y0, r, h = 330.0, 10.0, 360
    sim = Simulation(120, h, gravity=(0.0, -G), dt=DT)
    sim.add_ball(60.0, y0, radius=r, color="#ffffff")
    t_hit = math.sqrt(2.0 * (y0 - r) / G)   # 0.808 s: between frames 48 and 49
    v_hit = G * t_hit

    def y_exact(t):
        if t <= t_hit:
            return y0 - 0.5 * G * t * t
        s = t - t_hit  # elastic bounce off the floor
        return r + v_hit * s - 0.5 * G * s * s

    every = 4
    frames = list(render_frames(sim, frames=16, size=(120, h), every=every, style=FLAT))
    heights = []
    for k, frame in enumerate(frames):
        t = k * every * DT
        (row, col), radius = centroid_and_radius(frame, BG, (1, 1, 1))
        y_seen = h - (row + 0.5)  # pixel row back to world y (scale 1)
        heights.append(y_seen)
        assert abs(y_seen - y_exact(t)) < 0.5, (k, y_seen, y_exact(t))
        assert abs(col + 0.5 - 60.0) < 0.5 and abs(radius - r) < 0.5
    # the lowest frame is the one closest to the bounce, after it the ball rises
    k_low = int(np.argmin(heights))
    assert k_low == round(t_hit / (every * DT))
    assert heights[k_low + 1] > heights[k_low]


SCENE = {
    "world": {"width": 320, "height": 240, "gravity": [0.0, -980.0]},
    "physics": {"seed": 5, "dt": DT},
    "spawn": [{"count": 25, "radius": [4.0, 9.0], "speed": [100.0, 400.0]}],
    "walls": [{"x0": 40.0, "y0": 60.0, "x1": 200.0, "y1": 30.0}],
    "render": {"trails": 0.3, "shading": True},
}


def test_same_scene_and_seed_give_bit_identical_frames():
    a = list(render_frames(SCENE, frames=8, size=(160, 120), every=2))
    b = list(render_frames(SCENE, frames=8, size=(160, 120), every=2))
    assert len(a) == 8
    for fa, fb in zip(a, b):
        assert np.array_equal(fa, fb)
    assert not np.array_equal(a[0], a[-1])  # and the picture moves


def test_frames_match_stepping_the_scene_by_its_dt():
    """Frame k of a scene is the state after k * every steps of dt (what the demo steps too)."""
    frames = list(render_frames(SCENE, frames=3, size=(320, 240), every=3,
                                style=RenderStyle(background=BG, shading=False)))
    sim = Simulation.from_config(SCENE)
    for _ in range(6):
        sim.step()
    expected = capture_frame(sim, (320, 240), RenderStyle(background=BG, shading=False))
    assert np.array_equal(frames[2], expected)


def test_pinned_and_walls_are_drawn():
    sim = Simulation(200, 100, gravity=(0.0, 0.0))
    sim.add_wall(20.0, 20.0, 180.0, 20.0)
    sim.add_ball(100.0, 60.0, radius=15.0, color="#ffffff", pinned=True)
    frame = capture_frame(sim, (200, 100), FLAT)
    # the wall: a light line along row 100 - 20 = 80
    assert frame[79:81, 100, :3].min() > 100
    # the pinned ball: its own colour inside, a darker ring just inside its edge
    centre_row, centre_col = 100 - 60, 100
    assert frame[centre_row, centre_col, :3].min() == 255
    ring = frame[centre_row, centre_col + 14, :3]
    assert 100 < ring.max() < 200


def test_trails_between_frames_are_those_the_demo_would_show():
    """With --every K and trails, a frame shows the trail of the steps just before
    it (each faded once per step, as the demo draws every step), and no ghost of
    the frame K steps before. Pixels from the ball's closed-form positions."""
    trails, every, vx = 0.5, 10, 900.0
    white = np.array([255, 255, 255])
    bg = np.array([20, 30, 60])
    style = RenderStyle(background=tuple(bg / 255.0) + (1.0,), color_mode="ball",
                        shading=False, trails=trails)
    sim = Simulation(320, 240, gravity=(0.0, 0.0))
    sim.add_ball(40.0, 120.0, vx=vx, radius=6.0, color="#ffffff")
    frames = list(render_frames(sim, frames=2, size=(320, 240), every=every, style=style))
    xform = fit_transform(320, 240, 320, 240)

    def pixel(frame, steps_done):  # the centre pixel of where the ball was after that many steps
        u, v = world_to_image([40.0 + vx * DT * steps_done, 120.0], xform, 240)
        return frame[int(v), int(u), :3].astype(int)

    assert np.all(np.abs(pixel(frames[1], every) - white) <= 1)  # the ball itself
    for back in (1, 2, 3):  # the trail: faded once for each step since
        expected = bg + trails ** back * (white - bg)
        assert np.all(np.abs(pixel(frames[1], every - back) - expected) <= 2), back
    assert np.all(np.abs(pixel(frames[1], 0) - bg) <= 1)  # where frame 0 drew it: gone


def test_frames_stepped_beside_the_drawing_are_the_frames_of_each_state():
    """Without trails, the next frame's steps run on a worker thread while a frame is drawn
    (issue 27): the pictures must be those of the states, drawn one at a time after
    stepping a copy of the scene by hand."""
    scene = dict(SCENE, render={"trails": 0.0, "shading": True})
    frames = list(render_frames(scene, frames=5, size=(160, 120), every=4))
    sim = Simulation.from_config(scene)
    style = RenderStyle.from_scene(sim.scene)
    for k, got in enumerate(frames):
        if k:
            for _ in range(4):
                sim.step()
        assert np.array_equal(got, capture_frame(sim, (160, 120), style)), k
    assert not np.array_equal(frames[0], frames[-1])


@pytest.mark.parametrize("size", [(32.5, 32), (0, 32), (32, -1), (True, 32), ("wide", 32), (math.inf, 32), 32])
def test_a_frame_size_that_is_no_whole_number_of_pixels_is_refused(size):
    # (32.5, 32) was cut to 32 x 32 without a word; a size of 0 failed inside OpenGL
    with pytest.raises(ValueError, match="size must be two whole numbers of pixels"):
        next(render_frames("galton", frames=1, size=size))


def test_a_simulation_given_is_at_the_frames_state_while_its_frame_is_held():
    # (a new user compared each frame with sim.positions, as the docs suggest for tests of
    # one's own scenes: without trails, sim was already a frame ahead, its next steps run
    # beside the drawing). At each frame held: sim.time is k * every * dt and the ball is
    # drawn where sim.positions says; the pictures are those of a scene stepped apart.
    y0, r, h, every = 330.0, 10.0, 360, 3
    sim = Simulation(120, h, gravity=(0.0, -G), dt=DT)
    sim.add_ball(60.0, y0, radius=r, color="#ffffff")
    for k, frame in enumerate(render_frames(sim, frames=8, size=(120, h), every=every, style=FLAT)):
        assert sim.time == pytest.approx(k * every * DT, abs=1e-12), k
        (row, col), _ = centroid_and_radius(frame, BG, (1, 1, 1))
        assert abs(h - (row + 0.5) - sim.positions[0, 1]) < 0.5, (k, h - (row + 0.5), sim.positions[0, 1])
    assert sim.time == pytest.approx(7 * every * DT, abs=1e-12)  # (nothing stepped after the last frame)


@pytest.mark.parametrize("frames, every", [(2.7, 1), ("3", 1), (True, 1), (-1, 1), (2, 1.9), (2, 0)])
def test_frames_and_every_that_are_no_whole_numbers_are_refused(frames, every):
    # (2.7 frames gave 2, "3" gave 3, True gave 1, every 1.9 meant 1, without a word)
    with pytest.raises(ValueError, match="must be a whole number"):
        next(render_frames("drop", frames=frames, every=every, size=(32, 24)))
