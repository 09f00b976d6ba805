"""What a MemoryStore is given, checked before anything changes: the scopes of an add, search or listing, an
episode id, a memory to add and a chunk's span.

Apart from the store because they are rules of the input, not of the search: the memory bank's rules
(sam_model.memory.rules) check a memory as the store does, and a stored entry read back from store.json
(sam_model.storeentry) checks its chunk's span by the same rule as an add. Each raises ValueError (TypeError for
what is no memory at all) in one line naming the argument, so a refused call changes nothing; a loaded save's
scopes that no call may name any more are warned of (flawed_scopes), not refused, so no memory is lost.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

import numpy as np

from sam_model.data.schema import Event
from sam_model.limits import check_text, scope_flaw

# The scope fields of every memory (an add's, a search's, each stored entry's and each Qdrant point's payload).
SCOPES = ("user_id", "agent_id", "run_id")
log = logging.getLogger(__name__)


def check_scopes(user_id: Any, agent_id: Any, run_id: Any) -> dict[str, str | None]:
    """The scopes of an add, search or listing, each a string or None (ValueError naming it otherwise): ``user_id=1``
    and ``user_id=True`` were one FAISS scope (equal keys) but two Qdrant payloads, and a store holding either saved
    a store.json its own load refused."""
    scopes = {"user_id": user_id, "agent_id": agent_id, "run_id": run_id}
    for name, v in scopes.items():
        if v is not None and not isinstance(v, str):
            raise ValueError(f"{name} must be a string (or None), got {type(v).__name__} {str(v)[:40]!r}")
    return scopes


def flawed_scopes(entries: Iterable[Any], where: str, what: str = "memories") -> None:
    """Log one warning line per scope value no call takes any more, whatever its flaw (:func:`scope_flaw`: a
    control character, taken until 2026-12-06; an invisible character, a form other than NFC or letters mixing
    scripts, each a look-alike of another id, until 2026-12-07) of a loaded save's memories (``entries``: their ids
    and scopes; or a replayed log's writes, ``what``), naming the file, the field and the value, and how to keep the
    memories. Not refused: that would lose them, and they stay listed and erasable by a read or delete naming the
    value as written (limits.check_scope's ``held``). Named for scope_flaw, the one rule it reports: its name until
    2026-12-07, unprintable_scopes, said control characters alone, and stays as another name of it so code
    importing it runs."""
    found: dict[tuple[str, str], dict] = {}
    for e in entries:
        for name in SCOPES:
            value = getattr(e, name)
            if isinstance(value, str) and scope_flaw(value) is not None:  # a chunk counted as its memory, by its id
                found.setdefault((name, value), {})[getattr(e, "parent", None) or e.id] = None
    for (name, value), held in found.items():
        flaw, ids = scope_flaw(value), list(held)
        log.warning("%s: %s %r of %d %s (the first %r) %s, which no add takes since %s: its memories are loaded, "
                    "and a read or delete naming it as written (get_all, search, history, delete_all) still reaches "
                    "them, as does get_all(all_scopes=True); to keep adding to them, add each again under a %s that "
                    "is taken (%s) and delete it by its id", where, name, value, len(ids), what, ids[0], flaw.what,
                    flaw.since, name, flaw.fix)


unprintable_scopes = flawed_scopes  # its name before 2026-12-07 (flawed_scopes' docstring), kept for imports


def check_episode(episode_id: Any, name: str = "episode_id") -> str | None:
    """An episode id: a string, or None (no episode; a search of every episode). ``True`` and ``1`` were one FAISS
    episode (equal dict keys) but two Qdrant payload values, and an index holding ``True`` saved a file its own load
    refused: episode ids are strings, as in the agent log (spec/agent-log.md) and every Event."""
    if episode_id is not None and not isinstance(episode_id, str):
        raise ValueError(f"{name} must be a string such as 'trip-17' (or None), got {type(episode_id).__name__} "
                         f"{str(episode_id)[:40]!r}: give the episode's id as a string")
    return episode_id


def chunk_problem(parent: Any, span: Any, content: str) -> str | None:
    """What a chunk's span must be, when it is not: a chunk's words are the last ``end - start`` characters of its
    content (MemoryStore.memory joins them at ``start``), so a span out of order, longer than the content, missing
    on a chunk or set on a whole memory stored fine and read back other words (or failed on read)."""
    if (span is None) != (parent is None):
        return "[start, end] on a chunk (one with a parent) and null on a whole memory"
    if span is not None and not 0 <= span[0] <= span[1] <= span[0] + len(content):
        return "[start, end] with 0 <= start <= end and end - start at most its content's length"
    return None


def check_memory(m: Any, name: str) -> None:
    """A memory to add: an id, a non-blank text within the limit, a kind, a step that is None or an int >= 0, and an
    episode that is a string (or None)."""
    for attr in ("id", "text", "kind") if not isinstance(m, Event) else ("text", "kind"):
        if not hasattr(m, attr):
            raise TypeError(f"{name} must be an Event or a MemoryRecord, got {type(m).__name__} (no '{attr}')")
    check_text(m.text, f"{name}.text")
    if not isinstance(m.kind, str) or not m.kind.strip():
        raise ValueError(f"{name}.kind must be a non-empty string, got {m.kind!r}")
    step = getattr(m, "step", None)
    if step is not None and (isinstance(step, bool) or not isinstance(step, (int, np.integer)) or step < 0):
        raise ValueError(f"{name}.step must be an integer >= 0 (or None), got {step!r}")
    if isinstance(m, Event) and (not isinstance(m.episode_id, str) or not m.episode_id):
        raise ValueError(f"{name}.episode_id must be a non-empty string, got {m.episode_id!r}")
    check_episode(getattr(m, "episode_id", None), f"{name}.episode_id")
    parent, span = getattr(m, "parent", None), getattr(m, "span", None)
    if parent is not None and (isinstance(parent, bool) or not isinstance(parent, (str, int))):
        raise ValueError(f"{name}.parent must be a memory id (a string or an integer) or None, got {parent!r:.60}")
    if span is not None and not (isinstance(span, (tuple, list)) and len(span) == 2 and all(
            isinstance(x, int) and not isinstance(x, bool) for x in span)):
        raise ValueError(f"{name}.span must be (start, end) or None, got {span!r:.60}")
    if (problem := chunk_problem(parent, span, getattr(m, "content", "") or m.text)) is not None:
        raise ValueError(f"{name}.span must be {problem}, got {span!r} (chunks come from "
                         "sam_model.data.chunks.chunk_records)")


__all__ = ["SCOPES", "check_episode", "check_memory", "check_scopes", "chunk_problem"]
