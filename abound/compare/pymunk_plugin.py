"""The pymunk backend as an outside backend of abound's physics core (entry
point ``pymunk`` of the group ``abound.backends``, pyproject.toml): cheap to
import, it says whether pymunk is installed without importing it, and loads
abound/compare/pymunk_backend.py when the backend is chosen."""
import importlib.util


def available():
    """Is pymunk installed? (Found, not imported: it takes a while.)"""
    return importlib.util.find_spec("pymunk") is not None


def load():
    """The backend module (ImportError without pymunk)."""
    from abound.compare import pymunk_backend
    return pymunk_backend
