"""``abound saver [SCENE]``: the screensaver - fullscreen, never still, gone at a touch.

Fullscreen on ``--screen N`` or on every screen (``--screen all``: one window
each), cursor hidden, vsync, ``--fps`` cap. Quits on a key press, a mouse
click, or mouse motion beyond ``MOTION_THRESHOLD`` pixels from where the
pointer first was (motion in the first ``SETTLE_SECONDS`` after opening is
ignored: windows receive synthetic motion when they appear). When the motion
dies down - kinetic energy under ``[saver] stillness_energy`` times its peak
since the last livening, for ``stillness_seconds`` - it livens things up as
``[saver] liven`` says: ``wave`` (a fresh wave of the scene's balls, new
seed), ``kick`` (every free ball gets a random upward kick), ``gravity``
(gravity turns by ``[saver] turn`` degrees: 180, the scene turned over, by default) or ``black_hole`` (a black hole drops
into the box for LIVEN_HOLE_SECONDS, then goes: abound/attractors.py). The number of balls never grows, so
memory stays flat.

The screen: a scene with walls, pegs or explicit balls is a fixed picture,
scaled to fit the screen (or window), centred, aspect kept, as ``abound
capture`` draws it; a scene of only random balls fills the screen: its
balls are placed afresh in a box of the screen's size (when they fit there),
and the box follows the window (see :func:`abound.scene.fixed_picture`).

Conventions: Windows screensaver arguments ``/s`` (run), ``/p HWND`` or
``/p:HWND`` (preview: exits at once, status 0), ``/c`` or ``/c:HWND``
(settings: prints where the scene file is). xscreensaver's, in its one-dash
and two-dash spellings: ``--window-id ID`` (decimal or 0x hex) or
``$XSCREENSAVER_WINDOW`` (hex) draws into that X window (xscreensaver's; one
per monitor, one copy of abound each) through a GL context of abound's own
(:mod:`abound.render.foreign_window`), the scene fitted into the window
whatever its size, until the window is destroyed or SIGTERM comes; ``--root``
means ``$XSCREENSAVER_WINDOW`` if set, else the root window. ``--fps`` alone
shows the frame rate, ``--delay US`` puts US microseconds between frames;
``--max-fps F`` caps the frame rate (the old ``--fps F`` with a number still
does). Where no GL context can be made on the window, it says so in one line
and runs fullscreen instead; a window that does not exist is an error.
"""
import os
import sys
import time

import numpy as np

from abound.defaults import MAX_BLACK_HOLES

MOTION_THRESHOLD = 20.0   # px the pointer may drift before the saver quits
SETTLE_SECONDS = 0.5      # motion events right after opening are ignored
LIVEN_KICK = 900.0        # px/s, upward speed of a "kick"
LIVEN_HOLE_SECONDS = 8.0  # s of simulated time a livening black hole stays (placed as attractors.place does)


MAX_GRAVITY = 10.0        # the largest --gravity factor
XSCREENSAVER_CONFIG_DIR = "/usr/share/xscreensaver/config"  # where xscreensaver-settings reads <hack>.xml


def add_arguments(parser):
    from abound.cli.args import count, positive
    from abound.scene.schema import LIVEN
    parser.description = ("run as a screensaver: fullscreen, or in the X window xscreensaver gives "
                          "(--root, --window-id; xscreensaver's one-dash spellings -root, -window-id, "
                          "-fps, -delay work too)")
    parser.add_argument("words", nargs="*", metavar="SCENE",
                        help="scene file or shipped scene name; also /s, /p HWND, /c (Windows conventions)")
    parser.add_argument("--screen", type=_screen, default="0", metavar="N|all",
                        help="screen number, or 'all' (default 0)")
    parser.add_argument("--max-fps", type=_fps, metavar="F", help="frame-rate cap (default 60)")
    parser.add_argument("--fps", nargs="?", const=True, type=_fps_or_word, metavar="F",
                        help="show the frame rate (xscreensaver's flag); with a number F, the frame-rate "
                             "cap (the old spelling of --max-fps)")
    parser.add_argument("--delay", type=count(0), metavar="US",
                        help="microseconds between frames (xscreensaver's; --max-fps still caps)")
    parser.add_argument("--root", dest="xs_root", action="store_true",
                        help="draw into xscreensaver's window ($XSCREENSAVER_WINDOW), else the root window")
    parser.add_argument("--window-id", dest="xs_window", type=_window_id, metavar="ID",
                        help="draw into the X window ID (decimal or 0x hex), as xscreensaver asks")
    parser.add_argument("--scene", dest="scene_opt", metavar="SCENE",
                        help="scene file or shipped scene name (as SCENE; xscreensaver's settings pass it so)")
    parser.add_argument("--balls", type=count(0), metavar="N",
                        help="total number of random ([[spawn]]) balls; 0: the scene's own (scenes without "
                             "random balls keep theirs)")
    parser.add_argument("--gravity", type=positive(float, hi=MAX_GRAVITY), metavar="F",
                        help="gravity times F (default 1)")
    parser.add_argument("--liven", choices=LIVEN, help="what livens a still scene up (default: the scene's)")
    parser.add_argument("--xscreensaver-setup", action="store_true",
                        help="print how to add abound to xscreensaver (its programs: line and settings file)")
    parser.add_argument("--window", action="store_true", help="preview in a normal window instead of fullscreen")
    parser.add_argument("--frames", type=count(1), metavar="N", help="quit after N frames (for tests)")
    parser.add_argument("--seed", type=count(0), metavar="S", help="override the scene's seeds")
    parser.add_argument("--headless", action="store_true", help="draw offscreen (EGL), for tests")
    # xscreensaver's one-dash spellings, hidden (argparse names an option by its spellings in errors)
    hidden = argparse_suppress()
    parser.add_argument("-fps", dest="fps", nargs="?", const=True, type=_fps_or_word, help=hidden)
    parser.add_argument("-delay", dest="delay", type=count(0), help=hidden)
    parser.add_argument("-root", dest="xs_root", action="store_true", help=hidden)
    parser.add_argument("-window-id", dest="xs_window", type=_window_id, help=hidden)


def _screen(text):
    import argparse
    if text == "all" or (text.isdigit() and text.isascii()):
        return text
    raise argparse.ArgumentTypeError(f"must be a screen number (0, 1, ...) or 'all', not {text!r}")


def _fps(text):
    import argparse
    import math
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not (math.isfinite(v) and v > 0):
        raise argparse.ArgumentTypeError(f"must be a positive number of frames per second, not {text}")
    return v


def _fps_or_word(text):
    """``--fps F``: a cap F; a word that is not a number is the scene after a bare ``--fps``."""
    try:
        float(text)
    except ValueError:
        return _Word(text)
    return _fps(text)


class _Word(str):
    """A word a bare ``--fps`` took from the scene's place."""


def _window_id(text):
    import argparse
    from abound.render.foreign_window import parse_window_id
    try:
        return parse_window_id(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def argparse_suppress():
    import argparse
    return argparse.SUPPRESS


class Liveliness:
    """Decides when the scene has gone still and livens it up (GL-free; tested on its own)."""

    def __init__(self, saver_cfg=None, seed=0):
        cfg = saver_cfg or {}
        self.energy_fraction = float(cfg.get("stillness_energy", 0.02))
        self.seconds = float(cfg.get("stillness_seconds", 3.0))
        self.mode = cfg.get("liven", "wave")
        self.turn = float(cfg.get("turn", 180.0))  # degrees gravity turns by, for the mode "gravity"
        self.peak = 0.0
        self.still_for = 0.0
        self.count = 0
        self.rng = np.random.default_rng(seed)
        self.hole, self.hole_left = None, 0.0  # the livening black hole, and its time left (s)

    def update(self, sim, elapsed):
        """Account ``elapsed`` seconds of simulated time; returns a (possibly new) Simulation."""
        if self.hole is not None:  # a livening black hole's time runs out
            self.hole_left -= elapsed
            if self.hole_left <= 0.0:
                if self.hole in sim.black_holes:
                    sim.black_holes.remove(self.hole)
                self.hole = None
                self.peak = 0.0  # (the stillness is measured afresh from here)
        ke = sim.kinetic_energy()
        self.peak = max(self.peak, ke)
        # (<=: a scene with nothing moving since the last liven, peak 0, is still too;
        # with <, a liven that moved nothing had the saver wait for ever)
        if ke <= self.energy_fraction * self.peak:
            self.still_for += elapsed
        else:
            self.still_for = 0.0
        if self.still_for >= self.seconds:
            return self.liven(sim)
        return sim

    def liven(self, sim):
        self.count += 1
        self.peak = 0.0
        self.still_for = 0.0
        if self.mode == "wave" and sim.scene is not None:
            seed = int(sim.scene.get("physics", {}).get("seed", 0)) + self.count
            new = rebuilt(sim, seed=seed)
            if new is not None:
                return new
            # the scene's balls do not fit the box the window made: a kick instead
        if self.mode == "black_hole" and (self.hole is not None or len(sim.black_holes) < MAX_BLACK_HOLES):
            if self.hole is None:
                from abound.attractors import place
                w, h = sim.width, sim.height
                i = place(sim, self.rng.uniform(0.25 * w, 0.75 * w), self.rng.uniform(0.25 * h, 0.75 * h), lift=True)
                self.hole, self.hole_left = sim.black_holes[i], LIVEN_HOLE_SECONDS
            return sim
        if self.mode == "gravity" and any(sim.gravity):
            sim.gravity = turned(sim.gravity, self.turn)
            return sim
        # kick (also "wave" for a simulation without a scene, and "gravity" for a
        # weightless one, a pool table: there is no gravity to turn)
        free = ~sim.pinned
        k = int(free.sum())
        v = sim.velocities.copy()
        v[free, 0] += self.rng.uniform(-0.3, 0.3, k) * LIVEN_KICK
        v[free, 1] += self.rng.uniform(0.5, 1.0, k) * LIVEN_KICK * np.sign(-sim.gravity[1] or 1.0)
        sim.velocities = v
        return sim


def turned(g, degrees):
    """The vector ``g`` turned counter-clockwise by ``degrees``; a whole number of
    quarter turns is exact (np.sin(np.pi) is 1.2e-16, not 0), so gravity turned
    over twice is the gravity it was, and a turned-over hourglass is symmetric."""
    if degrees % 90.0 == 0.0:
        c, s = ((1.0, 0.0), (0.0, 1.0), (-1.0, 0.0), (0.0, -1.0))[int(degrees // 90.0) % 4]
    else:
        a = np.radians(degrees)
        c, s = np.cos(a), np.sin(a)
    return (c * g[0] - s * g[1], s * g[0] + c * g[1])


def rebuilt(sim, seed=None, size=None):
    """``sim``'s scene built afresh (seed, and a box of ``size``: default the current box,
    as many balls as keep the scene's density: scene.fitted), on ``sim``'s backend; None
    when its balls cannot be placed there."""
    from abound import Simulation
    from abound.errors import SceneError
    from abound.scene import fitted
    size = size or (sim.width, sim.height)
    try:
        new = Simulation.from_config(fitted(sim.scene, size), seed=seed, size=size)
    except SceneError:
        return None
    new.backend = sim.backend
    return new


class SaverApp:
    """One saver window per screen around one Simulation (a DemoApp without controls).

    windows: windows made elsewhere to draw into (xscreensaver's, as
    :class:`abound.render.foreign_window.ForeignWindow`) instead of opening
    one per screen; the saver quits when one is destroyed. show_fps:
    draw the frame rate in the lower left corner.
    """

    def __init__(self, sim, *, screens=None, windowed=False, headless=None, frames=None, fps=60.0,
                 size=None, windows=None, show_fps=False):
        from abound.cli.demo import DemoApp, FrameRate
        self._sim = sim  # (until the first window holds it: then the windows' controller's)
        self.live = Liveliness(sim.scene.get("saver") if sim.scene else None)
        self.apps = []
        self.drawers = []  # each window's on_draw
        self.frames = 0
        self.max_frames = frames
        self.fps = fps
        self.show_fps = show_fps
        self.rate = FrameRate()
        self.fps_labels = {}  # id(app) -> its frame-rate label (text made in its window's context)
        self.quitting = False
        self.opened = time.perf_counter()
        self.origin = None
        self._settled_pointer = None  # where the pointer rested as the settling ended (X only)
        for window in windows or []:  # someone else's: no fullscreen, no pointer, no input
            app = DemoApp(sim, window=window, box_follows_window=self._follows(sim), refill=not self.apps)
            window.remove_handlers(app)
            self._attach(app, on_draw=self._drawer(app), on_close=self.on_close, on_resize=app.on_resize)
        for screen in ([] if windows else screens or [None]):
            app = DemoApp(sim, size=size or ((960, 540) if windowed or headless else None), headless=headless,
                          visible=True, vsync=True, box_follows_window=self._follows(sim), refill=not self.apps)
            w = app.window
            if screen is not None and not windowed and not headless:
                w.set_fullscreen(True, screen=screen)
            elif not windowed and not headless:
                w.set_fullscreen(True)
            w.set_mouse_visible(False)
            w.remove_handlers(app)  # no demo controls: any input quits
            self._attach(app, on_draw=self._drawer(app), on_key_press=self.on_key_press,
                         on_mouse_press=self.on_mouse_press, on_mouse_motion=self.on_mouse_motion,
                         on_close=self.on_close, on_resize=app.on_resize)
        self._fill_screen()

    def _follows(self, sim):
        """Whether the next window's size makes the box: a scene of random balls only
        follows its first window (the others show that box fitted into them)."""
        from abound.scene import fixed_picture
        return not self.apps and not fixed_picture(sim.scene)

    def _fill_screen(self):
        """A scene of random balls only: its balls placed afresh in a box of the first window's
        size, so that they fill the screen from the start (kept as they are if they do not fit),
        and only then a box too small for them said (the scene's 10,000 balls were said not
        to fit the 960x540 preview that holds 2,500 of them, placed afresh)."""
        app = self.apps[0] if self.apps else None
        if app is None or not app.box_follows_window:
            return
        w, h = app.window.get_size()
        world = self.sim.scene.get("world", {}) if self.sim.scene is not None else {}
        if w > 0 and h > 0 and world and (w, h) != (world.get("width"), world.get("height")):
            new = rebuilt(self.sim, size=(w, h))  # (not where the balls were placed in a box of this size)
            if new is not None:
                self.sim = new
        app.note_crowding()

    @property
    def sim(self):
        """The Simulation shown (after the steps running in the background, if any)."""
        return self.apps[0].sim if self.apps else self._sim

    @sim.setter
    def sim(self, sim):
        self._sim = sim
        for a in self.apps:
            a.sim = sim

    def _attach(self, app, **handlers):
        self.drawers.append(handlers["on_draw"])
        app.window.push_handlers(**handlers)
        if not self.apps:  # the first window's app steps the physics; the saver livens it after
            app.after_steps = self._after_steps
        self.apps.append(app)

    def _drawer(self, app):
        def on_draw():
            app.window.switch_to()
            app.draw(self.apps[0].shown())  # every screen the same state, the first app's
            if self.show_fps:
                self._draw_fps(app)
            if app is self.apps[0]:
                app.frame_drawn()
                self.rate.frame()
                self.frames += 1
                if self.max_frames is not None and self.frames >= self.max_frames:
                    self.quit()
            return True
        return on_draw

    def _draw_fps(self, app):
        """The frame rate in the lower left corner, as xscreensaver's own hacks show it."""
        label = self.fps_labels.get(id(app))
        if label is None:
            import pyglet
            label = self.fps_labels[id(app)] = pyglet.text.Label("", x=10, y=10, font_size=14,
                                                                 color=(255, 255, 255, 255))
        label.text = f"FPS: {self.rate.fps:.1f}"
        label.draw()

    def tick(self, elapsed):
        return self.apps[0].tick(elapsed)

    def _after_steps(self, sim, steps):
        """After each batch of steps, where they ran (the worker thread, when pipelined):
        a still scene is livened, and a new Simulation replaces the old in every window."""
        new = self.live.update(sim, steps * sim.dt)
        if new is not sim:
            for a in self.apps:
                a.sim = new  # (on the worker: its own controller does not wait for itself)
                a.renderer.reset_trails()
            self._sim = new

    # any input quits
    def on_key_press(self, symbol, modifiers):
        self.quit()
        return True

    def on_mouse_press(self, x, y, button, modifiers):
        self.quit()
        return True

    def on_mouse_motion(self, x, y, dx, dy):
        if time.perf_counter() - self.opened < SETTLE_SECONDS:
            return True
        # Where the pointer is, asked of the X server (screen coordinates, whichever window
        # the event came from), and where it was when the settling ended. A window's own
        # report will not do: under X the window's first events say (0, 0) wherever the
        # pointer is, and an event's dx is measured from there (a 1 px nudge read as 760 px
        # and quit). Off X: where the first motion event after the settling puts it.
        where = self._pointer() or (x, y)
        if self.origin is None:
            self.origin = self._settled_pointer or where
        if np.hypot(where[0] - self.origin[0], where[1] - self.origin[1]) > MOTION_THRESHOLD:
            self.quit()
        return True

    def _note_pointer(self, dt):
        """At the end of the settling: where the pointer rests (None off X)."""
        self._settled_pointer = self._pointer()

    def _pointer(self):
        """The pointer's position on the X screen, (x, y) px, or None where there is no X window."""
        if not self.apps or self.apps[0].window is None:
            return None
        window = self.apps[0].window
        display, xwin = getattr(window, "_x_display", None), getattr(window, "_window", None)
        if not display or not xwin:
            return None
        import ctypes
        from pyglet.libs.x11 import xlib
        root, child = xlib.Window(), xlib.Window()
        rx, ry, wx, wy, mask = ctypes.c_int(), ctypes.c_int(), ctypes.c_int(), ctypes.c_int(), ctypes.c_uint()
        if not xlib.XQueryPointer(display, xwin, ctypes.byref(root), ctypes.byref(child), ctypes.byref(rx),
                                  ctypes.byref(ry), ctypes.byref(wx), ctypes.byref(wy), ctypes.byref(mask)):
            return None
        return (rx.value, ry.value)

    def on_close(self):
        self.quit()
        return True

    def quit(self):
        self.quitting = True
        import pyglet
        pyglet.app.exit()

    def close(self):
        for a in self.apps:
            a.close()
        self.apps = []

    def run(self):
        import pyglet
        pyglet.clock.schedule_interval(self.tick, 1.0 / self.fps)
        pyglet.clock.schedule_once(self._note_pointer, max(0.0, self.opened + SETTLE_SECONDS - time.perf_counter()))
        try:
            pyglet.app.run(1.0 / self.fps)
        finally:
            pyglet.clock.unschedule(self.tick)
            pyglet.clock.unschedule(self._note_pointer)
            self.close()


def run(args):
    from abound.render.style import RenderError
    words = list(args.words)
    if isinstance(args.fps, _Word):  # a bare --fps, then the scene
        words.append(str(args.fps))
    show_fps = args.fps is True or isinstance(args.fps, _Word)
    fps = args.max_fps or (args.fps if isinstance(args.fps, float) else 60.0)
    if args.delay:
        fps = min(fps, 1e6 / args.delay)
    scene = None
    if words and words[0][:2].lower() in ("/s", "/p", "/c"):
        flag = words[0][:2].lower()
        if flag == "/p":
            return 0  # preview in the control panel's little window: not supported, exit cleanly
        if flag == "/c":
            from abound import resources
            print(f"abound saver settings: the scene is {resources.default_scene_path()}\n"
                  f"Edit its [saver] and [render] sections (or copy it and run 'abound saver FILE').")
            return 0
        words = words[1:]
    if len(words) > 1:  # (the second was dropped without a word)
        print(f"abound: error: two scenes: {words[0]!r} and {words[1]!r}", file=sys.stderr)
        return 2
    if words:
        scene = words[0]
    if args.xscreensaver_setup:
        print(xscreensaver_setup())
        return 0
    if args.scene_opt is not None:
        if scene is not None and scene != args.scene_opt:
            print(f"abound: error: two scenes: {scene!r} and --scene {args.scene_opt!r}", file=sys.stderr)
            return 2
        scene = args.scene_opt
    try:
        target = target_window(args.xs_window, args.xs_root, os.environ)
    except ValueError as exc:
        print(f"abound: error: {exc}", file=sys.stderr)
        return 2
    sim = build_simulation(scene, seed=args.seed, balls=args.balls, gravity=args.gravity, liven=args.liven)
    headless = True if args.headless else None
    screens = windows = None
    if target is not None:
        from abound.render.foreign_window import NoWindow
        try:
            windows = _foreign_window(target, "offscreen" if args.headless else "in a window of its own"
                                      if args.window else "fullscreen")
        except NoWindow as exc:  # nothing to draw into, and no screen of its own to take over either
            print(f"abound: error: {exc}", file=sys.stderr)
            return 2
    try:
        if not windows and not args.window and not args.headless:
            from abound.render.context import choose_platform
            choose_platform()
            import pyglet
            all_screens = pyglet.display.get_display().get_screens()
            if args.screen == "all":
                screens = all_screens
            else:
                i = int(args.screen)
                if not 0 <= i < len(all_screens):
                    print(f"abound: error: no screen {i} (this display has {len(all_screens)})", file=sys.stderr)
                    return 2
                screens = [all_screens[i]]
        app = SaverApp(sim, screens=screens, windowed=args.window, headless=headless, frames=args.frames,
                       fps=fps, windows=windows, show_fps=show_fps)
    except (RenderError, ValueError) as exc:
        print(f"abound: error: {exc}", file=sys.stderr)
        return 2
    app.apps[0].start_warmup()  # the window draws at once while the fast engine compiles
    app.run()
    return 0


def build_simulation(scene, *, seed=None, balls=None, gravity=None, liven=None):
    """The saver's Simulation: the scene with the settings of xscreensaver's dialog applied.

    balls: total random balls (0 or None: the scene's own; a scene without
    random balls keeps its own); gravity: a factor on the scene's gravity;
    liven: the [saver] liven mode. They go into the scene itself, so the waves
    the saver builds from it later keep them.
    """
    from abound.scene import build_scene, prepare, resolve_source
    # read once (a note resolving the name is said once), and built under its name:
    # built from the dict, its errors named "<scene>"
    raw, name = resolve_source(scene)
    scene = prepare(raw, name, seed=seed)
    if balls and scene["spawn"]:  # (a scene without random balls keeps its own: the pool break)
        scene = prepare(raw, name, seed=seed, balls=balls)
    if gravity is not None:
        scene["world"]["gravity"] = [float(g) * gravity for g in scene["world"]["gravity"]]
    if liven is not None:
        scene["saver"]["liven"] = liven
    return build_scene(scene, name)


def abound_command():
    """The absolute path of the ``abound`` executable of this Python (for xscreensaver's programs: list).

    The console script beside this interpreter (a venv's or a system's bin
    directory), else the first ``abound`` on the PATH, else None.
    """
    import shutil
    from pathlib import Path
    here = Path(sys.executable).parent / ("abound.exe" if os.name == "nt" else "abound")
    if here.is_file() and os.access(here, os.X_OK):
        return str(here.absolute())
    found = shutil.which("abound")
    return str(Path(found).absolute()) if found else None


def xml_path():
    """The shipped xscreensaver settings file (abound/abound.xml)."""
    from pathlib import Path
    return Path(__file__).resolve().parent.parent / "abound.xml"


def programs_line(command):
    """The entry of ``~/.xscreensaver``'s programs: list that runs abound as a hack."""
    return f'  "Abound"  {command} saver --root  \\n\\'


def xscreensaver_setup():
    """The steps that add abound to xscreensaver, with this installation's paths."""
    command = abound_command()
    xml = xml_path()
    dest = f"{XSCREENSAVER_CONFIG_DIR}/abound.xml"
    if command is None:
        head = ("abound's executable is not on the PATH and not beside this Python "
                f"({sys.executable}): install abound with pip first, then run this again.\n")
        command = "/path/to/abound"
    else:
        head = ""
    return (f"{head}To run abound as an xscreensaver hack:\n"
            f"1. Add this line to the 'programs:' list in ~/.xscreensaver (xscreensaver-settings "
            f"writes that file; quit it first):\n"
            f"{programs_line(command)}\n"
            f"2. For abound's settings in xscreensaver-settings (scene, balls, gravity, frame rate), "
            f"copy its settings file to {XSCREENSAVER_CONFIG_DIR} (as root):\n"
            f"  sudo cp {xml} {dest}\n"
            f"3. Pick 'Abound' in xscreensaver-settings (xscreensaver reads ~/.xscreensaver again "
            f"when it changes).")


ROOT = "root"  # target_window's answer for the root window


def target_window(window_id, root, environ):
    """The X window xscreensaver asks to draw into: an id, ROOT, or None (a window of abound's).

    ``--window-id`` first, then ``$XSCREENSAVER_WINDOW`` (set: xscreensaver
    made a window for this copy; ``--root`` means that one too), then the
    root window for ``--root``. A ``$XSCREENSAVER_WINDOW`` that is not a
    window id is a ValueError.
    """
    if window_id is not None:
        return window_id
    env = environ.get("XSCREENSAVER_WINDOW", "").strip()
    if env:
        from abound.render.foreign_window import parse_window_id
        try:
            return parse_window_id(env)
        except ValueError as exc:
            raise ValueError(f"$XSCREENSAVER_WINDOW: {exc}") from None
    return ROOT if root else None


def _foreign_window(target, fallback):
    """[a ForeignWindow on ``target``], or None after one line saying why not and what happens instead.

    A window that does not exist raises NoWindow: it was mistyped, or its
    owner destroyed it already, and a screensaver must not take the screen then.
    """
    from abound.render.foreign_window import ForeignWindow, NoWindow
    from abound.render.style import RenderError
    name = "the root window" if target == ROOT else f"X window {target:#x}"
    try:
        return [ForeignWindow(None if target == ROOT else target)]
    except NoWindow:
        raise
    except RenderError as exc:
        print(f"abound saver: cannot draw into {name}: {exc}; running {fallback} instead", file=sys.stderr)
        return None
