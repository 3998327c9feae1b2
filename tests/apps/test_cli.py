"""The ``abound`` command: dispatch, errors, ``check`` and ``bench``."""
import json
import subprocess
import sys
import types

import pytest

from abound.cli import main

GOOD = """
[world]
width = 1000
height = 500
[[balls]]
x = 100
y = 100
[[balls]]
x = 300
y = 100
[[walls]]
x0 = 0
y0 = 300
x1 = 500
y1 = 400
"""

# one ball moving right at 1000 px/s, no gravity: it meets the right side
# (x = 1280 - 10) at t = 1.17 s, the left side (x = 10) 1.26 s later, ...
ONE_BALL = """
[world]
gravity = [0.0, 0.0]
[physics]
backend = "reference"
dt = 0.02
[[balls]]
x = 100
y = 360
vx = 1000.0
radius = 10
"""


def _one_line_error(err):
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("abound: error: ")
    assert "Traceback" not in err
    return lines[0]


def test_check_reports_ok_with_counts(tmp_path, capsys):
    path = tmp_path / "good.toml"
    path.write_text(GOOD)
    assert main(["check", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{path}: ok (2 balls, 1 wall")


def test_check_many_files_one_bad(tmp_path, capsys):
    good, bad = tmp_path / "good.toml", tmp_path / "bad.toml"
    good.write_text(GOOD)
    bad.write_text("[world]\nheight = -1\n")
    assert main(["check", str(bad), str(good)]) == 2
    cap = capsys.readouterr()
    assert f"{good}: ok" in cap.out
    line = _one_line_error(cap.err)
    assert str(bad) in line and "height" in line


def test_check_shipped_names(capsys):
    assert main(["check", "drop", "pool_break", "black_hole"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("drop: ok (1 ball,")
    assert out[1].startswith("pool_break: ok (16 balls,")
    assert "1 black hole" in out[2]  # (configs/black_hole.toml has one [[black_holes]])


def test_check_refuses_a_backend_this_machine_lacks(tmp_path, monkeypatch, capsys):
    # sys.modules[name] = None is how Python blocks an import: find_spec and
    # import both then fail, as on a machine without pymunk installed
    from abound.physics import backends
    if "pymunk" not in backends.NAMES:
        pytest.fail("the pymunk backend's entry point is not installed (pip install -e .)")
    path = tmp_path / "pymunk.toml"
    path.write_text(GOOD + '[physics]\nbackend = "pymunk"\n')
    monkeypatch.setitem(sys.modules, "pymunk", None)
    # and as in a process that has not loaded the pymunk backend yet: a test run earlier in this
    # process may have (backends.get keeps it, Python the modules that import pymunk)
    import abound.compare
    monkeypatch.delitem(backends._loaded, "pymunk", raising=False)
    for name in ("pymunk_backend", "pymunk_world"):
        monkeypatch.delitem(sys.modules, f"abound.compare.{name}", raising=False)
        monkeypatch.delattr(abound.compare, name, raising=False)
    assert main(["check", str(path)]) == 2
    line = _one_line_error(capsys.readouterr().err)
    assert str(path) in line and "backend 'pymunk' is not available" in line
    # running it says the same thing: the check promised no more than the run keeps
    assert main(["bench", str(path), "--frames", "1"]) == 2
    assert "'pymunk' is not available" in _one_line_error(capsys.readouterr().err)
    # a backend that can run here passes
    path.write_text(GOOD + '[physics]\nbackend = "reference"\n')
    assert main(["check", str(path)]) == 0


@pytest.mark.parametrize("argv", [[], ["frobnicate"], ["check"], ["bench", "--frames", "0"],
                                  ["bench", "--backend", "warp"], ["bench", "--size", "12"]])
def test_usage_errors_exit_2(argv, capsys):
    assert main(argv) == 2
    assert "Traceback" not in capsys.readouterr().err


def test_version_and_help(capsys):
    assert main(["--version"]) == 0
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for cmd in ("demo", "capture", "saver", "replay", "check", "bench"):
        assert cmd in out


def test_missing_command_module_is_a_clear_error(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "abound.cli.replay", None)  # as if the file did not exist
    assert main(["replay", "anything"]) == 2
    line = _one_line_error(capsys.readouterr().err)
    assert "'replay'" in line and "not available" in line


def test_scene_error_in_a_command_is_one_line(tmp_path, capsys):
    path = tmp_path / "x.toml"
    path.write_text("[world]\nwidht = 3\n")
    assert main(["bench", str(path), "--frames", "1"]) == 2
    line = _one_line_error(capsys.readouterr().err)
    assert line == f"abound: error: {path}: unknown key 'widht' in [world] - did you mean 'width'?"


def test_bench_json_against_closed_form(tmp_path, capsys):
    path = tmp_path / "one.toml"
    path.write_text(ONE_BALL)
    frames = 150  # 3 s: wall hits at 1.17 s and 2.43 s
    assert main(["bench", str(path), "--frames", str(frames), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["balls"] == 1 and result["frames"] == frames
    assert result["backend"] == "reference" and result["dt"] == 0.02
    assert result["ball_wall_per_frame"] == pytest.approx(2 / frames)
    assert result["ball_ball_per_frame"] == 0
    assert abs(result["energy_drift"]) < 1e-12
    assert result["energy_first"] == pytest.approx(0.5 * 3.141592653589793 * 100 * 1000.0 ** 2)
    assert result["max_overlap"] <= 1e-6
    assert result["sim_time"] == pytest.approx(3.0)
    assert result["ms_per_frame_median"] > 0
    assert result["ms_per_frame_p90"] >= result["ms_per_frame_median"]


def test_bench_text_and_overrides(capsys):
    # (hot_gas: random balls fill a box of the window's size; a scene with walls keeps its own)
    assert main(["bench", "hot_gas", "--balls", "30", "--frames", "3", "--backend", "reference",
                 "--ball-toi", "bisection", "--dt", "0.01", "--seed", "3", "--size", "900x600"]) == 0
    out, err = capsys.readouterr()
    assert "30 balls" in out and "900x600" in out and err == ""
    assert "backend reference, ball_toi bisection, 1 thread, dt 0.01 s, 3 frames" in out
    for label in ("ms per frame:", "median", "p90", "contacts per frame:", "ball-ball", "ball-wall",
                  "energy drift:", "largest overlap:"):
        assert label in out
    assert main(["bench", "galton", "--frames", "1", "--backend", "reference", "--size", "640x360"]) == 0
    out, err = capsys.readouterr()
    assert "1280x720 box" in out and "galton keeps its 1280x720 box" in err


@pytest.mark.parametrize("flag, module", [(["--render"], "abound.render.bench"),
                                          (["--compare", "pymunk"], "abound.compare.bench")])
def test_bench_delegates(monkeypatch, flag, module):
    seen = {}
    fake = types.ModuleType(module)
    fake.run = lambda args: seen.setdefault("args", args) and 7
    monkeypatch.setitem(sys.modules, module, fake)
    assert main(["bench", "--frames", "5", *flag]) == 7
    assert seen["args"].frames == 5


def test_bench_compare_missing_module(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "abound.compare.bench", None)
    assert main(["bench", "--compare", "pymunk"]) == 2
    assert "compare" in _one_line_error(capsys.readouterr().err)


@pytest.mark.parametrize("flags", [["--pymunk-walls", "thin"], ["--pymunk-walls", "thick"],
                                   ["--pymunk-threads", "2"], ["--pymunk-walls", "thin", "--pymunk-threads", "1"]])
def test_bench_pymunk_options_need_compare_pymunk(flags, capsys):
    # they only shape pymunk's side: without --compare pymunk they were silently ignored
    assert main(["bench", "--frames", "1", *flags]) == 2
    line = _one_line_error(capsys.readouterr().err)
    assert "--compare pymunk" in line and flags[0] in line


def test_bench_compare_shapes_needs_render(capsys):
    assert main(["bench", "--compare", "shapes", "--frames", "1"]) == 2
    assert "--render" in _one_line_error(capsys.readouterr().err)


def test_check_subprocess_never_imports_pyglet():
    code = ("import sys; from abound.cli import main; rc = main(['check', 'drop']); "
            "print('PYGLET' if 'pyglet' in sys.modules else 'NO-PYGLET', rc)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.stdout.splitlines()[-1] == "NO-PYGLET 0", proc


def test_python_dash_m_abound_runs():
    proc = subprocess.run([sys.executable, "-m", "abound", "check", "default"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.startswith("default: ok (252 balls")
