"""The evaluation's table says what its columns are: the console and report.md showed Cov@5 and Ground@5 (and
precision, nDCG, latency) with nothing saying what they measure; grounding@5 was defined only inside the README's
tau-bench benchmark, far from "Evaluate"."""

from __future__ import annotations

from sam_model.evaluation.report import print_table, to_markdown

ROW = {"mrr": 0.5, "recall@1": 0.2, "recall@5": 0.7, "precision@5": 0.3, "ndcg@10": 0.6, "coverage@5": 0.4,
       "grounding@5": 0.9, "latency_ms_p50": 1.0, "latency_ms_p99": 2.0}


def report(row: dict) -> dict:
    return {"data": "log.jsonl", "scope": "episode", "n_queries": 3, "methods": {"sam": row, "recency": row}}


def test_report_md_and_the_console_say_what_each_column_is(capsys):
    md = to_markdown(report(ROW))
    print_table(report(ROW))
    out = capsys.readouterr().out
    for said in ("Ground@5): the share of the needed argument values", "Cov@k): 1 when every useful memory",
                 "MRR: 1 / the rank of the first useful memory", "P@k): the share of the top k",
                 "nDCG@10: binary gains", "p50 / p99 ms"):
        assert said in md, said
        assert said in " ".join(out.split()), said  # the console wraps long lines
    assert md.count("(R@k)") == 1  # one note per family, not one per column


def test_a_log_without_needed_values_has_no_grounding_note(capsys):
    row = {k: v for k, v in ROW.items() if k != "grounding@5"}
    assert "Ground@5" not in to_markdown(report(row))
    print_table(report(row))
    assert "Ground@5)" not in capsys.readouterr().out
