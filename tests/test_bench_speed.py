"""bench.speed's agent-loop rows (--replay): every query once in episode order, the caches kept as a loaded
retriever keeps them, beside the cold rows; the figures it prints are what the README's tables hold."""

from __future__ import annotations

import json

from serving import tiny_export


def test_replay_rows_keep_the_caches_and_say_how_often_bert_read_one_text_or_none(tiny_bert_dir, tmp_path,
                                                                                  monkeypatch):
    from sam_model.bench import speed
    from sam_model.data.synthetic import write_synthetic
    from sam_model.evaluation.data import load_eval_data

    log = tmp_path / "demo.jsonl"
    write_synthetic(log, 4, seed=1)  # the demo's states repeat between decisions ("ok, go ahead")
    monkeypatch.setattr(speed, "load_data", lambda path: (load_eval_data(log, "episode"), "4 demo episodes"))
    export = tiny_export(tiny_bert_dir, tmp_path / "export")
    out = speed.main(["--retriever", str(export), "--sizes", "10", "--batches", "1", "--backends", "torch",
                      "--calls", "2", "--replay", "--threads", "1", "--out", str(tmp_path / "out")])
    cold, loop = out["rows"]
    assert "one_text_or_none" not in cold and 0 < loop["one_text_or_none"] <= 1
    assert all(r[m]["p50_ms"] > 0 for r in (cold, loop) for m in ("sam", "dense"))
    md = (tmp_path / "out" / "speed.md").read_text()
    assert "agent loop" in md and json.loads((tmp_path / "out" / "speed.json").read_text())["rows"] == out["rows"]
    assert (tmp_path / "out" / "speed.png").read_bytes().startswith(b"\x89PNG")  # the cold row, drawn


def test_profile_counts_the_bert_arithmetic_of_both_searches(tiny_bert_dir, tmp_path, monkeypatch):
    from sam_model.bench import speed
    from sam_model.data.synthetic import write_synthetic
    from sam_model.evaluation.data import load_eval_data

    log = tmp_path / "demo.jsonl"
    write_synthetic(log, 2, seed=1)
    monkeypatch.setattr(speed, "load_data", lambda path: (load_eval_data(log, "episode"), "2 demo episodes"))
    ratios = []
    # whole texts; the observation read to 3 tokens (one of text: SAM reads less than dense's whole observation);
    # the state text read to 3 tokens too
    clips = ({}, {"observation_max_length": 3}, {"observation_max_length": 3, "state_max_length": 3})
    for i, clip in enumerate(clips):
        export = tiny_export(tiny_bert_dir, tmp_path / f"export{i}", **clip)
        out = speed.main(["--retriever", str(export), "--sizes", "10", "--batches", "1", "--backends", "torch",
                          "--calls", "3", "--profile", "--threads", "1", "--out", str(tmp_path / f"out{i}")])
        ratios.append(out["profiles"]["torch"]["BERT FLOPs, SAM / dense (median, not ms)"])
    assert 1 < ratios[0] < 1 + 32  # SAM reads dense's text and a state text of at most max_length (32) tokens
    assert ratios[2] < ratios[1] < ratios[0]  # what SAM reads, clipped: fewer tokens each time


def test_dense_baseline_reads_the_given_bert_and_a_gpu_run_needs_torch(tiny_bert_dir, tmp_path, monkeypatch):
    """``--bert``: the dense baseline's BERT folder (a stand-in's on a machine without MiniLM's weights);
    ``--device`` other than cpu runs BERT on PyTorch only, refused with anything else before any work."""
    import pytest

    from sam_model.bench import speed
    from sam_model.data.synthetic import write_synthetic
    from sam_model.evaluation.data import load_eval_data
    from sam_model.models import text_encoder

    log = tmp_path / "demo.jsonl"
    write_synthetic(log, 2, seed=1)
    monkeypatch.setattr(speed, "load_data", lambda path: (load_eval_data(log, "episode"), "2 demo episodes"))
    seen, real = [], text_encoder.TextEmbedder.__init__

    def spy(self, path=None, device=None, max_length=128, cache_dir=None):
        seen.append((path, device))
        real(self, path, device, max_length, cache_dir)

    monkeypatch.setattr(text_encoder.TextEmbedder, "__init__", spy)
    export = tiny_export(tiny_bert_dir, tmp_path / "export")
    out = speed.main(["--retriever", str(export), "--bert", str(tiny_bert_dir), "--sizes", "10", "--batches", "1",
                      "--backends", "torch", "--calls", "2", "--threads", "1", "--out", str(tmp_path / "out")])
    assert seen == [(str(tiny_bert_dir), "cpu")] and out["config"]["gpu"] is None
    assert out["rows"][0]["dense"]["p50_ms"] > 0
    with pytest.raises(SystemExit):
        speed.main(["--retriever", str(export), "--device", "cuda", "--backends", "onnx", "--out", str(tmp_path / "x")])
    assert not (tmp_path / "x").exists()
