"""Bounds on input (issue 24, item 6): no scene or replay log reaches a traceback or a hang.

A replay log made from a real recording, with one line changed to ask for
too much (nesting hundreds of levels deep, 10^12 physics steps in a frame or
in all, a window or a resize of absurd size, a ball larger than the box, a
file larger than any log), is refused by ``abound replay FILE --headless`` and
``abound capture --replay FILE`` before it runs: exit status 2, one line
``abound: error: FILE: line N: ...`` naming the line that was changed, no
traceback, nothing written. Each run is a process of its own with a time
limit (a log that asks for 10^12 steps would otherwise run for ever).
Deeply nested scenes given as dicts (as a replay header holds them) are
one-line SceneErrors too; nested TOML files are in tests/scene/bad_scenes/.
"""
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from abound import Simulation
from abound.errors import SceneError

REPO = Path(__file__).resolve().parents[2]
TIME_LIMIT = 120


def abound(argv, cwd):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    try:
        return subprocess.run([sys.executable, "-m", "abound", *argv], cwd=cwd, env=env,
                              capture_output=True, text=True, timeout=TIME_LIMIT)
    except subprocess.TimeoutExpired:
        return None


def nested(depth, leaf=1):
    """{"a": {"a": ... leaf}} depth levels deep, built without recursion."""
    obj = leaf
    for _ in range(depth):
        obj = {"a": obj}
    return obj


def dumps(obj):
    return json.dumps(obj, separators=(",", ":"))


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    """The lines of a real recording: a header, 6 frame records (with a resize first), the end."""
    folder = tmp_path_factory.mktemp("base")
    proc = abound(["demo", "drop", "--headless", "--frames", "6", "--size", "320x240", "--record", "r.jsonl"],
                  folder)
    assert proc is not None and proc.returncode == 0, proc and proc.stderr
    return (folder / "r.jsonl").read_text().splitlines(keepends=True)


def bad_logs(lines):
    """(name, text of the log, the line number it must name (None: the file), a reason fragment)."""
    header = json.loads(lines[0])
    first_frame = next(k for k, line in enumerate(lines) if line.startswith('{"frame"'))
    frames = [k for k, line in enumerate(lines) if line.startswith('{"frame"')]
    end = len(lines) - 1

    def at(k, new):  # line k (0-based) replaced by new
        return "".join(lines[:k]) + new + "\n" + "".join(lines[k + 1:]), k + 1

    def before(k, new):  # new inserted before line k
        return "".join(lines[:k]) + new + "\n" + "".join(lines[k:]), k + 1

    yield ("deep JSON line 1", "[" * 100_000 + "]" * 100_000 + "\n" + "".join(lines[1:]), 1, "nested too deeply")
    yield ("deep scene in the header",
           *at(0, dumps(dict(header, scene=dict(header["scene"], world=nested(600))))), "nested too deeply")
    yield ("deep action", *before(first_frame + 1, dumps({"step": 1, "do": "gravity", "g": nested(600)})),
           "nested too deeply")
    yield ("10^12 steps in a frame", *at(frames[2], dumps({"frame": 2, "steps": 10**12})), "steps in one frame")
    yield ("an input 10^12 steps on", *before(end, dumps({"step": 10**12, "do": "reset"})), "steps in one frame")
    many = [dumps({"frame": k, "steps": 1000}) for k in range(50_001)]
    yield ("10^8 steps in all", lines[0] + "\n".join(many) + "\n" + dumps({"end": True, "frames": 50_001}) + "\n",
           50_002, "steps in all")
    yield ("absurd window", *at(0, dumps(dict(header, window=[10**6, 10**6]))), "window size")
    yield ("window past the limit", *at(0, dumps(dict(header, window=[16385, 200]))), "window size")
    yield ("resize to 1e308", *before(first_frame + 1, dumps({"step": 1, "do": "resize", "width": 1e308,
                                                               "height": 600.0})), "resize")
    yield ("resize to half a pixel", *before(first_frame + 1, dumps({"step": 1, "do": "resize", "width": 0.5,
                                                                      "height": 600.0})), "resize")
    yield ("a ball larger than the box", *before(first_frame + 1, dumps(
        {"step": 1, "do": "add", "x": 100.0, "y": 100.0, "vx": 0.0, "vy": 0.0, "radius": 5000.0})), "radius")
    yield ("gravity of 1e300", *before(first_frame + 1, dumps({"step": 1, "do": "gravity", "g": [0.0, -1e300]})),
           "bad g")


@pytest.fixture(scope="module")
def runs(base, tmp_path_factory):
    root = tmp_path_factory.mktemp("bounds")
    cases = list(bad_logs(base))
    # a log larger than any recording (sparse: takes no room)
    big = root / "big.jsonl"
    with open(big, "wb") as f:
        f.truncate(300 << 20)
    jobs = []
    with ThreadPoolExecutor(max_workers=2) as pool:
        for k, (name, text, line, reason) in enumerate(cases + [("too large", None, None, "too large")]):
            log = big
            if text is not None:
                log = root / f"log-{k}.jsonl"
                log.write_text(text)
            for command in ("replay", "capture"):
                cwd = root / f"run-{k}-{command}"
                cwd.mkdir()
                argv = ["replay", str(log), "--headless"] if command == "replay" else \
                    ["capture", "--replay", str(log), "--out", "frames"]
                jobs.append((name, command, log, line, reason, cwd, pool.submit(abound, argv, cwd)))
        return {(name, command): (log, line, reason, cwd, job.result())
                for name, command, log, line, reason, cwd, job in jobs}


NAMES = ["deep JSON line 1", "deep scene in the header", "deep action", "10^12 steps in a frame",
         "an input 10^12 steps on", "10^8 steps in all", "absurd window", "window past the limit",
         "resize to 1e308", "resize to half a pixel", "a ball larger than the box", "gravity of 1e300", "too large"]


@pytest.mark.parametrize("command", ["replay", "capture"])
@pytest.mark.parametrize("name", NAMES)
def test_a_log_asking_too_much_is_one_line(runs, name, command):
    log, line, reason, cwd, proc = runs[name, command]
    assert proc is not None, f"still running after {TIME_LIMIT} s"
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr[-2000:]
    where = f"abound: error: {log}: line {line}: " if line else f"abound: error: {log}: "
    assert lines[0].startswith(where), lines[0]
    assert reason in lines[0], lines[0]
    assert len(lines[0]) <= 300, lines[0]
    assert proc.stdout == "" and list(cwd.iterdir()) == []


def test_the_recording_itself_replays(base, tmp_path):
    """The control: the unchanged log is accepted (the refusals above are for the changed line)."""
    log = tmp_path / "r.jsonl"
    log.write_text("".join(base))
    proc = abound(["replay", str(log), "--headless"], tmp_path)
    assert proc is not None and proc.returncode == 0 and proc.stderr == "", proc and proc.stderr


@pytest.mark.parametrize("depth", [40, 600, 5000])
def test_a_deep_scene_dict_is_a_scene_error(depth):
    scene = {"world": {"width": 300.0, "height": 200.0}, "render": nested(depth)}
    with pytest.raises(SceneError, match=r"^<scene>: nested too deeply at render\.a\.a\.a\.\.\. "):
        Simulation.from_config(scene)
