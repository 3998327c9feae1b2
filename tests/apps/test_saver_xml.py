"""abound.xml, the settings of xscreensaver's dialog: well formed as xscreensaver wants it, and
every command line it can produce is one that ``abound saver``'s own parser accepts, meaning
what the widget says; ``--xscreensaver-setup`` points at real files.

xscreensaver-settings builds a hack's command line from its ``<command arg>`` and, for
each widget, the widget's argument: a ``<number>``'s ``arg`` with ``%`` replaced by the
value (left out at the default), a ``<boolean>``'s ``arg-set`` when ticked (``arg-unset``
when not), a ``<select>``'s chosen ``<option arg-set>``. The checks of the file's form
are those xscreensaver-settings 6 makes when it loads one (its messages: "switch does
not begin with hyphen", "duplicate switch", "more than one menu with no arg-set",
"range shouldn't be integral").
"""
import itertools
import os
import shlex
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from abound import resources
from abound.cli import build_parser, saver

REPO = Path(__file__).resolve().parents[2]
XML = REPO / "abound" / "abound.xml"


def parse(argv):
    """``abound saver ARGV`` through the real parser (a usage error fails the test)."""
    parser, module, problem = build_parser(["saver", *argv])
    assert problem is None
    try:
        return parser.parse_args(["saver", *argv])
    except SystemExit as exc:
        pytest.fail(f"abound saver {shlex.join(argv)}: rejected (status {exc.code})")


def widgets():
    """(command args, [(widget id, [(value, [args])...])...]) from the file, every value each widget can take."""
    root = ET.parse(XML).getroot()
    command = []
    out = []
    for el in root.iter():
        if el.tag == "command":
            command += shlex.split(el.get("arg"))
        elif el.tag == "number":
            lo, hi, default = (el.get(k) for k in ("low", "high", "default"))
            floats = any("." in v for v in (lo, hi, default))
            conv = float if floats else int
            lo, hi, default = conv(lo), conv(hi), conv(default)
            inner = [lo + (hi - lo) / 2, lo + (hi - lo) / 7]
            inner = [round(v, 2) for v in inner] if floats else [int(v) for v in inner]
            values = sorted({lo, hi, default, *inner})
            choices = []
            for v in values:
                text = f"{v:.2f}" if floats else str(v)  # xscreensaver writes floats so
                choices.append((v, [] if v == default else shlex.split(el.get("arg").replace("%", text))))
            out.append((el.get("id"), choices))
        elif el.tag == "boolean":
            out.append((el.get("id"), [(True, shlex.split(el.get("arg-set", ""))),
                                       (False, shlex.split(el.get("arg-unset", "")))]))
        elif el.tag == "select":
            out.append((el.get("id"), [(o.get("id"), shlex.split(o.get("arg-set", "")))
                                       for o in el.findall("option")]))
    return command, out


def test_the_file_has_xscreensavers_form():
    root = ET.parse(XML).getroot()
    assert root.tag == "screensaver" and root.get("name") == "abound"  # the executable's name
    assert root.find("_description") is not None
    command, ws = widgets()
    assert command == ["--root"]
    switches = {}
    for wid, choices in ws:
        seen = set()
        for value, args in choices:
            if args:
                assert args[0].startswith("-"), (wid, args)
                seen.add(args[0])
        for s in seen:
            assert s not in switches, f"duplicate switch {s} in {wid} and {switches[s]}"
            switches[s] = wid
    for sel in root.iter("select"):
        assert sum(1 for o in sel.findall("option") if not o.get("arg-set")) <= 1, sel.get("id")
    for num in root.iter("number"):
        lo, hi, default = (num.get(k) for k in ("low", "high", "default"))
        assert float(lo) <= float(default) <= float(hi) and float(lo) < float(hi)
        if any("." in v for v in (lo, hi, default)):
            assert not (float(lo).is_integer() and float(hi).is_integer()), num.get("id")


def test_every_shipped_scene_is_offered():
    _, ws = widgets()
    scenes = dict(ws)["scene"]
    offered = {args[1] if args else "default" for _, args in scenes}
    assert offered == set(resources.config_names())
    for _, args in scenes:
        assert args == [] or args[0] == "--scene"


def test_every_value_of_every_widget_parses_and_means_what_it_says():
    command, ws = widgets()
    for wid, choices in ws:
        for value, args in choices:
            a = parse(command + args)
            assert a.xs_root
            got = {"scene": a.scene_opt or "default", "balls": a.balls or 0,
                   "gravity": a.gravity or 1.0, "liven": a.liven or "scene",
                   "delay": a.delay or 0, "showfps": a.fps is True}[wid]
            assert got == value, (wid, value, args, got)


def test_all_widgets_together_parse():
    """Every scene with every other widget at each extreme, in the order xscreensaver writes them."""
    command, ws = widgets()
    per_widget = [[args for _, args in choices] for _, choices in ws]
    extremes = [[c[0], c[-1]] if len(c) > 2 else c for c in per_widget]
    extremes[0] = per_widget[0]  # every scene
    count = 0
    for combo in itertools.product(*extremes):
        parse(command + [w for args in combo for w in args])
        count += 1
    assert count >= len(resources.config_names()) * 2 ** (len(ws) - 1)


@pytest.mark.parametrize("scene", resources.config_names())
def test_the_settings_reach_the_simulation(scene):
    """Balls, gravity and liven go into the scene the saver builds (and rebuilds for a wave)."""
    from abound.scene import load_scene
    plain = load_scene(scene)
    sim = saver.build_simulation(scene, balls=7, gravity=2.5, liven="kick")
    g0 = plain["world"]["gravity"]
    assert list(sim.gravity) == [2.5 * g0[0], 2.5 * g0[1]]
    assert sim.scene["saver"]["liven"] == "kick"
    fixed = len(plain["balls"]) + sum(p["rows"] * p["cols"] for p in plain["pegs"])
    spawned = sum(g["count"] for g in plain["spawn"])
    assert len(sim) == fixed + (max(7, len(plain["spawn"])) if plain["spawn"] else spawned)
    again = saver.build_simulation(scene)  # no settings: the scene as it is
    assert list(again.gravity) == list(map(float, g0)) and len(again) == fixed + spawned


def test_setup_names_the_executable_and_the_settings_file():
    proc = subprocess.run([sys.executable, "-m", "abound", "saver", "--xscreensaver-setup"],
                          capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    # the programs: entry: a quoted name, an absolute path to an executable, then "saver --root"
    entry = next(line for line in out.splitlines() if line.rstrip().endswith("\\n\\"))
    words = shlex.split(entry.replace("\\n\\", ""))
    exe = Path(words[1])
    assert exe.is_absolute() and exe.is_file() and os.access(exe, os.X_OK), exe
    assert exe.name.startswith("abound") and words[2:] == ["saver", "--root"]
    # the settings file it names is the shipped one, and goes to xscreensaver's config directory
    assert str(saver.xml_path()) in out and saver.xml_path().read_bytes() == XML.read_bytes()
    assert f"{saver.XSCREENSAVER_CONFIG_DIR}/abound.xml" in out
