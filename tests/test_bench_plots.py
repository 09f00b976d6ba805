"""Benchmark results that are curves are drawn, not only tabled (house rule): the adaptation learning curve
(bench.adapt_curve, curve.png) and latency against the memories searched (bench.speed, speed.png)."""

from __future__ import annotations

import json

PNG = b"\x89PNG\r\n\x1a\n"


def _row(backend: str, size: int, batch: int, sam: float, dense: float, **extra) -> dict:
    return {"backend": backend, "size": size, "batch": batch, "sam": {"p50_ms": sam, "p99_ms": 2 * sam},
            "dense": {"p50_ms": dense, "p99_ms": 2 * dense}, **extra}


def test_speed_draws_one_query_latency_against_the_memories(tmp_path):
    from sam_model.bench import speed

    rows = [_row("torch", 100_000, 1, 40.0, 20.0), _row("torch", 1_000, 1, 30.0, 15.0),
            _row("torch", 1_000, 32, 500.0, 300.0),  # a batch of 32: not one query's latency
            _row("torch", 1_000, 1, 5.0, 4.0, one_text_or_none=0.9),  # the agent loop keeps its caches
            _row("onnx", 1_000, 1, 20.0, 10.0)]
    series = speed.plot(rows, tmp_path / "speed.png")
    assert series == {"SAM, BERT on torch": [(1_000, 30.0), (100_000, 40.0)],
                      "dense MiniLM, BERT on torch": [(1_000, 15.0), (100_000, 20.0)],
                      "SAM, BERT on onnx": [(1_000, 20.0)], "dense MiniLM, BERT on onnx": [(1_000, 10.0)]}
    assert (tmp_path / "speed.png").read_bytes().startswith(PNG)


def test_adapt_curve_writes_its_table_and_draws_it(tmp_path):
    from sam_model.bench import adapt_curve
    from sam_model.evaluation.methods import BASELINES

    methods = {b: {"mrr": 0.1 + 0.01 * i, "recall@5": 0.2} for i, b in enumerate(BASELINES)}
    methods |= {"n=0": {"mrr": 0.6, "recall@5": 0.7}, "n=10": {"mrr": 0.7, "recall@5": 0.8},
                "n=all": {"mrr": 0.9, "recall@5": 0.95}}
    report = {"methods": methods, "n_queries": 120}
    md = adapt_curve.write_curve(report, ["n=0", "n=10", "n=all"], {"n=0": 0.0, "n=10": 30.0, "n=all": 90.0},
                                 tmp_path)
    saved = json.loads((tmp_path / "curve.json").read_text())
    assert [r["conversations"] for r in saved["rows"]] == ["0", "10", "all"]
    assert saved["best_baseline"] == BASELINES[-1] and "| all | 0.900 | 0.950 | 1.5 min |" in md
    assert (tmp_path / "curve.md").read_text() == md + "\n"
    assert (tmp_path / "curve.png").read_bytes().startswith(PNG)
