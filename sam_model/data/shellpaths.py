"""The path a word names, as a listing or the user names it: ``./src/a.py`` is ``src/a.py``
(:func:`listed_path`), an absolute path is also its part below the agent's working directory
(:func:`relative_paths`), a path an output prints is a file under the directory it ran in (:func:`file_under`; a
Windows path read as Windows reads it), and a Codex patch names the paths it adds, updates, moves or deletes
(:func:`patch_paths`).

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
_WINDOWS_ROOT = re.compile(rf"{_DRIVE.pattern}|\\\\[^\\/]")  # an absolute Windows path: a drive's or UNC's (\\server\share)


def is_windows_path(path: str) -> bool:
    """Whether ``path`` is written as Windows writes one: an absolute path (``C:\\repo``, ``C:/repo``, a UNC
    ``\\\\server\\share``) or one holding a backslash (MSBuild's ``src\\app.cs``)."""
    return bool(_WINDOWS_ROOT.match(path)) or "\\" in path


def file_under(cwd: str, path: str) -> str:
    """``path``, as an output or a call prints it, as the file it names when run in ``cwd`` ("" where the directory is
    unknown: ``path`` as it is; so is a path under a home, ``~/x``). A POSIX path is joined and normalised as
    before; a Windows one is read as Windows reads it, not glued onto ``cwd`` as a relative POSIX path (a test run's
    ``C:\\repo\\src\\app.py:12:`` under ``C:\\repo`` had been the file ``C:\\repo/C:\\repo\\src\\app.py``, an
    MSBuild ``src\\app.cs(12,5): error`` ``C:\\repo/src\\app.cs``, so a line it named was of no file the agent
    read): an absolute one (a drive's, a UNC's) is itself, a relative one under a Windows ``cwd`` is joined by
    Windows' rules (backslashes), and a relative one with backslashes under a POSIX ``cwd`` (a Windows tool's output
    in a POSIX shell) is joined with its backslashes read as separators. :func:`windows_key` compares them. A POSIX
    absolute path (``/tmp/x.py``) is itself under a Windows directory too, as a POSIX shell there (Git Bash, WSL)
    and a call naming it (a Read's ``/tmp/x.py``) write it: Windows' rules had joined it onto the directory's drive,
    ``C:\\tmp\\x.py``, no file of the call that read its line."""
    if not cwd or path.startswith("~"):
        return path
    if _WINDOWS_ROOT.match(path):
        return ntpath.normpath(path)
    if _WINDOWS_ROOT.match(cwd) and not path.startswith("/"):
        return ntpath.normpath(ntpath.join(cwd, path))
    return posixpath.normpath(posixpath.join(cwd, path.replace("\\", "/") if "\\" in path else path))


def windows_key(path: str) -> str:
    """``path`` as two marks of one file compare where either is a Windows path (:func:`is_windows_path`;
    shownlines.same_file): with slashes for its backslashes and in lower case, since Windows reads
    ``C:\\Repo\\App.py`` and ``c:/repo/app.py`` as one file (a call may name it one way, a tool's output another)."""
    return path.replace("\\", "/").lower()


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
