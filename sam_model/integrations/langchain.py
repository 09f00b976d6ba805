"""SAM as a LangChain retriever, and memories for the tool calls of a LangGraph agent.

    pip install 'sam_model[langchain]'

    memory = ScopedMemory(SAMRetriever.load("checkpoints/tools/export"))
    retriever = SAMLangChainRetriever(memory=memory, k=5)
    docs = retriever.invoke("which reservation?", config={"configurable": {"thread_id": "t1", "user_id": "mia"}})
    docs[0].page_content, docs[0].metadata["score"], docs[0].metadata["why"]

SAM searches by the agent's *state*, which a query string does not carry. The retriever takes it from the run:

- ``config["configurable"]["sam_state"]``: a state as the agent keeps it (sam_model.data.schema.State or a mapping);
- ``config["configurable"]["sam_messages"]`` (and optionally ``sam_tool_call``): the graph's messages, from which
  the decision-point state of the tool call about to be made is rebuilt exactly as the transcript importer
  writes it for training (sam_model.data.transcripts.live_state). When the last message is an AI message with tool
  calls and no ``sam_tool_call`` is given, those calls are the decision;
- otherwise the live state of the scope's conversation in ``memory`` (ScopedMemory.live_state).

Scopes come from the retriever's fields or the config (``user_id``, ``agent_id``; the run is LangGraph's
``thread_id``). The same keywords can be given to ``invoke`` directly (``state=``, ``messages=``, ``tool_call=``,
``user_id=``, ``agent_id=``, ``thread_id=``). Documents carry the memory's own words, and as metadata its id,
kind, step, episode, scopes, score and why it ranked (sam_model.store.Hit). This is the only module of sam_model
that imports ``langchain_core``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.messages import convert_to_openai_messages
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import RunnableConfig
from pydantic import ConfigDict, Field

from sam_model.data.schema import State
from sam_model.data.transcripts import TranscriptState, live_state, policy_of
from sam_model.memory.scoped import ScopedMemory, result

CONFIG_KEYS = ("sam_state", "sam_messages", "sam_tool_call", "user_id", "agent_id", "thread_id")


def openai_messages(messages: Sequence[Any]) -> list[dict[str, Any]]:
    """LangChain messages (or OpenAI dicts) as OpenAI chat dicts, what sam_model.data.transcripts reads."""
    return [m if isinstance(m, Mapping) and "role" in m else convert_to_openai_messages(m) for m in messages]


def _as_call(call: Mapping[str, Any]) -> dict[str, Any]:
    """A LangChain ToolCall ({"name", "args", "id"}) or an OpenAI tool call as {"name", "arguments", "id"}."""
    if "args" in call:
        return {"name": call.get("name"), "arguments": dict(call.get("args") or {}), "id": call.get("id")}
    return dict(call)


def state_from_messages(messages: Sequence[Any], tool_call: Any = None) -> tuple[dict[str, Any], str]:
    """(the decision-point state, the observation) for a tool call about to be made after ``messages``.

    ``tool_call``: one call or a list (LangChain or OpenAI shape); None: the tool calls of a trailing AI message
    (which is then not part of the history), else the state of the last event without a decision.
    """
    msgs = openai_messages(messages)
    if tool_call is None and msgs and msgs[-1].get("role") == "assistant" and msgs[-1].get("tool_calls"):
        tool_call, msgs = msgs[-1]["tool_calls"], msgs[:-1]
    tracker = TranscriptState(policy=policy_of(msgs))
    for i, m in enumerate(msgs):
        tracker.feed(m, f"message {i}")
    observation = tracker.events[-1]["text"] if tracker.events else ""
    if tool_call is None:
        return (tracker.events[-1]["state"] if tracker.events else State().to_json()), observation
    calls = [tool_call] if isinstance(tool_call, Mapping) else list(tool_call)
    return live_state(msgs, [_as_call(c) for c in calls]), observation


class SAMLangChainRetriever(BaseRetriever):
    """A ``langchain_core`` retriever over a ScopedMemory (see the module doc)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    memory: Any = Field(default_factory=ScopedMemory)
    """A sam_model.memory.ScopedMemory (the one store, scoped by user, agent and run); default: a new one on the
    packaged default retriever (sam-general)."""
    k: int = 5
    user_id: str | None = None
    agent_id: str | None = None
    run_id: str | None = None

    def invoke(self, input: str, config: RunnableConfig | None = None, **kwargs: Any) -> list[Document]:
        conf = dict((config or {}).get("configurable") or {})
        for key in CONFIG_KEYS:
            if key in conf and key not in kwargs:
                kwargs[key.removeprefix("sam_")] = conf[key]
        return super().invoke(input, config, **kwargs)

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun,
                                state: Any = None, messages: Sequence[Any] | None = None, tool_call: Any = None,
                                user_id: str | None = None, agent_id: str | None = None,
                                thread_id: str | None = None, k: int | None = None) -> list[Document]:
        if not isinstance(self.memory, ScopedMemory):
            raise TypeError(f"SAMLangChainRetriever.memory must be a sam_model.memory.ScopedMemory, got "
                            f"{type(self.memory).__name__}")
        observation = query
        if state is None and messages is not None:
            state, last = state_from_messages(messages, tool_call)
            observation = query or last
        found = self.memory.search(observation, state, user_id or self.user_id, agent_id or self.agent_id,
                                   thread_id or self.run_id, k or self.k)
        return [document(r) for r in found["results"]]


def document(r: Mapping[str, Any]) -> Document:
    """A ScopedMemory result (sam_model.memory.scoped.result) as a Document: the memory's words, the rest as
    metadata."""
    meta = {key: v for key, v in r.items() if key not in ("memory", "metadata")}
    return Document(page_content=r["memory"], metadata={**meta, **r["metadata"]}, id=str(r["id"]))


def tool_call_memories(retriever: SAMLangChainRetriever, messages: Sequence[Any],
                       config: RunnableConfig | None = None) -> dict[str, list[Document]]:
    """For each tool call of the last (AI) message, the memories the call's arguments need: one search per call
    with its decision-point state (what a LangGraph node runs before its tools). Keys are the calls' ids."""
    msgs = list(messages)
    calls = getattr(msgs[-1], "tool_calls", None) if msgs else None
    if calls is None and msgs and isinstance(msgs[-1], Mapping):
        calls = msgs[-1].get("tool_calls")
    out: dict[str, list[Document]] = {}
    for n, call in enumerate(calls or []):
        conf: dict[str, Any] = {**dict(config or {})}
        conf["configurable"] = {**dict(conf.get("configurable") or {}), "sam_messages": msgs[:-1],
                                "sam_tool_call": call}
        out[str(call.get("id") or n)] = retriever.invoke("", conf)
    return out


__all__ = ["SAMLangChainRetriever", "document", "openai_messages", "result", "state_from_messages",
           "tool_call_memories"]
