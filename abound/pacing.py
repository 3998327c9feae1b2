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
after the other, only what the drawing leaves of the interval. GL-free.
"""
MAX_STEPS_PER_FRAME = 4   # even on a fast machine: a long stall (a dragged window) is not caught up
SMOOTHING = 0.1           # weight of the newest frame in the running means of the costs
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
        self.step_seconds = None  # running mean of one step's cost (None: not measured yet)
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
        """The physics took ``seconds`` for ``steps`` steps (measured where they ran)."""
        if steps > 0:
            cost = seconds / steps
            self.step_seconds = cost if self.step_seconds is None else \
                self.step_seconds + SMOOTHING * (cost - self.step_seconds)

    def took_draw(self, seconds):
        """A frame's drawing took ``seconds``."""
        self.draw_seconds += SMOOTHING * (seconds - self.draw_seconds)

    @property
    def slowed(self):
        """Whether the simulation runs visibly slower than real time."""
        return self.speed < SLOW
