"""What the fast backend's start brings into a fresh process (no timing here).

numba sets itself up on the first compiled call; backends._start_numba does it
without importing scipy.linalg (0.2 s of a second process's first step) and
freezes the objects it leaves, so that the collector, also at exit, skips them.
Each check runs in a fresh interpreter, where nothing has imported scipy yet.
"""
import importlib.util
import subprocess
import sys

import pytest


def _run(code):
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split()


def test_first_step_leaves_scipy_linalg_out_and_numba_frozen():
    code = ("import gc, sys\n"
            "from abound import Simulation\n"
            "sim = Simulation.from_config(None, backend='fast')\n"
            "sim.step()\n"
            "print('scipy.linalg' in sys.modules, gc.get_freeze_count() > 10000)\n")
    assert _run(code) == ["False", "True"]


@pytest.mark.skipif(importlib.util.find_spec("scipy") is None, reason="numba's np.dot needs scipy")
def test_numba_blas_still_works_after_the_fast_backend_started():
    code = ("import numba, numpy as np\n"
            "from abound.physics import backends\n"
            "backends.get('fast')\n"
            "print(numba.njit(lambda a, b: np.dot(a, b))(np.arange(4.0), np.arange(4.0)))\n")
    assert _run(code) == [str(0.0 + 1.0 + 4.0 + 9.0)]
