"""Every fit timed which engine runs the frozen BERT (~13-20 s on 2 cores) before it knew whether its text cache
already held every text it needs; when it did, the timings were never used. The fit now settles at start only the
precision (the bfloat16 copy that names the cache file) and times the engines when the frozen pass has texts to
encode; an encoding call after that times them then."""

from __future__ import annotations

from types import SimpleNamespace

import torch


def _fit_start(tiny_bert_dir, dm, tmp_path):
    from sam_model.models.sam import SAMConfig
    from sam_model.training.module import SAMLightningModule

    module = SAMLightningModule(SAMConfig(bert_path=str(tiny_bert_dir), dim=8, hidden=16, proj_hidden=16),
                                vocab=dm.vocab, text_cache_dir=str(tmp_path / "text"))
    module._trainer = SimpleNamespace(datamodule=dm, world_size=1, global_rank=0)
    module.on_fit_start()
    return module.net.state_encoder.text_encoder


def test_a_fit_whose_texts_are_all_cached_times_no_engine_and_keeps_its_cache_file(
        tiny_bert_dir, small_demo_logs, tmp_path, monkeypatch, capsys):
    from sam_model.models import bf16_text, onnx_text, text_encoder
    from sam_model.training.datamodule import AgentLogDataModule

    monkeypatch.setenv(bf16_text.AUTO_ENV, "1")
    monkeypatch.setattr(bf16_text, "native", lambda: True)  # a bfloat16 copy on any CPU: the file name carries it
    monkeypatch.setattr(onnx_text, "available", lambda: False)
    timed: list[str] = []
    cached = text_encoder.cached

    def counted(key, *args, **kwargs):  # every engine timing asked for (call_cost.cached keeps them per process)
        timed.append(key[0])
        return cached(key, *args, **kwargs)

    monkeypatch.setattr(text_encoder, "cached", counted)
    train, _ = small_demo_logs
    dm = AgentLogDataModule(train=[str(train)], val_fraction=0.25, batch_episodes=8, cache_dir=str(tmp_path / "c"))
    first = _fit_start(tiny_bert_dir, dm, tmp_path)  # a cold cache: the texts are missing, the engines are timed
    assert sorted(timed) == ["bf16", "torch"] and "choosing the text encoder's engine" in capsys.readouterr().out
    saved = sorted((tmp_path / "text").glob("*.pt"))
    assert [p.name for p in saved] == [first.cache_file(tmp_path / "text").name]
    assert saved[0].name.endswith("-bfloat16.pt")
    texts = dm.texts()

    timed.clear()
    again = _fit_start(tiny_bert_dir, dm, tmp_path)  # every text cached: nothing to time
    out = capsys.readouterr().out
    assert timed == [] and "choosing the text encoder's engine" not in out and "frozen BERT pass" not in out
    assert again.cache_file(tmp_path / "text") == first.cache_file(tmp_path / "text")  # the same file, bfloat16
    assert again.precision == first.precision == "bfloat16" and again.uncached(texts) == []
    with torch.no_grad():
        assert torch.equal(again(texts[:5]), first(texts[:5]).half().float())  # the cached vectors (kept in float16)
        assert timed == []
        again(["a text no run has seen"])  # the first BERT call loads and times auto's engines, as use_backend
    assert sorted(timed) == ["bf16", "torch"] and again.backend == first.backend == "bf16" and again.auto


def test_the_deferred_bfloat16_copy_is_the_one_the_engines_are_timed_on(tiny_bert_dir, monkeypatch):
    """defer_auto makes the bfloat16 copy that names the cache file; loading and timing the engines then made it
    again (a deep copy of the BERT). The copy is kept, unless the weights changed since (then a new one)."""
    from sam_model.models import bf16_text, onnx_text
    from sam_model.models.bert import load_bert
    from sam_model.models.text_encoder import TextEncoder

    monkeypatch.setenv(bf16_text.AUTO_ENV, "1")
    monkeypatch.setattr(bf16_text, "native", lambda: True)
    monkeypatch.setattr(onnx_text, "available", lambda: False)
    bert, tok = load_bert(tiny_bert_dir)
    enc = TextEncoder(bert.eval(), tok, max_length=32, trainable_layers=0, cache=False)
    enc.defer_auto()
    copy = enc.bf16
    assert copy is not None and enc.use_backend("auto") == "bf16" and enc.bf16 is copy
    enc.defer_auto()
    copy = enc.bf16
    with torch.no_grad():
        next(enc.bert.parameters()).add_(0.0)  # an in-place change: the copy is of other weights now
    enc.use_backend("auto")
    assert enc.bf16 is not copy and enc.bf16 is not None
