"""Check agent logs and describe them: ``python -m sam_model.data.validate LOG...``.

Run it on a log before training on it. It reads the logs exactly as the trainer does
(same reader, same checks), so a log it accepts is a log the trainer accepts, and it
prints what matters for retrieval training: how many decision points there are, how
many labels and candidates each has, how far back the labels reach and how often the
answer is simply the previous event (a log where that share is high rewards recency,
not memory).

Exit status: 0 clean, 1 data errors (``FILE:LINE: reason`` lines on stderr), 2 usage
errors (missing file, bad option). A file without events (empty or only blank lines) is a data
error unless ``--allow-empty``. What the format allows but often means a bug in the writer —
state fields or event fields it does not define (kept, unused by the model) and episodes whose
lines are not in step order (they are sorted) — is counted and printed as warnings; ``--strict``
makes them errors. A transcript given as a log is named with its format and the command that converts it, in one
line: its lines (a conversation or a session's line first: what the transcript reader makes of the file), or one
written as a whole JSON document (a ``.json`` or ``.traj``, or a pretty-printed one), read whole.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console
from rich.table import Table
from rich.text import Text

from sam_model.data.examples import Scope, check_scope
from sam_model.data.reader import Episode, OnError, ReadReport, iter_episodes
from sam_model.data.schema import LogFormatError
from sam_model.io import SAMFileError, cli_name, given_twice, not_found
from sam_model.progress import progress_bar

TOP_PHASES = 20


@dataclass
class LogStats:
    """Counts over a set of episodes; sums are kept so that stats of files can be merged."""

    episodes: int = 0
    events: int = 0
    kinds: Counter = field(default_factory=Counter)
    phases: Counter = field(default_factory=Counter)
    decision_points: int = 0
    labels: int = 0
    max_labels: int = 0
    candidates: int = 0  # summed over decision points
    distance: int = 0  # summed over labels: decision step - label step
    most_recent: int = 0  # labels that name the last event before the decision
    unknown_fields: Counter = field(default_factory=Counter)  # "state.x" / "x": fields the format does not define
    unordered: int = 0  # episodes whose lines were not in step order

    def add(self, episode: Episode, offset: int, scope: Scope) -> None:
        """Count one episode whose first event sits at ``offset`` in the global memory order."""
        self.episodes += 1
        self.events += len(episode.events)
        self.unordered += not episode.in_file_order
        for i, e in enumerate(episode.events):
            self.unknown_fields.update(f"state.{k}" for k in e.state.extra)
            self.unknown_fields.update(list(e.meta.get("extra_fields") or {}))  # names, counted per event
            self.kinds[e.kind] += 1
            self.phases[e.state.phase or "(none)"] += 1
            if not e.is_decision_point:
                continue
            labels = e.useful_memory_steps or ()
            self.decision_points += 1
            self.labels += len(labels)
            self.max_labels = max(self.max_labels, len(labels))
            self.candidates += i if scope == "episode" else offset + i
            self.distance += sum(e.step - s for s in labels)
            self.most_recent += episode.events[i - 1].step in labels

    def merge(self, other: LogStats) -> None:
        for name in (
            "episodes",
            "events",
            "decision_points",
            "labels",
            "candidates",
            "distance",
            "most_recent",
            "unordered",
        ):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.max_labels = max(self.max_labels, other.max_labels)
        self.kinds.update(other.kinds)
        self.phases.update(other.phases)
        self.unknown_fields.update(other.unknown_fields)

    @property
    def labels_per_decision(self) -> float | None:
        return self.labels / self.decision_points if self.decision_points else None

    @property
    def candidates_per_decision(self) -> float | None:
        return self.candidates / self.decision_points if self.decision_points else None

    @property
    def mean_distance(self) -> float | None:
        return self.distance / self.labels if self.labels else None

    @property
    def most_recent_share(self) -> float | None:
        return self.most_recent / self.labels if self.labels else None


def collect_stats(
    paths: Iterable[str | Path],
    on_error: OnError = "raise",
    scope: Scope = "episode",
    report: ReadReport | None = None,
    progress: bool = False,
) -> tuple[dict[str, LogStats], LogStats]:
    """Stats per file and in total, streaming (one open episode at a time, not the whole log).

    With scope ``global`` candidates are counted in the memory order of all ``paths``
    together, as the trainer sees them when given the same files.
    """
    scope = check_scope(scope)
    paths = [str(Path(p)) for p in paths]  # the spelling Episode.source uses
    per_file = {p: LogStats() for p in paths}
    offset = 0
    episodes = iter_episodes(paths, on_error, report)
    # the bar starts with the first episode: begun before it, a log without one (empty, or a bad first line) left
    # "validating: 0 episodes" above what was wrong, on a terminal and in a file
    first = next(episodes, None)
    read = () if first is None else progress_bar(itertools.chain([first], episodes), desc="validating",
                                                 unit=" episodes", disable=not progress)  # into a file: lines
    for ep in read:
        per_file[ep.source].add(ep, offset, scope)
        offset += len(ep.events)
    total = LogStats()
    for stats in per_file.values():
        total.merge(stats)
    return per_file, total


def _num(x: float | None, fmt: str = ".2f") -> str:
    return "-" if x is None else format(x, fmt)


def _counts(counter: Counter, top: int | None = None) -> str:
    items = counter.most_common(top)
    text = "\n".join(f"{name}: {n}" for name, n in items)
    if top is not None and len(counter) > top:
        text += f"\n… {len(counter) - top} more"
    return text or "-"


def stats_table(s: LogStats, scope: Scope) -> Table:
    """One rich table describing ``s``."""
    table = Table(show_header=False)
    table.add_column("metric", style="bold")
    table.add_column("value")
    rows = [
        ("episodes", str(s.episodes)),
        ("events", str(s.events)),
        ("decision points", str(s.decision_points)),
        ("labels / decision point", f"mean {_num(s.labels_per_decision)}, max {s.max_labels}"),
        (f"candidates / decision point ({scope} scope)", f"mean {_num(s.candidates_per_decision, '.1f')}"),
        ("distance decision → label (steps)", f"mean {_num(s.mean_distance)}"),
        ("labels that are the most recent candidate", _num(s.most_recent_share, ".1%")),
        ("events by kind", _counts(s.kinds)),
        (f"phases (events, top {TOP_PHASES})", _counts(s.phases, TOP_PHASES)),
    ]
    for name, value in rows:
        table.add_row(name, value)
    return table


def _warnings(per_file: dict[str, LogStats]) -> list[str]:
    """What the format allows but a writer rarely means, one line per file and kind."""
    out = []
    for path, st in per_file.items():
        if st.unknown_fields:
            names = ", ".join(f"{k} ({n})" for k, n in st.unknown_fields.most_common(5))
            out.append(f"{path}: fields the format does not define: {names}; they are kept but the model never "
                       "reads them (a misspelt field name?)")
        if st.unordered:
            out.append(f"{path}: {st.unordered} episode(s) with lines out of step order; the format allows it "
                       "(events are ordered by step) but a writer that logs in order has a bug here")
    return out


def _print_errors(errors: Sequence[LogFormatError]) -> None:
    for err in errors:
        print(err, file=sys.stderr)


def _runs_hint(p: Path) -> str:
    """For a folder of agent runs (which train.py and evaluate.py take as they are): how to convert it, and what it
    holds (files.held_runs: a walkthrough's Strands sessions folder was "a folder of agent trajectories", which
    named neither its writer nor its reader)."""
    from sam_model.data.formats.files import held_runs, layouts

    try:
        found = layouts(p) if p.is_dir() else {}
    except SAMFileError as err:  # a run it holds cannot be read now (a session database an app holds locked)
        return f"; {err}"
    if not found:
        return ""
    return (f"; this is a folder of agent trajectories: convert it with `sam-data transcripts {p} OUT.jsonl` (train.py "
            f"and evaluate.py take it as it is; it holds {held_runs(found)})")


def _is_event(doc: object) -> bool:
    return isinstance(doc, dict) and {"episode_id", "step", "kind"} <= doc.keys()


def _document(p: Path) -> str | None:
    """What a file that is one JSON document, not JSON Lines, is and what to do with it, in one line; None when it
    is read line by line as an agent log (its lines' errors, if any, say the rest).

    A file is taken whole when its name says so (``.json``, ``.traj``, also gzipped) or its first line opens a
    document written over several lines (``{`` or ``[`` alone): a transcript saved pretty-printed (a tau2 results
    file, a Gemini CLI ``session-*.json``, a SWE-agent ``.traj``, a list of OpenAI conversations) was refused as
    "invalid JSON" on line 1, before it could be told what it is. Its transcript format is the one ``sam-data
    transcripts`` reads it as (for a ``.json``, its reader's own verdict); a document of events says how to write
    them as lines."""
    from sam_model.data.formats.base import TranscriptFormatError
    from sam_model.data.formats.files import conversations, document_format, parse
    from sam_model.data.formats.sqlitestores import is_sqlite
    from sam_model.data.reader import open_log_binary

    if is_sqlite(p):  # it was "not UTF-8 ... re-save the file as UTF-8"
        return (f"{p}: an SQLite database, not an agent log: a Google ADK or OpenAI Agents SDK session "
                f"database (sessions.db) is converted with `sam-data transcripts {p} OUT.jsonl` (train.py and "
                "evaluate.py take it as it is)")
    named = p.name.removesuffix(".gz").endswith((".json", ".traj"))
    with open_log_binary(p) as fh:
        first = next((line for line in fh if line.strip(b" \t\r\n\xef\xbb\xbf")), b"")
        pretty = first.strip(b" \t\r\n\xef\xbb\xbf") in (b"{", b"[")
        if not (named or pretty):
            return None
        fh.seek(0)
        raw = fh.read()
    try:
        doc = parse(raw, str(p), lines=True)
    except TranscriptFormatError:
        return None  # no document either (JSON Lines named .json, or one cut): its lines say what is wrong
    events = doc if isinstance(doc, list) else [doc]
    if events and all(_is_event(e) for e in events):
        if not pretty and isinstance(doc, dict):
            return None  # an agent log of one event on one line, named .json: read as it is
        return (f"{p}: {len(events)} agent-log event{'s' if len(events) > 1 else ''} written as one JSON document"
                f"{' (pretty-printed)' if pretty else ''}, not JSON Lines: write each event as one JSON object on "
                f"its own line (jq -c '{'.[]' if isinstance(doc, list) else '.'}' {p} > LOG.jsonl)")
    item = next(iter(conversations(p)), None) if named else None  # the transcript reader's own verdict on it
    guess = "tau1" if isinstance(doc, list) and doc and isinstance(doc[0], dict) and "traj" in doc[0] else (
        document_format(doc))
    rename = "" if named else f"; name it {p.name.removesuffix('.gz').rsplit('.', 1)[0]}.json (a document is read " \
                                "whole from a .json or .traj file)"
    return _transcript(p, item, guess, "this is {a} {fmt} file ({title}), one JSON document, not an agent log", rename,
                       p if named else "FILE.json") or (
        f"{p}: a JSON document{' written over several lines' if pretty else ''}, not an agent log (JSON Lines: each "
        "event one object on its own line), and none of the transcript formats sam-data transcripts converts "
        f"(sam-data formats lists them){_refused(item)}")


def _lines(p: Path) -> str | None:
    """What a JSON Lines file whose first line is a transcript's (a conversation, a session's line: what the agent-log
    reader calls a tool-call transcript) is and the command that converts it, in one line; None when it is read as
    an agent log. Read line by line, the first line's error named the command with a literal FILE and no format, and
    the advice after it (--on-error skip) cannot help: every line of a transcript is no event. Its format is the
    transcript reader's own verdict on the file, as sam-data transcripts reads it."""
    from sam_model.data.formats.base import TranscriptFormatError
    from sam_model.data.formats.files import conversations, document_format, parse
    from sam_model.data.reader import open_log_binary
    from sam_model.data.schema import is_transcript

    with open_log_binary(p) as fh:
        first = next((line for line in fh if line.strip(b" \t\r\n\xef\xbb\xbf")), b"")
    try:
        doc = parse(first, str(p))
    except TranscriptFormatError:
        return None  # its line's error says what is wrong
    if _is_event(doc) or not is_transcript(doc):
        return None
    item = next(iter(conversations(p)), None)
    return _transcript(p, item, document_format(doc), "this looks like a tool-call transcript ({fmt}: {title}), not an "
                                                 "agent log") or (
        f"{p}: this looks like a tool-call transcript, not an agent log, of none of the formats sam-data transcripts "
        f"converts (sam-data formats lists them){_refused(item)}")


def _refused(item: object) -> str:
    from sam_model.data.formats.base import TranscriptFormatError

    return f": sam-data transcripts refuses it: {item}" if isinstance(item, TranscriptFormatError) else ""


def _transcript(p: Path, item: object, guess: str | None, what: str, rename: str = "",
                target: object = None) -> str | None:
    """``p`` named with its transcript format (``item``'s: the transcript reader's first conversation of it, else
    ``guess``, the format its first document is read as) and the command that converts it (or why the reader refuses
    it), ``what`` it is said to be; None where no transcript format reads it."""
    from sam_model.data.formats import FORMATS, Conversation, detect

    fmt = (item.format or detect(item.messages)) if isinstance(item, Conversation) and item.messages else guess
    if fmt not in FORMATS:
        return None
    article = "an" if fmt[0] in "aeio" else "a"  # "a adk file", "a openai file" were printed
    said = f"{p}: " + what.format(fmt=fmt, title=FORMATS[fmt].title, a=article)
    if refused := _refused(item):
        return said + refused
    return (f"{said}{rename}: convert it with `sam-data transcripts {p if target is None else target} OUT.jsonl "
            f"--format {fmt}` (train.py and evaluate.py take it as it is)")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=cli_name("python -m sam_model.data.validate"),
        description="Check agent logs (.jsonl or .jsonl.gz, format: ../shared/spec/agent-log.md) and print "
        "episodes, events, decision points, phases and label statistics per file and in total. "
        "Exit status: 0 clean, 1 data errors (printed as FILE:LINE: reason), 2 usage errors.",
    )
    parser.add_argument("logs", nargs="+", metavar="LOG", help="agent log files (.jsonl or .jsonl.gz)")
    parser.add_argument(
        "--on-error",
        choices=("raise", "skip"),
        default="raise",
        help="raise (default): stop at the first bad line and print it; skip: skip bad lines, print every "
        "one of them and the statistics of the good ones (exit status is still 1)",
    )
    parser.add_argument(
        "--scope",
        choices=("episode", "global"),
        default="episode",
        help="candidate set counted in 'candidates / decision point': episode (default) = earlier events of "
        "the same episode; global = every earlier event of all LOGs in the order given",
    )
    parser.add_argument("--allow-empty", action="store_true",
                        help="accept a LOG without events (empty or only blank lines); default: a data error")
    parser.add_argument("--strict", action="store_true",
                        help="make the warnings errors (exit status 1): fields the format does not define, "
                        "episodes whose lines are not in step order")
    args = parser.parse_args(argv)

    if (twice := given_twice(args.logs)) is not None:
        print(f"error: agent log given twice: {twice} (a shell glob that matched it twice?); give each log once",
              file=sys.stderr)
        return 2
    for log in args.logs:
        p = Path(log)
        if not p.is_file():
            what = "is a directory" if p.is_dir() else not_found(p)
            print(f"error: agent log {what}: {p} (give .jsonl or .jsonl.gz files{_runs_hint(p)})", file=sys.stderr)
            return 2

    for log in args.logs:
        try:
            whole = _document(Path(log))
            whole = whole or _lines(Path(log))
        except (OSError, SAMFileError):
            whole = None  # unreadable: the read below says so as it does for any log
        if whole is not None:
            print(f"error: {whole}", file=sys.stderr)
            return 1

    report = ReadReport()
    try:
        per_file, total = collect_stats(
            args.logs, args.on_error, args.scope, report, progress=True
        )
    except LogFormatError as err:
        _print_errors([err])
        print(
            "error: the log is malformed (see the line above); fix it or rerun with --on-error skip "
            "to list every bad line",
            file=sys.stderr,
        )
        return 1
    except OSError as err:
        print(f"error: cannot read a log: {err}", file=sys.stderr)
        return 2
    except SAMFileError as err:  # a file its name misdescribes (a gzip file without .gz)
        print(f"error: {err}", file=sys.stderr)
        return 2

    console = Console(width=max(100, Console().width))
    blocks = list(per_file.items()) if len(per_file) > 1 else []
    blocks.append((f"total ({len(per_file)} files)" if blocks else next(iter(per_file)), total))
    for title, stats in blocks:
        console.print(Text(title, style="bold"), soft_wrap=True)  # Text: a path is never read as markup
        console.print(stats_table(stats, args.scope))
    empty = [p for p, st in per_file.items() if st.events == 0 and not any(e.source == p for e in report.skipped)]
    warnings = _warnings(per_file)
    for line in warnings:
        print(f"{'error' if args.strict else 'warning'}: {line}", file=sys.stderr)
    if not args.allow_empty:
        for p in empty:
            print(f"error: {p}: no events (the file is empty or holds only blank lines); give a log with events, or "
                  "pass --allow-empty", file=sys.stderr)
    if report.skipped:
        _print_errors(report.skipped)
        print(f"error: {report.n_skipped} bad line(s) skipped (listed above)", file=sys.stderr)
        return 1
    if (empty and not args.allow_empty) or (warnings and args.strict):
        return 1
    if total.decision_points == 0:
        print(
            "warning: no decision points (events with useful_memory_steps); nothing to train or evaluate on",
            file=sys.stderr,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
