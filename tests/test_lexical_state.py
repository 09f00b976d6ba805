"""The lexical weight read from the state (SAMConfig.lexical_state, sam_model.models.lexstate): w(v_s) trained with
the network and served per query as the query vector's last part."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
import training

from sam_model.data.examples import MemoryRecord
from sam_model.data.schema import State
from sam_model.data.text import state_to_text
from sam_model.export import save_exported, served_store
from sam_model.models.losses import MultiPositiveInfoNCE
from sam_model.models.sam import SAMConfig, SAMNet
from sam_model.rerank import lexical_bonus
from sam_model.retriever import SAMRetriever
from sam_model.store import MemoryStore
from sam_model.storeconfig import StoreConfig
from sam_model.training.batching import collate_episodes, encode_batch
from sam_model.training.objective import batch_loss

TEXTS = ["pizza_hut table booking confirmed", "hotel ibis checkin monday", "flight lhr jfk tuesday", "call"]


def _rows(kinds: list[tuple[str, int]], n: int = 4) -> list[tuple[int, dict]]:
    """Episodes of four memories and one decision (at the last step) of each (state text, label) in ``kinds``."""
    rows = []
    for state, label in kinds:
        row = {"steps": [0, 1, 2, 3], "texts": TEXTS, "memory_texts": TEXTS, "kinds": ["tool"] * 4,
               "phases": ["collect"] * 4, "labels": [[], [], [], [label]],
               "state_texts": ["phase: collect"] * 3 + [state], "task_starts": [0] * 4}
        rows += [row] * n
    return list(enumerate(rows))


# a state naming the words of the memory it needs (BM25 helps), and one naming a memory it does not need (it hurts)
HELPS, HURTS = ("restaurant pizza_hut table booking", 0), ("hotel ibis checkin monday but not that, the flight", 2)


def _net(bert_dir, **kw) -> SAMNet:
    return training.make_net(bert_dir, ["collect"], ["tool"], **kw)


def test_the_memory_side_is_0_and_the_inner_product_is_unchanged(tiny_bert_dir):
    off, on = _net(tiny_bert_dir).eval(), _net(tiny_bert_dir, lexical_state=True).eval()
    assert on.out_dim == off.out_dim + 1 and on.lexical_tail == 1 and off.lexical_tail == 0
    batch = collate_episodes(_rows([HELPS, HURTS], n=1))
    with torch.no_grad():
        q0, m0 = encode_batch(off, batch)
        q1, m1 = encode_batch(on, batch)
    assert torch.equal(m1[:, -1], torch.zeros(len(m1))) and torch.equal(m1[:, :-1], m0)
    assert torch.equal(q1[:, :-1], q0) and torch.allclose(q1[:, -1], torch.full((len(q1),), 0.1))
    assert torch.allclose(q1 @ m1.T, q0 @ m0.T, atol=1e-6)


def test_with_reuse_the_marks_still_weigh_u_m(tiny_bert_dir):
    """u_m is no longer the vector's last part: training reads w_u before w(v_s)."""
    kw = {"task_opening": True, "task_reuse": True}
    plain = training.make_net(tiny_bert_dir, ["collect"], ["user", "tool"], **kw).eval()
    on = training.make_net(tiny_bert_dir, ["collect"], ["user", "tool"], lexical_state=True, **kw).eval()
    with torch.no_grad():
        on.lexical_state.head.bias.fill_(-40.0)  # w ≈ 0: the scores are those of the model without it
        plain.reuse.head.bias.fill_(2.0), on.reuse.head.bias.fill_(2.0)
    texts = ["user id 42 asks for a refund", "order 7 shipped", "card ending 1234", "weather is fine", "refund done"]
    row = {"steps": [0, 1, 2, 3, 4], "texts": texts, "memory_texts": texts,
           "kinds": ["user", "tool", "user", "tool", "tool"], "phases": ["collect"] * 5,
           "labels": [[], [], [0], [1], [0]], "state_texts": [f"phase: collect step {s}" for s in range(5)],
           "task_starts": [0] * 5}
    batch, loss_fn = collate_episodes([(0, row), (1, row)]), MultiPositiveInfoNCE(0.1, learnable=False)
    with torch.no_grad():
        unmarked = batch_loss(training.make_net(tiny_bert_dir, ["collect"], ["user", "tool"], **kw).eval(),
                              loss_fn, batch).item()
        want, got = batch_loss(plain, loss_fn, batch).item(), batch_loss(on, loss_fn, batch).item()
    assert want != pytest.approx(unmarked, abs=1e-3)  # the marks count here
    assert got == pytest.approx(want, abs=1e-5)


class _ReuseLex:  # what the store reads: an encoder whose net has a reuse part and a lexical_state part after it
    dim, net = 6, type("Net", (), {"reuse": object(), "lexical_tail": 1})()


def test_the_store_marks_u_m_before_the_lexical_part():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(8, _ReuseLex.dim)).astype(np.float32)
    x[:, -2:] = 0.0
    recs = [MemoryRecord(f"e#{s}", "e", s, "tool", "collect", f"memory {s}") for s in range(8)]
    told = MemoryStore(_ReuseLex(), StoreConfig(provenance=False))
    told.add(recs, x)
    marked = MemoryStore(None, StoreConfig(provenance=False), _ReuseLex.dim)
    y = x.copy()
    y[[2, 5], -2] = 1.0
    marked.add(recs, y)
    q = 0.1 * rng.normal(size=_ReuseLex.dim).astype(np.float32)
    q[-2], q[-1] = 3.0, 0.4  # w_u lifts the used ones; w(v_s) weighs no memory vector
    a, b = told.search_vector(q, 8, used=["e#2", "e#5"]), marked.search_vector(q, 8)
    assert [h.id for h in a] == [h.id for h in b] and a[0].id in ("e#2", "e#5")
    np.testing.assert_allclose([h.score for h in a], [h.score for h in b], rtol=0, atol=1e-9)


def test_the_gradient_reaches_the_heads_weights_and_bias(tiny_bert_dir):
    net = _net(tiny_bert_dir, lexical_state=True)
    loss = batch_loss(net, MultiPositiveInfoNCE(0.1, learnable=False), collate_episodes(_rows([HELPS, HURTS])),
                      in_batch_negatives=False)
    loss.backward()
    head = net.lexical_state.head
    assert head.bias.grad is not None and head.bias.grad.abs().item() > 0
    assert head.weight.grad is not None and head.weight.grad.abs().sum().item() > 0


def test_w_differs_across_states_where_the_evidence_does(tiny_bert_dir):
    """A few steps on the lexical head alone: w rises for the state whose named memory is the label, falls for the
    one whose named memory is a decoy."""
    net = _net(tiny_bert_dir, lexical_state=True)
    batch = collate_episodes(_rows([HELPS, HURTS]))
    first, last = training.train_part(net, net.lexical_state.parameters(), batch, steps=30)
    assert last < first
    with torch.no_grad():
        q, _ = encode_batch(net.eval(), batch)
    w = q[:, -1]
    helps, hurts = w[: len(w) // 2], w[len(w) // 2:]
    assert helps.min().item() > 0.1 > hurts.max().item() >= 0.0
    assert helps.min().item() - hurts.max().item() > 0.05


def test_lexical_state_with_lexical_learned_or_without_a_state_is_refused(tiny_bert_dir):
    with pytest.raises(ValueError, match="lexical_state and model.net.lexical_learned are both on"):
        _net(tiny_bert_dir, lexical_state=True, lexical_learned=True)
    with pytest.raises(ValueError, match="lexical_state needs query_input 'state'"):
        _net(tiny_bert_dir, lexical_state=True, query_input="observation")


def test_old_configs_and_exports_load_unchanged(tiny_bert_dir, tmp_path):
    assert "lexical_state" not in SAMConfig().to_dict() and SAMConfig(lexical_state=True).to_dict()["lexical_state"]
    assert SAMConfig.from_saved(SAMConfig().to_dict()).lexical_state is False
    assert "lexical_per_query" not in StoreConfig().to_dict()  # a store saves what it saved before the field
    net = SAMNet(SAMConfig(bert_path=str(tiny_bert_dir), dim=8, hidden=16, proj_hidden=16))
    out = save_exported(net, tmp_path / "old")
    config = json.loads((out / "config.json").read_text())
    assert "lexical_state" not in config["sam"] and "lexical_per_query" not in config["store"]
    r = SAMRetriever.load(out, device="cpu")
    assert r.net.lexical_state is None and not r.store.lexical_per_query and r.store.config == StoreConfig()


def _lexstate_net(bert_dir) -> SAMNet:
    net = SAMNet(SAMConfig(bert_path=str(bert_dir), dim=8, hidden=16, proj_hidden=16, phases=["collect"],
                           kinds=["tool"], lexical_state=True)).eval()
    with torch.no_grad():  # a head that weighs states differently, as training leaves it
        net.lexical_state.head.weight.copy_(torch.linspace(-3.0, 3.0, 8)[None])
    return net


MEMORIES = ["restaurant pizza_hut booked for two", "hotel ibis checkin monday", "flight lhr jfk tuesday",
            "pizza_hut menu and hotel ibis prices", "the weather in paris", "call the user back"]


def _store_of(net: SAMNet, config: StoreConfig) -> tuple[MemoryStore, list[MemoryRecord]]:
    recs = [MemoryRecord(f"e#{s}", "e", s, "tool", "collect", t) for s, t in enumerate(MEMORIES)]
    r = SAMRetriever(net, config)
    r.store.add(recs)
    return r.store, recs


def _by_hand(store: MemoryStore, recs, q: np.ndarray, text: str, w: float) -> list[str]:
    m = store.index.get_vectors([r.id for r in recs]).astype(np.float64)
    scores = m @ q.astype(np.float64) + lexical_bonus(text, [r.text for r in recs], w)
    return [recs[i].id for i in np.argsort(-scores, kind="stable")]


def test_the_store_ranks_by_scores_plus_each_querys_own_w_times_bm25(tiny_bert_dir, tmp_path):
    net = _lexstate_net(tiny_bert_dir)
    config = served_store(net)
    assert config.lexical_per_query and config.lexical == 0.0
    store, recs = _store_of(net, StoreConfig(provenance=False, lexical_per_query=True))
    states = [State(phase="collect", constraints={"restaurant": "pizza_hut"}),
              State(phase="collect", constraints={"hotel": "ibis"})]
    q = store.encoder.encode_queries(states, ["book it", "check in"])
    ws = q[:, -1]
    assert abs(float(ws[0]) - float(ws[1])) > 0.01  # two queries, two weights
    for i, st in enumerate(states):
        text = state_to_text(st)
        hits = store.search_vector(q[i], len(recs), query_text=text)
        assert [h.id for h in hits] == _by_hand(store, recs, q[i], text, float(ws[i]))
        assert [h.id for h in store.search(st, ["book it", "check in"][i], len(recs))] == [h.id for h in hits]
        own = lexical_bonus(text, [store._entries[h.id].text for h in hits], float(ws[i]))
        np.testing.assert_allclose([h.rerank_bonus for h in hits], own, atol=1e-9)
    # the weight is read off each vector: one state's vector at two weights ranks as each weight says, differently
    text, rankings = state_to_text(states[0]), []
    for w in (0.0, 3.0):
        v = q[0].copy()
        v[-1] = w
        rankings.append([h.id for h in store.search_vector(v, len(recs), query_text=text)])
        assert rankings[-1] == _by_hand(store, recs, v, text, w)
    assert rankings[0] != rankings[1]
    # a fixed weight set after loading wins over the per-query one
    fixed = store.config.with_lexical(0.0)
    assert not fixed.lexical_per_query and fixed.lexical == 0.0
    store.config = fixed
    hits = store.search_vector(q[0], len(recs), query_text=state_to_text(states[0]))
    assert all(h.rerank_bonus == 0.0 for h in hits)


def test_every_loading_path_serves_the_per_query_weight(tiny_bert_dir, tmp_path):
    net = _lexstate_net(tiny_bert_dir)
    assert SAMRetriever(net).store.lexical_per_query  # a retriever made from the net in hand
    out = save_exported(net, tmp_path / "export")  # an export, written without store settings
    assert json.loads((out / "config.json").read_text())["store"]["lexical_per_query"] is True
    assert SAMRetriever.load(out, device="cpu").store.lexical_per_query
    ckpt = tmp_path / "lex.ckpt"  # a checkpoint, whatever its model.store.lexical
    torch.save({"hyper_parameters": {"net": net.cfg.to_dict(), "bert_config": None,
                                     "store": StoreConfig(lexical=0.3).to_dict()},
                "state_dict": {f"net.{k}": v for k, v in net.state_dict().items()}}, ckpt)
    r = SAMRetriever.load(ckpt, device="cpu")
    assert r.store.lexical_per_query and r.store.config.lexical == 0.0


def test_a_vector_not_of_such_a_network_is_refused(tiny_bert_dir):
    store = MemoryStore(None, StoreConfig(provenance=False, lexical_per_query=True), 3)
    store.add([MemoryRecord("e#0", "e", 0, "tool", "collect", "pizza_hut")], np.ones((1, 3), dtype=np.float32))
    with pytest.raises(ValueError, match="lexical_per_query reads each query's lexical weight"):
        store.search_vector(np.array([1.0, 0.0, -0.5], dtype=np.float32), 1, query_text="pizza_hut")


def test_configure_optimizers_puts_the_bias_alone_at_the_lexical_rate(tiny_bert_dir):
    from sam_model.training.module import SAMLightningModule

    cfg = SAMConfig(bert_path=str(tiny_bert_dir), dim=16, hidden=32, proj_hidden=32, max_length=32, dropout=0.0,
                    phases=["collect"], kinds=["tool"], lexical_state=True)
    module = SAMLightningModule(cfg, lr=1e-3, warmup_steps=0, lexical_lr=0.03)
    rates = training.group_rates(module)
    head = module.net.lexical_state.head
    assert rates[id(head.bias)] == 0.03 and rates[id(head.weight)] == 1e-3
    assert {lr for i, lr in rates.items() if i != id(head.bias)} == {1e-3}


def test_the_lodo_variant_lexstate_is_apart_with_the_state_weight():
    from sam_model.bench.lodo import VARIANTS

    a, s = VARIANTS["apart"], VARIANTS["lexstate"]
    assert s.configs == a.configs + ("configs/lexical_state.yaml", "configs/lexical_lr.yaml") and s.on == "apart"
    assert (s.worlds, s.plots, s.brief, s.turn) == (a.worlds, a.plots, a.brief, a.turn)


def test_a_tiny_fit_with_the_override_exports_a_store_that_serves_w_per_query(tmp_path, tiny_bert_dir, capsys):
    """train.py fit with configs/lexical_state.yaml and configs/lexical_lr.yaml, its export loaded and searched:
    every query's weight is its own w(v_s), read off its vector."""
    from test_resume import REPO, _config

    from sam_model.data.synthetic import write_synthetic
    from sam_model.evaluation.data import load_eval_data
    from sam_model.training.cli import main as train_main

    log = tmp_path / "train.jsonl"
    write_synthetic(log, 20, seed=0)
    cfg = _config(tmp_path, "lex", log, tiny_bert_dir)
    train_main(["fit", "--config", str(cfg), "--config", str(REPO / "configs" / "lexical_state.yaml"), "--config",
                str(REPO / "configs" / "lexical_lr.yaml"), "--trainer.max_epochs=2"])
    r = SAMRetriever.load(tmp_path / "lex" / "export", device="cpu")
    assert r.net.cfg.lexical_state and r.store.lexical_per_query
    data = load_eval_data(log, "episode", 40, 0, False)
    exs = data.examples
    q = r.encoder.encode_queries([e.state for e in exs], [e.observation for e in exs],
                                 steps=[e.step for e in exs], task_starts=[e.task_start for e in exs])
    w = q[:, -1].astype(np.float64)
    assert (w >= 0).all() and w.max() - w.min() > 0  # trained: not one scalar for every state
    with capsys.disabled():
        print(f"\nserved w(v_s) over {len(w)} queries: mean {w.mean():.4f}, p10 {np.percentile(w, 10):.4f}, "
              f"p90 {np.percentile(w, 90):.4f}")
    r.store.add(data.memories)
    ex = exs[-1]
    hits = r.store.search_vector(q[-1], 5, query_text=ex.state_text, before=(ex.episode_id, ex.step))
    assert hits and any(h.rerank_bonus > 0 for h in hits)


def _served_lexstate(bert_dir, bias: float) -> SAMRetriever:
    """A lexical_state network whose w(v_s) is about softplus(``bias``) for every state, as its store serves it."""
    import dataclasses

    from test_opening import make_net

    net = make_net(bert_dir, lexical_state=True).eval()
    with torch.no_grad():
        net.lexical_state.head.bias.fill_(bias)
    return SAMRetriever(net, dataclasses.replace(served_store(net), provenance=False))


def test_choosing_the_ordering_alone_measures_and_keeps_the_per_query_weight(tiny_bert_dir, tmp_path):
    """choose_order without a lexical grid (export.used_order auto) scores each ordering as the store serves it, at
    each query's own w(v_s), and the export keeps that weight: it was scored at weight 0 and served per query."""
    from test_choose_order import _big, _named

    from sam_model.choose_order import ORDERS, choose_order, with_order
    from sam_model.evaluation.run import score_orders

    data = _big(tmp_path, _named)
    r = _served_lexstate(tiny_bert_dir, 2.0)  # w ≈ 2.1: the named result found
    served = score_orders(r, data, list(ORDERS))
    fixed0 = score_orders(SAMRetriever(r.net, r.store.config.with_lexical(0.0)), data, ["off"])["off"]["mrr"]
    assert served["off"]["mrr"] > fixed0 + 0.2  # w(v_s) matters here
    record = choose_order(r, data, lexicals=None)
    assert {row["used_order"]: row["mrr"] for row in record["table"]} == {o: served[o]["mrr"] for o in ORDERS}
    _, config = with_order(r, record)
    assert config.lexical_per_query and config.used_order == (None if record["used_order"] == "off"
                                                              else record["used_order"])


def test_a_joint_choice_on_a_per_query_store_serves_the_fixed_weight_it_chose_and_says_so(tiny_bert_dir, tmp_path):
    """The lexical grid is of fixed weights: the one chosen replaces w(v_s) (a fixed weight set after loading wins),
    and a line says the per-query weight was not among those scored."""
    from test_choose_order import _big, _named

    from sam_model.choose_order import choose_order, order_alone, with_order
    from sam_model.io import SAMFileError

    said: list[str] = []
    r = _served_lexstate(tiny_bert_dir, -40.0)  # w ≈ 0: a fixed weight > 0 wins the grid
    record = choose_order(r, _big(tmp_path, _named), say=said.append)
    assert record["lexical"] > 0
    _, config = with_order(r, record)
    assert not config.lexical_per_query and config.lexical == record["lexical"]
    assert sum("lexical_state" in line and "w(v_s)" in line for line in said) == 1
    with pytest.raises(SAMFileError, match="lexical_state.*--lexical keep"):  # its rows at 0 are not what it serves
        order_alone(record)


@pytest.mark.parametrize("recency", [False, True])
def test_with_opening_reuse_and_recency_the_store_serves_w_as_a_fixed_store_serves_that_weight(tiny_bert_dir, recency):
    """Every w(v_s) one value: the search of the network with lexical_state is the search of the same network
    without it at that fixed weight (u_m and r_m marked in their columns, before the lexical part)."""
    import dataclasses

    kw = {"task_opening": True, "task_reuse": True, "task_recency": recency}
    nets = []
    for lex in (False, True):
        net = _net(tiny_bert_dir, lexical_state=lex, **kw).eval()
        with torch.no_grad():
            net.reuse.head.bias.fill_(1.0)
            if recency:
                net.reuse.recency.bias.fill_(-0.5)
            if lex:
                net.lexical_state.head.bias.fill_(0.3)
        nets.append(net)
    w = float(torch.nn.functional.softplus(torch.tensor(0.3)))
    stores = [SAMRetriever(nets[0], StoreConfig(provenance=False, lexical=w)).store,
              SAMRetriever(nets[1], dataclasses.replace(served_store(nets[1]), provenance=False)).store]
    found = []
    for store in stores:
        store.add([MemoryRecord(f"e#{s}", "e", s, "tool", "collect", t) for s, t in enumerate(MEMORIES)])
        hits = store.search(State(phase="collect", constraints={"restaurant": "pizza_hut"}), "book it", 6,
                            used={"e#2": 1, "e#4": 2} if recency else ["e#2", "e#4"])
        found.append([(h.id, round(h.score, 5), round(h.rerank_bonus, 5)) for h in hits])
    assert stores[1].dim == stores[0].dim + 1 and stores[1].lexical_per_query
    assert found[0] == found[1] and {found[0][0][0], found[0][1][0]} & {"e#2", "e#4"}  # the marks lift them
    assert any(b > 0 for _, _, b in found[0])


def test_evaluates_replay_with_uses_told_reads_each_querys_weight(tiny_bert_dir, tmp_path):
    """evaluate's replay (StoreReplay, every ordering, the uses told) of a network whose w(v_s) is one value for
    every state scores as the store at that fixed weight does, and differently from weight 0."""
    from test_choose_order import _big, _named

    from sam_model.choose_order import ORDERS
    from sam_model.evaluation.run import score_orders

    data = _big(tmp_path, _named)
    r = _served_lexstate(tiny_bert_dir, 0.5)
    w = float(torch.nn.functional.softplus(torch.tensor(0.5)))
    per_query = score_orders(r, data, list(ORDERS))
    fixed = score_orders(SAMRetriever(r.net, r.store.config.with_lexical(w)), data, list(ORDERS))
    zero = score_orders(SAMRetriever(r.net, r.store.config.with_lexical(0.0)), data, list(ORDERS))
    for o in ORDERS:
        assert per_query[o]["mrr"] == pytest.approx(fixed[o]["mrr"], abs=1e-9)
    assert per_query["off"]["mrr"] > zero["off"]["mrr"]


def test_the_card_says_the_lexical_match_is_weighed_per_query(tiny_bert_dir, tmp_path):
    """The export's card names the lexical re-rank its store serves: each query's own w(v_s), none for a fixed 0."""
    net = _lexstate_net(tiny_bert_dir)
    card = (save_exported(net, tmp_path / "per_query") / "README.md").read_text()
    assert "lexical match at each query's own weight w(v_s)" in card
    fixed = save_exported(net, tmp_path / "fixed", served_store(net).with_lexical(0.0))
    assert "lexical match" not in (fixed / "README.md").read_text()


def test_a_per_query_store_for_a_network_without_lexical_state_is_refused(tiny_bert_dir):
    """Its vectors' last part is no lexical weight (a content dimension, or w_u of a reuse model), which the store
    would read as one: refused in one line where the store is made, and where a training is set up."""
    from sam_model.training.module import SAMLightningModule

    for kw in ({}, {"task_opening": True, "task_reuse": True}):
        net = _net(tiny_bert_dir, **kw).eval()
        with pytest.raises(ValueError, match="store.lexical_per_query is on but .* lexical_state"):
            SAMRetriever(net, StoreConfig(lexical_per_query=True))
    cfg = SAMConfig(bert_path=str(tiny_bert_dir), dim=16, hidden=32, proj_hidden=32, max_length=32,
                    phases=["collect"], kinds=["tool"])
    with pytest.raises(ValueError, match="model.store.lexical_per_query is on but model.net.lexical_state is off"):
        SAMLightningModule(cfg, store=StoreConfig(lexical_per_query=True))
    assert SAMRetriever(_lexstate_net(tiny_bert_dir), StoreConfig(lexical_per_query=True)).store.lexical_per_query
