"""Messages an agent adds again whole: a Strands Agents hook adding ``agent.messages`` after each invocation, a
Pydantic AI agent adding ``result.all_messages()`` after each run (given ``message_history``, the earlier runs and
the new one), or an AutoGen agent adding its model context's messages (``save_state()``'s) after each run, sends
every earlier turn again with the new ones.

Converse and Pydantic AI messages carry no message id, so nothing tells a message sent again from a new one that
reads alike (a user saying "yes" twice), and each add stored the earlier turns again (a claims agent: 24 memories
for 11 after three invocations; a travel agent, 40 for 20 after three runs). Some of what they hold is written once:
a tool call's id (Converse's ``toolUseId``, Pydantic AI's ``tool_call_id``, and its result's), and a Pydantic AI
part's or message's ``timestamp`` (the time it was made, to the microsecond). The rule, one for both: an add that
opens with the scope's last add of such messages, whole and in order, where those hold something written once, is
that add sent again with what came since, and its start is dropped (:func:`repeated`). The last add is kept whole
(:func:`key` of all its messages, the start read once among them), so an add of the whole history after each run
opens with the last, which held every earlier one: the concatenation of what the scope stored of it. Without
anything written once among them (a first turn of words alone in Converse, a "yes" said again, a history written by
hand without times), or with ids that are the tools' names (Strands' Ollama and Gemini models write those: the same
id at each call of a tool), they are read as new, as before (but after an add read as new that opens
with no kept add, its whole conversation, an add going on past it: :func:`repeated`, :func:`new_mark`). New messages added alone, then the whole history, stored
the earlier ones again (but the first add's) until stop 64: the scope keeps a digest of all it was given, in order
(:func:`given`), and a history opening with all of it, holding something written once, is it sent again. Kept as (:func:`key` of its messages, how many), saved with the scope, and kept when the
scope's memories are all deleted (a history sent again then stays deleted). A Pydantic AI history compacted in a
run is read from after the turns it kept of the last add (:func:`compacted`). AutoGen's model context holds no
time either; what it writes once is a call's id (a FunctionCall's ``id``, a result's ``call_id``), and an
agentchat message's own ``id`` (TaskResult messages): an AutoGen conversation's whole context added after each
run stored the earlier runs again (an IT helpdesk conversation, 21 memories, stored 47 after three runs). A smolagents
agent's memory steps (``agent.memory.get_full_steps()``) carry each action's ``timing`` (its start time) and its calls'
ids, written once: its whole memory added after each run stored the earlier runs again too (an HR leave conversation,
15 memories, stored 33 after three runs). A LlamaIndex agent's memory (``[m.model_dump() for m in
memory.get_all()]``) holds no time; what it writes once is a call's id (a ``tool_call`` block's ``tool_call_id``, a
``tool`` message's ``additional_kwargs.tool_call_id``): a pharmacy refill conversation, 16 memories, stored 28 after
its two runs (one of three runs, 24 memories, stored 58).
OpenAI Chat Completions and Anthropic Messages carry no message id
either; what they write once is a tool call's id (OpenAI's ``tool_calls`` ``id``, ``call_...``, and its ``tool``
message's ``tool_call_id``; Anthropic's ``tool_use`` ``id``, ``toolu_...``, and its ``tool_result``'s
``tool_use_id``), and LangChain's messages hold their own ``id`` besides (a model's response id, the uuid
LangGraph's add_messages gives): an agent loop adding ``messages`` after each turn stored the earlier turns again
(9 memories for 5) until 2026-12-07. An add of a text (``add("...")``, a fact remembered) is no history: apart.

The scope keeps its last KEPT such adds, not the last alone (:func:`kept`): two runs of one conversation made at
once (two threads, each running the agent from the same history, each adding its whole history after its run) add
the history with each one's new turn, and the second opened with the history, not with the first's add, which held
the other run: its start was stored again. An add opening with any of them is read from after the longest.

Each kept add holds its format (:func:`key`), and so does what the scope was given (:func:`given`, one a format):
an add is read against its own format's alone (:func:`lane`; a key saved before 2026-12-07, of no format, is of
any). A scope given two formats (a Strands hook's Converse history added whole at each message, and between two
of its adds an MCP client's remember with OpenAI messages) kept one list: since OpenAI's rule the other
format's add, a kept add read as new, took the hook's adds' mark of the whole conversation (:func:`kept`) and joined
all the scope was given, and every later history of the hook was stored again (21 memories for 7; a hook adding
each message alone, then its whole history, 13 for 9). To another format's kept adds such an add is apart
(:func:`apart`): they keep their marks, the last of each format its own.

Two conversations of one format in a scope (two sessions of an OpenAI loop adding their whole histories to one
user's scope, or an OpenAI and an Anthropic loop) were one to it too: each one's add, read as new, took the other's
mark, and a history whose first turn was words alone stored them again at each later turn (18 memories for 12). A
history opening with its system message is a conversation from its start: its kept adds hold its opening
(:func:`opening`), and an add read as new takes the marks of its own opening's adds alone (:func:`kept`). So is a
history of two or more messages opening with the user's words (Anthropic's, Converse's: their system prompt is no
message; a Mem0-style add without one), told by them: two such loops, words alone, stored 24 memories for 12 until
the review of 2026-12-07. A message added alone tells no start (a first add of words alone, the run's messages,
then the same words again with the next run's: the words are stored again): read as new, it goes on from every
conversation of its format and takes their marks (a new session's ``[S, U1, B1]`` after ``[S, U1]`` went on a
message at a time was read as that add sent again, its U1 lost).

Responses items and Gemini contents (:data:`LIVE`) are read with a scope's open turn (sam_model.memory.live), which
drops an item told by its id that a closed turn read, but reads a user's bare message item, and every Gemini
content, as it comes: a whole input list or contents list added after each turn stored the earlier turns' messages
again (Responses 17 memories for 12, Gemini 19 for 10). An add of two or more of them that tells its format alone
follows the rule above (an item's ``id`` or ``call_id``, a Gemini call's ``id``, written once; words alone by the
mark), and the open turn reads the rest.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from sam_model.data.formats import detect, llamaindex
from sam_model.data.formats.langchain_messages import unwrap
from sam_model.memory.live import digest
from sam_model.memory.live_responses import NO_ID

FORMATS = ("bedrock", "pydantic-ai", "autogen", "smolagents", "llamaindex", "openai", "anthropic", "langchain", "adk",
           "responses", "gemini", "agent-framework")
LIVE = ("responses", "gemini")  # of FORMATS, those a scope's open turn reads (sam_model.memory.live): it reads the rest
KEPT = 8  # adds a scope keeps the key of (:func:`kept`): a run made at once with another adds soon after it
TAIL = 256  # messages of the last add of a TAILED format a scope keeps the digest of, one each (:func:`compacted`)
OPENING = "opening:"  # a kept add's opening digest begins so (:func:`opening`), told from its format after it
TAILED = ("pydantic-ai", "llamaindex")  # the formats whose last add's TAIL a scope keeps, for :func:`compacted`
# an add's note (:func:`note`): the format's messages, and what told them
NAMES = {"bedrock": ("Converse", "their tool calls by toolUseId"),
         "pydantic-ai": ("Pydantic AI", "told by their timestamps or tool_call_ids"),
         "autogen": ("AutoGen", "told by their call ids"),
         "smolagents": ("smolagents", "told by their timings or call ids"),
         "llamaindex": ("LlamaIndex", "told by their call ids"),
         "openai": ("OpenAI chat", "told by their tool call ids"),
         "anthropic": ("Anthropic", "told by their tool_use ids"),
         "langchain": ("LangChain", "told by their message or tool call ids"),
         "adk": ("Google ADK", "told by their event ids"),
         "responses": ("Responses", "told by their item or call ids"),
         "gemini": ("Gemini", "told by their function call ids"),
         "agent-framework": ("Agent Framework", "told by their message or call ids")}


def key(items: Sequence[Any], whole: bool = False) -> list[Any] | None:
    """What the scope keeps of an add of ``items`` to tell them again by ([digest, count], ``true`` after them
    where ``whole``: the add held its format's whole conversation in the scope, from its first message; then the
    format, :func:`lane`); None: they are no agent history's messages (:data:`FORMATS`; any other add takes the
    older kept adds' marks: :func:`apart`)."""
    if not items or (fmt := detect(list(items))) not in FORMATS or (told := _digest(items)) is None:
        return None
    end = [*([o] if (o := opening(items, fmt)) else []), fmt]
    if fmt in TAILED and None not in (tail := [_one(m) for m in items[-TAIL:]]):
        return [told, len(items), whole, tail, *end]  # its last messages one by one, for a compaction's (compacted)
    return [told, len(items), *[True] * whole, *end]


def opening(items: Sequence[Any], fmt: str) -> str | None:
    """The conversation an add of ``items`` (of format ``fmt``) is the whole history of, where it tells: its system
    messages and the message after them, digested (:data:`OPENING` first); None where it opens with no system
    message (or holds nothing after them). A history opening with its system message is a conversation from its
    start, no message added alone: two loops of one agent in one scope (two sessions, each adding its whole history
    after each turn) each keep their own mark of their whole conversation (:func:`kept`). Without one (Anthropic's
    and Converse's system prompts are no message) two or more messages opening with the user's words (not a
    result of theirs) are told by those words (:data:`_USER`): two such loops shared one mark, 24 memories for 12.
    A message added alone tells none: one mark for all, as before (:func:`kept`)."""
    system = _SYSTEM.get(fmt)
    if system is None or not system(items[0]):
        user = _USER.get(lane(fmt))
        if user is None or len(items) < 2 or not user(items[0]) or _once(list(items[:1])):
            return None
        told = _digest(list(items[:1]))  # the user's first words (_USER)
        return None if told is None else OPENING + told[:16]
    j = next((i for i, m in enumerate(items) if not system(m)), None)
    told = None if j is None else _digest(list(items[:j + 1]))
    return None if told is None else OPENING + told[:16]


def opening_of(k: Sequence[Any]) -> str | None:
    """The opening (:func:`opening`) a kept add (:func:`key`) holds before its format; None: none (or a key saved
    before 2026-12-07's openings)."""
    return k[-2] if len(k) > 3 and isinstance(k[-2], str) and k[-2].startswith(OPENING) else None


def lane(fmt: str | None) -> str | None:
    """The kept adds an add of format ``fmt`` is read against: those of its format. Anthropic's and OpenAI's are
    one: detect reads an Anthropic history's first words (a string, or text blocks) as OpenAI chat, its first
    ``tool_use`` as Anthropic's, and its whole history, opening with its first add, is told by it."""
    return "openai" if fmt == "anthropic" else fmt


def format_of(k: Sequence[Any]) -> str | None:
    """The format of a kept add (:func:`key`) or of what a scope was given of one (:func:`given`); None: saved
    before 2026-12-07, of the format of any add (as when the scope kept one list)."""
    return k[-1] if len(k) > 2 and isinstance(k[-1], str) else None


def mine(kept: Sequence[Any] | None, items: Sequence[Any] | str | None) -> list[Any]:
    """The kept adds (or what the scope was given, a format each) an add of ``items`` (or of that format) is read
    against: those of its :func:`lane` and those of no format."""
    fmt = items if isinstance(items, str) or items is None else detect(list(items))
    return [k for k in kept or () if _ours(k, fmt)]


def _tag(k: Sequence[Any]) -> list[str]:
    """A kept add's opening (:func:`opening_of`) and format as the end of a key ([] where it has none)."""
    return [] if (fmt := format_of(k)) is None else [*([o] if (o := opening_of(k)) else []), fmt]


def whole(last: Sequence[Any] | None) -> bool:
    """Whether the kept add ``last`` (:func:`key`) held the scope's whole conversation."""
    return last is not None and len(last) > 2 and last[2] is True


def compacted(items: Sequence[Any], kept: Sequence[Any] | None) -> tuple[int, int] | None:
    """Where ``items``, a Pydantic AI history compacted in a run (its start replaced by messages holding a
    ``compaction`` summary, then the turns it kept, then the run's), holds the last messages of the scope's last
    add sent again, as (where they start: after the summary's messages, how many; None: it does not). The kept
    turns are the end of the history the run was given, the last add, which each is told by (its digest, one each:
    :func:`key`), where they hold something written once (a timestamp). The add opened with no kept add, and the
    turns were stored again (the travel walkthrough's second run, 8 memories, twice). A LlamaIndex history trimmed
    at its start (``ChatMemoryBuffer.get()`` past its token limit) keeps no summary: it opens with the end of the
    last add, told by a call's id among them, and was stored again from there (where 0: from the add's start)."""
    if not items or not any(len(k) > 3 and isinstance(k[3], list) for k in kept or ()):  # no tail: no detect
        return None
    kept = mine(kept, fmt := detect(list(items)))
    last = kept[-1] if kept else None
    if last is None or len(last) < 4 or not isinstance(last[3], list) or fmt not in TAILED:
        return None
    c = next((i for i, m in enumerate(items) if not _compaction(m)), len(items)) if fmt == "pydantic-ai" else 0
    tail = last[3]
    told = [_one(m) for m in items[c:c + len(tail)]]
    for k in range(len(told), 0, -1):
        if told[:k] == tail[-k:] and _once(list(items[c:c + k])):
            return (c, k) if c or fmt == "llamaindex" else None
    return None


def _compaction(message: Any) -> bool:
    """Whether a Pydantic AI message holds a ``compaction`` part (a summary of the messages it replaced)."""
    parts = message.get("parts") if isinstance(message, Mapping) else None
    return isinstance(parts, list) and any(isinstance(p, Mapping) and p.get("part_kind") == "compaction"
                                           for p in parts)


def _one(message: Any) -> str | None:
    """A message's own digest (:func:`_digest`, shortened), kept for :func:`compacted`."""
    told = _digest([message])
    return None if told is None else told[:16]


def repeated(items: Sequence[Any], kept: Sequence[Any] | None) -> list[Any] | None:
    """Which of the scope's last adds of agent histories' messages (:data:`FORMATS`) (``kept``, their :func:`key`, newest last)
    ``items`` open with, sent again (the longest; None: none): one ``items`` opens with where it holds something
    written once (:func:`_once`). A kept add that held the scope's whole conversation (:func:`whole`) is sent again
    too where more follows it: a hook adding the whole history at each message (Strands' MessageAddedEvent adding
    ``agent.messages``) adds the user's first message alone, words with nothing written once, then again with the
    model's call; it was stored twice. Read as new, such an add would hold the whole conversation said again from
    its first message, every reply with it, word for word, then more (:func:`_over`). A "yes" said again after it
    is still new: an add of it alone holds no rest. Those of its format alone (:func:`mine`), and for Responses
    items OpenAI chat's too: a list's first bare messages read as OpenAI chat, so an agent adding its whole input
    list at each message (before its first response, then with it) stored its first words twice."""
    if not kept or (fmt := detect(list(items))) not in FORMATS:  # told once: a 2,000-message history's takes ~11 ms
        return None
    told: dict[int, str | None] = {}  # each start's digest, made once
    chat = [k for k in kept if fmt == "responses" and lane(format_of(k)) == "openai"]
    for last in sorted([*mine(kept, fmt), *chat], key=lambda k: -k[1]):
        n = last[1]
        if len(items) < n:
            continue
        head, rest = list(items[:n]), list(items[n:])
        if n not in told:
            told[n] = _digest(head)
        if told[n] == last[0] and (_once(head) or _over(last, rest)):
            return last
    return None


def _over(last: Sequence[Any], rest: list[Any]) -> bool:
    """Whether an add opening with the kept add ``last`` is it sent again by its mark alone: ``last`` held the
    scope's whole conversation (:func:`whole`) and the add goes on past it. Until stop 63 the rest had to hold
    something written once or go on in turn (its first message the other side's), and a history of words alone
    whose messages do not alternate (two of the user's in a row, two replies in a row), added whole at each
    message, was stored again at every message until a call came (55 memories for 10): read as new, either add
    holds the whole conversation said twice in a row, word for word, which no user says."""
    return whole(last) and bool(rest)


def kept(before: Sequence[Any] | None, sent: list[Any], again: bool = True) -> list[list[Any]]:
    """The scope's kept adds (:func:`repeated`) after an add whose :func:`key` is ``sent``: the last KEPT of its
    format (:func:`mine`), the oldest of the conversation (:func:`opening`) that holds most going first: a session
    adding its whole history at each message pushed another's last add out after 8 messages, and the other's next
    history was stored again whole, ids and all. An add that is no kept add sent again (``again`` false) takes the
    older ones' mark of the scope's whole conversation (:func:`whole`), those of its own opening: the conversation
    went on past them, so an add opening with one of them is no longer its whole history sent again but may be its
    opening said again (a first add of the user's words alone, the run's messages added after it, then the same
    words with the next run's: until stop 63 the words were dropped); one of no opening that is its format's whole
    conversation (a message added alone) takes every opening's, as it tells none. Another format's kept adds are
    no part of that conversation: to them the add is apart
    (:func:`apart`, the last of each keeps its mark; until 2026-12-07 an OpenAI add took a Converse hook's)."""
    fmt, before = format_of(sent), list(before or ())
    others = iter(apart([k for k in before if not _ours(k, fmt)]))
    out = []
    for k in before:
        if not _ours(k, fmt):
            out.append(next(others))
        elif k[:2] != sent[:2]:
            # a conversation of another opening keeps its mark (opening); the last add's tail alone is kept
            out.append(k[:2] + [True] * (whole(k) and (again or opening_of(k) != opening_of(sent) and not (
                opening_of(sent) is None and whole(sent)))) + _tag(k))
    ours = [k for k in out if _ours(k, fmt)]
    for _ in range(len(ours) + 1 - KEPT):  # past KEPT of its format, the oldest of the opening kept most go
        count = Counter(opening_of(k) for k in [*ours, sent])
        # after an add of no opening (a message alone, of every conversation: above) the oldest, as before openings
        most = max(count.values()) if opening_of(sent) is not None else None
        k = next(k for k in ours if most is None or count[opening_of(k)] == most)
        ours.remove(k)
        out.remove(k)
    return [*out, sent]


def _ours(k: Sequence[Any], fmt: str | None) -> bool:
    """Whether the kept add ``k`` is read with adds of format ``fmt``: of its :func:`lane`, or of no format."""
    return format_of(k) is None or lane(format_of(k)) == lane(fmt)


def went_on(before: Sequence[Any], fmt: str | None, keep: Sequence[Sequence[Any]] = ()) -> list[list[Any]]:
    """The kept adds (:func:`kept`) after the scope was given more messages of format ``fmt`` (:func:`given`): a
    message added alone (a kept add of one message, which tells no conversation: :func:`opening`) stands for the
    scope's whole conversation no longer, as that conversation, or another, went on past it. Kept, an add opening
    with its words and going on was read as it sent again (:func:`_over`), and another conversation's first words
    were lost (until the live leftovers of 2026-12-07): ``[Hi]`` added alone, an Agents SDK answer added after it,
    then a new session's list opening with its own ``Hi``; or ``[Hi]``, another conversation's ``[ok, Done.]``,
    then that one's ``[Hi, Which one?]``. A hook adding its whole history at each message, another conversation's
    add between its first message and its second, stores that first message twice: a duplicate, where the other
    reading lost words. Those in ``keep`` (by digest and count) keep their marks: the add that gave the messages
    and the kept add it went on from (:func:`repeated`; a run retried, or one made at once from the same history).
    The marks a Responses add reads are OpenAI chat's too (:func:`repeated`), as its chain goes on from theirs."""
    lanes, kept_now = {lane(fmt), *(["openai"] if fmt == "responses" else [])}, [k[:2] for k in keep]
    return [k[:2] + _tag(k) if k[1] == 1 and whole(k) and lane(format_of(k)) in lanes and k[:2] not in kept_now
            else list(k) for k in before]


def dropped(before: Sequence[Any]) -> list[list[Any]]:
    """The kept adds (:func:`kept`) of a scope whose memories were all deleted: the last alone keeps its mark of the
    scope's whole conversation (:func:`whole`). An agent adding its whole history still holds the deleted turns, and
    its next add opens with its last add, which held every earlier one; an older add stood for the conversation
    only until the next went on from it (two runs made at once). Kept, a new conversation added an exchange at a
    time (or a message at a time: in another scope's words, a greeting) that opened with the deleted
    conversation's first add, going on past it, lost its opening, read as that add sent again (until stop 63).
    The last of each format (:func:`lane`; of none, saved before 2026-12-07) and conversation (:func:`opening`)
    keeps it: each agent, and each session of one, holds its own."""
    openings = {opening_of(k) for k in before}
    last = {(lane(format_of(k)), _conversation(k, openings)): i for i, k in enumerate(before)}.values()
    return [k if i in last else k[:2] + _tag(k) for i, k in enumerate(before)]


def _conversation(k: Sequence[Any], openings: set[str | None]) -> str | None:
    """The opening of the conversation the kept add ``k`` is of: its own (:func:`opening`), or for a message added
    alone, the user's first words (which tell none alone), the opening of a later add of two or more it opened."""
    if (o := opening_of(k)) is not None or k[1] != 1:
        return o
    return alone if (alone := OPENING + k[0][:16]) in openings else None


def apart(before: Sequence[Any]) -> list[list[Any]]:
    """The kept adds (:func:`kept`) after an add of other items to the scope (a fact as text, OpenAI messages, an
    agent-log event, an agent's session lines): as after a delete (:func:`dropped`), the last alone still stands for
    the whole conversation the agent holds, which such an add is no part of; the others are told by what they hold
    written once. Until stop 64 such an add forgot them, and a Strands hook's whole history after the next
    invocation, opening with its last add, its calls by their toolUseIds, stored every earlier turn again (a fact
    remembered between two invocations of a claims agent: 13 memories for 9); until the review of stop 64 it took
    the last's mark too, and a hook's history of words alone was read as new at every later message, the whole
    conversation stored again each time (21 memories for 7)."""
    return dropped(before)


def new_mark(items: Sequence[Any], kept: Sequence[Any] | None) -> bool:
    """Whether an add of ``items`` read as new stands for the scope's whole conversation (:func:`whole`): it opens
    with none of the scope's kept adds. A new session's first message in a scope by user alone, its hook adding
    the whole history at each message, was no mark (only the scope's first add was), and each message of the
    second conversation was stored again at every later message (14 memories for 8). One opening with a kept add
    is a "yes" said again (added alone twice, then with its reply: each stored). Those of its format alone
    (:func:`mine`): the first add of another format than the scope's (an MCP client's remember with OpenAI messages
    beside a Converse hook) is its format's whole conversation. So is one that tells its conversation
    (:func:`opening`) and goes on past a kept add of that opening it opens with (whatever lone message it opens
    with too): that conversation's history gone on, read as new where a message added alone took the kept add's
    mark (:func:`kept`). No mark, each later history of it was stored again whole until a call came (a loop of
    words alone and one message of another conversation added between its adds, 21 memories for 9; a second
    hook conversation opening with the first's "Hi", 21 for 6). Marked, losing words would take a later add
    opening with the whole of it, three or more messages word for word, and going on."""
    if not kept:  # no detect: the scope's first add of a history
        return True
    told: dict[int, str | None] = {}
    opens = [k for k in mine(kept, items) if len(items) >= k[1] and told.setdefault(
        k[1], _digest(list(items[:k[1]]))) == k[0]]
    if not opens:
        return True
    own = opening(items, fmt) if (fmt := detect(list(items))) in FORMATS else None
    return own is not None and any(opening_of(k) == own and k[1] < len(items) for k in opens)


def given(before: Sequence[Any] | None, items: Sequence[Any], fmt: str) -> list[list[Any]] | None:
    """What a scope keeps of the messages it was given, in order, after it takes ``items`` (an add's, or the rest
    of one read from after a kept add) of format ``fmt``: [a digest of them all, how many, the format] for each
    format (:func:`lane`), this one's chained from ``before``'s (none yet, or one of no format: saved before
    2026-12-07) message by message, so that :func:`opens_with_given` tells a history opening with them without
    their words. Another format's messages are not chained in (an OpenAI message an MCP client remembered between
    a Converse agent's messages and its whole history: until 2026-12-07 every message was stored again). None of
    this format where a message has no digest (:func:`_digest`), or none was given: ``["", 0]`` (a scope holding
    none, loaded from a save before stop 64, its last add retried) was saved, refused at load
    (:func:`check_given`), and the memory no longer loaded. Responses items first given chain on from OpenAI chat's:
    an Agents SDK session's first add is the user's bare message, which tells OpenAI chat alone, and a whole list
    of a model without item ids (``__fake_id__``) added again opened with no chain of its format (its answers
    stored again)."""
    own = mine(before, fmt) or (mine(before, "openai") if fmt == "responses" else [])
    told = _chained(own[-1][:2] if own else None, items)
    out = [*(g for g in before or () if not _ours(g, fmt)), *([[*told, fmt]] if told else [])]
    return out or None


def _chained(before: Sequence[Any] | None, items: Sequence[Any]) -> list[Any] | None:
    """[digest, count] of the messages ``before`` told ([digest, count], None: none) and ``items``, chained message
    by message; None where a message has no digest (:func:`_digest`) or there is none."""
    told, n = (before[0], before[1]) if before else ("", 0)
    for m in items:
        if (one := _digest([m])) is None:
            return None
        told, n = hashlib.sha1(f"{told}{one}".encode()).hexdigest(), n + 1
    return [told, n] if n else None


def opens_with_given(items: Sequence[Any], kept: Sequence[Any] | None, more_than: int = 0) -> int:
    """How many of ``items``' first messages are the messages the scope was given (``kept``: :func:`given`), all of
    them, in order, holding something written once (:func:`_once`); 0: they are not. An agent adding each message
    as it comes (a Strands hook adding ``[event.message]``, Pydantic AI's ``new_messages()`` of each run), then its
    whole history, sent it opening with no kept add (each held one message or one run): every earlier message
    but the first add's was stored again, until stop 64. Words alone hold nothing written once (the user could
    say them all again): read as new, as before. What it was given of the add's format (:func:`mine`). 0 where it
    was given no more than ``more_than`` (what :func:`repeated` read): not chained, the common add of a whole history
    sent again (all given its last add) chained every message for nothing (~30 ms of ~115 for 2,000 messages)."""
    if not kept:  # told before the format: a whole history's detect is the add's cost (opens_with_given's)
        return 0
    fmt = detect(list(items))
    own = mine(kept, fmt)
    if not own or len(items) < own[-1][1] or own[-1][1] <= more_than or fmt not in FORMATS:
        return 0
    n, head = own[-1][1], list(items[:own[-1][1]])
    return n if _chained(None, head) == own[-1][:2] and _once(head) else 0


def check_given(d: Any, name: str) -> list[list[Any]]:
    """A scope's saved :func:`given` ([digest, count, format] a format; saves before 2026-12-07 hold one,
    [digest, count], of no format), else a ValueError naming ``name``."""
    if isinstance(d, list) and d and isinstance(d[0], str):
        d = [d]
    if not (isinstance(d, list) and d and all(isinstance(g, list) and _formatted(g, name, i) and len(g) == 2 + (
            format_of(g) is not None) and isinstance(g[0], str) and isinstance(g[1], int) and not isinstance(
            g[1], bool) and g[1] > 0 for i, g in enumerate(d))):
        raise ValueError(f"{name} must be [digest, count] of the messages the scope was given (then their format), "
                         "or a list of those, one a format")
    _one_a_format(d, name, 1)
    return d


def note(items: Sequence[Any], again: int, latest: bool | None = True, at: int = 0, end: bool = False) -> str:
    """An add's note that its first ``again`` messages (:func:`repeated`: the scope's last add where ``latest``,
    else one of its last KEPT; None: all it was given, :func:`opens_with_given`), or those from ``at`` on
    (:func:`compacted`; ``end``: the end of the last add, opening a history trimmed), were read once: what told them, their
    ids or times, or where they hold none, that they were the scope's whole conversation (said told by ids it had
    none of until stop 63)."""
    name, told = NAMES[fmt := detect(list(items))]
    if not at and not end and not _once(list(items[:again])):
        told = "the scope's whole conversation, which the add goes on from"
    which = "the scope's last add" if latest else f"one of the scope's last {KEPT} adds"
    if latest is None:
        which = "all the scope was given"
    if at:
        which = "the end of the scope's last add, kept after a compaction"
    elif end:
        which = "the end of the scope's last add (the history trimmed before it)"
    said = {"responses": "items", "gemini": "contents"}.get(fmt, "messages")
    return f"data[{at}:{at + again}]: {which} of {name} {said} ({told}), sent again: read once, not stored again"


def alone_kept(items: Sequence[Any], kept: Sequence[Any] | None) -> bool:
    """Whether an add of Responses items or Gemini contents (:data:`LIVE`) is kept (:func:`key`) among the scope's
    ``kept`` adds: two or more, or one holding no id written once (:func:`_once`) where it keeps none of its format
    (:func:`mine`). A whole contents list added at each message opens with its first content alone, which was not
    kept, so the user's first words were stored twice. One added between two lists (another component's) is apart,
    as before, the last list keeping its mark; an item holding an id, said again alone, is a new call where the
    agent reuses its call ids (read by the open turn, not as sent again). Nor is one item of the Agents SDK's
    placeholder id (NO_ID): no id written once (:func:`_responses_once`), but no list's first either (an input list
    opens with the user's words); kept, a model's answer without ids, then a response opening with the same words
    before its call, was read as that answer sent again, its words lost."""
    return len(items) > 1 or not _once(list(items)) and not mine(kept, items) and not _placeholder(items)


def _placeholder(items: Sequence[Any]) -> bool:
    """Whether ``items`` hold an item of the Agents SDK's placeholder id (NO_ID)."""
    return any(isinstance(m, Mapping) and m.get("id") == NO_ID for m in items)


def _once(head: list[Any]) -> bool:
    """Whether ``head`` holds something its agent wrote once: a Converse tool call or result by its ``toolUseId``
    (:func:`_called`), a Pydantic AI one by its ``tool_call_id`` (not the tool's name either), or a Pydantic AI
    part's or message's ``timestamp`` (Pydantic AI stamps each when made; a prompt said again is stamped anew)."""
    fmt = detect(head)
    if fmt == "autogen":
        return _autogen_once(head)
    if fmt == "smolagents":
        return _smolagents_once(head)
    if fmt == "llamaindex":
        return _llamaindex_once(head)
    if fmt in _CALL_IDS:
        return any(_CALL_IDS[fmt](m) for m in head if isinstance(m, Mapping))
    if fmt != "pydantic-ai":
        names = {b["toolUse"]["name"] for m in head for b in _blocks(m)
                 if isinstance(b.get("toolUse"), Mapping) and isinstance(b["toolUse"].get("name"), str)}
        return any(_called(m, names) for m in head)
    parts = [p for m in head if isinstance(m, Mapping) and isinstance(m.get("parts"), list)
             for p in m["parts"] if isinstance(p, Mapping)]
    return any(isinstance(x.get("timestamp"), str) and x["timestamp"] for x in (*head, *parts)
               if isinstance(x, Mapping)) or any(
        isinstance(i := p.get("tool_call_id"), str) and i and i != p.get("tool_name") for p in parts)


def _autogen_once(head: list[Any]) -> bool:
    """Whether AutoGen messages hold an id written once: a FunctionCall's ``id`` or a result's ``call_id`` that is
    not its tool's name, or an agentchat message's own ``id`` (a uuid each)."""
    items = [x for m in head if isinstance(m, Mapping) and isinstance(m.get("content"), list)
             and m.get("type") in ("AssistantMessage", "FunctionExecutionResultMessage", "ToolCallRequestEvent",
                                   "ToolCallExecutionEvent") for x in m["content"] if isinstance(x, Mapping)]
    return any(isinstance(i := x.get("id", x.get("call_id")), str) and i and i != x.get("name") for x in items) or any(
        isinstance(m, Mapping) and "source" in m and m.get("type") not in ("UserMessage", "AssistantMessage")
        and isinstance(m.get("id"), str) and m["id"] for m in head)


def _smolagents_once(head: list[Any]) -> bool:
    """Whether smolagents steps hold something written once: an action's or plan's ``timing`` (its start time, to the
    microsecond) or a tool call's ``id``."""
    steps = [m for m in head if isinstance(m, Mapping)]
    return any(isinstance(m.get("timing"), Mapping) and isinstance(m["timing"].get("start_time"), (int, float))
               for m in steps) or any(isinstance(c, Mapping) and isinstance(c.get("id"), str) and c["id"]
                                      for m in steps if isinstance(m.get("tool_calls"), list) for c in m["tool_calls"])


def _llamaindex_once(head: list[Any]) -> bool:
    """Whether LlamaIndex messages hold a call's id written once: a ``tool_call`` block's ``tool_call_id`` that is not
    its tool's name, or a tool message's ``additional_kwargs.tool_call_id`` that is none of the add's tools' names,
    those of its blocks and of the calls in ``additional_kwargs.tool_calls`` (Ollama's integration, which gives no
    id, names each call's result by its tool: a question asked again, answered alike, added alone, was read as the
    last add sent again where its calls were only there, before ``ToolCallBlock``)."""
    blocks = [b for m in head if isinstance(m, Mapping) and isinstance(m.get("blocks"), list) for b in m["blocks"]
              if llamaindex.is_call_block(b)]
    names = {b.get("tool_name") for b in blocks} | {_call_name(c) for m in head if isinstance(m, Mapping) and isinstance(
        kw := m.get("additional_kwargs"), Mapping) and isinstance(kw.get("tool_calls"), list) for c in kw["tool_calls"]}
    return any(isinstance(i := b.get("tool_call_id"), str) and i and i not in names for b in blocks) or any(
        isinstance(m, Mapping) and isinstance(kw := m.get("additional_kwargs"), Mapping)
        and isinstance(i := kw.get("tool_call_id"), str) and i and i not in names for m in head)


def _call_name(call: Any) -> str | None:
    """The tool a call in a LlamaIndex message's ``additional_kwargs.tool_calls`` names (the OpenAI SDK's or Ollama's
    ``function.name``, a ``ToolSelection``'s ``tool_name``, Anthropic's or Converse's ``name``)."""
    if not isinstance(call, Mapping):
        return None
    function = call.get("function")
    name = function.get("name") if isinstance(function, Mapping) else call.get("tool_name", call.get("name"))
    return name if isinstance(name, str) else None  # a set holds it: a name that is a list was a TypeError


def _id(i: Any, name: Any) -> bool:
    """Whether ``i`` is an id written once: a string, not empty, not the tool's ``name`` (a model that writes the
    tool's name as the id writes the same at each call of it, as Strands' Ollama and Gemini models do: :func:`_called`)."""
    return isinstance(i, str) and bool(i.strip()) and i != name


def _openai_once(m: Mapping[str, Any]) -> bool:
    """Whether an OpenAI chat message holds a tool call's ``id`` (``call_...``, the API writes one each call) or is
    a ``tool`` message of its result (``tool_call_id``). The deprecated ``function_call`` carries none."""
    calls = m.get("tool_calls")
    return any(isinstance(c, Mapping) and _id(c.get("id"), (c.get("function") or {}).get("name")
                                              if isinstance(c.get("function"), Mapping) else None)
               for c in (calls if isinstance(calls, list) else ())) or (
        m.get("role") == "tool" and _id(m.get("tool_call_id"), m.get("name")))


def _anthropic_once(m: Mapping[str, Any]) -> bool:
    """Whether an Anthropic message holds a ``tool_use`` block (its ``id``, ``toolu_...``) or a ``tool_result``
    (its ``tool_use_id``)."""
    blocks = [b for b in (m.get("content") if isinstance(m.get("content"), list) else ()) if isinstance(b, Mapping)]
    return any(b.get("type") in ("tool_use", "server_tool_use") and _id(b.get("id"), b.get("name"))
               or b.get("type") == "tool_result" and _id(b.get("tool_use_id"), None) for b in blocks)


def _responses_once(m: Mapping[str, Any]) -> bool:
    """Whether a Responses item holds an id the API writes once: an output item's ``id`` (``msg_...``, ``fc_...``,
    ``rs_...``) or a call's or output's ``call_id``. A user's bare message holds none, nor does an item of the Agents
    SDK's placeholder id (NO_ID: every item of a model without ids holds it; a new session's list opening with
    another's words was read as the scope's items sent again, and lost)."""
    return _id(m.get("id"), None) and m["id"] != NO_ID or _id(m.get("call_id"), m.get("name"))


def _gemini_once(m: Mapping[str, Any]) -> bool:
    """Whether a Gemini content holds a ``functionCall`` or ``functionResponse`` with its ``id`` (the API writes one
    each call in its newer versions; most contents hold none)."""
    parts = m.get("parts") if isinstance(m.get("parts"), list) else ()
    return any(isinstance(p, Mapping) and isinstance(f := p.get("functionCall", p.get("function_call", p.get(
        "functionResponse", p.get("function_response")))), Mapping) and _id(f.get("id"), f.get("name")) for p in parts)


def _langchain_once(m: Mapping[str, Any]) -> bool:
    """Whether a LangChain message holds its own ``id`` (a model's response id on an AIMessage, the uuid LangGraph's
    add_messages gives each message), a tool call's ``id`` or a ToolMessage's ``tool_call_id``."""
    read = unwrap(m)
    if read is None:
        return False
    data = read[1]
    calls = data.get("tool_calls")
    return _id(data.get("id"), None) or _id(data.get("tool_call_id"), data.get("name")) or any(
        isinstance(c, Mapping) and _id(c.get("id"), c.get("name")) for c in (calls if isinstance(calls, list) else ()))


def _adk_once(m: Mapping[str, Any]) -> bool:
    """Whether a Google ADK event holds its own ``id`` (a uuid ADK gives each event): a session's events added whole
    after each turn stored the earlier turns again."""
    return _id(m.get("id"), None)


def _agent_framework_once(m: Mapping[str, Any]) -> bool:
    """Whether an Agent Framework message (``Message.to_dict()``) holds its own ``message_id`` (a model's response
    writes one) or a function call's or result's ``call_id`` (or the framework's ``af-call-...`` ``id`` of it): the
    run's messages stored after each run, given again, were stored again."""
    contents = m.get("contents") if isinstance(m.get("contents"), list) else ()
    return _id(m.get("message_id"), None) or any(
        isinstance(c, Mapping) and c.get("type") in ("function_call", "function_result")
        and (_id(c.get("call_id"), c.get("name")) or _id(c.get("id"), c.get("name"))) for c in contents)


# the formats whose messages each tell alone whether they hold an id written once (:func:`_once`)
_CALL_IDS = {"openai": _openai_once, "anthropic": _anthropic_once, "langchain": _langchain_once, "adk": _adk_once,
             "responses": _responses_once, "gemini": _gemini_once, "agent-framework": _agent_framework_once}
# whether a message of each format whose system messages are messages is one (:func:`opening`)
_SYSTEM = {"openai": lambda m: isinstance(m, Mapping) and m.get("role") in ("system", "developer"),
           "responses": lambda m: isinstance(m, Mapping) and m.get("role") in ("system", "developer")
           and m.get("type", "message") == "message",  # an input list's instructions as its first item
           "llamaindex": lambda m: isinstance(m, Mapping) and m.get("role") == "system",
           "autogen": lambda m: isinstance(m, Mapping) and m.get("type") == "SystemMessage",
           "langchain": lambda m: isinstance(m, Mapping) and (unwrap(m) or ("",))[0] == "system"}


# whether a message of each format group (:func:`lane`) is the user's, for a history opening with the user's words
# (:func:`opening`): an add of two or more messages opening with them is a conversation from its start, told by them;
# a message added alone tells none ([Hi], [Other], then [Hi, yes]: the second Hi is the user's, stored again)
_USER = {"openai": lambda m: isinstance(m, Mapping) and m.get("role") == "user",
         "llamaindex": lambda m: isinstance(m, Mapping) and m.get("role") == "user",
         "autogen": lambda m: isinstance(m, Mapping) and m.get("type") == "UserMessage",
         "bedrock": lambda m: isinstance(m, Mapping) and m.get("role") == "user",
         "langchain": lambda m: isinstance(m, Mapping) and (unwrap(m) or ("",))[0] in ("human", "user")}


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


def check(d: Any, name: str) -> list[list[Any]]:
    """A scope's saved :func:`kept` adds (a list of :func:`key`; saves before 2026-12-07 hold one key, the last
    add's, ``[digest, count]``, and no format), else a ValueError naming ``name``."""
    if isinstance(d, list) and d and isinstance(d[0], str):
        d = [d]
    if not (isinstance(d, list) and d and all(isinstance(k, list) and _formatted(k, name, i) and _key_ok(
            k[:len(k) - len(_tag(k))]) for i, k in enumerate(d))):
        raise ValueError(f"{name} must be a list of [digest, count] (then true where it held the scope's whole "
                         f"conversation, its '{OPENING}...', the format), up to {KEPT} of each format, of the "
                         "scope's last adds of Converse, Pydantic AI, AutoGen, smolagents, LlamaIndex, OpenAI chat, "
                         "Anthropic or LangChain messages, Responses items or Gemini contents")
    _one_a_format(d, name, KEPT)
    return d


def _formatted(k: list[Any], name: str, i: int) -> bool:
    """True, unless the saved key or given ``k`` (item ``i`` of ``name``) names a format of none of FORMATS: a
    ValueError naming it."""
    if (fmt := format_of(k)) is not None and fmt not in FORMATS:
        raise ValueError(f"{name} item {i}: format {fmt[:40]!r} is none of {', '.join(FORMATS)}: save the memory "
                         "again with this sam_model")
    return True


def _one_a_format(d: list[list[Any]], name: str, most: int) -> None:
    """A ValueError naming ``name`` where it holds more than ``most`` of one format (:func:`lane`)."""
    for fmt in dict.fromkeys(lane(format_of(k)) for k in d):
        if sum(lane(format_of(k)) == fmt for k in d) > most:  # openai names both: one of each may be all it holds
            said = "openai or anthropic" if fmt == "openai" else fmt or "no format"
            raise ValueError(f"{name} holds {said} {'twice' if most == 1 else f'more than {most} times'}, where a "
                             f"scope keeps at most {'one' if most == 1 else most} of each format (anthropic's and "
                             "openai's are one): save the memory again with this sam_model")


def _key_ok(d: Any) -> bool:
    return isinstance(d, list) and len(d) in (2, 3, 4) and isinstance(d[0], str) and isinstance(d[1], int) \
        and not isinstance(d[1], bool) and d[1] > 0 and (d[2:] in ([], [True]) or len(d) == 4 and isinstance(
            d[2], bool) and isinstance(d[3], list) and len(d[3]) <= TAIL and all(isinstance(t, str) for t in d[3]))


__all__ = ["FORMATS", "KEPT", "LIVE", "OPENING", "TAIL", "alone_kept", "apart", "check", "check_given", "compacted", "dropped",
           "format_of", "given", "key", "kept", "lane", "mine", "new_mark", "note", "opening", "opening_of", "opens_with_given",
           "repeated", "went_on", "whole"]
