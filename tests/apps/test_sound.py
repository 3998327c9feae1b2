"""The contacts as sound (issue 26, item 4): ``abound capture --wav`` and the demo's clicks.

The scene: balls of one size and mass dropped from rest from different
heights onto the floor, restitution 1, no ball meets another. Ball i hits
the floor at t = sqrt(2 h_i / g) and every 2 sqrt(2 h_i / g) after, each time
with the impulse 2 m sqrt(2 g h_i) (closed form). The WAV written by the real
command is read back with the standard library's ``wave``: each click's
onset must fall within a millisecond of its contact's time, and the clicks'
peaks must stand in the ratio of the impulses.
"""
import math
import subprocess
import sys
import wave

import numpy as np
import pytest

from abound import Simulation
from abound import sound

G, R, DT = 980.0, 8.0, 1.0 / 60.0
HEIGHTS = (30.0, 120.0)  # px from the floor to the ball's lowest point
SCENE = f"""
[world]
width = 200.0
height = 200.0
gravity = [0.0, -{G}]
[physics]
dt = {DT}
backend = "fast"
[render]
shading = false
""" + "".join(f"""
[[balls]]
x = {50.0 + 100.0 * i}
y = {R + h}
radius = {R}
restitution = 1.0
""" for i, h in enumerate(HEIGHTS))


def contact_times(h, until):
    t1 = math.sqrt(2 * h / G)
    return [t1 + 2 * k * t1 for k in range(100) if t1 + 2 * k * t1 < until]


def onsets(x, rate, threshold=0.01, quiet=0.005):
    """Sample indices where |x| first exceeds threshold after at least ``quiet`` s below it."""
    loud = np.flatnonzero(np.abs(x) > threshold)
    if not len(loud):
        return loud
    gaps = np.diff(loud) > quiet * rate
    return np.concatenate([[loud[0]], loud[1:][gaps]])


def read_wav(path):
    with wave.open(str(path)) as w:
        assert (w.getnchannels(), w.getsampwidth(), w.getframerate()) == (1, 2, sound.SAMPLE_RATE)
        return np.frombuffer(w.readframes(w.getnframes()), "<i2") / 32767.0


def test_capture_wav_clicks_at_the_contacts_and_as_loud_as_their_impulses(tmp_path):
    (tmp_path / "drop.toml").write_text(SCENE)
    frames, every = 60, 2
    run = subprocess.run([sys.executable, "-m", "abound", "capture", str(tmp_path / "drop.toml"), "--frames",
                          str(frames), "--every", str(every), "--size", "100x100", "--wav", str(tmp_path / "c.wav")],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    x = read_wav(tmp_path / "c.wav")
    seconds = frames * every * DT
    assert len(x) == round(seconds * sound.SAMPLE_RATE)  # as long as the frames at 30 fps
    expected = sorted((t, i) for i, h in enumerate(HEIGHTS) for t in contact_times(h, seconds - 0.03))
    found = onsets(x, sound.SAMPLE_RATE) / sound.SAMPLE_RATE
    assert len(found) == len(expected) >= 4, (found, expected)
    for got, (t, _) in zip(found, expected):
        assert abs(got - t) < 1e-3, (got, t)
    # loudness: the peak of each click over its first 5 ms, against 2 m v (v = sqrt(2 g h))
    span = int(0.005 * sound.SAMPLE_RATE)
    peaks = {i: [] for i in range(len(HEIGHTS))}
    for got, (_, i) in zip(found, expected):
        k = int(round(got * sound.SAMPLE_RATE))
        peaks[i].append(np.abs(x[k:k + span]).max())
    ratio = np.median(peaks[1]) / np.median(peaks[0])
    assert ratio == pytest.approx(math.sqrt(HEIGHTS[1] / HEIGHTS[0]), rel=0.03)
    assert max(max(p) for p in peaks.values()) < sound.KNEE  # (linear: the limiter left them alone)


def test_a_crowd_of_contacts_is_thinned_and_never_clips():
    """The hot gas: thousands of contacts a second, at most MAX_PER_WINDOW clicks a window, and
    a mix within full scale."""
    sim = Simulation.from_config("hot_gas")
    track = sound.Soundtrack(sim)
    contacts = 0
    for _ in range(30):
        start = sim.time
        stats = sim.step(contacts=True)
        contacts += len(stats.contact_log)
        track.record(sim, stats.contact_log, start)
    t, a, f = track.clicks()
    assert contacts > 10 * len(t)  # (thinned)
    windows = np.floor(t / sound.WINDOW).astype(int)
    assert np.bincount(windows - windows.min()).max() <= sound.MAX_PER_WINDOW
    x = track.mix(0.0, int(sim.time * sound.SAMPLE_RATE))
    assert np.abs(x).max() <= 1.0 and np.abs(x).max() > 0.05


def test_the_live_stream_follows_the_simulation():
    """Asked for a step's worth of samples after each step, as an audio device asks while
    the demo runs in real time, the stream plays the simulation from its start: the
    click of the ball's first bounce comes at its time (within a millisecond)."""
    sim = Simulation(200, 200, gravity=(0.0, -G), dt=DT)
    sim.add_ball(100.0, R + 30.0, radius=R)
    track = sound.Soundtrack(sim)
    assert not np.frombuffer(track.live(441), "<i2").any()  # nothing simulated yet: silence
    track = sound.Soundtrack(sim)
    hit = math.sqrt(2 * 30.0 / G)
    per_step = round(DT * sound.SAMPLE_RATE)  # 735 samples
    out = []
    while sim.time < hit + 0.1:
        start = sim.time
        stats = sim.step(contacts=True)
        track.record(sim, stats.contact_log, start)
        out.append(np.frombuffer(track.live(per_step), "<i2") / 32767.0)
    found = onsets(np.concatenate(out), sound.SAMPLE_RATE) / sound.SAMPLE_RATE
    assert len(found) == 1 and abs(found[0] - hit) < 1e-3, (found, hit)


def test_no_audio_device_means_silence_and_one_line(monkeypatch, capsys):
    from abound.cli import audio
    from abound.control import Controller
    monkeypatch.setattr(audio, "audio_device", lambda: None)
    sim = Simulation(100, 100)
    s = audio.ContactSound(Controller(sim))
    assert s.set(True) is False and not s.on
    s.toggle()
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["abound: no audio device: the contacts stay silent"]
