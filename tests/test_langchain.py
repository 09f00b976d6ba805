"""The LangChain integration against the real langchain-core and langgraph packages (the [langchain] extra, which
``make install`` and CI install): Documents from the one store, the state taken from the run's config or rebuilt
from the graph's messages exactly as the importer writes it, scopes from the config, and the LangGraph example."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("langchain_core", reason="the [langchain] extra is not installed: pip install -e '.[langchain]'")
pytest.importorskip("langgraph", reason="the [langchain] extra is not installed: pip install -e '.[langchain]'")

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage  # noqa: E402

from sam_model.data.transcripts import Conversation, convert_conversation  # noqa: E402
from sam_model.integrations.langchain import (  # noqa: E402
    SAMLangChainRetriever,
    openai_messages,
    state_from_messages,
    tool_call_memories,
)
from sam_model.memory import HashingEncoder, ScopedMemory  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def conversation() -> list:
    return [SystemMessage("Airline policy: look the user up first."),
            HumanMessage("I'm mia_li_3668 and want to cancel reservation NO6JO3."),
            AIMessage("", tool_calls=[{"name": "get_user_details", "args": {"user_id": "mia_li_3668"}, "id": "c1"}]),
            ToolMessage(json.dumps({"name": "Mia Li", "reservations": ["NO6JO3"]}), tool_call_id="c1",
                        name="get_user_details"),
            HumanMessage("Yes, go ahead and cancel it."),
            AIMessage("", tool_calls=[{"name": "cancel_reservation", "args": {"reservation_id": "NO6JO3"},
                                       "id": "c2"}])]


def test_state_from_the_graphs_messages_is_the_importers_decision_state():
    msgs = conversation()
    events = convert_conversation(Conversation("c", openai_messages(msgs), "test", "c"))
    decision = next(e for e in reversed(events) if e.get("useful_memory_steps"))
    state, observation = state_from_messages(msgs)  # the trailing AI message's calls are the decision
    assert state == decision["state"] and observation == decision["text"]
    assert state["phase"] == "cancel_reservation" and state["uncertainty_flags"] == ["reservation_id"]
    same, _ = state_from_messages(msgs[:-1], msgs[-1].tool_calls[0])
    assert same == state


def test_documents_come_from_the_store_with_state_from_config_or_messages():
    memory = ScopedMemory(HashingEncoder(512))
    msgs = conversation()
    memory.add(openai_messages(msgs[:-1]), user_id="mia", run_id="t1")
    memory.add("I'm bo and I like aisle seats on reservation NO6JO3", user_id="bo", run_id="t1")
    retriever = SAMLangChainRetriever(memory=memory, k=4)
    state, observation = state_from_messages(msgs)
    want = memory.search(observation, state, user_id="mia", run_id="t1", k=4)["results"]

    by_config = retriever.invoke(observation, {"configurable": {"sam_state": state, "thread_id": "t1",
                                                                "user_id": "mia"}})
    by_messages = retriever.invoke("", {"configurable": {"sam_messages": msgs, "thread_id": "t1", "user_id": "mia"}})
    by_kwargs = retriever.invoke(observation, state=state, user_id="mia", thread_id="t1")
    for docs in (by_config, by_kwargs):
        assert [d.id for d in docs] == [str(r["id"]) for r in want]
        assert [d.page_content for d in docs] == [r["memory"] for r in want]
        assert [d.metadata["score"] for d in docs] == [r["score"] for r in want]
        assert all(d.metadata["user_id"] == "mia" and "why" in d.metadata for d in docs)
    # the trailing AI message's call, its messages recorded: searched as ScopedMemory.search(call=) searches it
    at_call = memory.search("", call=msgs[-1].tool_calls[0], user_id="mia", run_id="t1", k=4)["results"]
    per_call = tool_call_memories(retriever, msgs, {"configurable": {"thread_id": "t1", "user_id": "mia"}})
    for docs in (by_messages, per_call["c2"]):
        assert [d.id for d in docs] == [str(r["id"]) for r in at_call]
        assert [d.metadata["score"] for d in docs] == [r["score"] for r in at_call]
    # bo's memory says NO6JO3 too, but mia's search never sees it
    everyone = retriever.invoke(observation, {"configurable": {"sam_state": state, "sam_all_scopes": True}}, k=20)
    assert any(d.metadata["user_id"] == "bo" for d in everyone)
    assert not any(d.metadata["user_id"] == "bo" for d in by_config)
    with pytest.raises(TypeError, match="must be a sam_model.memory.ScopedMemory"):
        SAMLangChainRetriever(memory=object()).invoke("x")


def test_langgraph_example_puts_memories_in_context_before_the_arguments_are_written():
    """examples/langgraph_agent.py: SAM is the graph's store (graph.compile(store=SAMStore)); after the model chose
    cancel_reservation, the reservation named five messages earlier (out of its window) comes from a retrieved
    memory, and without memory the same agent has to ask for it."""
    sys.path.insert(0, str(REPO / "examples"))
    try:
        import langgraph_agent
    finally:
        sys.path.pop(0)
    log = "\n".join(langgraph_agent.run(HashingEncoder(512), k=3))
    assert "-> get_user_details(user_id='mia_li_3668')" in log
    cancel = log[log.index("cancel_reservation: 3 memories"):]
    assert "reservation_id = 'NO6JO3'         <- memory" in cancel and "-> cancel_reservation(reservation_id='NO6JO3')" in cancel
    assert "agent: Done: it is cancelled" in log
    bare = "\n".join(langgraph_agent.run(HashingEncoder(512), k=3, use_memory=False))
    assert "cancel_reservation(" not in bare.replace("cancel_reservation: 0", "")
    assert "agent: Which reservation_id do you mean?" in bare


@pytest.mark.parametrize("script, argv", [("langgraph_agent", ["--retriever", "hashing", "--k", "0"]),
                                          ("langgraph_agent", ["--retriever", "hashing", "--k", "-3"]),
                                          ("tool_agent", ["--transcripts", "t.jsonl", "--k", "0"]),
                                          ("tool_agent", ["--transcripts", "t.jsonl", "--conversations", "-1"])])
def test_example_counts_out_of_range_are_refused_in_one_line(script, argv, capsys):
    """Found walking the README: langgraph_agent.py --k 0 retrieved nothing, silently (the agent then asked for the
    reservation as with --no-memory), tool_agent.py --conversations -1 dropped the last conversation, and its
    --k 0 failed only after the model and transcripts were loaded. Each is now an argparse error naming the flag."""
    sys.path.insert(0, str(REPO / "examples"))
    try:
        module = __import__(script)
    finally:
        sys.path.pop(0)
    with pytest.raises(SystemExit) as stop:
        module.main(argv)
    flag = argv[-2]
    assert stop.value.code == 2
    assert f"error: argument {flag}: want an integer from 1 " in capsys.readouterr().err


def test_a_search_at_a_step_leaves_the_runs_later_memories_out_on_every_langchain_path():
    """Review of ac50241: ScopedMemory.search takes step= (the run's memories at or after it are no candidates, as
    evaluate.py ranks), but the retriever and the VectorStore refused it and searched now: an agent that wrote its
    current message before searching got it back first. Both pass step and task_start through, as keywords, the
    run's config (sam_step, sam_task_start) and as_retriever's search_kwargs."""
    from sam_model.integrations.langchain import SAMVectorStore

    memory = ScopedMemory(HashingEncoder(512))
    msgs = [{"role": "user", "content": text} for text in (
        "I'm mia_li_3668 and want to cancel reservation NO6JO3.", "My seat on NO6JO3 is 14C.",
        "Please cancel reservation NO6JO3 now.")]
    memory.add(msgs, user_id="mia", run_id="t1")
    steps = sorted(r["step"] for r in memory.get_all(user_id="mia", run_id="t1")["results"])
    query, last = "cancel reservation NO6JO3", steps[-1]
    now = memory.search(query, None, user_id="mia", run_id="t1", k=5)["results"]
    want = memory.search(query, None, user_id="mia", run_id="t1", k=5, step=last, task_start=steps[0])["results"]
    assert last in [r["step"] for r in now] and want and all(r["step"] < last for r in want)
    retriever = SAMLangChainRetriever(memory=memory, k=5, user_id="mia")
    store = SAMVectorStore(memory, user_id="mia", run_id="t1", k=5)
    got = [retriever.invoke(query, thread_id="t1", step=last, task_start=steps[0]),
           retriever.invoke(query, {"configurable": {"thread_id": "t1", "sam_step": last, "sam_task_start": steps[0]}}),
           store.similarity_search(query, step=last, task_start=steps[0]),
           store.as_retriever(search_kwargs={"step": last, "task_start": steps[0]}).invoke(query)]
    for docs in got:
        assert [d.metadata["id"] for d in docs] == [r["id"] for r in want]


def test_the_adapter_bench_paths_search_the_same_candidates():
    """sam_model.bench.adapters times every path over 'the same memories', each searching at the query's step,
    but the LangChain path searched now, over the query's own event and the rest of its episode: each path now
    returns the same memories (episode, step) for the same decision point."""
    from sam_model.bench.adapters import demo_episodes, paths
    from sam_model.data.lives import task_starts

    fns = paths(HashingEncoder(512), demo_episodes(3, seed=1), k=4)
    assert any(name.startswith("SAMLangChainRetriever") for name in fns)
    asked = 0
    for ep in demo_episodes(3, seed=1):
        for e, start in zip(ep.events, task_starts(ep.events)):
            if not e.is_decision_point:
                continue
            asked += 1
            found = {}
            for name, fn in fns.items():
                hits = fn(e, start)
                hits = hits["results"] if isinstance(hits, dict) else hits
                found[name] = [(h.metadata["episode_id"], h.metadata["step"]) if hasattr(h, "page_content") else
                               (h["episode_id"], h["step"]) if isinstance(h, dict) else (h.episode_id, h.step)
                               for h in hits]
                found[name] = [(str(ep_id).split("/")[-1], s) for ep_id, s in found[name]]  # a scope's: "//run"
            assert all(s < e.step for _, s in found["ScopedMemory.search"]), found
            assert len({tuple(v) for v in found.values()}) == 1, (e.episode_id, e.step, found)
    assert asked
