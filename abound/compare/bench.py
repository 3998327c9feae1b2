"""``abound bench --compare pymunk``: the same scene stepped by abound and by pymunk, side by side.

The scene is built once; a :class:`~abound.compare.pymunk_world.PymunkWorld`
copies it before abound takes its first step, so both engines start from the
same state. Each is then stepped ``--frames`` frames of ``dt`` (abound first,
then pymunk) and measured the same way: median and p90 milliseconds per frame
(the step alone), contacts per frame, relative energy drift, largest overlap
(a fraction of the radius, every tenth of the run and at the end, untimed) and
balls whose centre ended outside the box. The ratio is pymunk's median over
abound's: above 1, abound is faster. pymunk's settings are printed with the
result (see ``pymunk_world``); ``--pymunk-walls thin`` puts its box walls on
the box sides as thin segments instead of 100 px thick ones.
"""
import json
import sys
import time

from abound.cli.bench import OVERLAP_SAMPLES, build, describe, measure, percentile, relative_drift, _warm_up

INSTALL_HINT = 'pip install "abound[compare]"'


def measure_pymunk(world, frames, dt):
    """Step a PymunkWorld ``frames`` times; a result dict with the keys of abound's where they apply."""
    e0 = world.energy()
    every = max(1, frames // OVERLAP_SAMPLES)
    times, overlap, pairs = [], 0.0, []
    clock = time.perf_counter
    for f in range(1, frames + 1):
        t0 = clock()
        world.step(dt)
        times.append((clock() - t0) * 1000.0)
        if f == frames or f % every == 0:
            overlap = max(overlap, world.max_overlap())
            count = world.contacts()
            if count is not None:
                pairs.append(count)
    e1 = world.energy()
    return {
        "ms_per_frame_median": percentile(times, 50),
        "ms_per_frame_p90": percentile(times, 90),
        "contact_pairs_per_frame": sum(pairs) / len(pairs) if pairs else None,
        "energy_first": e0,
        "energy_last": e1,
        "energy_drift": relative_drift(e0, e1),
        "max_overlap": overlap,
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
    world = PymunkWorld(sim, walls=getattr(args, "pymunk_walls", "thick"),
                        threads=getattr(args, "pymunk_threads", 1))
    _warm_up(sim.backend)
    result["abound"] = measure(sim, args.frames, dt)
    result["pymunk"] = measure_pymunk(world, args.frames, dt)
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
