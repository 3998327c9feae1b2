"""Backend ``pymunk``: the balls stepped by pymunk (Chipmunk2D) instead of abound's engine.

It takes the same arrays as the engine (``step``, ``settle_overlaps``), so a
scene, the demo window (key B cycles to it) or the screensaver can run on
pymunk by name and a user sees the difference on screen: pymunk steps with a
fixed time step and an iterative solver, so balls overlap, jitter and lose
energy where abound's are exact. The space is set up as
:class:`~abound.compare.pymunk_world.PymunkWorld` describes (thick box walls,
10 iterations, restitution = the product of the two), from the arrays.

pymunk keeps its own bodies between steps. The space is kept while the
arrays hold what its last step wrote and built again when they do not (balls
added, removed or moved by the user, the box resized, gravity changed); each
step writes positions and velocities back. A pymunk body also spins, which
the arrays do not hold: a rebuilt space starts every ball without spin
(friction is 0, so spin never changes a trajectory anyway).
"""
import types

import numpy as np

from abound.compare.pymunk_world import THICKNESS, PymunkWorld
from abound.physics import backends, checks
from abound.physics.world import FREE, PINNED, SEGMENT

# where make_params puts what this backend reads
P_GX, P_GY, P_WIDTH, P_HEIGHT = (backends.PARAMS.index(name) for name in ("gx", "gy", "width", "height"))

# the space of the last step, what it was built from, and the (positions,
# velocities) its step wrote: one for the process, rebuilt when a step finds
# other arrays (another Simulation, or the same one edited)
_kept = {"world": None, "key": None, "written": None}


def _key(B, W, params):
    """What the space was built from, beyond the positions and velocities it writes itself."""
    return (len(B[4]), B[4].tobytes(), B[5].tobytes(), B[6].tobytes(), (B[7] == PINNED).tobytes(),
            W[0].tobytes(), W[1].tobytes(), W[6].tobytes(), params[[P_GX, P_GY, P_WIDTH, P_HEIGHT]].tobytes())


def _scene(B, W, params):
    """The attributes PymunkWorld reads of a Simulation, from the engine's arrays."""
    pos, vel, radius, inv_mass, rest, mode = B[0], B[1], B[4], B[5], B[6], B[7]
    seg = W[7] == SEGMENT
    pinned = mode == PINNED
    with np.errstate(divide="ignore"):
        mass = np.where(pinned | (inv_mass == 0.0), 1.0, 1.0 / inv_mass)
    return types.SimpleNamespace(
        width=params[P_WIDTH], height=params[P_HEIGHT], gravity=(params[P_GX], params[P_GY]),
        restitution_mix="product", walls=np.hstack([W[0][seg], W[1][seg]]), wall_restitutions=W[6][seg],
        wall_restitution=float(W[6][0]) if len(W[6]) else 1.0, radii=radius, masses=mass,
        pinned=pinned, positions=pos, velocities=vel, restitutions=rest)


def step(B, W, params, dt):
    """Advance the balls dt seconds with one pymunk step; returns the engine's
    stats array (ball-ball contacts = the contact pairs pymunk solved)."""
    world, key, written = _kept["world"], _key(B, W, params), _kept["written"]
    if (world is None or key != _kept["key"]
            or not (np.array_equal(written[0], B[0]) and np.array_equal(written[1], B[1]))):
        world = PymunkWorld(_scene(B, W, params))
        _kept["world"], _kept["key"] = world, key
    world.step(dt)
    pos, vel, _ = world._state()
    free = B[7] != PINNED
    B[0][free] = pos[free]
    B[1][free] = vel[free]
    B[2][free] = (params[P_GX], params[P_GY])
    B[3][:] = 0.0
    B[7][free] = FREE  # (asleep, sliding and frozen mean nothing to pymunk)
    _kept["written"] = (B[0].copy(), B[1].copy())
    _say_lost(B[0][free], B[4][free], params)
    contacts = world.contacts() or 0
    return np.array([contacts, 0, contacts, 0, 0], dtype=np.int64)


def settle_overlaps(B, W, params):
    """What the exact engine does (balls outside the box brought back in,
    overlaps pushed apart), before pymunk sees the balls: after a resize, an
    added ball or a switch of backend. pymunk would ease overlaps apart over
    many steps, and balls outside its walls would stay out."""
    backends.get(None)[1].settle_overlaps(B, W, params)


def _say_lost(pos, radius, params):
    """Say that balls were lost where one has passed through the box's walls (beyond
    their far side, 2 THICKNESS outside the box, nothing brings it back; a ball gets
    there once a step takes it past a wall's middle, which pushes it out): a ball flung
    at 20,000 px/s crossed 333 px a step and vanished from the demo unsaid. (pymunk
    also lets a fast ball sink into its walls, centre outside the box, and pushes it
    back: the hot gas's 3 px balls went 25 px deep; not said.) Python says a warning
    once per place and text: once a process."""
    if checks.escaped(pos, params[P_WIDTH], params[P_HEIGHT], margin=2.0 * THICKNESS + radius):
        import warnings
        from abound.errors import EscapeWarning
        warnings.warn(EscapeWarning(
            f"balls left the box through its walls on the pymunk backend: it moves balls in fixed steps, and "
            f"one that gets more than {THICKNESS:g} px into a wall in a step (past its middle) is pushed out "
            f"through it (abound's own backends, fast and reference, never lose a ball)"), stacklevel=2)
