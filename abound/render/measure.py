"""Measuring balls in captured frames (GL-free): for tests of the renderer and of users' scenes.

A pixel of a ball of colour ``c`` over the background ``b`` is
``b + a (c - b)`` where ``a`` is the ball's coverage of that pixel, so ``a``
can be read back from the frame (:func:`coverage`); its weighted centroid and
total give the ball's drawn centre and radius (:func:`centroid_and_radius`),
to compare with :func:`abound.render.style.world_to_image`.
"""
import math

import numpy as np

from abound.render.style import hex_rgba


def coverage(frame, background, color, box=None):
    """Per-pixel coverage (H, W) float of a flat-coloured ball over a flat background.

    frame: (H, W, 3 or 4) uint8; background, color: '#rrggbb' or RGB(A) in
    0..1, as everywhere else; box: (row0, row1, col0, col1) to look at only
    part of the frame. The ball must be drawn flat: a style with
    ``shading=False`` (the default style shades it, darker at the rim).
    """
    img = np.asarray(frame, dtype=float)[..., :3] / 255.0
    if box is not None:
        r0, r1, c0, c1 = box
        img = img[max(r0, 0):r1, max(c0, 0):c1]
    b = np.asarray(hex_rgba(background), dtype=float)[:3]
    c = np.asarray(hex_rgba(color), dtype=float)[:3]
    d = c - b
    a = (img - b) @ d / float(d @ d)
    return np.clip(a, 0.0, 1.0)


def centroid_and_radius(frame, background, color, box=None):
    """((row, col) coverage-weighted centroid in pixel indices, radius from the area).

    Pixel indices: a ball centred at image point (u, v) (see
    :func:`abound.render.style.world_to_image`) has its centroid at
    ``(v - 0.5, u - 0.5)``.
    """
    a = coverage(frame, background, color, box)
    total = a.sum()
    if total <= 0:
        return None, 0.0
    rows, cols = np.indices(a.shape)
    r0 = max(box[0], 0) if box is not None else 0
    c0 = max(box[2], 0) if box is not None else 0
    centroid = (float((a * rows).sum() / total) + r0, float((a * cols).sum() / total) + c0)
    return centroid, math.sqrt(total / math.pi)
