"""A large step on two cores: the box cut in two halves that run at once, then checked.

An event-driven step is sequential: every contact waits for the ones before
it. But a contact touches only the balls it involves, so the two halves of a
crowded box are nearly independent within one step. The step is cut across
the box's longer side, at the median of the moving balls (or off it, where a
Balance finds the halves take equal times), into six bands of the balls'
positions at the start of the step:

    band      0      |    1     |    2     |    3     |    4     |     5
                     |  outer   |  inner   |  inner   |  outer   |
              cut - w_in - w_out  cut - w_in   cut    cut + w_in  cut + w_in + w_out

(w_in = INNER x reach, w_out = OUTER x reach; reach: how far a fast ball goes
in the step, plus the largest diameter.)

The left half runs the engine's own step on the balls of bands 0-4, the right
half on bands 1-5, each in its own thread (the compiled engine releases the
GIL). Each keeps the balls of its own side: the left half bands 0-2, the
right half bands 3-5. Neither half alone is the true step - the left one
never sees band 5 - so the result is kept only if these hold, else the step
runs again whole (engine.halves_agree tests them):

  1. The balls of bands 2 and 3 end in the same state, bit for bit, after
     the same number of events, in both halves.
  2. The paths of the balls of bands 0-1 (whichever half ran them) and those
     of bands 4-5 stay apart: no contact can join them.

Why that makes both kept sides exact. Take the true step's contacts in time
order and suppose all balls each half keeps, together with bands 2-3 in both
halves, were right up to the next contact. Its two balls both lie in bands
0-3 (the left half has both, right, and resolves it right), both in bands
2-5 (the right half does), or one in 0-1 and one in 4-5 - which test 2
rules out, since their paths are right until they meet. A contact that one
half resolves but the other cannot (a ball of band 2 meeting band 5) leaves
that ball different in the two halves, which test 1 rules out. A contact
that happens in a half but not in truth needs a wrong ball, and wrong balls
are only those of bands 4-5 in the left half or 0-1 in the right: with
bands 0-1 or 4-5 of the same half test 2 forbids it, with bands 2-3 test 1
catches it. So no kept ball ever goes wrong. (Contact here means every way
one ball's state reads another's: impulses, waking, supports, sleeping
tests; each needs the two balls within touching distance. Test 1 compares
how the balls end, not every event on the way: a ball whose history
differed in the two halves would have to end on the same bits, position,
velocity, mode and trajectory count alike, by chance.)

The halves run the same code as the whole step, on the same tie keys, the
same number of parts, and so resolve each contact with the same arithmetic:
a split step gives the whole step's result bit for bit (a test checks it).
Events, contacts and freezes are counted by the half that keeps the event's
first ball. A half that hits a budget, halves that together resolve the
whole step's event budget or examine half its work budget (the work of the
halves is not the whole step's: a step near that budget runs whole, so that
the budget stops it where it stops the whole step), or a ball sliding on a
ball the other half keeps out of reach, make the step run whole.

It pays off when the bands are narrow beside the halves: a crowded scene of
moving balls that each cross a small part of the box in one step. In a
pile, a chain of touching balls carries a contact across any band at once,
and about half the splits are refused; a Backoff then waits longer and
longer before trying again, so such scenes lose little.
"""
import os
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

MIN_MOVING = 4000  # fewer moving balls: the step is too short to share out
# the bands' widths, in units of the distance a fast ball sweeps in a step (the
# fastest but FAST_SHARE of the moving balls) plus the largest diameter:
INNER = 0.8  # bands 2 and 3: the far bands' paths must not cross them (test 2)
OUTER = 1.5  # bands 1 and 4: what a half gets wrong must not cross them (test 1)
FAST_SHARE = 0.001
MAX_OVERLAP = 0.25  # the four middle bands may cover at most this share of the box's length

MAX_WAIT = 32  # steps a Backoff waits at most before it tries to split again

_pool = None


class Backoff:
    """When to try splitting: after a refused split, skip 1, 2, 4, ... up to
    MAX_WAIT steps before the next try; a kept one starts afresh. (A refused
    split costs its halves on top of the whole step.)"""

    def __init__(self):
        self.skip = 0
        self.wait = 0

    def now(self):
        """Try this step?"""
        if self.skip:
            self.skip -= 1
            return False
        return True

    def refused(self):
        self.wait = min(max(1, 2 * self.wait), MAX_WAIT)
        self.skip = self.wait

    def kept(self):
        self.wait = 0


class Balance:
    """Where to cut: the share of the moving balls below the cut (the left
    half's, run on the calling thread). It starts at the median and, after
    each split run on two threads, moves part of the way to where the halves
    would have taken equal times, taking each half's time as proportional to
    its share. The two threads do not always run at the same speed (the
    machine's other work, which core each lands on), nor do equal shares of
    the balls always cost the same; the step waits for the slower half. Any
    cut gives the same result, bit for bit: only the time changes."""

    GAIN = 0.3  # how far to move each step (the times are noisy)
    LIMITS = (0.3, 0.7)

    def __init__(self):
        self.left = 0.5

    def ran(self, time_left, time_right):
        f = self.left
        if not (time_left > 0.0 and time_right > 0.0):
            return
        even = f * time_right / (f * time_right + (1.0 - f) * time_left)
        self.left = min(max(f + self.GAIN * (even - f), self.LIMITS[0]), self.LIMITS[1])


def cores():
    """How many cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def _other_thread():
    global _pool
    if _pool is None:
        _pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="abound-half")
    return _pool


def bands(engine, B, params, dt, min_moving=MIN_MOVING, left=0.5):
    """(axis, band (N,) int64 0..5, reach px) for splitting this step, or None when it does not pay.

    B: the public ball arrays (engine.step's); params: make_params'; dt s;
    left: the share of the moving balls below the cut (see Balance).
    """
    if len(B[4]) < min_moving:  # (spares small scenes the pass over the balls)
        return None
    axis, reach, band, moving = engine.split_bands(B, params, dt, FAST_SHARE, INNER, OUTER, left)
    if moving < min_moving:
        return None
    span = 2.0 * (INNER + OUTER) * reach
    if not (span <= MAX_OVERLAP * params[engine.P_WIDTH if axis == 0 else engine.P_HEIGHT]):
        return None
    # a half must hold the support of every sliding ball it runs
    sup_kind, sup_idx = B[9], B[10]
    on_ball = np.flatnonzero(sup_kind == engine.SUP_BALL)
    if len(on_ball):
        b, s = band[on_ball], band[sup_idx[on_ball]]
        if np.any((b <= 4) & (s == 5)) or np.any((b >= 1) & (s == 0)):
            return None
    return axis, band, reach


def step(engine, B, W, params, dt, together=True, min_moving=MIN_MOVING, backoff=None,
         balance=None):
    """engine.step(B, W, params, dt), as two halves when that pays (see above).

    Same arguments and result as engine.step. together: run the halves at
    once, on two threads; False runs one after the other (the same result,
    for tests on one core or the reference backend). backoff: a Backoff
    kept from step to step (None: try every step); balance: a Balance kept
    from step to step (None: cut at the median).
    """
    if backoff is not None and not backoff.now():
        return engine.step(B, W, params, dt)
    plan = bands(engine, B, params, dt, min_moving, 0.5 if balance is None else balance.left)
    if plan is None:
        return engine.step(B, W, params, dt)
    axis, band, _ = plan
    n = len(band)
    order = engine.spatial_order(B, params[engine.P_WIDTH], params[engine.P_HEIGHT], dt)
    in_order = band[order]
    k = engine.substeps(B, params, dt)

    def run(keep, runs, near, far):
        """One half: its working copy (gathered on its own thread), run; returns what halves_agree
        reads and how long the run took.
        near, far: the bands whose paths it watches towards the cut and from beyond it."""
        P = engine.gather(B, order[runs])
        b = in_order[runs]
        P[15][near(b)] = engine.WATCH_HIGH + axis
        P[15][far(b)] = engine.WATCH_LOW + axis
        m = len(P[4])
        # its own copies of the walls and parameters: the compiled engine
        # counts references to the arrays it passes on, atomically, and two
        # threads counting on the same counters contend for their cache line
        # (the copies saved 3% of the halves' time, paired in one process)
        walls, par = tuple(a.copy() for a in W), params.copy()
        # each half's counters on cache lines of their own: both threads bump
        # them at every event, and on a shared line that costs a transfer each
        stats = np.zeros(engine.N_STATS + 16, dtype=np.int64)[8:8 + engine.N_STATS]
        events = np.zeros(m, dtype=np.int64)
        start = time.perf_counter()
        engine.run_parts(P, walls, par, dt, k, stats, events, engine.event_budget(m), keep)
        return P, events, stats, keep, time.perf_counter() - start

    left = (band <= 2, in_order <= 4, lambda b: b <= 1, lambda b: b == 4)
    right = (band >= 3, in_order >= 1, lambda b: b == 1, lambda b: b >= 4)
    if together:
        later = _other_thread().submit(run, *right)
        halves = run(*left), later.result()
    else:
        halves = run(*left), run(*right)
    (PL, events_l, stats_l, keep_l, time_l), (PR, events_r, stats_r, keep_r, time_r) = halves
    stats = stats_l + stats_r
    rank_r = np.full(n, -1, dtype=np.int64)
    rank_r[PR[14]] = np.arange(len(PR[14]))
    margin = 1e-3 * float(np.max(B[4])) + 1e-9 * float(params[engine.P_WIDTH] + params[engine.P_HEIGHT])
    budget = engine.event_budget(n)
    if (stats_l[engine.S_STOPPED] or stats_r[engine.S_STOPPED]
            or stats[engine.S_EVENTS] >= budget
            or stats[engine.S_WORK] >= engine.work_budget(n) // 2
            or not engine.halves_agree(PL, PR, events_l, events_r, band, rank_r, margin)):
        if backoff is not None:
            backoff.refused()
        return engine.step(B, W, params, dt)
    if backoff is not None:
        backoff.kept()
    if balance is not None and together:
        balance.ran(time_l, time_r)
    engine.scatter(PL, B, keep_l)
    engine.scatter(PR, B, keep_r)
    stats[engine.S_ALL] = stats[engine.S_EVENTS]
    return stats
