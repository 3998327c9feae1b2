"""``abound demo [SCENE]``: a resizable window running a scene, with keyboard and mouse controls.

The physics takes fixed steps of the scene's dt, decoupled from the drawing
rate: each frame runs as many steps as the elapsed time calls for, at most
``MAX_STEPS_PER_FRAME`` (a slow machine slows the simulation down instead of
spiralling). The box is the window: resizing the window moves the walls
(``sim.resize``). :class:`DemoApp` holds everything; tests build one headless
and call its handlers directly.

Controls: Space pause, Right arrow single step (while paused), R reset,
Left/Right tilt gravity by 15 degrees, Up/Down make it stronger/weaker,
G flip it, B cycle backend, T switch the ball time-of-impact method, + / -
add / remove a ball, left-drag fling a new ball, right-click pin / unpin the
ball under the cursor, H heads-up display, F fullscreen, S save a PNG
screenshot, Esc or Q quit.
"""
import math
import sys
import time

import numpy as np

MAX_STEPS_PER_FRAME = 4
FLING_GAIN = 4.0       # velocity (px/s) per pixel of drag
FLING_RADIUS = 12.0    # px, radius of a flung ball
ADD_RADIUS = (6.0, 14.0)
TILT_DEGREES = 15.0
GRAVITY_FACTOR = 1.25
BACKENDS = ("fast", "reference")
BALL_TOI = ("analytic", "bisection")


def _size(text):
    import argparse
    from abound.render.style import parse_size
    try:
        return parse_size(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _count(lo):
    import argparse

    def conv(text):
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
        if v < lo:
            raise argparse.ArgumentTypeError(f"must be >= {lo}, not {v}")
        return v
    conv.__name__ = "int"
    return conv


def add_arguments(parser):
    parser.add_argument("scene", nargs="?", metavar="SCENE",
                        help="scene file or shipped scene name (default: the embedded default scene)")
    parser.add_argument("--frames", type=_count(1), metavar="N", help="quit after N frames (for tests)")
    parser.add_argument("--size", type=_size, metavar="WxH", help="window size (default: the scene's box)")
    parser.add_argument("--balls", type=_count(1), metavar="N", help="total number of random ([[spawn]]) balls")
    parser.add_argument("--backend", choices=("auto",) + BACKENDS, help="physics backend (default: the scene's)")
    parser.add_argument("--seed", type=_count(0), metavar="S", help="override the scene's seeds")
    parser.add_argument("--record", metavar="FILE",
                        help="record the window's frames to a video (.mp4, needs ffmpeg) or a .gif")
    parser.add_argument("--headless", action="store_true",
                        help="draw offscreen (EGL) with no display, e.g. with --frames for a smoke test")


def _clone(sim):
    """A fresh Simulation with ``sim``'s settings, balls and walls (for reset without a scene)."""
    from abound import Simulation
    s = Simulation(sim.width, sim.height, gravity=sim.gravity, backend=sim.backend, ball_toi=sim.ball_toi,
                   wall_restitution=sim.wall_restitution, restitution_mix=sim.restitution_mix,
                   rest_speed=sim.rest_speed, dt=sim.dt, density=sim.density)
    for (x0, y0, x1, y1), e in zip(sim.walls, sim.wall_restitutions):
        s.add_wall(x0, y0, x1, y1, restitution=e)
    if len(sim):
        s.add_balls(sim.positions.copy(), sim.velocities.copy(), radius=sim.radii.copy(),
                    mass=sim.masses.copy(), restitution=sim.restitutions.copy(), pinned=sim.pinned,
                    color=[tuple(c) for c in sim.colors])
    s.scene = sim.scene
    return s


class DemoApp:
    """The demo window and its controls around one Simulation.

    sim: the Simulation to run (its state at construction is what R resets
    to). size: window size (default: the box). headless: draw with EGL and no
    display. frames: quit after that many drawn frames.
    """

    def __init__(self, sim, size=None, *, headless=None, visible=True, vsync=True, frames=None,
                 record=None, screenshot_dir="."):
        from abound.render.context import make_window
        from abound.render.style import RenderStyle
        w, h = size or (int(round(sim.width)), int(round(sim.height)))
        self.window = make_window(w, h, visible=visible, resizable=True, vsync=vsync,
                                  caption="abound", headless=headless)
        import pyglet
        from abound.render.renderer import Renderer
        self.pyglet = pyglet
        self.style = RenderStyle.from_scene(sim.scene)
        self.renderer = Renderer(self.style)
        self.template = _clone(sim)
        self.sim = sim
        self.paused = False
        self.show_hud = self.style.hud
        self.max_frames = frames
        self.closing = False
        self._running = False
        self.frames = 0
        self.screenshot_dir = screenshot_dir
        self.accumulator = 0.0
        self.drag = None  # (x0, y0, x, y) window pixels while left-dragging
        self.stats = {"fps": 0.0, "physics_ms": 0.0, "render_ms": 0.0, "contacts": 0}
        self._contacts_acc = 0
        self._fps_frames, self._fps_t0 = 0, time.perf_counter()
        self._energy0 = sim.energy()
        self._hud = pyglet.text.Label("", x=8, y=h - 8, anchor_y="top", multiline=True, width=520,
                                      font_size=11, color=(235, 235, 235, 255))
        self._hud_bg = None
        self._rng = np.random.default_rng(12345)
        self._recorder = None
        self._target = None  # the Offscreen framebuffer frames are drawn into
        self._record_path = record
        self._record_frames = []
        if record and record.lower().endswith(".mp4"):
            import shutil
            if shutil.which("ffmpeg") is None:
                from abound.render.style import RenderError
                raise RenderError("--record to .mp4 needs ffmpeg on the PATH (apt-get install ffmpeg); "
                                  "use a .gif file name instead")
        self.window.push_handlers(self)
        fw, fh = self.window.get_framebuffer_size()
        if (fw, fh) != (w, h) or (w, h) != (sim.width, sim.height):
            self.on_resize(w, h)

    # -- simulation clock --------------------------------------------------------------
    def tick(self, elapsed):
        """Advance the physics by ``elapsed`` seconds of real time in fixed steps (capped)."""
        if self.paused:
            return 0
        dt = self.sim.dt
        self.accumulator += elapsed
        steps = int(self.accumulator / dt + 1e-9)
        if steps > MAX_STEPS_PER_FRAME:
            steps = MAX_STEPS_PER_FRAME
            self.accumulator = 0.0  # drop the backlog: slow down rather than spiral
        else:
            self.accumulator -= steps * dt
        self._run_steps(steps)
        return steps

    def _run_steps(self, steps):
        if steps <= 0:
            return
        t0 = time.perf_counter()
        contacts = 0
        for _ in range(steps):
            contacts += self.sim.step().contacts
        self.stats["physics_ms"] = (time.perf_counter() - t0) * 1000.0
        self.stats["contacts"] = contacts

    def energy_changed(self):
        """The energy baseline of the HUD's drift restarts (gravity, balls added...)."""
        self._energy0 = self.sim.energy()

    # -- drawing -----------------------------------------------------------------------
    def draw(self):
        """Draw the current state into the window's back buffer."""
        t0 = time.perf_counter()
        fw, fh = self.window.get_framebuffer_size()
        self._blit(fw, fh)
        if self.drag is not None:
            x0, y0, x1, y1 = self.drag
            line = self.pyglet.shapes.Line(x0, y0, x1, y1, thickness=2, color=(255, 255, 255, 200))
            line.draw()
        if self.show_hud:
            self._draw_hud()
        self.stats["render_ms"] = (time.perf_counter() - t0) * 1000.0

    def _blit(self, fw, fh):
        """Render into an offscreen framebuffer exactly as ``abound capture`` does, then copy it.

        The copy is exact, so a frame of the demo is bit-identical to the
        captured frame of the same state (the window's own framebuffer may
        round differently).
        """
        from pyglet import gl
        from abound.render.renderer import Offscreen
        if self._target is None or (self._target.width, self._target.height) != (fw, fh):
            if self._target is not None:
                self._target.delete()
            self._target = Offscreen(fw, fh)
        self.renderer.draw(self.sim, fw, fh, self._target.fbo.value, self.style)
        gl.glBindFramebuffer(gl.GL_READ_FRAMEBUFFER, self._target.fbo)
        gl.glBindFramebuffer(gl.GL_DRAW_FRAMEBUFFER, 0)
        gl.glBlitFramebuffer(0, 0, fw, fh, 0, 0, fw, fh, gl.GL_COLOR_BUFFER_BIT, gl.GL_NEAREST)
        gl.glBindFramebuffer(gl.GL_FRAMEBUFFER, 0)

    def hud_text(self):
        s, sim = self.stats, self.sim
        e = sim.energy()
        drift = (e - self._energy0) / abs(self._energy0) if self._energy0 else 0.0
        g = sim.gravity
        return (f"fps {s['fps']:.0f}   physics {s['physics_ms']:.2f} ms   render {s['render_ms']:.2f} ms\n"
                f"balls {len(sim)}   contacts/frame {s['contacts']}   energy drift {drift:+.2e}\n"
                f"backend {sim.backend}   ball TOI {sim.ball_toi}   gravity ({g[0]:.0f}, {g[1]:.0f})"
                f"{'   PAUSED' if self.paused else ''}")

    def _draw_hud(self):
        self._hud.text = self.hud_text()
        self._hud.y = self.window.height - 8
        self._hud.draw()

    def on_draw(self):
        self.window.switch_to()
        self.draw()
        self.frames += 1
        self._fps_frames += 1
        now = time.perf_counter()
        if now - self._fps_t0 >= 0.5:
            self.stats["fps"] = self._fps_frames / (now - self._fps_t0)
            self._fps_frames, self._fps_t0 = 0, now
        if self._record_path:
            self._record(self.read_frame())
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
        self.draw()
        frame = self.read_frame()
        if path is None:
            path = Path(self.screenshot_dir) / time.strftime("abound-%Y%m%d-%H%M%S.png")
        Image.fromarray(frame, "RGBA").save(path)
        print(f"saved {path}", file=sys.stderr)
        return path

    def _record(self, frame):
        path = self._record_path
        if path.lower().endswith(".mp4"):
            if self._recorder is None:
                from abound.cli.capture import _ffmpeg_writer
                self._recorder = (_ffmpeg_writer(path, (frame.shape[1], frame.shape[0]), 60.0), frame.shape)
            proc, shape = self._recorder
            if frame.shape == shape:  # a resized window: keep the first size
                proc.stdin.write(frame.tobytes())
        else:
            self._record_frames.append(frame[..., :3].copy())

    def _finish_recording(self):
        if self._recorder is not None:
            proc = self._recorder[0]
            proc.stdin.close()
            proc.wait()
            self._recorder = None
        elif self._record_frames:
            from PIL import Image
            shape = self._record_frames[0].shape
            imgs = [Image.fromarray(f) for f in self._record_frames if f.shape == shape]
            imgs[0].save(self._record_path, save_all=True, append_images=imgs[1:], loop=0, duration=20)
            self._record_frames = []

    # -- window events -----------------------------------------------------------------
    def on_resize(self, width, height):
        """The box follows the window (in world pixels, 1:1)."""
        if width > 0 and height > 0:
            self.sim.resize(float(width), float(height))
            self.renderer.reset_trails()
        # let pyglet's default handler set its viewport and projection too

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
        sim = self.sim
        if symbol in (k.ESCAPE, k.Q):
            self.quit()
        elif symbol == k.SPACE:
            self.paused = not self.paused
            self.accumulator = 0.0
        elif symbol == k.RIGHT and self.paused:
            self._run_steps(1)
        elif symbol in (k.LEFT, k.RIGHT):
            self.set_gravity(_rotate(sim.gravity, TILT_DEGREES * (1 if symbol == k.LEFT else -1)))
        elif symbol == k.UP:
            self.set_gravity(sim.gravity * GRAVITY_FACTOR)
        elif symbol == k.DOWN:
            self.set_gravity(sim.gravity / GRAVITY_FACTOR)
        elif symbol == k.G:
            self.set_gravity(-sim.gravity)
        elif symbol == k.R:
            self.reset()
        elif symbol == k.B:
            i = BACKENDS.index(sim.backend) if sim.backend in BACKENDS else -1
            sim.backend = BACKENDS[(i + 1) % len(BACKENDS)]
        elif symbol == k.T:
            sim.ball_toi = BALL_TOI[(BALL_TOI.index(sim.ball_toi) + 1) % len(BALL_TOI)]
        elif symbol in (k.PLUS, k.EQUAL, k.NUM_ADD):
            self.add_random_ball()
        elif symbol in (k.MINUS, k.UNDERSCORE, k.NUM_SUBTRACT):
            if len(sim):
                sim.remove_ball(len(sim) - 1)
                self.energy_changed()
        elif symbol == k.H:
            self.show_hud = not self.show_hud
        elif symbol == k.F:
            self.window.set_fullscreen(not self.window.fullscreen)
        elif symbol == k.S:
            self.screenshot()
        else:
            return False
        return True

    def set_gravity(self, g):
        self.sim.gravity = g
        self.energy_changed()

    def reset(self):
        """Back to the state the demo started with (the box stays the window's size)."""
        self.sim = _clone(self.template)
        self.sim.resize(float(self.window.width), float(self.window.height))
        self.accumulator = 0.0
        self.renderer.reset_trails()
        self.energy_changed()

    def add_random_ball(self):
        sim = self.sim
        r = float(self._rng.uniform(*ADD_RADIUS))
        x = float(self._rng.uniform(r, max(r, sim.width - r)))
        y = float(max(r, sim.height - 2 * r))
        v = self._rng.uniform(-200, 200, 2)
        i = sim.add_ball(x, y, vx=v[0], vy=v[1], radius=r)
        self.energy_changed()
        return i

    def on_mouse_press(self, x, y, button, modifiers):
        mouse = self.pyglet.window.mouse
        if button == mouse.LEFT:
            self.drag = (x, y, x, y)
        elif button == mouse.RIGHT:
            self.toggle_pin_at(x, y)
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
        sim = self.sim
        r = FLING_RADIUS
        x = min(max(p0[0], r), sim.width - r)
        y = min(max(p0[1], r), sim.height - r)
        i = sim.add_ball(x, y, vx=v[0], vy=v[1], radius=r)
        self.energy_changed()
        return i

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
            self.sim.set_pinned(i, not bool(self.sim.pinned[i]))
            self.energy_changed()
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
        self._finish_recording()
        self.window.close()
        self.window = None

    def run(self):
        """The event loop (until the window closes or --frames is reached)."""
        pyglet = self.pyglet
        pyglet.clock.schedule(self.tick)
        self._running = True
        try:
            pyglet.app.run(1 / 60.0)
        finally:
            self._running = False
            pyglet.clock.unschedule(self.tick)
            self.close()


def _transform(sim, fw, fh):
    from abound.render.style import fit_transform
    return fit_transform(sim.width, sim.height, fw, fh)


def _rotate(g, degrees):
    a = math.radians(degrees)
    c, s = math.cos(a), math.sin(a)
    return np.array([c * g[0] - s * g[1], s * g[0] + c * g[1]])


def run(args):
    from abound import Simulation
    from abound.render.style import RenderError
    sim = Simulation.from_config(args.scene, seed=args.seed, backend=args.backend, balls=args.balls)
    headless = True if args.headless else None
    try:
        app = DemoApp(sim, size=args.size, headless=headless, frames=args.frames, record=args.record)
    except RenderError as exc:
        print(f"abound: error: {exc}", file=sys.stderr)
        return 2
    app.run()
    return 0
