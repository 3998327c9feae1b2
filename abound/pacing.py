"""How many fixed physics steps a frame takes, and how far the simulation had to slow down.

The physics steps a fixed dt (the scene's); a frame runs as many steps as
the wall-clock time since the last one calls for. On a machine too slow for
that, taking them all would make the next frame longer still, which calls
for more steps: the loop spirals until it sits at its cap, every frame as
slow as it can be. :class:`Pacer` instead gives the physics a budget per
frame, the time the frame takes anyway, and takes no more steps than the
measured cost of a step fits into it (at least one, so the picture always
moves): a machine too slow for real time shows the simulation in slow motion,
smoothly, and the frame rate holds. ``speed`` says by how much (simulated
seconds per wall-clock second, smoothed), for the HUD.

The budget: with the physics on its own thread beside the drawing
(``overlapped``), a frame takes the longer of the two, so the physics may use
the display's interval or the drawing's time, whichever is longer; run one
after the other, only what the drawing leaves of the interval.
:class:`LoopChooser` picks between the two ways by timing both. GL-free.
"""
import collections
import statistics

MAX_STEPS_PER_FRAME = 4   # even on a fast machine: a long stall (a dragged window) is not caught up
SMOOTHING = 0.1           # weight of the newest frame in the running mean of the drawing's cost
COSTS_KEPT = 9            # batches of steps whose median cost is a step's cost
SPEED_WINDOW = 0.5        # s of wall-clock time over which ``speed`` is measured
SLOW = 0.97               # speeds below this are reported as slow motion


class Pacer:
    """Turns elapsed wall-clock time into a number of fixed steps.

    dt: seconds per step. interval: the display's frame interval (s).
    overlapped: whether the steps run beside the drawing (a worker thread).
    """

    def __init__(self, dt, interval=1.0 / 60.0, overlapped=True, max_steps=MAX_STEPS_PER_FRAME):
        self.dt, self.interval, self.overlapped, self.max_steps = dt, interval, overlapped, max_steps
        self.accumulator = 0.0   # wall-clock seconds not yet simulated
        self.step_seconds = None  # one step's cost, s (None: not measured yet)
        self._costs = collections.deque(maxlen=COSTS_KEPT)
        self.draw_seconds = 0.0   # running mean of one frame's drawing
        self.speed = 1.0          # simulated seconds per wall-clock second, over the last window
        self._window = [0.0, 0.0]  # wall-clock and simulated seconds of the current window

    def reset(self):
        """Forget the backlog (after a pause or a reset: no catching up on the time away)."""
        self.accumulator = 0.0
        self._window = [0.0, 0.0]

    def budget(self):
        """Seconds of physics a frame may take without making the frame longer."""
        if self.overlapped:
            return max(self.interval, self.draw_seconds)
        return max(self.interval - self.draw_seconds, 0.0)

    def affordable(self):
        """Steps that fit the budget (at least 1, at most max_steps)."""
        if not self.step_seconds:
            return self.max_steps
        return max(1, min(self.max_steps, int(self.budget() / self.step_seconds)))

    def steps(self, elapsed):
        """Steps to take for ``elapsed`` wall-clock seconds since the last call.

        When fewer are affordable than are due, the rest of the backlog is
        dropped (the simulation falls behind the clock instead of racing to
        catch up) and ``speed`` falls accordingly.
        """
        self.accumulator += elapsed
        due = int(self.accumulator / self.dt + 1e-9)
        steps = min(due, self.affordable())
        if steps < due:
            self.accumulator = 0.0
        else:
            self.accumulator -= steps * self.dt
        window = self._window
        window[0] += elapsed
        window[1] += steps * self.dt
        if window[0] >= SPEED_WINDOW:
            self.speed = min(window[1] / window[0], 1.0)
            self._window = [0.0, 0.0]
        return steps

    def took_steps(self, steps, seconds):
        """The physics took ``seconds`` for ``steps`` steps (measured where they ran). A step's
        cost is the median of the last COSTS_KEPT batches' (a first step that loads the
        compiled engine, or one slow batch, does not starve the frames that follow)."""
        if steps > 0:
            self._costs.append(seconds / steps)
            self.step_seconds = statistics.median(self._costs)

    def took_draw(self, seconds):
        """A frame's drawing took ``seconds``."""
        self.draw_seconds += SMOOTHING * (seconds - self.draw_seconds)

    @property
    def slowed(self):
        """Whether the simulation runs visibly slower than real time."""
        return self.speed < SLOW


TRIAL_FRAMES = 60    # frames each way of running is timed in a trial
SETTLE_FRAMES = 10   # frames after a switch left out of the timing (the first batch crosses over)
HOLD_SECONDS = 30.0  # how long the better way runs before the next trial (a scene changes as it runs)
MARGIN = 0.03        # the serial loop must give this much more frames a second to be chosen
GAP = 0.25           # s: a longer frame is a break (a stall, a paused loop), not timed


class LoopChooser:
    """Whether the steps run beside the drawing (pipelined) or before it: whichever gives more
    frames a second on this machine, found by timing both in turn.

    Where the physics and the drawing have a core each, running them side by side
    hides the shorter of the two; where they share what is in effect one core (this
    two-vCPU machine: the hot gas pipelined ran at 35-44 frames a second, serially at
    39-47; the Galton board pipelined at 53-57 against 46-50; BENCHMARKS.md), the two
    contend and side by side is slower. Both ways give the same states bit for bit,
    so switching costs nothing but the wait for the steps in flight. The trial
    runs each way for TRIAL_FRAMES frames, keeps the better (pipelined unless the
    serial loop is MARGIN faster) for HOLD_SECONDS, then tries again. GL-free.
    """

    def __init__(self, pipelined=True):
        self.pipelined = pipelined
        self.tried = {}  # way (True: pipelined) -> frames a second in the last trial
        self._start_trial()

    def _start_trial(self):
        self.tried = {}
        self._frames, self._seconds = -SETTLE_FRAMES, 0.0
        self._last = None
        self._held_since = None

    def frame(self, now):
        """A frame was drawn at wall-clock time ``now`` (s); returns the way to run the next one."""
        last, self._last = self._last, now
        if self._held_since is not None:
            if now - self._held_since >= HOLD_SECONDS:
                self._start_trial()
                self._last = now
            return self.pipelined
        if last is None or now - last > GAP:
            return self.pipelined
        self._frames += 1
        if self._frames > 0:
            self._seconds += now - last
        if self._frames < TRIAL_FRAMES:
            return self.pipelined
        self.tried[self.pipelined] = self._frames / self._seconds
        if len(self.tried) < 2:
            self.pipelined = not self.pipelined  # now the other way
            self._frames, self._seconds = -SETTLE_FRAMES, 0.0
        else:
            self.pipelined = self.tried[False] <= (1.0 + MARGIN) * self.tried[True]
            self._held_since = now
        return self.pipelined
