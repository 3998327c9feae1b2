"""The documentation a user reads: README.md and the pages under docs/, as one text.

Tests that hold the docs to the program (every command shown runs, every key
and scene key is documented, the swayidle lines work) read it from here, so
a section may move between README and docs/ without a test losing it.
"""
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PAGES = [REPO / "README.md"] + sorted((REPO / "docs").glob("*.md"))


def user_docs():
    return "\n\n".join(p.read_text() for p in PAGES)
