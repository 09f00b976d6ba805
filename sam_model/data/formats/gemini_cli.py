"""Gemini CLI session files: ``~/.gemini/tmp/<project hash>/chats/session-<time>-<id>.json`` or ``.jsonl``.

Gemini CLI (google-gemini/gemini-cli) records every session itself, interactive or headless (``-p``), through its
``ChatRecordingService`` (packages/core/src/services/chatRecordingService.ts; the types in chatRecordingTypes.ts
since the JSONL layout). Two layouts, both read:

- **``.json``** (0.6 to early 2026): one ``ConversationRecord`` document, ``{"sessionId", "projectHash",
  "startTime", "lastUpdated", "messages": [...], "summary"?, "directories"?, "kind"?}``, rewritten whole at each
  change with ``fs.writeFileSync`` (not atomic: a copy taken while it writes can be cut or empty).
- **``.jsonl``** (since gemini-cli PR #23749, "migrate chat recording to JSONL streaming", March 2026): appended
  with ``fs.appendFileSync``, one record a line: the session's metadata first (``{"sessionId", "projectHash",
  "startTime", "lastUpdated", "kind"?, "directories"?}``), then each message record as it is created **and again
  each time it changes** (a ``gemini`` message when its tool calls finish, its tokens arrive: the same ``id``, the
  last written wins at the place of the first, as ``loadConversationRecord`` reads it), ``{"$set": {...}}``
  metadata updates and ``{"$rewindTo": id}``. A subagent's session is ``chats/<parent session id>/<id>.jsonl``
  (``kind: "subagent"``). A ``.json`` session resumed by a JSONL version is copied whole into ``<name>.jsonl``
  beside it, so in a folder a ``.json`` with its ``.jsonl`` beside it is left out (the same session, read once).

A message record is ``{"id", "timestamp", "type": "user" | "gemini" | "info" | "error" | "warning", "content":
PartListUnion, "displayContent"?}`` (``content``: a string, a part or a list of them; early versions wrote a
string); a ``gemini`` message adds ``toolCalls`` (``ToolCallRecord``: ``{"id", "name", "args", "result":
PartListUnion | null, "status", "timestamp", "displayName"?, "description"?, "resultDisplay"?}``), ``thoughts``
(``{"subject", "description", "timestamp"}``), ``tokens`` and ``model``. Read as the model saw the session:

- **user** messages are the user's turns: their ``content``, what the model was sent (an ``@file``'s text
  included), not ``displayContent``, what the terminal showed. Tool results never come as user messages here (the
  CLI records a function response only in its call's record).
- **gemini** messages are the agent's turns: the ``content`` text its words, then each of its ``toolCalls`` a call
  (in order: parallel calls), ``args`` the arguments, answered by a tool message of its ``result``, the
  ``functionResponse`` parts the model was given (``{"output": x}`` reads as x, ``{"error": e}`` as ``Error: e``,
  as the gemini reader reads a response; other parts' text joined, media counted). ``resultDisplay`` (the
  terminal's rendering) is not read. ``status`` ``success`` reads as it is; ``error`` flags the call as failed (the
  failure flag, README "Failed tool calls"); ``cancelled`` (the user declined it at the approval prompt or stopped
  it: the model was told ``[Operation Cancelled]`` as an error) is flagged too, as codex-exec flags a declined
  command; ``validating``, ``scheduled``, ``awaiting_approval`` or ``executing`` (a session copied while a call ran)
  leave the call without a result, counted. ``run_shell_command``'s ``command`` is a command line, read by its
  words (the shell command lines rule, :mod:`sam_model.data.shellwords`).
- **thoughts** are counted, not read: reasoning summaries, not words said to the user (as the claude-code reader
  counts thinking blocks and the gemini reader thought parts); so are ``tokens``.
- **info**, **error** and **warning** messages are Gemini CLI's own notices in the terminal (a cancelled request, a
  compression, an API error, a loop detected): never sent to the model, so no turn; counted.
- **Counted, not read**: the metadata line and ``$set`` records (a title, directories, and ``$set.messages``,
  the history rewritten after masking tool outputs or compressing: a restatement of the turns the file already
  holds, as the claude-code reader counts a compaction's summary).
- **Rewinds** (``/rewind``, Esc Esc: packages/cli/src/ui/commands/rewindCommand.tsx) are applied as the CLI's
  loader (``loadConversationRecord``) applies them (:func:`replay`): ``{"$rewindTo": id}`` removes the message of
  that id (a user prompt) and every message first written after it, as ``ChatRecordingService.rewindTo`` cut its
  history and the model's (``setHistory``); the messages written after the record are the conversation's new
  branch. The removed messages stay in the file; read where they were written, their calls and results were turns
  the conversation no longer had and later calls' values traced to them. They are counted (the ``$rewindTo``
  records too) and named by sam-data transcripts' report and sam-train's conversion by the first one's
  ``FILE:LINE`` (``Conversation.abandoned``, as the claude-code reader names a Claude Code rewind's branches). A
  rewind of an id no message before it has removes every message before it, as the loader does (the CLI writes
  the record only for a message of its history, so the file lacks some of it: which turns the conversation kept is
  unknown, and none is invented); a session whose every message was rewound has no conversation. A live add
  (ScopedMemory.add) of a session's lines refuses a rewind of a message not among its own lines in one line: an
  earlier add stored the turns it removes, and an add cannot take them back.
- **No policy**: the session stores no system prompt.
- **The working directory** is the project root, which the session stores only as its hash (``projectHash``): the
  first call naming an absolute path under it (a ``read_file``'s ``absolute_path`` or ``file_path``, a
  ``list_directory``'s ``dir_path``, a ``run_shell_command``'s ``dir_path`` or its command's words) tells it, the
  ancestor of that path whose SHA-256 is the hash (:class:`Root`); a subagent's ``directories`` (its metadata) tell
  it from its start. It is told on that call's message (:data:`~sam_model.data.formats.base.CWD`), marked as found
  by its own calls (:data:`~sam_model.data.formats.base.CWD_BY_CALLS`), so toolstate traces an absolute path under
  it by its relative part in that message's calls (the session's first absolute path is often the file the user
  named) and the calls after it; a search by call made before the message was added finds the root from the call
  in hand (:func:`calls_root`, by the hash its scope keeps). The calls before it are judged without a directory
  (their paths whole), and so is every call of a session whose calls name no absolute path under its root. A live
  add (ScopedMemory.add) of later lines is read with the metadata line an earlier add of its scope gave
  (sam_model.memory.live keeps it).

The episode is the ``sessionId`` (a resumed session goes on in the same file); the split group a subagent's parent
session (the folder its file is in), else the session. Not read: ``/chat save`` checkpoints
(``~/.gemini/tmp/<hash>/checkpoint-<tag>.json``, Logger.saveCheckpoint in packages/core/src/core/logger.ts: a
copy of the session's history in Gemini API contents, ``{"history": [...]}`` or a bare list, whose turns the
session file already holds with each call's status), nor ``gemini -p --output-format json`` (one answer and
counts, no calls) or ``stream-json`` (packages/core/src/output/types.ts: ``init``, ``message``, ``tool_use``,
``tool_result``, ``result`` events; a result's ``output`` is the terminal's ``resultDisplay``, not what the model
was given, and the same run records its session file, the better record): given, either is refused in one line
naming the session file to give instead.

A record that cannot be read (invalid JSON, not a record, a bad field) refuses its file whole, named ``FILE:LINE``
(``FILE`` for a ``.json``) with the field: a session read without one could lose a call's result unsaid. In a
``.jsonl``, the last line the file ends inside (Gemini CLI still appending when it was copied) is the exception:
the lines before it are read and it is reported, as the claude-code reader does. A ``.json`` cut mid-write is
refused in one line saying so (nothing after the cut can be told from it).
"""

from __future__ import annotations

import hashlib
import ntpath
import posixpath
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from sam_model.data.formats import gemini
from sam_model.data.formats.base import (
    CWD_BY_CALLS,
    FAILED,
    Chat,
    Conversation,
    CutLine,
    TranscriptFormatError,
    chat_call,
)
from sam_model.data.formats.numbered import mark
from sam_model.data.shellwords import command_words
from sam_model.io import json_shape, json_type

TYPES = ("user", "gemini", "info", "error", "warning")
TURNS = ("user", "gemini")
NOTICES = ("info", "error", "warning")
FLAGS = {"success": {}, "error": {FAILED: True}, "cancelled": {FAILED: True}}  # a finished call's status -> flag
PENDING = ("validating", "scheduled", "awaiting_approval", "executing")  # a call that has no result yet
REWOUND = "messages of abandoned branches (a rewind: Gemini CLI keeps them)"
SESSION_FILE = re.compile(r"session-.+\.jsonl?")  # SESSION_FILE_PREFIX + time + id, .json or (now) .jsonl
STREAM_TYPES = ("init", "message", "tool_use", "tool_result", "error", "result")
STREAM_JSON = ("the output of gemini -p --output-format stream-json, which records the terminal's rendering of each "
               "tool result (resultDisplay), not what the model was given: give the run's session file instead, "
               "which Gemini CLI writes for headless runs too (~/.gemini/tmp/<project hash>/chats/session-*.jsonl; "
               "the gemini-cli reader)")


def is_header(doc: Any) -> bool:
    """A session's metadata: the first line of a ``.jsonl`` or a whole ``.json`` record (``sessionId`` and
    ``projectHash``; a Claude Code entry has a sessionId but no projectHash)."""
    return isinstance(doc, Mapping) and isinstance(doc.get("sessionId"), str) and isinstance(doc.get("projectHash"), str)


def is_message(m: Any) -> bool:
    """A message record: a ``type`` of :data:`TYPES` beside ``content``, no ``role`` (a chat message) and no
    ``message`` (a Claude Code entry's)."""
    return (isinstance(m, Mapping) and m.get("type") in TYPES and "content" in m and "role" not in m
            and "message" not in m)


def is_record(doc: Any) -> bool:
    """A line of a session's ``.jsonl``: its metadata, a message, or a ``$set`` / ``$rewindTo`` record."""
    return is_header(doc) or is_message(doc) or (isinstance(doc, Mapping) and bool(doc) and set(doc) <= {"$set"}
                                                 and isinstance(doc["$set"], Mapping)) or is_rewind(doc)


def is_rewind(doc: Any) -> bool:
    """A rewind record, ``{"$rewindTo": message id}`` (ChatRecordingService.rewindTo)."""
    return isinstance(doc, Mapping) and set(doc) == {"$rewindTo"} and isinstance(doc["$rewindTo"], str)


def is_stream_json(doc: Any) -> bool:
    """The first line of ``gemini -p --output-format stream-json``: ``{"type": "init", "session_id", "model"}``."""
    return isinstance(doc, Mapping) and doc.get("type") == "init" and isinstance(doc.get("session_id"), str) \
        and "model" in doc and "subtype" not in doc


def is_state(q: Path) -> bool:
    """A file Gemini CLI keeps beside its sessions that is no run, though a ``.json`` of a list: the project's
    ``logs.json`` (Logger: the prompts typed, a list of ``{"sessionId", "messageId", "type", "message"}``) beside
    its ``chats`` folder, and ``/chat save`` checkpoints (``checkpoint-<tag>.json``)."""
    name = q.name.removesuffix(".gz")
    return (name == "logs.json" and (q.parent / "chats").is_dir()) or (name.startswith("checkpoint-")
                                                                      and name.endswith(".json"))


def not_a_session(path: Path, doc: Any) -> str | None:
    """Why a ``.json`` named as a ``/chat save`` checkpoint (``checkpoint-<tag>.json``: Gemini API contents, a bare
    list or ``{"history": [...]}``) is not read, and what to give instead (None: it is no checkpoint)."""
    name = path.name.removesuffix(".gz")
    history = doc.get("history") if isinstance(doc, Mapping) and set(doc) <= {"history", "authType"} else doc
    if not (name.startswith("checkpoint-") and name.endswith(".json") and isinstance(history, list) and all(
            isinstance(c, Mapping) and "parts" in c for c in history)):
        return None
    return ("a Gemini CLI /chat save checkpoint (Gemini API contents, with no call's status): its turns are in the "
            "session's own file, which the gemini-cli reader reads (~/.gemini/tmp/<project hash>/chats/session-*."
            "jsonl); or give its contents as a .jsonl line {\"id\": ..., \"contents\": [...]} (the gemini reader)")


def sniff(messages: list[Any]) -> bool:
    """Message records of type ``gemini`` (no other format's messages are typed so), a session's metadata, or lines
    that are all session records with a message among them: a user record alone, as a sidecar adds the prompt it
    just read, whose content is parts (``[{"text": ...}]``) with no ``role`` (Bedrock's sniff took that block of one
    member for Converse's, and its reader refused the record for having no role)."""
    return any(is_message(m) and m["type"] == "gemini" or is_header(m) for m in messages) or (
        any(is_message(m) for m in messages) and all(is_record(m) for m in messages))


def holds_tools(m: Any) -> bool:
    """A ``gemini`` message record with tool calls (a tool mark)."""
    return is_message(m) and m["type"] == "gemini" and isinstance(m.get("toolCalls"), list) and bool(m["toolCalls"])


class Replay(NamedTuple):
    read: list[int]  # the places of the records read, in order (a message's last version at its first's place)
    gone: list[int]  # the first places of the messages a rewind removed
    unknown: list[int]  # the places of the rewinds of an id no message before them has


def replay(records: list[Any]) -> Replay:
    """A session's records as Gemini CLI's ``loadConversationRecord`` loads them: the places of the records read,
    in order: each message's last version at the place of its first, every other record where it is, for
    :func:`to_chat` to count or refuse; those of the messages a rewind removed; those of the rewinds of an unknown id.

    A message written again (updated) keeps its place. ``{"$rewindTo": id}`` removes the message of that id and
    every message first written after it (``rewindTo`` keeps the history before it: the rewound prompt goes back to
    the input to be edited and sent again); the messages written after the record are the new branch, one written
    again under a removed id placed anew at its end (the loader's Map). A rewind of an id no message before it has
    removes every message before it, as the loader does: Gemini CLI writes the record only for a message of its
    history, so the file lacks some of that history and which of its messages the conversation kept is unknown
    (reading none of them invents no turn; a resume of the file shows none of them either)."""
    order: list[Any] = []  # a record's place (not a message) or a message's key, in reading order
    first: dict[Any, int] = {}  # a message's key (its id; an id-less one's, its place) -> its first place
    last: dict[Any, int] = {}  # ... -> its last place (the version read)
    gone: list[int] = []
    unknown: list[int] = []
    for i, r in enumerate(records):
        if is_message(r):
            key = ("id", r["id"]) if isinstance(r.get("id"), str) else ("at", i)
            if key not in last:
                order.append(key)
                first[key] = i
            last[key] = i
            continue
        if is_rewind(r):
            keys = [k for k in order if not isinstance(k, int)]
            target = ("id", r["$rewindTo"])
            if target not in last:
                unknown.append(i)
            for k in keys[keys.index(target) if target in last else 0:]:
                gone.append(first.pop(k))
                del last[k]
            order = [k for k in order if isinstance(k, int) or k in last]
        order.append(i)
    return Replay([k if isinstance(k, int) else last[k] for k in order], sorted(gone), unknown)


def rewind_elsewhere(records: list[Any], name: str) -> str | None:
    """Why a live add's session lines (ScopedMemory.add) are refused: a rewind of a message not among them, whose
    removed turns an earlier add stored (None: none such)."""
    unknown = replay(records).unknown
    if not unknown:
        return None
    return (f"{name}[{unknown[0]}]: a Gemini CLI $rewindTo of message {records[unknown[0]]['$rewindTo'][:60]!r}, "
            "which is not among this add's lines: an earlier add stored the turns it removes, and an add cannot take "
            "them back (later calls would be traced to them); delete the run's memories (delete_all) and add the "
            "session's lines again from its start in one add, or convert its session file (sam-data transcripts)")


def to_chat(records: list[Any], where: str) -> Chat:
    """One session's records (a ``.jsonl``'s lines, or a ``.json``'s record followed by its ``messages``, as
    :func:`conversation` gives them) as chat messages."""
    chat = Chat()
    read, gone, _ = replay(records)
    if gone:
        chat.ignored[REWOUND] += len(gone)
    whole = bool(records) and is_header(records[0]) and isinstance(records[0].get("messages"), list)
    root = Root()
    for i, r in enumerate((records[j] for j in read), -int(whole)):  # a .json's messages numbered from 0
        w = f"{where}, message {i}" + (f" (id {r['id']})" if isinstance(r, Mapping) and isinstance(r.get("id"), str)
                                       else "")
        _record(chat, r, w, f"message {i}", root)
    return mark(chat)


class Root:
    """The session's project root, recovered from its ``projectHash`` (gemini-cli's ``getProjectHash``,
    packages/core/src/utils/paths.ts: the SHA-256 of ``Config.getProjectRoot()``, the directory it was started in as
    ``path.resolve`` writes it, in hex; in early releases its first 16 digits). The session stores no directory, but an
    absolute path a call names (``file_path``, ``absolute_path``, ``dir_path``, a shell command's words) is the root's
    or below it: the ancestor whose hash is the project's is the root, exactly (:meth:`find`). Told as the
    working directory (``Chat.cwd``), an absolute path under it is traced by its relative part (toolstate), as Claude
    Code's and Codex's are."""

    def __init__(self, project_hash: str = "") -> None:
        self.hash = project_hash.lower()  # the header's projectHash; "" before the header (a live add without it)
        self.tried: set[str] = set()

    def find(self, paths: list[str]) -> str:
        """The project root among the ancestors of ``paths`` (and the paths themselves), "" where none hashes to it."""
        if len(self.hash) not in (16, 64):
            return ""
        for path in paths:
            for d in _ancestors(path):
                if d not in self.tried:
                    self.tried.add(d)
                    if hashlib.sha256(d.encode("utf-8", "surrogatepass")).hexdigest()[:len(self.hash)] == self.hash:
                        return d
        return ""


def calls_root(meta: Mapping[str, Any], arguments: list[Any]) -> str:
    """The project root that calls about to be made reveal (their arguments, as :func:`to_chat` finds it on their
    message), by the session's metadata line ``meta``'s projectHash; "" where none does. A search by call
    (ScopedMemory) judges them in it, as the importer judges their message's calls."""
    return Root(meta["projectHash"]).find(_paths(arguments)) if is_header(meta) else ""


_DRIVE = re.compile(r"[A-Za-z]:[\\/]")  # a Windows path's start


def _ancestors(path: str) -> list[str]:
    """An absolute path and its folders, as Node's ``path.resolve`` would write each as a working directory (no
    trailing separator, ``..`` and ``.`` resolved; on Windows backslashes, the drive letter in either case); the
    filesystem root left out (no project's). [] for anything else."""
    if "\n" in path or len(path) > 4096:
        return []
    if _DRIVE.match(path):
        d = ntpath.normpath(path)
        out = []
        while len(d) > 3:
            out += [d[0].upper() + d[1:], d[0].lower() + d[1:]]
            d = ntpath.dirname(d)
        return out
    if not path.startswith("/"):
        return []
    d = posixpath.normpath(path)
    out = []
    while d not in ("/", "//"):
        out.append(d)
        d = posixpath.dirname(d)
    return out


def _paths(value: Any, key: str = "") -> list[str]:
    """The strings of a call's arguments that may be absolute paths: every string, and a ``command``'s words."""
    if isinstance(value, str):
        return [value, *((command_words(value) or []) if key == "command" else [])]
    if isinstance(value, Mapping):
        return [p for k, v in value.items() for p in _paths(v, str(k))]
    if isinstance(value, list):
        return [p for v in value for p in _paths(v, key)]
    return []


def _record(chat: Chat, r: Any, w: str, source: str, root: Root) -> None:
    if not isinstance(r, Mapping):
        raise TranscriptFormatError(w, f"a Gemini CLI message record must be an object, got {json_type(r)}")
    if is_header(r):
        chat.ignored["session metadata"] += 1
        root.hash = r["projectHash"].lower()
        dirs = r.get("directories")  # a subagent's workspace directories, the root among them
        if not chat.cwd and isinstance(dirs, list):
            chat.cwd = root.find([d for d in dirs if isinstance(d, str)])
        return
    if "$set" in r or "$rewindTo" in r:
        if set(r) == {"$rewindTo"} and not isinstance(r["$rewindTo"], str):
            raise TranscriptFormatError(w, f"'$rewindTo' is {json_type(r['$rewindTo'])}, expected the id of the "
                                           "message rewound to (a string)")
        if not is_record(r):
            raise TranscriptFormatError(w, "a Gemini CLI update record is {\"$set\": {...}} or {\"$rewindTo\": "
                                           f"message id}} alone, got the keys {', '.join(sorted(map(str, r)))[:80]}")
        chat.ignored["$set records" if "$set" in r else "$rewindTo records"] += 1
        return
    kind = r.get("type")
    if kind not in TYPES:
        raise TranscriptFormatError(w, f"'type' is {_show(kind)}, expected one of {', '.join(TYPES)} (a Gemini CLI "
                                       "message record {\"id\", \"timestamp\", \"type\", \"content\"})")
    if kind in NOTICES:
        chat.ignored[f"{kind} messages (Gemini CLI's notices, not sent to the model)"] += 1
        return
    if "role" in r or "message" in r:
        raise TranscriptFormatError(w, f"a {kind} message record with a '{'role' if 'role' in r else 'message'}': not "
                                       "Gemini CLI's {\"id\", \"type\", \"content\"}; give the format it is (sam-data "
                                       "formats)")
    texts = _texts(r.get("content"), f"{w}, content", chat)
    if kind == "user":
        if texts:
            chat.add({"role": "user", "content": "\n".join(texts)}, source)
        return
    thoughts = r.get("thoughts")
    if not isinstance(thoughts, (list, type(None))):
        raise TranscriptFormatError(w, f"'thoughts' is {json_type(thoughts)}, expected a list")
    if thoughts:
        chat.ignored["thoughts"] += len(thoughts)
    calls = r.get("toolCalls")
    if not isinstance(calls, (list, type(None))):
        raise TranscriptFormatError(w, f"'toolCalls' is {json_type(calls)}, expected a list of tool call records")
    read = [_call(c, f"{w}, toolCalls {k}", k, r.get("id")) for k, c in enumerate(calls or [])]
    found = ""
    if read and not chat.cwd:  # told on this message, its own calls judged in it too (CWD_BY_CALLS: toolstate)
        chat.cwd = found = root.find(_paths([c.get("args") for c in calls or []]))
    text = "".join(texts)
    if text or read:
        chat.add({"role": "assistant", "content": text or None,
                  **({"tool_calls": [call for call, _ in read]} if read else {}),
                  **({CWD_BY_CALLS: True} if found else {})}, source)
    for call, result in read:
        if result is None:
            chat.ignored["tool calls without a result (still running when the file was written)"] += 1
        else:
            chat.add({"role": "tool", "tool_call_id": call["id"], **result}, source)


def _call(c: Any, at: str, k: int, message_id: Any) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """A ToolCallRecord: the chat call, and its tool message's content and flag (None: no result yet)."""
    if not isinstance(c, Mapping):
        raise TranscriptFormatError(at, f"a tool call record must be an object {{\"id\", \"name\", \"args\", "
                                        f"\"result\", \"status\"}}, got {json_type(c)}")
    cid = c.get("id")
    if cid is not None and (not isinstance(cid, str) or not cid):
        raise TranscriptFormatError(at, f"'id' is {_show(cid)}, expected the call's id (a string)")
    args = c.get("args")
    if not isinstance(args, (Mapping, type(None))):
        raise TranscriptFormatError(at, f"'args' is {json_type(args)}, expected an object of the call's arguments")
    call = chat_call(cid or f"{message_id}-{k}", c.get("name"), args, at)
    status = c.get("status")
    if status in PENDING:
        return call, None
    if status is not None and (not isinstance(status, str) or status not in FLAGS):  # a list or object: unhashable
        raise TranscriptFormatError(at, f"'status' is {_show(status)}, expected success, error or cancelled (or "
                                        f"{', '.join(PENDING)}: no result yet)")
    return call, {"content": _result(c.get("result"), f"{at}, result"), **FLAGS.get(status, {})}


def _result(value: Any, at: str) -> str:
    """A call's ``result`` (PartListUnion) as the text the model was given: a functionResponse's response as the
    gemini reader reads it, text parts as they are, joined by newlines; media counted nowhere (no event)."""
    if value is None:
        return ""
    parts = value if isinstance(value, list) else [value]
    out = []
    for j, p in enumerate(parts):
        if isinstance(p, str):
            out.append(p)
            continue
        kind, v = gemini.part(p, f"{at}, part {j}")
        if kind == "functionResponse":
            out.append(gemini.response_text(v.get("response")))
        elif kind == "text":
            out.append(v)
    return "\n".join(t for t in out if t)


def _texts(content: Any, at: str, chat: Chat) -> list[str]:
    """The text of a message's ``content`` (PartListUnion: a string, a part or a list of them); thoughts, media and
    other parts counted."""
    if content is None:
        return []
    if isinstance(content, str):
        return [content] if content else []
    if not isinstance(content, (list, Mapping)):
        raise TranscriptFormatError(at, f"is {json_type(content)}, expected a string, a part {{\"text\": ...}} or a "
                                        "list of them")
    texts = []
    for j, p in enumerate(content if isinstance(content, list) else [content]):
        kind, v = ("text", p) if isinstance(p, str) else gemini.part(p, f"{at}, part {j}")
        if kind == "text":
            texts += [v] if v else []
        else:
            chat.ignored[kind] += 1
    return texts


def _show(value: Any) -> str:
    return repr(value)[:40] if isinstance(value, str) else json_type(value)


def conversation(docs: list[tuple[Any, str]], path: Path, id_of: Any,
                 alone: bool = True) -> Conversation | TranscriptFormatError | None:
    """The session of one file, from its ``(document or its error, where)`` pairs (files.documents): a ``.json``'s
    one record, or a ``.jsonl``'s lines (a cut last line left out and named, ``cut``); a bad line is the file's
    error. A session with no user or gemini message yet (the CLI writes a ``.jsonl``'s metadata when it starts) is
    refused when its file was given ``alone``, and no run (None) in a folder."""
    cut = docs[-1][1] if len(docs) > 1 and isinstance(docs[-1][0], CutLine) else ""
    docs = docs[:-1] if cut else docs
    bad = next((doc for doc, _ in docs if isinstance(doc, TranscriptFormatError)), None)
    if bad is not None:
        if path.name.endswith((".json", ".json.gz")) and "invalid JSON" in str(bad):
            return TranscriptFormatError(bad.where, *bad.parts, "; Gemini CLI rewrites a session's .json whole at "
                                         "each message (not atomically), so a copy taken while it wrote is cut: copy "
                                         "it again once the session is idle")
        return bad
    if not docs:
        return TranscriptFormatError(str(path), "an empty Gemini CLI session file: no session to read (a .json is "
                                                "written once its session has a message)")
    head, where = docs[0]
    if not is_header(head):
        return TranscriptFormatError(where, "not a Gemini CLI session: expected its metadata {\"sessionId\", "
                                            f"\"projectHash\", ...}} first, got {_what(head)}")
    whole = path.name.removesuffix(".gz").endswith(".json")  # one ConversationRecord, not a .jsonl's lines
    if whole and not isinstance(head.get("messages"), list):
        return TranscriptFormatError(where, f"'messages' is {json_type(head.get('messages'))}, expected the session's "
                                            "list of message records")
    # a .json's record (its projectHash) before its messages, as a .jsonl's metadata line is
    records = [head, *head["messages"]] if whole else [doc for doc, _ in docs]
    for doc, at in docs[1:]:  # a .jsonl's lines: each a record (named by its line, not its place among messages)
        if not is_record(doc):
            return TranscriptFormatError(at, "not a Gemini CLI session record: expected a message {\"id\", "
                                             "\"timestamp\", \"type\", \"content\"}, or {\"$set\": {...}} or "
                                             f"{{\"$rewindTo\": id}}; got {_what(doc)}")
    read, gone, _ = replay(records)
    if not any(is_message(records[i]) and records[i]["type"] in TURNS for i in read):  # nothing said (or kept) yet
        kinds = ", ".join(sorted({str(r.get("type")) for r in records if is_message(r)})) or "no message"
        why = (f"whose every message was rewound ({len(gone)} left out by its $rewindTo records)" if gone else
               f"without user or gemini messages ({kinds})")
        return None if not alone else TranscriptFormatError(str(path), f"a Gemini CLI session {why}: no "
                                                                       "conversation to read")
    at = [str(path)] + [f"{path}, message {i}" for i in range(len(records) - 1)] if whole else [w for _, w in docs]
    kind = head.get("kind")
    parent = path.absolute().parent
    group = parent.name if kind == "subagent" and parent.name != "chats" else head["sessionId"]
    return Conversation(id_of(head["sessionId"]), records, str(path), group, "gemini-cli", cut=cut,
                        abandoned=tuple(at[i] for i in gone))


def conversations(paths: list[Path], read: Any, id_of: Any) -> Iterator[Conversation | TranscriptFormatError]:
    """The sessions of a folder's session files (one each)."""
    for q in paths:
        if (found := conversation(list(read(q)), q, id_of, alone=False)) is not None:
            yield found


def _what(doc: Any) -> str:
    if isinstance(doc, Mapping) and set(doc) == {"$rewindTo"}:
        return f"a '$rewindTo' of {json_type(doc['$rewindTo'])}, not a message id"
    return json_shape(doc)
