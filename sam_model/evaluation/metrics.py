"""Ranking metrics per query with torchmetrics, then means overall and per phase.

Each ranking holds the top ``depth`` candidates of a query; the query's relevant memories
that fall outside it are appended below them, so recall's denominator stays the full
relevant set and Recall/Precision at k <= depth are exact; nDCG is computed from the ranking itself (:func:`ndcg`). MRR is MRR@depth: a first
relevant hit beyond ``depth`` counts 0 (with the default depth of 100 this only matters in
the global scope; episode ranges are shorter).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch
from torchmetrics.retrieval import RetrievalMRR, RetrievalPrecision, RetrievalRecall

from sam_model.evaluation.data import EvalData
from sam_model.janus.stats import bootstrap_cis, verdict

HEADLINE_KS = (1, 5, 10)
NDCG_K = 10


def metric_ks(ks: Sequence[int]) -> list[int]:
    """The asked k plus those the report always carries (recall@1/5/10, precision@5, coverage@5)."""
    return sorted(set(ks) | set(HEADLINE_KS))


def _per_query(values: torch.Tensor, dim: int | None = None) -> torch.Tensor:
    """torchmetrics 'aggregation' that keeps one value per query (ordered by query index)."""
    return values


def relevant_positions(data: EvalData) -> list[np.ndarray]:
    """Positions (global memory order) of each example's relevant memories."""
    where = {m.id: i for i, m in enumerate(data.memories)}
    return [np.array(sorted(where[r] for r in ex.relevant_ids), dtype=np.int64) for ex in data.examples]


def retrieval_inputs(rankings: Sequence[np.ndarray], relevant: Sequence[np.ndarray], keep: int = NDCG_K
                     ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(preds, target, indexes) for torchmetrics: rank-based scores, so ties cannot reorder anything.

    The ranked list gets positive scores and the appended missing relevant memories scores <= 0:
    torchmetrics (>= 1.9) counts only items with a positive score as retrieved. Each list is cut
    after its last relevant hit but kept at least ``keep`` long (the largest k): no metric at
    k <= keep changes, and torchmetrics has far less to sort.
    """
    preds, target, indexes = [], [], []
    for q, (top, rel) in enumerate(zip(rankings, relevant)):
        hit = np.isin(top, rel)
        last = int(np.flatnonzero(hit)[-1]) + 1 if hit.any() else 0
        top, hit = top[: max(keep, last)], hit[: max(keep, last)]
        missing = np.setdiff1d(rel, top)
        n = len(top) + len(missing)
        preds.append(len(top) - np.arange(n, dtype=np.float32))
        target.append(np.concatenate([hit, np.ones(len(missing), dtype=bool)]))
        indexes.append(np.full(n, q, dtype=np.int64))
    return (torch.from_numpy(np.concatenate(preds)), torch.from_numpy(np.concatenate(target)),
            torch.from_numpy(np.concatenate(indexes)))


def per_query_metrics(rankings: Sequence[np.ndarray], relevant: Sequence[np.ndarray], ks: Sequence[int],
                      depth: int) -> dict[str, np.ndarray]:
    """Every metric as an array with one value per query."""
    preds, target, indexes = retrieval_inputs(rankings, relevant, keep=max(NDCG_K, *ks))
    # the rankings given are whole: never gathered from other processes. A DDP fit's rank 0 chooses its export's
    # settings after the other ranks left (train.py fit --export.used_order auto), and a sync there waited for them
    one = {"aggregation": _per_query, "sync_on_compute": False}
    metrics = {"mrr": RetrievalMRR(top_k=depth, **one)}
    for k in ks:
        metrics[f"recall@{k}"] = RetrievalRecall(top_k=k, **one)
        metrics[f"precision@{k}"] = RetrievalPrecision(top_k=k, **one)
    out = {}
    for name, metric in metrics.items():
        metric.update(preds, target, indexes=indexes)
        out[name] = np.atleast_1d(metric.compute().double().numpy())  # one query: torchmetrics gives a scalar
    out[f"ndcg@{NDCG_K}"] = np.array([ndcg(top, rel, NDCG_K) for top, rel in zip(rankings, relevant)], np.float64)
    for k in ks:  # the whole relevant set inside the top k
        out[f"coverage@{k}"] = (out[f"recall@{k}"] >= 1.0 - 1e-9).astype(np.float64)
    return out


def ndcg(top: np.ndarray, relevant: np.ndarray, k: int) -> float:
    """nDCG@k with binary gains: DCG of the relevant memories among the ranking's first k over the DCG of an ideal
    ranking (min(relevant, k) hits on top). Computed here, not by torchmetrics: its nDCG sorts every item of a
    query, the relevant memories the method never returned (appended below the ranking with scores <= 0) too, so a
    ranking shorter than k got credit for them (0.43 for a method that returned nothing relevant)."""
    hits = np.isin(np.asarray(top)[:k], relevant).astype(np.float64)
    discount = 1.0 / np.log2(np.arange(2, k + 2))
    ideal = discount[: min(len(relevant), k)].sum()
    return float((hits * discount[: len(hits)]).sum() / ideal) if ideal > 0 else 0.0


def grounding(rankings: Sequence[np.ndarray], data: EvalData, k: int = 5) -> float | None:
    """Share of the needed argument values (over all decisions) that some top-k memory says verbatim
    (sam_model.data.sayings.says): what an agent that checks a tool call's arguments against retrieved
    memory finds. None when the log does not record the needed values (only transcripts do)."""
    if data.needed is None:
        return None
    from sam_model.data.sayings import says
    from sam_model.data.text import norm

    texts: dict[int, str] = {}
    found = total = 0
    for top, values in zip(rankings, data.needed):
        shown = [texts.setdefault(int(p), norm(data.memories[int(p)].content or data.memories[int(p)].text))
                 for p in top[:k]]
        total += len(values)
        found += sum(any(says(t, v) for t in shown) for v in values)
    return found / total if total else None


def mean_metrics(per_query: dict[str, np.ndarray], mask: np.ndarray | None = None) -> dict[str, float]:
    """Means over all queries (or the masked ones), in a stable key order."""
    order = sorted(per_query, key=_metric_order)
    return {name: float(per_query[name][mask].mean() if mask is not None else per_query[name].mean())
            for name in order}


def _metric_order(name: str) -> tuple[int, int]:
    head, _, k = name.partition("@")
    heads = ["mrr", "recall", "precision", "ndcg", "coverage", "grounding"]
    rank = heads.index(head) if head in heads else 9
    return rank, int(k) if k.isdigit() else 0


def latency_stats(seconds: Sequence[float]) -> dict[str, float]:
    ms = np.asarray(seconds, dtype=np.float64) * 1000.0
    if len(ms) == 0:
        return {"latency_ms_p50": float("nan"), "latency_ms_p99": float("nan")}
    return {"latency_ms_p50": float(np.percentile(ms, 50)), "latency_ms_p99": float(np.percentile(ms, 99))}


def per_phase(per_query_by_method: dict[str, dict[str, np.ndarray]], phases: Sequence[str],
              names: Sequence[str] = ("mrr", "recall@5")) -> dict[str, dict]:
    """``{phase: {"n_queries": n, "methods": {method: {"mrr": f, "recall@5": f}}}}``, biggest phases first."""
    phases_arr = np.array([p or "(none)" for p in phases])
    uniq, counts = np.unique(phases_arr, return_counts=True)
    out: dict[str, dict] = {}
    for phase, count in sorted(zip(uniq.tolist(), counts.tolist()), key=lambda t: (-t[1], t[0])):
        mask = phases_arr == phase
        out[phase] = {"n_queries": int(count), "methods": {
            m: {n: float(pq[n][mask].mean()) for n in names} for m, pq in per_query_by_method.items()}}
    return out


INTERVAL_SEED = 0  # the bootstrap's seed, fixed: the same run prints the same interval
INTERVAL_DRAWS = 10_000


def _entry(ci: tuple[float, float, float]) -> dict:
    """{"mean", "ci": [low, high]}, ``ci`` None where there is no interval (one conversation: nan, not JSON)."""
    mean, lo, hi = ci
    return {"mean": mean, "ci": None if math.isnan(lo) else [lo, hi]}


def intervals(per_query_by_method: dict[str, dict[str, np.ndarray]], groups: Sequence[str],
              compared: Sequence[str] = (), against: str = "sam") -> dict:
    """MRR and every Recall@k of each method with its 95 % bootstrap interval over conversations, and the paired
    difference ``name − against`` of every ``compared`` method, decision by decision (``paired``, as bench.paired),
    all from one set of draws (``bootstrap_cis``: the intervals ``bootstrap_ci`` and ``paired`` give, paid once).

    ``groups``: each decision's conversation (episode or life), the unit drawn: its decisions share its memories and
    difficulty, so drawn one by one they pass for more evidence than they are (sam_model.janus.stats.bootstrap_ci).
    Only MRR and Recall@k, the figures a difference is claimed on; the rest of the report stays means."""
    first = next(iter(per_query_by_method.values()), {})
    keys = ["mrr", *sorted((k for k in first if k.startswith("recall@")), key=_metric_order)]
    compared = list(compared) if against in per_query_by_method else []
    columns = {(name, k): pq[k] for name, pq in per_query_by_method.items() for k in keys}
    for name in compared:  # decision by decision: every method ranked the same decisions, in one order
        for k in keys:
            a, b = (np.asarray(per_query_by_method[m][k], dtype=np.float64) for m in (name, against))
            if a.shape != b.shape:
                raise ValueError(f"paired difference {name} − {against}: {len(a)} and {len(b)} decisions; both "
                                 "must rank the same decisions")
            columns[(name, against, k)] = a - b
    # one set of draws for every column (bootstrap_cis): each interval is the one bootstrap_ci / paired gives it
    kw = {"groups": list(groups), "seed": INTERVAL_SEED, "n_boot": INTERVAL_DRAWS}
    cis = dict(zip(columns, bootstrap_cis(list(columns.values()), **kw))) if columns else {}
    paired = []
    for name in compared:
        row: dict = {"a": name, "b": against}
        for k in keys:
            ci = cis[name, against, k]
            row[k] = {**_entry(ci), "verdict": verdict(ci)}
        paired.append(row)
    return {"level": 0.95, "unit": "conversation", "n_conversations": len(set(groups)), "seed": INTERVAL_SEED,
            "n_boot": INTERVAL_DRAWS, "metrics": keys,
            "methods": {name: {k: _entry(cis[name, k]) for k in keys} for name in per_query_by_method},
            "paired": paired}
