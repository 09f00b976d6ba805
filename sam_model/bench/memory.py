"""Memory benchmark: the run-time bank over long agent lives, with and without each mechanism.

An agent *life* chains synthetic episodes (``sam_model.data.synthetic``) into one episode
of at least ``--events`` events with renumbered steps (each event keeps its ``meta.source_episode``, so the
current task is known, as in sam_model.data.lives), so one bank lives through dozens of tasks. Lives are drawn
with synthetic seeds from 10,000 up, so a retriever trained on the demo data (seed 0) is never tested on its
training episodes. Every event goes through the bank's state-driven rules; at each decision point the bank is
searched *as it is at that moment*, with the query's step and its task's start (what a model with learned time
features, ``SAMConfig.time_features``, was trained on), and scored against the labels:

- ``mrr``: 1 / rank of the first retrieved unit that stands for a relevant memory (MRR@k);
- ``recall@5``: share of the relevant memories stood for in the top 5;
- ``coverage@5``: share of decision points whose relevant memories are *all* in the top 5.

A unit stands for a memory if it is that memory or absorbed its key facts when it was pruned
(``MemoryUnit.sources``), so forgetting the words but keeping the facts is not a miss.
After each decision, the retrieved units whose values appear in the agent's next action are
reinforced (the run-time signal of use; no labels involved).

Variants: the store's search alone (the bank's priors off: exactly what evaluate.py ranks, which the benchmark
checks decision by decision), then the bank's priors on top — importance decay, finished-phase suppression,
both, and corrected units ranked down — measured against the learned time features rather than added blindly;
graph expansion; pruning at ``--capacity`` of the life's events; a working tier + long-term IVF tier. Writes
``DIR/memory.json`` and ``DIR/memory.png`` (the bank's size and the moving MRR over the first life, per variant)
and prints a markdown table; ``--tensorboard LOGDIR`` logs the plot's lines as scalars and the PNG as an image.

    python -m sam_model.bench.memory --out runs/bench-memory [--retriever checkpoints/demo_time/export]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

import faiss
import numpy as np

from sam_model import tensorboard_log
from sam_model.data.examples import MemoryRecorder
from sam_model.data.lives import make_lives, task_starts
from sam_model.data.schema import Event, parse_event
from sam_model.data.synthetic import generate_episodes
from sam_model.io import atomic_write_text
from sam_model.memory.bank import MemoryBank
from sam_model.memory.config import MemoryConfig
from sam_model.memory.encoders import ContentEncoder
from sam_model.memory.rules import BankRules
from sam_model.memory.unit import values_in
from sam_model.progress import progress_bar
from sam_model.retriever import SAMRetriever
from sam_model.store import MemoryStore, encoder_of, store_config_of
from sam_model.storeconfig import StoreConfig

SEED_OFFSET = 10_000  # synthetic seeds of the lives start here: never the demo's training data (seed 0)


def make_life(index: int, min_events: int, seed: int) -> list[Event]:
    """Synthetic episodes chained into one life of >= ``min_events`` events (sam_model.data.lives.make_lives)."""
    episodes: list[list[dict]] = []
    chunk = 0
    while sum(map(len, episodes)) < min_events:
        for ep in generate_episodes(8, seed=SEED_OFFSET + seed * 1000 + index * 100 + chunk):
            episodes.append(ep)
            if sum(map(len, episodes)) >= min_events:
                break
        chunk += 1
    raw = make_lives((d for ep in episodes for d in ep), len(episodes))
    return [parse_event(d, f"<life {index}>", n + 1) for n, d in enumerate(raw)]


def variants(capacity: int, half_life: float, working: int, nlist: int = 8,
             nprobe: int = 2) -> dict[str, MemoryConfig]:
    """The mechanisms switched on and off; everything else (linking, corrections) is shared.

    ``store only`` is the bank with its priors off: the store's ranking, what evaluate.py measures.
    ``decay`` turns on importance (exponential decay with ``half_life``, plus use and facts) in the ranking;
    ``phase suppression`` lowers a finished phase's details; ``corrected down`` ranks units whose facts were all
    corrected lower; ``expand`` adds graph expansion. The pruned and tiered rows keep all priors on, as the
    bank's rules for forgetting read importance; the IVF tier gets ``nlist`` lists so it trains within a life.
    """
    store = MemoryConfig(half_life=0.0, suppress=1.0, importance_weight=0.0, superseded_factor=1.0, expand=False)
    decay = dataclasses.replace(store, half_life=half_life, importance_weight=0.6)
    phase = dataclasses.replace(store, suppress=0.5, importance_weight=0.6)
    both = dataclasses.replace(decay, suppress=0.5)
    every = dataclasses.replace(both, superseded_factor=0.5)
    pruned = dataclasses.replace(every, capacity=capacity)
    tiers = {"working_size": working, "ivf_nlist": nlist, "ivf_nprobe": nprobe}
    return {
        "store only (= evaluate.py)": store,
        "+ decay": decay,
        "+ phase suppression": phase,
        "+ decay + phase suppression": both,
        "+ decay + suppression + corrected down": every,
        "store only + expansion": dataclasses.replace(store, expand=True),
        "all priors + expansion (the old default)": dataclasses.replace(every, expand=True),
        "all priors + pruning": pruned,
        "all priors + pruning + expansion": dataclasses.replace(pruned, expand=True),
        "all priors + expansion + tiers": dataclasses.replace(every, expand=True, **tiers),
    }


def run_life(events: list[Event], mem_vecs: np.ndarray, query_vecs: dict[int, np.ndarray], config: MemoryConfig,
             store_config: StoreConfig, encode, k: int) -> dict:
    """Stream one life through a fresh bank; score every decision point as it comes."""
    bank = MemoryBank(mem_vecs.shape[1], config, store_config)
    rules = BankRules(bank, encode)
    rr, rec5, cov5, sizes, query_s, tier_recall, ranked = [], [], [], [], [], [], []
    for i, e in enumerate(events):
        if e.is_decision_point and len(bank):
            t = time.perf_counter()
            hits = bank.search(query_vecs[i], k, needs=e.state.uncertainty_flags)
            query_s.append(time.perf_counter() - t)
            ranked.append([h.id for h in hits])
            if bank.tiers.tiered and bank.tiers.longterm.trained:  # how much the IVF tier misses
                tier_recall.append(tier_recall_at(bank, query_vecs[i], 10))
            relevant = {f"{e.episode_id}#{s}" for s in e.useful_memory_steps}
            covered = [bank.unit(h.id).sources() & relevant for h in hits]
            first = next((r for r, c in enumerate(covered, 1) if c), None)
            rr.append(1.0 / first if first else 0.0)
            top5 = set().union(*covered[:5]) if covered else set()
            rec5.append(len(top5) / len(relevant))
            cov5.append(float(top5 == relevant))
            action = next((a for a in events[i + 1:i + 3] if a.kind == "action"), None)
            if action is not None:
                used = [h.id for h in hits[:5]
                        if values_in(action.text, [v for v in bank.unit(h.id).entities if len(v) > 2])]
                rules.reinforce(used)
        rules.observe(e, mem_vecs[i])
        if i % 20 == 0 or i == len(events) - 1:
            sizes.append((i + 1, len(bank)))
    return {"rr": rr, "recall@5": rec5, "coverage@5": cov5, "sizes": sizes, "query_s": query_s,
            "final_size": len(bank), "max_size": max(s for _, s in sizes), "ranked": ranked,
            "summaries": sum(u.kind == "summary" for u in bank), "tier_recall": tier_recall}


def evaluate_life(events: list[Event], mem_vecs: np.ndarray, query_vecs: dict[int, np.ndarray],
                  store_config: StoreConfig, k: int) -> list[list]:
    """The rankings evaluate.py makes for the life's decisions (sam_model.evaluation.methods.StoreReplay: the
    memories written in order, each decision searching what came before it)."""
    store = MemoryStore(None, dataclasses.replace(store_config, index={"kind": "flat", "device": "cpu"}),
                        mem_vecs.shape[1])
    out = []
    for i, e in enumerate(events):
        if e.is_decision_point and len(store):
            out.append([h.id for h in store.search_vector(query_vecs[i], k, e.state.uncertainty_flags,
                                                          episode_id=e.episode_id)])
        store.add([store.recorder.record(e)], mem_vecs[i][None])
    return out


def tier_recall_at(bank: MemoryBank, q: np.ndarray, k: int) -> float:
    """Share of the exact top-k (over every unit) that the two-tier search returns."""
    ids = list(bank.units)
    exact = np.argsort(-(bank.vectors(ids) @ q))[:k]
    got = set(bank.tiers.search(q, k)[0][0]) - {None}
    return len({ids[j] for j in exact} & got) / min(k, len(ids))


def variant_stats(runs: list[dict], capacity: int) -> dict:
    rr = [x for r in runs for x in r["rr"]]
    return {
        "mrr": float(np.mean(rr)),
        "recall@5": float(np.mean([x for r in runs for x in r["recall@5"]])),
        "coverage@5": float(np.mean([x for r in runs for x in r["coverage@5"]])),
        "decisions": len(rr),
        "final_size": float(np.mean([r["final_size"] for r in runs])),
        "max_size": max(r["max_size"] for r in runs),
        "summaries": float(np.mean([r["summaries"] for r in runs])),
        "ms_per_query": 1000 * float(np.mean([x for r in runs for x in r["query_s"]])),
        "tier_recall@10": (float(np.mean(tr)) if (tr := [x for r in runs for x in r["tier_recall"]]) else None),
        "capacity": capacity,
        "size_curve": runs[0]["sizes"],
        "rr_curve": runs[0]["rr"],
    }


def plot(results: dict, path: Path, window: int = 50,
         tensorboard: str | None = None) -> dict[str, list[tuple[int, float]]]:
    """memory.png: per variant, the bank's units against the events observed and the moving mean of the MRR
    against the decision point, over the first life; also to the TensorBoard log ``tensorboard`` (steps: the
    plot's x). Returns the lines drawn, by label ("units/VARIANT", "MRR moving mean/VARIANT")."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from sam_model.evaluation.diagnostics import save_figure

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.5))
    styles = ["-", "--", ":", "-."]
    lines: dict[str, list[tuple[int, float]]] = {}
    for j, (name, r) in enumerate(results.items()):
        style = {"label": name, "linestyle": styles[j % len(styles)]}
        xs, ys = zip(*r["size_curve"])
        ax1.plot(xs, ys, **style)
        lines[f"units/{name}"] = list(zip(xs, ys))
        rr = np.asarray(r["rr_curve"])
        if len(rr) >= window:
            moving = np.convolve(rr, np.ones(window) / window, mode="valid")
            ax2.plot(moving, **style)
            lines[f"MRR moving mean/{name}"] = [(i, float(v)) for i, v in enumerate(moving)]
    ax1.set(xlabel="events observed (life 0)", ylabel="units in the bank", title="Bank size over time")
    ax2.set(xlabel="decision point (life 0)", ylabel=f"MRR (moving mean over {window})",
            title="Retrieval quality over time")
    ax1.legend(fontsize=7)
    ax2.legend(fontsize=7)
    fig.tight_layout()
    save_figure(fig, path, dpi=120)
    plt.close(fig)
    tensorboard_log.log_figure(tensorboard, "memory", lines, path)
    return lines


def table(results: dict) -> str:
    rows = ["| variant | MRR | recall@5 | coverage@5 | better / worse than the store | final size | summaries | "
            "ms/query | IVF tier recall@10 |", "|---|---|---|---|---|---|---|---|---|"]
    for name, r in results.items():
        tr = "" if r["tier_recall@10"] is None else f"{r['tier_recall@10']:.3f}"
        rows.append(f"| {name} | {r['mrr']:.3f} | {r['recall@5']:.3f} | {r['coverage@5']:.3f} | "
                    f"{r['better_than_store']} / {r['worse_than_store']} | {r['final_size']:.0f} | {r['summaries']:.1f} | "
                    f"{r['ms_per_query']:.2f} | {tr} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m sam_model.bench.memory",
        description="Benchmark the run-time memory bank (decay, pruning, graph expansion, tiers) over long "
                    "synthetic agent lives; writes DIR/memory.json and DIR/memory.png and prints a table.")
    parser.add_argument("--out", required=True, help="output folder for memory.json and memory.png")
    parser.add_argument("--retriever", default=None, metavar="DIR",
                        help="an exported SAMRetriever folder; default: the content baseline (untrained MiniLM "
                             "on the state in words + observation vs the memory text)")
    parser.add_argument("--bert", default=None, help="local BERT folder for the content baseline "
                        "(default: the packaged all-MiniLM-L6-v2)")
    parser.add_argument("--lives", type=int, default=2, help="number of agent lives (default: 2)")
    parser.add_argument("--events", type=int, default=2000, help="minimum events per life (default: 2000)")
    parser.add_argument("--capacity", type=float, default=0.1,
                        help="bank capacity of the pruned variants, as a fraction of a life's events (default: 0.1)")
    parser.add_argument("--half-life", type=float, default=100.0,
                        help="importance half-life in events for the decay variants (default: 100)")
    parser.add_argument("--working", type=int, default=64, help="working-tier size of the tiered variant (default: 64)")
    parser.add_argument("--nlist", type=int, default=8,
                        help="IVF lists of the long-term tier in the tiered variants (default: 8; it trains once "
                             "it holds 39 units per list, so the unbounded tiered bank is approximate after ~312)")
    parser.add_argument("--nprobe", type=int, default=2, help="IVF lists probed per query (default: 2)")
    parser.add_argument("--k", type=int, default=10, help="memories retrieved per decision (default: 10)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the synthetic lives (default: 0)")
    parser.add_argument("--log", default=None, metavar="LOG",
                        help="an agent log whose episodes are the lives instead (e.g. SGD dev as lives: python -m "
                             "sam_model.data.sgd ../shared/data/sgd/dev LIVES.jsonl --max-dialogues 80 --life 8)")
    parser.add_argument("--device", default=None, help="torch device for the encoder (default: cuda if available)")
    tensorboard_log.add_option(parser, "memory.png's lines (units and moving MRR per variant) and the PNG")
    args = parser.parse_args(argv)
    if args.lives < 1 or args.events < 1 or not 0 < args.capacity <= 1 or args.k < 5:
        parser.error("need --lives >= 1, --events >= 1, 0 < --capacity <= 1 and --k >= 5")
    if why := tensorboard_log.problem(args.tensorboard):
        parser.error(why)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    faiss.omp_set_num_threads(1)  # one query at a time: OpenMP start-up would dominate the timings
    model = SAMRetriever.load(args.retriever, args.device) if args.retriever else ContentEncoder(args.bert, args.device)
    encoder, store_config = encoder_of(model), store_config_of(model)
    if args.log:
        from sam_model.data.reader import read_episodes

        lives = [list(ep.events) for ep in read_episodes(args.log)]
    else:
        lives = [make_life(j, args.events, args.seed) for j in range(args.lives)]
    encoded = []
    for events in progress_bar(lives, desc="encoding lives", unit="life"):
        recorder = MemoryRecorder()  # the records the bank writes (each compared with its task's previous state)
        mem = np.asarray(encoder.encode_memories([recorder.record(e) for e in events], progress=True), np.float32)
        starts = task_starts(events)
        dps = [i for i, e in enumerate(events) if e.is_decision_point]
        q = np.asarray(encoder.encode_queries([events[i].state for i in dps], [events[i].text for i in dps],
                                              steps=[events[i].step for i in dps],
                                              task_starts=[starts[i] for i in dps]), np.float32)
        encoded.append((mem, dict(zip(dps, q))))

    def encode(units):
        return encoder.encode_memories(units)

    n_events = min(len(e) for e in lives)
    capacity = max(1, round(args.capacity * n_events))
    results = {}
    configs = variants(capacity, args.half_life, args.working, args.nlist, args.nprobe)
    for name, cfg in progress_bar(configs.items(), desc="variants", unit="variant"):
        runs = [run_life(ev, m, q, cfg, store_config, encode, args.k) for ev, (m, q) in zip(lives, encoded)]
        results[name] = {**variant_stats(runs, cfg.capacity), "config": cfg.to_json()}
        results[name]["ranked"] = [r["ranked"] for r in runs]
        results[name]["_rr"] = [x for r in runs for x in r["rr"]]
    measured = [evaluate_life(ev, m, q, store_config, args.k) for ev, (m, q) in zip(lives, encoded)]
    store_name = next(iter(configs))
    same = sum(a == b for got, want in zip(results[store_name]["ranked"], measured) for a, b in zip(got, want))
    n_dec = sum(len(w) for w in measured)
    base_rr = np.asarray(results[store_name]["_rr"])
    for r in results.values():  # paired with the store's ranking: decisions ranked better / worse
        rr = np.asarray(r.pop("_rr"))
        r["better_than_store"], r["worse_than_store"] = int((rr > base_rr + 1e-12).sum()), int((rr < base_rr - 1e-12).sum())
        del r["ranked"]

    mrr = {n: r["mrr"] for n, r in results.items()}
    cov = {n: r["coverage@5"] for n, r in results.items()}
    base = mrr[store_name]
    targets = {
        "store_only_equals_evaluate": {"identical_rankings": same, "decisions": n_dec},
        "mrr_change_vs_store_only": {n: v - base for n, v in mrr.items()},
        "pruning_mrr_loss_points": 100 * (mrr["all priors + expansion (the old default)"]
                                          - mrr["all priors + pruning + expansion"]),
        "expansion_coverage5_gain": cov["store only + expansion"] - cov[store_name],
    }
    report = {
        "retriever": args.retriever or "content baseline (MiniLM, state in words + observation)",
        "log": args.log or "synthetic lives",
        "time_features": int(getattr(getattr(getattr(encoder, "net", None), "cfg", None), "time_features", 0) or 0),
        "store_config": store_config.to_dict(),
        "lives": len(lives), "events_per_life": [len(e) for e in lives],
        "decisions_per_life": [sum(e.is_decision_point for e in ev) for ev in lives],
        "capacity": capacity, "half_life": args.half_life, "k": args.k, "seed": args.seed,
        "targets": targets, "variants": results,
    }
    atomic_write_text(out / "memory.json", json.dumps(report, indent=1))
    plot(results, out / "memory.png", tensorboard=args.tensorboard)
    print(table(results))
    print(f"\nthe store-only bank ranks {same} of {n_dec} decisions exactly as evaluate.py does")
    print("MRR change of each bank prior over the store's ranking: "
          + ", ".join(f"{n}: {v:+.3f}" for n, v in targets["mrr_change_vs_store_only"].items() if n != store_name))
    print(f"wrote {out / 'memory.json'} and {out / 'memory.png'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
