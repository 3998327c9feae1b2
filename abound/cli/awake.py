"""Keep the desktop's screensaver from blanking the screen while ``abound demo`` runs.

Someone watching the demo touches neither keyboard nor mouse, so the desktop
would count them idle. While the demo's window is open the desktop's
screensaver is inhibited, through the first of these that is present:

1. ``xdg-screensaver suspend WINDOW_ID`` (xdg-utils: it knows xscreensaver,
   GNOME, KDE, MATE, Xfce...), undone by ``xdg-screensaver resume WINDOW_ID``;
   it needs the window's X id, so not on Wayland.
2. The ``org.freedesktop.ScreenSaver.Inhibit`` D-Bus call on the session bus,
   through ``gdbus`` or ``dbus-send`` (no Python D-Bus library needed), undone
   by ``UnInhibit`` with the cookie it returned. As with xdg-screensaver,
   which makes the same call, a desktop that ends an inhibition when the
   caller's connection closes (these tools close theirs at once) ignores it.
3. Nothing, where neither is present (or there is no session bus).

The saver does none of this: it is the screensaver. The tools run as child
processes and are not waited for when the window opens, so the window never
waits on them; failures are silent (a demo that cannot hold the screensaver
off is still a demo).
"""
import os
import re
import shutil
import subprocess

BUS_NAME = "org.freedesktop.ScreenSaver"
OBJECT = "/org/freedesktop/ScreenSaver"
REASON = "abound demo is running"


def window_id(window):
    """The X window id of a pyglet window, or None (Wayland, headless, another platform)."""
    xid = getattr(window, "_window", None)
    return xid if isinstance(xid, int) and xid > 0 else None


def session_bus(environ):
    """Whether a D-Bus session bus can be reached (its address, or the usual socket)."""
    if environ.get("DBUS_SESSION_BUS_ADDRESS"):
        return True
    runtime = environ.get("XDG_RUNTIME_DIR")
    return bool(runtime) and os.path.exists(os.path.join(runtime, "bus"))


class KeepAwake:
    """Inhibits the desktop's screensaver from start() to stop(); ``how`` says by what
    ("xdg-screensaver", "gdbus", "dbus-send" or None)."""

    def __init__(self, xid, environ=None):
        self.xid = xid
        self.environ = os.environ if environ is None else environ
        self.how = None
        self.cookie = None
        self._procs = []

    def _which(self, name):
        return shutil.which(name, path=self.environ.get("PATH"))

    def _spawn(self, argv, **kw):
        try:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                    env=dict(self.environ), **kw)
        except OSError:
            return None
        self._procs.append(proc)
        return proc

    def start(self):
        """Inhibit by the first means present; returns self."""
        xdg = self._which("xdg-screensaver")
        if xdg and self.xid is not None:
            if self._spawn([xdg, "suspend", f"0x{self.xid:x}"], stdout=subprocess.DEVNULL):
                self.how = "xdg-screensaver"
            return self
        if not session_bus(self.environ):
            return self
        for tool in ("gdbus", "dbus-send"):
            path = self._which(tool)
            if path:
                self.how = tool
                self._inhibit = self._spawn(_inhibit_call(tool, path), stdout=subprocess.PIPE, text=True)
                return self
        return self

    def _cookie(self):
        """The Inhibit call's cookie (waits for its reply, at most 2 s), or None."""
        proc = getattr(self, "_inhibit", None)
        if proc is None:
            return None
        try:
            out, _ = proc.communicate(timeout=2.0)
        except subprocess.TimeoutExpired:
            proc.kill()
            return None
        m = re.search(r"uint32\s+(\d+)", out or "")
        return int(m.group(1)) if m else None

    def stop(self):
        """Let the screensaver run again."""
        if self.how == "xdg-screensaver":
            self._spawn([self._which("xdg-screensaver") or "xdg-screensaver", "resume", f"0x{self.xid:x}"],
                        stdout=subprocess.DEVNULL)
        elif self.how in ("gdbus", "dbus-send"):
            self.cookie = self._cookie()
            if self.cookie is not None:
                path = self._which(self.how) or self.how
                self._spawn(_uninhibit_call(self.how, path, self.cookie), stdout=subprocess.DEVNULL)
        for proc in self._procs:  # a moment for the undoing; never more (the demo is quitting)
            try:
                proc.wait(timeout=1.0)
            except subprocess.TimeoutExpired:
                pass
        self.how = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


def _inhibit_call(tool, path):
    if tool == "gdbus":
        return [path, "call", "--session", "--dest", BUS_NAME, "--object-path", OBJECT,
                "--method", f"{BUS_NAME}.Inhibit", "abound", REASON]
    return [path, "--session", f"--dest={BUS_NAME}", "--type=method_call", "--print-reply",
            "--reply-timeout=2000", OBJECT, f"{BUS_NAME}.Inhibit", "string:abound", f"string:{REASON}"]


def _uninhibit_call(tool, path, cookie):
    if tool == "gdbus":
        return [path, "call", "--session", "--dest", BUS_NAME, "--object-path", OBJECT,
                "--method", f"{BUS_NAME}.UnInhibit", str(cookie)]
    return [path, "--session", f"--dest={BUS_NAME}", "--type=method_call", OBJECT,
            f"{BUS_NAME}.UnInhibit", f"uint32:{cookie}"]
