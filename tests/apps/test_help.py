"""Help and report lines say what is there (issue 24, item 7).

``abound demo --help`` lists the keys (the same keys as README's table),
``abound saver --help`` xscreensaver's options, and ``abound bench``'s
"freezes" line counts what its name says: times a ball went over the
per-ball event budget (``StepStats.frozen``; it was "frozen balls", and a
new user found 400 of them in a scene of 50 balls: a ball counts in each
part of a step), and the rattles the rest model stops have a line of their
own, "collapses" (``StepStats.collapsed``); the frozen count held both
before, under "event budget exhausted".
"""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from user_docs import user_docs

REPO = Path(__file__).resolve().parents[2]


def abound(*argv, cwd=None):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-m", "abound", *argv], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=300)


def readme_keys():
    """The first column of README's 'Key / mouse | Action' table."""
    text = user_docs()
    start = text.index("| Key / mouse | Action |")
    rows = []
    for line in text[start:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        rows.append(line.split("|")[1].strip())
    return rows


def test_demo_help_lists_every_key_readme_lists():
    out = abound("demo", "--help")
    assert out.returncode == 0, out.stderr
    help_text = out.stdout
    assert "keys and mouse in the window:" in help_text
    listed = help_text.split("keys and mouse in the window:")[1]
    keys = readme_keys()
    assert len(keys) >= 14, keys
    for key in keys:
        assert re.search(rf"^  {re.escape(key)}  ", listed, re.M), (key, listed)


def test_saver_help_lists_the_xscreensaver_options():
    out = abound("saver", "--help")
    assert out.returncode == 0, out.stderr
    text = " ".join(out.stdout.split())
    for option in ("--root", "--window-id ID", "--fps [F]", "--delay US", "--max-fps F", "$XSCREENSAVER_WINDOW",
                   "-root", "-window-id", "-fps", "-delay"):
        assert option in text, option


BUDGET_SCENE = """
[world]
width = 100.0
height = 100.0
gravity = [0.0, 0.0]
[physics]
backend = "fast"
[[balls]]
x = 30.0
y = 50.0
vx = 1e7
vy = 3e6
radius = 5.0
[[balls]]
x = 70.0
y = 50.0
vx = -1e7
vy = 1e6
radius = 5.0
"""
CALM_SCENE = """
[world]
width = 400.0
height = 300.0
[physics]
backend = "fast"
[[balls]]
x = 100.0
y = 150.0
vx = 200.0
radius = 10.0
"""

HEAP_SCENE = """
[world]
width = 120.0
height = 300.0
[physics]
backend = "fast"
seed = 2
contact_clusters = {clusters}
[[spawn]]
count = 30
radius = 6.0
restitution = 0.5
speed = [0.0, 100.0]
"""
SCENES = {"budget": BUDGET_SCENE, "calm": CALM_SCENE, "heap": HEAP_SCENE.format(clusters="false"),
          "clustered-heap": HEAP_SCENE.format(clusters="true")}


@pytest.mark.parametrize("scene", list(SCENES))
def test_bench_frozen_line_counts_the_frozen_balls_and_says_which(tmp_path, scene):
    """The bench's totals are the sums of StepStats.frozen, .collapsed and .stuck over the same frames: a
    pair crossing a 100 px box at 1e7 px/s passes the 256-event budget every step (frozen); one
    calm ball is neither; in a forming heap without contact clusters rattles are stopped (collapsed),
    and frozen counts no ball in a step of fewer than 257 events in all, where no ball can be over the
    budget; with them (the default), frozen also counts balls wedged among cluster balls, waiting for
    the next tick, and the line says so."""
    from abound import Simulation
    source = tmp_path / f"{scene}.toml"
    source.write_text(SCENES[scene])
    frames = 120
    out = abound("bench", str(source), "--frames", str(frames), "--json", "--threads", "1")
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)
    sim = Simulation.from_config(source)
    sim.threads = 1
    frozen = frozen_in_small_steps = collapsed = stuck = 0
    for _ in range(frames):
        stats = sim.step(sim.dt)
        frozen += stats.frozen
        collapsed += stats.collapsed
        stuck += stats.stuck
        if stats.events <= 256:  # no ball had more than 256 events: none of these is a budget stop
            frozen_in_small_steps += stats.frozen
    assert r["frozen_total"] == frozen and r["collapsed_total"] == collapsed and r["stuck_total"] == stuck
    if scene == "budget":
        assert frozen >= frames and frozen_in_small_steps == 0  # a ball over the budget in every step
    if scene == "calm":
        assert frozen == 0 and collapsed == 0
    if scene == "heap":
        assert collapsed > 0 and frozen_in_small_steps == 0  # rattles are collapses, not budget stops
    text = abound("bench", str(source), "--frames", str(frames), "--threads", "1").stdout
    lines = [line for line in text.splitlines() if line.startswith("freezes:")]
    assert len(lines) == (1 if frozen else 0), text
    if frozen:
        assert "per-ball event budget" in lines[0] and "rattle" not in lines[0], lines[0]
    if scene == "clustered-heap" and frozen_in_small_steps:  # (no budget stops: balls waiting for a tick)
        assert "wedged among them" in lines[0], lines[0]
    rattles = [line for line in text.splitlines() if line.startswith("collapses:")]
    assert len(rattles) == (1 if collapsed else 0), text
    if collapsed:
        assert rattles[0].startswith(f"collapses:          {collapsed} (rattles"), rattles[0]
