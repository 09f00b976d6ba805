"""The lodo bench's variant lexlearn is evaluated with the lexical weight its network learned: its own loading path
(sam_model.bench.lodo.evaluate_domain: SAMRetriever.load of the fold's best checkpoint, evaluate's plus_used rows)
searches every method of it with w = softplus(raw), not 0 and not the checkpoint's model.store.lexical."""

from __future__ import annotations

import argparse

import pytest
import torch

import sam_model.storesearch as storesearch
from sam_model.bench import lodo
from sam_model.data.synthetic import write_synthetic
from sam_model.evaluation import methods as eval_methods
from sam_model.models.sam import SAMConfig, SAMNet
from sam_model.storeconfig import StoreConfig


def _checkpoint(tiny_bert_dir, path, raw: float, store_lexical: float):
    """A training checkpoint (the keys train.py fit writes that the loader reads) of a net with lexical_learned."""
    torch.manual_seed(0)
    net = SAMNet(SAMConfig(bert_path=str(tiny_bert_dir), dim=8, hidden=16, proj_hidden=16, max_length=32,
                           lexical_learned=True))
    with torch.no_grad():
        net.lexical_raw.fill_(raw)
    torch.save({"hyper_parameters": {"net": net.cfg.to_dict(), "bert_config": None,
                                     "store": StoreConfig(lexical=store_lexical).to_dict()},
                "state_dict": {f"net.{k}": v for k, v in net.state_dict().items()}}, path)
    return float(net.lexical_weight.detach())


def test_every_lexlearn_method_searches_with_the_learned_weight(tiny_bert_dir, tmp_path, monkeypatch):
    write_synthetic(tmp_path / "demo.jsonl", 3, seed=0)
    monkeypatch.setitem(lodo.DOMAINS, "demo", lodo.Domain("demo.jsonl", 1, "all"))
    monkeypatch.setattr(eval_methods, "BASELINES", ("bm25",))  # the untrained baselines need no MiniLM here
    monkeypatch.setattr(lodo, "TEXT_CACHE", str(tmp_path / "cache"))
    seen: list[float] = []
    bonus = storesearch.lexical_bonus

    def record(query, texts, weight):
        seen.append(weight)
        return bonus(query, texts, weight)

    monkeypatch.setattr(storesearch, "lexical_bonus", record)
    learned = _checkpoint(tiny_bert_dir, tmp_path / "best-epoch=0.ckpt", raw=0.7, store_lexical=0.3)
    assert learned != pytest.approx(0.3)
    args = argparse.Namespace(sgd_queries=None, seed=0, out=str(tmp_path / "out"), extra=[])
    rows = lodo.evaluate_domain("demo", {"lexlearn": tmp_path / "best-epoch=0.ckpt"}, tmp_path, args)
    assert [r["variant"] for r in rows] == ["lexlearn"] and "lexical" not in rows[0]  # no weight chosen after it
    assert seen and set(seen) == {learned}  # lexlearn, lexlearn+used and lexlearn+used-latest alike
    report = (tmp_path / "out" / "demo" / "report.json").read_text()
    for name in ("lexlearn", "lexlearn+used", "lexlearn+used-latest"):
        assert f'"{name}"' in report
