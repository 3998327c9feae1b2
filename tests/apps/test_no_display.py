"""No display (issue 24, item 3): a window command says so in one line instead of running unseen.

With DISPLAY and WAYLAND_DISPLAY unset, ``abound demo``, ``abound replay FILE``
and ``abound saver`` (without ``--headless``) stop at once: exit status 2,
one line ``abound: error: ...`` that points at ``--headless`` and ``xvfb-run``,
no traceback, nothing written. Whether EGL is there or not (then pyglet
would draw on a private Xvfb) makes no difference. With ``--headless`` they
run; under a real (virtual) display they run. ``capture`` needs no display
and, drawing on a private Xvfb for want of EGL, says so.
"""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FRAMES = ["--frames", "3"]

# run abound with libEGL reported missing (pyglet would then fall back to a private Xvfb)
NO_EGL = ("import sys, abound.render.context as c; c.egl_available = lambda: False; "
          "from abound.cli import main; sys.exit(main(sys.argv[1:]))")


def abound(argv, cwd, *, display=None, egl=True, wrap=()):
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "ABOUND_HEADLESS")}
    env["PYTHONPATH"] = str(REPO)
    if display:
        env["DISPLAY"] = display
    python = [sys.executable, "-m", "abound"] if egl else [sys.executable, "-c", NO_EGL]
    return subprocess.run([*wrap, *python, *argv], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=180)


@pytest.fixture(scope="module")
def log(tmp_path_factory):
    """A recorded demo run to replay."""
    folder = tmp_path_factory.mktemp("log")
    proc = abound(["demo", "drop", "--headless", "--record", "run.jsonl", *FRAMES], folder)
    assert proc.returncode == 0, proc.stderr
    return folder / "run.jsonl"


def window_commands(log):
    return [["demo", "drop", *FRAMES], ["demo", *FRAMES, "--record", "r.jsonl", "--video", "v.gif"],
            ["replay", str(log), *FRAMES], ["saver", *FRAMES], ["saver", "--window", *FRAMES]]


@pytest.mark.parametrize("egl", [True, False], ids=["egl", "no-egl"])
@pytest.mark.parametrize("k", range(5))
def test_window_command_without_a_display_is_one_line(log, tmp_path, egl, k):
    argv = window_commands(log)[k]
    proc = abound(argv, tmp_path, egl=egl)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("abound: error: ")
    assert "--headless" in lines[0] and "xvfb-run" in lines[0]
    assert proc.stdout == ""
    assert list(tmp_path.iterdir()) == [], "something was written"


@pytest.mark.parametrize("k", range(5))
def test_headless_runs_without_a_display(log, tmp_path, k):
    argv = window_commands(log)[k] + ["--headless"]
    proc = abound(argv, tmp_path)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.skipif(shutil.which("xvfb-run") is None, reason="needs xvfb-run")
def test_a_display_is_used(log, tmp_path):
    for argv in (["demo", "drop", *FRAMES], ["replay", str(log), *FRAMES]):
        proc = abound(argv, tmp_path, wrap=["xvfb-run", "-a", "-s", "-screen 0 640x480x24"])
        assert proc.returncode == 0, proc.stderr


@pytest.mark.skipif(shutil.which("Xvfb") is None, reason="needs Xvfb")
def test_capture_says_when_it_starts_a_private_xvfb(tmp_path):
    proc = abound(["capture", "drop", "--frames", "2", "--size", "64x48", "--out", "frames"], tmp_path, egl=False)
    assert proc.returncode == 0, proc.stderr
    notes = proc.stderr.splitlines()
    assert len(notes) == 1 and notes[0].startswith("abound: note: ") and "Xvfb" in notes[0], proc.stderr
    assert sorted(p.name for p in (tmp_path / "frames").iterdir()) == ["frame_00000.png", "frame_00001.png"]
    # with EGL: nothing to say
    proc = abound(["capture", "drop", "--frames", "2", "--size", "64x48", "--out", "frames2"], tmp_path)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
