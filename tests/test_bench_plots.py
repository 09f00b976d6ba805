"""Benchmark results that are curves are drawn, not only tabled (house rule): the adaptation learning curve
(bench.adapt_curve, curve.png), latency against the memories searched (bench.speed, speed.png), the index kinds'
latency and recall against the bank size (bench.search, search.png), the leave-one-domain-out tables' differences
from the best baseline with their intervals (bench.lodo, lodo.png; bench.lodo_seeds, lodo_seeds.png); and with
``--tensorboard LOGDIR`` (evaluate.py's option, through sam_model.tensorboard_log) each plot's lines go to
TensorBoard as scalars and its PNG as an image, read back here from the event files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

PNG = b"\x89PNG\r\n\x1a\n"


def logged(logdir: Path) -> tuple[dict[str, list[tuple[int, float]]], dict[str, object]]:
    """What a TensorBoard log folder holds: scalars by tag as (step, value), and each image tag's decoded pixels."""
    import io

    import matplotlib.image
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    [run] = logdir.iterdir()  # a run logs into a folder of its own, LOGDIR/NAME_N
    acc = EventAccumulator(str(run), size_guidance={"scalars": 0, "images": 0})
    acc.Reload()
    scalars = {t: [(e.step, e.value) for e in acc.Scalars(t)] for t in acc.Tags()["scalars"]}
    images = {t: matplotlib.image.imread(io.BytesIO(acc.Images(t)[-1].encoded_image_string), format="png")
              for t in acc.Tags()["images"]}
    return scalars, images


def assert_logged(logdir: Path, name: str, lines: dict[str, list], png: Path) -> None:
    """The log holds exactly the plot's lines as scalars ``name/label`` and the PNG's pixels as image ``name``."""
    import matplotlib.image
    import numpy as np

    assert [p.name for p in logdir.iterdir()] == [f"{name}_0"]  # the run's own folder, named by its plot
    scalars, images = logged(logdir)
    assert lines and set(scalars) == {f"{name}/{label}" for label in lines}
    for label, points in lines.items():
        got = scalars[f"{name}/{label}"]
        assert [s for s, _ in got] == [int(x) for x, _ in points], label
        assert [v for _, v in got] == pytest.approx([y for _, y in points], rel=1e-6), label
    assert list(images) == [name]
    drawn = matplotlib.image.imread(png)[..., :3]
    assert images[name].shape[:2] == drawn.shape[:2]
    assert np.abs(images[name][..., :3] - drawn).max() <= 1 / 255 + 1e-6  # the PNG itself, not a redraw


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


def _curve_scores(means: dict[str, tuple[float, float]], n: int = 4) -> tuple[dict, list[str]]:
    """Per-decision scores whose means are ``means`` (method -> (mrr, recall@5)): n decisions in n conversations,
    each value its mean plus an alternating ±0.01 (a spread, so every interval has a width)."""
    wobble = [0.01 * (-1) ** i for i in range(n)]
    scores = {m: {"rr": [a + w for w in wobble], "recall@5": [b - w for w in wobble]} for m, (a, b) in means.items()}
    return scores, [f"c{i}" for i in range(n)]


def test_adapt_curve_writes_its_table_and_draws_it(tmp_path):
    """One seed a point (names as runs had them), and a point of three seeds: its mean, the interval over seeds and
    conversations, each seed's MRR and the ordering each seed's export served."""
    from sam_model.bench import adapt_curve
    from sam_model.evaluation.methods import BASELINES

    means = {b: (0.1 + 0.01 * i, 0.2) for i, b in enumerate(BASELINES)}
    means |= {"n=0": (0.6, 0.7), "n=10": (0.7, 0.8), "n=all-s0": (0.88, 0.95), "n=all-s1": (0.90, 0.95),
              "n=all-s2": (0.92, 0.95)}
    scores, groups = _curve_scores(means)
    report = {"methods": {m: {"mrr": a, "recall@5": b} for m, (a, b) in means.items()}, "n_queries": 4}
    points = {"0": ["n=0"], "10": ["n=10"], "all": ["n=all-s0", "n=all-s1", "n=all-s2"]}
    orders = {"n=0": {"used_order": "off"}, "n=10": {"used_order": "off"},
              "n=all-s0": {"used_order": "model", "validation": {"off": 0.8, "model": 0.9, "latest": 0.9}},
              "n=all-s1": {"used_order": "off"}, "n=all-s2": {"used_order": "latest"}}
    seconds = {"n=0": 0.0, "n=10": 30.0, "n=all-s0": 80.0, "n=all-s1": 90.0, "n=all-s2": 100.0}
    md = adapt_curve.write_curve(report, scores, groups, points, seconds, orders, tmp_path)
    saved = json.loads((tmp_path / "curve.json").read_text())
    assert [r["conversations"] for r in saved["rows"]] == ["0", "10", "all"]
    assert saved["best_baseline"] == BASELINES[-1] and saved["seeds"] == 3
    last = saved["rows"][-1]
    assert last["mrr"] == pytest.approx(0.90) and last["mrr_per_seed"] == pytest.approx([0.88, 0.90, 0.92])
    assert last["mrr_ci"][0] < 0.88 and last["mrr_ci"][1] > 0.92  # the seeds' spread is in it (t at 2 df: 4.30)
    assert last["used_order"] == ["model", "off", "latest"] and last["validation"][0]["model"] == 0.9
    assert last["train_seconds"] == 90.0 and last["train_seconds_per_seed"] == [80.0, 90.0, 100.0]
    assert "(0.880 / 0.900 / 0.920) | 0.950 [" in md and "| model / off / latest | 1.5 min |" in md
    assert "| 10 | 0.700 [" in md and "| off | 0.5 min |" in md
    assert (tmp_path / "curve.md").read_text() == md + "\n"
    assert (tmp_path / "curve.png").read_bytes().startswith(PNG)


def test_adapt_curve_logs_its_lines_and_png_to_tensorboard(tmp_path):
    from sam_model.bench import adapt_curve
    from sam_model.evaluation.methods import BASELINES

    means = {b: (0.1, 0.2) for b in BASELINES} | {"n=0": (0.6, 0.7), "n=all": (0.9, 0.95)}
    scores, groups = _curve_scores(means)
    report = {"methods": {m: {"mrr": a, "recall@5": b} for m, (a, b) in means.items()}, "n_queries": 4}
    adapt_curve.write_curve(report, scores, groups, {"0": ["n=0"], "all": ["n=all"]}, {"n=0": 0.0, "n=all": 9.0},
                            {"n=0": {"used_order": "off"}, "n=all": {"used_order": "off"}}, tmp_path,
                            tensorboard=str(tmp_path / "tb"))
    lines = {"MRR": [(0, 0.6), (1, 0.9)], "Recall@5": [(0, 0.7), (1, 0.95)],
             "best untrained baseline MRR": [(0, 0.1), (1, 0.1)]}
    assert_logged(tmp_path / "tb", "curve", lines, tmp_path / "curve.png")


def test_speed_logs_the_latency_lines_with_the_memories_as_steps(tmp_path):
    from sam_model.bench import speed

    rows = [_row("torch", 100_000, 1, 40.0, 20.0), _row("torch", 1_000, 1, 30.0, 15.0),
            _row("torch", 1_000, 32, 500.0, 300.0)]
    series = speed.plot(rows, tmp_path / "speed.png", tensorboard=str(tmp_path / "tb"))
    assert series["SAM, BERT on torch"] == [(1_000, 30.0), (100_000, 40.0)]
    assert_logged(tmp_path / "tb", "speed", series, tmp_path / "speed.png")


def test_memory_logs_the_bank_size_and_moving_mrr_per_variant(tmp_path):
    from sam_model.bench import memory

    results = {"store only": {"size_curve": [(1, 1), (21, 15), (40, 30)], "rr_curve": [1.0, 0.0, 0.5, 0.5]},
               "pruned": {"size_curve": [(1, 1), (21, 10), (40, 10)], "rr_curve": [0.0, 0.0, 1.0, 1.0]}}
    lines = memory.plot(results, tmp_path / "memory.png", window=2, tensorboard=str(tmp_path / "tb"))
    assert lines["units/pruned"] == [(1, 1), (21, 10), (40, 10)]
    assert lines["MRR moving mean/store only"] == [(0, 0.5), (1, 0.25), (2, 0.5)]  # windows of 2 decisions
    assert_logged(tmp_path / "tb", "memory", lines, tmp_path / "memory.png")


def _policy(curve: list[float], comparisons: int) -> dict:
    return {"accuracy_curve": [{"t": t, "accuracy": a} for t, a in enumerate(curve)], "comparisons": comparisons,
            "domain_at": ["Flights", "Flights", "Hotels"]}


def test_janus_plots_log_each_policy_along_the_stream(tmp_path):
    """Both Janus plots (head stream, bank stream: redrawn from a saved janus.json) log the first seed's curves,
    the same the PNG draws, accuracy in %."""
    from sam_model.bench.janus_report import plot_bank, plot_head

    per_seed = {"3": {"none": _policy([0.5, 0.4, 0.3], 0), "mmt": _policy([0.5, 0.6, 0.7], 2)},
                "4": {"none": _policy([0.1, 0.1, 0.1], 0), "mmt": _policy([0.9, 0.9, 0.9], 2)}}
    want = {"none": [(0, 50.0), (1, 40.0), (2, 30.0)], "mmt": [(0, 50.0), (1, 60.0), (2, 70.0)]}
    assert plot_head(per_seed, tmp_path / "head.png", str(tmp_path / "head")) == want
    assert_logged(tmp_path / "head", "janus_accuracy", want, tmp_path / "head.png")
    report = {"per_seed": per_seed, "faults": {"3": {"1": "prune"}}}
    assert plot_bank(report, tmp_path / "bank.png", str(tmp_path / "bank")) == want
    assert_logged(tmp_path / "bank", "janus_accuracy", want, tmp_path / "bank.png")


@pytest.mark.parametrize("module, argv", [
    ("adapt_curve", ["--data", "missing.jsonl"]),
    ("speed", ["--out", "{tmp}/out"]),
    ("memory", ["--out", "{tmp}/out"]),
    ("search", ["--out", "{tmp}/out"]),
    ("lodo", ["--out", "{tmp}/out", "--data-root", "{tmp}/no-data"]),
])
def test_a_tensorboard_folder_under_a_file_is_refused_before_the_bench_runs(module, argv, tmp_path, capsys):
    """A --tensorboard path that cannot be a folder fails in one line naming the flag, before any work (the log
    is written at the end, after hours of training for adapt_curve)."""
    import importlib

    blocker = tmp_path / "speed.md"
    blocker.write_text("a file")
    main = importlib.import_module(f"sam_model.bench.{module}").main
    with pytest.raises(SystemExit) as exc:
        main([a.format(tmp=tmp_path) for a in argv] + ["--tensorboard", str(blocker / "tb")])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "--tensorboard" in err and f"{blocker} is a file, not a folder" in err
    assert not (tmp_path / "out").exists()


def test_janus_refuses_a_tensorboard_folder_under_a_file(tmp_path):
    from sam_model.bench.janus_bank import BankBenchCfg
    from sam_model.bench.janus_config import parse_run
    from sam_model.io import SAMFileError

    (tmp_path / "f").write_text("x")
    with pytest.raises(SAMFileError, match="--tensorboard .*f is a file, not a folder"):
        parse_run(["--out", str(tmp_path / "out"), "--tensorboard", str(tmp_path / "f" / "tb")], BankBenchCfg)
    assert parse_run(["--out", str(tmp_path / "out"), "--tensorboard", str(tmp_path / "tb")],
                     BankBenchCfg)[2] == str(tmp_path / "tb")


def test_speed_main_logs_to_the_tensorboard_folder_it_is_given(tiny_bert_dir, tmp_path, monkeypatch):
    from serving import tiny_export

    from sam_model.bench import speed
    from sam_model.data.synthetic import write_synthetic
    from sam_model.evaluation.data import load_eval_data

    log = tmp_path / "demo.jsonl"
    write_synthetic(log, 2, seed=1)
    monkeypatch.setattr(speed, "load_data", lambda path: (load_eval_data(log, "episode"), "2 demo episodes"))
    export = tiny_export(tiny_bert_dir, tmp_path / "export")
    out = speed.main(["--retriever", str(export), "--sizes", "10", "--batches", "1", "--backends", "torch",
                      "--calls", "2", "--threads", "1", "--out", str(tmp_path / "out"),
                      "--tensorboard", str(tmp_path / "tb")])
    size = out["rows"][0]["size"]
    lines = {f"{m}, BERT on torch": [(size, out["rows"][0][k]["p50_ms"])]
             for m, k in (("SAM", "sam"), ("dense MiniLM", "dense"))}
    assert_logged(tmp_path / "tb", "speed", lines, tmp_path / "out" / "speed.png")


def test_search_draws_latency_and_recall_by_bank_size_and_logs_them(tmp_path):
    """bench.search printed only its table: search.png now draws batch-1 latency and recall@10 against the bank
    size per index kind (plain and state queries), the sweep as recall against QPS, and --tensorboard logs them."""
    from sam_model.bench import search

    out = search.main(["--sizes", "200,400", "--dim", "16", "--latent-dim", "4", "--clusters", "8", "--queries", "64",
                       "--b1-queries", "4", "--kinds", "flat,hnsw", "--sweep-ef", "8,16", "--threads", "1",
                       "--out", str(tmp_path / "out"), "--tensorboard", str(tmp_path / "tb")])
    rows = out["results"]
    assert (tmp_path / "out" / "search.png").read_bytes().startswith(PNG)
    lines = {}
    for kind in ("flat", "hnsw"):
        mine = [r for r in rows if r["kind"] == kind]
        for q in ("plain", "state"):
            lines[f"b1 p50 ms/{kind} {q}"] = [(r["size"], r[q]["b1_p50_ms"]) for r in mine]
            lines[f"recall@10/{kind} {q}"] = [(r["size"], r[q]["recall@10"]) for r in mine]
    assert [s for s, _ in lines["recall@10/flat plain"]] == [200, 400]
    assert all(v == 1.0 for _, v in lines["recall@10/flat state"])  # flat is exact: what the plot must show
    for size in (200, 400):
        mine = [s for s in out["sweeps"] if s["size"] == size]
        lines[f"sweep recall@10/hnsw {size} by ef_search"] = [(s["ef_search"], s["recall@10"]) for s in mine]
        lines[f"sweep QPS b64/hnsw {size} by ef_search"] = [(s["ef_search"], s["qps_b64"]) for s in mine]
    assert_logged(tmp_path / "tb", "search", lines, tmp_path / "out" / "search.png")


def _lodo_rows() -> list[dict]:
    def row(domain, variant, diff, best="bm25-state"):
        return {"domain": domain, "variant": variant, "label": variant, "decisions": 120, "mrr": 0.6,
                "recall@5": 0.6, "best_baseline": best, "best_baseline_mrr": 0.552, "difference": diff}

    return [row("coding", "base", [0.043, -0.003, 0.092]), row("coding", "fusion", [0.046, 0.002, 0.090]),
            row("airline", "base", [-0.102, -0.159, -0.046], "dense-state"),
            {"domain": "airline", "variant": "lexcv", "grid": {}}]  # cross-validated, not filled in yet: no figure


def test_lodo_draws_each_domains_difference_from_the_best_baseline_again_from_its_json(tmp_path):
    """The leave-one-domain-out table had no plot: lodo.png (redrawn here from a saved lodo.json) draws, per
    left-out domain, each variant's difference from the best untrained baseline with its 95 % interval."""
    from sam_model.bench import lodo

    (tmp_path / "lodo.json").write_text(json.dumps(_lodo_rows()))
    lines = lodo.plot(json.loads((tmp_path / "lodo.json").read_text()), tmp_path / "lodo.png", str(tmp_path / "tb"))
    want = {}
    for domain, variant, (m, lo, hi) in (("coding", "base", (0.043, -0.003, 0.092)),
                                         ("coding", "fusion", (0.046, 0.002, 0.090)),
                                         ("airline", "base", (-0.102, -0.159, -0.046))):
        want |= {f"{domain}/{variant}": [(0, m)], f"{domain}/{variant} 95% low": [(0, lo)],
                 f"{domain}/{variant} 95% high": [(0, hi)]}
    assert lines == want
    assert_logged(tmp_path / "tb", "lodo", want, tmp_path / "lodo.png")


def test_lodo_main_draws_its_table_and_logs_it(tmp_path, monkeypatch):
    from sam_model.bench import lodo

    root = tmp_path / "data"
    for d in lodo.DOMAINS.values():
        (root / d.train).parent.mkdir(parents=True, exist_ok=True)
        (root / d.train).touch()
    rows = _lodo_rows()[:3]
    monkeypatch.setattr(lodo, "train", lambda held, variant, root, args: Path(f"{held}-{variant}.ckpt"))
    monkeypatch.setattr(lodo, "evaluate_domain", lambda held, ckpts, root, args: [r for r in rows if r["domain"] == held])
    assert lodo.main(["--out", str(tmp_path / "out"), "--data-root", str(root), "--domains", "coding,airline",
                      "--variants", "base,fusion", "--tensorboard", str(tmp_path / "tb")]) == 0
    assert (tmp_path / "out" / "lodo.png").read_bytes().startswith(PNG)
    scalars, _ = logged(tmp_path / "tb")
    assert scalars["lodo/coding/fusion"] == [(0, pytest.approx(0.046))]
    assert set(scalars) == {f"lodo/{k}" for k in lodo.plot(rows, tmp_path / "again.png")}


def test_lodo_seeds_draws_the_differences_over_seeds_and_logs_them(tmp_path):
    from sam_model.bench import lodo_seeds

    runs = []
    for seed, shift in enumerate((0.0, 0.2, -0.1)):
        run = tmp_path / f"s{seed}"
        for domain, n in (("airline", 12), ("coding", 10)):
            (run / domain).mkdir(parents=True)
            lines = [json.dumps({"episode_id": f"e{i // 2}", "step": i, "methods": {
                "bm25": {"rr": 0.3, "recall@5": 0}, "plots": {"rr": 0.4 + 0.01 * i, "recall@5": 0},
                "fusion": {"rr": 0.35 + shift, "recall@5": 0}}}) for i in range(n)]
            (run / domain / "per_query.jsonl").write_text("\n".join(lines) + "\n")
        (run / "lodo.json").write_text(json.dumps([{"domain": d, "variant": "plots", "best_baseline": "bm25"}
                                                   for d in ("airline", "coding")]))
        runs.append(run)
    assert lodo_seeds.main([*map(str, runs), "--variant", "plots", "--reference", "fusion",
                            "--out", str(tmp_path / "out"), "--tensorboard", str(tmp_path / "tb")]) == 0
    summary = json.loads((tmp_path / "out" / "lodo_seeds.json").read_text())
    want = {}
    for group in ("airline", "coding", "average"):
        for model, key in (("plots", "variant - baseline"), ("fusion", "reference - baseline")):
            m, lo, hi = summary[group][key]
            want |= {f"{group}/{model}": [(0, m)], f"{group}/{model} 95% low": [(0, lo)],
                     f"{group}/{model} 95% high": [(0, hi)]}
    assert want["average/fusion 95% low"][0][1] < want["average/fusion"][0][1]  # a real interval, drawn as a bar
    assert_logged(tmp_path / "tb", "lodo_seeds", want, tmp_path / "out" / "lodo_seeds.png")
    assert lodo_seeds.plot(summary, tmp_path / "again.png", "plots", "fusion") == want  # again from the json


def test_lodo_seeds_tensorboard_needs_the_out_folder_its_png_is_drawn_into(tmp_path, capsys):
    from sam_model.bench import lodo_seeds

    (tmp_path / "s0").mkdir()
    (tmp_path / "s0" / "lodo.json").write_text("[]")
    with pytest.raises(SystemExit):
        lodo_seeds.main([str(tmp_path / "s0"), "--variant", "plots", "--reference", "fusion",
                         "--tensorboard", str(tmp_path / "tb")])
    assert "--tensorboard needs --out" in capsys.readouterr().err and not (tmp_path / "tb").exists()
