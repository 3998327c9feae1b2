"""A library user's first step on a cold numba cache is not a silent stall.

numba compiles the fast engine once per install (a minute or more); a
program that imports abound and steps a Simulation would otherwise sit
silent meanwhile. A fresh process with an empty NUMBA_CACHE_DIR loads the
fast backend and calls one small kernel of it (numba compiles just that
one: a second, not the engine's minute): exactly one CompileNotice warning.
A second process on the same, now filled, cache loads it and hears none.
The ``abound`` commands say it in their own words and ignore the warning.
"""
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

PROGRAM = r'''
import warnings
from abound.physics import backends
with warnings.catch_warnings(record=True) as heard:
    warnings.simplefilter("always")
    _, engine = backends.get("fast")
    import abound.physics._compiled.roots as roots
    assert roots.quadratic_roots(1.0, 0.0, -4.0) == (2, -2.0, 2.0)  # (compiled, it still solves)
notices = [w for w in heard if issubclass(w.category, backends.CompileNotice)]
print(len(notices))
for w in notices:
    print(w.message)
'''


def run(cache):
    env = dict(os.environ, PYTHONPATH=str(REPO), NUMBA_CACHE_DIR=str(cache))
    proc = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


def test_a_cold_cache_warns_once_and_a_warm_one_not_at_all(tmp_path):
    cache = tmp_path / "numba-cache"
    cold = run(cache)
    assert cold[0] == "1", cold
    assert "compiling" in cold[1] and "once" in cold[1], cold
    assert any(cache.rglob("*.nbi")), "the compiled kernel was not cached"
    warm = run(cache)
    assert warm == ["0"], warm
