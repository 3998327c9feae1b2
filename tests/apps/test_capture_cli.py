"""``abound capture``: numbered PNGs with the same pixels as render_frames, GIF, MP4, messages."""
import shutil

import numpy as np
import pytest
from PIL import Image

from abound.capture import render_frames
from abound.cli import main

SCENE = """
[world]
width = 320
height = 240
[physics]
seed = 3
[[spawn]]
count = 12
radius = [5.0, 10.0]
speed = [100.0, 300.0]
[render]
trails = 0.2
"""


@pytest.fixture
def scene(tmp_path):
    p = tmp_path / "s.toml"
    p.write_text(SCENE)
    return p


def test_pngs_and_gif_match_render_frames(scene, tmp_path, capsys):
    out = tmp_path / "runs" / "frames"  # --out makes its missing parents too (docs/cli.md)
    rc = main(["capture", str(scene), "--frames", "4", "--every", "2", "--size", "160x120",
               "--out", str(out), "--gif", str(tmp_path / "a.gif")])
    assert rc == 0
    files = sorted(out.glob("frame_*.png"))
    assert [f.name for f in files] == [f"frame_{k:05d}.png" for k in range(4)]
    expected = list(render_frames(str(scene), frames=4, size=(160, 120), every=2))
    for f, e in zip(files, expected):
        assert np.array_equal(np.asarray(Image.open(f)), e)
    assert Image.open(tmp_path / "a.gif").n_frames == 4
    assert "captured 4 frames" in capsys.readouterr().out


@pytest.mark.skipif(shutil.which("ffmpeg") is None, reason="ffmpeg not installed")
def test_mp4(scene, tmp_path):
    assert main(["capture", str(scene), "--frames", "3", "--size", "160x120", "--mp4", str(tmp_path / "a.mp4")]) == 0
    assert (tmp_path / "a.mp4").stat().st_size > 0


@pytest.mark.skipif(shutil.which("ffmpeg") is None or shutil.which("ffprobe") is None,
                    reason="ffmpeg and ffprobe not installed")
def test_an_mp4_of_odd_sides_is_padded_and_says_so(scene, tmp_path, capsys):
    # H.264 takes even sides: 161x121 frames make a 162x122 video (ffprobe reads it), which
    # the capture now says instead of printing only the frames' size
    import subprocess
    path = tmp_path / "odd.mp4"
    capsys.readouterr()
    assert main(["capture", str(scene), "--frames", "2", "--size", "161x121", "--mp4", str(path)]) == 0
    err = capsys.readouterr().err
    assert f"--mp4 {path} is 162x122" in err
    assert "a black column at the right and a black row at the bottom are added" in err
    probe = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
                            "stream=width,height", "-of", "csv=p=0", str(path)], capture_output=True, text=True)
    assert probe.stdout.strip() == "162,122", probe


def test_mp4_without_ffmpeg_is_a_clear_message(scene, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    assert main(["capture", str(scene), "--frames", "2", "--mp4", str(tmp_path / "a.mp4")]) == 2
    err = capsys.readouterr().err
    assert "ffmpeg" in err and "apt-get install ffmpeg" in err


def test_nowhere_to_write_is_an_error(scene, capsys):
    assert main(["capture", str(scene), "--frames", "2"]) == 2
    assert "--out" in capsys.readouterr().err


def test_bad_size_is_a_usage_error(scene, capsys):
    assert main(["capture", str(scene), "--size", "big", "--out", "x"]) == 2


RAMP = """
[world]
width = 640
height = 360
[physics]
seed = 4
{clusters}
[[spawn]]
count = 80
radius = 5.0
speed = [0.0, 30.0]
restitution = 0.3
region = [60.0, 250.0, 330.0, 350.0]
[[walls]]
x0 = 20.0
y0 = 240.0
x1 = 420.0
y1 = 110.0
"""


@pytest.mark.parametrize("clusters", [False, True])
def test_a_heap_stopped_on_a_ramp_is_said_in_one_line(tmp_path, capsys, clusters):
    # 80 balls poured onto a 18 degree frictionless ramp: without contact clusters
    # the heap's rattles stop balls on the ramp (tests/physics/test_physics_jam_warning.py
    # checks that they lie where they cannot rest), and the command says so on
    # one line, once, with the key that lets them pour; with them, nothing is said
    path = tmp_path / "ramp.toml"
    path.write_text(RAMP.format(clusters=f"contact_clusters = {str(clusters).lower()}"))
    rc = main(["capture", str(path), "--frames", "2", "--every", "300", "--size", "160x90", "--out", str(tmp_path / "f")])
    assert rc == 0
    said = [line for line in capsys.readouterr().err.splitlines() if line.startswith("abound: warning:")]
    if clusters:
        assert said == []
    else:
        assert len(said) == 1 and "contact_clusters = true" in said[0], said


def _errors(capsys):
    """The error lines the run printed: exactly one, and no traceback (a line on the fast
    engine's compile, where one is under way, may come before it)."""
    said = capsys.readouterr().err
    assert "Traceback" not in said
    err = [line for line in said.splitlines() if line.startswith("abound: error")]
    assert len(err) == 1, said
    return err


def _fail_frames(monkeypatch, failing):
    """PIL's PNG save failing with ENOSPC (a full disk) for the frames numbered in failing."""
    import errno
    saved = Image.Image.save

    def save(self, fp, *args, **kwargs):
        if any(str(fp).endswith(f"frame_{k:05d}.png") for k in failing):
            with open(fp, "wb") as f:  # (a partial file, as a full disk leaves one)
                f.write(b"\x89PNG")
            raise OSError(errno.ENOSPC, "No space left on device")
        return saved(self, fp, *args, **kwargs)
    monkeypatch.setattr(Image.Image, "save", save)


@pytest.mark.parametrize("failing, kept", [({0}, 0), ({3}, 3), ({2, 5}, 2)])
def test_a_frame_a_full_disk_refuses_leaves_the_frames_before_it_and_says_so(scene, tmp_path, monkeypatch, capsys,
                                                                               failing, kept):
    # frames are written several at a time: a full disk had left a frame after the one
    # it refused (frame_00001.png, with frame_00000.png refused), and said nothing of it
    _fail_frames(monkeypatch, failing)
    out = tmp_path / "frames"
    capsys.readouterr()
    assert main(["capture", str(scene), "--frames", "8", "--size", "160x120", "--out", str(out)]) == 2
    err = _errors(capsys)
    first = min(failing)
    said = f"{kept} PNGs kept in {out} (frame_00000.png to frame_{kept - 1:05d}.png)" if kept else f"0 PNGs kept in {out}"
    assert err[0] == (f"abound: error: --out {out}: cannot write frame_{first:05d}.png: No space left on device; "
                      f"{said}"), err
    assert sorted(p.name for p in out.iterdir()) == [f"frame_{k:05d}.png" for k in range(kept)]


def test_capture_onto_a_really_full_disk(scene, tmp_path, capsys):
    # the real thing: a 64 KiB tmpfs (mount needs root; skipped, saying so, without it)
    import subprocess
    disk = tmp_path / "small"
    disk.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(disk)],
                      capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root)")
    try:
        out = disk / "frames"
        capsys.readouterr()
        assert main(["capture", str(scene), "--frames", "30", "--size", "320x240", "--out", str(out)]) == 2
        err = _errors(capsys)
        assert "No space left on device; " in err[0], err
        names = sorted(p.name for p in out.iterdir())
        n = len(names)
        assert names == [f"frame_{k:05d}.png" for k in range(n)]  # frames 0 to n - 1, nothing after
        assert err[0].endswith(f"{n} PNG{'' if n == 1 else 's'} kept in {out}"
                               + (f" (frame_00000.png to frame_{n - 1:05d}.png)" if n else "")), err
        for name in names:  # each kept frame whole
            Image.open(out / name).load()
    finally:
        subprocess.run(["umount", str(disk)], check=True)
