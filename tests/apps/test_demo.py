"""The demo window, headless: its key and mouse handlers driven directly, and its frames."""
import math
import numpy as np
import pytest
from PIL import Image

from abound import Simulation
from abound.capture import capture_frame
from abound.render.measure import centroid_and_radius
from abound.render.style import RenderError, RenderStyle

pyglet = pytest.importorskip("pyglet")
from abound.cli import demo as demo_mod  # noqa: E402
from abound.cli.demo import DemoApp, FLING_GAIN, MAX_STEPS_PER_FRAME  # noqa: E402

DT = 1.0 / 60.0


def make_sim():
    sim = Simulation(240, 180, gravity=(0.0, -980.0), dt=DT)
    sim.scene = {"render": {"background": "#000000", "shading": False, "color_mode": "ball", "hud": False}}
    sim.add_ball(60.0, 120.0, vx=40.0, radius=10.0, color="#ff8000")
    sim.add_ball(170.0, 60.0, radius=14.0, color="#00c0ff")
    return sim


@pytest.fixture
def app(tmp_path):
    a = DemoApp(make_sim(), headless=True, visible=False, vsync=False, screenshot_dir=tmp_path)
    yield a
    a.close()


def keys():
    return pyglet.window.key


def test_pause_stops_time_and_right_steps_once(app):
    app.tick(DT)
    t = app.sim.time
    assert t == pytest.approx(DT)
    app.on_key_press(keys().SPACE, 0)
    assert app.paused
    app.tick(0.5)
    assert app.sim.time == t
    app.on_key_press(keys().RIGHT, 0)  # single step while paused
    assert app.sim.time == pytest.approx(t + DT)
    app.on_key_press(keys().SPACE, 0)
    steps = app.tick(2 * DT)  # (as many as fit the frame: abound/pacing.py, tested there)
    assert 1 <= steps <= 2 and app.sim.time == pytest.approx(t + DT + steps * DT)


def test_steps_per_frame_are_capped(app):
    steps = app.tick(10.0)  # a very slow frame
    assert steps == MAX_STEPS_PER_FRAME
    assert app.sim.time == pytest.approx(MAX_STEPS_PER_FRAME * DT)
    assert app.accumulator == 0.0  # the backlog is dropped, not carried


def test_fling_adds_a_ball_with_the_drag_velocity(app):
    mouse = pyglet.window.mouse
    n = len(app.sim)
    app.on_mouse_press(100, 50, mouse.LEFT, 0)
    app.on_mouse_drag(120, 60, 20, 10, mouse.LEFT, 0)
    app.on_mouse_release(130, 90, mouse.LEFT, 0)
    assert len(app.sim) == n + 1
    np.testing.assert_allclose(app.sim.velocities[-1], FLING_GAIN * np.array([30.0, 40.0]))
    np.testing.assert_allclose(app.sim.positions[-1], [100.0, 50.0])


def test_right_click_pins_and_unpins_the_ball_under_the_cursor(app):
    mouse = pyglet.window.mouse
    app.on_mouse_press(172, 58, mouse.RIGHT, 0)  # inside ball 1
    assert app.sim.pinned[1] and not app.sim.pinned[0]
    app.on_mouse_press(172, 58, mouse.RIGHT, 0)
    assert not app.sim.pinned[1]
    app.on_mouse_press(5, 5, mouse.RIGHT, 0)  # empty space: nothing
    assert not app.sim.pinned.any()


def test_resize_moves_the_walls(app):
    app.on_resize(300, 150)
    assert (app.sim.width, app.sim.height) == (300.0, 150.0)
    assert np.all(app.sim.positions[:, 1] + app.sim.radii <= 150.0 + 1e-9)


def test_balls_added_to_a_window_shrunk_smaller_than_they_are_fit_inside_it(app):
    # add_ball refuses a ball that is not inside the box: the demo's adds must fit a tiny box
    mouse = pyglet.window.mouse
    app.on_resize(12, 9)
    n = len(app.sim)
    app.on_text("+")
    app.on_mouse_press(6, 4, mouse.LEFT, 0)
    app.on_mouse_release(8, 5, mouse.LEFT, 0)
    assert len(app.sim) == n + 2
    p, r = app.sim.positions[n:], app.sim.radii[n:]
    assert np.all(r == 4.5) and np.all(p - r[:, None] >= 0) and np.all(p + r[:, None] <= [12.0, 9.0])


def test_left_and_right_tilt_the_box_as_a_tray_in_the_hands(app):
    # Left lowers the box's left side: gravity, straight down, turns clockwise by 15
    # degrees and gets a leftward part, so balls on the floor slide left (it had turned
    # the other way: a new user's balls ran right on Left); Right undoes it, and again
    k = keys()
    app.sim.gravity = (0.0, -980.0)
    app.on_key_press(k.LEFT, 0)
    a = math.radians(15.0)
    np.testing.assert_allclose(app.sim.gravity, [-980.0 * math.sin(a), -980.0 * math.cos(a)], atol=1e-9)
    app.on_key_press(k.RIGHT, 0)
    app.on_key_press(k.RIGHT, 0)
    np.testing.assert_allclose(app.sim.gravity, [980.0 * math.sin(a), -980.0 * math.cos(a)], atol=1e-9)


def test_keys_change_the_simulation(app):
    k = keys()
    g = app.sim.gravity
    app.on_key_press(k.G, 0)
    np.testing.assert_allclose(app.sim.gravity, -g)
    app.on_key_press(k.LEFT, 0)
    assert np.hypot(*app.sim.gravity) == pytest.approx(980.0) and app.sim.gravity[0] != 0.0
    app.on_key_press(k.UP, 0)
    assert np.hypot(*app.sim.gravity) == pytest.approx(980.0 * 1.25)
    backend = app.sim.backend
    app.on_key_press(k.B, 0)
    assert app.sim.backend != backend
    app.on_key_press(k.T, 0)
    assert app.sim.ball_toi == "bisection"
    n = len(app.sim)
    app.on_text("+")
    app.on_text("=")
    assert len(app.sim) == n + 2
    app.on_text("-")
    assert len(app.sim) == n + 1
    hud = app.show_hud
    app.on_key_press(k.H, 0)
    assert app.show_hud != hud
    app.tick(DT)
    app.on_key_press(k.R, 0)  # reset: the starting balls, time 0
    assert len(app.sim) == n and app.sim.time == 0.0
    np.testing.assert_allclose(app.sim.positions, make_sim().positions)


def test_hud_text_names_what_it_should(app):
    app.show_hud = True
    app.tick(DT)
    app.draw()
    text = app.hud_text()
    for word in ("fps", "physics", "render", "contacts/frame", "balls 2", "energy drift", "backend", "ball TOI"):
        assert word in text
    # the state's gravity, a sign on each part only where it is not 0 (after G, it had read (-0, 980))
    gx, gy = app.sim.gravity
    app.sim.gravity = (-0.0 * gx, -gy)
    try:
        assert f"gravity (0, {round(-gy)})" in app.hud_text(app.sim)
    finally:
        app.sim.gravity = (gx, gy)


def test_screenshots_in_one_second_are_all_kept(app, tmp_path):
    # the S key names a screenshot by the second: four presses in one second
    # (keys queued behind a slow frame come in a burst) left one file, and a
    # file of that name from before was overwritten too
    k = keys()
    first = app.screenshot()  # (its name: the one of this second, or of the next)
    for _ in range(3):
        app.on_key_press(k.S, 0)
    shots = sorted(tmp_path.glob("abound-*.png"))
    assert len(shots) == 4 and first in shots
    assert all(Image.open(p).size == (240, 180) for p in shots)
    first.write_bytes(b"kept")  # a file already there is never written over
    second = app.screenshot()
    assert second != first and first.read_bytes() == b"kept"


def test_a_screenshot_that_cannot_be_saved_is_one_line_and_the_demo_goes_on(app, tmp_path, capsys):
    gone = tmp_path / "gone"  # (a folder that went away; as root a read-only one would still take it)
    app.screenshot_dir = str(gone)
    capsys.readouterr()
    app.on_key_press(keys().S, 0)
    err = capsys.readouterr().err
    assert err.startswith(f"abound: could not save the screenshot {gone}") and err.count("\n") == 1
    assert app.tick(DT) >= 0 and not app.closing


def test_a_screenshot_cut_short_by_a_full_disk_leaves_no_partial_file(app, tmp_path, capsys, monkeypatch):
    def save(self, f, format=None, **kw):  # (half a PNG written, then the disk is full)
        f.write(b"\x89PNG half")
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(Image.Image, "save", save)
    capsys.readouterr()
    app.on_key_press(keys().S, 0)
    err = capsys.readouterr().err
    assert list(tmp_path.glob("abound-*.png")) == []
    assert err.startswith(f"abound: could not save the screenshot {tmp_path}/abound-") and err.count("\n") == 1
    assert err.rstrip().endswith(".png: No space left on device"), err


def test_demo_frame_equals_capture_frame_and_shows_the_physics(app, tmp_path):
    for _ in range(5):
        app.tick(DT)
    path = app.screenshot(tmp_path / "shot.png")  # the S key's action
    shot = np.asarray(Image.open(path))
    expected = capture_frame(app.sim, (240, 180), RenderStyle.from_scene(app.sim.scene))
    d = np.abs(shot.astype(int) - expected.astype(int)).max(axis=2)
    assert d.max() == 0, (d.max(), (d > 0).sum(), np.argwhere(d > 0)[:5], shot[np.nonzero(d)][:3], expected[np.nonzero(d)][:3])
    for i, color in ((0, (1.0, 0.5, 0.0)), (1, (0.0, 0.75, 1.0))):
        x, y = app.sim.positions[i]
        box = (int(180 - y) - 20, int(180 - y) + 20, int(x) - 20, int(x) + 20)
        (row, col), radius = centroid_and_radius(shot, (0, 0, 0), color, box)
        assert abs(row - (180 - y - 0.5)) < 0.5 and abs(col - (x - 0.5)) < 0.5
        assert abs(radius - app.sim.radii[i]) < 0.5


def test_a_screenshot_with_the_hud_is_opaque_and_keeps_the_picture(app, tmp_path):
    # a new-user trial: the HUD's blending left alpha 156-193 under it, so image
    # viewers showed it washed out over a checkerboard; the window shows it opaque
    app.show_hud = True
    try:
        app.tick(DT)
        shot = np.asarray(Image.open(app.screenshot(tmp_path / "hud.png")))
    finally:
        app.show_hud = False
    assert shot.shape[2] == 4 and np.all(shot[..., 3] == 255)
    plain = capture_frame(app.sim, (240, 180), RenderStyle.from_scene(app.sim.scene))
    assert np.any(shot[..., :3] != plain[..., :3])  # the HUD is in it


def test_the_demo_loop_ticks_once_a_drawn_frame(monkeypatch):
    # a new-user trial: the physics tick was scheduled for every pass of pyglet's event
    # loop, which then never slept (a paused demo of two balls kept a core busy), and
    # was called thousands of times a second. Now once a drawn frame, just before it
    from abound.cli import main
    ticks, frames = [], []
    tick, frame = DemoApp.tick, DemoApp._frame
    monkeypatch.setattr(DemoApp, "tick", lambda self, elapsed: ticks.append(elapsed) or tick(self, elapsed))
    monkeypatch.setattr(DemoApp, "_frame", lambda self: frames.append(1) or frame(self))
    assert main(["demo", "drop", "--frames", "30", "--headless"]) == 0
    assert len(frames) >= 30 and len(ticks) == len(frames)
    assert all(elapsed > 0.0 for elapsed in ticks)


def test_demo_command_runs_frames_headless(tmp_path):
    from abound.cli import main
    scene = tmp_path / "one.toml"
    scene.write_text('[world]\nwidth = 200\nheight = 150\n[[balls]]\nx = 100.0\ny = 100.0\nradius = 10.0\n'
                     '[render]\nhud = true\n')
    assert main(["demo", str(scene), "--frames", "3", "--headless", "--video", str(tmp_path / "r.gif")]) == 0
    # 3 drawn frames of 20 ms each, and none drawn after the quit (Pillow merges a frame
    # identical to the one before it, e.g. two drawn with no physics step between them,
    # into one frame of twice the time: count the time, not the frames)
    gif = Image.open(tmp_path / "r.gif")
    durations = []
    for k in range(gif.n_frames):
        gif.seek(k)
        durations.append(gif.info["duration"])
    assert sum(durations) == 3 * 20, durations


def test_no_opengl_33_is_one_line_and_status_2(monkeypatch, capsys, tmp_path):
    from abound.cli import main

    def no_gl(*a, **k):
        raise RenderError("OpenGL 3.3 is needed, this machine offers 2.1 Mesa (softpipe); update the driver")
    monkeypatch.setattr("abound.render.context.make_window", no_gl)
    assert main(["demo", "drop", "--frames", "1", "--headless"]) == 2  # (no display: --headless)
    err = capsys.readouterr().err.strip()
    assert err.startswith("abound: error: OpenGL 3.3 is needed") and "\n" not in err


def test_check_gl_message():
    from abound.render.context import check_gl

    class Info:
        def have_version(self, major, minor=0):
            return False

        def get_version_string(self):
            return "2.1 Mesa 22"

        def get_renderer(self):
            return "softpipe"

    class Ctx:
        def get_info(self):
            return Info()

    with pytest.raises(RenderError, match=r"OpenGL 3\.3 is needed.*2\.1 Mesa 22"):
        check_gl(Ctx())


def test_middle_click_places_a_black_hole_and_takes_it_away(app):
    """At the world point under the cursor (the box is the window here, 1:1, y up): then a
    ball at rest is pulled towards it; a second click there takes it away; R resets."""
    mouse = pyglet.window.mouse
    app.sim.gravity = (0.0, 0.0)
    app.sim.velocities = np.zeros_like(app.sim.velocities)
    app.on_mouse_press(120, 120, mouse.MIDDLE, 0)
    (hole,) = app.sim.black_holes
    assert (hole.x, hole.y) == pytest.approx(app.world_point(120, 120))
    before = app.sim.positions[1].copy()  # the ball at (170, 60)
    for _ in range(5):
        app.tick(DT)
    moved = app.sim.positions[1] - before
    towards = np.array([hole.x, hole.y]) - before
    assert moved @ towards > 0.9 * np.hypot(*moved) * np.hypot(*towards)  # towards the hole
    app.on_mouse_press(122, 118, mouse.MIDDLE, 0)  # within HOLE_PICK of it
    assert app.sim.black_holes == []
    app.on_mouse_press(120, 120, mouse.MIDDLE, 0)
    app.on_key_press(keys().R, 0)
    assert app.sim.black_holes == []  # the starting state had none


def test_a_middle_click_beyond_the_most_black_holes_adds_none(app):
    # the 65th had raised SceneError out of the window's event loop: the demo quit, status 2
    from abound.defaults import MAX_BLACK_HOLES
    mouse = pyglet.window.mouse
    for k in range(MAX_BLACK_HOLES):
        app.sim.add_black_hole(10.0 + 3.0 * k, 10.0, 1.0)
    app.on_mouse_press(120, 120, mouse.MIDDLE, 0)
    assert len(app.sim.black_holes) == MAX_BLACK_HOLES
    app.tick(DT)  # and it runs on


def test_demo_of_random_balls_at_a_smaller_size_keeps_their_density(tmp_path):
    # hot_gas: 10,000 balls of radius 3 in 1920x1080. In an 800x600 window they were squeezed
    # into the box (a ring of balls packed along its sides, seconds a frame); now placed in a
    # box of the window's size, as many as keep the density: 10,000 x 800 x 600 / (1920 x 1080)
    import json
    from abound.cli import main
    log = tmp_path / "gas.jsonl"
    assert main(["demo", "hot_gas", "--size", "800x600", "--frames", "2", "--headless",
                 "--record", str(log)]) == 0
    header = json.loads(log.read_text().splitlines()[0])
    assert header["window"] == [800, 600]
    sim = Simulation.from_config(header["scene"])
    assert len(sim) == round(10000 * 800 * 600 / (1920 * 1080)) == 2315
    assert (sim.width, sim.height) == (800.0, 600.0)
    # spread evenly over the box: the share within 3 radii of a side is that band's share of the area
    x, y = sim.positions.T
    band = 9.0
    near = np.mean((x < 3 + band) | (x > 797 - band) | (y < 3 + band) | (y > 597 - band))
    area = 1 - (794 - 2 * band) * (594 - 2 * band) / (794 * 594)
    assert near == pytest.approx(area, abs=0.02)
    # --balls still sets the number
    assert main(["demo", "hot_gas", "--size", "800x600", "--balls", "500", "--frames", "1", "--headless",
                 "--record", str(log), "--force"]) == 0
    assert len(Simulation.from_config(json.loads(log.read_text().splitlines()[0])["scene"])) == 500


@pytest.mark.parametrize("size", [(640, 360), (1920, 1080), (300, 500)])
def test_a_black_hole_keeps_its_place_in_a_box_that_follows_the_window(tmp_path, size):
    # black_hole.toml: "a black hole in the middle" of 1280x720. Its box follows the window
    # (random balls only), but the hole stayed at (640, 360): in a 640x360 window every ball
    # streamed into the top right corner (a new user's trial). As a share of the box it stays
    import json
    from abound.cli import main
    log = tmp_path / "hole.jsonl"
    assert main(["demo", "black_hole", "--size", f"{size[0]}x{size[1]}", "--frames", "1", "--headless",
                 "--record", str(log)]) == 0
    sim = Simulation.from_config(json.loads(log.read_text().splitlines()[0])["scene"])
    assert (sim.width, sim.height) == size
    (hole,) = sim.black_holes
    assert (hole.x, hole.y) == (size[0] * 640.0 / 1280.0, size[1] * 360.0 / 720.0)


def test_a_size_the_scene_cannot_fill_is_blamed_on_the_size(capsys):
    # 'too many balls' with no word of --size: the count came from hot_gas's density
    # in an 8000x8000 window, which the user did not give as a number of balls
    from abound.cli import main
    for size, reason in (("8000x8000", "too many balls"), ("1x1", "too small")):
        assert main(["demo", "hot_gas", "--size", size, "--frames", "1", "--headless"]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and f"hot_gas in --size {size}: " in err[0] and reason in err[0], err


def test_a_scene_too_slow_for_the_reference_engine_goes_back_to_the_fast_one(app, monkeypatch, capsys):
    # B onto the reference engine with the Galton board (777 balls) took seconds a
    # frame, and the keys queued behind them (a new user's trial). A step there
    # slower than the warm-up's limit goes back to the fast engine, and says so; the
    # switch is an action like B's (a replay has it). Here the limit is 0 s, and the
    # fast engine counts as ready (as after the demo's warm-up)
    from abound import warmup
    k = keys()
    monkeypatch.setattr(warmup, "SLOW_STEP", 0.0)
    monkeypatch.setattr(warmup, "fast_is_ready", lambda: True)
    for _ in range(3):  # (past pymunk, where it is installed)
        if app.sim.backend != "reference":
            app.on_key_press(k.B, 0)
    assert app.sim.backend == "reference"
    app.tick(DT)
    assert app.sim.backend == "fast"
    assert "the reference engine took" in capsys.readouterr().err
    # the reference engine asked for otherwise (--backend, the scene, an API call) is kept
    app.control.apply({"do": "backend", "name": "reference"})
    for _ in range(3):
        app.tick(DT)
    assert app.sim.backend == "reference"


def test_a_box_wider_than_opengl_draws_is_shown_in_the_largest_window_of_its_shape(tmp_path, capsys):
    # a valid scene 20,000 px wide: its window (the box's size, none given) was made, and
    # the first exact frame's framebuffer failed with a traceback. The window now is
    # the largest of the box's shape this OpenGL draws (GL_MAX_RENDERBUFFER_SIZE and
    # GL_MAX_VIEWPORT_DIMS, read here from the context), said in one note; a fixed
    # picture (a wall) is drawn scaled into it, and the recorded window says its size
    import json
    from pyglet import gl
    from abound.cli import main
    from abound.render.context import make_window
    probe = make_window(64, 64, visible=False, headless=True)
    limit = gl.GLint()
    gl.glGetIntegerv(gl.GL_MAX_RENDERBUFFER_SIZE, limit)
    viewport = (gl.GLint * 2)()
    gl.glGetIntegerv(gl.GL_MAX_VIEWPORT_DIMS, viewport)
    probe.close()
    side = min(limit.value, viewport[0], viewport[1])
    width, height = 2 * side + 1000, 720
    scene = tmp_path / "wide.toml"
    scene.write_text(f"[world]\nwidth = {width}\nheight = {height}\n"
                     f"[[walls]]\nx0 = 100.0\ny0 = 100.0\nx1 = {width - 100.0}\ny1 = 600.0\n"
                     "[[balls]]\nx = 500.0\ny = 400.0\nradius = 10.0\n")
    log = tmp_path / "wide.jsonl"
    assert main(["demo", str(scene), "--frames", "3", "--headless", "--record", str(log)]) == 0
    expected = (side, int(height * side / width))
    assert tuple(json.loads(log.read_text().splitlines()[0])["window"]) == expected
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"abound: note: the scene's {width}x{height} px box is shown scaled in a "
                   f"{expected[0]}x{expected[1]} window (this OpenGL draws at most {side} px a side)"]
    # and drawn there: the ball's centre, where the fitted transform puts it, is the ball's
    # colour, an empty place of the box the background
    from abound.render.style import fit_transform
    from abound.scene import for_window
    sim = for_window(str(scene), None, backend="reference")
    app = DemoApp(sim, headless=True, visible=False, vsync=False, frames=1)
    app.window.switch_to()
    app.draw()
    shown = _window_pixels(app.window)
    assert shown.shape[:2] == (expected[1], expected[0])
    s, ox, oy = fit_transform(width, height, *expected)
    x, y = ox + s * 500.0, expected[1] - (oy + s * 400.0)
    background = np.round(255 * np.array(app.style.background[:3]))
    assert np.abs(shown[int(y), int(x), :3] - background).max() > 40, "no ball where the state puts it"
    empty_x, empty_y = ox + s * 5000.0, expected[1] - (oy + s * 700.0)
    assert np.abs(shown[int(empty_y), int(empty_x), :3] - background).max() <= 1
    app.window.close()


def _window_pixels(window):
    """The window's colour buffer, (H, W, 4) uint8, row 0 at the top."""
    image = pyglet.image.get_buffer_manager().get_color_buffer().get_image_data()
    rows = np.frombuffer(image.get_data("RGBA", image.width * 4), np.uint8).reshape(image.height, image.width, 4)
    return rows[::-1].astype(int)


def test_a_box_under_a_pixel_gets_a_window_of_one(tmp_path, capsys):
    # a 0.5 px box (a valid scene: `abound check` passes it) rounded to a window of
    # 0x0, and pyglet divided by its width: 'install EGL', with EGL installed
    from abound.cli import main
    scene = tmp_path / "tiny.toml"
    scene.write_text("[world]\nwidth = 0.5\nheight = 0.5\n")
    assert main(["demo", str(scene), "--frames", "2", "--headless"]) == 0
    assert "error" not in capsys.readouterr().err


def test_a_window_too_small_for_its_balls_says_so(app, capsys):
    # the box follows the window even then (a window shrunk for a moment), but the user hears
    # why the scene crawls: once on the terminal, and on the HUD while it lasts
    cover = lambda w, h: float(np.sum(np.pi * app.sim.radii ** 2)) / (w * h)
    w, h = 12, 9
    assert cover(w, h) > 0.9069  # (more than discs can cover: pi / (2 sqrt 3))
    app.on_resize(w, h)
    app.on_resize(w + 1, h)
    err = capsys.readouterr().err
    assert err.count("cannot hold its balls") == 1, err
    assert f"they would cover {cover(w, h):.0%} of it" in err
    assert f"the box is too small for its balls ({cover(w + 1, h):.0%} covered)" in app.hud_text()
    app.on_resize(300, 150)
    assert cover(300, 150) < 0.9 and "too small" not in app.hud_text()
    assert capsys.readouterr().err == ""


def test_b_passes_over_the_reference_engine_for_a_scene_too_big_for_it(capsys):
    # the first reference step of the 10,000-ball pile froze the window for 10 s before the
    # demo went back to the fast engine (a new user's trial): B does not go there at all
    from abound import warmup
    from abound.physics import backends
    sim = Simulation.from_config("pile", balls=warmup.FIRST_STEP_BALLS + 1, backend="fast")
    app = DemoApp(sim, headless=True, size=(320, 240))
    try:
        for _ in range(4):  # (round the cycle, pymunk too where it is installed)
            app.on_key_press(keys().B, 0)
            assert app.sim.backend != "reference"
        # said each time B would have gone there: from fast, not from pymunk (fast comes next)
        said = capsys.readouterr().err.count("B passes over the reference engine")
        assert said == (2 if "pymunk" in backends.available() else 4)
    finally:
        app.close()


def test_the_crowding_note_is_drawn_as_one_more_hud_line(app, tmp_path, monkeypatch):
    # the pixels, not only hud_text: over the black background only the HUD's glyphs differ
    # from the plain picture; with the note they reach one text line lower, the lines above
    # as they were. (The share is forced here: the picture must stay the same; the share's
    # own test is test_a_window_too_small_for_its_balls_says_so)
    app.show_hud = True
    plain = capture_frame(app.sim, (240, 180), RenderStyle.from_scene(app.sim.scene))[..., :3]

    background = np.all(plain == 0, axis=2)  # (the backdrop darkens a ball under it too)

    def text_rows(name):
        shot = np.asarray(Image.open(app.screenshot(tmp_path / name)))[..., :3]
        return shot, np.flatnonzero(np.any(np.any(shot != plain, axis=2) & background, axis=1))

    without, rows = text_rows("without.png")
    lines = app.hud_text().count("\n") + 1
    monkeypatch.setattr(app, "_crowded", lambda: 3.93)
    assert app.hud_text().count("\n") + 1 == lines + 1
    with_note, rows_note = text_rows("with.png")
    pitch = (rows[-1] - rows[0]) / (lines - 0.5)  # (glyphs from the first line's top to the last's baseline or so)
    assert 0.5 * pitch < rows_note[-1] - rows[-1] < 1.5 * pitch, (rows[[0, -1]], rows_note[[0, -1]], pitch)
    assert np.array_equal(with_note[:rows[-1] + 1], without[:rows[-1] + 1])
