"""The hybrid evaluation set E_t: small, but covering the past, the contested and the new.

Comparing two memories on every task ever seen is what Janus exists to avoid. E_t is the
union of three cheap parts:

- **coverage**: k-means (faiss) over the embeddings of all tasks seen, one representative per
  cluster (the task nearest each centroid) — guards against forgetting old regions;
- **boundary**: tasks whose correctness flipped between the last compared memories (a bounded
  queue, oldest out first) — the tasks where memories actually differ;
- **fresh**: a random sample of the tasks since the last trigger — the new distribution.

Each part can be switched off for ablations. Everything random is drawn from one seeded
generator whose state is part of ``state_dict``, so a resumed run draws the same sets.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import faiss
import numpy as np

from sam_model.janus.protocols import TaskFeatures


@dataclass
class EvalSelection:
    """E_t as positions in the order tasks were seen; ``parts`` before de-duplication."""

    indices: np.ndarray
    parts: dict[str, list[int]] = field(default_factory=dict)

    def sizes(self) -> dict[str, int]:
        return {**{k: len(v) for k, v in self.parts.items()}, "total": int(len(self.indices))}


class HybridEvalSet:
    """Coverage ∪ boundary ∪ fresh over the stream of tasks seen so far."""

    def __init__(self, task_features: TaskFeatures, coverage: int = 16, boundary: int = 32, fresh: int = 16,
                 use_coverage: bool = True, use_boundary: bool = True, use_fresh: bool = True,
                 kmeans_iters: int = 20, seed: int = 0):
        for name, v in (("coverage", coverage), ("boundary", boundary), ("fresh", fresh)):
            if v < 0:
                raise ValueError(f"{name} size must be >= 0, got {v}")
        if not (use_coverage and coverage or use_boundary and boundary or use_fresh and fresh):
            raise ValueError("the evaluation set is empty: enable at least one of coverage/boundary/fresh "
                             "with a size > 0")
        self.task_features = task_features
        self.coverage_k = coverage if use_coverage else 0
        self.boundary_cap = boundary if use_boundary else 0
        self.fresh_n = fresh if use_fresh else 0
        self.kmeans_iters, self.seed = kmeans_iters, seed
        self.rng = np.random.default_rng(seed)
        self.tasks: list[Any] = []
        self._emb: list[np.ndarray] = []
        self._emb_cache: np.ndarray | None = None
        self.boundary: list[int] = []  # oldest first
        self.fresh_start = 0  # tasks[fresh_start:] arrived since the last trigger
        self.kmeans_calls = 0

    def __len__(self) -> int:
        return len(self.tasks)

    # -- the stream ---------------------------------------------------------------------------------------
    def add(self, tasks: Sequence[Any], emb: np.ndarray | None = None) -> np.ndarray:
        """Record a batch of tasks (embedding them unless ``emb`` is given); returns the embeddings."""
        tasks = list(tasks)
        if emb is None:
            emb = self.task_features(tasks) if tasks else np.zeros((0, self.dim or 1), np.float32)
        emb = np.ascontiguousarray(emb, dtype=np.float32)
        if emb.ndim != 2 or emb.shape[0] != len(tasks):
            raise ValueError(f"task features returned shape {emb.shape} for {len(tasks)} tasks; "
                             "expected (n_tasks, dim)")
        if self._emb and len(tasks) and emb.shape[1] != self.dim:
            raise ValueError(f"task embedding size changed: {emb.shape[1]} vs {self.dim}")
        self.tasks.extend(tasks)
        if len(tasks):
            self._emb.append(emb)
            self._emb_cache = None
        return emb

    @property
    def dim(self) -> int | None:
        return self._emb[0].shape[1] if self._emb else None

    def embeddings(self) -> np.ndarray:
        if self._emb_cache is None:
            self._emb_cache = np.concatenate(self._emb) if self._emb else np.zeros((0, 1), np.float32)
        return self._emb_cache

    # -- the three parts ----------------------------------------------------------------------------------
    def coverage_set(self) -> list[int]:
        """The task nearest each k-means centroid (distinct), or every task when there are ≤ k."""
        n, k = len(self.tasks), self.coverage_k
        if k == 0 or n == 0:
            return []
        if n <= k:
            return list(range(n))
        x = self.embeddings()
        km = faiss.Kmeans(x.shape[1], k, niter=self.kmeans_iters, seed=self.seed + self.kmeans_calls,
                          min_points_per_centroid=1, max_points_per_centroid=256, verbose=False)
        # At most 256·k points: one thread is faster than OpenMP's start-up and spinning, and
        # keeps the clustering bit-for-bit reproducible on resume.
        threads = faiss.omp_get_max_threads()
        faiss.omp_set_num_threads(1)
        try:
            km.train(x)
        finally:
            faiss.omp_set_num_threads(threads)
        self.kmeans_calls += 1
        d2 = (x * x).sum(1)[:, None] - 2.0 * x @ km.centroids.T + (km.centroids**2).sum(1)[None, :]
        chosen: list[int] = []
        taken: set[int] = set()
        for c in range(k):  # greedy: nearest task not already representing another centroid
            for i in np.argsort(d2[:, c], kind="stable"):
                if int(i) not in taken:
                    chosen.append(int(i))
                    taken.add(int(i))
                    break
        return chosen

    def fresh_set(self) -> list[int]:
        pool = np.arange(self.fresh_start, len(self.tasks))
        if self.fresh_n == 0 or len(pool) == 0:
            return []
        if len(pool) <= self.fresh_n:
            return pool.tolist()
        return sorted(self.rng.choice(pool, size=self.fresh_n, replace=False).tolist())

    def build(self) -> EvalSelection:
        """E_t for a comparison now: coverage, then boundary, then fresh, de-duplicated in that order."""
        parts = {"coverage": self.coverage_set(), "boundary": list(self.boundary), "fresh": self.fresh_set()}
        seen: dict[int, None] = {}
        for part in parts.values():
            for i in part:
                seen.setdefault(i, None)
        return EvalSelection(np.fromiter(seen, dtype=np.int64, count=len(seen)), parts)

    def select(self, sel: EvalSelection) -> list[Any]:
        return [self.tasks[i] for i in sel.indices]

    def record(self, indices: np.ndarray, old_correct: np.ndarray, new_correct: np.ndarray) -> int:
        """After a comparison: queue the flipped tasks as boundary, and restart the fresh window.

        Returns the number of flips. A task already queued moves to the back (it flipped again).
        """
        old_correct, new_correct = np.asarray(old_correct, bool), np.asarray(new_correct, bool)
        if not (len(indices) == len(old_correct) == len(new_correct)):
            raise ValueError(f"record() got {len(indices)} tasks but {len(old_correct)}/{len(new_correct)} "
                             "correctness entries")
        flipped = [int(i) for i, a, b in zip(indices, old_correct, new_correct) if a != b]
        if self.boundary_cap:
            again = set(flipped)
            queue = [i for i in self.boundary if i not in again] + flipped
            self.boundary = queue[-self.boundary_cap:]
        self.fresh_start = len(self.tasks)
        return len(flipped)

    def truncate(self, n: int) -> None:
        """Forget every task after the first ``n`` (a step that failed after its batch joined: the controller
        takes the batch back, so that a retry adds it once and the run still resumes)."""
        if not 0 <= n <= len(self.tasks):
            raise ValueError(f"cannot truncate {len(self.tasks)} tasks to {n}")
        del self.tasks[n:]
        kept, rows = [], 0
        for e in self._emb:
            if rows >= n:
                break
            kept.append(e[: n - rows])
            rows += len(kept[-1])
        self._emb, self._emb_cache = kept, None
        self.boundary = [i for i in self.boundary if i < n]
        self.fresh_start = min(self.fresh_start, n)

    # -- resume -------------------------------------------------------------------------------------------
    def state_dict(self) -> dict:
        """Everything but the tasks and their embeddings (the controller stores those per batch)."""
        return {"n_tasks": len(self.tasks), "boundary": list(self.boundary), "fresh_start": self.fresh_start,
                "kmeans_calls": self.kmeans_calls, "rng": self.rng.bit_generator.state}

    def load_state_dict(self, state: dict) -> None:
        if state["n_tasks"] != len(self.tasks):
            raise ValueError(f"evaluation-set state is for {state['n_tasks']} tasks but {len(self.tasks)} "
                             "were re-added; resume with the same task stream")
        self.boundary = list(state["boundary"])
        self.fresh_start = state["fresh_start"]
        self.kmeans_calls = state["kmeans_calls"]
        self.rng.bit_generator.state = state["rng"]
