"""``abound capture [SCENE] --frames N --out DIR``: render a scene headlessly to PNGs, a GIF or an MP4.

Frame k is the scene after ``k * every`` steps of its fixed dt (frame 0: as
built). With ``--replay FILE`` (a log of ``abound demo --record``) frame k is
the state the demo drew in its k-th frame, at the recorded window's size. PNGs are written by worker threads, off the render loop. No display
is needed (EGL, else Xvfb, which it says it starts); see :mod:`abound.capture`.
"""
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from abound.cli.args import MAX_EVERY, MAX_FRAMES, count, file_name, given, image_size, plural
from abound.cli.outputs import (FRAME_NAME, OutputError, VideoWriter, add_force, check_distinct, check_file,
                                check_frames_dir, finish_video, is_frame_name)


def add_arguments(parser):
    parser.add_argument("scene", nargs="?", metavar="SCENE",
                        help="scene file or shipped scene name (default: the embedded default scene)")
    parser.add_argument("--replay", type=file_name, metavar="FILE",
                        help="render a run recorded with 'abound demo --record FILE' instead of a scene")
    parser.add_argument("--frames", type=count(1, MAX_FRAMES), metavar="N",
                        help=f"frames to write (default 60, at most {MAX_FRAMES:,}; with --replay, every recorded frame)")
    parser.add_argument("--out", type=file_name, metavar="DIR", help="directory for the numbered PNGs frame_00000.png, ... (made, with its parents, if missing)")
    parser.add_argument("--every", type=count(1, MAX_EVERY), default=1, metavar="K",
                        help=f"physics steps between written frames (default 1, at most {MAX_EVERY:,})")
    parser.add_argument("--size", type=image_size, metavar="WxH",
                        help="frame size in pixels (default 640x480, with --replay the recorded window's; "
                             "the box is scaled to fit)")
    parser.add_argument("--seed", type=count(0), metavar="S", help="override the scene's seeds")
    parser.add_argument("--balls", type=count(1), metavar="N", help="total number of random ([[spawn]]) balls")
    parser.add_argument("--gif", type=file_name, metavar="FILE", help="also write an animated GIF (Pillow)")
    parser.add_argument("--mp4", type=file_name, metavar="FILE", help="also write an MP4 video (needs ffmpeg on the PATH)")
    parser.add_argument("--wav", type=file_name, metavar="FILE",
                        help="also write the contacts' soundtrack, a click per contact (16-bit mono WAV, "
                             "as long as the frames at --every steps a frame; abound/sound.py; not with --replay)")
    add_force(parser, "the --gif, --mp4 and --wav files and the frames in --out")


class _Progress:
    """A one-line progress bar on a terminal (nothing when stderr is not a tty)."""

    def __init__(self, total, stream=None):
        self.total, self.stream = total, stream or sys.stderr
        try:
            self.on = self.stream.isatty()
        except (ValueError, AttributeError):
            self.on = False

    def update(self, done):
        if self.on:
            width = 30
            fill = int(width * done / self.total)
            self.stream.write(f"\r[{'#' * fill}{'.' * (width - fill)}] {done}/{self.total} frames")
            self.stream.flush()

    def close(self):
        if self.on:
            self.stream.write("\n")


def _save_png(frame, path):
    """One frame as a PNG; a file that cannot be written whole (a full disk) is removed
    and named with the reason: OutputError."""
    from PIL import Image
    try:
        Image.fromarray(frame, "RGBA").save(path, compress_level=1)
    except OSError as exc:
        _remove_partial(path)
        raise _FrameNotWritten(f"--out {path.parent}: cannot write {path.name}: {exc.strerror or exc}") from None


class _FrameNotWritten(OutputError):
    """A frame _save_png could not write: _write says what is kept of the others."""


def _remove_partial(path):
    try:
        os.remove(path)
    except OSError:
        pass  # never made, or not ours to remove


def run(args):
    from abound.capture import FrameCapture, stepped_frames
    from abound.render.style import RenderError
    from abound import Simulation
    # the input first: a mistyped scene or log name is the error to hear, not the output not yet given
    # (the log is read after the outputs are checked: only whether it is there to read, now)
    if args.replay:
        from abound.errors import check_user_file
        from abound.replay import MAX_LOG_BYTES, ReplayError
        try:
            check_user_file(args.replay, args.replay, "replay log", ReplayError, MAX_LOG_BYTES)
        except ReplayError as exc:
            print(f"abound: error: {exc}", file=sys.stderr)
            return 2
    sim = None if args.replay else Simulation.from_config(args.scene, seed=args.seed, balls=args.balls)
    if not (args.out or args.gif or args.mp4 or args.wav):
        outputs = "--out DIR, --gif FILE and/or --mp4 FILE" if args.replay else (  # (--wav takes no --replay)
            "--out DIR, --gif FILE, --mp4 FILE and/or --wav FILE")
        print(f"abound: error: say where the frames go: {outputs}", file=sys.stderr)
        return 2
    # before the run: a bad place or format is refused now, not after the frames are made
    check_distinct([("--out", args.out), ("--gif", args.gif), ("--mp4", args.mp4), ("--wav", args.wav)], args.scene,
                   args.replay)
    if args.out:
        check_frames_dir(args.out, "--out", args.force,
                         inputs=[("the scene file being run", args.scene), ("the replay log", args.replay)])
    if args.gif:
        check_file(args.gif, "--gif", (".gif",), args.force)
    if args.mp4:
        check_file(args.mp4, "--mp4", (".mp4",), args.force)
    if args.wav:  # (as checked: a name like "x.wav/" becomes the file x.wav, as --gif and --mp4 do)
        args.wav = str(check_file(args.wav, "--wav", (".wav",), args.force))
    if args.replay and args.wav:
        print("abound: error: --wav hears a scene's contacts as they are stepped; it does not take --replay",
              file=sys.stderr)
        return 2
    if args.replay:
        return _run_replay(args)
    args.frames = args.frames or 60
    args.size = args.size or (640, 480)
    fps = 1.0 / (sim.dt * args.every)
    try:
        cap = FrameCapture(args.size)
    except RenderError as exc:
        print(f"abound: error: {exc}", file=sys.stderr)
        return 2

    from abound import warmup
    warm = warmup.start(sim)  # reference steps while the fast engine compiles, where they are quick
    step = None if warm is None else (lambda contacts=False: warm.step(sim, contacts))
    soundtrack = None
    if args.wav:
        from abound.sound import Soundtrack
        soundtrack = Soundtrack(sim)
    start = sim.time
    try:
        frames = stepped_frames(sim, cap, args.frames, args.every, step,
                                listeners=[soundtrack.record] if soundtrack else [])
        status = _write(frames, args, fps)
    finally:
        cap.close()
    if status == 0 and soundtrack is not None:  # as long as the frames last at fps
        try:
            soundtrack.write_wav(args.wav, args.frames / fps, start)
        except OSError as exc:  # (a full disk: no WAV cut short is left behind)
            _remove_partial(args.wav)
            raise OutputError(f"--wav {args.wav}: cannot write it: {exc.strerror or exc}") from None
    if status == 0:
        print(f"captured {plural(args.frames, 'frame')} of {args.size[0]}x{args.size[1]} "
              f"({plural(len(sim), 'ball')}; a frame every {plural(args.every, 'step')} of {sim.dt:g} s "
              f"({args.every * sim.dt:g} s), the last at {sim.time:g} s of the scene): {_wrote(args)}")
    return status


def _run_replay(args):
    """``--replay FILE``: the frames of a recorded demo run."""
    from abound.capture import render_replay
    from abound.render.style import RenderError
    from abound.replay import ReplayError, read_replay
    unused = given((("SCENE", args.scene), ("--seed", args.seed), ("--balls", args.balls),
                    ("--every", args.every != 1)))
    if unused:
        print(f"abound: error: --replay takes the scene and timing from the log; drop {', '.join(unused)}",
              file=sys.stderr)
        return 2
    try:
        log = read_replay(args.replay)
        args.size = args.size or log.window
        asked = args.frames
        args.frames = min(asked or log.frames, log.frames)
        if not args.frames:
            print(f"abound: error: {args.replay}: the recording has no frames", file=sys.stderr)
            return 2
        if asked and asked > log.frames:  # (it had stopped short unsaid)
            print(f"abound: note: {args.replay} holds {plural(log.frames, 'frame')}: "
                  f"capturing those, not {asked:,}", file=sys.stderr)
        if log.cut_note():
            print(log.cut_note(), file=sys.stderr)
        outcome = {}
        status = _write(render_replay(log, args.size, args.frames, outcome), args, 60.0)
    except (ReplayError, RenderError) as exc:
        print(f"abound: error: {exc}", file=sys.stderr)
        return 2
    if status == 0 and outcome.get("matches") is False:  # (as abound replay says it; it had gone unsaid)
        print(f"abound: warning: {args.replay}: the replay's final state differs from the recorded one "
              f"(another machine or abound version?); its frames are written: {_wrote(args)}", file=sys.stderr)
        return 1
    if status == 0:
        print(f"captured {plural(args.frames, 'frame')} of {args.size[0]}x{args.size[1]} "
              f"from the replay {args.replay}: {_wrote(args)}")
    return status


def _wrote(args):
    stale = getattr(args, "stale_removed", 0)
    also = f" (and removed {plural(stale, 'frame')} of an earlier run there)" if stale else ""
    wrote = [f"{plural(args.frames, 'PNG')} in {args.out}{also}"] if args.out else []
    wrote += [f"GIF {args.gif}"] if args.gif else []
    wrote += [f"MP4 {args.mp4}"] if args.mp4 else []
    wrote += [f"WAV {args.wav}"] if getattr(args, "wav", None) else []
    return ", ".join(wrote)


def _remove_stale_frames(out, written):
    """Remove the numbered frames from written on that an earlier, longer run left in out
    (with --force only): a sequence that went on with another run's frames made a video of both."""
    removed = 0
    for path in out.glob("frame_*.png"):
        if (is_frame_name(path.name) and int(path.stem[len("frame_"):]) >= written
                and (path.is_symlink() or path.is_file())):  # (a link goes, not what it points to)
            path.unlink()
            removed += 1
    return removed


def _say_how_it_draws():
    """A private Xvfb (no EGL) is never started silently."""
    from abound.cli.display import private_xvfb_note
    note = private_xvfb_note()
    if note:
        print(note, file=sys.stderr)


def _write(frames, args, fps):
    """Write the frames (an iterator of RGBA arrays) to --out, --gif and --mp4; returns the exit
    status (a file that could not be written whole raises OutputError)."""
    out = Path(args.out) if args.out else None
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
    videos = [VideoWriter(path, option, fps) for option, path in (("--gif", args.gif), ("--mp4", args.mp4)) if path]
    progress = _Progress(args.frames)
    pool = ThreadPoolExecutor(max_workers=max(1, min(4, os.cpu_count() or 1)))
    pending = []
    written = 0
    try:
        try:
            for k, frame in enumerate(frames):
                written = k + 1
                if out is not None:
                    pending.append(pool.submit(_save_png, frame, out / FRAME_NAME.format(k)))
                    if len(pending) > 16:  # bound the memory held by queued frames
                        pending.pop(0).result()
                for video in videos:
                    video.add(frame)
                if k == 0:
                    _say_how_it_draws()
                progress.update(k + 1)
            for f in pending:
                f.result()
        finally:
            progress.close()
            pool.shutdown(wait=True)
        for video in videos:
            finish_video(video)
        if out is not None and args.force:
            args.stale_removed = _remove_stale_frames(out, written)
    except BaseException as exc:  # Ctrl-C or a failure: no video is left half written (one finished stays)
        for video in videos:
            video.abort()
        if isinstance(exc, _FrameNotWritten):  # (a full disk: what is left of the frames is said too)
            raise OutputError(f"{exc}; {_kept_frames(out, written)}") from None
        if not isinstance(exc, KeyboardInterrupt):
            raise
        print(_interrupted(args, out, written), file=sys.stderr)
        return 130  # (as a shell reports a run that Ctrl-C ended)
    return 0


def _kept_frames(out, handed):
    """What a capture cut short keeps of the first handed frames in out, said
    ("12 PNGs kept in DIR (frame_00000.png to frame_00011.png)"): the frames
    from the first on that were written whole. The frames are written several
    at a time, so one after a failed one may have been written: it is removed,
    and the folder holds frames 0 to k - 1 whatever the order the writes ended in."""
    kept = 0
    while kept < handed and (out / FRAME_NAME.format(kept)).is_file():
        kept += 1
    for k in range(kept + 1, handed):
        _remove_partial(out / FRAME_NAME.format(k))
    return f"{plural(kept, 'PNG')} kept in {out}" + (
        f" ({FRAME_NAME.format(0)} to {FRAME_NAME.format(kept - 1)})" if kept else "")


def _interrupted(args, out, handed):
    """The line a capture cut short by Ctrl-C ends with: what it kept and what it did not
    (a folder of frames refused by the next run, without it, left the user guessing why)."""
    said = [_kept_frames(out, handed)] if out is not None else []
    gone = [path for path in (args.gif, args.mp4, getattr(args, "wav", None)) if path]
    said += [f"{' and '.join(str(path) for path in gone)} not written"] if gone else []
    return f"abound: interrupted at frame {handed} of {args.frames}: {'; '.join(said)}"
