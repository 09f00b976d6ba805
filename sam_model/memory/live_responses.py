"""Where a scope's open turn of OpenAI Responses items is cut, and an item given again (sam_model.memory.live).

A Responses agent adds its items as it gets them: the user's message, then a response's output items one add each
(a preamble ``message``, "Let me look you up.", then its ``function_call``), the calls' outputs, the next request's
items. The reader (responses.read) joins an assistant message and the calls right after it into one turn, deciding
before the words; read an add at a time, the preamble was a turn of its own and the call decided at it, flagging a
value the user's last message gave (an observation to training). Items in an input list carry no response id, so
what closes every earlier turn is what the reader starts afresh at: a message item (of any role: a user's message,
the next response's words), or a call after an output (an ``mcp_call`` holds its output). An output stays in its
call's turn, as a Codex rollout's does (its items are Responses items, live.opens): the reader reads the lines it
shows by its call (numbered.mark). Reasoning and built-in tool items, which the reader counts, close nothing.

An item is told by its ``call_id`` (a call, an output) or its ``id`` (an output item: ``msg_...``, ``rs_...``): a
streaming agent adds it at ``response.output_item.added`` and again at ``.done``, and a sidecar may send an add
again or a response's output list after its items. A version of an item the open turn holds replaces it in its
place (:func:`revised`; its memory is updated, the read is the importer's of the last version); one equal to an item
a closed turn read (``facts["seen"]``, :func:`remember`) is dropped (:func:`retried`). Another version of an item of a
closed turn is read as it comes, a new item: a stream writes an item's versions before its next item, so it is
rather a later item of a reused id (an agent numbering its calls ``call_1`` in each response), which a refusal
would lose (Gemini CLI's message ids, unique, are refused so: live.rewritten). A message without an id (a user's bare
``{"role", "content"}``) cannot be told from the same words said again: it is read as it comes, as the importer
reads a log holding it twice (two messages); were it dropped by its words and place, the adds of a log holding an
item twice would differ from the log's import, and a user's "yes" said twice would be lost.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Container, Mapping
from typing import Any

from sam_model.data.formats import detect, responses
from sam_model.data.formats.base import TranscriptFormatError, text_of

FORMAT = "responses"
SEEN_ITEMS = 256  # items a scope's facts keep the key and digest of (:func:`remember`): a resend comes soon after
BARE_KEYS = {"role", "content", "type", "id", "status"}  # a bare message's fields (anything more: OpenAI chat's)
# the OpenAI Agents SDK's id of every item a model without item ids gave (Chat Completions, LiteLLM): no item's own.
# Told by it, a turn's every message and reasoning item were versions of its first (its preamble lost)
NO_ID = "__fake_id__"


def kind(x: Mapping[str, Any]) -> Any:
    return x.get("type", "message" if "role" in x else None)


def is_item(x: Any) -> bool:
    """Whether ``x`` is a Responses item, read as one where a scope's open turn is Responses items: a typed item, or
    a bare message of a Responses role and nothing of OpenAI chat's (``tool_calls``, a ``name``), which alone tells
    no format (detect: OpenAI chat). A bare message another API's reader reads (an Anthropic message's
    ``tool_use`` or ``tool_result`` blocks, Bedrock Converse's ``toolUse``) is that API's: read as a Responses item,
    its calls and results were lost (or it was refused as holding no text) after a Responses add."""
    if not isinstance(x, Mapping):
        return False
    if responses.sniff([x]):
        return True
    return x.get("role") in responses.ROLES and set(x) <= BARE_KEYS and x.get("type", "message") == "message" \
        and detect([x]) == "openai"


def key(x: Any) -> str | None:
    """What an item is told by (None: nothing): a call's or an output's ``call_id``, else its ``id`` (not the
    Agents SDK's placeholder, NO_ID, shared by all a model's items)."""
    if not isinstance(x, Mapping):
        return None
    k = kind(x)
    if k in (*responses.CALLS, *responses.OUTPUTS) and isinstance(x.get("call_id"), str) and x["call_id"]:
        return f"{'output' if k in responses.OUTPUTS else 'call'}:{x['call_id']}"
    return f"id:{x['id']}" if isinstance(x.get("id"), str) and x["id"] and x["id"] != NO_ID else None


def opens(turn: list[Any], line: Mapping[str, Any]) -> bool:
    """Whether ``line`` closes every turn before it: a message item, or a call after an output (or after an
    ``mcp_call``, which holds its output); a version of an item the turn holds never does (:func:`revised` puts it
    in its place)."""
    if _version(turn, line, ()) is not None:
        return False
    if kind(line) == "message":
        return True
    if kind(line) in (*responses.CALLS, "mcp_call"):
        last = next((kind(x) for x in reversed(turn) if isinstance(x, Mapping) and kind(x) in (
            "message", "mcp_call", *responses.CALLS, *responses.OUTPUTS)), None)
        return last in (*responses.OUTPUTS, "mcp_call")
    return False


def _version(turn: list[Any], x: Any, given: Container[int]) -> int | None:
    """The place in ``turn`` (an open turn's items, from the one that opened it) of the item ``x`` is a version of,
    None where ``x`` is an item of its own: the last item of its :func:`key`, except that an item told by its id
    after an output is a later response's (outputs are made after a response's items are written; a model numbering
    its items msg_1 in each response lost its preamble), and a call after the output of its call_id is a version only where it is equal to that call and an earlier add gave it (``given``: those
    places of ``turn``). A stream writes a call's versions before its output is made, so a call after it is a later
    call of a reused id (an agent numbering its calls call_1 in each response, as some do: read in the place of the
    first, both were lost, its output with it, where the importer reads both), or the same call sent again."""
    k = key(x)
    i = None if k is None else next((i for i in range(len(turn) - 1, -1, -1) if key(turn[i]) == k), None)
    if i is not None and k.startswith("id:") and any(kind(y) in responses.OUTPUTS for y in turn[i + 1:]
                                                      if isinstance(y, Mapping)):
        return None  # an output came after it: a later response's item of a reused id (msg_1 in each), its own
    if i is None or not k.startswith("call:") or all(key(y) != f"output:{k[5:]}" for y in turn[i + 1:]):
        return i
    return i if i in given and _digest(x) == _digest(turn[i]) else None


def revised(old: list[Any], new: list[Any]) -> tuple[list[Any], list[Any]]:
    """(``old``, the open turn's items, and ``new``, an add's) with each item given again in place of its earlier
    version in the same turn (:func:`_version`; the last version at the place of the first, as the importer reads
    the file that holds it once), the open turn's own list left as it is (a refused add leaves the turn). Only
    within a turn: an item of a key a turn before this one held (an add of a whole conversation whose agent
    reused its call ids) is an item of its own, as the importer reads it (one of an earlier add's closed turn sent
    again equal was dropped before: :func:`retried`)."""
    old, out = list(old), []
    turn = [(old, i) for i in range(len(old))]  # the places of the items of the turn the next item may join
    for x in new:
        items = [where[i] for where, i in turn]
        j = _version(items, x, {n for n, (where, _) in enumerate(turn) if where is old})
        if j is not None:
            where, i = turn[j]
            where[i] = x
            continue
        if items and opens(items, x):
            turn = []
        out.append(x)
        turn.append((out, len(out) - 1))
    return old, out


def joins(lines: list[Any], call: Any = None) -> bool:
    """Whether a call about to be made joins the assistant's words an open turn of Responses items ``lines`` ends in
    (responses.read reads a message and the calls right after it as one turn): given as a Responses call item
    (``function_call``, ``custom_tool_call``, ``mcp_call``), it does; as another API's typed call (OpenAI chat's
    ``{"type": "function", ...}``, an Anthropic ``tool_use``), its add is a message of that API, read apart after
    the words (ScopedMemory.add: no Responses item); given untyped (``{"name", "arguments"}``, or none: a
    decision_point), where the words are a response's output item (``"type": "message"``), not a bare ``{"role",
    "content"}``, which is OpenAI chat's shape too: a chat agent's words, then its tool_calls message."""
    calls = [call] if isinstance(call, Mapping) else list(call) if isinstance(call, (list, tuple)) else []
    typed = [c["type"] for c in calls if isinstance(c, Mapping) and "type" in c]
    if typed:
        return all(t in (*responses.CALLS, "mcp_call") for t in typed)
    last = next((x for x in reversed(lines) if isinstance(x, Mapping) and kind(x) == "message"), None)
    return isinstance(last, Mapping) and last.get("type") == "message"


def _digest(x: Any) -> str:
    return hashlib.sha1(json.dumps(x, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _entry(x: Any) -> str | None:
    """An item as ``facts["seen"]`` keeps it: its key's digest, then its own (None: an item of no key)."""
    k = key(x)
    return None if k is None else _digest(k) + _digest(x)


def _held(turn: list[Any]) -> set[str]:
    return {k for x in turn if (k := key(x)) is not None}


def retried(turn: list[Any], facts: Mapping[str, Any], new: list[Any]) -> list[Any]:
    """``new`` without the items a closed turn read already, equal (``facts["seen"]``): an add sent again, a
    response's output list sent after its items. Those of the open turn ``turn`` are :func:`revised`, and so is an
    output of a call the open turn or the add holds (a later call of a reused call_id, read: its output, equal to
    the earlier call's, is that call's, not one read before). A message item whose memory was deleted
    (``facts["gone"]``, :func:`deleted`) is dropped in every later version."""
    seen, held, out = set(facts.get("seen", ())), _held(turn), []
    gone = set(facts.get("gone", ()))
    for x in new:
        k = key(x)
        if k is not None and _digest(k) in gone:
            continue
        if k in held or _entry(x) not in seen or (k or "").startswith("output:") and f"call:{k[7:]}" in held:
            out.append(x)
            held |= {k} - {None}
    return out


def words(x: Any) -> str:
    """A message item's words as the reader reads them, its memory's (responses.to_chat: its text parts joined by
    newlines; '' for content it refuses): joined by nothing, a message of several parts matched no deleted memory,
    and its ``.done`` came back."""
    try:
        return text_of(x.get("content") if isinstance(x, Mapping) else None, "", responses.TEXT_PARTS)
    except TranscriptFormatError:
        return ""


def deleted(facts: dict[str, Any], turn: list[Any], said: str) -> None:
    """Keep in ``facts["gone"]`` (the digests of their keys, the last SEEN_ITEMS) the open turn ``turn``'s message
    items with an id whose words are ``said``, a memory of the turn being deleted: the delete closes the turn, and a
    streaming agent adds the item again at ``.done`` (its words complete), which, another version of an item of a
    closed turn, was read as a new item: the deleted preamble was back. Its id is the item's (``msg_...``), which
    Responses writes once, so every later version is dropped (:func:`retried`)."""
    said = said.strip()
    keys = [_digest(k) for x in turn if isinstance(x, Mapping) and kind(x) == "message"
            and (k := key(x)) is not None and k.startswith("id:") and said and words(x).strip() == said]
    if keys:
        facts["gone"] = [*facts.get("gone", ()), *keys][-SEEN_ITEMS:]


def check_gone(d: Any, name: str) -> list[str]:
    """A scope's saved ids of deleted items (:func:`deleted`, kept when its conversation went), else a ValueError
    naming ``name``."""
    if not (isinstance(d, list) and len(d) <= SEEN_ITEMS and all(isinstance(k, str) for k in d)):
        raise ValueError(f"{name} must be a list of up to {SEEN_ITEMS} digests (strings) of deleted Responses items")
    return d


def remember(facts: dict[str, Any], items: list[Any]) -> None:
    """Keep in ``facts["seen"]`` the key and digest of the last SEEN_ITEMS items read that have a key."""
    seen = [*facts.get("seen", ()), *(e for x in items if (e := _entry(x)) is not None)]
    facts["seen"] = seen[-SEEN_ITEMS:]
