"""Getting an OpenGL 3.3 context from pyglet, with or without a display.

pyglet picks its window platform when ``pyglet.gl`` is first imported, so
:func:`choose_platform` must run before that: every module of abound that
needs OpenGL calls it first. The choice:

1. pyglet's GL already imported: keep whatever it chose;
2. ``headless`` asked for (or no ``DISPLAY``) and libEGL loads: pyglet's
   headless mode (EGL, no window system at all);
3. a ``DISPLAY``: normal (hidden, where asked) windows on it;
4. ``Xvfb`` on the PATH: start a private one and use it;
5. otherwise :class:`RenderError` naming the packages to install.

It also turns off pyglet's ``debug_gl`` (a ``glGetError`` after every GL
call) unless ``PYGLET_DEBUG_GL`` is set: the demo, saver, capture and bench
all get their context through here.
"""
import atexit
import ctypes
import ctypes.util
import os
import shutil
import subprocess
import sys
import time

from abound.render.style import RenderError

INSTALL_HINT = ("install EGL (Debian/Ubuntu: apt-get install libegl1 libegl-mesa0) "
                "or Xvfb (apt-get install xvfb), or run under a display")
GL_NEEDED = (3, 3)
_xvfb = None


def egl_available():
    """True if libEGL can be loaded (pyglet's headless mode needs it)."""
    for name in ("libEGL.so.1", ctypes.util.find_library("EGL")):
        if not name:
            continue
        try:
            ctypes.CDLL(name)
            return True
        except OSError:
            pass
    return False


def _start_xvfb():
    global _xvfb
    exe = shutil.which("Xvfb")
    if exe is None:
        return False
    for num in range(99, 140):
        if os.path.exists(f"/tmp/.X{num}-lock"):
            continue
        proc = subprocess.Popen([exe, f":{num}", "-screen", "0", "1920x1080x24", "-nolisten", "tcp"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(50):
            if os.path.exists(f"/tmp/.X11-unix/X{num}") or proc.poll() is not None:
                break
            time.sleep(0.05)
        if proc.poll() is None:
            _xvfb = proc
            atexit.register(proc.terminate)
            os.environ["DISPLAY"] = f":{num}"
            return True
    return False


def choose_platform(headless=None):
    """Set pyglet's platform before its GL is imported; returns "headless", "display" or "xvfb".

    headless: True to prefer EGL even with a display, False to want a real
    window, None (default) for EGL only when there is no DISPLAY.
    """
    import pyglet
    if "pyglet.gl" in sys.modules:
        return "headless" if pyglet.options["headless"] else "display"
    if "PYGLET_DEBUG_GL" not in os.environ:
        # pyglet checks glGetError after every GL call by default; that is for
        # debugging, and costs on every call of every frame (PYGLET_DEBUG_GL=1 restores it)
        pyglet.options["debug_gl"] = False
    if os.environ.get("ABOUND_HEADLESS") == "1":
        headless = True
    has_display = bool(os.environ.get("DISPLAY"))
    if (headless or not has_display) and egl_available():
        pyglet.options["headless"] = True
        pyglet.options["shadow_window"] = False
        return "headless"
    if has_display:
        return "display"
    if _start_xvfb():
        return "xvfb"
    raise RenderError(f"no display and no EGL for headless OpenGL: {INSTALL_HINT}")


def check_gl(context=None):
    """Raise :class:`RenderError` (one line) unless the current context is OpenGL 3.3 or newer."""
    import pyglet
    ctx = context or pyglet.gl.current_context
    info = ctx.get_info()
    if not info.have_version(*GL_NEEDED):
        raise RenderError(
            f"OpenGL {GL_NEEDED[0]}.{GL_NEEDED[1]} is needed, this machine offers "
            f"{info.get_version_string()} ({info.get_renderer()}); update the graphics driver "
            f"or install Mesa (apt-get install libgl1-mesa-dri)")


def make_window(width, height, *, visible=True, resizable=False, vsync=True, caption="abound",
                headless=None, fullscreen=False):
    """A pyglet window with an OpenGL 3.3 core context, or :class:`RenderError`."""
    choose_platform(headless)
    try:
        import pyglet
        config = pyglet.gl.Config(major_version=3, minor_version=3, forward_compatible=True,
                                  double_buffer=True, depth_size=0, red_size=8, green_size=8,
                                  blue_size=8, alpha_size=8)
        # pyglet's event loop turns the event queue off for good when it runs, after
        # which a new window dispatches its first resize before it is ready (an
        # AttributeError 'ubo'); queue events while the window is being made.
        queued = pyglet.window.Window._enable_event_queue
        pyglet.window.Window._enable_event_queue = True
        try:
            try:
                window = pyglet.window.Window(width, height, caption=caption, visible=visible,
                                              resizable=resizable, vsync=vsync, config=config,
                                              fullscreen=fullscreen)
            except pyglet.window.NoSuchConfigException:
                window = pyglet.window.Window(width, height, caption=caption, visible=visible,
                                              resizable=resizable, vsync=vsync, fullscreen=fullscreen)
        finally:
            pyglet.window.Window._enable_event_queue = queued
    except RenderError:
        raise
    except Exception as exc:  # no display, no GL driver, no EGL device...
        first = " ".join(str(exc).split()) or type(exc).__name__
        raise RenderError(f"cannot open an OpenGL window ({first}); {INSTALL_HINT}") from None
    check_gl(window.context)
    side = max_frame_side()
    if width > side or height > side:
        window.close()
        raise FrameTooLarge(width, height, side)
    return window


class FrameTooLarge(RenderError):
    """A window larger than this OpenGL can draw a frame of (max_frame_side)."""

    def __init__(self, width, height, side):
        super().__init__(f"a {width}x{height} window is larger than this OpenGL can draw "
                         f"(at most {side} px a side)")
        self.width, self.height, self.side = width, height, side


def max_frame_side():
    """The longest side (px) of a frame the current OpenGL context can draw: its
    largest renderbuffer (the demo draws exact frames into one, as capture does)
    and viewport. Mesa's llvmpipe: 16384."""
    from pyglet import gl
    buffer, viewport = gl.GLint(), (gl.GLint * 2)()
    gl.glGetIntegerv(gl.GL_MAX_RENDERBUFFER_SIZE, ctypes.byref(buffer))
    gl.glGetIntegerv(gl.GL_MAX_VIEWPORT_DIMS, viewport)
    return min(buffer.value, viewport[0], viewport[1])
