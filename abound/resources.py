"""Find the data abound ships: scene files (``configs/``) and shaders (``shaders/``).

In the repository they live at the top level (``configs/``, ``shaders/``);
pyproject.toml ships them inside the wheel as the packages ``abound.configs``
and ``abound.shaders``. :mod:`importlib.resources` finds them in both cases
(a source checkout with ``pip install -e .`` maps the packages to the top-level
folders); when the packages cannot be imported at all (running from a checkout
that was never installed, e.g. with ``PYTHONPATH``) we fall back to the
repository layout next to this file.

Nothing here imports anything beyond the standard library.
"""
from importlib import resources as _ilr
from pathlib import Path

DEFAULT_SCENE = "default.toml"
_REPO_ROOT = Path(__file__).resolve().parent.parent


def _package_dir(package, folder):
    """The directory holding ``package``'s files as a real Path."""
    try:
        root = _ilr.files(package)
    except (ModuleNotFoundError, TypeError):
        root = None
    if root is not None:
        # A normal install or an editable one: a real directory. (Zip imports
        # are not supported: abound's data must be real files for pyglet too.)
        path = Path(str(root))
        if path.is_dir():
            return path
    return _REPO_ROOT / folder


def configs_dir():
    """The directory of the shipped scene files."""
    return _package_dir("abound.configs", "configs")


def shaders_dir():
    """The directory of the shipped GLSL shaders."""
    return _package_dir("abound.shaders", "shaders")


def config_names():
    """Names (without ``.toml``) of the shipped scenes, sorted."""
    return sorted(p.stem for p in configs_dir().glob("*.toml"))


def config_path(name):
    """Path of a shipped scene by name: ``"galton"`` or ``"galton.toml"``.

    Raises FileNotFoundError naming the shipped scenes when there is none.
    """
    name = str(name)
    if not name.endswith(".toml"):
        name += ".toml"
    path = configs_dir() / name
    if not path.is_file():
        raise FileNotFoundError(
            f"no shipped scene {name!r} (shipped: {', '.join(config_names()) or 'none'})")
    return path


def default_scene_path():
    """Path of the embedded default scene (``configs/default.toml``)."""
    return config_path(DEFAULT_SCENE)


def shader_path(name):
    """Path of a shipped shader file, e.g. ``"balls.frag"``."""
    path = shaders_dir() / name
    if not path.is_file():
        raise FileNotFoundError(f"no shipped shader {name!r} in {shaders_dir()}")
    return path


def shader_source(name):
    """Text of a shipped shader file, e.g. ``shader_source("balls.frag")``."""
    return shader_path(name).read_text(encoding="utf-8")
