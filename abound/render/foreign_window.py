"""Drawing into an X window another program made (xscreensaver's), through a GLX context of our own.

xscreensaver makes the window and hands its id to the hack (``-window-id ID``,
``$XSCREENSAVER_WINDOW``, ``-root``). pyglet only draws into windows it
creates, so :class:`ForeignWindow` makes an OpenGL 3.3 core context on that
XID with pyglet's own GLX classes (an fbconfig whose X visual is the
window's, a GLXWindow on the XID) and offers the few parts of a pyglet
Window that :class:`abound.cli.demo.DemoApp` and the saver use: its size,
``switch_to``, ``flip``, ``draw`` and event handlers. It listens to the
window's structure events (another client may): ``on_resize`` when its
owner resizes it, ``on_close`` when its owner destroys it. They arrive
through pyglet's own event loop, which also draws the window like one of
its own (it is in ``pyglet.app.windows``), so the renderer, the shaders and
``pyglet.app.run`` are the same as for a window of abound's.

The window is not abound's: abound never maps, moves, resizes or takes
input from it.
"""
import contextlib
import ctypes
import os
import sys
import time

from pyglet.event import EventDispatcher

from abound.render.context import check_gl, choose_platform
from abound.render.style import RenderError

MAX_WINDOW_ID = 0xFFFFFFFF  # X resource ids are 32-bit (29 bits used)
GRACE = 0.5  # s the event loop has to quit by itself once the window is destroyed


class NoWindow(RenderError):
    """The window to draw into does not exist (a wrong id, or its owner destroyed it already)."""


def parse_window_id(text):
    """An X window id written in decimal or ``0x`` hex (as xscreensaver writes it); ValueError otherwise."""
    word = str(text).strip()
    try:
        value = int(word, 16) if word.lower().startswith("0x") else int(word, 10)
    except ValueError:
        raise ValueError(f"not a window id (decimal or 0x hex): {text!r}") from None
    if not 0 < value <= MAX_WINDOW_ID:
        raise ValueError(f"not a window id (1 to {MAX_WINDOW_ID:#x}): {text!r}")
    return value


@contextlib.contextmanager
def _x_errors(x_display, errors):
    """Collect the error codes of the X errors the calls inside cause (pyglet's handler drops them)."""
    from pyglet.libs.x11 import xlib

    def handler(display, event):
        errors.append(event.contents.error_code)
        return 0

    callback = xlib.XErrorHandler(handler)
    previous = xlib.XSetErrorHandler(callback)
    try:
        yield
        xlib.XSync(x_display, False)
    finally:
        xlib.XSetErrorHandler(previous)


def _attributes(xlib, x, xid, listen=False):
    """The window's XWindowAttributes (selecting its structure events first if ``listen``), or RenderError."""
    attrs = xlib.XWindowAttributes()
    errors = []
    with _x_errors(x, errors):
        if listen:
            xlib.XSelectInput(x, xid, xlib.StructureNotifyMask)
        ok = xlib.XGetWindowAttributes(x, xid, ctypes.byref(attrs))
    if not ok or errors:
        raise NoWindow(f"there is no X window {xid:#x}")
    return attrs


def _has_glx(x):
    """True if libGL loads and the display ``x`` offers GLX (asked without pyglet.gl)."""
    import ctypes.util
    for name in ("libGL.so.1", ctypes.util.find_library("GL")):
        try:
            lib = ctypes.CDLL(name) if name else None
        except OSError:
            continue
        if lib is not None:
            query = lib.glXQueryExtension
            query.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int)]
            error, event = ctypes.c_int(), ctypes.c_int()
            return bool(query(ctypes.cast(x, ctypes.c_void_p), ctypes.byref(error), ctypes.byref(event)))
    return False


def _probe(xlib, xid):
    """The window's id (the root window's for None) once it is known to exist, or RenderError.

    On a connection of its own, without pyglet's display or GL (which would
    fix pyglet's platform to X before the saver knows it can draw there: a
    fallback to --headless would fail). It checks that the display has GLX.
    """
    display = os.environ.get("DISPLAY")
    if not display:
        raise RenderError("no X display ($DISPLAY is not set)")
    x = xlib.XOpenDisplay(None)
    if not x:
        raise RenderError(f"cannot open the X display {display!r}")
    try:
        xid = int(xid) if xid is not None else int(xlib.XDefaultRootWindow(x))
        _attributes(xlib, x, xid)
        if not _has_glx(x):
            raise RenderError(f"the X display {display!r} has no GLX extension")
        return xid
    finally:
        xlib.XCloseDisplay(x)


def watch_destruction(xid, grace=GRACE):
    """End the process ``grace`` seconds after the window ``xid`` is destroyed, if it still runs then.

    The event loop sees the destruction and quits cleanly within a frame;
    but a long physics step blocks it (the first one of a first run compiles
    the fast engine for tens of seconds), and a hack whose window is gone
    must be gone too. A daemon thread on an X connection of its own waits
    for the window's DestroyNotify (or finds the window gone already).
    """
    import select
    import threading
    from pyglet.libs.x11 import xlib

    x = xlib.XOpenDisplay(None)
    if not x:
        return None
    attrs = xlib.XWindowAttributes()
    errors = []
    with _x_errors(x, errors):
        xlib.XSelectInput(x, xid, xlib.StructureNotifyMask)
        alive = xlib.XGetWindowAttributes(x, xid, ctypes.byref(attrs)) and not errors

    event = xlib.XEvent()

    def destroyed():
        while xlib.XPending(x):
            xlib.XNextEvent(x, ctypes.byref(event))
            if event.type == xlib.DestroyNotify and event.xdestroywindow.window == xid:
                return True
        return False

    def wait():
        fd = xlib.XConnectionNumber(x)
        while alive and not destroyed():
            select.select([fd], [], [])
        time.sleep(grace)
        sys.stderr.flush()
        os._exit(0)

    thread = threading.Thread(target=wait, name=f"abound-watch-{xid:#x}", daemon=True)
    thread.start()
    return thread


class ForeignWindow(EventDispatcher):
    """An OpenGL 3.3 context on the X window ``xid`` (None: the root window), or :class:`RenderError`.

    ``width``, ``height`` follow the window; ``closed`` turns true when its
    owner destroys it (``on_close`` is dispatched then).
    """

    fullscreen = False

    def __init__(self, xid=None):
        from pyglet.libs.x11 import xlib
        self._xlib = xlib
        self.context = None
        self.closed = False
        xid = _probe(xlib, xid)  # before pyglet's display: a fallback to headless still works after a failure
        if choose_platform(headless=False) == "headless":
            raise RenderError("pyglet already draws headless (EGL) in this process")
        import pyglet
        from pyglet.display.xlib import XlibCanvas
        try:
            self.display = pyglet.display.get_display()
        except Exception as exc:  # pyglet's NoSuchDisplayException and the like
            raise RenderError(f"cannot open the X display {os.environ['DISPLAY']!r} ({exc})") from None
        x = self._x = self.display._display
        self.xid = xid
        # listen first: a window destroyed after its attributes are read is still noticed
        attrs = _attributes(xlib, x, xid, listen=True)
        self.width, self.height = int(attrs.width), int(attrs.height)
        visual = int(xlib.XVisualIDFromVisual(attrs.visual))
        self.canvas = XlibCanvas(self.display, self.xid)
        self.context = self._make_context(visual)
        self.display._window_map[self.xid] = self._on_x_event
        self._make_projection()
        pyglet.app.windows.add(self)
        watch_destruction(self.xid)

    def _make_context(self, visual):
        import pyglet
        from pyglet.gl import glx
        template = pyglet.gl.Config(major_version=3, minor_version=3, forward_compatible=True)
        try:
            configs = [c for c in template.match(self.canvas) if c.get_visual_info().visualid == visual]
        except Exception as exc:  # no GLX on this display
            raise RenderError(f"no GLX on this X display ({' '.join(str(exc).split()) or type(exc).__name__})") \
                from None
        if not configs:
            raise RenderError(f"no OpenGL 3.3 configuration for the window's X visual {visual:#x}")
        configs.sort(key=lambda c: not getattr(c, "double_buffer", 0))  # double-buffered first
        errors = []
        context = None
        try:
            with _x_errors(self._x, errors):
                context = configs[0].create_context(None)
                context.attach(self.canvas)  # a GLXWindow on the XID, made current
            current = glx.glXGetCurrentContext()
            if errors or not current or ctypes.cast(current, ctypes.c_void_p).value != \
                    ctypes.cast(context.glx_context, ctypes.c_void_p).value:
                raise RenderError(f"cannot make an OpenGL context current on X window {self.xid:#x}")
        except RenderError:
            if context is not None:
                context.destroy()
            raise
        except Exception as exc:  # pyglet's ContextException: no 3.3 core context here
            if context is not None:
                context.destroy()
            raise RenderError(f"cannot make an OpenGL 3.3 context ({' '.join(str(exc).split())})") from None
        self.double_buffered = bool(getattr(configs[0], "double_buffer", 0))
        try:
            check_gl(context)
        except RenderError:
            context.destroy()
            raise
        return context

    def _make_projection(self):
        """pyglet's default shaders (text) read a ``WindowBlock`` that a pyglet Window keeps: keep one too."""
        from pyglet.graphics import shader
        from pyglet.window import Window
        self._program = shader.ShaderProgram(shader.Shader(Window._default_vertex_source, "vertex"),
                                             shader.Shader(Window._default_fragment_source, "fragment"))
        self.ubo = self._program.uniform_blocks["WindowBlock"].create_ubo()
        self._set_projection()

    def _set_projection(self):
        from pyglet.math import Mat4
        with self.ubo as block:
            block.view[:] = Mat4()
            block.projection[:] = Mat4.orthogonal_projection(0, self.width, 0, self.height, -8192, 8192)

    # -- events from the window's owner ------------------------------------------------
    def _on_x_event(self, event):
        xlib = self._xlib
        kind = event.type
        if kind == xlib.ConfigureNotify:
            w, h = int(event.xconfigure.width), int(event.xconfigure.height)
            if (w, h) != (self.width, self.height) and w > 0 and h > 0:
                self.width, self.height = w, h
                self.switch_to()
                self._set_projection()
                self.dispatch_event("on_resize", w, h)
        elif kind == xlib.DestroyNotify and event.xdestroywindow.window == self.xid:
            self.closed = True
            self.dispatch_event("on_close")

    # -- the parts of pyglet's Window that abound uses ---------------------------------
    def get_size(self):
        return self.width, self.height

    def get_framebuffer_size(self):
        return self.width, self.height

    def switch_to(self):
        if self.context is not None and not self.closed:
            self.context.set_current()

    def flip(self):
        if self.context is None or self.closed:
            return
        if self.double_buffered:
            self.context.flip()
        else:
            from pyglet import gl
            gl.glFlush()

    def draw(self, dt):
        """What pyglet's event loop calls each frame: draw and show (nothing once the window is gone)."""
        if self.closed:
            return
        self.switch_to()
        self.dispatch_event("on_draw")
        self.dispatch_event("on_refresh", dt)
        self.flip()

    def dispatch_pending_events(self):
        pass

    def set_mouse_visible(self, visible=True):
        pass  # the pointer over the window is its owner's business

    def set_fullscreen(self, fullscreen=True, screen=None):
        pass  # its owner decides the size

    def close(self):
        """Let go of the window (it stays its owner's): the GL context, the event routing."""
        import pyglet
        pyglet.app.windows.discard(self)
        self.display._window_map.pop(self.xid, None)
        if self.context is not None:
            if not self.closed:
                self._xlib.XSelectInput(self._x, self.xid, 0)
            self.context.destroy()
            self.context = None
            self._xlib.XFlush(self._x)


# the events DemoApp and SaverApp handle (only on_resize and on_close ever come from the window's owner)
for _name in ("on_draw", "on_refresh", "on_resize", "on_close", "on_key_press", "on_text", "on_mouse_press",
              "on_mouse_release", "on_mouse_motion", "on_mouse_drag"):
    ForeignWindow.register_event_type(_name)
