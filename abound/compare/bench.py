"""``abound bench --compare pymunk``: the same scene stepped by abound and by pymunk, side by side.

The scene is built once; a :class:`~abound.compare.pymunk_world.PymunkWorld`
copies it before abound takes its first step, so both engines start from the
same state. Each is then stepped ``--frames`` frames of ``dt``, the two
taking turns every BLOCK frames (the load of a shared machine drifts within
a run: both see the same), and measured the same way (abound.timing.Meter):
median and p90 milliseconds per frame (the step alone), contacts per frame,
relative energy drift, largest overlap (a fraction of the radius, every
tenth of the run and at the end, untimed) and balls whose centre ended
outside the box. The ratio is pymunk's median over abound's: above 1,
abound is faster. pymunk's settings are printed with the result (see
``pymunk_world``); ``--pymunk-walls thin`` puts its box walls on the box
sides as thin segments instead of 100 px thick ones.
"""
import json
import sys

from abound.cli.bench import build, describe
from abound.timing import Meter, percentile, relative_drift, warm_up

INSTALL_HINT = 'pip install "abound[compare]"'
BLOCK = 10  # frames each engine steps before the other takes its turn


class PymunkMeter(Meter):
    """Meter for a PymunkWorld: a result dict with the keys of abound's where
    they apply, and the contact pairs pymunk solved, sampled with the overlap."""

    def __init__(self, world, frames, dt):
        super().__init__(world, frames, dt)
        self.pairs = []

    def sample(self):
        super().sample()
        count = self.engine.contacts()
        if count is not None:
            self.pairs.append(count)

    def result(self):
        world, e1 = self.engine, self.engine.energy()
        return {
            "ms_per_frame_median": percentile(self.times, 50),
            "ms_per_frame_p90": percentile(self.times, 90),
            "contact_pairs_per_frame": sum(self.pairs) / len(self.pairs) if self.pairs else None,
            "energy_first": self.e0,
            "energy_last": e1,
            "energy_drift": relative_drift(self.e0, e1),
            "max_overlap": self.overlap,
            "escaped": world.escaped(),
            "sim_time": world.time,
        }


def pymunk_missing():
    """The one-line error when pymunk cannot be imported, else None."""
    try:
        import pymunk  # noqa: F401
    except ImportError as exc:
        return f"abound: error: --compare pymunk needs pymunk, which is not installed ({exc}): {INSTALL_HINT}"
    return None


def run(args):
    problem = pymunk_missing()
    if problem:
        print(problem, file=sys.stderr)
        return 2
    from abound.compare.pymunk_world import PymunkWorld
    sim, dt, result = build(args)
    world = PymunkWorld(sim, walls=getattr(args, "pymunk_walls", None) or "thick",
                        threads=getattr(args, "pymunk_threads", None) or 1)
    warm_up(sim.backend)
    ours, theirs = Meter(sim, args.frames, dt), PymunkMeter(world, args.frames, dt)
    for _ in range(0, args.frames, BLOCK):  # alternating: both see the same machine load
        ours.run(BLOCK)
        theirs.run(BLOCK)
    result["abound"], result["pymunk"] = ours.result(), theirs.result()
    result["pymunk_settings"] = world.settings()
    result["sim_time"] = result["abound"]["sim_time"]
    result["ratio"] = result["pymunk"]["ms_per_frame_median"] / result["abound"]["ms_per_frame_median"]
    if args.json:
        print(json.dumps(result))
        return 0
    print(describe(result))
    print(result["pymunk_settings"])
    print(table(result["abound"], result["pymunk"], f"abound ({sim.backend})"))
    r = result["ratio"]
    print(f"ratio: pymunk ms / abound ms = {r:.2f} (abound is "
          f"{f'{r:.2f}x faster' if r >= 1 else f'{1 / r:.2f}x slower'})")
    return 0


def table(a, p, name="abound"):
    """abound's and pymunk's results side by side, as text."""
    pairs = p["contact_pairs_per_frame"]
    rows = [
        ("ms per frame, median", f"{a['ms_per_frame_median']:.3f}", f"{p['ms_per_frame_median']:.3f}"),
        ("ms per frame, p90", f"{a['ms_per_frame_p90']:.3f}", f"{p['ms_per_frame_p90']:.3f}"),
        ("contacts per frame", f"{a['contacts_per_frame']:.1f} resolved",
         "?" if pairs is None else f"{pairs:.1f} pairs solved"),
        ("energy drift (relative)", f"{a['energy_drift']:+.3e}", f"{p['energy_drift']:+.3e}"),
        ("largest overlap (x radius)", f"{a['max_overlap']:.3e}", f"{p['max_overlap']:.3e}"),
        ("escaped balls", str(a["escaped"]), str(p["escaped"])),
    ]
    w0 = max(len(r[0]) for r in rows)
    w1 = max(len(name), *(len(r[1]) for r in rows))
    w2 = max(len("pymunk"), *(len(r[2]) for r in rows))
    lines = [f"{'':{w0}}  {name:>{w1}}  {'pymunk':>{w2}}"]
    lines += [f"{k:{w0}}  {x:>{w1}}  {y:>{w2}}" for k, x, y in rows]
    return "\n".join(lines)
