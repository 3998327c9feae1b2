"""``abound demo`` holds the desktop's screensaver off while its window is open; the saver does not.

The real demo runs in a real window on a private Xvfb; the tools it calls are
fakes on its PATH (the only directory on it) that record their arguments. The
fake xdg-screensaver also asks the X server (xwininfo) about the window id it
was given, so the test sees that the id is the demo's own window, open at that
moment. The D-Bus fakes answer Inhibit with a cookie, as gdbus and dbus-send
print it; UnInhibit must give that cookie back.
"""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from xwindows import Xvfb, tools_missing

REPO = Path(__file__).resolve().parents[2]
pytest.importorskip("pyglet")


@pytest.fixture(scope="module")
def xserver():
    if tools_missing() or shutil.which("xwininfo") is None:
        pytest.skip(tools_missing() or "needs xwininfo (x11-utils)")
    server = Xvfb()
    yield server
    server.stop()


def fake(bin_dir, name, log, reply=""):
    """A script ``name`` in bin_dir that appends its arguments to log (and prints reply)."""
    script = bin_dir / name
    lines = ["#!/bin/sh", f'echo "{name} $*" >> "{log}"']
    if name == "xdg-screensaver":
        lines.append(f'{shutil.which("xwininfo")} -id "$2" >> "{log}" 2>&1')
    if reply:
        lines.append(f"echo '{reply}'")
    script.write_text("\n".join(lines) + "\n")
    script.chmod(0o755)


def run(xserver, tmp_path, argv, env=None):
    environ = {"DISPLAY": xserver.display, "PYTHONPATH": str(REPO), "PATH": str(tmp_path / "bin"),
               "HOME": os.environ.get("HOME", "/tmp")}
    for key in ("NUMBA_CACHE_DIR", "LANG"):
        if key in os.environ:
            environ[key] = os.environ[key]
    environ.update(env or {})
    proc = subprocess.run([sys.executable, "-m", "abound", *argv], env=environ, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    log = tmp_path / "log"
    return log.read_text().splitlines() if log.exists() else []


@pytest.fixture
def bin_dir(tmp_path):
    (tmp_path / "bin").mkdir()
    return tmp_path / "bin"


def test_xdg_screensaver_suspends_for_the_demos_window_then_resumes(xserver, tmp_path, bin_dir):
    log = tmp_path / "log"
    fake(bin_dir, "xdg-screensaver", log)
    fake(bin_dir, "gdbus", log)  # present too, but xdg-screensaver comes first
    lines = run(xserver, tmp_path, ["demo", "drop", "--frames", "30"],
                {"DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent"})
    at = [k for k, x in enumerate(lines) if x.startswith("xdg-screensaver")]
    calls = [lines[k].split() for k in at]
    assert [c[1] for c in calls] == ["suspend", "resume"], lines
    xid = calls[0][2]
    assert calls[1][2] == xid and int(xid, 16) > 0
    # at the suspend, that window existed and was the demo's (its title is "abound")
    said = [x for x in lines[at[0] + 1:at[1]] if "xwininfo: Window id" in x]
    assert said == [f'xwininfo: Window id: {xid} "abound"'], lines
    assert not any(x.startswith("gdbus") for x in lines)


@pytest.mark.parametrize("tool, reply", [("gdbus", "(uint32 4242,)"),
                                         ("dbus-send", "method return time=1 sender=:1.2\n   uint32 4242")])
def test_without_xdg_screensaver_the_dbus_inhibit_call(xserver, tmp_path, bin_dir, tool, reply):
    log = tmp_path / "log"
    fake(bin_dir, tool, log, reply)
    lines = run(xserver, tmp_path, ["demo", "drop", "--frames", "30"],
                {"DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent"})
    assert len(lines) == 2, lines
    inhibit, uninhibit = lines
    assert "org.freedesktop.ScreenSaver.Inhibit" in inhibit and "/org/freedesktop/ScreenSaver" in inhibit
    assert "org.freedesktop.ScreenSaver.UnInhibit" in uninhibit and "4242" in uninhibit.split()[-1]


def test_no_tool_or_no_session_bus_is_a_no_op(xserver, tmp_path, bin_dir):
    log = tmp_path / "log"
    fake(bin_dir, "gdbus", log, "(uint32 1,)")
    assert run(xserver, tmp_path, ["demo", "drop", "--frames", "10"]) == []  # no session bus
    (bin_dir / "gdbus").unlink()
    assert run(xserver, tmp_path, ["demo", "drop", "--frames", "10"],
               {"DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent"}) == []  # no tool


def test_the_saver_does_not_hold_the_screensaver_off(xserver, tmp_path, bin_dir):
    log = tmp_path / "log"
    fake(bin_dir, "xdg-screensaver", log)
    fake(bin_dir, "gdbus", log, "(uint32 1,)")
    assert run(xserver, tmp_path, ["saver", "drop", "--window", "--frames", "10"],
               {"DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent"}) == []
