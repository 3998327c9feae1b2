"""README's examples work as written (issue 24, item 8).

Every command in README.md's ``sh`` code blocks is run, block by block in
the order shown (a block's later commands may use what its earlier ones
wrote: a recorded log, then its replay), in real windows on a private Xvfb,
with few frames: ``--frames`` is set to a small number (added where the
example has none). A new example is tested without touching this file; the
only commands not run are in :data:`NOT_RUN`, each with the test that covers
it instead. Each must exit 0 with no error on stderr, and every file an
option of the command names (``--record``, ``--out``, ``--gif``, ``--mp4``,
``--video``) must be there afterwards. The ``python`` blocks are run too
(the API listing's placeholders bound to numbers). And each ``abound demo``
example runs at an interactive rate: its physics, timed by ``abound bench``
with the same scene and options, takes well under a second a frame (the
``rain`` example on the ``reference`` backend took 3 s a frame).
"""
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from xwindows import Xvfb, tools_missing
from user_docs import user_docs

REPO = Path(__file__).resolve().parents[2]
README = user_docs()  # README.md and docs/*.md
FRAMES = "4"  # frames each example runs for
# commands not run here, and why (what tests them instead)
NOT_RUN = {
    "pip install .": "installs abound (tests/project/test_packaging.py::test_installed_wheel_finds_its_data "
                     "builds and installs the wheel)",
    "python -m pytest -q -n 2 --dist loadgroup": "the test suite itself (tests/project/test_packaging.py::"
                                             "test_ci_runs_exactly_the_readme_test_command)",
    "swayidle": "a Wayland idle daemon's command line (tests/apps/test_saver_wayland.py runs its two "
                "commands as swayidle would, with sh -c)",
}
OUTPUTS = ("--record", "--out", "--gif", "--mp4", "--video")
SLIDE_SHOW_MS = 1000.0  # median physics ms per frame above which a demo example is a slide show


def code_blocks(language):
    return [m.group(1) for m in re.finditer(rf"```{language}\n(.*?)```", README, re.S)]


def commands(block):
    """The commands of an sh block: each line without its comment, split at '&&'."""
    out = []
    for line in block.replace("\\\n", " ").splitlines():  # (a line ending in \ goes on)
        words = shlex.split(line, comments=True)
        while words:
            cut = words.index("&&") if "&&" in words else len(words)
            out.append(words[:cut])
            words = words[cut + 1:]
    return out


SH_BLOCKS = [commands(b) for b in code_blocks("sh")]


def test_the_readme_has_the_examples_this_file_runs():
    every = [" ".join(c) for block in SH_BLOCKS for c in block]
    assert sum(c.startswith("abound ") for c in every) >= 12, every
    for skipped in NOT_RUN:
        assert any(c == skipped or c.split()[0] == skipped for c in every), \
            f"{skipped!r} is no longer in README: drop it from NOT_RUN"
    assert all(c.startswith("abound ") or c in NOT_RUN or c.split()[0] in NOT_RUN for c in every), every


def few_frames(argv):
    """The command with --frames FRAMES (replacing the example's own count)."""
    argv = list(argv)
    if argv[1] in ("check", "bench"):
        return argv
    if "--frames" in argv:
        argv[argv.index("--frames") + 1] = FRAMES
    else:
        argv += ["--frames", FRAMES]
    return argv


@pytest.fixture(scope="module")
def xserver():
    if tools_missing():
        pytest.skip(tools_missing())
    server = Xvfb(size=(1920, 1080))
    yield server
    server.stop()


def run_env(display):
    env = {k: v for k, v in os.environ.items() if k not in ("WAYLAND_DISPLAY", "XSCREENSAVER_WINDOW")}
    env.update(DISPLAY=display, PYTHONPATH=str(REPO))
    return env


@pytest.mark.parametrize("k", range(len(SH_BLOCKS)),
                         ids=[" / ".join(" ".join(c[:2]) for c in b) for b in SH_BLOCKS])
def test_every_readme_command_runs(xserver, tmp_path, k):
    (tmp_path / "configs").symlink_to(REPO / "configs")  # examples name configs/... from the checkout
    for argv in SH_BLOCKS[k]:
        line = " ".join(argv)
        if line in NOT_RUN or argv[0] in NOT_RUN:
            continue
        assert argv[0] == "abound", line
        argv = few_frames(argv)
        proc = subprocess.run([sys.executable, "-m", "abound", *argv[1:]], cwd=tmp_path, capture_output=True,
                              text=True, env=run_env(xserver.display), timeout=300)
        assert proc.returncode == 0, (line, proc.returncode, proc.stderr[-3000:])
        assert "error" not in proc.stderr.lower() and "Traceback" not in proc.stderr, (line, proc.stderr)
        for option in OUTPUTS:
            if option in argv:
                path = tmp_path / argv[argv.index(option) + 1]
                assert path.exists() and (path.is_dir() or path.stat().st_size > 0), (line, option)
                if path.is_dir():
                    assert len(list(path.glob("frame_*.png"))) == int(FRAMES), (line, sorted(path.iterdir()))


DEMO_EXAMPLES = [c for block in SH_BLOCKS for c in block if c[:2] == ["abound", "demo"]]


@pytest.mark.parametrize("argv", DEMO_EXAMPLES, ids=[" ".join(c[2:]) or "default" for c in DEMO_EXAMPLES])
def test_demo_examples_run_at_an_interactive_rate(argv):
    bench = ["bench"]
    words = argv[2:]
    i = 0
    while i < len(words):  # the scene and the options bench shares with demo; the rest is the window's
        w = words[i]
        if w in ("--balls", "--backend", "--seed"):
            bench += [w, words[i + 1]]
            i += 2
        elif w in ("--size", "--record", "--video"):
            i += 2
        elif not w.startswith("-"):
            bench.append(w)
            i += 1
        else:
            i += 1
    frames = 12
    try:  # a first run may compile the fast backend for a minute or two; a slide show takes longer still
        proc = subprocess.run([sys.executable, "-m", "abound", *bench, "--frames", str(frames), "--json"],
                              cwd=REPO, capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(REPO)),
                              timeout=180 + frames * SLIDE_SHOW_MS / 1000.0)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{' '.join(argv)}: {frames} frames of physics took more than "
                    f"{180 + frames * SLIDE_SHOW_MS / 1000.0:.0f} s")
    assert proc.returncode == 0, proc.stderr
    ms = json.loads(proc.stdout)["ms_per_frame_median"]
    assert ms < SLIDE_SHOW_MS, f"{' '.join(argv)}: {ms:.0f} ms of physics a frame"


PLACEHOLDERS = "x, y, x0, y0, x1, y1, width, height = 100.0, 80.0, 10.0, 20.0, 300.0, 40.0, 640.0, 480.0\n"


@pytest.mark.parametrize("k", range(len(code_blocks("python"))))
def test_every_readme_python_block_runs(k, tmp_path):
    # run where a user's own code runs, not in the checkout: "configs/drop.toml"
    # worked here and nowhere else
    code = PLACEHOLDERS + code_blocks("python")[k]
    env = {key: v for key, v in os.environ.items() if key not in ("DISPLAY", "WAYLAND_DISPLAY")}
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                          env=dict(env, PYTHONPATH=str(REPO)), timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
