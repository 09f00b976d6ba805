"""The memory bank: units, their graph, their vectors, and what the state has taught so far.

The bank is the data; :mod:`sam_model.memory.updater` holds the rules that change it.
Besides units it keeps the small tables the rules need and that must survive a restart:
the bank clock (one tick per observed event), per episode the slot table (slot -> current
value and the unit that set it), the last unit written and the last state seen.

Search ranks by the retriever's inner product, then (optionally) expands along typed
edges so that memories that belong with the hits come along. Persistence is one ``.npz``
file (JSON metadata + one embedding matrix) written through :func:`sam_model.io.atomic_path`,
so a crash mid-save leaves the previous bank intact and concurrent saves end with one complete bank.
"""

from __future__ import annotations

import json
import math
import zipfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sam_model.data.schema import State
from sam_model.io import SAMFileError, atomic_path, clean_stale, require_file
from sam_model.memory.config import MemoryConfig
from sam_model.memory.graph import MemoryGraph
from sam_model.memory.tiers import LONGTERM, WORKING, Tiers
from sam_model.memory.unit import MemoryUnit

FORMAT = "sam_model.MemoryBank"
VERSION = 1


@dataclass
class Hit:
    """A retrieved unit: final score, raw retriever similarity, and the edge that brought it in."""

    unit: MemoryUnit
    score: float
    similarity: float
    via: tuple[str, str] | None = None  # (edge type, id of the unit it was reached from)


class MemoryBank:
    """All memories of an agent, searchable by vector and linked by typed edges."""

    def __init__(self, dim: int, config: MemoryConfig | None = None):
        if not isinstance(dim, int) or dim < 1:
            raise ValueError(f"bank dim must be a positive int, got {dim!r}")
        self.dim = dim
        self.config = config or MemoryConfig()
        self.units: dict[str, MemoryUnit] = {}
        self.graph = MemoryGraph(self.units)
        cfg = self.config
        self.tiers = Tiers(dim, cfg.working_size, cfg.ivf_nlist, cfg.ivf_nprobe)
        self.clock = 0
        self.slots: dict[str, dict[str, list]] = {}  # episode -> slot -> [value, source unit id or None]
        self.last_unit: dict[str, str] = {}
        self.last_state: dict[str, State] = {}
        self.entity_index: dict[str, list[str]] = {}  # value -> recent units mentioning it
        self.by_phase: dict[tuple[str, str], set[str]] = {}

    # -- container
    def __len__(self) -> int:
        return len(self.units)

    def __contains__(self, uid: object) -> bool:
        return uid in self.units

    def __iter__(self) -> Iterator[MemoryUnit]:
        return iter(list(self.units.values()))

    def __getitem__(self, uid: str) -> MemoryUnit:
        return self.units[uid]

    def importance(self, uid: str) -> float:
        return self.units[uid].importance_at(self.clock, self.config.decay)

    def add(self, unit: MemoryUnit) -> None:
        """Insert a unit (into the working tier); its embedding must match the bank's dim."""
        if unit.id in self.units:
            raise ValueError(f"memory {unit.id!r} is already in the bank (ids are episode#step and must be unique)")
        unit.embedding = self._check_vector(unit.embedding, unit.id)
        self.units[unit.id] = unit
        self.tiers.add([unit.id], unit.embedding[None])
        self._index(unit)

    def set_embedding(self, uid: str, vector: np.ndarray) -> None:
        """Replace a unit's vector (a summary re-encoded after it absorbed more facts)."""
        unit = self.units[uid]
        unit.embedding = self._check_vector(vector, uid)
        tier = self.tiers.tier_of(uid) or WORKING
        self.tiers.remove([uid])
        self.tiers.add([uid], unit.embedding[None], tier)

    def remove(self, uid: str, heir: str | None = None) -> None:
        """Delete a unit; the graph is repaired and the unit's roles (slot source) pass to ``heir``."""
        unit = self.units[uid]
        if self.last_unit.get(unit.episode_id) == uid:
            preds = [s for k, s in self.graph.in_edges(uid) if k == "temporal_next"]
            if preds:
                self.last_unit[unit.episode_id] = preds[0]
            else:
                del self.last_unit[unit.episode_id]
        self.graph.detach(uid, heir)
        self.tiers.remove([uid])
        del self.units[uid]
        for entry in self.slots.get(unit.episode_id, {}).values():
            if entry[1] == uid:
                entry[1] = heir
        for v in unit.entities:
            ids = self.entity_index.get(v)
            if ids and uid in ids:
                ids.remove(uid)
        self.by_phase.get((unit.episode_id, unit.phase), set()).discard(uid)

    def holds(self, uid: str, slot: str) -> bool:
        """Whether ``uid`` holds the current value of ``slot`` in its episode (not a corrected one)."""
        unit = self.units[uid]
        entry = self.slots.get(unit.episode_id, {}).get(slot)
        return entry is not None and entry[1] == uid

    def touch(self, ids: list[str]) -> None:
        """Count an access (a retrieval) of each unit."""
        for uid in ids:
            if uid in self.units:
                self.units[uid].access_count += 1
                self.units[uid].last_access = self.clock

    def _index(self, unit: MemoryUnit) -> None:
        self.by_phase.setdefault((unit.episode_id, unit.phase), set()).add(unit.id)

    def _check_vector(self, vector, uid: str) -> np.ndarray:
        if vector is None:
            raise ValueError(f"memory {uid!r} has no embedding; encode it before adding it to the bank")
        v = np.asarray(vector, np.float32).reshape(-1)
        if v.shape[0] != self.dim:
            raise ValueError(f"memory {uid!r} has an embedding of dim {v.shape[0]}, the bank has dim {self.dim}")
        if not np.isfinite(v).all():
            raise ValueError(f"memory {uid!r} has NaN or inf in its embedding; fix the encoder output")
        return v

    # -- search
    def search(self, query: np.ndarray, k: int = 5, expand: bool | None = None,
               needs: Sequence[str] = (), episode_id: str | None = None) -> list[Hit]:
        """The top-k units for a query vector, expanded along edges; scores are logits.

        A unit's logit is its inner product with the query over ``temperature`` (the
        retriever's score, as in its training softmax). A unit reached over an edge from a
        seed gets the seed's logit + log(edge weight · hop_decay^(hop-1)) and keeps the
        better of that and its own logit, so an edge weight of 0.9 means "nearly as likely
        as the unit that led here", whatever the bank's size. ``needs`` (the state's open
        slots) steers expansion: arriving at a unit that holds the current value of none of
        them costs log(``off_need_factor``). Then priors are added: log(``superseded_factor``)
        for units whose facts were all corrected, and ``importance_weight`` · log of the
        unit's current importance relative to the best candidate's (recency, use, facts).

        ``episode_id`` restricts the ranking to that episode's units (an agent resuming one task):
        they are scored exactly, whichever tier holds them, and expansion only lands on them.
        """
        cfg = self.config
        q = self._check_vector(query, "<query>")
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError(f"k must be a positive int, got {k!r}")
        pool = self.tiers.search(q, max(k, cfg.pool)) if episode_id is None else \
            self._episode_pool(q, episode_id, max(k, cfg.pool))
        if not pool:
            return []
        sims = dict(pool)
        logit = {uid: s / cfg.temperature for uid, s in pool}
        via: dict[str, tuple[str, str]] = {}
        if cfg.expand if expand is None else expand:
            best = max(logit.values())
            seeds = {uid: math.exp(v - best) for uid, v in sorted(logit.items(), key=lambda kv: -kv[1])[:k]}
            wanted = set(needs)
            node_weight = None
            if wanted:
                def node_weight(uid: str) -> float:
                    return 1.0 if any(self.holds(uid, s) for s in wanted) else cfg.off_need_factor
            reached = self.graph.expand(seeds, cfg.edge_weights, cfg.hop_decay, cfg.max_hops, cfg.max_expanded,
                                        node_weight)
            for uid, (rel, kind, frm) in reached.items():
                if episode_id is not None and self.units[uid].episode_id != episode_id:
                    continue
                if uid not in sims:
                    sims[uid] = float(self.units[uid].embedding @ q)
                    logit[uid] = sims[uid] / cfg.temperature
                prop = best + math.log(rel)
                if prop > logit[uid]:
                    logit[uid], via[uid] = prop, (kind, frm)
        for uid in logit:
            if self.units[uid].superseded_by:
                logit[uid] += math.log(max(cfg.superseded_factor, 1e-12))
        if cfg.importance_weight > 0:
            imp = {uid: self.importance(uid) for uid in logit}
            top = max(imp.values())
            for uid in logit:
                logit[uid] += cfg.importance_weight * math.log(max(imp[uid] / top, 1e-12) if top > 0 else 1.0)
        ranked = sorted(logit, key=lambda uid: (-logit[uid], -sims[uid]))[:k]
        return [Hit(self.units[u], logit[u], sims[u], via.get(u)) for u in ranked]

    def _episode_pool(self, q: np.ndarray, episode_id: str, k: int) -> list[tuple[str, float]]:
        """The top-k (id, inner product) among one episode's units, exactly."""
        ids = sorted(u for (ep, _), us in self.by_phase.items() if ep == episode_id for u in us)
        if not ids:
            return []
        sims = np.stack([self.units[u].embedding for u in ids]) @ q
        order = np.argsort(-sims, kind="stable")[:k]
        return [(ids[i], float(sims[i])) for i in order]

    # -- persistence
    def save(self, path: str | Path) -> Path:
        """Write the bank to one file atomically: the previous file stays valid until the rename (and what
        killed saves left next to it is removed)."""
        units = list(self.units.values())
        emb = np.stack([u.embedding for u in units]) if units else np.zeros((0, self.dim), np.float32)
        meta = {
            "format": FORMAT, "version": VERSION, "dim": self.dim, "config": self.config.to_json(),
            "clock": self.clock, "units": [u.to_json() for u in units],
            "longterm": [u.id for u in units if self.tiers.tier_of(u.id) == LONGTERM],
            "slots": self.slots, "last_unit": self.last_unit,
            "last_state": {ep: s.to_json() for ep, s in self.last_state.items()},
            "entity_index": self.entity_index,
        }
        with atomic_path(path) as tmp, open(tmp, "wb") as fh:
            _write(fh, meta, emb)
        return Path(path)

    @classmethod
    def load(cls, path: str | Path) -> MemoryBank:
        """Read a bank written by :meth:`save`; a missing or damaged file raises SAMFileError."""
        p = require_file(path, "memory bank", "give a file written by MemoryBank.save")
        clean_stale(p.parent)  # leftovers of killed saves, when no other process holds the folder
        fix = "restore the previous bank file or rebuild the bank from the agent log"
        try:
            with np.load(p, allow_pickle=False) as z:
                meta = json.loads(z["meta"].tobytes().decode("utf-8"))
                emb = np.asarray(z["embeddings"], np.float32)
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, UnicodeDecodeError) as exc:
            raise SAMFileError(f"{p}: not a readable memory bank ({exc}); {fix}") from None
        if not isinstance(meta, dict) or meta.get("format") != FORMAT:
            raise SAMFileError(f"{p}: not a memory bank file (format {meta.get('format')!r}); {fix}")
        if meta.get("version") != VERSION:
            raise SAMFileError(f"{p}: memory bank version {meta.get('version')!r}, this code reads {VERSION}")
        try:
            bank = cls(int(meta["dim"]), MemoryConfig.from_json(meta["config"], f"{p}: config"))
            if emb.shape != (len(meta["units"]), bank.dim):
                raise ValueError(f"embeddings have shape {emb.shape}, expected ({len(meta['units'])}, {bank.dim})")
            longterm = set(meta["longterm"])
            units = [MemoryUnit.from_json(u, emb[i]) for i, u in enumerate(meta["units"])]
            for u in units:
                bank.units[u.id] = u
                bank._index(u)
            bank.graph = MemoryGraph(bank.units)
            for tier in (WORKING, LONGTERM):
                ids = [u.id for u in units if (u.id in longterm) == (tier == LONGTERM)]
                if ids:
                    bank.tiers.add(ids, np.stack([bank.units[i].embedding for i in ids]), tier)
            bank.clock = int(meta["clock"])
            bank.slots = meta["slots"]
            bank.last_unit = meta["last_unit"]
            bank.last_state = {ep: State.from_json(s) for ep, s in meta["last_state"].items()}
            bank.entity_index = meta["entity_index"]
        except (KeyError, TypeError, ValueError) as exc:
            raise SAMFileError(f"{p}: memory bank metadata is damaged ({exc!r}); {fix}") from None
        return bank


def _write(fh, meta: dict, embeddings: np.ndarray) -> None:
    """The bytes of a bank file (a separate function so a test can interrupt it mid-write)."""
    payload = np.frombuffer(json.dumps(meta).encode("utf-8"), np.uint8)
    np.savez(fh, meta=payload, embeddings=embeddings)
