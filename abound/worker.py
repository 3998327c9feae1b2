"""The worker thread physics steps run on while the main thread draws.

The compiled engine releases the GIL inside its kernels, but a step still
runs some Python between them and takes the GIL back each time. At Python's
default switch interval (5 ms) a thread asking for the GIL waits up to that
long for a busy one to let go: a 14 ms step of the 10,000-ball gas took 50 ms
beside a thread running Python. While a worker exists the interval is
SWITCH_INTERVAL (then about 14 ms there too), and it is put back when the
last worker closes.
"""
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

SWITCH_INTERVAL = 0.0005  # s: how long a thread may hold the GIL while another waits for it
DRAWING_CORES = 1  # cores the drawing (OpenGL, here llvmpipe's rasteriser) keeps busy beside the steps
_open = []  # (worker, the switch interval before the first one opened)
_lock = threading.Lock()


def step_threads_beside_drawing():
    """Threads a step uses while the drawing runs beside it: two where the drawing leaves
    two cores free, else one. On this two-core machine one thread and two gave the same
    frame rates within the noise (BENCHMARKS.md, the frame loop: the hot gas at 1920x1080
    35.5 and 38.4 frames a second, the Galton board 53.0 and 53.3), and one leaves the
    rasteriser a core: the same frames for less of the machine."""
    from abound.physics.split import cores
    return 1 if cores() - DRAWING_CORES < 2 else 2


class Worker:
    """One background thread: ``submit(fn, *args)`` returns a Future, as an executor's.

    Use as a context manager or call :meth:`close` (which waits for what runs).
    """

    def __init__(self):
        with _lock:
            previous = sys.getswitchinterval() if not _open else _open[0][1]
            _open.append((self, previous))
            sys.setswitchinterval(min(previous, SWITCH_INTERVAL))
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="abound-physics")
        self.ident = self._pool.submit(threading.get_ident).result()

    def submit(self, fn, *args):
        return self._pool.submit(fn, *args)

    def here(self):
        """Whether the calling thread is this worker's."""
        return threading.get_ident() == self.ident

    def close(self):
        if self._pool is None:
            return
        self._pool.shutdown()
        self._pool = None
        with _lock:
            previous = next(p for w, p in _open if w is self)
            _open[:] = [(w, p) for w, p in _open if w is not self]
            if not _open:
                sys.setswitchinterval(previous)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
