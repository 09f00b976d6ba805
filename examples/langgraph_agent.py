"""A LangGraph agent whose memories reach the model *before* it writes a tool call's arguments (no network).

The graph (``graph.compile(store=SAMStore(...))``: SAM is the graph's long-term store, one namespace per thread):

    agent ──(reply)──> END
      └──(tool chosen)──> recall ──> write_call ──> tools ──> agent …

1. ``agent``: the model reads the conversation and either replies or *chooses a tool* (its name only);
2. ``recall``: the conversation so far goes into the store as agent-log events (the transcript importer's rules,
   sam_model.data.transcripts), and SAM retrieves for the chosen tool's arguments: the query state is
   ``live_state(messages, tool=..., arguments=<the tool's argument names>)`` — the phase is the tool, every
   argument is a slot to fill, no value is known yet — and the observation is the newest message;
3. ``write_call``: the model writes the arguments from what it sees: the last ``WINDOW`` messages (a short
   context, as a long-running agent has) *and the retrieved memories*;
4. ``tools`` runs the call.

The model here is scripted (``choose`` and ``write_arguments`` below stand in for two LLM calls): it fills an
argument only with a value it can see, so the run shows what the memories change. ``--no-memory`` runs the same
agent with nothing retrieved: the reservation the user named five messages earlier is out of its window and it
has to ask again.

    pip install 'sam_model[langchain]'
    python examples/langgraph_agent.py                       # the packaged default retriever (sam-general)
    python examples/langgraph_agent.py --retriever hashing    # hashed bag of words: no model weights at all
    python examples/langgraph_agent.py --no-memory
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage  # noqa: E402
from langgraph.checkpoint.memory import MemorySaver  # noqa: E402
from langgraph.graph import END, START, MessagesState, StateGraph  # noqa: E402
from langgraph.store.base import BaseStore  # noqa: E402

from sam_model.data.toolstate import TranscriptState, live_state, policy_of  # noqa: E402
from sam_model.integrations.langchain import openai_messages  # noqa: E402
from sam_model.integrations.langgraph import SAMStore  # noqa: E402
from sam_model.limits import int_option  # noqa: E402

POLICY = "You are an airline agent. Look up the user before changing a reservation."
USER_TURNS = [
    "Hi, I need to cancel a trip. My user id is mia_li_3668.",
    "It's the Boston one, reservation NO6JO3. I booked it because of a conference that moved.",
    "Before that: how many bags can I check in economy?",
    "And is there wifi on that plane?",
    "Ok, please go ahead and cancel it.",
]
TOOLS = {  # the world: each tool's argument names (what the model knows before writing) and its canned result
    "get_user_details": (["user_id"], lambda a: {"user_id": a["user_id"], "name": "Mia Li",
                                                 "reservations": ["NO6JO3", "AIXC01"]}),
    "get_reservation_details": (["reservation_id"], lambda a: {"reservation_id": a["reservation_id"], "origin": "JFK",
                                                               "destination": "BOS", "cabin": "economy"}),
    "cancel_reservation": (["reservation_id"], lambda a: {"reservation_id": a["reservation_id"], "status": "cancelled",
                                                          "refund_to": "credit_card_4421"}),
}
PLAN = {0: "get_user_details", 1: "get_reservation_details", 4: "cancel_reservation"}  # user turn -> tool to use
REPLIES = {0: "I found your profile. Which reservation would you like to cancel?",
           1: "NO6JO3 is JFK to Boston in economy. Shall I cancel it?",
           2: "Economy includes one checked bag.", 3: "Yes, that aircraft has wifi.",
           4: "Done: it is cancelled and refunded to your credit card."}
VALUE = {"user_id": re.compile(r"\b[a-z]+_[a-z]+_\d+\b"), "reservation_id": re.compile(r"\b[A-Z0-9]{6}\b")}
WINDOW = 2  # messages the model sees besides the memories


class AgentState(MessagesState):
    tool: str | None  # the tool the model chose, before it wrote the call
    memories: list[str]  # what recall retrieved for that tool's arguments


def user_turn(messages: list[BaseMessage]) -> int:
    return sum(isinstance(m, HumanMessage) for m in messages) - 1


def choose(messages: list[BaseMessage]) -> str | None:
    """LLM call 1 (scripted): the tool to use now, or None to reply. A tool whose result arrived is done."""
    if isinstance(messages[-1], ToolMessage):
        return None
    return PLAN.get(user_turn(messages))


def write_arguments(tool: str, visible: list[str]) -> dict[str, Any]:
    """LLM call 2 (scripted): each argument filled with the first value of its kind in what the model sees
    (memories first, best first, then its window); an argument it cannot see stays out of the call."""
    args = {}
    for name in TOOLS[tool][0]:
        found = next((m.group(0) for text in visible for m in [VALUE[name].search(text)] if m), None)
        if found:
            args[name] = found
    return args


def build_graph(k: int, log: list[str], use_memory: bool = True):
    """The agent graph; nodes get the store LangGraph injects (``graph.compile(store=...)``)."""
    trackers: dict[str, tuple[TranscriptState, list[int]]] = {}  # thread -> importer state, [events stored]

    def remember(store: BaseStore, thread: str, messages: list[BaseMessage]) -> str:
        """Write the thread's new events into the store (final ones: all but the newest); the newest's text."""
        msgs = openai_messages(messages)
        tracker, stored = trackers.setdefault(thread, (TranscriptState(thread, policy_of(msgs)), [0]))
        fed = getattr(tracker, "_fed", 0)
        for i, m in enumerate(msgs[fed:], fed):
            tracker.feed(m, f"message {i}")
        tracker._fed = len(msgs)
        for e in tracker.events[stored[0]:-1]:
            store.put(("threads", thread), str(e["step"]), {k: e[k] for k in ("kind", "text", "state", "step")})
        stored[0] = max(stored[0], len(tracker.events) - 1)
        return tracker.events[-1]["text"] if tracker.events else ""

    def agent(state: AgentState):
        tool = choose(state["messages"])
        if tool is None:
            return {"messages": [AIMessage(REPLIES[user_turn(state["messages"])])], "tool": None}
        return {"tool": tool}

    def recall(state: AgentState, config, *, store: BaseStore):
        thread, tool = config["configurable"]["thread_id"], state["tool"]
        observation = remember(store, thread, state["messages"])
        if not use_memory:
            return {"memories": []}
        before = live_state(openai_messages(state["messages"]), tool=tool, arguments=TOOLS[tool][0])
        found = store.search(("threads", thread), query=observation, state=before, limit=k)
        return {"memories": [item.value["text"] for item in found]}

    def write_call(state: AgentState):
        tool, memories = state["tool"], state["memories"]
        window = [m.content for m in state["messages"][-WINDOW:] if isinstance(m.content, str)]
        args = write_arguments(tool, memories + window)
        log.append(f"\n{tool}: {len(memories)} memories in context, window {WINDOW} messages")
        for name in TOOLS[tool][0]:
            rank = next((r for r, m in enumerate(memories, 1) if name in args and args[name] in m), None)
            source = (f"memory {rank}: {memories[rank - 1][:60]!r}" if rank else "window") if name in args \
                else "nowhere: the model must ask"
            log.append(f"  {name} = {args.get(name)!r:16} <- {source}")
        if len(args) < len(TOOLS[tool][0]):
            return {"messages": [AIMessage(f"Which {', '.join(n for n in TOOLS[tool][0] if n not in args)} do you "
                                           "mean?")], "tool": None}
        call = {"name": tool, "args": args, "id": f"call_{len(state['messages'])}"}
        log.append(f"  -> {tool}({', '.join(f'{a}={v!r}' for a, v in args.items())})")
        return {"messages": [AIMessage("", tool_calls=[call])], "tool": None}

    def tools(state: AgentState):
        return {"messages": [ToolMessage(json.dumps(TOOLS[tc["name"]][1](tc["args"])), tool_call_id=tc["id"],
                                         name=tc["name"]) for tc in state["messages"][-1].tool_calls]}

    g = StateGraph(AgentState)
    for name, fn in (("agent", agent), ("recall", recall), ("write_call", write_call), ("tools", tools)):
        g.add_node(name, fn)
    g.add_edge(START, "agent")
    g.add_conditional_edges("agent", lambda s: "recall" if s.get("tool") else END, ["recall", END])
    g.add_edge("recall", "write_call")
    g.add_conditional_edges("write_call", lambda s: "tools" if s["messages"][-1].tool_calls else END, ["tools", END])
    g.add_edge("tools", "agent")
    return g


def run(model: Any, k: int = 3, use_memory: bool = True, thread: str = "mia-trip") -> list[str]:
    """Play the user's turns on one thread; returns what the agent retrieved, wrote and replied."""
    log: list[str] = []
    graph = build_graph(k, log, use_memory).compile(checkpointer=MemorySaver(), store=SAMStore(model))
    config = {"configurable": {"thread_id": thread}}
    for i, text in enumerate(USER_TURNS):
        turn = [SystemMessage(POLICY), HumanMessage(text)] if i == 0 else [HumanMessage(text)]
        out = graph.invoke({"messages": turn, "tool": None, "memories": []}, config)
        log.append(f"\nuser: {text}\nagent: {out['messages'][-1].content or out['messages'][-2].content}")
    return log


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="A scripted LangGraph agent that retrieves SAM memories for a tool's "
                                            "arguments after choosing the tool and before writing the call.")
    p.add_argument("--retriever", default="sam-general", metavar="DIR|NAME",
                   help="an export folder or packaged retriever (default sam-general); 'hashing': hashed bag of words")
    p.add_argument("--k", type=int_option(1), default=3, help="memories retrieved per tool call (default 3)")
    p.add_argument("--no-memory", action="store_true", help="retrieve nothing (the same agent without SAM)")
    args = p.parse_args(argv)
    if args.retriever == "hashing":
        from sam_model.memory import HashingEncoder

        model = HashingEncoder(256)
    else:
        from sam_model.retriever import SAMRetriever

        model = SAMRetriever.from_pretrained(args.retriever)
    print("\n".join(run(model, args.k, not args.no_memory)))
    return 0


if __name__ == "__main__":
    from sam_model.io import run_cli

    raise SystemExit(run_cli(main))  # a bad path or file: one line, not a trace
