"""The device check script (sam_model.bench.device) on the CPU: every part runs and reports sane figures;
on a machine without CUDA the GPU rows are absent or say why."""

import json

import pytest
import torch

from sam_model.bench import device


def test_quick_run_reports_every_part(tmp_path, tiny_bert_dir):
    report = device.main(["--out", str(tmp_path), "--quick", "--bert", str(tiny_bert_dir)])
    assert json.loads((tmp_path / "device.json").read_text()) == json.loads(json.dumps(report))
    train = [r for r in report["train"] if "skipped" not in r]
    assert {r["device"] for r in train} >= {"cpu"}
    for r in train:
        assert r["s_per_step"] > 0 and r["decisions_per_batch"] > 0 and r["final_loss"] == r["final_loss"]
    index = [r for r in report["index"] if "skipped" not in r]
    flat = next(r for r in index if r["kind"] == "flat" and r["device"] == "cpu")
    ivf = next(r for r in index if r["kind"] == "ivf" and r["device"] == "cpu")
    assert flat["recall@10_vs_flat"] == 1.0 and 0.5 < ivf["recall@10_vs_flat"] <= 1.0
    janus = [r for r in report["janus"] if "skipped" not in r]
    assert janus and all(r["ms_per_1000_tasks"] > 0 for r in janus)
    assert all(r["pair_agree"] and r["pair_ms_batched"] > 0 and r["pair_ms_one_by_one"] > 0 for r in janus)
    if not torch.cuda.is_available():
        assert all(r["device"] == "cpu" for r in train + janus)


def test_hash_tokenizer_gives_bert_inputs():
    tok = device.HashTokenizer(30522)
    enc = tok(["Book it for 2 people.", "ok"], max_length=8)
    assert enc["input_ids"].shape == enc["attention_mask"].shape == (2, 8)
    assert enc["input_ids"][0, 0] == 101 and int(enc["input_ids"].max()) < 30522
    assert enc["attention_mask"][1].tolist() == [1, 1, 1, 0, 0, 0, 0, 0]


def test_standin_is_the_packaged_head_on_random_minilm_weights(tmp_path):
    """What a device machine without MiniLM's weights times: the shipped head's weights, the deployed shapes, a
    BERT whose values are random (so its rankings mean nothing, and nothing claims they do)."""
    from safetensors.torch import load_file

    from sam_model.data.schema import parse_event
    from sam_model.pretrained import resolve
    from sam_model.retriever import SAMRetriever

    out = device.main(["--standin", str(tmp_path / "s")])  # as the README writes it: no --out
    r = SAMRetriever.load(out["sam"], device="cpu")
    shipped = SAMRetriever.from_pretrained("sam-general", device="cpu")
    head = load_file(str(resolve("sam-general") / "model.safetensors"))
    state = r.net.state_dict()
    assert head and all(torch.equal(state[k], v.float()) for k, v in head.items())
    assert r.net.cfg == shipped.net.cfg and r.dim == shipped.dim
    bert, real = r.net.state_encoder.text_encoder.bert, shipped.net.state_encoder.text_encoder.bert
    assert bert.config.hidden_size == real.config.hidden_size == 384
    assert not torch.equal(bert.embeddings.word_embeddings.weight, real.embeddings.word_embeddings.weight)
    assert (tmp_path / "s" / "bert" / "tokenizer.json").exists()
    r.add_memories([parse_event({"episode_id": "e", "step": 0, "kind": "user", "text": "Fly to Paris on May 3rd."},
                                "<test>", 1)])
    assert len(r.search({"phase": "book"}, "ok, go ahead", k=1, episode_id="e")) == 1


def test_out_is_required_unless_only_the_standin_is_written(capsys):
    with pytest.raises(SystemExit):
        device.main(["--quick"])
    assert "--out is required" in capsys.readouterr().err
