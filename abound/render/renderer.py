"""The OpenGL renderer: balls as point sprites (one draw call), walls as capsules, trails.

Every ball is a GL_POINTS sprite shaded as an anti-aliased signed-distance
circle (``shaders/balls.vert`` with POINT_SPRITE, ``balls.frag``): one vertex per ball and
no instancing, which a software rasteriser (llvmpipe) runs about twice as fast as
instanced triangles. A point sprite has a size limit (GL_POINT_SIZE_RANGE,
255 px on llvmpipe) and GL drops a whole point whose centre is off the frame,
so the few balls bigger than that, or centred off the frame, are drawn by a
second call, one instanced triangle each (the same shaders without POINT_SPRITE).

State goes to the GPU straight from the simulation's numpy arrays: one
interleaved float32 array (x, y, radius, flags, r, g, b, a per ball) filled by
a few vectorised copies into a buffer reused from frame to frame, no per-ball
Python loop. The renderer reads the state only.
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
# per-ball flags in the interleaved array (a float: the shaders read it as one)
FLAG_PINNED = 1.0
FLAG_TRIANGLE = 2.0  # drawn by the triangle path, skipped by the point sprites
BALL_FLOATS = 8      # x, y, radius, flags, r, g, b, a
EDGE_MARGIN = 1.0    # px: a ball centred closer than this to the frame's edge takes the triangle path
HOLE_RADIUS = 8.0    # px (world): the least a black hole is drawn, whatever its horizon
HOLE_COLOR = (0.42, 0.16, 0.62, 1.0)  # a black hole's disc (ringed as a pinned ball)


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


def _program(vert, frag, defines=()):
    """A linked program; ``defines`` are names #defined in both shaders (after their #version line)."""
    def source(name):
        text = shader_source(name)
        if not defines:
            return text
        version, rest = text.split("\n", 1)
        return "\n".join([version] + [f"#define {d}" for d in defines] + [rest])
    return ShaderProgram(Shader(source(vert), "vertex"), Shader(source(frag), "fragment"))


def max_point_size():
    """The largest point sprite (px) the current context draws."""
    limits = (gl.GLfloat * 2)()
    gl.glGetFloatv(gl.GL_POINT_SIZE_RANGE, limits)
    return float(limits[1])


def triangle_path(positions, radii, xform, width, height, max_size):
    """Indices of the balls a point sprite cannot draw (None when there are none).

    Those whose sprite (2 r + 1 px) would exceed ``max_size``, and those
    centred within EDGE_MARGIN of the frame's edge or beyond it, since GL drops
    a point whose centre is outside the frame (a ball half off the frame would
    vanish). The whole-array extremes are checked first: usually none.
    """
    s, ox, oy = xform
    if not len(radii):
        return None
    r_max = (max_size - 1.0) / 2.0 / s   # world radius of the largest sprite
    x_lo, y_lo = (EDGE_MARGIN - ox) / s, (EDGE_MARGIN - oy) / s
    x_hi, y_hi = (width - EDGE_MARGIN - ox) / s, (height - EDGE_MARGIN - oy) / s
    x, y = positions[:, 0], positions[:, 1]  # per column: a reduction along axis 0 is 50x slower
    if (radii.max() <= r_max and x.min() > x_lo and x.max() < x_hi
            and y.min() > y_lo and y.max() < y_hi):
        return None
    return np.flatnonzero((radii > r_max) | (x <= x_lo) | (x >= x_hi) | (y <= y_lo) | (y >= y_hi))


class _Buffer:
    """A GL array buffer re-filled from a numpy array every frame.

    Its storage is kept while the data fits: each frame orphans it (so a GPU
    still reading last frame's data never stalls us) and copies the new data in.
    """

    def __init__(self):
        self.id = gl.GLuint()
        gl.glGenBuffers(1, ctypes.byref(self.id))
        self.capacity = 0

    def upload(self, array):
        gl.glBindBuffer(gl.GL_ARRAY_BUFFER, self.id)
        if array.nbytes > self.capacity:
            self.capacity = max(array.nbytes, 2 * self.capacity, 256)
        gl.glBufferData(gl.GL_ARRAY_BUFFER, self.capacity, None, gl.GL_STREAM_DRAW)
        if array.nbytes:
            gl.glBufferSubData(gl.GL_ARRAY_BUFFER, 0, array.nbytes, array.ctypes.data_as(ctypes.c_void_p))

    def delete(self):
        gl.glDeleteBuffers(1, ctypes.byref(self.id))


def _vertex_array(buf, layout, instanced):
    """A VAO reading float attributes from one interleaved buffer: layout = [(location, components), ...]."""
    vao = gl.GLuint()
    gl.glGenVertexArrays(1, ctypes.byref(vao))
    gl.glBindVertexArray(vao)
    gl.glBindBuffer(gl.GL_ARRAY_BUFFER, buf.id)
    stride = 4 * sum(comps for _, comps in layout)
    offset = 0
    for loc, comps in layout:
        gl.glEnableVertexAttribArray(loc)
        gl.glVertexAttribPointer(loc, comps, gl.GL_FLOAT, gl.GL_FALSE, stride, ctypes.c_void_p(offset))
        gl.glVertexAttribDivisor(loc, 1 if instanced else 0)
        offset += 4 * comps
    gl.glBindVertexArray(0)
    return vao


BALL_LAYOUT = [(0, 4), (1, 4)]  # a_ball (x, y, radius, flags), a_color


class Renderer:
    """Draws a Simulation into the current framebuffer (or one given).

    ``style`` is a :class:`RenderStyle` (default: from ``sim.scene`` at the
    first draw). Needs a current OpenGL 3.3 context.
    """

    def __init__(self, style=None):
        check_gl()
        self.style = style
        self._ball_programs = {}  # (point sprites?, shading?) -> program, made when first needed
        self.walls_prog = _program("walls.vert", "walls.frag")
        self.fade_prog = _program("screen.vert", "fade.frag")
        self._point_buf, self._tri_buf, self._wall_buf = _Buffer(), _Buffer(), _Buffer()
        self._point_vao = _vertex_array(self._point_buf, BALL_LAYOUT, instanced=False)
        self._tri_vao = _vertex_array(self._tri_buf, BALL_LAYOUT, instanced=True)
        self._wall_vao = _vertex_array(self._wall_buf, [(0, 4)], instanced=True)
        self.max_point_size = max_point_size()
        self._empty_vao = gl.GLuint()
        gl.glGenVertexArrays(1, ctypes.byref(self._empty_vao))
        self._balls = np.zeros((0, BALL_FLOATS), dtype=np.float32)
        self._trail_fbo = None  # (fbo, texture, width, height)
        self._trail_fresh = True
        self.transform = (1.0, 0.0, 0.0)

    # -- state -> GPU ------------------------------------------------------------------
    def _upload(self, sim, style, width, height, flash=None):
        """Fill the ball and wall buffers; returns (balls, triangle-path balls, walls).
        flash: (N,) 0..1, how far each ball's colour goes to white (``[render] flash``).
        Black holes (``sim.black_holes``) are drawn after the balls, as ringed discs of
        their horizon (at least HOLE_RADIUS px)."""
        k = len(sim)
        holes = getattr(sim, "black_holes", ())
        n = k + len(holes)
        if len(self._balls) < n:
            self._balls = np.zeros((max(n, 2 * len(self._balls)), BALL_FLOATS), dtype=np.float32)
        balls = self._balls[:n]
        balls[:k, 0:2] = sim.positions
        balls[:k, 2] = sim.radii
        np.multiply(sim.modes == PINNED, FLAG_PINNED, out=balls[:k, 3])
        balls[:k, 4:8] = ball_colors(sim.colors, sim.velocities, style.color_mode)
        if flash is not None and len(flash) == k:
            rgb = balls[:k, 4:7]
            rgb += (1.0 - rgb) * flash[:, None].astype(np.float32)
        for i, hole in enumerate(holes, k):
            balls[i] = (hole.x, hole.y, max(hole.horizon, HOLE_RADIUS), FLAG_PINNED) + HOLE_COLOR
        positions, radii = sim.positions, sim.radii
        if holes:
            positions = np.vstack([positions, [(h.x, h.y) for h in holes]])
            radii = np.concatenate([radii, balls[k:, 2]])
        big = triangle_path(positions, radii, self.transform, width, height, self.max_point_size)
        n_big = 0
        if big is not None and len(big):
            balls[big, 3] += FLAG_TRIANGLE
            self._tri_buf.upload(balls[big])
            n_big = len(big)
        self._point_buf.upload(balls)
        walls = sim.walls
        self._wall_buf.upload(np.ascontiguousarray(walls, dtype=np.float32))
        return n, n_big, len(walls)

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
    def style_for(self, sim, style=None):
        """The style ``sim`` is drawn in: ``style``, else the renderer's, else the scene's."""
        return style or self.style or RenderStyle.from_scene(sim.scene)

    def draw(self, sim, width, height, framebuffer=0, style=None, flash=None):
        """Draw ``sim`` into ``framebuffer`` (0: the window) of ``width`` x ``height`` pixels;
        flash: (N,) 0..1 per ball, its colour taken that far to white (abound/hits.py)."""
        style = self.style_for(sim, style)
        self.transform = xform = fit_transform(sim.width, sim.height, width, height)
        n, n_big, m = self._upload(sim, style, width, height, flash)
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
            gl.glEnable(gl.GL_PROGRAM_POINT_SIZE)
            self._use_ball_program(True, xform, vp, style)
            gl.glBindVertexArray(self._point_vao)
            gl.glDrawArrays(gl.GL_POINTS, 0, n)  # every ball, one call (those flagged for triangles skip it)
            gl.glDisable(gl.GL_PROGRAM_POINT_SIZE)  # leave pyglet's own drawing (the HUD) as it was
        if n_big:
            self._use_ball_program(False, xform, vp, style)
            gl.glBindVertexArray(self._tri_vao)
            gl.glDrawArraysInstanced(gl.GL_TRIANGLES, 0, 3, n_big)
        if trails:  # the accumulated picture to the target (a blit: cheaper than a full-frame shader pass)
            gl.glBindFramebuffer(gl.GL_READ_FRAMEBUFFER, target)
            gl.glBindFramebuffer(gl.GL_DRAW_FRAMEBUFFER, framebuffer)
            gl.glBlitFramebuffer(0, 0, width, height, 0, 0, width, height, gl.GL_COLOR_BUFFER_BIT, gl.GL_NEAREST)
        gl.glBindVertexArray(0)
        gl.glUseProgram(0)
        gl.glBindFramebuffer(gl.GL_FRAMEBUFFER, framebuffer)

    def _use_ball_program(self, points, xform, viewport, style):
        # the path and shading are compiled in or out: a software rasteriser runs
        # both sides of a branch on a uniform, so flat discs would pay for the shading too
        key = (points, bool(style.shading))
        p = self._ball_programs.get(key)
        if p is None:
            defines = ("POINT_SPRITE",) * points + ("SHADING",) * key[1]
            p = self._ball_programs[key] = _program("balls.vert", "balls.frag", defines)
        p.use()
        p["u_xform"] = xform
        p["u_viewport"] = viewport
        p["u_peg_ring"] = PEG_RING * xform[0]
        p["u_peg_shade"] = PEG_RING_SHADE

    def delete(self):
        self._delete_trails()
        for b in (self._point_buf, self._tri_buf, self._wall_buf):
            b.delete()
        for v in (self._point_vao, self._tri_vao, self._wall_vao, self._empty_vao):
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
