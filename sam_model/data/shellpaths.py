"""The path a word names, as a listing or the user names it: ``./src/a.py`` is ``src/a.py``
(:func:`listed_path`), an absolute path is also its part below the agent's working directory
(:func:`relative_paths`), and a Codex patch names the paths it adds, updates, moves or deletes (:func:`patch_paths`).

A value is traced to the earlier event that said it, so a path must be read the way that event printed it: a
``find`` prints ``./src/a.py``, the user writes ``src/a.py``, a cwd-relative grep prints neither absolute path.
Every reader of a command, a patch or a tool argument reads paths by these rules, so they live in one place.
"""

from __future__ import annotations

import ntpath
import posixpath
import re


def listed_path(word: str) -> str:
    """A word as the path it names: ``./src/a.py`` is ``src/a.py`` and ``src/`` is ``src``, as an earlier listing
    prints them (a find prints ``./src/a.py``, which says ``src/a.py``; no listing says ``src/``); so for Windows'
    ``.\\src\\a.py`` and ``src\\``."""
    word = word[2:] if word.startswith(("./", ".\\")) and len(word) > 2 else word
    return word.rstrip("/\\") or word


_DRIVE = re.compile(r"[A-Za-z]:[\\/]")  # a Windows path's start, C:\ or C:/


def relative_paths(path: str, cwd: str) -> list[str]:
    """``path``'s part below the agent's working directory ``cwd``, as the user, a grep or a listing run there names
    it (``/home/me/app/src/a.py`` under ``/home/me/app``: ``src/a.py``); [] where ``path`` is no absolute path
    strictly below an absolute ``cwd`` (``..`` read as a step up, so ``/home/me/app/../b`` is outside; ``cwd`` itself,
    the root and a path of several lines give none). Under a Windows ``cwd`` (``C:\\me\\app``, its case aside) the
    part is given with backslashes, then with slashes, as Windows' tools and a user write it."""
    windows = bool(_DRIVE.match(cwd))
    if "\n" in path or not (_DRIVE.match(path) if windows else path.startswith("/") and cwd.startswith("/")):
        return []
    paths = ntpath if windows else posixpath
    sep = "\\" if windows else "/"
    full, base = paths.normpath(path), paths.normpath(cwd).rstrip(sep)
    if not base or base.endswith(":") or not (full.lower() if windows else full).startswith(
            (base.lower() if windows else base) + sep):
        return []
    rel = full[len(base) + 1:]
    return [rel, rel.replace("\\", "/")] if windows and "\\" in rel else [rel] if rel else []


# Codex's patch format (codex-rs apply-patch): "*** Begin Patch", then per file "*** Add File: PATH" (its lines
# "+..."), "*** Update File: PATH" (optionally "*** Move to: PATH", then "@@" hunks of " ", "-", "+" lines) or
# "*** Delete File: PATH", then "*** End Patch". A body line starts with one of " -+@", never "***".
PATCH_BEGIN = "*** Begin Patch"
_PATCH_FILE = re.compile(r"^\*\*\* (?:Add File|Update File|Delete File|Move to): *(.*?)\s*$", re.MULTILINE)


def patch_paths(text: str) -> list[str] | None:
    """The paths a Codex patch names (``*** Add File:``, ``*** Update File:``, ``*** Delete File:``, ``*** Move
    to:``), in order; None when ``text`` is no patch (it does not open with ``*** Begin Patch``). The paths are what
    the agent acts on, values an earlier listing or view said; the hunks are its own writing (added lines) and
    copies of a file it viewed (context and removed lines, anchors): free text, which the spec does not trace, so no
    line of them is."""
    if not text.lstrip().startswith(PATCH_BEGIN):
        return None
    return [listed_path(m.group(1)) for m in _PATCH_FILE.finditer(text) if m.group(1)]
