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
  the counts and a digest of the final state. A log without it is truncated.

:class:`ReplayWriter` writes a log as the demo runs; :func:`read_replay`
checks a whole log (a bad one raises :class:`ReplayError`, one line) and
:class:`Replayer` runs it through a :class:`~abound.control.Controller`, one
drawn frame at a time. GL-free.
"""
import json
import math

from abound.control import ACTIONS, BACKENDS, BALL_TOI, Controller, state_digest
from abound.errors import SceneError, read_user_file

FORMAT = 1
MAGIC = "abound_replay"


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
        self._write({MAGIC: FORMAT, "abound": __version__, "scene": scene, "source": dict(source or {}),
                     "backend": sim.backend, "ball_toi": sim.ball_toi, "dt": sim.dt,
                     "window": [int(window[0]), int(window[1])], "start": state_digest(sim)})

    def _write(self, obj):
        self._file.write(_dumps(obj) + "\n")

    def action(self, step, action):
        self._step = step
        self._write({"step": int(step), **action})

    def frame(self, steps):
        """A frame was drawn after ``steps`` physics steps of the run in total."""
        self._write({"frame": self.frames, "steps": int(steps - self._last_frame_step)})
        self._file.flush()  # a crash loses at most the frame being drawn
        self._last_frame_step = steps
        self.frames += 1

    def close(self, sim, steps):
        """Finish the log: the counts and the final state's digest."""
        if self._file is None:
            return
        self._write({"end": True, "frames": self.frames, "steps": int(steps), "state": state_digest(sim)})
        self._file.close()
        self._file = None


# -- reading ---------------------------------------------------------------------------
def _lines(path, name):
    """(line number, object) for each line of the log, or a one-line ReplayError."""
    data = read_user_file(path, name, "replay log", ReplayError)
    for no, raw in enumerate(data.splitlines(keepends=True), 1):
        try:
            obj = json.loads(raw.decode("utf-8"), parse_constant=_no_constant)
        except (UnicodeDecodeError, ValueError):
            if no == 1:
                raise ReplayError(f"{name}: not an abound replay log (line 1 is not a JSON object)") from None
            cut = "" if raw.endswith(b"\n") else " (the file is cut short)"
            raise ReplayError(f"{name}: line {no}: not valid JSON{cut}") from None
        if not isinstance(obj, dict):
            raise ReplayError(f"{name}: line {no}: not a JSON object")
        yield no, obj


def _no_constant(text):
    raise ValueError(f"{text} is not a number here")


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _check_action(obj, where):
    """The reason ``obj`` is not a well-formed action, or None."""
    kind = obj.get("do")
    if kind not in ACTIONS:
        return f"unknown action {kind!r}"
    fields = ACTIONS[kind]
    extra = set(obj) - set(fields) - {"do", "step"}
    if extra:
        return f"action {kind!r} has unknown field(s) {', '.join(sorted(extra))}"
    for key, want in fields.items():
        if key not in obj:
            return f"action {kind!r} lacks {key!r}"
        v = obj[key]
        if want is bool:
            ok = isinstance(v, bool)
        elif want is int:
            ok = _is_int(v) and v >= 0
        elif want is float:
            ok = _is_num(v)
        elif want == "vec2":
            ok = isinstance(v, list) and len(v) == 2 and all(_is_num(c) for c in v)
        else:
            ok = v in want
        if not ok:
            return f"action {kind!r}: bad {key} {v!r}"
    if kind == "add" and not obj["radius"] > 0:
        return "action 'add': the radius must be positive"
    if kind == "resize" and not (obj["width"] > 0 and obj["height"] > 0):
        return "action 'resize': the size must be positive"
    return None


class ReplayLog:
    """A checked replay log: ``header`` (dict), ``frames`` and ``steps`` (the totals); events() reads it again."""

    def __init__(self, path, header, frames, steps, final):
        self.path, self.header, self.frames, self.steps, self.final = path, header, frames, steps, final

    @property
    def window(self):
        return tuple(self.header["window"])

    def events(self):
        """The actions and frame records after the header, in order (the end record last)."""
        it = _lines(self.path, self.path)
        next(it)
        for _, obj in it:
            yield obj

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
        raise ReplayError(f"{name}: replay format {header[MAGIC]!r}, this abound reads format {FORMAT}")
    problem = _check_header(header)
    if problem:
        raise ReplayError(f"{name}: line 1: {problem}")
    steps = frame_start = frames = 0
    end = None
    for no, obj in lines:
        where = f"{name}: line {no}"
        if end is not None:
            raise ReplayError(f"{where}: data after the end record")
        if "do" in obj:
            problem = _check_action(obj, where)
            if problem:
                raise ReplayError(f"{where}: {problem}")
            n = obj.get("step")
            if not _is_int(n) or n < steps:
                raise ReplayError(f"{where}: the step stamp must be an integer >= {steps}, not {n!r}")
            steps = n + (obj["do"] == "step")
        elif "frame" in obj:
            s = obj.get("steps")
            if obj["frame"] != frames or set(obj) != {"frame", "steps"}:
                raise ReplayError(f"{where}: expected the record of frame {frames}")
            if not _is_int(s) or frame_start + s < steps:
                raise ReplayError(f"{where}: frame {frames} cannot have taken {s!r} steps "
                                  f"(its inputs came after {steps - frame_start})")
            steps = frame_start = frame_start + s
            frames += 1
        elif obj.get("end") is True:
            if obj.get("frames") != frames or obj.get("steps") != steps or not isinstance(obj.get("state"), str):
                raise ReplayError(f"{where}: the end record does not match the log "
                                  f"({frames} frames, {steps} steps)")
            end = obj
        else:
            raise ReplayError(f"{where}: neither an action, a frame nor the end")
    if end is None:
        raise ReplayError(f"{name}: truncated: no end record after {frames} frames (the recording was cut short)")
    return ReplayLog(name, header, frames, steps, end["state"])


def _check_header(h):
    if not isinstance(h.get("scene"), dict):
        return "no scene"
    if h.get("backend") not in BACKENDS:
        return f"bad backend {h.get('backend')!r}"
    if h.get("ball_toi") not in BALL_TOI:
        return f"bad ball_toi {h.get('ball_toi')!r}"
    if not (_is_num(h.get("dt")) and h["dt"] > 0):
        return f"bad dt {h.get('dt')!r}"
    w = h.get("window")
    if not (isinstance(w, list) and len(w) == 2 and all(_is_int(v) and v > 0 for v in w)):
        return f"bad window size {w!r}"
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
        for obj in self._events:
            if "do" in obj:
                control.advance(obj["step"] - control.steps)
                action = {k: v for k, v in obj.items() if k != "step"}
                if action["do"] == "pin" and action["ball"] >= len(control.sim):
                    raise ReplayError(f"{self.log.path}: pin of ball {action['ball']} at step {obj['step']}, "
                                      f"but there are {len(control.sim)} balls")
                control.apply(action)
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
