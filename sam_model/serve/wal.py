"""A write-ahead log: an acknowledged write survives ``kill -9``.

Every write a tenant's memory accepts is appended here, one line per write, and ``fsync``-ed before the write is
applied and answered: an answer (a 2xx) implies the line is on disk. A restart loads the last checkpoint (the
memory's atomic save, sam_model.io) and replays the lines after it, in order, so the memory is what it was when
the last acknowledged write was answered (writes that were not yet answered may or may not be there, as with any
database).

A line is ``<crc32 hex> <json>\\n`` with json = ``{"seq": n, "tenant": name, "op": ..., "args": {...}}``; seq
numbers writes from 1 and never repeats. Each record names its tenant, so another tenant's log copied into a
tenant's folder is refused at start, before anything is replayed (its writes had gone into this tenant's memory);
the name is on every record, not in a header, so that no truncation (a checkpoint's, a torn line's, an undo's)
has a header to keep, and a kill leaves every line it did not tear whole, name and all. A record without
``tenant`` (a log written before records named theirs) is read as its folder's tenant's. A kill can tear only the last line (it was never acknowledged: the fsync had not
returned): reading drops a torn or unterminated last line with a warning. A bad line anywhere else is damage,
reported with its file and line, as is a line whose checksum holds but which is no record (no ``op``, ``args``
not an object): it was written whole, so it is not torn. A write that made memories is followed by a record of
their vectors under its seq (``op`` "vectors", :meth:`WriteAheadLog.attach`), so a replay does not run the
encoder again. The checkpoint records the seq it includes, so a kill between the checkpoint's swap and the log's
truncation replays nothing twice; the truncation drops only the records the checkpoint holds (writes go on while
its files are written).
"""

from __future__ import annotations

import json
import logging
import os
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sam_model.io import SAMFileError, atomic_write_bytes

log = logging.getLogger(__name__)


class LogWriteError(OSError):
    """A write could not be logged (so it was not applied): the server answers 503, the client sends it again."""


def _line(record: dict[str, Any]) -> bytes:
    text = json.dumps(record, separators=(",", ":"), ensure_ascii=False)
    try:
        body = text.encode()
    except UnicodeEncodeError as err:  # a lone surrogate: 'can't encode ... in position 12345' named no field
        raise _lone(*(_surrogate_at(record.get("args"), "") or ("a value", text[err.start]))) from None
    return b"%08x %s\n" % (zlib.crc32(body), body)


def check_unicode(value: Any, name: str) -> None:
    """Refuse (ValueError) a write's argument that no log line can hold: a string or key holding a lone UTF-16
    surrogate (valid JSON such as ``"\\ud800"``, no Unicode text), named under ``name``, the argument as its caller
    calls it (a served add's ``messages``, MCP remember's ``text``). The log names what it cannot write by the
    write's own arguments (``data``), which an API may call otherwise."""
    if found := _surrogate_at(value, name):
        raise _lone(*found)


def _lone(where: str, ch: str) -> ValueError:
    return ValueError(f"{where or 'the text'} holds a lone UTF-16 surrogate ({ch!r}), which is no Unicode text: "
                      "send valid UTF-8 (a JSON \\ud83d must be followed by its low half, as in an emoji)")


def _surrogate_at(value: Any, path: str) -> tuple[str, str] | None:
    """(the path, ``messages[2].content``, of the first string or key of ``value`` holding a lone surrogate; that
    surrogate)."""
    if isinstance(value, str):
        return next(((path, ch) for ch in value if "\ud800" <= ch <= "\udfff"), None)
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for k, v in items:
        at = f"{path}[{k}]" if isinstance(k, int) else f"{path}.{k}" if path else str(k)
        if isinstance(k, str) and (found := _surrogate_at(k, at)):
            return found  # the key itself
        if found := _surrogate_at(v, at):
            return found
    return None


def _parse(raw: bytes) -> tuple[bool, Any]:
    """(True, the JSON value of one line), or (False, None) when its checksum or JSON is wrong."""
    crc, _, body = raw.rstrip(b"\n").partition(b" ")
    try:
        if int(crc, 16) != zlib.crc32(body):
            return False, None
        return True, json.loads(body)
    except (ValueError, RecursionError):
        return False, None


def _problem(record: Any) -> str | None:
    """What makes a line's (checksummed) JSON no record of this log, or None: every record is an object with
    ``seq`` (an integer >= 1), ``op`` (a string) and ``args`` (an object)."""
    if not isinstance(record, dict):
        return "is not a JSON object"
    for field, kind, want in (("seq", int, "an integer >= 1"), ("op", str, "a string"), ("args", dict, "an object")):
        if field not in record:
            return f"has no {field!r}"
        value = record[field]
        if isinstance(value, bool) or not isinstance(value, kind) or (field == "seq" and value < 1):
            return f"its {field!r} is {json.dumps(value)[:60]}, not {want}"
    if "tenant" in record and not isinstance(record["tenant"], str):
        return f"its 'tenant' is {json.dumps(record['tenant'])[:60]}, not a tenant's name"
    return None


class WriteAheadLog:
    """Append-only, fsync-ed log of one tenant's writes (see the module doc). Callers serialise appends."""

    def __init__(self, path: str | os.PathLike, fsync: bool = True, tenant: str | None = None):
        """``fsync=False`` only for benchmarks that measure what the fsync costs: then a kill -9 of the machine
        (not of the process: the page cache survives that) can lose acknowledged writes. ``tenant``: whose log this
        is; each record appended names it, and a record naming another tenant is refused here (SAMFileError),
        before the file is changed (None: records name no tenant, and any is read)."""
        self.path = Path(path)
        self.fsync, self.tenant = fsync, tenant
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # seq -> the byte offset just after its last line: what a checkpoint of that seq cuts at, without parsing
        self._ends: dict[int, int] = {}
        self._size = 0
        self._torn = False  # a failed write could not be cut off: appends stop until a restart drops it
        self._last: tuple[int, int] | None = None  # (seq, offset before its line) of the last append, for undo
        for _, record, end in self._scan():
            self._ends[record["seq"]] = self._size = end
        self.seq = max(self._ends, default=0)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)

    def _read(self) -> Iterator[tuple[int, dict[str, Any]]]:
        """(line number, record) of the intact records, dropping a torn last line (and cutting it off the file so
        appends follow it)."""
        for n, record, _ in self._scan():
            yield n, record

    def _scan(self) -> Iterator[tuple[int, dict[str, Any], int]]:
        """(line number, record, the byte offset just after its line) of the intact records (see :meth:`_read`).
        A line whose checksum holds but whose JSON is no record (no ``op``, ``args`` not an object) was written
        whole, so it is not torn: it is named with its line wherever it is, never dropped."""
        if not self.path.exists():
            return
        data = self.path.read_bytes()
        lines = data.split(b"\n")
        tail = lines.pop()  # b"" when the file ends with a newline
        good = 0
        for n, raw in enumerate(lines, 1):
            intact, record = _parse(raw)
            if not intact:
                if n == len(lines) and not tail:
                    log.warning("%s: line %d is torn (a write killed before it was acknowledged); dropped",
                                self.path, n)
                    break
                raise SAMFileError(f"{self.path}: line {n} is damaged (bad checksum or JSON) and is not the last; "
                                   "restore the file from a backup, or move it away to start from the checkpoint")
            problem = _problem(record)
            if problem is not None:
                raise SAMFileError(f"{self.path}: line {n} has a good checksum but {problem}, so it is no write this "
                                   "log took; nothing was changed: restore the file from a backup, or move it away to "
                                   "start from the checkpoint (its writes are then lost)")
            if self.tenant is not None and record.get("tenant", self.tenant) != self.tenant:
                raise self._foreign(n, record["tenant"])
            good += len(raw) + 1
            yield n, record, good
        if good != len(data):
            if tail:
                log.warning("%s: an unterminated last line (a write killed before it was acknowledged); dropped",
                            self.path)
            with open(self.path, "r+b") as f:
                f.truncate(good)
                os.fsync(f.fileno())

    def _foreign(self, n: int, owner: str) -> SAMFileError:
        """The refusal of a log holding tenant ``owner``'s writes (line ``n``) in this tenant's folder: replayed, they
        had gone into this tenant's memory, served to its key."""
        me = self.tenant
        return SAMFileError(
            f"{self.path}: line {n} is a write of tenant {owner!r}, not {me!r} (another tenant's log copied here?), "
            f"and nothing was replayed or changed: put {me!r}'s own log here (or move this one away to start from the "
            f"checkpoint alone: its writes are then lost); if {me!r} is {owner!r} renamed, start the server once with "
            f"the old name, whose clean shutdown checkpoints the log away")

    def records(self, after: int = 0) -> list[dict[str, Any]]:
        """The records with seq > ``after``, in order."""
        return [r for _, r in self.numbered(after)]

    def numbered(self, after: int = 0) -> list[tuple[int, dict[str, Any]]]:
        """(line number in the file, record) of the records with seq > ``after``, in order: for messages that
        name a record's line."""
        return [(n, r) for n, r in self._read() if r["seq"] > after]

    def append(self, op: str, args: dict[str, Any]) -> int:
        """Write one record and make it durable; returns its seq. Raises :class:`LogWriteError` when it could not
        (a full disk, a file size limit): the log is then as it was before the call, and the write must not be
        applied or answered as done."""
        seq, start = self.seq + 1, self._size
        self._write(seq, self._record(seq, op, args))
        if self.fsync:
            try:
                os.fsync(self._fd)
            except OSError as err:  # the line is cut off: so are its offsets (a checkpoint cuts the log at them)
                self._size = start
                self._ends.pop(seq, None)
                self._cut(start, err)
        self.seq, self._last = seq, (seq, start)
        return seq

    def undo(self, seq: int) -> None:
        """Take back the last record, ``seq``, whose write was not applied (it failed: it was never answered as
        done): a replay would meet the same failure and, for one the memory does not refuse cleanly, stop every
        start. Only the last appended record can be taken back; the next append reuses its seq."""
        if self._last is None or self._last[0] != seq or self.seq != seq:
            raise ValueError(f"write {seq} is not the last one appended; it cannot be taken back")
        start = self._last[1]
        os.ftruncate(self._fd, start)
        if self.fsync:
            os.fsync(self._fd)
        self._size, self.seq, self._last = start, seq - 1, None
        self._ends.pop(seq, None)

    def _write(self, seq: int, line: bytes) -> None:
        """Append ``line`` whole, or not at all: ``os.write`` may write part of it (a full disk, a file size
        limit) and say so only by its count; the rest is written on, and a write that fails leaves no torn line
        (the next append would follow it, and the torn line, no longer the last, would stop every restart)."""
        if self._torn:
            raise LogWriteError(f"{self.path}: a failed write could not be cut off; restart the server (the start "
                                "drops the torn last line)")
        start, view = self._size, memoryview(line)
        try:
            while view:
                n = os.write(self._fd, view)
                if n <= 0:
                    raise OSError(f"the log took no bytes of a {len(line)}-byte write")
                view = view[n:]
        except OSError as err:
            self._cut(start, err)
        self._size += len(line)
        self._ends[seq] = self._size

    def _cut(self, size: int, err: OSError) -> None:
        """Cut the file back to ``size`` bytes (what it held before the failed write), then raise LogWriteError."""
        try:
            os.ftruncate(self._fd, size)
        except OSError:  # leave the torn line last: the next start drops it; no append may follow it
            self._torn = True
        raise LogWriteError(f"{self.path}: a write could not be logged ({err}); it was not applied: free disk "
                            "space and send it again") from err

    def attach(self, seq: int, op: str, args: dict[str, Any]) -> None:
        """A record about the write ``seq`` (its memories' vectors), under the same seq and not fsync-ed: losing it
        costs only time (that write replays without it); the next append's fsync makes it durable too."""
        self._last = None  # the write was applied: it is no longer one to take back
        self._write(seq, self._record(seq, op, args))

    def _record(self, seq: int, op: str, args: dict[str, Any]) -> bytes:
        """The line of one record, naming this log's tenant (when it has one)."""
        named = {"seq": seq} if self.tenant is None else {"seq": seq, "tenant": self.tenant}
        return _line({**named, "op": op, "args": args})

    def drop_through(self, seq: int) -> None:
        """Drop the records with seq <= ``seq`` (a checkpoint holds them) and keep the later ones (written while
        the checkpoint's files were). Those are written to a file beside the log that is renamed over it, so a
        kill leaves the old log or the new one, never a log missing a record the checkpoint lacks. Callers
        serialise this with appends. The cut is at the byte offset where ``seq``'s lines end (kept as they are
        written): the kept tail is copied, not parsed, which matters under a tenant's lock once the log holds
        thousands of writes with their vectors."""
        self._last = None
        cut = max((end for s, end in self._ends.items() if s <= seq), default=0)
        with open(self.path, "rb") as f:
            f.seek(cut)
            keep = f.read()
        self._ends = {s: end - cut for s, end in self._ends.items() if s > seq}
        self._size = len(keep)
        if not keep:
            os.ftruncate(self._fd, 0)
            os.fsync(self._fd)
            return
        atomic_write_bytes(self.path, keep)
        os.chmod(self.path, 0o600)
        os.close(self._fd)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND, 0o600)

    def close(self) -> None:
        os.close(self._fd)


__all__ = ["LogWriteError", "WriteAheadLog"]
