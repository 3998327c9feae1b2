"""Bad input (issue 7, item 3): malformed scenes and command lines, through the real CLI.

Every scene in tests/scene/bad_scenes/ is malformed in one way and says, in its
first lines (``# expect: <fragment>``), what the one-line message must
contain: the section and key, and the reason. Each goes through
``abound check FILE`` (one run takes them all and answers each in turn, one
line per file), ``abound bench FILE --frames 1`` and
``abound capture FILE --out DIR --frames 1``; files that cannot be read at all
(missing, a directory, a pipe, a symlink loop, ...) are made at test time.
Malformed command lines go through every subcommand.

Every answer: exit status 2, exactly one line on stderr,
``abound: error: <file>: ...`` naming the file (for scenes), no traceback,
nothing on stdout and nothing written (each run has an empty working
directory of its own, which must stay empty; capture's --out points into it).
The runs are independent processes, run a few at a time.
"""
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CORPUS = sorted((Path(__file__).resolve().parent / "bad_scenes").glob("*.toml"))
SCENE_COMMANDS = ("check", "bench", "capture")
MAX_LINE = 300  # a clear message is short, whatever the file holds


def expectations(path):
    """The ``# expect:`` fragments at the top of a corpus file."""
    fragments = []
    for line in path.read_bytes().decode("utf-8", "replace").splitlines():
        if not line.startswith("# expect:"):
            break
        fragments.append(line[len("# expect:"):].strip())
    return fragments


def scene_argv(command, scene):
    if command == "bench":
        return ["bench", scene, "--frames", "1"]
    return ["capture", scene, "--out", "frames", "--frames", "1"]


def abound(argv, cwd):
    env = dict(os.environ, PYTHONPATH=str(REPO))  # this checkout's abound, whatever is installed
    return subprocess.run([sys.executable, "-m", "abound", *argv], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def make_unreadable(kind, folder):
    """A scene path that cannot be read as a scene file, made in folder."""
    path = folder / "scene.toml"
    if kind == "missing":
        pass
    elif kind == "directory":
        path.mkdir()
    elif kind == "pipe":
        os.mkfifo(path)  # opening it would wait for a writer for ever
    elif kind == "symlink-loop":
        path.symlink_to(folder / "other.toml")
        (folder / "other.toml").symlink_to(path)
    elif kind == "dangling-symlink":
        path.symlink_to(folder / "gone.toml")
    elif kind == "through-a-file":
        (folder / "file").write_text("[world]\n")
        path = folder / "file" / "scene.toml"
    elif kind == "too-large":
        with open(path, "wb") as f:
            f.truncate(65 << 20)  # sparse: takes no room
    return path


UNREADABLE = {
    "missing": "no such file",
    "directory": "is a directory, not a scene file",
    "pipe": "not a regular file",
    "symlink-loop": "cannot read: Too many levels of symbolic links",
    "dangling-symlink": "no such file",
    "through-a-file": "cannot read: Not a directory",
    "too-large": "65 MB is too large for a scene file (at most 64 MB)",
}


@pytest.fixture(scope="module")
def scene_runs(tmp_path_factory):
    """(scene path, working directory, stderr line(s), process) for every bad scene and command.

    ``check`` takes every file in one run (it answers each in turn, one line
    per bad file); bench and capture take one scene per run.
    """
    root = tmp_path_factory.mktemp("bad-scenes")
    scenes = {path.name: path for path in CORPUS}
    for kind in UNREADABLE:
        folder = root / f"{kind}-input"
        folder.mkdir()
        scenes[kind] = make_unreadable(kind, folder)
    with ThreadPoolExecutor(max_workers=6) as pool:
        check_cwd = root / "check"
        check_cwd.mkdir()
        check = pool.submit(abound, ["check", *map(str, scenes.values())], check_cwd)
        jobs = {}
        for command in ("bench", "capture"):
            for key, path in scenes.items():
                cwd = root / f"{key}-{command}"
                cwd.mkdir()
                jobs[key, command] = path, cwd, pool.submit(abound, scene_argv(command, str(path)), cwd)
        runs = {key: (path, cwd, job.result()) for key, (path, cwd, job) in jobs.items()}
        check = check.result()
    # check's answer for each file: the lines that name it
    assert len(check.stderr.splitlines()) == len(scenes), check.stderr
    for key, path in scenes.items():
        mine = [line for line in check.stderr.splitlines() if line.startswith(f"abound: error: {path}: ")]
        runs[key, "check"] = path, check_cwd, subprocess.CompletedProcess(
            check.args, check.returncode, check.stdout, "".join(line + "\n" for line in mine))
    return runs


def assert_one_line_error(proc, cwd, prefix):
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    line = lines[0]
    assert line.startswith(prefix), line
    assert len(line) <= MAX_LINE, line
    assert proc.stdout == ""
    assert list(cwd.iterdir()) == [], "something was written"
    return line


def test_the_corpus_is_large_and_every_file_says_what_it_expects():
    assert len(CORPUS) >= 30
    for path in CORPUS:
        assert expectations(path), f"{path.name} has no '# expect:' line"


@pytest.mark.parametrize("command", SCENE_COMMANDS)
@pytest.mark.parametrize("name", [p.name for p in CORPUS])
def test_bad_scene_file(scene_runs, name, command):
    path, cwd, proc = scene_runs[name, command]
    line = assert_one_line_error(proc, cwd, f"abound: error: {path}: ")
    for fragment in expectations(path):
        assert fragment in line, (fragment, line)


@pytest.mark.parametrize("command", SCENE_COMMANDS)
@pytest.mark.parametrize("kind", list(UNREADABLE))
def test_unreadable_scene_file(scene_runs, kind, command):
    path, cwd, proc = scene_runs[kind, command]
    line = assert_one_line_error(proc, cwd, f"abound: error: {path}: ")
    assert UNREADABLE[kind] in line, line


@pytest.mark.parametrize("name, message", [("", "an empty name is not a scene file"),
                                           ("nosuchscene", "nosuchscene: no such file")])
def test_empty_and_unknown_scene_names(tmp_path, name, message):
    line = assert_one_line_error(abound(["check", name], tmp_path), tmp_path, "abound: error: ")
    assert message in line


def test_a_symlink_loop_named_bare_is_unreadable_not_missing(tmp_path):
    # given by its bare name in the working directory, a symlink loop is not
    # looked up as a shipped scene and called missing: it is there, unreadable
    make_unreadable("symlink-loop", tmp_path)
    proc = abound(["check", "scene.toml"], tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.splitlines() == [f"abound: error: scene.toml: {UNREADABLE['symlink-loop']}"]


# -- malformed command lines ------------------------------------------------------
GOOD_SCENE = str(REPO / "configs" / "drop.toml")

COMMAND_LINES = [
    # (argv, a fragment the message must contain)
    ([], None),  # no command: the overview, on stderr
    (["frobnicate"], "invalid choice: 'frobnicate'"),
    (["--bogus"], "unrecognized arguments: --bogus"),
    (["check"], "the following arguments are required: FILE"),
    (["check", GOOD_SCENE, "--frames", "3"], "unrecognized arguments: --frames 3"),
    (["bench", "--frames", "-1"], "argument --frames: must be positive, not -1"),
    (["bench", "--frames", "0"], "argument --frames: must be positive, not 0"),
    (["bench", "--frames", "many"], "argument --frames: not an integer: 'many'"),
    (["bench", "--balls", "0"], "argument --balls: must be positive, not 0"),
    (["bench", "--balls", "300000", "--frames", "1"], "balls must be an integer <= 200000, not 300000"),
    # the render benchmark takes no scene but the same bound (10 million balls grew past 2.6 GB)
    (["bench", "--render", "--balls", "10000000", "--frames", "1"], "balls must be an integer <= 200000, not 10000000"),
    # it draws balls no physics moves: a scene (misspelt: it had run, exit status 0) or a
    # physics option given to it is refused, every one named
    (["bench", "--render", "galtonn", "--frames", "1"], "drop SCENE"),
    (["bench", "--render", "--backend", "reference", "--ball-toi", "bisection", "--dt", "0.5", "--seed", "3",
      "--threads", "1", "--frames", "1"], "drop --backend, --ball-toi, --dt, --seed, --threads"),
    (["bench", "--size", "12"], "argument --size: size must be WIDTHxHEIGHT"),
    (["bench", "--size", "0x5"], "argument --size"),
    (["bench", "--size", "1e300x1e300", "--frames", "1"], "argument --size: a side is at most 1e+09 px"),
    (["bench", "--dt", "0"], "argument --dt: must be positive, not 0"),
    (["bench", "--dt", "nan"], "argument --dt: must be positive, not nan"),
    (["bench", "--dt", "5"], "argument --dt: must be at most 1, not 5"),
    # a new-user trial: a scene file refuses a dt below 1e-9, --dt had run
    (["bench", "--dt", "1e-300", "--frames", "1", "--backend", "reference"], "argument --dt"),
    (["bench", "--seed", "-1"], "argument --seed: must be >= 0, not -1"),
    (["bench", "--backend", "warp"], "argument --backend: invalid choice: 'warp'"),
    (["bench", "--ball-toi", "newton"], "argument --ball-toi: invalid choice: 'newton'"),
    (["bench", "--bogus"], "unrecognized arguments: --bogus"),
    (["bench", GOOD_SCENE, "galton"], "unrecognized arguments: galton"),
    (["demo", "--frames", "-1", "--headless"], "argument --frames: must be >= 1, not -1"),
    (["demo", "--balls", "0", "--headless"], "argument --balls: must be >= 1, not 0"),
    (["demo", "--size", "12", "--headless"], "argument --size"),
    (["demo", "--size", "0x0", "--headless"], "argument --size"),
    (["demo", "--seed", "x", "--headless"], "argument --seed: not an integer: 'x'"),
    (["demo", "--backend", "warp", "--headless"], "argument --backend: invalid choice: 'warp'"),
    (["demo", "--bogus", "--video", "run.mp4", "--record", "run.jsonl"], "unrecognized arguments: --bogus"),
    (["saver", "--fps", "0", "--headless"], "argument --fps: must be a positive number"),
    (["saver", "--fps", "-5", "--headless"], "argument --fps: must be a positive number"),
    (["saver", "--fps", "inf", "--headless"], "argument --fps: must be a positive number"),
    (["saver", "--screen", "x"], "argument --screen: must be a screen number (0, 1, ...) or 'all', not 'x'"),
    (["saver", "--frames", "0", "--headless"], "argument --frames: must be >= 1, not 0"),
    (["saver", "--seed", "-2", "--headless"], "argument --seed: must be >= 0, not -2"),
    (["saver", "galton", "rain", "--headless", "--frames", "1"], "two scenes: 'galton' and 'rain'"),  # (rain was dropped)
    # a scene the saver's --balls makes impossible is named (it had said '<scene>', built from a dict)
    (["saver", "galton", "--balls", "5000", "--headless", "--frames", "1"], "galton: cannot place 5000 balls"),
    (["capture", GOOD_SCENE, "--frames", "0", "--out", "frames"], "argument --frames: must be >= 1, not 0"),
    (["capture", GOOD_SCENE, "--every", "0", "--out", "frames"], "argument --every: must be >= 1, not 0"),
    # a few digits too many: it had run silently until killed
    (["capture", GOOD_SCENE, "--every", "99999999999", "--frames", "2", "--out", "frames"],
     "argument --every: must be at most 100,000, not 99999999999"),
    (["capture", GOOD_SCENE, "--frames", "99999999", "--out", "frames"],
     "argument --frames: must be at most 1,000,000, not 99999999"),
    (["bench", "--frames", "99999999999"], "argument --frames: must be at most 1,000,000, not 99999999999"),
    (["capture", GOOD_SCENE, "--size", "0x0", "--out", "frames"], "argument --size"),
    (["capture", GOOD_SCENE, "--size", "big", "--gif", "a.gif"], "argument --size"),
    (["capture", GOOD_SCENE, "--balls", "0", "--out", "frames"], "argument --balls: must be >= 1, not 0"),
    (["capture", GOOD_SCENE, "--frames", "2"], "say where the frames go: --out DIR, --gif FILE, --mp4 FILE and/or --wav FILE"),
    # (--replay takes no --wav: it had been suggested all the same, a demo trial)
    (["capture", "--replay", "../recorded.jsonl"], "say where the frames go: --out DIR, --gif FILE and/or --mp4 FILE"),
    # a mistyped scene or log is named before the output not yet given (a new user heard of --out first)
    (["capture", "nonexist.toml"], "nonexist.toml: no such file"),
    (["capture", "--replay", "nothing.jsonl"], "nothing.jsonl: no such file"),
    # an empty name (an unset shell variable: --record "$LOG") had been taken as no output at all
    (["demo", "--headless", "--frames", "2", "--record", ""], "argument --record: an empty name"),
    (["demo", "--headless", "--frames", "2", "--video", ""], "argument --video: an empty name"),
    (["capture", GOOD_SCENE, "--out", "frames", "--gif", ""], "argument --gif: an empty name"),
    (["capture", GOOD_SCENE, "--out", "frames", "--mp4", ""], "argument --mp4: an empty name"),
    (["capture", GOOD_SCENE, "--out", "frames", "--wav", ""], "argument --wav: an empty name"),
    (["capture", GOOD_SCENE, "--out", ""], "argument --out: an empty name"),
    (["capture", "--replay", "", "--out", "frames"], "argument --replay: an empty name"),
    (["replay", ""], "argument FILE: an empty name"),
    (["capture", GOOD_SCENE, "--bogus", "--out", "frames"], "unrecognized arguments: --bogus"),
    (["replay"], "the following arguments are required: FILE"),
    (["replay", "run.jsonl", "--frames", "0"], "argument --frames"),
    (["replay", "nothing.jsonl", "--headless"], "nothing.jsonl: no such file"),
]


def _record(path):
    """A whole replay log of two frames of drop.toml at path, as the demo's --record writes one."""
    from abound import Simulation
    from abound.replay import ReplayWriter
    sim = Simulation.from_config(GOOD_SCENE, backend="reference")
    writer = ReplayWriter(path, sim, (64, 48))
    for k in range(2):
        sim.step()
        writer.frame(k + 1)
    writer.close(sim, 2)


@pytest.fixture(scope="module")
def command_line_runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("command-lines")
    _record(root / "recorded.jsonl")  # (beside the lines' folders: each folder must stay empty)
    jobs = []
    with ThreadPoolExecutor(max_workers=4) as pool:
        for k, (argv, _) in enumerate(COMMAND_LINES):
            cwd = root / f"line-{k}"
            cwd.mkdir()
            jobs.append((cwd, pool.submit(abound, argv, cwd)))
        return [(cwd, job.result()) for cwd, job in jobs]


@pytest.mark.parametrize("k", range(len(COMMAND_LINES)),
                         ids=[" ".join(a).replace(GOOD_SCENE, "drop.toml") or "(none)" for a, _ in COMMAND_LINES])
def test_malformed_command_line(command_line_runs, k):
    argv, fragment = COMMAND_LINES[k]
    cwd, proc = command_line_runs[k]
    if fragment is None:  # a bare 'abound' shows the overview and fails
        assert proc.returncode == 2 and "Traceback" not in proc.stderr
        assert "<command>" in proc.stderr and proc.stdout == ""
        assert list(cwd.iterdir()) == []
        return
    line = assert_one_line_error(proc, cwd, "abound: error: ")
    assert fragment in line, line
    if fragment.startswith(("argument ", "unrecognized arguments", "the following arguments")):
        # a usage error points at the help of the command it was for
        command = argv[0] if argv[0] in ("demo", "saver", "capture", "replay", "check", "bench") else None
        assert line.endswith(f"(see 'abound {command} --help')" if command else "(see 'abound --help')"), line


def test_the_saver_resolves_a_scene_name_once_and_names_it(tmp_path):
    # 'galton.toml' where there is no such file is the shipped galton, said once (the
    # saver read the scene twice and said it twice), and its error names it as typed
    proc = abound(["saver", "galton.toml", "--balls", "5000", "--headless", "--frames", "1"], tmp_path)
    assert "Traceback" not in proc.stderr and proc.returncode == 2, proc.stderr
    note, error = proc.stderr.splitlines()
    assert note == "abound: note: no file galton.toml here; using the shipped scene 'galton'"
    assert error.startswith("abound: error: galton.toml: cannot place 5000 balls"), error


def test_bench_dt_takes_what_a_scene_file_takes(tmp_path):
    # --dt refuses a step below the scene's [physics] dt bound, and only that:
    # the smallest dt a scene may hold runs
    from abound.defaults import MIN_POSITIVE
    line = assert_one_line_error(abound(["bench", "--dt", f"{MIN_POSITIVE / 2:g}"], tmp_path), tmp_path,
                                 "abound: error: ")
    assert "--dt" in line and f"{MIN_POSITIVE:g}" in line, line
    proc = abound(["bench", "drop", "--dt", f"{MIN_POSITIVE:g}", "--frames", "1", "--backend", "reference"],
                  tmp_path)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
