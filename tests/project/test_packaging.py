"""Packaging: no graphics on import, shipped data found, wheel contents, CI/README agreement."""
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from abound import resources
from user_docs import user_docs

REPO = Path(__file__).resolve().parents[2]


def _run(code, **kw):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, **kw)


def test_import_abound_does_not_import_pyglet():
    proc = _run("import sys, abound, abound.scene, abound.resources, abound.cli; "
                "abound.Simulation.from_config(None, backend='reference'); "
                "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pyglet', 'PIL', 'OpenGL')))")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_every_repo_config_is_found_through_resources():
    repo_configs = sorted(p.stem for p in (REPO / "configs").glob("*.toml"))
    assert {"default", "pool_break", "galton", "rain", "drop"} <= set(repo_configs)
    assert resources.config_names() == repo_configs
    for name in repo_configs:
        path = resources.config_path(name)
        assert path.read_bytes() == (REPO / "configs" / f"{name}.toml").read_bytes()
        tomllib.loads(path.read_text())


def test_shaders_are_found_through_resources():
    files = [p for p in (REPO / "shaders").iterdir() if p.suffix in (".vert", ".frag", ".glsl")]
    for p in files:
        assert resources.shader_source(p.name) == p.read_text()
    with pytest.raises(FileNotFoundError):
        resources.shader_source("no_such.frag")


def test_unknown_config_name():
    with pytest.raises(FileNotFoundError, match="no shipped scene 'nope.toml'"):
        resources.config_path("nope")


def test_pyproject_ships_configs_and_shaders():
    meta = tomllib.loads((REPO / "pyproject.toml").read_text())
    tool = meta["tool"]["setuptools"]
    assert tool["package-dir"]["abound.configs"] == "configs"
    assert tool["package-dir"]["abound.shaders"] == "shaders"
    assert "*.toml" in tool["package-data"]["abound.configs"]
    assert meta["project"]["scripts"]["abound"] == "abound.cli:main"


def test_ci_runs_exactly_the_readme_test_command():
    readme = (REPO / "README.md").read_text()
    ci = (REPO / ".ci" / "run").read_text()
    setup = readme.split("## Set up", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", setup, re.S)
    test_cmd = blocks[1].strip()
    assert "pytest" in test_cmd
    ci_lines = [ln.strip() for ln in ci.splitlines() if ln.strip() and not ln.strip().startswith("#")]
    assert ci_lines[-1] == test_cmd
    assert (REPO / ".ci" / "run").stat().st_mode & 0o111


def test_readme_documents_every_scene_key():
    from abound.scene import schema
    readme = user_docs()  # README.md and docs/ (the reference is docs/scenes.md)
    for section in list(schema.TABLES) + list(schema.ARRAYS):
        spec = schema.TABLES.get(section) or schema.ARRAYS[section]
        assert f"`[{section}]`" in readme or f"`[[{section}]]`" in readme, section
        for key in spec:
            assert f"`{key}`" in readme, (section, key)


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git to copy the tracked tree")
def test_installed_wheel_finds_its_data(tmp_path):
    """Build a wheel from the tracked files, install it into a directory, and use it from there."""
    src = tmp_path / "src"
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=REPO,
                           capture_output=True, text=True, check=True).stdout.split()
    for f in files:
        if (REPO / f).is_file():
            (src / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / f, src / f)
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps",
                            "--no-build-isolation", "-w", str(tmp_path / "dist"), str(src)],
                           capture_output=True, text=True, timeout=300)
    if build.returncode != 0:
        build = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps",
                                "-w", str(tmp_path / "dist"), str(src)],
                               capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stderr[-2000:]
    wheel = next((tmp_path / "dist").glob("abound-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    for p in (REPO / "configs").glob("*.toml"):
        assert f"abound/configs/{p.name}" in names
    assert "abound/abound.xml" in names  # xscreensaver's settings (abound saver --xscreensaver-setup)
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target",
                    str(target), str(wheel)], check=True, capture_output=True, timeout=300)
    code = ("import abound, sys; from abound import resources; "
            "p = resources.default_scene_path(); print(abound.__file__); print(p); "
            "from abound.cli import main; sys.exit(main(['check', 'galton']))")
    env = {"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=tmp_path, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    module_file, scene_path, check_line = proc.stdout.splitlines()
    assert Path(module_file).is_relative_to(target)
    assert Path(scene_path) == target / "abound" / "configs" / "default.toml"
    assert check_line.startswith("galton: ok (")
