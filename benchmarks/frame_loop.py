"""The demo's whole frame loop, end to end (issue 27): writes frame_loop_results.md and its BENCHMARKS.md section.

For each scene and window size, in one process per case, four loops of
:mod:`abound.cli.loop_bench` take turns block by block (so that all see the
same machine load): the demo's loop as it now runs (pipelined or serial,
whichever its LoopChooser times faster: abound/pacing.py), the pipelined
loop (steps on a worker thread beside the drawing, the step's threads as the
demo picks them: abound/worker.py), the pipelined loop with a step on two
threads, and the serial loop as it ran before (steps, then drawing; two
threads a step). The
physics alone is timed in the same process afterwards, as ``abound bench``
times it (two threads a step). Headless (EGL, llvmpipe), no HUD.

    python benchmarks/frame_loop.py [--frames 300] [--scene default --scene hot_gas ...] [--size 1920x1080 ...]

The table is written to ``benchmarks/frame_loop_results.md``, followed by
``frame_loop_notes.md`` (by hand); ``run.py`` keeps that file in
BENCHMARKS.md, and this script puts it there too (replacing the section of
the same title). ``--from-json FILE`` writes them again from a saved run.
"""
import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
TITLE = "## Frame loop: physics beside drawing (issue 27)"
SCENES = ("default", "hot_gas", "galton")
SIZES = ("1280x720", "1920x1080")

CASE = """
import json, sys
from abound.cli import loop_bench as lb
scene, w, h, frames = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
specs = [lb.AUTO, lb.PIPELINED, ("pipelined", True, 2), lb.SERIAL]
print(json.dumps(lb.run_loops(scene, (w, h), frames, specs)))
"""


def run_case(scene, size, frames):
    w, h = size.split("x")
    out = subprocess.run([sys.executable, "-c", CASE, scene, w, h, str(frames)], capture_output=True,
                         text=True, cwd=REPO, timeout=3600)
    if out.returncode:
        raise SystemExit(f"{scene} {size}: {out.stderr.strip().splitlines()[-1]}")
    return json.loads(out.stdout)


def cpu():
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown CPU"


def table(cases, head):
    out = [TITLE, "", head, "",
           "| scene | window | loop | fps | frame ms (median) | physics ms/frame | steps/frame | "
           "step ms (median) | step p90 / alone | step max / alone | drawing ms (median) | missed | "
           "speed (x real time) |",
           "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for c in cases:
        for x in c["loops"]:
            threads = f" ({x['threads']} thread{'s' if x['threads'] > 1 else ''})"
            if x["loop"] == "demo":
                threads = f" (chose {'pipelined' if x['pipelined_at_end'] else 'serial'}){threads}"
            out.append(f"| {c['scene']} ({c['balls']:,} balls) | {c['width']}x{c['height']} | {x['loop']}{threads} "
                       f"| {x['fps']:.1f} | {x['frame_ms_median']:.1f} | {x['physics_ms_per_frame']:.2f} "
                       f"| {x['steps_per_frame']:.2f} | {x['physics_ms_per_step_median']:.2f} "
                       f"| {x['physics_vs_alone_p90']:.2f} | {x['physics_vs_alone_max']:.2f} "
                       f"| {x['draw_ms_median']:.1f} | {100 * x['missed_share']:.0f}% | {x['speed']:.2f} |")
    out += ["", "The demo's loop over the serial loop, frames per second: "
            + "; ".join(f"{c['scene']} {c['width']}x{c['height']} {c['loops'][0]['fps'] / c['loops'][-1]['fps']:.2f}"
                        for c in cases) + ".",
            "", "Physics alone (`abound bench`, two threads a step, median ms a step, timed after the loops): "
            + "; ".join(f"{c['scene']} {c['width']}x{c['height']} {c['physics_alone_ms_per_step']:.2f}"
                        for c in cases) + "."]
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--frames", type=int, default=300, help="timed frames per loop (default 300)")
    p.add_argument("--scene", action="append", help=f"scene (repeatable; default {', '.join(SCENES)})")
    p.add_argument("--size", action="append", help=f"window WxH (repeatable; default {', '.join(SIZES)})")
    p.add_argument("--json", metavar="FILE", help="also save the raw results as JSON")
    p.add_argument("--from-json", metavar="FILE", dest="from_json", help="run nothing: report a saved run")
    opts = p.parse_args(argv)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True,
                            text=True).stdout.strip()
    load0 = os.getloadavg()
    if opts.from_json:
        saved = json.loads(Path(opts.from_json).read_text())
        cases, head = saved["cases"], saved["head"]
    else:
        cases = []
        for scene in opts.scene or SCENES:
            for size in opts.size or SIZES:
                print(f"{scene} {size}...", file=sys.stderr, flush=True)
                cases.append(run_case(scene, size, opts.frames))
        head = (f"Machine: {cpu()}, {os.cpu_count()} cores, {platform.system()} {platform.release()}; "
                f"Python {platform.python_version()}. Date: {datetime.datetime.now():%Y-%m-%d %H:%M} UTC, "
                f"commit {commit}; load average {' '.join(f'{v:.2f}' for v in load0)} at the start, "
                f"{' '.join(f'{v:.2f}' for v in os.getloadavg())} at the end.\n\n"
                f"Command: `python benchmarks/frame_loop.py --frames {opts.frames}` (its docstring says how): "
                f"{opts.frames} timed frames per loop after 30 untimed, the loops taking turns 30 frames at a "
                "time, headless (EGL, llvmpipe), no HUD, paced as pyglet's `app.run(1/60)` paces the demo. "
                "*missed*: frames longer than the 1/60 s interval; *speed*: simulated over wall-clock "
                "seconds; *step p90 / max / alone*: a step's time in the loop over the physics-only step.")
    if opts.json:
        Path(opts.json).write_text(json.dumps({"cases": cases, "head": head}, indent=1))
    text = "\n".join(table(cases, head)) + "\n"
    notes = HERE / "frame_loop_notes.md"  # what was seen, written by hand (kept across runs)
    if notes.is_file():
        text += "\n" + notes.read_text()
    (HERE / "frame_loop_results.md").write_text(text)
    put_section(TITLE, text)
    print(text)
    return 0


def put_section(title, text):
    """Put ``text`` in BENCHMARKS.md as the section ``title`` (replacing it, else at the end)."""
    bench = REPO / "BENCHMARKS.md"
    doc = bench.read_text()
    if title in doc:
        start = doc.index(title)
        nxt = doc.find("\n## ", start + len(title))
        doc = doc[:start] + text + ("\n" + doc[nxt + 1:] if nxt >= 0 else "")
    else:
        doc = doc.rstrip("\n") + "\n\n" + text
    bench.write_text(doc)


if __name__ == "__main__":
    sys.exit(main())
