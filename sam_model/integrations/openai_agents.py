"""SAM in the OpenAI Agents SDK: a Session that stores the items the SDK adds, and a tool that recalls.

    pip install openai-agents              # this module imports it; nothing in the core does

    memory = ScopedMemory(SAMRetriever.from_pretrained("sam-general"))
    session = SAMSession(SQLiteSession("conv-1", "sessions.db"), memory, user_id="mia", agent_id="shop")
    agent = Agent(name="Shop", instructions=INSTRUCTIONS, tools=[sam_recall_tool(memory, user_id="mia",
                                                                                  agent_id="shop")])
    result = await Runner.run(agent, "Where is my order 42?", session=session)

:class:`SAMSession` wraps any Session (SQLiteSession, a Redis or SQLAlchemy one, the app's own): the SDK's
``get_items``, ``add_items``, ``pop_item`` and ``clear_session`` go to it, so the conversation is kept where it was.
Each ``add_items`` also stores its items in the ScopedMemory scopes (ScopedMemory.add reads Responses items as the
``responses`` log reader does: the one code path). Items added again (a retried save, the whole list added
again) are stored once: ScopedMemory reads a repeat of what the scope was sent as sent already. ``pop_item`` and
``clear_session`` change the conversation only: what was stored stays in memory, as what a user said stays said
(ScopedMemory.delete_all with the scopes forgets it); the items popped last, added again at the opening of the next
add (a retry of the user's message), are not stored twice. Where the memory's add fails (the disk full), the error
reaches the run and the items are kept, stored before the next add's: the SDK adds none of them again. Items the
memory refuses (a message of no text) are not kept: the error reaches the run once, and later adds store as before.

A recall's memories are the store's already: the output of a :func:`sam_recall_tool` call (its first line
``[N memories recalled by SAM]``) is stored as the marker ``[N memories recalled: stored already]`` (as the
smolagents callback masks its recall tool's), the call itself as it was; an app's own tool named ``recall_memory``
is stored as it answered.

:func:`sam_recall_tool` is a FunctionTool (``recall_memory(query)``) ranked by the scopes' live state (the state of
the newest item a SAMSession of the same scopes stored: ScopedMemory.live_state) and the query's words, the best
``k`` numbered. Scopes (``user_id``, ``agent_id``, ``run_id``, at least one) are checked when each is made; one
without ``user_id`` is no user's and reads only memories of no user.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

try:
    from agents import FunctionTool, function_tool
except ImportError as exc:  # an optional integration: said in one line, not a traceback into the SDK's imports
    raise ImportError(f"sam_model.integrations.openai_agents needs the OpenAI Agents SDK ({exc}): pip install "
                      "openai-agents, or use ScopedMemory directly") from None

from sam_model.data.formats.recalls import HEAD_RE, TOOL, head, recalled
from sam_model.integrations.scopes import fixed_scopes, numbered, user_filter
from sam_model.limits import check_k
from sam_model.memory import ScopedMemory

NOTHING = "No memories found."


class SAMSession:
    """A Session that delegates to ``session`` and stores what is added (the module doc)."""

    def __init__(self, session: Any, memory: ScopedMemory, *, user_id: str | None = None,
                 agent_id: str | None = None, run_id: str | None = None) -> None:
        self.session, self.memory = session, memory
        self.scopes = fixed_scopes("SAMSession", user_id, agent_id, run_id)
        self.session_id = getattr(session, "session_id", None)
        self.session_settings = getattr(session, "session_settings", None)
        self._recalls: set[str] = set()  # call ids of recall_memory calls: their outputs are masked
        self._calls: set[str] = set()  # call ids of every function call seen
        self._popped: list[str] = []  # pop_item's items (digests), the last popped last: see add_items
        # items the wrapped session took whose add to the memory failed (the disk full): added before the next add's,
        # as the SDK never adds them again and they were lost from memory
        self._unstored: list[Any] = []

    async def get_items(self, limit: int | None = None) -> list[Any]:
        return await self.session.get_items(limit)

    async def add_items(self, items: list[Any]) -> None:
        await self.session.add_items(items)
        items = self._unpopped(items)
        if any(_output_of_unknown_call(item, self._recalls, self._calls) for item in items):
            # its call was added by another SAMSession (an interrupted run resumed, another process): the
            # conversation says whether it was a recall
            for item in await self.session.get_items():
                self._note(item)
        # the kept items are this add's alone from here: another add under way at once (two runs of the session
        # gathered) neither stores them again nor, done, clears what this one keeps if it fails
        kept, self._unstored = self._unstored, []
        items = [*kept, *items]
        if items:  # ScopedMemory reads items sent again once (sam_model.memory.resent): no digest here, which
            # would drop a user's "yes" said again in a later turn
            try:
                await asyncio.to_thread(self.memory.add, [self._masked(item) for item in items], **self.scopes)
            except (ValueError, TypeError):  # refused (an item of no text): sent again, refused again, and every
                self._unstored = [*kept, *self._unstored]  # later add failed; those kept before may pass still
                raise
            except Exception:  # not a cancel: its thread adds on, and kept they were stored twice
                self._unstored = [*items, *self._unstored]  # before those another add kept since: said after
                raise

    def _masked(self, item: Any) -> Any:
        """The item as stored: a recall's output as the marker (its memories are stored already)."""
        if not isinstance(item, dict):
            return item
        self._note(item)
        if item.get("type") == "function_call_output" and item.get("call_id") in self._recalls \
                and isinstance(item.get("output"), str) and (found := HEAD_RE.match(item["output"])):
            return {**item, "output": recalled(int(found[1]))}
        return item

    def _note(self, item: Any) -> None:
        """Remember a function call's id, and whether it called the recall tool."""
        if isinstance(item, dict) and item.get("type") == "function_call":
            self._calls.add(item.get("call_id"))
            if item.get("name") == TOOL:
                self._recalls.add(item.get("call_id"))

    def _unpopped(self, items: list[Any]) -> list[Any]:
        """``items`` without those opening it that were popped last (a retry: the assistant's answer and the user's
        message popped, the message added again), which were stored when first added; the message was stored again
        as said twice. Any other add ends the undo."""
        items = list(items)
        while items and self._popped and _digest(items[0]) == self._popped[-1]:
            self._popped.pop()
            self._note(items.pop(0))
        if items:
            self._popped.clear()
        return items

    async def pop_item(self) -> Any:
        item = await self.session.pop_item()
        if item is not None:
            self._popped.append(_digest(item))
        return item

    async def clear_session(self) -> None:
        await self.session.clear_session()


def _digest(item: Any) -> str:
    return json.dumps(item, sort_keys=True, default=str)


def _output_of_unknown_call(item: Any, recalls: set[str], calls: set[str]) -> bool:
    return (isinstance(item, dict) and item.get("type") == "function_call_output"
            and item.get("call_id") not in calls and item.get("call_id") not in recalls)


def sam_recall_tool(memory: ScopedMemory, *, user_id: str | None = None, agent_id: str | None = None,
                    run_id: str | None = None, k: int = 5) -> FunctionTool:
    """A FunctionTool searching the scopes' memories (the module doc)."""
    scopes = fixed_scopes("sam_recall_tool", user_id, agent_id, run_id)
    k = check_k(k)

    def recall_memory(query: str) -> str:
        """Search this user's earlier conversations for facts (ids, names, amounts) the task needs."""
        state = memory.live_state(**scopes)
        hits = memory.search(query, state=state, limit=k, filters=user_filter(user_id), **scopes)["results"]
        return f"{head(len(hits))}\n" + numbered(hits) if hits else NOTHING

    return function_tool(recall_memory, name_override=TOOL)
