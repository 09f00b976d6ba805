"""Shared fixtures: writing small agent logs, and the ../shared folder (skipped when absent)."""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def write_log(tmp_path: Path) -> Callable[..., Path]:
    """``write_log(lines, name="log.jsonl")`` writes a log under tmp_path and returns its path.

    Lines are dicts (written as JSON) or strings (written as they are, for malformed
    input); a name ending in ``.gz`` is gzip-compressed.
    """

    def write(lines: Iterable[dict | str], name: str = "log.jsonl") -> Path:
        text = "".join((ln if isinstance(ln, str) else json.dumps(ln, ensure_ascii=False)) + "\n" for ln in lines)
        path = tmp_path / name
        path.write_bytes(gzip.compress(text.encode()) if name.endswith(".gz") else text.encode())
        return path

    return write


@pytest.fixture
def shared_dir() -> Path:
    """The shared folder (``../shared`` or $SAM_SHARED_DIR); skips the test when it is absent."""
    path = Path(os.environ.get("SAM_SHARED_DIR", REPO / ".." / "shared")).resolve()
    if not (path / "spec").is_dir():
        pytest.skip(f"shared folder absent ({path}); set SAM_SHARED_DIR to the folder holding spec/ and data/")
    return path
