"""Pure, GL-free pieces of the renderer: colours, colour modes, the world-to-pixel transform.

Everything here is plain numpy so tests can compute the pixels they expect
independently of OpenGL. Conventions:

* world: pixels, y up, origin at the bottom-left corner of the box;
* image: continuous coordinates ``(u, v)`` with ``u`` to the right and ``v``
  down, pixel ``[row, col]`` covering ``[col, col + 1] x [row, row + 1]``
  (its centre at ``col + 0.5, row + 0.5``). So the coverage-weighted centroid
  of a drawn ball, in row/column *indices*, is ``world_to_image(...) - 0.5``.
"""
import math
from dataclasses import dataclass

import numpy as np

COLOR_MODES = ("palette", "speed", "ball")
SPEED_MAX = 1000.0  # px/s mapped to the hot end of the speed colour map
# colour map for color_mode = "speed": slow blue -> cyan -> green -> yellow -> fast red
SPEED_STOPS = np.array([0.0, 0.25, 0.5, 0.75, 1.0])
SPEED_COLORS = np.array([
    [0.17, 0.48, 0.71],
    [0.00, 0.65, 0.79],
    [0.56, 0.92, 0.62],
    [0.98, 0.82, 0.34],
    [0.84, 0.10, 0.11],
])
WALL_HALF_WIDTH = 1.5  # px, half the drawn thickness of an interior wall
PEG_RING = 2.0  # px, width of the darker ring drawn on pinned balls
PEG_RING_SHADE = 0.6  # the ring's colour is the ball's times this


class RenderError(RuntimeError):
    """The renderer cannot run here (no OpenGL 3.3, no display, no EGL...); the text is one line."""


def hex_rgba(color):
    """'#rrggbb' / '#rrggbbaa' / (r, g, b[, a]) in 0..1 -> a tuple of four floats in 0..1."""
    if isinstance(color, str):
        s = color.lstrip("#")
        if len(s) not in (6, 8):
            raise ValueError(f"colour {color!r} is not '#rrggbb' or '#rrggbbaa'")
        vals = [int(s[k:k + 2], 16) / 255.0 for k in range(0, len(s), 2)]
    else:
        vals = [float(c) for c in color]
    if len(vals) == 3:
        vals.append(1.0)
    return tuple(vals)


@dataclass(frozen=True)
class RenderStyle:
    """The ``[render]`` section of a scene, with defaults."""

    background: tuple = hex_rgba("#101018")
    color_mode: str = "palette"
    shading: bool = True
    trails: float = 0.0
    wall_color: tuple = hex_rgba("#c0c0c0")
    peg_color: tuple = hex_rgba("#909090")
    hud: bool = False
    flash: bool = False

    @classmethod
    def from_scene(cls, scene):
        """From a normalized scene dict (``sim.scene``), a ``[render]`` dict, or None."""
        if scene is None:
            return cls()
        r = scene.get("render", scene) if isinstance(scene, dict) else {}
        d = cls()
        mode = r.get("color_mode", d.color_mode)
        if mode not in COLOR_MODES:
            raise ValueError(f"color_mode {mode!r} is not one of {', '.join(COLOR_MODES)}")
        return cls(
            background=hex_rgba(r.get("background", d.background)),
            color_mode=mode,
            shading=bool(r.get("shading", d.shading)),
            trails=float(min(max(r.get("trails", d.trails), 0.0), 1.0)),
            wall_color=hex_rgba(r.get("wall_color", d.wall_color)),
            peg_color=hex_rgba(r.get("peg_color", d.peg_color)),
            hud=bool(r.get("hud", d.hud)),
            flash=bool(r.get("flash", d.flash)),
        )

    def trail_frames(self, most):
        """How many earlier frames still show in this frame's trails (at most ``most``).

        Each drawn frame keeps ``trails`` of the picture before it, so a
        frame drawn D frames ago shows at trails^D of its brightness: below
        half a level of 8 bits (1/510) it is gone.
        """
        if self.trails <= 0.0:
            return 0
        if self.trails >= 1.0:
            return most
        return min(most, math.ceil(math.log(1.0 / 510.0) / math.log(self.trails)))


def box_frame(world_w, world_h):
    """(w, h) px: the frame that shows a box of world_w x world_h px at scale 1,
    its sides rounded, at least 1 px (a box of 0.5 px would round to a window
    of none: pyglet divides by its width)."""
    return max(1, int(round(world_w))), max(1, int(round(world_h)))


def fit_within(width, height, side):
    """(w, h) px: a frame of width x height scaled down, aspect kept, to at most
    side px a side (itself if it fits), at least 1 px."""
    if width <= side and height <= side:
        return max(1, int(width)), max(1, int(height))
    if width >= height:  # (the long side exactly side: width * (side / width) may round below it)
        return side, max(1, int(height * side / width))
    return max(1, int(width * side / height)), side


def fit_transform(world_w, world_h, frame_w, frame_h):
    """(scale, ox, oy): the box scaled to fit the frame, aspect kept, centred.

    pixel_x = ox + scale * x and pixel_y_up = oy + scale * y. When the frame is
    the box size (the demo window and ``abound capture``), this is (1, 0, 0).
    """
    s = min(frame_w / world_w, frame_h / world_h)
    return (float(s), float(0.5 * (frame_w - s * world_w)), float(0.5 * (frame_h - s * world_h)))


def world_to_image(xy, transform, frame_h):
    """World points (..., 2), y up -> continuous image coordinates (u, v), v down (see module doc)."""
    xy = np.asarray(xy, dtype=float)
    s, ox, oy = transform
    u = ox + s * xy[..., 0]
    v = frame_h - (oy + s * xy[..., 1])
    return np.stack([u, v], axis=-1)


def image_to_world(uv, transform, frame_h):
    """Inverse of :func:`world_to_image` (e.g. a mouse position, y up, to the world)."""
    uv = np.asarray(uv, dtype=float)
    s, ox, oy = transform
    return np.stack([(uv[..., 0] - ox) / s, (frame_h - uv[..., 1] - oy) / s], axis=-1)


def speed_colors(velocities, vmax=SPEED_MAX):
    """RGBA (N, 4) float32 for color_mode = "speed": the colour map at |v| / vmax (clipped)."""
    v = np.asarray(velocities, dtype=float).reshape(-1, 2)
    t = np.clip(np.hypot(v[:, 0], v[:, 1]) / vmax, 0.0, 1.0)
    out = np.ones((len(v), 4), dtype=np.float32)
    for c in range(3):
        out[:, c] = np.interp(t, SPEED_STOPS, SPEED_COLORS[:, c])
    return out


def ball_colors(colors, velocities, mode, vmax=SPEED_MAX):
    """Per-ball RGBA (N, 4) float32 for a colour mode.

    "palette" and "ball" both draw each ball in its own state colour (the scene
    gives it from a ``palette`` list or an explicit ``color``); "speed" colours
    by speed. Pinned balls keep their own colour in every mode.
    """
    if mode == "speed":
        return speed_colors(velocities, vmax)
    if mode not in COLOR_MODES:
        raise ValueError(f"color_mode {mode!r} is not one of {', '.join(COLOR_MODES)}")
    return np.asarray(colors, dtype=np.float32).reshape(-1, 4)


def blend(background, color, coverage):
    """Expected pixel (0..1 RGB) of ``color`` over ``background`` at a coverage (alpha) 0..1."""
    bg = np.asarray(background, dtype=float)[:3]
    c = np.asarray(color, dtype=float)[..., :3]
    a = np.asarray(coverage, dtype=float)[..., None]
    return bg * (1.0 - a) + c * a


def parse_size(text):
    """'640x480' -> (640, 480) ints; raises ValueError with a one-line reason."""
    try:
        w, h = str(text).lower().split("x")
        w, h = int(w), int(h)
    except ValueError:
        raise ValueError(f"size must be WIDTHxHEIGHT in whole pixels, e.g. 640x480, not {text!r}") from None
    if w <= 0 or h <= 0 or w > 16384 or h > 16384:
        raise ValueError(f"size must be between 1x1 and 16384x16384, not {text!r}")
    return w, h
