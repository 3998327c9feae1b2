"""``abound check FILE...``: validate scene files without running them.

Each file is parsed, validated and built (random spawns are placed, so a
spawn that cannot fit is reported too) with the reference backend, which
needs no compilation; the backend the file names must be one that can run
here (``backend = "pymunk"`` without pymunk installed is an error, as it
would be when the scene is run). Prints ``FILE: ok (...)`` per good file on stdout and
``abound: error: <message>`` per bad one on stderr; exit status 2 if any is bad.
"""
import sys

from abound.cli.args import plural


def add_arguments(parser):
    parser.add_argument("files", nargs="+", metavar="FILE",
                        help="scene files (.toml) or names of shipped scenes (e.g. galton)")


def summary(sim):
    """'N balls, M walls, ...' for a built simulation."""
    scene = sim.scene
    pinned = int(sim.pinned.sum())
    spawned = sum(g["count"] for g in scene["spawn"])
    parts = [plural(len(sim), "ball"), plural(len(sim.walls), "wall")]
    if pinned:
        parts.append(f"{pinned} pinned")
    if sim.black_holes:
        parts.append(plural(len(sim.black_holes), "black hole"))
    if spawned:
        groups = len(scene["spawn"])
        parts.append(f"{spawned} spawned in {groups} group{'s' if groups != 1 else ''}")
    w, h = scene["world"]["width"], scene["world"]["height"]
    parts.append(f"{w:g}x{h:g} box")
    return ", ".join(parts)


def run(args):
    from abound.errors import SceneError
    from abound.scene import build_scene, load_scene
    status = 0
    for name in args.files:
        try:
            scene = load_scene(name)  # (read once: a note resolving the name is said once)
            _check_backend(scene, name)
            scene["physics"]["backend"] = "reference"
            sim = build_scene(scene, name)
        except SceneError as exc:
            print(f"abound: error: {' '.join(str(exc).split())}", file=sys.stderr)
            status = 2
            continue
        print(f"{name}: ok ({summary(sim)})")
    return status


def _check_backend(scene, name):
    """Refuse a [physics] backend that cannot run on this machine (found, not loaded:
    numba's compiler is not started for a check)."""
    from abound.errors import SceneError
    from abound.physics import backends
    wanted = scene["physics"]["backend"]
    if wanted == "auto":
        return
    here = backends.available()
    if wanted not in here:
        raise SceneError(f"{name}: [physics]: backend {wanted!r} is not available here (available: {', '.join(here)})")
