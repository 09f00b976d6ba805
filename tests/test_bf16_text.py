"""The bfloat16 text backend: vectors near the float32 ones, auto loads it only where the CPU has the units, and
calls go wherever they cost least."""

from __future__ import annotations

import copy

import pytest
import torch
from test_cpu_speed import OBS, STATES

from sam_model.models import bf16_text
from sam_model.models.call_cost import CallCost
from sam_model.models.text_encoder import TextEncoder


def _encoder(tiny_bert_dir) -> TextEncoder:
    from sam_model.models.bert import load_bert

    bert, tok = load_bert(tiny_bert_dir)
    return TextEncoder(bert.eval(), tok, max_length=32, trainable_layers=0, cache=False)


class _Counting:
    """A runner that records how many calls it ran."""

    def __init__(self, runner):
        self.runner, self.calls = runner, 0
        self.stale = False

    def __call__(self, inputs):
        self.calls += 1
        return self.runner(inputs)


def test_bf16_vectors_are_near_the_float32_ones_and_float32_after_bert(tiny_bert_dir):
    enc = _encoder(tiny_bert_dir)
    texts = STATES + OBS + ["x " * 40]
    with torch.no_grad():
        ref = enc(texts)
        assert enc.use_backend("bf16") == "bf16" and not enc.auto and set(enc.costs) == {"bf16"}
        got = enc(texts)
        alone = torch.cat([enc([t]) for t in texts])
    assert got.dtype == torch.float32 and got.shape == ref.shape
    cos = torch.nn.functional.cosine_similarity(got, ref)
    assert cos.min() > 0.999 and not torch.equal(got, ref)  # bfloat16 ran: near, not equal
    assert torch.allclose(got, alone, atol=1e-2)  # a text's vector does not depend on what it was batched with
    assert enc.bert.embeddings.word_embeddings.weight.dtype == torch.float32  # the network itself stays float32


def test_packed_rows_in_bf16_give_each_text_its_own_vector(tiny_bert_dir):
    enc = _encoder(tiny_bert_dir)
    enc.use_backend("bf16")
    texts = STATES + OBS[:2]
    ids = enc.tokenizer(texts, truncation=True, max_length=32)["input_ids"]
    ((one_row, flat, _),) = enc._calls(ids, plan=[[list(range(len(texts)))]])  # every text in one packed row
    assert one_row["pool"].shape[1] == len(texts)
    packed = torch.from_numpy(enc.bf16(one_row)).flatten(0, -2)[torch.from_numpy(flat)]
    with torch.no_grad():
        apart = enc(texts)
    assert torch.nn.functional.cosine_similarity(packed, apart).min() > 0.999


def test_auto_loads_bf16_only_where_the_cpu_has_the_units(tiny_bert_dir, tmp_path, monkeypatch):
    monkeypatch.setenv(bf16_text.AUTO_ENV, "1")
    enc = _encoder(tiny_bert_dir)
    monkeypatch.setattr(bf16_text, "native", lambda: False)
    assert "bf16" not in enc.use_backend("auto", cache_dir=tmp_path) and enc.bf16 is None
    monkeypatch.setattr(bf16_text, "native", lambda: True)
    assert "bf16" in enc.use_backend("auto", cache_dir=tmp_path) and enc.auto
    assert {"torch", "bf16"} <= set(enc.costs)
    monkeypatch.setenv(bf16_text.AUTO_ENV, "0")  # float32 only, asked for
    assert "bf16" not in enc.use_backend("auto", cache_dir=tmp_path) and enc.bf16 is None
    assert enc.use_backend("torch") == "torch" and enc.bf16 is None and enc.runner is None


def test_auto_sends_each_call_where_it_costs_least(tiny_bert_dir, tmp_path, monkeypatch):
    monkeypatch.setenv(bf16_text.AUTO_ENV, "1")
    monkeypatch.setattr(bf16_text, "native", lambda: True)
    enc = _encoder(tiny_bert_dir)
    enc.use_backend("auto", cache_dir=tmp_path)
    enc.runner = None  # PyTorch against bfloat16 only
    enc.bf16 = counting = _Counting(enc.bf16)
    cheap, dear = CallCost(0.1, 0.001, 0.0), CallCost(50.0, 0.1, 0.0)
    with torch.no_grad():
        enc.costs = {"torch": dear, "bf16": cheap}
        on_bf16 = enc(STATES)
        assert counting.calls >= 1
        enc.costs = {"torch": cheap, "bf16": dear}
        n = counting.calls
        on_torch = enc(STATES)
        assert counting.calls == n  # PyTorch ran it
    assert torch.nn.functional.cosine_similarity(on_bf16, on_torch).min() > 0.999


def test_weights_changed_in_place_or_a_copy_send_the_encoder_back_to_float32(tiny_bert_dir):
    enc = _encoder(tiny_bert_dir)
    enc.use_backend("bf16")
    assert copy.deepcopy(enc).bf16 is None  # a copy may be trained apart: it runs on PyTorch
    with torch.no_grad():
        next(enc.bert.parameters()).add_(0.5)  # what an optimiser step does
        got = enc(STATES)
    assert enc.bf16 is None and enc.backend == "torch"
    with torch.no_grad():
        assert torch.allclose(got, enc(STATES), atol=1e-6)  # the changed float32 weights ran, not the old copy


def test_bf16_is_a_cpu_backend_and_its_switch_is_checked(tiny_bert_dir, monkeypatch):
    from sam_model.models import onnx_text

    assert onnx_text.check_backend("bf16") == "bf16"
    enc = _encoder(tiny_bert_dir).to("meta")  # any device but the CPU (no GPU needed to check the refusal)
    with pytest.raises(ValueError, match="CPU only"):
        enc.use_backend("bf16")
    monkeypatch.setenv(bf16_text.AUTO_ENV, "false")
    with pytest.raises(ValueError, match=r"\$SAM_TEXT_BF16 must be 0 .* or 1 .*got 'false'"):
        bf16_text.in_auto()
