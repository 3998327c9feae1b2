"""``abound replay FILE``: show a run recorded with ``abound demo --record FILE`` again.

The demo window, driven by the log instead of the user: the same scene and
settings, every recorded input applied at the physics step it was made, and
each drawn frame after the same number of steps as in the recording, so the
run is reproduced bit for bit on the same machine. Keys only quit (Esc, Q),
toggle the HUD (H), switch the clicks (M), go fullscreen (F) or save a screenshot (S). At the end of
the log the last frame stays up (with ``--headless`` the command ends); a
final state that differs from the recorded one is reported. A log cut short
(no end record) replays up to its last frame, with a note that there is no
final state to compare.
"""
import sys
from abound.cli.args import count, file_name, plural




def add_arguments(parser):
    parser.add_argument("file", type=file_name, metavar="FILE", help="a replay log written by 'abound demo --record FILE'")
    parser.add_argument("--frames", type=count(1), metavar="N", help="quit after N frames")
    parser.add_argument("--headless", action="store_true",
                        help="draw offscreen (EGL) with no display; ends with the log")


def run(args):
    from abound.replay import Replayer, ReplayError, read_replay
    from abound.render.style import RenderError
    try:
        log = read_replay(args.file)
        replayer = Replayer(log)
    except ReplayError as exc:
        print(f"abound: error: {exc}", file=sys.stderr)
        return 2
    if log.cut_note():
        print(log.cut_note(), file=sys.stderr)
    from abound.cli.demo import DemoApp, exit_status
    try:
        app = DemoApp(replay=replayer, headless=True if args.headless else None, frames=args.frames)
    except RenderError as exc:
        print(f"abound: error: {exc}", file=sys.stderr)
        return 2
    app.start_warmup()  # (a replay waits for the compiler: on a cold cache it says so)
    try:
        app.run()
    except (ReplayError, RenderError) as exc:
        print(f"abound: error: {exc}", file=sys.stderr)
        return 2
    if not replayer.done and replayer.frames == log.frames:
        replayer.next_frame()  # (--frames N of N: only the end record is left to read and compare)
    if replayer.done and replayer.matches is False:
        print(f"abound: warning: {args.file}: the replay's final state differs from the recorded one "
              f"(another machine or abound version?)", file=sys.stderr)
        return 1
    if replayer.done and replayer.matches:
        print(f"replayed {plural(replayer.frames, 'frame')} of {args.file}: the final state matches the recorded one")
    elif not replayer.done:  # (--frames, or the window closed: it had said nothing)
        print(f"replayed {replayer.frames} of the {log.frames} recorded frames of {args.file}: stopped before "
              f"the end, so the final state was not compared")
    return exit_status(app)
