"""``abound bench --render --balls N [--compare shapes]``: render-only milliseconds per frame, offscreen.

N balls move in straight lines and bounce off the box sides (numpy, not the
physics engine: only drawing is timed); their radii are chosen so that they
cover a quarter of the frame, as N non-overlapping balls of a real scene would
(about 2.7 px at 10,000 balls in 1280x720, 0.9 px at 100,000), with shading
on. Each timed frame is the upload of the state, the draw and ``glFinish`` (so
the GPU work - here llvmpipe's CPU rasteriser - is inside the time).
``--compare shapes`` draws the same balls with ``pyglet.shapes.Circle`` in one
batch (updating each circle's position from the state, as a pyglet.shapes
program must) in the same run, the two taking turns, and prints the ratio of
the medians.
"""
import json
import math
import statistics
import sys
import time

import numpy as np

from abound.scene.schema import MAX_BALLS

DEFAULT_BALLS = 10_000
SIZE = (1280, 720)
MAX_FRAMES = 60          # timed frames for abound's renderer
MAX_SHAPES_FRAMES = 10   # timed frames for pyglet.shapes (much slower)
WARMUP = 3
COVERAGE = 0.25          # fraction of the frame the balls cover (sets their radii)


class MovingBalls:
    """Just the state the renderer reads, moving ballistically (no collisions)."""

    def __init__(self, n, width, height, seed=1):
        rng = np.random.default_rng(seed)
        self.width, self.height = float(width), float(height)
        # sized so the balls cover about COVERAGE of the frame, as a scene of that
        # many non-overlapping balls must be: ~2.7 px at 10,000 in 1280x720, ~0.9 px at 100,000
        mean = math.sqrt(COVERAGE * width * height / (math.pi * n * 1.0533))  # E[u^2], u in 0.6..1.4
        mean = min(mean, min(width, height) / 3.0)  # (few balls in a thin frame: each must fit in it)
        self.radii = mean * rng.uniform(0.6, 1.4, n)
        self.positions = np.column_stack([rng.uniform(self.radii, width - self.radii),
                                          rng.uniform(self.radii, height - self.radii)])
        self.velocities = rng.uniform(-200.0, 200.0, (n, 2))
        palette = np.array([[0.90, 0.10, 0.29], [0.24, 0.71, 0.29], [1.00, 0.88, 0.10],
                            [0.26, 0.39, 0.85], [0.96, 0.51, 0.19], [0.57, 0.12, 0.71]])
        self.colors = np.column_stack([palette[rng.integers(0, len(palette), n)], np.ones(n)])
        self.modes = np.zeros(n, dtype=np.int8)
        self.walls = np.zeros((0, 4))
        self.scene = {"render": {"shading": True, "color_mode": "palette", "trails": 0.0}}

    def __len__(self):
        return len(self.radii)

    def step(self, dt=1.0 / 60.0):
        p, v, r = self.positions, self.velocities, self.radii
        p += v * dt
        for axis, size in ((0, self.width), (1, self.height)):
            low = p[:, axis] < r
            high = p[:, axis] > size - r
            v[low | high, axis] *= -1.0
            np.clip(p[:, axis], r, size - r, out=p[:, axis])


ROUNDS = 5  # the two renderers take turns, so both see the same load on a shared machine


def _timed(frame):
    """ms of one call of ``frame`` (it ends with glFinish, so the GPU's work is inside)."""
    t0 = time.perf_counter()
    frame()
    return (time.perf_counter() - t0) * 1000.0


class _Frames:
    """One timed frame per call: the balls move (untimed), then _draw (timed)."""

    def __init__(self, state, width, height):
        from pyglet import gl
        self.gl, self.state, self.size = gl, state, (width, height)

    def __call__(self):
        self.state.step()
        return _timed(self._draw)


class RendererFrames(_Frames):
    """abound's renderer drawing the moving balls into the window's framebuffer."""

    def __init__(self, state, width, height):
        from abound.render.renderer import Renderer
        super().__init__(state, width, height)
        self.renderer = Renderer()

    def _draw(self):
        self.renderer.draw(self.state, *self.size, 0)
        self.gl.glFinish()

    def close(self):
        self.renderer.delete()


class ShapesFrames(_Frames):
    """The same balls as pyglet.shapes.Circle in one batch, each moved to the state's position every frame."""

    def __init__(self, state, width, height):
        import pyglet
        super().__init__(state, width, height)
        self.batch = pyglet.graphics.Batch()
        cols = (state.colors[:, :3] * 255).astype(int)
        self.circles = [pyglet.shapes.Circle(float(x), float(y), float(r), color=tuple(int(c) for c in col),
                                             batch=self.batch)
                        for (x, y), r, col in zip(state.positions, state.radii, cols)]

    def _draw(self):
        gl = self.gl
        for c, (x, y) in zip(self.circles, self.state.positions.tolist()):
            c.position = (x, y)   # what a pyglet.shapes program must do to move its balls
        gl.glViewport(0, 0, *self.size)
        gl.glClearColor(0.06, 0.06, 0.09, 1.0)
        gl.glClear(gl.GL_COLOR_BUFFER_BIT)
        self.batch.draw()
        gl.glFinish()

    def close(self):
        for c in self.circles:
            c.delete()
        self.circles = []


def time_side_by_side(timers, frames):
    """Per-frame ms of each timer (a list each), taking turns in ROUNDS rounds after WARMUP frames each.

    frames: the number of timed frames of each timer, in the same order.
    """
    for t in timers:
        for _ in range(WARMUP):
            t()
    times = [[] for _ in timers]
    for k in range(ROUNDS):
        for t, out, total in zip(timers, times, frames):
            out.extend(t() for _ in range(total * (k + 1) // ROUNDS - total * k // ROUNDS))
    return times


def time_capture(state, frames, width, height):
    """ms per frame of what ``abound capture`` does per frame: draw offscreen and read back to numpy."""
    from abound.render.renderer import Offscreen, Renderer
    renderer, target = Renderer(), Offscreen(width, height)
    times = []
    for k in range(WARMUP + frames):
        state.step()
        t0 = time.perf_counter()
        renderer.draw(state, width, height, target.fbo.value)
        target.read()
        if k >= WARMUP:
            times.append((time.perf_counter() - t0) * 1000.0)
    target.delete()
    renderer.delete()
    return times


def measure(n, frames=MAX_FRAMES, compare=False, size=SIZE, shapes_frames=MAX_SHAPES_FRAMES):
    """{'balls', 'renderer_ms', 'shapes_ms', 'ratio', ...}: medians of render ms per frame.

    With ``compare``, abound's renderer and pyglet.shapes take turns in one run
    (each drawing its own copy of the same moving balls), so the ratio holds
    even when the machine's load changes during the run.
    """
    from abound.render.context import make_window
    width, height = size
    window = make_window(width, height, visible=False, vsync=False, headless=True, caption="abound bench")
    try:
        from pyglet import gl
        renderer_name = gl.gl_info.get_renderer()
        fw, fh = window.get_framebuffer_size()
        result = {"balls": n, "width": fw, "height": fh, "renderer": renderer_name, "frames": frames}
        timers = [RendererFrames(MovingBalls(n, fw, fh), fw, fh)]
        counts = [frames]
        if compare:
            timers.append(ShapesFrames(MovingBalls(n, fw, fh), fw, fh))
            counts.append(shapes_frames)
        try:
            times = time_side_by_side(timers, counts)
        finally:
            for t in timers:
                t.close()
        result["renderer_ms"] = statistics.median(times[0])
        if compare:
            result["shapes_frames"] = shapes_frames
            result["shapes_ms"] = statistics.median(times[1])
            result["ratio"] = result["shapes_ms"] / result["renderer_ms"]
        result["capture_ms"] = statistics.median(time_capture(MovingBalls(n, fw, fh), frames, fw, fh))
        result["capture_fps"] = 1000.0 / result["capture_ms"]
    finally:
        window.close()
    return result


def run(args):
    from abound.render.style import RenderError
    compare = getattr(args, "compare", None)
    if compare not in (None, "shapes"):
        print(f"abound: error: --render compares only with 'shapes', not {compare!r}", file=sys.stderr)
        return 2
    n = args.balls or DEFAULT_BALLS
    if n > MAX_BALLS:  # (as a scene's count: 10 million balls grew past 2.6 GB before a frame)
        print(f"abound: error: balls must be an integer <= {MAX_BALLS}, not {n}", file=sys.stderr)
        return 2
    size = tuple(int(v) for v in args.size) if getattr(args, "size", None) else SIZE
    frames = max(1, min(args.frames or MAX_FRAMES, MAX_FRAMES))
    try:
        r = measure(n, frames, compare == "shapes", size, min(frames, MAX_SHAPES_FRAMES))
    except RenderError as exc:
        print(f"abound: error: {exc}", file=sys.stderr)
        return 2
    if getattr(args, "json", False):
        print(json.dumps(r))
        return 0
    print(f"render benchmark: {r['balls']} moving balls, {r['width']}x{r['height']} offscreen, {r['renderer']}")
    print(f"abound renderer:    {r['renderer_ms']:8.2f} ms per frame (median of {r['frames']})")
    print(f"capture to memory:  {r['capture_ms']:8.2f} ms per frame = {r['capture_fps']:.0f} frames/s "
          f"(draw + read back into numpy)")
    if "shapes_ms" in r:
        print(f"pyglet.shapes:      {r['shapes_ms']:8.2f} ms per frame (median of {r['shapes_frames']})")
        print(f"ratio:              {r['ratio']:8.1f}x faster")
    return 0
