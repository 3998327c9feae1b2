"""The scene reference's key tables, generated from the schema.

docs/scenes.md holds the prose; each section's table of keys sits between
two markers and is written from abound/scene/schema.py (each key's checker
says its type, the spec its default and meaning), so the reference and the
validation cannot disagree (tests/scene/test_scene_reference.py checks the doc is
current)::

    python -m abound.scene.reference docs/scenes.md          # rewrite the tables
    python -m abound.scene.reference --check docs/scenes.md  # exit 1 if out of date
"""
import re
import sys
from pathlib import Path

from abound.scene import schema

BEGIN = "<!-- keys of {label}: generated from abound/scene/schema.py by python -m abound.scene.reference -->"
END = "<!-- end of keys -->"
BLOCK = re.compile(re.escape(BEGIN).replace(r"\{label\}", r"(?P<label>\S+)") + r"\n.*?" + re.escape(END), re.S)


def label(section):
    """How the scene file writes a section: [world], [[spawn]]."""
    return f"[{section}]" if section in schema.TABLES else f"[[{section}]]"


def spec(section):
    """The schema's key -> entry table of a section."""
    return schema.TABLES.get(section) or schema.ARRAYS[section]


def _default(entry):
    if len(entry) > 3:
        return entry[3]
    value = entry[1]
    if value is schema.REQUIRED:
        return "required"
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "`true`" if value else "`false`"
    if isinstance(value, str):
        return f'`"{value}"`'
    return f"`{value!r}`"


def table(section):
    """The Markdown table of one section's keys; consecutive keys alike in
    type, default and meaning share a row (`x`, `y`)."""
    rows = []
    for key, entry in spec(section).items():
        cells = (entry[0].doc, _default(entry), entry[2])
        if rows and rows[-1][1] == cells:
            rows[-1][0].append(key)
        else:
            rows.append(([key], cells))
    out = ["| key | type | default | unit, meaning |", "|---|---|---|---|"]
    for keys, cells in rows:
        cells = (", ".join(f"`{k}`" for k in keys),) + cells
        out.append("|" + "|".join(f" {c} " if c else " " for c in cells) + "|")
    return "\n".join(out)


def block(section):
    return "\n".join([BEGIN.format(label=label(section)), table(section), END])


def rewrite(text):
    """text with every marked table written again from the schema."""
    bylabel = {label(s): s for s in schema.SECTIONS}

    def one(match):
        label = match.group("label")
        if label not in bylabel:
            raise ValueError(f"no section {label} in the schema")
        return block(bylabel[label])
    return BLOCK.sub(one, text)


def main(argv=None):
    args = list(sys.argv[1:] if argv is None else argv)
    check = "--check" in args
    paths = [a for a in args if a != "--check"]
    if len(paths) != 1:
        print("usage: python -m abound.scene.reference [--check] docs/scenes.md", file=sys.stderr)
        return 2
    path = Path(paths[0])
    text = path.read_text(encoding="utf-8")
    new = rewrite(text)
    missing = [s for s in schema.SECTIONS if BEGIN.format(label=label(s)) not in text]
    if missing:
        print(f"{path}: no marked table for {', '.join(map(label, missing))}", file=sys.stderr)
        return 1
    if check:
        if new != text:
            print(f"{path}: the key tables are out of date: python -m abound.scene.reference {path}",
                  file=sys.stderr)
            return 1
        return 0
    path.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
