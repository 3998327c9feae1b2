"""An instant start: the reference engine steps while the fast one compiles in the background.

The fast backend is the engine's source compiled by numba (backends.py). On a
cold cache - the first run after an install or an upgrade - compiling it
takes about a minute; loaded from numba's cache it takes a fraction of a
second. A window must not sit frozen meanwhile. So the windowed commands
build their simulation on ``reference`` (the same source as plain Python:
the same results, bit for bit) when it asked for ``fast``, and a
:class:`Warmup` gets the fast engine ready on a thread of its own, calling
every function of it that abound calls from Python on a small scene of its
own (:func:`exercise`), so that nothing is left to compile when the
simulation switches. What must be compiled, a child process compiles into
numba's cache (:func:`compile_here`); the thread only loads from the cache. :meth:`Warmup.switch` moves the simulation to ``fast``
between two steps once it is ready: the two backends share the ball arrays,
so nothing is copied and nothing moves.

Until then the reference engine runs the scene as fast as it can, which
for a big scene is slowly: :meth:`Warmup.steps` allows one step per frame,
and none at all when a step of the reference engine takes longer than
``SLOW_STEP`` (measured; a scene of more than ``FIRST_STEP_BALLS`` balls
does not try one), or when the step would first push deep overlaps apart
(``SETTLE_OVERLAP``: a window smaller than the scene's box squeezes it), so
that the window keeps drawing and answering.

Why a child process: the compiler is mostly Python and would hold this
process's interpreter lock against the drawing (each slowed the other:
190 s to the fast engine instead of 50), and a process must not exit while
one of its threads runs LLVM code (it crashed in LLVM's destructors). The
child dies with its parent; at exit the loading thread is waited for
(:func:`stop_all`). GL-free, like the rest of abound.physics.
"""
import sys
import threading
import time

import numpy as np

MESSAGE = "compiling the fast engine (first run only)"
# what a run that ends while the child compiles says: numba caches each function as it is compiled
CUT_SHORT = "what was compiled is kept and the next run goes on with the rest"
_compiled = False  # a Warmup of this process has the fast engine ready
SLOW_STEP = 0.25         # s: a reference step slower than this waits for the fast engine
FIRST_STEP_BALLS = 5000  # more balls: not even one reference step is tried (a hot gas of 10,000 takes ~2 s)
# overlaps to push apart before the next step (after a resize that squeezed the box: galton in
# a 960x540 window takes the reference engine 7 s, rain 35 s), deeper than this share of a
# radius: that step waits for the fast engine
SETTLE_OVERLAP = 0.01
# s: how long a loop that must take every step (abound capture) waits for the fast engine
# where numba's cache is warm (loading takes a fraction of a second, where one reference
# step of a big or fast scene had taken 3 to 40 s) before it steps on the reference engine
CACHE_LOAD_WAIT = 10.0


def wanted_backend(name):
    """The backend a scene's ``backend`` setting resolves to (``auto``: the best available)."""
    from abound.physics import backends
    if name is None or name == "auto":
        return backends.available()[0]
    return name


def exercise(engine):
    """Call every compiled function that abound calls from Python, on a small scene.

    The whole step (with balls resting, sliding and asleep on walls, segments and
    pinned balls, and overlaps to settle), and the step cut into strips
    (abound/physics/split.py) as a crowded scene of the fast backend runs it.
    Returns nothing; what matters is what numba compiled (or loaded from its cache).
    """
    from abound.physics import split
    from abound.simulation import Simulation
    sim = Simulation(400, 300, backend="fast", threads=1)
    sim._warned_jam = True  # (its jams are the warm-up's own: the user hears nothing of them)
    rng = np.random.default_rng(0)
    k = np.arange(120)
    pos = np.stack([12.0 + 31.0 * (k % 12), 12.0 + 24.0 * (k // 12)], 1)
    sim.add_balls(pos, rng.normal(0.0, 300.0, (120, 2)), radius=rng.uniform(3.0, 8.0, 120),
                  restitution=rng.uniform(0.3, 1.0, 120))
    sim.add_ball(200.0, 150.0, radius=10.0, pinned=True)
    sim.add_ball(201.0, 150.0, radius=5.0)  # an overlap: settle_overlaps has work
    sim.add_wall(20.0, 100.0, 380.0, 60.0)
    for clusters in (True, False):  # (the events alone: the rest model's collapse has work)
        sim.contact_clusters = clusters
        for _ in range(10):
            sim.step()
    sim.step(contacts=True)  # a step that logs its contacts (a black hole's pieces all do)
    # the split step: a gas spread over the box, cut into strips of a few balls
    # (as hot_gas, without contact clusters: a step with ticks is never split)
    gas = Simulation(1210, 300, backend="fast", threads=1, gravity=(0.0, -100.0), contact_clusters=False)
    n = 600
    k = np.arange(n)
    gas.add_balls(np.stack([5.0 + 2.0 * k, 20.0 + 260.0 * ((k * 37) % 101) / 101], 1),
                  rng.normal(0.0, 20.0, (n, 2)), radius=0.5)
    gas.step()
    w = gas._world
    params = gas._params()
    for together in (False, True):
        split.step(engine, w.ball_arrays(), w.wall_arrays(), params, gas.dt, together=together,
                   min_moving=1, strip_balls=50)


class Warmup:
    """The fast engine, compiled (or loaded from numba's cache) on a thread of its own.

    ``ready`` once it can run without compiling anything; ``error``: the reason
    it cannot (numba missing or failing), then the simulation stays on the
    reference engine. ``seconds``: how long it took.
    """

    def __init__(self, stream=None, child=True):
        self.stream = stream      # where to say that it compiles (None: nowhere)
        self.child = child        # compile in a child process when numba's cache is empty
        self.process = None
        self.child_error = None
        self.compiling = False    # numba compiles something (not merely loads it from its cache)
        self.done = threading.Event()
        self.error = None
        self.seconds = None
        self._t0 = time.perf_counter()
        self._slow = False        # a reference step took longer than SLOW_STEP
        self._held = False        # steps() waits for overlaps to be pushed apart (by the fast engine)
        self._said_paused = False  # _pause has said that the scene waits
        self._tried = False       # a reference step was tried
        self._looked = False      # step() has looked whether numba's cache is warm
        self._thread = threading.Thread(target=self._run, name="abound-fast-engine", daemon=True)
        _warmups.append(self)
        self._thread.start()

    def _run(self):
        """Load the fast engine from numba's cache on this thread; whatever must be compiled is
        compiled by a child process first (numba is stopped when it would compile here, by
        _CompileListener raising _Compiles). This thread only loads: a process must not exit
        while a thread runs LLVM code (LLVM's destructors then crash it), and loading takes
        a fraction of a second, so stop_all() can wait for it."""
        global _compiled
        listener = None
        try:
            from numba.core import event
            from abound.physics import backends
            listener = _CompileListener(self._compiling_now)
            event.register("numba:compile", listener)
            listener.refuse = self.child
            if self.child and backends.cache_is_cold():
                self._compile_in_child()
            for attempt in range(2):
                if _exiting.is_set():
                    raise _Compiles("the process is ending")
                try:
                    _, engine = backends.get("fast")
                    exercise(engine)  # loaded from the cache (the child filled it)
                    break
                except _Compiles:
                    if attempt or not self.child:
                        raise
                    self._compile_in_child()  # the cache lacked something: the child compiles it
            _compiled = True
        except Exception as exc:  # noqa: BLE001 - any failure leaves the reference engine running
            self.error = f"{type(exc).__name__}: {exc}"
        finally:
            if listener is not None:
                event.unregister("numba:compile", listener)
            self.seconds = time.perf_counter() - self._t0
            self.done.set()

    def _compile_in_child(self):
        """Compile in a process of its own, into numba's cache, and wait for it.

        The compiler is Python code: on a thread of this process it would hold
        the interpreter's lock against the window's drawing, each slowing the
        other (a cold start of the hot gas took 190 s to the first fast frame
        so, against 50 s for the compilation alone). A child process compiles
        on another core. It is ended when this process ends (a screensaver must
        leave nothing behind); its cache is then lost, and the next start begins anew.
        """
        import subprocess
        self._compiling_now()
        import os
        code = f"from abound import warmup; warmup.compile_here({os.getpid()})"
        # run where this abound lives: "-c" puts the working directory first on
        # the child's path, and run from a source checkout with abound
        # installed the child compiled the checkout's copy into the checkout's
        # cache, never this one's (every run then said it compiled, and stayed
        # on the plain-Python engine)
        home = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        self.process = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=home)
        _children.append(self.process)
        err = self.process.communicate()[1]
        _children.remove(self.process)
        if self.process.returncode != 0 and err:  # then this thread compiles, as without a child
            self.child_error = err.decode(errors="replace").strip().splitlines()[-1]

    def _compiling_now(self):
        """numba compiles (its cache had nothing for a function): say so, once."""
        if not self.compiling:
            self.compiling = True
            if self.stream is not None:
                meanwhile = ("the scene waits for it (the plain-Python engine is too slow for it)"
                             if self._slow or self._held else "the plain-Python engine runs meanwhile")
                self._said_paused = self._slow or self._held
                print(f"abound: {MESSAGE}; {meanwhile}", file=self.stream)

    @property
    def ready(self):
        return self.done.is_set() and self.error is None

    def wait(self, timeout=None):
        """Until the fast engine is ready or failed (or timeout s); returns ready."""
        self.done.wait(timeout)
        return self.ready

    def switch(self, sim):
        """Put ``sim`` on the fast engine if it is ready (call between two steps); returns
        True when it switched. The ball arrays stay as they are: no jump."""
        if self.ready and sim.backend == "reference":
            sim.backend = "fast"
            return True
        return False

    def steps(self, sim, wanted):
        """How many of ``wanted`` reference steps to take now while the fast engine compiles."""
        if wanted <= 0 or self._slow:
            return 0
        if sim._dirty and sim.max_overlap() > SETTLE_OVERLAP:
            # pushing overlaps apart in plain Python can take long: wait (and look again)
            self._pause("overlaps to push apart", lasting=False)
            return 0
        self._held = False
        if not self._tried and len(sim) > FIRST_STEP_BALLS:
            self._pause(f"{len(sim)} balls")
            return 0
        return 1

    def step(self, sim, contacts=False):
        """One step of ``sim`` for a loop that must take every step (``abound capture``): on the
        reference engine while its steps are quick, else after waiting for the fast one. On a
        warm cache the first waits up to CACHE_LOAD_WAIT for the fast engine to load.
        contacts: as Simulation.step's."""
        if not self._looked:
            from abound.physics import backends
            self._looked = True
            if not self.done.is_set() and not self.compiling and not backends.cache_is_cold():
                deadline = time.perf_counter() + CACHE_LOAD_WAIT
                # (in slices: loading that finds something to compile stops the wait)
                while not self.compiling and not self.done.wait(0.05) and time.perf_counter() < deadline:
                    pass
        switched = self.switch(sim)
        if sim.backend == "reference" and not self.done.is_set() and not self.steps(sim, 1):
            self.wait()
            switched = self.switch(sim)
        if switched and self.compiling and self.stream is not None:
            # (as the demo says it: a capture that waited minutes in silence looked hung)
            print(f"abound: the fast engine is ready ({self.seconds:.1f} s)", file=self.stream)
        if sim.backend != "reference":
            return sim.step(contacts=contacts)
        t0 = time.perf_counter()
        stats = sim.step(contacts=contacts)
        self.took(time.perf_counter() - t0)
        return stats

    def took(self, seconds):
        """Note how long a reference step took (too long: no more until the fast engine is ready)."""
        self._tried = True
        if seconds > SLOW_STEP:
            self._pause(f"{seconds:.2f} s a step")

    @property
    def waiting(self):
        """Whether the scene stands still until the fast engine is ready (the reference engine
        is too slow for it), while numba compiles."""
        return (self._slow or self._held) and self.compiling and not self.done.is_set()

    def _pause(self, why, lasting=True):
        """No more reference steps: the scene waits for the fast engine. Said once where numba
        compiles: the first line said the plain-Python engine runs meanwhile (a new user saw the
        demo stand still for the whole compile, its HUD saying it ran in slow motion)."""
        if not self._said_paused and self.compiling and not self.done.is_set() and self.stream is not None:
            self._said_paused = True
            print(f"abound: the plain-Python engine is too slow for this scene ({why}): "
                  f"the scene waits for the fast engine", file=self.stream)
        if lasting:
            self._slow = True
        else:
            self._held = True  # (until steps() finds the overlaps gone)


def start(sim, *, quiet=False, stream=None):
    """A Warmup for ``sim`` when it asked for the fast engine and that is not ready yet in this
    process: ``sim`` goes onto the reference engine until the Warmup has it ready; if numba
    has to compile (not merely load its cache), the terminal (``stream``, default stderr)
    hears why, unless quiet. Else None (the simulation runs as it is)."""
    if sim.backend != "fast" or _compiled:
        return None
    sim.backend = "reference"
    return Warmup(None if quiet else stream or sys.stderr)


_children = []  # compiling child processes, ended at exit
_warmups = []   # Warmups of this process
_exiting = threading.Event()


class _Compiles(Exception):
    """numba was about to compile on the warm-up thread (or the process is ending)."""


def stop_all(timeout=2.0):
    """Before the process exits: end the compiling children and wait (at most ``timeout`` s) for
    the warm-up threads, which then only finish loading from the cache or give up. A process
    that exits while a thread runs numba's LLVM code crashes in LLVM's destructors."""
    _exiting.set()
    cut = [proc for proc in _children if proc.poll() is None]  # (before the kill: their threads then forget them)
    for proc in cut:
        try:
            proc.kill()
        except OSError:
            pass
    for warm in list(_warmups):  # (a short first run: "first run only" would be heard again, unexplained)
        if warm.stream is not None and warm.process in cut:
            try:
                print(f"abound: the run ended before the fast engine was compiled; {CUT_SHORT}", file=warm.stream,
                      flush=True)
            except (ValueError, OSError):
                pass  # (the stream is closed or gone, as a test's captured stderr is by then: no one to tell)
    t_end = time.monotonic() + timeout
    for warm in list(_warmups):
        warm._thread.join(max(0.0, t_end - time.monotonic()))


import atexit  # noqa: E402
atexit.register(stop_all)


def _die_with_parent(parent):
    """In the child: end when the parent process ``parent`` ends, even by SIGKILL (Linux's
    PR_SET_PDEATHSIG; set here rather than between fork and exec, where a process with
    threads must run no Python); if it has ended already, end now."""
    import os
    import signal
    if sys.platform.startswith("linux"):
        import ctypes
        try:
            ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if parent is not None and os.getppid() != parent:
        sys.exit(0)


def fast_is_ready():
    """Whether a warm-up of this process has the fast engine ready (switching to it
    then compiles and loads nothing on the caller's thread)."""
    return _compiled


def note_if_cold(backend, stream=None):
    """Say on stream (stderr) that the fast engine compiles first, when ``backend``
    (a backend name, "auto" or None) will be the fast one and numba's cache is cold:
    a command that waits for the compiler (bench) is then not silent for minutes.
    Returns whether it said so."""
    from abound.physics import backends
    if backend not in (None, "auto", "fast") or "fast" not in backends.available() or not backends.cache_is_cold():
        return False
    print(f"abound: {MESSAGE}: a few minutes; later runs load it at once", file=stream or sys.stderr, flush=True)
    return True


def compile_here(parent=None):
    """The child's work: compile the fast engine into numba's cache (parent: the pid to die with)."""
    _die_with_parent(parent)
    from abound.physics import backends
    _, engine = backends.get("fast")
    exercise(engine)


def _listener_class():
    from numba.core import event

    class CompileListener(event.Listener):
        """Calls back at the start of each compilation numba makes (a cache miss)."""

        def __init__(self, callback):
            self.callback = callback
            self.refuse = False

        def on_start(self, event):
            self.callback()
            if self.refuse and threading.current_thread().name == "abound-fast-engine":
                raise _Compiles("numba would compile on the warm-up thread")

        def on_end(self, event):
            pass
    return CompileListener


def _CompileListener(callback):
    return _listener_class()(callback)
