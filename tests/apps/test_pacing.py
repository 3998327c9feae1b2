"""Frame pacing (abound/pacing.py): steps per frame, and slow motion instead of a spiral (issue 27, item 3).

A model machine stands in for the clock: a step costs ``c`` seconds and a
frame's drawing ``d``; run one after the other a frame lasts d + k c, beside
each other max(d, k c, interval) (k steps). The pacer sees only the elapsed
times and the costs it is told, as in the demo; the speeds it must reach are
worked out here from the model.
"""
import pytest

from abound.pacing import MAX_STEPS_PER_FRAME, Pacer

DT = INTERVAL = 1.0 / 60.0


def run_model(pacer, c, d, frames=600, overlapped=True):
    """Run ``frames`` frames of the model machine; returns (frame lengths, steps per frame)."""
    lengths, taken = [], []
    elapsed = INTERVAL
    for _ in range(frames):
        k = pacer.steps(elapsed)
        pacer.took_steps(k, k * c)
        pacer.took_draw(d)
        work = max(d, k * c) if overlapped else d + k * c
        elapsed = max(work, INTERVAL)  # (the loop waits out the rest of the interval)
        lengths.append(elapsed)
        taken.append(k)
    return lengths, taken


def test_a_frame_takes_the_steps_its_time_calls_for():
    p = Pacer(DT, INTERVAL)
    assert p.steps(DT) == 1
    assert p.steps(0.5 * DT) == 0
    assert p.steps(0.5 * DT) == 1  # the half steps add up
    assert p.steps(3 * DT) == 3


def test_a_long_stall_is_not_caught_up():
    p = Pacer(DT, INTERVAL)
    assert p.steps(10.0) == MAX_STEPS_PER_FRAME
    assert p.accumulator == 0.0  # the backlog is dropped


@pytest.mark.parametrize("overlapped", [True, False])
def test_a_fast_machine_keeps_real_time(overlapped):
    p = Pacer(DT, INTERVAL, overlapped=overlapped)
    lengths, taken = run_model(p, c=0.002, d=0.005, overlapped=overlapped)
    assert sum(taken) * DT == pytest.approx(sum(lengths), abs=DT)  # every due step taken
    assert not p.slowed and p.speed == pytest.approx(1.0, abs=0.03)


@pytest.mark.parametrize("c, d", [(0.030, 0.010), (0.020, 0.025), (0.050, 0.004)])
def test_a_slow_machine_shows_slow_motion_without_spiralling(c, d):
    """Steps cost more than real time: the old loop took ever more steps per frame until it
    sat at MAX_STEPS_PER_FRAME (frames of d + 4 c); the pacer takes one a frame (the
    least that moves the picture), so a frame lasts max(d, c, interval) beside the
    drawing and the simulation runs at dt / that."""
    p = Pacer(DT, INTERVAL, overlapped=True)
    lengths, taken = run_model(p, c, d)
    frame = max(d, c, INTERVAL)
    assert taken[1:] == [1] * (len(taken) - 1)  # (the first frame, before any cost is known, may take more)
    assert max(lengths[1:]) == pytest.approx(frame)
    assert p.slowed and p.speed == pytest.approx(DT / frame, rel=0.02)


def test_serial_steps_fit_what_the_drawing_leaves_of_the_interval():
    """One after the other: a 4 ms step and 6 ms of drawing leave room for 2 steps in an
    interval of 16.7 ms, so the simulation slows to 2 dt per frame of 6 + 2 x 4 ms...
    which is shorter than the interval: real time holds. With 9 ms steps only one fits
    (and 15 ms frames), again real time; with 12 ms steps one a frame of 18 ms: slow."""
    for c, speed in ((0.004, 1.0), (0.009, 1.0), (0.012, DT / (0.006 + 0.012))):
        p = Pacer(DT, INTERVAL, overlapped=False)
        lengths, taken = run_model(p, c, 0.006, overlapped=False)
        assert max(taken[1:]) <= max(1, int((INTERVAL - 0.006) / c))
        assert p.speed == pytest.approx(speed, rel=0.03), c


def test_after_a_pause_the_backlog_is_forgotten():
    p = Pacer(DT, INTERVAL)
    p.steps(0.9 * DT)
    p.reset()
    assert p.steps(0.5 * DT) == 0
