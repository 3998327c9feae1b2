"""The GL-free parts of the renderer, and that the physics never imports pyglet."""
import subprocess
import sys

import numpy as np
import pytest

from abound.render.style import (RenderStyle, SPEED_COLORS, ball_colors, fit_transform, hex_rgba,
                                 image_to_world, parse_size, speed_colors, world_to_image)


def test_import_abound_does_not_import_pyglet():
    code = ("import sys, abound, abound.capture, abound.render, abound.render.style, abound.render.measure; "
            "import abound.cli.capture, abound.cli.demo; "
            "print('pyglet' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_fit_transform_identity_and_letterbox():
    assert fit_transform(640, 480, 640, 480) == (1.0, 0.0, 0.0)
    s, ox, oy = fit_transform(1280, 720, 640, 480)
    assert s == 0.5 and ox == 0.0 and oy == pytest.approx((480 - 360) / 2)


def test_world_to_image_flips_y_and_round_trips():
    xf = fit_transform(200, 100, 400, 300)  # scale 2, centred vertically
    uv = world_to_image([[0.0, 0.0], [200.0, 100.0]], xf, 300)
    np.testing.assert_allclose(uv, [[0.0, 250.0], [400.0, 50.0]])
    np.testing.assert_allclose(image_to_world(uv, xf, 300), [[0.0, 0.0], [200.0, 100.0]])


def test_speed_colors_ends_and_clipping():
    c = speed_colors([[0.0, 0.0], [600.0, 800.0], [5000.0, 0.0]], vmax=1000.0)
    np.testing.assert_allclose(c[0, :3], SPEED_COLORS[0], atol=1e-6)
    np.testing.assert_allclose(c[1, :3], SPEED_COLORS[-1], atol=1e-6)  # |v| = 1000
    np.testing.assert_allclose(c[2, :3], SPEED_COLORS[-1], atol=1e-6)
    assert np.all(c[:, 3] == 1.0)


def test_ball_colors_modes():
    cols = np.array([[0.1, 0.2, 0.3, 1.0]])
    vel = np.array([[0.0, 0.0]])
    np.testing.assert_allclose(ball_colors(cols, vel, "ball"), cols)
    np.testing.assert_allclose(ball_colors(cols, vel, "palette"), cols)
    np.testing.assert_allclose(ball_colors(cols, vel, "speed")[0, :3], SPEED_COLORS[0], atol=1e-6)
    with pytest.raises(ValueError):
        ball_colors(cols, vel, "rainbow")


def test_style_from_scene():
    st = RenderStyle.from_scene({"render": {"background": "#ff0000", "trails": 0.5, "shading": False}})
    assert st.background == (1.0, 0.0, 0.0, 1.0) and st.trails == 0.5 and not st.shading
    assert RenderStyle.from_scene(None) == RenderStyle()
    assert hex_rgba("#00000080")[3] == pytest.approx(128 / 255)


def test_parse_size():
    assert parse_size("640x480") == (640, 480)
    for bad in ("640", "0x10", "axb"):
        with pytest.raises(ValueError):
            parse_size(bad)


@pytest.mark.parametrize("width, height", [(16661, 600), (20000, 720), (600, 16661), (40000, 600), (16385, 16385)])
def test_a_frame_too_large_is_fitted_with_its_long_side_at_the_limit(width, height):
    # the demo's window for a box larger than OpenGL draws: the long side exactly the
    # limit (width * (side / width) rounded one short for about one width in seven),
    # the other scaled by the same factor and rounded down, so it never exceeds it
    from abound.render.style import fit_within
    side = 16384
    w, h = fit_within(width, height, side)
    long_side, short = (w, h) if width >= height else (h, w)
    assert long_side == side
    assert short == (min(width, height) * side) // max(width, height)
    assert fit_within(800, 600, side) == (800, 600)
