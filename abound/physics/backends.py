"""Backends by name: ``reference`` (the engine as plain Python), ``fast`` (numba)
and ``pymunk`` (pymunk steps the balls instead, to compare on screen; never
chosen by ``auto``; abound/compare/pymunk_backend.py).

The first two run the same source files (roots.py, kernels.py, engine.py); the fast one
imports them a second time as the package ``abound.physics._compiled``, whose
``_jit.kernel`` decorator compiles each function with ``numba.njit(cache=True)``.
"""
import gc
import hashlib
import importlib
import importlib.util
import os
import sys
import types

import numpy as np

from abound.errors import SceneError

NAMES = ("fast", "reference", "pymunk")
_loaded = {}


def _load_reference():
    from abound.physics import engine
    return engine


CACHED = ("roots", "kernels", "engine")  # the modules numba caches code for
SOURCES = tuple(name + ".py" for name in CACHED) + ("_jit.py",)


def _drop_stale_cache(folder):
    """Delete numba's cached machine code when any of the engine's sources changed.

    numba checks a cached function against its own file only: after an edit to
    roots.py, engine.step (which inlines the root finder) would load stale
    code. A digest of all the sources, kept beside the cache, catches that.
    """
    digest = hashlib.sha256()
    for name in SOURCES:
        with open(os.path.join(folder, name), "rb") as f:
            digest.update(f.read())
    cache = _numba_cache_dir(os.path.join(folder, "engine.py")) or os.path.join(folder, "__pycache__")
    stamp = os.path.join(cache, "abound-engine.sha256")
    try:
        with open(stamp) as f:
            if f.read() == digest.hexdigest():
                return
    except OSError:
        pass
    try:
        os.makedirs(cache, exist_ok=True)
        for name in os.listdir(cache):
            if name.endswith((".nbi", ".nbc")) and name.split(".")[0] in CACHED:
                os.remove(os.path.join(cache, name))
        with open(stamp, "w") as f:
            f.write(digest.hexdigest())
    except OSError:
        pass  # a read-only install: numba then caches elsewhere, or not at all


def _numba_cache_dir(source):
    """The directory numba caches the functions of the file ``source`` in, as it chooses it:
    $NUMBA_CACHE_DIR when set, else ``__pycache__`` beside the file when that is writable,
    else the user's cache directory (``~/.cache/numba/...``: a read-only install, e.g. a
    system-wide one, caches there). None if numba has no such place or its API changed."""
    try:
        from numba.core import caching
        impl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl")
        for cls in impl._locator_classes:
            locator = cls.from_function(_numba_cache_dir, source)
            if locator is not None:
                return locator.get_cache_path()
    except Exception:  # noqa: BLE001 - then the in-tree guess
        pass
    return None


def _start_numba():
    """Set numba's compiler up now, leanly, and keep its objects out of the collector's way.

    numba sets itself up on the first call of a compiled function, even one
    it only loads from its cache: it imports its numpy support, whose
    arraymath module imports scipy.linalg (0.2 s, and a second OpenBLAS whose
    threads spin for 0.1 s) merely to decide whether np.convolve may call
    BLAS. The engine calls no BLAS, so that one import is made to fail: only
    np.convolve and np.correlate compiled later in this process lose BLAS
    (np.dot and np.linalg look scipy up again when compiled).

    The set-up leaves about 60,000 objects that live as long as the process.
    Frozen (gc.freeze), the cyclic collector no longer walks them: neither in
    the full collections a long run triggers now and then (40 ms each, a
    dropped frame, instead of 1 ms) nor in those at interpreter exit (0.25 s
    instead of 0.03 s). Only objects alive now are frozen; they are still
    freed when their count drops to zero, just never as part of a cycle.
    """
    from numba.core.registry import cpu_target
    blas = "scipy.linalg.cython_blas"
    blocked = blas not in sys.modules
    if blocked:
        sys.modules[blas] = None  # "import scipy.linalg.cython_blas" now raises ImportError
    try:
        cpu_target.target_context.refresh()
    finally:
        if blocked:
            del sys.modules[blas]
    cpu_target.typing_context.refresh()
    gc.freeze()


def _load_fast():
    import numba  # noqa: F401  (fails here, clearly, when numba is missing)
    _start_numba()
    _drop_stale_cache(os.path.dirname(os.path.abspath(__file__)))
    pkg_name = "abound.physics._compiled"
    if pkg_name not in sys.modules:
        pkg = types.ModuleType(pkg_name)
        pkg.__path__ = [os.path.dirname(os.path.abspath(__file__))]
        pkg.__package__ = pkg_name
        sys.modules[pkg_name] = pkg
    return importlib.import_module(pkg_name + ".engine")


def _load_pymunk():
    from abound.compare import pymunk_backend  # ImportError without pymunk
    return pymunk_backend


_LOADERS = {"fast": _load_fast, "reference": _load_reference, "pymunk": _load_pymunk}


def available():
    """Names of the backends that can run here, best first (pymunk, not abound, last)."""
    names = []
    try:
        import numba  # noqa: F401
        names.append("fast")
    except ImportError:
        pass
    names.append("reference")
    if importlib.util.find_spec("pymunk") is not None:  # (not imported: it takes a while)
        names.append("pymunk")
    return names


def get(name):
    """(name, engine module) for a backend name; None picks the best available."""
    if name is None or name == "auto":
        name = available()[0]
    if name not in NAMES:
        raise SceneError(f"backend {name!r} is not one of {', '.join(NAMES)}")
    if name not in _loaded:
        try:
            _loaded[name] = _LOADERS[name]()
        except ImportError as exc:
            raise SceneError(f"backend {name!r} is not available here: {exc}") from None
    return name, _loaded[name]


def make_params(gravity, rest_speed, mix_rule, ball_toi, width, height):
    """The float64 parameter vector the engine reads (indices in engine.P_*)."""
    return np.array([gravity[0], gravity[1], rest_speed, mix_rule, ball_toi, width, height],
                    dtype=np.float64)
