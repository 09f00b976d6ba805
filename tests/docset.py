"""The documentation set the tests read: README.md (the front door) and docs/**/*.md (its detail, moved there
verbatim). A test that checks what the documentation says, or runs its snippets, reads all of it, so a passage
moved between the files is still checked, and names a failure's place as FILE:LINE."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def files() -> list[Path]:
    """README.md first, then the docs in path order: the order the snippet runners go through them."""
    return [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]


def texts() -> list[tuple[str, str]]:
    """(the file's path from the repo root, its text) for every file of the set."""
    return [(p.relative_to(REPO).as_posix(), p.read_text(encoding="utf-8")) for p in files()]


def text() -> str:
    """All of the set as one text, for a test that looks for a passage wherever it now lives."""
    return "\n\n".join(body for _, body in texts())


def blocks(pattern: re.Pattern, group: int = 1) -> list[tuple[str, str]]:
    """(FILE:LINE, the block's text) of every match of ``pattern`` (a fenced block) in every file."""
    return [(f"{name}:{body.count(chr(10), 0, m.start()) + 1}", m.group(group))
            for name, body in texts() for m in pattern.finditer(body)]
