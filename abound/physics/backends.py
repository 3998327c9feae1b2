"""Backends by name: ``reference`` (the engine as plain Python) and ``fast`` (numba).

Both run the same source files (roots.py, kernels.py, engine.py); the fast one
imports them a second time as the package ``abound.physics._compiled``, whose
``_jit.kernel`` decorator compiles each function with ``numba.njit(cache=True)``.
"""
import hashlib
import importlib
import os
import sys
import types

import numpy as np

from abound.errors import SceneError

NAMES = ("fast", "reference")
_loaded = {}


def _load_reference():
    from abound.physics import engine
    return engine


def source_digest(directory):
    """A digest of every .py file of the physics package in directory."""
    digest = hashlib.sha256()
    for name in sorted(os.listdir(directory)):
        if name.endswith(".py"):
            digest.update(name.encode())
            with open(os.path.join(directory, name), "rb") as f:
                digest.update(f.read())
    return digest.hexdigest()[:16]


def _load_fast():
    import numba  # fails here, clearly, when numba is missing
    here = os.path.dirname(os.path.abspath(__file__))
    # numba stamps each cached function with its own file only, yet a compiled
    # function contains the functions it calls from other files: after an edit
    # of roots.py, engine.py's cached step would still run the old root finder.
    # A cache directory per version of all the sources avoids that.
    base = numba.config.CACHE_DIR or os.path.join(here, "__pycache__")
    numba.config.CACHE_DIR = os.path.join(base, "numba-" + source_digest(here))
    pkg_name = "abound.physics._compiled"
    if pkg_name not in sys.modules:
        pkg = types.ModuleType(pkg_name)
        pkg.__path__ = [os.path.dirname(os.path.abspath(__file__))]
        pkg.__package__ = pkg_name
        sys.modules[pkg_name] = pkg
    return importlib.import_module(pkg_name + ".engine")


def available():
    """Names of the backends that can run here, best first."""
    names = []
    try:
        import numba  # noqa: F401
        names.append("fast")
    except ImportError:
        pass
    names.append("reference")
    return names


def get(name):
    """(name, engine module) for a backend name; None picks the best available."""
    if name is None or name == "auto":
        name = available()[0]
    if name not in NAMES:
        raise SceneError(f"backend {name!r} is not one of {', '.join(NAMES)}")
    if name not in _loaded:
        try:
            _loaded[name] = _load_fast() if name == "fast" else _load_reference()
        except ImportError as exc:
            raise SceneError(f"backend {name!r} is not available here: {exc}") from None
    return name, _loaded[name]


def make_params(gravity, rest_speed, mix_rule, ball_toi, width, height):
    """The float64 parameter vector the engine reads (indices in engine.P_*)."""
    return np.array([gravity[0], gravity[1], rest_speed, mix_rule, ball_toi, width, height],
                    dtype=np.float64)
