"""``abound bench [SCENE]``: time the physics alone, no window, no display needed.

Builds the simulation from the scene (default: the embedded default scene),
steps it ``--frames`` times and reports the median and 90th percentile
wall-clock milliseconds per frame, the contacts resolved per frame (ball-ball,
ball-wall), the relative energy drift (last frame vs the start), the
largest overlap (``Simulation.max_overlap()``, a fraction of the radius) and
the balls whose centre left the box.

``--render`` hands over to the renderer's benchmark (``abound.render.bench``,
``--compare shapes`` there), ``--frames-loop`` to the demo's whole frame loop
(``abound.cli.loop_bench``, ``--compare serial`` there) and ``--compare pymunk`` to ``abound.compare.bench``;
both are imported only then.
"""
import importlib
import json
import sys
from abound.cli.args import MAX_FRAMES, box_size, count, given, positive
from abound.defaults import MIN_POSITIVE
from abound.scene import schema
from abound.timing import Meter, measure, percentile, relative_drift, warm_up  # noqa: F401

BALL_TOI = ("analytic", "bisection")


def add_arguments(parser):
    parser.add_argument("scene", nargs="?", metavar="SCENE",
                        help="scene file or shipped scene name (default: the embedded default scene)")
    parser.add_argument("--balls", type=positive(int), metavar="N",
                        help="total number of random ([[spawn]]) balls, groups scaled proportionally")
    parser.add_argument("--frames", type=positive(int, hi=MAX_FRAMES), default=300, metavar="F",
                        help=f"frames to step (default 300, at most {MAX_FRAMES:,})")
    parser.add_argument("--backend", choices=schema.BACKENDS, help="physics backend (default: the scene's)")
    parser.add_argument("--ball-toi", choices=BALL_TOI, dest="ball_toi",
                        help="ball-ball time-of-impact method (default: the scene's)")
    # (a scene's [physics] dt bounds: a dt of 1e-300 ran, frames that simulate nothing)
    parser.add_argument("--dt", type=positive(float, hi=1.0, least=MIN_POSITIVE), metavar="DT",
                        help="seconds per frame (default: the scene's [physics] dt)")
    parser.add_argument("--seed", type=count(0), metavar="S", help="override the scene's seeds")
    parser.add_argument("--size", type=box_size, metavar="WxH",
                        help="the window's size, e.g. 1920x1080, as the demo takes it: a scene of random balls "
                             "fills a box of that size at its density; one with walls or pegs keeps its own")
    parser.add_argument("--threads", type=int, choices=(1, 2),
                        help="threads a step may use (default: 2 when there are two cores; "
                             "a crowded scene then steps as strips on two threads)")
    parser.add_argument("--pymunk-threads", type=int, choices=(1, 2), dest="pymunk_threads",
                        help="with --compare pymunk: pymunk's threads (2: its threaded 'hasty' space; default 1)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    parser.add_argument("--render", action="store_true",
                        help="benchmark the renderer instead (abound.render.bench; needs OpenGL)")
    parser.add_argument("--frames-loop", action="store_true", dest="frames_loop",
                        help="time the demo's whole frame loop (physics beside drawing) headless at --size "
                             "(default 1280x720; abound.cli.loop_bench; needs OpenGL)")
    parser.add_argument("--compare", choices=("pymunk", "shapes", "serial"),
                        help="pymunk: run the same scene in pymunk too (pip install 'abound[compare]'); "
                             "shapes (with --render): draw with pyglet.shapes too; "
                             "serial (with --frames-loop): the serial frame loop too, taking turns")
    parser.add_argument("--pymunk-walls", choices=("thick", "thin"), dest="pymunk_walls",
                        help="with --compare pymunk: box walls of 100 px thick segments (default) "
                             "or thin ones on the box sides")


def _delegate(modname, what):
    """run() of an optional module, or None and a one-line message."""
    try:
        module = importlib.import_module(modname)
    except ModuleNotFoundError as exc:
        if exc.name and modname.startswith(exc.name):
            print(f"abound: error: {what} is not available in this version of abound "
                  f"(no module {modname})", file=sys.stderr)
        else:
            print(f"abound: error: {what} cannot start: {exc}", file=sys.stderr)
        return None
    return module.run


def build(args):
    """(simulation, dt, result dict describing the scene) from the command's arguments."""
    from abound.scene import fixed_picture, for_window
    sim = for_window(args.scene, args.size, seed=args.seed, backend=args.backend, balls=args.balls)
    if args.size and fixed_picture(sim.scene):
        print(f"abound: note: {args.scene or 'the default scene'} keeps its {sim.width:g}x{sim.height:g} box "
              f"(walls, pegs or placed balls, drawn scaled in a window): --size changes no physics", file=sys.stderr)
    if getattr(args, "threads", None):
        sim.threads = args.threads
    if args.ball_toi:
        sim.ball_toi = args.ball_toi
        sim.scene["physics"]["ball_toi"] = args.ball_toi
    dt = args.dt if args.dt is not None else sim.dt
    return sim, dt, {
        "scene": args.scene or "default",
        "balls": len(sim),
        "pinned": int(sim.pinned.sum()),
        "walls": len(sim.walls),
        "width": sim.width,
        "height": sim.height,
        "backend": sim.backend,
        "ball_toi": sim.ball_toi,
        "threads": sim.step_threads,
        "dt": dt,
        "frames": args.frames,
    }


def describe(r):
    """The two lines saying which scene ran how (text output)."""
    return (f"scene {r['scene']}: {r['balls']} ball{'' if r['balls'] == 1 else 's'} ({r['pinned']} pinned), "
            f"{r['walls']} wall{'' if r['walls'] == 1 else 's'}, {r['width']:g}x{r['height']:g} box\n"
            f"backend {r['backend']}, ball_toi {r['ball_toi']}, {r['threads']} thread"
            f"{'s' if r['threads'] > 1 else ''}, dt {r['dt']:g} s, {r['frames']} frames "
            f"({r['sim_time']:g} s simulated)")


def run(args):
    if args.compare == "shapes" and not args.render:
        print("abound: error: --compare shapes compares renderers: it needs --render", file=sys.stderr)
        return 2
    if args.compare == "serial" and not args.frames_loop:
        print("abound: error: --compare serial compares frame loops: it needs --frames-loop", file=sys.stderr)
        return 2
    pymunk_only = given((("--pymunk-walls", args.pymunk_walls is not None),
                         ("--pymunk-threads", args.pymunk_threads is not None)))
    if pymunk_only and args.compare != "pymunk" and not args.frames_loop:
        print(f"abound: error: {' and '.join(pymunk_only)} set{'' if len(pymunk_only) > 1 else 's'} up "
              f"pymunk's side of --compare pymunk: add --compare pymunk or drop "
              f"{'them' if len(pymunk_only) > 1 else 'it'}", file=sys.stderr)
        return 2
    if args.frames_loop:
        unused = given((("--render", args.render), ("--dt", args.dt is not None),
                         (f"--compare {args.compare}", args.compare not in (None, "serial")))) + pymunk_only
        if unused:
            print(f"abound: error: --frames-loop runs the demo's loop as it is (its scene's dt, no pymunk "
                  f"beside it): drop {', '.join(unused)}", file=sys.stderr)
            return 2
        target = _delegate("abound.cli.loop_bench", "the frame-loop benchmark (--frames-loop)")
        return 2 if target is None else target(args)
    if args.render:
        # (taken in silence, a misspelt scene ran with exit status 0, and a scene's name
        # read as the scene benchmarked: the 777-ball galton said "10000 moving balls")
        unused = given((("SCENE", args.scene is not None), ("--backend", args.backend is not None),
                         ("--ball-toi", args.ball_toi is not None), ("--dt", args.dt is not None),
                         ("--seed", args.seed is not None), ("--threads", args.threads is not None)))
        if unused:
            print(f"abound: error: --render times the drawing alone, of --balls N balls that no physics "
                  f"moves: drop {', '.join(unused)}", file=sys.stderr)
            return 2
        target = _delegate("abound.render.bench", "the render benchmark (--render)")
        return 2 if target is None else target(args)
    if args.compare:
        target = _delegate("abound.compare.bench", f"--compare {args.compare}")
        return 2 if target is None else target(args)

    sim, dt, result = build(args)
    warm_up(sim.backend)
    result.update(measure(sim, args.frames, dt))
    if args.json:
        print(json.dumps(result))
        return 0
    r = result
    print(describe(r))
    print(f"ms per frame:       median {r['ms_per_frame_median']:.3f}, p90 {r['ms_per_frame_p90']:.3f}")
    print(f"contacts per frame: {r['contacts_per_frame']:.2f} "
          f"({r['ball_ball_per_frame']:.2f} ball-ball, {r['ball_wall_per_frame']:.2f} ball-wall)")
    print(f"energy drift:       {r['energy_drift']:+.3e} (relative, last frame vs start)")
    print(f"largest overlap:    {r['max_overlap']:.3e} x radius")
    print(f"escaped balls:      {r['escaped']} (centre outside the box)")
    if r["frozen_total"]:  # StepStats.frozen
        print(f"freezes:            {r['frozen_total']} (a ball over the per-ball event budget, stopped "
              f"until the end of a step or of its part; with contact clusters also a ball wedged among "
              f"them, stopped until the next tick: counted each time, over all frames)")
    if r.get("collapsed_total"):  # StepStats.collapsed (the pymunk comparison has none)
        print(f"collapses:          {r['collapsed_total']} (rattles the rest model stopped: a ball asleep, "
              f"or frozen until the end of a step; counted each time, over all frames)")
    if r.get("stuck_total"):  # StepStats.stuck
        print(f"stuck:              {r['stuck_total']} of them asleep on a slope or a peg, where frictionless "
              f"balls cannot rest (contact_clusters = true lets them pour)")
    if r["stopped_steps"]:
        print(f"stopped steps:      {r['stopped_steps']} (a step's budget ran out: its balls lost time)")
    return 0
