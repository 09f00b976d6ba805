"""Claude Code's headless output: the lines ``claude -p --output-format stream-json --verbose`` prints, a layout of
the ``claude-code`` format (the same messages, read by the same reader, in another container).

A harness that runs Claude Code on a benchmark keeps this stdout (Harbor writes it to ``agent/claude-code.txt``),
one run after another in one file where it appends them. Checked against the SDK that reads this stream,
anthropics/claude-agent-sdk-python (``_internal/message_parser.py``, ``parse_message``, and ``types.py``:
``SystemMessage``, ``AssistantMessage``, ``UserMessage``, ``ResultMessage``, ``StreamEvent``, ``RateLimitEvent``),
and public logs of Claude Code 2.1 (benchflow-ai/skillsbench-trajectories, ``agent/claude-code.txt``), not guessed:

- a line is one SDK message typed by ``type``: ``system`` (subtype ``init``: ``session_id``, ``cwd``, ``model``,
  ``tools``, ``mcp_servers``, ``permissionMode``, ...; also ``compact_boundary``, ``task_started``, hook events),
  ``assistant`` ``{"message": <an API message>, "parent_tool_use_id", "session_id", "uuid", "error"?}``, ``user``
  ``{"message": {"role", "content": str | [blocks]}, "parent_tool_use_id", "session_id", "uuid",
  "tool_use_result"?}``, ``result`` ``{"subtype", "is_error", "result", "num_turns", "session_id", "usage", ...}``,
  and ``stream_event`` (``--include-partial-messages``), ``rate_limit_event`` and the like; the session's id is
  ``session_id`` where a session file's entry has ``sessionId`` (:func:`is_message` tells them apart);
- the ``user`` and ``assistant`` messages are the ones Claude Code writes to its session file
  (:mod:`claude_code`), so the claude-code reader reads them: a streamed response one line per content block,
  the lines of one ``message.id`` one turn; a ``tool_result`` block answers its ``tool_use_id``, ``is_error: true``
  flags the call as failed (``tool_use_result``, Claude Code's own structured copy, is not read); a ``user``
  message's text is the user's turn; ``<synthetic>`` assistant words (API errors) are counted;
- **no prompt** unless echoed: ``claude -p PROMPT`` prints no user message for its prompt (the logs above start
  with ``init``, then the model's first response), so a value only the prompt gave traces to nothing; with
  ``--input-format stream-json --replay-user-messages`` each user message is echoed as a ``user`` line, a user
  turn. The session file the same run writes (``~/.claude/projects``) holds the prompt: prefer it where kept;
- **subagents**: a ``Task``/``Agent`` call's run writes its messages with ``parent_tool_use_id``, the id of that
  call (its prompt a ``user`` line of its own): they are a conversation of their own, episode
  ``<session>-subagent-<parent_tool_use_id>``, split group the session's; the parent's call and its result stay in
  the parent's;
- **counted, not read**: ``system`` lines, ``result`` lines (its ``result`` repeats the last assistant words; its
  ``is_error`` is the run's outcome, no call's), ``stream_event``, ``rate_limit_event`` and every other type;
- **no policy**: the stream holds no system prompt (``init``'s ``tools`` are the tools' names, not instructions);
- **runs**: a file is read one conversation a session, its lines grouped by ``session_id`` in order (a line
  without one goes with the line before it): a harness's file of appended runs gives each run, and a run that
  resumed a session under the same id continues its conversation. The episode and split group are the session.

A line that is no JSON and opens no object (its first character past blanks not ``{``) is stderr mixed in (a
harness keeping ``2>&1 | tee``: the notes of Claude Code or of its hooks): no message of any session, it is left
out wherever it is and counted in the import report (how many, the first's ``FILE:LINE``). A line that cannot be
read (one opening ``{`` that is invalid JSON, a JSON value that is no object, no string ``type``, a bad ``session_id``,
``parent_tool_use_id`` or message field) refuses its session, named ``FILE:LINE`` with the field, rather than read
it without the line (a call's result could be lost unsaid); one whose session it does not name refuses the sessions
of the lines on both sides of it. The other sessions are read (``--skip-bad``). A last line the file ends inside
(no newline after it: a run still writing) is left out and reported, as the other session readers do. A file of no
``user`` or ``assistant`` message (a run that ended before the model answered) is refused in one line with the
result it ended with.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from sam_model.data.formats import claude_code
from sam_model.data.formats.base import Conversation, CutLine, NotJSON, TranscriptFormatError
from sam_model.io import json_type

TYPES = ("system", "user", "assistant", "result")  # the SDK's messages every run prints (init, turns, its end)


def is_message(doc: Any) -> bool:
    """A line of Claude Code's stream-json output: an SDK message (system, user, assistant, result) with its run's
    ``session_id``; a session file's entry (``sessionId``, ``parentUuid``) is none."""
    return (isinstance(doc, Mapping) and doc.get("type") in TYPES and isinstance(doc.get("session_id"), str)
            and not claude_code.is_entry(doc))


def check(line: Any, where: str) -> str | None:
    """Refuse, naming ``where`` and the field, a line the claude-code reader could not read; its session's id
    (None: the line names none)."""
    if isinstance(line, Mapping):
        for key in ("session_id", "parent_tool_use_id", "uuid"):
            if line.get(key) is not None and (not isinstance(line[key], str) or not line[key]):
                raise TranscriptFormatError(where, f"'{key}' is {json_type(line[key])}, expected a string"
                                                   + (" (the id of the Task call whose subagent wrote the line) or "
                                                      "null" if key == "parent_tool_use_id" else ""))
    claude_code.check(line, where)
    return line.get("session_id")


def _session_of(line: Any) -> str | None:
    sid = line.get("session_id") if isinstance(line, Mapping) else None
    return sid if isinstance(sid, str) and sid else None


def conversations(docs: Iterable[tuple[Any, str]], path: Path,
                  id_of: Callable[[Any], str]) -> Iterator[Conversation | TranscriptFormatError]:
    """The conversations of one stream-json file, from its ``(document or its error, where)`` pairs
    (files.documents): each session's main conversation, then its subagents'; a session holding a line that
    cannot be read is that line's error instead."""
    rows: list[tuple[str | None, Any]] = []  # (the session a line names, the line or its error)
    cut, stderr = "", []
    for doc, where in docs:
        if isinstance(doc, CutLine):  # the last line (none follows): the lines before it are whole
            cut = where
            continue
        if isinstance(doc, NotJSON):  # stderr mixed in (2>&1): no message, so no session's
            stderr.append(where)
            continue
        sid = None
        if not isinstance(doc, TranscriptFormatError):
            try:
                sid = check(doc, where)
            except TranscriptFormatError as err:
                doc, sid = err, _session_of(doc)
        rows.append((sid, doc))
    before = _fill([sid for sid, _ in rows])
    after = _fill([sid for sid, _ in rows][::-1])[::-1]
    runs: dict[str, dict[str, list[Any]]] = {}  # session -> chain ("" or a parent_tool_use_id) -> its lines
    bad: dict[str, TranscriptFormatError] = {}
    for (sid, doc), prev, nxt in zip(rows, before, after):
        if isinstance(doc, TranscriptFormatError):  # spoils its session, else both sessions it may belong to
            for owner in [sid] if sid else dict.fromkeys(s for s in (prev, nxt) if s) or [path.name]:
                runs.setdefault(owner, {})
                bad.setdefault(owner, doc)
            continue
        owner = sid or prev or nxt or path.name
        runs.setdefault(owner, {}).setdefault(doc.get("parent_tool_use_id") or "", []).append(doc)
    several = len(runs) > 1
    read, noted = 0, tuple(stderr)
    for sid, chains in runs.items():
        at = f"{path}: session {sid}" if several else str(path)
        if sid in bad:
            err = bad[sid]
            yield TranscriptFormatError(err.where, *err.parts, f"; session {sid} is refused rather than read without "
                                                               "this line")
            continue
        for key, lines in chains.items():
            if any(line["type"] in claude_code.TURNS for line in lines):
                read += 1
                yield Conversation(id_of(f"{sid}-subagent-{key}" if key else sid), lines,
                                   f"{at}, subagent {key}" if key else at, sid, "claude-code", cut=cut,
                                   stderr=noted)
    if not read and not bad:
        yield TranscriptFormatError(str(path), "Claude Code stream-json output without a user or assistant message "
                                               f"({_ended(runs)}): no conversation to read")


def _fill(sessions: list[str | None]) -> list[str | None]:
    """Each position's nearest session at or before it (None before the first)."""
    out, last = [], None
    for sid in sessions:
        last = sid or last
        out.append(last)
    return out


def _ended(runs: Mapping[str, Mapping[str, list[Any]]]) -> str:
    """What the lines of a file without turns are, and the result its last run ended with (an API key refused, a
    budget spent), for the refusal."""
    lines = [line for chains in runs.values() for chain in chains.values() for line in chain]
    kinds = ", ".join(sorted({str(line["type"]) for line in lines})) or "no lines"
    result = next((line for line in reversed(lines) if line["type"] == "result"), None)
    if result is None:
        return kinds
    said = result.get("result") if isinstance(result.get("result"), str) else ""
    return f"{kinds}; the run ended {result.get('subtype', 'with a result')!s:.40}" + (f": {said[:200]}" if said else "")
