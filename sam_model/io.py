"""Atomic file writes and friendly errors for files users hand us.

Checkpoints, indexes and memory banks are written to a temporary file in the same
folder and renamed over the target, so a crash mid-write never leaves a half file
where a good one was (``os.replace`` is atomic on POSIX and Windows).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path


class SAMFileError(ValueError):
    """A file given to sam_model is missing, corrupt or of the wrong kind.

    The message always names the path and says what to do about it.
    """


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; on success rename it over ``path``.

    Use it for writers that want a file name (faiss.write_index, torch.save,
    safetensors). On an exception the temporary file is removed and ``path`` is
    left as it was.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        os.chmod(tmp_path, 0o666 & ~_umask())  # mkstemp makes 0600; give the file normal permissions
        with open(tmp_path, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp_path, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp_path.unlink()
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically."""
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    atomic_write_bytes(path, text.encode("utf-8"))


def require_file(path: str | os.PathLike, what: str, hint: str = "") -> Path:
    """Return ``path`` as a Path, or raise SAMFileError naming it if it does not exist."""
    p = Path(path)
    if not p.exists():
        msg = f"{what} not found: {p}"
        raise SAMFileError(msg + (f" ({hint})" if hint else ""))
    return p
