"""The CPU fast path ranks as the plain path: one BERT pass per query, length batching, the ONNX Runtime backend."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
from test_model import make_net
from torch import nn

from sam_model.models import onnx_text
from sam_model.models.text_encoder import TextEncoder, length_batches

needs_onnx = pytest.mark.skipif(not onnx_text.available(), reason="the [onnx] extra is not installed "
                                "(pip install -e '.[onnx]')")
STATES = ["phase: book. needs: date", "phase: search flights from Lisbon to Paris on the 3rd, economy, two adults",
          "phase: pay"]
OBS = ["ok go ahead", "which dates work for you and how many people are travelling?", "ok go ahead"]


def two_pass_queries(net, states, phases, obs, steps, starts) -> torch.Tensor:
    """The query vectors as computed before the one-pass change: BERT over the state texts, then over the
    observations, each on its own."""
    text = net.state_encoder.text_encoder
    v_s = net.state_encoder(list(states), net._ids(net.phases, phases))
    a = net.alpha
    c = (1 - a) * nn.functional.normalize(text(list(obs)), dim=-1)
    if net.state_content is not None:
        c = c + net.state_content * nn.functional.normalize(text(list(states)), dim=-1)
    parts = [a * net.projection.query(v_s), c]
    if net.time is not None:
        parts.append(net.time.query(v_s, steps, starts))
    return torch.cat(parts, dim=-1)


@pytest.mark.parametrize("cache", [True, False])
def test_one_bert_pass_per_query_gives_the_two_pass_vectors(cache):
    net = make_net(time_features=4, state_content=True, cache_text=cache).eval()
    with torch.no_grad():
        torch.nn.init.normal_(net.projection.g[-1].weight, std=0.3)  # W_s != I, so the state part matters
        phases, steps, starts = ["ask_city", "ask_date", "zzz"], [5, 9, 2], [0, None, 1]
        ref = two_pass_queries(net, STATES, phases, OBS, steps, starts)
        net.state_encoder.text_encoder.clear_cache()
        before = net.state_encoder.text_encoder.encoded
        got = net.encode_queries(STATES, phases, OBS, steps, starts)
    assert torch.allclose(got, ref, atol=1e-5)
    if cache:  # the repeated observation is encoded once: 3 states + 2 distinct observations
        assert net.state_encoder.text_encoder.encoded - before == 5


def test_length_batches_cover_every_text_once_and_split_where_padding_costs_more():
    lengths = [30, 64, 31, 12, 64, 63, 5]
    batches = length_batches(lengths, max_batch=3, call_cost=16)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    assert all(len(b) <= 3 for b in batches)
    for b in batches:
        assert [lengths[i] for i in b] == sorted(lengths[i] for i in b)
    together = {frozenset(b) for b in batches}
    assert frozenset({1, 4, 5}) in together  # 63, 64, 64: near-equal lengths share a batch
    assert not any({0, 1} <= b for b in together)  # 30 and 64: padding 30 to 64 costs more than a second call
    assert length_batches([], 4) == []
    many = length_batches([40 + i % 7 for i in range(100)], max_batch=64)
    assert len(many) <= 7 and max(len(b) for b in many) <= 64  # near-equal lengths share batches, not one per text


def test_length_batched_vectors_equal_one_text_at_a_time():
    net = make_net(cache_text=False).eval()
    enc = net.state_encoder.text_encoder
    texts = STATES + OBS + ["x" * 47]
    with torch.no_grad():
        together = enc(texts)
        alone = torch.cat([enc([t]) for t in texts])
    assert torch.allclose(together, alone, atol=1e-5)


def test_backend_names_are_checked(monkeypatch):
    with pytest.raises(ValueError, match="text backend must be one of"):
        onnx_text.check_backend("tensorrt")
    monkeypatch.setenv(onnx_text.BACKEND_ENV, "fast")
    with pytest.raises(ValueError, match=r"SAM_TEXT_BACKEND"):
        onnx_text.check_backend(None)
    monkeypatch.setattr(onnx_text, "available", lambda: False)
    with pytest.raises(ValueError, match=r"pip install 'sam_model\[onnx\]'"):
        onnx_text.check_backend("onnx")
    assert onnx_text.check_backend("auto") == "auto"  # auto falls back to torch without the extra
    monkeypatch.delenv(onnx_text.BACKEND_ENV)
    assert make_net().state_encoder.text_encoder.use_backend(None) == "torch"


def _encoder(tiny_bert_dir) -> TextEncoder:
    from sam_model.models.bert import load_bert

    bert, tok = load_bert(tiny_bert_dir)
    return TextEncoder(bert.eval(), tok, max_length=32, trainable_layers=0, cache=False)


@needs_onnx
def test_onnx_backend_gives_the_torch_vectors_and_is_cached(tiny_bert_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("SAM_CACHE_DIR", str(tmp_path))
    enc = _encoder(tiny_bert_dir)
    texts = STATES + OBS
    with torch.no_grad():
        ref = enc(texts)
        assert enc.use_backend("onnx") == "onnx"
        got = enc(texts)
    assert torch.allclose(got, ref, atol=1e-5)
    graphs = list((tmp_path / "onnx").glob("text-*.onnx"))
    assert len(graphs) == 1  # made at load, kept for the next load
    again = _encoder(tiny_bert_dir)
    assert again.use_backend("onnx") == "onnx" and again.runner.path == graphs[0]
    copied = copy.deepcopy(again)  # a copy may be trained apart: it runs on PyTorch
    assert copied.runner is None and copied.backend == "torch"


@needs_onnx
def test_a_broken_cached_graph_is_made_again(tiny_bert_dir, tmp_path):
    enc = _encoder(tiny_bert_dir)
    assert enc.use_backend("onnx", cache_dir=tmp_path) == "onnx"
    path = enc.runner.path
    path.write_bytes(b"not an onnx graph")
    assert enc.use_backend("onnx", cache_dir=tmp_path) == "onnx"
    assert path.stat().st_size > 1000


@needs_onnx
@pytest.mark.parametrize("probe,backend,says,falls_back_to", [
    ("probe_error", "onnx", "differ from PyTorch's", "torch"),
    ("probe_cosine", "int8", "int8 text encoder .* not used", "onnx"),  # the int8 graph too far: the float one
])
def test_a_graph_that_disagrees_with_torch_is_not_used(tiny_bert_dir, tmp_path, monkeypatch, probe, backend, says,
                                                       falls_back_to):
    monkeypatch.setattr(onnx_text, probe, lambda *a, **k: 0.5)
    enc = _encoder(tiny_bert_dir)
    with pytest.warns(UserWarning, match=says):
        assert enc.use_backend(backend, cache_dir=tmp_path) == falls_back_to


@needs_onnx
def test_weights_changed_in_place_send_the_encoder_back_to_torch(tiny_bert_dir, tmp_path):
    enc = _encoder(tiny_bert_dir)
    enc.use_backend("onnx", cache_dir=tmp_path)
    with torch.no_grad():
        next(enc.bert.parameters()).add_(0.5)  # what an optimiser step does
        got = enc(STATES)
        enc.runner = None
        ref = enc(STATES)
    assert enc.backend == "torch" and torch.allclose(got, ref, atol=1e-6)


@needs_onnx
def test_retriever_rankings_and_scores_agree_between_backends(tiny_bert_dir, tmp_path, monkeypatch):
    from sam_model.data.schema import Event, State
    from sam_model.export import save_exported
    from sam_model.models.sam import SAMConfig, SAMNet
    from sam_model.retriever import SAMRetriever

    monkeypatch.setenv("SAM_CACHE_DIR", str(tmp_path))
    torch.manual_seed(0)
    export = save_exported(SAMNet(SAMConfig(bert_path=str(tiny_bert_dir), dim=8, hidden=16, proj_hidden=16,
                                            time_features=2, state_content=True)), tmp_path / "export")
    words = ["budget 100", "city Paris", "two adults", "window seat", "vegetarian", "pay by card", "Lisbon"]
    state = State(phase="search", constraints={"city": "Paris"})
    events = [Event("e1", i, "observation", t, state) for i, t in enumerate(words)]
    hits = {}
    for backend in ("torch", "onnx"):
        r = SAMRetriever.load(export, device="cpu", backend=backend)
        assert r.encoder.backend == backend
        r.add_memories(events)
        hits[backend] = r.search(State(phase="pay", uncertainty_flags=("city",)), "where to?", k=5, episode_id="e1")
    assert [h.id for h in hits["torch"]] == [h.id for h in hits["onnx"]]
    assert np.allclose([h.score for h in hits["torch"]], [h.score for h in hits["onnx"]], atol=1e-5)


@pytest.mark.parametrize("clip", [0, 4])  # observation_ and state_max_length: the frozen pass encodes them clipped
def test_the_frozen_pass_encodes_every_training_text_once_before_the_first_epoch(tiny_bert_dir, small_demo_logs,
                                                                                tmp_path, clip):
    from types import SimpleNamespace

    from sam_model.models.sam import SAMConfig
    from sam_model.training.batching import encode_batch
    from sam_model.training.datamodule import AgentLogDataModule
    from sam_model.training.module import SAMLightningModule

    train, _ = small_demo_logs
    dm = AgentLogDataModule(train=[str(train)], val_fraction=0.25, batch_episodes=8, cache_dir=str(tmp_path / "c"))
    module = SAMLightningModule(SAMConfig(bert_path=str(tiny_bert_dir), dim=8, hidden=16, proj_hidden=16,
                                          observation_max_length=clip, state_max_length=2 * clip),
                                vocab=dm.vocab, text_cache_dir=str(tmp_path / "text"))
    enc = module.net.state_encoder.text_encoder
    texts = dm.texts(False, module.net.observations_read, module.net.states_read)
    assert (texts == dm.texts()) == (clip == 0)  # clipped texts are other strings, each with its vector
    assert len(texts) == len(set(texts)) and enc.uncached(texts) == texts
    module._trainer = SimpleNamespace(datamodule=dm, world_size=1, global_rank=0)
    module.on_fit_start()  # the backend, then the cache file named for its precision, then the pass
    assert enc.uncached(texts) == [] and enc.cache_file(tmp_path / "text").exists()
    dm.setup("fit")
    n = enc.encoded
    with torch.no_grad():
        for batch in dm.train_dataloader():
            encode_batch(module.net, batch)  # the first epoch's batches: every text already there
    assert enc.encoded == n
    with torch.no_grad():
        cached = enc(texts[:20])
        enc.clear_cache()
        enc.runner = None
        assert torch.allclose(cached, enc(texts[:20]), atol=1e-5)  # the vectors BERT gives on PyTorch


@needs_onnx
def test_the_onnx_graph_of_packed_rows_gives_one_text_per_call_vectors(tiny_bert_dir, tmp_path):
    from sam_model.models.call_cost import CallCost

    enc = _encoder(tiny_bert_dir)
    texts = STATES + OBS[:2]
    with torch.no_grad():
        ref = torch.cat([enc([t]) for t in texts])
        assert enc.use_backend("onnx", cache_dir=tmp_path) == "onnx" and enc.packed
        enc.costs = {"onnx": CallCost(fixed=100.0, per_token=1.0, attention=0.0)}  # calls and padding dear: one row
        calls: list = []
        enc.runner = _Counting(enc.runner, calls)
        got = enc(texts)
    assert torch.allclose(got, ref, atol=1e-5)
    assert len(calls) == 1 and calls[0]["pool"].shape[1] > 1  # one ONNX call, several texts per row


class _Counting:
    """An OnnxText that records the inputs of each call."""

    def __init__(self, runner, calls: list):
        self.runner, self.calls = runner, calls

    stale = False
    kind = "onnx"

    def __call__(self, inputs):
        self.calls.append(inputs)
        return self.runner(inputs)


@needs_onnx
def test_auto_runs_each_call_on_the_backend_measured_cheaper(tiny_bert_dir, tmp_path):
    from sam_model.models.call_cost import CallCost

    enc = _encoder(tiny_bert_dir)
    assert enc.use_backend("auto", cache_dir=tmp_path) == "onnx" and set(enc.costs) == {"torch", "onnx"}
    calls: list = []
    enc.runner = _Counting(enc.runner, calls)
    cheap, dear = CallCost(0.1, 0.001, 0.0), CallCost(50.0, 0.1, 0.0)
    with torch.no_grad():
        enc.costs = {"torch": dear, "onnx": cheap}
        on_onnx = enc(STATES)
        assert len(calls) >= 1
        enc.costs = {"torch": cheap, "onnx": dear}
        n = len(calls)
        on_torch = enc(STATES)
        assert len(calls) == n  # PyTorch ran it
    assert torch.allclose(on_onnx, on_torch, atol=1e-5)
    assert enc.use_backend("onnx", cache_dir=tmp_path) == "onnx" and not enc.auto  # asked for: always ONNX Runtime


@needs_onnx
def test_the_int8_backend_is_near_the_float_vectors_cached_and_never_auto(tiny_bert_dir, tmp_path):
    enc = _encoder(tiny_bert_dir)
    texts = STATES + OBS
    with torch.no_grad():
        ref = enc(texts)
        assert enc.use_backend("int8", cache_dir=tmp_path) == "int8" and set(enc.costs) == {"int8"}
        got = enc(texts)
    cos = torch.nn.functional.cosine_similarity(got, ref)
    assert cos.min() > onnx_text.INT8_COSINE and not torch.allclose(got, ref, atol=1e-4)  # int8 ran: near, not equal
    graphs = sorted(p.name for p in tmp_path.glob("text-*.onnx"))
    assert len(graphs) == 2 and graphs[0].endswith("-int8.onnx")  # made once, beside its float graph
    made = (tmp_path / graphs[0]).stat().st_mtime_ns
    assert enc.use_backend("int8", cache_dir=tmp_path) == "int8" and (tmp_path / graphs[0]).stat().st_mtime_ns == made
    assert "int8" not in enc.use_backend("auto", cache_dir=tmp_path) and enc.runner.kind == "onnx"


def test_clip_cuts_a_text_to_its_first_tokens_as_a_string(tiny_bert_dir):
    enc = _encoder(tiny_bert_dir)
    tok = enc.tokenizer
    long = "which dates work for you, and how many passengers (adults/children) are travelling on flight HAT170?"
    short = "ok go ahead"
    clipped = enc.clip([long, short, ""], 8)
    ids = tok(long)["input_ids"]
    assert tok(clipped[0])["input_ids"] == ids[:7] + ids[-1:]  # [CLS], the first 6 tokens, [SEP]
    assert long.startswith(clipped[0]) and clipped[0] != long
    assert clipped[1:] == [short, ""]  # a text that fits stays the same string (its cached vector is reused)
    for n in range(3, len(ids)):  # wherever the cut falls (inside a word, at punctuation): the first n tokens
        got = tok(enc.clip([long], n)[0])["input_ids"]
        assert got == ids[: n - 1] + ids[-1:], n
    assert enc.clip([long], len(ids)) == [long]
    with pytest.raises(ValueError, match="keeps no text"):
        enc.clip([long], 2)


@pytest.mark.parametrize("field", ["observation_max_length", "state_max_length"])
def test_a_clipped_text_is_read_as_the_same_net_reads_the_clipped_string(tiny_bert_dir, field):
    """A net with observation_max_length (state_max_length) reads each observation (state text) clipped, and only
    there: its query vectors are those of the same net without the clip given the clipped texts, and differ from
    the unclipped ones."""
    from sam_model.models.bert import load_bert
    from sam_model.models.sam import SAMConfig, SAMNet

    def net(clip: int) -> SAMNet:
        torch.manual_seed(0)
        bert, tok = load_bert(tiny_bert_dir)
        cfg = SAMConfig(dim=16, rank=4, hidden=32, proj_hidden=32, phase_dim=8, kind_dim=4, dropout=0.0,
                        phases=["book", "pay"], kinds=["user"], max_length=32, state_content=True, **{field: clip})
        return SAMNet(cfg, bert, tok).eval()

    clipped, plain = net(6), net(0)
    states, phases, obs = STATES[:2], ["book", "pay"], OBS[:2]
    with torch.no_grad():
        texts = obs if field == "observation_max_length" else states
        cut = plain.state_encoder.text_encoder.clip(texts, 6)
        assert cut[0] != texts[0] or field == "observation_max_length"
        assert cut[1] != texts[1]
        args = (states, phases, cut) if field == "observation_max_length" else (cut, phases, obs)
        got = clipped.encode_queries(states, phases, obs)
        assert torch.allclose(got, plain.encode_queries(*args), atol=1e-6)
        assert not torch.allclose(got[1], plain.encode_queries(states, phases, obs)[1], atol=1e-4)
        # a query of words alone (no state) reads all of them: they are everything such a query has
        assert torch.allclose(clipped.encode_text_queries(texts), plain.encode_text_queries(texts), atol=1e-6)
        if field == "state_max_length":  # v_s alone (diagnostics, Janus) reads the clipped state too
            assert torch.allclose(clipped.encode_states(states, phases, obs), plain.encode_states(cut, phases, obs))
    with pytest.raises(ValueError, match=field):
        net(2)  # [CLS] and [SEP] alone


def test_the_card_says_how_much_of_the_observation_the_model_reads():
    from sam_model import card

    text = card.render({"query_input": "state", "max_length": 64, "observation_max_length": 16}, {}, None, {}, {})
    assert "max 64 tokens (16 of the observation)" in text
    text = card.render({"query_input": "state", "max_length": 64, "observation_max_length": 8,
                        "state_max_length": 48}, {}, None, {}, {})
    assert "max 64 tokens (48 of the state text, 8 of the observation)" in text
    assert "of the observation" not in card.render({"query_input": "state", "max_length": 64}, {}, None, {}, {})
