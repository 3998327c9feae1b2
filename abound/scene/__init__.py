"""Scenes: TOML files (or dicts) describing a box of balls, and building a Simulation from one.

    from abound.scene import build_simulation, load_scene
    sim = build_simulation("configs/galton.toml", seed=3, balls=500, size=(1920, 1080))
    scene = load_scene("configs/rain.toml")     # the normalized dict, nothing built

The format is documented in docs/scenes.md and checked in
:mod:`abound.scene.schema`. Every problem is an :class:`abound.SceneError`
whose text is one line ``<file>: <where>: <reason>``.
"""
import copy
import math
import os
import tomllib
from pathlib import Path

import numpy as np

from abound import simulation
from abound.defaults import DEFAULT_PALETTE, MAX_BLACK_HOLES, MAX_WALLS
from abound.errors import MAX_NESTING, SceneError, read_user_file, show_path, too_deep
from abound.physics import backends
from abound.physics.checks import segment_distance
from abound.scene import schema
from abound.scene.schema import MAX_BALLS, Ctx, normalize
from abound.simulation import Simulation

__all__ = ["build_simulation", "build_scene", "load_scene", "read_scene", "resolve_source", "normalize",
           "fixed_picture", "for_window", "SceneError", "MAX_BALLS"]


def fixed_picture(scene):
    """Whether a scene is a fixed picture: it has walls, pegs or explicit balls.

    Such a scene is drawn scaled to fit a window or screen of any size,
    centred, its aspect kept (the box never changes: walls and pegs stay
    where they are on the balls' scale). A scene of only random ([[spawn]])
    balls, or no scene (``None``: a Simulation built by hand), is not: its
    box may follow the window. ``scene`` is a normalized scene dict
    (``sim.scene``); sections it lacks count as empty.
    """
    if not isinstance(scene, dict):
        return False
    return any(scene.get(name) for name in ("walls", "pegs", "balls"))


def for_window(source, size, seed=None, backend=None, balls=None):
    """The Simulation a window of ``size`` (w, h) px, or None (the scene's own box),
    shows of scene ``source`` (a name, path or dict): a scene of random balls gets
    a box of the window's size, as many balls as keep its density (``fitted``, or
    ``balls``); a fixed picture keeps its own box, drawn scaled (its walls and pegs
    stay where they are). The demo's and the bench's meaning of --size."""
    raw, name = resolve_source(source)  # (read once: a note resolving the name is said once)
    scene = prepare(raw, name, seed=seed, backend=backend, balls=balls)
    if size is None or fixed_picture(scene):
        return build_scene(scene, name)
    try:
        return Simulation.from_config(fitted(scene, size), balls=balls, size=size)
    except SceneError as exc:  # (the scene was fine in its own box: say what made it wrong)
        raise SceneError(f"{source} in --size {size[0]:g}x{size[1]:g}: {str(exc).removeprefix('<scene>: ')}") from None


def fitted(scene, size):
    """``scene`` (a normalized scene dict, as ``sim.scene``) made for a box of ``size``
    (w, h) px, for a scene whose box follows its window (not a fixed picture): each
    [[spawn]] group that fills the whole box fills the new one, its count scaled by
    the ratio of the boxes' areas (at least one), so that the balls keep their
    density: the 10,000 balls of hot_gas's 1920x1080 would not fit in 800x600, and
    squeezed in there a step took seconds. Other groups are kept as they are. A
    black hole keeps its place in the box as a share of its width and height (the
    shipped one, in the middle of 1280x720, stayed at (640, 360): in the corner of
    a 640x360 window, every ball streaming there). Build it with
    ``Simulation.from_config(fitted(scene, size), size=size)``."""
    scene = copy.deepcopy(scene)
    world = scene.get("world", {})
    width, height = world.get("width"), world.get("height")
    if width is None or height is None:  # (not a normalized scene: a dict set by hand)
        return scene
    ratio = float(size[0]) * float(size[1]) / (float(width) * float(height))
    for hole in scene.get("black_holes", []):
        hole["x"] = hole["x"] * float(size[0]) / float(width)
        hole["y"] = hole["y"] * float(size[1]) / float(height)
    for group in scene.get("spawn", []):
        if group.get("region") in (None, [0.0, 0.0, width, height]):
            group["region"] = None  # (the new box's whole)
            group["count"] = max(1, round(group["count"] * ratio))
    return scene


def resolve_source(source):
    """(raw dict, display name) for a path, a shipped scene name, a dict or None (the default)."""
    from abound import resources
    if source is None:
        try:
            path = resources.default_scene_path()
        except FileNotFoundError as exc:
            raise SceneError(f"<default scene>: {exc}") from None
        return read_scene(path, name=path.name), "default"  # (named as the shipped scene it is, not by where it is installed)
    if isinstance(source, dict):
        return source, "<scene>"
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        name = str(source)
        if not name.strip():
            raise SceneError(f"{name!r}: an empty name is not a scene file")
        if not path.is_file() and os.sep not in name and "/" not in name:
            # a bare name like "galton" or "galton.toml" that is no file here: a shipped scene
            # (a directory of that name does not hide it)
            try:
                shipped = resources.config_path(name)
            except FileNotFoundError:
                if not os.path.lexists(path):  # (a symlink loop exists, unreadable: read_scene says so)
                    _no_such_scene(name)
            else:
                if path.exists():
                    _say(f"abound: note: ./{name} is a directory, not a scene; using the shipped scene {name!r}")
                elif name.endswith(".toml"):  # (named as a file: one the user may have meant here)
                    _say(f"abound: note: no file {name} here; using the shipped scene {shipped.stem!r}")
                path = shipped
        elif not os.path.lexists(path) and path.stem in resources.config_names():
            # (README's `abound check configs/galton.toml`, run outside the checkout)
            raise SceneError(f"{name}: no such file - the shipped scene of that name is {path.stem!r}")
        return read_scene(path, name=name), name
    raise SceneError(f"a scene is a path, a dict or None, not {type(source).__name__}")


def _no_such_scene(name):
    """A bare name that is neither a file here nor a shipped scene: a close shipped name, if any."""
    import difflib
    from abound import resources
    stem = name[:-5] if name.endswith(".toml") else name
    names = resources.config_names()
    close = difflib.get_close_matches(stem, names, n=1, cutoff=0.75)
    close = close or [n for n in names if len(stem) >= 3 and n.startswith(stem)][:1]
    hint = f" - did you mean {close[0]!r}?" if close else ""
    raise SceneError(f"{name}: no such file, nor a shipped scene{hint}")


def _say(line):
    import sys
    print(line, file=sys.stderr)


MAX_SCENE_BYTES = 64 << 20  # a scene of 200,000 explicit balls takes about 20 MB


def read_scene(path, name=None):
    """Parse a TOML file; unreadable files and syntax errors become one-line SceneErrors."""
    name = str(path) if name is None else name
    data = read_user_file(path, name, "scene file", max_bytes=MAX_SCENE_BYTES)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SceneError(f"{name}: not UTF-8 text (byte {exc.start})") from None
    if text.startswith("\ufeff"):  # a byte order mark, as some editors write it
        text = text[1:]
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        msg = " ".join(str(exc).split())
        raise SceneError(f"{name}: TOML syntax error: {msg}") from None
    except RecursionError:
        raw = None
    path = too_deep(raw) if raw is not None else ()
    if path is not None:
        raise SceneError(f"{name}: line {_deepest_line(text)}: {_nested(path)}")
    return raw


def _nested(path):
    where = f" at {show_path(path)}" if path else ""
    return f"TOML nested too deeply{where} (more than {MAX_NESTING} levels of tables and arrays within each other)"


def _deepest_line(text):
    """The line of a TOML text that nests deepest (by its dotted keys and open brackets): a
    pointer for people, counted roughly (quoted keys with dots count too)."""
    best, best_no, header, depth = -1, 1, 0, 0
    for no, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if depth == 0 and s.startswith("["):
            header = s.lstrip("[").split("]")[0].count(".") + 1
            level = header
        else:
            key, eq, value = s.partition("=") if depth == 0 else ("", "", s)
            level = peak = header + key.count(".") + depth
            for ch in value:
                depth += (ch in "[{") - (ch in "]}")
                peak = max(peak, header + key.count(".") + depth)
            level = peak
        if level > best:
            best, best_no = level, no
    return best_no


def load_scene(source=None, *, seed=None, backend=None, balls=None, size=None):
    """The normalized scene dict (defaults filled in, overrides applied); nothing is built."""
    raw, name = resolve_source(source)
    return prepare(raw, name, seed=seed, backend=backend, balls=balls, size=size)


def prepare(raw, name, *, seed=None, backend=None, balls=None, size=None):
    """The normalized scene dict of ``raw`` (what resolve_source read), its errors
    naming ``name``, with the overrides of load_scene applied."""
    path = too_deep(raw)  # a dict from Python or a replay log: before deepcopy recurses
    if path is not None:
        raise SceneError(f"{name}: nested too deeply at {show_path(path)} "
                         f"(more than {MAX_NESTING} levels of tables and arrays within each other)")
    scene = normalize(copy.deepcopy(raw), name)
    ctx = Ctx(name)
    if size is not None:
        try:
            w, h = size
        except (TypeError, ValueError):
            raise ctx.error(f"size must be (width, height), not {size!r}") from None
        for key, v in (("width", w), ("height", h)):
            schema.number(positive=True)(v, ctx.at("size override"), key)
        scene["world"]["width"], scene["world"]["height"] = float(w), float(h)
    if backend is not None:
        scene["physics"]["backend"] = schema.choice(schema.BACKENDS)(backend, ctx.at("backend override"), "backend")
        _available(backend, ctx.at("backend override"))  # (named as the override, not as the file's key)
    if seed is not None:
        seed = schema.integer(lo=0)(seed, ctx.at("seed override"), "seed")
        scene["physics"]["seed"] = seed
        for group in scene["spawn"]:
            group["seed"] = None  # an explicit seed re-seeds every group
    if balls is not None:
        _scale_counts(scene, balls, ctx)
    # fill in what depends on other sections
    world = scene["world"]
    for k, group in enumerate(scene["spawn"]):
        if group["seed"] is None:
            group["seed"] = scene["physics"]["seed"] + k
        if group["region"] is None:
            group["region"] = [0.0, 0.0, world["width"], world["height"]]
        if group["mass"] is None and group["density"] is None:
            group["density"] = world["density"]
    for peg in scene["pegs"]:
        if peg["color"] is None:
            peg["color"] = scene["render"]["peg_color"]
    total = len(scene["balls"]) + sum(g["count"] for g in scene["spawn"]) + sum(
        p["rows"] * p["cols"] for p in scene["pegs"])
    if total > MAX_BALLS:
        raise ctx.error(f"too many balls: {total} in total ([[balls]], [[spawn]] counts and "
                        f"[[pegs]]), at most {MAX_BALLS}")
    for key, most in (("walls", MAX_WALLS), ("black_holes", MAX_BLACK_HOLES)):
        if len(scene[key]) > most:
            raise ctx.error(f"too many [[{key}]]: {len(scene[key])}, at most {most:,}")
    return scene


def _scale_counts(scene, balls, ctx):
    """Scale the [[spawn]] counts to total ``balls`` (largest remainder, at least one each)."""
    balls = schema.integer(lo=1, hi=MAX_BALLS)(balls, ctx.at("balls override"), "balls")
    groups = scene["spawn"]
    if not groups:
        raise ctx.error(f"cannot set the number of balls to {balls}: the scene has no [[spawn]] groups")
    counts = [g["count"] for g in groups]
    total = sum(counts)
    if balls <= len(groups):
        new = [1] * len(groups)
    else:
        # largest remainder (Hamilton) apportionment, then at least one each
        shares = [balls * c / total for c in counts]
        new = [int(math.floor(s)) for s in shares]
        order = sorted(range(len(groups)), key=lambda i: shares[i] - new[i], reverse=True)
        for i in order[:balls - sum(new)]:
            new[i] += 1
        for i in range(len(new)):
            if new[i] == 0:
                new[i] = 1
                new[max(range(len(new)), key=lambda j: new[j])] -= 1
    for g, c in zip(groups, new):
        g["count"] = c


def build_simulation(source=None, *, seed=None, backend=None, balls=None, size=None):
    """A :class:`abound.Simulation` from a scene path, shipped scene name, dict or None (default).

    seed overrides every seed of the scene, backend the [physics] backend,
    balls the total count of random ([[spawn]]) balls (each group scaled
    proportionally, at least one each), size = (width, height) the box. The
    normalized scene (with the overrides) is kept in ``sim.scene``; building
    from it again gives the same simulation.
    """
    raw, name = resolve_source(source)
    scene = prepare(raw, name, seed=seed, backend=backend, balls=balls, size=size)
    return build_scene(scene, name)


def _available(backend, ctx):
    """The backend named can run here (a known name that is not installed: pymunk's
    plugin without pymunk), or the error naming where it was asked for."""
    try:
        backends.get(backend)
    except SceneError as exc:
        raise ctx.error(str(exc)) from None


def build_scene(scene, name="<scene>"):
    """A :class:`abound.Simulation` from a normalized scene (what :func:`load_scene`
    returns), its errors naming ``name``: a scene read once, looked at, then built."""
    from abound.scene.placement import Placer

    ctx = Ctx(name)
    world, phys = scene["world"], scene["physics"]
    W, H = world["width"], world["height"]
    _available(phys["backend"], ctx.at("[physics]"))
    try:
        sim = Simulation(width=W, height=H, gravity=tuple(world["gravity"]),
                         backend=phys["backend"], ball_toi=phys["ball_toi"],
                         wall_restitution=world["wall_restitution"],
                         restitution_mix=world["restitution_mix"],
                         rest_speed=world["rest_speed"], dt=phys["dt"], density=world["density"],
                         rolling_friction=world["rolling_friction"],
                         contact_clusters=phys["contact_clusters"])
    except SceneError as exc:  # (what normalize cannot see alone: rolling friction with gravity)
        raise ctx.at("[world]").error(str(exc)) from None

    # the cell of the placement grid: the largest spawned diameter
    rmax = max((g["radius"][1] for g in scene["spawn"]), default=1.0)
    placer = Placer(2.0 * rmax)

    for k, wall in enumerate(scene["walls"], 1):
        pts = (wall["x0"], wall["y0"], wall["x1"], wall["y1"])
        if pts[0] == pts[2] and pts[1] == pts[3]:
            raise ctx.at(f"[[walls]] {k}").error("a wall needs two distinct end points (x0, y0) != (x1, y1)")
        if not _meets_box(*pts, W, H):  # (no ball can reach it, and no picture shows it)
            raise ctx.at(f"[[walls]] {k}").error(f"lies outside the {W:g}x{H:g} box")
        sim.add_wall(*pts, restitution=wall["restitution"])
        placer.add_segment(*pts)

    for k, peg in enumerate(scene["pegs"], 1):
        r = peg["radius"]
        _pegs_apart(peg, ctx.at(f"[[pegs]] {k}"))
        pos = []
        for i in range(peg["rows"]):
            shift = 0.5 * peg["dx"] if peg["stagger"] and i % 2 else 0.0
            y = peg["y0"] + i * peg["dy"]
            for j in range(peg["cols"]):
                x = peg["x0"] + shift + j * peg["dx"]
                if r <= x <= W - r and r <= y <= H - r:
                    pos.append((x, y))
        if not pos:
            raise ctx.at(f"[[pegs]] {k}").error(
                f"no peg of the lattice (x0, y0, dx, dy, rows, cols) lies inside the {W:g}x{H:g} box")
        sim.add_balls(pos, radius=r, restitution=peg["restitution"], pinned=True, color=peg["color"])
        for (x, y) in pos:
            placer.add_ball(x, y, r)

    for k, hole in enumerate(scene["black_holes"], 1):  # (they pull from the first step; abound/attractors.py)
        if hole["swallow"] and hole["horizon"] <= 0.0:
            raise ctx.at(f"[[black_holes]] {k}").error(
                "swallow = true needs a horizon > 0 (px): with none, no ball is ever swallowed")
        sim.add_black_hole(hole["x"], hole["y"], hole["strength"], hole["softening"], hole["horizon"],
                           hole["swallow"])

    for k, ball in enumerate(scene["balls"], 1):
        r = ball["radius"]
        for key, v, size in (("x", ball["x"], W), ("y", ball["y"], H)):
            if not r <= v <= size - r:
                raise ctx.at(f"[[balls]] {k}").error(
                    f"{key} = {v:g} puts the ball (radius {r:g}) outside the {W:g}x{H:g} box")
        hit = _first_overlap(sim, ball["x"], ball["y"], r, k - 1)
        if hit is not None:
            raise ctx.at(f"[[balls]] {k}").error(
                f"the ball at ({ball['x']:g}, {ball['y']:g}) of radius {r:g} overlaps {hit}: balls start "
                f"apart from each other, the pegs and the walls (pushed apart, they would gain energy)")
        sim.add_ball(ball["x"], ball["y"], vx=ball["vx"], vy=ball["vy"], radius=r, mass=ball["mass"],
                     restitution=ball["restitution"], pinned=ball["pinned"], color=ball["color"])
        placer.add_ball(ball["x"], ball["y"], r)

    for k, group in enumerate(scene["spawn"], 1):
        _spawn(sim, placer, group, ctx.at(f"[[spawn]] {k}"), k, W, H, DEFAULT_PALETTE)

    sim.scene = scene
    return sim


def _pegs_apart(peg, ctx):
    """Refuse a lattice whose pegs overlap one another (dx = dy = 0 stacked them all on one point)."""
    r2 = 2.0 * peg["radius"]
    dx, dy = abs(peg["dx"]), abs(peg["dy"])
    if peg["cols"] > 1 and dx < r2:
        raise ctx.error(f"pegs of radius {peg['radius']:g} {dx:g} px apart in a row overlap: dx must be at "
                        f"least {r2:g}")
    if peg["rows"] > 1:
        # the nearest pegs of two rows next to each other: the odd row shifted by dx / 2 or not
        side = 0.5 * dx if peg["stagger"] else 0.0
        if math.hypot(side, dy) < r2:
            raise ctx.error(f"pegs of radius {peg['radius']:g} in rows {dy:g} px apart overlap: dy must be larger")
    if peg["rows"] > 2 and peg["stagger"] and 2.0 * dy < r2:
        # every other row, staggered, stands straight above the one before it: 2 dy apart
        # (dy = 0 put rows 0 and 2 on the same points, and check said ok)
        raise ctx.error(f"pegs of radius {peg['radius']:g} in every other row, {2.0 * dy:g} px apart, overlap: "
                        f"dy must be at least {0.5 * r2:g}")


def _first_overlap(sim, x, y, r, explicit_before):
    """What a new explicit ball at (x, y) of radius r overlaps among what is already built
    (pegs, the explicit balls before it, the walls), by more than round-off: a text
    ('[[balls]] 2', 'a peg', '[[walls]] 1'), or None."""
    slack = 1e-9 * r
    n = len(sim)
    if n:
        d = np.hypot(sim.positions[:, 0] - x, sim.positions[:, 1] - y)
        deep = np.flatnonzero(d < sim.radii + r - slack)
        if len(deep):
            i = int(deep[0])
            first_explicit = n - explicit_before  # (the pegs come first, then the explicit balls)
            return f"[[balls]] {i - first_explicit + 1}" if i >= first_explicit else "a peg"
    walls = sim.walls
    across = np.flatnonzero(segment_distance(np.array([x, y]), walls[:, :2], walls[:, 2:]) < r - slack)
    return f"[[walls]] {int(across[0]) + 1}" if len(across) else None


def _meets_box(x0, y0, x1, y1, width, height):
    """Whether the segment (x0, y0)-(x1, y1) has a point in the box 0..width x 0..height
    (its edges included): the segment clipped to each side's half-plane in turn
    (Liang and Barsky) keeps a piece."""
    t0, t1 = 0.0, 1.0
    for p, q in ((x0 - x1, x0), (x1 - x0, width - x0), (y0 - y1, y0), (y1 - y0, height - y0)):
        # the points x0 + t (x1 - x0) with p t <= q lie on the side's inner side
        if p == 0.0:
            if q < 0.0:
                return False
        elif p < 0.0:
            t0 = max(t0, q / p)
        else:
            t1 = min(t1, q / p)
    return t0 <= t1


def _spawn(sim, placer, group, ctx, k, W, H, default_palette):
    rng = np.random.default_rng(group["seed"])
    n = group["count"]
    x0, y0, x1, y1 = group["region"]
    bounds = (max(x0, 0.0), max(y0, 0.0), min(x1, W), min(y1, H))
    rlo, rhi = group["radius"]
    if bounds[0] >= bounds[2] or bounds[1] >= bounds[3]:
        raise ctx.error(f"lies outside the {W:g}x{H:g} box", "region")
    if bounds[2] - bounds[0] < 2 * rlo or bounds[3] - bounds[1] < 2 * rlo:
        raise ctx.error(f"is too small (inside the box) for balls of radius {rlo:g}", "region")
    radii = np.sort(rng.uniform(rlo, rhi, n))[::-1]  # big ones first pack better
    speed = rng.uniform(*group["speed"], n)
    angle = np.radians(rng.uniform(*group["angle"], n))
    rest = rng.uniform(*group["restitution"], n)
    pal = group["palette"] or list(default_palette)
    rgba = [_hex_rgba(c) for c in pal]
    colors = [rgba[i] for i in rng.integers(0, len(pal), n)]
    placed = placer.place(rng, radii, bounds)
    if len(placed) < n:
        rtext = f"{rlo:g}" if rlo == rhi else f"{rlo:g}..{rhi:g}"
        raise Ctx(ctx.file).error(f"cannot place {n} balls of radius {rtext} in [[spawn]] {k} without overlap "
                        f"(placed {len(placed)})")
    vel = np.stack([speed * np.cos(angle), speed * np.sin(angle)], axis=1)
    try:  # (no mass: area x density, held to the rules a [[balls]] ball's is)
        sim.add_balls(np.asarray(placed), vel, radius=radii, mass=group["mass"], restitution=rest,
                      pinned=group["pinned"], color=colors, density=group["density"])
    except SceneError as e:
        raise Ctx(ctx.file).error(f"[[spawn]] {k}: {e}") from None


def _hex_rgba(text):
    """'#rrggbb' or '#rrggbbaa' (already validated) as [r, g, b, a] in 0..1."""
    s = text.lstrip("#")
    vals = [int(s[k:k + 2], 16) / 255.0 for k in range(0, len(s), 2)]
    return vals + [1.0] * (4 - len(vals))


simulation._scene_builder[0] = build_simulation  # Simulation.from_config builds scenes so
