"""Contacts as sound: a short click per contact, louder with its impulse, lower for bigger balls.

A :class:`Soundtrack` listens to the steps' contact logs (as
``Controller.listeners`` or ``capture.stepped_frames``'s listeners do) and
mixes mono 16-bit audio at SAMPLE_RATE, offline (``abound capture --wav``:
:meth:`Soundtrack.write_wav`) or as a live stream (the demo's ``--sound``:
:meth:`Soundtrack.live`, played by abound/cli/audio.py).

A click is a sine of a pitch set by the balls' size (PITCH_HZ for a ball of
PITCH_RADIUS px, inversely proportional to the radius: a ball twice as big
sounds an octave lower; for two balls, their mean radius), starting at zero
phase on the sample of its contact's time and dying away exponentially
(DECAY), CLICK_SECONDS long. Its amplitude is LEVEL times the contact's
normal impulse over a full-scale impulse (the scene's median ball mass
times FULL_DV px/s), at most LEVEL: proportional to the impulse up to there.

Ten thousand contacts a second must stay pleasant: in each WINDOW of time
only the MAX_PER_WINDOW loudest contacts click (a gas then sounds like rain,
not like a buzz), and the mix goes through a soft limiter, linear below
KNEE, that never exceeds full scale. GL-free; numpy and the standard
library's ``wave``.
"""
import threading
import wave

import numpy as np

SAMPLE_RATE = 44100
CLICK_SECONDS = 0.02
DECAY = 0.004            # s: the click's envelope falls by e in this time
PITCH_HZ = 1500.0        # the click of a ball of PITCH_RADIUS px
PITCH_RADIUS = 8.0
PITCH_LIMITS = (100.0, 6000.0)
LEVEL = 0.25             # the amplitude of a full-scale click (four at once reach full scale)
FULL_DV = 1000.0         # px/s: the velocity change of a median ball that gives a full-scale click
WINDOW = 0.01            # s
MAX_PER_WINDOW = 4       # clicks per window at most (400 a second), the loudest kept
KNEE = 0.5               # the limiter is linear below this amplitude


def limit(x):
    """Soft limiter: x where |x| <= KNEE, then bending smoothly towards (never past) 1."""
    a = np.abs(x)
    over = a > KNEE
    y = np.array(x, dtype=np.float64)
    y[over] = np.sign(x[over]) * (KNEE + (1.0 - KNEE) * np.tanh((a[over] - KNEE) / (1.0 - KNEE)))
    return y


def pitch(radius):
    """Hz of the click of a contact of balls of this (mean) radius, px."""
    return np.clip(PITCH_HZ * PITCH_RADIUS / np.maximum(radius, 1e-9), *PITCH_LIMITS)


class Soundtrack:
    """The clicks of a run's contacts (simulated time), mixed on request.

    sim: the Simulation whose contacts it hears (its median ball mass sets
    the full-scale impulse). Thread-safe: steps may record on one thread
    while another mixes.
    """

    def __init__(self, sim, sample_rate=SAMPLE_RATE):
        self.rate = sample_rate
        masses = sim.masses[np.isfinite(sim.masses) & ~sim.pinned] if len(sim) else np.zeros(0)
        self.full_impulse = (float(np.median(masses)) if len(masses) else 1.0) * FULL_DV
        self._times, self._amps, self._hz = [], [], []  # arrays per recorded step
        self._lock = threading.Lock()
        self._cursor = None  # the live stream's position (simulated s)
        self.latest = 0.0  # the end of the last recorded step (simulated s)

    # -- hearing -----------------------------------------------------------------------
    def record(self, sim, log, start):
        """Take in one step's contact log (CONTACT_DTYPE), the step having begun at ``start``.
        A step that begins before the last one ended (a reset) starts the soundtrack afresh."""
        end = sim.time
        if start < self.latest - 1e-9:
            with self._lock:
                self._times, self._amps, self._hz = [], [], []
                self._cursor = None
        if log is not None and len(log):
            radius = sim.radii[log["a"]].astype(np.float64)
            pair = log["b"] >= 0
            radius[pair] = 0.5 * (radius[pair] + sim.radii[log["b"][pair]])
            amps = LEVEL * np.minimum(np.abs(log["impulse"]) / self.full_impulse, 1.0)
            with self._lock:
                self._times.append(start + log["t"])
                self._amps.append(amps)
                self._hz.append(pitch(radius))
        self.latest = end

    def clicks(self):
        """(times s, amplitudes, Hz) of every click that sounds, after the per-window cut."""
        with self._lock:
            if not self._times:
                return np.zeros(0), np.zeros(0), np.zeros(0)
            t, a, f = (np.concatenate(x) for x in (self._times, self._amps, self._hz))
        keep = a > 0
        t, a, f = t[keep], a[keep], f[keep]
        # in each window, the MAX_PER_WINDOW loudest: sort by window, then loudness (descending)
        window = np.floor(t / WINDOW).astype(np.int64)
        order = np.lexsort((-a, window))
        window = window[order]
        first = np.searchsorted(window, window, side="left")
        rank = np.arange(len(order)) - first
        chosen = np.sort(order[rank < MAX_PER_WINDOW])
        return t[chosen], a[chosen], f[chosen]

    # -- mixing ------------------------------------------------------------------------
    def mix(self, t0, samples):
        """``samples`` float64 samples from simulated time t0 (the limiter applied)."""
        out = np.zeros(samples)
        t, a, f = self.clicks()
        span = int(CLICK_SECONDS * self.rate)
        onset = np.round(t * self.rate).astype(np.int64) - int(round(t0 * self.rate))
        live = (onset > -span) & (onset < samples)
        tau = np.arange(span) / self.rate
        envelope = np.exp(-tau / DECAY)
        for k0, amp, hz in zip(onset[live], a[live], f[live]):
            click = amp * envelope * np.sin(2.0 * np.pi * hz * tau)
            lo, hi = max(k0, 0), min(k0 + span, samples)
            out[lo:hi] += click[lo - k0:hi - k0]
        return limit(out)

    def write_wav(self, path, seconds, t0=0.0):
        """Write ``seconds`` of the mix from simulated time t0 to a 16-bit mono WAV file."""
        data = pcm16(self.mix(t0, int(round(seconds * self.rate))))
        with wave.open(str(path), "wb") as w:
            w.setnchannels(1)
            w.setsampwidth(2)
            w.setframerate(self.rate)
            w.writeframes(data)

    def live(self, samples, lead=0.05):
        """The next ``samples`` of a live stream (16-bit PCM bytes), following the simulation:
        it plays ``lead`` s behind the newest step so that the clicks of a step are mixed once
        the step is done; where the simulation runs slower than real time, it waits in silence
        (and the clicks stay in time with the picture, not with the wall clock)."""
        seconds = samples / self.rate
        newest = self.latest - lead
        if self._cursor is None or self._cursor < newest - 4 * lead:  # (a start, or far behind: catch up)
            self._cursor = max(newest - seconds, 0.0)
        if self._cursor + seconds > self.latest:
            return pcm16(np.zeros(samples))  # nothing simulated there yet
        out = self.mix(self._cursor, samples)
        self._cursor += seconds
        self.forget(self._cursor - CLICK_SECONDS)
        return pcm16(out)

    def forget(self, before):
        """Drop the clicks that ended before simulated time ``before`` (a live stream's past;
        whole windows only, so that the per-window cut keeps choosing the same clicks)."""
        before = np.floor(before / WINDOW) * WINDOW
        with self._lock:
            if not self._times:
                return
            t, a, f = (np.concatenate(x) for x in (self._times, self._amps, self._hz))
            keep = t >= before
            self._times, self._amps, self._hz = [t[keep]], [a[keep]], [f[keep]]


def pcm16(x):
    """float samples in -1..1 as little-endian 16-bit PCM bytes."""
    return (np.clip(x, -1.0, 1.0) * 32767.0).round().astype("<i2").tobytes()
