"""OpenAI chat messages (Chat Completions), the shape the labelling rule reads; tau-bench v1 writes them too.

Checked here, so a careless or hostile file is refused with its message named rather than turned into odd
events: a role outside the API's roles, a ``tool`` message that names no call. ``developer`` (the newer name of
``system``) is read as ``system``; the deprecated ``function_call`` / ``function`` messages as one tool call and
its result.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sam_model.data.formats.base import Chat, TranscriptFormatError, chat_call, each

ROLES = ("system", "developer", "user", "assistant", "tool", "function")


def to_chat(messages: list[Any], where: str) -> Chat:
    chat = Chat()
    for i, m, w in each(messages, where):
        role = m.get("role")
        if not isinstance(role, str) or not role:
            raise TranscriptFormatError(w, "message without 'role' (expected system, user, assistant or tool)")
        if role not in ROLES:
            raise TranscriptFormatError(w, f"unknown role {role!r} (expected one of {', '.join(ROLES)})")
        out = dict(m)
        if role == "developer":
            out["role"] = "system"
        elif role == "tool":
            call_id, name = m.get("tool_call_id"), m.get("name")
            if (not isinstance(call_id, (str, int)) or isinstance(call_id, bool) or call_id == "") and not (
                    call_id is None and isinstance(name, str) and name):
                raise TranscriptFormatError(w, "tool message without a 'tool_call_id' (the id of the assistant tool "
                                               "call it answers; or at least the tool's 'name')")
        elif role == "function":  # deprecated functions API: the result of the function_call before it
            if not isinstance(m.get("name"), str) or not m["name"]:
                raise TranscriptFormatError(w, "function message without a 'name'")
            out = {"role": "tool", "name": m["name"], "content": m.get("content")}
        elif role == "assistant" and isinstance(m.get("function_call"), Mapping) and not m.get("tool_calls"):
            fc = m["function_call"]
            out = {"role": "assistant", "content": m.get("content"),
                   "tool_calls": [chat_call(None, fc.get("name"), fc.get("arguments"), w)]}
        chat.add(out, f"message {i}")
    return chat


def sniff(messages: list[Any]) -> bool:
    return any(isinstance(m, Mapping) and "role" in m for m in messages)
