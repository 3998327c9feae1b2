"""Every shipped scene does exactly what it did when its digest was recorded.

The guard for refactors that must not change behaviour (issue 25: the
physics core split by concept): each shipped scene is stepped on the
reference backend, on the fast one on one thread, and on two threads (a
crowded scene then steps as strips), and the digest of every step's counts
and of the final state must equal the one recorded in tests/helpers/digests.json
(tests/helpers/digests.py says how, and when to record them again). The fast
backend on one and on two threads must also agree with each other, and
with the reference backend for the same balls, which needs no recorded
value: the split step and the compiled engine promise the same result.
"""
import json

import pytest

from abound.resources import config_names
from digests import FILE, RUNS, digest

RECORDED = json.loads(FILE.read_text())


@pytest.mark.parametrize("scene", config_names())
@pytest.mark.parametrize("run", list(RUNS))
def test_a_shipped_scene_steps_as_recorded(run, scene):
    assert scene in RECORDED[run], f"no digest recorded for {scene!r}: python tests/helpers/digests.py --write"
    assert digest(scene, *RUNS[run]) == RECORDED[run][scene]


def test_the_recorded_split_steps_equal_the_single_thread_ones():
    assert RECORDED["fast-2-threads"] == RECORDED["fast"]


def test_the_recorded_backends_agree():
    # the compiled engine runs the reference engine's code: the same scene of
    # the same balls ends in the same state, by the same events
    assert RECORDED["fast-as-reference"] == RECORDED["reference"]
