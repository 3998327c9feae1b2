"""Where the compiled engine spends a step: perf samples named by kernel.

    python benchmarks/ab_engine.py --save-state /tmp/g10k.pkl --scene galton --balls 10000 --until 0.8
    python benchmarks/profile_engine.py /tmp/g10k.pkl [--frames 6] [--top 25]

Steps a saved state (ab_engine.py --save-state) with this checkout's fast
backend on one thread, under ``perf record`` (Linux perf; ``apt-get install
linux-perf``), and prints the share of samples in each compiled function.

Why it takes a cold numba cache. perf finds no symbols in numba's code: it
is generated in memory. perf reads names for such code from
/tmp/perf-<pid>.map, which this script writes from the compiled libraries'
LLVM modules (every function a step calls is linked into them, each at its
own address). A library loaded from numba's cache keeps only machine code,
not those modules, so the engine is compiled afresh in a temporary
NUMBA_CACHE_DIR (a few minutes) whenever this runs. Functions numba inlined
(``@inlined``, and what LLVM chose to inline) count for their callers.
"""
import argparse
import copy
import os
import pickle
import signal
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def plain_name(symbol):
    """module.function of a numba symbol (_ZN6abound7physics9_compiled8clusters4tickB4v159...),
    which c++filt leaves as it is; other names unchanged."""
    if not symbol.startswith("_ZN"):
        return symbol
    parts, k = [], 3
    while k < len(symbol) and symbol[k].isdigit():
        digits = k
        while symbol[k].isdigit():
            k += 1
        size = int(symbol[digits:k])
        parts.append(symbol[k:k + size])
        k += size
    return ".".join(p for p in parts if p not in ("abound", "physics", "_compiled")) or symbol


def perf_map():
    """Write /tmp/perf-<pid>.map: every function of the compiled engine's LLVM modules, by address."""
    names = {}
    for name, mod in list(sys.modules.items()):
        if "_compiled" not in name:
            continue
        for attr in dir(mod):
            for cres in getattr(getattr(mod, attr), "overloads", {}).values():
                module = getattr(cres.library, "_final_module", None)
                for f in module.functions if module is not None else ():
                    if not f.is_declaration:
                        address = cres.library.get_pointer_to_function(f.name)
                        if address:
                            names[address] = f.name
    starts = sorted(names)
    with open(f"/tmp/perf-{os.getpid()}.map", "w") as out:
        for k, start in enumerate(starts):
            size = min(starts[k + 1] - start if k + 1 < len(starts) else 4096, 1 << 20)
            out.write(f"{start:x} {size:x} {plain_name(names[start])}\n")
    return len(starts)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("state", help="a state saved by ab_engine.py --save-state")
    ap.add_argument("--frames", type=int, default=6)
    ap.add_argument("--top", type=int, default=25)
    args = ap.parse_args()
    if "ABOUND_PROFILE_CHILD" not in os.environ:  # run again with a cold cache of our own
        with tempfile.TemporaryDirectory() as cache:
            env = dict(os.environ, NUMBA_CACHE_DIR=cache, ABOUND_PROFILE_CHILD="1", NUMBA_NUM_THREADS="1")
            sys.exit(subprocess.run([sys.executable] + sys.argv, env=env).returncode)
    sys.path.insert(0, REPO)
    sys.path.insert(0, os.path.join(REPO, "benchmarks"))
    from ab_engine import adapt_ticks
    from abound.physics.backends import get
    engine = get("fast")[1]
    with open(args.state, "rb") as f:
        scene, n, saved = pickle.load(f)
    B, W, params = copy.deepcopy(saved)
    B, W = tuple(B), tuple(W)
    t0 = time.perf_counter()
    adapt_ticks(params, engine.step(B, W, params, 1 / 60))  # compiles
    print(f"compiled in {time.perf_counter() - t0:.0f} s; {perf_map()} functions named", file=sys.stderr)
    data = os.path.join(tempfile.gettempdir(), f"abound-perf-{os.getpid()}.data")
    perf = subprocess.Popen(["perf", "record", "-q", "-F", "999", "-p", str(os.getpid()), "-o", data],
                            stderr=subprocess.DEVNULL)
    time.sleep(1.0)  # (perf attaches)
    times = []
    for _ in range(args.frames):
        t0 = time.perf_counter()
        adapt_ticks(params, engine.step(B, W, params, 1 / 60))
        times.append(time.perf_counter() - t0)
    perf.send_signal(signal.SIGINT)
    perf.wait()
    report = subprocess.run(["perf", "report", "-i", data, "--no-children", "--sort", "symbol", "--stdio"],
                            capture_output=True, text=True).stdout
    os.unlink(data)
    print(f"{scene} ({n} balls) from {args.state}: {args.frames} frames, median "
          f"{sorted(times)[len(times) // 2] * 1e3:.0f} ms a frame; share of perf samples:")
    shown = 0
    for line in report.splitlines():
        parts = line.split()
        if shown < args.top and parts and parts[0].endswith("%") and "[.]" in parts:
            label = [w for w in parts[parts.index("[.]") + 1:] if w != "-"]  # (perf's empty columns)
            print(f"  {parts[0]:>7}  {' '.join(label)}")
            shown += 1


if __name__ == "__main__":
    main()
