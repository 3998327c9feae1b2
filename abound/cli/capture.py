"""``abound capture [SCENE] --frames N --out DIR``: render a scene headlessly to PNGs, a GIF or an MP4.

Frame k is the scene after ``k * every`` steps of its fixed dt (frame 0: as
built). With ``--replay FILE`` (a log of ``abound demo --record``) frame k is
the state the demo drew in its k-th frame, at the recorded window's size. PNGs are written by worker threads, off the render loop. No display
is needed (EGL, else Xvfb); see :mod:`abound.capture`.
"""
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from abound.cli.args import count, image_size


def add_arguments(parser):
    parser.add_argument("scene", nargs="?", metavar="SCENE",
                        help="scene file or shipped scene name (default: the embedded default scene)")
    parser.add_argument("--replay", metavar="FILE",
                        help="render a run recorded with 'abound demo --record FILE' instead of a scene")
    parser.add_argument("--frames", type=count(1), metavar="N",
                        help="frames to write (default 60; with --replay, every recorded frame)")
    parser.add_argument("--out", metavar="DIR", help="directory for the numbered PNGs frame_00000.png, ...")
    parser.add_argument("--every", type=count(1), default=1, metavar="K",
                        help="physics steps between written frames (default 1)")
    parser.add_argument("--size", type=image_size, metavar="WxH",
                        help="frame size in pixels (default 640x480, with --replay the recorded window's; "
                             "the box is scaled to fit)")
    parser.add_argument("--seed", type=count(0), metavar="S", help="override the scene's seeds")
    parser.add_argument("--balls", type=count(1), metavar="N", help="total number of random ([[spawn]]) balls")
    parser.add_argument("--gif", metavar="FILE", help="also write an animated GIF (Pillow)")
    parser.add_argument("--mp4", metavar="FILE", help="also write an MP4 video (needs ffmpeg on the PATH)")


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
    from PIL import Image
    Image.fromarray(frame, "RGBA").save(path, compress_level=1)


def _ffmpeg_writer(path, size, fps):
    w, h = size
    cmd = [shutil.which("ffmpeg"), "-y", "-loglevel", "error", "-f", "rawvideo", "-pix_fmt", "rgba",
           "-s", f"{w}x{h}", "-r", f"{fps:.6g}", "-i", "-",
           "-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2", "-c:v", "libx264", "-pix_fmt", "yuv420p", str(path)]
    return subprocess.Popen(cmd, stdin=subprocess.PIPE)


def run(args):
    from abound.capture import FrameCapture, stepped_frames
    from abound.render.style import RenderError
    if not (args.out or args.gif or args.mp4):
        print("abound: error: say where the frames go: --out DIR, --gif FILE and/or --mp4 FILE", file=sys.stderr)
        return 2
    if args.mp4 and shutil.which("ffmpeg") is None:
        print("abound: error: --mp4 needs ffmpeg on the PATH (Debian/Ubuntu: apt-get install ffmpeg); "
              "use --out or --gif without it", file=sys.stderr)
        return 2
    if args.replay:
        return _run_replay(args)
    from abound import Simulation
    sim = Simulation.from_config(args.scene, seed=args.seed, balls=args.balls)
    args.frames = args.frames or 60
    args.size = args.size or (640, 480)
    fps = 1.0 / (sim.dt * args.every)
    try:
        cap = FrameCapture(args.size)
    except RenderError as exc:
        print(f"abound: error: {exc}", file=sys.stderr)
        return 2

    try:
        status = _write(stepped_frames(sim, cap, args.frames, args.every), args, fps)
    finally:
        cap.close()
    if status == 0:
        print(f"captured {args.frames} frames of {args.size[0]}x{args.size[1]} "
              f"({len(sim)} balls, {args.every} step(s) of {sim.dt:g} s each): {_wrote(args)}")
    return status


def _run_replay(args):
    """``--replay FILE``: the frames of a recorded demo run."""
    from abound.capture import render_replay
    from abound.render.style import RenderError
    from abound.replay import ReplayError, read_replay
    given = [opt for opt, v in (("SCENE", args.scene), ("--seed", args.seed), ("--balls", args.balls),
                                ("--every", args.every != 1)) if v]
    if given:
        print(f"abound: error: --replay takes the scene and timing from the log; drop {', '.join(given)}",
              file=sys.stderr)
        return 2
    try:
        log = read_replay(args.replay)
        args.size = args.size or log.window
        args.frames = min(args.frames or log.frames, log.frames)
        if not args.frames:
            print(f"abound: error: {args.replay}: the recording has no frames", file=sys.stderr)
            return 2
        status = _write(render_replay(log, args.size, args.frames), args, 60.0)
    except (ReplayError, RenderError) as exc:
        print(f"abound: error: {exc}", file=sys.stderr)
        return 2
    if status == 0:
        print(f"captured {args.frames} frames of {args.size[0]}x{args.size[1]} "
              f"from the replay {args.replay}: {_wrote(args)}")
    return status


def _wrote(args):
    wrote = [f"{args.frames} PNGs in {args.out}"] if args.out else []
    wrote += [f"GIF {args.gif}"] if args.gif else []
    wrote += [f"MP4 {args.mp4}"] if args.mp4 else []
    return ", ".join(wrote)


def _write(frames, args, fps):
    """Write the frames (an iterator of RGBA arrays) to --out, --gif and --mp4; returns the exit status."""
    out = Path(args.out) if args.out else None
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
    gif_frames = [] if args.gif else None
    video = _ffmpeg_writer(args.mp4, args.size, fps) if args.mp4 else None
    progress = _Progress(args.frames)
    pool = ThreadPoolExecutor(max_workers=max(1, min(4, os.cpu_count() or 1)))
    pending = []
    try:
        for k, frame in enumerate(frames):
            if out is not None:
                pending.append(pool.submit(_save_png, frame, out / f"frame_{k:05d}.png"))
                if len(pending) > 16:  # bound the memory held by queued frames
                    pending.pop(0).result()
            if gif_frames is not None:
                gif_frames.append(frame)
            if video is not None:
                video.stdin.write(frame.tobytes())
            progress.update(k + 1)
        for f in pending:
            f.result()
    finally:
        progress.close()
        pool.shutdown(wait=True)
        if video is not None:
            video.stdin.close()
            video.wait()
    if gif_frames:
        from PIL import Image
        images = [Image.fromarray(f[..., :3]) for f in gif_frames]
        images[0].save(args.gif, save_all=True, append_images=images[1:], loop=0,
                       duration=max(20, int(round(1000.0 / fps))), optimize=False)
    if video is not None and video.returncode != 0:
        print(f"abound: error: ffmpeg failed writing {args.mp4} (status {video.returncode})", file=sys.stderr)
        return 2
    return 0
