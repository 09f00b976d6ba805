"""A LangGraph agent whose tool calls are checked against SAM memory, with a scripted chat model (no network).

The graph: ``agent`` (the chat model) → ``recall`` (before any tool runs: write the conversation into SAM memory,
then retrieve, for each tool call, the memories its arguments need, from the call's decision-point state) →
``tools`` → ``agent`` … The user's turns arrive one ``invoke`` at a time on one thread (a LangGraph checkpointer
keeps the messages); SAM's memory is a ScopedMemory whose run is the thread. For every argument the script
prints the retrieved memory that says its value, if any: what an agent that grounds its calls in memory finds.

    pip install 'sam_model[langchain]'
    python examples/langgraph_agent.py                      # hashed bag of words: no model weights at all
    python examples/langgraph_agent.py --retriever checkpoints/tools/export
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel  # noqa: E402
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage  # noqa: E402
from langgraph.checkpoint.memory import MemorySaver  # noqa: E402
from langgraph.graph import END, START, MessagesState, StateGraph  # noqa: E402

from sam_model.data.text import norm  # noqa: E402
from sam_model.data.transcripts import says  # noqa: E402
from sam_model.integrations.langchain import SAMLangChainRetriever, openai_messages, tool_call_memories  # noqa: E402
from sam_model.memory import HashingEncoder, ScopedMemory  # noqa: E402

POLICY = "You are an airline agent. Look up the user before changing a reservation."
USER_TURNS = [
    "Hi, I need to cancel a trip. My user id is mia_li_3668.",
    "It's the Boston one, reservation NO6JO3. I booked it because of a conference that moved.",
    "Yes, please go ahead and cancel it.",
]
TOOLS = {  # the world: canned tool results
    "get_user_details": lambda a: {"user_id": a["user_id"], "name": "Mia Li", "reservations": ["NO6JO3", "AIXC01"]},
    "get_reservation_details": lambda a: {"reservation_id": a["reservation_id"], "origin": "JFK",
                                          "destination": "BOS", "cabin": "economy", "insurance": "yes"},
    "cancel_reservation": lambda a: {"reservation_id": a["reservation_id"], "status": "cancelled",
                                     "refund_to": "credit_card_4421"},
}


def call(name: str, i: int, **args) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": f"call_{i}"}])


SCRIPT = [  # what the "LLM" says, in order
    call("get_user_details", 1, user_id="mia_li_3668"),
    AIMessage("I found your profile. Which reservation would you like to cancel?"),
    call("get_reservation_details", 2, reservation_id="NO6JO3"),
    AIMessage("Reservation NO6JO3 is JFK to Boston, economy, with insurance. Shall I cancel it?"),
    call("cancel_reservation", 3, reservation_id="NO6JO3"),
    AIMessage("Done: NO6JO3 is cancelled and refunded to your credit card."),
]


def build_graph(memory: ScopedMemory, k: int, log: list[str]):
    """The agent graph; ``log`` collects what the recall node found (printed by main, read by the test)."""
    model = FakeMessagesListChatModel(responses=SCRIPT)
    retriever = SAMLangChainRetriever(memory=memory, k=k)
    written: dict[str, int] = {}  # thread -> messages already in memory

    def remember(messages, thread: str, upto: int) -> None:
        memory.add(openai_messages(messages[written.get(thread, 0):upto]), run_id=thread)
        written[thread] = upto

    def agent(state: MessagesState):
        return {"messages": [model.invoke(state["messages"])]}

    def recall(state: MessagesState, config):
        messages, thread = state["messages"], config["configurable"]["thread_id"]
        remember(messages, thread, len(messages) - 1)  # the conversation up to the decision
        found = tool_call_memories(retriever, messages, config)
        remember(messages, thread, len(messages))  # and the calls themselves
        for tc in messages[-1].tool_calls:
            docs = found[tc["id"]]
            log.append(f"\n{tc['name']}({', '.join(f'{a}={v!r}' for a, v in tc['args'].items())})")
            for arg, value in tc["args"].items():
                rank = next((r for r, d in enumerate(docs, 1) if says(norm(d.page_content), norm(value))), None)
                where = (f"memory {rank} (step {docs[rank - 1].metadata['step']}, {docs[rank - 1].metadata['kind']}): "
                         f"{docs[rank - 1].page_content[:70]!r}") if rank else f"not in the top {k} memories"
                log.append(f"  {arg} = {value!r:16} <- {where}")
        return {}

    def tools(state: MessagesState):
        return {"messages": [ToolMessage(json.dumps(TOOLS[tc["name"]](tc["args"])), tool_call_id=tc["id"],
                                         name=tc["name"]) for tc in state["messages"][-1].tool_calls]}

    def route(state: MessagesState) -> str:
        return "recall" if state["messages"][-1].tool_calls else END

    g = StateGraph(MessagesState)
    g.add_node("agent", agent)
    g.add_node("recall", recall)
    g.add_node("tools", tools)
    g.add_edge(START, "agent")
    g.add_conditional_edges("agent", route, ["recall", END])
    g.add_edge("recall", "tools")
    g.add_edge("tools", "agent")
    return g.compile(checkpointer=MemorySaver())


def run(memory: ScopedMemory, k: int = 3, thread: str = "mia-trip") -> list[str]:
    """Play the user's turns on one thread; returns the recall log and the agent's replies."""
    log: list[str] = []
    graph = build_graph(memory, k, log)
    config = {"configurable": {"thread_id": thread}}
    for i, text in enumerate(USER_TURNS):
        turn = [SystemMessage(POLICY), HumanMessage(text)] if i == 0 else [HumanMessage(text)]
        out = graph.invoke({"messages": turn}, config)
        log.append(f"\nuser: {text}\nagent: {out['messages'][-1].content}")
    return log


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="A scripted LangGraph agent that retrieves SAM memories for the "
                                            "arguments of every tool call before running it.")
    p.add_argument("--retriever", default=None, metavar="DIR",
                   help="an exported SAM retriever (python -m sam_model.export); default: hashed bag of words")
    p.add_argument("--k", type=int, default=3, help="memories retrieved per tool call (default 3)")
    args = p.parse_args(argv)
    if args.retriever:
        from sam_model.retriever import SAMRetriever

        encoder = SAMRetriever.load(args.retriever)
    else:
        encoder = HashingEncoder(256)
    print("\n".join(run(ScopedMemory(encoder), args.k)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
