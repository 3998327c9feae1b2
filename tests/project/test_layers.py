"""The package's layers point one way (issue 25, item 3).

Every import statement of every module under abound/ is read from its source
(ast: at module level and inside functions alike) and held against the order

    base (errors, resources, defaults) <- physics <- simulation, scene,
    timing, warmup, snapshot, pacing, worker, hits, sound, attractors <- render <- apps (cli, capture,
    replay, control) <- compare

A module imports only from its own layer or those below; below render nothing
imports pyglet; no module takes another package's private (underscored)
names; and the imports between abound's modules form no circle.
"""
import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "abound"
LAYERS = [
    ("base", ("abound.errors", "abound.resources", "abound.defaults")),
    ("physics", ("abound.physics",)),
    ("model", ("abound.simulation", "abound.scene", "abound.timing", "abound.warmup", "abound.snapshot",
               "abound.pacing", "abound.worker", "abound.hits", "abound.sound", "abound.attractors",
               "=abound")),
    ("render", ("abound.render",)),
    ("apps", ("abound.cli", "abound.capture", "abound.replay", "abound.control", "abound.__main__")),
    ("compare", ("abound.compare",)),
]


def layer(module):
    """The layer index of an abound module (the longest matching prefix wins)."""
    best, length = None, -1
    for k, (_, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            exact = p.startswith("=")  # the package abound itself, not all below it
            p = p.lstrip("=")
            if (module == p or (not exact and module.startswith(p + "."))) and len(p) > length:
                best, length = k, len(p)
    assert best is not None, f"{module} is in no layer: add it to LAYERS"
    return best


def modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts.pop()
        yield ".".join(parts), path


def imports(name, path):
    """(imported module, names taken from it) of every import statement in a module."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, []
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")
                up = up[:len(up) - (node.level - 1)]
                base = ".".join(up + ([node.module] if node.module else []))
            yield base, [a.name for a in node.names]


ALL = dict(modules())


def abound_imports(name):
    """The abound modules a module imports, each with the names it takes."""
    for target, names in imports(name, ALL[name]):
        if target != "abound" and not target.startswith("abound."):
            continue
        if target == "abound" or target in ALL and names:
            # "from abound.x import y": y may be a module of package abound.x
            subs = [f"{target}.{n}" for n in names if f"{target}.{n}" in ALL]
            if subs:
                for s in subs:
                    yield s, []
                rest = [n for n in names if f"{target}.{n}" not in ALL]
                if rest:
                    yield target, rest
                continue
        yield target, names


@pytest.mark.parametrize("name", sorted(ALL))
def test_a_module_imports_only_from_its_layer_or_below(name):
    mine = layer(name)
    for target, _ in abound_imports(name):
        assert layer(target) <= mine, (f"{name} ({LAYERS[mine][0]}) imports {target} "
                                       f"({LAYERS[layer(target)][0]}), a layer above it")


@pytest.mark.parametrize("name", sorted(ALL))
def test_nothing_below_render_imports_pyglet(name):
    if layer(name) >= layer("abound.render"):
        return
    for target, _ in imports(name, ALL[name]):
        assert target.split(".")[0] != "pyglet", f"{name} imports {target}"


@pytest.mark.parametrize("name", sorted(ALL))
def test_no_module_takes_another_packages_private_names(name):
    home = name.rpartition(".")[0] if ALL[name].name != "__init__.py" else name
    for target, names in abound_imports(name):
        their = target if target in ALL and ALL[target].name == "__init__.py" else target.rpartition(".")[0]
        if their == home:
            continue
        private = [n for n in names if n.startswith("_") and not n.startswith("__")]
        assert not private, f"{name} takes {private} from {target}"


def test_the_imports_form_no_circle():
    graph = {name: sorted({t for t, _ in abound_imports(name) if t in ALL and t != name}) for name in ALL}
    # a package's __init__ that only gathers its own modules is no circle with them
    state, path = {}, []

    def visit(m):
        state[m] = "open"
        path.append(m)
        for t in graph[m]:
            if state.get(t) == "open":
                raise AssertionError("import circle: " + " -> ".join(path[path.index(t):] + [t]))
            if t not in state:
                visit(t)
        path.pop()
        state[m] = "done"

    for m in sorted(graph):
        if m not in state:
            visit(m)
