"""The saver and the demo fit the scene to the screen (issue 24, item 2), in real windows on a private Xvfb.

A scene with walls, pegs or explicit balls is a fixed picture: whatever the
screen's or window's size and aspect, its box is scaled to fit, centred,
aspect kept, as ``abound capture`` draws it. A scene of only random balls
fills the screen instead: the saver places its balls afresh in a box of the
screen's size, as many as keep the scene's density, and so does the demo
given --size; then its box follows its window. Each test reads the
pixels back from the X server (XGetImage) and finds every ball where the
state and the transform put it, both computed here from the sizes alone
(:func:`xwindows.expected`: s = min(W / w, H / h), the box centred), not
through abound's renderer.
"""
import contextlib
import os
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import numpy as np
import pytest

from abound import Simulation
from abound.render.measure import centroid_and_radius
from xwindows import BACKGROUND, SCENE, Xvfb, _lib, grab_window, misplaced, tools_missing

REPO = Path(__file__).resolve().parents[2]
STARTUP = 60.0  # s until the picture must be right (an import, a first frame)
pytestmark = pytest.mark.skipif(bool(tools_missing()), reason=str(tools_missing()))

# a still scene of random balls only: no gravity, no speed, one colour
RANDOM_COLOR = (255, 200, 0)
RANDOM_SCENE = f"""
[world]
width = 400.0
height = 300.0
gravity = [0.0, 0.0]
[physics]
backend = "reference"
seed = 9
[[spawn]]
count = 2
radius = 14.0
speed = 0.0
palette = ["#{RANDOM_COLOR[0]:02x}{RANDOM_COLOR[1]:02x}{RANDOM_COLOR[2]:02x}"]
[render]
background = "#{BACKGROUND[0]:02x}{BACKGROUND[1]:02x}{BACKGROUND[2]:02x}"
shading = false
color_mode = "ball"
"""


@pytest.fixture(scope="module")
def scenes(tmp_path_factory):
    d = tmp_path_factory.mktemp("fit")
    (d / "still.toml").write_text(SCENE)
    (d / "random.toml").write_text(RANDOM_SCENE)
    return d


def root_window(display):
    lib = _lib()
    dpy = lib.XOpenDisplay(display.encode())
    try:
        return lib.XDefaultRootWindow(dpy)
    finally:
        lib.XCloseDisplay(dpy)


def start(server, argv):
    env = {k: v for k, v in os.environ.items() if k not in ("WAYLAND_DISPLAY", "ABOUND_HEADLESS",
                                                             "XSCREENSAVER_WINDOW")}
    env.update(DISPLAY=server.display, PYTHONPATH=str(REPO))
    return subprocess.Popen([sys.executable, "-m", "abound", *argv], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def stop(proc):
    if proc.poll() is None:
        proc.kill()
    proc.wait(10)


def wait_until_right(proc, grab, check, deadline=STARTUP):
    """Poll the pixels until check(image) finds nothing wrong; the problems otherwise."""
    t_end = time.monotonic() + deadline
    wrong = ["nothing read"]
    while time.monotonic() < t_end:
        if proc.poll() is not None:
            return [f"abound exited with {proc.returncode}: {proc.stderr.read()[-2000:]}"]
        try:
            wrong = check(grab())
        except RuntimeError as exc:  # the window is not there yet
            wrong = [str(exc)]
        if not wrong:
            return []
        time.sleep(0.25)
    return wrong


def placed(path, box):
    """The scene at ``path`` built in a box of ``box``, its count of balls scaled by the
    ratio of the boxes' areas (rounded; docs/demo.md: they keep the scene's density)."""
    scene = tomllib.loads(Path(path).read_text())
    world = scene["world"]
    for group in scene["spawn"]:
        group["count"] = max(1, round(group["count"] * box[0] * box[1] / (world["width"] * world["height"])))
    return Simulation.from_config(scene, size=box)


def random_balls_misplaced(image, box, path):
    """Random balls drawn 1:1 (the box is the screen): each where the scene built in a box of
    ``box`` puts it (the seeded placement; world y up, image rows down), and no margin."""
    sim = placed(path, box)
    assert len(sim) > 2, "a test of placement by density needs the count to change"
    p = sim.positions
    apart = np.hypot(*(p[:, None] - p[None]).transpose(2, 0, 1)) + np.eye(len(p)) * 1e9
    assert apart.min() > 2 * sim.radii.max() + 12, "the seed puts two balls too close to measure each alone"
    h = image.shape[0]
    wrong = []
    bg = np.array(BACKGROUND) / 255.0
    for (x, y), r in zip(sim.positions, sim.radii):
        row, col = h - y - 0.5, x - 0.5
        k = int(r) + 4
        found, radius = centroid_and_radius(image, bg, np.array(RANDOM_COLOR) / 255.0,
                                            (int(row) - k, int(row) + k + 2, int(col) - k, int(col) + k + 2))
        if found is None or np.hypot(found[0] - row, found[1] - col) > 0.5 or abs(radius - r) > 0.5:
            wrong.append(f"ball at world ({x:.1f}, {y:.1f}): expected pixel ({row:.1f}, {col:.1f}) "
                         f"radius {r:.1f}, found {found} radius {radius:.2f}")
    for corner in (image[0, 0], image[-1, -1], image[0, -1], image[-1, 0]):  # the box fills the screen
        if tuple(int(v) for v in corner) != BACKGROUND:
            wrong.append(f"corner {tuple(corner)} is not the background {BACKGROUND} (a margin?)")
    return wrong


def save_failure(image, name):
    from PIL import Image
    out = REPO / "tests" / "apps" / "_fit_failures"
    out.mkdir(exist_ok=True)
    Image.fromarray(image).save(out / f"{name}.png")


@contextlib.contextmanager
def running(screen, argv):
    """abound ``argv`` on a private Xvfb of ``screen`` size: yields (server, proc); both stopped after."""
    server = Xvfb(size=screen)
    try:
        proc = start(server, argv)
        try:
            yield server, proc
        finally:
            stop(proc)
    finally:
        server.stop()


def assert_right(proc, grab, check, name, deadline=STARTUP):
    """The pixels grab() reads come right (check finds nothing wrong) before the deadline;
    else the last picture is saved under ``name`` and the test fails with the problems."""
    wrong = wait_until_right(proc, grab, check, deadline)
    if wrong:
        save_failure(grab(), name)
    assert not wrong, (name, wrong)


def demo_window(display):
    """The id of the demo's window, once it is shown."""
    found = subprocess.run(["xdotool", "search", "--sync", "--onlyvisible", "--name", "^abound$"],
                           capture_output=True, text=True, timeout=STARTUP, env=dict(os.environ, DISPLAY=display))
    return int(found.stdout.split()[0])


# 4:3, a wide 2.37:1 and a portrait screen: the 4:3 box letterboxed on each side in turn
@pytest.mark.parametrize("screen", [(1024, 768), (1280, 540), (600, 900)])
def test_saver_fits_a_fixed_picture_to_the_screen(scenes, screen):
    with running(screen, ["saver", str(scenes / "still.toml")]) as (server, proc):
        root = root_window(server.display)
        assert_right(proc, lambda: grab_window(server.display, root), lambda im: misplaced(im, screen),
                     f"saver-{screen[0]}x{screen[1]}")


@pytest.mark.parametrize("screen", [(1024, 768), (500, 800)])
def test_saver_fills_the_screen_with_random_balls(scenes, screen):
    with running(screen, ["saver", str(scenes / "random.toml")]) as (server, proc):
        root = root_window(server.display)
        assert_right(proc, lambda: grab_window(server.display, root),
                     lambda im: random_balls_misplaced(im, screen, scenes / "random.toml"),
                     f"saver-random-{screen[0]}x{screen[1]}")


def xdotool(display, *argv):
    subprocess.run(["xdotool", *argv], check=True, timeout=30, env=dict(os.environ, DISPLAY=display))


@pytest.mark.skipif(subprocess.run(["which", "xdotool"], capture_output=True).returncode != 0,
                    reason="needs xdotool (apt-get install xdotool)")
def test_demo_fits_a_fixed_picture_to_its_window_when_resized_and_fullscreen(scenes):
    screen = (1100, 700)
    with running(screen, ["demo", str(scenes / "still.toml"), "--size", "800x300"]) as (server, proc):
        win = demo_window(server.display)
        for size in [(800, 300), (360, 640)]:  # wide, then tall after the resize
            if size != (800, 300):
                xdotool(server.display, "windowsize", "--sync", str(win), str(size[0]), str(size[1]))
            assert_right(proc, lambda: grab_window(server.display, win),
                         lambda im: misplaced(im, size) or
                         ([] if im.shape[:2] == size[::-1] else [f"window {im.shape}"]),
                         f"demo-{size[0]}x{size[1]}")
        # F: fullscreen, a real key press (XTEST); the picture fits the whole screen
        xdotool(server.display, "windowfocus", "--sync", str(win))
        xdotool(server.display, "key", "f")
        root = root_window(server.display)
        assert_right(proc, lambda: grab_window(server.display, root), lambda im: misplaced(im, screen),
                     "demo-fullscreen", deadline=20.0)


@pytest.mark.skipif(subprocess.run(["which", "xdotool"], capture_output=True).returncode != 0,
                    reason="needs xdotool (apt-get install xdotool)")
def test_demo_box_of_random_balls_follows_its_window(scenes):
    with running((1000, 800), ["demo", str(scenes / "random.toml"), "--size", "640x360"]) as (server, proc):
        win = demo_window(server.display)
        # the balls are placed in a box of the window's size (--size), as many as keep the
        # scene's density (4 for its 2 in 400x300), and stay where they are when the window
        # grows, drawn 1:1 (no scaling, no margins: the box is the window)
        for size in [(640, 360), (760, 520)]:
            if size != (640, 360):
                xdotool(server.display, "windowsize", "--sync", str(win), str(size[0]), str(size[1]))
            assert_right(proc, lambda: grab_window(server.display, win),
                         lambda im: random_balls_misplaced(im, (640, 360), scenes / "random.toml"),
                         f"demo-random-{size[0]}x{size[1]}")
