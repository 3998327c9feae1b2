"""``abound demo [SCENE]``: a resizable window running a scene, with keyboard and mouse controls.

The physics takes fixed steps of the scene's dt, decoupled from the drawing
rate: each frame runs as many steps as the elapsed time calls for, no more
than fit into the frame (:mod:`abound.pacing`: a machine too slow for real
time shows slow motion, and the HUD says how slow). The steps run on a worker
thread while the main thread draws the frame before them from a snapshot
(``pipelined``), or before the drawing, whichever gives more frames a second
on this machine (:class:`abound.pacing.LoopChooser` times both now and then;
the states are the same either way); recording a replay or a video, and
replaying, always run them before the drawing, so each drawn frame is the
state the log or the video holds. Frames are drawn straight into the window,
or, where the exact frame is wanted (recording, screenshots, headless runs and
their tests), into an offscreen framebuffer copied to the window,
bit-identical to the frame ``abound capture`` draws of the same state. A scene
with walls, pegs or explicit balls is a fixed picture
(:func:`abound.scene.fixed_picture`): the window shows it scaled to fit,
centred, aspect kept (the renderer's transform, the one ``abound capture``
uses), whatever the window's size or fullscreen. A scene of only random balls
fills the window instead: its box is the window, and resizing the window moves
the box's sides (``sim.resize``). :class:`DemoApp` holds the window and turns
keys and mouse gestures into actions on an :class:`abound.control.Controller`,
the one place inputs change the simulation; tests build one headless and call
its handlers directly. ``--record FILE`` writes those actions to a replay log
(:mod:`abound.replay`); ``abound replay`` runs the same window driven by a log
instead of the user.

Controls: Space pause, Right arrow single step (while paused), R reset,
Left/Right tilt the box 15 degrees (balls slide left/right), Up/Down make
gravity stronger/weaker, G flip it, B cycle backend, T switch the ball time-of-impact method, + / - add /
remove a ball, left-drag fling a new ball, right-click pin / unpin the ball
under the cursor, middle-click a black hole, H heads-up display, M sound, F fullscreen, S save a PNG
screenshot, Esc or Q quit.
"""
import contextlib
import os
import signal
import sys
import threading
import time

import numpy as np

from abound.control import BACKENDS, GRAVITY_FACTOR, TILT_DEGREES, Controller
from abound.cli.args import count, file_name, image_size
from abound.cli.outputs import (
    VIDEO, VideoWriter, add_force, check_distinct, check_file, finish_video,
)
from abound.pacing import MAX_STEPS_PER_FRAME, Pacer
FLING_GAIN = 4.0       # velocity (px/s) per pixel of drag
HEX_PACKING = 0.9069   # pi / (2 sqrt 3): the most of a plane equal discs can cover

# the controls, as ``abound demo --help`` lists them (docs/demo.md's table says the same, in more words)
KEYS = [
    ("Space", "pause / resume"),
    ("Right arrow", "one step (while paused)"),
    ("Left / Right arrow", "tilt the box 15 degrees: balls slide left / right (Right, paused: a step)"),
    ("Up / Down arrow", "gravity 1.25 times stronger / weaker"),
    ("G", "flip gravity"),
    ("R", "reset to the starting state"),
    ("B", "cycle the physics backend"),
    ("T", "switch the ball time-of-impact method"),
    ("+ / -", "add a ball / remove the last one (held: repeats)"),
    ("left-drag", "fling a new ball (velocity 4 x the drag)"),
    ("right-click", "pin / unpin the ball under the cursor"),
    ("middle-click", "a black hole at the cursor, or the one there taken away"),
    ("H", "heads-up display"),
    ("M", "sound on / off: a click per contact (also --sound)"),
    ("F", "fullscreen"),
    ("S", "save a PNG screenshot in the current directory"),
    ("Esc / Q", "quit"),
]


def add_arguments(parser):
    import argparse
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    width = max(len(k) for k, _ in KEYS)
    parser.epilog = ("keys and mouse in the window:\n"
                     + "\n".join(f"  {k:<{width}}  {what}" for k, what in KEYS)
                     + "\n\nA scene with walls, pegs or explicit balls is drawn scaled to fit the window;"
                       "\na scene of random balls only fills it (its box is the window). See docs/demo.md.")
    parser.add_argument("scene", nargs="?", metavar="SCENE",
                        help="scene file or shipped scene name (default: the embedded default scene)")
    parser.add_argument("--frames", type=count(1), metavar="N", help="quit after N frames (for tests)")
    parser.add_argument("--size", type=image_size, metavar="WxH", help="window size (default: the scene's box)")
    parser.add_argument("--balls", type=count(1), metavar="N", help="total number of random ([[spawn]]) balls")
    parser.add_argument("--backend", choices=("auto",) + BACKENDS, help="physics backend (default: the scene's)")
    parser.add_argument("--seed", type=count(0), metavar="S", help="override the scene's seeds")
    parser.add_argument("--record", type=file_name, metavar="FILE",
                        help="record the run (scene, seed and your inputs) to a replay log for 'abound replay'")
    parser.add_argument("--video", type=file_name, metavar="FILE",
                        help="record the window's frames to a video (.mp4, needs ffmpeg) or a .gif")
    add_force(parser, "the --record and --video files")
    parser.add_argument("--sound", action="store_true",
                        help="click at every contact, louder with its impulse, lower for bigger balls "
                             "(M switches it; silent where there is no audio device)")
    parser.add_argument("--headless", action="store_true",
                        help="draw offscreen (EGL) with no display, e.g. with --frames for a smoke test")


class FrameRate:
    """Frames per second, counted over half a second or more (the HUD's, the saver's --fps)."""

    def __init__(self):
        self.fps = 0.0
        self._frames, self._t0 = 0, time.perf_counter()

    def frame(self):
        """Count a drawn frame; returns the rate."""
        self._frames += 1
        now = time.perf_counter()
        if now - self._t0 >= 0.5:
            self.fps = self._frames / (now - self._t0)
            self._frames, self._t0 = 0, now
        return self.fps


def _save_png_new(image, path):
    """Save image as a PNG at path, or with -2, -3, ... before its suffix: the first name no
    file has, taken with an exclusive create so that two demos saving at once never write
    one file. Screenshots are named by the second; several in one second overwrote one
    another, and an old one. Returns the path written."""
    k = 1
    candidate = path
    while True:
        try:
            f = open(candidate, "xb")  # (fails on a dangling link too: the save would write through it)
        except FileExistsError:
            k += 1
            candidate = path.with_name(f"{path.stem}-{k}{path.suffix}")
            continue
        try:
            with f:
                image.save(f, format="PNG")
            return candidate
        except OSError as exc:  # (a full disk: no partial PNG is left; the message names it)
            os.remove(candidate)
            exc.filename = str(candidate)
            raise


class DemoApp:
    """The demo window and its controls around one Simulation.

    sim: the Simulation to run (its state at construction is what R resets
    to). size: window size (default: the box). headless: draw with EGL and no
    display. frames: quit after that many drawn frames. record: path of a
    replay log to write (source: the command-line overrides to note in it).
    video: path of a .gif or .mp4 of the drawn frames. replay: an
    :class:`abound.replay.Replayer` to show instead of taking the user's
    inputs (its controller's simulation is shown; sim is then ignored; keys
    only quit). window: a window to draw into instead of opening one (the
    saver's :class:`abound.render.foreign_window.ForeignWindow`).
    box_follows_window: whether resizing the window resizes the box (default:
    unless the scene is a fixed picture, see the module doc); otherwise the
    box keeps its size and the picture is scaled to fit the window.
    pipelined: True to step on a worker thread beside the drawing, False
    before it, None (default) for whichever is faster here (a LoopChooser),
    except when recording, replaying or writing a video (then before it).
    exact: draw through the offscreen framebuffer (default: when headless, recording or writing a
    video). interval: the display's frame interval (s), the pacing's budget.
    """

    def __init__(self, sim=None, size=None, *, headless=None, visible=True, vsync=True, frames=None,
                 record=None, source=None, video=None, replay=None, screenshot_dir=".", window=None,
                 box_follows_window=None, pipelined=None, exact=None, interval=1.0 / 60.0, sound=False,
                 refill=False):
        from abound.cli.display import require_display
        from abound.render.context import make_window
        from abound.render.style import RenderStyle
        require_display(headless)  # a window nobody can see would run for ever
        self.replay = replay
        self.headless = bool(headless)
        self.control = replay.control if replay is not None else Controller(sim)
        sim = self.control.sim
        if replay is not None:
            size = replay.log.window
        from abound.render.style import box_frame
        w, h = size or box_frame(sim.width, sim.height)
        if video:
            check_file(video, "--video", VIDEO, force=True)  # the format (and ffmpeg) before a window opens
        if box_follows_window is None:  # random balls fill the window; a fixed picture is fitted into it
            from abound.scene import fixed_picture
            box_follows_window = not fixed_picture(sim.scene)
        self.box_follows_window = bool(box_follows_window)
        self._said_crowded = False  # on_resize said the box cannot hold its balls
        if window is None:
            from abound.render.context import FrameTooLarge

            def opened(w, h):
                return make_window(w, h, visible=visible, resizable=True, vsync=vsync, caption="abound",
                                   headless=headless)
            try:
                window = opened(w, h)
            except FrameTooLarge as too_large:
                if size:  # (asked for: said, not changed)
                    raise
                # the scene's own box, as its window: the largest window of its shape instead
                from abound.render.style import fit_within
                w, h = fit_within(w, h, too_large.side)
                shown = "follows a" if self.box_follows_window else "is shown scaled in a"
                print(f"abound: note: the scene's {too_large.width}x{too_large.height} px box {shown} "
                      f"{w}x{h} window (this OpenGL draws at most {too_large.side} px a side)", file=sys.stderr)
                window = opened(w, h)
        else:
            w, h = window.get_size()
        self.window = window
        import pyglet
        from abound.render.renderer import Renderer
        self.pyglet = pyglet
        self.style = RenderStyle.from_scene(sim.scene)
        self.renderer = Renderer(self.style)
        self.show_hud = self.style.hud
        self.max_frames = frames
        self.closing = False
        self.stopped_by = None  # the signal (Ctrl-C: SIGINT) that ended the run, if one did
        self._running = False
        self.frames = 0
        self.screenshot_dir = screenshot_dir
        recording = bool(record or video or replay is not None)
        self.exact = (recording or self.headless) if exact is None else bool(exact)
        from abound.pacing import LoopChooser
        self.chooser = LoopChooser() if pipelined is None and not recording else None
        self.pacer = Pacer(sim.dt, interval)
        self._set_pipelined(not recording if pipelined is None else bool(pipelined))
        self.after_steps = None  # called as after_steps(sim, steps) where the steps ran (the saver's)
        self._shown = None  # the Snapshot drawn while the worker steps on
        from abound.cli.audio import ContactSound
        self.sound = ContactSound(self.control)  # the contacts' clicks, while on (M, --sound)
        if sound:
            self.sound.set(True)
        self.hits = None  # each ball's last hit, with [render] flash (abound/hits.py)
        if self.style.flash:
            from abound.hits import Hits
            self.hits = Hits()
            self.control.listeners.append(self.hits.record)
        self.drag = None  # (x0, y0, x, y) window pixels while left-dragging
        self.stats = {"fps": 0.0, "physics_ms": 0.0, "render_ms": 0.0, "contacts": 0, "steps": 0}
        self._rate = FrameRate()
        self._epoch = self.control.epoch  # the controller's epoch the trails belong to
        self._hud = pyglet.text.Label("", x=8, y=h - 8, anchor_y="top", multiline=True, width=720,
                                      font_size=11, color=(235, 235, 235, 255))
        self._hud_bg = None
        self._target = None  # the Offscreen framebuffer frames are drawn into
        self.warmup = None  # a Warmup while the fast engine compiles (start_warmup)
        self._chose_reference = False  # B chose the reference engine (_too_slow_on_reference)
        self._video = VideoWriter(video, "--video", 60.0) if video else None
        self.recorder = None
        if record:
            from abound.replay import ReplayWriter
            try:
                self.recorder = self.control.recorder = ReplayWriter(record, sim, (w, h), source)
            except BaseException:
                self.window.close()
                raise
        self.window.push_handlers(self)
        if replay is None:
            # the box follows the window (a replay log holds this resize already); refill: the
            # caller places the balls afresh in this box (the saver), and notes crowding after
            self.on_resize(w, h, note=not refill)

    @property
    def sim(self):
        """The Simulation shown (the controller's; the saver swaps in new ones)."""
        return self.control.sim

    @sim.setter
    def sim(self, sim):
        self.control.sim = sim

    @property
    def paused(self):
        return self.control.paused

    # -- simulation clock --------------------------------------------------------------
    @property
    def accumulator(self):
        """Wall-clock seconds not yet simulated (the pacer's)."""
        return self.pacer.accumulator

    def tick(self, elapsed):
        """Advance the physics by ``elapsed`` seconds of real time in fixed steps, as many as
        fit into a frame (abound/pacing.py); returns how many. Pipelined, they run on the
        worker thread and this returns at once, the frame drawn meanwhile showing the state
        before them. None once quitting (a step no frame shows would be missing from a
        replay log)."""
        if self.paused or self.replay is not None or self.closing:
            return 0
        steps = self.pacer.steps(elapsed)
        if steps <= 0:
            return 0
        if self.pipelined:
            self._shown = self.control.snapshot()  # (waits for the steps before)
            self._shown.flash = self.flash(self._shown)
            self.control.advance_in_background(self._run_steps, steps)
        else:
            self._run_steps(steps)
        return steps

    def _run_steps(self, steps):
        """Take the steps (on the worker thread when pipelined) and time them."""
        if steps <= 0:
            return
        if self.warmup is not None:  # the fast engine compiles meanwhile (abound/warmup.py)
            steps = self._warm_steps(steps)
            if steps <= 0:
                return
        self.control.sim.threads = self.step_threads  # (a reset or the saver may bring a new sim)
        t0 = time.perf_counter()
        self.control.advance(steps)
        took = time.perf_counter() - t0
        if self.warmup is not None and self.control.sim.backend == "reference":
            self.warmup.took(took / steps)
        elif self._too_slow_on_reference(took / steps):
            # (B chose it for a scene it cannot keep up with: the Galton board's 777 balls took
            # seconds a frame there, and the keys queued behind them)
            print(f"abound: note: the reference engine took {took / steps:.2f} s a step here: back to the fast one",
                  file=sys.stderr)
            self.control.apply({"do": "backend", "name": "fast"})
            self._chose_reference = False
        self.pacer.took_steps(steps, took)
        self.stats["physics_ms"] = took * 1000.0
        self.stats["steps"] = steps
        self.stats["contacts"] = self.control.contacts
        if self.after_steps is not None:
            self.after_steps(self.control.sim, steps)

    def _too_slow_on_reference(self, step_seconds):
        """Whether a step on the reference engine, chosen with B (not by --backend or the
        scene, nor in a replay), took longer than SLOW_STEP (the warm-up's limit), and this
        process has the fast engine ready (its warm-up made it so: switching compiles nothing)."""
        from abound import warmup
        return (self._chose_reference and self.replay is None
                and self.control.sim.backend == "reference" and step_seconds > warmup.SLOW_STEP
                and warmup.fast_is_ready())

    def flash(self, state):
        """How white each ball of ``state`` is ([render] flash; None when off). Call while
        no steps run (the hits are the worker's while it steps)."""
        return None if self.hits is None else self.hits.flash(state.time, len(state))

    def _set_pipelined(self, on):
        """Step beside the drawing (on) or before it, from the next frame on."""
        from abound.worker import step_threads_beside_drawing
        self.control.wait()
        self.pipelined = bool(on)
        self.pacer.overlapped = self.pipelined
        # threads of a step (Simulation.threads): fewer beside the drawing; None: the default
        self.step_threads = step_threads_beside_drawing() if self.pipelined else None
        self._shown = None

    def frame_drawn(self):
        """Account for a drawn frame: the chooser may switch the way the steps run."""
        if self.chooser is not None:
            want = self.chooser.frame(time.perf_counter())
            if want != self.pipelined:
                self._set_pipelined(want)

    def shown(self):
        """What a frame draws now. Pipelined: the snapshot taken as the last batch of steps
        started, whether or not the worker has finished it (so which state a frame shows
        does not depend on the threads' timing), unless an input has changed the state
        since; then, and serial, the simulation itself."""
        snap = self._shown
        if snap is not None and snap.changes == self.control.changes:
            return snap
        return self.sim

    def _warm_steps(self, steps):
        """While the fast engine compiles: switch to it between two steps once it is ready
        (the same results, no jump), else the steps the reference engine may take now."""
        warm = self.warmup
        if warm.switch(self.sim):
            self.control.template.backend = "fast"  # R resets onto it too
            if warm.compiling:  # (a load from numba's cache goes unmentioned)
                print(f"abound: the fast engine is ready ({warm.seconds:.1f} s)", file=sys.stderr)
        if warm.done.is_set():
            if warm.error:
                print(f"abound: the fast engine cannot run ({warm.error}); staying on the reference engine",
                      file=sys.stderr)
            self.warmup = None
            return steps
        if self.sim.backend != "reference":  # another backend chosen meanwhile (B)
            return steps
        return warm.steps(self.sim, steps)

    # -- drawing -----------------------------------------------------------------------
    def draw(self, state=None, exact=None):
        """Draw a frame of ``state`` (default :meth:`shown`) into the window's back buffer,
        through the offscreen framebuffer when ``exact`` (default: the app's)."""
        t0 = time.perf_counter()
        state = self.shown() if state is None else state
        fw, fh = self.window.get_framebuffer_size()
        self._draw_balls(state, fw, fh, self.exact if exact is None else exact)
        if self.drag is not None:
            x0, y0, x1, y1 = self.drag
            line = self.pyglet.shapes.Line(x0, y0, x1, y1, thickness=2, color=(255, 255, 255, 200))
            line.draw()
        if self.show_hud:
            self._draw_hud(state)
        took = time.perf_counter() - t0
        self.pacer.took_draw(took)
        self.stats["render_ms"] = took * 1000.0

    def _draw_balls(self, state, fw, fh, exact):
        """Render ``state``: straight into the window, or, ``exact``, into an offscreen
        framebuffer exactly as ``abound capture`` does, then copied to the window.

        The copy is exact, so such a frame of the demo is bit-identical to the
        captured frame of the same state (the window's own framebuffer may
        round differently).
        """
        from pyglet import gl
        from abound.render.renderer import Offscreen
        if self._epoch != self.control.epoch:  # reset or resize: the trails start afresh
            self.renderer.reset_trails()
            self._epoch = self.control.epoch
        flash = state.flash if hasattr(state, "flash") else self.flash(state)  # (a Snapshot has its own)
        if not exact:
            self.renderer.draw(state, fw, fh, 0, self.style, flash)
            return
        if self._target is None or (self._target.width, self._target.height) != (fw, fh):
            if self._target is not None:
                self._target.delete()
            self._target = Offscreen(fw, fh)
        self.renderer.draw(state, fw, fh, self._target.fbo.value, self.style, flash)
        gl.glBindFramebuffer(gl.GL_READ_FRAMEBUFFER, self._target.fbo)
        gl.glBindFramebuffer(gl.GL_DRAW_FRAMEBUFFER, 0)
        gl.glBlitFramebuffer(0, 0, fw, fh, 0, 0, fw, fh, gl.GL_COLOR_BUFFER_BIT, gl.GL_NEAREST)
        gl.glBindFramebuffer(gl.GL_FRAMEBUFFER, 0)

    def hud_text(self, state=None):
        """The heads-up display's lines about ``state`` (default: what is shown)."""
        s, state = self.stats, self.shown() if state is None else state
        e, e0 = state.energy(), self.control.energy0
        drift = (e - e0) / abs(e0) if e0 else 0.0
        g = state.gravity
        return (f"fps {s['fps']:.0f}   physics {s['physics_ms']:.2f} ms ({s['steps']} step"
                f"{'' if s['steps'] == 1 else 's'}, {'beside' if self.pipelined else 'before'} the drawing)"
                f"   render {s['render_ms']:.2f} ms\n"
                f"balls {len(state)}   contacts/frame {s['contacts']}   energy drift {drift:+.2e}\n"
                f"backend {state.backend}   ball TOI {state.ball_toi}   gravity ({round(g[0])}, {round(g[1])})"
                f"{'   PAUSED' if self.paused else ''}{self._slow_note()}{self._replay_note()}"
                f"{self._warm_note()}{self._crowded_note()}")

    def _slow_note(self):
        """Says so when the machine cannot keep up and the simulation runs in slow motion."""
        pacer = self.pacer
        if self.paused or not pacer.slowed or (self.warmup is not None and self.warmup.waiting):
            return ""  # (standing still for the fast engine is no slow motion: _warm_note)
        return f"\nslow motion: {pacer.speed:.2f}x real time (the machine cannot keep up)"

    def _crowded(self):
        """The share of the box its balls would cover where that is more than discs can
        pack (a window shrunk below what holds a random scene's balls), else 0. A new user
        who shrank the 10,000-ball pile's window to 640x360 saw it crawl at 0.01x real time
        with no word why; the box still follows the window (a window shrunk for a moment)."""
        sim = self.control.sim
        cover = float(np.sum(np.pi * sim.radii ** 2)) / (sim.width * sim.height)  # (a box is never empty)
        return cover if cover > HEX_PACKING else 0.0

    def _crowded_note(self):
        crowded = self._crowded() if self.box_follows_window else 0.0
        return f"\nthe box is too small for its balls ({crowded:.0%} covered): grow the window" if crowded else ""

    def _warm_note(self):
        from abound.warmup import MESSAGE
        warm = self.warmup
        if warm is None or not warm.compiling or warm.done.is_set():
            return ""
        return f"\n{MESSAGE}" + (": the scene stands still until it is ready" if warm.waiting else "")

    def _replay_note(self):
        if self.replay is None:
            return ""
        r = self.replay
        return f"\nreplay frame {r.frames}/{r.log.frames}{'   (ended)' if r.done else ''}"

    def _draw_hud(self, state):
        """The HUD's lines on a dark translucent backdrop (readable over any picture)."""
        label = self._hud
        label.text = self.hud_text(state)
        label.y = self.window.height - 8
        if self._hud_bg is None:
            self._hud_bg = self.pyglet.shapes.Rectangle(0, 0, 1, 1, color=(0, 0, 0, 150))
        bg, pad = self._hud_bg, 5
        bg.x, bg.y = label.x - pad, label.y - label.content_height - pad
        bg.width, bg.height = label.content_width + 2 * pad, label.content_height + 2 * pad
        bg.draw()
        label.draw()

    def on_draw(self):
        if self.closing:  # the loop may draw again before it ends: a frame after the quit
            return True   # would be in the video and the log but not on the screen
        if self._running:
            # run()'s loop ticks the physics once a drawn frame, just before it (tests and
            # loop_bench tick by hand). Scheduled for every pass of pyglet's loop instead, the
            # tick kept that loop from ever sleeping: a paused demo of two balls kept a core
            # busy; at an interval of its own it drifted against the frames (a frame with no
            # step, the next with two: a stutter)
            now = time.perf_counter()
            self.tick(now - self._ticked)
            self._ticked = now
        return self._frame()

    def _frame(self):
        """Draw a frame and account for it (the replay log, the video, --frames)."""
        self.window.switch_to()
        if self.replay is not None:
            t0, steps = time.perf_counter(), self.control.steps
            if self.replay.next_frame():
                self.stats["physics_ms"] = (time.perf_counter() - t0) * 1000.0
                self.stats["steps"] = self.control.steps - steps  # (the HUD had said 0 steps)
                self.stats["contacts"] = self.control.contacts
            elif self.headless and not self.closing:
                self.quit()  # nobody is watching: stop at the end of the log
                return True
        self.draw()
        if self.recorder is not None:
            self.recorder.frame(self.control.steps)
        self.frames += 1
        self.stats["fps"] = self._rate.frame()
        self.frame_drawn()
        if self._video is not None:
            self._video.add(self.read_frame())
        if self.max_frames is not None and self.frames >= self.max_frames and not self.closing:
            self.quit()
        return True

    def read_frame(self):
        """The window's back buffer as (H, W, 4) uint8 RGBA, rows top-down (call after draw)."""
        from abound.render.renderer import read_pixels
        fw, fh = self.window.get_framebuffer_size()
        return read_pixels(fw, fh, 0)

    def screenshot(self, path=None):
        """Draw and save a PNG of the window; returns its path."""
        from pathlib import Path
        from PIL import Image
        self.window.switch_to()
        self.draw(self.sim, exact=True)  # the state now (after any steps running in the background)
        frame = self.read_frame()
        # what the screen shows: the HUD's blending leaves the framebuffer's alpha
        # below 1 under it, which a window ignores and an image viewer does not
        # (it showed the HUD see-through over a checkerboard)
        frame[..., 3] = 255
        image = Image.fromarray(frame, "RGBA")
        try:
            if path is None:
                path = _save_png_new(image, Path(self.screenshot_dir) / time.strftime("abound-%Y%m%d-%H%M%S.png"))
            else:
                image.save(path)
        except OSError as exc:  # (a key press in a full or read-only folder: say so, keep running)
            where = exc.filename or path or Path(self.screenshot_dir) / "abound-*.png"
            print(f"abound: could not save the screenshot {where}: {exc.strerror or exc}", file=sys.stderr)
            return None
        print(f"saved {path}", file=sys.stderr)
        return path

    def _finish_recording(self):
        if self.recorder is not None:
            self.recorder.close(self.sim, self.control.steps)
            self.recorder = None
        if self._video is not None:
            video, self._video = self._video, None
            finish_video(video)  # OutputError if the file could not be written

    # -- window events -----------------------------------------------------------------
    def on_resize(self, width, height, note=True):
        """The box follows the window (in world pixels, 1:1) unless the scene is a fixed picture
        (then the renderer fits the box into the window); a replay's box follows its log.
        note: say if the box cannot hold its balls (note_crowding)."""
        if width > 0 and height > 0 and self.replay is None and self.box_follows_window:
            self.control.resize(width, height)
            if note:
                self.note_crowding()
        # let pyglet's default handler set its viewport and projection too

    def note_crowding(self):
        """Say that the box cannot hold its balls, once until it holds them again."""
        crowded = self._crowded()
        if crowded and not self._said_crowded:
            sim = self.control.sim
            print(f"abound: note: the {sim.width:g}x{sim.height:g} box cannot hold its balls (they would "
                  f"cover {crowded:.0%} of it, discs pack at most {HEX_PACKING:.0%}): they are squeezed "
                  f"together and step slowly until the window grows", file=sys.stderr)
        self._said_crowded = bool(crowded)

    def world_point(self, x, y):
        """Window coordinates (pixels, y up) -> world coordinates."""
        from abound.render.style import image_to_world
        fw, fh = self.window.get_framebuffer_size()
        sx = fw / max(self.window.width, 1)
        sy = fh / max(self.window.height, 1)
        xf = self.renderer.transform if self.frames else _transform(self.sim, fw, fh)
        wx, wy = image_to_world((x * sx, fh - y * sy), xf, fh)
        return float(wx), float(wy)

    def on_key_press(self, symbol, modifiers):
        k = self.pyglet.window.key
        control = self.control
        if symbol in (k.ESCAPE, k.Q):
            self.quit()
        elif symbol == k.H:
            self.show_hud = not self.show_hud
        elif symbol == k.M:
            self.sound.toggle()
        elif symbol == k.F:
            self.window.set_fullscreen(not self.window.fullscreen)
        elif symbol == k.S:
            self.screenshot()
        elif self.replay is not None:  # a replay takes no inputs but these
            return False
        elif symbol == k.SPACE:
            control.toggle_pause()
            self.pacer.reset()
        elif symbol == k.RIGHT and self.paused:
            t0 = time.perf_counter()
            control.single_step()
            self.stats["physics_ms"] = (time.perf_counter() - t0) * 1000.0
        elif symbol in (k.LEFT, k.RIGHT):
            # the box tilts as a tray held in the hands would: Left lowers its left side, so
            # gravity turns clockwise and balls lying on the floor slide left (it had turned
            # the other way, and a new user's balls ran right on Left)
            control.tilt(TILT_DEGREES * (-1 if symbol == k.LEFT else 1))
        elif symbol == k.UP:
            control.scale_gravity(GRAVITY_FACTOR)
        elif symbol == k.DOWN:
            control.scale_gravity(1.0 / GRAVITY_FACTOR)
        elif symbol == k.G:
            control.flip_gravity()
        elif symbol == k.R:
            self.reset()
        elif symbol == k.B:  # (not onto the fast engine while it compiles: the window would freeze)
            from abound import warmup
            skip = ("fast",) if self.warmup is not None else ()
            if len(control.sim) > warmup.FIRST_STEP_BALLS and control.next_backend(skip) == "reference":
                # (its first step froze the window for 10 s before _too_slow_on_reference
                # could take it back: a new user's trial of the 10,000-ball pile)
                skip += ("reference",)
                print(f"abound: note: B passes over the reference engine for more than "
                      f"{warmup.FIRST_STEP_BALLS:,} balls (seconds a step in plain Python)", file=sys.stderr)
            control.cycle_backend(skip=skip)
            self._chose_reference = control.sim.backend == "reference"
        elif symbol == k.T:
            control.cycle_ball_toi()
        else:  # (+ and - come as text: on_text)
            return False
        return True

    def on_text(self, text):
        """+ adds a ball, - removes the last one (so do = and _, the other
        characters of those keys on a US layout, and the keypad's + and -);
        held, they repeat as typing does. Taken as text, not as key presses:
        X reports the key Shift+= as PLUS when pressed but EQUAL when
        released, and pyglet then takes each later press of it for a repeat
        of a key still held and reports no press (a user's second + added
        nothing; tests/apps/test_demo_keys.py presses them on Xvfb)."""
        if self.replay is not None:
            return False
        if text in ("+", "="):
            self.control.add_random_ball()
        elif text in ("-", "_"):
            self.control.remove_last_ball()
        else:
            return False
        return True

    def start_warmup(self):
        """Run on the reference engine while the fast one compiles, when the simulation asked
        for the fast one and this process has not compiled it yet (abound/warmup.py).
        Not headless (no window waits there, and a run of N frames stays what it was) nor
        replaying (the log's steps are the fast engine's): those wait for the compiler, and
        say so on a cold cache (minutes without a word looked like a hang)."""
        from abound import warmup
        if self.replay is None and not self.headless:
            self.warmup = warmup.start(self.sim)
        else:
            warmup.note_if_cold(self.sim.backend)

    def reset(self):
        """Back to the state the demo started with (the box stays the window's size)."""
        self.control.reset()
        self.pacer.reset()

    def on_mouse_press(self, x, y, button, modifiers):
        if self.replay is not None:
            return False
        mouse = self.pyglet.window.mouse
        if button == mouse.LEFT:
            self.drag = (x, y, x, y)
        elif button == mouse.RIGHT:
            self.toggle_pin_at(x, y)
        elif button == mouse.MIDDLE:
            self.control.toggle_black_hole(*self.world_point(x, y))
        return True

    def on_mouse_drag(self, x, y, dx, dy, buttons, modifiers):
        if self.drag is not None:
            self.drag = (self.drag[0], self.drag[1], x, y)
        return True

    def on_mouse_release(self, x, y, button, modifiers):
        if button == self.pyglet.window.mouse.LEFT and self.drag is not None:
            x0, y0 = self.drag[:2]
            self.drag = None
            return self.fling(x0, y0, x, y)
        return True

    def fling(self, x0, y0, x1, y1):
        """A new ball at window point (x0, y0) with velocity FLING_GAIN * drag (world units)."""
        p0 = np.array(self.world_point(x0, y0))
        p1 = np.array(self.world_point(x1, y1))
        v = FLING_GAIN * (p1 - p0)
        return self.control.fling(p0[0], p0[1], v[0], v[1])

    def ball_at(self, x, y):
        """Index of the ball under window point (x, y), the nearest centre if several; else None."""
        sim = self.sim
        if not len(sim):
            return None
        p = np.array(self.world_point(x, y))
        d = np.hypot(*(sim.positions - p).T)
        inside = np.flatnonzero(d <= sim.radii)
        if not len(inside):
            return None
        return int(inside[np.argmin(d[inside])])

    def toggle_pin_at(self, x, y):
        i = self.ball_at(x, y)
        if i is not None:
            self.control.toggle_pin(i)
        return i

    def on_close(self):
        self.quit()
        return True

    # -- running -----------------------------------------------------------------------
    def quit(self):
        """Stop: leave the event loop (the window closes after it), or close now outside it."""
        self.closing = True
        if self._running:
            self.pyglet.app.exit()
        else:
            self.close()

    def close(self):
        if self.window is None:
            return
        try:
            if self.recorder is not None and self.recorder.steps_shown != self.control.steps:
                # steps were taken after the last drawn frame (the quit came between a tick and
                # its frame): draw their frame, so that the log's frames hold every step
                self._frame()
        finally:
            self.sound.close()
            self.control.close()
            self._finish_recording()
            self.window.close()
            self.window = None

    def run(self):
        """The event loop (until the window closes or --frames is reached)."""
        pyglet = self.pyglet
        self._ticked = time.perf_counter()
        self._running = True
        try:
            with _signals_quit(self):
                pyglet.app.run(1 / 60.0)
        finally:
            self._running = False
            self.close()


@contextlib.contextmanager
def _signals_quit(app):
    """Ctrl-C (SIGINT), SIGTERM and SIGHUP quit ``app`` as Esc does, between two events: a
    KeyboardInterrupt in the middle of a step or a frame would leave a replay log
    that no longer matches the state. A second signal while quitting stops at once."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {}

    def handler(signum, frame):
        if app.closing:
            signal.signal(signum, previous[signum])
            raise KeyboardInterrupt
        app.stopped_by = signum
        app.quit()

    # (SIGHUP: the terminal or the SSH session it ran from closed; it had ended the demo
    # at once, its replay log without an end record)
    # A signal ignored by whoever started the demo (nohup, a shell's background job) stays
    # ignored, as Python leaves an ignored SIGINT.
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(signum) is not signal.SIG_IGN:
            previous[signum] = signal.signal(signum, handler)
    try:
        yield
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)


def _transform(sim, fw, fh):
    from abound.render.style import fit_transform
    return fit_transform(sim.width, sim.height, fw, fh)


def run(args):
    from abound.render.style import RenderError
    from abound.scene import for_window
    # before the run: a bad place or format is refused now, not after the window closes
    check_distinct([("--record", args.record), ("--video", args.video)], args.scene)
    if args.record:
        check_file(args.record, "--record", force=args.force)
    if args.video:
        check_file(args.video, "--video", VIDEO, args.force)
    sim = for_window(args.scene, args.size, seed=args.seed, backend=args.backend, balls=args.balls)
    headless = True if args.headless else None
    source = {"scene": args.scene, "seed": args.seed, "balls": args.balls, "backend": args.backend}
    try:
        app = DemoApp(sim, size=args.size, headless=headless, frames=args.frames, record=args.record,
                      source=source, video=args.video, sound=args.sound)
    except RenderError as exc:
        print(f"abound: error: {exc}", file=sys.stderr)
        return 2
    app.start_warmup()
    from abound.cli.awake import KeepAwake, window_id
    # someone is watching: the desktop's screensaver is held off while the window is open
    with contextlib.nullcontext() if app.headless else KeepAwake(window_id(app.window)):
        app.run()
    return exit_status(app)


def exit_status(app):
    """0, or 128 + the signal number when a signal (Ctrl-C: 130) ended the run, as a shell expects."""
    return 128 + app.stopped_by if app.stopped_by else 0
