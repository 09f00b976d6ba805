"""What is benchmarked is what is deployed (issue 21): the live path knows, per scope and per task, which memories
the task's earlier tool calls took values from, from the labels its own conversation gives them (the importer's),
by evaluate.py's functions (sam_model.data.reuse), and a reuse model served there scores u_m as evaluate.py's
replay does (sam_model.memory.scopeduses, MemoryStore.search_vector's ``used``)."""

from __future__ import annotations

import json

import pytest
import torch
from test_agreement import DEPTH, evaluate_rankings, plain, retriever, write_events

from sam_model.data.chatmessages import parse_tool_calls, policy_of
from sam_model.data.formats.base import Conversation
from sam_model.data.reader import read_episodes
from sam_model.data.schema import parse_event
from sam_model.data.toolstate import TranscriptState
from sam_model.data.transcripts import convert_conversation
from sam_model.evaluation.data import build_eval_data
from sam_model.evaluation.ranking import used_memories
from sam_model.memory import SAMMemory, ScopedMemory
from sam_model.models.sam import SAMConfig, SAMNet
from sam_model.storeconfig import StoreConfig


def call(i: str, name: str, **args) -> dict:
    return {"role": "assistant", "content": "",
            "tool_calls": [{"id": i, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}]}


def res(i: str, value) -> dict:
    return {"role": "tool", "tool_call_id": i, "content": value if isinstance(value, str) else json.dumps(value)}


# the user's first message supplies the ids of several calls, results supply later ones: decisions at events 6
# (label 0), 8 (0, 2), 10 (2) and 12 (0, 4, 8), so the uses grow from none to two memories
CHAT = [{"role": "system", "content": "You are an airline agent. Follow the policy."},
        {"role": "user", "content": "Hi, I am mia_li_3668 and I want to cancel reservation ZFA04Y."},
        call("c1", "get_user_details", user_id="mia_li_3668"),
        res("c1", {"name": "Mia Li", "reservations": ["ZFA04Y", "K1NW8N"], "payment_methods": ["credit_card_4421"]}),
        call("c2", "get_reservation_details", reservation_id="ZFA04Y"),
        res("c2", {"reservation_id": "ZFA04Y", "flight": "HAT045", "status": "active"}),
        {"role": "assistant", "content": "Your reservation is on flight HAT045. Shall I cancel it?"},
        {"role": "user", "content": "Yes please, and refund it to my card."},
        call("c3", "cancel_reservation", reservation_id="ZFA04Y", user_id="mia_li_3668"),
        res("c3", {"status": "cancelled", "refund_id": "RF7781"}),
        call("c4", "refund", user_id="mia_li_3668", payment_id="credit_card_4421", reservation_id="ZFA04Y"),
        res("c4", "ok"),
        call("c5", "get_reservation_details", reservation_id="K1NW8N"),
        res("c5", {"reservation_id": "K1NW8N", "flight": "HAT112"}),
        call("c6", "send_receipt", refund_id="RF7781", flight="HAT045", user_id="mia_li_3668")]


@pytest.fixture(scope="module")
def reuse_net(tiny_bert_dir):
    """A tiny network with the reuse part (and time features), w_u a random function of the state: what u_m adds
    differs by decision, and is large enough to move memories."""
    torch.manual_seed(1)
    net = SAMNet(SAMConfig(bert_path=str(tiny_bert_dir), dim=16, hidden=32, proj_hidden=32, max_length=48,
                           time_features=8, task_opening=True, task_reuse=True,
                           kinds=["user", "system", "action", "result", "thought", "observation"]))
    with torch.no_grad():
        net.time.head.weight.normal_(0, 0.5)
        net.reuse.head.weight.normal_(0, 2.0)
        net.reuse.head.bias.fill_(0.2)
    return net.eval()


def _log(tmp_path, episode: str = "trip"):
    return write_events(tmp_path / "chat.jsonl", convert_conversation(Conversation(episode, CHAT, "test", episode)))


def _live(memory: ScopedMemory, run: str, messages=CHAT) -> list[tuple[list[str], dict]]:
    """The conversation fed to ``memory`` message by message, searched by each call at a decision point (as
    evaluate.py has one) before its message is added: (the ids the search was told are used, its answer)."""
    importer, out = TranscriptState(run, policy_of(messages)), []
    for message in messages:
        if message.get("role") == "assistant" and message.get("tool_calls"):
            decision = importer.decide(parse_tool_calls(message, "message"))
            if decision is not None and decision.labels:
                _, inputs = memory.query_input("", run_id=run, call=message["tool_calls"])
                found = memory.search("", run_id=run, call=message["tool_calls"], limit=DEPTH)
                out.append(([plain(i) for i in memory.used(inputs)], found))
        importer.feed(message)
        memory.add([message], run_id=run)
    return out


def test_a_conversation_fed_live_gives_evaluates_uses_and_ranking(reuse_net, tmp_path):
    """The key test: the transcript replayed through ScopedMemory (a search by call at each decision point) is told
    the same used memories per decision as evaluate.py's replay of the converted log (ranking.used_memories), ranks
    as it does with a reuse model (u_m scored, not refused), and each result says whether it is one."""
    log = _log(tmp_path)
    data = build_eval_data(str(log), read_episodes(log), "episode")
    want_used = [sorted(data.memories[p].id for p in used_memories(data.memories, ex)) for ex in data.examples]
    assert [len(u) for u in want_used] == [0, 1, 2, 2]  # the uses grow: the test can fail
    _, want = evaluate_rankings(reuse_net, log)
    got = _live(ScopedMemory(retriever(reuse_net), k=DEPTH), "trip")
    assert [sorted(u) for u, _ in got] == want_used
    assert [[plain(r["id"]) for r in found["results"]] for _, found in got] == want
    for used, found in got:
        assert [r["used"] for r in found["results"]] == [plain(r["id"]) in used for r in found["results"]]
    # u_m moved the ranking: the same searches told no uses (u_m = 0) rank otherwise somewhere
    store = retriever(reuse_net).store
    data_vectors = store.encoder.encode_memories(data.memories)
    store.add(data.memories, data_vectors)
    q = store.encoder.encode_queries([e.state for e in data.examples], [e.observation for e in data.examples],
                                     steps=[e.step for e in data.examples],
                                     task_starts=[e.task_start for e in data.examples])
    unused = [[h.id for h in store.search_vector(q[i], DEPTH, ex.state.uncertainty_flags, episode_id=ex.episode_id,
                                                 before=(ex.episode_id, ex.step), used=[],
                                                 query_text=ex.state_text)] for i, ex in enumerate(data.examples)]
    assert unused != want


def test_one_scope_never_sees_anothers_uses(reuse_net):
    """Two scopes, the same texts: the one whose calls used memories is told so, the other (only its first call
    made) is told none."""
    memory = ScopedMemory(retriever(reuse_net), k=DEPTH)
    _live(memory, "a", CHAT[:-1])
    first_call = next(i for i, m in enumerate(CHAT) if m.get("tool_calls"))
    _live(memory, "b", CHAT[:first_call + 2])
    later = CHAT[-1]["tool_calls"]
    in_a = memory.search("", run_id="a", call=later)["results"]
    in_b = memory.search("", run_id="b", call=later)["results"]
    assert any(r["used"] for r in in_a) and {r["memory"] for r in in_b} <= {r["memory"] for r in in_a}
    assert not any(r["used"] for r in in_b)
    assert memory.used(memory.query_input("", run_id="b")[1]) == {}
    assert list(memory.used(memory.query_input("", run_id="a")[1])) == ["//a#0", "//a#2"]  # every call's so far


def test_the_task_start_bounds_the_uses(reuse_net):
    """From the task start on (a task_start given to the search); before the conversation's first decision, none."""
    memory = ScopedMemory(retriever(reuse_net), k=DEPTH)
    _live(memory, "a")
    now = memory.query_input("", run_id="a")[1]
    assert memory.used(now) == {"//a#0": 1, "//a#2": 4, "//a#4": 1, "//a#8": 1}  # with the ranks of their last use
    assert list(memory.used({**now, "task_start": 11})) == ["//a#0", "//a#4", "//a#8"]  # 2 was last used at 10
    assert memory.used({**now, "step": 8}) == {"//a#0": 1}  # before the decision at 8: the one at 6's label
    assert memory.used({**now, "task_start": None}) == memory.used(now)  # unknown: the episode's every use


def test_the_uses_survive_a_save(reuse_net, tmp_path):
    """They are read from the conversation, which a save keeps: a loaded memory is told the same."""
    memory = ScopedMemory(retriever(reuse_net), k=DEPTH)
    _live(memory, "a", CHAT[:-1])
    later = CHAT[-1]["tool_calls"]
    before = memory.search("", run_id="a", call=later)
    memory.save(tmp_path / "saved")
    loaded = ScopedMemory.load(tmp_path / "saved", retriever(reuse_net))
    assert loaded.search("", run_id="a", call=later) == before and any(r["used"] for r in before["results"])


def test_unknown_uses_are_refused_in_one_line(reuse_net):
    """Where the uses are not known (a store search not told them, the memory bank) a reuse model is refused, in
    one line; adding memories is not (they are written with u_m = 0)."""
    r = retriever(reuse_net)
    r.add_memories([parse_event({"episode_id": "e", "step": 0, "kind": "user", "text": "cancel ZFA04Y"})])
    with pytest.raises(ValueError, match="task_reuse") as err:
        r.search({"phase": "collect"}, "which one?", k=3, episode_id="e")
    assert "\n" not in str(err.value) and "used=" in str(err.value)
    assert [h.used for h in r.store.search({"phase": "collect"}, "which one?", k=3, episode_id="e", used=["e#0"])] \
        == [True]
    with pytest.raises(ValueError, match="task_reuse"):
        SAMMemory(retriever(reuse_net))


def test_a_log_replayed_as_events_gives_evaluates_uses_and_ranking_across_a_save(reuse_net, tmp_path):
    """The converted log's events added one by one (with their steps and labels, as test_agreement replays logs),
    searched at each decision point before its event is written: evaluate.py's uses and ranking, the labels kept
    in the memory's save (a save without them, one before this, loads with none: test_scoped_memory's saves)."""
    log = _log(tmp_path)
    episodes, want = evaluate_rankings(reuse_net, log)
    data = build_eval_data(str(log), read_episodes(log), "episode")
    want_used = [sorted(data.memories[p].id for p in used_memories(data.memories, ex)) for ex in data.examples]
    memory, got, told = ScopedMemory(retriever(reuse_net), k=DEPTH), [], []
    for n, e in enumerate(episodes[0].events):
        if n == 9:  # halfway, after two decisions: saved and loaded
            memory.save(tmp_path / "saved")
            assert "labels" in json.loads((tmp_path / "saved" / "scoped.json").read_text())
            memory = ScopedMemory.load(tmp_path / "saved", retriever(reuse_net))
        if e.is_decision_point:
            told.append(sorted(memory.used(memory.query_input(e.text, e.state, user_id="trip")[1])))
            got.append([r["id"] for r in memory.search(e.text, e.state, user_id="trip")["results"]])
        memory.add(e, user_id="trip")
    assert told == want_used and got == want
    memory.delete_all(user_id="trip")  # the scope's labels go with its memories
    assert memory.used(memory.query_input("", user_id="trip")[1]) == {}


def test_the_langgraph_store_refuses_the_model_at_once(reuse_net, tmp_path):
    """The LangGraph store, which holds items and no conversation, does not know the uses either: refused when made
    (as SAMMemory is), in one line, not after its puts were taken, at each query search, with advice (used=) its
    caller cannot follow."""
    from sam_model.integrations.langgraph import SAMStore

    with pytest.raises(ValueError, match="task_reuse") as err:
        SAMStore(retriever(reuse_net))
    assert "\n" not in str(err.value) and "SAMStore" in str(err.value)
    with pytest.raises(ValueError, match="task_reuse"):
        SAMStore(store=retriever(reuse_net).store)
    saved = SAMStore(store=retriever(reuse_net).store.__class__(None, StoreConfig(), reuse_net.out_dim))
    saved.save(tmp_path / "graph")  # a store saved without a model (its vectors given), loaded with this one
    with pytest.raises(ValueError, match="^SAMStore does not track"):
        SAMStore.load(tmp_path / "graph", retriever(reuse_net), reencode=True)


def _life(tmp_path, episodes: list[list[dict]], name: str = "life"):
    """evaluate.py's life of ``episodes`` (their events as dicts, steps from 0 each): its log, the used memories'
    steps of each decision (ranking.used_memories) and the decisions' (step, task start)."""
    from sam_model.data.lives import make_lives

    log = write_events(tmp_path / f"{name}.jsonl", make_lives([d for ep in episodes for d in ep], len(episodes)))
    data = build_eval_data(str(log), read_episodes(log), "episode")
    used = [sorted(data.memories[p].step for p in used_memories(data.memories, ex)) for ex in data.examples]
    return log, used, [(ex.step, ex.task_start) for ex in data.examples]


def _synthetic(n: int) -> list[list[dict]]:
    from sam_model.data.synthetic import generate_episodes

    return generate_episodes(n, seed=1)


def _steps(ids) -> list[int]:
    return sorted(int(str(i).rpartition("#")[2]) for i in ids)


def test_episodes_added_to_one_scope_give_the_lifes_uses_and_ranking_across_a_save(reuse_net, tmp_path):
    """One memory serving task after task: episodes whose steps each start at 0, their events added one by one to
    one scope (saved and loaded in the middle of the second), searched at each decision point before its event is
    written: evaluate.py's uses and ranking on the life of them (each episode a task of its own, its labels naming
    its own events). Before, a later episode was numbered on with its labels dropped: its uses were the first
    episode's, carried on."""
    episodes = _synthetic(3)
    log, want_used, _ = _life(tmp_path, episodes)
    assert any(u for u in want_used[8:]) and want_used[8] == []  # the second task starts with no uses: can fail
    _, want = evaluate_rankings(reuse_net, log)
    memory, told, got, n = ScopedMemory(retriever(reuse_net), k=DEPTH), [], [], 0
    for ep in episodes:
        for d in ep:
            n += 1
            if n == len(episodes[0]) + 20:
                memory.save(tmp_path / "saved")
                assert "numbering" in json.loads((tmp_path / "saved" / "scoped.json").read_text())
                memory = ScopedMemory.load(tmp_path / "saved", retriever(reuse_net))
            e = parse_event(d, "test")
            if e.is_decision_point:
                told.append(_steps(memory.used(memory.query_input(e.text, e.state, user_id="u")[1])))
                got.append(_steps(r["id"] for r in memory.search(e.text, e.state, user_id="u")["results"]))
            memory.add(d, user_id="u")
    assert told == want_used
    assert got == [_steps(w) for w in want]


def test_an_event_file_of_several_episodes_added_at_once_keeps_each_ones_labels(reuse_net, tmp_path):
    """The same episodes as one add (an agent's event file) into each of two scopes, the second's episodes in
    another order: each scope's uses at each decision (its step and task start in the scope's life) are evaluate.py's
    on that life, and one scope's never the other's."""
    episodes = _synthetic(3)
    other = [episodes[2], episodes[0], episodes[1]]
    _, want_a, points_a = _life(tmp_path, episodes, "a")
    _, want_b, points_b = _life(tmp_path, other, "b")
    assert want_a != want_b
    memory = ScopedMemory(retriever(reuse_net), k=DEPTH)
    memory.add([d for ep in episodes for d in ep], user_id="a")
    memory.add([d for ep in other for d in ep], user_id="b")
    for user, want, points in (("a", want_a, points_a), ("b", want_b, points_b)):
        assert [_steps(memory.used({"episode": user, "step": s, "task_start": t})) for s, t in points] == want
        # the task start a search reads is the life's: the last episode's first step
        assert memory.query_input("", user_id=user)[1]["task_start"] == points[-1][1]


def test_a_hit_whose_uses_are_not_known_says_none(reuse_net, tmp_path):
    """Hit.used is None where the uses are not known, not False: a user's search reaching the memories of its runs'
    scopes (only the scope's own episode's uses are read), and a conversation given an agent-log decision point,
    numbered on with its labels dropped (a used one still says True); a save keeps which those are."""
    memory = ScopedMemory(retriever(reuse_net), k=DEPTH)
    events = _synthetic(1)[0]
    memory.add(events[:40], user_id="u")
    memory.add(events[:10], user_id="u", run_id="r")
    found = memory.search("", user_id="u", limit=50)["results"]
    assert {r["episode_id"] for r in found} == {"u", "u//r"}
    assert all("used" not in r for r in found if r["episode_id"] == "u//r")
    assert {r["used"] for r in found if r["episode_id"] == "u"} == {True, False}

    _live(memory, "a", CHAT[:-1])
    known = memory.search("", run_id="a", limit=50)["results"]
    assert {r.get("used") for r in known} == {True, False}
    memory.add({"kind": "result", "text": "logged elsewhere", "step": 3, "useful_memory_steps": [1]}, run_id="a")
    for m in (memory, None):
        if m is None:
            memory.save(tmp_path / "saved")
            m = ScopedMemory.load(tmp_path / "saved", retriever(reuse_net))
        found = m.search("", run_id="a", limit=50)["results"]
        assert [r.get("used") for r in found if r.get("used") is not None] == [True] * 2
        assert sorted(r["id"] for r in found if r.get("used")) == sorted(m.used(m.query_input("", run_id="a")[1]))
        assert any("used" not in r for r in found)


def test_the_janus_bank_adapters_refuse_the_model(reuse_net):
    """Janus's memory-bank adapters score the bank's units, which a bank never marks used (it keeps no conversation):
    a reuse model is refused when they are made, in one line naming the adapter, as SAMMemory is, not scored with
    u_m = 0 silently; a model without it is taken."""
    from sam_model.janus.adapters.bank_recall import RecallEvaluator, StreamUpdater
    from sam_model.janus.adapters.memory_bank import BankEvaluator, BankUpdater

    for name, make in (("BankUpdater", BankUpdater), ("BankEvaluator", BankEvaluator),
                       ("RecallEvaluator", RecallEvaluator), ("StreamUpdater", lambda r: StreamUpdater(r, []))):
        with pytest.raises(ValueError, match="task_reuse") as err:
            make(retriever(reuse_net))
        assert "\n" not in str(err.value) and str(err.value).startswith(name)
        reuse_net.reuse, kept = None, reuse_net.reuse
        try:
            make(retriever(reuse_net))
        finally:
            reuse_net.reuse = kept


def test_an_episodes_own_steps_again_or_back_stay_in_its_task(reuse_net, tmp_path):
    """Only an episode of another id, or steps starting again at 0, begins a new task (evaluate.py's life of the
    episodes): an event re-added after its memory was deleted, a batch sent again, a batch whose steps go back are
    numbered on in the same task as before 2026-12-06, their labels (and those of the events continuing them, across
    a save) dropped. Before, each began a task of its own past a gap: the re-added memory's id moved from #5 to #9,
    the episode's search was told a task start in its middle."""
    def ev(s: int, **kw) -> dict:
        return {"kind": "result", "text": f"value V{s}", "step": s, **kw}

    memory = ScopedMemory(retriever(reuse_net), k=DEPTH)
    first = memory.add([ev(s) for s in range(5)], user_id="u")["results"]
    memory.delete(first[4]["id"])
    assert [r["id"] for r in memory.add(ev(4), user_id="u")["results"]] == ["u#5"]
    memory.add([ev(3), ev(4), ev(5, useful_memory_steps=[1])], user_id="u")  # sent again: its label names step 1
    memory.add([ev(0), ev(1), ev(2), ev(1), ev(2)], user_id="v")  # back within a batch
    assert _steps(h.id for h in memory.store.get_all() if h.episode_id == "v") == [0, 1, 2, 3, 4]
    memory.save(tmp_path / "saved")
    memory = ScopedMemory.load(tmp_path / "saved", retriever(reuse_net))
    memory.add(ev(6, useful_memory_steps=[4]), user_id="u")  # continues the batch sent again: its label dropped too
    assert _steps(h.id for h in memory.store.get_all() if h.episode_id == "u") == [0, 1, 2, 3, 5, 6, 7, 8, 9]
    for user in ("u", "v"):
        assert memory.query_input("", user_id=user)[1]["task_start"] == 0
    assert memory.used(memory.query_input("", user_id="u")[1]) == {}
    found = memory.search("", user_id="u", limit=20)["results"]
    assert len(found) == 9 and all("used" not in r for r in found)  # every memory: none says it is used or not
    memory.add([ev(0), ev(1, useful_memory_steps=[0])], user_id="u")  # a new episode from 0: a task, its labels
    assert memory.query_input("", user_id="u")[1]["task_start"] == 10
    assert memory.used(memory.query_input("", user_id="u")[1]) == {"u#10": 1}


def test_two_sessions_interleaved_in_one_scope_are_numbered_on(reuse_net):
    """Two sessions' events (each its episode id, steps from 0) written one by one into one scope: each first step
    0 begins a task, the rest are numbered on in it, steps without gaps. Before, every event of the other id began a
    task of its own past a gap of its own step: [0, 1, 3, 5, 8, 11, 15, 19], the last a task alone."""
    memory = ScopedMemory(retriever(reuse_net), k=DEPTH)
    for s in range(4):
        for ep in ("A", "B"):
            memory.add({"kind": "result", "text": f"{ep} value {s}", "step": s, "episode_id": ep}, user_id="u")
    assert _steps(h.id for h in memory.store.get_all()) == list(range(8))
    assert memory.query_input("", user_id="u")[1]["task_start"] == 1


def test_every_holder_without_a_conversation_refuses_the_model_in_the_same_words(reuse_net):
    """Found by review: SAMMemory, SAMStore and the Janus bank adapters each wrote their own refusal of a reuse model
    (three rules, two wordings: the adapters' advised no ScopedMemory). One rule (sam_model.store.refuse_reuse): the
    same line, but for the name of the holder."""
    from sam_model.integrations.langgraph import SAMStore
    from sam_model.janus.adapters.bank_recall import RecallEvaluator
    from sam_model.janus.adapters.memory_bank import BankEvaluator, BankUpdater

    said = {}
    for name, make in (("SAMMemory", SAMMemory), ("SAMStore", SAMStore), ("BankUpdater", BankUpdater),
                       ("BankEvaluator", BankEvaluator), ("RecallEvaluator", RecallEvaluator)):
        with pytest.raises(ValueError, match="task_reuse") as err:
            make(retriever(reuse_net))
        assert str(err.value).startswith(f"{name} does not track")
        said[name] = str(err.value).removeprefix(name)
    assert len(set(said.values())) == 1 and "ScopedMemory" in said["BankUpdater"]


def test_a_searchs_uses_are_the_end_of_the_rule_that_evaluate_reads():
    """Found by review: a live search's uses (scopeduses.used_steps) took the last of earlier_uses, which copies and
    sorts the uses of every event of the session: each search was quadratic in the session (1,000 events 0.34 s,
    10,000 13 s, measured once, not here: speed is no test's). The end's uses alone, by the same rule
    (data.reuse.running_uses): the same answer as earlier_uses' last, with and without a step and a task start."""
    from types import SimpleNamespace

    from sam_model.data.reuse import earlier_uses, task_uses
    from sam_model.memory.scopeduses import used_steps

    def session(n):
        return SimpleNamespace(events=[{"useful_memory_steps": [j - 1, j - 3] if j > 3 else []} for j in range(n)])

    logged = {400: (2, 5), 401: (7,)}
    for step, start in ((None, None), (150, None), (150, 100), (None, 399)):
        labels = {j: [j - 1, j - 3] if j > 3 else [] for j in range(300)} | {s: list(ls) for s, ls in logged.items()}
        end = 402 if step is None else step
        steps = sorted(s for s in labels if s < end)
        want = task_uses(earlier_uses([*steps, end], [*(labels[s] for s in steps), []])[-1], start)
        assert used_steps(session(300), 0, logged, step, start) == want
    assert len(used_steps(session(5_000), 0, {}, None, None)) == 4_998  # memories 1 to 4,998
