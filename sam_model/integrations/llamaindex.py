"""SAM in LlamaIndex: a memory block of ``llama_index.core.memory.Memory`` that stores the agent's conversation and
recalls the scopes' best memories for its current state.

    pip install llama-index-core           # one with Memory and its blocks (0.14.25 tested); nothing in the core imports it

    store = ScopedMemory(SAMRetriever.from_pretrained("sam-general"))
    block = SAMMemoryBlock(store, user_id="mia", agent_id="helpdesk")
    memory = block.attach(Memory.from_defaults(session_id="mia-1", token_limit=40000, insert_method="user"))
    await FunctionAgent(tools=[...], llm=llm).run("Where is my order?", memory=memory)

What is stored: each time Memory asks its blocks (``aget``: before each model call of an agent's run and after the
run's messages are put, FunctionAgent's ``finalize``) or flushes to them (``aput``), the block reads the whole saved
history of the Memory it is attached to, ``[m.model_dump() for m in await memory.aget_all()]`` (the messages flushed
out of the token window and those in it), with the ``llamaindex`` log reader (sam_model.data.formats.llamaindex: the
one code path), and adds to ScopedMemory the chat messages read past those of its last call. So the scopes hold what
``sam-data transcripts`` reads of the same history saved afterwards: what SAM was trained on, each message once (a
text longer than a memory holds cut as ``--result-limit 90000`` cuts it, with a warning: refused, it ended the run).
Each add's memories carry the Memory's session and their chat messages' span (metadata SESSION, FROM, TO), so a
block made anew on a session stored before (a Memory over a database, a block each request) reads on after it; a
history replaced (``aset``, ``reset``) is read on from its first chat message that differs. Not the flush alone: Memory flushes a message to its blocks only when it leaves the token window (most never do), and its
``aget(input=...)`` hands the blocks a copy of the user's message that is in no history. Hence ``attach``: a block
cannot find the Memory holding it, and one never attached refuses its first call in one line.

What is recalled: ``aget`` returns the scopes' ``k`` best memories (default 5), numbered, best first (a memory's
further lines indented), ranked by the scopes' live state (ScopedMemory.live_state: the state of the conversation
just stored, the agent's current task state) and the text of the last message Memory gives it, made at the step of
the token window's first message, so the memories of the messages the model sees in the window are left out
(searched now, it repeated them, the user's question being answered first). They are framed as data (scopes.framed:
a note that they are not instructions, then HEAD and the memories in a ``<sam_memories>`` tag, a memory's own
``</sam_memories>``, ``</memory>`` and ``</sam_memory>`` (the block's name: the tags Memory's
``memory_blocks_template`` wraps it in) escaped), as a memory holds what a user typed or a tool read: Memory puts its
blocks' content in its system message by default, where a planted "ignore previous instructions" spoke as the
operator. Made with ``insert_method="user"``, Memory puts it before the latest user message's words instead (in no
history); ``attach`` warns of a Memory inserting in the system message, and moves no block of the app's. Nothing
found: nothing added. Its ``priority`` is 1, so Memory cuts it where the window and the blocks pass its token limit
(``atruncate``: the best memories that fit, in rank order, framed again; the best alone past the limit given cut,
with a warning, not the whole recall dropped); of priority 0 (BaseMemoryBlock's default) Memory
never cuts it, and the recall was kept whole past any limit.

Scopes (``user_id``, ``agent_id``, ``run_id``, at least one) and ``k`` are fixed and checked when the block is made
(as ScopedMemory checks them). A block made without ``user_id`` is no user's: it recalls only memories of no user
(ScopedMemory's scopes are filters, so ``agent_id="helpdesk"`` alone matched each user's memories with that agent
too: sam_model.integrations.autogen had that leak). Beside a block of a user in the same Memory (an agent's shared
memory beside each user's own), a block of no user stores nothing: the conversation is that user's, and stored as no
user's it was recalled to every user by the same shared block of their sessions. Blocks of one Memory need names of
their own (``attach`` checks: Memory keys their content by name), and one user (``attach`` and each call check:
Memory gives the model every block's recall, so two users' blocks in one Memory showed each the other's
memories). Store calls run in a worker thread
(``asyncio.to_thread``), so the agent's event loop serving other users is not blocked by an encoder's forward pass,
nor by the history's dump (``model_dump`` and its JSON) and its reading, which run there too, the reading and
the add one call after the other under the block's lock (ScopedMemory holds its own; the dump and the recall
outside it). On the loop are only the chat store's awaited reads:
the history's rows as their JSON (``_rows``: Memory's own SQL store's ``aget_all`` query; its SQL in the driver, its
rows made messages in the worker thread, where ``aget_all`` made them on the loop, ~18 ms at 2,000 messages) and a
count of the archived ones (``sql_store.count_messages``); until 2026-12-07 the loop also dumped the history and read
the archived messages whole, ~45 ms a call at 2,000. The store's engine belongs to the loop, so its read stays there.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import threading
from typing import Any

try:
    from llama_index.core.memory import BaseMemoryBlock
    from llama_index.core.storage.chat_store.base_db import MessageStatus
except ImportError as exc:  # an optional integration: said in one line, not a traceback into llama-index's imports
    raise ImportError(f"sam_model.integrations.llamaindex needs llama-index-core with Memory's BaseMemoryBlock ({exc}): "
                      "pip install -U llama-index-core, or use ScopedMemory directly") from None

try:  # Memory's own SQL chat store, whose rows the block reads as JSON (a llama-index-core without: by aget_all)
    from llama_index.core.base.llms.types import ChatMessage
    from llama_index.core.memory import Memory
    from llama_index.core.storage.chat_store.sql import SQLAlchemyChatStore
    from sqlalchemy import String, select, type_coerce
except ImportError:
    ChatMessage = Memory = SQLAlchemyChatStore = None

from pydantic import PrivateAttr

from sam_model.data.eventtexts import cut_text
from sam_model.data.formats.llamaindex import to_chat
from sam_model.data.formats.recalls import TAG
from sam_model.integrations.fitting import cut_as_importer
from sam_model.integrations.scopes import fixed_scopes, framed, listed, user_filter
from sam_model.limits import check_k
from sam_model.memory import ScopedMemory

log = logging.getLogger(__name__)

ITEM = re.compile(r"\n(?=\d+\. )")  # a memory's start in the block's content (its further lines are indented)
WRAPPER = "memory"  # the tag Memory's memory_blocks_template wraps every block's content in (each block's: its name)
# each add's memories say the Memory's session and which of its chat messages they are ([from, to)): a block made
# anew on a session already stored (a Memory over a database, a block each request) reads on after them
SESSION, FROM, TO = "llamaindex_session", "llamaindex_from", "llamaindex_to"
IN_SYSTEM = ("SAMMemoryBlock: this Memory puts its blocks' content in the system message (insert_method 'system', "
             "its default), where a recalled memory reads as the app's instructions: make it with "
             "Memory.from_defaults(..., insert_method='user') to give the recall as data before the user's message")
NOT_ATTACHED = ("SAMMemoryBlock is not attached to a Memory, so it cannot read the agent's history: make the memory "
                "with memory = block.attach(Memory.from_defaults(session_id=..., insert_method='user')) and give the "
                "agent that memory")


def _text(message: Any) -> str:
    """A ChatMessage's words: its text blocks, joined as ``ChatMessage.content`` joins them."""
    blocks = getattr(message, "blocks", None) or []
    return "\n".join(b.text for b in blocks if isinstance(getattr(b, "text", None), str))


def _unnumbered(item: str) -> str:
    """A memory's text from its ``item`` in a recall (``2. ...``, its further lines indented under the number, as
    scopes.numbered writes it)."""
    pad = len(item.split(" ", 1)[0]) + 1
    return item[pad:].replace("\n" + " " * pad, "\n")


def _one_user(blocks: list[Any], block: SAMMemoryBlock) -> None:
    """Refuse a Memory whose SAM blocks are of two users: Memory puts every block's recall in the one message (system
    or the user's last) of each model call, so one user's memories were shown to the other (and each stored the
    other's words)."""
    users = {b._scopes["user_id"] for b in [*blocks, block] if isinstance(b, SAMMemoryBlock)} - {None}
    if len(users) > 1:
        raise ValueError(f"SAMMemoryBlock: one Memory holds blocks of users {', '.join(sorted(users))}: Memory gives "
                         "the model every block's recall, so each user's memories reached the other; make a Memory "
                         "per user (Memory.from_defaults(session_id=...)) with that user's block")


CUTS_SAID = 1024  # how many cut memories a block remembers having warned of


class SAMMemoryBlock(BaseMemoryBlock[str]):
    """A Memory block over a ScopedMemory in fixed scopes: stores the attached Memory's history, recalls the
    scopes' best memories for the live state (see the module doc)."""

    name: str = "sam_memory"
    description: str | None = "Memories of earlier conversations and tool results, best first"
    priority: int = 1  # cut when Memory's token limit is passed (0: never cut, a recall of any size kept whole)

    _store: Any = PrivateAttr()
    _scopes: dict[str, str | None] = PrivateAttr()
    _k: int = PrivateAttr()
    _filters: dict[str, Any] | None = PrivateAttr()
    _memory: Any = PrivateAttr(default=None)
    _read: list[dict[str, Any]] = PrivateAttr(default_factory=list)  # the history's dumps read so far
    _added: int = PrivateAttr(default=0)  # how many of the reader's chat messages of them were stored
    _marks: list[tuple[int, int]] = PrivateAttr(default_factory=list)  # each add's first chat message and its step
    # the memories whose cut was said (hashes, the newest CUTS_SAID): Memory cuts the block at each of its gets, several
    # a run (an agent's each step), and the one memory cut again warned at each, the same line a flood in the logs
    _cut_said: dict[int, None] = PrivateAttr(default_factory=dict)
    _frame_said: bool = PrivateAttr(default=False)  # whether a recall dropped as its frame alone passed the limit was said
    # (how many dumps left the token window, their chat messages): told again only when more leave (a flush)
    _window: tuple[int, int] = PrivateAttr(default=(0, 0))
    _resumed: bool = PrivateAttr(default=False)  # what the store holds of the session read (at the first call)
    _lock: Any = PrivateAttr(default_factory=threading.Lock)

    def __init__(self, memory: ScopedMemory, *, user_id: str | None = None, agent_id: str | None = None,
                 run_id: str | None = None, k: int = 5, **block: Any) -> None:
        scopes = fixed_scopes("SAMMemoryBlock", user_id, agent_id, run_id)  # refused at the first call, it ended the run
        k = check_k(k)
        super().__init__(**block)
        self._store, self._scopes, self._k = memory, scopes, k
        self._filters = user_filter(user_id)

    def attach(self, memory: Any) -> Any:
        """Read ``memory``'s history (its ``aget_all()``) from now on, and join its blocks if not among them;
        returns ``memory``. One Memory a block: a second one's history would be read as the first's."""
        if self._memory is not None and self._memory is not memory:
            raise ValueError("SAMMemoryBlock is attached to another Memory already: make one block per Memory "
                             "(the same ScopedMemory and scopes may serve several)")
        if any(b is not self and b.name == self.name for b in memory.memory_blocks):
            # Memory keys its blocks' content by name (from_defaults refuses such a list, the append here did not):
            # the user's recall was lost, the other block's given twice
            raise ValueError(f"SAMMemoryBlock: the Memory holds a block named {self.name!r} already: give this block a "
                             "name of its own, SAMMemoryBlock(..., name='shop_memory')")
        _one_user(memory.memory_blocks, self)
        if not any(b is self for b in memory.memory_blocks):
            memory.memory_blocks.append(self)
        inserts = getattr(memory, "insert_method", None)  # Memory's InsertMethod (an Enum), or a str
        said = any(isinstance(b, SAMMemoryBlock) and b._memory is memory for b in memory.memory_blocks)
        if not said and getattr(inserts, "value", inserts) == "system":
            # the app's choice, for all its blocks: said once a Memory (its shared block and its user's block, or a
            # block attached again, said it twice), not changed
            log.warning(IN_SYSTEM)
        self._memory = memory
        return memory

    async def sync(self) -> int | None:
        """Store what the attached Memory's history holds past what was stored (the module doc); returns the step
        of the memory of the token window's first message, None where the window holds none of this block's."""
        if self._memory is None:
            raise RuntimeError(NOT_ATTACHED)
        _one_user(self._memory.memory_blocks, self)  # blocks appended to memory_blocks after attach, not by it
        if self._scopes["user_id"] is None and self._beside_a_user():
            return None  # the user's block stores the conversation: stored here too it was recalled to every user
        rows = await self._rows()  # the chat store's read, awaited on the loop; its messages made in the thread
        return await asyncio.to_thread(self._store_messages, rows, await self._archived())

    async def _rows(self) -> list[Any]:
        """The history as ``aget_all()`` reads it: Memory's own SQL chat store's rows (its ``get_messages`` query,
        by time then id) as their JSON, which ``_store_messages`` makes messages in the worker thread (made here,
        ``ChatMessage.model_validate`` of each row blocked the loop ~18 ms at 2,000 messages); any other Memory or
        store (its own aget_all or get_messages) read by its ``aget_all()``, as messages."""
        memory, session = self._memory, getattr(self._memory, "session_id", None)
        store = getattr(memory, "sql_store", None)
        if not (Memory is not None and isinstance(memory, Memory) and type(memory).aget_all is Memory.aget_all
                and isinstance(session, str) and isinstance(store, SQLAlchemyChatStore)
                and type(store).get_messages is SQLAlchemyChatStore.get_messages):
            return await memory.aget_all()
        factory, table = await store._initialize()  # the store's own engine and table, made at its first read
        query = select(type_coerce(table.c.data, String)).where(table.c.key == session)
        async with factory() as db:
            return [row[0] for row in (await db.execute(query.order_by(table.c.timestamp, table.c.id))).fetchall()]

    async def _archived(self) -> int:
        """How many of the history's messages left the token window: counted by Memory's chat store where it counts
        (``sql_store.count_messages``, one COUNT), not read as messages (``aget_all(status=ARCHIVED)``), which
        built each of them on the loop: in a long session most of the history."""
        store, session = getattr(self._memory, "sql_store", None), getattr(self._memory, "session_id", None)
        if callable(getattr(store, "count_messages", None)) and isinstance(session, str):
            return await store.count_messages(session, status=MessageStatus.ARCHIVED)
        return len(await self._memory.aget_all(status=MessageStatus.ARCHIVED))

    def _store_messages(self, rows: list[Any], archived: int) -> int | None:
        """_store_new of the history dumped (``rows``: messages, or the chat store's rows' JSON, made messages
        here): in the worker thread, as the dump and its JSON took ~9 ms of the event loop a call at 2,000 messages.
        The messages are made of the rows read for this call (or are ``aget_all``'s own), so nothing on the loop
        changes them while dumped."""
        messages = [ChatMessage.model_validate(json.loads(r) if isinstance(r, (str, bytes)) else r)
                    if isinstance(r, (str, bytes, dict)) else r for r in rows]  # a row's JSON: decoded or not
        # through JSON, as a saved history is read: a role is MessageRole (a str enum) before, "user" after
        dumps = json.loads(json.dumps([m.model_dump() for m in messages], default=str))
        return self._store_new(dumps, archived)

    def _beside_a_user(self) -> bool:
        """Whether the attached Memory holds a block of a user: its conversation is that user's."""
        return any(isinstance(b, SAMMemoryBlock) and b is not self and b._scopes["user_id"] is not None
                   for b in self._memory.memory_blocks)

    def _store_new(self, dumps: list[dict[str, Any]], archived: int = 0) -> int | None:
        """Store the chat messages of ``dumps`` past those stored; the step of the window's first message's memory
        (``archived``: how many of ``dumps`` left the token window)."""
        with self._lock:
            if not self._resumed:
                self._resume()
            if not (len(dumps) <= len(self._read) and self._read[:len(dumps)] == dumps):
                self._store_read(dumps)
            # else nothing new: read already (a call that got the history before another stored it)
            if archived != self._window[0]:  # read at each call, the archived dumps were the whole history read twice
                self._window = (archived, len(to_chat(dumps[:archived], "the Memory's history").messages))
            at = self._window[1]
            if at >= self._added:
                return None
            return max((step for start, step in self._marks if start <= at), default=None)

    def _session(self) -> str | None:
        session = getattr(self._memory, "session_id", None)
        return session if isinstance(session, str) and session else None

    def _resume(self) -> None:
        """Read on after the chat messages of the Memory's session the scopes hold already (their memories' SESSION,
        FROM, TO): a block made anew on a session stored before (a Memory over a database, a block each request)
        read its history from the start, and stored again (a history of words, no call id for ScopedMemory to know
        it by) it came back twice. Done once read: marked done before, a read that raised left the next call to
        store the session again whole."""
        if (session := self._session()) is None:
            self._resumed = True
            return
        found = self._store.get_all(**self._scopes, filters={**(self._filters or {}), SESSION: session},
                                    limit=None)["results"]
        self._resumed = True
        spans = sorted((r["step"], r["metadata"][FROM], r["metadata"][TO]) for r in found
                       if isinstance(r["metadata"].get(FROM), int) and isinstance(r["metadata"].get(TO), int))
        last = None
        for step, start, to in spans:  # the adds in the order made, as this block's calls made them: a history
            if (start, to) != last:    # replaced (reset) read on from an earlier message, its later marks dropped
                self._marks = [m for m in self._marks if m[0] < start] + [(start, step)]
                self._added, last = to, (start, to)

    def _store_read(self, dumps: list[dict[str, Any]]) -> None:
        """Store the chat messages of ``dumps`` past the ``_added`` stored, marking where the add began."""
        chat = to_chat(dumps, "the Memory's history")
        if dumps[:len(self._read)] != self._read:  # memory.aset or reset replaced what was read
            # read on from the first chat message that differs: the messages kept (an undone turn's before it)
            # were stored already, and stored again they came back twice
            was = to_chat(self._read, "the Memory's history").messages[:self._added]
            same = next((i for i, (a, b) in enumerate(zip(was, chat.messages)) if a != b), min(len(was),
                                                                                             len(chat.messages)))
            log.warning("SAMMemoryBlock: the Memory's history no longer begins with the %d messages read "
                        "(memory.aset or reset): read on from its chat message %d, the first that differs",
                        len(self._read), same)
            self._added, self._marks = same, [(start, step) for start, step in self._marks if start < same]
            self._window = (0, 0)  # its archived dumps may differ too
        if not self._read and self._added > len(chat.messages):  # resumed on a session reset since: its start
            self._added, self._marks = 0, []
        if new := chat.messages[self._added:]:  # a text past a memory's size cut, not refused in the run
            tools = {c["id"]: c["function"]["name"] for m in chat.messages for c in m.get("tool_calls") or []}
            span = {SESSION: session, FROM: self._added, TO: len(chat.messages)} if (session := self._session()) else None
            added = self._store.add([cut_as_importer(m, chat.sources[self._added + i], log,
                                            tools.get(m.get("tool_call_id"))) for i, m in enumerate(new)],
                                    **self._scopes, metadata=span)["results"]
            if steps := [r["step"] for r in added if r.get("event") == "ADD"]:
                self._marks.append((self._added, min(steps)))
        # read once added: marked read before, an add that raised left its messages read and never stored
        self._read, self._added = dumps, len(chat.messages)

    def recall(self, query: str, step: int | None = None) -> str:
        """The scopes' ``k`` best memories for the live state and ``query``, numbered, best first, framed as data
        (``""`` for none); those of the scopes' conversation from ``step`` on (the messages still in the Memory's
        token window, which the model sees) are no candidates."""
        found = self._store.search(query, state="live", limit=self._k, filters=self._filters, step=step,
                                   **self._scopes)["results"]
        return framed(listed(found), (WRAPPER, self.name)) if found else ""

    def _reframed(self, texts: list[str]) -> str:
        """The content of ``texts``, a recall's memories (escaped already; escaped again, no tag is left to escape),
        listed and framed as :meth:`recall` frames them, numbered and counted anew; "" for none."""
        return framed(listed([{"memory": t} for t in texts]), (WRAPPER, self.name)) if texts else ""

    async def _aget(self, messages: list[Any] | None = None, **block_kwargs: Any) -> str:
        step = await self.sync()
        asked = next((t for m in reversed(messages or []) if (t := _text(m).strip())), "")
        return await asyncio.to_thread(self.recall, asked, step)

    async def atruncate(self, content: Any, tokens_to_truncate: int) -> str | None:
        """Memory's cut, when its window and blocks pass its token limit: the best memories that fit in the tokens
        left once ``tokens_to_truncate`` (the Memory's tokenizer's) are saved, taken in rank order, each whole where
        it fits beside those taken, framed again (cut as text, the frame's end went first and the memories were left
        unframed); the best alone past them given cut (:meth:`_cut`). Dropped last first, a long second memory took
        every smaller one after it, which fitted. None where none is left."""
        opening, closing = f"\n<{TAG}>\n", f"\n</{TAG}>"
        if not isinstance(content, str) or opening not in content or not content.endswith(closing):
            return None  # no recall of this block's: nothing to keep
        body = content[content.index(opening) + len(opening):-len(closing)]
        items = ITEM.split(body.split("\n", 1)[1]) if "\n" in body else []  # past HEAD's line
        texts = [_unnumbered(item) for item in items]
        tokenize = getattr(self._memory, "tokenizer_fn", None) or str.split
        budget = len(tokenize(content)) - tokens_to_truncate
        if not texts:
            return None
        fits = len(tokenize(self._reframed(texts[:1]))) <= budget
        best = texts[0] if fits else self._cut(texts[0], budget, tokenize)  # cut, not the whole recall dropped
        if best is None:
            return None
        kept = [best]
        for text in texts[1:]:
            if len(tokenize(self._reframed([*kept, text]))) <= budget:
                kept.append(text)
        return self._reframed(kept)

    def _cut(self, item: str, budget: int, tokenize: Any) -> str | None:
        """The best memory's text ``item`` cut as ScopedMemory cuts a memory past its limit (eventtexts.cut_text:
        its first characters and a count of the rest), to the most that framed fits ``budget`` tokens, said in a
        warning; None where none fits (the frame alone passes it). Dropped whole, a page a tool read, recalled first,
        took every smaller memory with it: the model got no recall at all."""
        def fitted(n: int) -> str:
            return cut_text(item, len(item[:n].rstrip()))  # never a cut after a line's break: still a memory's lines

        low, high = 1, len(item)  # a character at least; fewer than the whole
        if len(tokenize(self._reframed([fitted(low)]))) > budget:
            if not self._frame_said:  # the recall dropped without a word: once a block, not at each get
                self._frame_said = True
                log.warning("SAMMemoryBlock %r: the Memory's token limit leaves the block fewer tokens than its frame "
                            "and a memory's first word: no recall given (said once); raise token_limit", self.name)
            return None
        while low < high - 1:
            mid = (low + high) // 2
            low, high = (mid, high) if len(tokenize(self._reframed([fitted(mid)]))) <= budget else (low, mid)
        if hash(item) not in self._cut_said:  # once a memory, not at each of Memory's gets
            self._cut_said[hash(item)] = None
            while len(self._cut_said) > CUTS_SAID:
                del self._cut_said[next(iter(self._cut_said))]
            log.warning("SAMMemoryBlock %r: the best memory alone (%s characters) passes the Memory's token limit: "
                        "given cut to %s characters (said once a memory); raise token_limit to see it whole",
                        self.name, f"{len(item):,}", f"{len(item[:low].rstrip()):,}")
        return fitted(low)

    async def _aput(self, messages: list[Any]) -> None:
        """Messages flushed out of the token window: already in the history (archived before the flush), stored
        as a part of it."""
        await self.sync()
