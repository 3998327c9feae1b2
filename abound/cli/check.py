"""``abound check FILE...``: validate scene files without running them.

Each file is parsed, validated and built (random spawns are placed, so a
spawn that cannot fit is reported too) with the reference backend, which
needs no compilation. Prints ``FILE: ok (...)`` per good file on stdout and
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
    if spawned:
        groups = len(scene["spawn"])
        parts.append(f"{spawned} spawned in {groups} group{'s' if groups != 1 else ''}")
    w, h = scene["world"]["width"], scene["world"]["height"]
    parts.append(f"{w:g}x{h:g} box")
    return ", ".join(parts)


def run(args):
    from abound.errors import SceneError
    from abound.scene import build_simulation
    status = 0
    for name in args.files:
        try:
            sim = build_simulation(name, backend="reference")
        except SceneError as exc:
            print(f"abound: error: {' '.join(str(exc).split())}", file=sys.stderr)
            status = 2
            continue
        print(f"{name}: ok ({summary(sim)})")
    return status
