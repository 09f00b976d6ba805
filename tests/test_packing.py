"""Several texts per BERT row give the vectors of one text per row; the measured call cost decides the cut."""

from __future__ import annotations

import pytest
import torch
from test_model import CharTokenizer, make_net

from sam_model.models.bert import pool, tiny_bert
from sam_model.models.call_cost import CallCost, fit
from sam_model.models.packing import pack_rows, packable, packed_forward, packed_inputs

STATE = "phase: search flights from Lisbon to Paris on the 3rd, economy, two adults"
OBS = ["ok go ahead", "which dates work for you?", "x" * 40]


def alone(bert, ids: list[list[int]], pooling: str) -> torch.Tensor:
    """Each text in a BERT call of its own (no padding, no mask): the reference."""
    out = []
    for x in ids:
        h = bert(input_ids=torch.tensor([x])).last_hidden_state
        out.append(pool(h, torch.ones(1, len(x)), pooling))
    return torch.cat(out)


@pytest.mark.parametrize("attention", ["sdpa", "eager"])
@pytest.mark.parametrize("pooling", ["mean", "cls"])
def test_packed_rows_give_the_vectors_of_one_text_per_call(attention, pooling):
    bert = tiny_bert(vocab_size=200, hidden=32, layers=2).eval()
    bert.set_attn_implementation(attention)
    assert packable(bert)
    ids = [[1] + [3 + (5 * i + j) % 190 for j in range(n)] + [2] for i, n in enumerate([30, 4, 11, 17, 1])]
    rows = pack_rows([len(x) for x in ids], width=40)
    assert len(rows) < len(ids) and max(len(r) for r in rows) > 1  # texts do share rows
    inputs, flat = packed_inputs([[ids[j] for j in row] for row in rows], pooling, pad_id=0)
    with torch.no_grad():
        out = packed_forward(bert, **{k: torch.from_numpy(v) for k, v in inputs.items()}).flatten(0, 1)[flat]
        ref = alone(bert, ids, pooling)
    order = [j for row in rows for j in row]
    assert torch.allclose(out, ref[order], atol=1e-5)


def test_pack_rows_place_every_text_once_within_the_width():
    lengths = [60, 25, 64, 5, 5, 130, 40]
    rows = pack_rows(lengths, width=128)
    assert sorted(j for r in rows for j in r) == list(range(len(lengths)))
    assert all(sum(lengths[j] for j in r) <= 128 for r in rows if len(r) > 1)
    assert [5] in rows  # longer than a row: alone
    assert pack_rows(lengths, width=0) == [[j] for j in sorted(range(7), key=lambda j: -lengths[j])]


def test_only_encoders_whose_positions_are_absolute_bert_positions_are_packed():
    from transformers import RobertaConfig, RobertaModel

    bert = tiny_bert(vocab_size=50, hidden=16, layers=1)
    assert packable(bert)
    bert.config.position_embedding_type = "relative_key"
    assert not packable(bert)
    roberta = RobertaModel(RobertaConfig(vocab_size=50, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                         intermediate_size=32))
    assert not packable(roberta)


def test_the_cost_fit_recovers_known_costs():
    truth = CallCost(fixed=7.0, per_token=0.05, attention=0.004)
    shapes = [(1, 8), (1, 32), (1, 96), (2, 64), (4, 128), (8, 24)]
    got = fit(shapes, [truth.ms(r, w) for r, w in shapes])
    assert got.fixed == pytest.approx(7.0, rel=1e-6) and got.per_token == pytest.approx(0.05, rel=1e-6)
    assert got.attention == pytest.approx(0.004, rel=1e-6)
    flat = fit(shapes, [3.0 + 0.1 * r * w for r, w in shapes])  # no attention term: kept at zero, not negative
    assert flat.attention >= 0 and flat.fixed == pytest.approx(3.0, rel=1e-6)


def test_a_query_is_one_call_where_calls_cost_more_than_attention():
    enc = make_net(cache_text=False).state_encoder.text_encoder
    lengths = [60, 25]  # a state text and an observation
    plan, _ = enc._plan(lengths, CallCost(fixed=30.0, per_token=1.0, attention=0.001))
    assert plan == [[[0, 1]]]  # one call, one row holding both texts
    plan, _ = enc._plan(lengths, CallCost(fixed=200.0, per_token=1.0, attention=0.0))
    assert len(plan) == 1  # a call costs more than any padding: one call (packed or padded, as cheaper)
    plan, _ = enc._plan(lengths, CallCost(fixed=0.0, per_token=0.01, attention=0.05))
    assert sorted(plan) == [[[0]], [[1]]]  # free calls, costly attention: each text in a call of its own
    many, _ = enc._plan([20] * 40, CallCost(fixed=10.0, per_token=0.01, attention=0.0))
    assert len(many) == 1 and sum(len(r) for r in many[0]) == 40


def test_the_encoder_gives_the_same_vectors_under_every_cut():
    net = make_net(cache_text=False).eval()
    enc = net.state_encoder.text_encoder
    texts = [STATE] + OBS
    with torch.no_grad():
        ref = torch.cat([enc([t]) for t in texts])
        for cost in (CallCost(100.0, 0.01, 0.0), CallCost(0.0, 0.01, 1.0), CallCost(1.0, 0.01, 0.001)):
            enc.costs = {"torch": cost}
            assert torch.allclose(enc(texts), ref, atol=1e-5)


def test_the_cost_is_measured_on_calls_no_longer_than_the_encoder_allows():
    from transformers import BertConfig, BertModel

    from sam_model.models.text_encoder import TextEncoder

    cfg = BertConfig(vocab_size=60, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32,
                     max_position_embeddings=40)
    enc = TextEncoder(BertModel(cfg, add_pooling_layer=False).eval(), CharTokenizer(), max_length=32, trainable_layers=0)
    for packed in (True, False):
        enc.packed = packed
        for rows, width in enc._shapes():
            enc._time_call(rows, width, None)  # positions past 40 would raise an index error
    assert max(w for _, w in enc._shapes()) == 32  # one text per row: no row longer than max_length
