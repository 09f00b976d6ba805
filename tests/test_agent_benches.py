"""The two agent-memory benchmarks (sam_model.bench.grounding and plain_query) on a few held-out airline
conversations with hashed bag-of-words encoders: every method answers, rates are shares, and a plain query through
SAM's path ranks exactly as the content search it is compared with when both use the same encoder."""

from __future__ import annotations

from pathlib import Path

import pytest

from sam_model.bench import grounding, plain_query
from sam_model.memory import HashingEncoder


@pytest.fixture
def convs(shared_dir):
    path = shared_dir / "data" / "tau-bench" / "gpt-4o-airline.json.gz"
    if not path.is_file():
        pytest.skip(f"tau-bench transcripts absent ({path})")
    return grounding.conversations(path, "test", 2)


def test_grounding_replays_every_method_over_the_same_memories(convs):
    report = grounding.run(HashingEncoder(512), convs, k=5, content=HashingEncoder(512), progress=False)
    m = report["methods"]
    assert report["values"] > 10 and set(m) >= {grounding.BEFORE, "SAM, importer state", "recency"}
    assert all(0 <= r <= 1 for v in m.values() for r in v["per_conversation"] + [v["pooled"]])
    assert m["SAM, text only"] == m["MiniLM (untrained), text only"]  # one path: the same encoder, the same figure
    assert m[grounding.BEFORE] == m["MiniLM (untrained), state + text"]
    assert "| SAM, before the call |" in grounding.table(report)


def test_plain_queries_rank_as_the_content_search_with_the_same_encoder(convs):
    probes = plain_query.probes(HashingEncoder(2048), HashingEncoder(2048))
    assert probes[plain_query.TEXT] == probes[plain_query.MINILM]
    assert sum(probes[plain_query.TEXT]["top3"]) >= 3 and not probes[plain_query.TEXT]["nonsense_same_order"]
    a = plain_query.airline(HashingEncoder(512), HashingEncoder(512), convs, progress=False)
    assert a["decisions"] > 3 and a["mrr"][plain_query.TEXT] == a["mrr"][plain_query.MINILM]
    assert "| SAM, live state |" in plain_query.tables({"probes": probes, "airline": a})


def test_a_missing_transcript_file_is_one_line(tmp_path: Path, capsys):
    assert grounding.main(["--transcripts", str(tmp_path / "none.json.gz")]) == 2
    assert plain_query.main(["--transcripts", str(tmp_path / "none.json.gz")]) == 2
    assert capsys.readouterr().err.count("no such transcript file") == 2
