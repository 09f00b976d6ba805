"""The chat messages the labelling rule reads: a message's content as text, its tool calls, the policy.

Every log reader turns its format into OpenAI chat messages (:mod:`sam_model.data.formats`); this module reads the
fields of those messages as the spec names them (content a string, null or a list of parts; ``tool_calls`` whose
arguments are a JSON object, kept as their raw string where they are not; the ``system`` messages, the policy) and
refuses any other shape with an error naming the message. The state (:mod:`sam_model.data.toolstate`), the importer
and a scoped memory parse here, so they agree on what a call and a message's text are.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sam_model.data.formats.base import TranscriptFormatError, json_result, strict_loads
from sam_model.io import json_type
from sam_model.limits import too_deep

MAX_ARGUMENT_DEPTH = 32  # levels of objects and lists in one call's arguments that are traced (deeper: kept raw;
# walking them leaf by leaf recursed past Python's limit, and a served add answered 500 with its batch half taken)


@dataclass(frozen=True)
class ToolCall:
    """One parsed tool call. ``arguments`` is the decoded object, or the raw string when it is not JSON."""

    name: str
    arguments: dict[str, Any] | str
    id: str | None = None

    @property
    def valid(self) -> bool:
        return isinstance(self.arguments, dict)


def content_text(content: Any, where: str, result: bool = False) -> str:
    """A message's content as text: a string, null, or a list of parts whose text parts are joined by newlines.
    ``result`` (a tool message): JSON data, an object or a list of no content part, is its JSON text
    (formats.base.json_result), as many loggers write a tool's result; the spec names string, null and parts, and
    a result's summary already reads its text as JSON, so the values in it are traced as in a text result."""
    if result and (data := json_result(content)) is not None:
        return data
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for j, part in enumerate(content):
            if not isinstance(part, Mapping):
                raise TranscriptFormatError(where, f"content part {j} is {json_type(part)}, expected an "
                                                   "object such as {\"type\": \"text\", \"text\": ...}")
            if part.get("type") == "text":
                if not isinstance(part.get("text"), str):
                    raise TranscriptFormatError(where, f"content part {j} has type 'text' but no string 'text'")
                texts.append(part["text"])
        return "\n".join(texts)
    raise TranscriptFormatError(where, f"'content' is {json_type(content)}; expected a string, null or a "
                                       "list of parts" + (" (or, in a tool message, JSON data)" if result else ""))


def parse_tool_calls(message: Mapping[str, Any], where: str) -> list[ToolCall]:
    """The message's tool calls; arguments that are not a JSON object are kept as their raw string."""
    raw = message.get("tool_calls")
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise TranscriptFormatError(where, f"'tool_calls' is {json_type(raw)}, expected a list of calls")
    calls = []
    for j, call in enumerate(raw):
        fn = call.get("function") if isinstance(call, Mapping) else None
        if not isinstance(fn, Mapping) or not isinstance(fn.get("name"), str) or not fn["name"]:
            raise TranscriptFormatError(where, f"tool call {j} has no function name (expected "
                                               "{\"function\": {\"name\": ..., \"arguments\": ...}})")
        args = fn.get("arguments")
        if isinstance(args, str):
            try:
                decoded = strict_loads(args, unique=False) if args.strip() else {}  # a key twice: the tool got the last
            except (ValueError, RecursionError):  # not JSON (NaN, 1e400 included): kept as the raw string
                decoded = args
            args = decoded if isinstance(decoded, dict) and not too_deep(decoded, MAX_ARGUMENT_DEPTH) else args
        elif args is None:
            args = {}
        elif not isinstance(args, dict) or too_deep(args, MAX_ARGUMENT_DEPTH):
            try:
                args = json.dumps(args, ensure_ascii=False)
            except (ValueError, RecursionError):
                raise TranscriptFormatError(where, f"tool call {j}'s arguments are nested too deep to write down; "
                                                   f"give at most {MAX_ARGUMENT_DEPTH} levels") from None
        call_id = call.get("id")
        calls.append(ToolCall(fn["name"], args, None if call_id is None else str(call_id)))
    return calls


def policy_of(messages: Sequence[Any], where: str = "conversation") -> str:
    """The policy: the concatenated content of the ``system`` messages (common knowledge, not an event)."""
    return "\n".join(content_text(m.get("content"), f"{where}, message {i}")
                     for i, m in enumerate(messages) if isinstance(m, Mapping) and m.get("role") == "system")
