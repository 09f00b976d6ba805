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
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from sam_model.data.schema import Event, LogFormatError, parse_event

OnError = Literal["raise", "skip"]


@dataclass
class ReadReport:
    """What a read skipped (``on_error="skip"``): nothing is dropped silently."""

    lines: int = 0
    events: int = 0
    skipped: list[LogFormatError] = field(default_factory=list)

    @property
    def n_skipped(self) -> int:
        return len(self.skipped)

    def summary(self) -> str:
        if not self.skipped:
            return f"read {self.events} events from {self.lines} lines, none skipped"
        head = "\n".join(f"  {e}" for e in self.skipped[:20])
        more = f"\n  ... and {self.n_skipped - 20} more" if self.n_skipped > 20 else ""
        return f"read {self.events} events from {self.lines} lines, skipped {self.n_skipped} bad lines:\n{head}{more}"


def open_log(path: str | os.PathLike) -> io.TextIOBase:
    """Open a ``.jsonl`` or ``.jsonl.gz`` log for text reading, with a clear error if it is missing."""
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"agent log not found: {p} (give the path of a .jsonl or .jsonl.gz file)")
    if p.is_dir():
        raise IsADirectoryError(f"agent log {p} is a directory; give the .jsonl or .jsonl.gz file inside it")
    if p.suffix == ".gz":
        return io.TextIOWrapper(gzip.open(p, "rb"), encoding="utf-8")
    return open(p, encoding="utf-8")


def _raw_lines(path: str | os.PathLike) -> Iterator[tuple[int, str]]:
    source = str(path)
    with open_log(path) as fh:
        lineno = 0
        while True:
            try:
                line = fh.readline()
            except (OSError, EOFError, UnicodeDecodeError) as exc:
                raise LogFormatError(source, lineno + 1, f"cannot read the file ({exc}); is it truncated or not UTF-8?") from None
            if not line:
                return
            lineno += 1
            yield lineno, line


def iter_events(
    paths: str | os.PathLike | Iterable[str | os.PathLike],
    on_error: OnError = "raise",
    report: ReadReport | None = None,
) -> Iterator[Event]:
    """Yield validated events in file order.

    Checks that need only the event itself (types, label < step) and duplicate
    ``(episode_id, step)`` pairs are done here; labels that name a step that does not
    exist are checked by :func:`iter_episodes`, which sees whole episodes.
    """
    if on_error not in ("raise", "skip"):
        raise ValueError(f"on_error must be 'raise' or 'skip', got {on_error!r}")
    report = report if report is not None else ReadReport()
    for path in _as_paths(paths):
        seen: dict[str, set[int]] = {}
        source = str(path)
        for lineno, line in _raw_lines(path):
            report.lines += 1
            if not line.strip():
                continue
            try:
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise LogFormatError(source, lineno, f"invalid JSON ({exc.msg} at column {exc.colno})") from None
                event = parse_event(obj, source, lineno)
                steps = seen.setdefault(event.episode_id, set())
                if event.step in steps:
                    raise LogFormatError(
                        source, lineno, f"duplicate step {event.step} in episode '{event.episode_id}'"
                    )
                steps.add(event.step)
            except LogFormatError as err:
                if on_error == "raise":
                    raise
                report.skipped.append(err)
                continue
            report.events += 1
            yield event


@dataclass(frozen=True)
class Episode:
    """The events of one episode, ordered by step."""

    episode_id: str
    events: tuple[Event, ...]

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

    A decision point whose label names a step missing from its episode is a data
    error: raised, or (``on_error="skip"``) reported and its labels dropped, so the
    event itself is kept as a memory.
    """
    report = report if report is not None else ReadReport()
    for path in _as_paths(paths):
        last_line = _episode_last_lines(path)
        open_eps: OrderedDict[str, list[tuple[int, Event]]] = OrderedDict()
        done: set[str] = set()
        for event, lineno in _events_with_lines(path, on_error, report):
            open_eps.setdefault(event.episode_id, []).append((lineno, event))
            if lineno == last_line.get(event.episode_id):
                done.add(event.episode_id)
            while open_eps and next(iter(open_eps)) in done:
                eid, items = open_eps.popitem(last=False)
                yield _finish_episode(str(path), eid, items, on_error, report)
        for eid, items in open_eps.items():  # episodes whose last line was skipped as bad
            yield _finish_episode(str(path), eid, items, on_error, report)


def _events_with_lines(path, on_error: OnError, report: ReadReport) -> Iterator[tuple[Event, int]]:
    """Events of one file with their line numbers (a fresh report counts lines of this file only)."""
    sub = ReadReport()
    for event in iter_events(path, on_error, sub):
        yield event, sub.lines
    report.lines += sub.lines
    report.events += sub.events
    report.skipped.extend(sub.skipped)


def _episode_last_lines(path) -> dict[str, int]:
    """First pass: the last line of each episode, from a cheap scan of ``episode_id``."""
    last: dict[str, int] = {}
    for lineno, line in _raw_lines(path):
        try:
            obj = json.loads(line)
            eid = obj.get("episode_id") if isinstance(obj, dict) else None
        except json.JSONDecodeError:
            continue
        if isinstance(eid, str):
            last[eid] = lineno
    return last


def _finish_episode(source: str, eid: str, items, on_error: OnError, report: ReadReport) -> Episode:
    items.sort(key=lambda it: it[1].step)
    steps = {e.step for _, e in items}
    events = []
    for lineno, event in items:
        missing = [s for s in event.useful_memory_steps or () if s not in steps]
        if missing:
            err = LogFormatError(
                source, lineno, f"bad label: useful_memory_steps names step {missing[0]}, "
                f"which does not exist in episode '{eid}'"
            )
            if on_error == "raise":
                raise err
            report.skipped.append(err)
            event = Event(event.episode_id, event.step, event.kind, event.text, event.state, None, event.meta)
        events.append(event)
    return Episode(eid, tuple(events))


def read_episodes(paths, on_error: OnError = "raise", report: ReadReport | None = None) -> list[Episode]:
    """All episodes of the logs in memory (fine for logs of up to a few million events)."""
    return list(iter_episodes(paths, on_error, report))


def _as_paths(paths) -> list[Path]:
    if isinstance(paths, (str, os.PathLike)):
        return [Path(paths)]
    return [Path(p) for p in paths]
