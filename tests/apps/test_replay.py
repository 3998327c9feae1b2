"""Record and replay: a headless demo run driven through its handlers, recorded, replayed and captured.

The replay must reproduce the recorded run bit for bit: the final positions
and velocities equal (np.array_equal) and every frame identical to the frame
the demo drew. Bad logs are one line and exit status 2.
"""
import json
import os

import numpy as np
import pytest
from PIL import Image

from abound import Simulation

pyglet = pytest.importorskip("pyglet")
from abound.capture import render_replay  # noqa: E402
from abound.cli import main  # noqa: E402
from abound.cli.demo import DemoApp, FLING_GAIN  # noqa: E402
from abound.replay import Replayer, ReplayError, read_replay  # noqa: E402

DT = 1.0 / 60.0
W, H = 240, 180
SCENE = {
    "world": {"width": W, "height": H, "gravity": [0.0, -980.0]},
    "physics": {"seed": 5, "dt": DT},
    "balls": [{"x": 60.0, "y": 120.0, "vx": 40.0, "radius": 10.0, "color": "#ff8000"},
              {"x": 170.0, "y": 60.0, "radius": 14.0, "color": "#00c0ff"}],
    "spawn": [{"count": 12, "radius": [4.0, 7.0], "speed": [50.0, 300.0], "restitution": [0.7, 1.0],
               "region": [0, 90, 240, 180]}],
    "walls": [{"x0": 20.0, "y0": 70.0, "x1": 110.0, "y1": 40.0}],
    # trails make every frame depend on the frames before it (and on when they were reset); flashes
    # on the hits of the steps before it (abound/hits.py: the demo, a replay and its capture alike)
    "render": {"background": "#000000", "shading": True, "color_mode": "speed", "trails": 0.3, "hud": False,
               "flash": True},
}


def key(app, symbol):
    app.on_key_press(symbol, 0)


def text(app, chars):
    app.on_text(chars)  # (+ and - come as text: the demo's on_text)


def click(app, x, y, button):
    app.on_mouse_press(x, y, button, 0)


def fling(app, x0, y0, x1, y1):
    mouse = pyglet.window.mouse
    app.on_mouse_press(x0, y0, mouse.LEFT, 0)
    app.on_mouse_drag((x0 + x1) // 2, (y0 + y1) // 2, 1, 1, mouse.LEFT, 0)
    app.on_mouse_release(x1, y1, mouse.LEFT, 0)


def pin_ball(app, i):
    """Right-click the centre of ball i (the box is drawn scaled into the window after a resize)."""
    from abound.render.style import fit_transform, world_to_image
    xf = fit_transform(app.sim.width, app.sim.height, W, H)
    u, v = world_to_image(app.sim.positions[i], xf, H)
    click(app, int(round(u)), int(round(H - v)), pyglet.window.mouse.RIGHT)


def single_step(app):
    key(app, pyglet.window.key.RIGHT)


single_step.steps = 1  # the only input that takes a physics step itself


def script():
    """Per frame: (inputs before the tick, elapsed seconds for the tick, inputs after it)."""
    k = pyglet.window.key
    frames = [([], DT, []) for _ in range(40)]
    elapsed = [DT, 0.5 * DT, 0.5 * DT, 2.5 * DT, 10.0, DT, 0.0, 3 * DT]  # 0 to 4 (capped) steps a frame
    for i in range(len(frames)):
        frames[i] = ([], elapsed[i % len(elapsed)], [])
    frames[2][0].append(lambda a: key(a, k.G))                   # flip gravity
    frames[3][2].append(lambda a: key(a, k.LEFT))                # tilt, after the frame's steps
    frames[4][0].extend([lambda a: key(a, k.UP), lambda a: key(a, k.UP), lambda a: key(a, k.DOWN)])
    frames[5][0].append(lambda a: text(a, "+"))                  # a random ball
    frames[6][2].append(lambda a: fling(a, 40, 150, 90, 120))    # fling
    frames[7][0].append(lambda a: key(a, k.SPACE))               # pause...
    frames[8][0].append(single_step)                             # ...one step...
    frames[9][0].extend([single_step, single_step])
    frames[10][0].append(lambda a: key(a, k.SPACE))              # ...resume
    frames[11][0].append(lambda a: pin_ball(a, 1))               # pin
    frames[13][2].append(lambda a: key(a, k.T))                  # bisection TOI
    frames[14][0].append(lambda a: key(a, k.B))                  # reference backend
    frames[16][0].extend([lambda a: key(a, k.B), lambda a: key(a, k.T)])  # back to fast, analytic
    frames[17][0].append(lambda a: a.on_resize(200, 170))        # the box shrinks
    frames[19][0].append(lambda a: text(a, "-"))                 # remove the last ball
    frames[20][0].append(lambda a: pin_ball(a, 1))               # unpin
    frames[22][0].append(lambda a: key(a, k.R))                  # reset (the box stays)
    frames[24][2].append(lambda a: text(a, "="))                 # another random ball
    frames[26][0].append(lambda a: a.on_resize(260, 190))        # the box grows
    frames[28][0].append(lambda a: key(a, k.RIGHT))              # tilt right
    return frames


def record(path):
    """Run the scripted demo, recording to ``path``.

    Returns the frames drawn, the final positions and velocities, and (counted
    here, from the ticks) the steps each frame took and the step before each input.
    """
    # the box follows the window, as for a scene of random balls only (this one has walls and
    # explicit balls, a fixed picture, whose box would keep its size): resizes are inputs to log
    app = DemoApp(Simulation.from_config(SCENE), headless=True, visible=False, vsync=False, record=str(path),
                  box_follows_window=True)
    drawn, frame_steps, stamps, steps = [], [], [], 0
    try:
        for before, elapsed, after in script():
            start = steps
            for f in before + [None] + after:
                if f is None:
                    steps += app.tick(elapsed)
                else:
                    stamps.append(steps)
                    f(app)
                    steps += getattr(f, "steps", 0)
            app.on_draw()
            drawn.append(app.read_frame())
            frame_steps.append(steps - start)
        pos, vel = app.sim.positions.copy(), app.sim.velocities.copy()
    finally:
        app.close()
    return drawn, pos, vel, frame_steps, stamps


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    path = tmp_path_factory.mktemp("replay") / "run.jsonl"
    return (path,) + record(path)


def test_the_log_holds_the_scene_and_every_input_at_its_step(recorded):
    path, drawn, pos, vel, frame_steps, stamps = recorded
    lines = [json.loads(t) for t in path.read_text().splitlines()]
    header, body, end = lines[0], lines[1:-1], lines[-1]
    assert header["abound_replay"] == 1 and header["window"] == [W, H] and header["dt"] == DT
    assert header["scene"] == Simulation.from_config(SCENE).scene
    frames = [r for r in body if "frame" in r]
    assert [r["frame"] for r in frames] == list(range(len(drawn)))
    # the steps of each frame: what its tick's elapsed time called for (capped at 4), plus single steps
    assert [r["steps"] for r in frames] == frame_steps and 0 in frame_steps and 4 in frame_steps
    assert end["steps"] == sum(frame_steps) and end["frames"] == len(drawn)
    kinds = [r["do"] for r in body if "do" in r]
    assert kinds == ["gravity", "gravity", "gravity", "gravity", "gravity", "add", "fling", "pause", "step",
                     "step", "step", "pause", "pin", "ball_toi", "backend", "backend", "ball_toi", "resize", "remove", "pin",
                     "reset", "add", "resize", "gravity"]
    fl = next(r for r in body if r.get("do") == "fling")
    assert (fl["x"], fl["y"]) == (40.0, 150.0)
    assert (fl["vx"], fl["vy"]) == (FLING_GAIN * 50.0, FLING_GAIN * -30.0)
    # each input is stamped with the number of steps taken before it
    assert [r["step"] for r in body if "do" in r] == stamps


def test_replay_reproduces_the_run_bit_for_bit(recorded):
    path, drawn, pos, vel, frame_steps, stamps = recorded
    log = read_replay(path)
    assert log.frames == len(drawn) and log.steps == sum(frame_steps)
    r = Replayer(log)
    n = 0
    while r.next_frame():
        n += 1
    assert n == len(drawn) and r.done and r.matches
    assert np.array_equal(r.control.sim.positions, pos)
    assert np.array_equal(r.control.sim.velocities, vel)
    assert r.control.steps == sum(frame_steps)


def test_replay_window_draws_the_recorded_frames(recorded):
    path, drawn, pos, vel, frame_steps, stamps = recorded
    replayer = Replayer(read_replay(path))
    app = DemoApp(replay=replayer, headless=True, visible=False, vsync=False)
    try:
        k = pyglet.window.key
        app.on_key_press(k.G, 0)  # a replay ignores inputs that would change the run
        app.on_resize(100, 100)
        shown = []
        for steps in frame_steps:
            app.on_draw()
            shown.append(app.read_frame())
            assert app.stats["steps"] == steps  # what the HUD says: the frame's steps, as recorded
        assert np.array_equal(app.sim.positions, pos) and np.array_equal(app.sim.velocities, vel)
        app.on_draw()  # the log has ended: a headless replay stops
        assert replayer.done and replayer.matches and app.closing
    finally:
        app.close()
    for k, (a, b) in enumerate(zip(shown, drawn)):
        assert np.array_equal(a, b), f"frame {k} differs"


def test_capture_of_a_replay_equals_the_demo_frames(recorded, tmp_path):
    path, drawn, pos, vel, frame_steps, stamps = recorded
    frames = list(render_replay(path))
    assert len(frames) == len(drawn)
    for k, (a, b) in enumerate(zip(frames, drawn)):
        assert np.array_equal(a, b), f"frame {k} differs"
    # the command writes the same frames as PNGs
    out = tmp_path / "frames"
    assert main(["capture", "--replay", str(path), "--out", str(out), "--frames", "12"]) == 0
    pngs = sorted(out.glob("frame_*.png"))
    assert len(pngs) == 12
    for k, p in enumerate(pngs):
        assert np.array_equal(np.asarray(Image.open(p)), drawn[k]), f"frame {k} differs"


def test_capture_of_a_replay_asked_for_more_frames_than_it_holds_says_so(recorded, tmp_path, capsys):
    # a new-user trial: --frames 1000 of a shorter log wrote what it holds, unsaid
    path = recorded[0]
    frames = read_replay(path).frames
    capsys.readouterr()
    assert main(["capture", "--replay", str(path), "--out", str(tmp_path / "f"), "--frames", "1000"]) == 0
    err = capsys.readouterr().err
    assert err == f"abound: note: {path} holds {frames} frames: capturing those, not 1,000\n"
    assert len(list((tmp_path / "f").glob("frame_*.png"))) == frames


def test_capture_of_a_replay_that_ends_elsewhere_says_so(recorded, tmp_path, capsys):
    # a new-user trial: abound replay warned (status 1) where the final state differs
    # from the recorded one, capture --replay wrote the frames and said nothing
    path = recorded[0]
    lines = path.read_text().splitlines()
    end = json.loads(lines[-1])
    assert end.get("end") is True
    end["state"] = "0" * len(end["state"])  # a digest no state has
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines[:-1] + [json.dumps(end)]) + "\n")
    frames = read_replay(bad).frames
    capsys.readouterr()
    assert main(["capture", "--replay", str(bad), "--out", str(tmp_path / "b")]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert err.startswith(f"abound: warning: {bad}: the replay's final state differs from the recorded one")
    assert len(list((tmp_path / "b").glob("frame_*.png"))) == frames  # (written all the same)
    # the log as recorded: status 0, no warning
    assert main(["capture", "--replay", str(path), "--out", str(tmp_path / "g")]) == 0
    assert capsys.readouterr().err == ""


def test_demo_record_then_replay_commands(tmp_path, capsys):
    log = tmp_path / "cli.jsonl"
    assert main(["demo", "drop", "--frames", "5", "--headless", "--record", str(log)]) == 0
    assert read_replay(log).frames == 5
    capsys.readouterr()
    assert main(["replay", str(log), "--headless"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    # a replay that ran to its end says so (it had been silent): the 5 recorded frames
    assert out == f"replayed 5 frames of {log}: the final state matches the recorded one\n"
    # one stopped short says so, and that nothing was compared (it had printed nothing)
    assert main(["replay", str(log), "--headless", "--frames", "2"]) == 0
    out, err = capsys.readouterr()
    assert (out, err) == (f"replayed 2 of the 5 recorded frames of {log}: stopped before the end, "
                          f"so the final state was not compared\n", "")
    # --frames as many as there are: the end is read and compared
    assert main(["replay", str(log), "--headless", "--frames", "5"]) == 0
    assert capsys.readouterr() == (f"replayed 5 frames of {log}: the final state matches the recorded one\n", "")


def _bad_logs(good):
    lines = good.read_text().splitlines(keepends=True)
    header = json.loads(lines[0])
    cut = good.read_text()
    spawn = [dict(header["scene"]["spawn"][0], seed=99)]
    other_scene = dict(header, scene=dict(header["scene"], spawn=spawn))
    yield "cut in its header", cut[:len(lines[0]) // 2]
    yield "a cut line after the end record", cut + '{"frame": 9'  # (not a log cut short: a whole one, then junk)
    yield "cut before its first frame", lines[0] + cut[len(lines[0]):].split('{"frame"')[0]
    yield "a bad line that is not the last", lines[0] + lines[1][:-10] + "\n" + "".join(lines[2:])
    yield "empty", ""
    yield "not a log", "hello\n"
    yield "a scene file", '[world]\nwidth = 100\n'
    yield "a newer format", json.dumps(dict(header, abound_replay=7)) + "\n" + "".join(lines[1:])
    yield "unknown action", lines[0] + '{"step": 0, "do": "explode"}\n' + "".join(lines[1:])
    yield "step back in time", "".join(lines[:-1]) + '{"step": 0, "do": "reset"}\n' + lines[-1]
    yield "NaN gravity", lines[0] + '{"step": 0, "do": "gravity", "g": [NaN, 1.0]}\n' + "".join(lines[1:])
    yield "another seed", json.dumps(other_scene) + "\n" + "".join(lines[1:])
    yield "pin of a ball that is not there", (lines[0] + '{"step": 0, "do": "pin", "ball": 999, "pinned": true}\n'
                                              + "".join(lines[1:]))
    yield "a ball added outside the box", (lines[0] + OUTSIDE + "".join(lines[1:]))


# a well-formed action that only the state at its step can refuse: the box is 240x180
OUTSIDE = '{"step": 0, "do": "add", "x": 5000.0, "y": 50.0, "vx": 0.0, "vy": 0.0, "radius": 5.0}\n'


def test_bad_logs_are_one_line_and_status_2(recorded, tmp_path, capsys):
    path = recorded[0]
    for what, text in _bad_logs(path):
        bad = tmp_path / "bad.jsonl"
        bad.write_text(text)
        for argv in (["replay", str(bad), "--headless"], ["capture", "--replay", str(bad), "--out", str(tmp_path)]):
            assert main(argv) == 2, what
            err = capsys.readouterr().err
            assert err.startswith(f"abound: error: {bad}") and err.count("\n") == 1, (what, err)
    assert main(["replay", str(tmp_path / "missing.jsonl")]) == 2
    assert "no such file" in capsys.readouterr().err


def _cut_logs(good):
    """(what, text, whole frames left) for the log cut short as a crash would leave it: after a
    frame record, within the record after it, and just before the end record (whose digest is lost)."""
    text = good.read_text()
    lines = text.splitlines(keepends=True)
    frame_lines = [k for k, t in enumerate(lines) if t.startswith('{"frame"')]
    half = len(frame_lines) // 2
    k, after = frame_lines[half], frame_lines[half + 1]
    yield "after a frame record", "".join(lines[:k + 1]), half + 1
    yield "in the middle of a line", "".join(lines[:after]) + lines[after][:7], half + 1
    yield "before the end record", "".join(lines[:-1]), len(frame_lines)
    # an input after the last whole frame is not applied: no frame shows it (the one after was lost)
    acted = next(f for f in frame_lines if lines[f + 1].startswith('{"step"') and '"do":"add"' in lines[f + 1])
    yield "after an input", "".join(lines[:acted + 2]), frame_lines.index(acted) + 1


def test_a_log_cut_short_replays_its_whole_frames(recorded, tmp_path, capsys):
    # the demo killed, or its X server gone, leaves no end record: the frames it
    # recorded still replay, bit for bit the frames and states of the whole log's replay
    path, drawn = recorded[0], recorded[1]
    for what, text, frames in _cut_logs(path):
        cut = tmp_path / "cut.jsonl"
        cut.write_text(text)
        log = read_replay(cut)
        assert log.frames == frames and log.final is None, what
        r = Replayer(log)
        shown = 0
        while r.next_frame():
            shown += 1
        assert shown == frames and r.done and r.matches is None, what
        whole = Replayer(read_replay(path))
        for _ in range(frames):
            whole.next_frame()
        assert len(r.control.sim) == len(whole.control.sim), what
        assert list(r.control.sim.gravity) == list(whole.control.sim.gravity), what
        assert np.array_equal(r.control.sim.positions, whole.control.sim.positions), what
        assert np.array_equal(r.control.sim.velocities, whole.control.sim.velocities), what
        assert r.control.steps == whole.control.steps == sum(recorded[4][:frames]), what
        # the commands replay it, saying once that there is nothing to compare at the end
        capsys.readouterr()
        assert main(["replay", str(cut), "--headless"]) == 0, what
        out, err = capsys.readouterr()
        assert out == "" and err.count("\n") == 1 and "cut short" in err and f"after {frames} recorded frames" in err
        out_dir = tmp_path / what.replace(" ", "_")
        assert main(["capture", "--replay", str(cut), "--out", str(out_dir)]) == 0, what
        pngs = sorted(out_dir.glob("frame_*.png"))
        assert len(pngs) == frames, what
        assert np.array_equal(np.asarray(Image.open(pngs[-1])), drawn[frames - 1]), what


def test_an_action_the_state_refuses_names_the_log_line(recorded, tmp_path):
    lines = recorded[0].read_text().splitlines(keepends=True)
    bad = tmp_path / "outside.jsonl"
    bad.write_text(lines[0] + OUTSIDE + "".join(lines[1:]))  # line 2 of the file
    replayer = Replayer(read_replay(bad))
    with pytest.raises(ReplayError) as info:
        while replayer.next_frame():
            pass
    message = str(info.value)
    assert message.startswith(f"{bad}: line 2: action 'add' at step 0: ") and "box" in message, message


def test_a_log_that_cannot_be_written_names_itself(tmp_path, capsys):
    # a full disk under --record had said "abound: error: No space left on device", naming no file
    # (/dev/full: every write fails with ENOSPC, as on a full disk)
    from abound.replay import ReplayWriter
    sim = Simulation.from_config(SCENE)
    writer = ReplayWriter("/dev/full", sim, (W, H))
    with pytest.raises(OSError) as info:
        writer.frame(1)
    assert info.value.filename == "/dev/full" and "No space left" in str(info.value)
    # (no frame was written: the log is given up at once, and /dev/full, no regular file, stays)
    assert str(info.value) == "[Errno 28] cannot write the replay log: No space left on device: '/dev/full'"
    writer.close(sim, 1)  # (closed: close does nothing)
    assert os.path.exists("/dev/full")


def test_a_log_whose_disk_filled_after_some_frames_holds_just_those_when_space_comes_back(tmp_path):
    # a frame's write fails (ENOSPC) after 3 whole frames; the space comes back before the
    # demo ends: the log must hold the 3 frames the error line promised, whole, and no
    # end record counting a 4th (a review: close() wrote the failed frame and an end record)
    import errno
    from abound.replay import ReplayWriter
    sim = Simulation.from_config(SCENE)
    path = tmp_path / "r.jsonl"
    writer = ReplayWriter(path, sim, (W, H))
    for k in range(3):
        sim.step()
        writer.frame(k + 1)
    real = writer._file

    class Full:  # the file as a full disk makes it: every flush fails
        def __getattr__(self, name):
            return getattr(real, name)

        def flush(self):
            raise OSError(errno.ENOSPC, "No space left on device")
    writer._file = Full()
    sim.step()
    with pytest.raises(OSError) as info:
        writer.frame(4)
    assert "it replays its first 3 frames" in str(info.value)
    writer.close(sim, 4)  # (the demo's ending: nothing more is written)
    log = read_replay(path)
    assert (log.frames, log.final) == (3, None)


@pytest.mark.parametrize("radius", [1e-12, 0.0, -1.0])
def test_an_added_ball_smaller_than_a_scene_may_hold_is_refused_by_its_line(recorded, tmp_path, radius):
    # a scene's radius is at least 1e-9 px (MIN_POSITIVE): a hand-edited log's 1e-12 was taken,
    # and the run ended only in "the final state differs"
    lines = recorded[0].read_text().splitlines(keepends=True)
    bad = tmp_path / "tiny.jsonl"
    add = {"step": 0, "do": "add", "x": 50.0, "y": 50.0, "vx": 0.0, "vy": 0.0, "radius": radius}
    bad.write_text(lines[0] + json.dumps(add) + "\n" + "".join(lines[1:]))
    with pytest.raises(ReplayError) as info:
        read_replay(bad)
    message = str(info.value)
    assert message.startswith(f"{bad}: line 2: ") and "the radius must be in [1e-09, " in message, message
