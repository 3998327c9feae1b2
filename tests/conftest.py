"""The suite's one shared hook: compile the fast engine once before parallel test processes start.

Under pytest-xdist (``-n 2``, README's test command) every worker, and every
``abound`` command a test starts, would otherwise meet numba's cache cold on
a fresh clone and compile the same engine at the same time: a clean clone's
run took 950 s of pytest (800 s with this; about 560 on a warm cache). The
controller compiles it into the cache first (abound.warmup.compile_here:
every function abound calls from Python), and the workers load it. A run
in one process is left alone: its first test that needs the engine compiles
it, and a run of a few reference-backend tests compiles nothing.
"""


def pytest_configure(config):
    parallel = config.pluginmanager.hasplugin("xdist") and config.getoption("numprocesses", None)
    if not parallel or hasattr(config, "workerinput"):  # (a worker: the controller has compiled it)
        return
    import warnings

    from abound import warmup
    from abound.physics import backends
    if backends.cache_is_cold():
        print(f"abound tests: {warmup.MESSAGE}, once, before the test processes start", flush=True)
    with warnings.catch_warnings():  # (its CompileNotice would say the line above again)
        warnings.simplefilter("ignore", backends.CompileNotice)
        warmup.compile_here()  # (warm, it loads every function from the cache in about 2 s)
