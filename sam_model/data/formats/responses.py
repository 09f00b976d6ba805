"""OpenAI Responses API items: the ``input`` and ``output`` lists of ``/v1/responses``.

``message`` items (or bare ``{"role", "content"}``) are the words, their content a string or parts
(``input_text``/``output_text``); ``function_call`` items (``{"call_id", "name", "arguments"}``) and
``custom_tool_call`` (raw ``input``) are tool calls, answered by ``function_call_output`` /
``custom_tool_call_output`` items of the same ``call_id``; an ``mcp_call`` is a call and its output in one item
(its ``error``, where the call failed, is its result, flagged as failed: toolstate's extension of the spec).
An assistant message and the calls right after it are one chat turn, as Chat Completions writes them.
``reasoning`` and built-in tool items (web search, file search, computer use, ...) are counted, not read. The
conversation's ``instructions`` are its policy.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from sam_model.data.formats.base import (
    FAILED,
    Chat,
    TranscriptFormatError,
    chat_call,
    each,
    result_text,
    text_of,
)
from sam_model.io import json_type

TEXT_PARTS = ("input_text", "output_text", "text")
CALLS = ("function_call", "custom_tool_call")
OUTPUTS = ("function_call_output", "custom_tool_call_output")
ROLES = ("system", "developer", "user", "assistant")
# what the OpenAI Agents SDK gives the model for a function tool that raised (its default_tool_error_function): the
# items carry no failure flag, so without it a failed call read "name: ok"
AGENTS_SDK_FAILURE = "An error occurred while running the tool."


# the item response_chains puts before each later request of a chain it joins: ``{"type": REQUEST, "at": "line 6"}``
# (no API writes this type), so an item is named by its own request's line ("FILE:1, line 6, item 0"), not by its
# place in the joined list ("FILE:1, item 57"), which no line of the file holds
REQUEST = "sam.chained_request"


def to_chat(items: list[Any], where: str) -> Chat:
    chat = Chat()
    read(chat, _named(each(items, where, "item"), where))
    return chat


def _named(entries: Iterable[tuple[int, Mapping[str, Any], str]], where: str) -> Iterator[tuple[str, Mapping[str, Any], str]]:
    """(source, item, where) for each item, numbered within its request where a chain's requests are marked."""
    at, first = "", 0
    for i, item, w in entries:
        if item.get("type") == REQUEST:
            at, first = f"{item.get('at')}, ", i + 1
            continue
        name = f"{at}item {i - first}"
        yield name, item, f"{where}, {name}" if at else w


def read(chat: Chat, entries: Iterable[tuple[str, Mapping[str, Any], str]]) -> None:
    """Items as chat messages into ``chat``: each entry (its source, as ``chat.sources`` names it; the item; where
    an error names it). Apart from :func:`to_chat` so a container of items (a Codex rollout's lines) reads them as
    they are read here, its own names for them kept."""
    turn: dict[str, Any] | None = None  # the assistant turn that calls may still join
    for source, item, w in entries:
        kind = item.get("type", "message" if "role" in item else None)
        if kind == "message":
            role = item.get("role")
            if role not in ROLES:
                raise TranscriptFormatError(w, f"message item with role {role!r} (expected one of {', '.join(ROLES)})")
            text = text_of(item.get("content"), w, TEXT_PARTS, ignored=chat.ignored)
            turn = None
            if role == "assistant":
                turn = {"role": "assistant", "content": text or None}
                chat.add(turn, source)
            elif text:
                chat.add({"role": "system" if role == "developer" else role, "content": text}, source)
        elif kind in CALLS or kind == "mcp_call":
            call_id = item.get("call_id", item.get("id"))
            args = item.get("input") if kind == "custom_tool_call" else item.get("arguments")
            call = chat_call(call_id, item.get("name"), args, w)
            if turn is None:
                turn = {"role": "assistant", "content": None}
                chat.add(turn, source)
            turn.setdefault("tool_calls", []).append(call)
            if kind == "mcp_call":
                turn = None
                chat.add({"role": "tool", "tool_call_id": call["id"],
                          "content": result_text(item.get("output") if item.get("error") is None
                                                 else f"Error: {item['error']}"),
                          **({FAILED: True} if item.get("error") is not None else {})}, source)
        elif kind in OUTPUTS:
            call_id = item.get("call_id")
            if not isinstance(call_id, str) or not call_id:
                raise TranscriptFormatError(w, f"{kind} item without a 'call_id' (the call it answers)")
            output = item.get("output")
            text = text_of(output, w, TEXT_PARTS, ignored=chat.ignored) if isinstance(output, list) \
                else result_text(output)
            turn = None
            failed = isinstance(output, str) and output.startswith(AGENTS_SDK_FAILURE)
            chat.add({"role": "tool", "tool_call_id": call_id, "content": text, **({FAILED: True} if failed else {})},
                     source)
        else:
            chat.ignored[str(kind)] += 1


def sniff(items: list[Any]) -> bool:
    """Responses items by their types; never messages that carry OpenAI chat's tool use (a ``tool`` role,
    ``tool_calls``), which no Responses item has: SDKs that dump chat messages with ``"type": "message"`` had them
    read here, refused at the first tool message."""
    if any(isinstance(m, Mapping) and (m.get("role") == "tool" or "tool_calls" in m) for m in items):
        return False
    return any(isinstance(m, Mapping) and (m.get("type") in (*CALLS, *OUTPUTS, "mcp_call", "reasoning")
                                           or (m.get("type") == "message" and "role" in m)) for m in items)


def items_of(obj: Mapping[str, Any], where: str) -> list[Any]:
    """A logged exchange: ``input`` (a string or items) then ``output``, or ``items``."""
    if "items" in obj:
        return obj["items"] if isinstance(obj["items"], list) else _bad(where, "items", obj["items"])
    raw = obj.get("input")
    items = [{"role": "user", "content": raw}] if isinstance(raw, str) else raw if raw is not None else []
    out = obj.get("output") or []
    if not isinstance(items, list):
        _bad(where, "input", raw)
    if not isinstance(out, list):
        _bad(where, "output", out)
    return [*items, *out]


def _bad(where: str, key: str, value: Any) -> list[Any]:
    raise TranscriptFormatError(where, f"'{key}' is {json_type(value)}, expected a list of items")
