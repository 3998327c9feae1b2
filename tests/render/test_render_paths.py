"""The renderer's two ball paths: point sprites for most balls, instanced triangles for the rest.

A point sprite is limited in size (255 px on llvmpipe) and GL drops a whole
point whose centre is off the frame, so balls bigger than the limit or centred
off the frame are drawn as triangles. Whichever path draws a ball, it must
appear where the state says: expected pixels come from the state through
abound.render.style, as in test_capture_frames.
"""
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from abound import Simulation
from abound.capture import FrameCapture, capture_frame
from abound.render.measure import centroid_and_radius, coverage
from abound.render.style import RenderStyle, world_to_image

BG = (0.0, 0.0, 0.0, 1.0)
FLAT = RenderStyle(background=BG, color_mode="ball", shading=False, trails=0.0)
SHADED = RenderStyle(background=(0.06, 0.06, 0.09, 1.0), color_mode="ball", shading=True, trails=0.0)


def mixed_sim():
    """A 200 px ball, two balls either side of a 255 px sprite, and small ones, at sub-pixel centres."""
    sim = Simulation(900, 600, gravity=(0.0, 0.0))
    sim.add_ball(210.4, 300.7, radius=200.0, color="#e0c020")
    sim.add_ball(560.2, 430.3, radius=126.7, color="#ff4040")   # sprite 254.4 px
    sim.add_ball(560.6, 150.1, radius=127.6, color="#40ff80")   # sprite 256.2 px
    for k, r in enumerate((0.9, 1.6, 2.5, 4.3, 7.7, 15.2, 30.1)):
        sim.add_ball(790.3 + 37.1 * (k % 2), 40.2 + 78.6 * k, radius=r, color="#5080ff", pinned=(k == 4))
    return sim


def test_small_and_big_balls_are_where_the_state_says():
    sim = mixed_sim()
    frame = capture_frame(sim, (900, 600), FLAT)
    uv = world_to_image(sim.positions, (1.0, 0.0, 0.0), 600)
    for i in range(len(sim)):
        r = sim.radii[i]
        u, v = uv[i]
        m = int(r) + 3
        box = (int(v) - m, int(v) + m + 1, int(u) - m, int(u) + m + 1)
        if sim.pinned[i]:
            continue  # its darker ring is not the flat colour the measure needs (drawn: see the next test)
        color = sim.colors[i]
        (row, col), radius = centroid_and_radius(frame, BG, color, box)
        assert abs(row - (v - 0.5)) < 0.5 and abs(col - (u - 0.5)) < 0.5, (i, (row, col), (v - 0.5, u - 0.5))
        assert abs(radius - r) < 0.5, (i, radius, r)
        centre = frame[int(v), int(u), :3].astype(int)
        assert np.all(np.abs(centre - np.round(color[:3] * 255)) <= 1), (i, centre)


def test_point_and_triangle_paths_draw_the_same_pixels():
    """The same balls forced through the triangle path give the same picture (shaded, pinned, tiny to big)."""
    sim = mixed_sim()
    with FrameCapture((900, 600), SHADED) as cap:
        usual = cap.frame(sim)
        cap.renderer.max_point_size = 0.0  # no ball fits a sprite: all drawn as triangles
        triangles = cap.frame(sim)
    diff = np.abs(usual.astype(int) - triangles.astype(int)).max(axis=2)
    assert diff.max() <= 2, (int(diff.max()), int((diff > 2).sum()))
    assert usual[600 - 300, 210, :3].max() > 100  # and something was drawn


def test_a_ball_centred_off_the_frame_shows_its_visible_part():
    """GL drops a point centred off the frame; the triangle path draws the part that is inside."""
    sim = Simulation(320, 240, gravity=(0.0, 0.0))
    sim.add_ball(100.0, 120.0, radius=20.0, color="#ffffff")
    d, r = 6.0, 20.0
    sim.positions[0] = (-d, 120.0)   # 6 px left of the frame: a segment of depth 14 px shows
    frame = capture_frame(sim, (320, 240), FLAT)
    seen = coverage(frame, BG, (1.0, 1.0, 1.0)).sum()
    segment = r * r * math.acos(d / r) - d * math.sqrt(r * r - d * d)  # area of the disc at x >= 0
    assert abs(seen - segment) < 0.02 * segment, (seen, segment)


def test_debug_gl_is_off_where_abound_makes_the_context():
    """pyglet's glGetError after every call is for debugging: abound turns it off (PYGLET_DEBUG_GL=1 keeps it)."""
    code = ("from abound import Simulation; from abound.capture import capture_frame; import pyglet; "
            "capture_frame(Simulation(16, 16)); print(pyglet.options['debug_gl'])")
    env = {k: v for k, v in os.environ.items() if k != "PYGLET_DEBUG_GL"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True,
                         cwd=Path(__file__).resolve().parents[2])
    assert out.stdout.strip() == "False"


def test_render_bench_takes_turns_and_runs():
    """bench --render: the renderers alternate in ROUNDS rounds, each timing its own number of frames."""
    from abound.render import bench
    calls = []

    def timer(name):
        return lambda: calls.append(name) or 1.0

    times = bench.time_side_by_side([timer("abound"), timer("shapes")], [12, 3])
    timed = calls[2 * bench.WARMUP:]
    assert [len(t) for t in times] == [12, 3]
    assert timed.count("abound") == 12 and timed.count("shapes") == 3
    switches = sum(a != b for a, b in zip(timed, timed[1:]))
    assert switches >= 3  # interleaved: one block after the other would switch once
    # and the real thing, tiny: both renderers draw, every median a positive time
    r = bench.measure(50, frames=2, compare=True, size=(160, 120), shapes_frames=2)
    assert r["renderer_ms"] > 0 and r["shapes_ms"] > 0 and r["capture_ms"] > 0


def test_the_render_bench_times_pyglet_shapes_no_more_frames_than_asked(monkeypatch, capsys):
    # `abound bench --render --compare shapes --frames 3` said "median of 10" for pyglet.shapes
    import argparse
    from abound.render import bench
    asked = {}

    def measure(n, frames, compare, size, shapes_frames):
        asked.update(frames=frames, shapes_frames=shapes_frames)
        return {"balls": n}
    monkeypatch.setattr(bench, "measure", measure)
    args = argparse.Namespace(compare="shapes", balls=50, size=None, frames=3, json=True)
    assert bench.run(args) == 0
    assert asked == {"frames": 3, "shapes_frames": 3}
    args.frames = 40  # (shapes is slow: at most MAX_SHAPES_FRAMES of them)
    assert bench.run(args) == 0
    assert asked == {"frames": 40, "shapes_frames": bench.MAX_SHAPES_FRAMES}
