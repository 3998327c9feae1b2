"""The demo's sound: the contacts' clicks (abound/sound.py) played live through pyglet.media.

:class:`ContactSound` plays a :class:`abound.sound.Soundtrack` as an endless
stream: pyglet's audio thread asks for the next samples, and the soundtrack
mixes them from the clicks the steps have recorded, a little behind the
newest step. Where there is no audio device (pyglet finds no driver, or only
its silent one) the demo stays silent and says so once.
"""
import contextlib
import os
import sys

from abound.sound import SAMPLE_RATE, Soundtrack


def audio_device():
    """pyglet's audio driver, or None when there is no way to make a sound here. The
    probe runs with the process's stderr shut: ALSA and OpenAL print a dozen lines of
    their own when there is no sound card, and the one line the user needs is ours."""
    with _stderr_shut():
        try:
            from pyglet.media import get_audio_driver
            from pyglet.media.drivers.silent import SilentDriver
            driver = get_audio_driver()
        except Exception:  # no driver library at all
            return None
    return None if driver is None or isinstance(driver, SilentDriver) else driver


@contextlib.contextmanager
def _stderr_shut():
    """File descriptor 2 to /dev/null for a while (C libraries write there directly)."""
    sys.stderr.flush()
    saved = os.dup(2)
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(null)


class ContactSound:
    """Clicks for a controller's steps, on while ``on`` (toggle with :meth:`toggle`).

    control: the Controller whose steps are heard (its ``listeners`` get the
    soundtrack's ``record``). stream: where the one-line notes go.
    """

    def __init__(self, control, stream=None):
        self.control = control
        self.stream = stream or sys.stderr
        self.soundtrack = None
        self.player = None
        self.on = False
        self.device = None
        self._said_silent = False

    def toggle(self):
        self.set(not self.on)

    def set(self, on):
        """Switch the clicks on or off; returns whether they are on."""
        if on == self.on:
            return self.on
        if on:
            self.device = audio_device()
            if self.device is None:
                if not self._said_silent:
                    print("abound: no audio device: the contacts stay silent", file=self.stream)
                    self._said_silent = True
                return False
            self.soundtrack = Soundtrack(self.control.sim)
            self.control.listeners.append(self.soundtrack.record)
            import pyglet
            self.player = pyglet.media.Player()
            self.player.queue(_stream(self.soundtrack))
            self.player.play()
            self.on = True
        else:
            self.close()
        return self.on

    def close(self):
        if self.player is not None:
            self.player.pause()
            self.player.delete()
            self.player = None
        if self.soundtrack is not None:
            self.control.wait()  # (the steps in progress still call it)
            self.control.listeners.remove(self.soundtrack.record)
            self.soundtrack = None
        self.on = False


def _stream(soundtrack):
    """An endless pyglet StreamingSource of the soundtrack's live mix."""
    from pyglet.media.codecs.base import AudioData, AudioFormat, StreamingSource

    class ClickStream(StreamingSource):
        def __init__(self):
            self.audio_format = AudioFormat(channels=1, sample_size=16, sample_rate=SAMPLE_RATE)
            self.video_format = None
            self._duration = None  # endless

        def get_audio_data(self, num_bytes, compensation_time=0.0):
            data = soundtrack.live(max(int(num_bytes) // 2, 1))
            return AudioData(data, len(data))

    return ClickStream()
