"""The instant start (abound/warmup.py): the reference engine runs while the fast one
compiles, the switch between them is exact, and numba's cache lands where it can be written.

The switch is checked against runs that never switch (both engines alone give the
same bits); the warm-up against what numba compiles afterwards (nothing may be
left); the read-only install against the files numba writes (the user's cache
directory, nothing beside the package).
"""
import os
import re
import select
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from abound import Simulation
from abound import warmup

REPO = Path(__file__).resolve().parents[2]


def _state(sim):
    return sim.positions.copy(), sim.velocities.copy(), sim.modes.copy()


# galton and rain step with contact clusters; at these sizes their clusters
# form within the first 30 steps (where the engines once parted in round-off:
# CPython's x ** 2 is not always x * x, numba's is; tests/physics/test_one_source.py)
@pytest.mark.parametrize("scene, balls", [("default", None), ("galton", 100), ("pile", 300), ("rain", 150)])
def test_switching_engines_between_two_steps_changes_nothing(scene, balls):
    """reference for a while, then fast: the same state, bit for bit, as either engine alone."""
    before, after = 30, 30
    mixed = Simulation.from_config(scene, balls=balls, backend="reference")
    for _ in range(before):
        mixed.step()
    mixed.backend = "fast"
    for _ in range(after):
        mixed.step()
    for backend in ("fast", "reference"):
        alone = Simulation.from_config(scene, balls=balls, backend=backend)
        for _ in range(before + after):
            alone.step()
        for a, b in zip(_state(mixed), _state(alone)):
            assert np.array_equal(a, b), (scene, backend)


@pytest.fixture
def held(monkeypatch):
    """A warm-up that stays 'compiling' until the test lets it go (the fast engine is real)."""
    gate = threading.Event()
    real = warmup.exercise

    def exercise(engine):
        gate.wait(60)
        real(engine)
    monkeypatch.setattr(warmup, "exercise", exercise)
    monkeypatch.setattr(warmup, "_compiled", False)
    yield gate
    gate.set()


def test_the_demo_steps_on_reference_says_so_then_switches_without_a_jump(held, capsys):
    pytest.importorskip("pyglet")
    from abound.cli.demo import DemoApp
    sim = Simulation.from_config("default", backend="fast")
    app = DemoApp(sim, headless=True)  # the window is the scene's box
    try:
        app.warmup = warmup.start(app.sim)  # (start_warmup leaves headless runs alone)
        warm = app.warmup
        assert warm is not None and app.sim.backend == "reference"
        for _ in range(5):
            app.tick(app.sim.dt)
            app.draw()
        assert app.control.steps == 5 and app.sim.backend == "reference"
        warm._compiling_now()  # what numba's "numba:compile" event calls
        assert warmup.MESSAGE in app.hud_text()
        assert warmup.MESSAGE in capsys.readouterr().err
        held.set()
        assert warm.wait(300)
        app.tick(app.sim.dt)  # the switch, at the step boundary
        assert app.sim.backend == "fast" and app.warmup is None
        assert app.control.template.backend == "fast"  # R resets onto the fast engine too
        assert warmup.MESSAGE not in app.hud_text()
        for _ in range(5):
            app.tick(app.sim.dt)
        steps = app.control.steps
        alone = Simulation.from_config("default", backend="fast")
        alone.resize(*app.window.get_size())  # as the window's first resize did
        for _ in range(steps):
            alone.step()
        for a, b in zip(_state(app.sim), _state(alone)):
            assert np.array_equal(a, b)
    finally:
        app.close()


def test_a_big_scene_waits_for_the_fast_engine_but_the_window_draws(held, capsys):
    pytest.importorskip("pyglet")
    from abound.cli.demo import DemoApp
    sim = Simulation.from_config("pile", balls=warmup.FIRST_STEP_BALLS + 1, backend="fast")
    app = DemoApp(sim, headless=True, size=(320, 240))
    try:
        app.warmup = warmup.start(app.sim)  # (start_warmup leaves headless runs alone)
        app.warmup._compiling_now()  # what numba's "numba:compile" event calls
        for _ in range(3):
            app.tick(app.sim.dt)
            app.draw()
        assert app.control.steps == 0 and app.frames == 0 and app.sim.time == 0.0
        # and it says so: standing still is not "the plain-Python engine runs meanwhile", nor
        # slow motion (a new user saw both while the scene stood still for the whole compile)
        said = [line for line in capsys.readouterr().err.splitlines() if "fast engine" in line]
        assert len(said) == 2 and said[1].endswith("the scene waits for the fast engine"), said
        hud = app.hud_text()
        assert f"{warmup.MESSAGE}: the scene stands still until it is ready" in hud and "slow motion" not in hud
        held.set()
        assert app.warmup.wait(300)
        app.tick(app.sim.dt)
        assert app.sim.backend == "fast" and app.control.steps == 1
    finally:
        app.close()


def test_a_capture_that_waited_for_the_compiler_says_when_it_goes_on(held):
    """A loop that must take every step (abound capture) waits, silently before, for the fast
    engine where plain Python is too slow: a new user's first capture of the rain sat for
    five minutes with no word after "compiling"."""
    import io
    stream = io.StringIO()
    sim = Simulation.from_config("pile", balls=warmup.FIRST_STEP_BALLS + 1, backend="fast")
    warm = warmup.start(sim, stream=stream)
    warm._compiling_now()  # what numba's "numba:compile" event calls
    threading.Timer(0.5, held.set).start()
    warm.step(sim)
    assert sim.backend == "fast" and sim.time > 0.0
    said = stream.getvalue().splitlines()
    assert said[1] == (f"abound: the plain-Python engine is too slow for this scene ({len(sim)} balls): "
                       f"the scene waits for the fast engine"), said
    assert re.fullmatch(r"abound: the fast engine is ready \(\d+\.\d s\)", said[2]) and len(said) == 3, said


def _policy():
    """A Warmup's stepping policy alone, no thread, as while numba compiles."""
    warm = warmup.Warmup.__new__(warmup.Warmup)
    warm._slow = warm._tried = warm._held = warm._said_paused = False
    warm.compiling, warm.done, warm.stream = True, threading.Event(), None
    return warm


def test_a_slow_reference_step_stops_the_reference_steps():
    warm = _policy()
    sim = Simulation.from_config("default", backend="reference")
    assert warm.steps(sim, 4) == 1  # one step per frame at most
    warm.took(warmup.SLOW_STEP / 2)
    assert warm.steps(sim, 4) == 1
    warm.took(warmup.SLOW_STEP * 2)
    assert warm.steps(sim, 4) == 0


def test_deep_overlaps_to_push_apart_wait_for_the_fast_engine():
    """A window smaller than the box squeezes the balls together: pushing them apart again takes
    the reference engine seconds (galton in 960x540: 7 s), so that step waits."""
    warm = _policy()
    sim = Simulation.from_config("galton", backend="reference")
    assert warm.steps(sim, 1) == 1  # as built: nothing to push apart
    sim.resize(960, 540)
    assert sim.max_overlap() > warmup.SETTLE_OVERLAP and warm.steps(sim, 1) == 0
    assert warm.waiting  # (the HUD says the scene stands still)
    sim.backend = "fast"
    for _ in range(20):  # the fast engine pushes them apart (a deep heap over a few steps: 10 or 11 of them)
        sim.step()
        if not sim._dirty:
            break
    sim.backend = "reference"
    assert warm.steps(sim, 1) == 1 and not warm.waiting


def test_after_the_warm_up_nothing_is_left_to_compile():
    """Every compiled function abound calls from Python: run each shipped scene on the fast
    engine (split steps on two threads and one) after the warm-up; numba adds no overload."""
    code = r"""
import sys
from numba.core.dispatcher import Dispatcher
from abound import Simulation, resources
from abound import warmup
from abound.physics import backends
_, engine = backends.get("fast")
def overloads():
    return {f"{m}.{k}": len(f.overloads) for m in list(sys.modules) if m.startswith("abound.physics._compiled.")
            for k, f in vars(sys.modules[m]).items() if isinstance(f, Dispatcher)}
warmup.exercise(engine)
before = overloads()
for name in resources.config_names():
    for threads in (2, 1):
        sim = Simulation.from_config(name, backend="fast")
        sim.threads = threads
        for _ in range(3):
            sim.step()
after = overloads()
print(sum(before.values()), {k: (before.get(k), v) for k, v in after.items() if v != before.get(k)})
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=900,
                          env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert proc.returncode == 0, proc.stderr[-3000:]
    compiled, new = proc.stdout.split(" ", 1)
    assert int(compiled) >= 10 and new.strip() == "{}", proc.stdout


def test_a_cold_capture_says_it_compiles_and_makes_the_same_frames(tmp_path):
    """An empty numba cache: one line says so, and the frames are those of a warm run."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    cold = dict(env, NUMBA_CACHE_DIR=str(tmp_path / "empty-cache"))
    runs = {}
    for name, e in (("cold", cold), ("warm", env)):
        proc = subprocess.run([sys.executable, "-m", "abound", "capture", "default", "--frames", "20",
                               "--size", "160x120", "--out", str(tmp_path / name)],
                              capture_output=True, text=True, timeout=600, env=e)
        assert proc.returncode == 0, proc.stderr
        runs[name] = proc.stderr
        if name == "cold":
            lines = [x for x in proc.stderr.splitlines() if not x.startswith("abound: note: ")]
            assert warmup.MESSAGE in lines[0], proc.stderr
            # (the frames may all be made on the reference engine before the compile ends: then it
            # says so; or the rest on the fast engine, once it is ready: then it says that)
            ready = [x for x in lines[1:] if re.fullmatch(r"abound: the fast engine is ready \(\d+\.\d s\)", x)]
            assert lines[1:] in ([], [f"abound: the run ended before the fast engine was compiled; "
                                      f"{warmup.CUT_SHORT}"], ready) and len(ready) <= 1, proc.stderr
    assert warmup.MESSAGE not in runs["warm"] or "NUMBA_CACHE_DIR" in os.environ
    for k in range(20):
        a = (tmp_path / "cold" / f"frame_{k:05d}.png").read_bytes()
        b = (tmp_path / "warm" / f"frame_{k:05d}.png").read_bytes()
        assert a == b, k


def test_a_run_that_ends_while_the_engine_compiles_says_it_was_cut_short(tmp_path):
    """A capture of one frame ends long before numba is done: its child is killed at exit, so
    "compiling the fast engine (first run only)" will be heard again at the next run. A new
    user saw it repeat, unexplained: the run says, last, that the compile was cut short."""
    env = dict(os.environ, PYTHONPATH=str(REPO), NUMBA_CACHE_DIR=str(tmp_path / "empty-cache"))
    proc = subprocess.run([sys.executable, "-m", "abound", "capture", "drop", "--frames", "1",
                           "--size", "64x48", "--out", str(tmp_path / "frames")],
                          capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr
    lines = [x for x in proc.stderr.splitlines() if not x.startswith("abound: note: ")]
    assert len(lines) == 2 and warmup.MESSAGE in lines[0], proc.stderr
    assert lines[1] == f"abound: the run ended before the fast engine was compiled; {warmup.CUT_SHORT}"
    assert (tmp_path / "frames" / "frame_00000.png").is_file()


def _read_only(path):
    """argv prefix that runs a command with ``path`` read-only for it, or None where that cannot be made.

    Root writes through permissions, so as root a read-only bind mount in a mount
    namespace of its own (unshare); as anyone else, taking the write bits away does."""
    if os.geteuid() != 0:
        subprocess.run(["chmod", "-R", "a-w", str(path)], check=True)
        return []
    if shutil.which("unshare") is None:
        return None
    probe = subprocess.run(["unshare", "-m", "sh", "-c", f"mount --bind -o ro '{path}' '{path}' && "
                            f"! touch '{path}/probe' 2>/dev/null"], capture_output=True)
    if probe.returncode != 0:
        return None
    return ["unshare", "-m", "sh", "-c", f"mount --bind -o ro '{path}' '{path}' && exec \"$0\" \"$@\""]


def test_a_read_only_install_caches_in_the_users_cache_directory(tmp_path):
    site = tmp_path / "site"
    shutil.copytree(REPO / "abound", site / "abound", ignore=shutil.ignore_patterns("__pycache__"))
    prefix = _read_only(site)
    if prefix is None:
        pytest.skip("cannot make a read-only directory here (root without unshare/mount)")
    home, cache = tmp_path / "home", tmp_path / "cache"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env.update(PYTHONPATH=str(site), HOME=str(home), XDG_CACHE_HOME=str(cache))
    code = ("import abound, os\n"
            "from abound.physics import backends\n"
            "_, engine = backends.get('fast')\n"
            "stats = engine.event_budget.stats\n"
            "print(abound.__file__, engine.event_budget(1000), sum(stats.cache_hits.values()), "
            "sum(stats.cache_misses.values()))\n")
    runs = []
    try:
        for _ in range(2):
            proc = subprocess.run(prefix + [sys.executable, "-c", code], capture_output=True, text=True,
                                  timeout=300, env=env, cwd=tmp_path)
            assert proc.returncode == 0, proc.stderr[-3000:]
            runs.append(proc.stdout.split())
    finally:
        subprocess.run(["chmod", "-R", "u+w", str(site)])
    from abound.physics import engine as reference
    (module, budget, hits, misses), (_, budget2, hits2, misses2) = runs
    assert Path(module).is_relative_to(site)
    assert int(budget) == int(budget2) == reference.event_budget(1000)
    assert (int(hits), int(misses)) == (0, 1)      # compiled in the first process...
    assert (int(hits2), int(misses2)) == (1, 0)    # ... and loaded from the cache in the second
    written = list(cache.rglob("loop.event_budget-*.nbi"))  # (event_budget lives in loop.py)
    assert len(written) == 1 and written[0].is_relative_to(cache / "numba")
    assert (written[0].parent / "abound-engine.sha256").is_file()  # the stale-cache stamp beside it
    assert not list(site.rglob("*.nbi")) and not list(site.rglob("__pycache__"))


def _compiling_parent(sleep):
    """A parent's code: start the warm-up of the drop on the fast engine (on an empty
    cache a child compiles), print the child's pid, then sleep ``sleep`` s."""
    return ("import time\n"
            "from abound import Simulation, warmup\n"
            "sim = Simulation.from_config('drop', backend='fast')\n"
            "warm = warmup.start(sim, quiet=True)\n"
            "t_end = time.monotonic() + 60\n"
            "while warm.process is None and time.monotonic() < t_end:\n"
            "    time.sleep(0.01)\n"
            "print(warm.process.pid, flush=True)\n"
            f"time.sleep({sleep})\n")


@pytest.mark.parametrize("end", ["exit", "SIGKILL"])
def test_the_compiling_child_ends_with_its_parent(tmp_path, end):
    """On an empty cache a child process compiles; a screensaver must leave nothing behind, so it
    ends when the parent ends - at exit, and even when the parent is killed outright."""
    import signal
    import time
    code = _compiling_parent(2.5 if end == "exit" else 60)
    env = dict(os.environ, PYTHONPATH=str(REPO), NUMBA_CACHE_DIR=str(tmp_path / "empty"))
    parent = subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, text=True)
    child = int(parent.stdout.readline())
    assert Path(f"/proc/{child}").exists()
    time.sleep(2.0)  # the child is compiling by now (it checks for a dead parent when it starts, too)
    assert _alive(child)
    if end == "SIGKILL":
        parent.send_signal(signal.SIGKILL)
    parent.wait(30)
    t0 = time.monotonic()
    while _alive(child):
        assert time.monotonic() - t0 < 1.0, f"the compiling child still runs after its parent's {end}"
        time.sleep(0.02)


def test_the_compiling_child_imports_the_abound_its_parent_runs(tmp_path):
    """Found by a new user: abound installed, run from a source checkout (README's
    `pip install . && abound demo` in the repository). The child that compiles
    is started with `python -c`, which puts the working directory first on its
    path: it imported the checkout's abound, filled that one's cache, and the
    installed one waited on the plain-Python engine for ever. Here the working
    directory holds a decoy abound that leaves a mark when imported; the parent
    runs from a script elsewhere with the real abound on its path, on an empty
    cache, so a child compiles."""
    import time
    decoy = tmp_path / "checkout" / "abound"
    decoy.mkdir(parents=True)
    mark = tmp_path / "decoy-imported"
    (decoy / "__init__.py").write_text(f"open({str(mark)!r}, 'w').close()\nraise SystemExit(3)\n")
    script = tmp_path / "bin" / "run.py"
    script.parent.mkdir()
    script.write_text(_compiling_parent(60))
    env = dict(os.environ, PYTHONPATH=str(REPO), NUMBA_CACHE_DIR=str(tmp_path / "empty"))
    parent = subprocess.Popen([sys.executable, str(script)], cwd=decoy.parent, env=env, stdout=subprocess.PIPE,
                              text=True)
    try:
        child = int(parent.stdout.readline())
        time.sleep(3.0)  # (the decoy, imported, marks and ends the child at once)
        assert not mark.exists(), "the compiling child imported the abound of its working directory"
        assert _alive(child)  # compiling the parent's abound
    finally:
        parent.kill()
        parent.wait(30)


def _alive(pid):
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1][0] != "Z"
    except (OSError, IndexError):
        return False


@pytest.mark.parametrize("cache", ["warm", "cold"])
def test_a_process_may_end_while_the_fast_engine_loads(tmp_path, cache):
    """Exiting while the warm-up thread is in numba's LLVM code crashed the process in LLVM's
    destructors (SIGABRT, SIGSEGV): exit waits for the loading thread, and kills the compiling
    child. Exits at several moments of the load, each must be clean."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    for k, delay in enumerate((0.0, 0.05, 0.15, 0.3, 0.6)):
        if cache == "cold":
            env["NUMBA_CACHE_DIR"] = str(tmp_path / f"empty{k}")
        code = ("import time\n"
                "from abound import Simulation\n"
                "from abound import warmup\n"
                "sim = Simulation.from_config('drop', backend='fast')\n"
                "warm = warmup.start(sim, quiet=True)\n"
                f"time.sleep({delay})\n")
        proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0 and proc.stderr == "", (delay, proc.returncode, proc.stderr[-2000:])


def _first_line_on_a_cold_cache(argv, tmp_path, timeout=120):
    """The first line a command prints on stderr with an empty NUMBA_CACHE_DIR (or
    None past timeout s); the process is then stopped (the compile is not the test's)."""
    env = dict(os.environ, PYTHONPATH=str(REPO), NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    proc = subprocess.Popen([sys.executable, "-m", "abound", *argv], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        ready, _, _ = select.select([proc.stderr], [], [], timeout)
        return proc.stderr.readline() if ready else None
    finally:
        proc.kill()
        proc.communicate()


@pytest.fixture(scope="module")
def a_recorded_run(tmp_path_factory):
    log = tmp_path_factory.mktemp("log") / "run.jsonl"
    env = dict(os.environ, PYTHONPATH=str(REPO))
    subprocess.run([sys.executable, "-m", "abound", "demo", "drop", "--headless", "--frames", "3", "--record",
                    str(log)], env=env, check=True, capture_output=True, timeout=300)
    return log


@pytest.mark.parametrize("command", ["bench", "headless demo", "replay", "capture of a replay"])
def test_a_command_that_waits_for_the_compiler_says_so_first(command, a_recorded_run, tmp_path):
    # `abound bench` waits for the compiler (it times the fast engine): on a cold
    # cache it printed nothing for about four minutes (a new user took it for a hang);
    # so did a headless demo, a replay and the capture of a replay (a replay's steps
    # are the fast engine's: they cannot step on the reference one meanwhile, as a
    # window does). Run for real with an empty NUMBA_CACHE_DIR: the line must come
    # first, before any compiling.
    argv = {"bench": ["bench", "drop", "--frames", "1"],
            "headless demo": ["demo", "drop", "--headless", "--frames", "2"],
            "replay": ["replay", str(a_recorded_run), "--headless"],
            "capture of a replay": ["capture", "--replay", str(a_recorded_run), "--out", str(tmp_path / "out")]}
    first = _first_line_on_a_cold_cache(argv[command], tmp_path)
    assert first is not None and first.startswith("abound: compiling the fast engine (first run only)"), first


def test_bench_on_the_reference_engine_says_nothing_of_compiling(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(REPO), NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    # on the reference engine nothing compiles, and nothing is said
    proc = subprocess.run([sys.executable, "-m", "abound", "bench", "drop", "--frames", "1", "--backend",
                           "reference"], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr


def test_a_capture_on_a_warm_cache_takes_its_first_step_on_the_fast_engine():
    # (found by a new user: capture's first step went to the plain-Python engine while the
    # fast one was still loading from numba's cache, a fraction of a second: 3 s for 4,000
    # fast balls, 40 s for a scene of extreme speeds). Run in a process of its own, after
    # another has filled the cache: no reference step, the first already on the fast engine.
    env = dict(os.environ, PYTHONPATH=str(REPO))
    subprocess.run([sys.executable, "-c", "from abound.warmup import compile_here; compile_here()"],
                   check=True, timeout=900, env=env)
    code = r"""
from abound import Simulation, warmup
sim = Simulation.from_config("default", backend="fast")  # (few balls: a reference step is allowed)
warm = warmup.start(sim, quiet=True)
assert warm is not None and sim.backend == "reference"
warm.step(sim)
print(sim.backend, warm._tried)
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split() == ["fast", "False"], proc.stdout
