"""Messages (issue 24, item 7): a value that starts with '-', a byte order mark, a mistyped
shipped scene name, a local directory named like a shipped scene.

Each bad input is one line ``abound: error: ...`` naming the option or the
name and the reason, exit status 2, no traceback; each good one runs.
"""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from abound import Simulation, resources

REPO = Path(__file__).resolve().parents[2]
SCENE = "[world]\nwidth = 300\nheight = 200\n[[balls]]\nx = 100.0\ny = 50.0\nradius = 10.0\n"


def abound(argv, cwd):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-m", "abound", *argv], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def one_line_error(proc):
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("abound: error: "), lines[0]
    return lines[0]


# -- a value starting with '-' is judged as a value ---------------------------------------
@pytest.mark.parametrize("argv, option, value", [
    (["demo", "--headless", "--size", "-5x5"], "--size", "-5x5"),
    (["capture", "drop", "--out", "x", "--size", "-5x5"], "--size", "-5x5"),
    (["bench", "--size", "-5x5"], "--size", "-5x5"),
    (["demo", "--headless", "--seed", "-x"], "--seed", "-x"),
    (["capture", "drop", "--out", "x", "--every", "-2x"], "--every", "-2x"),
    (["bench", "--dt", "-.5e"], "--dt", "-.5e"),
])
def test_a_dashed_value_gets_the_options_own_message(tmp_path, argv, option, value):
    line = one_line_error(abound(argv, tmp_path))
    assert f"argument {option}" in line and value in line, line
    assert "expected one argument" not in line, line
    assert list(tmp_path.iterdir()) == []


def test_an_option_after_an_option_is_still_a_missing_value(tmp_path):
    line = one_line_error(abound(["demo", "--headless", "--size", "--frames", "3"], tmp_path))
    assert "argument --size" in line and "expected one argument" in line, line


# -- a byte order mark ---------------------------------------------------------------------
def test_a_byte_order_mark_is_accepted(tmp_path):
    plain, bom = tmp_path / "plain.toml", tmp_path / "bom.toml"
    plain.write_text(SCENE, encoding="utf-8")
    bom.write_text(SCENE, encoding="utf-8-sig")
    assert bom.read_bytes()[:3] == b"\xef\xbb\xbf"
    a, b = Simulation.from_config(str(plain)), Simulation.from_config(str(bom))
    assert (b.width, b.height) == (300.0, 200.0)
    assert np.array_equal(a.positions, b.positions) and np.array_equal(a.radii, b.radii)
    proc = abound(["check", str(bom)], tmp_path)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr


# -- a mistyped shipped name ---------------------------------------------------------------
def test_a_mistyped_shipped_name_gets_a_suggestion(tmp_path):
    names = resources.config_names()
    typos = {name + name[-1]: name for name in names}  # galton -> galtonn
    typos["galton.tom"] = "galton"
    proc = abound(["check", *typos], tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == len(typos), proc.stderr
    for line, (typo, name) in zip(lines, typos.items()):
        assert line.startswith(f"abound: error: {typo}: "), line
        assert f"did you mean '{name}'?" in line, line


def test_a_name_like_nothing_shipped_gets_no_suggestion(tmp_path):
    line = one_line_error(abound(["check", "zzqqxx"], tmp_path))
    assert line.startswith("abound: error: zzqqxx: no such file") and "did you mean" not in line


# -- a local directory named like a shipped scene ------------------------------------------
@pytest.mark.parametrize("name", ["galton", "galton.toml"])
def test_a_local_directory_does_not_shadow_a_shipped_scene(tmp_path, monkeypatch, capsys, name):
    (tmp_path / name).mkdir()
    monkeypatch.chdir(tmp_path)
    sim = Simulation.from_config(name)
    shipped = Simulation.from_config(str(resources.config_path("galton")))
    assert np.array_equal(sim.positions, shipped.positions) and np.array_equal(sim.radii, shipped.radii)
    err = capsys.readouterr().err
    assert name in err and "shipped" in err  # it says which is used
    proc = abound(["check", name], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"{name}: ok")


def test_a_file_name_that_is_no_file_here_says_it_takes_the_shipped_scene(tmp_path):
    # a new user's `abound check drop.toml`, meaning a file of their own, got the
    # shipped drop without a word; a bare name is how shipped scenes are asked for
    proc = abound(["check", "drop.toml"], tmp_path)
    assert proc.returncode == 0 and proc.stdout.startswith("drop.toml: ok"), proc.stderr
    assert proc.stderr.strip() == "abound: note: no file drop.toml here; using the shipped scene 'drop'"
    proc = abound(["check", "drop"], tmp_path)
    assert proc.returncode == 0 and proc.stderr == ""


def test_a_path_to_a_directory_is_still_a_directory(tmp_path):
    (tmp_path / "galton").mkdir()
    line = one_line_error(abound(["check", "./galton"], tmp_path))
    assert line.startswith("abound: error: ./galton: ") and "is a directory" in line
