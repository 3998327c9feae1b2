"""The loop chooser (abound/pacing.py): the demo steps beside the drawing or before it,
whichever gives more frames a second here, timed in turn (issue 27).

A model machine: each way of running has a frame time; the chooser sees only the
times at which frames are drawn, as in the demo.
"""
import pytest

from abound.pacing import GAP, HOLD_SECONDS, MARGIN, SETTLE_FRAMES, TRIAL_FRAMES, LoopChooser


def run(chooser, frame_time, seconds, now=0.0):
    """Draw frames for ``seconds`` of wall-clock time; frame_time[way] is a frame's length."""
    ways = []
    end = now + seconds
    while now < end:
        way = chooser.frame(now)
        ways.append(way)
        now += frame_time[way]
    return ways, now


@pytest.mark.parametrize("pipelined_ms, serial_ms, expected", [
    (20.0, 25.0, True),    # side by side hides the drawing: pipelined
    (26.0, 21.5, False),   # the two contend (one core in effect): serial
    (16.7, 16.7, True),    # both keep up at 60 fps: pipelined (ties go to it)
    (21.0, 21.0 / (1 + MARGIN / 2), True),  # serial faster by less than the margin: stay
])
def test_the_faster_way_is_chosen_and_held(pipelined_ms, serial_ms, expected):
    chooser = LoopChooser()
    times = {True: pipelined_ms / 1000.0, False: serial_ms / 1000.0}
    ways, now = run(chooser, times, 10.0)
    trial = 2 * (TRIAL_FRAMES + SETTLE_FRAMES) + 2
    assert set(ways[:trial // 2 - 2]) == {True}  # the trial starts with the pipelined loop
    assert set(ways[trial:]) == {expected}
    assert chooser.tried[True] == pytest.approx(1000.0 / pipelined_ms)
    assert chooser.tried[False] == pytest.approx(1000.0 / serial_ms)


def test_a_new_trial_after_the_hold_follows_a_changed_machine():
    chooser = LoopChooser()
    ways, now = run(chooser, {True: 0.030, False: 0.020}, 10.0)
    assert ways[-1] is False
    # the scene changes (e.g. a board that was pouring is now at rest): pipelined is faster
    ways, now = run(chooser, {True: 0.017, False: 0.025}, HOLD_SECONDS + 10.0, now)
    assert ways[-1] is True


def test_a_break_is_not_timed():
    """A frame after a long gap (a stall, a paused loop's turn) does not count as slow."""
    chooser = LoopChooser()
    now = 0.0
    for k in range(TRIAL_FRAMES + SETTLE_FRAMES + 5):
        chooser.frame(now)
        now += 0.02 if k % 20 else GAP + 1.0
    assert chooser.tried[True] == pytest.approx(50.0)
