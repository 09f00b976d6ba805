"""LangChain messages as LangChain and LangGraph write them to files: ``messages_to_dict`` (``{"type": "ai",
"data": {...}}``), ``dumpd`` / LangSmith (``{"lc": 1, "type": "constructor", "id": [..., "AIMessage"],
"kwargs": {...}}``) and a message's own ``model_dump()`` (``{"type": "ai", "content": ..., "tool_calls": [...]}``).

A LangGraph agent's state is such a list (``state["messages"]``), so its logs are training data as they are: each
message becomes the chat message the labelling rule reads. ``human`` is the user, ``ai`` the assistant, whose
``tool_calls`` (``{"name", "args", "id"}``) are its tool calls (``additional_kwargs.tool_calls`` in OpenAI's shape
when the message has none of its own), ``tool`` a result answering ``tool_call_id`` (its content JSON data, an
object or a list of records holding no ``{"type": T, T: ...}`` block, is its JSON text as the OpenAI reader's is,
:func:`sam_model.data.formats.base.json_result`; ``status: "error"``: the call failed, the chat message's
``is_error``, read as an error whatever the words say: toolstate's extension of the spec), ``system`` the policy, ``chat`` a message of its ``role``, ``function`` (deprecated) a result named by its
``name``; ``*MessageChunk`` types read as their message. Content is a string or blocks: ``text`` blocks and plain strings among them are the
words; an ``ai`` message's ``tool_use`` / ``tool_call`` blocks repeat its ``tool_calls``, and other blocks
(images, reasoning) are counted, not read, as are ``remove`` markers. ``invalid_tool_calls`` (the model's output
that parsed as no call) are counted; where a message has any, the raw calls an OpenAI integration kept in
``additional_kwargs.tool_calls`` are read (all of them, the good ones beside the cut), as the OpenAI reader reads the
same turn (a cut call's arguments as raw text).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sam_model.data.formats import chat
from sam_model.data.formats.base import (
    Chat,
    TranscriptFormatError,
    chat_call,
    each,
    failure,
    json_result,
    result_text,
    text_of,
)
from sam_model.data.formats.claude_code import is_entry
from sam_model.data.formats.claude_stream import is_message as is_stream_message
from sam_model.io import json_type

ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool", "function": "function",
         "developer": "developer", "chat": None}  # chat: the message's own role
CLASSES = {"HumanMessage": "human", "AIMessage": "ai", "SystemMessage": "system", "ToolMessage": "tool",
           "FunctionMessage": "function", "ChatMessage": "chat", "RemoveMessage": "remove"}
CALL_BLOCKS = ("tool_use", "tool_call")  # an ai message's content blocks that repeat its tool_calls


def _type(t: Any) -> str | None:
    """``ai`` for ``ai``, ``AIMessage`` or ``AIMessageChunk``; None for what is no LangChain message type."""
    if not isinstance(t, str):
        return None
    t = t.removesuffix("Chunk")
    return t if t in ROLES or t == "remove" else CLASSES.get(t)


def unwrap(m: Mapping[str, Any]) -> tuple[str, Mapping[str, Any]] | None:
    """(message type, its fields) of a LangChain message in any of the three file shapes, else None."""
    if m.get("lc") == 1 and m.get("type") == "constructor" and isinstance(m.get("id"), list) and m["id"]:
        kind = _type(m["id"][-1])
        return (kind, m.get("kwargs") if isinstance(m.get("kwargs"), Mapping) else {}) if kind else None
    kind = _type(m.get("type"))
    if kind is None or "parts" in m or is_entry(m) or is_stream_message(m):  # GenAI parts carry a role, never a type of
        return None  # these; a Claude Code system entry (or stream-json message) is typed "system" beside its session
    if isinstance(m.get("data"), Mapping):
        return kind, m["data"]
    if "content" in m and ("role" not in m or kind == "chat"):  # a model_dump (only a chat message has a role)
        return kind, m
    return None


def _calls(data: Mapping[str, Any], where: str) -> list[dict[str, Any]] | None:
    """The message's calls: its ``tool_calls``, or the raw OpenAI calls an integration kept in ``additional_kwargs``
    where some of its output parsed as no call (``invalid_tool_calls``): those hold every call the model wrote, in its
    order, the cut one's arguments as their text (read as a lone cut call is); ``tool_calls`` alone dropped it."""
    calls = data.get("tool_calls")
    if calls and not reads_kept(data):
        if not isinstance(calls, list):
            raise TranscriptFormatError(where, f"'tool_calls' is {json_type(calls)}, expected a list of "
                                               "{\"name\", \"args\", \"id\"}")
        return [chat_call(c.get("id"), c.get("name"), c.get("args"), w) for _, c, w in each(calls, where, "tool call")]
    return kept_calls(data)


def reads_kept(data: Mapping[str, Any]) -> bool:
    """Whether an ai message's calls are read from ``additional_kwargs.tool_calls`` though it has ``tool_calls``:
    some of its output parsed as no call (``invalid_tool_calls``) and the integration kept the raw calls, each in
    OpenAI's shape (``{"function": {...}}``): kept calls of another shape (an integration's own) read as no call, so
    a message whose good calls read before is read from them still, not refused for what it kept beside them."""
    kept = kept_calls(data) if data.get("invalid_tool_calls") else None
    return kept is not None and all(isinstance(c, Mapping) and isinstance(c.get("function"), Mapping) for c in kept)


def kept_calls(data: Mapping[str, Any]) -> list[Any] | None:
    """The calls an OpenAI integration kept in ``additional_kwargs.tool_calls`` (OpenAI's shape), else None."""
    extra = data.get("additional_kwargs")
    if isinstance(extra, Mapping) and extra.get("tool_calls"):  # OpenAI's shape, as older integrations kept it
        return list(extra["tool_calls"])
    return None


def _content(content: Any) -> Any:
    """A content list with its plain strings as text blocks: LangChain's content is ``str | list[str | dict]``
    (Gemini's integration writes strings among its blocks, and BaseMessage.text reads them as text), which the
    shared block reader refused as 'content part 0 is a str'."""
    return [{"type": "text", "text": p} if isinstance(p, str) else p for p in content] \
        if isinstance(content, list) else content


def _message(kind: str, data: Mapping[str, Any], where: str, ignored: Any) -> dict[str, Any]:
    """One LangChain message as a chat message."""
    content = _content(data.get("content"))
    if kind == "ai":
        parts = [p for p in content if not (isinstance(p, Mapping) and p.get("type") in CALL_BLOCKS)] \
            if isinstance(content, list) else content
        calls = _calls(data, where)
        if isinstance(data.get("invalid_tool_calls"), list) and data["invalid_tool_calls"]:
            ignored["invalid tool calls"] += len(data["invalid_tool_calls"])
        fc = (data.get("additional_kwargs") or {}).get("function_call") if not calls else None
        if isinstance(fc, Mapping):  # the deprecated functions API, as older integrations kept it
            calls = [chat_call(None, fc.get("name"), fc.get("arguments"), where)]
        out: dict[str, Any] = {"role": "assistant", "content": text_of(parts, where, ignored=ignored) or None}
        return {**out, "tool_calls": calls} if calls else out
    if kind in ("tool", "function"):
        text = json_result(content)  # JSON data, a list of records too, is its JSON text, as the OpenAI reader's
        if text is None:  # text, null, or blocks (a list holding a {"type": T, T: ...} part)
            text = text_of(content, where, ignored=ignored) if isinstance(content, (list, type(None))) \
                else result_text(content)
        call = data.get("tool_call_id") if kind == "tool" else None
        name = data.get("name") if isinstance(data.get("name"), str) and data["name"] else None
        if kind == "function" and name is None:
            raise TranscriptFormatError(where, "function message without a 'name'")
        return {"role": "tool", "content": text, **({"tool_call_id": str(call)} if call not in (None, "") else {}),
                **({"name": name} if name else {}),
                **(failure(data.get("status"), "error", "success", "status", where) if kind == "tool" else {})}
    role = ROLES[kind]
    if kind == "chat":  # a message of its own role, named as the chat reader names roles
        role = data.get("role")
        if not isinstance(role, str) or not chat.ROLE.fullmatch(role):
            raise TranscriptFormatError(where, f"chat message with role {str(role)[:40]!r}, not a name (a letter, "
                                               "then up to 63 letters, digits, '_', '.' or '-')")
        role = role.lower() if role.lower() in chat.ROLES else role
    return {"role": "system" if role == "developer" else role, "content": text_of(content, where, ignored=ignored)}


def read(m: Mapping[str, Any], where: str, ignored: Any) -> dict[str, Any] | None:
    """One LangChain message (a dict in any of the three shapes) as a chat message; None for a ``remove`` marker
    (a RemoveMessage of a state update: no words, no call; counted in ``ignored``)."""
    found = unwrap(m)
    if found is None:
        raise TranscriptFormatError(where, "not a LangChain message (expected {\"type\": \"human\" | \"ai\" | "
                                           "\"tool\" | \"system\", \"data\": {...}} as messages_to_dict writes, a "
                                           "dumpd constructor, or a message's model_dump())")
    kind, data = found
    if kind == "remove":
        ignored["remove markers"] += 1
        return None
    return _message(kind, data, where, ignored)


def to_chat(messages: list[Any], where: str) -> Chat:
    out = Chat()
    for i, m, w in each(messages, where):
        if (message := read(m, w, out.ignored)) is not None:
            if message["role"] not in chat.ROLES:  # a ChatMessage of its own role: counted as the chat reader does
                out.other_role(message["role"], w)
            out.add(message, f"message {i}")
    return out


def sniff(messages: list[Any]) -> bool:
    return any(isinstance(m, Mapping) and unwrap(m) is not None for m in messages)


def is_message(m: Any) -> bool:
    """A dict that is a LangChain message as a file holds it (for the LangChain adapter: read here, not by
    langchain_core's converter, which reads only the model_dump shape)."""
    return isinstance(m, Mapping) and unwrap(m) is not None
