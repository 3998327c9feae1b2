"""A library user's first step on a cold numba cache is not a silent stall.

numba compiles the fast engine once per install (a minute or more); a
program that imports abound and steps a Simulation would otherwise sit
silent meanwhile. The first fast step of a process looks whether numba's
cache holds the engine and, if not, warns (abound.CompileNotice) at the
caller's line, before anything compiles. Run in fresh processes: with an
empty NUMBA_CACHE_DIR and the warning made an error, the first step raises it
at once (nothing is compiled, so the test takes a second), from the
program's own line; on the warm cache the suite uses, a step warns of
nothing; a numba function of the program's own compiles without a word
from abound. The ``abound`` commands say it in their own words and ignore
the warning; a program calling abound.cli.main() keeps its filters after.
"""
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

FIRST_STEP = r'''
import warnings, abound
warnings.simplefilter("error", abound.CompileNotice)
sim = abound.Simulation(200, 100, backend="fast")
sim.add_ball(100.0, 50.0)
try:
    sim.step()  # line 7 of this program
    print("no notice")
except abound.CompileNotice as notice:
    import traceback
    print("notice:", notice)
    print("line:", traceback.extract_tb(notice.__traceback__)[0].lineno)
'''

WARM_STEPS = r'''
import warnings, numba, abound
with warnings.catch_warnings(record=True) as heard:
    warnings.simplefilter("always")
    sim = abound.Simulation(200, 100, backend="fast")
    sim.add_ball(100.0, 50.0)
    for _ in range(3):
        sim.step()
    numba.njit(lambda x: x + 1)(1)  # the program's own: nothing of abound's
    from abound.cli import main
    main(["check", "drop"])
print(sum(issubclass(w.category, abound.CompileNotice) for w in heard))
print([f for f in warnings.filters if f[2] is abound.CompileNotice])
'''


def run(program, **env):
    proc = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, PYTHONPATH=str(REPO), **env))
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


def test_the_first_step_on_a_cold_cache_warns_before_it_compiles(tmp_path):
    out = run(FIRST_STEP, NUMBA_CACHE_DIR=str(tmp_path / "empty"))
    assert out[0].startswith("notice: numba is compiling abound's fast engine"), out
    assert out[1] == "line: 7", out  # the program's own line, not abound's or numba's


def test_steps_on_a_warm_cache_and_other_compilations_warn_of_nothing():
    from abound.physics import backends
    assert not backends.cache_is_cold()  # (the suite runs on a warm cache)
    assert run(WARM_STEPS)[-2:] == ["0", "[]"]  # (after what check printed)
