#!/usr/bin/env python
"""abound's physics benchmarks, side by side with pymunk in the same run; writes BENCHMARKS.md.

    python benchmarks/run.py              # the full run: 3 scenes x N = 1,000 / 10,000 / 50,000
    python benchmarks/run.py --quick      # 1,000 balls, few frames: checks the script
    python benchmarks/run.py --scenes gas,pile --sizes 10000 --runs 2 --frames 30 --out /tmp/b.md
    python benchmarks/run.py --from-json results.json   # rewrite the report from saved numbers

Run it from anywhere: it benchmarks the abound of this checkout. pymunk is
optional (``pip install "abound[compare]"``); without it (or with
``--no-pymunk``) the pymunk columns stay empty.

How long: each case (scene x size) may spend at most ``--budget`` seconds
of wall clock (default 900; quick 60) on building, settling and timing;
a case that runs out is timed on fewer frames and marked *cut short* (a
single slow frame is never interrupted). With an engine near the issue's
targets the full run takes minutes, bounded by 9 cases x the budget plus
latency and memory (about a minute).

Scenes (``configs/hot_gas.toml``, ``configs/pile.toml``, ``configs/galton.toml``,
``configs/hourglass.toml``):

- gas: the issue's hot gas, balls of radius 3, speeds 750..1500 px/s in random
  directions, restitution 1, gravity 980 px/s^2, in a 1920x1080 box;
- pile: balls of radius 4, restitution 0.5, dropped from rest into the same
  box and stepped until every ball is slower than the scene's rest speed
  (at most ``--settle`` seconds, untimed); then timed. pymunk gets the same
  settled pile (positions and velocities copied) and ``PYMUNK_SETTLE_FRAMES``
  untimed frames to build up its contact impulses;
- galton: the shipped Galton board; its 350 balls are replaced by N balls
  whose radii are scaled by sqrt(350 / N), so the same amount of "sand" fills
  the same hopper (balls of radius 3.5..4 cannot be placed there beyond ~520).
  Above 10,000 balls: N / 10,000 such boards of 10,000 balls side by side,
  each pouring from its own seed (one board of 50,000 balls a fifth as
  large is another scene: its balls, small beside the pegs, pile and sleep
  differently, and its cost per ball differs for reasons of physics, not
  of scaling).

- hourglass: the shipped hourglass, its own 2,000 grains pouring through the
  neck (contact clusters on), timed once whatever ``--sizes`` says.

The Galton board and the hourglass step with contact clusters (the default,
which the gas's and the pile's scenes turn off): lasting contacts are solved
at ticks, and the overlap bound the invariants line reads there is 1e-3 x
radius, not 1e-6 (issue 23).

Up to 10,000 balls the gas and the pile use the 1920x1080 box; above, the
box is N/10,000 times as wide (same height), so the density and the height of
the gas column and of the pile are those of the 10,000-ball scene and ideal
scaling is linear (50,000 balls of radius 3 do not fit in 1920x1080: 68 % of
its area, random placement jams at about 55 %).

Every case is stepped ``--runs`` windows of ``--frames`` frames of 1/60 s,
in turns of 10 frames (``TURN_FRAMES``): abound, then, above 10,000 balls,
the 10,000-ball scene (its partner), then pymunk, so all see the same machine
at the same minutes (its speed drifts by tens of per cent within a run).
ms per frame is the median of the turns' medians, p90 over all frames. The
pymunk ratio, and the scaling target, read the median over the turns of the
ratio of the two engines' (or sizes') median frame times in that turn; the
report gives the spread of the turns' ratios too (10th to 90th percentile).
Contacts per second: abound's resolved contacts per second of
stepping; pymunk's contact pairs solved per step (sampled after each turn)
per second. Energy drift: relative change of the total (kinetic + potential)
energy over the timed frames. Largest overlap (a fraction of the radius) and
escaped balls (centre outside the box) are measured after each window, untimed.
The invariants line checks abound: no NaN, no ball outside the box, overlap
<= 1e-6 x radius (1e-3 with contact clusters), energy not rising (1e-9 relative for rounding).

Also: the scaling table, the first-step latency of a fresh process (numba
cache warm), the memory a scene of N balls holds (resident memory of a
subprocess before and after building and stepping the gas) and the reference
(pure Python) backend at 100 and 1,000 balls. ``--json FILE`` saves the raw
numbers too. ``--pymunk-walls thin`` gives pymunk thin box walls, to see
balls leak.
"""
import argparse
import datetime
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))  # this checkout's abound, whatever else is installed

import numpy as np  # noqa: E402

from abound.physics.checks import escaped  # noqa: E402
from abound.scene import build_simulation, load_scene  # noqa: E402

DT = 1.0 / 60.0
BASE_N = 10_000          # the issue's scenes; wider boxes above this
BASE_SIZE = (1920.0, 1080.0)
GALTON_BALLS = 350       # balls in the shipped Galton board
PYMUNK_SETTLE_FRAMES = 60
TURN_FRAMES = 10         # frames per turn: abound, its 10,000-ball partner (if any) and pymunk take turns
OVERLAP_LIMIT = 1e-6     # x radius: in flight (the bound of the physics issue)
CLUSTER_OVERLAP_LIMIT = 1e-3  # x radius: in a scene with contact clusters (issue 23)
ENERGY_RISE_LIMIT = 1e-9  # relative
SCENES = ("gas", "pile", "galton", "hourglass")
OWN_SIZE = ("hourglass",)  # stepped once, with the scene's own balls, whatever --sizes says
FULL = dict(sizes=(1_000, 10_000, 50_000), runs=3, frames=60, settle=8.0, budget=900.0,
            reference=((100, 30), (1_000, 5)), latency_runs=3, memory_sizes=(1_000, 10_000, 50_000))
QUICK = dict(sizes=(1_000,), runs=2, frames=15, settle=4.0, budget=60.0,
             reference=((100, 5), (1_000, 3)), latency_runs=1, memory_sizes=(1_000, 10_000))
LABELS = {"gas": "hot gas", "pile": "settled pile", "galton": "Galton board", "hourglass": "hourglass"}


# -- scenes ---------------------------------------------------------------------------------
def box_for(n):
    w, h = BASE_SIZE
    return (w * max(1.0, n / BASE_N), h)


def build(scene, n, backend="fast"):
    """The Simulation of a benchmark scene with n random balls."""
    if scene == "gas":
        return build_simulation(REPO / "configs" / "hot_gas.toml", balls=n, size=box_for(n), backend=backend)
    if scene == "pile":
        return build_simulation(REPO / "configs" / "pile.toml", balls=n, size=box_for(n), backend=backend)
    if scene == "hourglass":  # its own 2,000 grains (n is not read): a pour through a neck
        return build_simulation(REPO / "configs" / "hourglass.toml", backend=backend)
    if scene == "galton":
        boards = max(1, round(n / BASE_N))  # above BASE_N: that many boards side by side
        spec = load_scene(REPO / "configs" / "galton.toml", balls=n // boards, backend=backend)
        k = min(1.0, math.sqrt(GALTON_BALLS / (n // boards)))
        for group in spec["spawn"]:
            r = group["radius"]
            group["radius"] = [v * k for v in r] if isinstance(r, list) else r * k
        return build_simulation(side_by_side(spec, boards))
    raise ValueError(scene)


def side_by_side(spec, copies):
    """The scene spec with its box copies times as wide and its balls, walls and
    pegs repeated in each copy (each copy's balls from their own seed)."""
    if copies == 1:
        return spec
    width = spec["world"]["width"]
    spec = dict(spec, world=dict(spec["world"], width=width * copies))
    for part in ("spawn", "walls", "pegs"):
        items = []
        for c in range(copies):
            for item in spec[part]:
                item = dict(item)
                for key in ("x0", "x1"):
                    if key in item:
                        item[key] += c * width
                if "region" in item:
                    x0, y0, x1, y1 = item["region"]
                    item["region"] = [x0 + c * width, y0, x1 + c * width, y1]
                if part == "spawn" and item.get("seed") is not None:
                    item["seed"] = item["seed"] + c
                items.append(item)
        spec[part] = items
    return spec


def settle(sim, max_seconds, deadline):
    """Step until every ball is slower than the rest speed (at most max_seconds simulated, or
    until the wall-clock deadline); returns (simulated seconds, top speed)."""
    frames, top = 0, math.inf
    while frames * DT < max_seconds and time.perf_counter() < deadline:
        sim.step(DT)
        frames += 1
        if frames % 30 == 0:
            top = float(np.max(np.hypot(*sim.velocities.T)))
            if top < sim.rest_speed:
                break
    top = float(np.max(np.hypot(*sim.velocities.T)))
    return frames * DT, top


# -- timing -----------------------------------------------------------------------------------
class Side:
    """One engine's measurements over the windows of a case."""

    def __init__(self, engine, energy):
        self.engine, self.e0 = engine, energy
        self.medians, self.times, self.contacts, self.step_seconds = [], [], [], 0.0
        self.overlap, self.escaped, self.nan = 0.0, 0, False

    def window(self, frames, deadline=math.inf):
        """Step and time ``frames`` frames (fewer if the deadline passes); returns the number stepped."""
        times, contacts = [], 0
        clock = time.perf_counter
        step = self.engine.step
        for _ in range(frames):
            t0 = clock()
            stats = step(DT)
            times.append(clock() - t0)
            if stats is not None:
                contacts += stats.contacts
            if t0 > deadline:
                break
        frames = len(times)
        sampled = getattr(self.engine, "contacts", None)  # pymunk: the pairs it solved in the last step
        if sampled is not None:
            contacts = (sampled() or 0) * frames
        self.times += times
        self.medians.append(statistics.median(times) * 1000.0)
        self.contacts.append(contacts)
        self.step_seconds += sum(times)
        pos = self.engine.positions
        self.nan |= not bool(np.all(np.isfinite(pos)))
        self.overlap = max(self.overlap, self.engine.max_overlap())
        self.escaped = max(self.escaped, escaped(pos, self.engine.width, self.engine.height))
        return frames

    def result(self):
        e1 = self.engine.energy()
        return {
            "ms_median": statistics.median(self.medians),
            "ms_p90": float(np.percentile(self.times, 90)) * 1000.0,
            "window_medians_ms": self.medians,
            "contacts_per_s": sum(self.contacts) / self.step_seconds if self.step_seconds else 0.0,
            "contacts_per_frame": sum(self.contacts) / len(self.times),
            "energy_drift": (e1 - self.e0) / abs(self.e0) if self.e0 else 0.0,
            "max_overlap": self.overlap,
            "escaped": self.escaped,
            "nan": self.nan,
        }


def turn_ratios(num, den):
    """Each turn's median frame time of Side num over Side den's."""
    return [a / b for a, b in zip(num.medians, den.medians)]


def invariants(r, clusters=False):
    """'ok' or what abound violated (overlap bound: CLUSTER_OVERLAP_LIMIT where
    contact clusters solve lasting contacts, else OVERLAP_LIMIT)."""
    bad = []
    if r["nan"]:
        bad.append("NaN")
    if r["escaped"]:
        bad.append(f"{r['escaped']} escaped")
    if r["max_overlap"] > (CLUSTER_OVERLAP_LIMIT if clusters else OVERLAP_LIMIT):
        bad.append(f"overlap {r['max_overlap']:.1e}")
    if r["energy_drift"] > ENERGY_RISE_LIMIT:
        bad.append(f"energy rose {r['energy_drift']:.1e}")
    return "ok" if not bad else "VIOLATED: " + ", ".join(bad)


def bench_case(scene, n, opts, log):
    """Build, prepare and time one scene at n balls; abound and pymunk side by side."""
    t0 = time.perf_counter()
    deadline = t0 + opts.budget
    sim = build(scene, n)
    sim.threads = opts.threads
    case = {"scene": scene, "balls": len(sim), "pegs": int(sim.pinned.sum()),
            "box": [sim.width, sim.height], "clusters": sim.contact_clusters,
            "build_s": time.perf_counter() - t0}
    if scene == "pile":
        case["settle_s"], case["settle_top_speed"] = settle(sim, opts.settle, deadline)
        case["rest_speed"] = sim.rest_speed
        log(f"  settled in {case['settle_s']:.2f} s simulated (top speed {case['settle_top_speed']:.3g} px/s)")
    sides = {"abound": Side(sim, sim.energy())}
    if opts.pymunk:
        from abound.compare.pymunk_world import PymunkWorld
        world = PymunkWorld(sim, walls=opts.pymunk_walls, threads=opts.pymunk_threads)
        if scene == "pile":
            for _ in range(PYMUNK_SETTLE_FRAMES):
                world.step(DT)
        sides["pymunk"] = Side(world, world.energy())
        case["pymunk_settings"] = world.settings()
    partner = None
    if n is not None and n > BASE_N and BASE_N in opts.sizes:
        # the scaling target compares this size with BASE_N: time a BASE_N scene
        # in the same windows, so that both see the same machine (its speed
        # drifts by tens of per cent over the minutes between two cases)
        small = build(scene, BASE_N)
        small.threads = opts.threads
        if scene == "pile":
            settle(small, opts.settle, deadline)
        partner = Side(small, small.energy())
    frames = []
    for _ in range(opts.runs):
        if frames and time.perf_counter() > deadline:
            break
        done = 0  # a window, in turns of TURN_FRAMES frames of each engine (and the partner)
        while done < opts.frames and not (done and time.perf_counter() > deadline):
            chunk = sides["abound"].window(min(TURN_FRAMES, opts.frames - done), deadline)
            if partner is not None:
                partner.window(chunk)
            if "pymunk" in sides:
                sides["pymunk"].window(chunk)  # as many frames as abound managed: the same stretch of time
            done += chunk
        frames.append(done)
    if partner is not None:
        ratios = turn_ratios(sides["abound"], partner)
        case["partner"] = {"balls": BASE_N, "ms_median": partner.result()["ms_median"],
                           "ratio": statistics.median(ratios), "turns": len(ratios)}
    case["frames"] = frames
    case["complete"] = frames == [opts.frames] * opts.runs
    if not case["complete"]:
        log(f"  budget of {opts.budget:g} s spent: timed {sum(frames)} of {opts.runs * opts.frames} frames")
    for name, side in sides.items():
        case[name] = side.result()
    case["invariants"] = invariants(case["abound"], case["clusters"])
    if "pymunk" in case:
        ratios = turn_ratios(sides["pymunk"], sides["abound"])
        case["ratio"] = statistics.median(ratios)  # (what the targets read)
        case["ratio_spread"] = [float(np.percentile(ratios, q)) for q in (10, 90)]
    return case


def bench_reference(n, frames):
    sim = build("gas", n, backend="reference")
    side = Side(sim, sim.energy())
    side.window(frames)
    return {"balls": n, "frames": frames, **side.result()}


# -- fresh processes --------------------------------------------------------------------------
LATENCY_CODE = """
import time; t0 = time.perf_counter()
from abound import Simulation
sim = Simulation.from_config(None, backend="fast")
sim.step()
print(time.perf_counter() - t0)
"""

MEMORY_CODE = """
import os, resource, sys
sys.path.insert(0, {here!r})
import run as b

def rss():  # current resident set, bytes
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

b.build("gas", 2).step(b.DT)  # imports, numba cache loaded
before = rss()
sim = b.build("gas", {n})
sim.threads = {threads}
after = rss()
for _ in range(3):
    sim.step(b.DT)
    after = max(after, rss())
print(before, after, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
"""


def _python(code):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True,
                         text=True, check=True).stdout
    return time.perf_counter() - t0, out.strip().splitlines()[-1]


def first_step_latency(runs):
    """Wall-clock seconds from starting python to the end of the first step (default scene, fast)."""
    cold_total, _ = _python(LATENCY_CODE)  # also fills the numba cache if it was cold
    totals, insides = [], []
    for _ in range(runs):
        total, inside = _python(LATENCY_CODE)
        totals.append(total)
        insides.append(float(inside))
    return {"first_process_s": cold_total, "process_s": statistics.median(totals),
            "import_build_step_s": statistics.median(insides), "runs": runs}


def memory(sizes, threads):
    """Resident memory of a process that builds the gas at n balls and steps it on
    threads threads, and on one: what the scene adds."""
    rows = []
    for n in sizes:
        row = {"balls": n}
        for count in sorted({1, threads}, reverse=True):
            code = MEMORY_CODE.format(here=str(HERE), n=n, threads=count)
            before, after, peak = map(int, _python(code)[1].split())
            one = "_1thread" if count == 1 and threads != 1 else ""
            row.update({"base_mb" + one: before / 2 ** 20, "scene_mb" + one: (after - before) / 2 ** 20,
                        "peak_mb" + one: peak / 2 ** 20, "bytes_per_ball" + one: (after - before) / n})
        rows.append(row)
    return {"rows": rows, "threads": threads}


# -- machine ------------------------------------------------------------------------------------
def machine():
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        cpu = platform.processor() or cpu
    versions = {"python": platform.python_version()}
    for mod in ("numpy", "numba", "pymunk"):
        try:
            module = __import__(mod)
            versions[mod] = getattr(module, "__version__", None) or getattr(module, "version", "?")
        except ImportError:
            versions[mod] = "not installed"
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True,
                                text=True).stdout.strip() or "unknown"
    except OSError:
        commit = "unknown"
    return {"cpu": cpu, "cores": os.cpu_count(), "system": f"{platform.system()} {platform.release()}",
            "versions": versions, "commit": commit,
            "date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), "load_start": os.getloadavg()}


# -- report -------------------------------------------------------------------------------------
def _f(v, fmt):
    return "-" if v is None else format(v, fmt)


def _spread(case):
    lo_hi = case.get("ratio_spread")
    return f" ({lo_hi[0]:.2f}-{lo_hi[1]:.2f})" if lo_hi else ""


def _threads(opts):
    n = getattr(opts, "threads", 1)  # (results saved before threads existed: one)
    return f"{n} thread{'s' if n > 1 else ''} per step"


def report(res):
    opts = argparse.Namespace(**res["options"])
    m = res["machine"]
    v = m["versions"]
    out = ["# Physics benchmarks", "",
           f"Machine: {m['cpu']}, {m['cores']} cores, {m['system']}; Python {v['python']}, numpy {v['numpy']}, "
           f"numba {v['numba']}, pymunk {v['pymunk']}. Date: {m['date']}, abound commit {m['commit']}. "
           f"Load average {m['load_start'][0]:.1f} at the start, {m['load_end'][0]:.1f} at the end "
           f"(other jobs on the machine make times noisy).", "",
           f"Command: `{res['command']}` ({res['minutes']:.1f} minutes). How each number is measured: "
           "the docstring of `benchmarks/run.py`.", ""]
    if opts.quick:
        out += ["**Quick run** (`--quick`): small sizes and few frames, to check the script; "
                "not the full benchmark, which is `python benchmarks/run.py`.", ""]
    cases = res["cases"]
    if cases:
        settings = next((c["pymunk_settings"] for c in cases if "pymunk_settings" in c), None)
        out += ["## abound and pymunk, side by side", "",
                f"{opts.runs} windows of {opts.frames} frames of 1/60 s per case, engines taking turns of "
                f"{TURN_FRAMES} frames. ratio = pymunk ms / abound ms, the median over the turns (above 1: "
                "abound is faster); in brackets the 10th to 90th percentile of the turns' ratios. "
                f"abound: {_threads(opts)} (a crowded step runs as strips on two threads: "
                "abound/physics/split.py).",
                f"{settings}." if settings else "pymunk: not run.", "",
                "| scene | balls | abound ms/frame (p90) | pymunk ms/frame (p90) | ratio | abound contacts/s "
                "| pymunk pairs/s | energy drift abound / pymunk | largest overlap abound / pymunk "
                "| escaped abound / pymunk | abound invariants |",
                "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
        for c in cases:
            a, p = c["abound"], c.get("pymunk")
            extra = f" ({c['pegs']} pegs)" if c["pegs"] else ""
            if not c["complete"]:
                extra += f" (cut short: {sum(c['frames'])} frame{'s' if sum(c['frames']) > 1 else ''})"
            out.append(
                f"| {LABELS[c['scene']]} | {c['balls'] - c['pegs']:,}{extra} | {a['ms_median']:.2f} ({a['ms_p90']:.2f}) "
                f"| {_f(p and p['ms_median'], '.2f')} ({_f(p and p['ms_p90'], '.2f')}) | {_f(c.get('ratio'), '.2f')}{_spread(c)} "
                f"| {a['contacts_per_s']:,.0f} | {_f(p and p['contacts_per_s'], ',.0f')} "
                f"| {a['energy_drift']:+.1e} / {_f(p and p['energy_drift'], '+.1e')} "
                f"| {a['max_overlap']:.1e} / {_f(p and p['max_overlap'], '.1e')} "
                f"| {a['escaped']} / {_f(p and p['escaped'], 'd')} | {c['invariants']} |")
        piles = [c for c in cases if c["scene"] == "pile"]
        if piles:
            out += ["", "Pile settling (untimed, before the timed frames): " + "; ".join(
                f"{c['balls']:,} balls {c['settle_s']:.2f} s simulated, then top speed {c['settle_top_speed']:.3g} px/s"
                + ("" if c["settle_top_speed"] < c["rest_speed"] else " (NOT settled: faster than the "
                   f"rest speed {c['rest_speed']:g} px/s)") for c in piles) + "."]
        if not all(c["complete"] for c in cases):
            out += ["", f"Cases marked *cut short* ran out of the per-case budget ({opts.budget:g} s of wall "
                    "clock for building, settling and timing; `--budget`) and were timed on fewer frames."]
        out += ["", "## Scaling", "", "abound ms per frame (median); in brackets the ratio to the next smaller size.", "",
                "| scene | " + " | ".join(f"{n:,}" for n in opts.sizes) + " |",
                "|---|" + "---:|" * len(opts.sizes)]
        for scene in (s for s in opts.scenes if s not in OWN_SIZE):
            row, prev = [], None
            for n in opts.sizes:
                c = next((c for c in cases if c["scene"] == scene and c["balls"] - c["pegs"] == n), None)
                if c is None:
                    row.append("-")
                    continue
                ms = c["abound"]["ms_median"]
                row.append(f"{ms:.2f}" + (f" ({ms / prev:.1f}x)" if prev else ""))
                prev = ms
            out.append(f"| {LABELS[scene]} | " + " | ".join(row) + " |")
        paired = [c for c in cases if "partner" in c]
        if paired:
            out += ["", f"Timed in turns (each larger case stepped {TURN_FRAMES} frames at a time in turns with "
                    f"the {BASE_N:,}-ball scene; the median over the turns of the ratio of their times is what "
                    "the target reads): "
                    + "; ".join(f"{LABELS[c['scene']]} {c['balls'] - c['pegs']:,} balls {c['abound']['ms_median']:.2f} "
                                f"ms vs {c['partner']['ms_median']:.2f} ms, {scaling(None, c):.2f}x over "
                                f"{c['partner']['turns']} turns" for c in paired)
                    + "."]
    if res.get("reference"):
        out += ["", "## Reference backend (plain Python)", "",
                "The hot gas (1920x1080 box), `backend=\"reference\"`.", "",
                "| balls | frames | ms/frame (median) | p90 |", "|---:|---:|---:|---:|"]
        out += [f"| {r['balls']:,} | {r['frames']} | {r['ms_median']:.1f} | {r['ms_p90']:.1f} |"
                for r in res["reference"]]
    if res.get("latency"):
        lat = res["latency"]
        out += ["", "## First step of a fresh process", "",
                f"`python -c` importing abound, building the default scene with the fast backend and taking "
                f"one step: {lat['process_s']:.2f} s wall clock including the interpreter start "
                f"({lat['import_build_step_s']:.2f} s from the first import to the end of the step), median "
                f"of {lat['runs']}, numba cache warm (the first process of the run took {lat['first_process_s']:.2f} s)."]
    if res.get("memory"):
        mem = res["memory"]
        out += ["", "## Memory", "",
                "A fresh process imports abound, loads the compiled engine, builds the hot gas and steps it "
                "3 frames; resident memory (Linux /proc/self/statm) before the build and at most after the "
                "build and each step: the difference is what the scene holds. Peak: the process's ru_maxrss."]
        one = "bytes_per_ball_1thread" in mem["rows"][0]
        if one:
            out += ["", f"Stepped on {mem['threads']} threads, and in another process on one (the last "
                    "column): a split step adds the second thread's own malloc arena and the strips' "
                    "working copies."]
        out += ["", "| balls | before the build, MB | scene, MB | bytes per ball | process peak, MB |"
                + (" bytes per ball, 1 thread |" if one else ""),
                "|---:|---:|---:|---:|---:|" + ("---:|" if one else "")]
        out += [f"| {r['balls']:,} | {r['base_mb']:.0f} | {r['scene_mb']:.1f} | {r['bytes_per_ball']:,.0f} "
                f"| {r['peak_mb']:.0f} |" + (f" {r['bytes_per_ball_1thread']:,.0f} |" if one else "")
                for r in mem["rows"]]
    out += ["", "## Targets (issues 3 and 23)", ""] + targets(res)
    for kept in ("cold_start_results.md", "ab_engine_results.md", "frame_loop_results.md", "black_holes_results.md",
                 "dense_flow_results.md"):  # the other scripts' results
        path = Path(__file__).resolve().parent / kept
        if path.is_file():
            out += [""] + path.read_text().rstrip("\n").splitlines()
    return "\n".join(out) + "\n"


def scaling(small, large):
    """large's time over small's: over the 10,000-ball scene timed in the same
    windows as large (bench_case), else over small's own case; None if not measured."""
    if large and "partner" in large:
        return large["partner"]["ratio"]
    if small and large:
        return large["abound"]["ms_median"] / small["abound"]["ms_median"]
    return None


def targets(res):
    cases = {(c["scene"], c["balls"] - c["pegs"]): c for c in res["cases"]}
    lines = []

    def say(text, ok):
        lines.append(f"- {text}: " + ("not measured in this run" if ok is None else ("met" if ok else "NOT met")))

    def no_slower(what, c):
        compared = c is not None and "pymunk" in c
        say(f"{what}, no slower than pymunk"
            + (f" (ratio {c['ratio']:.2f}{_spread(c)}; {c['abound']['ms_median']:.1f} vs "
               f"{c['pymunk']['ms_median']:.1f} ms)" if compared else ""),
            c["ratio"] >= 1 if compared else None)

    gas, pile = cases.get(("gas", 10_000)), cases.get(("pile", 10_000))
    no_slower("hot gas, 10,000 balls", gas)
    say("hot gas, 10,000 balls, 5 ms per frame (the aim)", None if not gas else gas["abound"]["ms_median"] <= 5)
    no_slower("settled pile, 10,000 balls, e = 0.5", pile)
    no_slower("Galton board pouring (contact clusters, issue 23), 10,000 balls", cases.get(("galton", 10_000)))
    sized = [scene for scene in SCENES if scene not in OWN_SIZE]
    for scene in sized:
        c = cases.get((scene, 1_000))
        say(f"{LABELS[scene]}, 1,000 balls, under 1 ms per frame"
            + (f" ({c['abound']['ms_median']:.2f} ms)" if c else ""), None if not c else c["abound"]["ms_median"] < 1)
    for scene in sized:
        ratio = scaling(cases.get((scene, 10_000)), cases.get((scene, 50_000)))
        say(f"{LABELS[scene]}, 50,000 balls at most 6x the 10,000 time"
            + (f" ({ratio:.2f}x, timed in turns)" if ratio else ""),
            None if ratio is None else ratio <= 6)
    lat = res.get("latency")
    say("a second process reaches its first step in under 1 s"
        + (f" ({lat['process_s']:.2f} s)" if lat else ""), None if not lat else lat["process_s"] < 1)
    mem = res.get("memory")
    if mem and len(mem["rows"]) > 1:
        per = [r["bytes_per_ball"] for r in mem["rows"]]
        sizes = ", ".join(f"{r['balls']:,}" for r in mem["rows"])
        text = f"{', '.join(f'{p:,.0f}' for p in per)} bytes per ball at {sizes} balls"
        if "bytes_per_ball_1thread" in mem["rows"][0]:
            text += (f" ({mem['threads']} threads); on one thread "
                     + ", ".join(f"{r['bytes_per_ball_1thread']:,.0f}" for r in mem["rows"]))
        lines.append(f"- memory about linear in N: {text}")
    else:
        say("memory about linear in N", None)
    return lines


# -- main ---------------------------------------------------------------------------------------
def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="small sizes, few frames: check the script")
    p.add_argument("--scenes", default=",".join(SCENES), help=f"comma-separated, of {', '.join(SCENES)}")
    p.add_argument("--sizes", help="comma-separated ball counts (default 1000,10000,50000; quick: 1000)")
    p.add_argument("--runs", type=int, help="timed windows per case (default 3; quick: 2)")
    p.add_argument("--frames", type=int, help="frames per window (default 60; quick: 15)")
    p.add_argument("--settle", type=float, help="at most this many simulated seconds to settle the pile")
    p.add_argument("--budget", type=float,
                   help="wall-clock seconds per case (build, settle, timing) before it is cut short "
                        "(default 900; quick: 60)")
    p.add_argument("--no-pymunk", dest="pymunk", action="store_false", help="abound only")
    p.add_argument("--pymunk-walls", choices=("thick", "thin"), default="thick", dest="pymunk_walls",
                   help="pymunk's box walls: 100 px thick segments (default) or thin ones, which leak")
    p.add_argument("--threads", type=int, choices=(1, 2),
                   help="abound's threads per step (default: 2 on two cores or more; abound/physics/split.py)")
    p.add_argument("--pymunk-threads", type=int, choices=(1, 2), default=1, dest="pymunk_threads",
                   help="pymunk's threads (2: its threaded space; default 1)")
    p.add_argument("--skip", default="", help="comma-separated parts to leave out: reference,latency,memory")
    p.add_argument("--out", default=str(REPO / "BENCHMARKS.md"), help="the Markdown report (default BENCHMARKS.md)")
    p.add_argument("--json", metavar="FILE", help="also save the raw results as JSON")
    p.add_argument("--from-json", metavar="FILE", dest="from_json",
                   help="run nothing: write the report again from results saved with --json")
    opts = p.parse_args(argv)
    base = QUICK if opts.quick else FULL
    opts.scenes = [s for s in opts.scenes.split(",") if s]
    bad = [s for s in opts.scenes if s not in SCENES]
    if bad:
        p.error(f"unknown scene {bad[0]!r}: choose from {', '.join(SCENES)}")
    opts.sizes = [int(s) for s in opts.sizes.split(",")] if opts.sizes else list(base["sizes"])
    opts.runs = opts.runs or base["runs"]
    opts.frames = opts.frames or base["frames"]
    opts.settle = opts.settle or base["settle"]
    opts.budget = opts.budget or base["budget"]
    opts.skip = set(s for s in opts.skip.split(",") if s)
    opts.base = base
    if opts.pymunk:
        try:
            import pymunk  # noqa: F401
        except ImportError:
            print('pymunk is not installed (pip install "abound[compare]"): abound only', file=sys.stderr)
            opts.pymunk = False
    return opts


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    opts = parse(argv)
    if opts.from_json:
        Path(opts.out).write_text(report(json.loads(Path(opts.from_json).read_text())))
        return 0
    started = time.perf_counter()

    def log(text):
        print(f"[{time.perf_counter() - started:7.1f} s] {text}", file=sys.stderr, flush=True)

    warm = build("gas", 2)
    warm.threads = opts.threads  # (None: the Simulation's default, which the report names)
    opts.threads = warm.threads
    warm.step(DT)  # compile or load the numba cache, untimed
    res = {"machine": machine(), "command": " ".join(["python benchmarks/run.py", *argv]), "cases": [],
           "options": {k: getattr(opts, k) for k in ("quick", "runs", "frames", "sizes", "scenes", "budget",
                                                     "threads", "pymunk_threads")}}
    runs = [(n, scene) for n in opts.sizes for scene in opts.scenes if scene not in OWN_SIZE]
    runs += [(None, scene) for scene in opts.scenes if scene in OWN_SIZE]
    for n, scene in runs:
        log(f"{scene}, {'its own' if n is None else f'{n:,}'} balls")
        case = bench_case(scene, n, opts, log)
        res["cases"].append(case)
        a = case["abound"]
        log(f"  abound {a['ms_median']:.2f} ms/frame" + (
            f", pymunk {case['pymunk']['ms_median']:.2f} ms/frame" if "pymunk" in case else "")
            + f"; {case['invariants']}")
    if "reference" not in opts.skip:
        res["reference"] = []
        for n, frames in opts.base["reference"]:
            log(f"reference backend, {n:,} balls")
            res["reference"].append(bench_reference(n, frames))
    if "latency" not in opts.skip:
        log("first-step latency")
        res["latency"] = first_step_latency(opts.base["latency_runs"])
    if "memory" not in opts.skip:
        log("memory")
        res["memory"] = memory(opts.base["memory_sizes"], opts.threads)
    res["machine"]["load_end"] = os.getloadavg()
    res["minutes"] = (time.perf_counter() - started) / 60.0
    Path(opts.out).write_text(report(res))
    log(f"wrote {opts.out}")
    if opts.json:
        Path(opts.json).write_text(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
