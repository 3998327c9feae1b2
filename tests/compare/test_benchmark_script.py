"""benchmarks/run.py works end to end on tiny sizes (a smoke test: the numbers themselves are not timed here)."""
import importlib.util
import json
import math
import tomllib
from pathlib import Path

import numpy as np
import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "run.py"


@pytest.fixture(scope="module")
def bench():
    pytest.importorskip("numba")
    spec = importlib.util.spec_from_file_location("abound_benchmarks_run", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_tiny_run_writes_every_table(bench, tmp_path):
    out, raw = tmp_path / "B.md", tmp_path / "b.json"
    assert bench.main(["--quick", "--sizes", "40", "--runs", "2", "--frames", "2", "--settle", "0.5",
                       "--skip", "latency,memory,reference", "--out", str(out), "--json", str(raw)]) == 0
    res = json.loads(raw.read_text())
    cases = {c["scene"]: c for c in res["cases"]}
    assert set(cases) == {"gas", "pile", "galton", "hourglass"}
    assert cases["gas"]["balls"] == cases["pile"]["balls"] == 40
    assert cases["galton"]["balls"] - cases["galton"]["pegs"] == 40 and cases["galton"]["pegs"] == 427
    # the hourglass is timed with its own grains, whatever --sizes says
    spawned = tomllib.loads((SCRIPT.parents[1] / "configs" / "hourglass.toml").read_text())["spawn"]
    assert cases["hourglass"]["balls"] == sum(group["count"] for group in spawned) >= 2000
    assert [cases[s]["clusters"] for s in ("gas", "pile", "galton", "hourglass")] == [False, False, True, True]
    for c in cases.values():
        assert c["frames"] == [2, 2] and c["complete"]
        a = c["abound"]
        assert len(a["window_medians_ms"]) == 2 and a["ms_median"] == pytest.approx(np.median(a["window_medians_ms"]))
        if "pymunk" in c:
            # the median over the turns of each turn's pymunk / abound
            turns = np.array(c["pymunk"]["window_medians_ms"]) / np.array(a["window_medians_ms"])
            assert c["ratio"] == pytest.approx(np.median(turns))
    text = out.read_text()
    for label in ("## abound and pymunk, side by side", "| hot gas | 40 |", "| settled pile | 40 |",
                  "| Galton board | 40 (427 pegs) |", "| hourglass | 2,000 |", "## Scaling", "## Targets (issues 3 and 23)", "Quick run"):
        assert label in text
    # the report is a function of the saved numbers alone
    again = tmp_path / "again.md"
    assert bench.main(["--from-json", str(raw), "--out", str(again)]) == 0
    assert again.read_text() == text


def test_galton_grains_shrink_to_fit_the_same_hopper(bench):
    shipped = bench.build("galton", bench.GALTON_BALLS, backend="reference")
    fine = bench.build("galton", 1400, backend="reference")
    free = ~fine.pinned
    assert free.sum() == 1400
    assert fine.radii[free].min() >= 3.5 * 0.5 and fine.radii[free].max() <= 4.0 * 0.5  # sqrt(350/1400) = 1/2
    area = lambda sim: float(np.sum(math.pi * sim.radii[~sim.pinned] ** 2))  # noqa: E731
    assert area(fine) == pytest.approx(area(shipped), rel=0.05)


def test_boxes_widen_only_above_the_issues_size(bench):
    assert bench.box_for(1_000) == bench.box_for(10_000) == (1920.0, 1080.0)
    assert bench.box_for(50_000) == (9600.0, 1080.0)


def test_the_overlap_bound_is_the_clusters_where_they_solve_contacts(bench):
    # 1e-6 r in flight (the physics issue), 1e-3 r where contact clusters run (issue 23)
    r = {"nan": False, "escaped": 0, "max_overlap": 5e-4, "energy_drift": 0.0}
    assert bench.invariants(r, clusters=True) == "ok"
    assert bench.invariants(r, clusters=False) == "VIOLATED: overlap 5.0e-04"
    assert bench.invariants(dict(r, max_overlap=2e-3), clusters=True) == "VIOLATED: overlap 2.0e-03"
