"""The event loop: a step as parts, each part's events in time order until the queue is
empty or a budget is spent.

Part of the event-driven engine (engine.py gathers it; docs/physics.md explains it).
"""
import numpy as np

from ._jit import allocating, kernel
from .kernels import V_EPS
from .roots import INF
from .constants import (
    BALL_INT, CLUSTER, COLLAPSE_CONTACTS, EVENTS_PER_MEETING, EVENT_CANDIDATE_COST, EV_BALL, EV_TICK, EV_WALL, FREE,
    FROZEN, MAX_BALL_EVENTS, MAX_EVENTS_BASE, MAX_EVENTS_PER_BALL, MAX_SUBSTEPS, MAX_WORK_BASE,
    MAX_WORK_PER_BALL, N_STATS, PART_CANDIDATE_COST, P_BALL_TOI, P_FRICTION, P_GX, P_GY, P_HEIGHT,
    P_REST_SPEED, P_WIDTH, ROLLING, S_ALL, S_BALL, S_COLLAPSED, S_EVENTS, S_FROZEN, S_SOLVED, S_STOPPED,
    S_STUCK, S_UPDATES, S_WALL, S_WORK, TC_TIME,
)
from .motion import effective_motion, is_fixed, roll, set_free, stop_rolling, sync
from .queue import heap_new, heap_pop
from .grid import grid_new, mean_sweep
from .predict import first_pass, has_room, predict_ball, reserve
from .rest import ASLEEP_STUCK, collapse
from .resolve import resolve_pair, resolve_wall
from .contact_log import contact_log, log_contact
from .clusters import (
    REJOINED, cluster_scratch, clusters_wanted, early_tick, let_go, push_tick, rejoin, release_closing, take_ahead, tick,
    ticks_per_part,
)
from .strips import gather, scatter, spatial_order
from .settle import clamp_ball_into_box


@allocating
def step(B, W, params, dt):
    """Advance every ball exactly dt seconds; returns stats (ball-ball,
    ball-wall, events, frozen, stopped, all events: see S_*).

    Runs on a copy of the balls sorted by space (see spatial_order), written
    back at the end. (split.py runs a large step as strips, on two threads.)
    """
    return step_logged(B, W, params, dt, contact_log(0))


@allocating
def step_logged(B, W, params, dt, log):
    """step, and each contact it resolves appended to log (see contact_log)."""
    n = len(B[4])
    P = gather(B, spatial_order(B, params[P_WIDTH], params[P_HEIGHT], dt))
    own = np.ones(n, dtype=np.bool_)
    stats = np.zeros(N_STATS, dtype=np.int64)
    run_parts(P, W, params, dt, substeps(B, params, dt), stats, np.zeros(n, dtype=np.int64),
              event_budget(n), own, log, clusters_wanted(P, params))
    scatter(P, B, own)
    return stats


# a part whose first pass the budget stops is run PART_SHRINK times shorter
# (run_events), down to MIN_PART s
PART_SHRINK = 8.0
MIN_PART = 1e-9


@kernel
def event_budget(n):
    """The most events a step of n balls resolves (see Budgets)."""
    return MAX_EVENTS_BASE + MAX_EVENTS_PER_BALL * n


@kernel
def work_budget(n):
    """The most candidates a step of n balls examines (see Budgets)."""
    return MAX_WORK_BASE + MAX_WORK_PER_BALL * n


@allocating
def run_parts(P, W, params, dt, k, stats, ball_events, budget, own, log, clusters):
    """Advance the working copy P by dt in k equal parts (see substeps);
    adds to stats those of the balls with own[public index] (see S_*), and
    their contacts to log (see contact_log). clusters: whether the step
    runs the contact clusters' ticks (clusters.clusters_wanted)."""
    for part in range(k):
        log[2][0] = part * (dt / k)
        run_events(P, W, params, dt / k, stats, ball_events, budget, own, log, clusters)
        if stats[S_STOPPED]:
            break


@kernel
def substeps(B, params, dt):
    """How many equal parts to run a step of dt in (1 to MAX_SUBSTEPS).

    The result is the same whatever the count - events are exact and the
    parts only split the time - but the broad phase sweeps each ball over
    its part, and each part predicts every ball afresh, while the events
    (about EVENTS_PER_MEETING x N x density x diameter x reach per step,
    whatever k) each predict two balls again. Both meet about
    m = density x (diameter + reach / k)^2 candidates per ball, fewer with
    shorter sweeps. So a step costs about k x N x (1 + PART_CANDIDATE_COST m)
    + events x EVENT_CANDIDATE_COST m (plus a per-event constant), and k
    minimises that: 1 for sparse or slow balls, more when they are dense
    and move several diameters per step. The constants are fitted to step
    times of the hot gas at 1,000 to 10,000 balls with k forced to 1 to 4
    (2-core benchmark machine, November 2026; the fit is within 7% of all
    14 timings and picks the fastest k at each size).
    """
    n = len(B[4])
    if n == 0:
        return 1
    reach, diameter = mean_sweep(B, dt, INF)
    density = n / max(params[P_WIDTH] * params[P_HEIGHT], 1e-300)
    events = EVENTS_PER_MEETING * density * diameter * reach  # per ball
    best, best_cost = 1, INF
    for k in range(1, MAX_SUBSTEPS + 1):
        side = diameter + reach / k
        met = density * side * side
        cost = k * (1.0 + PART_CANDIDATE_COST * met) + events * EVENT_CANDIDATE_COST * met
        if cost < best_cost:
            best, best_cost = k, cost
    return best


@allocating
def run_events(B, W, params, dt, stats, ball_events, budget, own, log, clusters):
    """Advance the working copy B (see gather) by dt, every event in time
    order; see step. Adds to stats (see run_parts) and ball_events; over the
    total budget it sets stats[S_STOPPED] and stops."""
    n = len(B[4])
    tloc, mode = B[3], B[7]
    fric = params[P_FRICTION]
    moving = 0
    for i in range(n):
        tloc[i] = 0.0
        moving += not is_fixed(mode[i])
        if fric > 0.0 and mode[i] == FREE:
            roll(B, i, fric)  # (a ball set free outside a step: an edit, a wake-up)
    work = stats[S_WORK]
    stopped_short = False
    while True:
        S = _run_events_once(B, W, params, dt, stats, ball_events, budget, own, log, clusters, moving)
        if not (stats[S_STOPPED] and S[7][0] <= 0.0 and dt > MIN_PART):
            break
        # The budget ran out at the part's start (before the first pass had
        # predicted every ball): no event resolved, no ball moved. Stopped there, the step would be
        # lost whole, and the next one likewise (5,000 balls at 1e6 px/s in
        # 1280x720, every ball sweeping the whole box, stood at t = 0 for
        # good). A part PART_SHRINK times shorter sweeps that much less, so
        # its first pass costs less: the balls get as far as that, and the
        # rest of the step is lost, as over the budget.
        stats[S_STOPPED] = 0
        stats[S_WORK] = work
        dt /= PART_SHRINK
        stopped_short = True
    # over the budget, every ball stops at the time of the first event left
    # unresolved (event_loop leaves it in S[7]): all earlier ones are resolved
    t_end = S[7][0] if stats[S_STOPPED] else dt
    if clusters and stats[S_STOPPED]:
        # a cluster ball's velocity holds what its tick gives it for the
        # rest of the tick (clusters.take_ahead): at the part's end none is
        # left, but a part stopped between two ticks ends with the rest
        # still in it, which the energy counted as speed from nowhere (a
        # budget-starved step under gravity of 1 px/s^2 rose by 2.5e-9 of
        # the energy's scale) and the next part's tick kicked again
        for i in range(n):
            if mode[i] == CLUSTER:
                take_ahead(B, S[8], i, t_end, dt, params)
    finish(B, params, t_end)
    if stopped_short:
        stats[S_STOPPED] = 1


@allocating
def _run_events_once(B, W, params, dt, stats, ball_events, budget, own, log, clusters, moving):
    """run_events' work for a part of dt s, without finish: returns the
    event loop's scratch (S[7][0]: where a stopped part stopped)."""
    n = len(B[4])
    # events involve moving balls: sized by all balls, a mostly sleeping
    # scene's queue (448 bytes a ball) was mapped, faulted in and unmapped
    # every part (reserve makes room when a part needs more)
    H = heap_new(8 * moving + 64, moving // 2 + 16, dt)
    G = grid_new(B, params[P_WIDTH], params[P_HEIGHT], dt, B[15], B[16])
    S = (np.empty(max(n, 1), dtype=BALL_INT),  # candidates of one query
         np.empty(4 * n + 8, dtype=BALL_INT),  # balls to predict after an event
         np.empty((16, 2), dtype=np.float64),  # contact normals (try_sleep)
         np.empty(max(n, 1), dtype=np.int64),  # wake's stack
         np.full(n, -INF),  # time of each ball's last contact (the TC model)
         np.zeros(n, dtype=np.int64),  # each ball's rapid contacts (collapse)
         np.zeros(4, dtype=np.int64),  # where to resume: to predict, predicted, first pass (2, 3)
         np.zeros(1, dtype=np.float64),  # ... and at what time
         cluster_scratch(B, clusters))  # the ticks' work (clusters.py)
    if clusters:
        push_tick(H, dt, 0, params)
    while not event_loop(B, W, H, G, S, params, dt, stats, ball_events, budget, own, log):
        H, G = reserve(H, G, n, len(W[0]))
    if clusters:  # (the solves' work: ticks.next_level)
        stats[S_UPDATES] += S[8][5][4]
        stats[S_SOLVED] += S[8][5][5]
    return S


@kernel
def event_loop(B, W, H, G, S, params, dt, stats, ball_events, budget, own, log):
    """The event loop proper: predict every ball, then pop and resolve events
    until the queue is empty (or the budget is spent). Allocates nothing: when
    the queue or the grid is about to fill it returns False, and the caller
    makes room and calls again; it resumes where it stopped (S[5], S[6]).
    Returns True when done."""
    cand, todo, normals, stack, tlast, rapid, resume, resume_t, Q = S
    seed = Q[10]
    mode, count, key = B[7], B[8], B[14]
    rest_speed = max(params[P_REST_SPEED], V_EPS)
    n = len(B[4])
    nwalls = len(W[0])
    gx, gy = params[P_GX], params[P_GY]
    method = int(params[P_BALL_TOI])
    most_work = work_budget(n)
    if resume[2] >= 0:
        if not first_pass(B, W, H, G, dt, method, resume, stats, most_work, cand):
            return False
        resume[2] = -1  # done: balls that go on the big list later are not first-pass work
        if stats[S_STOPPED]:
            resume_t[0] = 0.0
            return True
    while True:
        while resume[1] < resume[0]:  # the balls the last event changed
            if not has_room(H, G, n, nwalls):
                return False
            stats[S_WORK] += predict_ball(B, W, H, G, todo[resume[1]], resume_t[0], dt, method,
                                          cand) + 1
            resume[1] += 1
        if H[2][0] == 0:
            return True
        t, a, kind, b, ca, cb = heap_pop(H)
        if kind != EV_TICK and (count[a] != ca or (kind == EV_BALL and count[b] != cb)):
            continue  # stale: a trajectory changed since this was predicted
        if stats[S_ALL] >= budget or stats[S_WORK] >= most_work:
            stats[S_STOPPED] = 1
            resume_t[0] = t
            return True
        stats[S_ALL] += 1
        if kind == EV_TICK:  # b: the tick's index in the part; the next at b + 1
            K = ticks_per_part(dt, params)
            ntodo = tick(B, W, G, Q, t, (dt if b + 1 == K else (b + 1) * dt / K) - t, params, todo, 0,
                         normals, cand)
            push_tick(H, dt, b + 1, params)  # (into the slot this one left)
            stats[S_WORK] += ntodo
            stats[S_COLLAPSED] += Q[5][2]  # (balls put to sleep jammed; a split step runs no ticks)
            Q[5][2] = 0
            resume[0] = ntodo
            resume[1] = 0
            resume_t[0] = t
            continue
        mine = own[key[a]]  # an event counts for the owner of its first ball
        if mine:
            stats[S_EVENTS] += 1
        ball_events[a] += 1
        if kind == EV_BALL:
            ball_events[b] += 1
        fixed_a = is_fixed(mode[a])  # (what becomes fixed at this event: release_closing, below)
        fixed_b = kind == EV_BALL and is_fixed(mode[b])
        over = -1
        if ball_events[a] > MAX_BALL_EVENTS and not is_fixed(mode[a]):
            over = a
        elif kind == EV_BALL and ball_events[b] > MAX_BALL_EVENTS and not is_fixed(mode[b]):
            over = b
        if over >= 0:
            sync(B, over, t)
            if mode[over] == CLUSTER:  # (it waits with what it has now: the next tick lists it anew)
                let_go(B, Q, over, t, dt, params)
            wait_for_tick(B, over, seed, stats, own)
            todo[0] = over
            ntodo = 1
        elif kind == EV_WALL or kind == EV_BALL:
            held_a = mode[a] == CLUSTER
            held_b = kind == EV_BALL and mode[b] == CLUSTER
            # the event meets a cluster ball (only free ones meet one:
            # clusters.py) with the velocity it has now and the push it held
            # back at an earlier strike this tick (let_go): its velocity as
            # energy() counts it. Met without that push, the push given back
            # after changed the counted energy by m (u - w).k (u and w its
            # velocities after and before, k the push), which no event made:
            # 12 of 600 fuzzed heaps rose above the hover band, by up to 244 times
            if held_a:
                let_go(B, Q, a, t, dt, params)
            if held_b:
                let_go(B, Q, b, t, dt, params)
            rapid_a = t - tlast[a] < TC_TIME
            rapid_b = kind == EV_BALL and t - tlast[b] < TC_TIME
            if kind == EV_WALL:
                elastic, nx, ny, impulse = resolve_wall(B, W, G, a, b, t, params, tlast, normals,
                                                        cand, mine, seed)
                if mine:
                    stats[S_WALL] += 1
                    log_contact(B, log, t, a, -1, b // 3, -nx, -ny, impulse)
                todo[0] = a
                ntodo = 1
            else:
                ntodo, elastic, nx, ny, impulse, slow = resolve_pair(B, W, G, a, b, t, params, tlast,
                                                                     todo, 0, normals, cand, stack, seed)
                if mine:
                    stats[S_BALL] += 1
                    log_contact(B, log, t, a, b, -1, nx, ny, impulse)
            # a cluster ball hit by a free one stays in its cluster if it can
            # (clusters.rejoin); it was already in todo, to predict again
            if held_a and mode[a] == FREE:
                rejoin(B, W, G, Q, a, t, dt, params, cand, True)
            if held_b and mode[b] == FREE:
                rejoin(B, W, G, Q, b, t, dt, params, cand, True)
            if kind == EV_BALL and len(seed) > 0:
                # a free ball that meets a cluster ball (or one stopped till
                # the tick, FROZEN) slowly, or is left closing on it by its
                # rejoin, lies on it from now: it joins at once. Left free
                # till the tick, gravity presses it into a partner that
                # moves in a straight line, or it strikes again at once;
                # the pair then spins on the spot, with or without an
                # impulse to give, until the event budget stops it
                for side in range(2):
                    y, other = (a, b) if side == 0 else (b, a)
                    held = held_a if side == 0 else held_b  # (then it has tried: above)
                    if held or mode[y] != FREE or not (mode[other] == CLUSTER or mode[other] == FROZEN):
                        continue
                    if not (slow or closing(B, y, other)):
                        continue
                    if rejoin(B, W, G, Q, y, t, dt, params, cand, False) == REJOINED:
                        continue
                    # it may not join alone (no velocity keeps it off its
                    # neighbours till the tick, or only a faster one, or it
                    # rejoined at this instant already): its island is solved
                    # now, with it (clusters.early_tick), or where the island
                    # is too large for that, it waits for the tick where it
                    # is. Left free, it met the same ball again at the same
                    # instant, and again, until MAX_BALL_EVENTS froze it (71%
                    # of the 1,000-ball Galton board's contacts, 80% of the
                    # hourglass's)
                    joined = early_tick(B, W, G, Q, y, t, dt, params, todo, ntodo, normals, cand)
                    if joined >= 0:
                        ntodo = joined
                        stats[S_COLLAPSED] += Q[5][2]
                        Q[5][2] = 0
                    else:
                        wait_for_tick(B, y, seed, stats, own)
            if elastic:  # it lost no energy: no part of a collapse, however soon
                rapid_a = rapid_b = False
            # (by side, not by index: a wall event's b is a wall code, which
            # may equal a's working index - a's rapid contacts then counted
            # twice, and how they counted hung on the balls' order in memory)
            for side in range(2):
                if not (rapid_a if side == 0 else rapid_b):
                    continue
                x = a if side == 0 else b
                rapid[x] += 1
                if rapid[x] >= COLLAPSE_CONTACTS and not is_fixed(mode[x]):
                    partner = -1 if kind == EV_WALL else (b if side == 0 else a)
                    if len(seed) > 0:
                        # a ball that rejoined at this event: the collapse meets the
                        # velocity it has now (as above) and the push it held back
                        for y in (x, partner):
                            if y >= 0 and mode[y] == CLUSTER:
                                let_go(B, Q, y, t, dt, params)
                    slept = collapse(B, W, G, x, partner, gx, gy, rest_speed, normals, cand, seed)
                    if len(seed) > 0:  # (in a step that runs clusters: hold both in)
                        for y in (x, partner):
                            if y >= 0 and (mode[y] == FREE or mode[y] == CLUSTER):
                                held = mode[y] == CLUSTER or (held_a if y == a else held_b)
                                set_free(B, y, gx, gy, 0.0)  # (its new velocity is no tick's)
                                if rejoin(B, W, G, Q, y, t, dt, params, cand, held) != REJOINED:
                                    wait_for_tick(B, y, seed, stats, own)  # (as above)
                    if own[key[x]]:
                        stats[S_COLLAPSED] += 1
                        if slept == ASLEEP_STUCK:
                            stats[S_STUCK] += 1
        else:  # EV_LEAVE: a sliding ball leaves its support, a rolling one stops
            sync(B, a, t)
            if mode[a] == ROLLING:
                stop_rolling(B, a)
            else:
                set_free(B, a, gx, gy, params[P_FRICTION])
            todo[0] = a
            ntodo = 1
        if len(seed) > 0:  # (a step that runs clusters)
            # a ball this event stopped (it waits for the tick, or fell
            # asleep) is no longer where its cluster neighbours' solve took it
            # to be: those running into it go free (clusters.release_closing)
            for side in range(2):
                y = a if side == 0 else (b if kind == EV_BALL else -1)
                if y >= 0 and is_fixed(mode[y]) and not (fixed_a if side == 0 else fixed_b):
                    ntodo = release_closing(B, G, Q, y, t, dt, params, cand, todo, ntodo)
        resume[0] = ntodo
        resume[1] = 0
        resume_t[0] = t


@kernel
def wait_for_tick(B, i, seed, stats, own):
    """Ball i (synced) stops where it is until the part ends (FROZEN: a fixed
    thing to the events, keeping its velocity), counted in S_FROZEN; in a step
    that runs contact clusters (seed not empty) the next tick lists it, or
    sets it free where it is too fast to join (clusters.tick)."""
    B[7][i] = FROZEN
    B[8][i] += 1
    if len(seed) > 0:
        seed[i] = True
    if own[B[14][i]]:
        stats[S_FROZEN] += 1


@kernel
def closing(B, i, j):
    """Whether balls i and j (synced) approach each other."""
    vix, viy, _, _ = effective_motion(B, i)
    vjx, vjy, _, _ = effective_motion(B, j)
    pos = B[0]
    return (vjx - vix) * (pos[j, 0] - pos[i, 0]) + (vjy - viy) * (pos[j, 1] - pos[i, 1]) < 0.0


@kernel
def finish(B, params, t_end):
    """End of a part of a step: bring every ball to t_end (the part's dt, or
    where the budget stopped it), release frozen balls, guard the box.

    All balls go to one time: left at their own clocks, a ball that had no
    event lately would still be where another has since arrived."""
    tloc, radius, mode = B[3], B[4], B[7]
    gx, gy = params[P_GX], params[P_GY]
    width, height = params[P_WIDTH], params[P_HEIGHT]
    for i in range(len(radius)):
        sync(B, i, t_end)
        tloc[i] = 0.0
        if mode[i] == FROZEN:
            set_free(B, i, gx, gy, params[P_FRICTION])
        clamp_ball_into_box(B, i, width, height, 0.0)  # (in this loop: one pass over the balls)
