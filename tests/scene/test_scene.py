"""Scenes: shipped configs, defaults, overrides, random placement, and bad scenes.

Expected values are derived here from the TOML text or from geometry, not from
what the loader returns.
"""
import math
import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest

import abound
from abound import resources
from abound.scene import build_simulation, load_scene

REPO = Path(__file__).resolve().parents[2]
SHIPPED = ["default", "pool_break", "galton", "rain", "hourglass", "drop", "black_hole"]


def _pegs_inside(peg, w, h):
    """Count the lattice pegs whose disc lies inside the box (README's rule)."""
    r = peg.get("radius", 5.0)
    n = 0
    for i in range(peg["rows"]):
        shift = peg["dx"] / 2 if peg.get("stagger", True) and i % 2 else 0.0
        for j in range(peg["cols"]):
            x, y = peg["x0"] + shift + j * peg["dx"], peg["y0"] + i * peg["dy"]
            n += r <= x <= w - r and r <= y <= h - r
    return n


def _pairwise_ok(pos, r):
    """True when no two discs overlap: |p_i - p_j| >= r_i + r_j for all i < j."""
    d = np.sqrt(((pos[:, None, :] - pos[None, :, :]) ** 2).sum(-1))
    need = r[:, None] + r[None, :]
    np.fill_diagonal(d, np.inf)
    return bool(np.all(d >= need * (1 - 1e-12))), float(np.min(d - need))


def _seg_distance(pos, seg):
    p0, p1 = np.array(seg[:2]), np.array(seg[2:])
    d = p1 - p0
    u = np.clip(((pos - p0) @ d) / (d @ d), 0, 1)
    return np.hypot(*(pos - (p0 + u[:, None] * d)).T)


# -- shipped scenes -----------------------------------------------------------------
@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_scene_builds_with_the_counts_its_file_gives(name):
    path = resources.config_path(name)
    raw = tomllib.loads(path.read_text())
    w = raw.get("world", {}).get("width", 1280)
    h = raw.get("world", {}).get("height", 720)
    expected = (len(raw.get("balls", [])) + sum(g["count"] for g in raw.get("spawn", []))
                + sum(_pegs_inside(p, w, h) for p in raw.get("pegs", [])))
    sim = build_simulation(path, backend="reference")
    assert len(sim) == expected
    assert len(sim.walls) == len(raw.get("walls", []))
    assert (sim.width, sim.height) == (w, h)
    pinned = sum(_pegs_inside(p, w, h) for p in raw.get("pegs", []))
    assert int(sim.pinned.sum()) == pinned
    # inside the box, no overlaps between balls or with walls at the start
    pos, r = sim.positions, sim.radii
    assert np.all(pos - r[:, None] >= 0) and np.all(pos[:, 0] + r <= w) and np.all(pos[:, 1] + r <= h)
    assert sim.max_overlap() <= 1e-9
    sim.step()  # and it runs
    assert np.all(np.isfinite(sim.positions))


def test_shipped_scene_names_and_default():
    assert set(SHIPPED) <= set(resources.config_names())
    assert resources.default_scene_path() == resources.config_path("default.toml")
    assert resources.default_scene_path().samefile(REPO / "configs" / "default.toml")


def test_none_is_the_default_scene():
    a = build_simulation(None, backend="reference")
    b = build_simulation(REPO / "configs" / "default.toml", backend="reference")
    assert np.array_equal(a.positions, b.positions)
    c = abound.Simulation.from_config(None, backend="reference")
    assert np.array_equal(a.velocities, c.velocities)


# -- defaults and normalization -------------------------------------------------------
def test_empty_scene_gets_every_default():
    sim = build_simulation({}, backend="reference")
    s = sim.scene
    assert set(s) == {"world", "physics", "render", "saver", "balls", "spawn", "walls", "pegs", "black_holes"}
    assert s["world"] == {"width": 1280.0, "height": 720.0, "gravity": [0.0, -980.0],
                          "restitution_mix": "product", "rest_speed": 10.0,
                          "rolling_friction": 0.0, "wall_restitution": 1.0, "density": 1.0}
    assert s["physics"] == {"backend": "reference", "ball_toi": "analytic",
                            "dt": pytest.approx(1 / 60), "seed": 1, "contact_clusters": True}
    assert s["render"] == {"background": "#101018", "color_mode": "palette", "shading": True,
                           "trails": 0.0, "wall_color": "#c0c0c0", "peg_color": "#909090",
                           "hud": False, "flash": False}
    assert s["saver"] == {"stillness_energy": 0.02, "stillness_seconds": 3.0, "liven": "wave", "turn": 180.0}
    assert len(sim) == 0
    assert list(sim.gravity) == [0.0, -980.0]
    assert sim.dt == pytest.approx(1 / 60)


def test_world_and_physics_keys_reach_the_simulation():
    sim = build_simulation({
        "world": {"width": 800, "height": 500, "gravity": [30, 40], "restitution_mix": "max",
                  "rest_speed": 0, "wall_restitution": 0.5, "density": 2.0},
        "physics": {"backend": "reference", "ball_toi": "bisection", "dt": 0.01},
        "balls": [{"x": 100, "y": 100, "radius": 10}],
    })
    assert (sim.width, sim.height) == (800, 500)
    assert list(sim.gravity) == [30.0, 40.0]
    assert sim.restitution_mix == "max" and sim.rest_speed == 0.0
    assert sim.wall_restitution == 0.5 and sim.ball_toi == "bisection" and sim.dt == 0.01
    assert sim.masses[0] == pytest.approx(math.pi * 100 * 2.0)  # area x density


def test_explicit_balls_and_walls():
    sim = build_simulation({
        "balls": [{"x": 100, "y": 200, "vx": 3, "vy": -4, "radius": 7, "mass": 3.0,
                   "restitution": 0.5, "color": "#ff0000"},
                  {"x": 300, "y": 300, "pinned": True}],
        "walls": [{"x0": 10, "y0": 20, "x1": 300, "y1": 40, "restitution": 0.25}],
    }, backend="reference")
    assert sim.positions.tolist() == [[100, 200], [300, 300]]
    assert sim.velocities[0].tolist() == [3, -4]
    assert sim.radii.tolist() == [7, 10]
    assert sim.masses[0] == 3.0
    assert sim.restitutions[0] == 0.5
    assert sim.colors[0].tolist() == [1, 0, 0, 1]
    assert sim.pinned.tolist() == [False, True]
    assert sim.walls.tolist() == [[10, 20, 300, 40]]
    assert sim.wall_restitutions.tolist() == [0.25]


def test_pegs_lattice_positions():
    sim = build_simulation({"pegs": [{"rows": 3, "cols": 2, "x0": 100, "y0": 600, "dx": 50,
                                      "dy": -40, "radius": 4, "color": "#00ff00"}]},
                           backend="reference")
    expected = [[100, 600], [150, 600], [125, 560], [175, 560], [100, 520], [150, 520]]
    assert sorted(sim.positions.tolist()) == sorted(expected)
    assert sim.pinned.all() and np.all(sim.radii == 4)


def test_pegs_outside_the_box_are_left_out():
    sim = build_simulation({"world": {"width": 200, "height": 200},
                            "pegs": [{"rows": 1, "cols": 10, "x0": 20, "y0": 100, "dx": 40,
                                      "dy": 0, "radius": 5}]}, backend="reference")
    # x = 20, 60, 100, 140, 180 fit (180 + 5 <= 200); 220.. do not
    assert sorted(sim.positions[:, 0].tolist()) == [20, 60, 100, 140, 180]


# -- random spawns ----------------------------------------------------------------------
def test_random_spawn_places_without_overlap_within_ranges():
    scene = {
        "world": {"width": 900, "height": 600},
        "balls": [{"x": 750, "y": 62, "radius": 60}],  # a big one under the wall
        "pegs": [{"rows": 4, "cols": 10, "x0": 100, "y0": 500, "dx": 70, "dy": -60, "radius": 6}],
        "walls": [{"x0": 50, "y0": 100, "x1": 850, "y1": 200}],
        "spawn": [
            {"count": 800, "radius": [3, 9], "speed": [100, 200], "angle": [30, 60],
             "restitution": [0.4, 0.6], "density": 3.0, "seed": 5},
            {"count": 300, "radius": 4, "mass": 2.5, "region": [0, 0, 300, 250],
             "palette": ["#112233"]},
        ],
    }
    sim = build_simulation(scene, backend="reference")
    pos, r = sim.positions, sim.radii
    ok, gap = _pairwise_ok(pos, r)
    assert ok, gap
    assert np.all(_seg_distance(pos, (50, 100, 850, 200)) >= r)
    assert np.all(pos - r[:, None] >= 0) and np.all(pos[:, 0] + r <= 900) and np.all(pos[:, 1] + r <= 600)
    n_fixed = 1 + 40
    g1 = slice(n_fixed, n_fixed + 800)
    g2 = slice(n_fixed + 800, None)
    assert len(sim) == n_fixed + 1100
    assert np.all((r[g1] >= 3) & (r[g1] <= 9))
    speed = np.hypot(*sim.velocities[g1].T)
    assert np.all((speed >= 100 - 1e-9) & (speed <= 200 + 1e-9))
    ang = np.degrees(np.arctan2(sim.velocities[g1, 1], sim.velocities[g1, 0]))
    assert np.all((ang >= 30 - 1e-9) & (ang <= 60 + 1e-9))
    assert np.allclose(sim.masses[g1], math.pi * r[g1] ** 2 * 3.0)
    assert np.all((sim.restitutions[g1] >= 0.4) & (sim.restitutions[g1] <= 0.6))
    assert np.all(sim.masses[g2] == 2.5) and np.all(r[g2] == 4)
    assert np.all(pos[g2, 0] <= 300 - 4) and np.all(pos[g2, 1] <= 250 - 4)
    assert np.allclose(sim.colors[g2], [0x11 / 255, 0x22 / 255, 0x33 / 255, 1])
    assert np.all(np.hypot(*sim.velocities[g2].T) == 0)


@pytest.mark.parametrize("world, group", [({}, {"radius": 1e-9}), ({"density": 1e9}, {"radius": 100}),
                                          ({}, {"radius": 100, "density": 1e9})],
                         ids=["tiny", "heavy-world", "heavy-group"])
def test_spawned_balls_take_area_times_density_as_explicit_balls_do(world, group):
    # a spawn group's masses had been handed on as explicit masses, held to
    # 1e-9..1e9 with a message naming neither file nor key, while the same
    # radius and density in [[balls]] was taken: both are area x density now
    scene = {"world": {"width": 800, "height": 600, **world}, "spawn": [{"count": 3, **group}],
             "balls": [{"x": 400, "y": 300, "radius": group["radius"]}]}
    sim = build_simulation(scene, backend="reference")
    area = math.pi * group["radius"] ** 2
    assert sim.masses[0] == pytest.approx(area * world.get("density", 1.0), rel=1e-15)  # (the explicit ball)
    assert np.allclose(sim.masses[1:], area * group.get("density", world.get("density", 1.0)), rtol=1e-15, atol=0)


def test_impossible_spawn_says_how_many_fit():
    # 5000 discs of radius 8 cover 5000 * 201 px^2 = 1.0e6 px^2, more than a 400x300 box
    with pytest.raises(abound.SceneError) as err:
        build_simulation({"world": {"width": 400, "height": 300},
                          "spawn": [{"count": 5000, "radius": 8}]})
    msg = str(err.value)
    assert msg.startswith("<scene>: cannot place 5000 balls of radius 8 in [[spawn]] 1 without overlap (placed ")
    placed = int(msg.rsplit("(placed ", 1)[1].rstrip(")"))
    assert 0 < placed <= 400 * 300 / (math.pi * 64)


def test_seed_determines_the_layout():
    scene = {"spawn": [{"count": 50, "radius": [5, 10], "speed": [0, 100]}]}
    a = build_simulation(scene, backend="reference")
    b = build_simulation(scene, backend="reference")
    c = build_simulation(scene, backend="reference", seed=99)
    assert np.array_equal(a.positions, b.positions) and np.array_equal(a.velocities, b.velocities)
    assert not np.array_equal(a.positions, c.positions)
    d = build_simulation({"physics": {"seed": 99}, **scene}, backend="reference")
    assert np.array_equal(c.positions, d.positions)


def test_rebuilding_from_the_normalized_scene_gives_the_same_simulation():
    sim = build_simulation("galton", seed=4, balls=100, size=(1400, 800), backend="reference")
    again = build_simulation(sim.scene)
    assert np.array_equal(sim.positions, again.positions)
    assert np.array_equal(sim.velocities, again.velocities)
    assert np.array_equal(sim.radii, again.radii)
    assert (again.width, again.height) == (1400, 800)


@pytest.mark.parametrize("total, expected", [(1000, [952, 48]), (2, [1, 1]), (1, [1, 1]), (252, [240, 12])])
def test_balls_override_scales_spawn_counts(total, expected):
    # default.toml has groups of 240 and 12; 1000 - 2 spare split 240:12 -> 949.9 + 47.5
    raw = tomllib.loads(resources.default_scene_path().read_text())
    assert [g["count"] for g in raw["spawn"]] == [240, 12]
    scene = load_scene(None, balls=total)
    assert [g["count"] for g in scene["spawn"]] == expected


def test_size_override():
    # (a scene of random balls: the default one has walls, which a smaller box would leave outside)
    sim = build_simulation("hot_gas", size=(640, 480), balls=40, backend="reference")
    assert (sim.width, sim.height) == (640, 480)
    pos, r = sim.positions, sim.radii
    assert np.all(pos[:, 0] + r <= 640) and np.all(pos[:, 1] + r <= 480)
    with pytest.raises(abound.SceneError, match=r"\[\[walls\]\] 2: lies outside the 640x480 box"):
        build_simulation(None, size=(640, 480), balls=40, backend="reference")


def test_the_default_scenes_errors_name_it_default_not_where_it_is_installed():
    # a new user's `abound bench --balls 300000` named
    # .../site-packages/abound/configs/default.toml, where `from_config("default")` says default
    for source in (None, "default"):
        with pytest.raises(abound.SceneError) as caught:
            build_simulation(source, balls=300000, backend="reference")
        assert str(caught.value).startswith("default: balls override: "), str(caught.value)


def test_scene_without_spawn_rejects_balls_override():
    with pytest.raises(abound.SceneError, match="no \\[\\[spawn\\]\\] groups"):
        build_simulation("drop", balls=10)


def test_shipped_scene_name_and_missing_path():
    assert len(build_simulation("drop", backend="reference")) == 1
    with pytest.raises(abound.SceneError, match="nope/x.toml: no such file$"):
        build_simulation("nope/x.toml")
    # a path to a shipped scene's file, from outside the checkout (as README's
    # `abound check configs/galton.toml` once read): the name that works
    with pytest.raises(abound.SceneError, match="^nope/galton.toml: no such file - the shipped scene of that "
                                                "name is 'galton'$"):
        build_simulation("nope/galton.toml")


# -- bad scenes: the corpus in tests/scene/bad_scenes/ goes through every command (test_bad_input.py)
def _check_cli(*files):
    return subprocess.run([sys.executable, "-m", "abound", "check", *map(str, files)],
                          capture_output=True, text=True, timeout=60)


def test_typo_message_is_exact(tmp_path):
    path = tmp_path / "x.toml"
    path.write_text("[[spawn]]\ncount = 5\nrestitusion = 0.9\n")
    proc = _check_cli(path)
    assert proc.stderr == (f"abound: error: {path}: unknown key 'restitusion' in [[spawn]] 1"
                           " - did you mean 'restitution'?\n")


def test_dict_errors_name_the_scene():
    with pytest.raises(abound.SceneError) as err:
        build_simulation({"spawn": [{"count": 2, "radius": 0}]})
    assert str(err.value) == "<scene>: [[spawn]] 1: radius must be a positive number, not 0.0"


def test_a_black_hole_s_strength_may_pass_1e9_as_the_api_s_may_up_to_1e20():
    # GM is large by nature: the saver's hole on a 4K screen pulls with 2e9, which a
    # scene file refused (every number at most 1e9); past 1e20 both refuse it
    hole = {"x": 100.0, "y": 100.0, "strength": 2e9}
    sim = build_simulation({"spawn": [{"count": 2}], "black_holes": [hole]})
    assert sim.black_holes[0].strength == 2e9
    with pytest.raises(abound.SceneError) as err:
        build_simulation({"spawn": [{"count": 2}], "black_holes": [dict(hole, strength=1e21)]})
    assert str(err.value) == "<scene>: [[black_holes]] 1: strength must be at most 1e+20 in size, not 1e+21"


def test_rolling_friction_with_gravity_on_is_refused_naming_the_file_and_the_key(tmp_path):
    # one check, the Simulation's, for a scene file and the API alike
    path = tmp_path / "tilted_table.toml"
    path.write_text("[world]\ngravity = [0.0, -980.0]\nrolling_friction = 0.1\n")
    with pytest.raises(abound.SceneError) as err:
        abound.Simulation.from_config(str(path))
    assert str(err.value).startswith(f"{path}: [world]: rolling_friction needs gravity = [0, 0]")


def test_a_backend_not_installed_here_is_named_under_physics(tmp_path, monkeypatch):
    # (a machine without pymunk: the error had named [world], where backend is no key)
    from abound.physics import backends
    real = backends.get

    def without_pymunk(name):
        if name == "pymunk":
            raise abound.SceneError("backend 'pymunk' is not available here: No module named 'pymunk'")
        return real(name)
    monkeypatch.setattr(backends, "get", without_pymunk)
    path = tmp_path / "pm.toml"
    path.write_text('[physics]\nbackend = "pymunk"\n')
    with pytest.raises(abound.SceneError) as info:
        build_simulation(str(path))
    assert str(info.value).startswith(f"{path}: [physics]: backend 'pymunk' is not available here"), str(info.value)
    # asked for on the command line (--backend), for a file that names no backend: the override
    # is named, not a key the file does not hold (a review)
    path.write_text("")
    with pytest.raises(abound.SceneError) as info:
        build_simulation(str(path), backend="pymunk")
    assert str(info.value).startswith(f"{path}: backend override: backend 'pymunk' is not available"), str(info.value)


def test_walls_and_black_holes_are_bounded_in_a_scene_and_in_the_api():
    # every ball's predictions look at every wall, every free ball feels every hole:
    # 10,000 walls had taken 15 s to check, 2,000 holes 0.5 s a step for 100 balls
    from abound.defaults import MAX_BLACK_HOLES, MAX_WALLS
    wall = {"x0": 10.0, "y0": 10.0, "x1": 100.0, "y1": 20.0}
    hole = {"x": 100.0, "y": 100.0, "strength": 1e5}
    build_simulation({"walls": [wall] * MAX_WALLS})  # the most: fine
    build_simulation({"black_holes": [hole] * MAX_BLACK_HOLES})
    with pytest.raises(abound.SceneError, match=f"too many \\[\\[walls\\]\\]: {MAX_WALLS + 1}, at most"):
        build_simulation({"walls": [wall] * (MAX_WALLS + 1)})
    with pytest.raises(abound.SceneError, match=f"too many \\[\\[black_holes\\]\\]: {MAX_BLACK_HOLES + 1}"):
        build_simulation({"black_holes": [hole] * (MAX_BLACK_HOLES + 1)})
    sim = abound.Simulation(400, 300)
    for _ in range(MAX_WALLS):
        sim.add_wall(10.0, 10.0, 100.0, 20.0)
    with pytest.raises(abound.SceneError, match="too many walls"):
        sim.add_wall(10.0, 10.0, 100.0, 20.0)
    assert len(sim.walls) == MAX_WALLS
    for _ in range(MAX_BLACK_HOLES):
        sim.add_black_hole(200.0, 150.0, 1e5)
    with pytest.raises(abound.SceneError, match="too many black holes"):
        sim.add_black_hole(200.0, 150.0, 1e5)
    sim.black_holes.append(sim.black_holes[0])  # (the list is plain: the step looks)
    with pytest.raises(abound.SceneError, match="too many black holes"):
        sim.step()
