"""README's swayidle lines for Wayland, run as swayidle runs them (``sh -c``), on a private Xvfb.

No Wayland compositor here: what can be checked is that the two commands, as
written in README, start the saver (its window appears on the X server) and
end it (the process is gone within a second of the ``resume`` command).
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from xwindows import Xvfb, tools_missing
from user_docs import user_docs

REPO = Path(__file__).resolve().parents[2]
EXIT = 1.0  # s


def readme_swayidle():
    """(timeout command, resume command) of README's swayidle example."""
    text = user_docs()  # (docs/screensaver.md)
    block = re.search(r"```sh\n(swayidle .*?)```", text, re.S).group(1)
    words = shlex.split(block.replace("\\\n", " "))
    return words[words.index("timeout") + 2], words[words.index("resume") + 1]


def windows(display):
    out = subprocess.run(["xwininfo", "-root", "-tree"], env=dict(os.environ, DISPLAY=display),
                         capture_output=True, text=True, timeout=30).stdout
    return out


@pytest.mark.skipif(shutil.which("xwininfo") is None, reason="needs xwininfo (x11-utils)")
def test_swayidle_commands_start_and_end_the_saver(tmp_path):
    if tools_missing():
        pytest.skip(tools_missing())
    start, resume = readme_swayidle()
    assert "abound saver" in start and "kill" in resume
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "abound").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m abound "$@"\n')
    (bin_dir / "abound").chmod(0o755)
    runtime = tmp_path / "run"
    runtime.mkdir()
    server = Xvfb()
    try:
        env = dict(os.environ, DISPLAY=server.display, XDG_RUNTIME_DIR=str(runtime), PYTHONPATH=str(REPO),
                   PATH=f"{bin_dir}:{os.environ['PATH']}")
        env.pop("XSCREENSAVER_WINDOW", None)
        log = open(tmp_path / "saver.log", "w")
        subprocess.run(["sh", "-c", start], env=env, stdout=log, stderr=log, timeout=30, check=True)
        pid_file = runtime / "abound-saver.pid"
        pid = int(pid_file.read_text())
        t_end = time.monotonic() + 120
        while '"abound"' not in windows(server.display):
            assert time.monotonic() < t_end, (tmp_path / "saver.log").read_text()
            assert os.path.exists(f"/proc/{pid}"), (tmp_path / "saver.log").read_text()
            time.sleep(0.2)
        time.sleep(1.0)
        assert os.path.exists(f"/proc/{pid}"), "the saver quit by itself"
        t0 = time.monotonic()
        subprocess.run(["sh", "-c", resume], env=env, timeout=30, check=True)
        while os.path.exists(f"/proc/{pid}") and _state(pid) != "Z":
            assert time.monotonic() - t0 < EXIT, "the saver still runs a second after the resume command"
            time.sleep(0.02)
    finally:
        server.stop()


def _state(pid):
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"
