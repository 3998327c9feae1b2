"""Validation of a parsed scene dict against the scene format (see docs/scenes.md).

:func:`normalize` takes the raw dict (as tomllib gives it) and returns a new
dict with every section present, every default filled in and every value in
canonical form (ranges as ``[min, max]`` float pairs, numbers as float, ...).
Any problem raises :class:`abound.SceneError` with one line
``<file>: <where>: <key> <reason>``; an unknown key says
``<file>: unknown key 'restitusion' in [[spawn]] 1 - did you mean 'restitution'?``.
"""
import difflib
import math

import numpy as np

from abound.errors import SceneError
from abound.physics import backends
from abound.defaults import DEFAULT_REST_SPEED, DEFAULT_DENSITY, MAX_MAGNITUDE, MAX_STRENGTH, MIN_POSITIVE, RESTITUTION_MIX, BALL_TOI

MAX_BALLS = 200_000
# Numbers beyond these are mistakes (a unit gone wrong, a typo'd exponent) and
# would take the physics out of what float64 resolves (masses of 1e300 make
# energies overflow, a 1e-300 px box a grid of 1e11 cells): rejected.
# MAX_MAGNITUDE and MIN_POSITIVE (abound.defaults): the largest size of any number in a
# scene, and the smallest value of one that must be positive
BACKENDS = ("auto",) + backends.NAMES
COLOR_MODES = ("palette", "speed", "ball")
LIVEN = ("wave", "kick", "gravity", "black_hole")
REQUIRED = object()  # marks a key without default


class Ctx:
    """Where we are, for error messages: the file name and the section label."""

    def __init__(self, file, where=None):
        self.file = file
        self.where = where

    def at(self, where):
        return Ctx(self.file, where)

    def error(self, reason, key=None):
        parts = [self.file]
        if self.where:
            parts.append(self.where)
        text = f"{key} {reason}" if key else reason
        return SceneError(": ".join(parts) + ": " + " ".join(str(text).split()))


# -- value checkers: each returns the canonical value or raises ctx.error ------------
def _is_number(v):
    """An int or a float, numpy's too (a dict built in Python may hold np.int64(5)), never a bool."""
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))


def _is_integer(v):
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _show(v, limit=60):
    """A value as the error message quotes it: short (a long string or a deep list is cut)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, dict):
        return "a table"
    if isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
        return "an array of tables"  # (not Python's repr of a list of dicts)
    if isinstance(v, list) and len(v) > 6:
        return f"a list of {len(v)} values"
    text = repr(v) if isinstance(v, str) else str(v)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def number(lo=None, hi=None, positive=False, most=MAX_MAGNITUDE):
    """A finite int or float (never a bool) of size at most most (MAX_MAGNITUDE),
    optionally positive (then at least MIN_POSITIVE) or within lo..hi."""
    def check(v, ctx, key):
        if not _is_number(v):
            raise ctx.error(f"must be a number, not {_show(v)}", key)
        v = float(v)
        if not math.isfinite(v):
            raise ctx.error(f"must be a finite number, not {_show(v)}", key)
        if abs(v) > most:
            raise ctx.error(f"must be at most {most:g} in size, not {_show(v)}", key)
        if positive and not v > 0:
            raise ctx.error(f"must be a positive number, not {_show(v)}", key)
        if positive and v < MIN_POSITIVE:
            raise ctx.error(f"must be at least {MIN_POSITIVE:g}, not {_show(v)}", key)
        if lo is not None and v < lo or hi is not None and v > hi:
            if hi is None:
                raise ctx.error(f"must be >= {lo:g}, not {_show(v)}", key)
            if lo is None:
                raise ctx.error(f"must be <= {hi:g}, not {_show(v)}", key)
            raise ctx.error(f"must lie in {lo:g}..{hi:g}, not {_show(v)}", key)
        return v
    if positive and hi is not None:
        check.doc = f"number in (0, {hi:g}]"
    elif positive:
        check.doc = "number > 0" if most == MAX_MAGNITUDE else f"number in (0, {most:g}]"
    else:
        check.doc = "number" + _bounds(lo, hi)
    return check


def _bounds(lo, hi):
    """' in 0..1', ' >= 0', ' <= 5' or '': the bounds as the reference writes them."""
    if lo is not None and hi is not None:
        return f" in {lo:g}..{hi:g}"
    if lo is not None:
        return f" >= {lo:g}"
    return f" <= {hi:g}" if hi is not None else ""


def integer(lo=None, hi=None):
    def check(v, ctx, key):
        if not _is_integer(v):
            raise ctx.error(f"must be an integer, not {_show(v)}", key)
        v = int(v)
        if abs(v) > MAX_MAGNITUDE:  # (as every number: a seed of 1e20 is a typo)
            raise ctx.error(f"must be at most {MAX_MAGNITUDE:g} in size, not {v}", key)
        if lo is not None and v < lo:
            raise ctx.error(f"must be an integer >= {lo}, not {v}", key)
        if hi is not None and v > hi:
            raise ctx.error(f"must be an integer <= {hi}, not {v}", key)
        return v
    check.doc = "integer" + _bounds(lo, hi)
    return check


def boolean(v, ctx, key):
    if not isinstance(v, bool):
        raise ctx.error(f"must be true or false, not {_show(v)}", key)
    return v


boolean.doc = "bool"


def choice(options):
    def check(v, ctx, key):
        if not isinstance(v, str) or v not in options:
            hint = ""
            if isinstance(v, str):
                close = difflib.get_close_matches(v, options, n=1)
                if close:
                    hint = f" - did you mean {close[0]!r}?"
            raise ctx.error(f"must be one of {', '.join(map(repr, options))}, not {_show(v)}{hint}", key)
        return v
    check.doc = ", ".join(f'`"{o}"`' for o in options)
    return check


def color(v, ctx, key):
    s = v[1:] if isinstance(v, str) and v.startswith("#") else None
    if s is None or len(s) not in (6, 8) or any(c not in "0123456789abcdefABCDEF" for c in s):
        raise ctx.error(f"must be a colour '#rrggbb' or '#rrggbbaa', not {_show(v)}", key)
    return v.lower()


color.doc = "colour"


def palette(v, ctx, key):
    if not isinstance(v, list) or not v:
        raise ctx.error(f"must be a non-empty list of colours '#rrggbb' or '#rrggbbaa', not {_show(v)}", key)
    return [color(c, ctx, key) for c in v]


palette.doc = "list of colours"


def vec2(v, ctx, key):
    if not isinstance(v, (list, tuple)) or len(v) != 2 or not all(map(_is_number, v)):  # (a tuple: a dict written in Python)
        raise ctx.error(f"must be two numbers [x, y], not {_show(v)}", key)
    return [number()(c, ctx, key) for c in v]


vec2.doc = "`[gx, gy]`"  # (gravity's)


def span(lo=None, hi=None, positive=False):
    """A number or [min, max] with min <= max; canonical form [min, max]."""
    one = number(lo, hi, positive)

    def check(v, ctx, key):
        if isinstance(v, (list, tuple)):
            if len(v) != 2:
                raise ctx.error(f"must be a number or [min, max], not {_show(v)}", key)
            a, b = (one(c, ctx, key) for c in v)
            if a > b:
                raise ctx.error(f"must be [min, max] with min <= max, not {_show(v)}", key)
            return [a, b]
        a = one(v, ctx, key)
        return [a, a]
    check.doc = "range" + (" > 0" if positive else _bounds(lo, hi))
    return check


def region(v, ctx, key):
    if not isinstance(v, (list, tuple)) or len(v) != 4:
        raise ctx.error(f"must be [x0, y0, x1, y1], not {_show(v)}", key)
    x0, y0, x1, y1 = (number()(c, ctx, key) for c in v)
    if not (x0 < x1 and y0 < y1):
        raise ctx.error(f"must be [x0, y0, x1, y1] with x0 < x1 and y0 < y1, not {_show(v)}", key)
    return [x0, y0, x1, y1]


region.doc = "`[x0, y0, x1, y1]`"


def optional(check):
    """None stays None (the key was omitted); otherwise ``check``."""
    def wrapped(v, ctx, key):
        return None if v is None else check(v, ctx, key)
    wrapped.doc = check.doc
    return wrapped


# -- the format ----------------------------------------------------------------------
# Each section: key -> (checker, default, meaning[, default as documented]).
# REQUIRED marks keys without default; None means "omitted" (filled in later,
# or meaningful as absent). The meaning is the reference's text for the key:
# docs/scenes.md's tables are generated from these (abound/scene/reference.py).
WORLD = {
    "width": (number(positive=True), 1280.0, "px, box width"),
    "height": (number(positive=True), 720.0, "px, box height"),
    "gravity": (vec2, [0.0, -980.0], "px/s², any direction (also `[0, 0]`)"),
    "restitution_mix": (choice(RESTITUTION_MIX), "product",
                        "how a contact's restitution combines its two sides'"),
    "rest_speed": (number(lo=0.0), DEFAULT_REST_SPEED, "px/s; slower contacts are inelastic, balls rest or slide"),
    "rolling_friction": (number(lo=0.0), 0.0,
                         "mu of a level table seen from above (needs `gravity = [0, 0]`): a moving ball slows at "
                         "mu x 980 px/s² along its straight path until it stops, at v²/(2 mu 980) px; contact "
                         "times stay exact (the path is a parabola in time until the stop, an event). "
                         "`pool_break` uses 0.1"),
    "wall_restitution": (number(0.0, 1.0), 1.0, "restitution of the four box sides"),
    "density": (number(positive=True), DEFAULT_DENSITY, "mass per px² for balls without a `mass`"),
}
PHYSICS = {
    "backend": (choice(BACKENDS), "auto",
                "`fast` is compiled with numba, `reference` is plain Python; `auto` picks `fast` when numba is "
                "installed; `pymunk` steps the same balls with pymunk instead (what it honours: below the table)"),
    "ball_toi": (choice(BALL_TOI), "analytic", "ball-ball time-of-impact method"),
    "dt": (number(positive=True, hi=1.0), 1.0 / 60.0, "s, the fixed physics step per frame", "`0.0166666667`"),
    "seed": (integer(lo=0), 1,
             "seed of the `[[spawn]]` groups without their own: group *k* (from 1) uses `seed + k - 1`"),
    "contact_clusters": (boolean, True,
                         "solve lasting contacts between moving balls together (a funnel full of balls, a heap "
                         "on a slope: see [physics.md](physics.md#lasting-contacts-contact-clusters)), so "
                         "frictionless balls pour instead of stopping where they rattle; `false`: the exact "
                         "events alone (energy never rises, steps may be split across cores), as `hot_gas` "
                         "has it"),
}
BALL = {
    "x": (number(), REQUIRED, "px, centre; the whole ball must lie inside the box"),
    "y": (number(), REQUIRED, "px, centre; the whole ball must lie inside the box"),
    "vx": (number(), 0.0, "px/s"),
    "vy": (number(), 0.0, "px/s"),
    "radius": (number(positive=True), 10.0, "px"),
    "mass": (optional(number(positive=True)), None, "", "area × `[world] density`"),
    "restitution": (number(0.0, 1.0), 1.0, ""),
    "pinned": (boolean, False, "a pinned ball never moves and has infinite mass"),
    "color": (optional(color), None, "", "the default palette in turn"),
}
SPAWN = {
    "count": (integer(lo=1), REQUIRED, "number of balls"),
    "radius": (span(positive=True), [8.0, 8.0], "px", "`8.0`"),
    "speed": (span(lo=0.0), [0.0, 0.0], "px/s, in a random direction drawn from `angle`", "`0.0`"),
    "angle": (span(), [0.0, 360.0], "degrees, counter-clockwise from +x (270 = straight down)"),
    "region": (optional(region), None, "px, where the centres may go (clipped to the box)", "the whole box"),
    "restitution": (span(0.0, 1.0), [1.0, 1.0], "", "`1.0`"),
    "density": (optional(number(positive=True)), None, "mass per px²; give `density` or `mass`, not both",
                "`[world] density`"),
    "mass": (optional(number(positive=True)), None, "the same mass for every ball of the group", "—"),
    "palette": (optional(palette), None, "each ball picks one at random", "the default palette"),
    "seed": (optional(integer(lo=0)), None, "", "see `[physics] seed`"),
    "pinned": (boolean, False, ""),
}
WALL = {
    "x0": (number(), REQUIRED, "px, the two (distinct) end points"),
    "y0": (number(), REQUIRED, "px, the two (distinct) end points"),
    "x1": (number(), REQUIRED, "px, the two (distinct) end points"),
    "y1": (number(), REQUIRED, "px, the two (distinct) end points"),
    "restitution": (number(0.0, 1.0), 1.0, ""),
}
PEGS = {
    "rows": (integer(lo=1), REQUIRED, ""),
    "cols": (integer(lo=1), REQUIRED, ""),
    "x0": (number(), REQUIRED, "px, centre of the first peg"),
    "y0": (number(), REQUIRED, "px, centre of the first peg"),
    "dx": (number(), REQUIRED, "px, spacing (`dy < 0` goes down)"),
    "dy": (number(), REQUIRED, "px, spacing (`dy < 0` goes down)"),
    "stagger": (boolean, True, "shift odd rows by `dx/2`"),
    "radius": (number(positive=True), 5.0, "px"),
    "restitution": (number(0.0, 1.0), 1.0, ""),
    "color": (optional(color), None, "", "`[render] peg_color`"),
}
BLACK_HOLE = {
    "x": (number(), REQUIRED, "px, the centre (it may lie outside the box)"),
    "y": (number(), REQUIRED, "px, the centre (it may lie outside the box)"),
    "strength": (number(positive=True, most=MAX_STRENGTH), REQUIRED,
                 "GM, px³/s²: a ball at d px feels GM / d² (a circular orbit there: speed sqrt(GM / d))"),
    "softening": (number(0.0, 100000.0), 10.0, "px: the pull is GM d / (d² + softening²)^1.5, finite at the centre "
                  "(inside a ball, whose radius then stands in for d: a spring)"),
    "horizon": (number(0.0, 100000.0), 0.0, "px: with `swallow`, a ball whose centre comes this close is put back "
                                       "at the top, at rest (0: none)"),
    "swallow": (boolean, False, "whether the hole swallows balls crossing its horizon (needs `horizon` > 0)"),
}
RENDER = {
    "background": (color, "#101018", ""),
    "color_mode": (choice(COLOR_MODES), "palette", "balls coloured by their colour, by speed, or per ball"),
    "shading": (boolean, True, "shaded spheres instead of flat discs"),
    "trails": (number(0.0, 1.0), 0.0, "motion trails: the share of the last frame's picture each frame keeps (0 = off, 0.1 short trails, nearer 1 longer ones)"),
    "wall_color": (color, "#c0c0c0", ""),
    "peg_color": (color, "#909090", ""),
    "hud": (boolean, False, "show the heads-up display"),
    "flash": (boolean, False, "a ball flashes white when hit, by the velocity change the hit gave it "
                              "(steps then log their contacts, on one thread)"),
}
SAVER = {
    "stillness_energy": (number(0.0, 1.0), 0.02, "kinetic-energy fraction below which the scene counts as still"),
    "stillness_seconds": (number(positive=True), 3.0, "s, how long it must stay still before the saver livens it"),
    "liven": (choice(LIVEN), "wave", "how a still scene is livened up"),
    "turn": (number(1.0, 359.0), 180.0, "degrees, counter-clockwise, gravity turns by when liven is "
                                        "\"gravity\" (180: the scene turned over, as an hourglass is)"),
}
TABLES = {"world": WORLD, "physics": PHYSICS, "render": RENDER, "saver": SAVER}
ARRAYS = {"balls": BALL, "spawn": SPAWN, "walls": WALL, "pegs": PEGS, "black_holes": BLACK_HOLE}
SECTIONS = tuple(TABLES) + tuple(ARRAYS)


def _unknown(name, allowed, what, ctx, label=None):
    """``unknown key 'restitusion' in [[spawn]] 1 - did you mean 'restitution'?``"""
    close = difflib.get_close_matches(name, list(allowed), n=1)
    hint = f" - did you mean {close[0]!r}?" if close else f" (known: {', '.join(allowed)})"
    place = f" in {label}" if label else ""
    return Ctx(ctx.file).error(f"unknown {what} {name!r}{place}{hint}")


def _table(raw, spec, ctx, label):
    """Check one table against its spec; returns the normalized copy."""
    if not isinstance(raw, dict):
        shown = _show(raw)
        hint = f" (write {label}, not [{label}])" if label.startswith("[") and shown == "an array of tables" else ""
        raise Ctx(ctx.file).error(f"{label} must be a table, not {shown}{hint}")
    for key in raw:
        if key not in spec:
            raise _unknown(key, spec, "key", ctx, label)
    out = {}
    for key, (check, default, *_) in spec.items():
        if key in raw:
            out[key] = check(raw[key], ctx, key)
        elif default is REQUIRED:
            raise ctx.error(f"missing key {key!r}")
        else:
            out[key] = list(default) if isinstance(default, list) else default
    return out


def normalize(raw, file="<scene>"):
    """Validate a parsed scene and return its canonical form (a new dict)."""
    top = Ctx(file)
    if not isinstance(raw, dict):
        raise top.error(f"a scene must be a table of sections, not {_show(raw)}")
    for name, value in raw.items():
        if name not in SECTIONS:
            if not (isinstance(value, dict) or (isinstance(value, list) and value
                                                 and all(isinstance(v, dict) for v in value))):
                # a key before any [section] line (a section is a table, or an array of them)
                homes = ([f"[{t}]" for t, spec in TABLES.items() if name in spec]
                         + [f"[[{t}]]" for t, spec in ARRAYS.items() if name in spec])
                where = f": it belongs under {' or '.join(homes)}" if homes else " (each key goes under a [section])"
                raise top.error(f"key {name!r} lies outside any section{where}")
            raise _unknown(name, SECTIONS, "section", top)
    scene = {}
    for name, spec in TABLES.items():
        label = f"[{name}]"
        scene[name] = _table(raw.get(name, {}), spec, top.at(label), label)
    for name, spec in ARRAYS.items():
        items = raw.get(name, [])
        if not isinstance(items, list):
            raise top.error(f"{name} must be an array of tables [[{name}]], not {_show(items)}")
        out = []
        for k, item in enumerate(items, 1):
            label = f"[[{name}]] {k}"
            out.append(_table(item, spec, top.at(label), label))
        scene[name] = out
    for k, group in enumerate(scene["spawn"], 1):
        if group["mass"] is not None and group["density"] is not None:
            raise top.at(f"[[spawn]] {k}").error("give density or mass, not both")
    return scene
