"""Where memory vectors live: a small working tier searched exactly, and a long-term IVF tier.

An agent mostly needs what it is working on; that set is small and searched exactly,
so it is never missed by an approximate index. Everything else sits in a coarse FAISS
IVF index (``MemoryIndex(kind="ivf")``), cheap to search at any size. Units move
between the two (promotion when a long-term unit is used or needed again, demotion when
the working tier overflows); the updater decides who moves, this module only moves them.
With ``working_size=0`` there is one exact tier and no movement. The IVF tier is searched
exactly until it holds enough units to train its lists (39 per list, see MemoryIndex).
"""

from __future__ import annotations

from collections.abc import Sequence

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

    def __len__(self) -> int:
        return len(self.working) + (len(self.longterm) if self.longterm is not None else 0)

    def tier_of(self, uid: str) -> str | None:
        if uid in self.working:
            return WORKING
        if self.longterm is not None and uid in self.longterm:
            return LONGTERM
        return None

    def add(self, ids: Sequence[str], vectors: np.ndarray, tier: str = WORKING) -> None:
        """New memories enter the working tier (or the long-term one, e.g. when loading a bank)."""
        target = self.longterm if tier == LONGTERM and self.longterm is not None else self.working
        target.add(list(ids), np.asarray(vectors, np.float32).reshape(len(ids), self.dim))

    def remove(self, ids: Sequence[str]) -> None:
        w = [i for i in ids if i in self.working]
        if w:
            self.working.remove(w)
        if self.longterm is not None:
            lt = [i for i in ids if i in self.longterm]
            if lt:
                self.longterm.remove(lt)

    def move(self, ids: Sequence[str], vectors: np.ndarray, to: str) -> None:
        """Promote (``to="working"``) or demote (``to="longterm"``) units; others are left alone."""
        if self.longterm is None:
            return
        src, dst = (self.longterm, self.working) if to == WORKING else (self.working, self.longterm)
        keep = [j for j, i in enumerate(ids) if i in src]
        if not keep:
            return
        moved = [ids[j] for j in keep]
        src.remove(moved)
        dst.add(moved, np.asarray(vectors, np.float32)[keep])

    def search(self, query: np.ndarray, k: int) -> list[tuple[str, float]]:
        """Top-k (id, inner product) over both tiers, best first."""
        q = np.asarray(query, np.float32).reshape(1, self.dim)
        hits: list[tuple[str, float]] = []
        for index in (self.working, self.longterm):
            if index is None or len(index) == 0:
                continue
            ids, scores = index.search(q, min(k, len(index)))
            hits += [(i, float(s)) for i, s in zip(ids[0], scores[0]) if i is not None]
        hits.sort(key=lambda h: -h[1])
        return hits[:k]
