"""How recently the task used a memory (variant ``reuse-recent``, SAMConfig.task_recency): r_m(t) = 1/k, k the rank of
m's latest use among the task's used memories (sam_model.data.reuse.use_ranks), scored as w_r(v_s)·r_m after u_m.

One rule for training (collate_episodes' q_recent, recency_matrix), evaluate.py's replay (the ranks each search is
told) and the live path (ScopedMemory tells the store the same ranks); off, every vector, config and export is as
before.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from test_opening import make_net
from test_reuse import _row
from test_task_first import data_of, write
from test_used_first import ISSUE, event

from sam_model.data.reuse import use_ranks
from sam_model.encoder import SAMEncoder
from sam_model.evaluation.methods import retriever_methods
from sam_model.evaluation.ranking import used_memories, used_ranks
from sam_model.models.losses import MultiPositiveInfoNCE
from sam_model.models.sam import SAMConfig
from sam_model.store import MemoryStore
from sam_model.storeconfig import StoreConfig
from sam_model.training.batching import collate_episodes, recency_matrix, reuse_matrix
from sam_model.training.objective import batch_loss

# ISSUE's decisions, then one more whose task used three memories at two calls: the issue (last at 5), the search
# result and the file's lines (both at 7)
LATER = [*ISSUE, event("A", 8, "result", "edited"), event("A", 9, "action", "CALL test(billing/tax.py)", useful=[6])]


def test_ranks_count_the_memories_used_later_and_a_calls_memories_share_one():
    assert use_ranks({}) == {}
    assert use_ranks({5: 10, 3: 10, 1: 4, 2: 7, 9: 12}) == {9: 1, 5: 2, 3: 2, 2: 4, 1: 5}
    assert use_ranks({"a": 3}) == {"a": 1}


def test_off_the_model_is_reuses_and_on_its_recency_weight_starts_at_zero(tiny_bert_dir, tmp_path):
    from serving import tiny_export

    from sam_model.export import read_config

    torch.manual_seed(0)
    reuse = make_net(tiny_bert_dir, time_features=4, task_opening=True, task_reuse=True).eval()
    torch.manual_seed(0)
    recent = make_net(tiny_bert_dir, time_features=4, task_opening=True, task_reuse=True, task_recency=True).eval()
    assert not any(k.startswith("reuse.recency") for k in reuse.state_dict())  # reuse's names, as before
    assert set(recent.state_dict()) - set(reuse.state_dict()) == {"reuse.recency.weight", "reuse.recency.bias"}
    assert recent.out_dim == reuse.out_dim + 1
    texts, kinds, phases = ["fix foo in bar.py", "ok"], ["user", "tool"], ["collect"] * 2
    with torch.no_grad():
        m_reuse = reuse.encode_memories(texts, kinds, phases, steps=[1, 2], opens=[True, False])
        m_recent = recent.encode_memories(texts, kinds, phases, steps=[1, 2], opens=[True, False])
        q_reuse = reuse.encode_queries(["phase: collect"], ["collect"], ["go"], steps=[3], task_starts=[0])
        q_recent = recent.encode_queries(["phase: collect"], ["collect"], ["go"], steps=[3], task_starts=[0])
    assert torch.equal(m_recent[:, :-1], m_reuse) and m_recent[:, -1].tolist() == [0.0, 0.0]
    assert torch.equal(q_recent[:, :-1], q_reuse) and q_recent[:, -1].tolist() == [0.0]
    assert "task_recency" not in SAMConfig(task_opening=True, task_reuse=True).to_dict()
    assert SAMConfig(task_recency=True).to_dict()["task_recency"] is True
    with pytest.raises(ValueError, match="task_reuse"):
        make_net(tiny_bert_dir, task_opening=True, task_recency=True)
    tiny_export(tiny_bert_dir, tmp_path / "off", task_opening=True, task_reuse=True)
    assert "task_recency" not in (tmp_path / "off" / "config.json").read_text()
    assert read_config(tmp_path / "off" / "config.json")[0].task_recency is False
    tiny_export(tiny_bert_dir, tmp_path / "on", task_opening=True, task_reuse=True, task_recency=True)
    assert json.loads((tmp_path / "on" / "config.json").read_text())["sam"]["task_recency"] is True


def test_training_gives_each_used_memory_1_over_its_rank():
    # decisions at 2 (label 0), 4 (0, 1), 5 (3), 6 (1); a second episode's memories are never used
    batch = collate_episodes([(0, _row([[], [], [0], [], [0, 1], [3], [1]])), (1, _row([[], [0]]))])
    args = batch["q_episode"], batch["q_used"], batch["mem_episode"], batch["mem_step"]
    r = recency_matrix(batch["q_episode"], batch["q_used"], batch["q_recent"], batch["mem_episode"],
                       batch["mem_step"])
    assert r.shape == (5, 9)
    assert r[:, :7].tolist() == [[0.0] * 7,
                                 [1.0] + [0.0] * 6,  # 0, used at 2
                                 [1.0, 1.0] + [0.0] * 5,  # 0 and 1, both last used at 4
                                 [0.5, 0.5, 0, 1.0, 0, 0, 0],  # 3 used at 5, later than 0 and 1
                                 [0.0] * 7]  # the other episode's decision: its own label only
    assert r[:, 7:].sum() == 0 and torch.equal(r > 0, reuse_matrix(*args))  # r_m is set where u_m is, and only


def _recent_rows(n: int) -> list[tuple[int, dict]]:
    """Two copies of one text, both used earlier; the last decision's label is the one used later."""
    texts = ["order 17", "order 17", "call", "call", "call"]
    return [(ep, _row([[], [], [0], [1], [1]], texts=texts)) for ep in range(n)]


def test_the_recency_weight_learns_to_rank_the_latest_used_first(tiny_bert_dir):
    """u_m cannot tell the two copies apart at the last decision (both used, equal vectors); r_m can."""
    net = make_net(tiny_bert_dir, alpha=1.0, learn_alpha=False, task_opening=True, task_reuse=True,
                   task_recency=True)
    batch = collate_episodes(_recent_rows(8))
    loss_fn, opt = MultiPositiveInfoNCE(0.1, learnable=False), torch.optim.Adam(net.reuse.parameters(), lr=0.05)
    for _ in range(40):
        loss = batch_loss(net, loss_fn, batch, in_batch_negatives=False)
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert net.reuse.recency.bias.item() > 0


def _replay(tiny_bert_dir, tmp_path, w_u: float, w_r: float):
    net = make_net(tiny_bert_dir, task_opening=True, task_reuse=True, task_recency=True).eval()
    with torch.no_grad():
        net.reuse.head.bias.fill_(w_u)
        net.reuse.recency.bias.fill_(w_r)
    enc = SAMEncoder(net)
    data = data_of(write(tmp_path / "issue.jsonl", LATER))
    (method,) = retriever_methods("sam", enc)
    return enc, data, method, method.rank(data, "episode", 10, np.zeros(len(data.memories)))


def test_evaluate_replay_scores_1_over_the_rank_of_each_used_memory(tiny_bert_dir, tmp_path):
    """The replay's rankings are the inner products plus w_u·u_m + w_r·r_m, r_m = 1/k of the rank its search is
    told: at the last decision the two memories used by the latest call rank above the issue used before them."""
    enc, data, method, got = _replay(tiny_bert_dir, tmp_path, 0.0, 10.0)
    m = enc.encode_memories(data.memories)
    q = method.replay.encode_queries(data.examples)
    told = [used_ranks(data.memories, ex) for ex in data.examples]
    assert [sorted(t.values()) for t in told] == [[], [1], [1, 1], [1, 1, 3]]  # the ranks differ: the test can fail
    for i, ex in enumerate(data.examples):
        r = range(ex.episode_start, ex.cutoff)
        score = {p: float(m[p] @ q[i]) + (10.0 / told[i][p] if p in told[i] else 0.0) for p in r}
        assert list(got[i]) == sorted(r, key=lambda p: -score[p])
    last = data.examples[-1]
    assert [data.memories[p].step for p in got[-1][:3]] in ([3, 6, 1], [6, 3, 1])
    assert set(got[-1][:3]) == set(used_memories(data.memories, last))


def test_the_store_scores_ranks_as_an_index_holding_u_and_r_and_refuses_ids_without_ranks(tiny_bert_dir, tmp_path):
    """Told id -> rank, the store scores [u_m, r_m] = [1, 1/k] on the told memories: the same ids, order and scores
    as an index whose vectors held them. A recency model told the ids alone (no ranks), or a rank that is not a
    positive integer, is refused in one line."""
    enc, data, _, _ = _replay(tiny_bert_dir, tmp_path, -1.0, 4.0)
    store = MemoryStore(enc, StoreConfig(provenance=False))
    store.add(data.memories)
    vectors = np.asarray(enc.encode_memories(data.memories), dtype=np.float32)
    ex = data.examples[-1]
    ranks = {data.memories[p].id: k for p, k in used_ranks(data.memories, ex).items()}
    marked = MemoryStore(None, StoreConfig(provenance=False), vectors.shape[1])
    held = vectors.copy()
    for n, mem in enumerate(data.memories):
        if mem.id in ranks:
            held[n, -2:] = [1.0, 1.0 / ranks[mem.id]]
    marked.add(data.memories, held)
    q = np.asarray(enc.encode_queries([ex.state], [ex.observation], steps=[ex.step], task_starts=[ex.task_start]),
                   dtype=np.float32)[0]
    a = store.search_vector(q, 5, episode_id=ex.episode_id, before=(ex.episode_id, ex.step), used=ranks)
    b = marked.search_vector(q, 5, episode_id=ex.episode_id, before=(ex.episode_id, ex.step))
    assert [h.id for h in a] == [h.id for h in b]
    np.testing.assert_allclose([h.score for h in a], [h.score for h in b], rtol=0, atol=1e-6)
    assert [h.used for h in a] == [h.id in ranks for h in a]
    with pytest.raises(ValueError, match="task_recency") as err:
        store.search_vector(q, 5, episode_id=ex.episode_id, used=list(ranks))
    assert "\n" not in str(err.value)
    with pytest.raises(ValueError, match=r"used\[.*rank"):
        store.search_vector(q, 5, episode_id=ex.episode_id, used=dict.fromkeys(ranks, 0))


@pytest.fixture(scope="module")
def recent_net(tiny_bert_dir):
    """A tiny network with the reuse and recency parts, w_u and w_r random functions of the state, large enough to
    move memories."""
    from sam_model.models.sam import SAMNet

    torch.manual_seed(1)
    net = SAMNet(SAMConfig(bert_path=str(tiny_bert_dir), dim=16, hidden=32, proj_hidden=32, max_length=48,
                           time_features=8, task_opening=True, task_reuse=True, task_recency=True,
                           kinds=["user", "system", "action", "result", "thought", "observation"]))
    with torch.no_grad():
        net.time.head.weight.normal_(0, 0.5)
        net.reuse.head.weight.normal_(0, 2.0)
        net.reuse.head.bias.fill_(0.2)
        net.reuse.recency.weight.normal_(0, 2.0)
        net.reuse.recency.bias.fill_(1.0)
    return net.eval()


def test_a_conversation_fed_live_is_told_evaluates_ranks_and_ranks_as_it_does(recent_net, tmp_path):
    """The key test, as tests/test_live_reuse.py's for reuse: the transcript fed to ScopedMemory message by message,
    searched by each call at a decision point, is told the same used memories *with the same ranks* as evaluate.py's
    replay of the converted log, and ranks as it does; with w_r zeroed the rankings differ (r_m moves them)."""
    import copy

    from test_agreement import DEPTH, evaluate_rankings, plain, retriever
    from test_live_reuse import CHAT, _log

    from sam_model.data.chatmessages import parse_tool_calls, policy_of
    from sam_model.data.reader import read_episodes
    from sam_model.data.toolstate import TranscriptState
    from sam_model.evaluation.data import build_eval_data
    from sam_model.memory import ScopedMemory

    log = _log(tmp_path)
    data = build_eval_data(str(log), read_episodes(log), "episode")
    want_ranks = [{data.memories[p].id: k for p, k in used_ranks(data.memories, ex).items()} for ex in data.examples]
    assert sorted(want_ranks[-1].values()) == [1, 2]  # at 12: 2 last used at 10, 0 at 8: the test can fail
    _, want = evaluate_rankings(recent_net, log)
    memory, importer, told, got = ScopedMemory(retriever(recent_net), k=DEPTH), TranscriptState("trip", policy_of(CHAT)), [], []
    for message in CHAT:
        if message.get("role") == "assistant" and message.get("tool_calls"):
            decision = importer.decide(parse_tool_calls(message, "message"))
            if decision is not None and decision.labels:
                _, inputs = memory.query_input("", run_id="trip", call=message["tool_calls"])
                told.append({plain(i): k for i, k in memory.used(inputs).items()})
                found = memory.search("", run_id="trip", call=message["tool_calls"], limit=DEPTH)
                got.append([plain(r["id"]) for r in found["results"]])
        importer.feed(message)
        memory.add([message], run_id="trip")
    assert told == want_ranks and got == want
    flat = copy.deepcopy(recent_net)
    with torch.no_grad():
        flat.reuse.recency.weight.zero_()
        flat.reuse.recency.bias.zero_()
    assert evaluate_rankings(flat, log)[1] != want
