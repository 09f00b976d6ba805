"""The first-epoch bench's roofline: its FLOP count is BERT's, its padded calls are the old code's."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode
from transformers import AutoTokenizer, BertModel

from sam_model.bench.encode import CHUNK, bert_flops, legacy_rows, matmul_rate, mean_t95, token_lengths
from sam_model.models.bert import default_bert_path, tiny_bert


@pytest.fixture(scope="module")
def bert_and_tokenizer(tiny_bert_dir) -> tuple[BertModel, object]:
    return BertModel.from_pretrained(tiny_bert_dir).eval(), AutoTokenizer.from_pretrained(tiny_bert_dir)


@pytest.mark.parametrize("rows,width", [(1, 7), (3, 20), (5, 64)])
def test_flop_count_matches_torch_counter_on_the_linear_layers(bert_and_tokenizer, rows, width):
    bert, _ = bert_and_tokenizer
    ids = torch.randint(1000, 2000, (rows, width))
    with torch.inference_mode(), FlopCounterMode(display=False) as counter:
        bert(input_ids=ids, attention_mask=torch.ones_like(ids))
    d, layers = bert.config.hidden_size, bert.config.num_hidden_layers
    pooler = 2 * rows * d * d if bert.pooler is not None else 0  # BertModel's [CLS] layer, unused by mean pooling
    counted = counter.get_total_flops() - pooler
    assert bert_flops(bert.config, [width] * rows, attention=False) == counted
    assert bert_flops(bert.config, [width] * rows) - counted == layers * rows * 4 * width * width * d


def test_padding_costs_flops_and_short_texts_cost_less():
    config = tiny_bert(vocab_size=100, hidden=32, layers=2).config
    assert bert_flops(config, [10, 30]) < bert_flops(config, [30, 30]) == 2 * bert_flops(config, [30])


def test_legacy_rows_are_the_old_codes_calls():
    tok = AutoTokenizer.from_pretrained(default_bert_path(), local_files_only=True)
    texts = [("word " * (i % 90)) + f"text {i}" for i in range(CHUNK + 40)]
    rows = legacy_rows(tok, texts, max_length=64)
    assert [len(r) for r in rows] == [CHUNK, 40]
    assert sorted(x for r in rows for x in r) == sorted(token_lengths(tok, texts, 64))
    assert max(token_lengths(tok, texts, 64)) == 64 and min(token_lengths(tok, texts, 64)) == 4


def test_matmul_rate_is_a_positive_rate():
    config = tiny_bert(vocab_size=100, hidden=32, layers=2).config
    rate, lib = matmul_rate(config, threads=1, rows=256, repeats=2)
    assert rate > 0 and lib in ("ONNX Runtime", "PyTorch")
    rate16, lib16 = matmul_rate(config, threads=1, rows=256, repeats=2, dtype=torch.bfloat16)
    assert rate16 > 0 and lib16 == "PyTorch"  # bfloat16 products run on PyTorch (the bfloat16 backend's library)


def test_round_interval_is_students_t():
    mean, half = mean_t95(np.array([2.0, 3.0, 4.0]))
    assert mean == 3.0 and half == pytest.approx(4.303 * 1.0 / np.sqrt(3))
    assert mean_t95(np.array([2.5, 2.5]))[1] == 0.0


def test_legacy_encode_returns_the_vectors_in_the_texts_order(bert_and_tokenizer):
    from sam_model.bench.encode import legacy_encode
    from sam_model.models.bert import pool

    bert, tok = bert_and_tokenizer
    texts = ["a much longer text than the others, with many words in it", "short", "a middle one here"]
    with torch.inference_mode():
        got = legacy_encode(bert, tok, texts, max_length=32)
        for i, t in enumerate(texts):  # each alone: no padding, so the reference of its row
            one = tok([t], truncation=True, max_length=32, return_tensors="pt")
            ref = pool(bert(**one).last_hidden_state, one["attention_mask"], "mean")[0]
            assert torch.allclose(got[i], ref, atol=1e-5)


def test_the_first_epoch_texts_of_a_config_with_token_windows_are_its_chunks(tmp_path):
    """bench.encode read a config's data without the model, so a config chunking by tokens failed in chunk_record
    ("needs the encoder's tokenizer"); it now gives the data module the token count of the config's BERT, as
    training does, and the texts are the chunks the batches hold."""
    import json

    import yaml

    from sam_model.bench.encode import training_texts

    log = tmp_path / "long.jsonl"
    view = "view_file: " + "\n".join(f"{i:4d}  def handler_{i}(request):  # src/app/views_{i}.py" for i in range(60))
    with open(log, "w", encoding="utf-8") as fh:
        for ep in range(4):
            for step, (kind, text) in enumerate([("user", "fix the login handler"), ("result", view),
                                                 ("system", "looking at it"), ("system", f"edit views_{ep}.py")]):
                ev = {"episode_id": f"ep{ep}", "step": step, "kind": kind, "text": text, "state": {"phase": "edit"}}
                if step == 3:
                    ev["useful_memory_steps"] = [1]
                fh.write(json.dumps(ev) + "\n")
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump({"data": {"train": [str(log)], "val_fraction": 0.25, "batch_episodes": 4,
                                               "cache_dir": str(tmp_path / "cache"),
                                               "chunking": {"tokens": 64, "overlap": 50}},
                                      "model": {"net": {"max_length": 64}}}))
    batches, n_all = training_texts([str(config)], 10_000, 0)
    texts = [t for b in batches for t in b]
    assert 0 < len(texts) <= n_all and not any(len(t) > 1000 for t in texts)  # no whole view: its chunks
    assert sum(1 for t in texts if "views_" in t) > 5  # the long view, as its chunks
