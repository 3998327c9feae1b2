"""The files the commands write (``--video``, ``--gif``, ``--mp4``, ``--record``, ``--out``):
checked before a run, verified after it.

Every problem is an :class:`OutputError`, one line naming the option, the
path and the reason, which ``abound`` prints as ``abound: error: ...`` with
exit status 2. Before the run (:func:`check_file`, :func:`check_frames_dir`):
the format is one that is written (by the name's extension), the place is a
directory that exists and takes a new file, the path is not a directory, and
an existing file is overwritten only with ``--force``. After it
(:class:`VideoWriter`): ffmpeg's exit status, and a file that exists and is
not empty.
"""
import errno
import os
import queue
import shutil
import stat
import struct
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

FFMPEG_HINT = "needs ffmpeg on the PATH (Debian/Ubuntu: apt-get install ffmpeg)"
VIDEO = (".gif", ".mp4")  # what --video writes, by the file name's extension
FRAME_NAME = "frame_{:05d}.png"


class OutputError(ValueError):
    """An output path or format abound cannot write; ``str(err)`` is one line."""


def add_force(parser, what):
    """The ``--force`` option: without it no output option overwrites an existing file."""
    parser.add_argument("--force", action="store_true",
                        help=f"overwrite existing files ({what}); without it they are refused before the run")


def check_file(path, option, formats=None, force=False):
    """Check that ``path`` can be written by ``option`` before the run; returns it as a Path.

    formats: the extensions written (lower case, with the dot), None for any.
    force: an existing regular file may be overwritten.
    """
    where = f"{option} {path}"
    if not str(path).strip():
        raise OutputError(f"{option}: an empty name is not a file name")
    path = Path(path)
    suffix = path.suffix.lower()
    if formats is not None and suffix not in formats:
        what = f"'{path.suffix}'" if path.suffix else "a name without an extension"
        raise OutputError(f"{where}: writes {' or '.join(formats)} files, not {what}")
    if suffix == ".mp4" and shutil.which("ffmpeg") is None:
        raise OutputError(f"{where}: an .mp4 {FFMPEG_HINT}; use a .gif file name instead")
    try:
        info = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):  # the place is checked below
        info = None
    except OSError as exc:
        raise OutputError(f"{where}: cannot write there: {exc.strerror or exc}") from None
    if info is not None:
        if stat.S_ISDIR(info.st_mode):
            raise OutputError(f"{where}: is a directory, not a file")
        if not stat.S_ISREG(info.st_mode):
            raise OutputError(f"{where}: not a regular file (a device or a pipe?)")
        if not force:
            raise OutputError(f"{where}: the file exists (add --force to overwrite it)")
    _check_place(path.parent, where)
    if info is not None and not os.access(path, os.W_OK):
        raise OutputError(f"{where}: the file exists and is read-only")
    return path


def check_distinct(outputs, scene=None, replay=None):
    """Refuse two output options that name one file: ``outputs`` is (option, path) pairs,
    path None for an option not given. (``--video v.gif --record v.gif`` wrote both into
    one file, each over the other: a GIF of 2 frames and no replay log, and exit 0.)
    scene: the SCENE argument, and replay: the replay log being run, files no output
    may name either (``demo my.toml --record my.toml --force`` replaced the
    hand-written scene with the log)."""
    seen = {}
    if scene and os.path.isfile(scene):  # (not a shipped scene's name)
        seen[os.path.realpath(scene)] = f"the scene file being run, {scene}"
    if replay and os.path.isfile(replay):
        seen[os.path.realpath(replay)] = f"the replay log being run, {replay}"
    for option, path in outputs:
        if not path:
            continue
        key = os.path.realpath(path)
        if key in seen:
            raise OutputError(f"{option} {path}: the same file as {seen[key]}: give each output a file of its own")
        seen[key] = f"{option} {path}"


def is_frame_name(name):
    """Whether a file name is one of the numbered frames (frame_00000.png, ...) that a
    run writes into its directory, or removes there with --force."""
    number = name[len("frame_"):-len(".png")] if name.startswith("frame_") and name.endswith(".png") else ""
    # (ASCII digits only: "frame_\u00b2.png" is no frame, and int() refuses its digit)
    return number.isascii() and number.isdigit() and name == FRAME_NAME.format(int(number))


def _frame_reaching(folder, name):
    """The frame of folder (a name a run writes or removes there) that is the file
    ``name`` or leads to it through a symbolic link, or None: by its own name in
    folder, by where it really lies, or by a frame there that links to it."""
    real, folder_real = os.path.realpath(name), os.path.realpath(folder)
    for where in (os.path.abspath(name), real):
        if is_frame_name(os.path.basename(where)) and os.path.realpath(os.path.dirname(where)) == folder_real:
            return os.path.join(folder, os.path.basename(where))
    if os.path.isdir(folder):
        for entry in Path(folder).glob("frame_*.png"):
            if is_frame_name(entry.name) and entry.is_symlink() and os.path.realpath(entry) == real:
                return str(entry)
    return None


def check_frames_dir(path, option="--out", force=False, inputs=()):
    """Check a directory for numbered PNG frames before the run (it may exist, or is made).

    An existing directory that already holds frames is refused unless force:
    the frames written would replace them. inputs: (what, path) of the files the
    run reads (the scene file, the replay log), none of which may be a frame of
    the directory, even with force (``capture my/frame_00000.png --out my --force``
    wrote a PNG over the scene it ran).
    """
    where = f"{option} {path}"
    if not str(path).strip():
        raise OutputError(f"{option}: an empty name is not a directory name")
    path = Path(path)
    for what, name in inputs:
        frame = _frame_reaching(path, name) if name and os.path.isfile(name) else None
        if frame is not None:
            raise OutputError(f"{where}: {what}, {name}, is its frame {os.path.basename(frame)} (by name or "
                              f"by a link), which the frames written there would replace: give the "
                              f"frames another directory")
    if path.is_dir():
        if not force and (path / FRAME_NAME.format(0)).exists():
            raise OutputError(f"{where}: already holds frames ({FRAME_NAME.format(0)}, ...; "
                              f"add --force to overwrite them)")
        _check_place(path, where)
        return path
    if path.exists() or path.is_symlink():
        raise OutputError(f"{where}: exists and is not a directory")
    parent = path.parent
    while not parent.exists() and parent != parent.parent:  # the directory is made with its parents
        parent = parent.parent
    _check_place(parent, where)
    return path


def _check_place(folder, where):
    """The directory ``folder`` exists and takes a new file (tried, not guessed from modes)."""
    folder = Path(folder) if str(folder) else Path(".")
    if not folder.exists():
        raise OutputError(f"{where}: no such directory {str(folder)!r}")
    if not folder.is_dir():
        raise OutputError(f"{where}: {str(folder)!r} is not a directory")
    try:
        fd, probe = tempfile.mkstemp(prefix=".abound-probe-", dir=folder)
    except OSError as exc:
        # (an existing folder that answers "no such file", as /proc does, takes no new files)
        reason = "it takes no new files" if exc.errno == errno.ENOENT else exc.strerror or exc
        raise OutputError(f"{where}: cannot write in {str(folder)!r}: {reason}") from None
    os.close(fd)
    os.unlink(probe)


def check_written(path, option):
    """After writing: the file exists and is not empty."""
    try:
        size = os.stat(path).st_size
    except OSError:
        raise OutputError(f"{option} {path}: the file was not written") from None
    if size == 0:
        raise OutputError(f"{option} {path}: the file written is empty")


def mp4_whole(path):
    """Whether the MP4 file at ``path`` is whole: its top-level boxes (4-byte size, 4-byte
    type; size 1: a 64-bit size follows, 0: to the end) fill the file exactly and one is
    the 'moov' index, which ffmpeg writes last. On a full disk ffmpeg could exit 0 with
    the file cut off inside its 'mdat' and no index: no player opens it."""
    try:
        total = os.path.getsize(path)
        with open(path, "rb") as f:
            pos, index = 0, False
            while pos < total:
                f.seek(pos)
                head = f.read(16)
                if len(head) < 8:
                    return False
                size, kind = struct.unpack(">I4s", head[:8])
                if size == 1:
                    if len(head) < 16:
                        return False
                    size = struct.unpack(">Q", head[8:16])[0]
                elif size == 0:
                    size = total - pos
                if size < 8 or pos + size > total:
                    return False
                index = index or kind == b"moov"
                pos += size
            return index
    except OSError:
        return False


class VideoWriter:
    """Frames to a .gif (Pillow) or an .mp4 (ffmpeg), by the name's extension, as they come.

    add(frame) takes (H, W, 4) uint8 RGBA arrays, rows top-down, all of the
    first frame's size (others are skipped: a resized window keeps its
    first size); close() finishes the file and raises :class:`OutputError`
    if it could not be written (a partial file is removed). Neither keeps
    the frames: an .mp4's go to ffmpeg's input, a GIF's to a
    :class:`GifStream`, so memory stays flat however long the recording.
    ``pending`` is how many frames are still to be encoded.
    """

    def __init__(self, path, option, fps):
        self.path, self.option, self.fps = Path(path), option, float(fps)
        self.mp4 = self.path.suffix.lower() == ".mp4"
        self.shape = None
        self.added = 0
        self.done = False  # closed, the file whole
        self._gif = None
        self._proc = self._log = None
        self._broken = False

    @property
    def pending(self):
        return self._gif.pending if self._gif is not None else 0

    def add(self, frame):
        if self.shape is None:
            self.shape = frame.shape
            if self.mp4:
                self._start_ffmpeg(frame.shape[1], frame.shape[0])
            else:
                self._start_gif()
        if frame.shape != self.shape:
            return
        self.added += 1
        if not self.mp4:
            self._gif.add(frame[..., :3])
        elif not self._broken:
            try:
                self._proc.stdin.write(frame.tobytes())
            except OSError:  # ffmpeg stopped (its status says why, at close)
                self._broken = True

    def _start_ffmpeg(self, w, h):
        exe = shutil.which("ffmpeg")
        if exe is None:
            raise OutputError(f"{self.option} {self.path}: an .mp4 {FFMPEG_HINT}")
        cmd = [exe, "-y", "-loglevel", "error", "-f", "rawvideo", "-pix_fmt", "rgba",
               "-s", f"{w}x{h}", "-r", f"{self.fps:.6g}", "-i", "-",
               "-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2", "-c:v", "libx264", "-pix_fmt", "yuv420p",
               "-f", "mp4", str(self.path)]
        if w % 2 or h % 2:  # (the size printed at the end is the frames', not this file's)
            added = " and ".join(what for what, odd in (("a black column at the right", w % 2),
                                                        ("a black row at the bottom", h % 2)) if odd)
            print(f"abound: note: {self.option} {self.path} is {w + w % 2}x{h + h % 2}: H.264 takes even sides, "
                  f"so {added} {'are' if w % 2 and h % 2 else 'is'} added", file=sys.stderr)
        self._log = tempfile.TemporaryFile()  # ffmpeg's own words, for the one line if it fails
        self._proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=self._log)

    def close(self):
        """Finish the file; OutputError (one line) if it was not written whole."""
        try:
            if self.mp4:
                self._close_ffmpeg()
            elif self._gif is not None:
                self._close_gif()
            if self.shape is not None:
                check_written(self.path, self.option)
                if self.mp4 and not mp4_whole(self.path):
                    raise OutputError(f"{self.option} {self.path}: ffmpeg left the file cut short (no index: "
                                      "a full disk?)")
            self.done = True
        except OutputError:
            self._remove()
            raise

    def _close_ffmpeg(self):
        proc = self._proc
        if proc is None:
            return
        try:
            proc.stdin.close()
        except OSError:
            self._broken = True
        status = proc.wait()
        self._proc = None  # (kept until now: a Ctrl-C while ffmpeg finishes aborts it)
        self._log.seek(0)
        said = [line.strip() for line in self._log.read().decode("utf-8", "replace").splitlines() if line.strip()]
        self._log.close()
        if status != 0 or self._broken:
            why = f": {said[-1][:160]}" if said else ""
            raise OutputError(f"{self.option} {self.path}: ffmpeg failed (exit status {status}){why}")

    def _start_gif(self):
        try:
            self._gif = GifStream(self.path, self.fps)
        except OSError as exc:
            raise OutputError(f"{self.option} {self.path}: cannot write: {exc.strerror or exc}") from None

    def _close_gif(self):
        try:
            self._gif.close()
            self._gif = None  # (kept until now: a Ctrl-C while it finishes aborts it)
        except Exception as exc:  # noqa: BLE001 - the disk's (OSError) or the encoder's: one line either way
            self._gif = None
            why = getattr(exc, "strerror", None) or exc
            raise OutputError(f"{self.option} {self.path}: cannot write: {why}") from None

    def abort(self):
        """Give the file up (the run did not end: Ctrl-C): stop the encoder or ffmpeg and remove
        what was written (nothing, if no frame came: an existing file is then left alone).
        A video closed whole is kept."""
        if self.done:
            return
        gif, self._gif = self._gif, None
        if gif is not None:
            gif.abort()
        proc, self._proc = self._proc, None
        if proc is not None:
            try:
                proc.stdin.close()
            except OSError:
                pass
            proc.kill()
            proc.wait()
            self._log.close()
        if self.shape is not None:
            self._remove()

    def _remove(self):
        try:
            os.unlink(self.path)
        except OSError:
            pass


def finish_video(video, stream=None):
    """Close a :class:`VideoWriter`, saying so on a terminal (``stream``, default stderr): a line
    when the writing begins, with the frames still to encode, and one when the file is whole.
    Nothing is said when the stream is not a terminal (an error is then the only line)."""
    import sys
    import time
    stream = stream or sys.stderr
    try:
        tty = stream.isatty()
    except (ValueError, AttributeError):
        tty = False
    t0 = time.perf_counter()
    if tty:
        left = f", {video.pending} still to encode" if video.pending else ""
        stream.write(f"abound: writing {video.path} ({video.added} frames{left}) ...\n")
        stream.flush()
    video.close()
    if tty:
        try:
            size = f", {os.stat(video.path).st_size / 1e6:.1f} MB"
        except OSError:
            size = ""
        stream.write(f"abound: wrote {video.path} ({video.added} frames{size}) "
                     f"in {time.perf_counter() - t0:.1f} s\n")
        stream.flush()


class GifStream:
    """An animated GIF written frame by frame, so that memory stays flat in the number of frames.

    Each frame is quantized to its own palette of at most 256 colours
    (Pillow's adaptive median cut, as Pillow's GIF writer does it: exact for
    a frame of 256 colours or fewer), LZW-encoded by Pillow and appended to
    the file at once, with its palette as the frame's local colour table. A
    run of identical frames is written as one frame showing for their summed
    time, as Pillow writes it. The work is done on a thread of its own,
    behind a queue of at most ``QUEUE`` frames: ``add`` waits when the
    encoder is that far behind (a large window's frames take about 35 ms
    each), so a recording never holds more than that many frames.
    ``close()`` encodes what is queued and ends the file; OSError if it could not be written.
    """

    QUEUE = 8

    def __init__(self, path, fps):
        self.delay = max(2, int(round(100.0 / float(fps))))  # centiseconds a frame shows (GIF's unit)
        self.file = open(path, "wb")
        self.frames = 0           # frames written to the file (a run of identical frames is one)
        self._size = None
        self._held = None         # (rgb, encoded frame, centiseconds): the last frame, until the next differs
        self._error = None
        self._queue = queue.Queue(self.QUEUE)
        self._thread = threading.Thread(target=self._encode_all, name="abound-gif", daemon=True)
        self._thread.start()

    @property
    def pending(self):
        """Frames added and not yet encoded."""
        return self._queue.qsize()

    def add(self, rgb):
        """Queue an (H, W, 3) uint8 frame (copied); all frames must be of the first one's size."""
        if self._error is None:
            self._queue.put(rgb.copy())

    def close(self):
        self._queue.put(None)
        self._thread.join()
        try:
            if self._error is None:
                self._flush()
                if self._size is not None:
                    self.file.write(b"\x3b")  # trailer
        except OSError as exc:
            self._error = self._error or exc
        finally:
            try:
                self.file.close()
            except OSError as exc:
                self._error = self._error or exc
        if self._error is not None:
            raise self._error

    def abort(self):
        """Stop encoding (what is queued is dropped) and close the file as it is."""
        self._error = self._error or InterruptedError("aborted")
        self._queue.put(None)
        self._thread.join()
        try:
            self.file.close()
        except OSError:
            pass

    def _encode_all(self):
        while True:
            rgb = self._queue.get()
            if rgb is None:
                return
            if self._error is not None:
                continue  # drain: the file is lost already
            try:
                self._take(rgb)
            except Exception as exc:  # noqa: BLE001 - reported at close, by the writer's thread
                self._error = exc

    def _take(self, rgb):
        import numpy as np
        if self._size is None:
            self._size = (rgb.shape[1], rgb.shape[0])
            self.file.write(_gif_header(*self._size))
        held = self._held
        if held is not None and np.array_equal(held[0], rgb):
            self._held = (held[0], held[1], held[2] + self.delay)
            return
        self._flush()
        self._held = (rgb, _encode_frame(rgb), self.delay)

    def _flush(self):
        if self._held is None:
            return
        _, encoded, delay = self._held
        self._held = None
        # graphic control extension: no disposal needed (each frame covers the whole picture), the delay
        self.file.write(b"\x21\xf9\x04\x04" + struct.pack("<H", min(delay, 0xFFFF)) + b"\x00\x00")
        self.file.write(encoded)
        self.frames += 1


def _gif_header(w, h):
    """GIF89a, the logical screen (no global colour table), and the NETSCAPE2.0 loop-forever block."""
    return (b"GIF89a" + struct.pack("<HHBBB", w, h, 0, 0, 0)
            + b"\x21\xff\x0bNETSCAPE2.0\x03\x01\x00\x00\x00")


def _encode_frame(rgb):
    """One frame as a GIF image block: its descriptor with a local colour table and the LZW data.

    Pillow quantizes and encodes it as a one-frame GIF; the block is taken out of that file, with
    the file's global colour table made the frame's local one.
    """
    import io
    from PIL import Image
    image = Image.fromarray(rgb, "RGB").convert("P", palette=Image.Palette.ADAPTIVE)
    buf = io.BytesIO()
    image.save(buf, format="GIF", optimize=False)
    return _image_block(buf.getvalue())


def _image_block(data):
    """The first image of a GIF file (bytes) as a self-contained image block with a local colour table."""
    if data[:3] != b"GIF":
        raise ValueError("not a GIF")
    flags = data[10]
    pos = 13
    table, bits = b"", 0
    if flags & 0x80:
        bits = flags & 7
        n = 3 << (bits + 1)
        table, pos = data[pos:pos + n], pos + n
    while pos < len(data):
        kind = data[pos]
        if kind == 0x21:  # an extension: skip its sub-blocks
            pos += 2
            while data[pos]:
                pos += data[pos] + 1
            pos += 1
        elif kind == 0x2C:
            x, y, w, h, iflags = struct.unpack("<HHHHB", data[pos + 1:pos + 10])
            pos += 10
            if iflags & 0x80:  # a local table already
                bits = iflags & 7
                n = 3 << (bits + 1)
                table, pos = data[pos:pos + n], pos + n
            if not table:
                raise ValueError("a GIF image without a colour table")
            start = pos
            pos += 1  # LZW minimum code size
            while data[pos]:
                pos += data[pos] + 1
            pos += 1
            desc = b"\x2c" + struct.pack("<HHHHB", x, y, w, h, 0x80 | (iflags & 0x40) | bits)
            return desc + table + data[start:pos]
        else:
            raise ValueError(f"unexpected GIF block {kind:#x}")
    raise ValueError("a GIF without an image")
