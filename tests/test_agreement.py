"""One store behind every search: evaluate.py, SAMRetriever.search, SAMMemory over a life, the Mem0-style
ScopedMemory, the LangChain retriever and VectorStore and the LangGraph store (SAMStore) rank the same memories the
same way, on real logs (a synthetic demo life, SGD dev dialogues as lives of 4, tau-bench transcripts), with a model that has learned-time features and a store
that re-ranks (slot match + provenance). Logs from ../shared are skipped when it is absent."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from sam_model.data.lives import make_lives
from sam_model.data.reader import read_episodes
from sam_model.evaluation.data import build_eval_data
from sam_model.evaluation.methods import retriever_methods
from sam_model.evaluation.ranking import tie_jitter
from sam_model.memory import MemoryConfig, SAMMemory, ScopedMemory
from sam_model.models.sam import SAMConfig, SAMNet
from sam_model.retriever import SAMRetriever
from sam_model.storeconfig import StoreConfig

DEPTH = 20


@pytest.fixture(scope="module")
def net(tiny_bert_dir):
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # one query at a time: a busy thread pool costs more than the tiny model
    torch.manual_seed(0)
    net = SAMNet(SAMConfig(bert_path=str(tiny_bert_dir), dim=16, hidden=32, proj_hidden=32, max_length=48,
                           time_features=8, kinds=["user", "system", "action", "result", "thought", "observation"]))
    with torch.no_grad():  # an untrained time head scores nothing: give the time part a say
        net.time.head.weight.normal_(0, 0.5)
    yield net.eval()
    torch.set_num_threads(threads)


def retriever(net: SAMNet) -> SAMRetriever:
    """A fresh store over the shared network (its frozen-BERT text cache is shared too: same vectors)."""
    return SAMRetriever(net, StoreConfig(slot_match=0.3, provenance=True, source_kinds=["user", "system"]))


def write_events(path: Path, events) -> Path:
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    return path


def evaluate_rankings(net, log: Path) -> tuple[list, list]:
    """evaluate.py's SAM rankings (ids, DEPTH deep) of every decision point of the log."""
    episodes = read_episodes(log)
    data = build_eval_data(str(log), episodes, "episode")
    sam = retriever_methods("sam", retriever(net))[0]
    ranked = sam.rank(data, "episode", DEPTH, tie_jitter(len(data.memories)))
    return episodes, [[data.memories[p].id for p in r] for r in ranked]


def replay(episodes, search, write, begin=None) -> list:
    """Walk the log as an agent: at each decision point search (before its event is written), then write it."""
    out = []
    for ep in episodes:
        source = object()
        for e in ep.events:
            task = (e.meta or {}).get("source_episode")
            if begin is not None and task != source:
                begin(ep.episode_id)
            source = task
            if e.is_decision_point:
                out.append(search(e))
            write(e)
    return out


def plain(memory_id: str) -> str:
    """A run-scoped ScopedMemory id (episode "//<run>", ScopedMemory.episode_of) as the log's own id."""
    return memory_id.removeprefix("//")


def agree(net, log: Path) -> int:
    episodes, want = evaluate_rankings(net, log)
    assert want and all(len(w) > 1 for w in want[:3])

    r = retriever(net)
    hits = replay(episodes, lambda e: r.search(e.state, e.text, k=DEPTH, episode_id=e.episode_id),
                  lambda e: r.add_memories([e]))
    assert [[h.id for h in hs] for hs in hits] == want, "SAMRetriever.search ranks otherwise than evaluate.py"
    for e in [e for ep in episodes for e in ep.decision_points][:10]:  # a shallow search is a deep one's prefix
        deep = r.search(e.state, e.text, k=DEPTH, episode_id=e.episode_id, step=e.step)
        assert [h.id for h in r.search(e.state, e.text, k=5, episode_id=e.episode_id, step=e.step)] == \
            [h.id for h in deep[:5]]

    mem = SAMMemory(retriever(net), k=DEPTH)  # the default rules for a model with time features
    assert mem.bank.config == MemoryConfig.for_encoder(mem.encoder) and mem.bank.config.importance_weight == 0
    got = replay(episodes, lambda e: [h.id for h in mem.retrieve(e.state, e.text, step=e.step)],
                 lambda e: mem.observe(e), begin=mem.begin)
    assert got == want, "SAMMemory over a life ranks otherwise than evaluate.py"

    scoped = ScopedMemory(retriever(net), k=DEPTH)
    # one user per episode: the scope's episode is the user's id itself (ScopedMemory.episode_of), so ids compare
    found = replay(episodes, lambda e: scoped.search(e.text, e.state, user_id=e.episode_id)["results"],
                   lambda e: scoped.add(e, user_id=e.episode_id))
    assert [[f["id"] for f in fs] for fs in found] == want, "ScopedMemory ranks otherwise than evaluate.py"
    for hs, fs in zip(hits, found):  # and the same scores and reasons
        np.testing.assert_allclose([f["score"] for f in fs], [h.score for h in hs], rtol=0, atol=1e-6)
        assert [f["why"]["linked_from"] for f in fs] == [h.linked_from for h in hs]
    assert any(h.linked_from is not None or h.rerank_bonus > 0 for hs in hits for h in hs), "the re-rank never acted"

    try:
        from sam_model.integrations.langchain import SAMLangChainRetriever
    except ImportError:
        return len(want)
    lc = SAMLangChainRetriever(memory=ScopedMemory(retriever(net)), k=DEPTH)
    docs = replay(episodes, lambda e: lc.invoke(e.text, {"configurable": {"sam_state": e.state,
                                                                          "thread_id": e.episode_id}}),
                  lambda e: lc.memory.add(e, run_id=e.episode_id))
    # a run (thread) scope's episode is "//<run>" (ScopedMemory.episode_of): the log's own episode in its place
    assert [[plain(d.id) for d in ds] for ds in docs] == want, "the LangChain retriever ranks otherwise than evaluate.py"

    from sam_model.integrations.langchain import SAMVectorStore

    vs = SAMVectorStore(ScopedMemory(retriever(net)))
    docs = replay(episodes, lambda e: vs.similarity_search(e.text, k=DEPTH, state=e.state, run_id=e.episode_id),
                  lambda e: vs.memory.add(e, run_id=e.episode_id))
    assert [[plain(d.id) for d in ds] for ds in docs] == want, "the LangChain VectorStore ranks otherwise than evaluate.py"

    from sam_model.integrations.langgraph import SAMStore

    store = SAMStore(retriever(net))  # the log's events written as LangGraph store items, one namespace per episode
    items = replay(episodes, lambda e: store.search((e.episode_id.replace(".", "_"),), query=e.text, state=e.state,
                                                    limit=DEPTH),
                   lambda e: store.put((e.episode_id.replace(".", "_"),), str(e.step), e.to_json()))
    assert [[f"{i.value['episode_id']}#{i.key}" for i in its] for its in items] == want, \
        "the LangGraph store ranks otherwise than evaluate.py"
    return len(want)


def test_demo_life_ranks_the_same_everywhere(net, tmp_path):
    from sam_model.data.synthetic import generate_episodes

    events = [d for ep in generate_episodes(6, seed=1) for d in ep]
    assert agree(net, write_events(tmp_path / "life.jsonl", make_lives(events, 3))) > 10


def test_sgd_dev_lives_rank_the_same_everywhere(net, tmp_path, shared_dir):
    from sam_model.data.sgd import iter_sgd_events

    dev = shared_dir / "data" / "sgd" / "dev"
    if not dev.is_dir():
        pytest.skip(f"SGD dev split absent ({dev})")
    events = list(make_lives(iter_sgd_events(dev, max_dialogues=12), 4))
    assert agree(net, write_events(tmp_path / "sgd.jsonl", events)) >= 8


def tau_conversations(shared_dir: Path, n: int):
    from sam_model.data.transcripts import ImportReport, iter_conversations

    path = shared_dir / "data" / "tau-bench" / "gpt-4o-airline.json.gz"
    if not path.is_file():
        pytest.skip(f"tau-bench transcripts absent ({path})")
    convs = []
    for conv in iter_conversations(path, ImportReport()):
        convs.append(conv)
        if len(convs) == n:
            return convs
    return convs


def test_tau_bench_transcripts_rank_the_same_everywhere(net, tmp_path, shared_dir):
    from sam_model.data.transcripts import convert_conversation

    events = [e for conv in tau_conversations(shared_dir, 5) for e in convert_conversation(conv)]
    assert agree(net, write_events(tmp_path / "tau.jsonl", events)) > 10


def test_messages_become_the_importers_memories(net, shared_dir):
    """ScopedMemory fed a transcript message by message stores exactly the events the importer writes (a tool
    call revises the decision event before it), so its searches are the ones evaluate.py measures."""
    from sam_model.data.examples import episode_memories
    from sam_model.data.reader import Episode
    from sam_model.data.schema import parse_event
    from sam_model.data.transcripts import convert_conversation

    for conv in tau_conversations(shared_dir, 2):
        memory = ScopedMemory(retriever(net))
        for message in conv.messages:
            memory.add([message], run_id=conv.episode_id)
        want = episode_memories(Episode(conv.episode_id, tuple(parse_event(e) for e in convert_conversation(conv))))
        got = memory.store.get_all(run_id=conv.episode_id)
        assert [(plain(h.id), h.text, h.kind, h.step) for h in got] == [(m.id, m.text, m.kind, m.step) for m in want]
        assert [memory.store.sets_of(h.id) for h in got] == [m.sets for m in want]
        links = {plain(i): tuple(map(plain, ls)) for i, ls in memory.store.links().items()}
        assert links == {m.id: ls for m, ls in zip(want, memory.store.linker.__class__(
            ["user", "system"]).add(want, [m.id for m in want])) if ls}


def test_a_search_by_call_ranks_as_evaluate_py_ranks_its_decision_point(net, tmp_path, shared_dir):
    """An agent that adds its conversation as it goes and searches with the call it is about to make
    (ScopedMemory.search(call=...): sam-serve's search and MCP's recall by call) gets evaluate.py's ranking of that
    decision point: the conversation's newest event is the decision point's observation, not a memory to rank, and
    the query is made at its step. (It was ranked among the memories and the query made a step later: of the first
    20 held-out decisions of an adapted Codex model, 9 had evaluate.py's top 5.)"""
    from sam_model.data.chatmessages import parse_tool_calls, policy_of
    from sam_model.data.toolstate import TranscriptState
    from sam_model.data.transcripts import convert_conversation

    convs = tau_conversations(shared_dir, 4)
    log = write_events(tmp_path / "tau.jsonl", [e for conv in convs for e in convert_conversation(conv)])
    _, want = evaluate_rankings(net, log)
    scoped = ScopedMemory(retriever(net), k=DEPTH)
    got = []
    for conv in convs:
        importer = TranscriptState(conv.episode_id, policy_of(conv.messages))
        for message in conv.messages:
            if message.get("role") == "assistant" and message.get("tool_calls"):
                decision = importer.decide(parse_tool_calls(message, "message"))
                if decision is not None and decision.labels:  # a decision point evaluate.py ranks
                    found = scoped.search("", run_id=conv.episode_id, call=message["tool_calls"])
                    assert found["state"] == decision.state
                    got.append([plain(r["id"]) for r in found["results"]])
            importer.feed(message)
            scoped.add([message], run_id=conv.episode_id)
    assert len(got) == len(want) > 10
    assert got == want


def test_a_search_by_a_gemini_cli_call_that_reveals_the_root_ranks_as_evaluate_py(net, tmp_path):
    """A Gemini CLI session fed a line at a time, searched with each read before its line is added: the session's
    first absolute path (/home/me/pricebook/pricebook/tax.py, the user having said pricebook/tax.py) is judged in
    the root its own arguments reveal (the metadata line's projectHash kept by the scope), as the importer judges
    it, so its search ranks as evaluate.py ranks that decision point, and so does the next read's (before, the
    first read was no decision point for the importer and for the search)."""
    import hashlib

    from test_format_gemini_cli import call, gemini, header, user, write

    from sam_model.data.transcripts import ImportReport, iter_transcript_events

    root = "/home/me/pricebook"
    reads = [{"name": "read_file", "arguments": {"absolute_path": f"{root}/pricebook/{f}.py"}} for f in ("tax", "cart")]
    records = [{**header(), "projectHash": hashlib.sha256(root.encode()).hexdigest()},
               user("u0", "Totals are off by a cent; the rounding is in pricebook/tax.py"), gemini("g1", "I will read it."),
               gemini("g2", "", [call("r1", "read_file", reads[0]["arguments"], "return round(total * rate, 2)")]),
               user("u3", "the cart sums in pricebook/cart.py first"), gemini("g4", "Reading the cart."),
               gemini("g5", "", [call("r2", "read_file", reads[1]["arguments"], "return sum(lines)")])]
    path = write(tmp_path / "session-1.jsonl", records)
    _, want = evaluate_rankings(net, write_events(tmp_path / "log.jsonl", iter_transcript_events(
        path, report=ImportReport())))
    scoped = ScopedMemory(retriever(net), k=DEPTH)
    got = []
    for r in records:
        if r.get("toolCalls"):
            got.append([plain(h["id"]) for h in scoped.search("", run_id="s", call=reads[len(got)])["results"]])
        scoped.add([r], run_id="s")
    assert len(want) == 2
    assert [[i.split("#")[1] for i in g] for g in got] == [[i.split("#")[1] for i in w] for w in want]
