"""Codex CLI's headless output: the JSON Lines ``codex exec --json`` prints, a run's thread events.

A harness that runs Codex on a benchmark keeps this stdout (Harbor writes it to ``agent/codex.txt``), one run after
another in one file where it appends them. These events are not a rollout's lines (:mod:`codex`: the model's
Responses items); they report what Codex did, item by item. Checked against openai/codex, not guessed:

- ``codex-rs/exec/src/exec_events.rs``: a line is a ``ThreadEvent`` tagged by ``type``: ``thread.started``
  ``{"thread_id"}``, ``turn.started``, ``turn.completed`` ``{"usage"}``, ``turn.failed`` ``{"error": {"message"}}``,
  ``item.started`` / ``item.updated`` / ``item.completed`` ``{"item"}``, ``item.plan.delta``,
  ``request_user_input``, ``error`` ``{"message"}``; a ``ThreadItem`` is ``{"id", "type", ...}``:
  ``agent_message`` ``{"text"}``, ``reasoning``, ``command_execution`` ``{"command": a command line,
  "aggregated_output", "exit_code": int | null, "status": "in_progress" | "completed" | "failed" | "declined"}``,
  ``file_change`` ``{"changes": [{"path", "kind", "diff"?}], "status"}``, ``mcp_tool_call`` ``{"server", "tool",
  "arguments", "result": {"content", "structured_content"} | null, "error": {"message"} | null, "status"}``,
  ``collab_tool_call``, ``web_search``, ``todo_list``, ``plan``, ``error``;
- ``event_processor_with_jsonl_output.rs``: ``thread.started`` first, its id the session's (``codex exec resume``
  prints the resumed thread's); item ids ``item_N`` numbered per process (a resumed run numbers from ``item_0``
  again); a command's item started when spawned and completed when it exits; agent messages and reasoning only
  completed; a file change completed (updated while its patch streams);
- the first version of these events (``exec_events.rs``'s ``ConversationEvent``): ``session.created``
  ``{"session_id"}``, ``item.completed`` only, the item's type in ``item_type`` (``assistant_message`` for
  ``agent_message``, ``patch_apply`` ``{"changes"}`` for ``file_change``), ``mcp_tool_call`` without arguments or
  result: read alike. Before it ``codex exec --json`` printed its config, ``{"prompt"}`` and each protocol event
  ``{"id", "msg"}`` (``event_processor_with_json_output.rs``): refused in one line (:data:`LEGACY`) pointing to
  the run's rollout;
- a public log of Codex 0.46 (jnarowski/agentcmd, ``.agent/docs/codex.md``): ``{"type": "item.started", "item":
  {"id": "item_1", "type": "command_execution", "command": "bash -lc 'cat sample.txt'", ...}}``.

Read as what the agent did, in order:

- **no prompt, no policy**: the stream holds no user message (the prompt is ``codex exec``'s argument, never
  printed) and no instructions, so a value only the prompt gave traces to nothing. The session's rollout, which
  ``codex exec`` writes too (``~/.codex/sessions``, the ``codex`` reader), holds the prompt, the instructions and
  each call as the model made it: prefer it where the harness kept it;
- an ``agent_message`` is the assistant's words; calls right after it join its turn;
- a **call** is placed at its item's first event and read as its last event has it (a file change whose patch
  streams is printed as ``item.updated`` events, the changes so far, and no ``item.started``: the call is the change
  set it completed with), its **result** at ``item.completed``, so calls started together (parallel) are one turn;
  a call never completed (a run killed) has no result. A ``command_execution`` is the
  call ``shell`` ``{"command": <the command line>}`` (the shell tool's name, so the shell command lines rule reads
  its words), its ``aggregated_output`` the result, flagged as failed when ``exit_code`` is not 0 (with no exit
  code, ``status`` ``failed`` or ``declined``); an ``mcp_tool_call`` the call ``<server>__<tool>`` (Codex's name
  for an MCP tool) with its ``arguments``, its result's text blocks the result (else its structured content as
  JSON), an ``error`` the result ``Error: <message>``, flagged (toolstate's extension of the spec for formats that
  flag failed calls), as is ``status`` ``failed``; a ``file_change`` the call ``apply_patch`` ``{"changes": [...]}``
  (the paths and kinds, and in later versions each file's ``diff``), its ``status`` the result, flagged when
  ``failed``;
- **counted, not read**: ``reasoning``, ``todo_list``, ``web_search``, ``plan``, ``collab_tool_call`` (a subagent
  runs as a thread of its own, whose events this stream does not print) and ``error`` items, and every
  ``thread.*``, ``turn.*`` and other event;
- **runs**: a run starts at its ``thread.started``; the runs of one thread (a harness appending ``codex exec`` and
  ``codex exec resume`` runs) are one conversation, in file order, and each thread is one: its episode and split
  group the thread's id (the file's name where no ``thread.started`` names one).

A line that is no JSON and opens no object (its first character past blanks not ``{``) is Codex's stderr mixed in
(a harness keeping ``2>&1 | tee``; Codex writes its notes there: ``Reading prompt from stdin...``, timestamped
``ERROR codex_core::...`` lines): no event of any thread, it is left out wherever it is and counted in the import
report (how many, the first's ``FILE:LINE``). A line that cannot be read (one opening ``{`` that is invalid JSON,
a JSON value that is no object, no string ``type``, a bad field of an item it reads) refuses its thread, named
``FILE:LINE`` with the field, rather than read it without the line; the other threads are read (``--skip-bad``),
and one before the first run spoils no thread. A last line the file ends inside (no newline after it: a run still
writing) is left out and reported, as the session readers do. A file of no item (runs that failed before the model
answered) is refused in one line with the error they ended with.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from sam_model.data.formats.base import (
    FAILED,
    Chat,
    Conversation,
    CutLine,
    NotJSON,
    TranscriptFormatError,
    chat_call,
    each,
    result_text,
    text_of,
)
from sam_model.data.formats.numbered import mark
from sam_model.io import json_type

STARTS = {"thread.started": "thread_id", "session.created": "session_id"}  # a run's first event, naming its thread
ITEMS = ("item.started", "item.updated", "item.completed")
TURNS = ("turn.started", "turn.completed", "turn.failed")
EVENTS = (*STARTS, *ITEMS, *TURNS, "item.plan.delta")  # the types that tell the format (a bare "error" does not)
WORDS = ("agent_message", "assistant_message")  # the agent's words (the first version's name second)
CALLS = ("command_execution", "mcp_tool_call", "file_change", "patch_apply")  # the items that are tool calls
MCP_DELIMITER = "__"  # Codex names an MCP tool <server>__<tool> (mcp_connection_manager.rs)
SUMMARY = frozenset({"workdir", "model", "provider", "approval", "sandbox"})  # the old output's config line
LEGACY = ("the output of an older codex exec --json (its config line, {\"prompt\"}, then protocol events {\"id\", "
          "\"msg\"}), which no reader here reads: give the run's rollout instead (codex exec writes one too, "
          "~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl, named by its session_configured event's rollout_path; the "
          "codex reader), or rerun with a Codex whose --json prints thread.started and item events")


def is_event(doc: Any) -> bool:
    """A line of ``codex exec --json``: an event of one of the types :data:`EVENTS` (no other format's lines are
    typed with a dot)."""
    return isinstance(doc, Mapping) and doc.get("type") in EVENTS


def is_legacy(doc: Any) -> bool:
    """A line of the older ``codex exec --json``: its config summary (string values keyed ``workdir``, ``model``,
    ``provider``, ``approval``, ``sandbox``, ...) or a protocol event ``{"id", "msg": {"type", ...}}``."""
    return isinstance(doc, Mapping) and (
        (SUMMARY <= doc.keys() and all(isinstance(v, str) for v in doc.values()))
        or (set(doc) == {"id", "msg"} and isinstance(doc["msg"], Mapping) and isinstance(doc["msg"].get("type"), str)))


def sniff(lines: list[Any]) -> bool:
    return any(is_event(m) for m in lines)


def item_type(item: Mapping[str, Any]) -> Any:
    """An item's type: ``type``, or the first version's ``item_type``."""
    return item.get("type", item.get("item_type"))


def to_chat(lines: list[Any], where: str) -> Chat:
    chat = Chat()
    reader = _Reader(chat)
    for i, line, w in each(lines, where, "event"):
        reader.line(line, w, f"event {i}")
    return mark(chat)


def check(line: Any, where: str) -> None:
    """Refuse, naming ``where`` and the field, a line :func:`to_chat` could not read (a completed item's call and
    result fields both: read alone, it is a call and its result)."""
    if not isinstance(line, Mapping):
        raise TranscriptFormatError(where, f"a codex exec --json event must be an object, got {json_type(line)}")
    _Reader(Chat()).line(line, where, "")


class _Reader:
    """Events into chat messages: a call at its item's first event (as its latest says), its result when the item
    completes; an agent message's words, the calls right after it joining its turn."""

    def __init__(self, chat: Chat) -> None:
        self.chat = chat
        self.run = 0  # thread.started events seen: item ids restart with each run
        self.turn: dict[str, Any] | None = None  # the assistant message calls may still join
        self.open: dict[tuple[int, str], dict[str, Any]] = {}  # (run, item id) -> its call, one with no result yet
        self.done: set[tuple[int, str]] = set()

    def line(self, line: Mapping[str, Any], w: str, source: str) -> None:
        kind = line.get("type")
        if not isinstance(kind, str):
            raise TranscriptFormatError(w, f"'type' is {json_type(kind)}, expected a codex exec --json event type "
                                           "(thread.started, item.completed, ...)")
        if kind in ITEMS:
            self.item(kind, _item(line, kind, w), w, source)
            return
        if kind in STARTS:
            thread = line.get(STARTS[kind])
            if not isinstance(thread, str) or not thread:
                raise TranscriptFormatError(w, f"'{STARTS[kind]}' is {json_type(thread)}, expected the thread's id (a "
                                               "string)")
            self.run += 1
        if kind in STARTS or kind in TURNS:
            self.turn = None
        self.chat.ignored[f"{kind} events"] += 1

    def item(self, kind: str, item: Mapping[str, Any], w: str, source: str) -> None:
        itype, key = item_type(item), (self.run, item["id"])
        if itype in WORDS and kind == "item.completed":
            if not isinstance(item.get("text"), str):
                raise TranscriptFormatError(w, f"'item.text' is {json_type(item.get('text'))}, expected the agent's "
                                               "words (a string)")
            self.turn = {"role": "assistant", "content": item["text"] or None}
            self.chat.add(self.turn, source)
            return
        if itype not in CALLS or key in self.done:
            self.chat.ignored[f"{itype} items" if kind == "item.completed" and itype not in CALLS
                              else f"{kind} events"] += 1
            return
        call = chat_call(item["id"] if self.run <= 1 else f"{item['id']}@{self.run}", *_call(item, itype, w), w)
        if key in self.open:  # a later event: the item as it is now (a file change's patch streams in updates)
            self.open[key]["function"] = call["function"]
        else:  # its first event: the call, where it was made
            if self.turn is None:
                self.turn = {"role": "assistant", "content": None}
                self.chat.add(self.turn, source)
            self.turn.setdefault("tool_calls", []).append(call)
            self.open[key] = call
        if kind == "item.completed":
            text, failed = _result(item, itype, w, self.chat)
            self.chat.add({"role": "tool", "tool_call_id": self.open.pop(key)["id"], "content": text,
                           **({FAILED: True} if failed else {})}, source)
            self.done.add(key)
            self.turn = None


def _item(line: Mapping[str, Any], kind: str, w: str) -> Mapping[str, Any]:
    item = line.get("item")
    if not isinstance(item, Mapping):
        raise TranscriptFormatError(w, f"'item' of a {kind} event is {json_type(item)}, expected the thread item "
                                       "{\"id\", \"type\", ...}")
    if not isinstance(item.get("id"), str) or not item["id"]:
        raise TranscriptFormatError(w, f"'item.id' is {json_type(item.get('id'))}, expected a string (the id its "
                                       "events share)")
    if not isinstance(item_type(item), str):
        raise TranscriptFormatError(w, f"'item.type' is {json_type(item_type(item))}, expected agent_message, "
                                       "command_execution, mcp_tool_call, file_change, reasoning, ...")
    return item


def _call(item: Mapping[str, Any], itype: str, w: str) -> tuple[str, Any]:
    """(name, arguments) of an item's call."""
    if itype == "command_execution":
        if not isinstance(item.get("command"), str):
            raise TranscriptFormatError(w, f"'item.command' is {json_type(item.get('command'))}, expected the command "
                                           "line (a string)")
        return "shell", {"command": item["command"]}
    if itype == "mcp_tool_call":
        for key in ("server", "tool"):
            if not isinstance(item.get(key), str) or not item[key]:
                raise TranscriptFormatError(w, f"'item.{key}' is {json_type(item.get(key))}, expected the MCP "
                                               f"{key}'s name")
        return f"{item['server']}{MCP_DELIMITER}{item['tool']}", item.get("arguments")
    changes = item.get("changes")
    if not isinstance(changes, list) or not all(isinstance(c, Mapping) for c in changes):
        raise TranscriptFormatError(w, f"'item.changes' is {json_type(changes)}, expected a list of the changed files "
                                       "{\"path\", \"kind\"}")
    return "apply_patch", {"changes": changes}


def _result(item: Mapping[str, Any], itype: str, w: str, chat: Chat) -> tuple[str, bool]:
    """(the words of a completed call's result, whether the call failed)."""
    status = item.get("status")
    if status is not None and not isinstance(status, str):
        raise TranscriptFormatError(w, f"'item.status' is {json_type(status)}, expected a string such as completed or "
                                       "failed")
    if itype == "command_execution":
        output, code = item.get("aggregated_output"), item.get("exit_code")
        if output is not None and not isinstance(output, str):
            raise TranscriptFormatError(w, f"'item.aggregated_output' is {json_type(output)}, expected the command's "
                                           "output (a string)")
        if code is not None and type(code) is not int:
            raise TranscriptFormatError(w, f"'item.exit_code' is {json_type(code)}, expected an integer or null")
        return output or "", code != 0 if code is not None else status in ("failed", "declined")
    if itype == "mcp_tool_call":
        error = item.get("error")
        if error is not None:
            message = error.get("message") if isinstance(error, Mapping) else error
            if not isinstance(message, str):
                raise TranscriptFormatError(w, f"'item.error' is {json_type(error)}, expected {{\"message\": ...}} "
                                               "or null")
            return f"Error: {message}", True
        result = item.get("result")
        if result is None:
            return "", status == "failed"
        if not isinstance(result, Mapping) or not isinstance(result.get("content", []), list):
            raise TranscriptFormatError(w, f"'item.result' is {json_type(result)}, expected {{\"content\": [...], "
                                           "\"structured_content\"}} or null")
        text = text_of(result.get("content"), w, ignored=chat.ignored)
        if not text and result.get("structured_content") is not None:
            text = result_text(result["structured_content"])
        return text, status == "failed"
    return status or "", status == "failed"


def conversations(docs: Iterable[tuple[Any, str]], path: Path,
                  id_of: Callable[[Any], str]) -> Iterator[Conversation | TranscriptFormatError]:
    """The conversations of one ``codex exec --json`` file, one a thread (its runs in file order), from its
    ``(document or its error, where)`` pairs (files.documents); a thread holding a line that cannot be read is that
    line's error instead."""
    runs: list[tuple[str | None, list[Any], list[TranscriptFormatError]]] = []  # (thread, lines, bad lines)
    cut, stderr = "", []
    for doc, where in docs:
        if isinstance(doc, CutLine):  # the last line (none follows): the lines before it are whole
            cut = where
            continue
        if isinstance(doc, NotJSON):  # Codex's stderr mixed in (2>&1): no event, so no thread's
            stderr.append(where)
            continue
        if not isinstance(doc, TranscriptFormatError):
            try:
                check(doc, where)
            except TranscriptFormatError as err:
                doc = err
        thread = None if isinstance(doc, TranscriptFormatError) or doc["type"] not in STARTS else doc[STARTS[doc["type"]]]
        if thread is not None or not runs:
            runs.append((thread, [], []))
        (runs[-1][2] if isinstance(doc, TranscriptFormatError) else runs[-1][1]).append(doc)
    threads: dict[str, tuple[list[Any], list[TranscriptFormatError]]] = {}
    for thread, lines, bad in runs:
        if thread is None and not lines:  # lines before the first run, none of them an event: no thread's
            yield from bad
            continue
        held = threads.setdefault(thread or path.name.removesuffix(".gz").rsplit(".", 1)[0], ([], []))
        held[0].extend(lines)
        held[1].extend(bad)
    read, noted = 0, tuple(stderr)
    for thread, (lines, bad) in threads.items():
        if bad:
            yield TranscriptFormatError(bad[0].where, *bad[0].parts, f"; thread {thread} is refused rather than read "
                                        "without this line")
        elif any(line["type"] in ITEMS for line in lines):
            read += 1
            yield Conversation(id_of(thread), lines, f"{path}: thread {thread}" if len(threads) > 1 else str(path),
                               thread, "codex-exec", cut=cut, stderr=noted)
    if not read and not any(bad for _, bad in threads.values()) and threads:
        yield TranscriptFormatError(str(path), f"codex exec --json output without an item ({_ended(threads)}): no "
                                               "conversation to read")


def _ended(threads: Mapping[str, tuple[list[Any], list[Any]]]) -> str:
    """What the events of a file without items are, and the error its last run ended with, for the refusal."""
    lines = [line for held, _ in threads.values() for line in held]
    kinds = ", ".join(dict.fromkeys(str(line["type"]) for line in lines)) or "no events"
    error = next((line.get("error", line) for line in reversed(lines) if line["type"] in ("turn.failed", "error")),
                 None)
    said = error.get("message") if isinstance(error, Mapping) else None
    return f"{kinds}; the run failed: {said[:200]}" if isinstance(said, str) else kinds
