"""Whether a window can be seen: the windowed commands (demo, replay, saver) need a display.

Without one, pyglet would still give them a context (EGL, or a private
Xvfb) and they would run for ever with nobody to see them; instead they stop
at once with one line saying what to do. ``--headless`` (or
``ABOUND_HEADLESS=1``) asks for the offscreen run on purpose. ``capture``
needs no display and says so when it starts a private X server
(:func:`private_xvfb_note`).
"""
import os

from abound.render.style import RenderError

NO_DISPLAY = ("no display to show the window on (DISPLAY and WAYLAND_DISPLAY are not set): "
              "add --headless to draw offscreen, or run it under a virtual X server with "
              "'xvfb-run -s \"-screen 0 1920x1080x24\" abound ...'")


def has_display():
    """True if a window opened now would be on a display someone can see (not a private Xvfb)."""
    from abound.render import context
    if getattr(context, "_xvfb", None) is not None:  # abound's own invisible X server
        return False
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def require_display(headless):
    """RenderError (one line) unless headless was asked for or there is a display."""
    if headless or os.environ.get("ABOUND_HEADLESS") == "1":
        return
    if not has_display():
        raise RenderError(NO_DISPLAY)


def private_xvfb_note():
    """The line to print when capture draws on a private Xvfb it started (else None)."""
    from abound.render import context
    xvfb = getattr(context, "_xvfb", None)
    if xvfb is None:
        return None
    return (f"abound: note: no EGL for headless OpenGL, so drawing on a private Xvfb "
            f"(DISPLAY={os.environ.get('DISPLAY', '?')}); apt-get install libegl1 libegl-mesa0 avoids it")
