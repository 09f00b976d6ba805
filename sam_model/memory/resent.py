"""Bedrock Converse messages an agent adds again whole: a Strands Agents hook adding ``agent.messages`` after each
invocation sends every earlier turn again with the new one.

Converse messages carry no message id, so nothing tells a message sent again from a new one that reads alike (a
user saying "yes" twice), and each add stored the earlier turns again (a claims agent: 24 memories for 11 after
three invocations). A tool call's ``toolUseId`` (and its result's) is written once by the model: an add that opens
with the scope's last add of Converse messages, whole and in order, where those hold a tool call or result by its
id, is that add sent again with what came since, and its start is dropped (:func:`repeated`). Without an id among
them (a first turn of words alone, a "yes" said again), or with ids that are the tools' names (Strands' Ollama and
Gemini models write those: the same id at each call of a tool), they are read as new, as before. The last add is kept as
(:func:`key` of its messages, how many), saved with the scope.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sam_model.data.formats import detect
from sam_model.memory.live import digest

FORMAT = "bedrock"


def key(items: Sequence[Any]) -> list[Any] | None:
    """What the scope keeps of an add of ``items`` to tell them again by ([digest, count]); None: they are not
    Converse messages (any other add forgets the last)."""
    if not items or detect(list(items)) != FORMAT or (told := _digest(items)) is None:
        return None
    return [told, len(items)]


def repeated(items: Sequence[Any], last: Sequence[Any] | None) -> int:
    """How many of ``items``' first messages are the scope's last add of Converse messages (``last``, its
    :func:`key`) sent again: all of them where ``items`` opens with them and they hold a tool call or result by its
    ``toolUseId``, else 0."""
    if last is None or key(items) is None or len(items) < last[1]:
        return 0
    head = list(items[:last[1]])
    names = {b["toolUse"]["name"] for m in head for b in _blocks(m)
             if isinstance(b.get("toolUse"), Mapping) and isinstance(b["toolUse"].get("name"), str)}
    return last[1] if _digest(head) == last[0] and any(_called(m, names) for m in head) else 0


def _digest(items: Sequence[Any]) -> str | None:
    """live.digest of ``items``, None where JSON cannot write them sorted (a dict of keys 1 and 'a' a Python agent
    built, a cycle): such an add is read as new, as before, where the digest's TypeError failed it (after it was
    stored, for the scope's key)."""
    try:
        return digest(list(items))
    except (TypeError, ValueError, RecursionError):
        return None


def _blocks(message: Any) -> list[Mapping]:
    """``message``'s Converse content blocks (none where it has no list of them)."""
    content = message.get("content") if isinstance(message, Mapping) else None
    return [b for b in content if isinstance(b, Mapping)] if isinstance(content, list) else []


def _called(message: Any, names: set[Any]) -> bool:
    """Whether ``message`` holds a Converse toolUse or toolResult block with a string ``toolUseId`` that is not a
    tool's name (``names``: those of the add's toolUse blocks): Strands' Ollama and Gemini models write it as the
    id, so the same id comes again with each call of the tool, and an invocation said again word for word (a
    question asked again, answered alike) was read as the last add sent again, and not stored."""
    return any(isinstance(block := b.get("toolUse") or b.get("toolResult"), Mapping)
               and isinstance(i := block.get("toolUseId"), str) and i != block.get("name") and i not in names
               for b in _blocks(message))


def check(d: Any, name: str) -> list[Any]:
    """A saved :func:`key` (``[digest, count]``), else a ValueError naming ``name``."""
    if not (isinstance(d, list) and len(d) == 2 and isinstance(d[0], str) and isinstance(d[1], int)
            and not isinstance(d[1], bool) and d[1] > 0):
        raise ValueError(f"{name} must be [digest, count] of the scope's last add of Converse messages")
    return d


__all__ = ["FORMAT", "check", "key", "repeated"]
