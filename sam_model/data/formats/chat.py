"""OpenAI chat messages (Chat Completions), the shape the labelling rule reads; tau-bench v1 writes them too.

A role outside the API's (``observation``, Llama's ``ipython``) is an event of that kind, as the spec says ("any
other role with non-empty content → kind=role"), and is counted for the import report, which asks of one close to
an API role ("asistant") whether that was meant; a role that is no short name is refused with its message named.
A ``tool`` message that names no call is a result named ``tool``; a bad call id, and tool calls on a role other
than assistant, are refused by the labelling rule, which every reader's messages go through. ``developer`` (the newer name of ``system``) is read as ``system``; the deprecated ``function_call`` /
``function`` messages as one tool call and its result. That API has no call ids: a ``function`` message answers
the ``function_call`` right before it, so the two are given one id here (``function_call-N``, N the call's message),
as a tool call and its result carry one; without it every legacy result was reported as answering no call ("a
truncated or merged transcript?") in a log that was whole.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from sam_model.data.formats.base import Chat, TranscriptFormatError, chat_call, each, json_result
from sam_model.io import json_type

ROLES = ("system", "developer", "user", "assistant", "tool", "function")  # the API's; any other is its own kind
ROLE = re.compile(r"[A-Za-z][A-Za-z0-9_.-]{0,63}")


def to_chat(messages: list[Any], where: str, start: int = 0) -> Chat:
    """``start``: the first message's index in what the file gives (a reader checking only the messages it has not
    read before names each by its place)."""
    chat = Chat()
    pending: tuple[int, dict[str, Any]] | None = None  # a legacy function_call and its message, awaiting its result
    for i, m, w in each(messages, where, start=start):
        role = m.get("role")
        if role in (None, ""):
            raise TranscriptFormatError(w, "message without 'role' (expected system, user, assistant or tool)")
        if not isinstance(role, str):  # it was called missing
            raise TranscriptFormatError(w, f"'role' is {json_type(role)} ({str(role)[:40]}), expected a string "
                                           "such as user, assistant or tool")
        if role not in ROLES and not ROLE.fullmatch(role):
            raise TranscriptFormatError(w, f"role {role[:40]!r} is not a name (a letter, then up to 63 letters, digits, "
                                           f"'_', '.' or '-'); the API's roles are {', '.join(ROLES)}")
        if role.lower() in ROLES:
            role = role.lower()  # "Assistant": the API's role, as a careless exporter spelled it
        else:  # its own kind of event, as the spec says; counted, so that a misspelt "asistant" is seen
            chat.other_role(role, w)
        if isinstance(m.get("content"), list) and not (role in ("tool", "function") and json_result(m["content"])):
            # the spec reads text parts only: the others are counted, not lost (a tool's list of records is its text)
            chat.ignored.update(f"{p.get('type') or 'untyped'} parts" for p in m["content"]
                                if isinstance(p, Mapping) and p.get("type") != "text")
        out = {**m, "role": role}
        if role == "developer":
            out["role"] = "system"
        elif role == "function":  # deprecated functions API: the result of the function_call before it
            if not isinstance(m.get("name"), str) or not m["name"]:
                raise TranscriptFormatError(w, "function message without a 'name'")
            out = {"role": "tool", "name": m["name"], "content": m.get("content")}
            if pending is not None and pending[1]["function"]["name"] == m["name"]:
                pending[1]["id"] = out["tool_call_id"] = f"function_call-{pending[0]}"
        pending = None
        if role == "assistant" and isinstance(m.get("function_call"), Mapping) and not m.get("tool_calls"):
            fc = m["function_call"]
            call = chat_call(None, fc.get("name"), fc.get("arguments"), w)
            out, pending = {"role": "assistant", "content": m.get("content"), "tool_calls": [call]}, (i, call)
        chat.add(out, f"message {i}")
    return chat


def sniff(messages: list[Any]) -> bool:
    return any(isinstance(m, Mapping) and "role" in m for m in messages)
