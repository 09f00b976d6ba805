"""The tuning checklist as numbers and pictures: does the state encoder separate phases,
does the projection W_s change with the phase, which memories ever get retrieved.

Plots use matplotlib's Agg backend (no display needed); every function returns plain
floats and dicts for report.json, plus the figure when there is one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from sam_model.data.examples import Scope  # noqa: E402
from sam_model.evaluation.data import EvalData  # noqa: E402
from sam_model.io import atomic_path  # noqa: E402

MAX_LEGEND = 18  # phases drawn in their own colour (tab20 without its greys); the rest are grey "other"
MAX_HEATMAP_PHASES = 40
AGE_EDGES = (1, 2, 4, 8, 16, 32)


def phase_label(phase: str) -> str:
    return phase or "(none)"


def save_figure(fig, path: Path, dpi: int = 110) -> None:
    """PNG written atomically, so a crash never leaves a half image that looks like a result: every plot of the
    evaluation and the benchmarks is saved here."""
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=dpi, bbox_inches="tight")


def sample_indices(n: int, cap: int, seed: int = 0) -> np.ndarray:
    if n <= cap:
        return np.arange(n)
    return np.sort(np.random.default_rng(seed).choice(n, cap, replace=False))


def tsne_figure(vectors: np.ndarray, phases: Sequence[str], seed: int = 0):
    """t-SNE of state vectors coloured by phase; returns (figure, 2-D points) or (None, None) if too few."""
    from sklearn.manifold import TSNE

    n = len(vectors)
    if n < 5:
        return None, None
    perplexity = float(min(30.0, max(2.0, (n - 1) / 3.0)))
    points = TSNE(n_components=2, perplexity=perplexity, init="pca", random_state=seed).fit_transform(
        np.asarray(vectors, dtype=np.float32))
    labels = [phase_label(p) for p in phases]
    top = [p for p, _ in Counter(labels).most_common(MAX_LEGEND)]
    fig, ax = plt.subplots(figsize=(8, 6.5))
    other = np.array([lab not in top for lab in labels])
    if other.any():
        ax.scatter(points[other, 0], points[other, 1], s=6, c="lightgrey", label="other")
    colours = [plt.get_cmap("tab20")(i) for i in range(20) if i not in (14, 15)]
    for i, phase in enumerate(top):
        m = np.array([lab == phase for lab in labels])
        ax.scatter(points[m, 0], points[m, 1], s=8, color=colours[i], label=phase)
    ax.set_title(f"t-SNE of state embeddings v_s ({n} decision points), coloured by phase")
    ax.set_xticks([])
    ax.set_yticks([])
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=7, markerscale=2, frameon=False)
    return fig, points


def distinctiveness(vectors: np.ndarray, phases: Sequence[str]) -> dict[str, float | None]:
    """Mean distance between states of different phases over mean distance within a phase (> 1 is
    good), and the silhouette of the phase clustering (-1..1, higher is better)."""
    from sklearn.metrics import pairwise_distances, silhouette_score

    labels = np.array([phase_label(p) for p in phases])
    n_phases = len(set(labels.tolist()))
    out: dict[str, float | None] = {"n_states": int(len(labels)), "n_phases": int(n_phases),
                                    "inter_phase_distance": None, "intra_phase_distance": None,
                                    "inter_over_intra": None, "silhouette": None}
    if len(labels) < 3 or n_phases < 2:
        return out
    d = pairwise_distances(np.asarray(vectors, dtype=np.float64))
    same = labels[:, None] == labels[None, :]
    off_diag = ~np.eye(len(labels), dtype=bool)
    intra, inter = d[same & off_diag], d[~same]
    if len(intra) and len(inter):
        out["inter_phase_distance"] = float(inter.mean())
        out["intra_phase_distance"] = float(intra.mean())
        out["inter_over_intra"] = float(inter.mean() / intra.mean()) if intra.mean() > 0 else None
    if n_phases < len(labels):
        out["silhouette"] = float(silhouette_score(d, labels, metric="precomputed"))
    return out


def projection_figure(weights: np.ndarray, phases: Sequence[str]):
    """Heatmap of the projection weights w_s averaged per phase (rows: phases by frequency)."""
    labels = np.array([phase_label(p) for p in phases])
    top = [p for p, _ in Counter(labels.tolist()).most_common(MAX_HEATMAP_PHASES)]
    means = np.stack([weights[labels == p].mean(0) for p in top])
    fig, ax = plt.subplots(figsize=(10, max(2.5, 0.28 * len(top) + 1.5)))
    im = ax.imshow(means, aspect="auto", interpolation="nearest", cmap="viridis")
    ax.set_yticks(range(len(top)), top, fontsize=7)
    ax.set_xlabel("dimension")
    ax.set_title("projection weights w_s (diagonal of W_s), mean per phase")
    fig.colorbar(im, ax=ax, fraction=0.025)
    stats = {
        "dim": int(weights.shape[1]),
        "mean": float(weights.mean()),
        "std_over_dims": float(weights.std()),
        # How much phases disagree per dimension: 0 means W_s ignores the phase.
        "between_phase_std": float(means.std(0).mean()) if len(top) > 1 else 0.0,
        "phases_shown": top,
    }
    return fig, stats


def age_bucket(age: int | None) -> str:
    """Step distance buckets (powers of two), or 'other episode' for earlier episodes (global scope)."""
    if age is None:
        return "other episode"
    for lo, hi in zip(AGE_EDGES, AGE_EDGES[1:]):
        if age < hi:
            return str(lo) if hi - lo == 1 else f"{lo}-{hi - 1}"
    return f"{AGE_EDGES[-1]}+"


AGE_BUCKETS = tuple(age_bucket(a) for a in (1, 2, 4, 8, 16, 32)) + ("other episode",)


def memory_utilisation(rankings: Sequence[np.ndarray], relevant: Sequence[np.ndarray], data: EvalData,
                       scope: Scope, k: int) -> dict:
    """Which memories a method uses: the share of candidate memories it never puts in any top k, and the
    share of its top-k slots by memory kind and by age, next to the same shares among all candidate slots
    and among the relevant memories (the target mix)."""
    mems = data.memories
    n = len(mems)
    kinds = np.array([m.kind for m in mems])
    steps = np.array([m.step for m in mems], dtype=np.int64)
    is_candidate = np.zeros(n, dtype=bool)
    retrieved = np.zeros(n, dtype=bool)
    kind_counts = {"retrieved": Counter(), "candidates": Counter(), "relevant": Counter()}
    age_counts = {"retrieved": Counter(), "candidates": Counter(), "relevant": Counter()}
    uniq_kinds = sorted(set(kinds.tolist()))
    prefix = {kd: np.concatenate([[0], np.cumsum(kinds == kd)]) for kd in uniq_kinds}

    def ages(ex, pos: np.ndarray) -> list[str]:
        same = pos >= ex.episode_start
        return [age_bucket(int(ex.step - steps[p]) if s else None) for p, s in zip(pos, same)]

    for ex, top, rel in zip(data.examples, rankings, relevant):
        r = ex.candidate_range(scope)
        is_candidate[r.start : r.stop] = True
        hit = top[:k]
        retrieved[hit] = True
        kind_counts["retrieved"].update(kinds[hit].tolist())
        kind_counts["relevant"].update(kinds[rel].tolist())
        for kd in uniq_kinds:
            kind_counts["candidates"][kd] += int(prefix[kd][r.stop] - prefix[kd][r.start])
        age_counts["retrieved"].update(ages(ex, hit))
        age_counts["relevant"].update(ages(ex, rel))
        age_counts["candidates"].update(ages(ex, np.arange(ex.episode_start, r.stop)))
        if r.start < ex.episode_start:
            age_counts["candidates"]["other episode"] += ex.episode_start - r.start

    def shares(counts: dict[str, Counter], keys: Sequence[str]) -> dict[str, dict[str, float]]:
        totals = {w: max(1, sum(c.values())) for w, c in counts.items()}
        return {key: {w: counts[w][key] / totals[w] for w in counts} for key in keys
                if any(counts[w][key] for w in counts)}

    n_cand = int(is_candidate.sum())
    return {
        "k": int(k),
        "n_candidate_memories": n_cand,
        "never_retrieved_share": float(1.0 - (retrieved & is_candidate).sum() / n_cand) if n_cand else 0.0,
        "by_kind": shares(kind_counts, uniq_kinds),
        "by_age": shares(age_counts, AGE_BUCKETS),
    }
