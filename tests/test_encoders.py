"""Any BERT-style transformers encoder as SAM's text encoder: loading, pooling, partial training, export."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from transformers import AutoConfig, AutoModel, AutoTokenizer

from sam_model.models.bert import default_bert_path, layer_stack, load_bert
from sam_model.models.sam import SAMConfig, SAMNet
from sam_model.retriever import SAMRetriever

ARCHITECTURES = {
    "distilbert": dict(dim=32, n_layers=2, n_heads=2, hidden_dim=64, max_position_embeddings=128),
    "roberta": dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                    max_position_embeddings=130, pad_token_id=0),
    "electra": dict(embedding_size=32, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                    intermediate_size=64, max_position_embeddings=128),
    # DeBERTa-v3's shape: no token types (type_vocab_size 0, refused as a size before), relative positions only
    "deberta-v2": dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                       max_position_embeddings=128, type_vocab_size=0, relative_attention=True,
                       position_biased_input=False, pos_att_type=["p2c", "c2p"], max_relative_positions=-1,
                       position_buckets=32, norm_rel_ebd="layer_norm", share_att_key=True),
}


@pytest.fixture(scope="module", params=sorted(ARCHITECTURES))
def encoder_dir(request, tmp_path_factory):
    """A tiny randomly initialised encoder of another architecture, saved with MiniLM's tokenizer."""
    tok = AutoTokenizer.from_pretrained(default_bert_path(), local_files_only=True, trust_remote_code=False)
    torch.manual_seed(0)
    config = AutoConfig.for_model(request.param, vocab_size=tok.vocab_size, **ARCHITECTURES[request.param])
    folder = tmp_path_factory.mktemp(request.param)
    AutoModel.from_config(config).save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


def _net(folder, **kw) -> SAMNet:
    torch.manual_seed(0)
    return SAMNet(SAMConfig(bert_path=str(folder), dim=16, hidden=32, proj_hidden=32, max_length=32, phases=["a"],
                            kinds=["user"], **kw))


def test_loads_encodes_and_trains_only_the_top_layers(encoder_dir):
    model, _ = load_bert(encoder_dir)
    assert model.config.model_type in ARCHITECTURES
    net = _net(encoder_dir, trainable_layers=1, cache_text=False)
    bert = net.state_encoder.text_encoder.bert
    layers = layer_stack(bert)
    assert len(layers) == 2
    assert all(p.requires_grad for p in layers[-1].parameters())
    assert not any(p.requires_grad for p in layers[0].parameters())
    q = net.encode_queries(["phase: a | needs: city"], ["a"], ["ok, go ahead"])
    m = net.encode_memories(["[user] I want to go to Paris", "[user] hi"], ["user", "user"], ["a", "a"])
    (q @ m.T).sum().backward()
    assert layers[-1].parameters().__next__().grad is not None


def test_cls_pooling_differs_from_mean_and_changes_the_cache_key(encoder_dir):
    mean, cls = _net(encoder_dir), _net(encoder_dir, pooling="cls")
    texts = ["a short text", "another, longer text about flights"]
    a, b = mean.state_encoder.text_encoder(texts), cls.state_encoder.text_encoder(texts)
    assert not torch.allclose(a, b)
    assert mean.state_encoder.text_encoder.fingerprint() != cls.state_encoder.text_encoder.fingerprint()
    with pytest.raises(ValueError, match="pooling"):
        _net(encoder_dir, pooling="max")


def test_export_round_trip_keeps_the_architecture(encoder_dir, tmp_path):
    r = SAMRetriever(_net(encoder_dir, pooling="cls").eval())
    mems = [type("M", (), {"id": f"m{i}", "text": t, "kind": "user", "phase": "a", "content": t, "step": i})()
            for i, t in enumerate(["[user] paris please", "[user] two people"])]
    before = r.encode_memories(mems)
    r.save(tmp_path / "export")
    back = SAMRetriever.load(tmp_path / "export")
    assert type(back.net.state_encoder.text_encoder.bert) is type(r.net.state_encoder.text_encoder.bert)
    assert np.allclose(back.encode_memories(mems), before, atol=1e-5)


def test_importing_sam_model_changes_no_environment_variable():
    import subprocess
    import sys

    code = ("import os; before = dict(os.environ); import sam_model, sam_model.retriever, sam_model.memory, "
            "sam_model.models.bert, sam_model.evaluation.run; print(before == dict(os.environ))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "True"
