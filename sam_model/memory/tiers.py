"""Where memory vectors live: a small working tier searched exactly, and a long-term IVF tier.

An agent mostly needs what it is working on; that set is small and searched exactly,
so it is never missed by an approximate index. Everything else sits in a coarse FAISS
IVF index (``MemoryIndex(kind="ivf")``), cheap to search at any size. Units move
between the two (promotion when a long-term unit is used or needed again, demotion when
the working tier overflows); the rules (sam_model.memory.rules) decide who moves, this module
only moves them. With ``working_size=0`` there is one exact tier and no movement. The IVF tier is
searched exactly until it holds enough units to train its lists (39 per list, see MemoryIndex).

``Tiers`` answers MemoryIndex's calls (add, remove, search with episode and id filters, get_vectors),
so the bank's memory store (sam_model.store.MemoryStore) searches both tiers as one index.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from sam_model.index import MemoryIndex

WORKING, LONGTERM = "working", "longterm"


class Tiers:
    """One or two MemoryIndex tiers behind a single add/remove/search."""

    def __init__(self, dim: int, working_size: int = 0, nlist: int | None = None, nprobe: int = 32):
        self.dim, self.working_size = dim, working_size
        self.working = MemoryIndex(dim, "flat", device="cpu")
        self.longterm = (MemoryIndex(dim, "ivf", nlist=nlist, nprobe=nprobe, device="cpu")
                         if working_size > 0 else None)

    @property
    def tiered(self) -> bool:
        return self.longterm is not None

    def _tiers(self) -> list[MemoryIndex]:
        return [self.working] if self.longterm is None else [self.working, self.longterm]

    def __len__(self) -> int:
        return sum(len(t) for t in self._tiers())

    def __contains__(self, uid: object) -> bool:
        return any(uid in t for t in self._tiers())

    def ids(self) -> list:
        return [i for t in self._tiers() for i in t.ids()]

    def _of(self, uid: Any) -> MemoryIndex:
        for t in self._tiers():
            if uid in t:
                return t
        raise KeyError(f"memory id {uid!r} is not in the index")

    def tier_of(self, uid: str) -> str | None:
        if uid in self.working:
            return WORKING
        if self.longterm is not None and uid in self.longterm:
            return LONGTERM
        return None

    def episode_of(self, uid: Any) -> Any:
        return self._of(uid).episode_of(uid)

    def get_vectors(self, ids: Sequence[Any]) -> np.ndarray:
        """The stored vectors of ``ids`` (n, dim), one batched reconstruction per tier."""
        ids = list(ids)
        if self.longterm is None or not len(self.longterm):
            return self.working.get_vectors(ids)
        out = np.zeros((len(ids), self.dim), np.float32)
        for t in self._tiers():
            rows = [j for j, i in enumerate(ids) if i in t]
            if rows:
                out[rows] = t.get_vectors([ids[j] for j in rows])
        missing = [i for i in ids if i not in self]
        if missing:
            raise KeyError(f"memory id {missing[0]!r} is not in the index")
        return out

    def add(self, ids: Sequence[str], vectors: np.ndarray, episode_ids: Sequence[Any] | None = None,
            tier: str = WORKING) -> None:
        """New memories enter the working tier (or the long-term one, e.g. when loading a bank)."""
        target = self.longterm if tier == LONGTERM and self.longterm is not None else self.working
        target.add(list(ids), np.asarray(vectors, np.float32).reshape(len(ids), self.dim), episode_ids)

    def remove(self, ids: Iterable[str]) -> None:
        ids = list(ids)
        for t in self._tiers():
            mine = [i for i in ids if i in t]
            if mine:
                t.remove(mine)

    def move(self, ids: Sequence[str], to: str) -> None:
        """Promote (``to="working"``) or demote (``to="longterm"``) units with the vectors their tier holds (the
        only copy); others are left alone."""
        if self.longterm is None:
            return
        src, dst = (self.longterm, self.working) if to == WORKING else (self.working, self.longterm)
        keep = [j for j, i in enumerate(ids) if i in src]
        if not keep:
            return
        moved = [ids[j] for j in keep]
        episodes = [src.episode_of(i) for i in moved]
        vectors = src.get_vectors(moved)
        src.remove(moved)
        dst.add(moved, vectors, episodes)

    def search(self, queries: np.ndarray, k: int, episode_id: Any = None,
               within: Iterable[Any] | None = None) -> tuple[list[list[Any]], np.ndarray]:
        """MemoryIndex.search over both tiers (one query row per call is what the bank makes)."""
        q = np.asarray(queries, np.float32).reshape(-1, self.dim)
        within = None if within is None else set(within)
        rows: list[list[tuple[float, Any]]] = [[] for _ in range(len(q))]
        for t in self._tiers():
            if len(t) == 0:
                continue
            ids, scores = t.search(q, min(k, len(t)), episode_id=episode_id, within=within)
            for r in range(len(q)):
                rows[r] += [(float(s), i) for i, s in zip(ids[r], scores[r]) if i is not None]
        out_ids = [[None] * k for _ in range(len(q))]
        out_scores = np.full((len(q), k), -np.inf, np.float32)
        for r, row in enumerate(rows):
            row.sort(key=lambda h: -h[0])
            for j, (s, i) in enumerate(row[:k]):
                out_ids[r][j], out_scores[r, j] = i, s
        return out_ids, out_scores
