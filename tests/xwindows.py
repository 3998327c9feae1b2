"""X windows of a test's own, as xscreensaver makes them for a hack, and their pixels.

A private Xvfb, windows made and destroyed through libX11 by ctypes (not
through abound or pyglet: the test plays the window's owner), and the
pixels of a window read back from the X server (XGetImage) and decoded here.
"""
import ctypes
import ctypes.util
import os
import shutil
import subprocess
import time

import numpy as np


def tools_missing():
    """Why these tests cannot run here, or None."""
    if shutil.which("Xvfb") is None:
        return "Xvfb is not installed (apt-get install xvfb)"
    if not ctypes.util.find_library("X11"):
        return "libX11 is not installed"
    return None


class Xvfb:
    """A private X server ``:N`` with one screen of ``size``; ``stop()`` ends it."""

    def __init__(self, size=(1280, 800)):
        for num in range(150, 200):
            if os.path.exists(f"/tmp/.X{num}-lock") or os.path.exists(f"/tmp/.X11-unix/X{num}"):
                continue
            proc = subprocess.Popen(["Xvfb", f":{num}", "-screen", "0", f"{size[0]}x{size[1]}x24",
                                     "-nolisten", "tcp"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for _ in range(100):
                if os.path.exists(f"/tmp/.X11-unix/X{num}") or proc.poll() is not None:
                    break
                time.sleep(0.05)
            if proc.poll() is None:
                self.proc, self.display = proc, f":{num}"
                return
        raise RuntimeError("cannot start Xvfb")

    def stop(self):
        self.proc.terminate()
        self.proc.wait(5)


class _X:
    """The few libX11 calls the tests need."""

    def __init__(self):
        x = ctypes.CDLL(ctypes.util.find_library("X11"))
        vp, ul, ui, i = ctypes.c_void_p, ctypes.c_ulong, ctypes.c_uint, ctypes.c_int
        for name, res, args in [
            ("XOpenDisplay", vp, [ctypes.c_char_p]), ("XCloseDisplay", i, [vp]),
            ("XDefaultRootWindow", ul, [vp]), ("XDefaultScreen", i, [vp]),
            ("XBlackPixel", ul, [vp, i]),
            ("XCreateSimpleWindow", ul, [vp, ul, i, i, ui, ui, ui, ul, ul]),
            ("XMapWindow", i, [vp, ul]), ("XDestroyWindow", i, [vp, ul]),
            ("XResizeWindow", i, [vp, ul, ui, ui]), ("XSync", i, [vp, i]),
        ]:
            f = getattr(x, name)
            f.restype, f.argtypes = res, args
        self.lib = x


class XWindow:
    """A mapped top-level window at (x, y) of size (w, h) on ``display``, black, owned by this process."""

    _x = None

    def __init__(self, display, x, y, w, h):
        if XWindow._x is None:
            XWindow._x = _X()
        lib = self._x.lib
        self.dpy = lib.XOpenDisplay(display.encode())
        if not self.dpy:
            raise RuntimeError(f"cannot open {display}")
        black = lib.XBlackPixel(self.dpy, lib.XDefaultScreen(self.dpy))
        self.id = lib.XCreateSimpleWindow(self.dpy, lib.XDefaultRootWindow(self.dpy), x, y, w, h, 0, black, black)
        lib.XMapWindow(self.dpy, self.id)
        lib.XSync(self.dpy, 0)
        self.size = (w, h)

    def resize(self, w, h):
        self._x.lib.XResizeWindow(self.dpy, self.id, w, h)
        self._x.lib.XSync(self.dpy, 0)
        self.size = (w, h)

    def destroy(self):
        if self.dpy:
            self._x.lib.XDestroyWindow(self.dpy, self.id)
            self._x.lib.XSync(self.dpy, 0)
            self._x.lib.XCloseDisplay(self.dpy)
            self.dpy = None


class _XImage(ctypes.Structure):
    _fields_ = [("width", ctypes.c_int), ("height", ctypes.c_int), ("xoffset", ctypes.c_int),
                ("format", ctypes.c_int), ("data", ctypes.c_void_p), ("byte_order", ctypes.c_int),
                ("bitmap_unit", ctypes.c_int), ("bitmap_bit_order", ctypes.c_int), ("bitmap_pad", ctypes.c_int),
                ("depth", ctypes.c_int), ("bytes_per_line", ctypes.c_int), ("bits_per_pixel", ctypes.c_int),
                ("red_mask", ctypes.c_ulong), ("green_mask", ctypes.c_ulong), ("blue_mask", ctypes.c_ulong)]


def grab(window):
    """The window's pixels as (H, W, 3) uint8 RGB, read from the X server (XGetImage, TrueColor)."""
    lib = window._x.lib
    lib.XGetImage.restype = ctypes.POINTER(_XImage)
    lib.XGetImage.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_int, ctypes.c_int, ctypes.c_uint,
                              ctypes.c_uint, ctypes.c_ulong, ctypes.c_int]
    lib.XDestroyImage.argtypes = [ctypes.POINTER(_XImage)]
    w, h = window.size
    ptr = lib.XGetImage(window.dpy, window.id, 0, 0, w, h, 0xFFFFFFFF, 2)  # AllPlanes, ZPixmap
    if not ptr:
        raise RuntimeError(f"XGetImage failed on window {window.id:#x}")
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
