"""Crash-safe saves shared by every writer in sam_model, and friendly errors for files users hand us.

One mechanism serves files (a memory bank, a Janus checkpoint, meta.json) and folders (an export, a
retriever with its index, a FAISS index folder):

- **Staging.** A save writes into a private staging folder ``.<name>.<token>.tmp`` next to the
  target, never into the target. The staging folder holds an ``.owner`` file that the writer keeps
  locked (``flock``) for as long as it lives, so anyone can tell a live writer's staging from the
  leftovers of a killed one: the kernel drops the lock when the process dies.
- **Swap.** When the payload is complete (and fsynced) it is moved over the target under an
  exclusive lock on the parent folder: a file with one ``os.replace``; a folder with one atomic
  exchange of the two paths (Linux ``renameat2(RENAME_EXCHANGE)``: the target path never stops
  existing, the previous version lands in the staging folder and is deleted with it). Where the
  exchange is not available (another OS, a filesystem that refuses it) a folder takes two renames
  (the previous version into the staging folder as ``.previous``, the new one into place).
- **Readers** of folders hold a shared lock on the parent while they load, so they never see the gap
  between the two renames, and a writer never deletes a version while it is being read. A writer
  killed inside the gap leaves the previous version in its staging folder; :func:`reading` and
  :func:`exists` move it back first (so a caller that does "load it if it exists, else create a new
  one" never mistakes the gap for a missing store), and readers that cannot wait read it from there.
- **Cleanup.** Every swap (and every load that can get the lock without waiting) removes the
  staging folders of dead writers in that parent folder, of any target.

Concurrent writers on one path therefore end with one writer's complete version: the last to swap
wins ("last writer wins"), and no writer ever deletes a file another writer's version needs. Staging
and reading take the parent lock shared, so writers only wait for each other (and for readers)
during the swap itself. The locks are advisory ``flock`` locks on the parent folder (no lock files
are created); on systems without them (Windows, some network filesystems) saves stay atomic against
crashes but not against concurrent writers, and stale staging folders are removed only after a day.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import errno
import hashlib
import json
import logging
import numbers
import os
import re
import secrets
import select
import shutil
import stat
import string
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger(__name__)

# numpy reads an .npy header (also each array of an .npz) with ast.literal_eval, and CPython 3.11's AST converter
# keeps its recursion depth in interpreter-wide state: two threads parsing at once can fail one with "SystemError:
# AST constructor recursion depth mismatch" (seen loading one Qdrant save from four threads; python/cpython
# gh-106905). Every np.load of sam_model holds this lock, so its loads never parse two headers at once.
NPY_LOCK = threading.Lock()
OWNER = ".owner"  # inside a staging folder: locked by its writer while it lives
PREVIOUS = ".previous"  # inside a staging folder: the version a folder swap moved out
STAGING_RE = re.compile(r"^\.(?P<name>.+)\.(?P<token>[0-9a-f]{12})\.tmp$")
UNLOCKED_STALE_AGE_S = 24 * 3600  # without flock, a staging folder this old is taken as dead
EXCHANGE = os.environ.get("SAM_NO_EXCHANGE", "") in ("", "0")  # off: folder swaps take the two-rename path


def _in_gap() -> None:
    """Between the two renames of a folder swap without exchange; a test kills the process here
    (``SAM_GAP_PAUSE_S``) to check that no reader ever finds nothing."""
    pause = os.environ.get("SAM_GAP_PAUSE_S")
    if pause:
        time.sleep(float(pause))


AT_FDCWD, RENAME_EXCHANGE = -100, 2
_renameat2: Any = None  # libc's renameat2 once looked up; False where there is none


def _exchange(a: Path, b: Path) -> bool:
    """Swap the paths ``a`` and ``b`` in one atomic step (Linux renameat2 RENAME_EXCHANGE); False, with nothing
    changed, where the OS or the filesystem cannot (then the caller falls back to two renames)."""
    global _renameat2
    if _renameat2 is None:
        try:
            fn = ctypes.CDLL(None, use_errno=True).renameat2 if sys.platform.startswith("linux") else False
        except (AttributeError, OSError):
            fn = False
        if fn:
            fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
            fn.restype = ctypes.c_int
        _renameat2 = fn
    if not _renameat2:
        return False
    if _renameat2(AT_FDCWD, os.fsencode(a), AT_FDCWD, os.fsencode(b), RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV):
        return False
    raise OSError(err, f"cannot swap {b} for its new version: {os.strerror(err)}", str(b))


class SAMFileError(ValueError):
    """A file given to sam_model is missing, corrupt or of the wrong kind.

    The message always names the path and says what to do about it.
    """


# ---- locks ------------------------------------------------------------------------------------------------

_warned_no_lock = False


def _flock(fd: int, exclusive: bool, blocking: bool) -> bool:
    """Lock ``fd``; False when ``blocking`` is off and someone else holds a conflicting lock.

    Where flock is unavailable (no fcntl, or a filesystem that refuses it) this returns True
    without locking, after one warning: saves are then atomic but not safe against concurrent writers.
    """
    global _warned_no_lock
    if fcntl is None:
        return True
    flags = (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | (0 if blocking else fcntl.LOCK_NB)
    try:
        fcntl.flock(fd, flags)
        return True
    except BlockingIOError:
        return False
    except OSError as err:
        if err.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
            return False
        if not _warned_no_lock:
            log.warning("file locks are not supported here (%s); saves are atomic but not safe against "
                        "concurrent writers", err)
            _warned_no_lock = True
        return True


@contextlib.contextmanager
def _folder_lock(folder: Path, exclusive: bool, blocking: bool = True) -> Iterator[bool]:
    """Hold a shared or exclusive lock on ``folder`` itself; yields whether it is held (or unsupported).

    A missing folder yields True without a lock (there is nothing in it to protect).
    """
    try:
        fd = os.open(folder, os.O_RDONLY)
    except (FileNotFoundError, NotADirectoryError, PermissionError):
        yield True
        return
    try:
        yield _flock(fd, exclusive, blocking)
    finally:
        os.close(fd)  # closing drops the lock


def _owner_alive(staging: Path) -> bool:
    """Whether the writer of ``staging`` still runs: it holds a lock on ``staging/.owner``."""
    try:
        fd = os.open(staging / OWNER, os.O_RDONLY)
    except FileNotFoundError:
        return False  # killed before it made the owner file (or cleaning up after itself)
    except OSError:
        return True  # cannot tell: leave it alone
    try:
        if fcntl is None:
            return time.time() - os.fstat(fd).st_mtime < UNLOCKED_STALE_AGE_S
        return not _flock(fd, exclusive=True, blocking=False)
    finally:
        os.close(fd)


# ---- staging, swap, cleanup -------------------------------------------------------------------------------


class _Staging:
    """A writer's private staging folder next to ``target``, with its owner lock held."""

    def __init__(self, target: Path):
        self.target = target
        parent = target.parent
        parent.mkdir(parents=True, exist_ok=True)
        with _folder_lock(parent, exclusive=False):  # cleanup (exclusive) never sees it without its lock
            while True:
                self.folder = parent / f".{target.name}.{secrets.token_hex(6)}.tmp"
                try:
                    os.mkdir(self.folder)
                    break
                except FileExistsError:
                    continue
            self._fd = os.open(self.folder / OWNER, os.O_RDWR | os.O_CREAT, 0o644)
            _flock(self._fd, exclusive=True, blocking=True)  # a fresh file: never contended
        self.payload = self.folder / target.name

    def swap(self) -> None:
        """Move the payload over the target (a folder via ``.previous``), then clean dead writers' leftovers."""
        parent = self.target.parent
        _fsync_tree(self.payload)
        with _folder_lock(parent, exclusive=True):
            _clean_locked(parent)
            if self.payload.is_dir() and not self.payload.is_symlink():
                present = self.target.exists() or self.target.is_symlink()
                if not (present and EXCHANGE and _exchange(self.payload, self.target)):
                    if present:  # no atomic exchange here: two renames, the gap repaired by readers
                        os.replace(self.target, self.folder / PREVIOUS)
                        _in_gap()
                    os.replace(self.payload, self.target)
            else:
                os.replace(self.payload, self.target)
        _fsync_dir(parent)

    def close(self) -> None:
        """Remove the staging folder (the previous version of a folder swap with it) and drop the lock."""
        try:
            shutil.rmtree(self.folder, ignore_errors=True)
        finally:
            os.close(self._fd)


def _clean_locked(parent: Path) -> list[Path]:
    """Under the parent's exclusive lock: restore targets a killed swap left missing, remove dead stagings."""
    removed = []
    for staging in _stagings(parent):
        if _owner_alive(staging):
            continue
        target = parent / STAGING_RE.match(staging.name)["name"]
        previous = staging / PREVIOUS
        if previous.exists() and not (target.exists() or target.is_symlink()):
            os.replace(previous, target)  # killed between the two renames of a folder swap
            log.info("restored %s from an interrupted save", target)
        shutil.rmtree(staging, ignore_errors=True)
        removed.append(staging)
    return removed


def _stagings(parent: Path, name: str | None = None) -> list[Path]:
    try:
        entries = list(os.scandir(parent))
    except (FileNotFoundError, NotADirectoryError):
        return []
    out = []
    for e in entries:
        m = STAGING_RE.match(e.name)
        if m and (name is None or m["name"] == name) and e.is_dir(follow_symlinks=False):
            out.append(Path(e.path))
    return out


def clean_stale(folder: str | os.PathLike, wait: bool = False) -> list[Path]:
    """Remove what killed saves left in ``folder`` (restoring a target a killed swap left missing).

    Returns the staging folders removed. Live writers' staging folders are never touched. With
    ``wait=False`` nothing is done while another process holds the folder's lock.
    """
    parent = Path(folder)
    with _folder_lock(parent, exclusive=True, blocking=wait) as held:
        return _clean_locked(parent) if held else []


def leftovers(folder: str | os.PathLike) -> list[Path]:
    """Staging folders in ``folder`` (live writers' and dead ones'): what a crash test counts."""
    return _stagings(Path(folder))


def _fsync_tree(path: Path) -> None:
    """fsync a file, or every file and folder under a folder, so a power loss cannot undo a swap."""
    if path.is_file():
        _fsync_file(path)
        return
    for root, _dirs, files in os.walk(path):
        for f in files:
            _fsync_file(Path(root) / f)
        _fsync_dir(Path(root))


def _fsync_file(path: Path) -> None:
    with open(path, "rb") as fh:
        os.fsync(fh.fileno())


def _fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):  # not every platform can open a folder
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


@contextlib.contextmanager
def _staged(path: str | os.PathLike, folder: bool) -> Iterator[Path]:
    target = Path(path)
    if target.name in ("", ".", ".."):  # the swap replaces the path's last name: it must be a name
        raise SAMFileError(f"cannot save to {str(path)!r}: give the file or folder by its name (not '.' or '..'); "
                           "nothing was written")
    if not folder and (target.is_symlink() or target.exists() and not target.is_file()):
        kind = "a link" if target.is_symlink() else "a folder" if target.is_dir() else "not a regular file (a pipe " \
            "or a device)"
        raise SAMFileError(f"cannot write {target}: it is {kind}, which a save would replace; give the path of a "
                           "file to write (nothing was written)")
    try:
        staging = _Staging(target)
    except OSError as exc:  # the folder is not writable: say which and why, not the staging name it tried
        raise SAMFileError(f"cannot write into {target.absolute().parent}: {exc.strerror or exc}; give a path in a "
                           "folder you can write (nothing was written)") from None
    try:
        if folder:
            staging.payload.mkdir()
        yield staging.payload
        if not (staging.payload.exists() or staging.payload.is_symlink()):
            raise FileNotFoundError(f"the writer did not create {staging.payload}; nothing was saved to {target}")
        staging.swap()
    finally:
        staging.close()


def atomic_path(path: str | os.PathLike) -> contextlib.AbstractContextManager[Path]:
    """Yield a path to write the new content of the file ``path`` to; on success it replaces ``path``.

    Use it for writers that want a file name (faiss.write_index, torch.save, safetensors). The path
    is in a private staging folder, so the writer may create it any way it likes. On an exception,
    or if the process is killed, ``path`` is left as it was. Concurrent writers: the last one wins.
    """
    return _staged(path, folder=False)


def atomic_dir(path: str | os.PathLike, marker: str | None = None,
               keys: Sequence[str] = ()) -> contextlib.AbstractContextManager[Path]:
    """Yield an empty folder to build the new content of the folder ``path`` in; on success it
    replaces ``path`` as a whole (readers under :func:`reading` see the old or the new, never a mix).

    ``marker``: the file every folder of this kind holds (``config.json``, ``store.json``), and ``keys``: the keys
    one of which such a file of this kind holds (:func:`check_replaceable`): what is at ``path`` is replaced only
    when it is such a folder, an empty one, or nothing, so a save to the wrong path (a folder of one's own files,
    a Hugging Face model folder with its own config.json, a file) is refused in one line instead of wiping it."""
    if marker is not None:
        check_replaceable(Path(path), marker, keys)
    return _staged(path, folder=True)


MARKER_HEAD = 1 << 16  # how much of a marker file is read to tell its kind (a store.json may be 100 MB)


def check_replaceable(target: Path, marker: str, keys: Sequence[str] = ()) -> None:
    """Raise SAMFileError unless ``target`` is missing, an empty folder, or a folder holding ``marker``, whose
    first 64 KiB are a JSON object naming one of ``keys`` (a file called config.json is not yet an export's: a
    project folder or a Hugging Face model folder was replaced whole)."""
    if target.is_symlink() or (target.exists() and not target.is_dir()):
        raise SAMFileError(f"{target} is a file or a link, not a saved folder: save to a new folder (nothing was "
                           "written)")
    if not target.is_dir():
        return
    if not (target / marker).exists():
        if any(not STAGING_RE.match(e.name) for e in target.iterdir()):  # killed saves' leftovers are not its own
            raise SAMFileError(f"{target} holds files but no {marker}, so it is not a folder this save wrote: save "
                               "to a new or empty folder (nothing was written, nothing was removed)")
        return
    if keys:
        try:
            with open(target / marker, "rb") as fh:
                head = fh.read(MARKER_HEAD).decode("utf-8", errors="replace").lstrip("\ufeff \t\r\n")
        except OSError:
            head = ""
        if not (head.startswith("{") and any(f'"{k}"' in head for k in keys)):
            raise SAMFileError(f"{target} holds a {marker} that is not one this save writes (none of "
                               f"{', '.join(repr(k) for k in keys)} in it), so it is not a folder this save wrote: "
                               "save to a new or empty folder (nothing was written, nothing was removed)")


@contextlib.contextmanager
def reading(path: str | os.PathLike) -> Iterator[Path]:
    """Hold ``path`` still while it is read: yields the folder (or file) to read.

    Readers share a lock with each other; a save's swap waits for them. If a writer was killed in
    the middle of swapping a folder, the previous version is read from where the writer left it.
    Leftovers of killed saves are cleaned first, when that needs no waiting.
    """
    target = Path(path)
    parent = target.parent
    _repair(target)
    with _folder_lock(parent, exclusive=False):
        if target.exists():
            yield target
            return
        orphans = [s / PREVIOUS for s in _stagings(parent, target.name) if (s / PREVIOUS).exists()]
        if orphans and not any(_owner_alive(p.parent) for p in orphans):
            yield max(orphans, key=lambda p: p.parent.stat().st_mtime)
            return
        yield target  # missing: the caller's own check says so


def _repair(target: Path) -> None:
    """Clean what killed saves left next to ``target``: without waiting when the target is there; waiting for
    the folder lock when it is missing and a dead writer's ``.previous`` may hold it (the gap of a swap)."""
    parent = target.parent
    missing = not (target.exists() or target.is_symlink())
    wait = missing and any((s / PREVIOUS).exists() for s in _stagings(parent, target.name))
    clean_stale(parent, wait=wait)


def exists(path: str | os.PathLike) -> bool:
    """Whether a saved file or folder is at ``path``, after moving back a version a writer killed between the two
    renames of a swap left aside: use it (not ``Path.exists``) to decide between loading and creating anew."""
    target = Path(path)
    _repair(target)
    if target.exists():
        return True
    with _folder_lock(target.parent, exclusive=False):
        return target.exists() or any((s / PREVIOUS).exists() and not _owner_alive(s)
                                      for s in _stagings(target.parent, target.name))


@contextlib.contextmanager
def lock_file(lock: str | os.PathLike, blocking: bool = True) -> Iterator[bool]:
    """An exclusive flock on the file ``lock`` (created, 0600), across processes and threads (each call opens its
    own descriptor); yields whether it is held: False only when ``blocking`` is off and another holds it (where
    flock is unsupported, True after one warning, as :func:`_flock` says). Closing drops the lock."""
    p = Path(lock)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(p, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        yield _flock(fd, exclusive=True, blocking=blocking)
    finally:
        os.close(fd)


@contextlib.contextmanager
def merge_lock(path: str | os.PathLike) -> Iterator[None]:
    """Hold ``path`` for one read-merge-write (a cache that several runs extend): without it two writers each read
    the old file, and the second's atomic rename drops the first's additions. The lock is a sidecar file
    ``.<name>.lock`` beside it (the file itself is replaced by each write)."""
    p = Path(path)
    with lock_file(p.parent / f".{p.name}.lock"):
        yield


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically."""
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    atomic_write_bytes(path, text.encode("utf-8"))


def write_json_lists(path: Path, lists: dict[str, tuple[Sequence, Callable[[Any], Any] | None]], rest: str = "{}",
                     chunk: int = 1000) -> str:
    """Write one JSON object to ``path`` (not atomically: into a staging folder): its keys ``lists``, each
    ``[row(r) for r in rows]`` of ``key: (rows, row)`` (``row`` None: the rows as they are; tuples are JSON arrays)
    encoded ``chunk`` rows at a time, and those of ``rest`` (a JSON object, already encoded: the small part a
    caller encodes while it holds its lock).

    Why in chunks: one ``json.dumps`` call holds the interpreter to its end (175 ms for 100k store entries), so a
    checkpoint written beside a server's request threads (sam_model.serve) lets them run between chunks. Returns
    the file's SHA-256, taken of the bytes as they are written (a store records it: store.json.sha256), not by
    reading the file again."""
    digest = hashlib.sha256()
    with open(path, "wb") as f:
        def write(text: str) -> None:
            data = text.encode("utf-8")
            digest.update(data)
            f.write(data)

        write("{")
        for n, (key, (rows, row)) in enumerate(lists.items()):
            write((", " if n else "") + json.dumps(key) + ": [")
            for at in range(0, len(rows), chunk):
                part = rows[at:at + chunk]
                write((", " if at else "") + json.dumps(part if row is None else [row(r) for r in part])[1:-1])
            write("]")
        tail = rest.strip()[1:-1].strip()
        write((", " if tail and lists else "") + tail + "}")
    return digest.hexdigest()


def refuse_links(folder: Path, what: str, fix: str) -> None:
    """Raise SAMFileError naming the first link inside ``folder`` (the folder itself may be one: the user's own):
    a saved folder holds its files itself, and a link in it read (and a re-save copied in) another folder's
    memories, silently (found by review: ``store/`` linked to another user's)."""
    for root, dirs, files in os.walk(folder):  # links to folders are listed in dirs, not followed
        for name in (*dirs, *files):
            p = Path(root) / name
            if p.is_symlink():
                raise SAMFileError(f"{p} is a link ({os.readlink(p)}); a saved {what} holds its files itself: {fix}")


def not_found(path: str | os.PathLike) -> str:
    """Why a path that does not exist is not there: "not found", or a link to nothing (a broken link or a loop of
    links, which were reported as "not found" beside a link the user could see)."""
    p = Path(path)
    if p.is_symlink():
        return "is a link to nothing (broken, or a loop of links)"
    if p.exists() and not p.is_file() and not p.is_dir():
        return "is not a regular file (a pipe, socket or device: write it to a file first)"
    return "not found"


class GivenTwice(NamedTuple):
    """A file given twice in a list: its first spelling and the later one; ``str()`` names it for an error line."""

    first: str
    again: str

    def __str__(self) -> str:
        return self.first if self.first == self.again else f"{self.first} (also as {self.again})"


def given_twice(paths: Sequence[str | os.PathLike]) -> GivenTwice | None:
    """The first of ``paths`` that names a file given earlier in the list, however spelt (``a.jsonl``,
    ``./a.jsonl``, its absolute path, a link to it); else None. Why: a file given twice is almost always a shell
    glob that matched it twice (``logs/*.jsonl logs/a.jsonl``), and read twice its episodes clashed in an error
    about their content ("episode 'x' already appeared"), or counted twice. Every command that takes a list of data
    files refuses it naming it, in its own words (sam-data validate, data.train, data.val); none drops the copy
    silently."""
    seen: dict[object, str] = {}
    for path in paths:
        name = os.fspath(path)
        try:
            st = os.stat(name)
            key: object = (st.st_dev, st.st_ino)
        except (OSError, ValueError):  # not there (yet), or not a path (toolworlds:8): compared as written
            key = os.path.realpath(name)
        if key in seen:
            return GivenTwice(seen[key], name)
        seen[key] = name
    return None


def require_file(path: str | os.PathLike, what: str, hint: str = "") -> Path:
    """Return ``path`` as a Path, or raise SAMFileError naming it if it does not exist."""
    p = Path(path)
    if not p.exists():
        msg = f"{what} {not_found(p)}: {p}"
        raise SAMFileError(msg + (f" ({hint})" if hint else ""))
    return p


SAFE_NAME_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,254}$")


def safe_name(folder: Path, name: object, where: str, fix: str) -> Path:
    """``folder / name`` for a file name read from a saved file, refused unless it names a plain file *inside*
    ``folder``: no separator, no ``..``, no absolute path, no leading dot, not a link. A saved folder names
    nothing outside itself, so a crafted ``meta.json`` cannot make a load read ``../../outside/stolen.faiss``.
    ``where``: the file and field, for the message (``.../meta.json: field 'index_file'``)."""
    if not isinstance(name, str) or not SAFE_NAME_RE.match(name) or ".." in name:
        raise SAMFileError(f"{where} must be a plain file name inside {folder}, got {json.dumps(name, default=repr)}; "
                           f"the file was not read; {fix}")
    path = folder / name
    if path.is_symlink():
        raise SAMFileError(f"{where}: {path} is a symbolic link; a saved folder names only its own files, so it "
                           f"was not followed; {fix}")
    return path


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object as a dict, refusing a key said twice (``object_pairs_hook``). Why: Python's json keeps the last
    of two values silently, so ``{"kind": "user", "kind": "tool"}`` or a config with one option twice reads as
    whichever came last, where the writer meant one of them; other readers take the first, or refuse."""
    d = dict(pairs)
    if len(d) < len(pairs):
        seen: set[str] = set()
        for k, _ in pairs:
            if k in seen:
                raise ValueError(f"the key {k[:60]!r} is given twice in one object (keep one)")
            seen.add(k)
    return d


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file, read in 1 MiB blocks (an export's weights, an index's vectors: hundreds of MB)."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def is_sha256(value: Any) -> bool:
    """Whether ``value`` is a SHA-256 as a saved record holds one: 64 hex digits of either case (PowerShell's
    Get-FileHash writes capitals; sha256sum and hashlib lowercase). The one rule of every digest a load checks
    (:func:`check_digest`): an export's config.json took lowercase alone where an index's meta.json took both."""
    return isinstance(value, str) and len(value) == 64 and all(c in string.hexdigits for c in value)


def check_digest(path: Path, digest: Any, meta_path: Path, field: str | None, fix: str,
                 saver: str = "this index") -> None:
    """Refuse (SAMFileError, one line naming the file and ``fix``) a saved file whose SHA-256 is not ``digest``
    (None: a save from before the record, loaded unchecked), the one ``meta_path`` recorded under ``field`` (None:
    the file holds the digest alone, as store.json.sha256) when ``saver`` ("this index") saved it. Bytes changed inside a file of
    vectors keep its format's framing: it loaded, its searches ranked by other vectors or NaN; a store.json edited
    by hand loaded other memories' texts or scopes. Why one function: the index's, the store's and an export's
    digests were checked by two rules (one took capitals, one did not)."""
    if digest is None:
        return
    recorded = f"{meta_path}: field {field!r}" if field else str(meta_path)
    # a record that is not 64 hex digits was a FAISS file 'damaged' where meta.json's field was
    if not is_sha256(digest):
        raise SAMFileError(f"{recorded} must be {path.name}'s SHA-256 (64 hex digits), got "
                           f"{json.dumps(digest)[:80]}; {fix}")
    if (got := file_sha256(path)) != digest.lower():
        said = f"{meta_path}'s field {field!r}" if field else str(meta_path)
        raise SAMFileError(f"{path}: not the file {saver} saved (SHA-256 {got[:16]}..., {said} records "
                           f"{digest[:16].lower()}...): it is damaged or was changed; {fix}")


def json_type(value: Any) -> str:
    """What ``value`` is in JSON's words, for a message about data that came from JSON (a log line, a transcript, a
    request, a saved file): ``null``, ``true``, ``false``, ``a number``, ``a string``, ``a list``, ``an object``.
    Python's names ("got a NoneType", "'content' is a int", "is a dict") are not what the user wrote; a value
    JSON has no word for says it is Python's ("a Python set")."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, numbers.Real):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, Mapping):
        return "an object"
    return f"a Python {type(value).__name__}"


def json_shape(value: Any) -> str:
    """What ``value`` is, for a message refusing a document that is not the one a reader expects: an object by its
    first eight keys (sorted: which file was given is told by its keys, "an object with the keys history, info"),
    ``an empty object``, or :func:`json_type`'s words for anything else."""
    if isinstance(value, Mapping):
        return f"an object with the keys {', '.join(sorted(map(str, value))[:8])}" if value else "an empty object"
    return json_type(value)


def read_json(path: Path, what: str, fix: str) -> Any:
    """The JSON value in ``path``, or SAMFileError naming the file, ``what`` it should be and ``fix``, for anything
    that stops a parse: bad bytes or JSON, a key given twice in one object, a number past Python's 4,300 digits,
    nesting past the recursion limit."""
    try:
        return json.loads(path.read_text(encoding="utf-8-sig"), object_pairs_hook=unique_keys)  # a BOM: no JSON
    except (OSError, ValueError, RecursionError) as err:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise SAMFileError(f"{path}: unreadable {what} ({str(err)[:120]}); {fix}") from None


def read_format_json(path: Path, fmt: str, version: Any, what: str, fix: str) -> dict:
    """A JSON file that names its ``format`` and ``version`` (a store's or an index's metadata), checked: one that
    cannot be read, is of another format or of another version raises SAMFileError naming ``path``, ``what``
    it should be and ``fix``. The caller checks that the file exists (its message says where one comes from)."""
    d = read_json(path, what, fix)
    if not isinstance(d, dict) or d.get("format") != fmt:
        raise SAMFileError(f"{path}: not a {what} file; {fix}")
    if d.get("version") != version:
        raise SAMFileError(f"{path}: {what} version {d.get('version')!r}, this code reads {version}; {fix}")
    return d


ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"  # a zstd frame's first bytes (RFC 8878)


def check_compression(path: str | os.PathLike, zstd: bool = False) -> None:
    """Refuse a file whose name and bytes disagree about gzip, naming the fix: a gzip file without ``.gz`` was read
    as text ("not UTF-8 (byte 2 of the line is 0x8b)") and a plain one named ``.gz`` failed as a cut archive. A
    zstd-compressed file is refused as such, a frame at its start or after a 4-byte length (the OpenTelemetry
    collector's file exporter with ``compression: zstd`` writes each export so): it was "not UTF-8 ... re-save the
    file as UTF-8". ``zstd``: the caller decompresses such a file (data.formats.zstdexport), so it is not refused."""
    p = Path(path)
    try:
        mode = os.stat(p).st_mode
    except OSError:
        return  # the caller's own open names a missing or unreadable file
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):  # a pipe blocked here until a writer came, /dev/zero for ever
        raise SAMFileError(f"{p} is not a regular file (a pipe, socket or device): write the log to a file and "
                           "give that file's path")
    try:
        with open(p, "rb") as fh:
            head = fh.read(8)
    except OSError:
        return
    magic = head[:2]
    if ZSTD_MAGIC in (head[:4], head[4:8]) and not zstd:
        framed = head[:4] != ZSTD_MAGIC
        raise SAMFileError(f"{p} is zstd-compressed{' in length-prefixed frames' if framed else ''} (as an OpenTelemetry "
                           "collector's file exporter writes with compression: zstd): sam_model reads JSON or JSON "
                           "Lines, plain or .gz; " + ("configure the exporter with format: json and no compression"
                                                      if framed else f"decompress it (zstd -d {p})"))
    if p.name.endswith(".gz") and magic and magic != b"\x1f\x8b":
        raise SAMFileError(f"{p} is named .gz but is not gzip-compressed: rename it without .gz")
    if not p.name.endswith(".gz") and magic == b"\x1f\x8b":
        raise SAMFileError(f"{p} is gzip-compressed but not named .gz: rename it {p.name}.gz")


# ---- command lines -----------------------------------------------------------------------------------------

TRACEBACK_FLAG = "--traceback"
TRACEBACK_ENV = "SAM_TRACEBACK"


class DefaultsHelp(argparse.ArgumentDefaultsHelpFormatter):
    """``--help`` that says an option's default where it has one: argparse's own wrote "(default: None)" beside a
    help saying what None means, and under required options and flags. A help that says its default itself
    ("(default 20)", "(default: the CPUs ...)") is left as written, an empty list is no default, and a list is
    shown as it is typed (``10000,100000``, not ``[10000, 100000]``)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text, default = action.help or "", action.default
        if default is None or action.required or default is False or "(default" in text or "%(default)" in text:
            return text
        if isinstance(default, (list, tuple)):
            shown = ",".join(str(x) for x in default).replace("%", "%%")
            return f"{text} (default: {shown})" if default else text
        return super()._get_help_string(action)


class RawDefaultsHelp(DefaultsHelp, argparse.RawDescriptionHelpFormatter):
    """:class:`DefaultsHelp` with the description printed as written: a module docstring with its examples."""


def cli_name(default: str) -> str:
    """The name a CLI was started by, for its usage line: ``sam-eval`` when run as the console script, else
    ``default`` (e.g. ``python evaluate.py``)."""
    name = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    return name if name.startswith("sam-") else default


def _stdout_closed() -> bool:
    """Whether standard output is a pipe whose reader has gone (the BrokenPipeError was ours, not a socket's):
    polling the pipe's write end then reports an error (POLLERR)."""
    try:
        fd = sys.stdout.fileno()
        if not stat.S_ISFIFO(os.fstat(fd).st_mode):
            return False
        poller = select.poll()
        poller.register(fd, select.POLLOUT)
        return any(event & select.POLLERR for _, event in poller.poll(0))
    except (OSError, ValueError, AttributeError):  # no file behind stdout, or no poll (Windows)
        return False


def run_cli(main: Callable[[list[str]], int | None], argv: Sequence[str] | None = None,
            errors: tuple[type[BaseException], ...] = (ValueError, OSError),
            hint: Callable[[BaseException], str] | None = None) -> int:
    """Run a command-line ``main`` so that a bad input ends in one line: ``error: <what, where, what to do>``.

    ``--traceback`` (anywhere in argv, removed before ``main`` sees it) or ``SAM_TRACEBACK=1`` shows the
    full trace instead. ``errors``: exception types that describe bad input (SAMFileError and
    LogFormatError are ValueErrors; a missing file is an OSError); anything else is a bug and keeps its trace.
    ``hint(exc)``: what to do, appended when the message does not say it already.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    full = TRACEBACK_FLAG in args or os.environ.get(TRACEBACK_ENV, "") not in ("", "0")
    args = [a for a in args if a != TRACEBACK_FLAG]
    try:
        rc = main(args)
        sys.stdout.flush()  # a reader gone (`| head`) shows here, not as a trace in the interpreter's exit
    except SystemExit as exc:  # argparse's --help: say the one option run_cli takes before main sees argv
        if exc.code in (0, None) and any(a in ("-h", "--help") for a in args):
            try:
                print(f"\n{TRACEBACK_FLAG}: on an error, print the full Python trace instead of one line (or set "
                      f"{TRACEBACK_ENV}=1)", flush=True)
            except BrokenPipeError:  # `--help | head`: the reader read what it wanted (it was a trace)
                if not _stdout_closed():
                    raise
                _quiet_exit()
        raise
    except errors as exc:
        if isinstance(exc, BrokenPipeError) and _stdout_closed():  # `sam-data ... | head`: the reader went away
            return _quiet_exit()
        if full:
            raise
        msg = " ".join(str(exc).split()) or type(exc).__name__
        extra = hint(exc) if hint is not None else ""
        if extra:
            msg = f"{msg}; {extra}"
        print(f"error: {msg} (rerun with {TRACEBACK_FLAG} or {TRACEBACK_ENV}=1 for the full trace)", file=sys.stderr)
        return 1
    except BrokenPipeError:  # where ``errors`` lacks OSError
        if not _stdout_closed():
            raise
        return _quiet_exit()
    return int(rc or 0)


def _quiet_exit() -> int:
    """Stop quietly, as a shell tool does when its reader (``| head``) has gone: standard output goes to
    /dev/null, or the interpreter's flush at exit fails again and prints a trace."""
    with contextlib.suppress(OSError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 1
