"""OpenAI Codex CLI session rollouts: ``~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl``, one session a
file (``~/.codex/archived_sessions/`` keeps archived ones the same way).

Checked against openai/codex (codex-rs) and a public rollout, not guessed:

- ``protocol/src/protocol.rs``: a line is a ``RolloutLine`` ``{"timestamp", "type", "payload"}``, ``RolloutItem``
  tagged by ``type``: ``session_meta`` (``SessionMetaLine``: ``SessionMeta`` ``{id, forked_from_id?, timestamp, cwd,
  originator, cli_version, source, instructions?`` (0.4x) ``| base_instructions: {"text"}, ...}`` and ``git``),
  ``response_item`` (a ``ResponseItem``), ``compacted`` (``CompactedItem {message, replacement_history?}``),
  ``turn_context`` (``TurnContextItem``: cwd, policies, model) and ``event_msg`` (an ``EventMsg``);
- ``protocol/src/models.rs``: ``ResponseItem`` is the Responses API's items: ``message`` (role user / assistant /
  developer / system, ``input_text`` / ``output_text`` / ``input_image`` parts), ``reasoning``, ``function_call``
  ``{name, arguments: a JSON string, call_id}``, ``function_call_output`` ``{call_id, output}`` (a string, or a list
  of ``input_text`` / ``input_image`` items), ``custom_tool_call`` ``{call_id, name, input}`` (``apply_patch``'s
  freeform patch) and its ``custom_tool_call_output``, ``local_shell_call`` ``{call_id | id, status, action:
  {"type": "exec", "command": [argv], "working_directory", ...}}``, ``web_search_call``, ``ghost_snapshot``,
  ``compaction``; ``ShellToolCallParams`` (``shell``'s arguments: ``{"command": [argv], "workdir"}``);
- ``core/src/rollout.rs`` (before the wrapper, mid 2025): the first line is ``SessionMeta {id, timestamp,
  instructions?}`` (``git`` later), then bare ``ResponseItem`` lines and ``{"record_type": "state", ...}`` lines;
- ``core/src/rollout/policy.rs``: which items and events are written; the events kept (``user_message``,
  ``agent_message``, ``agent_reasoning``, ``token_count``, ..., and ``exec_command_end`` and the like in the extended
  mode) echo items the file holds already;
- ``core/src/tools`` (``format_exec_output_for_model_structured`` / ``_freeform``): a command's output reaches the
  model as the JSON string ``{"output", "metadata": {"exit_code", "duration_seconds"}}`` or as the text ``Exit code:
  N\\nWall time: S seconds\\n...\\nOutput:\\n...``; unified exec's (``handlers/unified_exec.rs``,
  ``format_response``) as ``Chunk ID: X\\nWall time: S seconds\\nProcess exited with code N\\n...\\nOutput:\\n...``
  (``Process running with session ID N`` while the process runs); ``core/src/instructions/user_instructions.rs`` and the
  contextual-message helpers: ``# AGENTS.md instructions for DIR`` (legacy ``<user_instructions>``), ``<skill``,
  ``<environment_context>`` and ``<turn_aborted>`` user messages are Codex's, not the user's words;
- parallel calls (several calls in one response): ``core/src/response_processing.rs``' ``process_items`` (0.4x to
  0.58) records a response's items after it, each call followed by its output (call A, A's output, call B, B's
  output); openai/codex#4663 (``tools/parallel.rs``' ``ToolCallRuntime``, Oct 2025) sent ``parallel_tool_calls`` as
  the model family allows, so a response could hold several calls; #6691 (2025-11-14) records "all output items
  ... before all new input items" (the calls, then their outputs); #7310 (Dec 2025) records each item as it streams
  and the outputs after the response (``drain_in_flight``). ``codex.rs``' ``try_run_turn`` persists a ``turn_context``
  line before each model request (forks of 0.4x and 0.5x: Nottlespike/codex, liangsalt/codex; #3444 added the
  line, Sep 2025), and #9583 (Jan 2026) still writes it in ``try_run_sampling_request``; 0.77.0 was out by
  2025-12-23 (#8479). Later versions write it with a ``turn_id`` as a turn's baseline (``rollout_reconstruction.rs``),
  not known to mark each request;
- a public rollout of codex 0.46.0 (jnarowski/agentcmd, ``.agent/research/codex/format-comparison.md``):
  ``"instructions": null`` in session_meta, ``shell`` calls with ``{"command": ["bash", "-lc", "ls"], "workdir"}``,
  outputs (``apply_patch``'s too) in the JSON form above, ``event_msg`` echoes of each message.

Read as what the model saw, once:

- the **policy** (system messages: common knowledge, no event) is the first session_meta's instructions
  (``base_instructions.text``, ``instructions``), every ``developer`` message, and the user messages Codex writes
  for the model, not the user: AGENTS.md / ``<user_instructions>`` instructions, ``<skill`` bodies and
  ``<environment_context>`` (cwd, sandbox, shell); a ``<turn_aborted>`` marker is counted, not read;
- ``response_item`` lines are read by the Responses reader (:func:`responses.read`: an assistant message and the
  calls after it one turn, ``reasoning`` and built-in tools such as ``web_search_call`` counted). In a rollout of
  0.3x to 0.77 (:func:`marks_requests`: a ``turn_context`` line before each request), the outputs of a request's
  calls that precede a later call of it are read after that call (:func:`_in_response_order`), so calls written in
  one response are one turn, decided before any output, as Codex records them since #6691; other rollouts (a later
  Codex, a dev build's 0.0.0, none of the lines, no meta line) are read in file order: there the older layout's
  parallel calls stay sequential turns, no boundary being known. A
  ``local_shell_call`` is the call ``local_shell`` with the arguments Codex runs it with, ``{"command": [argv],
  "workdir"?}``, as a ``shell`` function call's (``ShellToolCallParams``), so a command is the same call whichever
  way the model made it; a ``shell`` call's arguments are read as the model wrote them (``command`` a list of
  words);
- a result's **exit code**: an output in Codex's exec form ``{"output", "metadata": {"exit_code"}}`` reads as its
  ``output`` (the words; the metadata is Codex's envelope), flagged as failed when the code is not 0, and so is
  one in the text form ``Exit code: N`` or, from unified exec's ``exec_command`` / ``write_stdin``, ``Process exited
  with code N`` (kept whole: those are the words the model read); toolstate's extension of the spec for formats
  that flag failed calls. No other output is flagged (Codex writes no success flag);
- ``event_msg``, ``turn_context``, ``compacted`` and later ``session_meta`` lines (a fork copies its parent's
  lines, its meta too) are counted, not read: events echo the items, turn contexts repeat the settings, and a
  compaction's summary (``message``) and ``replacement_history`` restate earlier turns that the file still holds
  whole (a rollout is only appended to: compaction rewrites the model's context, not the file), so reading them
  would make the restatement a newer source of values the turns said first. ``thread_rolled_back`` is not applied
  either: every turn written is read, as a session store's are.
- the **working directory**, the first ``session_meta``'s ``cwd`` and each ``turn_context``'s, is told on the next chat
  message (:data:`~sam_model.data.formats.base.CWD`): toolstate traces an absolute path under it by its relative part.

A file is one conversation (:func:`conversation`): its episode the session's id (``session_meta``'s ``id``, else the
UUID in the file's name), its split group the session it was forked from (``forked_from_id``) or, a subagent's, the
thread that spawned it (``source.subagent.thread_spawn.parent_thread_id``: Codex's multi-agent tools run each
subagent as a thread of its own, in its own rollout), else its own, and in a folder the first session of that line
(a fork of a fork, a subagent's subagent), so a fork and its parent, which share their first turns, and the
subagents of one task stay on one side of ``--split``. A line is named ``FILE:N``,
N its place among the file's lines (Codex writes no blank line).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

from sam_model.data.formats.base import FAILED, Chat, Conversation, TranscriptFormatError, text_of
from sam_model.data.formats.numbered import mark
from sam_model.data.formats.responses import CALLS, OUTPUTS, TEXT_PARTS, read
from sam_model.io import json_type

# the last Codex release known to write a turn_context line before each model request: 0.77.0 (openai/codex#8479,
# 2025-12-23) is before try_run_sampling_request still wrote it there (openai/codex#9583, 2026-01-21)
REQUEST_MARKED = (0, 77)
LINES = ("session_meta", "response_item", "event_msg", "turn_context", "compacted")
OLD_META = frozenset({"id", "timestamp", "instructions", "git"})  # the first line before the wrapper
# user messages that are Codex's, not the user's: instructions and context (the policy), compared as Codex does
# (the text's start, leading blanks and case aside)
CONTEXT = ("# agents.md instructions for ", "<user_instructions>", "<skill", "<environment_context>")
ABORTED = "<turn_aborted>"
FREEFORM = re.compile(r"Exit code: (-?\d+)\nWall time: ")  # format_exec_output_for_model_freeform
# unified exec's exec_command / write_stdin (handlers/unified_exec.rs, format_response): an optional chunk id, the
# wall time, then the exit code once the process exited ("Process running with session ID N" while it runs)
UNIFIED = re.compile(r"(?:Chunk ID: [^\n]*\n)?Wall time: [^\n]*\nProcess exited with code (-?\d+)\n")
ROLLOUT_FILE = re.compile(r"rollout-.*\.jsonl(\.gz)?")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def is_line(doc: Any) -> bool:
    """A rollout line of the current layout: ``{"timestamp", "type", "payload"}`` with a type Codex writes."""
    return isinstance(doc, Mapping) and doc.get("type") in LINES and "payload" in doc


def is_old_meta(doc: Any) -> bool:
    """The first line of a rollout written before the wrapper: the session's ``{id, timestamp, instructions?, git?}``
    and nothing else (a conversation object has messages, a Responses item a type, an event more keys)."""
    return (isinstance(doc, Mapping) and isinstance(doc.get("id"), str) and isinstance(doc.get("timestamp"), str)
            and set(doc) <= OLD_META)


def is_rollout(first: Any) -> bool:
    """Whether a file whose first good line is ``first`` is a rollout, in either layout."""
    return is_line(first) or is_old_meta(first)


def sniff(lines: list[Any]) -> bool:
    """Rollout lines: wrapped ones (no other format's messages have a ``payload`` beside these types), or a list
    opened by the session meta of the layout before the wrapper."""
    return bool(lines) and (is_old_meta(lines[0]) or any(is_line(m) for m in lines))


def to_chat(lines: list[Any], where: str) -> Chat:
    chat = Chat()
    failed: set[str] = set()  # the lines whose result's exit code is not 0
    requests = marks_requests(lines)
    items = _items(lines, where, chat, failed, requests)
    read(chat, _in_response_order(items, chat.misplaced) if requests else items)
    for m, source in zip(chat.messages, chat.sources):
        if m["role"] == "tool" and source in failed:
            m[FAILED] = True
    return mark(chat)


def _items(lines: list[Any], where: str, chat: Chat, failed: set[str],
           requests: bool = False) -> Iterator[tuple[str, Mapping[str, Any], str] | None]:
    """(source, Responses item, where) for each line that is one, the policy among them; the rest counted. With
    ``requests`` (:func:`marks_requests`) a turn_context line also yields None: a model request begins there."""
    meta = False
    for i, line in enumerate(lines):
        source, w = f"line {i + 1}", f"{where}:{i + 1}"
        if not isinstance(line, Mapping):
            raise TranscriptFormatError(w, f"a rollout line must be an object, got {json_type(line)}")
        if "payload" in line or line.get("type") in LINES:  # the RolloutLine wrapper
            kind, payload = line.get("type"), line.get("payload")
            if not isinstance(kind, str):
                raise TranscriptFormatError(w, f"'type' is {json_type(kind)}, expected one of {', '.join(LINES)}")
            if kind not in LINES:  # a line type newer than this reader: Codex's own reader skips those too
                chat.ignored[f"{kind} lines"] += 1
                continue
            if not isinstance(payload, Mapping):
                raise TranscriptFormatError(w, f"'payload' of a {kind} line is {json_type(payload)}, expected an object")
            if (kind == "turn_context" or kind == "session_meta" and not meta) and isinstance(payload.get("cwd"), str):
                chat.cwd = payload["cwd"] or chat.cwd  # the working directory (toolstate: paths under it)
            if kind == "session_meta" and not meta:
                meta = True
                yield from _policy(payload, "payload.", source, w)
            elif kind == "response_item":
                item = _item(payload, "payload.", source, w, chat, failed)
                if item is not None:
                    yield source, item, w
            else:
                chat.ignored[f"{kind} lines"] += 1
                if kind == "turn_context" and requests:
                    yield None
        elif i == 0 and is_old_meta(line):  # before the wrapper: the meta, then bare items
            meta = True
            yield from _policy(line, "", source, w)
        elif line.get("record_type") == "state":  # before the wrapper: the session's previous_response_id
            chat.ignored["state lines"] += 1
        elif "type" in line or "role" in line:  # before the wrapper: a bare ResponseItem
            item = _item(line, "", source, w, chat, failed)
            if item is not None:
                yield source, item, w
        else:
            raise TranscriptFormatError(w, "neither a rollout line {\"timestamp\", \"type\", \"payload\"} nor a "
                                           "Responses item {\"type\", ...}: is this a Codex rollout "
                                           "(~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl)?")


def marks_requests(lines: list[Any]) -> bool:
    """Whether the rollout was written by a Codex that writes a turn_context line before each model request and
    records a response's items after it (0.3x to 0.77: ``try_run_turn``, later ``try_run_sampling_request``): its
    session_meta's ``cli_version`` is one of those. A dev build's 0.0.0, a version not told, a meta-less file (a
    live add of later lines) and a later Codex are read in file order, as before."""
    for i, line in enumerate(lines):
        if is_line(line) and line["type"] == "session_meta" and isinstance(line["payload"], Mapping):
            version = line["payload"].get("cli_version")
            match = re.match(r"(\d+)\.(\d+)\.", version) if isinstance(version, str) else None
            return bool(match) and (0, 1) <= (int(match[1]), int(match[2])) <= REQUEST_MARKED
        if i == 0 and is_old_meta(line):
            return False
    return False


def _in_response_order(entries: Iterator[tuple[str, Mapping[str, Any], str] | None],
                       misplaced: list[str]) -> Iterator[tuple[str, Mapping[str, Any], str]]:
    """The items of each model request (from a boundary, None, to the next) with the outputs of its calls that came
    before a later call of it moved right after that call: Codex before openai/codex#6691 recorded each call with
    its output (call A, A's output, call B, B's output) although the model wrote A and B in one response, before
    either output; read in that order B was a turn made after A's output. Moved, they are the layout Codex records
    since (the calls, then their outputs), so the calls are one turn. A request with one call, or none after an
    output, is as it was. ``misplaced`` gets where each output moved past another response's items is (FILE:LINE,
    :func:`_calls_first`): the file did not mark that request as its version does."""
    span: list[tuple[str, Mapping[str, Any], str]] = []
    begun = False  # the items before the first turn_context are no request's known to be one: read as they are
    for entry in entries:
        if entry is None:
            yield from _calls_first(span, misplaced) if begun else span
            span, begun = [], True
        else:
            span.append(entry)
    yield from _calls_first(span, misplaced) if begun else span


def _calls_first(span: list[tuple[str, Mapping[str, Any], str]],
                 misplaced: list[str]) -> list[tuple[str, Mapping[str, Any], str]]:
    """One request's items, the outputs of its calls that precede its last call moved right after it. Between a
    response's first call and its last these versions record only its calls and their outputs (process_items): an
    output moved past anything else (a message, reasoning: a later response's) is added to ``misplaced``, its
    request holding more than one response because a turn_context line is missing before a request. The order is
    that of a whole span all the same (the report says it; labels do not change with it)."""
    calls = [j for j, (_, item, _) in enumerate(span) if item.get("type") in CALLS]
    ids: set[Any] = set()
    moved: list[int] = []
    for j, (_, item, _) in enumerate(span[:calls[-1]] if calls else []):
        if item.get("type") in CALLS:
            ids.add(item.get("call_id"))
        elif item.get("type") in OUTPUTS and item.get("call_id") in ids:
            moved.append(j)
    if not moved:
        return span
    misplaced += [span[j][2] for j in moved if any(item.get("type") not in (*CALLS, *OUTPUTS)
                                                   for _, item, _ in span[j + 1:calls[-1]])]
    out = []
    for j, entry in enumerate(span):
        if j not in moved:
            out.append(entry)
        if j == calls[-1]:
            out += [span[k] for k in moved]
    return out


def _policy(meta: Mapping[str, Any], at: str, source: str, w: str) -> Iterator[tuple[str, dict[str, Any], str]]:
    """The session's instructions as a developer message (the Responses reader's system message): the base
    instructions and, in 0.4x, the user's (AGENTS.md)."""
    base = meta.get("base_instructions")
    if isinstance(base, Mapping):
        base = base.get("text")
        if not isinstance(base, str):
            raise TranscriptFormatError(w, f"'{at}base_instructions.text' is {json_type(base)}, expected a string")
    elif base is not None and not isinstance(base, str):
        raise TranscriptFormatError(w, f"'{at}base_instructions' is {json_type(base)}, expected {{\"text\": ...}}")
    user = meta.get("instructions")
    if user is not None and not isinstance(user, str):
        raise TranscriptFormatError(w, f"'{at}instructions' is {json_type(user)}, expected a string or null")
    text = "\n".join(t for t in (base, user) if t)
    if text:
        yield source, {"type": "message", "role": "developer", "content": text}, w


def _item(item: Mapping[str, Any], at: str, source: str, w: str, chat: Chat,
          failed: set[str]) -> Mapping[str, Any] | None:
    """One ResponseItem as the Responses reader reads it (None: counted here): Codex's own user messages are
    developer ones, a local shell call a function call, a result in Codex's exec form its words (``failed``: the
    exit code was not 0)."""
    kind = item.get("type")
    if kind == "message" and item.get("role") == "user":
        head = text_of(item.get("content"), w, TEXT_PARTS).lstrip().lower()
        if head.startswith(ABORTED):
            chat.ignored["turn_aborted markers"] += 1
            return None
        if head.startswith(CONTEXT):
            return {**item, "role": "developer"}
    elif kind == "local_shell_call":
        return _local_shell(item, at, w)
    elif kind in OUTPUTS and isinstance(item.get("output"), str):
        words, code = exit_code(item["output"], f"{at}output", w)
        if code:
            failed.add(source)
        return {**item, "output": words}
    return item


def _local_shell(item: Mapping[str, Any], at: str, w: str) -> dict[str, Any]:
    """A ``local_shell_call`` as the ``local_shell`` function call Codex runs (ShellToolCallParams)."""
    action = item.get("action")
    if not isinstance(action, Mapping) or action.get("type") != "exec":
        raise TranscriptFormatError(w, f"'{at}action' is {json_type(action)}{_typed(action)}, expected "
                                       "{\"type\": \"exec\", \"command\": [...]}")
    command = action.get("command")
    if not isinstance(command, list) or not all(isinstance(word, str) for word in command):
        raise TranscriptFormatError(w, f"'{at}action.command' is {json_type(command)}, expected the command's words "
                                       "(a list of strings)")
    workdir = action.get("working_directory")
    if workdir is not None and not isinstance(workdir, str):
        raise TranscriptFormatError(w, f"'{at}action.working_directory' is {json_type(workdir)}, expected a string")
    call_id = item.get("call_id") if item.get("call_id") is not None else item.get("id")
    return {"type": "function_call", "call_id": call_id, "name": "local_shell",
            "arguments": {"command": command, **({"workdir": workdir} if workdir is not None else {})}}


def _typed(value: Any) -> str:
    return f" of type {str(value.get('type'))[:40]!r}" if isinstance(value, Mapping) else ""


def exit_code(output: str, field: str, where: str) -> tuple[str, bool]:
    """(the words of a result, whether its command failed): Codex's exec form ``{"output", "metadata":
    {"exit_code", "duration_seconds"}}`` is its ``output``; ``Exit code: N`` and unified exec's ``Process exited
    with code N`` text are kept whole. Any other output is as it is, unflagged; an exit code that is no integer is
    refused, naming ``field``."""
    if output.startswith("{") and '"exit_code"' in output:
        try:
            doc = json.loads(output)
        except (ValueError, RecursionError):  # a tool's own text that only looks like JSON
            doc = None
        if isinstance(doc, Mapping) and set(doc) == {"output", "metadata"} and isinstance(doc["metadata"], Mapping) \
                and "exit_code" in doc["metadata"]:
            code = doc["metadata"]["exit_code"]
            if type(code) is not int:
                raise TranscriptFormatError(where, f"'{field}' is Codex's exec output whose 'metadata.exit_code' is "
                                                   f"{json_type(code)}, expected an integer")
            if not isinstance(doc["output"], str):
                raise TranscriptFormatError(where, f"'{field}' is Codex's exec output whose 'output' is "
                                                   f"{json_type(doc['output'])}, expected a string")
            return doc["output"], code != 0
    match = FREEFORM.match(output) or UNIFIED.match(output)
    return output, bool(match) and int(match[1]) != 0


def session(lines: list[Any], where: str) -> tuple[str | None, str | None]:
    """(the session's id, the id of the session it came from) from its first meta: the session it was forked from
    (``forked_from_id``), else the thread that spawned it, a subagent's (``source: {"subagent": {"thread_spawn":
    {"parent_thread_id"}}}``, which may copy its parent's history too); (None, None) without a meta (a meta that is
    no object is the reader's to refuse)."""
    for i, line in enumerate(lines):
        old = i == 0 and is_old_meta(line)
        if old or (is_line(line) and line["type"] == "session_meta"):
            meta = line if old else line["payload"]
            if not isinstance(meta, Mapping):
                return None, None
            spawn = meta.get("source")
            for key in ("subagent", "thread_spawn"):
                spawn = spawn.get(key) if isinstance(spawn, Mapping) else None
            ids = {"id": meta.get("id"), "forked_from_id": meta.get("forked_from_id"),
                   "source.subagent.thread_spawn.parent_thread_id":
                       spawn.get("parent_thread_id") if isinstance(spawn, Mapping) else None}
            for key, value in ids.items():
                if value is not None and (not isinstance(value, str) or not value):
                    raise TranscriptFormatError(f"{where}:{i + 1}", f"'{'' if old else 'payload.'}{key}' is "
                                                                    f"{json_type(value)}, expected a session's id "
                                                                    "(a string)")
            parent = ids["forked_from_id"] or ids["source.subagent.thread_spawn.parent_thread_id"]
            return ids["id"], parent
    return None, None


def conversation(lines: list[Any], where: str, name: str, id_of, parents: Mapping[str, str] | None = None
                 ) -> Conversation:
    """One rollout file's session (``name``: the file's name, whose UUID names a session without a meta line). Its
    split group is the first session of its line: the session it came from (:func:`session`), and that one's own
    in ``parents`` (session id -> the id of the session it came from, of the other rollouts read with it), so a
    fork of a fork or a subagent's subagent shares its root's split."""
    sid, parent = session(lines, where)
    uuid = _UUID.findall(name)
    sid = sid or (uuid[-1] if uuid else name)
    return Conversation(id_of(sid), lines, where, id_of(root(parent or sid, parents or {})), "codex")


def root(sid: str, parents: Mapping[str, str]) -> str:
    """The first session of ``sid``'s line in ``parents`` (a loop, as no Codex writes, stops where it closes)."""
    seen = {sid}
    while parents.get(sid) is not None and parents[sid] not in seen:
        sid = parents[sid]
        seen.add(sid)
    return sid


CALL_ITEMS = (*CALLS, "local_shell_call")  # the items of a rollout that are tool calls (tool_marks)
