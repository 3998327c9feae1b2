"""X windows of a test's own, as xscreensaver makes them for a hack, and their pixels.

A private Xvfb, windows made and destroyed through libX11 by ctypes (not
through abound or pyglet: the test plays the window's owner), and the
pixels of a window read back from the X server (XGetImage) and decoded here.
:data:`SCENE` is a still scene whose balls :func:`misplaced` looks for in a
window's pixels, where the scene's box fitted into the window puts them.
"""
import ctypes
import ctypes.util
import os
import select
import shutil
import subprocess
import time

import numpy as np

from abound.render.measure import centroid_and_radius


def tools_missing():
    """Why these tests cannot run here, or None."""
    if shutil.which("Xvfb") is None:
        return "Xvfb is not installed (apt-get install xvfb)"
    if not ctypes.util.find_library("X11"):
        return "libX11 is not installed"
    if not ctypes.util.find_library("GL"):
        return "libGL (GLX) is not installed (apt-get install libgl1 libglx-mesa0)"
    return None


class Xvfb:
    """A private X server ``:N`` with one screen of ``size`` (``args``: more of Xvfb's); ``stop()`` ends it."""

    def __init__(self, size=(1280, 800), args=()):
        # Xvfb picks a free display itself and writes its number to -displayfd once it
        # takes connections: picking one here (the first :N without a lock file) could
        # race with the other test worker or any X server starting.
        # -noreset: by default an X server resets when its last client leaves, and drops
        # a client that connects during the reset (xorg/xserver issue 1102). A test's
        # polls (xdotool, each a short connection of its own) leave as the program
        # under test connects: "Cannot connect to None" at the demo's start, once in a
        # clean-clone run. Four processes opening and closing the display 300 times
        # each: 58 of 1,200 refused with the default, none with -noreset (measured here).
        read, write = os.pipe()
        proc = subprocess.Popen(["Xvfb", "-displayfd", str(write), "-screen", "0", f"{size[0]}x{size[1]}x24",
                                 "-nolisten", "tcp", "-noreset", *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                pass_fds=(write,))
        os.close(write)
        said = b""
        deadline = time.monotonic() + 30.0
        try:
            while not said.endswith(b"\n") and time.monotonic() < deadline:
                if not select.select([read], [], [], 0.1)[0]:
                    if proc.poll() is not None:
                        break
                    continue
                chunk = os.read(read, 16)
                if not chunk:
                    break
                said += chunk
        finally:
            os.close(read)
        if not said.strip().isdigit() or proc.poll() is not None:
            if proc.poll() is None:
                proc.kill()
            raise RuntimeError(f"cannot start Xvfb (it said {said!r})")
        self.proc, self.display = proc, f":{int(said)}"

    def stop(self):
        self.proc.terminate()
        self.proc.wait(5)


def wait_for_window(env, name, owner, timeout=120.0):
    """The id of the first visible window whose name matches ``name`` (xdotool's
    regex) on ``env``'s DISPLAY, waiting up to ``timeout`` s for ``owner`` (the
    process that makes it) to map it. xdotool's own --sync wait exits 1 when a
    window it looks at vanishes under it (a busy machine, a window made and
    destroyed while it starts): such a look is taken again. An owner that
    exits first is an error naming its stderr."""
    deadline = time.monotonic() + timeout
    while True:
        if owner.poll() is not None:
            raise AssertionError(f"the process ended (status {owner.returncode}) before its window showed: "
                                 f"{owner.communicate()[1]}")
        found = subprocess.run(["xdotool", "search", "--onlyvisible", "--name", name], env=env,
                               capture_output=True, text=True, timeout=60)
        if found.returncode == 0 and found.stdout.split():
            return int(found.stdout.split()[0])
        if time.monotonic() > deadline:
            raise AssertionError(f"no visible window named {name!r} within {timeout:g} s: {found.stderr}")
        time.sleep(0.2)


class _XImage(ctypes.Structure):
    _fields_ = [("width", ctypes.c_int), ("height", ctypes.c_int), ("xoffset", ctypes.c_int),
                ("format", ctypes.c_int), ("data", ctypes.c_void_p), ("byte_order", ctypes.c_int),
                ("bitmap_unit", ctypes.c_int), ("bitmap_bit_order", ctypes.c_int), ("bitmap_pad", ctypes.c_int),
                ("depth", ctypes.c_int), ("bytes_per_line", ctypes.c_int), ("bits_per_pixel", ctypes.c_int),
                ("red_mask", ctypes.c_ulong), ("green_mask", ctypes.c_ulong), ("blue_mask", ctypes.c_ulong)]


_LIB = None
_ON_ERROR = None


def _lib():
    """libX11 with the few calls the tests make declared."""
    global _LIB
    if _LIB is None:
        x = ctypes.CDLL(ctypes.util.find_library("X11"))
        vp, ul, ui, i = ctypes.c_void_p, ctypes.c_ulong, ctypes.c_uint, ctypes.c_int
        pi, pu = ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_uint)
        for name, res, args in [
            ("XOpenDisplay", vp, [ctypes.c_char_p]), ("XCloseDisplay", i, [vp]),
            ("XDefaultRootWindow", ul, [vp]), ("XDefaultScreen", i, [vp]),
            ("XBlackPixel", ul, [vp, i]),
            ("XCreateSimpleWindow", ul, [vp, ul, i, i, ui, ui, ui, ul, ul]),
            ("XMapWindow", i, [vp, ul]), ("XDestroyWindow", i, [vp, ul]),
            ("XResizeWindow", i, [vp, ul, ui, ui]), ("XSync", i, [vp, i]),
            ("XGetGeometry", i, [vp, ul, ctypes.POINTER(ul), pi, pi, pu, pu, pu, pu]),
            ("XGetImage", ctypes.POINTER(_XImage), [vp, ul, i, i, ui, ui, ul, i]),
            ("XDestroyImage", i, [ctypes.POINTER(_XImage)]),
        ]:
            f = getattr(x, name)
            f.restype, f.argtypes = res, args
        # Xlib's default handler ends the process on an error (a window gone under us): report instead
        global _ON_ERROR
        _ON_ERROR = ctypes.CFUNCTYPE(i, vp, vp)(lambda dpy, event: 0)
        x.XSetErrorHandler.argtypes = [ctypes.c_void_p]
        x.XSetErrorHandler(ctypes.cast(_ON_ERROR, ctypes.c_void_p))
        _LIB = x
    return _LIB


class XWindow:
    """A mapped top-level window at (x, y) of size (w, h) on ``display``, black, owned by this process."""

    def __init__(self, display, x, y, w, h):
        lib = _lib()
        self.dpy = lib.XOpenDisplay(display.encode())
        if not self.dpy:
            raise RuntimeError(f"cannot open {display}")
        black = lib.XBlackPixel(self.dpy, lib.XDefaultScreen(self.dpy))
        self.id = lib.XCreateSimpleWindow(self.dpy, lib.XDefaultRootWindow(self.dpy), x, y, w, h, 0, black, black)
        lib.XMapWindow(self.dpy, self.id)
        lib.XSync(self.dpy, 0)
        self.size = (w, h)

    def resize(self, w, h):
        _lib().XResizeWindow(self.dpy, self.id, w, h)
        _lib().XSync(self.dpy, 0)
        self.size = (w, h)

    def destroy(self):
        if self.dpy:
            _lib().XDestroyWindow(self.dpy, self.id)
            _lib().XSync(self.dpy, 0)
            _lib().XCloseDisplay(self.dpy)
            self.dpy = None


def grab(window):
    """The pixels of an :class:`XWindow` as (H, W, 3) uint8 RGB."""
    return grab_id(window.dpy, window.id, window.size)


def grab_window(display, window_id):
    """The pixels of any window ``window_id`` on ``display`` (e.g. xscreensaver's), as (H, W, 3) uint8 RGB."""
    lib = _lib()
    dpy = lib.XOpenDisplay(display.encode())
    if not dpy:
        raise RuntimeError(f"cannot open {display}")
    try:
        u = [ctypes.c_uint() for _ in range(4)]
        i = [ctypes.c_int() for _ in range(2)]
        root = ctypes.c_ulong()
        if not lib.XGetGeometry(dpy, window_id, ctypes.byref(root), *map(ctypes.byref, i), *map(ctypes.byref, u)):
            raise RuntimeError(f"no window {window_id:#x}")
        return grab_id(dpy, window_id, (u[0].value, u[1].value))
    finally:
        lib.XCloseDisplay(dpy)


def grab_id(dpy, window_id, size):
    """The window's pixels as (H, W, 3) uint8 RGB, read from the X server (XGetImage, TrueColor)."""
    lib = _lib()
    w, h = size
    ptr = lib.XGetImage(dpy, window_id, 0, 0, w, h, 0xFFFFFFFF, 2)  # AllPlanes, ZPixmap
    if not ptr:
        raise RuntimeError(f"XGetImage failed on window {window_id:#x}")
    try:
        im = ptr.contents
        assert im.bits_per_pixel == 32, im.bits_per_pixel
        raw = ctypes.string_at(im.data, im.bytes_per_line * im.height)
        rows = np.frombuffer(raw, dtype=np.uint8).reshape(im.height, im.bytes_per_line)
        pixels = rows[:, :4 * im.width].copy().view("<u4" if im.byte_order == 0 else ">u4")
        out = np.empty((im.height, im.width, 3), dtype=np.uint8)
        for k, mask in enumerate((im.red_mask, im.green_mask, im.blue_mask)):
            shift = (mask & -mask).bit_length() - 1
            out[..., k] = ((pixels & mask) >> shift).astype(np.uint8)
        return out
    finally:
        lib.XDestroyImage(ptr)


# -- a still scene and where its balls must appear ----------------------------------------
BOX = (400.0, 300.0)
BACKGROUND = (0x20, 0x30, 0x40)
MARGIN_SHADE = 0.6  # README: a letterboxed box has darker margins
# (x, y, radius, colour): still balls, no gravity: the state never changes
BALLS = [(100.0, 80.0, 20.0, (255, 0, 0)), (300.0, 200.0, 30.0, (0, 255, 0)), (200.0, 250.0, 15.0, (0, 0, 255))]
SCENE = f"""
[world]
width = {BOX[0]}
height = {BOX[1]}
gravity = [0.0, 0.0]
[physics]
backend = "reference"
[render]
background = "#{BACKGROUND[0]:02x}{BACKGROUND[1]:02x}{BACKGROUND[2]:02x}"
shading = false
color_mode = "ball"
""" + "".join(f"""
[[balls]]
x = {x}
y = {y}
radius = {r}
color = "#{c[0]:02x}{c[1]:02x}{c[2]:02x}"
""" for x, y, r, c in BALLS)


def expected(size):
    """Each ball's (row, col) centroid and radius in a window of ``size``, and the box's pixel rectangle."""
    w, h = size
    s = min(w / BOX[0], h / BOX[1])
    ox, oy = (w - s * BOX[0]) / 2, (h - s * BOX[1]) / 2
    balls = [((h - (oy + s * y)) - 0.5, (ox + s * x) - 0.5, s * r, c) for x, y, r, c in BALLS]
    return balls, (ox, oy, s * BOX[0], s * BOX[1])


def misplaced(image, size):
    """What is not where the state puts it (empty when the picture is right)."""
    balls, (ox, oy, bw, bh) = expected(size)
    h = size[1]
    wrong = []
    bg = np.array(BACKGROUND) / 255.0
    for row, col, radius, color in balls:
        r = int(radius) + 4
        box = (int(row) - r, int(row) + r + 2, int(col) - r, int(col) + r + 2)
        centroid, found = centroid_and_radius(image, bg, np.array(color) / 255.0, box)
        if centroid is None or np.hypot(centroid[0] - row, centroid[1] - col) > 0.5 or abs(found - radius) > 0.5:
            wrong.append(f"ball {color}: expected centre ({row:.1f}, {col:.1f}) radius {radius:.1f}, "
                         f"found {centroid} radius {found:.2f}")
    inside = tuple(int(v) for v in image[int(h - oy - bh) + 2, int(ox) + 2])  # the box's top-left corner
    if inside != BACKGROUND:
        wrong.append(f"box corner {tuple(inside)} is not the background {BACKGROUND}")
    if ox >= 2 or oy >= 2:  # letterboxed: the top-left pixel is in a margin
        margin = tuple(int(v) for v in image[0, 0])
        want = tuple(int(round(v * MARGIN_SHADE)) for v in BACKGROUND)
        if max(abs(a - b) for a, b in zip(margin, want)) > 1:
            wrong.append(f"margin {margin} is not {want}")
    return wrong
