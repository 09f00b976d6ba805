"""The SAM network: shapes, the index identity, unknown phases, learning, DDP gathering."""

from __future__ import annotations

import json
import math
import os
import random

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from sam_model.models.bert import default_bert_path, load_bert, tiny_bert
from sam_model.models.losses import MultiPositiveInfoNCE
from sam_model.models.projection import PROJECTIONS, StateProjection
from sam_model.models.sam import SAMConfig, SAMNet
from sam_model.training.batching import candidate_masks, collate_episodes, validation_query_ids
from sam_model.training.objective import batch_loss

SLOTS = ["city", "date", "budget", "people"]


class CharTokenizer:
    """A dependency-free tokenizer for the tiny BERT: one id per character."""

    vocab_size = 128
    pad_token_id = 0

    def __call__(self, texts, padding=False, truncation=True, max_length=64, return_tensors=None):
        ids = [[min(ord(c), 127) for c in t[:max_length]] or [0] for t in texts]
        if not padding and return_tensors is None:  # as Hugging Face tokenizers: lists of ids, unpadded
            return _Enc(input_ids=ids, attention_mask=[[1] * len(x) for x in ids])
        width = max(len(x) for x in ids)
        input_ids = torch.tensor([x + [0] * (width - len(x)) for x in ids])
        mask = torch.tensor([[1] * len(x) + [0] * (width - len(x)) for x in ids])
        return _Enc(input_ids=input_ids, attention_mask=mask)


class _Enc(dict):
    def to(self, device):
        return _Enc({k: v.to(device) for k, v in self.items()})


def make_net(projection: str = "diag", seed: int = 0, **kw) -> SAMNet:
    torch.manual_seed(seed)
    cfg = SAMConfig(dim=16, projection=projection, rank=4, hidden=32, proj_hidden=32, phase_dim=8, kind_dim=4,
                    dropout=0.0, phases=["ask_" + s for s in SLOTS], kinds=["user", "system"], max_length=48, **kw)
    return SAMNet(cfg, tiny_bert(vocab_size=128, hidden=32, layers=1, seed=seed), CharTokenizer())


def toy_rows(n: int, seed: int = 0) -> list[tuple[int, dict]]:
    """Episodes where the user gives each slot once; the decision needs one slot named by the phase."""
    rng = random.Random(seed)
    rows = []
    for ep in range(n):
        order = SLOTS[:]
        rng.shuffle(order)
        texts = [f"my {s} is {rng.randint(0, 99)}" for s in order]
        need = rng.choice(SLOTS)
        texts.append("ok go ahead")
        steps = list(range(len(texts)))
        phases = ["collect"] * len(order) + ["ask_" + need]
        labels = [[] for _ in order] + [[order.index(need)]]
        rows.append((ep, {"steps": steps, "texts": texts, "memory_texts": texts, "kinds": ["user"] * len(texts),
                          "phases": phases, "labels": labels,
                          "state_texts": [f"phase: {p}" for p in phases]}))
    return rows


@pytest.mark.parametrize("projection", PROJECTIONS)
def test_score_identity_for_every_projection(projection):
    """v_sᵀ W_s v_m through the explicit matrix equals the indexable (W_sᵀ v_s)·v_m."""
    torch.manual_seed(1)
    proj = StateProjection(projection, dim=12, hidden=24, rank=3)
    with torch.no_grad():
        for p in proj.parameters():
            p.normal_(0, 0.3)  # move away from the identity initialisation
    v_s, v_m = torch.randn(5, 12), torch.randn(9, 12)
    assert torch.allclose(proj.score(v_s, v_m), proj.query(v_s) @ v_m.T, atol=1e-5)
    assert not torch.allclose(proj.matrix(v_s)[0], torch.eye(12))


@pytest.mark.parametrize("projection", PROJECTIONS)
def test_shapes_and_unknown_phase(projection):
    net = make_net(projection, alpha=0.7, learn_alpha=False).eval()
    q = net.encode_queries(["phase: ask_city", "phase: never_seen"], ["ask_city", "never_seen"], ["ok", "go"])
    m = net.encode_memories(["my city is 3", "hi", "x"], ["user", "system", "tool_we_never_saw"],
                            ["collect", "collect", "new_phase"])
    assert q.shape == (2, 16 + 32) and m.shape == (3, 16 + 32)
    assert torch.isfinite(q @ m.T).all()
    assert net.phases.ids(["never_seen"]) == [0]


def test_state_only_model_has_no_content_part():
    net = make_net(alpha=1.0, learn_alpha=False)
    assert net.encode_queries(["phase: x"], ["x"], ["o"]).shape == (1, 16)


def test_loss_falls_on_toy_set():
    torch.manual_seed(0)
    net = make_net(alpha=1.0, learn_alpha=False, trainable_layers=-1, cache_text=False)
    loss_fn = MultiPositiveInfoNCE(0.1)
    batch = collate_episodes(toy_rows(12))
    opt = torch.optim.Adam(list(net.parameters()) + list(loss_fn.parameters()), lr=5e-3)
    losses = []
    for _ in range(80):
        loss = batch_loss(net, loss_fn, batch)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert sum(losses[-5:]) / 5 < 0.5 * sum(losses[:5]) / 5


def test_a_copy_of_a_querys_positive_is_no_in_batch_negative():
    """``data.repeat`` and lives put copies of one episode in a batch under other episode indexes; their copy of a
    query's positive was an in-batch negative (the same vector at the same step: the loss could not fall below
    log 2; found by review). The copy's other memories stay negatives, as every other episode's."""
    rows = toy_rows(3)
    batch = collate_episodes(rows + [(3, rows[0][1])])  # episode 0 again, as index 3
    b = {k: batch[k] for k in ("q_episode", "q_step", "q_labels")}
    allowed, positive = candidate_masks(**b, mem_episode=batch["mem_episode"], mem_step=batch["mem_step"],
                                        mem_key=batch["mem_key"])
    plain, _ = candidate_masks(**b, mem_episode=batch["mem_episode"], mem_step=batch["mem_step"])
    copy = batch["mem_episode"] == 3
    first = 0  # episode 0's query; its positive's copy lies in episode 3
    pos_step = int(batch["q_labels"][first, 0])
    twin = copy & (batch["mem_step"] == pos_step)
    assert int(twin.sum()) == 1 and plain[first][twin].all() and not allowed[first][twin].any()
    assert allowed[first][copy & ~twin].all()  # the copy's other memories are still negatives
    assert (allowed == plain)[1:3].all()  # queries without a copy in the batch: as before
    assert batch["mem_key"][copy].tolist() == batch["mem_key"][batch["mem_episode"] == 0].tolist()
    assert torch.equal(positive, candidate_masks(**b, mem_episode=batch["mem_episode"], mem_step=batch["mem_step"])[1])


def test_validation_query_ids_are_distinct_across_processes():
    """Each rank numbered its queries from 0 at batch 0: torchmetrics merged two ranks' queries into one (DDP
    validation MRR 0.789 against 0.681 on one process; found by review)."""
    ids = [validation_query_ids(40, b, r, 2).tolist() for b in range(3) for r in range(2)]
    flat = [i for x in ids for i in x]
    assert len(set(flat)) == len(flat) and validation_query_ids(5, 0).tolist() == list(range(5))


def _ddp_worker(rank: int, world: int, init_file: str, out: dict) -> None:
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=world)
    net = make_net(trainable_layers=-1, cache_text=False).train(False)
    loss_fn = MultiPositiveInfoNCE(0.1)
    rows = toy_rows(6)
    local = rows[rank * 3 : (rank + 1) * 3]
    loss = batch_loss(net, loss_fn, collate_episodes(local), world_size=world)
    loss.backward()
    grads = []
    for p in (net.projection.g[0].weight, net.memory_encoder.fuse[0].weight):  # query side; memories: gathered
        grad = p.grad.clone()
        dist.all_reduce(grad)  # what DDP does: sum, then divide by world size
        grads.append((grad / world).tolist())
    total = loss.detach().clone()
    dist.all_reduce(total)
    out[rank] = (total.item() / world, grads)
    dist.destroy_process_group()


def test_ddp_gathered_loss_equals_single_process(tmp_path):
    """Two gloo processes with half the episodes each give the single-process loss and gradient, on the query side
    and on the memory side, whose gradient comes back through the gather from both processes' queries."""
    net = make_net(trainable_layers=-1, cache_text=False).train(False)
    loss_fn = MultiPositiveInfoNCE(0.1)
    loss = batch_loss(net, loss_fn, collate_episodes(toy_rows(6)))
    loss.backward()
    ref_grads = [net.projection.g[0].weight.grad, net.memory_encoder.fuse[0].weight.grad]
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    with mp.Manager() as manager:
        out = manager.dict()
        mp.spawn(_ddp_worker, args=(2, str(tmp_path / "init"), out), nprocs=2, join=True)
        results = dict(out)
    for rank in (0, 1):
        ddp_loss, ddp_grads = results[rank]
        assert ddp_loss == pytest.approx(loss.item(), rel=1e-5)
        for ddp_grad, ref_grad in zip(ddp_grads, ref_grads):
            assert torch.allclose(torch.tensor(ddp_grad), ref_grad, atol=1e-6)


def test_real_minilm_loads_from_package():
    bert, tok = load_bert()
    assert bert.config.hidden_size == 384 and bert.config.model_type == "bert"
    net = SAMNet(SAMConfig(dim=32, phases=["a"], kinds=["user"]), bert, tok).eval()
    with torch.no_grad():
        q = net.encode_queries(["phase: a | needs: city"], ["a"], ["ok, go ahead"])
        m = net.encode_memories(["[user] I want to go to Paris"], ["user"], ["a"])
    assert q.shape == m.shape == (1, 32 + 384)
    assert default_bert_path().endswith("model")


def test_missing_or_wrong_bert_folder_is_a_clear_error(tmp_path):
    from sam_model.io import SAMFileError

    with pytest.raises(SAMFileError, match="text encoder folder not found"):
        load_bert(tmp_path / "nope")
    for model_type in ("gpt2", "t5", "vit"):  # a decoder, an encoder-decoder, a vision model
        (tmp_path / "config.json").write_text(json.dumps({"model_type": model_type}))
        with pytest.raises(SAMFileError, match="not a text encoder"):
            load_bert(tmp_path)


def test_infonce_positive_modes_match_hand_computation():
    scores = torch.tensor([[2.0, 1.0, 0.0, -1.0]])
    allowed = torch.tensor([[True, True, True, False]])
    positive = torch.tensor([[True, False, True, False]])
    denom = torch.logsumexp(torch.tensor([2.0, 1.0, 0.0]), 0)
    any_loss = MultiPositiveInfoNCE(1.0, learnable=False)(scores, allowed, positive)
    each_loss = MultiPositiveInfoNCE(1.0, learnable=False, positives="each")(scores, allowed, positive)
    assert any_loss.item() == pytest.approx((denom - torch.logsumexp(torch.tensor([2.0, 0.0]), 0)).item(), abs=1e-6)
    assert each_loss.item() == pytest.approx((denom - 1.0).item(), abs=1e-6)
    assert each_loss.item() > any_loss.item()  # "each" also charges the weaker positive
    with pytest.raises(ValueError, match="positives"):
        MultiPositiveInfoNCE(positives="some")


def test_text_cache_saves_loads_and_primes(tmp_path):
    """A frozen encoder's cached vectors survive save/load only for the same BERT, and prime() fills the
    cache so that BERT never runs on those texts."""
    net = make_net()  # trainable_layers=0 by default: frozen, caching
    enc = net.memory_encoder.text_encoder
    texts = ["my city is 12", "ok go ahead"]
    first = enc(texts)
    enc.save_cache(tmp_path / "cache.pt")
    fresh = make_net().memory_encoder.text_encoder
    assert fresh.load_cache(tmp_path / "cache.pt") == 2
    assert torch.allclose(fresh(texts), first, atol=1e-2)  # stored as float16
    other = make_net(seed=1).memory_encoder.text_encoder  # another BERT: the fingerprint refuses the file
    assert other.load_cache(tmp_path / "cache.pt") == 0

    primed = make_net().memory_encoder.text_encoder
    marker = torch.full((2, first.shape[1]), 7.0)
    primed.prime(texts, marker)
    assert torch.equal(primed(texts), marker)  # served from the cache: BERT did not run
    with pytest.raises(ValueError, match="one vector per text"):
        primed.prime(texts, marker[:1])
    trainable = make_net(trainable_layers=-1, cache_text=False).memory_encoder.text_encoder
    with pytest.raises(ValueError, match="does not cache"):
        trainable.prime(texts, marker)


def test_text_fingerprint_ignores_the_transformers_release():
    """The fingerprint names the BERT, not the library that loaded it: a transformers upgrade (a new version
    string, a new config default) keeps it, so caches stay warm and head-only exports keep loading; a change to
    the architecture or the weights does not."""
    enc = make_net().memory_encoder.text_encoder
    before = enc.fingerprint()
    enc.bert.config.transformers_version = "99.0.0"
    enc.bert.config.some_default_a_new_release_adds = True
    assert enc.fingerprint() == before
    enc.bert.config.layer_norm_eps = 1e-5
    assert enc.fingerprint() != before
    enc.bert.config.layer_norm_eps = make_net().memory_encoder.text_encoder.bert.config.layer_norm_eps
    assert enc.fingerprint() == before
    with torch.no_grad():
        next(enc.bert.parameters())[0, 0] += 1.0
    assert enc.fingerprint() != before


def test_text_cache_file_merges_writers_and_stays_bounded(tmp_path):
    """Two runs that cached different texts both find theirs in the file; the file keeps at most max_entries
    vectors, this run's first, and the oldest of the file's others fall out."""
    path = tmp_path / "cache.pt"
    a = make_net().memory_encoder.text_encoder
    a(["alpha one", "alpha two"])
    a.save_cache(path)
    b = make_net().memory_encoder.text_encoder
    b(["beta one"])
    b.save_cache(path)
    c = make_net().memory_encoder.text_encoder
    assert c.load_cache(path) == 3
    b(["beta two", "beta three"])
    b.save_cache(path, max_entries=4)
    kept = torch.load(path, weights_only=True)["texts"]
    assert kept == ["beta one", "beta two", "beta three", "alpha one"]


@pytest.mark.parametrize("layers", [-1, 1, 0])
def test_adapting_a_frozen_model_trains_the_bert_layers_the_run_asks_for(tmp_path, tiny_bert_dir, layers):
    """``--model.init_from`` a frozen model with ``--model.net.trainable_layers -1`` (the README's GPU advice for
    adapting) reused the pretrained model's BERT with every weight still frozen: no BERT weight had a gradient or
    an optimiser group, and BERT ran uncached every step for nothing (found by review)."""
    from sam_model.export import save_exported
    from sam_model.models.bert import layer_stack
    from sam_model.training.module import SAMLightningModule

    base = SAMNet(SAMConfig(bert_path=str(tiny_bert_dir), dim=8, hidden=16, proj_hidden=16, max_length=32,
                            phases=["a"], kinds=["user"]))
    save_exported(base, tmp_path / "export")
    module = SAMLightningModule(net=SAMConfig(trainable_layers=layers), net_fields=["trainable_layers"],
                                init_from=str(tmp_path / "export"), vocab={"phases": ["a", "b"], "kinds": ["user"]})
    bert = module.net.state_encoder.text_encoder.bert
    top = {id(p) for p in layer_stack(bert)[-1].parameters()}
    want = {-1: {id(p) for p in bert.parameters()}, 1: top, 0: set()}[layers]
    assert {id(p) for p in bert.parameters() if p.requires_grad} == want
    tuned = {id(p) for g in module.configure_optimizers()["optimizer"].param_groups for p in g["params"]
             if g["initial_lr"] == module.hparams.bert_lr}
    assert tuned == want and module.net.cfg.phases == ["a", "b"]


@pytest.mark.parametrize("positives", ["any", "each"])
def test_a_query_without_a_positive_adds_no_loss_and_no_gradient(positives):
    """A query whose row has no positive cost the log of the float minimum (~3.4e38) with ``any``, and with both
    modes its gradient pushed every candidate down (found by review); the other rows' losses are unchanged."""
    torch.manual_seed(0)
    scores = torch.randn(3, 5, requires_grad=True)
    allowed = torch.ones(3, 5, dtype=torch.bool)
    positive = torch.zeros(3, 5, dtype=torch.bool)
    positive[0, 1] = positive[2, [0, 3]] = True
    loss_fn = MultiPositiveInfoNCE(0.1, positives=positives)
    losses = loss_fn(scores, allowed, positive)
    losses.sum().backward()
    assert losses[1].item() == 0.0 and not scores.grad[1].any()
    keep = [0, 2]
    alone = loss_fn(scores.detach()[keep], allowed[keep], positive[keep])
    assert torch.allclose(losses.detach()[keep], alone) and (alone > 0).all()


def test_a_temperature_the_loss_would_clamp_is_refused():
    """1/τ is clamped at max_scale: τ = 0.005 trained at 0.01 while its run's settings said 0.005 (found by
    review)."""
    with pytest.raises(ValueError, match=r"temperature must be >= 0.01"):
        MultiPositiveInfoNCE(0.005)
    assert MultiPositiveInfoNCE(0.01).scale.item() == pytest.approx(100.0)


def test_a_learned_temperature_that_reaches_its_bound_can_rise_again():
    """1/τ was clamped where it was used, so above the bound it had no gradient: once a step took the learned scale
    past 100, τ stayed at 0.01 for good, even where the labels then asked for a far softer one (found by review)."""
    torch.manual_seed(0)
    loss_fn = MultiPositiveInfoNCE(0.02)
    opt = torch.optim.Adam(loss_fn.parameters(), lr=1e-2)
    allowed = torch.ones(64, 32, dtype=torch.bool)
    positive = torch.zeros(64, 32, dtype=torch.bool)
    positive[:, 0] = True
    for step in range(400):
        scores = torch.randn(64, 32) * 0.005
        if step < 200:  # positives just above the rest: the loss asks for the sharpest scale
            scores[:, 0] += 0.05
        elif step == 200:
            assert loss_fn.scale.item() == pytest.approx(100.0)
        loss = loss_fn(scores, allowed, positive).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert loss_fn.scale.item() < 90  # labels that no longer tell memories apart: τ rises towards a soft one
    assert loss_fn.log_scale.item() <= math.log(100.0) + 1e-6


def test_a_bert_tuned_in_its_top_layer_does_not_read_the_untuned_ones_text_cache(tmp_path):
    """The cache file was named by the fingerprint, which sums only BERT's first weights (the embeddings): a model
    tuned with trainable_layers 1, frozen again (a run started from it), read the untuned BERT's vectors from the
    shared cache folder (found by review)."""
    from sam_model.models.bert import layer_stack

    plain = make_net().memory_encoder.text_encoder
    texts = ["my city is 12", "ok go ahead"]
    plain(texts)
    plain.save_cache(plain.cache_file(tmp_path))
    tuned = make_net().memory_encoder.text_encoder
    with torch.no_grad():
        next(layer_stack(tuned.bert)[-1].parameters()).add_(0.1)
    assert tuned.fingerprint() == plain.fingerprint()  # what a head-only export checks: unchanged
    assert tuned.cache_file(tmp_path) != plain.cache_file(tmp_path)
    assert tuned.load_cache(plain.cache_file(tmp_path)) == 0
    assert make_net().memory_encoder.text_encoder.load_cache(plain.cache_file(tmp_path)) == 2
