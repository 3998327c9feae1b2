"""``abound bench --frames-loop [SCENE] --size WxH``: the demo's real frame loop, timed end to end.

``abound bench`` times the physics alone and ``--render`` the drawing alone; a
user sees what the two cost together in the demo's (and the saver's) frame
loop, :class:`abound.cli.demo.DemoApp`, which this runs headless (EGL) at the
given window size, with no HUD, drawing straight into the window as the demo
does on a screen. The scene keeps its own box, fitted into the window (the
demo would make a scene of random balls as big as its window: the hot gas
squeezed into 1280x720 is another scene, not the same one drawn smaller). Each
frame is ``tick`` (the steps the elapsed time calls for, abound/pacing.py),
the frame's drawing, ``flip`` and ``glFinish`` (so the software rasteriser's
work is inside the frame), then, as pyglet's ``app.run(1/60)`` does, a wait
until an interval has passed since the frame began (none when the frame took
longer: it has missed the display's interval). No vsync wait: headless, under
Xvfb and on many screensaver setups there is none, and with it a frame rate
could only take the values 60/k.

Reported per loop: frames per second; the physics' milliseconds per frame and
per step (timed where the steps run: on the worker thread, pipelined) against
the physics-only step of the same scene timed in the same run; the drawing's
milliseconds per frame (main thread: draw, flip, finish); steps per frame; the
share of frames that missed the display's interval; and the simulated time
against the wall-clock time (how far the simulation fell behind). The loop
runs as the demo runs it: its steps beside the drawing or before it, whichever
its LoopChooser found faster (abound/pacing.py). ``--compare serial`` runs the
old serial loop too (steps, then drawing), taking turns block by block so both
see the same machine load, and prints the ratio of their frame rates.
"""
import json
import sys
import time

from abound.cli.args import plural
from abound.timing import measure, percentile, warm_up

INTERVAL = 1.0 / 60.0   # the display's frame interval (s), the loop's pace
WARMUP_FRAMES = 30      # untimed frames at the start of each loop
BLOCK = 30              # frames each loop runs in its turn (--compare)
MISSED = 1.02           # a frame longer than this many intervals missed its display tick
PHYSICS_ONLY_FRAMES = 60
MAX_WINDOW = 16384      # px a side, as the demo's --size allows


class Loop:
    """One DemoApp in its own headless window, run frame by frame as the demo's loop runs it.

    sim: the Simulation (stepped in place). size: (w, h) window pixels.
    pipelined: steps on the worker thread beside the drawing, or before it.
    """

    def __init__(self, sim, size, pipelined, name, threads=None):
        from abound.cli.demo import DemoApp
        self.name = name
        self.app = DemoApp(sim, size=size, headless=True, vsync=False, pipelined=pipelined, exact=False,
                           box_follows_window=False)
        if threads:
            self.app.step_threads = threads
        self.app.show_hud = False
        self.physics, self.steps, self.draw, self.frame = [], [], [], []  # per batch, per batch, per frame
        self.ticked = []  # steps each timed frame took (tick's answer)
        self.sim_time = self.wall_time = 0.0
        self._timed = False
        run = self.app._run_steps

        def timed_steps(steps):  # the physics, timed where it runs
            t0 = time.perf_counter()
            run(steps)
            if self._timed and steps:
                self.physics.append((time.perf_counter() - t0) * 1000.0)
                self.steps.append(steps)
        self.app._run_steps = timed_steps
        self._last = None

    def run(self, frames, timed=True):
        """Run ``frames`` frames (timed ones are kept)."""
        from pyglet import gl
        app, clock = self.app, time.perf_counter
        self._timed = timed
        now = clock()
        if self._last is None:
            self._last = now - INTERVAL
        self._last = now - INTERVAL if now - self._last > 4 * INTERVAL else self._last  # back from a turn
        for _ in range(frames):
            start = clock()
            steps = app.tick(start - self._last)
            self._last = start
            t0 = clock()
            app.window.switch_to()
            app.on_draw()
            app.window.flip()
            gl.glFinish()
            drawn = clock()
            if timed:
                self.draw.append((drawn - t0) * 1000.0)
            # as pyglet's app.run(1/60) does: the next frame an interval after this one began,
            # at once when this one took longer
            wake = start + INTERVAL
            while clock() < wake:
                time.sleep(max(0.0, min(wake - clock(), 0.002)))
            if timed:
                took = clock() - start
                self.frame.append(took * 1000.0)
                self.wall_time += took
                self.sim_time += steps * app.pacer.dt
                self.ticked.append(steps)
        app.control.wait()  # (the last batch is timed too)
        self._timed = False

    def result(self, physics_step_ms):
        app = self.app
        frames = max(len(self.frame), 1)
        per_step = [p / s for p, s in zip(self.physics, self.steps)]
        return {
            "loop": self.name,
            "pipelined_at_end": app.pipelined,
            "frames": len(self.frame),
            "fps": 1000.0 * len(self.frame) / max(sum(self.frame), 1e-9),
            "frame_ms_median": percentile(self.frame, 50),
            "physics_ms_per_frame": sum(self.physics) / frames,
            "physics_ms_per_step_median": percentile(per_step, 50),
            "physics_ms_per_step_p90": percentile(per_step, 90),
            "physics_ms_per_step_max": max(per_step, default=float("nan")),
            "physics_vs_alone_p90": percentile(per_step, 90) / physics_step_ms,
            "physics_vs_alone_max": max(per_step, default=float("nan")) / physics_step_ms,
            "draw_ms_median": percentile(self.draw, 50),
            "steps_per_frame": sum(self.ticked) / frames,
            "missed_share": sum(f > MISSED * INTERVAL * 1000.0 for f in self.frame) / frames,
            "speed": self.sim_time / max(self.wall_time, 1e-9),
            "behind_s": self.wall_time - self.sim_time,
            "threads": app.sim.step_threads,
        }

    def close(self):
        self.app.close()


# (name, steps beside the drawing: True, before it: False, None: the demo's choice; threads: None for the app's)
AUTO = ("demo", None, None)
PIPELINED = ("pipelined", True, None)
SERIAL = ("serial", False, None)
# how the text output names each loop (the JSON keeps the short names): the
# demo's own loop picks pipelined or serial as it goes, and a row "demo
# (serial)" above one "serial" read as the same loop twice
TITLES = {"demo": "the demo's loop", "pipelined": "the pipelined loop", "serial": "the serial loop"}


def run_loops(scene, size, frames, loops=(AUTO,), seed=None, balls=None, backend=None, ball_toi=None):
    """Results of the given loops, taking turns in one run (the first is the ratio's numerator)."""
    from abound.scene import for_window

    def new_sim():  # (what the demo shows in a window of this size: random balls at their density)
        sim = for_window(scene, size, seed=seed, balls=balls, backend=backend)
        if ball_toi:
            sim.ball_toi = ball_toi
        return sim

    first = new_sim()
    warm_up(first.backend)
    specs, loops = loops, []
    for k, (name, pipelined, threads) in enumerate(specs):
        loops.append(Loop(first if k == 0 else new_sim(), size, pipelined, name, threads))
    try:
        for loop in loops:
            loop.run(WARMUP_FRAMES, timed=False)
        done = 0
        while done < frames:
            block = min(BLOCK, frames - done)
            for loop in loops:
                loop.run(block)
            done += block
        # the physics alone: the same scene, stepped as abound bench does
        alone = new_sim()
        for _ in range(WARMUP_FRAMES):
            alone.step()
        step_ms = measure(alone, PHYSICS_ONLY_FRAMES)["ms_per_frame_median"]
        results = [loop.result(step_ms) for loop in loops]
        sim = loops[0].app.sim
        head = {"scene": scene or "default", "balls": len(sim), "width": size[0], "height": size[1],
                "box": [sim.width, sim.height], "backend": sim.backend, "physics_alone_ms_per_step": step_ms,
                "loops": results}
        if len(results) > 1:
            head["fps_ratio"] = results[0]["fps"] / results[-1]["fps"]
        return head
    finally:
        for loop in loops:
            loop.close()


def run(args):
    size = tuple(int(v) for v in args.size) if args.size else (1280, 720)
    frames = args.frames if args.frames is not None else 300
    specs = [AUTO, SERIAL] if args.compare == "serial" else [AUTO]
    specs = [(name, pipelined, args.threads) for name, pipelined, _ in specs]
    if max(size) > MAX_WINDOW:
        print(f"abound: error: --size {size[0]}x{size[1]}: a window is at most {MAX_WINDOW} px a side",
              file=sys.stderr)
        return 2
    r = run_loops(args.scene, size, frames, specs, args.seed, args.balls, args.backend, args.ball_toi)
    if args.json:
        print(json.dumps(r))
        return 0
    print(f"scene {r['scene']}: {plural(r['balls'], 'ball')}, {r['width']}x{r['height']} window "
          f"(box {r['box'][0]:g}x{r['box'][1]:g}), backend {r['backend']}; "
          f"physics alone {r['physics_alone_ms_per_step']:.2f} ms a step (median)")
    for x in r["loops"]:
        threads = f"{x['threads']} thread{'s' if x['threads'] > 1 else ''}"
        way = ", pipelined at the end" if x["loop"] == "demo" and x["pipelined_at_end"] else (
            ", serial at the end" if x["loop"] == "demo" else "")
        print(f"{TITLES[x['loop']]}{way}: {x['fps']:5.1f} fps ({x['frames']} frame{'s' if x['frames'] != 1 else ''}), "
              f"physics "
              f"{x['physics_ms_per_frame']:.2f} ms/frame ({x['steps_per_frame']:.2f} steps of "
              f"{x['physics_ms_per_step_median']:.2f} ms, p90 {x['physics_vs_alone_p90']:.2f}x alone, "
              f"max {x['physics_vs_alone_max']:.2f}x, {threads}), "
              f"drawing {x['draw_ms_median']:.2f} ms; missed {100 * x['missed_share']:.0f}% of intervals; "
              f"speed {x['speed']:.2f}x real time ({max(x['behind_s'], 0.0):.2f} s behind)")
    if "fps_ratio" in r:
        print(f"{TITLES[r['loops'][0]['loop']]} / {TITLES[r['loops'][-1]['loop']]}, frames per second: "
              f"{r['fps_ratio']:.2f}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit("run it as: abound bench --frames-loop [SCENE] --size WxH")
