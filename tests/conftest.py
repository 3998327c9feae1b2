"""The suite's shared hooks, both for parallel runs: compile the fast engine once before the
test processes start, and make each module-scoped fixture once, not once per process.

Under pytest-xdist (``-n 2``, README's test command) every worker, and every
``abound`` command a test starts, would otherwise meet numba's cache cold on
a fresh clone and compile the same engine at the same time: a clean clone's
run took 950 s of pytest (800 s with this; about 560 on a warm cache). The
controller compiles it into the cache first (abound.warmup.compile_here:
every function abound calls from Python), and the workers load it. A run
in one process is left alone: its first test that needs the engine compiles
it, and a run of a few reference-backend tests compiles nothing.
"""
import pytest


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


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the marks (in each worker)
def pytest_collection_modifyitems(config, items):
    """Under ``--dist loadgroup`` (README's test command): the tests that use a module-scoped
    fixture go to one worker together (an ``xdist_group`` named after their module).

    A module-scoped fixture is set up once in every worker that runs a test using it; with the
    tests dealt out one by one, both workers made it (the bad-scene runs of
    tests/scene/test_bad_input.py are about 150 abound processes, 88 s of one core). Grouped,
    it is made once. Every other test is still dealt out singly.
    """
    # (a worker sees dist "no" and loadgroup True: xdist's remote.py)
    if not (config.getoption("dist", "no") == "loadgroup" or getattr(config.option, "loadgroup", False)):
        return
    for item in items:
        info = getattr(item, "_fixtureinfo", None)
        if info is None:
            continue
        for name in info.names_closure:
            defs = info.name2fixturedefs.get(name)
            if defs and defs[-1].scope == "module":
                item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))
                break
