"""Golden images of a few canonical scenes (tests/render/golden/*.png).

Regenerate them (after a deliberate change of the picture; look at the new
PNGs before committing them):

    ABOUND_REGEN_GOLDEN=1 python -m pytest tests/render/test_capture_golden.py

A frame passes when at most MAX_BAD_PIXELS pixels differ from the golden by
more than TOLERANCE (of 255) in some channel: rasteriser noise passes, a ball
moved by one pixel (tens of edge pixels change a lot) or a wrong colour does
not. On failure the actual, expected and difference images are written to
tests/render/golden/_failures/.
"""
import os
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from abound import Simulation
from abound.capture import capture_frame, render_frames

GOLDEN = Path(__file__).parent / "golden"
FAILURES = GOLDEN / "_failures"
TOLERANCE = 24
MAX_BAD_PIXELS = 6
REGEN = os.environ.get("ABOUND_REGEN_GOLDEN") == "1"


def still_scene():
    """Shading, a pinned peg, walls, several colours and sizes, a big ball; no stepping."""
    sim = Simulation(320, 240, gravity=(0.0, -980.0))
    sim.scene = {"render": {"background": "#101018", "shading": True, "color_mode": "ball",
                            "wall_color": "#c0c0c0"}}
    sim.add_wall(20.0, 40.0, 150.0, 20.0)
    sim.add_wall(300.0, 30.0, 300.0, 120.0)
    sim.add_ball(230.0, 150.0, radius=60.0, color="#f1faee")
    sim.add_ball(60.0, 180.0, radius=25.0, color="#ff595e")
    sim.add_ball(110.0, 120.0, radius=9.5, color="#8ac926")
    sim.add_ball(140.0, 70.0, radius=4.0, color="#ffca3a")
    sim.add_ball(90.0, 60.0, radius=12.0, color="#909090", pinned=True)
    return sim


def flight_scene():
    """Colour by speed with trails: three balls in free flight (no contact in 20 frames)."""
    sim = Simulation(320, 240, gravity=(0.0, -980.0), dt=1.0 / 60.0)
    sim.scene = {"render": {"background": "#14141f", "shading": False, "color_mode": "speed",
                            "trails": 0.6}}
    sim.add_ball(40.0, 60.0, vx=300.0, vy=500.0, radius=8.0)
    sim.add_ball(160.0, 200.0, vx=-50.0, vy=0.0, radius=10.0)
    sim.add_ball(280.0, 40.0, vx=-200.0, vy=600.0, radius=6.0)
    return sim


def cases():
    yield "still", lambda: capture_frame(still_scene(), (320, 240))
    yield "still_letterbox", lambda: capture_frame(still_scene(), (200, 200))
    yield "flight_trails", lambda: list(render_frames(flight_scene(), frames=21, size=(320, 240)))[-1]


def _save(img, path):
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(img).save(path)


@pytest.mark.parametrize("name,make", list(cases()), ids=[c[0] for c in cases()])
def test_golden(name, make):
    actual = make()
    path = GOLDEN / f"{name}.png"
    if REGEN or not path.exists():
        if not REGEN:
            pytest.fail(f"no golden image {path}; run ABOUND_REGEN_GOLDEN=1 python -m pytest {__file__}")
        _save(actual, path)
        return
    expected = np.asarray(Image.open(path).convert("RGBA"))
    assert expected.shape == actual.shape
    diff = np.abs(actual.astype(int) - expected.astype(int)).max(axis=2)
    bad = int((diff > TOLERANCE).sum())
    if bad > MAX_BAD_PIXELS:
        _save(actual, FAILURES / f"{name}_actual.png")
        _save(expected, FAILURES / f"{name}_expected.png")
        _save(np.clip(diff * 4, 0, 255).astype(np.uint8), FAILURES / f"{name}_diff.png")
        pytest.fail(f"{name}: {bad} pixels differ by more than {TOLERANCE} from {path} "
                    f"(see {FAILURES}/{name}_actual.png, _expected.png, _diff.png)")


def test_golden_comparison_catches_a_one_pixel_move():
    sim = still_scene()
    a = capture_frame(sim, (320, 240))
    sim.positions[2, 0] += 1.0  # the 9.5 px ball, one pixel to the right
    b = capture_frame(sim, (320, 240))
    diff = np.abs(a.astype(int) - b.astype(int)).max(axis=2)
    assert int((diff > TOLERANCE).sum()) > MAX_BAD_PIXELS
