"""Replay logs: a demo run as its scene plus the inputs that changed it, to be run again bit for bit.

The log is JSON lines (one object per line, UTF-8), format version 1:

* line 1, the header: ``{"abound_replay": 1, "abound": VERSION, "scene": {...},
  "source": {...}, "backend": "fast", "ball_toi": "analytic", "dt": DT,
  "window": [W, H], "start": DIGEST}`` - the normalized scene (``sim.scene``,
  overrides applied), the command-line overrides it was made with (for
  people: ``scene``, ``seed``, ``balls``, ``backend``), the physics settings
  the run started with, the window size and a digest of the starting state;
* an action, ``{"step": N, "do": KIND, ...}``: an input applied after N
  physics steps of the run (see :mod:`abound.control` for the kinds);
* a drawn frame, ``{"frame": K, "steps": S}``: the K-th drawn frame (from 0),
  drawn after S more physics steps than the frame before it;
* the last line, ``{"end": true, "frames": F, "steps": N, "state": DIGEST}``:
  the counts and a digest of the final state. A log without it was cut
  short (the demo killed, its X server gone, the disk full): it replays up
  to its last whole frame record, with nothing to compare at the end. The
  writer flushes each frame's record, so such a log loses at most the
  frame being drawn, and its last line may be cut in the middle.

:class:`ReplayWriter` writes a log as the demo runs; :func:`read_replay`
checks a whole log (a bad one raises :class:`ReplayError`, one line) and
:class:`Replayer` runs it through a :class:`~abound.control.Controller`, one
drawn frame at a time. GL-free.
"""
import contextlib
import json
import math
import os

from abound.control import ACTIONS, ADD_RADIUS, BACKENDS, BALL_TOI, Controller, state_digest
from abound.defaults import MIN_POSITIVE
from abound.errors import MAX_NESTING, SceneError, read_user_file, show_path, too_deep

FORMAT = 1
MAGIC = "abound_replay"

# Bounds on what a log can ask for (a crafted log must not run for ever or eat the memory).
MAX_LOG_BYTES = 256 << 20     # a day of 60 fps demo takes about 150 MB
MAX_FRAME_STEPS = 1000        # steps between two drawn frames: the demo takes at most 4, plus single steps
MAX_TOTAL_STEPS = 50_000_000  # about 9 days of 60 steps a second
MAX_WINDOW = 16384            # px, a side of the window or the box (as abound's --size)
MAX_VALUE = 1e9               # the size of any number in an action (as in a scene)


class ReplayError(ValueError):
    """A replay log that cannot be replayed; ``str(err)`` is one line naming the file and the reason."""


def _dumps(obj):
    # floats are written with repr, which reads back to the identical double
    return json.dumps(obj, separators=(",", ":"), allow_nan=False)


class ReplayWriter:
    """Writes the replay log of a run as it happens (attach it as a Controller's recorder).

    path: the log file (overwritten). sim: the Simulation the run starts
    from, built from a scene (``sim.scene``). window: (W, H) the window size.
    source: the command-line overrides, stored for people to read.
    """

    def __init__(self, path, sim, window, source=None):
        scene = sim.scene
        if not isinstance(scene, dict) or "world" not in scene or "physics" not in scene:
            raise ValueError("recording a replay needs a simulation built from a scene (Simulation.from_config)")
        from abound import __version__
        self.path = str(path)
        self.frames = 0
        self._last_frame_step = 0
        self._step = 0
        self._file = open(path, "w", encoding="utf-8")
        self._whole = 0  # bytes of the log up to its last whole frame
        self._write({MAGIC: FORMAT, "abound": __version__, "scene": scene, "source": dict(source or {}),
                     "backend": sim.backend, "ball_toi": sim.ball_toi, "dt": sim.dt,
                     "window": [int(window[0]), int(window[1])], "start": state_digest(sim)})

    @contextlib.contextmanager
    def _named(self):
        """An OSError writing the log (a full disk) names the log: it had said only
        "No space left on device"."""
        try:
            yield
        except OSError as exc:
            raise OSError(exc.errno, f"cannot write the replay log: {exc.strerror or exc}{self._after_failure()}",
                          self.path) from None

    def _after_failure(self):
        """What becomes of a log whose write failed, said after the reason. One that holds no
        whole frame replays nothing and only blocks the next --record of that name: it is
        removed (a regular file only: never /dev/full). One that does replays up to them."""
        file, self._file = self._file, None  # (given up: close() writes no end record after this)
        try:
            if file is not None:
                file.close()
        except OSError:
            pass  # (its buffer cannot be written either)
        if self.frames > 0:
            try:  # what close() wrote after the last whole frame, if space came back: cut off
                os.truncate(self.path, self._whole)
            except OSError:
                pass
            return f" (it replays its first {self.frames} frame{'s' if self.frames != 1 else ''})"
        if os.path.isfile(self.path) and not os.path.islink(self.path):
            try:
                os.remove(self.path)
                return " (removed: it held no frame)"
            except OSError:
                pass
        return ""

    def _write(self, obj):
        if self._file is None:
            return  # (given up after a failed write, which said so)
        with self._named():
            self._file.write(_dumps(obj) + "\n")

    def action(self, step, action):
        self._step = step
        self._write({"step": int(step), **action})

    def frame(self, steps):
        """A frame was drawn after ``steps`` physics steps of the run in total."""
        self._write({"frame": self.frames, "steps": int(steps - self._last_frame_step)})
        if self._file is None:
            return
        with self._named():
            self._file.flush()  # a crash loses at most the frame being drawn
            self._whole = self._file.buffer.tell()  # bytes up to the last whole frame
        self._last_frame_step = steps
        self.frames += 1

    @property
    def steps_shown(self):
        """The physics steps taken up to the last frame recorded (a step after it is in no frame)."""
        return self._last_frame_step

    def close(self, sim, steps):
        """Finish the log: the counts and the final state's digest."""
        if self._file is None:
            return
        try:
            self._write({"end": True, "frames": self.frames, "steps": int(steps), "state": state_digest(sim)})
            with self._named():
                self._file.flush()
        finally:
            file, self._file = self._file, None
            try:
                file.close()
            except OSError:
                pass  # (what it could not flush was said above)


# -- reading ---------------------------------------------------------------------------
def _lines(path, name):
    """(line number, object) for each line of the log, or a one-line ReplayError.
    A last line cut short (no newline, not JSON: a write the recording's end
    interrupted) comes as (line number, None): the log was cut there."""
    data = read_user_file(path, name, "replay log", ReplayError, max_bytes=MAX_LOG_BYTES)
    raws = data.splitlines(keepends=True)
    for no, raw in enumerate(raws, 1):
        try:
            obj = json.loads(raw.decode("utf-8"), parse_constant=_no_constant)
        except RecursionError:
            obj = None
        except (UnicodeDecodeError, ValueError):
            if no == 1:
                if raw.startswith(b'{"' + MAGIC.encode()) and not raw.endswith(b"\n"):
                    raise ReplayError(f"{name}: cut short in its header: nothing to replay") from None
                raise ReplayError(f"{name}: not an abound replay log (line 1 is not a JSON object)") from None
            if no == len(raws) and not raw.endswith(b"\n"):
                yield no, None  # (the reader ends the log here)
                return
            raise ReplayError(f"{name}: line {no}: not valid JSON") from None
        deep = too_deep(obj) if obj is not None else ()
        if deep is not None:
            at = f" at {show_path(deep)}" if deep else ""
            raise ReplayError(f"{name}: line {no}: JSON nested too deeply{at} "
                              f"(more than {MAX_NESTING} levels of objects and arrays within each other)")
        if not isinstance(obj, dict):
            raise ReplayError(f"{name}: line {no}: not a JSON object")
        yield no, obj


def _no_constant(text):
    raise ValueError(f"{text} is not a number here")


def _show(v, limit=60):
    """A value as a message quotes it: its repr, cut short (a log line can be long)."""
    text = repr(v)
    return text if len(text) <= limit else text[:limit] + "..."


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _check_action(obj, box):
    """The reason ``obj`` is not a well-formed action in a box of size ``box`` (w, h), or None."""
    kind = obj.get("do")
    if kind not in ACTIONS:
        return f"unknown action {_show(kind)}"
    fields = ACTIONS[kind]
    extra = set(obj) - set(fields) - {"do", "step"}
    if extra:
        return f"action {kind!r} has unknown field(s) {_show(', '.join(sorted(extra)))}"
    for key, want in fields.items():
        if key not in obj:
            return f"action {kind!r} lacks {key!r}"
        v = obj[key]
        if want is bool:
            ok = isinstance(v, bool)
        elif want is int:
            ok = _is_int(v) and v >= 0
        elif want is float:
            ok = _is_num(v) and abs(v) <= MAX_VALUE
        elif want == "vec2":
            ok = isinstance(v, list) and len(v) == 2 and all(_is_num(c) and abs(c) <= MAX_VALUE for c in v)
        else:
            ok = v in want
        if not ok:
            numbers = f" (numbers at most {MAX_VALUE:g} in size)" if want in (float, "vec2") else ""
            return f"action {kind!r}: bad {key} {_show(v)}{numbers}"
    # the demo adds balls of ADD_RADIUS, whatever the box; nothing larger than the box
    largest = max(ADD_RADIUS[1], min(box) / 2)
    if kind == "add" and not MIN_POSITIVE <= obj["radius"] <= largest:  # (a scene's least radius too)
        return (f"action 'add': the radius must be in [{MIN_POSITIVE:g}, {largest:g}] in a {box[0]:g}x{box[1]:g} box, "
                f"not {_show(obj['radius'])}")
    if kind == "resize" and not all(1 <= obj[k] <= MAX_WINDOW for k in ("width", "height")):
        return f"action 'resize': the size must be between 1 and {MAX_WINDOW} px, not {_show(obj['width'])}x{_show(obj['height'])}"
    return None


class ReplayLog:
    """A checked replay log: ``header`` (dict), ``frames`` and ``steps`` (the totals); events() reads it again.

    ``final``: the recorded final state's digest, or None where the log was
    cut short (then ``last_line`` is the line of its last frame record, where
    its replay ends; ``cut_note()`` says so)."""

    def __init__(self, path, header, frames, steps, final, last_line=None):
        self.path, self.header, self.frames, self.steps, self.final = path, header, frames, steps, final
        self.last_line = last_line

    @property
    def window(self):
        return tuple(self.header["window"])

    def events(self):
        """(line number, record) of the actions and frame records after the header, in
        order (the end record last; a log cut short ends with its last frame record)."""
        it = _lines(self.path, self.path)
        next(it)
        for no, obj in it:
            if obj is None:
                return
            yield no, obj
            if no == self.last_line:
                return

    def cut_note(self):
        """One line for a log that was cut short (None for a whole one)."""
        if self.final is not None:
            return None
        return (f"abound: note: {self.path} was cut short (no end record) after {self.frames} recorded "
                f"frame{'s' if self.frames != 1 else ''}: they replay, with no final state to compare")

    def build_simulation(self):
        """The Simulation the recorded run started from (checked against the recorded digest)."""
        from abound import Simulation
        h = self.header
        try:
            sim = Simulation.from_config(h["scene"])
            sim.backend = h["backend"]
            sim.ball_toi = h["ball_toi"]
        except SceneError as exc:
            raise ReplayError(f"{self.path}: the recorded scene does not build: {exc}") from None
        if sim.dt != h["dt"] or state_digest(sim) != h["start"]:
            raise ReplayError(f"{self.path}: the recorded scene no longer builds the recorded starting state "
                              f"(recorded with abound {h.get('abound', '?')})")
        return sim


def read_replay(path):
    """Check a whole replay log; returns a :class:`ReplayLog` or raises :class:`ReplayError` (one line)."""
    name = str(path)
    lines = _lines(path, name)
    try:
        _, header = next(lines)
    except StopIteration:
        raise ReplayError(f"{name}: empty file, not an abound replay log") from None
    if MAGIC not in header:
        raise ReplayError(f"{name}: not an abound replay log (no '{MAGIC}' header)")
    if header[MAGIC] != FORMAT:
        raise ReplayError(f"{name}: replay format {_show(header[MAGIC])}, this abound reads format {FORMAT}")
    problem = _check_header(header)
    if problem:
        raise ReplayError(f"{name}: line 1: {problem}")
    steps = frame_start = frames = 0
    box = _box(header)
    end = None
    last_frame_line = None
    for no, obj in lines:
        where = f"{name}: line {no}"
        if end is not None:
            raise ReplayError(f"{where}: data after the end record")
        if obj is None:
            break  # (a last line cut short: the log was cut there)
        if "do" in obj:
            problem = _check_action(obj, box)
            if problem:
                raise ReplayError(f"{where}: {problem}")
            n = obj.get("step")
            if not _is_int(n) or n < steps:
                raise ReplayError(f"{where}: the step stamp must be an integer >= {steps}, not {_show(n)}")
            _check_steps(where, n - frame_start, n)
            steps = n + (obj["do"] == "step")
            if obj["do"] == "resize":
                box = (obj["width"], obj["height"])
        elif "frame" in obj:
            s = obj.get("steps")
            if obj["frame"] != frames or set(obj) != {"frame", "steps"}:
                raise ReplayError(f"{where}: expected the record of frame {frames}")
            if not _is_int(s) or frame_start + s < steps:
                raise ReplayError(f"{where}: frame {frames} cannot have taken {_show(s)} steps "
                                  f"(its inputs came after {steps - frame_start})")
            _check_steps(where, s, frame_start + s)
            steps = frame_start = frame_start + s
            frames += 1
            last_frame_line = no
        elif obj.get("end") is True:
            if obj.get("frames") != frames or obj.get("steps") != steps or not isinstance(obj.get("state"), str):
                raise ReplayError(f"{where}: the end record does not match the log "
                                  f"({frames} frames, {steps} steps)")
            end = obj
        else:
            raise ReplayError(f"{where}: neither an action, a frame nor the end")
    if end is None:
        if not frames:
            raise ReplayError(f"{name}: cut short before its first frame: nothing to replay")
        return ReplayLog(name, header, frames, frame_start, None, last_line=last_frame_line)
    return ReplayLog(name, header, frames, steps, end["state"])


def _check_steps(where, since_frame, total):
    """A log asks for at most MAX_FRAME_STEPS steps between two frames and MAX_TOTAL_STEPS in all."""
    if since_frame > MAX_FRAME_STEPS:
        raise ReplayError(f"{where}: {since_frame} physics steps in one frame, at most {MAX_FRAME_STEPS}")
    if total > MAX_TOTAL_STEPS:
        raise ReplayError(f"{where}: {total} physics steps in all, at most {MAX_TOTAL_STEPS}")


def _box(header):
    """The recorded scene's box (w, h) before the first resize (the largest, if the scene does not say)."""
    world = header["scene"].get("world")
    size = [world.get(k) for k in ("width", "height")] if isinstance(world, dict) else []
    if len(size) == 2 and all(_is_num(v) and v > 0 for v in size):
        return tuple(size)
    return (MAX_WINDOW, MAX_WINDOW)  # the scene's defaults; building it says what is wrong


def _check_header(h):
    if not isinstance(h.get("scene"), dict):
        return "no scene"
    if h.get("backend") not in BACKENDS:
        return f"bad backend {_show(h.get('backend'))}"
    if h.get("ball_toi") not in BALL_TOI:
        return f"bad ball_toi {_show(h.get('ball_toi'))}"
    if not (_is_num(h.get("dt")) and h["dt"] > 0):
        return f"bad dt {_show(h.get('dt'))}"
    w = h.get("window")
    if not (isinstance(w, list) and len(w) == 2 and all(_is_int(v) and 0 < v <= MAX_WINDOW for v in w)):
        return f"bad window size {_show(w)} (each side 1 to {MAX_WINDOW} px)"
    if not isinstance(h.get("start"), str):
        return "no starting-state digest"
    return None


# -- replaying -------------------------------------------------------------------------
class Replayer:
    """Runs a checked :class:`ReplayLog` through a fresh Controller, one recorded frame at a time.

    ``control`` is the Controller (its ``sim`` the state); after
    :meth:`next_frame` returns True, the state is the one the recorded run
    drew in that frame. ``done`` becomes True at the end of the log, and
    ``matches`` then tells whether the final state is bit-identical to the recorded one.
    """

    def __init__(self, log):
        self.log = log
        self.control = Controller(log.build_simulation())
        self.frames = 0
        self.done = False
        self.matches = None
        self._events = log.events()
        self._frame_start = 0

    def next_frame(self):
        """Apply the inputs and steps up to the next recorded frame; False when the log has ended."""
        if self.done:
            return False
        control = self.control
        for no, obj in self._events:
            if "do" in obj:
                control.advance(obj["step"] - control.steps)
                action = {k: v for k, v in obj.items() if k != "step"}
                where = f"{self.log.path}: line {no}: action {action['do']!r} at step {obj['step']}"
                if action["do"] == "pin" and action["ball"] >= len(control.sim):
                    raise ReplayError(f"{where}: pins ball {action['ball']}, "
                                      f"but there are {len(control.sim)} balls")
                try:
                    control.apply(action)
                except SceneError as exc:  # what only the state at that step can refuse: a ball outside the box
                    raise ReplayError(f"{where}: {exc}") from None
            elif "frame" in obj:
                self._frame_start += obj["steps"]
                control.advance(self._frame_start - control.steps)
                self.frames += 1
                return True
            else:
                self.done = True
                self.matches = state_digest(control.sim) == obj["state"]
                return False
        self.done = True
        return False
