"""The memory bank: units, their graph, their vectors, and what the state has taught so far.

The bank is the data; :mod:`sam_model.memory.rules` holds the rules that change it.
Besides units it keeps the small tables the rules need and that must survive a restart:
the bank clock (one tick per observed event), per episode the slot table (slot -> current
value and the unit that set it), the last unit written and the last state seen.

The vectors, texts, provenance links and re-rank data live in the bank's memory store
(sam_model.store.MemoryStore, over the working and long-term tiers), and search is the store's
search — the same ranking evaluate.py measures — with the bank's priors added as a re-rank
score (importance from decay, reinforcement, finished-phase suppression; corrected units) and,
optionally, graph expansion along typed edges. With the priors off (``importance_weight=0``,
``superseded_factor=1``, ``expand=False``) the bank returns exactly the store's ranking.
Persistence is one ``.npz`` file (JSON metadata + one embedding matrix) written through
:func:`sam_model.io.atomic_path`, so a crash mid-save leaves the previous bank intact and
concurrent saves end with one complete bank.

Threads: a bank (and the SAMMemory agent over it, which shares its lock) is safe to share between threads:
adds, removals, searches and saves hold ``bank.lock`` (re-entrant, sam_model.locking); the rules
(sam_model.memory.rules) run under it when called through the agent.
"""

from __future__ import annotations

import dataclasses
import json
import math
import zipfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from sam_model.data.examples import MemoryRecord, MemoryRecorder
from sam_model.data.schema import State
from sam_model.hit import Hit
from sam_model.io import NPY_LOCK, SAMFileError, atomic_path, clean_stale, require_file
from sam_model.limits import check_k
from sam_model.locking import locked, new_lock
from sam_model.memory.config import MemoryConfig
from sam_model.memory.graph import MemoryGraph
from sam_model.memory.tiers import LONGTERM, WORKING, Tiers
from sam_model.memory.unit import MemoryUnit
from sam_model.store import MemoryStore
from sam_model.storeconfig import StoreConfig

FORMAT = "sam_model.MemoryBank"
VERSION = 3  # 3: the recorder inside the store's state (one owner); 2: the store's state and a recorder of the
# bank's own beside it; 1: units only. All three load.


class MemoryBank:
    """All memories of an agent, searchable by vector and linked by typed edges."""

    def __init__(self, dim: int, config: MemoryConfig | None = None, store_config: StoreConfig | None = None):
        """``store_config``: the search settings of the retriever the bank serves (slot match, provenance,
        re-rank depth); default: a plain search (no re-rank)."""
        if not isinstance(dim, int) or dim < 1:
            raise ValueError(f"bank dim must be a positive int, got {dim!r}")
        self.dim = dim
        self.encoder: Any = None  # the model whose vectors the bank holds (SAMMemory sets it): a save records its probe
        self.saved_probe: list | None = None  # that record, as a loaded bank file holds it (None: saved without one)
        self.lock = new_lock()  # add, remove, search, save and the agent's calls hold it (sam_model.locking)
        self.config = config or MemoryConfig()
        self.units: dict[str, MemoryUnit] = {}
        self.graph = MemoryGraph(self.units)
        cfg = self.config
        self.tiers = Tiers(dim, cfg.working_size, cfg.ivf_nlist, cfg.ivf_nprobe)
        self.store = MemoryStore(None, store_config or StoreConfig(provenance=False), dim, self.tiers)
        self.clock = 0
        self.slots: dict[str, dict[str, list]] = {}  # episode -> slot -> [value, source unit id or None]
        self.last_unit: dict[str, str] = {}
        self.last_state: dict[str, State] = {}
        self.entity_index: dict[str, list[str]] = {}  # value -> recent units mentioning it
        self.by_phase: dict[tuple[str, str], set[str]] = {}

    @property
    def recorder(self) -> MemoryRecorder:
        """The store's recorder (one owner, saved with the store): each unit's record, its set slots and adopted
        values within its task, and where the task began."""
        return self.store.recorder

    # -- container
    def __len__(self) -> int:
        return len(self.units)

    def __contains__(self, uid: object) -> bool:
        return uid in self.units

    def __iter__(self) -> Iterator[MemoryUnit]:
        return iter(list(self.units.values()))

    def __getitem__(self, uid: str) -> MemoryUnit:
        return self.units[uid]

    def unit(self, uid: str) -> MemoryUnit:
        """The unit of a search hit (``bank.unit(hit.id)``): a Hit carries what the store keeps, the unit the rest."""
        return self.units[uid]

    def importance(self, uid: str) -> float:
        return self.units[uid].importance_at(self.clock, self.config.decay)

    @locked
    def add(self, unit: MemoryUnit, vector: np.ndarray, record: MemoryRecord | None = None) -> None:
        """Insert a unit with its vector (into the working tier; the vector must match the bank's dim, and the
        index keeps the only copy: :meth:`vector`). ``record``: what the store keeps of it (set slots, adopted
        values: sam_model.data.examples.MemoryRecorder); default: the unit's own text and facts."""
        if unit.id in self.units:
            raise ValueError(f"memory {unit.id!r} is already in the bank (ids are episode#step and must be unique)")
        v = self.check_vector(vector, unit.id)
        unit.opens_task = unit.opens_task and self.store.keeps_openings  # kept where the model reads it, as the store
        self.units[unit.id] = unit  # record_of reads it
        try:  # the store checks the record (text size, step, kind): one it refuses must leave no unit behind,
            self.store.add([record if record is not None else self.record_of(unit)], v[None])
        except BaseException:  # or every later save failed on a unit the index does not hold
            del self.units[unit.id]
            raise
        self._index(unit)

    def vector(self, uid: str) -> np.ndarray:
        """The unit's vector (dim,), float32, read from the index that searches it (its one owner)."""
        return self.vectors([uid])[0]

    @locked  # a unit moving between tiers is in neither for a moment: a reader without the lock missed it
    def vectors(self, ids: Sequence[str]) -> np.ndarray:
        """The units' vectors (n, dim), float32, read from the index."""
        return self.tiers.get_vectors(list(ids)) if len(ids) else np.zeros((0, self.dim), np.float32)

    def record_of(self, unit: MemoryUnit) -> MemoryRecord:
        """The unit as the store sees it (a summary, or a unit loaded from an older bank)."""
        sets = self.store.sets_of(unit.id) if unit.id in self.store else tuple(sorted(unit.facts))
        return MemoryRecord(unit.id, unit.episode_id, unit.step, unit.kind, unit.phase, unit.text, unit.content,
                            (), tuple(sets), opens_task=unit.opens_task)

    @locked
    def set_embedding(self, uid: str, vector: np.ndarray) -> None:
        """Replace a unit's vector and text in the store (a summary re-encoded after it absorbed more facts)."""
        v = self.check_vector(vector, uid)
        tier = self.tiers.tier_of(uid) or WORKING
        self.store.update(self.record_of(self.units[uid]), v)
        if tier == LONGTERM:
            self.tiers.move([uid], LONGTERM)

    @locked
    def remove(self, uid: str, heir: str | None = None) -> None:
        """Delete a unit; the graph is repaired and the unit's roles (slot source) pass to ``heir``."""
        unit = self.units[uid]
        if self.last_unit.get(unit.episode_id) == uid:
            preds = [s for k, s in self.graph.in_edges(uid) if k == "temporal_next"]
            if preds:
                self.last_unit[unit.episode_id] = preds[0]
            else:
                del self.last_unit[unit.episode_id]
        for kind, other in self.graph.out_edges(uid):  # what it corrected stays corrected: by its heir now, else
            u = self.units.get(other)  # by what corrected it in turn; else the pruned id stays (the mark matters)
            if kind == "corrects" and u is not None and u.superseded_by == uid:
                later = heir if heir is not None and heir != other else unit.superseded_by
                u.superseded_by = later if later is not None and later in self.units and later != other else uid
        self.graph.detach(uid, heir)
        self.store.delete([uid])
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

    @locked
    def touch(self, ids: list[str]) -> None:
        """Count an access (a retrieval) of each unit."""
        for uid in ids:
            if uid in self.units:
                self.units[uid].access_count += 1
                self.units[uid].last_access = self.clock

    def _index(self, unit: MemoryUnit) -> None:
        self.by_phase.setdefault((unit.episode_id, unit.phase), set()).add(unit.id)

    def check_vector(self, vector, uid: str) -> np.ndarray:
        """``vector`` as the bank stores it (float32, dim), or ValueError naming the memory: checked before a
        writer changes anything (BankRules.observe)."""
        if vector is None:
            raise ValueError(f"memory {uid!r} has no embedding; encode it before adding it to the bank")
        v = np.asarray(vector, np.float32).reshape(-1)
        if v.shape[0] != self.dim:
            raise ValueError(f"memory {uid!r} has an embedding of dim {v.shape[0]}, the bank has dim {self.dim}")
        if not np.isfinite(v).all():
            raise ValueError(f"memory {uid!r} has NaN or inf in its embedding; fix the encoder output")
        return v

    # -- search
    @locked
    def search(self, query: np.ndarray, k: int = 5, expand: bool | None = None,
               needs: Sequence[str] = (), episode_id: str | None = None,
               before: tuple[str, int] | None = None) -> list[Hit]:
        """The top-k units for a query vector (of ``episode_id`` only, when given): the store's search with the
        bank's priors, then expansion. ``before``: the query's (episode, step); that episode's units at or after the
        step are neither hits nor reached by expansion (MemoryStore.search_vector's rule).

        Priors are a re-rank score in the store's units (inner product): with ``temperature`` T, a unit gains
        T·(``importance_weight``·log(importance relative to the best candidate's) + log(``superseded_factor``)
        if its facts were all corrected) — the logit priors of a retriever trained with an InfoNCE softmax at
        temperature T. ``needs`` (the state's open slots) feed the store's needed-slot match.

        Expansion (``expand``) walks typed edges from the top-k hits: a unit reached from a hit with score
        s_best at path weight w (edge weights · hop_decay^(hop-1), times ``off_need_factor`` when the unit holds
        the current value of none of the needed slots: the bank's slot table, which knows the corrections the
        store's slot match cannot) scores s_best + T·log(w) + its priors, and is placed where that score falls
        among the hits (each hit keeps at least its place in the store's order); such a hit says
        ``via="graph"`` and its ``edge`` (type, the unit it was reached from), its ``index_score`` is q·m and its
        ``rerank_bonus`` the rest of the path's score.
        """
        cfg = self.config
        q = self.check_vector(query, "<query>")
        check_k(k)
        ref: dict[str, float] = {}  # the best importance among the candidates: every prior is relative to it

        def prior(ids: list) -> np.ndarray:
            values, top = self._prior(ids, ref.get("top"))
            ref.setdefault("top", top)
            return values

        has_prior = self._has_prior()
        hits = self.store.search_vector(q, k, needs, episode_id=episode_id, prior=prior if has_prior else None,
                                        before=before)
        if not hits:
            return []
        out = list(hits)
        if not (cfg.expand if expand is None else expand):
            return out
        t = cfg.temperature
        own = prior([h.id for h in hits]) if has_prior else np.zeros(len(hits))
        raw = [h.score - p for h, p in zip(hits, own)]  # what the hits score before the priors
        best = max(raw)
        seeds = {h.id: math.exp((r - best) / t) for h, r in zip(hits, raw)}
        wanted = set(needs)
        node_weight = None
        if wanted:  # the bank's slot table knows which unit holds a slot's current value (after corrections)
            def node_weight(uid: str) -> float:
                return 1.0 if any(self.holds(uid, s) for s in wanted) else cfg.off_need_factor
        late = self.store.late(before)
        allowed = None if episode_id is None and late is None else (
            lambda uid: (episode_id is None or self.units[uid].episode_id == episode_id) and not (late and late(uid)))
        reached = self.graph.expand(seeds, cfg.edge_weights, cfg.hop_decay, cfg.max_hops, cfg.max_expanded, node_weight,
                                    allowed)  # an episode's search walks its own units only (shared values link across)
        if not reached:
            return out
        extra = dict(zip(reached, prior(list(reached)))) if has_prior else {}
        keyed: dict[str, tuple[float, int, Hit]] = {}
        floor = math.inf
        for n, h in enumerate(out):  # a hit's key: its score, never above the hit before it (store order kept)
            floor = min(floor, h.score)
            keyed[h.id] = (floor, n, h)
        for uid, (rel, kind, frm) in reached.items():
            key = best + t * math.log(rel) + extra.get(uid, 0.0)
            if uid in keyed and keyed[uid][0] >= key:
                continue
            found = keyed[uid][2] if uid in keyed else self.store.get(uid)
            sim = found.index_score if uid in keyed else float(np.dot(self.vector(uid), q))
            keyed[uid] = (key, len(out) + len(keyed), dataclasses.replace(
                found, score=key, index_score=sim, rerank_bonus=key - sim, via="graph", edge=(kind, frm)))
        ranked = sorted(keyed.values(), key=lambda x: (-x[0], x[1]))
        return [h for _, _, h in ranked[:k]]

    def _has_prior(self) -> bool:
        cfg = self.config
        return cfg.importance_weight > 0 or cfg.superseded_factor < 1

    def _prior(self, ids: list, top: float | None = None) -> tuple[np.ndarray, float]:
        """The bank's priors of the units ``ids`` in score units (see :meth:`search`), relative to the best
        importance ``top`` (default: the best among ``ids``); and that reference."""
        cfg = self.config
        out = np.zeros(len(ids), np.float64)
        if cfg.superseded_factor < 1:
            out += np.array([math.log(max(cfg.superseded_factor, 1e-12)) if self.units[u].superseded_by else 0.0
                             for u in ids])
        imp = np.array([self.importance(u) for u in ids], np.float64)
        ref = float(imp.max()) if top is None and len(ids) else (top or 0.0)
        if cfg.importance_weight > 0 and len(ids) and ref > 0:
            out += cfg.importance_weight * np.log(np.clip(imp / ref, 1e-12, 1.0))  # never above the best candidate
        return cfg.temperature * out, ref

    # -- persistence
    @locked
    def save(self, path: str | Path) -> Path:
        """Write the bank to one file atomically: the previous file stays valid until the rename (and what
        killed saves left next to it is removed)."""
        target = Path(path)
        if target.is_file() and target.stat().st_size and not _is_bank(target):
            raise SAMFileError(f"{target}: this file is not a memory bank; save the bank to a new path (a save "
                               "replaces only a bank file)")
        units = list(self.units.values())
        emb = self.vectors([u.id for u in units])
        openings = self.store.keeps_openings  # each unit's opens_task, where the bank's model reads it (SAMMemory)
        meta = {
            "format": FORMAT, "version": VERSION, "dim": self.dim, "config": self.config.to_json(),
            "clock": self.clock, "units": [u.to_json(openings) for u in units],
            "longterm": [u.id for u in units if self.tiers.tier_of(u.id) == LONGTERM],
            "slots": self.slots, "last_unit": self.last_unit,
            "last_state": {ep: s.to_json() for ep, s in self.last_state.items()},
            "entity_index": self.entity_index,
            "store": self.store.state_dict(),
        }
        probe = self._probe()
        if probe is not None:
            meta["encoder_probe"] = probe
        with atomic_path(path) as tmp, open(tmp, "wb") as fh:
            _write(fh, meta, emb)
        return Path(path)

    def _probe(self) -> list | None:
        """What the model makes of three fixed memories, which a load checks its model by: the serving encoder's,
        else the probe this bank was loaded with (a bank loaded, pruned and saved again without its model still
        holds that model's vectors: dropping the probe let any other model search them unchecked)."""
        if self.encoder is not None:
            return self.store.encoder_probe(self.encoder).tolist()
        return self.saved_probe

    @classmethod
    def load(cls, path: str | Path) -> MemoryBank:
        """Read a bank written by :meth:`save`; a missing or damaged file raises SAMFileError."""
        p = require_file(path, "memory bank", "give a file written by MemoryBank.save")
        clean_stale(p.parent)  # leftovers of killed saves, when no other process holds the folder
        fix = "restore the previous bank file or rebuild the bank from the agent log"
        if not zipfile.is_zipfile(p):  # np.load would hand back a bare array (a .npy) or a pickle's complaint
            raise SAMFileError(f"{p}: not a memory bank file (a bank is the .npz archive MemoryBank.save writes; "
                               f"this is not one, or is cut short); {fix}")
        try:
            with NPY_LOCK, np.load(p, allow_pickle=False) as z:  # headers parsed with ast (sam_model.io.NPY_LOCK)
                meta = json.loads(z["meta"].tobytes().decode("utf-8"))
                emb = np.asarray(z["embeddings"], np.float32)
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, RecursionError) as exc:
            raise SAMFileError(f"{p}: not a readable memory bank ({str(exc)[:160]}); {fix}") from None
        if not isinstance(meta, dict) or meta.get("format") != FORMAT:
            raise SAMFileError(f"{p}: not a memory bank file (format {meta.get('format')!r}); {fix}")
        version = meta.get("version")
        if version not in (1, 2, VERSION):
            raise SAMFileError(f"{p}: memory bank version {version!r}, this code reads 1 to {VERSION}; save it again "
                               "with the sam_model that wrote it, or rebuild the bank from the agent log")
        try:
            store_cfg = StoreConfig.from_dict(meta["store"]["config"], "store.config") if version >= 2 else None
            bank = cls(int(meta["dim"]), MemoryConfig.from_json(meta["config"], f"{p}: config"), store_cfg)
            if emb.shape != (len(meta["units"]), bank.dim):
                raise ValueError(f"embeddings have shape {emb.shape}, expected ({len(meta['units'])}, {bank.dim})")
            longterm = set(meta["longterm"])
            units = [MemoryUnit.from_json(u) for u in meta["units"]]
            row = {u.id: i for i, u in enumerate(units)}
            for u in units:
                bank.units[u.id] = u
                bank._index(u)
            bank.graph = MemoryGraph(bank.units)
            if version >= 2:
                for tier in (WORKING, LONGTERM):
                    tier_units = [u for u in units if (u.id in longterm) == (tier == LONGTERM)]
                    if tier_units:
                        bank.tiers.add([u.id for u in tier_units], emb[[row[u.id] for u in tier_units]],
                                       [u.episode_id for u in tier_units], tier)
                bank.store.load_state_dict(meta["store"])
                if version == 2:  # the bank kept the recorder beside the store's (which it never fed)
                    bank.store.recorder = MemoryRecorder.from_state_dict(meta["recorder"])
            else:  # version 1: the store is rebuilt from the units (no provenance links were kept then)
                for u in sorted(units, key=lambda u: u.tick):
                    bank.store.add([bank.record_of(u)], emb[row[u.id]][None])
                lt = [u.id for u in units if u.id in longterm]
                if lt:
                    bank.tiers.move(lt, LONGTERM)
            bank.clock = int(meta["clock"])
            bank.slots = meta["slots"]
            bank.last_unit = meta["last_unit"]
            bank.last_state = {ep: State.from_json(s) for ep, s in meta["last_state"].items()}
            bank.entity_index = meta["entity_index"]
            bank.saved_probe = meta.get("encoder_probe")
        except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as exc:  # wrong types, 1e400
            raise SAMFileError(f"{p}: memory bank metadata is damaged ({exc!r}); {fix}") from None
        return bank


def _is_bank(path: Path) -> bool:
    """Whether ``path`` holds a bank file (what :meth:`MemoryBank.save` may replace: never someone's notes): a zip
    of a bank's two arrays, told from its member names alone (reading its metadata took 0.9 s at 50k units)."""
    try:
        with zipfile.ZipFile(path) as z:
            return {"meta.npy", "embeddings.npy"} <= set(z.namelist())
    except (OSError, zipfile.BadZipFile, ValueError):
        return False


def _write(fh, meta: dict, embeddings: np.ndarray) -> None:
    """The bytes of a bank file (a separate function so a test can interrupt it mid-write)."""
    payload = np.frombuffer(json.dumps(meta).encode("utf-8"), np.uint8)
    np.savez(fh, meta=payload, embeddings=embeddings)
