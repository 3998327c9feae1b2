"""Headless frame capture: render a scene to RGBA numpy arrays, no display needed.

    from abound.capture import render_frames
    for frame in render_frames("configs/drop.toml", frames=30, size=(320, 240)):
        ...  # (240, 320, 4) uint8, rows top-down

Frame 0 shows the scene as built (time 0); frame k shows it after
``k * every`` physics steps of the scene's fixed ``dt`` (the same steps the
demo window takes), so frame k is at time ``k * every * dt``.
:func:`render_replay` renders a run recorded with ``abound demo --record``:
frame k is the state the demo drew in its k-th frame. The scene's box
is scaled to fit the frame (aspect kept, centred); a frame of the box's own
size is drawn 1:1. The same scene and seed give bit-identical frames.

OpenGL comes from pyglet's headless mode (EGL); without EGL, a hidden window
on ``DISPLAY`` or on a private Xvfb; without either, a one-line
:class:`abound.render.RenderError` naming the package to install. This module
imports pyglet only inside its functions (``import abound.capture`` is cheap).
"""
import numpy as np

_window = None  # the hidden window whose GL context capture draws with (made once, reused)


def _context():
    """Make a GL 3.3 context current (a hidden 1x1 window, shared by every capture)."""
    global _window
    import pyglet  # noqa: F401  (checked below, after the platform is chosen)
    from abound.render.context import make_window
    if _window is None or getattr(_window, "_context", None) is None:
        _window = make_window(1, 1, visible=False, vsync=False, caption="abound capture", headless=True)
    _window.switch_to()
    return _window


def as_simulation(scene=None, seed=None):
    """A Simulation from a path, a shipped scene name, a dict, None (default scene) or a Simulation."""
    from abound import Simulation
    if isinstance(scene, Simulation):
        return scene
    return Simulation.from_config(scene, seed=seed)


def _pixels(size):
    """(width, height) as ints: whole numbers of pixels, at least 1 (32.5 was cut to 32 without a word)."""
    try:
        w, h = size
        ok = all(float(v) == int(v) >= 1 and not isinstance(v, bool) for v in (w, h))
    except (TypeError, ValueError, OverflowError):
        ok = False
    if not ok:
        raise ValueError(f"size must be two whole numbers of pixels, at least 1, not {size!r}")
    return int(w), int(h)


class FrameCapture:
    """Renders a Simulation's current state into an offscreen framebuffer and reads it back.

    The context, shaders and framebuffer are made once; :meth:`frame` is then
    one draw and one read. ``style``: a RenderStyle (default: the scene's).
    """

    def __init__(self, size=(640, 480), style=None):
        self.width, self.height = _pixels(size)
        _context()
        from abound.render.renderer import Offscreen, Renderer
        self.renderer = Renderer(style)
        self.target = Offscreen(self.width, self.height)

    def draw(self, sim, flash=None):
        """Draw ``sim`` now without reading it back (a frame's trails build on it);
        flash: (N,) 0..1 per ball (abound/hits.py), or None."""
        _context()
        self.renderer.draw(sim, self.width, self.height, self.target.fbo.value, flash=flash)

    def frame(self, sim, flash=None):
        """The picture of ``sim`` now: (H, W, 4) uint8 RGBA, rows top-down."""
        self.draw(sim, flash)
        return self.target.read()

    def close(self):
        if self.target is not None:
            _context()
            self.target.delete()
            self.renderer.delete()
            self.target = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def render_frames(scene=None, frames=60, size=(640, 480), every=1, *, seed=None, style=None):
    """Yield ``frames`` RGBA uint8 arrays (H, W, 4), rows top-down, of a scene as it runs.

    scene: a TOML path, a shipped scene name, a dict (parsed TOML), a
    :class:`abound.Simulation` (stepped in place) or None for the embedded
    default scene. Frame k is the state after ``k * every`` steps of the scene's
    dt; a Simulation given is in that state while the caller holds frame k
    (a test may compare the picture with ``sim.positions``: the next frame's
    steps wait for the next frame). seed overrides the scene's seeds (not for a
    Simulation). frames (>= 0) and every (>= 1): whole numbers (int), else ValueError.
    """
    from abound.simulation import Simulation
    for name, v, lo in (("frames", frames, 0), ("every", every, 1)):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)) or v < lo:
            raise ValueError(f"{name} must be a whole number >= {lo}, not {v!r}")
    _pixels(size)  # (before the scene is built)
    given = isinstance(scene, Simulation)
    sim = as_simulation(scene, seed)
    cap = FrameCapture(size, style)
    try:
        # (its own simulation, which no caller sees, steps beside the drawing)
        yield from stepped_frames(sim, cap, int(frames), int(every), ahead=not given)
    finally:
        cap.close()


def stepped_frames(sim, cap, frames, every, step=None, listeners=(), ahead=True):
    """Yield ``frames`` pictures from the FrameCapture ``cap``, ``sim`` stepped
    ``every`` times (its dt) between two (render_frames and ``abound capture``).
    step: what takes one step, ``step(contacts=False)`` returning StepStats
    (default ``sim.step``; ``abound capture`` passes a Warmup's,
    abound/warmup.py). listeners: called as ``listener(sim, contact_log,
    start)`` after each step, which then logs its contacts (a soundtrack's).
    With ``[render] flash`` the balls flash when hit (abound/hits.py).

    The next frame's steps run on a worker thread while this frame is drawn
    from a snapshot of the state (the compiled engine releases the GIL): the
    same states drawn, so the same pictures, in less time. Each picture is
    yielded once the next frame's steps are done (so while a caller looks at
    frame k, ``sim`` is already at frame k + 1's state; after the last frame
    nothing more is stepped, and a run ends where it always did). ahead
    False: each frame's steps run once the caller asks for the frame, so
    ``sim`` is at frame k's state while the caller holds frame k (the
    same pictures: render_frames of a Simulation the caller holds).

    With trails, the steps between two frames are drawn too, those whose
    trails still show: a frame then looks as the demo shows it (at 60
    frames per second it draws every step of 1/60 s), not with the faded
    ghost of the frame before. Those runs step and draw in turn.
    """
    from abound.control import heard_step
    from abound.hits import Hits
    style = cap.renderer.style_for(sim)
    trailing = style.trail_frames(every - 1)
    listeners = list(listeners)
    hits = Hits() if style.flash else None
    if hits is not None:
        listeners.append(hits.record)

    def one_step():
        heard_step(sim, listeners, step)

    def flash(state):
        return None if hits is None else hits.flash(state.time, len(state))

    if trailing or not ahead:
        for k in range(frames):
            if k:
                for s in range(every):
                    one_step()
                    if trailing and every - 1 - trailing <= s < every - 1:
                        cap.draw(sim, flash(sim))
            yield cap.frame(sim, flash(sim))
        return
    from abound.snapshot import Snapshot
    from abound.worker import Worker

    def steps():
        for _ in range(every):
            one_step()

    with Worker() as worker:
        for k in range(frames):
            shown = Snapshot(sim)
            shown.flash = flash(shown)
            pending = worker.submit(steps) if k + 1 < frames else None
            try:
                picture = cap.frame(shown, shown.flash)
            finally:
                if pending is not None:
                    pending.result()
            yield picture


def capture_frame(sim, size=None, style=None):
    """One frame of ``sim``'s current state (default size: the box's, rounded)."""
    from abound.render.style import box_frame
    size = size or box_frame(sim.width, sim.height)
    with FrameCapture(size, style) as cap:
        return cap.frame(sim)


def render_replay(log, size=None, frames=None, outcome=None):
    """Yield the frames of a recorded demo run: frame k is the state after its k-th drawn frame.

    log: a path or a checked :class:`abound.replay.ReplayLog`. size: frame
    size (default: the recorded window's). frames: at most that many.
    Rendered like the demo window draws them, so at the window's size the
    frames are bit-identical to the demo's; a bad log raises
    :class:`abound.replay.ReplayError` (one line) before anything is drawn.
    outcome: a dict that gets "matches" once every recorded frame has been
    yielded: whether the final state is bit-identical to the recorded one
    (None: the log was cut short and has none to compare).
    """
    from abound.render.style import RenderStyle
    from abound.replay import Replayer, read_replay
    from abound.warmup import note_if_cold
    if not hasattr(log, "header"):
        log = read_replay(log)
    replayer = Replayer(log)
    control = replayer.control
    note_if_cold(control.sim.backend)  # (the log's steps wait for the compiler: say so)
    style = RenderStyle.from_scene(control.sim.scene)
    cap = FrameCapture(size or log.window, style)
    hits = None
    if style.flash:  # the hits as the demo kept them (abound/hits.py)
        from abound.hits import Hits
        hits = Hits()
        control.listeners.append(hits.record)
    epoch = control.epoch
    try:
        k = 0
        while (frames is None or k < frames) and replayer.next_frame():
            if control.epoch != epoch:  # reset or resize: the trails start afresh, as in the demo
                cap.renderer.reset_trails()
                epoch = control.epoch
            sim = control.sim
            yield cap.frame(sim, None if hits is None else hits.flash(sim.time, len(sim)))
            k += 1
        if outcome is not None and k == log.frames:
            if not replayer.done:
                replayer.next_frame()  # (only the end record is left: read and compare it)
            outcome["matches"] = replayer.matches
    finally:
        cap.close()
