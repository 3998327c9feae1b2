"""The OpenGL renderer: all balls in one instanced draw call (a triangle each), walls as capsules, trails.

State goes to the GPU straight from the simulation's numpy arrays (a few
vectorised copies into float32 buffers, no per-ball Python loop). The renderer
reads the state only.
"""
import ctypes

import numpy as np

from abound.render.context import choose_platform, check_gl
from abound.render.style import (PEG_RING, PEG_RING_SHADE, WALL_HALF_WIDTH, RenderStyle,
                                 ball_colors, fit_transform)

choose_platform()
from pyglet import gl  # noqa: E402  (after the platform is chosen)
from pyglet.graphics.shader import Shader, ShaderProgram  # noqa: E402

PINNED = 3  # sim.modes value of a pinned ball
MARGIN_SHADE = 0.6  # colour factor of the margins when the box is letterboxed into the frame


def _box_rect(xform, world_w, world_h, width, height):
    """The box's pixel rectangle (x, y, w, h) when it does not fill the frame, else None."""
    s, ox, oy = xform
    x0, y0 = int(round(ox)), int(round(oy))
    x1, y1 = int(round(ox + s * world_w)), int(round(oy + s * world_h))
    if x0 <= 0 and y0 <= 0 and x1 >= width and y1 >= height:
        return None
    return (x0, y0, max(x1 - x0, 0), max(y1 - y0, 0))


def shader_source(name):
    """A GLSL file from the shipped ``shaders/`` (checkout or installed wheel)."""
    try:
        from abound.resources import shader_source as find
        return find(name)
    except ImportError:  # pragma: no cover - resources is part of abound
        from pathlib import Path
        return (Path(__file__).resolve().parents[2] / "shaders" / name).read_text()


def _program(vert, frag):
    return ShaderProgram(Shader(shader_source(vert), "vertex"), Shader(shader_source(frag), "fragment"))


class _Buffer:
    """A GL array buffer re-filled from a numpy array every frame."""

    def __init__(self):
        self.id = gl.GLuint()
        gl.glGenBuffers(1, ctypes.byref(self.id))

    def upload(self, array):
        array = np.ascontiguousarray(array)
        gl.glBindBuffer(gl.GL_ARRAY_BUFFER, self.id)
        gl.glBufferData(gl.GL_ARRAY_BUFFER, max(array.nbytes, 16),
                        array.ctypes.data_as(ctypes.c_void_p) if array.nbytes else None,
                        gl.GL_STREAM_DRAW)

    def delete(self):
        gl.glDeleteBuffers(1, ctypes.byref(self.id))


def _vertex_array(buffers_and_layouts):
    """A VAO with per-instance float attributes: [(buffer, location, components), ...]."""
    vao = gl.GLuint()
    gl.glGenVertexArrays(1, ctypes.byref(vao))
    gl.glBindVertexArray(vao)
    for buf, loc, comps in buffers_and_layouts:
        gl.glBindBuffer(gl.GL_ARRAY_BUFFER, buf.id)
        gl.glEnableVertexAttribArray(loc)
        gl.glVertexAttribPointer(loc, comps, gl.GL_FLOAT, gl.GL_FALSE, comps * 4, None)
        gl.glVertexAttribDivisor(loc, 1)
    gl.glBindVertexArray(0)
    return vao


class Renderer:
    """Draws a Simulation into the current framebuffer (or one given).

    ``style`` is a :class:`RenderStyle` (default: from ``sim.scene`` at the
    first draw). Needs a current OpenGL 3.3 context.
    """

    def __init__(self, style=None):
        check_gl()
        self.style = style
        self.balls_prog = _program("balls.vert", "balls.frag")
        self.walls_prog = _program("walls.vert", "walls.frag")
        self.fade_prog = _program("screen.vert", "fade.frag")
        self.copy_prog = _program("screen.vert", "copy.frag")
        self._ball_buf, self._color_buf, self._wall_buf = _Buffer(), _Buffer(), _Buffer()
        self._ball_vao = _vertex_array([(self._ball_buf, 0, 4), (self._color_buf, 1, 4)])
        self._wall_vao = _vertex_array([(self._wall_buf, 0, 4)])
        self._empty_vao = gl.GLuint()
        gl.glGenVertexArrays(1, ctypes.byref(self._empty_vao))
        self._inst = np.zeros((0, 4), dtype=np.float32)
        self._trail_fbo = None  # (fbo, texture, width, height)
        self._trail_fresh = True
        self.transform = (1.0, 0.0, 0.0)

    # -- state -> GPU ------------------------------------------------------------------
    def _upload(self, sim, style):
        n = len(sim)
        if len(self._inst) < n:
            self._inst = np.zeros((max(n, 2 * len(self._inst)), 4), dtype=np.float32)
        inst = self._inst[:n]
        inst[:, 0:2] = sim.positions
        inst[:, 2] = sim.radii
        inst[:, 3] = sim.modes == PINNED
        self._ball_buf.upload(inst)
        self._color_buf.upload(ball_colors(sim.colors, sim.velocities, style.color_mode))
        walls = sim.walls
        self._wall_buf.upload(np.asarray(walls, dtype=np.float32))
        return n, len(walls)

    # -- trails ------------------------------------------------------------------------
    def reset_trails(self):
        """Forget the accumulated trails (next frame starts from the background)."""
        self._trail_fresh = True

    def _trail_target(self, width, height):
        if self._trail_fbo is not None and self._trail_fbo[2:] == (width, height):
            return self._trail_fbo[0]
        self._delete_trails()
        tex = gl.GLuint()
        gl.glGenTextures(1, ctypes.byref(tex))
        gl.glBindTexture(gl.GL_TEXTURE_2D, tex)
        gl.glTexImage2D(gl.GL_TEXTURE_2D, 0, gl.GL_RGBA16F, width, height, 0, gl.GL_RGBA, gl.GL_FLOAT, None)
        gl.glTexParameteri(gl.GL_TEXTURE_2D, gl.GL_TEXTURE_MIN_FILTER, gl.GL_NEAREST)
        gl.glTexParameteri(gl.GL_TEXTURE_2D, gl.GL_TEXTURE_MAG_FILTER, gl.GL_NEAREST)
        gl.glBindTexture(gl.GL_TEXTURE_2D, 0)
        fbo = gl.GLuint()
        gl.glGenFramebuffers(1, ctypes.byref(fbo))
        gl.glBindFramebuffer(gl.GL_FRAMEBUFFER, fbo)
        gl.glFramebufferTexture2D(gl.GL_FRAMEBUFFER, gl.GL_COLOR_ATTACHMENT0, gl.GL_TEXTURE_2D, tex, 0)
        self._trail_fbo = (fbo, tex, width, height)
        self._trail_fresh = True
        return fbo

    def _delete_trails(self):
        if self._trail_fbo is not None:
            fbo, tex = self._trail_fbo[:2]
            gl.glDeleteFramebuffers(1, ctypes.byref(fbo))
            gl.glDeleteTextures(1, ctypes.byref(tex))
            self._trail_fbo = None

    # -- drawing -----------------------------------------------------------------------
    def draw(self, sim, width, height, framebuffer=0, style=None):
        """Draw ``sim`` into ``framebuffer`` (0: the window) of ``width`` x ``height`` pixels."""
        style = style or self.style or RenderStyle.from_scene(sim.scene)
        self.transform = xform = fit_transform(sim.width, sim.height, width, height)
        n, m = self._upload(sim, style)
        bg = style.background
        trails = style.trails > 0.0
        target = self._trail_target(width, height) if trails else framebuffer
        if not trails:
            self._delete_trails()
        gl.glBindFramebuffer(gl.GL_FRAMEBUFFER, target)
        gl.glViewport(0, 0, width, height)
        gl.glDisable(gl.GL_DEPTH_TEST)
        gl.glDisable(gl.GL_SCISSOR_TEST)
        gl.glEnable(gl.GL_BLEND)
        gl.glBlendFuncSeparate(gl.GL_SRC_ALPHA, gl.GL_ONE_MINUS_SRC_ALPHA, gl.GL_ONE, gl.GL_ONE_MINUS_SRC_ALPHA)
        box = _box_rect(xform, sim.width, sim.height, width, height)
        if not trails or self._trail_fresh:
            if box is not None:  # letterboxed: the margins a little darker than the box
                gl.glClearColor(bg[0] * MARGIN_SHADE, bg[1] * MARGIN_SHADE, bg[2] * MARGIN_SHADE, 1.0)
                gl.glClear(gl.GL_COLOR_BUFFER_BIT)
                gl.glEnable(gl.GL_SCISSOR_TEST)
                gl.glScissor(*box)
            gl.glClearColor(bg[0], bg[1], bg[2], 1.0)
            gl.glClear(gl.GL_COLOR_BUFFER_BIT)
            gl.glDisable(gl.GL_SCISSOR_TEST)
            self._trail_fresh = False
        else:
            if box is not None:
                gl.glEnable(gl.GL_SCISSOR_TEST)
                gl.glScissor(*box)
            self.fade_prog.use()
            self.fade_prog["u_color"] = (bg[0], bg[1], bg[2], 1.0 - style.trails)
            gl.glBindVertexArray(self._empty_vao)
            gl.glDrawArrays(gl.GL_TRIANGLES, 0, 3)
            gl.glDisable(gl.GL_SCISSOR_TEST)
        vp = (float(width), float(height))
        if m:
            p = self.walls_prog
            p.use()
            p["u_xform"] = xform
            p["u_viewport"] = vp
            p["u_half_width"] = WALL_HALF_WIDTH * xform[0]
            p["u_color"] = tuple(style.wall_color)
            gl.glBindVertexArray(self._wall_vao)
            gl.glDrawArraysInstanced(gl.GL_TRIANGLE_STRIP, 0, 4, m)
        if n:
            p = self.balls_prog
            p.use()
            p["u_xform"] = xform
            p["u_viewport"] = vp
            p["u_shading"] = bool(style.shading)
            p["u_peg_ring"] = PEG_RING * xform[0]
            p["u_peg_shade"] = PEG_RING_SHADE
            gl.glBindVertexArray(self._ball_vao)
            gl.glDrawArraysInstanced(gl.GL_TRIANGLES, 0, 3, n)  # every ball, one call
        if trails:
            gl.glBindFramebuffer(gl.GL_FRAMEBUFFER, framebuffer)
            gl.glViewport(0, 0, width, height)
            gl.glDisable(gl.GL_BLEND)
            p = self.copy_prog
            p.use()
            gl.glActiveTexture(gl.GL_TEXTURE0)
            gl.glBindTexture(gl.GL_TEXTURE_2D, self._trail_fbo[1])
            p["u_texture"] = 0
            gl.glBindVertexArray(self._empty_vao)
            gl.glDrawArrays(gl.GL_TRIANGLES, 0, 3)
            gl.glBindTexture(gl.GL_TEXTURE_2D, 0)
            gl.glEnable(gl.GL_BLEND)
        gl.glBindVertexArray(0)
        gl.glUseProgram(0)
        gl.glBindFramebuffer(gl.GL_FRAMEBUFFER, framebuffer)

    def delete(self):
        self._delete_trails()
        for b in (self._ball_buf, self._color_buf, self._wall_buf):
            b.delete()
        for v in (self._ball_vao, self._wall_vao, self._empty_vao):
            gl.glDeleteVertexArrays(1, ctypes.byref(v))


def read_pixels(width, height, framebuffer=0):
    """The framebuffer's pixels as an (H, W, 4) uint8 RGBA array, rows top-down."""
    out = np.empty((height, width, 4), dtype=np.uint8)
    gl.glBindFramebuffer(gl.GL_READ_FRAMEBUFFER, framebuffer)
    gl.glPixelStorei(gl.GL_PACK_ALIGNMENT, 1)
    gl.glReadPixels(0, 0, width, height, gl.GL_RGBA, gl.GL_UNSIGNED_BYTE, out.ctypes.data_as(ctypes.c_void_p))
    return out[::-1].copy()


class Offscreen:
    """An RGBA8 framebuffer of a fixed size to render into and read back."""

    def __init__(self, width, height):
        self.width, self.height = int(width), int(height)
        self.fbo, self.rbo = gl.GLuint(), gl.GLuint()
        gl.glGenRenderbuffers(1, ctypes.byref(self.rbo))
        gl.glBindRenderbuffer(gl.GL_RENDERBUFFER, self.rbo)
        gl.glRenderbufferStorage(gl.GL_RENDERBUFFER, gl.GL_RGBA8, self.width, self.height)
        gl.glGenFramebuffers(1, ctypes.byref(self.fbo))
        gl.glBindFramebuffer(gl.GL_FRAMEBUFFER, self.fbo)
        gl.glFramebufferRenderbuffer(gl.GL_FRAMEBUFFER, gl.GL_COLOR_ATTACHMENT0, gl.GL_RENDERBUFFER, self.rbo)
        status = gl.glCheckFramebufferStatus(gl.GL_FRAMEBUFFER)
        gl.glBindFramebuffer(gl.GL_FRAMEBUFFER, 0)
        if status != gl.GL_FRAMEBUFFER_COMPLETE:
            from abound.render.style import RenderError
            raise RenderError(f"cannot make a {self.width}x{self.height} offscreen framebuffer (status {status:#x})")

    def read(self):
        return read_pixels(self.width, self.height, self.fbo.value)

    def delete(self):
        gl.glDeleteFramebuffers(1, ctypes.byref(self.fbo))
        gl.glDeleteRenderbuffers(1, ctypes.byref(self.rbo))
