"""Time to the first frame, and to the first frame on the fast engine, from a cold numba cache.

    python benchmarks/cold_start.py [--scene default --scene hot_gas] [--command demo|saver] [--warm]

Each run launches ``abound demo SCENE`` (or ``abound saver SCENE --window``) in a
fresh process with ``NUMBA_CACHE_DIR`` pointed at a new empty directory (a
first run after an install: numba must compile the fast engine), with a
real window (it needs a display: run it under ``xvfb-run -s "-screen 0
1920x1080x24"``). The child process is the real command with DemoApp.draw
wrapped to note the wall-clock time of each drawn frame and the backend it
showed; the times count from just before the parent launched the process
(interpreter start included). It quits at the first frame drawn on the fast
engine. ``--warm`` runs a second time on the same cache directory (a
normal start). Prints one line per run; the numbers go in BENCHMARKS.md.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, sys, time
T0 = float(sys.argv[1])
from abound.cli import demo
frames = []
draw = demo.DemoApp.draw
def traced(self):
    draw(self)
    frames.append((time.time() - T0, self.sim.backend))
    if self.sim.backend == "fast" and self.window is not None:
        self.quit()
demo.DemoApp.draw = traced
from abound.cli import main
try:
    main(sys.argv[2:])
finally:
    print("FRAMES " + json.dumps(frames), file=sys.stderr, flush=True)
"""


def run(command, scene, cache):
    env = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONPATH=str(REPO))
    argv = [command, scene] + (["--window"] if command == "saver" else [])
    t0 = time.time()
    proc = subprocess.run([sys.executable, "-c", CHILD, repr(t0), *argv], env=env, capture_output=True,
                          text=True, timeout=900)
    line = next((x for x in proc.stderr.splitlines() if x.startswith("FRAMES ")), None)
    if line is None:
        raise SystemExit(f"no frames: {proc.stderr[-2000:]}")
    frames = json.loads(line[len("FRAMES "):])
    notes = [x for x in proc.stderr.splitlines() if x.startswith("abound:")]
    first = frames[0][0]
    fast = next((t for t, b in frames if b == "fast"), None)
    interim = [t for t, b in frames if b != "fast"]
    gaps = sorted(b - a for a, b in zip(interim, interim[1:]))
    med = gaps[len(gaps) // 2] * 1000 if gaps else float("nan")
    longest = gaps[-1] * 1000 if gaps else float("nan")
    return first, fast, len(interim), med, longest, notes


def compile_alone(cache):
    """Seconds a process takes to import abound and compile the fast engine into an empty cache."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONPATH=str(REPO))
    t0 = time.time()
    subprocess.run([sys.executable, "-c", "from abound import warmup; warmup.compile_here()"],
                   env=env, check=True, timeout=900)
    return time.time() - t0


def machine():
    import platform
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())
    import numba
    return (f"{cpu}, {os.cpu_count()} cores, {platform.system()} {platform.release()}; "
            f"Python {platform.python_version()}, numba {numba.__version__}")


def load():
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scene", action="append", help="shipped scene (repeatable; default: default, hot_gas)")
    ap.add_argument("--command", action="append", choices=("demo", "saver"),
                    help="repeatable; default demo (each command runs each scene)")
    ap.add_argument("--warm", action="store_true", help="then once more on the filled cache")
    ap.add_argument("--out", help="also write the results as a Markdown section to this file "
                                  "(benchmarks/cold_start_results.md: run.py puts it in BENCHMARKS.md)")
    args = ap.parse_args()
    started, load0 = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), load()
    rows = []
    commands = args.command or ["demo"]
    for command in commands:
        for scene in args.scene or ["default", "hot_gas"]:
            with tempfile.TemporaryDirectory(prefix="numba-cold-") as cache:
                for label in ["cold", "warm"] if args.warm else ["cold"]:
                    first, fast, n, med, longest, notes = run(command, scene, cache)
                    shown = f"{command} {scene}" + (" --window" if command == "saver" else "")
                    print(f"{shown} ({label} cache): first frame {first:.2f} s, first fast frame "
                          f"{fast:.1f} s; {n} frames before it (median interval {med:.0f} ms, longest "
                          f"{longest:.0f} ms); said: {' | '.join(notes)}", flush=True)
                    rows.append(f"| `abound {shown}` | {label} | {first:.2f} | {fast:.1f} | {n:,} | "
                                f"{med:.0f} | {longest:.0f} |")
    with tempfile.TemporaryDirectory(prefix="numba-cold-") as cache:
        alone = compile_alone(cache)
    print(f"compiling alone (no window): {alone:.1f} s", flush=True)
    if args.out:
        text = ["## Cold start (issue 28)", "",
                f"Machine: {machine()}. Date: {started}; load average {load0} at the start, {load()} at the "
                f"end (2 cores shared with other jobs: the cold times vary with them).", "",
                f"Command: `xvfb-run -s \"-screen 0 1920x1080x24\" python benchmarks/cold_start.py "
                f"{' '.join('--scene ' + s for s in args.scene or [])} "
                f"{' '.join('--command ' + c for c in commands)}"
                f"{' --warm' if args.warm else ''}` (its docstring says how). Cold: `NUMBA_CACHE_DIR` "
                f"an empty directory; warm: the same directory again. Seconds from launching the process "
                f"(interpreter start included) to the first drawn frame, and to the first frame drawn "
                f"on the fast engine; the frames drawn before that on the reference engine, and the "
                f"intervals between them.", "",
                "| command | cache | first frame, s | first fast frame, s | frames before | median interval, ms "
                "| longest interval, ms |",
                "|---|---|---:|---:|---:|---:|---:|"] + rows + [
                "", f"The fast engine compiled by a process alone, no window (the same empty-cache start): "
                f"{alone:.1f} s.", "", "Target: the first frame under 2 s on a cold cache."]
        Path(args.out).write_text("\n".join(text) + "\n")


if __name__ == "__main__":
    main()
