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
import os
import shutil
import stat
import subprocess
import tempfile
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


def check_frames_dir(path, option="--out", force=False):
    """Check a directory for numbered PNG frames before the run (it may exist, or is made).

    An existing directory that already holds frames is refused unless force:
    the frames written would replace them.
    """
    where = f"{option} {path}"
    if not str(path).strip():
        raise OutputError(f"{option}: an empty name is not a directory name")
    path = Path(path)
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
        raise OutputError(f"{where}: cannot write in {str(folder)!r}: {exc.strerror or exc}") from None
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


class VideoWriter:
    """Frames to a .gif (Pillow) or an .mp4 (ffmpeg), by the name's extension.

    add(frame) takes (H, W, 4) uint8 RGBA arrays, rows top-down, all of the
    first frame's size (others are skipped: a resized window keeps its
    first size); close() finishes the file and raises :class:`OutputError`
    if it could not be written (a partial file is removed).
    """

    def __init__(self, path, option, fps):
        self.path, self.option, self.fps = Path(path), option, float(fps)
        self.mp4 = self.path.suffix.lower() == ".mp4"
        self.shape = None
        self.frames = []  # a GIF's frames (RGB), written at close
        self._proc = self._log = None
        self._broken = False

    def add(self, frame):
        if self.shape is None:
            self.shape = frame.shape
            if self.mp4:
                self._start_ffmpeg(frame.shape[1], frame.shape[0])
        if frame.shape != self.shape:
            return
        if not self.mp4:
            self.frames.append(frame[..., :3].copy())
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
        self._log = tempfile.TemporaryFile()  # ffmpeg's own words, for the one line if it fails
        self._proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=self._log)

    def close(self):
        """Finish the file; OutputError (one line) if it was not written whole."""
        try:
            if self.mp4:
                self._close_ffmpeg()
            elif self.frames:
                self._save_gif()
            if self.shape is not None:
                check_written(self.path, self.option)
        except OutputError:
            self._remove()
            raise

    def _close_ffmpeg(self):
        proc, self._proc = self._proc, None
        if proc is None:
            return
        try:
            proc.stdin.close()
        except OSError:
            self._broken = True
        status = proc.wait()
        self._log.seek(0)
        said = [line.strip() for line in self._log.read().decode("utf-8", "replace").splitlines() if line.strip()]
        self._log.close()
        if status != 0 or self._broken:
            why = f": {said[-1][:160]}" if said else ""
            raise OutputError(f"{self.option} {self.path}: ffmpeg failed (exit status {status}){why}")

    def _save_gif(self):
        from PIL import Image
        frames, self.frames = self.frames, []
        images = [Image.fromarray(f) for f in frames]
        try:
            images[0].save(self.path, format="GIF", save_all=True, append_images=images[1:], loop=0,
                           duration=max(20, int(round(1000.0 / self.fps))), optimize=False)
        except OSError as exc:
            raise OutputError(f"{self.option} {self.path}: cannot write: {exc.strerror or exc}") from None

    def _remove(self):
        try:
            os.unlink(self.path)
        except OSError:
            pass
