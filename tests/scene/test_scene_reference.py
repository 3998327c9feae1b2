"""docs/scenes.md's key tables are the schema's, and what they say of each key holds.

The tables are generated from abound/scene/schema.py (python -m
abound.scene.reference docs/scenes.md). The first test fails when the doc
was not written again after the schema changed; the others try each
documented type and bound against the validation itself (a scene with the
key set just inside and just outside what the table says).
"""
import re
from pathlib import Path

import pytest

from abound import SceneError
from abound.scene import reference, schema

DOC = Path(__file__).resolve().parents[2] / "docs" / "scenes.md"
# the least item of each array section that validates, to set one key in
BASE = {"balls": {"x": 100.0, "y": 100.0}, "spawn": {"count": 1},
        "walls": {"x0": 10.0, "y0": 10.0, "x1": 50.0, "y1": 20.0},
        "pegs": {"rows": 1, "cols": 1, "x0": 100.0, "y0": 100.0, "dx": 20.0, "dy": -20.0},
        "black_holes": {"x": 100.0, "y": 100.0, "strength": 1.0e6}}


def test_the_doc_has_the_schemas_tables():
    text = DOC.read_text(encoding="utf-8")
    assert reference.rewrite(text) == text, "python -m abound.scene.reference docs/scenes.md"
    for section in schema.SECTIONS:  # every section has its table, every key its row
        block = text.split(reference.BEGIN.format(label=reference.label(section)), 1)[1].split(reference.END, 1)[0]
        assert set(re.findall(r"`(\w+)`", " ".join(row.split("|")[1] for row in block.strip().splitlines()[2:]))) \
            == set(reference.spec(section))


def _entries():
    for section in schema.SECTIONS:
        for key, entry in reference.spec(section).items():
            yield section, key, entry[0].doc


def _valid(section, key, value):
    if section in schema.ARRAYS:
        raw = {section: [dict(BASE[section], **{key: value})]}
    else:
        raw = {section: {key: value}}
    try:
        schema.normalize(raw)
    except SceneError:
        return False
    return True


def _probes(doc):
    """(accepted values, refused values) that the type text promises."""
    kind, _, bound = doc.partition(" ")
    lo = hi = None
    if m := re.fullmatch(r"in (-?[\d.]+)\.\.(-?[\d.]+)", bound):
        lo, hi = float(m[1]), float(m[2])
        ok, bad = [lo, hi, (lo + hi) / 2], [lo - 0.5, hi + 0.5]
    elif m := re.fullmatch(r"in \(0, ([\d.]+(?:e\+\d+)?)\]", bound):  # (1e+20: a strength's)
        hi = float(m[1])
        ok, bad = [hi, hi / 2], [0.0, -1.0, hi * 1.5]
    elif bound == "> 0":
        ok, bad = [1.0, 1e-3], [0.0, -1.0]
    elif m := re.fullmatch(r">= (-?[\d.]+)", bound):
        lo = float(m[1])
        ok, bad = [lo, lo + 3], [lo - 1]
    elif bound == "":
        ok, bad = [0.0, -5.0, 7.0], []
    else:
        raise AssertionError(f"a bound the test cannot read: {doc!r}")
    if kind == "integer":
        ok, bad = [int(v) for v in ok if v == int(v)], [int(v) for v in bad if v == int(v)] + [1.5, True]
    else:
        bad = bad + [True, "1"]
    return ok, bad


@pytest.mark.parametrize("section, key, doc", [e for e in _entries() if e[2].split()[0] in ("number", "integer", "range")])
def test_each_documented_bound_is_the_one_validation_keeps(section, key, doc):
    ok, bad = _probes(doc)
    for v in ok:
        for given in ([v, v] if doc.startswith("range") else []) + [v]:
            assert _valid(section, key, given), (section, key, given)
    for v in bad:
        assert not _valid(section, key, v), (section, key, v)


@pytest.mark.parametrize("section, key, doc", [e for e in _entries() if e[2] in ("bool", "colour") or e[2].startswith('`"')])
def test_each_documented_choice_is_the_one_validation_keeps(section, key, doc):
    if doc == "bool":
        ok, bad = [True, False], [1, "true"]
    elif doc == "colour":
        ok, bad = ["#a0b0c0", "#a0b0c0ff"], ["red", "#abc", 3]
    else:
        ok = re.findall(r'`"([^"]+)"`', doc)
        bad = [ok[0] + "x", 1]
    for v in ok:
        assert _valid(section, key, v), (section, key, v)
    for v in bad:
        assert not _valid(section, key, v), (section, key, v)
