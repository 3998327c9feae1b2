"""Replays are never lost (issue 24, item 1): however a recording demo ends, its log replays bit for bit.

``abound demo galton --record r.jsonl`` runs in a real window on a
private Xvfb and is ended, at a random moment, each way a user ends it: Esc
and Q (real key presses through XTEST, by ``xdotool``), the window's close
button (the WM_DELETE_WINDOW message a window manager sends), Ctrl-C
(SIGINT), the terminal closing (SIGHUP) and ``--frames``. Then ``abound replay r.jsonl --headless`` must
exit 0 with nothing on stderr: the log is whole (an end record that matches
its frames and steps) and the replayed final state is bit-identical to the
recorded one (its digest). The demo's own exit status: 0, or 128 + the signal after one.
"""
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from xwindows import Xvfb

REPO = Path(__file__).resolve().parents[2]
HELPERS = REPO / "tests" / "helpers"  # (xwindows, for the driver below)
pytestmark = pytest.mark.skipif(shutil.which("Xvfb") is None or shutil.which("xdotool") is None,
                                reason="needs Xvfb and xdotool")

# Runs on a private Xvfb: start the demo, wait for its window, end it one way after `wait` seconds.
# (Found by xwindows.wait_for_window, which looks again where xdotool's own --sync wait exits 1
# under load: it did so once in a clean-clone run, the driver died on an empty answer, and the
# demo it left running held the test's pipes until the 300 s timeout. A driver that fails now
# kills its demo.)
DRIVER = r'''
import ctypes, os, signal, subprocess, sys, time
from xwindows import wait_for_window
way, log, wait = sys.argv[1], sys.argv[2], float(sys.argv[3])
cmd = [sys.executable, "-m", "abound", "demo", "galton", "--record", log]
if way == "frames":
    sys.exit(subprocess.run(cmd + ["--frames", "45"]).returncode)


def end(demo, win):
    if way in ("Escape", "q"):
        subprocess.run(["xdotool", "windowfocus", "--sync", str(win)], check=True, timeout=30)
        subprocess.run(["xdotool", "key", way], check=True, timeout=30)  # XTEST: as from the keyboard
    elif way == "close":
        from pyglet.libs.x11 import xlib
        dpy = xlib.XOpenDisplay(None)
        ev = xlib.XEvent()
        ev.xclient.type = xlib.ClientMessage
        ev.xclient.window = win
        ev.xclient.message_type = xlib.XInternAtom(dpy, b"WM_PROTOCOLS", False)
        ev.xclient.format = 32
        ev.xclient.data.l[0] = xlib.XInternAtom(dpy, b"WM_DELETE_WINDOW", False)
        xlib.XSendEvent(dpy, win, False, xlib.NoEventMask, ctypes.byref(ev))
        xlib.XFlush(dpy)
    elif way == "ctrl-c":
        demo.send_signal(signal.SIGINT)
    elif way == "hangup":
        demo.send_signal(signal.SIGHUP)


# as from a terminal: SIGINT and SIGHUP at their defaults, even where this test was
# started as a shell's background job (which ignores SIGINT; the demo keeps that)
restore = lambda: [signal.signal(s, signal.SIG_DFL) for s in (signal.SIGINT, signal.SIGHUP)]
demo = subprocess.Popen(cmd, preexec_fn=restore)
try:
    win = wait_for_window(dict(os.environ), "^abound$", demo)
    time.sleep(wait)
    end(demo, win)
    sys.exit(demo.wait(timeout=120))
finally:
    if demo.poll() is None:
        demo.kill()
'''

WAYS = {"Escape": 0, "q": 0, "close": 0, "ctrl-c": 130, "hangup": 129, "frames": 0}
REPEATS = 2  # the race the issue saw hit about one run in two: 10 runs miss it one time in 1,000


def runs():
    """(way, run): each way that ends the demo at a random moment REPEATS times, at
    other moments; --frames ends it at the same frame each time, so once."""
    return [(way, run) for way in WAYS for run in range(1 if way == "frames" else REPEATS)]


def env():
    e = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "ABOUND_HEADLESS")}
    e["PYTHONPATH"] = str(REPO)
    return e


@pytest.mark.parametrize("way, run", runs())
def test_every_way_of_quitting_leaves_a_log_that_replays_bit_for_bit(tmp_path, way, run):
    log = tmp_path / "r.jsonl"
    wait = random.Random(f"{way}-{run}").uniform(0.8, 2.0)
    # A private Xvfb of the test's own rather than xvfb-run: xvfb-run's clean-up of its
    # auth directory failed once in CI (exit 5) after a run that had passed.
    server = Xvfb()
    try:
        demo = subprocess.run([sys.executable, "-c", DRIVER, way, str(log), f"{wait:.3f}"],
                              cwd=tmp_path, env={**env(), "DISPLAY": server.display,
                                                 "PYTHONPATH": os.pathsep.join([str(REPO), str(HELPERS)])},
                              capture_output=True, text=True, timeout=300)
    finally:
        server.stop()
    assert demo.returncode == WAYS[way], (demo.returncode, demo.stderr[-2000:])
    assert "Traceback" not in demo.stderr, demo.stderr[-2000:]
    replay = subprocess.run([sys.executable, "-m", "abound", "replay", str(log), "--headless"],
                            cwd=tmp_path, env=env(), capture_output=True, text=True, timeout=300)
    assert (replay.returncode, replay.stderr) == (0, ""), replay.stderr


def test_a_demo_started_with_hangups_ignored_keeps_running_through_one(tmp_path):
    # nohup abound demo ...: SIGHUP ignored by whoever started it stays ignored (the
    # demo quits on a SIGHUP otherwise, closing its log); SIGTERM then ends it, log whole
    import signal
    import time
    log = tmp_path / "r.jsonl"
    demo = subprocess.Popen([sys.executable, "-m", "abound", "demo", "drop", "--headless", "--record", str(log)],
                            cwd=tmp_path, env=env(), stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN))
    try:
        deadline = time.monotonic() + 240
        while (not log.exists() or log.read_text().count('{"frame"') < 5) and time.monotonic() < deadline:
            assert demo.poll() is None, demo.stderr.read()
            time.sleep(0.2)
        demo.send_signal(signal.SIGHUP)
        time.sleep(1.0)
        assert demo.poll() is None, "a SIGHUP the demo was started to ignore ended it"
        demo.send_signal(signal.SIGTERM)
        assert demo.wait(timeout=60) == 128 + signal.SIGTERM
    finally:
        if demo.poll() is None:
            demo.kill()
    replay = subprocess.run([sys.executable, "-m", "abound", "replay", str(log), "--headless"],
                            cwd=tmp_path, env=env(), capture_output=True, text=True, timeout=300)
    assert (replay.returncode, replay.stderr) == (0, ""), replay.stderr
