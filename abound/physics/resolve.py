"""Responses: the impulse of a contact with a wall or between two balls, the restitution
rule and the walls' tallies of impulse.

Part of the event-driven engine (engine.py gathers it; docs/physics.md explains it).
"""
import math

from ._jit import inlined, kernel
from .kernels import mix_restitution, normal_impulse
from .constants import (
    ASLEEP, BOX_LINE, CLUSTER, P_FRICTION, P_GX, P_GY, P_MIX, P_REST_SPEED, SEGMENT, SUP_BALL, SUP_END,
    SLIDING, SUP_FACE, TC_TIME,
)
from .motion import effective_motion, is_fixed, lasting, set_free, sync
from .rest import after_contact, load_reach, wake


# --------------------------------------------------------------------------
# responses
# --------------------------------------------------------------------------
@kernel
def contact_restitution(e1, e2, params, approach):
    """Restitution of a contact: the mixed value; 0 below rest_speed (the TC
    model may then make a contact between moving balls elastic: resolve_pair)."""
    if approach < params[P_REST_SPEED]:
        return 0.0
    return mix_restitution(e1, e2, int(params[P_MIX]))


@inlined
def resolve_wall(B, W, G, i, code, t, params, tlast, normals, cand, counted, seed):
    """Ball i meets wall code // 3 (part 0: face, 1: end p0, 2: end p1);
    returns whether it bounced off elastically (see resolve_pair), the
    contact's unit normal (into the ball) and its impulse (mass px/s). With
    counted, the bounce's impulse goes on the wall's tally (W[8]; a split
    step counts each event once, in the strip that owns the ball). seed:
    empty unless the step runs contact clusters (rest.load_reach)."""
    pos, vel, rest, inv_mass = B[0], B[1], B[6], B[5]
    wp0, wp1, wn, wt, wlen, wc, we, wkind, wimpulse = W
    gx, gy, rest_speed = params[P_GX], params[P_GY], params[P_REST_SPEED]
    w = code // 3
    part = code - 3 * w
    sync(B, i, t)
    if part == 0:
        nx, ny = wn[w, 0], wn[w, 1]
        if wkind[w] == SEGMENT and nx * pos[i, 0] + ny * pos[i, 1] - wc[w] < 0.0:
            nx, ny = -nx, -ny
        skind, sidx, cx, cy, cr = SUP_FACE, w, wp0[w, 0], wp0[w, 1], wlen[w]
    else:
        ex = wp0[w, 0] if part == 1 else wp1[w, 0]
        ey = wp0[w, 1] if part == 1 else wp1[w, 1]
        dx, dy = pos[i, 0] - ex, pos[i, 1] - ey
        d = math.sqrt(dx * dx + dy * dy)
        if d == 0.0:
            dx, dy, d = 0.0, 1.0, 1.0
        nx, ny = dx / d, dy / d
        skind, sidx, cx, cy, cr = SUP_END, 2 * w + part - 1, ex, ey, d
    if skind == SUP_FACE and wkind[w] == BOX_LINE:
        cr = -1.0  # a box side is an infinite line: a ball slides along it without end
    vn = vel[i, 0] * nx + vel[i, 1] * ny
    elastic = False
    impulse = 0.0
    if vn < 0.0:
        e = contact_restitution(rest[i], we[w], params, -vn)  # no TC model against a wall alone
        elastic = e >= 1.0
        J = normal_impulse(vn, 0.0, 1.0, e)  # the wall is infinitely heavy
        vel[i, 0] += J * nx
        vel[i, 1] += J * ny
        impulse = J / inv_mass[i]  # (J is the change of velocity; a moving ball's mass is finite)
        if counted:
            wimpulse[w] += impulse
    tlast[i] = t
    after_contact(B, W, G, i, True, nx, ny, skind, sidx, cx, cy, cr, params[P_FRICTION], gx, gy, rest_speed,
                  normals, cand, load_reach(seed))
    return elastic, nx, ny, impulse


@inlined
def resolve_pair(B, W, G, a, b, t, params, tlast, todo, ntodo, normals, cand, stack, seed):
    """Balls a and b meet: wake a sleeper hit hard enough, exchange the normal
    impulse. Returns the new count of balls to predict, whether they
    bounced elastically, the unit normal from a to b, the impulse (mass
    px/s) b took along it and whether the contact was slow (they
    approached slower than rest_speed: a lasting contact). Elastic: at rest_speed or faster with restitution 1, not
    counting the TC model's (such a contact loses no energy, so it is no part
    of an inelastic collapse).

    seed (N,) bool, empty when the step runs no contact clusters: a lasting
    contact between moving balls marks both to join the clusters at the
    next tick (clusters.py): a slow one, or a rapid one (within TC_TIME of
    either ball's last contact) where one lies on something (sliding, or in
    a cluster). Two free balls that meet in flight rapidly (a grazing pair
    in a gas) bounce elastically instead (the TC model of Luding and
    McNamara), so chains in flight end after a few contacts and neither gain
    nor lose energy."""
    pos, vel, radius, inv_mass, rest, mode = B[0], B[1], B[4], B[5], B[6], B[7]
    gx, gy, rest_speed = params[P_GX], params[P_GY], params[P_REST_SPEED]
    sync(B, a, t)
    sync(B, b, t)
    dx, dy = pos[b, 0] - pos[a, 0], pos[b, 1] - pos[a, 1]
    d = math.sqrt(dx * dx + dy * dy)
    if d == 0.0:
        dx, dy, d = 1.0, 0.0, 1.0
    nx, ny = dx / d, dy / d
    vax, vay, _, _ = effective_motion(B, a)
    vbx, vby, _, _ = effective_motion(B, b)
    vn = (vbx - vax) * nx + (vby - vay) * ny
    if -vn >= rest_speed:
        if mode[a] == ASLEEP:
            ntodo = wake(B, G, a, t, gx, gy, params[P_FRICTION], todo, ntodo, cand, stack)
        if mode[b] == ASLEEP:
            ntodo = wake(B, G, b, t, gx, gy, params[P_FRICTION], todo, ntodo, cand, stack)
    fixed_a = is_fixed(mode[a])
    fixed_b = is_fixed(mode[b])
    moving = not (fixed_a or fixed_b)
    rapid = moving and t - max(tlast[a], tlast[b]) < TC_TIME
    lies = len(seed) > 0 and (mode[a] == SLIDING or mode[a] == CLUSTER or mode[b] == SLIDING
                              or mode[b] == CLUSTER)
    if len(seed) > 0 and moving and (-vn < rest_speed or (rapid and lies)):
        seed[a] = True
        seed[b] = True
    elastic = False
    J = 0.0
    if vn < 0.0:
        e = contact_restitution(rest[a], rest[b], params, -vn)
        elastic = e >= 1.0
        # the TC model, for collapse among moving balls in flight: elastic
        # within TC_TIME of either ball's previous contact. Against a fixed
        # one, bounces lose speed by e each time until rest_speed stops them.
        if rapid and not lies:
            e = 1.0
        inv_a = 0.0 if fixed_a else inv_mass[a]
        inv_b = 0.0 if fixed_b else inv_mass[b]
        J = normal_impulse(vn, inv_a, inv_b, e)
        if not fixed_a:
            vel[a, 0] -= J * inv_a * nx
            vel[a, 1] -= J * inv_a * ny
        if not fixed_b:
            vel[b, 0] += J * inv_b * nx
            vel[b, 1] += J * inv_b * ny
    tlast[a] = t
    tlast[b] = t
    R = radius[a] + radius[b]
    # (after_contact is called only where it may do more than free the ball:
    # a call passes the whole state, which costs more than a free contact)
    if not fixed_a:
        if lasting(mode[b]):
            after_contact(B, W, G, a, True, -nx, -ny, SUP_BALL, b, pos[b, 0], pos[b, 1], R, params[P_FRICTION],
                          gx, gy, rest_speed, normals, cand, load_reach(seed))
        else:
            set_free(B, a, gx, gy, params[P_FRICTION])
        todo[ntodo] = a
        ntodo += 1
    if not fixed_b:
        if lasting(mode[a]):
            after_contact(B, W, G, b, True, nx, ny, SUP_BALL, a, pos[a, 0], pos[a, 1], R, params[P_FRICTION],
                          gx, gy, rest_speed, normals, cand, load_reach(seed))
        else:
            set_free(B, b, gx, gy, params[P_FRICTION])
        todo[ntodo] = b
        ntodo += 1
    return ntodo, elastic, nx, ny, J, -vn < rest_speed
