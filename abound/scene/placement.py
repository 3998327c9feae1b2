"""Placing random balls without overlap: random sequential addition on a grid.

Each ball gets up to ``ATTEMPTS`` uniformly random positions in its region;
the first that overlaps nothing already there (balls, pegs, wall segments)
wins. A ball that finds no place stops the group: the scene is too dense for
this method (random sequential addition jams at about 55 % area coverage for
equal discs), and we say how many balls did fit.

Small bodies live in a uniform grid whose cell is the largest spawned
diameter, so a candidate only looks at the 3 x 3 cells around it; bodies
larger than that (big explicit balls) are checked one by one, and each wall
segment is registered in the cells around points half a cell apart along
it (a ball within half a cell of it lies in a cell next to one of those).
A wall longer than MAX_SEGMENT_CELLS such points is checked against every
ball instead: a wall across a large box with balls a pixel wide would be
filed under millions of cells (its bounding box's cells, as it was: a
4,000 px diagonal took 6 s and 1 GB to check, a 10,000 px one 6 GB).
"""
import itertools
import math

import numpy as np

ATTEMPTS = 300
CHUNK = 256  # balls whose candidates are drawn at once
MAX_SEGMENT_CELLS = 4096  # points along a wall filed in the grid; a longer wall is checked against every ball


class Placer:
    def __init__(self, cell):
        self.cell = float(cell)
        self.grid = {}      # (i, j) -> list of (x, y, r)
        self.big = []       # (x, y, r) with r > cell / 2
        self.seg_cells = {}  # (i, j) -> list of (x0, y0, x1, y1)
        self.long_segs = []  # (x0, y0, x1, y1) longer than MAX_SEGMENT_CELLS half cells

    def _key(self, x, y):
        c = self.cell
        return int(math.floor(x / c)), int(math.floor(y / c))

    def add_ball(self, x, y, r):
        if r > self.cell / 2:
            self.big.append((x, y, r))
        else:
            self.grid.setdefault(self._key(x, y), []).append((x, y, r))

    def add_segment(self, x0, y0, x1, y1):
        seg = (x0, y0, x1, y1)
        # points at most half a cell apart: the nearest to a ball within half a cell
        # of the wall is within 3/4 of a cell of it, so in one of its 3 x 3 cells
        n = math.ceil(2.0 * math.hypot(x1 - x0, y1 - y0) / self.cell)
        if n > MAX_SEGMENT_CELLS:
            self.long_segs.append(seg)
            return
        cells = set()
        for k in range(n + 1):
            t = k / n if n else 0.0
            i, j = self._key(x0 + t * (x1 - x0), y0 + t * (y1 - y0))
            cells.update((i + di, j + dj) for di in (-1, 0, 1) for dj in (-1, 0, 1))
        for key in cells:
            self.seg_cells.setdefault(key, []).append(seg)

    def free(self, x, y, r):
        """True when a ball (x, y, r) overlaps nothing placed so far (r <= cell / 2)."""
        i, j = self._key(x, y)
        grid = self.grid
        for di in (-1, 0, 1):
            for dj in (-1, 0, 1):
                for (bx, by, br) in grid.get((i + di, j + dj), ()):
                    s = r + br
                    dx, dy = x - bx, y - by
                    if dx * dx + dy * dy < s * s:
                        return False
        for (bx, by, br) in self.big:
            s = r + br
            dx, dy = x - bx, y - by
            if dx * dx + dy * dy < s * s:
                return False
        for (x0, y0, x1, y1) in itertools.chain(self.seg_cells.get((i, j), ()), self.long_segs):
            ex, ey = x1 - x0, y1 - y0
            u = ((x - x0) * ex + (y - y0) * ey) / (ex * ex + ey * ey)
            u = 0.0 if u < 0.0 else (1.0 if u > 1.0 else u)
            dx, dy = x - (x0 + u * ex), y - (y0 + u * ey)
            if dx * dx + dy * dy < r * r:
                return False
        return True

    def place(self, rng, radii, bounds):
        """Place balls of the given radii (in order) inside bounds (x0, y0, x1, y1).

        Returns a list of (x, y) for the balls placed; it is shorter than radii
        when a ball found no free spot in ATTEMPTS tries (then we stop).
        """
        bx0, by0, bx1, by1 = bounds
        radii = np.asarray(radii, dtype=float)
        lox, hix, loy, hiy = bx0 + radii, bx1 - radii, by0 + radii, by1 - radii
        fits = (lox <= hix) & (loy <= hiy)
        n = len(radii) if fits.all() else int(np.argmin(fits))  # we stop at the first that cannot fit
        out = []
        for start in range(0, n, CHUNK):
            # the candidates of CHUNK balls drawn at once: the same numbers, in
            # the same order, as one draw of ATTEMPTS per ball (the cost was the draws)
            s = slice(start, min(start + CHUNK, n))
            u = rng.random((s.stop - s.start, ATTEMPTS, 2))
            xs = lox[s, None] + u[:, :, 0] * (hix[s] - lox[s])[:, None]
            ys = loy[s, None] + u[:, :, 1] * (hiy[s] - loy[s])[:, None]
            for b, r in enumerate(radii[s].tolist()):
                for k in range(ATTEMPTS):
                    x, y = float(xs[b, k]), float(ys[b, k])
                    if self.free(x, y, r):
                        out.append((x, y))
                        self.add_ball(x, y, r)
                        break
                else:
                    return out
        return out
