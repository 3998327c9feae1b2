"""The saver as an xscreensaver hack: its arguments, and drawing into an X window of someone else's.

The window tests play xscreensaver on a private Xvfb: they make a window of
their own (libX11 through ctypes, not abound), hand its id to ``abound
saver`` by ``--window-id`` or ``$XSCREENSAVER_WINDOW``, read the window's
pixels back from the X server and find each ball where the scene puts it:
the scene's box scaled to fit the window, centred (computed here from the
box and window sizes), a ball at world (x, y) centred at pixel
(ox + s x, H - oy - s y). Then they destroy the window (or send SIGTERM)
and time abound's exit.
"""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from abound.cli import build_parser
from xwindows import SCENE, XWindow, Xvfb, grab, misplaced, tools_missing

REPO = Path(__file__).resolve().parents[2]
STARTUP = 90.0   # s: a first run may import and compile for a while
EXIT = 1.0       # s: the bound from destroy / SIGTERM to exit


def parse(*argv):
    parser, module, problem = build_parser(["saver", *argv])
    assert problem is None
    return parser.parse_args(["saver", *argv])


# -- arguments (no X needed) --------------------------------------------------------------
@pytest.mark.parametrize("argv, scene, show, cap", [
    (["--fps"], None, True, None),
    (["-fps", "galton"], "galton", True, None),            # a bare flag, then the scene
    (["galton", "--fps", "--root"], "galton", True, None),
    (["--fps", "30", "galton"], "galton", False, 30.0),     # the old cap
    (["--max-fps", "24", "-fps"], None, True, None),
])
def test_fps_is_a_flag_and_still_the_old_cap(argv, scene, show, cap):
    from abound.cli.saver import _Word
    args = parse(*argv)
    words = list(args.words) + ([str(args.fps)] if isinstance(args.fps, _Word) else [])
    assert (words[0] if words else None) == scene
    assert (args.fps is True or isinstance(args.fps, _Word)) == show
    assert (args.fps if isinstance(args.fps, float) else None) == cap


def test_xscreensaver_spellings_mean_the_same():
    for one, two in [(["-root"], ["--root"]), (["-window-id", "0x2a"], ["--window-id", "42"]),
                     (["-delay", "20000"], ["--delay", "20000"]), (["-fps"], ["--fps"])]:
        a, b = vars(parse(*one)), vars(parse(*two))
        assert a == b, (one, two)
    assert parse("--window-id", "0x1A00003").xs_window == 0x1A00003
    assert parse("-delay", "0").delay == 0


def test_which_window():
    from abound.cli.saver import ROOT, target_window
    assert target_window(None, False, {}) is None                      # a window of abound's
    assert target_window(None, True, {}) == ROOT                       # -root alone: the root window
    env = {"XSCREENSAVER_WINDOW": "0x2E00007"}                         # xscreensaver writes hex
    assert target_window(None, True, env) == 0x2E00007
    assert target_window(None, False, env) == 0x2E00007
    assert target_window(77, True, env) == 77                          # --window-id first
    with pytest.raises(ValueError):
        target_window(None, True, {"XSCREENSAVER_WINDOW": "nope"})


def test_help_lists_the_options():
    out = subprocess.run([sys.executable, "-m", "abound", "saver", "--help"], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=str(REPO)), timeout=120).stdout
    for option in ("--root", "--window-id ID", "--fps [F]", "--delay US", "--max-fps F"):
        assert option in out, option


# -- drawing into a window of the test's ---------------------------------------------------
@pytest.fixture(scope="module")
def xserver():
    if tools_missing():
        pytest.skip(tools_missing())
    server = Xvfb()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def scene_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("xwindow") / "still.toml"
    path.write_text(SCENE)
    return path


def start(xserver, argv, env=None):
    environ = dict(os.environ, DISPLAY=xserver.display, PYTHONPATH=str(REPO))
    environ.pop("XSCREENSAVER_WINDOW", None)
    environ.update(env or {})
    return subprocess.Popen([sys.executable, "-m", "abound", "saver", *argv], env=environ,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_for_picture(window, proc, deadline=STARTUP):
    """Poll the window's pixels until the balls are where the state puts them; the last problems otherwise."""
    t_end = time.monotonic() + deadline
    wrong = ["nothing read"]
    while time.monotonic() < t_end:
        if proc.poll() is not None:
            return [f"abound exited with {proc.returncode}: {proc.stderr.read()}"]
        image = grab(window)
        wrong = misplaced(image, window.size)
        if not wrong:
            return []
        time.sleep(0.25)
    return wrong


def exits_within(proc, seconds, what):
    t0 = time.monotonic()
    try:
        proc.wait(timeout=seconds + 0.5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        pytest.fail(f"abound still running {seconds + 0.5:.1f} s after {what}")
    took = time.monotonic() - t0
    assert took < seconds, f"abound took {took:.2f} s to exit after {what}"
    return took


def save_failure(window, name):
    from PIL import Image
    out = REPO / "tests" / "apps" / "_xwindow_failures"
    out.mkdir(exist_ok=True)
    Image.fromarray(grab(window)).save(out / f"{name}.png")


@pytest.mark.parametrize("how", ["--window-id", "-window-id hex", "$XSCREENSAVER_WINDOW", "-root + env"])
def test_draws_the_state_into_the_given_window_follows_its_size_and_quits_when_it_goes(xserver, scene_file, how):
    window = XWindow(xserver.display, 0, 0, 640, 360)
    try:
        argv, env = [str(scene_file)], {}
        if how == "--window-id":
            argv += ["--window-id", str(window.id)]
        elif how == "-window-id hex":
            argv += ["-window-id", hex(window.id)]
        elif how == "$XSCREENSAVER_WINDOW":
            env["XSCREENSAVER_WINDOW"] = f"0x{window.id:X}"
        else:
            argv += ["-root"]
            env["XSCREENSAVER_WINDOW"] = f"0x{window.id:X}"
        proc = start(xserver, argv, env)
        try:
            wrong = wait_for_picture(window, proc)
            if wrong:
                save_failure(window, f"start-{how.split()[0].strip('-$')}")
            assert not wrong, wrong
            window.resize(300, 400)  # the owner resizes it: the scene is fitted again
            wrong = wait_for_picture(window, proc, deadline=10.0)
            if wrong:
                save_failure(window, f"resized-{how.split()[0].strip('-$')}")
            assert not wrong, wrong
            window.destroy()
            exits_within(proc, EXIT, "its window was destroyed")
            assert proc.returncode == 0, proc.stderr.read()
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    finally:
        window.destroy()


def test_two_copies_each_in_its_own_window_and_sigterm(xserver, scene_file):
    """One copy per monitor: each draws only into its own window; --fps draws the rate in the lower left."""
    left = XWindow(xserver.display, 0, 400, 320, 240)
    right = XWindow(xserver.display, 400, 400, 320, 240)
    procs = []
    try:
        procs.append(start(xserver, [str(scene_file), "-root", "-fps"], {"XSCREENSAVER_WINDOW": hex(left.id)}))
        procs.append(start(xserver, [str(scene_file), "--root", "--delay", "20000"],
                           {"XSCREENSAVER_WINDOW": hex(right.id)}))
        for window, proc in zip((left, right), procs):
            wrong = wait_for_picture(window, proc)
            assert not wrong, wrong
        # the frame-rate text: light pixels in the lower left corner of the -fps copy only
        corners = [grab(w)[-40:-4, 4:140].astype(int) for w in (left, right)]
        light = [int((c.min(axis=-1) > 160).sum()) for c in corners]
        assert light[0] > 20 and light[1] == 0, light
        procs[0].send_signal(signal.SIGTERM)
        exits_within(procs[0], EXIT, "SIGTERM")
        assert not misplaced(grab(right), right.size)  # the other copy goes on
        right.destroy()
        exits_within(procs[1], EXIT, "its window was destroyed")
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        left.destroy()
        right.destroy()


def test_no_such_window_is_one_error_line_and_status_2(xserver, scene_file):
    # mistyped, or destroyed by its owner before abound got to it: no window to draw into, no screen to take
    proc = start(xserver, [str(scene_file), "--window-id", "0x3fffff1"])
    out, err = proc.communicate(timeout=STARTUP)
    assert proc.returncode == 2, err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("abound: error: ") and "0x3fffff1" in lines[0], err


def test_no_glx_says_so_in_one_line_and_falls_back(scene_file):
    if tools_missing():
        pytest.skip(tools_missing())
    server = Xvfb(args=("-extension", "GLX"))
    try:
        window = XWindow(server.display, 0, 0, 200, 150)
        proc = start(server, [str(scene_file), "--window-id", str(window.id), "--headless", "--frames", "3"])
        out, err = proc.communicate(timeout=STARTUP)
        window.destroy()
    finally:
        server.stop()
    assert proc.returncode == 0, err
    lines = err.splitlines()
    assert len(lines) == 1 and hex(window.id) in lines[0] and "Traceback" not in err, err


def test_a_busy_saver_still_goes_within_a_second_of_its_window(xserver):
    """The main thread stuck in a long step (a first run compiles the fast engine): the watch ends the process."""
    window = XWindow(xserver.display, 0, 0, 200, 150)
    code = ("import sys, time\n"
            "from abound.render.foreign_window import watch_destruction\n"
            f"watch_destruction({window.id})\n"
            "print('watching', flush=True)\n"
            "time.sleep(60)\n"  # busy, not looking at any event
            "sys.exit(3)\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                            env=dict(os.environ, DISPLAY=xserver.display, PYTHONPATH=str(REPO)))
    try:
        assert proc.stdout.readline().strip() == "watching"
        window.destroy()
        exits_within(proc, EXIT, "its window was destroyed while it was busy")
        assert proc.returncode == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        window.destroy()
