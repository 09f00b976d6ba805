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

import json
import re
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
# what the OpenAI Agents SDK gives the model for a function tool that raised (its default_tool_error_function; 0.24
# "... Please try again.", earlier versions "... Please try again. Error: <the exception's words>"): the items carry
# no failure flag, so without it a failed call read "name: ok". A failure_error_function of the app's own gives words
# of its own, which no rule can tell from a result
AGENTS_SDK_FAILURE = "An error occurred while running the tool."
AGENTS_SDK_REJECTED = "Tool execution was not approved."  # a call whose approval was rejected: it never ran
# the SDK's own words for a call of a tool the agent lacks (tool_not_found_behavior="return_error_to_model") and for a
# tool past its timeout (timeout_behavior="error_as_result"), naming the tool called
AGENTS_SDK_NAMED = re.compile(r"Tool '(?P<name>.+)' (?:not found|timed out after [0-9.e+-]+ seconds)\.", re.DOTALL)


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
    names: dict[str, Any] = {}  # each call's id -> the tool it called
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
            names[call["id"]] = call["function"]["name"]
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
            failed = agents_sdk_failed(output, names.get(call_id))
            chat.add({"role": "tool", "tool_call_id": call_id, "content": text, **({FAILED: True} if failed else {})},
                     source)
        else:
            chat.ignored[str(kind)] += 1


def agents_sdk_failed(output: Any, name: Any) -> bool:
    """Whether ``output``, the output of a call of tool ``name``, is the OpenAI Agents SDK's own words for a failed
    call (0.24.0's, and the raised tool's of the versions before): a tool that raised, an approval rejected, a tool
    the agent lacks or one past its timeout (these two naming the tool called: a tool's own "Tool 'x' not found."
    about another is a result), as the SDK writes them, or as its ``{"error": ...}`` for a call a hosted program
    made. Until conversion version 195 only a raised tool's were read as failed."""
    if isinstance(output, str) and output.startswith('{"error":'):
        try:
            wrapped = json.loads(output)
        except ValueError:
            wrapped = None
        if isinstance(wrapped, dict) and len(wrapped) == 1 and isinstance(wrapped.get("error"), str):
            output = wrapped["error"]
    if not isinstance(output, str):
        return False
    named = AGENTS_SDK_NAMED.fullmatch(output)
    return output.startswith(AGENTS_SDK_FAILURE) or output == AGENTS_SDK_REJECTED or (
        named is not None and named["name"] == name)


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
