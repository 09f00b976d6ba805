"""A cheap fingerprint of a training source's bytes, recorded with its path when a fit reads it.

A fit records the paths of its sources as given on its command line, relative to the folder it ran in; an evaluation
elsewhere could match them by file name alone (sam_model.evaluation.seen), which warned of a held-out file that
shares a training file's name and missed the trained bytes copied under another name. The fingerprint says which
bytes were read, wherever they lie now: a file's size and SHA-256 (of its first and last MiB where it is bigger
than WHOLE, so that a fit of gigabytes does not read them twice), a folder's (an SGD split) over its files' relative
names and fingerprints, each of which is kept too, so that one file of a trained folder is known by its bytes.
A ``.gz`` file's are its words' (gunzipped, as the readers read it), so that the log it was made from is known;
one of more than WHOLE on disk is told by its bytes, as gunzipping it whole again would cost a big fit seconds.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import zlib
from pathlib import Path

MIB = 1 << 20
WHOLE = 8 * MIB  # a file up to this size is hashed whole; a bigger one by its size and first and last MiB


def file_fingerprint(path: Path, size: int | None = None) -> str:
    """``"SIZE:SHA256"`` of a file's bytes (the whole of them up to WHOLE, else its first and last MiB); of its
    first ``size`` bytes where given, which is what the file read then (:func:`grown_from`). A ``.gz`` is read
    gunzipped, as the readers read it (:func:`_gunzipped`), up to WHOLE of it on disk; a bigger one by its bytes,
    not gunzipped whole once more for its last MiB."""
    if path.suffix == ".gz" and path.stat().st_size <= WHOLE:
        try:
            return _gunzipped(path, size)
        except (EOFError, zlib.error, gzip.BadGzipFile):  # no gzip, or cut short: its bytes as they are
            pass
    size = path.stat().st_size if size is None else size
    digest = hashlib.sha256()
    with path.open("rb") as f:
        if size <= WHOLE:
            digest.update(f.read(size))
        else:
            digest.update(f.read(MIB))
            f.seek(size - MIB)
            digest.update(f.read(MIB))
    return f"{size}:{digest.hexdigest()}"


def _gunzipped(path: Path, size: int | None) -> str:
    """:func:`file_fingerprint` of a gzip's words, the one of the file gunzipped (a fit of chats.jsonl.gz read the
    conversations of the chats.jsonl it was made from): its size is known at its end alone, so it is read whole,
    its last MiB kept as it goes."""
    limit = size if size is not None else float("inf")
    with gzip.open(path, "rb") as f:
        head = f.read(int(min(limit, WHOLE + 1)))
        if len(head) <= WHOLE:
            return f"{len(head)}:{hashlib.sha256(head).hexdigest()}"
        n, tail = len(head), head[-MIB:]
        while n < limit and (chunk := f.read(int(min(limit - n, 4 * MIB)))):
            n, tail = n + len(chunk), (tail + chunk)[-MIB:]
    return f"{n}:{hashlib.sha256(head[:MIB] + tail).hexdigest()}"


def fingerprint(path: str | Path) -> dict[str, object] | None:
    """What a training record keeps of a source's bytes: ``{"fingerprint": ...}`` for a file; for a folder its
    fingerprint (over its files' relative names and fingerprints, sorted) and ``files`` (each file's relative name
    and fingerprint). None where the path names nothing readable (a source that is no local path)."""
    try:
        p = Path(path).expanduser()
        if p.is_file():
            return {"fingerprint": file_fingerprint(p)}
        if not p.is_dir():
            return None
        files = {os.path.relpath(f, p).replace(os.sep, "/"): file_fingerprint(f) for f in listed(p)}
    except OSError:  # unreadable: no fingerprint, the record goes by the name as before
        return None
    listing = "\n".join(f"{name}\t{fp}" for name, fp in sorted(files.items()))
    return {"fingerprint": f"dir:{hashlib.sha256(listing.encode()).hexdigest()}", "files": files}


def listed(folder: Path) -> list[Path]:
    """The files of ``folder`` its conversion reads (sam_model.data.sources.read_files): a schema or README beside
    an SGD split's dialogues, shared by a held-out split, told it apart from none. Every file in it where it is no
    source a fit reads (a folder of other files: the record goes by them all)."""
    from sam_model.data.sources import read_files, source_kind

    try:
        return sorted({*read_files(folder, source_kind(folder))})
    except ValueError:  # none of the source kinds (SAMFileError)
        return sorted(f for f in folder.rglob("*") if f.is_file())


def fingerprints(recorded: dict[str, object]) -> set[str]:
    """The fingerprints a record (:func:`fingerprint`'s, or a training source's dict holding its keys) names: its own
    and, for a folder, its files' (one file of a trained folder, or a folder sharing one, holds trained bytes), less
    an empty file's. Empty for a record without one (written before fingerprints were kept)."""
    own = recorded.get("fingerprint")
    files = recorded.get("files")
    out = {own} if isinstance(own, str) else set()
    out |= {v for v in files.values() if isinstance(v, str)} if isinstance(files, dict) else set()
    return {v for v in out if not v.startswith("0:")}  # an empty file is every empty file: it tells none apart


def grown_from(path: Path, recorded: set[str]) -> bool:
    """Whether the file ``path`` is one of ``recorded``'s since appended to (a log the app writes on: its trained
    conversations are in it still): its first SIZE bytes, for a recorded SIZE smaller than it, fingerprint as
    recorded. Each such size is read once."""
    try:
        now = path.stat().st_size
        sizes = {int(size) for size, _, _ in (fp.partition(":") for fp in recorded) if size.isdigit()}
        return any(file_fingerprint(path, size) in recorded for size in sorted(sizes) if 0 < size < now)
    except OSError:  # unreadable: not told by its bytes
        return False
