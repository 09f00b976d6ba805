"""Microsoft Agent Framework (agent-framework-core 1.x) sessions: what ``session.to_dict()`` writes.

An ``AgentSession`` is ``{"type": "session", "session_id", "service_session_id", "state": {...}}``; the
conversation is in its state, where each history provider keeps its own: ``state[source_id]["messages"]``
(``InMemoryHistoryProvider``, the agent's default, under ``in_memory``). A ``FileSessionStore`` writes the same
object, one ``<session_id>.json`` a session (beside a ``"version"``); of ``serialization_format="msgpack"`` it and a
``FileHistoryProvider`` write MessagePack (:func:`packed`). Each message is ``Message.to_dict()``:
``{"type": "message", "role", "contents": [...], "author_name"?}``, and each content ``{"type": ...}``: ``text``
(its ``text``), ``function_call`` (``call_id``, ``name``, ``arguments`` an object or the model's JSON text) and
``function_result`` (``call_id``, ``result`` the words the model was given, ``items`` the same as text contents).
A call that raised is a result whose ``exception`` the framework writes as the fixed marker
``FunctionInvocationError`` (the words are ``Error: Function failed.`` unless the agent was given
``include_detailed_errors``): read as failed. A context message, one a provider added to a run (attributed to it,
:func:`_attributed`), which a history provider made with ``store_context_messages=True`` keeps, is no one's turn:
left out, counted: SAM's recall framed as data (SAMContextProvider's; its memories are the store's already) as
"SAM recalls", another provider's note, or the messages another history loaded into the run (an audit trail stores
the agent's in-memory history again from the third run on), as "context messages"; but a history's replay opening
a record, before any turn of its own (:func:`_replayed`), is read: a trail added after the in-memory history held
runs keeps them only there. Results sit in ``tool`` messages, one or more a message (parallel
calls): each becomes a chat tool message. Reasoning, usage, files and the other contents are counted, not read.
The session holds no instructions (the agent's, kept in code): an ``instructions`` (or ``system``) string beside
the session is the policy, ``{**session.to_dict(), "instructions": agent.default_options["instructions"]}`` (an
Agent keeps them there: it has no ``instructions`` attribute), as ADK's ``system``. One code path: the messages
become OpenAI chat messages, read by :mod:`.chat`.
"""

from __future__ import annotations

import base64
import hashlib
from collections import Counter
from collections.abc import Iterator, Mapping, Set
from pathlib import Path
from typing import Any

from sam_model.data.formats import chat
from sam_model.data.formats.base import FAILED, Chat, OwnFieldError, TranscriptFormatError, chat_call, each
from sam_model.data.formats.messagepack import MessagePackError, NotFinite, json_like, loads, map_head
from sam_model.data.formats.recalls import is_frame
from sam_model.io import json_type

DEFAULT_SOURCE = "in_memory"  # InMemoryHistoryProvider.DEFAULT_SOURCE_ID: the history an agent keeps unasked
EXCEPTION = "exception"  # a function_result's field the framework sets (to a marker) when the call raised
READ = ("text", "function_call", "function_result")
ENCODED = "~session-"  # a FileHistoryProvider's (and FileSessionStore's) file stem of a session id it encodes
DIGEST = "sha256-"  # after ENCODED: the id was too long to encode in a file name, its digest names the file
PACKED = ".msgpack"  # the files of a FileSessionStore or FileHistoryProvider of serialization_format="msgpack"
RECORD_HEADER = 4  # bytes of a FileHistoryProvider's MessagePack record's length (big-endian) before it
HEAD_BYTES = 65536  # of a .msgpack file, read to tell a store's (its first keys) from another program's (unpacked)


def is_message(m: Any) -> bool:
    """A ``Message.to_dict()``: type ``message``, a role and a ``contents`` list (a Responses message item has
    ``content``, singular, and no ``contents``)."""
    return (isinstance(m, Mapping) and m.get("type") == "message" and "role" in m
            and isinstance(m.get("contents"), list) and "content" not in m)


def is_session(doc: Any) -> bool:
    """An ``AgentSession.to_dict()`` (or a FileSessionStore's snapshot): type ``session``, a ``session_id`` and a
    ``state`` object."""
    return (isinstance(doc, Mapping) and doc.get("type") == "session" and "session_id" in doc
            and isinstance(doc.get("state"), Mapping))


def sniff(messages: list[Any]) -> bool:
    return any(is_message(m) for m in messages)


def messages_of(session: Mapping[str, Any], where: str) -> list[Any]:
    """The conversation a session's state holds: its history provider's ``messages`` (``in_memory`` where several
    providers keep one, else the first). A session of a service that keeps the history itself
    (``service_session_id``, state without messages) holds none to read: refused, saying so."""
    held = [(k, v["messages"]) for k, v in session["state"].items()
            if isinstance(v, Mapping) and isinstance(v.get("messages"), list)]
    if not held:
        service = session.get("service_session_id")
        raise TranscriptFormatError(f"{where}, state", "holds no history provider's messages (state[SOURCE_ID]["
                                                       "'messages'])" + (
            f": the service keeps this session's history (service_session_id {service!r}); run the agent with an "
            "InMemoryHistoryProvider (or store=False) to keep it in the session" if service else
            f": its providers ({', '.join(map(repr, session['state']))}) keep none in it: a FileHistoryProvider "
            "keeps them in its folder, a <session_id>.jsonl a session: give that file or folder" if session["state"]
            else ": save the session after a run of an agent with a history provider (the default "
                 "InMemoryHistoryProvider)"))
    return dict(held).get(DEFAULT_SOURCE, held[0][1])


def kept_in(session: Any, stems: Set[str]) -> bool:
    """Whether ``session`` (a FileSessionStore's snapshot) holds no messages because a FileHistoryProvider's file
    among ``stems`` (file names without .jsonl) keeps them: an app's folder of both was refused whole, naming the
    snapshot, where the file beside it held the conversation."""
    if not is_session(session) or not isinstance(sid := session["session_id"], str) or any(
            isinstance(v, Mapping) and isinstance(v.get("messages"), list) for v in session["state"].values()):
        return False
    return not stems.isdisjoint(stems_of(sid))


def stems_of(session_id: str) -> set[str]:
    """The file names (without extension) a FileHistoryProvider or FileSessionStore may give ``session_id``'s file:
    the id itself, its encoding, or its digest (:func:`session_of_file`)."""
    return {session_id, ENCODED + base64.b32encode(session_id.encode()).decode().rstrip("=").lower(),
            ENCODED + DIGEST + hashlib.sha256(session_id.encode()).hexdigest()}


def diverges(first: list[Any], second: list[Any]) -> tuple[int, int] | None:
    """The first messages (first's, second's) where two records of one session differ, None where one's messages
    begin the other's (or are all of them) once the messages one writer leaves out are set aside. An app keeping a
    session in a FileSessionStore (its in-memory history) and a FileHistoryProvider (an audit trail) writes each
    message alike to both, one record saved a turn behind the other at most; messages compared as written, keys in
    any order (the two writers order them apart). A store of store_context_messages=True keeps the context messages
    other providers added (attributed to them, :data:`ATTRIBUTION`), one of store_inputs=False no user words: a
    message of such a kind one record holds where the other's next is of another kind is passed over (the folders
    of such apps were refused; two records holding different user words, or different context, still differ). A
    CompactionProvider compacting one store's history annotates its messages (:data:`COMPACTION`), set aside here,
    and adds its summaries, passed over as a store's own."""
    i = j = 0
    while i < len(first) and j < len(second):
        a, b = first[i], second[j]
        if _same(a, b):
            i, j = i + 1, j + 1
        elif _left_out(a) and _kind(a) != _kind(b):
            i += 1
        elif _left_out(b) and _kind(b) != _kind(a):
            j += 1
        else:
            return i, j
    return None


ATTRIBUTION = "_attribution"  # the key of a context message's additional_properties naming the provider that added it


# the keys of additional_properties a CompactionProvider (agent_framework._compaction) writes on the messages of the
# history it compacts: its groups, the messages it excluded, its summaries and what they summarize
COMPACTION = frozenset({"_group", "_excluded", "_exclude_reason", "_summary_of_message_ids", "_summary_of_group_ids",
                        "_summarized_by_summary_id", "_agent_compaction_trigger_consumed", "_skill_unload_selection"})
SUMMARY = ("_summary_of_message_ids", "_summary_of_group_ids")  # a summary's group names the messages it summarizes


def _plain(message: Any) -> Any:
    """``message`` without a CompactionProvider's annotations: as the store that does not compact wrote it."""
    props = message.get("additional_properties") if isinstance(message, Mapping) else None
    if not isinstance(props, Mapping) or COMPACTION.isdisjoint(props):
        return message
    return {**message, "additional_properties": {k: v for k, v in props.items() if k not in COMPACTION}}


def _same(a: Any, b: Any) -> bool:
    """Whether two records' messages are one message: alike once a CompactionProvider's annotations are set aside,
    and the message id it gives a message of none ("msg_N") where the other record's has none."""
    pa, pb = _plain(a), _plain(b)
    if isinstance(pa, Mapping) and isinstance(pb, Mapping) and ("message_id" in pa) != ("message_id" in pb):
        compacted = (pa is not a, pb is not b)  # the message whose annotations were set aside
        pa, pb = ({k: v for k, v in m.items() if not (k == "message_id" and was)}
                  for m, was in zip((pa, pb), compacted))
    return pa == pb


def _kind(message: Any) -> str:
    """A message's kind for :func:`diverges`: "context" (a provider's, attributed), "summary" (a CompactionProvider's),
    else its role."""
    if _attributed(message):
        return "context"
    props = message.get("additional_properties") if isinstance(message, Mapping) else None
    group = props.get("_group") if isinstance(props, Mapping) else None
    if isinstance(group, Mapping) and any(key in group for key in SUMMARY):
        return "summary"
    return str(message.get("role")) if isinstance(message, Mapping) else ""


def _left_out(message: Any) -> bool:
    """Whether one store may keep ``message`` where the other leaves it out: a context message, the user's, or a
    compaction's summary."""
    return _kind(message) in ("context", "user", "summary")


def packed(raw: bytes, where: str) -> Iterator[tuple[Any, str]]:
    """(document or its error, where) of a ``.msgpack`` file, read as its JSON is: a ``FileSessionStore``'s snapshot
    (one map: a session) or a ``FileHistoryProvider``'s records (each a 4-byte big-endian length, then a message),
    told by the first byte (a map's marker; a record's length, under 64 MiB, begins 0x00-0x04). MessagePack was
    read by no reader (their serialization_format="msgpack"). A record that does not decode is an error of its
    own, the next read after it; a file cut short ends in one."""
    if not raw:
        return
    if raw[0] >= 0x80:  # no record's length: one value, the session
        try:
            yield json_like(loads(raw, finite=True)), where
        except NotFinite as exc:
            yield TranscriptFormatError(where, f"a session snapshot holding {exc}"), where
        except MessagePackError as exc:
            yield TranscriptFormatError(where, f"not a MessagePack session snapshot: {exc}; give the file "
                                               "FileSessionStore(serialization_format=\"msgpack\") wrote, whole"), where
        return
    at, n = 0, 0
    while at < len(raw):
        n += 1
        w = f"{where}, record {n}"
        read = f"records 1-{n - 1} were read" if n > 1 else "no record could be read"
        if len(raw) - at < RECORD_HEADER:  # its bytes read as a length said one no byte wrote
            yield TranscriptFormatError(w, f"the file ends inside the record's length at byte {at} ({len(raw) - at} "
                                           f"of its {RECORD_HEADER} bytes): it was cut short there (a write cut "
                                           f"short?); {read}"), w
            return
        size = int.from_bytes(raw[at:at + RECORD_HEADER], "big")
        start, at = at + RECORD_HEADER, at + RECORD_HEADER + size
        if size == 0 or at > len(raw):
            yield TranscriptFormatError(w, f"the record at byte {start - RECORD_HEADER} says {size} bytes and "
                                           f"{max(len(raw) - start, 0)} are left: the file was cut short or damaged "
                                           f"there (a write cut short?); {read}"), w
            return
        try:
            yield json_like(loads(raw[start:at], finite=True)), w
        except NotFinite as exc:
            yield TranscriptFormatError(w, f"a message holding {exc}"), w
        except MessagePackError as exc:
            yield TranscriptFormatError(w, f"not a MessagePack message: {exc}"), w


def unpacked(p: Path) -> str | None:
    """Why a ``.msgpack`` file a folder holds is no Agent Framework store's, so no log to read (None: it is one, or
    may be: read, a damaged one is refused naming the file and byte). Told by its first bytes, read entry by entry
    as far as they decode (messagepack.map_head): a FileSessionStore snapshot's map opens with ``type`` ``session``
    and its ``session_id``, a FileHistoryProvider's first record (after its length) with a message's ``role`` (or
    ``type`` ``message``, ``contents``), so a store's file cut short or damaged further on is still one. Another program's MessagePack (a cache beside the
    sessions) refused the whole folder, read as a session that does not decode; it is passed over, said once."""
    try:
        with open(p, "rb") as fh:
            head = fh.read(HEAD_BYTES)
    except OSError:  # read, it is refused naming the file
        return None
    if not head:
        return "is empty"
    snapshot = head[0] >= 0x80  # no record's length (packed)
    kind, keys = ("session", {"session_id"}) if snapshot else ("message", {"role", "contents"})
    for key, value in map_head(head, 0 if snapshot else RECORD_HEADER):
        if key == "type":
            if value == kind:
                return None
            break
        if key in keys:
            return None
    return ("is MessagePack of no Agent Framework session or history (its first bytes are no map of a session's or "
            "a message's keys: another program's file?)")


def session_of_file(stem: str) -> str:
    """The session id a ``FileHistoryProvider``'s file is named by, its ``stem``: an id of other characters than
    lowercase letters, digits, ``.``, ``_`` and ``-`` (``Mia:Ticket-42``) is written ``~session-`` and its UTF-8 in
    lowercase base32 without padding, read back here: its conversation was named ``_session-jvuw...`` where the
    session's own ``.json`` names it by its id. An id too long for a file name is written as its digest, which
    cannot be read back: the stem names it."""
    code = stem.removeprefix(ENCODED)
    if code == stem or code.startswith(DIGEST):
        return stem
    try:
        return base64.b32decode(code.upper() + "=" * (-len(code) % 8)).decode("utf-8")
    except ValueError:  # not base32 of UTF-8 (binascii.Error, UnicodeDecodeError): a name of the app's own
        return stem


def policy(session: Mapping[str, Any], where: str) -> str:
    """The agent's instructions given beside the session (``instructions`` or ``system``): the session holds none."""
    for key in ("instructions", "system"):
        value = session.get(key)
        if value is not None and not isinstance(value, str):
            raise TranscriptFormatError(f"{where}, {key}", f"is {json_type(value)}, expected the agent's "
                                                           "instructions (a string)")
        if value:
            return value
    return ""


def _attributed(m: Any) -> bool:
    """Whether ``m`` is a context message, one a context provider added to a run (the framework's ``_attribution``
    in its additional properties), which a history of ``store_context_messages=True`` keeps: SAMContextProvider's
    frame, another provider's note, another history's messages loaded into the run. The one test of it, for reading
    and for :func:`diverges`; the same text a user sent (a frame pasted from a trace) is the user's."""
    extra = m.get("additional_properties") if isinstance(m, Mapping) else None
    return isinstance(extra, Mapping) and isinstance(extra.get(ATTRIBUTION), Mapping)


def _replayed(m: Any) -> str | None:
    """The source id of the history whose replay of the session's own turns ``m`` is (a context message a history
    provider loaded into a run: the framework's histories are named ...HistoryProvider, its attribution's
    source_type), None for any other context message (a note, SAM's frame, another session's content, which names
    its origin_session_ids). An audit trail added after the in-memory history opens with such a replay, its only
    copy of the earlier runs (:func:`to_chat`)."""
    extra = m.get("additional_properties") if isinstance(m, Mapping) else None
    said = extra.get(ATTRIBUTION) if isinstance(extra, Mapping) else None
    if not isinstance(said, Mapping) or said.get("origin_session_ids"):
        return None
    kind, source = said.get("source_type"), said.get("source_id")
    return source if isinstance(kind, str) and kind.endswith("HistoryProvider") and isinstance(source, str) else None


def _text(c: Mapping[str, Any], w: str) -> str:
    if not isinstance(c.get("text"), str):
        raise TranscriptFormatError(w, "a text content without a 'text' string")
    return c["text"]


def _result(c: Mapping[str, Any], w: str) -> dict[str, Any]:
    """A ``function_result`` as a chat tool message: its ``result`` words (else its text ``items``), failed when the
    framework marked an ``exception``."""
    if c.get("call_id") is None:
        raise TranscriptFormatError(w, "a function_result without a 'call_id' (the call it answers)")
    words = c.get("result")
    if words is None and isinstance(c.get("items"), list):
        words = "\n".join(i["text"] for i in c["items"] if isinstance(i, Mapping) and isinstance(i.get("text"), str))
    if words is not None and not isinstance(words, str):
        raise TranscriptFormatError(w, f"'result' is {json_type(words)}, expected the words the model was given")
    out: dict[str, Any] = {"role": "tool", "tool_call_id": str(c["call_id"]), "content": words or ""}
    if c.get(EXCEPTION) is not None:
        out[FAILED] = True
    return out


def to_chat(messages: list[Any], where: str) -> Chat:
    out: list[dict[str, Any]] = []
    ignored: Counter[str] = Counter()
    replay: str | None = None  # the history whose replay opens the record (read), "" once a turn of its own follows
    for _, m, w in each(messages, where):
        contents = m.get("contents")
        if not isinstance(contents, list):
            said = (f"'contents' is {json_type(contents)}, expected a list of contents {{\"type\": \"text\" | "
                    "\"function_call\" | \"function_result\", ...}")
            if "contents" in m:  # this format's field: a text is written [{"type": "text", "text": ...}]
                raise OwnFieldError(w, said + "; write each message as Message.to_dict() does, a text as "
                                              "[{\"type\": \"text\", \"text\": \"...\"}]")
            raise TranscriptFormatError(w, said)
        role = m.get("role")
        if not isinstance(role, str):
            raise TranscriptFormatError(w, f"'role' is {json_type(role)}, expected user, assistant, system or tool")
        texts, calls, results = [], [], []
        for j, c in enumerate(contents):
            cw = f"{w}, content {j}"
            if not isinstance(c, Mapping) or not isinstance(c.get("type"), str):
                raise TranscriptFormatError(cw, "a content must be an object with a 'type' (text, function_call, "
                                                "function_result, ...)")
            if c["type"] == "text":
                texts.append(_text(c, cw))
            elif c["type"] == "function_call":
                calls.append(chat_call(c.get("call_id"), c.get("name"), c.get("arguments"), cw))
            elif c["type"] == "function_result":
                results.append(_result(c, cw))
            else:
                ignored[f"{c['type']} contents"] += 1
        source = _replayed(m)
        if source is not None and (replay == source or replay is None and not out):
            replay = source  # a history's replay before the record's first turn: the runs before it, held only here
        elif _attributed(m):  # a context message a history stored: no one's turn, passed over, counted
            frame = role == "user" and texts and not calls and all(map(is_frame, texts))  # SAMContextProvider's
            ignored["SAM recalls" if frame else "context messages"] += 1
            continue
        elif replay:
            replay = ""  # the record's own turns begin: a later replay repeats them
        if texts or calls:  # a message of only reasoning or usage says nothing
            message: dict[str, Any] = {"role": "assistant" if role == "tool" else role,
                                       "content": "\n".join(texts) if texts else None}
            if calls:
                message["tool_calls"] = calls
            out.append(message)
        out.extend(results)
    read = chat.to_chat(out, where)
    read.ignored.update(ignored)
    return read
