"""Output paths and formats (issue 24, item 5), through the real command in its own process.

Before the run, a bad ``--video``, ``--gif``, ``--mp4``, ``--record`` or
``--out`` is refused: exit status 2, one line ``abound: error: OPTION PATH:
reason`` on stderr, no traceback, nothing written (the working directory
holds what the test put there, unchanged). After the run, a file ffmpeg did
not write whole (a stand-in ffmpeg that fails, or that writes nothing) is the
same one line and exit status 2, and no partial file is left. An existing file
is overwritten only with ``--force``, and is then a valid file of its kind.
"""
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from abound.replay import read_replay

REPO = Path(__file__).resolve().parents[2]
SMALL = ["--frames", "3", "--size", "64x48"]


def abound(argv, cwd, path=None):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    if path is not None:
        env["PATH"] = path
    return subprocess.run([sys.executable, "-m", "abound", *argv], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=180)


def snapshot(folder):
    """Every file under folder with its bytes (to tell that nothing was written or changed)."""
    return {p.relative_to(folder): (p.read_bytes() if p.is_file() else None) for p in sorted(folder.rglob("*"))}


def one_line_error(proc, *fragments):
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("abound: error: "), lines[0]
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    return lines[0]


def setup(folder):
    """What each run finds in its working directory."""
    (folder / "existing.gif").write_bytes(b"not touched")
    (folder / "existing.mp4").write_bytes(b"not touched")
    (folder / "existing.jsonl").write_bytes(b"not touched")
    (folder / "a_dir.gif").mkdir()
    (folder / "a_dir.mp4").mkdir()
    (folder / "a_file").write_bytes(b"not touched")
    (folder / "frames").mkdir()
    (folder / "frames" / "frame_00000.png").write_bytes(b"not touched")
    (folder / "my.toml").write_text("[[spawn]]\ncount = 3\n")
    (folder / "held").mkdir()  # a scene and a log named as frames of the folder they lie in
    (folder / "held" / "frame_00002.png").write_text("[[spawn]]\ncount = 3\n")
    (folder / "held" / "frame_00000.png").write_bytes(b"not touched")
    (folder / "link.toml").symlink_to("held/frame_00002.png")  # a scene reached through a link
    (folder / "linked").mkdir()
    (folder / "linked" / "frame_00001.png").symlink_to("../my.toml")  # a frame that links to the scene


DEMO = ["demo", "drop", "--headless", *SMALL]
CAPTURE = ["capture", "drop", *SMALL]
REPLAY_CAPTURE = ["capture", "--replay", "existing.jsonl", "--frames", "1"]

# (argv, the option and path the line must name, a fragment of the reason)
REFUSED = [
    (DEMO + ["--video", "out.avi"], "--video out.avi", "'.avi'"),
    (DEMO + ["--video", "out.webm"], "--video out.webm", "'.webm'"),
    (DEMO + ["--video", "out.txt"], "--video out.txt", "'.txt'"),
    (DEMO + ["--video", "out"], "--video out", "extension"),
    (DEMO + ["--video", "a_dir.gif"], "--video a_dir.gif", "is a directory"),
    (DEMO + ["--video", "/dev/full"], "--video /dev/full", "extension"),
    (DEMO + ["--video", "missing/out.gif"], "--video missing/out.gif", "no such directory"),
    (DEMO + ["--video", "/proc/out.mp4"], "--video /proc/out.mp4", "cannot write"),
    (DEMO + ["--video", "existing.gif"], "--video existing.gif", "exists"),
    (DEMO + ["--video", "existing.mp4"], "--video existing.mp4", "exists"),
    (DEMO + ["--record", "existing.jsonl"], "--record existing.jsonl", "exists"),
    (DEMO + ["--record", "a_dir.gif"], "--record a_dir.gif", "is a directory"),
    (DEMO + ["--record", "missing/r.jsonl"], "--record missing/r.jsonl", "no such directory"),
    (DEMO + ["--record", "a_file/r.jsonl"], "--record a_file/r.jsonl", "not a directory"),
    (DEMO + ["--record", "/proc/r.jsonl"], "--record /proc/r.jsonl", "cannot write in '/proc': it takes no new files"),
    (DEMO + ["--record", "/dev/full"], "--record /dev/full", "not a regular file"),
    (CAPTURE + ["--gif", "out.txt"], "--gif out.txt", "'.txt'"),
    (CAPTURE + ["--gif", "out.mp4"], "--gif out.mp4", "'.mp4'"),
    (CAPTURE + ["--gif", "/dev/full"], "--gif /dev/full", "extension"),
    (CAPTURE + ["--gif", "a_dir.gif"], "--gif a_dir.gif", "is a directory"),
    (CAPTURE + ["--gif", "existing.gif"], "--gif existing.gif", "exists"),
    (CAPTURE + ["--mp4", "out.avi"], "--mp4 out.avi", "'.avi'"),
    (CAPTURE + ["--mp4", "out.gif"], "--mp4 out.gif", "'.gif'"),
    (CAPTURE + ["--mp4", "missing/out.mp4"], "--mp4 missing/out.mp4", "no such directory"),
    (CAPTURE + ["--mp4", "/proc/out.mp4"], "--mp4 /proc/out.mp4", "cannot write"),
    (CAPTURE + ["--mp4", "a_dir.mp4"], "--mp4 a_dir.mp4", "is a directory"),
    (CAPTURE + ["--mp4", "existing.mp4"], "--mp4 existing.mp4", "exists"),
    (CAPTURE + ["--out", "a_file"], "--out a_file", "not a directory"),
    (CAPTURE + ["--out", "frames"], "--out frames", "already holds frames"),
    (CAPTURE + ["--out", "/proc/frames"], "--out /proc/frames", "cannot write"),
    (CAPTURE + ["--out", "fine", "--gif", "out.txt"], "--gif out.txt", "'.txt'"),
    (REPLAY_CAPTURE + ["--gif", "existing.gif"], "--gif existing.gif", "exists"),
    # one file for two outputs: each wrote over the other (a GIF of 2 frames, no replay log)
    (DEMO + ["--video", "v.gif", "--record", "v.gif"], "--video v.gif", "same file as --record v.gif"),
    (DEMO + ["--video", "v.gif", "--record", "./v.gif", "--force"], "--video v.gif", "same file"),
    (CAPTURE + ["--wav", "a.wav", "--gif", "x.gif", "--mp4", "x.gif"], "--mp4 x.gif", "same file as --gif"),
    # the scene being run: --force had let the log replace it
    (["demo", "my.toml", "--headless", *SMALL, "--record", "./my.toml", "--force"], "--record ./my.toml",
     "the scene file being run"),
    # a scene or a log named as a frame of --out: --force wrote a PNG over it, or removed it as stale
    (["capture", "held/frame_00002.png", *SMALL, "--out", "held", "--force"], "--out held",
     "the scene file being run, held/frame_00002.png, is its frame frame_00002.png"),
    (["capture", "held/frame_00002.png", *SMALL, "--out", "./held/"], "--out ./held/",
     "the scene file being run"),
    (["capture", "--replay", "held/frame_00000.png", "--out", "held", "--force"], "--out held",
     "the replay log, held/frame_00000.png, is its frame frame_00000.png"),
    # the replay log itself, as an output's name: --force had written the video over it
    (["capture", "--replay", "existing.mp4", "--frames", "1", "--mp4", "existing.mp4", "--force"],
     "--mp4 existing.mp4", "the same file as the replay log being run"),
    # ... or reached through a symbolic link either way (a review found both)
    (["capture", "link.toml", *SMALL, "--out", "held", "--force"], "--out held",
     "the scene file being run, link.toml, is its frame frame_00002.png"),
    (["capture", "my.toml", *SMALL, "--out", "linked", "--force"], "--out linked",
     "the scene file being run, my.toml, is its frame frame_00001.png"),
]


@pytest.fixture(scope="module")
def refused_runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("refused")
    jobs = []
    with ThreadPoolExecutor(max_workers=2) as pool:
        for k, (argv, _, _) in enumerate(REFUSED):
            cwd = root / f"run-{k}"
            cwd.mkdir()
            setup(cwd)
            jobs.append((cwd, snapshot(cwd), pool.submit(abound, argv, cwd)))
        return [(cwd, before, job.result()) for cwd, before, job in jobs]


@pytest.mark.parametrize("k", range(len(REFUSED)), ids=[" ".join(a[:1] + a[-2:]) for a, _, _ in REFUSED])
def test_bad_output_is_refused_before_the_run(refused_runs, k):
    argv, names, reason = REFUSED[k]
    cwd, before, proc = refused_runs[k]
    one_line_error(proc, names, reason)
    assert proc.stdout == ""
    assert snapshot(cwd) == before, "something was written or changed"


# -- after the run: ffmpeg's status and the file written ----------------------------------
FAKE_FFMPEG = {
    # reads every frame, complains on two lines, fails
    "fails": "cat > /dev/null\necho 'Error opening output file' >&2\necho 'Invalid argument' >&2\nexit 1\n",
    # fails at once, before reading a frame (abound's writes meet a closed pipe)
    "dies": "echo 'Conversion failed!' >&2\nexit 1\n",
    # says it worked but wrote nothing
    "writes nothing": "cat > /dev/null\nexit 0\n",
    # says it worked but left the file cut off in its frames, with no index (a full disk)
    "cut short": ("cat > /dev/null\nfor last; do :; done\n"
                  "printf '\\000\\000\\000\\030ftypisom\\000\\000\\002\\000isomiso2' > \"$last\"\n"
                  "printf '\\000\\001\\000\\000mdat' >> \"$last\"\nhead -c 1000 /dev/zero >> \"$last\"\nexit 0\n"),
}


def fake_ffmpeg(folder, script):
    bin_dir = folder / "bin"
    bin_dir.mkdir()
    exe = bin_dir / "ffmpeg"
    exe.write_text("#!/bin/sh\n" + script)
    exe.chmod(0o755)
    return f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"


@pytest.mark.parametrize("kind", list(FAKE_FFMPEG))
@pytest.mark.parametrize("argv, option", [(DEMO[:-2] + ["--size", "64x48", "--frames", "30"], "--video"),
                                          (CAPTURE[:-4] + ["--size", "64x48", "--frames", "30"], "--mp4")])
def test_ffmpeg_failure_after_the_run_is_one_line(tmp_path, kind, argv, option):
    path = fake_ffmpeg(tmp_path, FAKE_FFMPEG[kind])
    work = tmp_path / "work"
    work.mkdir()
    proc = abound(argv + [option, "out.mp4"], work, path=path)
    one_line_error(proc, f"{option} out.mp4")
    assert not (work / "out.mp4").exists()


def test_no_ffmpeg_is_refused_before_the_run(tmp_path):
    empty = tmp_path / "bin"
    empty.mkdir()
    for argv in (DEMO + ["--video", "out.mp4"], CAPTURE + ["--mp4", "out.mp4"]):
        proc = abound(argv, tmp_path, path=str(empty))
        one_line_error(proc, "out.mp4", "ffmpeg")
    assert not (tmp_path / "out.mp4").exists()


# -- overwriting: only with --force, and the file is then whole ---------------------------
def test_force_overwrites_with_a_valid_file(tmp_path):
    setup(tmp_path)
    proc = abound(DEMO + ["--video", "existing.gif", "--record", "existing.jsonl", "--force"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert Image.open(tmp_path / "existing.gif").n_frames == 3
    assert read_replay(tmp_path / "existing.jsonl").frames == 3
    proc = abound(CAPTURE + ["--out", "frames", "--gif", "existing.gif", "--force"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in (tmp_path / "frames").iterdir()) == [f"frame_{k:05d}.png" for k in range(3)]
    assert Image.open(tmp_path / "frames" / "frame_00000.png").size == (64, 48)
    assert Image.open(tmp_path / "existing.gif").n_frames == 3


def test_force_into_frames_of_a_longer_run_leaves_only_this_runs_frames(tmp_path):
    # 6 frames of drop, then 2 of galton with --force: frames 2 to 5 of the first run had
    # stayed, and frame_%05d.png made one video of two scenes
    first = abound(["capture", "drop", "--frames", "6", "--size", "64x48", "--out", "seq"], tmp_path)
    assert first.returncode == 0, first.stderr
    (tmp_path / "seq" / "notes.txt").write_text("kept")
    (tmp_path / "seq" / "frame_final.png").write_bytes(b"kept: not a numbered frame")
    second = abound(["capture", "galton", "--frames", "2", "--size", "64x48", "--out", "seq", "--force"], tmp_path)
    assert second.returncode == 0, second.stderr
    assert sorted(p.name for p in (tmp_path / "seq").iterdir()) == [
        "frame_00000.png", "frame_00001.png", "frame_final.png", "notes.txt"]
    fresh = abound(["capture", "galton", "--frames", "2", "--size", "64x48", "--out", "fresh"], tmp_path)
    assert fresh.returncode == 0, fresh.stderr
    for k in range(2):
        name = f"frame_{k:05d}.png"
        assert np.array_equal(np.asarray(Image.open(tmp_path / "seq" / name)),
                              np.asarray(Image.open(tmp_path / "fresh" / name))), name
    assert "removed 4 frames of an earlier run" in second.stdout


def test_without_force_no_frame_is_removed(tmp_path):
    # a folder without frame_00000.png is taken without --force (frames numbered from 1, as
    # ffmpeg's image2 writes them): what this run does not write stays as it was
    seq = tmp_path / "seq"
    seq.mkdir()
    for name in ("frame_00001.png", "frame_00005.png", "frame_00009.png"):
        (seq / name).write_bytes(b"not ours")
    proc = abound(["capture", "drop", "--frames", "3", "--size", "64x48", "--out", "seq"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in seq.iterdir()) == [
        "frame_00000.png", "frame_00001.png", "frame_00002.png", "frame_00005.png", "frame_00009.png"]
    assert (seq / "frame_00005.png").read_bytes() == (seq / "frame_00009.png").read_bytes() == b"not ours"
    assert "removed" not in proc.stdout


@pytest.mark.skipif(shutil.which("ffmpeg") is None, reason="ffmpeg not installed")
def test_force_overwrites_an_mp4_with_a_valid_video(tmp_path):
    setup(tmp_path)
    proc = abound(CAPTURE + ["--mp4", "existing.mp4", "--force"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    probe = subprocess.run(["ffmpeg", "-v", "error", "-i", str(tmp_path / "existing.mp4"), "-f", "null", "-"],
                           capture_output=True, text=True, timeout=60)
    assert probe.returncode == 0 and probe.stderr == "", probe.stderr


# -- a disk that fills during the run ---------------------------------------------------
# The kernel's limit on the size of a file this process writes (RLIMIT_FSIZE) makes a
# write past it fail, as a full disk does (EFBIG, "File too large", instead of ENOSPC:
# the same OSError path). SIGXFSZ, which would kill the process, is ignored first.
REFERENCE_DROP = """
[physics]
backend = "reference"
[[balls]]
x = 320.0
y = 600.0
vx = 150.0
radius = 30
"""


def abound_limited(argv, cwd, max_file_bytes):
    import resource
    import signal

    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (max_file_bytes, max_file_bytes))
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-m", "abound", *argv], cwd=cwd, env=env, preexec_fn=limit,
                          capture_output=True, text=True, timeout=180)


def test_a_full_disk_under_out_names_the_frame_and_leaves_no_partial_png(tmp_path):
    (tmp_path / "drop.toml").write_text(REFERENCE_DROP)
    proc = abound_limited(["capture", "drop.toml", "--frames", "3", "--size", "320x240", "--out", "frames"],
                          tmp_path, max_file_bytes=200)  # less than one PNG of 320x240
    one_line_error(proc, "--out frames", "frame_00000.png", "File too large")
    assert list((tmp_path / "frames").iterdir()) == []


def test_a_full_disk_under_wav_leaves_no_partial_wav(tmp_path):
    (tmp_path / "drop.toml").write_text(REFERENCE_DROP)
    # 30 frames at 60 fps: 0.5 s of 16-bit mono at 44.1 kHz, 44 kB; each 64x48 PNG is well under 16 kB
    proc = abound_limited(["capture", "drop.toml", "--frames", "30", "--size", "64x48", "--out", "frames",
                           "--wav", "out.wav"], tmp_path, max_file_bytes=16_000)
    one_line_error(proc, "--wav out.wav", "File too large")
    assert not (tmp_path / "out.wav").exists()
    assert len(list((tmp_path / "frames").glob("frame_*.png"))) == 30  # the frames were written whole


def test_a_full_disk_under_record_removes_a_log_with_no_frame_and_keeps_one_that_replays(tmp_path):
    # a log that holds no whole frame replays nothing, and its name then refused the next
    # --record without --force: it is removed. One cut after some frames replays those.
    (tmp_path / "drop.toml").write_text(REFERENCE_DROP)
    proc = abound_limited(["demo", "drop.toml", "--headless", "--frames", "30", "--record", "r.jsonl"],
                          tmp_path, max_file_bytes=200)
    one_line_error(proc, "r.jsonl", "cannot write the replay log", "File too large", "removed: it held no frame")
    assert not (tmp_path / "r.jsonl").exists()
    # room for the header and some frames, not 3,000 of them
    proc = abound_limited(["demo", "drop.toml", "--headless", "--frames", "3000", "--record", "r.jsonl"],
                          tmp_path, max_file_bytes=4000)
    line = one_line_error(proc, "r.jsonl", "File too large", "it replays its first")
    kept = int(line.split("it replays its first ")[1].split()[0])
    assert 0 < kept < 3000
    replay = abound(["replay", "r.jsonl", "--headless"], tmp_path)
    assert replay.returncode == 0, replay.stderr
    assert f"after {kept} recorded frames" in replay.stderr, replay.stderr  # (the reader counts as many)


def test_only_ascii_numbered_pngs_are_frames():
    # "frame_\u00b2.png": str.isdigit() says yes, int() refuses it; a capture --force into a
    # directory holding one ended in a traceback after its frames were written
    from abound.cli.outputs import is_frame_name
    assert is_frame_name("frame_00000.png") and is_frame_name("frame_123456.png")
    for name in ("frame_\u00b2.png", "frame_\u0663\u0663\u0663\u0663\u0663.png", "frame_0000.png", "frame_00000.PNG",
                 "frame_-0001.png", "frame_00000.png.bak"):
        assert not is_frame_name(name), name
