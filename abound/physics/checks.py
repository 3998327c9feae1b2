"""Invariant measures used by tests, benchmarks and ``abound bench`` (numpy, O(N^2) in blocks)."""
import numpy as np

from abound.physics.world import BOX_WALLS, PINNED


def max_relative_overlap(sim):
    """Largest overlap divided by the smaller radius, over ball pairs, ball-wall pairs and the box."""
    w = sim._world
    n = w.n
    pos, r = w.pos[:n], w.radius[:n]
    worst = 0.0
    if n == 0:
        return worst
    # the box
    box = np.stack([pos[:, 0] - r, w.width - pos[:, 0] - r, pos[:, 1] - r, w.height - pos[:, 1] - r], 1)
    free = w.mode[:n] != PINNED
    if free.any():
        worst = max(worst, float(np.max(-box[free] / r[free, None])))
    # segments (faces and end points)
    for k in range(BOX_WALLS, w.nwalls):
        p0, p1 = w.wall_p0[k], w.wall_p1[k]
        d = p1 - p0
        u = np.clip(((pos - p0) @ d) / (d @ d), 0.0, 1.0)
        closest = p0 + u[:, None] * d
        dist = np.hypot(*(pos - closest).T)
        worst = max(worst, float(np.max((r - dist)[free] / r[free], initial=0.0)))
    # ball pairs, in blocks to bound memory
    block = 2048
    for a in range(0, n, block):
        pa, ra = pos[a:a + block], r[a:a + block]
        diff = pa[:, None, :] - pos[None, :, :]
        dist = np.sqrt(np.einsum("ijk,ijk->ij", diff, diff))
        overlap = (ra[:, None] + r[None, :] - dist) / np.minimum(ra[:, None], r[None, :])
        idx = np.arange(a, min(a + block, n))
        overlap[np.arange(len(idx)), idx] = -np.inf
        both_pinned = (~free[a:a + block])[:, None] & (~free)[None, :]
        overlap[both_pinned] = -np.inf
        worst = max(worst, float(np.max(overlap)))
    return max(worst, 0.0)
