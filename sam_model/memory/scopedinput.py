"""What an add to a ScopedMemory is given, read and checked before anything is stored: chat messages in any format
sam_model.data.formats reads (as_chat), which of them hold no text (NoTextError, refused with the batch) or only
images (skipped and said: unstored, read_add), the length limit and the cut of a longer session line (fit), and the
number of argument values a message's tool calls may hold (MAX_CALL_ARGUMENTS).

Apart from ScopedMemory because one rule serves three callers, each naming its own field: ScopedMemory.add,
sam-serve's HTTP add and MCP's remember (which check an add before logging it, then hand ScopedMemory.add what
they read). README names ``sam_model.memory.scoped.unstored``, which resolves too (ScopedMemory imports it).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from sam_model.data.argumentleaves import call_leaves
from sam_model.data.chatmessages import ToolCall, content_text, parse_tool_calls
from sam_model.data.eventtexts import cut_text
from sam_model.data.formats import adk, detect, is_log_message, to_chat
from sam_model.data.formats.files import MAX_DEPTH
from sam_model.io import SAMFileError
from sam_model.limits import MAX_TEXT_CHARS, check_text, too_deep
from sam_model.memory import live

MAX_CALL_ARGUMENTS = 256  # argument values (leaves; a shell command line's words) of one message's tool calls


def _check_call_size(message: Any, where: str) -> None:
    """Refuse a message whose tool calls hold more than MAX_CALL_ARGUMENTS argument values: each is traced through
    the whole conversation (one call of 2,000 values against 200 messages took 4 s of a shared server's lock). The
    values are those traced (argumentleaves.call_leaves): a shell command line counts its words, a patch its paths."""
    if not isinstance(message, Mapping) or message.get("role") != "assistant" or not message.get("tool_calls"):
        return
    _check_calls_size(parse_tool_calls(message, where), where, "store the call's bulk as a tool result instead")


def _check_calls_size(calls: Sequence[ToolCall], where: str, advice: str) -> None:
    n = sum(len(call_leaves(c)) for c in calls)
    if n > MAX_CALL_ARGUMENTS:
        raise ValueError(f"{where}: its tool calls hold {n} argument values, more than {MAX_CALL_ARGUMENTS}; {advice}")


def _check_numbers(message: Mapping[str, Any], where: str) -> None:
    """Refuse a tool call whose arguments (an object) hold a number no JSON holds (NaN, infinity: 1e400 in a body):
    the call's state takes its arguments, and the store refused the add as "add(...):0: 'state.constraints.x' must
    be a finite number", naming a field no caller sends. Named by the message, the call and the argument."""
    calls = message.get("tool_calls")
    for k, call in enumerate(calls if isinstance(calls, list) else ()):
        function = call.get("function") if isinstance(call, Mapping) else None
        args = function.get("arguments") if isinstance(function, Mapping) else None
        stack: list[tuple[Any, str]] = [(args, "")] if isinstance(args, (Mapping, list)) else []
        while stack:
            value, path = stack.pop()
            if isinstance(value, Mapping):
                stack += [(v, f"{path}.{key}" if path else str(key)) for key, v in reversed(value.items())]
            elif isinstance(value, list):
                stack += [(v, f"{path}[{n}]") for n, v in reversed(list(enumerate(value)))]
            elif isinstance(value, float) and not math.isfinite(value):
                raise ValueError(f"{where}: tool call {k} ({str(function.get('name'))[:60]!r}), argument {path[:80]}, "
                                 f"is {value}, which is no JSON number: send a finite number, or the number as a string")


HOLD_TEXT = "memories hold text"
TEXT_ONLY = (f"{HOLD_TEXT}: send the message's words as its content (a string, or "
             "[{\"type\": \"text\", \"text\": ...}] parts)")


EMPTY = "{} is an empty list: nothing to store; send at least one message (or agent-log event)"


class NoTextError(ValueError):
    """A message that should hold text and holds none (no content, an empty or blank one), or an add of no messages
    at all: refused with its batch (:func:`unstored`). Its own type, so that a write-ahead log replaying such an add,
    logged before these were refused (it stored nothing then), passes over it instead of stopping the start."""


def _is_messages(items: Sequence[Any]) -> bool:
    """Whether an add's items are chat messages (dicts with ``role``, or another API's messages that a transcript
    reader reads: Responses items, LangChain dicts), not agent-log events."""
    return all(isinstance(m, Mapping) and ("role" in m or is_log_message(m)) for m in items)


def _check_depth(items: list[Any], name: str) -> None:
    """Refuse an add's message or session line nested past files.MAX_DEPTH, as a file's line is: the readers and the
    JSON encoder walk them recursively (a RecursionError)."""
    for i, m in enumerate(items):
        if too_deep(m, MAX_DEPTH):
            raise ValueError(f"{name}[{i}]: nested too deeply (more than {MAX_DEPTH} levels of objects and lists, "
                             "where a message needs about 10); flatten it")


def as_chat(items: list[Any], name: str, fmt: str | None = None, owner: tuple[str, str] | None = None
            ) -> tuple[list[Any], list[str], list[dict[str, Any]]]:
    """An add's messages as the OpenAI chat messages the conversation's state reads: (messages, where each came
    from, notes on what was not read).

    Messages another API writes (Gemini contents, Bedrock Converse or Anthropic blocks, Responses items, LangChain
    dicts: the formats of sam_model.data.formats, told from their shape as live_state tells them) go through their
    format's reader, as the transcript importer reads a log of them, so their tool calls and results are memories,
    and a bad part is one line naming it (``data, content 2, part 0: ...``). Before, a Gemini content was refused as
    a message without content, and Converse's blocks were all skipped as parts that are not text: a Bedrock agent's
    add stored nothing. Parts no event is made of (thoughts, media) are counted in the notes. A reader matches a
    result to its call within the messages it is given, and a later one by the call's id or name, so a turn's
    contents (a streamed answer's chunks) go in one add to be one memory, as in the importer's log. An agent's session
    lines (Claude Code, Gemini CLI, Codex, codex exec, OpenHands events) are read here for their check alone:
    ScopedMemory.add reads them with the scope's open turn (sam_model.memory.live). ``fmt``: the format the scope's
    open turn reads them in (None: told from their shape). ``owner``: the add's (user_id, agent_id), an ADK session's
    (user_id, app_name) as SAMMemoryService scopes it, whose entries in a ``load_memory`` result are SAM's recall
    (formats.adk.is_recall): read without it, SAM's own recall was stored again as the tool's words."""
    fmt = fmt or detect(items)
    if fmt == "openai" and not any(_legacy(m) for m in items):
        return items, [f"{name}[{i}]" for i in range(len(items))], []
    if fmt == "openai":  # the importer's reader: a legacy function_call one tool call, its function message the result
        try:
            chat = to_chat(items, name, fmt)
        except SAMFileError as err:
            raise ValueError(str(err)) from None
        return chat.messages, [f"{name}[{i}]" for i in range(len(items))], []
    _check_depth(items, name)
    try:
        chat = adk.to_chat(items, name, owner=owner) if fmt == "adk" else to_chat(items, name, fmt)
    except SAMFileError as err:
        raise ValueError(str(err)) from None
    notes = [{"reason": f"{name}: {n} {kind} part(s) of the {fmt} messages: not stored (no memory is made of them)"}
             for kind, n in sorted(chat.ignored.items())]
    return chat.messages, [f"{name}, {source}" for source in chat.sources], notes


def _legacy(m: Any) -> bool:
    """Whether an OpenAI chat message is of the deprecated functions API: an assistant's ``function_call`` (its
    content None or "") or the ``function`` message of its result. Fed as given, the call's message was refused as
    a message with no content ("data[1].content is missing") and the result named no call; the openai reader reads
    them as one tool call and its result, as the importer does."""
    return isinstance(m, Mapping) and (m.get("role") == "function" or m.get("role") == "assistant"
                                       and isinstance(m.get("function_call"), Mapping) and not m.get("tool_calls"))


# room a memory's record keeps for its heading ("[kind] sets a, b: ", sam_model.data.text.memory_to_text) within
# MAX_TEXT_CHARS: a re-read of an open turn updates the record, and the store checks the record's whole text
HEAD_ROOM = 1_000
FIT_CHARS = MAX_TEXT_CHARS - HEAD_ROOM


def fit(text: str) -> str:
    """A memory's text within FIT_CHARS, so that its record, heading and all, is within MAX_TEXT_CHARS: a longer
    one cut as the importer's ``--result-limit`` cuts a result (``text[:N] + " ...[+M chars]"``, eventtexts), N
    (:func:`fitted`) such that the whole fits. Cut to MAX_TEXT_CHARS itself, the add took it (the store checks an
    event's text) but the update of a later add that moved it was refused (the record's heading put it over)."""
    return cut_text(text, fitted(len(text)))


def fitted(n: int) -> int:
    """How many characters of a text of ``n`` :func:`fit` keeps."""
    return n if n <= FIT_CHARS else FIT_CHARS - len(f" ...[+{n} chars]")


def _media_only(content: Any) -> list[str]:
    """The part types of a content made only of non-text parts (an image, an audio clip), else ``[]``."""
    if not isinstance(content, list) or not content or any(p.get("type") == "text" for p in content):
        return []
    return sorted({str(p.get("type"))[:40] for p in content})


def unstored(data: Any, name: str = "data", max_calls: int | None = None) -> list[dict[str, Any]]:
    """What of an add's ``data`` is not stored, as ``[{"message": i, "reason": ...}]`` (``"part": j`` for a content
    part), or a NoTextError naming the field (``name``). ``max_calls``: the most tool calls the messages may hold
    together (a served add's MAX_ADD_ITEMS: each call is a memory, and one message of 10,000 calls made 10,000
    memories past the limit on messages, seconds of the tenant's lock); over it a ValueError.

    Two cases, told apart because an agent loop must survive the one and hear of the other. A message that should
    hold text and holds none (``{"role": "user"}``, ``""``, blank text parts; not a system message, a tool result
    or a tool call) is a client's mistake: the batch is refused whole, as a batch with any bad message is (it was
    answered ``{"results": []}`` and stored nothing, without a word). A message of images (audio, files) alone is
    well formed but not text, which is all memories hold: it is skipped and said, as an image part beside text is,
    so a multimodal agent feeding every turn is never stopped by a picture (Mem0 skips such messages with a log
    line). So is a model's reply of no words (an assistant message of blank or empty content and no call), which
    the model, not the client, wrote: an agent's history holding it, sent again whole, was refused at every add
    (stop 63). Every text is checked against the length limit here, in content parts too. One rule for
    ScopedMemory.add, sam-serve's HTTP add and MCP's remember, each naming its own field, as is an empty list (a
    NoTextError too); agent-log events are checked where they are parsed."""
    return read_add(data, name, max_calls)[1]


def read_add(data: Any, name: str, max_calls: int | None = None, session: bool = False, fmt: str | None = None,
             worded: bool = False, owner: tuple[str, str] | None = None) -> tuple[list[Any], list[dict[str, Any]]]:
    """(an add's messages as the chat messages its conversation reads, [] when it holds none; what of them is not
    stored): :func:`unstored`'s check, whose messages ScopedMemory.add then writes (given as its ``read``, a served
    add's check naming its API's field), so each format's reader runs once per add (it ran again after the
    check). An agent's session lines (``session``, or lines of a format sam_model.memory.live reads) are not held
    to the length limit: what the agent wrote cannot be cut or split by the sidecar forwarding it, so the add stores
    a longer memory's text cut (:func:`fit`) and says so in its notes. ``fmt``: the format the scope reads the
    items in where their shape tells another (a bare ``{"role", "content"}`` joining an open turn of Responses
    items): read as the add stores them, so that what is said unstored is what is not stored (its ``output_text``
    parts were said unstored, as OpenAI chat's would be, and stored), and checked as their shape is too (an
    empty message refused, as in any scope). ``worded``: the scope's open turn ends in a model's words (Gemini
    contents, live.worded): a model content of whitespace alone (a streamed answer's chunk) that joins them is taken,
    joined as the importer's reader joins it (it was refused, and the chunks after it joined without it); one that
    opens the model's turn is said unstored (:func:`blank_words`: it is no memory; until stop 63 it was refused, and
    an agent feeding each chunk stopped at it). ``owner``: whose ADK recall the items' load_memory results are
    (:func:`as_chat`)."""
    if isinstance(data, str):
        check_text(data, name)
        return [{"role": "user", "content": data}], []
    one = isinstance(data, Mapping)
    items = [data] if one else list(data) if isinstance(data, Sequence) else []
    if not items and isinstance(data, Sequence):  # was {"results": []} in-process but a 422 over HTTP
        raise NoTextError(EMPTY.format(name))
    if not items or not _is_messages(items):
        return [], []
    if fmt is not None and fmt != detect(items):
        read_add(items, name, max_calls, session)
    session = session or detect(items) in live.LIVE
    chunks = (fmt or detect(items)) == live.GEMINI
    items, wheres, notes = as_chat(items, name, fmt, owner)
    calls = sum(len(m["tool_calls"]) for m in items if isinstance(m.get("tool_calls"), list))
    if max_calls is not None and calls > max_calls:
        raise ValueError(f"{name}: its messages hold {calls} tool calls, more than {max_calls} in one add (each call "
                         "is a memory); send them in several adds")
    for i, m in enumerate(items):
        where, content, role = name if one else wheres[i], m.get("content"), m.get("role")
        _check_numbers(m, where)
        try:
            text = content_text(content, where)
        except SAMFileError as err:
            raise ValueError(str(err)) from None
        joins, worded = worded, role == "assistant" and (worded or bool(text.strip()))  # the model's words so far
        if text.strip():
            if not session:
                check_text(text, f"{where}.content")
        elif media := _media_only(content):
            notes.append({"message": i, "reason": f"{where}.content holds only {', '.join(map(repr, media))} "
                                                  f"part(s): not stored ({HOLD_TEXT})"})
            continue
        elif chunks and blank_words(m) and not joins:  # a streamed chunk opening the turn, no call with it
            notes.append({"message": i, "reason": f"{where}.content is only whitespace, the first of the model's "
                          "contents: not stored (a memory holds words; the model's next contents join it)"})
            continue
        elif session and blank_words(m):  # the agent wrote it (Claude's "\n\n" block before a call): no memory
            notes.append({"message": i, "reason": f"{where}.content is only whitespace, the model's words as the "
                          "agent wrote them: not stored (a memory holds words)"})
            continue
        elif role == "assistant" and not (m.get("tool_calls") or m.get("function_call")) and content is not None \
                and not (chunks and joins):  # a call's message (OpenAI's legacy function_call too) is no reply
            # the model's reply of no words (Claude's empty or "\n\n" end_turn after a tool result), which an
            # agent's history holds: refused, every later add of that history was refused, nothing more stored
            notes.append({"message": i, "reason": f"{where}.content is {'empty' if content in ('', []) else 'only whitespace'}"
                          ", the model's reply of no words: not stored (a memory holds words)"})
            continue
        elif not (role in ("system", "tool") or m.get("tool_calls") or not isinstance(role, str)
                  or chunks and joins and role == "assistant" and content):
            why = ("is missing" if content is None else "is empty" if content in ("", []) else
                   "is only whitespace")
            raise NoTextError(f"{where}.content {why}: nothing to store; {TEXT_ONLY}")
        for j, part in enumerate(content if isinstance(content, list) else ()):
            if part.get("type") != "text":
                notes.append({"message": i, "part": j, "reason": f"{where}.content[{j}]: a "
                              f"{str(part.get('type'))[:40]!r} part: not stored ({HOLD_TEXT})"})
    return items, notes


def blank_words(message: Mapping[str, Any]) -> bool:
    """Whether a chat message is the model's words of whitespace alone, with no call: a Gemini stream's chunk that
    opened the model's turn (read_add says it unstored). Not fed: its memory would be blank, which the store
    refuses (``memories[1].text must not be empty``)."""
    return message.get("role") == "assistant" and not message.get("tool_calls") and _blank(message.get("content"))


def unblanked(message: Mapping[str, Any]) -> Mapping[str, Any]:
    """``message`` without its words where the model's words beside its calls are whitespace alone (a Gemini
    stream's blank chunk joined to its functionCall content, an OpenAI message's ``" "`` beside ``tool_calls``):
    fed as the calls alone, the blank part no memory (the store refused the add whole, naming ``memories[i].text``,
    a field the caller never sent)."""
    if message.get("role") == "assistant" and message.get("tool_calls") and _blank(message.get("content")):
        return {**message, "content": None}
    return message


def _blank(content: Any) -> bool:
    """Whether a message's content holds text that is whitespace alone (not None or empty: those hold no text)."""
    if not content:
        return False
    try:
        return not content_text(content, "content").strip()
    except SAMFileError:
        return False


__all__ = ["EMPTY", "FIT_CHARS", "HEAD_ROOM", "HOLD_TEXT", "MAX_CALL_ARGUMENTS", "TEXT_ONLY", "NoTextError", "as_chat", "blank_words", "fit",
           "fitted", "read_add", "unblanked", "unstored"]
