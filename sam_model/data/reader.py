"""Streaming reader for agent logs (``.jsonl`` and ``.jsonl.gz``).

Logs can be larger than memory, so everything here is a generator. Episodes may be
interleaved in a file; :func:`iter_episodes` makes one cheap first pass to learn where
each episode ends and then holds only the episodes still open.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import warnings
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from sam_model.data.formats.base import strict_loads
from sam_model.data.schema import Event, LogFormatError, named, parse_event
from sam_model.io import check_compression, not_found

OnError = Literal["raise", "skip"]


@dataclass
class ReadReport:
    """What a read skipped (``on_error="skip"``): nothing is dropped silently."""

    lines: int = 0
    events: int = 0
    skipped: list[LogFormatError] = field(default_factory=list)
    interleaved: str = ""  # where an episode first began while another still had lines to come ("" if never)
    undefined: dict[str, dict[str, int]] = field(default_factory=dict)  # file -> field the format lacks -> events

    def count_undefined(self, source: str, event: Event) -> None:
        """Count the fields of ``event`` the format does not define (``x``, ``state.x``): kept, never read, so a
        misspelt ``useful_memory_steps`` would lose its labels without a word."""
        names = [*(event.meta.get("extra_fields") or {}), *(f"state.{k}" for k in event.state.extra)]
        if names:
            counts = self.undefined.setdefault(source, {})
            for name in names:
                counts[name] = counts.get(name, 0) + 1

    def undefined_warnings(self) -> list[str]:
        """One line per file that holds fields the format does not define, the most frequent first."""
        out = []
        for source, counts in self.undefined.items():
            top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:5]
            names = ", ".join(f"{k} ({n} events)" for k, n in top)
            out.append(f"{source}: fields the agent-log format does not define: {names}; they are kept but never "
                       "read (a misspelt field name? python -m sam_model.data.validate lists them)")
        return out

    @property
    def n_skipped(self) -> int:
        return len(self.skipped)

    def describe(self) -> str:
        """What was read and what was skipped, line by line (the first 20), for a log or the console."""
        if not self.skipped:
            return f"read {self.events} events from {self.lines} lines, none skipped"
        head = "\n".join(f"  {e}" for e in self.skipped[:20])
        more = f"\n  ... and {self.n_skipped - 20} more" if self.n_skipped > 20 else ""
        return f"read {self.events} events from {self.lines} lines, skipped {self.n_skipped} bad lines:\n{head}{more}"

    def summary(self) -> str:
        """Deprecated name of :meth:`describe` ("summary" names merged memory units now)."""
        warnings.warn("ReadReport.summary() is now describe()", DeprecationWarning, stacklevel=2)
        return self.describe()


def open_log(path: str | os.PathLike) -> io.TextIOBase:
    """Open a ``.jsonl`` or ``.jsonl.gz`` log for text reading, with a clear error if it is missing."""
    # utf-8-sig: a byte-order mark (some Windows tools write one) is not part of the first line
    return io.TextIOWrapper(open_log_binary(path), encoding="utf-8-sig")


def open_log_binary(path: str | os.PathLike) -> io.BufferedIOBase:
    """The bytes of a ``.jsonl``/``.jsonl.gz`` log or transcript (gunzipped), refusing in one line a missing path,
    a folder or a compression it cannot read: the one opener for readers that sniff a file before parsing it."""
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"agent log {not_found(p)}: {p} (give the path of a .jsonl or .jsonl.gz file)")
    if p.is_dir():
        raise IsADirectoryError(f"agent log {p} is a directory; give the .jsonl or .jsonl.gz file inside it")
    check_compression(p)
    return gzip.open(p, "rb") if p.suffix == ".gz" else open(p, "rb")


def check_output(out: str | os.PathLike, inputs: Iterable[str | os.PathLike] = (), force: bool = False,
                 new_folder: bool = False) -> None:
    """Refuse, in one line and before anything is read or written, an OUT a converter must not write: a name that
    is not ``.jsonl[.gz]`` (every reader would take a ``.json`` for one document), a folder, one of its inputs, a
    folder that does not exist (unless ``new_folder``: the writer makes it), or an existing file that is not an
    agent log (``force``: replace it anyway).
    Re-running a conversion over its own earlier output is allowed; replacing someone's transcripts or notes,
    silently and atomically, was not (found by review: a second input typed as OUT was gone)."""
    from sam_model.io import SAMFileError

    p = Path(out)
    if p.is_dir():
        raise SAMFileError(f"{out} is a folder; give the output file's name (e.g. {p / 'log.jsonl'})")
    if not p.name.endswith((".jsonl", ".jsonl.gz")):
        raise SAMFileError(f"{out}: an agent log is named .jsonl (or .jsonl.gz to gzip it); the readers would take "
                           f"{p.suffix or 'a name without .jsonl'} for another format: name it {p.name}.jsonl")
    if not new_folder and not p.absolute().parent.is_dir():
        raise SAMFileError(f"{out}: the output folder {p.absolute().parent} does not exist (create it first)")
    if not (p.exists() or p.is_symlink()):
        return
    for i in inputs:
        q = Path(i)
        if q.exists() and p.exists() and p.samefile(q):
            raise SAMFileError(f"{out} is the input file {q}; write the agent log elsewhere")
    if force or not p.is_file() or p.stat().st_size == 0:
        return
    first: bytes | None = b"unreadable"
    event = None
    try:
        first = next((line for n, line in _raw_lines(p) if not _blank(line, n)), None)
        event = None if first is None else parse_json_line(_decode(first, str(p), 1), str(p), 1)
    except (LogFormatError, OSError, SAMFileError):
        pass
    if first is not None and not (isinstance(event, dict) and {"episode_id", "step", "kind"} <= event.keys()):
        raise SAMFileError(f"{out} exists and is not an agent log (its first line is no event): the conversion would "
                           "replace it; give another OUT, or --force to replace it")


def _raw_lines(path: str | os.PathLike) -> Iterator[tuple[int, bytes]]:
    """(line number, raw line) pairs; an unreadable rest of file (truncated .gz) is a LogFormatError.

    Lines are split as bytes and decoded one by one (:func:`_decode`), so a line that
    is not UTF-8 is reported at its own line number and skip mode can go past it.
    """
    source = str(path)
    with open_log_binary(path) as fh:
        lineno = 0
        while True:
            try:
                line = fh.readline()
            except (OSError, EOFError) as exc:
                raise LogFormatError(
                    source, lineno + 1, f"cannot read the file from here on ({exc}); is it truncated or corrupt?"
                ) from None
            if not line:
                return
            lineno += 1
            yield lineno, line


def _blank(line: bytes, lineno: int) -> bool:
    """A line without an event: whitespace only, or on line 1 a byte-order mark and whitespace (a log saved empty
    by a Windows editor was "line 1: invalid JSON", and --allow-empty could not accept it)."""
    return not (line.removeprefix(b"\xef\xbb\xbf") if lineno == 1 else line).strip()


def _decode(line: bytes, source: str, lineno: int) -> str:
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        utf16 = lineno == 1 and line.startswith((b"\xff\xfe", b"\xfe\xff"))  # a Windows tool's "Unicode"
        why = "the file is UTF-16" if utf16 else f"{exc.reason} at byte {exc.start}"
        raise LogFormatError(source, lineno, f"not UTF-8 ({why}); re-save the file as UTF-8") from None
    return text[1:] if lineno == 1 and text.startswith("\ufeff") else text  # byte-order mark


def _why_invalid(text: str | bytes, source: str) -> str:
    """Why a line that is no JSON is so, where its shape tells: a pretty-printed document (line 1 is ``[`` alone; in a
    ``.json`` file most likely tool-call transcripts) or a last line cut short (no newline: a logger killed
    mid-write); the parser's message said neither."""
    line = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
    if line.strip() in ("[", "{"):
        return ("; this line opens a JSON document written over several lines (pretty-printed), not JSON Lines: "
                + (named("if it holds tool-call conversations, convert it with `sam-data transcripts FILE "
                         "OUT.jsonl`; an agent log has ", source)
                   if source.removesuffix(".gz").endswith(".json") else "write ")
                + "each event as one JSON object on its own line")
    if not line.endswith("\n"):
        return "; the file ends inside this line: it was cut short (a logger stopped mid-write?)"
    return ""


def parse_json_line(text: str | bytes, source: str, lineno: int) -> object:
    """One JSON line, strictly: bare ``NaN``/``Infinity`` (which Python's json accepts and no other JSON reader
    does) and nesting too deep to read are LogFormatErrors naming the line, like any other invalid JSON."""
    try:
        return strict_loads(text)  # no bare NaN/Infinity, no number that overflows to infinity
    except json.JSONDecodeError as exc:
        raise LogFormatError(source, lineno, f"invalid JSON ({exc.msg.removesuffix(' at')} at column {exc.colno})"
                             + _why_invalid(text, source)) from None
    except ValueError as exc:  # a bare constant, a number out of range, a key given twice: each says what to do
        raise LogFormatError(source, lineno, f"invalid JSON ({exc})") from None
    except RecursionError:
        raise LogFormatError(source, lineno, "invalid JSON (nested too deeply to read; an event is a flat object "
                                             "of a few levels)") from None


def iter_events(
    paths: str | os.PathLike | Iterable[str | os.PathLike],
    on_error: OnError = "raise",
    report: ReadReport | None = None,
) -> Iterator[Event]:
    """Yield validated events in file order.

    Checks that need only the event itself (types, label < step) and duplicate
    ``(episode_id, step)`` pairs (across all ``paths``) are done here; labels that name
    a step that does not exist are checked by :func:`iter_episodes`, which sees whole
    episodes. With ``on_error="skip"`` an unreadable rest of a file (truncated ``.gz``)
    is reported once and reading goes on with the next file.
    """
    report = report if report is not None else ReadReport()
    seen: dict[str, set[int]] = {}
    for path in _as_paths(paths):
        for _, event in _file_events(path, _check_on_error(on_error), report, seen):
            yield event


def _check_on_error(on_error: str) -> OnError:
    if on_error not in ("raise", "skip"):
        raise ValueError(f"on_error must be 'raise' or 'skip', got {on_error!r}")
    return on_error  # type: ignore[return-value]


def _file_events(
    path: Path, on_error: OnError, report: ReadReport, seen: dict[str, set[int]]
) -> Iterator[tuple[int, Event]]:
    """(line number, event) for the valid lines of one file; bad lines raise or go to ``report``."""
    source = str(path)
    lines = _raw_lines(path)
    while True:
        try:
            lineno, line = next(lines)
        except StopIteration:
            return
        except LogFormatError as err:  # the rest of the file cannot be read
            if on_error == "raise":
                raise
            report.skipped.append(err)
            return
        report.lines += 1
        if _blank(line, lineno):
            continue
        try:
            obj = parse_json_line(_decode(line, source, lineno), source, lineno)
            event = parse_event(obj, source, lineno)
            steps = seen.setdefault(event.episode_id, set())
            if event.step in steps:
                raise LogFormatError(source, lineno, f"duplicate step {event.step} in episode '{event.episode_id}'")
            steps.add(event.step)
        except LogFormatError as err:
            if on_error == "raise":
                raise
            report.skipped.append(err)
            continue
        report.events += 1
        report.count_undefined(source, event)
        yield lineno, event


@dataclass(frozen=True)
class Episode:
    """The events of one episode, ordered by step; ``source`` is the file it was read from."""

    episode_id: str
    events: tuple[Event, ...]
    source: str = field(default="", compare=False)
    in_file_order: bool = field(default=True, compare=False)  # its lines came in step order (else: sorted here)

    def __len__(self) -> int:
        return len(self.events)

    @property
    def decision_points(self) -> list[Event]:
        return [e for e in self.events if e.is_decision_point]


def iter_episodes(
    paths: str | os.PathLike | Iterable[str | os.PathLike],
    on_error: OnError = "raise",
    report: ReadReport | None = None,
) -> Iterator[Episode]:
    """Yield episodes in the order they first appear, each sorted by step.

    An episode is yielded as soon as the line past its last line has been read, so
    only the episodes still open are held. A decision point whose label names a step
    missing from its episode is a data error: raised, or (``on_error="skip"``) reported
    and its labels dropped, so the event itself is kept as a memory. All events of an
    episode must be in one file; a line of an episode already finished in an earlier
    file is a data error too.
    """
    on_error = _check_on_error(on_error)
    report = report if report is not None else ReadReport()
    finished: dict[str, str] = {}  # episode id -> file it was in
    for path in _as_paths(paths):
        source = str(path)
        last_line = _episode_last_lines(path)
        open_eps: OrderedDict[str, list[tuple[int, Event]]] = OrderedDict()
        seen: dict[str, set[int]] = {}  # steps of the open episodes, for the duplicate check
        for lineno, event in _file_events(path, on_error, report, seen):
            if event.episode_id in finished:
                err = LogFormatError(
                    source, lineno, f"episode '{event.episode_id}' already appeared in {finished[event.episode_id]}; "
                    "all events of an episode must be in one file"
                )
                if on_error == "raise":
                    raise err
                report.skipped.append(err)
                report.events -= 1
                continue
            if not report.interleaved and event.episode_id not in open_eps:
                other = next((e for e in open_eps if last_line.get(e, 0) > lineno), None)
                if other is not None:
                    report.interleaved = f"{source}:{lineno}: episode '{event.episode_id}' begins before episode " \
                                         f"'{other}' ends"
            open_eps.setdefault(event.episode_id, []).append((lineno, event))
            while open_eps and last_line.get(next(iter(open_eps)), 0) <= lineno:
                eid, items = open_eps.popitem(last=False)
                seen.pop(eid, None)  # no later line of this file names it
                yield _finish_episode(source, eid, items, on_error, report)
        for eid, items in open_eps.items():  # only left when a file ends early (skipped tail)
            yield _finish_episode(source, eid, items, on_error, report)
        finished.update(dict.fromkeys(last_line, source))


def _episode_last_lines(path) -> dict[str, int]:
    """First pass: the last line of each episode, from a cheap scan of ``episode_id``.

    Read errors are left to the second pass, which reports them where they occur.
    """
    last: dict[str, int] = {}
    try:
        for lineno, line in _raw_lines(path):
            try:
                obj = json.loads(line)  # bytes: json detects UTF-8
            except (ValueError, RecursionError):  # JSONDecodeError, UnicodeDecodeError: the second pass reports it
                continue
            eid = obj.get("episode_id") if isinstance(obj, dict) else None
            if isinstance(eid, str):
                last[eid] = lineno
    except LogFormatError:
        pass
    return last


def _finish_episode(source: str, eid: str, items, on_error: OnError, report: ReadReport) -> Episode:
    ordered = all(a[1].step < b[1].step for a, b in zip(items, items[1:]))
    items.sort(key=lambda it: it[1].step)
    steps = {e.step for _, e in items}
    events = []
    for lineno, event in items:
        missing = [s for s in event.useful_memory_steps or () if s not in steps]
        if missing:
            reason = f"bad label: useful_memory_steps names step {missing[0]}, which does not exist in episode '{eid}'"
            if on_error == "raise":
                raise LogFormatError(source, lineno, reason)
            report.skipped.append(LogFormatError(source, lineno, reason + " (labels dropped, event kept)"))
            event = Event(event.episode_id, event.step, event.kind, event.text, event.state, None, event.meta)
        events.append(event)
    return Episode(eid, tuple(events), source, ordered)


def read_episodes(paths, on_error: OnError = "raise", report: ReadReport | None = None) -> list[Episode]:
    """All episodes of the logs in memory (fine for logs of up to a few million events)."""
    return list(iter_episodes(paths, on_error, report))


def _as_paths(paths) -> list[Path]:
    if isinstance(paths, (str, os.PathLike)):
        return [Path(paths)]
    return [Path(p) for p in paths]
