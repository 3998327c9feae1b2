"""A step split in strips (abound/physics/split.py) must be the whole step, bit for bit.

The strips run the engine on overlapping bands of the box and are kept only
when split.agree proves them exact; otherwise the step runs whole.
These tests compare the split step with the whole one on the same state:
positions, velocities, modes and the counts of contacts must be identical,
and the split must have been taken (not fallen back) in most steps, or the
comparison would prove nothing. With bands far too narrow for the balls'
speeds the halves cannot both be exact: the checks must then refuse them.
"""
import numpy as np
import pytest

from abound import Simulation
from abound.physics import split
from abound.scene import build_simulation


class Counting:
    """An engine module whose whole-step calls are counted (the split's fallbacks)."""

    def __init__(self, engine):
        self._engine = engine
        self.whole = 0

    def __getattr__(self, name):
        return getattr(self._engine, name)

    def step(self, *args):
        self.whole += 1
        return self._engine.step(*args)


def _copy(sim):
    return [a.copy() for a in sim._world.ball_arrays()]


def _run_both(sim, frames, together=True, min_moving=split.MIN_MOVING, strip_balls=split.STRIP_BALLS):
    """Step sim's state frames times whole and, from the same start, split;
    returns (whole states, split states, whole stats, split stats, fallbacks)."""
    w = sim._world
    engine = sim._backend
    start = _copy(sim)
    params, walls, dt = sim._params(), w.wall_arrays(), sim.dt
    whole_stats, split_stats = [], []
    for _ in range(frames):
        whole_stats.append(engine.step(w.ball_arrays(), walls, params, dt)[:4].copy())
    whole = _copy(sim)
    for a, s in zip(w.ball_arrays(), start):
        a[...] = s
    counting = Counting(engine)
    for _ in range(frames):
        split_stats.append(split.step(counting, w.ball_arrays(), walls, params, dt, together=together,
                                      min_moving=min_moving, strip_balls=strip_balls)[:4].copy())
    return whole, _copy(sim), np.array(whole_stats), np.array(split_stats), counting.whole


def _assert_same(whole, halves):
    for k, (a, b) in enumerate(zip(whole, halves)):
        assert np.array_equal(a, b), f"ball array {k} differs"


def _gas(n, seed=3):
    sim = build_simulation("hot_gas", balls=n, seed=seed, backend="fast")
    sim.step()  # settles the random placement
    return sim


def test_a_split_hot_gas_is_the_whole_step_bit_for_bit():
    sim = _gas(6000)
    whole, halves, ws, ss, fallbacks = _run_both(sim, 20)
    assert fallbacks <= 5, "the halves were refused in most steps: nothing was compared"
    _assert_same(whole, halves)
    assert np.array_equal(ws, ss), "contact and event counts differ"
    assert ws[:, 0].sum() > 20 * 1000  # a crowded gas: thousands of contacts per step


def test_bands_too_narrow_are_refused_and_the_step_runs_whole(monkeypatch):
    # a band a tenth of the distance the balls sweep: contacts cross the cut
    # all the time, so halves that ignore each other cannot both be exact
    monkeypatch.setattr(split, "INNER", 0.1)
    monkeypatch.setattr(split, "OUTER", 0.1)
    monkeypatch.setattr(split, "FAST_SHARE", 0.0)
    sim = _gas(6000)
    whole, halves, ws, ss, fallbacks = _run_both(sim, 5)
    assert fallbacks == 5
    _assert_same(whole, halves)


def test_a_split_galton_board_with_sleepers_and_sliders_is_the_whole_step():
    # pegs (pinned balls), funnel segments, balls sliding and asleep: every
    # way one ball reads another must stay within a half or be refused
    sim = build_simulation("galton", balls=400, seed=2, backend="fast")
    # the split step runs only where no contact clusters do (split.py): the
    # board as it stepped before them, with balls sliding and asleep
    sim.contact_clusters = False
    # 4 s: without clusters most balls already lie asleep on the funnel's
    # slopes (the jam of issue 23), a few slide, and some 40 still move; by
    # 5 s too few move for the split to be taken at all (MIN_MOVING)
    for _ in range(240):
        sim.step()
    modes = sim.modes
    assert np.any(modes == 1) and np.any(modes == 2), "no ball rests: the test would miss rest"
    whole, halves, ws, ss, fallbacks = _run_both(sim, 30, min_moving=30)
    _assert_same(whole, halves)
    assert np.array_equal(ws, ss)
    assert fallbacks <= 25, "the steps ran whole: the split was hardly compared"


def test_the_reference_backend_splits_the_same_way_one_half_after_the_other():
    sim = build_simulation("hot_gas", balls=400, seed=5, backend="reference", size=(1600, 400))
    sim.step()
    whole, halves, ws, ss, fallbacks = _run_both(sim, 3, together=False, min_moving=100)
    assert fallbacks < 3
    _assert_same(whole, halves)
    assert np.array_equal(ws, ss)


def test_simulation_threads_setting():
    sim = Simulation(200, 100, threads=1)
    assert sim.threads == 1
    assert Simulation(200, 100, backend="reference", threads=2).step_threads == 1  # only fast splits
    assert Simulation(200, 100, backend="fast", threads=2).step_threads == 2
    sim.threads = None
    assert sim.threads in (1, 2)
    for bad in (0, 3, True, 1.5):
        with pytest.raises(Exception, match="threads"):
            sim.threads = bad


def test_simulation_steps_split_and_whole_to_the_same_state():
    a = _gas(6000, seed=7)
    b = _gas(6000, seed=7)
    a.threads, b.threads = 2, 1
    for _ in range(10):
        sa, sb = a.step(), b.step()
        assert sa == sb
    assert np.array_equal(a.positions, b.positions)
    assert np.array_equal(a.velocities, b.velocities)
    # each bounce on the floor and the top counted once, though balls near a cut ran in two strips
    assert np.all(b.box_impulses > 0.0)
    np.testing.assert_allclose(a.box_impulses, b.box_impulses, rtol=1e-12)


def test_one_thread_steps_a_crowded_scene_as_strips_in_turn_with_the_whole_steps_result(monkeypatch):
    # (ALONE_MIN_MOVING lowered: the crowd it names is too large for a quick test)
    monkeypatch.setattr(split, "ALONE_MIN_MOVING", 4000)
    a = _gas(6000, seed=9)
    b = _gas(6000, seed=9)
    a.threads = b.threads = 1
    strips = []

    class Watching(Counting):
        def run_parts(self, *args):  # each strip's run (a whole step runs inside engine.step)
            strips.append(len(args[0][4]))
            return self._engine.run_parts(*args)

    a._backend = Watching(a._backend)
    for _ in range(10):
        a.step()
        b._backend.step(b._world.ball_arrays(), b._world.wall_arrays(), b._params(), b.dt)
    assert len(strips) >= 2 * 8, "the steps were not split"
    assert max(strips) < 6000
    assert np.array_equal(a.positions, b.positions)
    assert np.array_equal(a.velocities, b.velocities)
    np.testing.assert_allclose(a.box_impulses, b.box_impulses, rtol=1e-12)


def test_backoff_waits_longer_after_each_refusal_and_afresh_after_a_kept_split():
    b = split.Backoff()
    tried = []
    for s in range(120):  # every try refused
        if b.now():
            tried.append(s)
            b.refused()
    # waits of 1, 2, 4, 8, 16 steps, then MAX_WAIT (32)
    assert list(np.diff(tried)) == [2, 3, 5, 9, 17, 33, 33]
    b.kept()
    b.refused()
    assert [b.now() for _ in range(3)] == [False, True, True]


def test_halves_whose_far_paths_come_close_are_refused(monkeypatch):
    # Test 2 alone: one ball left of the cut flies right, one right of it flies
    # left, on different heights, so they cross along the cut's axis without
    # ever touching; the only ball both halves run (at the cut, far above)
    # ends the same in both, so test 1 passes. With bands a tenth of the
    # sweep wide, the two far balls' paths meet across the cut: the halves
    # cannot prove they kept apart and must be refused, every step.
    monkeypatch.setattr(split, "INNER", 0.1)
    monkeypatch.setattr(split, "OUTER", 0.1)
    monkeypatch.setattr(split, "FAST_SHARE", 0.0)
    sim = Simulation(1000, 400, backend="fast", contact_clusters=False)  # (a step with ticks is never split)
    sim.add_ball(500.0, 380.0, radius=2.0)  # the median: the cut lies on it
    sim.add_ball(493.0, 100.0, vx=600.0, radius=2.0)  # sweeps 10 px right in a step
    sim.add_ball(507.0, 300.0, vx=-600.0, radius=2.0)  # ... and 10 px left
    sim.step(1e-6)  # applies the placement (sets each ball's acceleration)
    plan = split.plan(sim._backend, sim._world.ball_arrays(), sim._params(), sim.dt, min_moving=1)
    assert plan is not None and len(plan[1]) == 1  # two strips (as the test assumes)
    band = split.bands(sim.positions[:, plan[0]], plan[1][0], plan[2], plan[3])
    assert list(band) == [2, 0, 5]
    whole, halves, ws, ss, fallbacks = _run_both(sim, 1, min_moving=1)
    assert fallbacks == 1
    _assert_same(whole, halves)


def test_balance_moves_the_cut_towards_equal_times_and_stays_within_limits():
    b = split.Balance()
    assert b.left == 0.5
    # the left half (half the balls) took three times as long as the right:
    # equal times need a quarter of the balls on the left; each step moves
    # GAIN of the way there
    b.ran(3.0, 1.0)
    assert b.left == pytest.approx(0.5 + split.Balance.GAIN * (0.25 - 0.5))
    for _ in range(50):  # a left half far slower for ever: the lower limit
        b.ran(100.0, 1.0)
    assert b.left == split.Balance.LIMITS[0]
    for _ in range(50):  # times in proportion to the shares: it settles where it is even
        f = b.left
        b.ran(f * 2.0, (1.0 - f) * 1.0)  # the left's balls cost twice as much
    assert b.left == pytest.approx(1.0 / 3.0, abs=1e-6)
    b.ran(0.0, 1.0)  # no time measured: no change
    assert b.left == pytest.approx(1.0 / 3.0, abs=1e-6)


def test_an_off_centre_cut_is_still_the_whole_step_bit_for_bit():
    sim = _gas(6000)
    balance = split.Balance()
    balance.left = 0.35
    w = sim._world
    engine = sim._backend
    start = _copy(sim)
    params, walls, dt = sim._params(), w.wall_arrays(), sim.dt
    axis, cuts, w_in, w_out = split.plan(engine, w.ball_arrays(), params, dt, left=0.35)
    assert len(cuts) == 1
    band = split.bands(w.ball_arrays()[0][:, axis], cuts[0], w_in, w_out)
    assert abs(np.mean(band <= 2) - 0.35) < 0.02  # the cut is off centre
    for _ in range(5):
        engine.step(w.ball_arrays(), walls, params, dt)
    whole = _copy(sim)
    for a, s in zip(w.ball_arrays(), start):
        a[...] = s
    counting = Counting(engine)
    for _ in range(5):
        balance.left = 0.35  # (the halves' times would move it)
        split.step(counting, w.ball_arrays(), walls, params, dt, balance=balance)
    assert counting.whole <= 1, "the halves were refused: nothing was compared"
    _assert_same(whole, _copy(sim))


def test_a_gas_in_many_strips_is_the_whole_step_bit_for_bit():
    sim = _gas(6000, seed=11)
    plan = split.plan(sim._backend, sim._world.ball_arrays(), sim._params(), sim.dt, strip_balls=1000)
    assert plan is not None and len(plan[1]) >= 3, "fewer than four strips: not what the test compares"
    for together in (True, False):
        whole, strips, ws, ss, fallbacks = _run_both(sim, 10, together=together, strip_balls=1000)
        assert fallbacks <= 2, "the strips were refused: nothing was compared"
        _assert_same(whole, strips)
        assert np.array_equal(ws, ss), "contact and event counts differ"


def test_many_strips_with_bands_too_narrow_are_refused(monkeypatch):
    monkeypatch.setattr(split, "INNER", 0.1)
    monkeypatch.setattr(split, "OUTER", 0.1)
    monkeypatch.setattr(split, "FAST_SHARE", 0.0)
    sim = _gas(6000)
    plan = split.plan(sim._backend, sim._world.ball_arrays(), sim._params(), sim.dt, strip_balls=1000)
    assert plan is not None and len(plan[1]) >= 4
    whole, strips, ws, ss, fallbacks = _run_both(sim, 4, strip_balls=1000)
    assert fallbacks == 4
    _assert_same(whole, strips)


def test_paths_that_meet_across_a_strip_are_refused():
    # Test 2 compares, at each cut, the paths of every ball below it with those
    # of every ball above it, not only the strips beside it: a ball of strip
    # 0 and one of strip 2 may meet inside strip 1 while strip 1's own balls,
    # all in its inner bands, see neither. Three strips' watched extremes
    # (engine.strip_members' slots): strip 0's own balls reached x = 1500
    # (high slot 1), strip 2's own balls came down to x = 1490 (low slot 1),
    # strip 1 held balls near its cuts only (slot 0).
    sim = Simulation(3000, 1000, backend="fast")
    engine = sim._backend
    cuts, w_in = np.array([1000.0, 2000.0]), 3.0
    inf = np.inf
    # slots: highest ends 0, 1, 2, then lowest ends 0, 1, 2 (engine.strip_members)
    reach = [np.array([-inf, 1500.0, -inf, inf, 5.0, inf]),  # strip 0: its balls, up to 1500
             # strip 1: balls near cut 0 (high slot 1, low slot 0) and near cut 1 (0, 1)
             np.array([1997.0, 1003.0, -inf, 1000.0, 1994.0, inf]),
             np.array([-inf, 2990.0, -inf, inf, 1490.0, inf])]  # strip 2: down to 1490
    nothing = engine.gather(sim._world.ball_arrays(), np.zeros(0, dtype=np.int64))  # (no balls)
    runs = [(nothing[:16] + (r,), np.zeros(0, dtype=np.int64), None, None) for r in reach]
    x = np.zeros(0)
    assert not split.agree(engine, runs, x, cuts, w_in, 1e-3)
    reach[2][4] = 1510.0  # strip 2's balls stayed right of strip 0's: apart
    assert split.agree(engine, runs, x, cuts, w_in, 1e-3)


def test_a_step_does_not_depend_on_the_balls_order_in_memory():
    # A ball squeezed between the floor and a falling ball above it bounces
    # between them in a rapid collapse. The step works on a copy of the balls
    # in its own order (spatial_order): the outcome must not depend on where
    # in it the squeezed ball sits - here at 6, which is also the floor's
    # event code (wall 2, face: 3 x 2), and at 0.
    sim = Simulation(400, 300, backend="fast", wall_restitution=0.5)
    engine = sim._backend
    sim.add_ball(200.0, 5.0 + 1e-6, radius=5.0, restitution=0.5)  # just above the floor
    sim.add_ball(200.0, 35.5, vy=-2000.0, radius=20.0, restitution=0.5)  # heavy, falling onto it
    for k in range(6):  # others, far away, that only fall
        sim.add_ball(30.0 + 60.0 * k, 250.0, radius=4.0)
    sim.step(1e-9)  # applies the placement
    start = [a.copy() for a in sim._world.ball_arrays()]
    W, params, dt = sim._world.wall_arrays(), sim._params(), 1.0 / 60.0
    results = []
    for squeezed_at in (6, 0):
        B = tuple(a.copy() for a in start)
        others = [i for i in range(len(start[4])) if i != 0]
        perm = np.array(others[:squeezed_at] + [0] + others[squeezed_at:], dtype=np.int64)
        P = engine.gather(B, perm)
        stats = np.zeros(engine.N_STATS, dtype=np.int64)
        n = len(perm)
        engine.run_parts(P, W, params, dt, 1, stats, np.zeros(n, dtype=np.int64),
                         engine.event_budget(n), np.ones(n, dtype=np.bool_), engine.contact_log(0),
                         False)  # (no contact clusters: the collapse rule is what this tests)
        engine.scatter(P, B, np.ones(n, dtype=np.bool_))
        results.append((B, stats))
    (B6, s6), (B0, s0) = results
    assert s6[engine.S_COLLAPSED] >= 1, "no collapse: the test would miss what it is about"
    for k, (x, y) in enumerate(zip(B6, B0)):
        assert np.array_equal(x, y), f"ball array {k} depends on the order"
    assert np.array_equal(s6[:4], s0[:4])
