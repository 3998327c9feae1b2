"""Recording does not eat the memory (issue 24, item 4): GIFs are written frame by frame.

``abound demo --video x.gif`` and ``abound capture --gif`` kept every frame
until the end (300 frames of a large window took 2.5 GB). Now the peak
memory of a run of 300 frames is within a few MB of a run of 50, where a
store of the frames (even palette-quantized, one byte a pixel) would add
more than a hundred; the frames decode, with Pillow and with ffmpeg, to the
pictures given; and a recording demo quitting on a terminal says that it is
writing the file.
"""
import os
import pty
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageSequence

from abound.cli.outputs import VideoWriter

REPO = Path(__file__).resolve().parents[2]


def env():
    e = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    e["PYTHONPATH"] = str(REPO)
    return e


def frames_with_few_colours(n, size=(96, 64), seed=0):
    """RGBA frames, each of at most 256 colours of its own (so a GIF holds them exactly), with
    runs of identical frames (a GIF shows a run as one frame for the run's time)."""
    rng = np.random.default_rng(seed)
    w, h = size
    out = []
    for k in range(n):
        if k % 5 == 3:  # the same as the frame before
            out.append(out[-1].copy())
            continue
        palette = rng.integers(0, 256, (200, 3), dtype=np.uint8)
        idx = rng.integers(0, 200, (h // 8, w // 8))
        rgb = palette[np.kron(idx, np.ones((8, 8), dtype=int))]
        frame = np.empty((h, w, 4), dtype=np.uint8)
        frame[..., :3], frame[..., 3] = rgb, 255
        out.append(frame)
    return out


def expected_runs(frames, ms_per_frame):
    """(RGB picture, ms) per run of identical frames, as a GIF player must show them."""
    runs = []
    for f in frames:
        if runs and np.array_equal(runs[-1][0], f[..., :3]):
            runs[-1][1] += ms_per_frame
        else:
            runs.append([f[..., :3].copy(), ms_per_frame])
    return runs


def test_the_gif_shows_every_frame_exactly_for_its_time(tmp_path):
    frames = frames_with_few_colours(23)
    path = tmp_path / "x.gif"
    video = VideoWriter(path, "--gif", 50.0)  # 20 ms a frame
    for f in frames:
        video.add(f)
    video.close()
    runs = expected_runs(frames, 20)
    gif = Image.open(path)
    assert gif.n_frames == len(runs) and gif.size == (96, 64) and gif.info.get("loop") == 0
    for k, (frame, (picture, ms)) in enumerate(zip(ImageSequence.Iterator(gif), runs)):
        assert frame.info["duration"] == ms, k
        assert np.array_equal(np.asarray(frame.convert("RGB")), picture), k


@pytest.mark.skipif(shutil.which("ffmpeg") is None, reason="ffmpeg not installed")
def test_ffmpeg_decodes_the_same_pictures(tmp_path):
    frames = frames_with_few_colours(12, seed=3)
    path = tmp_path / "x.gif"
    video = VideoWriter(path, "--gif", 50.0)
    for f in frames:
        video.add(f)
    video.close()
    runs = expected_runs(frames, 20)
    out = subprocess.run(["ffmpeg", "-v", "error", "-i", str(path), "-f", "rawvideo", "-pix_fmt", "rgb24",
                          "-fps_mode", "passthrough", "-"], capture_output=True, timeout=60)
    assert out.returncode == 0 and not out.stderr, out.stderr
    decoded = np.frombuffer(out.stdout, dtype=np.uint8).reshape(-1, 64, 96, 3)
    assert len(decoded) == len(runs)
    for k, (picture, _) in enumerate(runs):
        assert np.array_equal(decoded[k], picture), k


def test_a_frame_of_many_colours_is_close(tmp_path):
    """More than 256 colours: quantized to the frame's own 256, each pixel near its colour."""
    rng = np.random.default_rng(5)
    y, x = np.mgrid[0:64, 0:96]
    frame = np.empty((64, 96, 4), dtype=np.uint8)
    frame[..., 0], frame[..., 1], frame[..., 2], frame[..., 3] = x * 2, y * 3, (x + y), 255
    frame[..., :3] = np.clip(frame[..., :3].astype(int) + rng.integers(-2, 3, (64, 96, 3)), 0, 255)
    video = VideoWriter(tmp_path / "x.gif", "--gif", 60.0)
    video.add(frame)
    video.close()
    back = np.asarray(Image.open(tmp_path / "x.gif").convert("RGB")).astype(int)
    err = np.abs(back - frame[..., :3].astype(int))
    assert err.mean() < 4 and err.max() < 24, (err.mean(), err.max())


def peak_rss_mb(argv, cwd):
    """Run ``abound argv`` and return (exit status, stderr, its peak resident memory in MB)."""
    proc = subprocess.Popen([sys.executable, "-m", "abound", *argv], cwd=cwd, env=env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = proc.stderr.read().decode()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, err, usage.ru_maxrss / 1024.0  # KB on Linux


@pytest.mark.parametrize("command", ["capture", "demo"])
def test_memory_stays_flat_in_the_number_of_frames(tmp_path, command):
    """50 and 200 frames of 800x600: the frames' RGB would be 1.44 MB each (216 MB more for the
    150 frames more), even a one-byte-a-pixel store 72 MB; the bound is 40 MB."""
    peaks = {}
    for n in (50, 200):
        gif = tmp_path / f"{command}-{n}.gif"
        if command == "capture":
            argv = ["capture", "drop", "--frames", str(n), "--size", "800x600", "--gif", str(gif)]
        else:
            argv = ["demo", "drop", "--frames", str(n), "--size", "800x600", "--headless", "--video", str(gif)]
        status, err, peaks[n] = peak_rss_mb(argv, tmp_path)
        assert status == 0, err
        image = Image.open(gif)
        assert image.size == (800, 600)
        total = sum(frame.info["duration"] for frame in ImageSequence.Iterator(image))
        assert total == n * 20, (n, total)  # every frame is in it, for its 20 ms
    assert peaks[200] - peaks[50] < 40.0, peaks


def test_quitting_a_recording_demo_on_a_terminal_says_it_is_writing(tmp_path):
    parent, child = pty.openpty()
    try:
        proc = subprocess.Popen([sys.executable, "-m", "abound", "demo", "drop", "--frames", "40", "--headless",
                                 "--size", "320x240", "--video", str(tmp_path / "r.gif")],
                                cwd=tmp_path, env=env(), stdout=subprocess.DEVNULL, stderr=child)
        os.close(child)
        child = None
        said = b""
        while True:
            try:
                chunk = os.read(parent, 4096)
            except OSError:  # the demo has ended and closed its side
                break
            if not chunk:
                break
            said += chunk
        assert proc.wait(60) == 0, said
    finally:
        os.close(parent)
        if child is not None:
            os.close(child)
    text = said.decode(errors="replace")
    assert f"abound: writing {tmp_path / 'r.gif'} (40 frames" in text, text
    assert f"abound: wrote {tmp_path / 'r.gif'} (40 frames" in text, text
    assert text.index("abound: writing") < text.index("abound: wrote")


@pytest.mark.parametrize("option, name", [("--gif", "x.gif"), ("--mp4", "x.mp4")])
def test_a_capture_stopped_by_ctrl_c_leaves_no_half_written_video(tmp_path, option, name):
    """The file is written as the frames come, so a capture cut short must remove it (before, nothing
    was written until the end)."""
    import signal
    import time
    if option == "--mp4" and shutil.which("ffmpeg") is None:
        pytest.skip("ffmpeg not installed")
    # Ctrl-C as a terminal sends it: to a process whose SIGINT is not ignored. (Started from a
    # shell's background job, as CI may start the tests, it would be inherited ignored, and the
    # capture would rightly run on.)
    proc = subprocess.Popen([sys.executable, "-m", "abound", "capture", "drop", "--frames", "50000",
                             "--size", "320x240", option, name], cwd=tmp_path, env=env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    path = tmp_path / name
    t_end = time.monotonic() + 120
    while time.monotonic() < t_end and proc.poll() is None:
        if path.exists() and path.stat().st_size > 0:  # under way (ffmpeg writes its header at once)
            time.sleep(1.0)
            break
        time.sleep(0.05)
    assert proc.poll() is None and path.exists(), proc.stderr.read() if proc.poll() is not None else "no file"
    proc.send_signal(signal.SIGINT)
    assert proc.wait(60) == 130, proc.stderr.read()
    assert "Traceback" not in proc.stderr.read()
    assert not path.exists()


def test_an_encoder_failure_is_one_error_and_no_file(tmp_path, monkeypatch):
    from abound.cli import outputs

    def broken(rgb):
        raise ValueError("the encoder broke")

    monkeypatch.setattr(outputs, "_encode_frame", broken)
    video = VideoWriter(tmp_path / "x.gif", "--gif", 50.0)
    for f in frames_with_few_colours(3):
        video.add(f)
    with pytest.raises(outputs.OutputError, match=r"^--gif .*x\.gif: cannot write: the encoder broke$"):
        video.close()
    assert not (tmp_path / "x.gif").exists()


def test_a_capture_stopped_by_ctrl_c_says_what_it_kept(tmp_path):
    """Ctrl-C ends a capture with one line: the frames kept (counted here in the folder) and the
    videos not written. (It used to end with an empty line, and the next run into the folder was
    refused for the frames left there, with no hint why.)"""
    import re
    import signal
    import time
    proc = subprocess.Popen([sys.executable, "-m", "abound", "capture", "drop", "--frames", "50000",
                             "--size", "160x120", "--out", "frames", "--gif", "x.gif"], cwd=tmp_path, env=env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    frames = tmp_path / "frames"
    t_end = time.monotonic() + 120
    while time.monotonic() < t_end and proc.poll() is None:
        if frames.is_dir() and len(list(frames.glob("frame_*.png"))) >= 3:
            break
        time.sleep(0.05)
    assert proc.poll() is None, proc.stderr.read()
    proc.send_signal(signal.SIGINT)
    assert proc.wait(60) == 130
    said = proc.stderr.read()
    assert "Traceback" not in said
    kept = sorted(p.name for p in frames.iterdir())
    n = len(kept)
    assert n >= 3 and kept == [f"frame_{k:05d}.png" for k in range(n)]
    assert not (tmp_path / "x.gif").exists()
    # (a line on the fast engine's compile, where it was under way, may follow)
    lines = [line for line in said.splitlines() if line.startswith("abound: interrupted")]
    assert len(lines) == 1, said
    assert re.fullmatch(rf"abound: interrupted at frame \d+ of 50000: {n} PNGs kept in frames "
                        rf"\(frame_00000\.png to frame_{n - 1:05d}\.png\); x\.gif not written", lines[0]), said
