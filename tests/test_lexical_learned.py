"""The lexical weight learned in training (SAMConfig.lexical_learned) and the one BM25 both it and the store use."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
import torch
import training

from sam_model.export import save_exported, served_store
from sam_model.models.losses import MultiPositiveInfoNCE
from sam_model.models.sam import SAMConfig, SAMNet
from sam_model.rerank import BM25_B, BM25_K1, bm25_matrix, lexical_bonus, words
from sam_model.retriever import SAMRetriever
from sam_model.storeconfig import StoreConfig
from sam_model.training.batching import candidate_masks, collate_episodes, encode_batch
from sam_model.training.objective import batch_loss, lexical_matrix

CASES = [
    ("book a table at pizza_hut for 2 people", ["restaurant pizza_hut party_size 2", "hotel ibis checkin monday",
                                                 "pizza pizza pizza_hut table booked", ""]),
    ("search_flights origin=LHR destination=JFK", ["search_flights LHR JFK", "search_flights origin",
                                                    "the a an of", "LHR LHR LHR LHR LHR destination"]),
    ("the of and", ["anything at all", "more words here"]),  # a query of stop words only
    ("weather in paris", ["weather paris paris", "weather", "paris"]),
    ("unmatched query words", ["nothing shared", "still nothing"]),
]


def reference_bonus(query: str, texts: list[str], weight: float) -> np.ndarray:
    """lexical_bonus as it was before bm25_matrix (kept verbatim): the refactor must give the same bytes."""
    if not weight or not texts:
        return np.zeros(len(texts), dtype=np.float64)
    q = set(words(query))
    docs = [words(t) for t in texts]
    if not q:
        return np.zeros(len(texts), dtype=np.float64)
    n, avg = len(docs), max(sum(map(len, docs)) / len(docs), 1.0)
    df = {w: sum(1 for d in docs if w in set(d)) for w in q}
    out = np.zeros(n, dtype=np.float64)
    for i, d in enumerate(docs):
        tf: dict[str, int] = {}
        for w in d:
            if w in q:
                tf[w] = tf.get(w, 0) + 1
        norm = BM25_K1 * (1 - BM25_B + BM25_B * len(d) / avg)
        out[i] = sum(np.log(1 + (n - df[w] + 0.5) / (df[w] + 0.5)) * f * (BM25_K1 + 1) / (f + norm)
                     for w, f in tf.items())
    top = out.max()
    return weight * out / top if top > 0 else out


@pytest.mark.parametrize("query,texts", CASES)
@pytest.mark.parametrize("weight", [0.0, 0.1, 0.7])
def test_lexical_bonus_unchanged(query, texts, weight):
    got = lexical_bonus(query, texts, weight)
    assert got.tobytes() == reference_bonus(query, texts, weight).tobytes()
    if weight and any(set(words(query)) & set(words(t)) for t in texts):
        assert got.max() == pytest.approx(weight)  # the best candidate gets the whole weight


def test_bm25_matrix_rows_are_the_store_bonus_of_each_query():
    texts = CASES[0][1] + CASES[1][1]
    queries = [q for q, _ in CASES]
    got = bm25_matrix(queries, texts)
    assert got.shape == (len(queries), len(texts))
    for row, q in zip(got, queries):
        top = row.max()
        assert (row / top if top > 0 else row).tobytes() == lexical_bonus(q, texts, 1.0).tobytes()
    assert bm25_matrix([], texts).shape == (0, len(texts)) and bm25_matrix(queries, []).shape == (len(queries), 0)


# --- the learned weight (SAMConfig.lexical_learned) ---------------------------------------------------------------

TEXTS = ["pizza_hut table booking confirmed", "hotel ibis checkin monday", "flight lhr jfk tuesday", "call"]
STATE = "restaurant pizza_hut table booking"


def _rows(label: int, n: int = 6) -> list[tuple[int, dict]]:
    """Episodes of four memories and one decision (at the last step) whose state names the first memory's words;
    ``label`` the memory the decision needs."""
    row = {"steps": [0, 1, 2, 3], "texts": TEXTS, "memory_texts": TEXTS, "kinds": ["tool"] * 4,
           "phases": ["collect"] * 4, "labels": [[], [], [], [label]],
           "state_texts": ["phase: collect"] * 3 + [STATE], "task_starts": [0] * 4}
    return [(ep, row) for ep in range(n)]


def _net(tiny_bert_dir, **kw):
    return training.make_net(tiny_bert_dir, ["collect"], ["tool"], **kw)


def test_lexical_matrix_is_bm25_over_the_allowed_candidates(tiny_bert_dir):
    batch = collate_episodes(_rows(0, n=2))
    allowed, _ = candidate_masks(batch["q_episode"], batch["q_step"], batch["q_labels"], batch["mem_episode"],
                                 batch["mem_step"], in_batch_negatives=False)
    lex = lexical_matrix(batch, allowed)
    raw = torch.from_numpy(bm25_matrix(batch["q_state_texts"], batch["mem_texts"]))
    for i in range(len(lex)):
        own = allowed[i]
        assert torch.equal(lex[i][~own], torch.zeros(int((~own).sum()), dtype=lex.dtype))
        assert lex[i][own].max().item() == 1.0 and torch.allclose(lex[i][own], raw[i][own] / raw[i][own].max())


def test_off_the_scores_are_those_of_a_model_without_it(tiny_bert_dir):
    assert "lexical_learned" not in SAMConfig().to_dict() and SAMConfig(lexical_learned=True).to_dict()["lexical_learned"]
    saved = SAMConfig().to_dict()  # a config saved before the field existed loads as off
    assert SAMConfig.from_saved(saved).lexical_learned is False
    off = _net(tiny_bert_dir).eval()
    assert off.lexical_weight is None and not any("lexical" in k for k in off.state_dict())
    batch = collate_episodes(_rows(0))
    loss_fn = MultiPositiveInfoNCE(0.1, learnable=False)
    with torch.no_grad():
        q, m = encode_batch(off, batch)
        allowed, positive = candidate_masks(batch["q_episode"], batch["q_step"], batch["q_labels"],
                                            batch["mem_episode"], batch["mem_step"], True, batch.get("mem_label"),
                                            batch.get("mem_key"))
        plain = loss_fn(q @ m.T, allowed, positive)
        got = batch_loss(off, loss_fn, batch)
        on = _net(tiny_bert_dir, lexical_learned=True).eval()
        lexical = batch_loss(on, loss_fn, batch)
    assert got.item() == (plain.sum() / len(plain)).item()
    assert on.lexical_weight.item() == pytest.approx(0.1) and lexical.item() != got.item()


def test_the_gradient_reaches_w_and_w_follows_the_evidence(tiny_bert_dir):
    ws = {}
    for label in (0, 1):  # 0: the positive shares the state's words; 1: a negative does
        net = _net(tiny_bert_dir, lexical_learned=True)
        batch = collate_episodes(_rows(label))
        loss = batch_loss(net, MultiPositiveInfoNCE(0.1, learnable=False), batch, in_batch_negatives=False)
        loss.backward()
        assert net.lexical_raw.grad is not None and net.lexical_raw.grad.item() != 0.0
        net.zero_grad()
        first, last = training.train_part(net, [net.lexical_raw], batch, steps=5)
        assert last < first
        ws[label] = net.lexical_weight.item()
    assert ws[0] > 0.1 > ws[1] >= 0.0


def test_the_store_serves_the_learned_weight(tiny_bert_dir, tmp_path):
    net = SAMNet(SAMConfig(bert_path=str(tiny_bert_dir), dim=8, hidden=16, proj_hidden=16, lexical_learned=True))
    with torch.no_grad():
        net.lexical_raw.fill_(0.7)
    learned = float(net.lexical_weight.detach())
    ckpt = tmp_path / "lex.ckpt"
    torch.save({"hyper_parameters": {"net": net.cfg.to_dict(), "bert_config": None,
                                     "store": StoreConfig(lexical=0.3).to_dict()},
                "state_dict": {f"net.{k}": v for k, v in net.state_dict().items()}}, ckpt)
    r = SAMRetriever.load(ckpt, device="cpu")
    assert r.store.config.lexical == learned and float(r.net.lexical_weight.detach()) == learned
    out = save_exported(r.net, tmp_path / "export", r.store.config)
    assert json.loads((out / "config.json").read_text())["store"]["lexical"] == learned
    assert SAMRetriever.load(out, device="cpu").store.config.lexical == learned
    # written without store settings, an export records the learned weight too; one given after loading wins
    assert json.loads((save_exported(net, tmp_path / "bare") / "config.json").read_text())["store"]["lexical"] == learned
    assert served_store(net, StoreConfig()).lexical == learned
    assert SAMRetriever(net).store.config.lexical == learned  # a retriever made from the net in hand serves it too
    assert SAMRetriever(net, StoreConfig()).store.config.lexical == 0.0  # settings given win
    off = save_exported(net, tmp_path / "set", dataclasses.replace(r.store.config, lexical=0.0))
    assert SAMRetriever.load(off, device="cpu").store.config.lexical == 0.0


def _lexical_module(tiny_bert_dir, **kw):
    from sam_model.training.module import SAMLightningModule

    torch.manual_seed(0)
    cfg = SAMConfig(bert_path=str(tiny_bert_dir), dim=16, hidden=32, proj_hidden=32, max_length=32, dropout=0.0,
                    phases=["collect"], kinds=["user", "tool"], lexical_learned=kw.pop("lexical_learned", True))
    return SAMLightningModule(cfg, lr=1e-3, warmup_steps=0, **kw)


def test_the_lexical_weight_steps_at_its_own_rate_only_when_asked(tiny_bert_dir):
    """At the heads' 1e-3 Adam moves raw ~1e-3 a step, so w = softplus(raw) hardly leaves 0.1 in a fold training
    (0.100 -> 0.104 measured); ``lexical_lr`` gives raw a group of its own, every other parameter keeps the heads'
    rate, and without it the groups are those from before."""
    plain, fast = _lexical_module(tiny_bert_dir), _lexical_module(tiny_bert_dir, lexical_lr=0.03)
    plain_rates, fast_rates = training.group_rates(plain), training.group_rates(fast)
    assert set(plain_rates.values()) == {1e-3} and len(fast_rates) == len(plain_rates)
    assert fast_rates[id(fast.net.lexical_raw)] == 0.03
    assert {lr for i, lr in fast_rates.items() if i != id(fast.net.lexical_raw)} == {1e-3}
    for module, moved in ((plain, 0.01), (fast, 0.3)):  # ten steps of a loss that wants w up, however little
        opt = module.configure_optimizers()["optimizer"]
        start = module.net.lexical_raw.item()
        for _ in range(10):
            loss = -1e-4 * module.net.lexical_weight
            opt.zero_grad()
            loss.backward()
            opt.step()
        assert module.net.lexical_raw.item() - start == pytest.approx(moved, rel=0.01)


def test_a_lexical_rate_without_the_weight_or_below_zero_is_refused(tiny_bert_dir):
    with pytest.raises(ValueError, match="model.lexical_lr is 0.03 but model.net.lexical_learned is off"):
        _lexical_module(tiny_bert_dir, lexical_learned=False, lexical_lr=0.03)
    with pytest.raises(ValueError, match="model.lexical_lr must be >= 0"):
        _lexical_module(tiny_bert_dir, lexical_lr=-0.01)


def test_a_model_card_names_the_lexical_rate_only_where_one_was_set(tmp_path):
    from sam_model.export import training_info

    assert "lexical_lr" not in training_info({"hyper_parameters": {"lr": 1e-3, "lexical_lr": 0.0}}, tmp_path / "a")
    assert training_info({"hyper_parameters": {"lr": 1e-3, "lexical_lr": 0.03}}, tmp_path / "a")["lexical_lr"] == 0.03


def test_the_lodo_variant_lexfast_is_lexlearn_at_its_own_rate():
    import yaml

    from sam_model.bench import lodo

    fast, learned = lodo.VARIANTS["lexfast"], lodo.VARIANTS["lexlearn"]
    assert fast.configs == (*learned.configs, "configs/lexical_lr.yaml") and fast.on == "turns"
    assert (fast.worlds, fast.plots, fast.brief, fast.turn) == (learned.worlds, learned.plots, learned.brief, learned.turn)
    root = Path(__file__).resolve().parents[1]
    assert yaml.safe_load((root / "configs" / "lexical_lr.yaml").read_text())["model"] == {"lexical_lr": 0.03}

def _validation_scores(bert_dir: str, rows) -> list[list[float]]:
    """The scores SAMLightningModule.validation_step gives torchmetrics for ``rows`` (a net of lexical_learned)."""
    from sam_model.training.module import SAMLightningModule

    torch.manual_seed(0)
    module = SAMLightningModule(SAMConfig(bert_path=bert_dir, dim=8, hidden=16, proj_hidden=16, lexical_learned=True),
                                vocab={"phases": ["collect"], "kinds": ["tool"]})
    seen: list[list[float]] = []
    module.val_metrics.update = lambda preds, target, indexes: seen.append(preds.tolist())
    with torch.no_grad():
        module.validation_step(collate_episodes(rows), 0)
    return seen


def _validation_worker(rank: int, world: int, init_file: str, bert_dir: str, out: dict) -> None:
    import torch.distributed as dist

    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=world)
    try:
        out[rank] = _validation_scores(bert_dir, _rows(rank, n=2 + rank))
    finally:
        dist.destroy_process_group()


def test_ddp_validation_scores_each_process_batch_as_one_process(tiny_bert_dir, tmp_path):
    """Validation gathers no memories: under DDP, L over the gathered width (training's) indexed a process's own
    memories with a mask as wide as every process's together (IndexError on the first validation batch of a
    multi-device run). Each rank now scores its batch as a single process does."""
    import os

    import torch.multiprocessing as mp

    os.environ.setdefault("OMP_NUM_THREADS", "1")
    with mp.Manager() as manager:
        out = manager.dict()
        mp.spawn(_validation_worker, args=(2, str(tmp_path / "init"), str(tiny_bert_dir), out), nprocs=2, join=True)
        got = dict(out)
    for rank in (0, 1):
        assert got[rank] and got[rank] == _validation_scores(str(tiny_bert_dir), _rows(rank, n=2 + rank))


def test_the_content_only_ablation_refuses_it(tiny_bert_dir):
    """Its store adds no lexical match (MemoryStore.lexical is 0 for a content-only model): trained with w·L, it
    would be served without it."""
    with pytest.raises(ValueError, match="lexical_learned needs query_input 'state'"):
        _net(tiny_bert_dir, lexical_learned=True, query_input="observation")


def test_w_is_trained_without_decay_at_the_heads_lr_and_a_mix_with_a_model_without_it_is_refused(tiny_bert_dir):
    """Decay would pull raw to 0 (w to softplus(0) = 0.69), whatever the evidence; and a WiSE-FT mix of a model with
    w and one without has no w to mix: refused, naming the field."""
    from sam_model.interpolate import check_compatible
    from sam_model.io import SAMFileError
    from sam_model.training.module import SAMLightningModule

    module = SAMLightningModule(SAMConfig(bert_path=str(tiny_bert_dir), dim=8, hidden=16, proj_hidden=16,
                                          lexical_learned=True), vocab={"phases": ["collect"], "kinds": ["tool"]},
                                weight_decay=0.1)
    groups = module.configure_optimizers()["optimizer"].param_groups
    (group,) = [g for g in groups if any(p is module.net.lexical_raw for p in g["params"])]
    assert group["weight_decay"] == 0.0 and group["initial_lr"] == module.hparams.lr  # lr: the warm-up's share of it
    assert any(g["weight_decay"] == 0.1 for g in groups)  # the matrices are decayed: the setting was on
    with pytest.raises(SAMFileError, match="config field.*lexical_learned"):
        check_compatible(_net(tiny_bert_dir, lexical_learned=True), _net(tiny_bert_dir), ("a", "b"))
