"""Anthropic Messages: ``user``/``assistant`` messages whose content is a string or a list of blocks.

An assistant's ``tool_use`` blocks (``{"id", "name", "input": {...}}``) are its tool calls; a user's
``tool_result`` blocks (``{"tool_use_id", "content", "is_error"}``) answer them, one tool message each, before the
user's own words; ``is_error: true`` flags the call as failed (the chat message's ``is_error``, which the state reads
as an error whatever the words say: toolstate's extension of the spec). ``text`` blocks are the words; ``thinking``,
images and documents are counted, not read. The conversation's ``system`` (a string or text blocks) is its policy.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sam_model.data.formats.base import Blocks, Chat, TranscriptFormatError, each, read_blocks, text_of

ROLES = ("user", "assistant", "system")


BLOCKS = Blocks("content block", "text", "tool_use", "input", "tool_result", "tool_use_id", ("is_error", True, False))


def to_chat(messages: list[Any], where: str) -> Chat:
    chat = Chat()
    for i, m, w in each(messages, where):
        role = m.get("role")
        if role not in ROLES:
            raise TranscriptFormatError(w, f"role {role!r} is not an Anthropic role (expected user or assistant)")
        content = m.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content or ""}]
        read_blocks(chat, role, blocks, w, f"message {i}", BLOCKS,
                    lambda b, at: text_of(b.get("content"), at, ignored=chat.ignored))
    return chat


def sniff(messages: list[Any]) -> bool:
    return any(isinstance(m, Mapping) and isinstance(m.get("content"), list)
               and any(isinstance(b, Mapping) and b.get("type") in ("tool_use", "tool_result") for b in m["content"])
               for m in messages)


def policy(system: Any, where: str) -> str:
    """The ``system`` parameter: a string or a list of text blocks."""
    return text_of(system, f"{where}, system")
