"""A message too long for a memory, cut as ``sam-data transcripts --result-limit 90000`` cuts it: what the adapters
that store an agent's messages as it runs (smolagents' step callback, LlamaIndex's memory block) share. Imports no
framework."""

from __future__ import annotations

import logging
from typing import Any

from sam_model.data.eventtexts import cut_text
from sam_model.limits import MAX_TEXT_CHARS

CUT_AT = 90_000  # a text past MAX_TEXT_CHARS is stored as its first CUT_AT characters (room for the tool's name)


def fitted_text(text: Any, what: str, log: logging.Logger) -> Any:
    """``text`` cut to its first CUT_AT characters where it is a string past MAX_TEXT_CHARS, said in a warning on
    ``log`` naming ``what`` (the adapter and the part: "SAMCapability: a text part"): a message part of a framework's
    own shape (Pydantic AI's parts, Agent Framework's contents), which :func:`cut_as_importer` does not read.
    Anything else is given back as it is."""
    if not isinstance(text, str) or len(text) <= MAX_TEXT_CHARS:
        return text
    log.warning("%s of %s characters, more than a memory holds (%s): stored cut to %s", what, f"{len(text):,}",
                f"{MAX_TEXT_CHARS:,}", f"{CUT_AT:,}")
    return cut_text(text, CUT_AT)


def cut_as_importer(message: dict[str, Any], where: str, log: logging.Logger, name: str | None = None) -> dict[str, Any]:
    """``message`` with a text past MAX_TEXT_CHARS cut, said in a warning on ``log`` (the adapter's): a tool result as
    ``sam-data transcripts --result-limit 90000`` cuts it (its memory, ``name: text``, to its first CUT_AT characters
    and the count left out), another message's text alike. ScopedMemory refuses such a message (its caller can split
    it); an adapter storing as the agent runs cannot split a tool's output (a web page read whole), and the refusal,
    raised in the agent's run, ended it, none of its later messages stored. ``name``: a tool result's tool where the
    message names none (its call does: a LlamaIndex result names only its call's id)."""
    content = message.get("content")
    if not isinstance(content, str) or len(content) <= MAX_TEXT_CHARS:
        return message
    log.warning("%s: a %s message of %s characters, more than a memory holds (%s): stored cut to %s",
                where, message.get("role"), f"{len(content):,}", f"{MAX_TEXT_CHARS:,}", f"{CUT_AT:,}")
    name = (message.get("name") or name) if message.get("role") == "tool" else None
    head = f"{name}: " if isinstance(name, str) and name else ""  # the result's memory is "name: text" (toolstate)
    return {**message, "content": cut_text(head + content, CUT_AT)[len(head):]}
