"""Anthropic Messages: ``user``/``assistant`` messages whose content is a string or a list of blocks.

An assistant's ``tool_use`` blocks (``{"id", "name", "input": {...}}``) are its tool calls; a user's
``tool_result`` blocks (``{"tool_use_id", "content", "is_error"}``) answer them, one tool message each, before the
user's own words. ``text`` blocks are the words; ``thinking``, images and documents are counted, not read. The
conversation's ``system`` (a string or text blocks) is its policy.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sam_model.data.formats.base import Chat, TranscriptFormatError, chat_call, text_of

ROLES = ("user", "assistant", "system")


def to_chat(messages: list[Any], where: str) -> Chat:
    chat = Chat()
    for i, m in enumerate(messages):
        w = f"{where}, message {i}"
        if not isinstance(m, Mapping):
            raise TranscriptFormatError(w, f"a message must be an object, got {type(m).__name__}")
        role = m.get("role")
        if role not in ROLES:
            raise TranscriptFormatError(w, f"role {role!r} is not an Anthropic role (expected user or assistant)")
        content = m.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content or ""}]
        texts, calls = [], []
        for j, b in enumerate(blocks):
            if not isinstance(b, Mapping):
                raise TranscriptFormatError(w, f"content block {j} is a {type(b).__name__}, expected an object")
            kind = b.get("type")
            if kind == "text":
                if not isinstance(b.get("text"), str):
                    raise TranscriptFormatError(w, f"content block {j} has type 'text' but no string 'text'")
                texts.append(b["text"])
            elif kind == "tool_use" and role == "assistant":
                calls.append(chat_call(b.get("id"), b.get("name"), b.get("input"), f"{w}, block {j}"))
            elif kind == "tool_result":
                if not isinstance(b.get("tool_use_id"), str) or not b["tool_use_id"]:
                    raise TranscriptFormatError(w, f"tool_result block {j} without a 'tool_use_id'")
                result = text_of(b.get("content"), f"{w}, block {j}", ignored=chat.ignored)
                chat.add({"role": "tool", "tool_call_id": b["tool_use_id"], "content": result}, f"message {i}")
            else:
                chat.ignored[str(kind)] += 1
        text = "\n".join(texts)
        if role == "assistant" and (text or calls):
            chat.add({"role": "assistant", "content": text or None, **({"tool_calls": calls} if calls else {})},
                     f"message {i}")
        elif text:
            chat.add({"role": role, "content": text}, f"message {i}")
    return chat


def sniff(messages: list[Any]) -> bool:
    return any(isinstance(m, Mapping) and isinstance(m.get("content"), list)
               and any(isinstance(b, Mapping) and b.get("type") in ("tool_use", "tool_result") for b in m["content"])
               for m in messages)


def policy(system: Any, where: str) -> str:
    """The ``system`` parameter: a string or a list of text blocks."""
    return text_of(system, f"{where}, system")
