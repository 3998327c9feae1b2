"""``abound bench --frames-loop`` (issue 27, item 1): the demo's frame loop, timed headless.

Runs the real command in a subprocess on a small window and checks what its
numbers must satisfy whatever the machine's speed: the loop is paced by the
display's interval (never more than 60 frames a second), each loop stepped
its simulation (the simulated time it reports is steps x dt of the scene),
shares are shares. No time is asserted (the machines are shared).
"""
import json
import subprocess
import sys

import pytest

pytest.importorskip("pyglet")
SCENE_DT = 1.0 / 60.0  # the default scene's [physics] dt


def bench(*args):
    return subprocess.run([sys.executable, "-m", "abound", "bench", *args], capture_output=True, text=True,
                          timeout=600)


def test_the_frame_loop_benchmark_runs_both_loops_and_its_numbers_hold_together():
    run = bench("--frames-loop", "--size", "320x240", "--frames", "40", "--compare", "serial", "--json")
    assert run.returncode == 0, run.stderr
    r = json.loads(run.stdout)
    assert [x["loop"] for x in r["loops"]] == ["demo", "serial"]
    assert r["width"] == 320 and r["height"] == 240 and r["balls"] > 0
    for x in r["loops"]:
        assert x["frames"] == 40
        assert 0 < x["fps"] <= 60.0 * 1.05  # paced by the 1/60 s interval
        assert 0.0 <= x["missed_share"] <= 1.0
        assert x["steps_per_frame"] > 0 and x["physics_ms_per_step_median"] > 0 and x["draw_ms_median"] > 0
        wall = x["frames"] / x["fps"]
        # never faster than real time, but for the backlog of less than a step carried into
        # the timed frames and the first timed frame's time, counted before it
        assert 0 < x["speed"] <= 1.0 + 2 * SCENE_DT / wall
        # speed is simulated over wall-clock time: frames / fps of wall time, steps x dt simulated
        assert x["speed"] == pytest.approx(x["steps_per_frame"] * SCENE_DT * x["fps"], rel=1e-6)
    assert r["fps_ratio"] == pytest.approx(r["loops"][0]["fps"] / r["loops"][1]["fps"])


def test_compare_serial_needs_the_frames_loop():
    run = bench("--compare", "serial")
    assert run.returncode == 2
    assert run.stderr.strip().splitlines() == [
        "abound: error: --compare serial compares frame loops: it needs --frames-loop"]


def test_the_text_names_each_loop_once():
    # the demo's loop picks pipelined or serial as it goes: its row says which it
    # ended with, and the serial loop it is compared with is named apart from it
    run = bench("--frames-loop", "--size", "320x240", "--frames", "10", "--compare", "serial")
    assert run.returncode == 0, run.stderr
    rows = run.stdout.strip().splitlines()
    assert rows[1].split(":")[0] in ("the demo's loop, pipelined at the end", "the demo's loop, serial at the end")
    assert rows[2].startswith("the serial loop: ")
    assert rows[3].startswith("the demo's loop / the serial loop, frames per second: ")
