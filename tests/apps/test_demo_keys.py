"""+ and - in a real demo window: every press adds or removes one ball, however Shift is let go.

``abound demo pile --record r.jsonl`` runs in a real window on a private
Xvfb; ``xdotool`` presses the keys through XTEST as a keyboard would:
``+`` three times as ``xdotool key plus`` types it (Shift down, = down,
Shift up, = up), twice more with = let go before Shift, ``-`` twice, then
Escape. The replay log then holds one ``add`` per + pressed and one
``remove`` per - (the demo records every input it applies). X reports
Shift+= as PLUS when pressed and as EQUAL when released, so pyglet took each
later + for a repeat of a key still held and reported no press: a user's
second + added nothing.
"""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from xwindows import Xvfb

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(shutil.which("Xvfb") is None or shutil.which("xdotool") is None,
                                reason="needs Xvfb and xdotool")

PRESSES = [
    ["key", "plus"], ["key", "plus"], ["key", "plus"],
    ["keydown", "shift", "keydown", "equal", "keyup", "equal", "keyup", "shift"],
    ["keydown", "shift", "keydown", "equal", "keyup", "equal", "keyup", "shift"],
    ["key", "minus"], ["key", "minus"],
]

# Runs on the private Xvfb: start the demo, wait for its window, press, quit.
DRIVER = r'''
import json, subprocess, sys, time
log, presses = sys.argv[1], json.loads(sys.argv[2])
demo = subprocess.Popen([sys.executable, "-m", "abound", "demo", "pile", "--backend", "reference",
                         "--record", log])
found = subprocess.run(["xdotool", "search", "--sync", "--onlyvisible", "--name", "^abound$"],
                       capture_output=True, text=True, timeout=120)
win = found.stdout.split()[0]
time.sleep(1.0)
subprocess.run(["xdotool", "windowfocus", "--sync", win], check=True, timeout=30)
for press in presses:
    subprocess.run(["xdotool", *press], check=True, timeout=30)
    time.sleep(0.3)  # (one frame at least: each press its own)
time.sleep(0.5)
subprocess.run(["xdotool", "key", "Escape"], check=True, timeout=30)
sys.exit(demo.wait(timeout=120))
'''


def test_every_plus_and_minus_pressed_on_a_real_keyboard_counts(tmp_path):
    log = tmp_path / "r.jsonl"
    server = Xvfb()
    try:
        env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "ABOUND_HEADLESS")}
        run = subprocess.run([sys.executable, "-c", DRIVER, str(log), json.dumps(PRESSES)], cwd=tmp_path,
                             env={**env, "PYTHONPATH": str(REPO), "DISPLAY": server.display},
                             capture_output=True, text=True, timeout=300)
    finally:
        server.stop()
    assert run.returncode == 0, run.stderr[-2000:]
    actions = [json.loads(line).get("do") for line in log.read_text().splitlines()[1:]]
    assert actions.count("add") == 5, actions
    assert actions.count("remove") == 2, actions
