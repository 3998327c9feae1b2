"""A large step on two cores: the box cut into strips that run at once, then checked.

An event-driven step is sequential: every contact waits for the ones before
it. But a contact touches only the balls it involves, so distant parts of a
crowded box are nearly independent within one step. The step is cut across
the box's longer side into K strips of about STRIP_BALLS moving balls each
(at least two), at quantiles of the moving balls' coordinates (moved to
where no cut parts a sliding ball from its support); the first
K // 2 strips hold a share ``left`` of them (the median, or where a Balance
finds the two threads take equal times). About each cut lie four bands of
the balls' positions at the start of the step:

    band      0      |    1     |    2     |    3     |    4     |     5
                     |  outer   |  inner   |  inner   |  outer   |
              cut - w_in - w_out  cut - w_in   cut    cut + w_in  cut + w_in + w_out

(w_in = INNER x reach, w_out = OUTER x reach; reach: how far a fast ball goes
in the step, plus the largest diameter.) Cuts lie at least twice these four
bands apart, so a ball is in bands 1-4 of one cut at most.

Each strip runs the engine's own step on the balls of its slice of the box
and of bands 1-4 of the cuts that bound it (the others' bands 1-2 beyond its
low cut, 3-4 beyond its high cut) and keeps those of its own slice. One
thread runs the first K // 2 strips one after the other, the other thread the
rest (the compiled engine releases the GIL). Small strips also run faster
than one large step per ball: each event reads the balls near it, and the
balls of a small strip stay in the core's cache. No strip alone is the true
step - none sees the balls beyond its outer bands - so the result is kept
only if these hold at every cut, else the step runs again whole:

  1. The balls of bands 2 and 3, which both strips beside the cut ran, end
     in the same state, bit for bit, after the same number of events, in
     both (engine.inner_bands_agree).
  2. The paths of the balls of bands 0-1 and those of bands 4-5 stay apart
     along the axis, whichever strip ran them: no contact can join them.
     Bands 0-1 of a cut are bands 0-1 in the strip below it, band 1 in the
     strip above it and every ball of the strips further below; bands 4-5
     likewise. Each strip tracks the extremes of its balls' paths in a few
     slots (engine.strip_members, engine.keep_box).

Why that makes every kept ball exact. Take the true step's contacts in time
order and suppose all balls each strip keeps, together with bands 2-3 of
each cut in both strips beside it, were right up to the next contact. Its
two balls both lie among the balls some strip has right (its own slice and
the inner bands beyond its cuts), and that strip resolves it right; or they
lie in bands 0-1 and 4-5 of one cut - which test 2 rules out, since their
paths are right until they meet. A contact that one strip resolves but its
neighbour cannot (a ball of band 2 meeting band 5) leaves that ball
different in the two, which test 1 rules out. A contact that happens in a
strip but not in truth needs a wrong ball, and wrong balls are only those
of its outer bands beyond its cuts: with bands 0-1 or 4-5 of that cut in
the same strip test 2 forbids it, with bands 2-3 test 1 catches it. So no
kept ball ever goes wrong. (Contact here means every way one ball's state
reads another's: impulses, waking, supports, sleeping tests; each needs the
two balls within touching distance. Test 1 compares how the balls end, not
every event on the way: a ball whose history differed in the two strips
would have to end on the same bits, position, velocity, mode and
trajectory count alike, by chance.)

The strips run the same code as the whole step, on the same tie keys, the
same number of parts, and so resolve each contact with the same arithmetic:
a split step gives the whole step's result bit for bit (tests check it).
Events, contacts, freezes and the walls' impulses are counted by the strip
that keeps the event's first ball. A strip that hits a budget, strips that
together resolve the whole step's event budget or examine half its work
budget (the work of the strips is not the whole step's: a step near that
budget runs whole, so that the budget stops it where it stops the whole
step), or a ball sliding on a ball some strip that runs it leaves out, make
the step run whole.

It pays off when the bands are narrow beside the strips: a crowded scene of
moving balls that each cross a small part of the box in one step. In a
pile, a chain of touching balls carries a contact across any band at once,
and about half the splits are refused; a Backoff then waits longer and
longer before trying again, so such scenes lose little.

On one thread the strips run in turn (together=False): the same result,
and in a very crowded scene (ALONE_MIN_MOVING) faster than the whole step,
whose reads of balls and grid no longer fit in the core's cache.
"""
import os
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

MIN_MOVING = 4000  # fewer moving balls: the step is too short to share out
# moving balls per strip: in larger ones an event's reads miss the core's cache
# (a 50,000-ball gas on two threads: 1.7 us per event in strips of 25,000,
# 1.35 in strips of 12,500, 1.2 in strips of 6,000; 3,000 paid more for the
# bands than it saved)
STRIP_BALLS = 6000
# fewer moving balls on one thread: strips in turn cost more than they save
# (a gas on one thread, strips in turn / whole step, paired: 1.12 at 20,000
# balls, 0.96 at 30,000, 0.89 at 40,000, 0.64 at 50,000, where a whole
# step's reads miss the cache)
ALONE_MIN_MOVING = 5 * STRIP_BALLS
# the bands' widths, in units of the distance a fast ball sweeps in a step (the
# fastest but FAST_SHARE of the moving balls) plus the largest diameter:
INNER = 0.8  # bands 2 and 3: the far bands' paths must not cross them (test 2)
OUTER = 1.5  # bands 1 and 4: what a strip gets wrong must not cross them (test 1)
FAST_SHARE = 0.001
MAX_OVERLAP = 0.5  # the four bands about a cut may cover at most this share of either strip beside it
BINS = 1024  # the cuts lie on slices of the box this fine

MAX_WAIT = 32  # steps a Backoff waits at most before it tries to split again

_pool = None


class Backoff:
    """When to try splitting: after a refused split, skip 1, 2, 4, ... up to
    MAX_WAIT steps before the next try; a kept one starts afresh. (A refused
    split costs its strips on top of the whole step.)"""

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
    """Where to cut: the share of the moving balls in the strips the calling
    thread runs (the first half of them). It starts at the median and, after
    each split run on two threads, moves part of the way to where the
    threads would have taken equal times, taking each thread's time as
    proportional to its share. The two threads do not always run at the same
    speed (the machine's other work, which core each lands on), nor do equal
    shares of the balls always cost the same; the step waits for the slower
    thread. Any cut gives the same result, bit for bit: only the time changes."""

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
        _pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="abound-strips")
    return _pool


def plan(engine, B, params, dt, min_moving=MIN_MOVING, left=0.5, strip_balls=STRIP_BALLS):
    """(axis, cuts (K - 1,) px, w_in, w_out) for splitting this step into K
    strips, or None when it does not pay.

    B: the public ball arrays (engine.step's); params: make_params'; dt s;
    left: the share of the moving balls in the first K // 2 strips (see
    Balance); strip_balls: about how many moving balls a strip gets.
    """
    if len(B[4]) < min_moving:  # (spares small scenes the pass over the balls)
        return None
    axis, reach, at, moving = engine.split_histogram(B, params, dt, FAST_SHARE, BINS)
    if moving < min_moving:
        return None
    length = params[engine.P_WIDTH if axis == 0 else engine.P_HEIGHT]
    w_in = INNER * reach
    w_out = w_in + OUTER * reach
    total = np.cumsum(at)
    x = B[0][:, axis]
    on_ball = np.flatnonzero(B[9] == engine.SUP_BALL)
    slider, support = x[on_ball], x[B[10][on_ball]]
    # (no ball slides on a ball in a gas: spare it the tests, a third of the plan's time)
    free = _free_bins(slider, support, w_out, length, len(at)) if len(on_ball) else None
    # fewer strips when they would be too narrow, or a cut would part a
    # sliding ball from its support
    for strips in range(max(2, int(moving / strip_balls + 0.5)), 1, -1):
        cuts = _cuts(total, moving, strips, left, length, free)
        widths = np.diff(np.concatenate(([0.0], cuts, [length])))
        if np.all(2.0 * w_out <= MAX_OVERLAP * widths) and not (len(on_ball) and any(
                _parts_support(slider, support, cut, w_in, w_out) for cut in cuts)):
            return axis, cuts, w_in, w_out
    return None


def _parts_support(slider, support, cut, w_in, w_out):
    """Would a strip beside this cut run a sliding ball (coordinates slider)
    but not its support (support)? A strip must hold the support of every
    sliding ball it runs."""
    b = bands(slider, cut, w_in, w_out)
    s = bands(support, cut, w_in, w_out)
    return bool(np.any((b <= 4) & (s == 5)) or np.any((b >= 1) & (s == 0)))


def _cuts(total, moving, strips, left, length, free):
    """The cuts between strips (strips - 1,) px: the first strips // 2 share a
    share left of the moving balls equally, the others the rest. total: the
    moving balls in the box's slices, summed (split_histogram); a cut lies
    in the middle of a slice, the nearest one that free (see _free_bins)
    allows (in a scene of separate heaps of balls, such as boards side by
    side, the gaps between them; None: any slice)."""
    first = strips // 2
    shares = [left * c / first if c <= first else left + (1.0 - left) * (c - first) / (strips - first)
              for c in range(1, strips)]
    bins = len(total)
    allowed = [] if free is None else np.flatnonzero(free)
    at = []
    for share in shares:
        want = min(int(np.searchsorted(total, int(share * (moving + 1)), side="left")), bins - 1)
        if len(allowed) and not free[want]:
            k = np.searchsorted(allowed, want)
            near = [allowed[q] for q in (k - 1, k) if 0 <= q < len(allowed)]
            want = min(near, key=lambda b: abs(b - want))
        at.append(want)
    return (np.array(at, dtype=np.float64) + 0.5) / bins * length


def _free_bins(slider, support, w_out, length, bins):
    """(bins,) bool: whether a cut in the middle of each slice of the box
    keeps every sliding ball (coordinate slider) with its support (support)
    in the strips beside it. A cut c parts them when c + w_out or c - w_out
    falls between the two, on the support's side of the slider. (A guide
    only: plan checks the chosen cuts exactly.)"""
    edges = np.zeros(bins + 1, dtype=np.int64)
    scale = bins / length
    for lo, hi in ((slider - w_out, support - w_out), (support + w_out, slider + w_out)):
        # the cuts in (lo, hi]: slices j with lo < (j + 0.5) / scale <= hi
        first = np.clip(np.floor(lo * scale - 0.5).astype(np.int64) + 1, 0, bins)
        last = np.clip(np.floor(hi * scale - 0.5).astype(np.int64), -1, bins - 1)
        some = first <= last
        np.add.at(edges, first[some], 1)
        np.add.at(edges, last[some] + 1, -1)
    return np.cumsum(edges[:bins]) == 0


def bands(x, cut, w_in, w_out):
    """The band (0 to 5) of each coordinate of x about a cut (see above;
    engine.split_band for one)."""
    return ((x >= cut - w_out).astype(np.int64) + (x >= cut - w_in) + (x >= cut) + (x >= cut + w_in)
            + (x >= cut + w_out))


def step(engine, B, W, params, dt, together=True, min_moving=MIN_MOVING, backoff=None,
         balance=None, strip_balls=STRIP_BALLS):
    """engine.step(B, W, params, dt), as strips when that pays (see above).

    Same arguments and result as engine.step. together: run the strips on
    two threads; False runs them one after the other (the same result, for
    tests on one core or the reference backend). backoff: a Backoff kept
    from step to step (None: try every step); balance: a Balance kept from
    step to step (None: cut at the median); strip_balls: see plan.
    """
    if backoff is not None and not backoff.now():
        return engine.step(B, W, params, dt)
    cut_plan = plan(engine, B, params, dt, min_moving, 0.5 if balance is None else balance.left,
                    strip_balls)
    if cut_plan is None:
        return engine.step(B, W, params, dt)
    axis, cuts, w_in, w_out = cut_plan
    n = len(B[4])
    x = np.ascontiguousarray(B[0][:, axis])  # (each ball's coordinate at the start)
    order = engine.spatial_order(B, params[engine.P_WIDTH], params[engine.P_HEIGHT], dt)
    home, members, codes, start = engine.strip_members(x, order, cuts, w_in, w_out, axis)
    k = engine.substeps(B, params, dt)

    def run(s):
        """Strip s: its working copy (gathered on its own thread), run; returns what agree reads."""
        P = engine.gather(B, members[start[s]:start[s + 1]])
        P[15][:] = codes[start[s]:start[s + 1]]
        m = len(P[4])
        keep = home == s  # the balls it keeps
        # its own copies of the walls and parameters: the compiled engine
        # counts references to the arrays it passes on, atomically, and two
        # threads counting on the same counters contend for their cache line
        # (the copies saved 3% of two halves' time, paired in one process)
        walls, par = tuple(a.copy() for a in W), params.copy()
        # each strip's counters on cache lines of their own: both threads bump
        # them at every event, and on a shared line that costs a transfer each
        stats = np.zeros(engine.N_STATS + 16, dtype=np.int64)[8:8 + engine.N_STATS]
        events = np.zeros(m, dtype=np.int64)
        engine.run_parts(P, walls, par, dt, k, stats, events, engine.event_budget(m), keep,
                         engine.contact_log(0), False)  # (plan splits no step that runs clusters)
        return P, events, stats, keep, walls

    def run_all(strips):
        start = time.perf_counter()
        return [run(s) for s in strips], time.perf_counter() - start

    strips = len(cuts) + 1
    first = strips // 2
    if together:
        later = _other_thread().submit(run_all, range(first, strips))
        (runs, time_l), (rest, time_r) = run_all(range(first)), later.result()
    else:
        (runs, time_l), (rest, time_r) = run_all(range(first)), run_all(range(first, strips))
    runs += rest
    stats = sum(r[2] for r in runs)
    margin = 1e-3 * float(np.max(B[4])) + 1e-9 * float(params[engine.P_WIDTH] + params[engine.P_HEIGHT])
    if (any(r[2][engine.S_STOPPED] for r in runs)
            or stats[engine.S_EVENTS] >= engine.event_budget(n)
            or stats[engine.S_WORK] >= engine.work_budget(n) // 2
            or not agree(engine, runs, x, cuts, w_in, margin)):
        if backoff is not None:
            backoff.refused()
        return engine.step(B, W, params, dt)
    if backoff is not None:
        backoff.kept()
    if balance is not None and together:
        balance.ran(time_l, time_r)

    def scatter(strips):  # (each strip writes only the balls it keeps: no two write one ball)
        for P, _, _, keep, _ in strips:
            engine.scatter(P, B, keep)

    if together:
        later = _other_thread().submit(scatter, runs[first:])
        scatter(runs[:first])
        later.result()
    else:
        scatter(runs)
    # the walls' impulses: each strip tallied the bounces of the balls it keeps
    W[8][:] += sum(r[4][8] - W[8] for r in runs)
    stats[engine.S_ALL] = stats[engine.S_EVENTS]
    return stats


def agree(engine, runs, x, cuts, w_in, margin):
    """Whether every strip of a split step is exact: tests 1 and 2 (see
    above) at every cut. runs: each strip's (working copy after the step,
    events per ball, ...); x: the balls' coordinates at the start; margin px."""
    for c, cut in enumerate(cuts):
        (PL, events_l, *_), (PR, events_r, *_) = runs[c], runs[c + 1]
        if not engine.inner_bands_agree(PL, PR, events_l, events_r, x, cut - w_in, cut + w_in):
            return False
    slots = engine.WATCH_SLOTS  # (slots: engine.strip_members)
    high = [r[0][16][:slots] for r in runs]
    low = [r[0][16][slots:] for r in runs]
    for c in range(len(cuts)):
        near = max(high[c][1], high[c][2], high[c + 1][2], *(h.max() for h in high[:c]))
        far = min(low[c][2], low[c + 1][1], low[c + 1][2], *(lo.min() for lo in low[c + 2:]))
        if not near + margin < far:
            return False
    return True
