"""A scene with contact clusters off and on, side by side in one process: what do they cost?

    python benchmarks/clusters_onoff.py [--scenes default,galton] [--steps 600] [--rounds 3]

Each round builds each shipped scene afresh twice (``contact_clusters`` off,
then on, whatever the scene file says), steps it --steps times in 1/60 s
steps from its start on one thread, and notes the median ms a step and the
total. Prints each round's numbers, then per scene the median over rounds
of the medians and totals, and on / off. Both settings run the same
compiled engine (the flag is a parameter of the step), so the numba cache
is shared.
"""
import argparse
import statistics
import time
import warnings


def run(name, clusters, steps):
    """(median ms a step, total s) of ``steps`` steps of the shipped scene ``name``."""
    import abound
    sim = abound.Simulation.from_config(name, backend="fast")
    sim.threads = 1
    sim.contact_clusters = clusters
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        sim.step()
        times.append(time.perf_counter() - t0)
    return 1e3 * statistics.median(times), sum(times)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scenes", default="default,galton", help="shipped scenes, comma-separated")
    p.add_argument("--steps", type=int, default=600)
    p.add_argument("--rounds", type=int, default=3)
    a = p.parse_args(argv)
    warnings.simplefilter("ignore")  # (a jam said with clusters off: what the comparison shows)
    names = a.scenes.split(",")
    run(names[0], False, 1)  # load the compiled engine, untimed
    results = {}
    for k in range(a.rounds):
        for name in names:
            for clusters in (False, True):
                median, total = run(name, clusters, a.steps)
                results.setdefault((name, clusters), []).append((median, total))
                print(f"round {k}: {name} clusters {'on' if clusters else 'off'}: "
                      f"median {median:.3f} ms a step, {total:.2f} s in all", flush=True)
    for name in names:
        off, on = ([statistics.median(x[i] for x in results[(name, c)]) for i in (0, 1)] for c in (False, True))
        print(f"{name}: off {off[0]:.3f} ms ({off[1]:.2f} s), on {on[0]:.3f} ms ({on[1]:.2f} s), "
              f"on / off {on[0] / off[0]:.2f} a step, {on[1] / off[1]:.2f} in all")


if __name__ == "__main__":
    main()
