"""evaluate.py: every method and report key present and in range, real figures, clear errors.

A fake retriever (hashed bag of words over state text + observation) stands in for the
trained SAM retriever in the schema tests; the test at the bottom trains the demo retriever
(shared session fixture) and checks that it beats the content-only baselines.
"""

from __future__ import annotations

import gzip
import json
import math
import os
import shutil
import zlib
from pathlib import Path

import matplotlib.image as mpimg
import numpy as np
import pytest
from sklearn.metrics import ndcg_score

from sam_model.data.reader import read_episodes
from sam_model.data.sgd import iter_sgd_events
from sam_model.data.text import state_to_text
from sam_model.evaluation import evaluate, main
from sam_model.evaluation import ranking as ranking_mod
from sam_model.evaluation.data import build_eval_data
from sam_model.evaluation.metrics import per_query_metrics
from sam_model.evaluation.ranking import rank_vectors, tie_jitter
from sam_model.models.bert import default_bert_path, tiny_bert

SCHEMA_METRICS = ("mrr", "recall@1", "recall@5", "recall@10", "precision@5", "ndcg@10", "coverage@5",
                  "latency_ms_p50", "latency_ms_p99")
REPO = Path(__file__).resolve().parents[1]
ALL_BASELINES = ("recency", "bm25", "bm25-state", "dense", "dense-state")


class HashedBowRetriever:
    """Stand-in for SAMRetriever: L2-normalised hashed bag of words, same methods and shapes."""

    def __init__(self, dim: int = 256, use_state: bool = True):
        self.dim, self.use_state = dim, use_state

    def _vectors(self, texts) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for tok in text.lower().replace(",", " ").replace(":", " ").split():
                out[i, zlib.crc32(tok.encode()) % self.dim] += 1.0
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)

    def encode_queries(self, states, observations, batch_size=64, progress=False, steps=None, task_starts=None):
        # The state part is what the state asks for: the slots it needs, which memories say they "set".
        texts = [(" ".join(s.uncertainty_flags) + " " if self.use_state else "") + o
                 for s, o in zip(states, observations)]
        return self._vectors(texts)

    def encode_memories(self, memories, batch_size=64, progress=False):
        return self._vectors([m.text for m in memories])

    def encode_states(self, states, observations=None):
        return self._vectors([state_to_text(s) for s in states])

    def projection_weights(self, states, observations=None):
        return 1.0 / (1.0 + np.exp(-4.0 * self.encode_states(states)))


def _fixture_log(path: Path) -> None:
    """A small hand-made log, used when the synthetic demo generator is not available."""
    rng = np.random.default_rng(0)
    cities = ["Paris", "Rome", "Oslo", "Lima", "Kyoto", "Cairo"]
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        for e in range(10):
            city, other = rng.choice(cities, 2, replace=False)
            lines = [("user", f"I want to go to {city} on day {e + 3}", "clarify", {"destination": city}),
                     ("system", f"Have you ever been to {other}?", "clarify", {}),
                     ("user", "ok", "clarify", {}),
                     ("action", f"CALL FindFlights(to={city})", "book_flight", {}),
                     ("result", f"FindFlights: 3 results to {city}", "book_flight", {}),
                     ("user", f"budget is {100 * (e + 1)} dollars", "book_hotel", {"budget": 100 * (e + 1)}),
                     ("system", "noted", "book_hotel", {}),
                     ("user", "go ahead", "book_hotel", {})]
            for step, (kind, text, phase, c) in enumerate(lines):
                ev = {"episode_id": f"ep{e}", "step": step, "kind": kind, "text": text,
                      "state": {"phase": phase, "constraints": c,
                                "uncertainty_flags": ["destination"] if step == 3 else []}}
                if step == 3:
                    ev["useful_memory_steps"] = [0]
                if step == 7:
                    ev["useful_memory_steps"] = [0, 5]
                fh.write(json.dumps(ev) + "\n")


@pytest.fixture(scope="module")
def demo_log(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("data") / "demo.jsonl.gz"
    try:
        from sam_model.data.synthetic import write_synthetic
    except ImportError:
        _fixture_log(path)
    else:
        write_synthetic(path, n_episodes=6, seed=0)
    return path


@pytest.fixture(scope="module")
def tiny_bert_dir(tmp_path_factory) -> Path:
    """A 1-layer random BERT with MiniLM's tokenizer: the dense baselines' code path, fast on any CPU."""
    folder = tmp_path_factory.mktemp("tiny_bert")
    tiny_bert(vocab_size=30522, hidden=32, layers=1).save_pretrained(folder)
    src = Path(default_bert_path())
    for name in ("vocab.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        shutil.copy(src / name, folder / name)
    return folder


@pytest.fixture(scope="module")
def full_run(demo_log, tiny_bert_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    tb = tmp_path_factory.mktemp("tb")
    report = evaluate(demo_log, out, HashedBowRetriever(), baselines=ALL_BASELINES,
                      compare={"content-only": HashedBowRetriever(use_state=False)}, bert_path=str(tiny_bert_dir),
                      tensorboard=tb, latency_queries=10, tsne_points=500, quiet=True)
    return report, out, tb


def test_per_query_file_agrees_with_the_report(full_run):
    report, out, _ = full_run
    lines = [json.loads(x) for x in (out / "per_query.jsonl").read_text().splitlines()]
    assert len(lines) == report["n_queries"]
    for name, values in report["methods"].items():
        rr = [line["methods"][name]["rr"] for line in lines]
        assert abs(sum(rr) / len(rr) - values["mrr"]) < 1e-3, name
        r5 = [line["methods"][name]["recall@5"] for line in lines]
        assert abs(sum(r5) / len(r5) - values["recall@5"]) < 1e-3, name
    for line in lines:
        for m in line["methods"].values():
            assert 1 <= len(m["top"]) <= 5
            # a reciprocal rank of 1 means the first listed memory is one of the relevant ones
            assert (m["rr"] == 1.0) == (m["top"][0] in line["relevant"])


def test_subset_table_partitions_the_decisions(full_run, demo_log):
    from sam_model.bench.subsets import head_to_head, subset_table

    report, out, _ = full_run
    names, table, rows = subset_table(out, demo_log)
    better, worse, same = head_to_head(rows, "sam", "content-only")
    assert better + worse + same == report["n_queries"] and head_to_head(rows, "sam", "sam") == (0, 0, len(rows))
    assert names == list(report["methods"])
    n_all, mrr_all = table["all"]
    assert n_all == report["n_queries"]
    for name in names:
        assert abs(mrr_all[name] - report["methods"][name]["mrr"]) < 1e-3
    pairs = [("observation shares a word with a relevant memory", "observation shares no word with any relevant memory"),
             ("needs several memories", "needs one memory"),
             ("3+ earlier memories set slots", "0-2 earlier memories set slots")]
    for a, b in pairs:  # each pair splits all decisions, and their weighted means give back the total
        na, ma = table.get(a, [0, {}])
        nb, mb = table.get(b, [0, {}])
        assert na + nb == n_all
        for name in names:
            total = na * ma.get(name, 0.0) + nb * mb.get(name, 0.0)
            assert abs(total / n_all - mrr_all[name]) < 1e-9


def test_every_method_and_schema_key_present_and_in_range(full_run):
    report, out, _ = full_run
    on_disk = json.loads((out / "report.json").read_text())
    assert on_disk == json.loads(json.dumps(report))
    assert isinstance(on_disk["data"], str) and on_disk["scope"] == "episode"
    assert on_disk["n_queries"] > 0
    assert set(on_disk) >= {"data", "n_queries", "scope", "methods", "per_phase", "diagnostics"}
    assert list(on_disk["methods"]) == ["sam", *ALL_BASELINES, "content-only"]
    for name, values in on_disk["methods"].items():
        for key in SCHEMA_METRICS:
            assert key in values, (name, key)
            v = values[key]
            assert isinstance(v, float) and math.isfinite(v), (name, key, v)
            if key.startswith("latency"):
                assert v >= 0
            else:
                assert 0.0 <= v <= 1.0, (name, key, v)
        assert values["recall@1"] <= values["recall@5"] <= values["recall@10"]
        assert values["coverage@5"] <= values["recall@5"]
        assert values["latency_ms_p50"] <= values["latency_ms_p99"]


def test_state_aware_fake_beats_recency_and_content_only(full_run):
    # The fake reads the state's "needs" slots, which name the memories that set them.
    methods = full_run[0]["methods"]
    assert methods["sam"]["mrr"] > methods["recency"]["mrr"]
    assert methods["sam"]["mrr"] > methods["content-only"]["mrr"]


def test_pngs_written_and_real_images(full_run):
    report, out, _ = full_run
    assert set(report["diagnostics"]["figures"]) == {"tsne_states", "projection_by_phase"}
    for name in ("tsne_states.png", "projection_by_phase.png"):
        path = out / name
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert path.stat().st_size > 1024
        img = mpimg.imread(path)
        assert img.ndim == 3 and img.shape[0] > 100 and img.shape[1] > 100
        assert img.std() > 0.01  # not a blank canvas


def test_diagnostics_and_per_phase(full_run):
    report = full_run[0]
    diag = report["diagnostics"]
    dist = diag["state_distinctiveness"]
    assert dist["n_phases"] >= 2 and dist["inter_over_intra"] > 0 and -1 <= dist["silhouette"] <= 1
    assert diag["projection_weights"]["dim"] == 256
    util = diag["memory_utilisation"]
    assert set(util) == set(report["methods"])
    for u in util.values():
        assert 0 <= u["never_retrieved_share"] <= 1
        for table in (u["by_kind"], u["by_age"]):
            for which in ("retrieved", "candidates", "relevant"):
                assert sum(v[which] for v in table.values()) == pytest.approx(1.0)
    phases = {ex_phase or "(none)" for ex_phase in report["per_phase"]}
    assert len(phases) >= 2
    assert sum(p["n_queries"] for p in report["per_phase"].values()) == report["n_queries"]
    for entry in report["per_phase"].values():
        assert set(entry["methods"]) == set(report["methods"])
        for m in entry["methods"].values():
            assert 0 <= m["mrr"] <= 1 and 0 <= m["recall@5"] <= 1


def test_markdown_has_a_row_per_method_and_tensorboard_events(full_run):
    report, out, tb = full_run
    md = (out / "report.md").read_text()
    for name in report["methods"]:
        assert any(line.startswith(f"| {name} |") for line in md.splitlines()), name
    assert "tsne_states.png" in md
    assert list(tb.rglob("events.out.tfevents.*"))
    assert list(tb.rglob("projector_config.pbtxt"))


def test_metrics_match_a_brute_force_ranking(demo_log):
    """Global scope (chunked, masked search) gives the same top-k as sorting every candidate."""
    data = build_eval_data(str(demo_log), read_episodes(demo_log), "global")
    fake = HashedBowRetriever()
    q = fake.encode_queries([e.state for e in data.examples], [e.observation for e in data.examples])
    m = fake.encode_memories(data.memories)
    jitter = tie_jitter(len(m), 0)
    old = ranking_mod.QUERY_BLOCK, ranking_mod.MEMORY_CHUNK
    ranking_mod.QUERY_BLOCK, ranking_mod.MEMORY_CHUNK = 7, 50  # force many blocks and chunks
    try:
        got = rank_vectors(q, m, data.examples, "global", 50, jitter)
    finally:
        ranking_mod.QUERY_BLOCK, ranking_mod.MEMORY_CHUNK = old
    where = {mem.id: j for j, mem in enumerate(data.memories)}
    rel = [np.array(sorted(where[r] for r in ex.relevant_ids)) for ex in data.examples]
    pq = per_query_metrics(got, rel, [1, 5, 10], depth=50)
    for i, ex in enumerate(data.examples):
        s = m[: ex.cutoff].astype(np.float64) @ q[i].astype(np.float64) + jitter[: ex.cutoff]
        assert got[i].tolist() == np.argsort(-s, kind="stable")[:50].tolist()
        truth = np.isin(np.arange(ex.cutoff), rel[i]).astype(float)
        assert pq["ndcg@10"][i] == pytest.approx(ndcg_score(truth[None], s[None], k=10))
        ranks = [int(np.where(got[i] == r)[0][0]) + 1 for r in rel[i] if r in got[i]]
        assert pq["mrr"][i] == pytest.approx(1.0 / min(ranks) if ranks else 0.0)
        assert pq["recall@5"][i] == pytest.approx(sum(r <= 5 for r in ranks) / len(rel[i]))


def test_cli_global_scope_subset(demo_log, tmp_path, monkeypatch, capsys):
    from sam_model.retriever import SAMRetriever

    monkeypatch.setattr(SAMRetriever, "load", classmethod(lambda cls, path, device=None: HashedBowRetriever()))
    out = tmp_path / "r"
    rc = main(["--retriever", "x", "--data", str(demo_log), "--out", str(out), "--scope", "global",
               "--baselines", "recency,bm25-state", "--k", "3", "--max-queries", "15", "--latency-queries", "5"])
    assert rc == 0
    report = json.loads((out / "report.json").read_text())
    assert report["scope"] == "global" and report["n_queries"] == 15
    assert list(report["methods"]) == ["sam", "recency", "bm25-state"]
    assert {"recall@3", "precision@3", "coverage@3", "recall@1", "recall@10"} <= set(report["methods"]["sam"])
    printed = capsys.readouterr().out
    assert "bm25-state" in printed  # the table is printed
    wrote = printed.strip().splitlines()[-1]  # the last line names every file written, the plots the README promises
    figures = report["diagnostics"]["figures"].values()
    assert "projection_by_phase.png" in figures and wrote.startswith(f"wrote {out / 'report.json'}")
    assert all(str(out / name) in wrote for name in ("report.md", "per_query.jsonl", *figures))


def test_errors_name_the_missing_or_bad_file(demo_log, tmp_path, capsys):
    missing = tmp_path / "nope.jsonl"
    assert main(["--retriever", str(tmp_path), "--data", str(missing), "--out", str(tmp_path / "o")]) == 1
    assert str(missing) in capsys.readouterr().err
    no_ret = tmp_path / "no_export"
    assert main(["--retriever", str(no_ret), "--data", str(demo_log), "--out", str(tmp_path / "o")]) == 1
    err = capsys.readouterr().err
    assert str(no_ret) in err and "export" in err
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"episode_id": "a", "step": 0, "kind": "user", "text": "hi"}\n{not json\n')
    assert main(["--retriever", str(tmp_path), "--data", str(bad), "--out", str(tmp_path / "o")]) == 1
    assert f"{bad}:2" in capsys.readouterr().err
    no_labels = tmp_path / "nolabels.jsonl"
    no_labels.write_text('{"episode_id": "a", "step": 0, "kind": "user", "text": "hi"}\n')
    assert main(["--retriever", str(tmp_path), "--data", str(no_labels), "--out", str(tmp_path / "o")]) == 1
    assert "no decision points" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--retriever", "x", "--data", str(demo_log), "--out", "o", "--baselines", "bm99"])


@pytest.mark.slow
def test_dense_baselines_with_real_minilm(tmp_path):
    log = tmp_path / "small.jsonl.gz"
    _fixture_log(log)
    report = evaluate(log, tmp_path / "r", None, baselines=["dense", "dense-state"], latency_queries=3, quiet=True)
    for name in ("dense", "dense-state"):
        assert all(0 <= v <= 1 for k, v in report["methods"][name].items() if not k.startswith("latency"))
    assert report["methods"]["dense"] != report["methods"]["dense-state"]


def test_sgd_split_folder_as_data(tmp_path, shared_dir):
    sgd_dev = shared_dir / "data" / "sgd" / "dev"
    if not sgd_dev.is_dir():
        pytest.skip(f"{sgd_dev} not present (the shared SGD data lives in ../shared/data/sgd)")
    first = sorted(sgd_dev.glob("dialogues_*.json*"))[0]
    opener = gzip.open if first.suffix == ".gz" else open
    with opener(first, "rt", encoding="utf-8") as fh:
        dialogues = json.load(fh)[:6]
    split = tmp_path / "dev"
    split.mkdir()
    (split / "dialogues_001.json").write_text(json.dumps(dialogues))
    report = evaluate(split, tmp_path / "r", HashedBowRetriever(), baselines=["recency", "bm25"],
                      latency_queries=5, quiet=True)
    n_points = sum(1 for e in iter_sgd_events(split) if e.get("useful_memory_steps"))
    assert report["n_queries"] == n_points > 0
    assert set(report["methods"]) == {"sam", "recency", "bm25"}


# --- hook for the lead: the trained demo retriever ------------------------------------------------------

@pytest.fixture
def trained_demo_retriever(request) -> Path:
    """The retriever trained on demo data in this session (conftest.trained_demo_export: configs/demo.yaml,
    a few epochs on a small synthetic log). $SAM_DEMO_RETRIEVER points the test at another export or .ckpt."""
    override = os.environ.get("SAM_DEMO_RETRIEVER")
    return Path(override) if override else request.getfixturevalue("trained_demo_export")


def test_trained_demo_retriever_beats_content_only_baselines(trained_demo_retriever, tmp_path):
    """On held-out demo episodes (another seed than training), SAM beats observation-only search."""
    from sam_model.data.synthetic import write_synthetic

    heldout = tmp_path / "heldout.jsonl"
    write_synthetic(heldout, n_episodes=8, seed=1)
    from sam_model.retriever import SAMRetriever

    retriever = SAMRetriever.load(trained_demo_retriever)
    report = evaluate(heldout, tmp_path / "r", retriever, baselines=["bm25", "dense"], latency_queries=5,
                      tsne_points=200, quiet=True)
    m = report["methods"]
    for baseline in ("bm25", "dense"):
        assert m["sam"]["mrr"] > m[baseline]["mrr"], baseline
        assert m["sam"]["recall@5"] > m[baseline]["recall@5"], baseline


def test_benchmark_searches_the_retrievers_store(demo_log):
    """With slot match / provenance on, every SAM ranking is the store's search over the memories written before
    the decision (as a deployment runs it), and the index-only ranking the same search without the re-rank."""
    from sam_model.evaluation.methods import retriever_methods
    from sam_model.store import MemoryStore
    from sam_model.storeconfig import StoreConfig

    class Reranking(HashedBowRetriever):
        def __init__(self):
            super().__init__()
            self.store = MemoryStore(self, StoreConfig(slot_match=0.3, provenance=True, source_kinds=["user"]))

    data = build_eval_data(str(demo_log), read_episodes(demo_log), "episode")
    r, jitter = Reranking(), tie_jitter(len(data.memories), 0)
    sam, index_only = retriever_methods("sam", r, index_only="sam-index-only")
    got, base = sam.rank(data, "episode", 20, jitter), index_only.rank(data, "episode", 20, jitter)
    store = MemoryStore(r, r.store.config)
    pos = {m.id: i for i, m in enumerate(data.memories)}
    written = 0
    for i, ex in enumerate(data.examples):
        store.add(data.memories[written : ex.cutoff])
        written = ex.cutoff
        for rerank, ranking in ((True, got), (False, base)):
            hits = store.search(ex.state, ex.observation, 20, episode_id=ex.episode_id, step=ex.step, rerank=rerank)
            assert ranking[i].tolist() == [pos[h.id] for h in hits]
            assert set(ranking[i].tolist()) <= set(ex.candidate_range("episode"))  # only earlier memories
    assert any(g.tolist() != b.tolist() for g, b in zip(got, base))  # the re-rank did change rankings


def test_metric_and_cli_edge_cases_a_review_found(demo_log, tmp_path, monkeypatch, capsys):
    """nDCG credited relevant memories the method never returned (a short ranking: 0.43 for nothing relevant);
    one decision made torchmetrics return scalars and evaluate.py a traceback; --compare sam-index-only replaced
    the re-rank ablation's row; --split on an agent log was ignored yet reported as applied."""
    from sam_model.retriever import SAMRetriever

    pq = per_query_metrics([np.array([0, 1, 2]), np.array([], np.int64)], [np.array([99]), np.array([3])],
                           [1, 5, 10], 100)
    assert pq["ndcg@10"].tolist() == [0.0, 0.0] and pq["mrr"].tolist() == [0.0, 0.0]
    one = per_query_metrics([np.array([4, 2])], [np.array([2])], [1, 5, 10], 100)
    assert one["mrr"].shape == (1,) and one["mrr"][0] == 0.5
    assert one["ndcg@10"][0] == pytest.approx(1 / math.log2(3))
    monkeypatch.setattr(SAMRetriever, "load", classmethod(lambda cls, path, device=None: HashedBowRetriever()))
    base = ["--retriever", "x", "--data", str(demo_log), "--baselines", "recency", "--latency-queries", "1"]
    assert main([*base, "--out", str(tmp_path / "one"), "--max-queries", "1"]) == 0
    assert json.loads((tmp_path / "one" / "report.json").read_text())["n_queries"] == 1
    with pytest.raises(SystemExit):
        main([*base, "--out", str(tmp_path / "c"), "--compare", "sam-index-only=x"])
    assert "is taken" in capsys.readouterr().err
    assert main([*base, "--out", str(tmp_path / "s"), "--split", "test"]) == 1
    assert "is not a tool-call transcript file" in capsys.readouterr().err


def test_a_chunked_ranking_is_deepened_to_the_events_it_must_hold(tmp_path):
    """Ten long tool results (~110 chunks each): the chunk search was cut at depth x 8 chunks, which folded to 5-6
    events, and a label at event rank 8 counted as never found (recency MRR 0 chunked, 0.125 whole)."""
    import random

    from sam_model.data.chunks import Chunking
    from sam_model.evaluation.run import evaluate as run_evaluate

    st = {"phase": "p", "subgoal_stack": [], "constraints": {}, "uncertainty_flags": [], "last_action_result": ""}
    rnd = random.Random(0)
    lines = [{"episode_id": "E", "step": 0, "kind": "user", "text": "my booking code is QX7Z", "state": st}]
    lines += [{"episode_id": "E", "step": s, "kind": "result", "state": st,
               "text": " ".join(rnd.choice(["alpha", "beta", "gamma", "delta"]) for _ in range(3000))}
              for s in range(1, 11)]
    lines.append({"episode_id": "E", "step": 11, "kind": "user", "text": "use my booking code", "state": st,
                  "useful_memory_steps": [3]})
    log = tmp_path / "long.jsonl"
    log.write_text("".join(json.dumps(x) + "\n" for x in lines))
    whole = run_evaluate(log, tmp_path / "whole", None, baselines=["recency"], latency_queries=1, quiet=True)
    chunked = run_evaluate(log, tmp_path / "chunked", None, baselines=["recency"], chunking=Chunking(),
                           latency_queries=1, quiet=True)
    assert chunked["chunking"]["chunks"] > chunked["chunking"]["search_depth"]  # the cut would bite
    assert chunked["methods"]["recency"]["mrr"] == pytest.approx(whole["methods"]["recency"]["mrr"]) == 0.125


def test_the_store_replay_keys_its_rankings_by_the_decisions_and_encodes_memories_once(demo_log):
    """A deeper search of a subset (evaluation.run.deepen) built a new EvalData each time: keyed by its id, a freed
    subset's id was reused and a method got another subset's rankings; and every round encoded all memories again
    (found by review)."""
    import dataclasses

    from sam_model.evaluation.methods import StoreReplay
    from sam_model.memory import HashingEncoder
    from sam_model.storeconfig import StoreConfig

    data = build_eval_data(str(demo_log), read_episodes(demo_log), "episode")
    enc = HashingEncoder(32)
    calls = []
    encode = enc.encode_memories
    enc.encode_memories = lambda mems, *a, **k: calls.append(len(mems)) or encode(mems, *a, **k)
    replay = StoreReplay(enc, StoreConfig(provenance=False))
    full = replay.rankings(data, "episode", 20)[False]
    for i in (0, 3, 5):
        sub = dataclasses.replace(data, examples=[data.examples[i]])  # freed after each round, as in deepen
        got = replay.rankings(sub, "episode", 40)[False][0]
        assert got[:len(full[i])].tolist() == full[i].tolist()[:len(got)]  # its own decision's ranking
        assert {data.memories[j].episode_id for j in got} == {data.examples[i].episode_id}
    assert calls == [len(data.memories)]


def test_global_scope_refuses_a_log_whose_episodes_interleave(tmp_path):
    """Global candidates follow the episodes' order: in A0, B0, B1, A1, A2 the decision B1 saw A1 and A2, written
    after it (found by review). The episode scope is unaffected."""
    from sam_model.evaluation.data import load_eval_data
    from sam_model.io import SAMFileError

    st = {"phase": "p", "subgoal_stack": [], "constraints": {}, "uncertainty_flags": [], "last_action_result": ""}

    def ev(e, s, text, lab=None):
        return {"episode_id": e, "step": s, "kind": "user", "text": text, "state": st,
                **({"useful_memory_steps": lab} if lab else {})}

    log = tmp_path / "inter.jsonl"
    log.write_text("".join(json.dumps(x) + "\n" for x in [ev("A", 0, "a zero"), ev("B", 0, "b zero"),
                                                            ev("B", 1, "b one", [0]), ev("A", 1, "a one"),
                                                            ev("A", 2, "a two", [1])]))
    with pytest.raises(SAMFileError, match=r"inter\.jsonl:2: episode 'B' begins before episode 'A' ends"):
        load_eval_data(log, "global")
    assert len(load_eval_data(log, "episode").examples) == 2


@pytest.mark.parametrize("flag", ["--out", "--tensorboard"])
def test_an_output_folder_under_a_file_fails_before_the_evaluation(demo_log, tmp_path, monkeypatch, capsys, flag):
    """``--out report.md/eval`` or ``--tensorboard report.md/tb`` (a folder under a file) passed the early check,
    which looked only at the path itself: the evaluation ran in full, then --out failed writing and --tensorboard
    said only "[Errno 20] Not a directory". Both now fail in one line naming the flag and the file, before any
    log is read."""
    import sam_model.evaluation.run as run_mod

    def no_evaluation(*args, **kwargs):
        raise AssertionError("the evaluation ran before the output folders were checked")

    monkeypatch.setattr(run_mod, "load_eval_data", no_evaluation)
    blocker = tmp_path / "report.md"
    blocker.write_text("a file, not a folder")
    folders = {"--out": str(tmp_path / "out"), "--tensorboard": None}
    folders[flag] = str(blocker / "sub")
    args = ["--retriever", "x", "--data", str(demo_log), "--out", folders["--out"]]
    args += ["--tensorboard", folders["--tensorboard"]] if folders["--tensorboard"] else []
    with pytest.raises(SystemExit):
        main(args)
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert flag in err and str(blocker) in err and "not a folder" in err
    assert blocker.read_text() == "a file, not a folder"


def test_compare_takes_several_retrievers_after_one_flag(demo_log, tmp_path, monkeypatch):
    """The README's usage line reads ``[--compare NAME=DIR ...]``, but --compare took one value per flag:
    ``--compare a=DIR b=DIR`` stopped with "unrecognized arguments: b=DIR". Both spellings now report every name."""
    from sam_model.retriever import SAMRetriever

    monkeypatch.setattr(SAMRetriever, "load", classmethod(lambda cls, path, device=None: HashedBowRetriever()))
    base = ["--retriever", "x", "--data", str(demo_log), "--baselines", "none", "--latency-queries", "1",
            "--max-queries", "3", "--tsne-points", "3"]
    for out, compare in (("one", ["--compare", "a=x", "b=y"]), ("two", ["--compare", "a=x", "--compare", "b=y"])):
        assert main([*base, "--out", str(tmp_path / out), *compare]) == 0
        methods = json.loads((tmp_path / out / "report.json").read_text())["methods"]
        assert {"a", "b"} <= set(methods), methods.keys()


@pytest.mark.parametrize("option, says", [(["--depth", "20000"], "--depth"), (["--k", "1,20000"], "--k"),
                                          (["--seed", "-1"], "--seed")])
def test_out_of_range_numbers_fail_before_the_evaluation(demo_log, tmp_path, monkeypatch, capsys, option, says):
    """--depth or --k above the largest search (10,000), or a negative --seed, passed the command line: the run
    loaded the model, encoded the memories, then stopped with "k must be an integer from 1 to 10000" or "expected
    non-negative integer", naming no flag. They now fail at once, in one line that names the flag."""
    import sam_model.evaluation.run as run_mod

    def no_evaluation(*args, **kwargs):
        raise AssertionError("the evaluation ran with an out-of-range option")

    monkeypatch.setattr(run_mod, "load_eval_data", no_evaluation)
    with pytest.raises(SystemExit):
        main(["--retriever", "x", "--data", str(demo_log), "--out", str(tmp_path / "out"), *option])
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert says in err and option[1] in err
    assert not (tmp_path / "out").exists()


def test_data_given_twice_is_refused(demo_log, tmp_path, monkeypatch, capsys):
    """``sam-eval --data CLAUDE_FOLDER --data CODEX_FOLDER`` (a user with two agents' sessions, as data.train and
    --choose-on take several) measured the second alone and printed its table as the run's: argparse keeps the
    last of a repeated option. It is refused in one line naming both, before anything loads."""
    import sam_model.evaluation.run as run_mod

    def no_evaluation(*args, **kwargs):
        raise AssertionError("the evaluation ran with one of two logs")

    monkeypatch.setattr(run_mod, "read_log", no_evaluation)
    other = tmp_path / "other.jsonl"
    with pytest.raises(SystemExit):
        main(["--retriever", "x", "--data", str(demo_log), "--data", str(other), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "--data given twice" in err and str(demo_log) in err and str(other) in err
    assert not (tmp_path / "out").exists()


def test_data_given_twice_advises_what_works_for_files(tmp_path, capsys):
    """Two transcript files (a walkthrough's ``--data openai.jsonl --data anthropic.jsonl``) were told to "give a
    folder holding both", and that folder was then refused: a folder of transcript files is no layout. Two files
    are told to run once per log or join the logs of one format; two folders keep the folder advice."""
    files = [tmp_path / "openai.jsonl", tmp_path / "anthropic.jsonl"]
    for f in files:
        f.write_text("{}\n")
    with pytest.raises(SystemExit):
        main(["--retriever", "x", "--data", str(files[0]), "--data", str(files[1]), "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "--data given twice" in err and "folder" not in err, err
    assert "run once per log" in err and f"cat {files[0]} {files[1]} >" in err, err
    assert "conversation id the two logs share is refused" in err, err  # the joined file's one way to fail
    folders = [tmp_path / "claude", tmp_path / "codex"]
    for f in folders:
        f.mkdir()
    with pytest.raises(SystemExit):
        main(["--retriever", "x", "--data", str(folders[0]), "--data", str(folders[1]), "--out", str(tmp_path / "o")])
    assert "give a folder holding both" in capsys.readouterr().err


def test_few_decisions_are_warned_of(demo_log, tmp_path, monkeypatch, capsys):
    """A walkthrough's held-out split of 24 hand-written conversations measured 2 decisions and printed every MRR
    as '1.000 [1.000, 1.000]' with 'no difference' between models, in a table that looked as certain as one over
    the airline tasks. sam-eval now says in one line how little so few decisions measure, as fit and --choose-on do
    (sam_model.training.split_report.MIN_VAL_DECISIONS)."""
    from sam_model.retriever import SAMRetriever
    from sam_model.training import split_report

    monkeypatch.setattr(SAMRetriever, "load", classmethod(lambda cls, path, device=None: HashedBowRetriever()))
    base = ["--retriever", "x", "--data", str(demo_log), "--baselines", "recency", "--latency-queries", "1",
            "--max-queries", "15"]
    assert main([*base, "--out", str(tmp_path / "few")]) == 0
    warned = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("warning:")]
    assert len(warned) == 1, warned
    conversations = len({json.loads(x)["episode_id"]
                         for x in (tmp_path / "few" / "per_query.jsonl").read_text().splitlines()})
    assert f"only 15 decision points ({conversations} conversations)" in warned[0], warned
    assert "moves by 0.033" in warned[0] and "50 or more decision points" in warned[0], warned
    monkeypatch.setattr(split_report, "MIN_VAL_DECISIONS", 15)
    assert main([*base, "--out", str(tmp_path / "enough")]) == 0
    assert "warning:" not in capsys.readouterr().err


def _chats(path: Path, n: int = 12) -> Path:
    """``n`` OpenAI chat conversations, each a user's order id and a tool call taking it: a transcript file, which
    alone has the fixed train/test split."""
    lines = []
    for i in range(n):
        call = {"id": f"c{i}", "type": "function",
                "function": {"name": "get_order", "arguments": json.dumps({"order_id": f"ORD{i:04d}X"})}}
        lines.append(json.dumps({"id": f"chat-{i}", "messages": [
            {"role": "user", "content": f"Hi, my order ORD{i:04d}X never came."},
            {"role": "assistant", "content": "Let me look."},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"c{i}", "content": json.dumps({"status": "lost"})}]}))
    path.write_text("\n".join(lines) + "\n")
    return path


def _trained_on(path: str, split: str) -> HashedBowRetriever:
    """A retriever whose training record names ``path`` as its training file, read with ``split``."""
    from types import SimpleNamespace

    r = HashedBowRetriever()
    r.net = SimpleNamespace(training_info={"data": {"sources": [{"path": path}], "transcript_split": split}},
                            modules=lambda: [])
    return r


@pytest.mark.parametrize(("fit_split", "eval_split", "warned"),
                         [("all", "test", True), ("all", "all", True), ("train", "all", True), ("train", "test", False)])
def test_measuring_on_the_file_it_trained_on_is_warned(tmp_path, monkeypatch, capsys, fit_split, eval_split, warned):
    """The walkthrough's fit of adapt.yaml read the whole log, and sam-eval --split test of that log printed
    held-out-looking figures of conversations it trained on, silently. A training file of the --data file's name is
    now warned in one line, except the README's held-out way (the fit's train split, measured on the test split)."""
    from sam_model.retriever import SAMRetriever

    chats = _chats(tmp_path / "chats.jsonl")
    fit_path = f"some/folder/{chats.name}"  # as the fit was given it, relative to where it ran
    monkeypatch.setattr(SAMRetriever, "load", classmethod(lambda cls, path, device=None: _trained_on(fit_path,
                                                                                                     fit_split)))
    argv = ["--retriever", "x", "--data", str(chats), "--out", str(tmp_path / "r"), "--baselines", "none",
            "--split", eval_split, "--latency-queries", "1", "--compare", "other=y"]
    assert main(argv) == 0
    said = [line for line in capsys.readouterr().err.splitlines() if line.startswith("warning: ")
            and "trained on" in line]
    assert len(said) == (2 if warned else 0)  # the retriever and its --compare model, each named
    if warned:
        assert said[0].startswith(f"warning: sam trained on {fit_path} ") and said[1].startswith("warning: other ")
        assert f"if that is {chats}," in said[0] and "--split test" in said[0]
    monkeypatch.setattr(SAMRetriever, "load", classmethod(lambda cls, path, device=None: _trained_on("b.jsonl", "all")))
    assert main([*argv[:-2], "--out", str(tmp_path / "r2")]) == 0  # another file: nothing said
    assert "trained on" not in capsys.readouterr().err
