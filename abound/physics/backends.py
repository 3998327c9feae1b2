"""Backends by name: ``reference`` (the engine as plain Python), ``fast`` (numba),
and any a package registers from outside the core as an entry point of the
group ``abound.backends``: abound's own ``pymunk`` (pymunk steps the balls
instead, to compare on screen; never chosen by ``auto``) is registered so by
pyproject.toml, and the core never imports it. An entry point names a module
with ``available()`` (can it run here? cheap) and ``load()`` (the backend: a
module with the engine's ``step(B, W, params, dt)`` and
``settle_overlaps(B, W, params)``); see abound/compare/pymunk_plugin.py.

The first two run the same source files (roots.py, kernels.py and the engine's modules); the fast one
imports them a second time as the package ``abound.physics._compiled``, whose
``_jit.kernel`` decorator compiles each function with ``numba.njit(cache=True)``.
"""
import gc
import hashlib
import importlib
import importlib.metadata
import importlib.util
import os
import sys
import types

import numpy as np

from abound.errors import SceneError
from abound.physics.ticks import tick_length, warm_share

GROUP = "abound.backends"  # the entry-point group of outside backends
BUILT_IN = ("fast", "reference")


class CompileNotice(UserWarning):
    """numba is compiling the fast engine in this process (its cache held no copy for
    this install): the first step waits for the compiler, a minute or more, once.
    A warning, so that a library user's first step is not a silent stall; the
    ``abound`` commands say it their own way and ignore this one."""


COMPILE_NOTICE = ("numba is compiling abound's fast engine (once for this install: the first step "
                  "takes a minute or more; later processes load it from numba's cache at once; "
                  "backend='reference' needs no compiling)")


def _plugins():
    """The outside backends' entry points by name (read from the installed metadata)."""
    return {ep.name: ep for ep in importlib.metadata.entry_points(group=GROUP) if ep.name not in BUILT_IN}


NAMES = BUILT_IN + tuple(sorted(_plugins()))
_loaded = {}
# the parameter vector the engine reads (make_params), by name: what a
# backend outside the core may read of it
PARAMS = ("gx", "gy", "rest_speed", "mix", "ball_toi", "width", "height", "friction", "clusters", "tick", "warm")


def _load_reference():
    from abound.physics import engine
    return engine


# the modules numba caches code for: the kernels and the engine's modules (engine.py gathers them)
CACHED = ("roots", "kernels", "constants", "motion", "queue", "grid", "predict", "rest", "resolve",
          "contact_log", "contact_solver", "clusters", "strips", "settle", "loop", "engine")
SOURCES = tuple(name + ".py" for name in CACHED) + ("_jit.py",)


def drop_stale_cache(folder):
    """Delete numba's cached machine code when any of the engine's sources changed.

    numba checks a cached function against its own file only: after an edit to
    roots.py, engine.step (which inlines the root finder) would load stale
    code. A digest of all the sources, kept beside the cache, catches that.
    """
    digest = hashlib.sha256()
    for name in SOURCES:
        with open(os.path.join(folder, name), "rb") as f:
            digest.update(f.read())
    cache = numba_cache_dir(os.path.join(folder, "engine.py")) or os.path.join(folder, "__pycache__")
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


def numba_cache_dir(source):
    """The directory numba caches the functions of the file ``source`` in, as it chooses it:
    $NUMBA_CACHE_DIR when set, else ``__pycache__`` beside the file when that is writable,
    else the user's cache directory (``~/.cache/numba/...``: a read-only install, e.g. a
    system-wide one, caches there). None if numba has no such place or its API changed."""
    try:
        from numba.core import caching
        impl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl")
        for cls in impl._locator_classes:
            locator = cls.from_function(numba_cache_dir, source)
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


def cache_is_cold():
    """True when numba's cache holds no step of the engine for this Python (or stale ones:
    dropped first). Then the fast engine must be compiled before its first step."""
    import glob
    # (the loaded fast engine where there is one: the first fast step asks, and importing the
    # plain-Python engine for the name of the step's module had cost it 7 ms)
    engine = _loaded.get("fast") or importlib.import_module("abound.physics.engine")
    folder = os.path.dirname(os.path.abspath(__file__))
    drop_stale_cache(folder)
    home = engine.step.__module__.rsplit(".", 1)[1]  # the module the step is written in (loop)
    cache = numba_cache_dir(os.path.join(folder, home + ".py"))
    if cache is None:
        return True
    tag = f"py{sys.version_info[0]}{sys.version_info[1]}"
    return not glob.glob(os.path.join(glob.escape(cache), f"{home}.step-*.{tag}.nbi"))


_looked_for_cache = False  # (once a process: the first fast step looks)


def warn_if_cold(stacklevel):
    """Before the first step of the fast engine in this process: a CompileNotice if numba
    must compile it first (a minute or more of silence otherwise). Warned here, at the
    caller's line, not from inside numba's compiler: there a filter that turns warnings
    into errors would have broken the compilation."""
    global _looked_for_cache
    if _looked_for_cache:
        return
    _looked_for_cache = True
    if cache_is_cold():
        import warnings
        warnings.warn(COMPILE_NOTICE, CompileNotice, stacklevel=stacklevel + 1)


def _load_fast():
    import numba  # noqa: F401  (fails here, clearly, when numba is missing)
    _start_numba()
    drop_stale_cache(os.path.dirname(os.path.abspath(__file__)))
    pkg_name = "abound.physics._compiled"
    if pkg_name not in sys.modules:
        pkg = types.ModuleType(pkg_name)
        pkg.__path__ = [os.path.dirname(os.path.abspath(__file__))]
        pkg.__package__ = pkg_name
        sys.modules[pkg_name] = pkg
    return importlib.import_module(pkg_name + ".engine")


_LOADERS = {"fast": _load_fast, "reference": _load_reference}


def available():
    """Names of the backends that can run here, best first (abound's own, then
    the outside ones: pymunk, not abound, last)."""
    names = []
    try:
        import numba  # noqa: F401
        names.append("fast")
    except ImportError:
        pass
    names.append("reference")
    names += [name for name, ep in sorted(_plugins().items()) if ep.load().available()]
    return names


def get(name):
    """(name, engine module) for a backend name; None picks the best available."""
    if name is None or name == "auto":
        name = available()[0]
    if name not in NAMES:
        raise SceneError(f"backend {name!r} is not one of {', '.join(NAMES)}")
    if name not in _loaded:
        try:
            _loaded[name] = _LOADERS[name]() if name in _LOADERS else _plugins()[name].load().load()
        except ImportError as exc:
            raise SceneError(f"backend {name!r} is not available here: {exc}") from None
    return name, _loaded[name]


def make_params(gravity, rest_speed, mix_rule, ball_toi, width, height, friction=0.0, clusters=False,
                tick_level=0):
    """The float64 parameter vector the engine reads (indices in engine.P_*);
    friction: the rolling friction's deceleration (px/s^2), which acts only
    where there is no gravity in the plane (a level table); clusters:
    whether lasting contacts are solved together (clusters.py), at ticks
    of tick_level (ticks.py)."""
    if gravity[0] != 0.0 or gravity[1] != 0.0:
        friction = 0.0
    return np.array([gravity[0], gravity[1], rest_speed, mix_rule, ball_toi, width, height, friction,
                     1.0 if clusters else 0.0, tick_length(tick_level), warm_share(tick_level)],
                    dtype=np.float64)
