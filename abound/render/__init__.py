"""The renderer: draws a :class:`abound.Simulation` with OpenGL 3.3 (pyglet), reading its state only.

* :mod:`abound.render.style` - pure functions, no OpenGL (colours, the
  world-to-pixel transform, colour by speed); tests use them to compute the
  pixels they expect.
* :mod:`abound.render.context` - picks pyglet's platform (a display, headless
  EGL, or a private Xvfb) *before* pyglet's GL modules are imported, and checks
  that the context is OpenGL 3.3.
* :mod:`abound.render.renderer` - :class:`Renderer`: every ball as a point
  sprite in one draw call (anti-aliased signed-distance circles; balls too big
  for a sprite in a second, as triangles), walls, pinned pegs, trails; and
  :class:`Offscreen`, a framebuffer read back into numpy (what ``abound
  capture`` and the benchmarks use).
* :mod:`abound.render.bench` - ``abound bench --render``.

Importing this package imports no pyglet; the submodules that need OpenGL do.
"""
from abound.render.style import RenderError, RenderStyle

__all__ = ["RenderError", "RenderStyle"]
