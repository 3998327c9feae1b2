"""The pipelined demo in a real window (issue 27): real key presses reach a loop whose
steps run on a worker thread, and the picture follows them.

``abound demo SCENE`` runs on a private Xvfb (not recording: its steps run on the
worker thread beside the drawing, and it draws straight into the window). Keys
are real key presses through XTEST (``xdotool key``); the window's pixels are read
back from the X server (XGetImage). Space pauses: the picture must hold still,
the same pixels half a second apart; Space again: it moves; Q quits, exit status 0.
"""
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from xwindows import Xvfb, grab_window, tools_missing, wait_for_window

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(bool(tools_missing()) or shutil.which("xdotool") is None,
                                reason=str(tools_missing() or "needs xdotool"))

SCENE = """
[world]
width = 320.0
height = 240.0
gravity = [0.0, 0.0]
[physics]
backend = "reference"
seed = 3
[[spawn]]
count = 12
radius = 10.0
speed = 150.0
[render]
shading = false
"""


def xdotool(display, *args):
    return subprocess.run(["xdotool", *args], env=dict(os.environ, DISPLAY=display), capture_output=True,
                          text=True, check=True, timeout=60).stdout


def test_keys_pause_and_resume_the_pipelined_demo_in_a_real_window(tmp_path):
    (tmp_path / "gas.toml").write_text(SCENE)
    server = Xvfb(size=(640, 480))
    env = {k: v for k, v in os.environ.items() if k not in ("WAYLAND_DISPLAY", "ABOUND_HEADLESS")}
    env.update(DISPLAY=server.display, PYTHONPATH=str(REPO))
    demo = subprocess.Popen([sys.executable, "-m", "abound", "demo", str(tmp_path / "gas.toml")], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        win = wait_for_window(env, "^abound$", demo)

        def frame(after=0.0):
            time.sleep(after)
            return grab_window(server.display, win)

        def key(name):
            xdotool(server.display, "windowfocus", "--sync", str(win))
            xdotool(server.display, "key", name)

        deadline = time.monotonic() + 60
        first = frame()
        while np.array_equal(frame(0.2), first):  # (until the first frames are up and moving)
            assert time.monotonic() < deadline, "the picture never moved"
            first = frame()
        key("space")
        held = frame(0.5)
        assert np.array_equal(frame(0.5), held), "paused, but the picture still moves"
        assert held.std() > 5  # (balls on it, not a blank window)
        key("space")
        assert not np.array_equal(frame(0.5), held), "resumed, but the picture holds still"
        key("q")
        assert demo.wait(timeout=60) == 0, demo.stderr.read()
    finally:
        if demo.poll() is None:
            demo.kill()
            demo.wait(10)
        server.stop()
