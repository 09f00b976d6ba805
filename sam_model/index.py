"""MemoryIndex: an inner-product FAISS index over memory vectors, with string ids and episodes.

SAM scores a memory as v_sᵀ W_s v_m = q_sᵀ v_m, so every index here uses the inner
product (never L2 or cosine): the query carries the state-dependent projection and
the index over v_m stays state-independent.

Three kinds, one API:

- ``flat``  exact search (``IndexIDMap2(IndexFlatIP)``); the reference.
- ``ivf``   ``IndexIVFFlat`` with ``nlist`` lists, ``nprobe`` probed per query. It needs
  training, so adds are buffered in an exact flat index until there are enough vectors
  (≥ 39·nlist; with ``nlist=None`` that is nlist ≈ 4·√n, i.e. ≈ 24k vectors) and then
  trained on them; small banks therefore work and are searched exactly.
- ``hnsw``  ``IDMap2(IndexHNSWFlat)``. HNSW graphs cannot delete nodes, so ``remove``
  *tombstones* them: removed ids stay in the graph, are filtered out of every search
  with an ``IDSelectorNot``, and the graph is rebuilt from the live vectors once the
  tombstones outnumber the live memories (or on ``compact()``).

Episode scope (``search(..., episode_id=...)``) passes an ``IDSelectorBatch`` of that
episode's ids to FAISS (``SearchParameters.sel``), so filtering happens inside the
search rather than on a global top-k. Approximate kinds can still come back short when
the episode is a tiny part of a large bank (the IVF probes or HNSW walk never reach its
vectors); such rows are redone exactly over the episode's vectors, which are few.

Memory: vectors live once, inside the FAISS index (4·dim bytes each; HNSW adds ~8·M bytes
of graph); ``get_vectors`` reconstructs them from it instead of keeping a copy. Python
metadata costs roughly 200 bytes per memory (id, episode, dict entries).

GPU: with a CUDA build of FAISS (``faiss.get_num_gpus() > 0``) and ``device != "cpu"``,
flat and IVF keep a search replica on the GPU for unscoped searches; the CPU index stays
the master copy (it is what scoped searches, reconstruction and ``save`` use). HNSW has
no GPU version and stays on the CPU.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import uuid
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

try:
    import faiss
except ImportError as exc:  # neither extra installed
    raise ImportError("sam_model needs FAISS: pip install 'sam_model[cpu]' (faiss-cpu), or on a CUDA 12 machine "
                      "'sam_model[gpu]' (faiss-gpu-cu12, instead of faiss-cpu: both ship the faiss module)") from exc

from sam_model.io import (
    SAMFileError,
    atomic_dir,
    atomic_write_text,
    check_digest,
    file_sha256,
    read_format_json,
    reading,
    safe_name,
)
from sam_model.limits import check_int, check_k
from sam_model.locking import locked, new_lock

log = logging.getLogger(__name__)

MemoryId = str | int
KINDS = ("flat", "ivf", "hnsw")
FORMAT = "sam_model.MemoryIndex"
FORMAT_VERSION = 1
META_FILE = "meta.json"
MAX_ID_GAP = 10_000_000  # how far a saved next_id may pass the largest internal id in use (deleted ones between)
MAX_INDEX_PARAM = 1 << 20  # nlist, nprobe, M, efSearch, efConstruction: far above any useful value
MIN_POINTS_PER_LIST = 39  # FAISS warns below this many training points per IVF list
TRAIN_POINTS_PER_LIST = 64  # k-means sample cap: more points per list barely helps, costs minutes at 1M
SMALL_SCOPE = 2048  # scopes of at most this many memories (and an eighth of the index) ranked from their own vectors


def tune_blas_threshold(threads: int | None = None) -> int:
    """Let FAISS use BLAS for batched exact search on hosts with few threads; returns the value set.

    FAISS 1.15 switches from its per-query SIMD scan to BLAS only when nq·d ≥ 128000 (tuned
    for many cores). With 1–2 threads BLAS wins from nq·d ≈ 800 per thread (faiss PR #5109):
    a batch of 64 queries at d=384 runs ~7× faster through BLAS on a 2-core host. This is a
    process-wide FAISS setting, so the library never calls it on its own; CLIs and servers may.
    """
    threads = threads or faiss.omp_get_max_threads()
    value = 800 * max(1, threads)
    faiss.cvar.distance_compute_blas_threshold = value
    return value


def auto_nlist(n: int) -> int:
    """The default number of IVF lists for n vectors: ≈ 4·√n."""
    return max(1, round(4 * math.sqrt(n)))


def faiss_build() -> str:
    """The installed FAISS: its distribution (faiss-cpu or faiss-gpu-*), version and the GPUs it sees."""
    from importlib import metadata

    dists = [d for d in ("faiss-cpu", "faiss-gpu-cu12", "faiss-gpu-cu11", "faiss-gpu") if _installed(metadata, d)]
    gpus = faiss.get_num_gpus() if hasattr(faiss, "get_num_gpus") else 0
    return f"{'+'.join(dists) or 'faiss'} {getattr(faiss, '__version__', '?')} ({gpus} GPU{'s' * (gpus != 1)})"


def _installed(metadata, name: str) -> bool:
    try:
        metadata.version(name)
    except metadata.PackageNotFoundError:
        return False
    return True


class MemoryIndex:
    """Maps memory ids (str or int) to vectors and answers top-k inner-product queries."""

    def __init__(
        self,
        dim: int,
        kind: str = "flat",
        nlist: int | None = None,
        nprobe: int = 32,
        M: int = 32,
        ef_search: int = 64,
        ef_construction: int = 80,
        device: str | None = None,
    ):
        if not isinstance(dim, (int, np.integer)) or dim < 1:
            raise ValueError(f"index dim must be a positive int, got {dim!r}")
        self.check_config({"kind": kind, "nlist": nlist, "nprobe": nprobe, "M": M, "ef_search": ef_search,
                           "ef_construction": ef_construction})
        self.dim, self.kind = int(dim), kind
        self.nlist, self.nprobe, self.M = nlist, int(nprobe), int(M)
        self.ef_search, self.ef_construction = int(ef_search), int(ef_construction)
        self.trained = kind != "ivf"
        self.lock = new_lock()  # one caller at a time: FAISS releases the GIL (sam_model.locking)
        self._index = self._new_index()  # CPU master copy
        # Metadata, indexed by internal int64 id (never reused; None once removed).
        self._ext: list[MemoryId | None] = []
        self._episode: list[Any] = []
        self._by_ext: dict[MemoryId, int] = {}
        self._by_episode: dict[Any, set[int]] = {}
        self._tombstones: set[int] = set()  # hnsw only: removed but still in the graph
        self._tomb_sel: tuple | None = None
        self._gpu, self._gpu_res, self._gpu_stale, self._gpu_device = None, None, False, 0
        self._use_gpu = self._pick_device(device)
        self._sync_gpu()

    @staticmethod
    def check_config(cfg: Any, where: str = "index") -> None:
        """Raise ValueError naming ``<where>.<key>`` for an unknown key or a value out of range."""
        if not isinstance(cfg, dict):
            raise ValueError(f"field '{where}' must be an object such as {{\"kind\": \"flat\"}}, got {cfg!r}")
        allowed = {"kind", "nlist", "nprobe", "M", "ef_search", "ef_construction", "device"}
        unknown = sorted(set(cfg) - allowed)
        if unknown:
            raise ValueError(f"field '{where}' has unknown key(s) {unknown}; allowed: {sorted(allowed)}")
        if cfg.get("kind", "flat") not in KINDS:
            raise ValueError(f"field '{where}.kind' must be one of {KINDS}, got {cfg.get('kind')!r}")
        for name in ("nprobe", "M", "ef_search", "ef_construction", "nlist"):
            if name in cfg and not (name == "nlist" and cfg[name] is None):
                check_int(cfg[name], f"field '{where}.{name}'", 1, MAX_INDEX_PARAM)

    @classmethod
    def from_config(cls, dim: int, cfg: dict | None, where: str = "index") -> MemoryIndex:
        """Build from a config dict such as ``{"kind": "ivf", "nprobe": 32}`` (checked: errors name ``where``)."""
        cfg = dict(cfg or {})
        cls.check_config(cfg, where)
        return cls(dim, **cfg)

    def config(self) -> dict:
        """The constructor arguments (minus device), as saved in the metadata."""
        return {"kind": self.kind, "nlist": self.nlist, "nprobe": self.nprobe, "M": self.M,
                "ef_search": self.ef_search, "ef_construction": self.ef_construction}

    # ---- construction -------------------------------------------------------------------

    def _new_index(self) -> faiss.Index:
        """An empty index of our kind; for an untrained IVF, the exact buffer."""
        if self.kind == "hnsw":
            hnsw = faiss.IndexHNSWFlat(self.dim, self.M, faiss.METRIC_INNER_PRODUCT)
            hnsw.hnsw.efConstruction = self.ef_construction
            hnsw.hnsw.efSearch = self.ef_search
            return faiss.IndexIDMap2(hnsw)
        return faiss.IndexIDMap2(faiss.IndexFlatIP(self.dim))

    @locked
    def train(self, vectors: np.ndarray) -> None:
        """Train the IVF quantizer on ``vectors`` and move any buffered memories into it.

        Called automatically once enough memories were added; call it yourself to train on
        a representative sample before the bank fills. A no-op for flat and hnsw.
        """
        if self.kind != "ivf":
            return
        if self.trained:
            raise ValueError("this IVF index is already trained; build a new MemoryIndex to retrain")
        x = self._check_vectors(vectors, "training vectors")
        nlist = self.nlist or auto_nlist(len(x))
        if len(x) < nlist:
            raise ValueError(f"IVF training needs at least nlist={nlist} vectors, got {len(x)}")
        if len(x) < MIN_POINTS_PER_LIST * nlist:
            log.warning("training IVF with %d vectors for %d lists (< %d per list): lists will be poor",
                        len(x), nlist, MIN_POINTS_PER_LIST)
        cap = TRAIN_POINTS_PER_LIST * nlist
        if len(x) > cap:  # k-means on a sample: same quality, a fraction of the time
            x = x[np.random.default_rng(0).choice(len(x), cap, replace=False)]
        ivf = faiss.IndexIVFFlat(faiss.IndexFlatIP(self.dim), self.dim, nlist, faiss.METRIC_INNER_PRODUCT)
        ivf.cp.max_points_per_centroid = TRAIN_POINTS_PER_LIST
        ivf.train(x)
        ivf.set_direct_map_type(faiss.DirectMap.Hashtable)  # reconstruct + remove by id
        ivf.nprobe = self.nprobe
        buffer = self._index
        live = self._live_internal()
        if len(live):
            ivf.add_with_ids(buffer.reconstruct_batch(live), live)
        self._index, self.nlist, self.trained = ivf, nlist, True
        log.info("trained IVF index: nlist=%d on %d vectors, moved %d buffered memories",
                 nlist, len(x), len(live))
        self._gpu_stale = True
        self._sync_gpu()

    # ---- device -------------------------------------------------------------------------

    def _pick_device(self, device: str | None) -> bool:
        """Whether flat/ivf get a GPU replica; logs the choice."""
        n_gpus = faiss.get_num_gpus() if hasattr(faiss, "get_num_gpus") else 0
        wants = device is None or str(device).startswith(("cuda", "gpu"))
        if device is not None and not wants and str(device) != "cpu":
            raise ValueError(f"index device must be None, 'cpu' or 'cuda[:N]', got {device!r}")
        if wants and self.kind == "hnsw":
            log.info("MemoryIndex(hnsw): FAISS has no GPU HNSW, searching on CPU")
            return False
        if wants and n_gpus > 0:
            self._gpu_device = int(str(device).split(":")[1]) if device and ":" in str(device) else 0
            log.info("MemoryIndex(%s): GPU search replica on cuda:%d", self.kind, self._gpu_device)
            return True
        if device is not None and wants:
            log.warning("MemoryIndex: device %r asked for but FAISS sees no GPU; using CPU", device)
        else:
            log.info("MemoryIndex(%s): searching on CPU (%s)", self.kind, faiss_build())
        return False

    @property
    def device(self) -> str:
        return f"cuda:{self._gpu_device}" if self._use_gpu else "cpu"

    @property
    def backend(self) -> str:
        """Which FAISS this index runs on: the package and version, GPUs seen, and where it searches."""
        return f"{faiss_build()}, searching on {self.device}"

    def _sync_gpu(self) -> None:
        """(Re)build the GPU replica if it is stale. Untrained IVF buffers stay on CPU."""
        if not self._use_gpu or not self.trained:
            self._gpu = None
            return
        if self._gpu is not None and not self._gpu_stale:
            return
        try:
            if self._gpu_res is None:
                self._gpu_res = faiss.StandardGpuResources()
            self._gpu = faiss.index_cpu_to_gpu(self._gpu_res, self._gpu_device, self._index)
            self._gpu_stale = False
        except (RuntimeError, AttributeError) as err:
            log.warning("MemoryIndex: could not copy the %s index to GPU (%s); using CPU", self.kind, err)
            self._use_gpu, self._gpu = False, None

    # ---- validation ---------------------------------------------------------------------

    def _check_vectors(self, vectors: Any, what: str) -> np.ndarray:
        x = np.asarray(vectors, dtype=np.float32)
        if x.ndim != 2:
            raise ValueError(f"{what} must be a 2-D array (n, {self.dim}), got shape {x.shape}")
        if x.shape[1] != self.dim:
            raise ValueError(f"{what} have dim {x.shape[1]} but this index has dim {self.dim}")
        finite = np.isfinite(x).all(axis=1)
        if not finite.all():
            row = int(np.flatnonzero(~finite)[0])
            raise ValueError(f"{what} contain NaN or inf (first at row {row}); fix the encoder output")
        return np.ascontiguousarray(x)

    @staticmethod
    def _check_id(i: Any) -> MemoryId:
        if isinstance(i, (bool, np.bool_)) or not isinstance(i, (str, int, np.integer)):
            raise TypeError(f"memory ids must be str or int, got {i!r} ({type(i).__name__})")
        return int(i) if isinstance(i, np.integer) else i

    @staticmethod
    def _check_episode(ep: Any) -> str | int | None:
        """An episode as this index keeps it: what its save writes and its load reads back (a string, an integer or
        None). A bool was a dict key equal to 1 here but another payload value in Qdrant, and its save did not load."""
        if isinstance(ep, (bool, np.bool_)) or not (ep is None or isinstance(ep, (str, int, np.integer))):
            raise TypeError(f"episode ids must be str, int or None, got {str(ep)[:40]!r} ({type(ep).__name__})")
        return int(ep) if isinstance(ep, np.integer) else ep

    def _internal(self, i: Any) -> int:
        key = self._check_id(i)
        if key not in self._by_ext:
            raise KeyError(f"memory id {key!r} is not in the index")
        return self._by_ext[key]

    def _live_internal(self) -> np.ndarray:
        return np.fromiter(self._by_ext.values(), dtype=np.int64, count=len(self._by_ext))

    # ---- mutation -----------------------------------------------------------------------

    @locked
    def add(self, ids: Sequence[MemoryId], vectors: np.ndarray,
            episode_ids: Sequence[Any] | str | None = None) -> None:
        """Add memories. ``episode_ids`` is one episode for all, one per memory, or None (no episode)."""
        keys = [self._check_id(i) for i in ids]
        x = self._check_vectors(vectors, "memory vectors")
        if len(keys) != len(x):
            raise ValueError(f"add got {len(keys)} ids but {len(x)} vectors")
        if episode_ids is None or isinstance(episode_ids, str):
            episodes = [episode_ids] * len(keys)
        else:
            episodes = [self._check_episode(ep) for ep in episode_ids]
            if len(episodes) != len(keys):
                raise ValueError(f"add got {len(keys)} ids but {len(episodes)} episode_ids")
        seen: set[MemoryId] = set()
        for key in keys:
            if key in self._by_ext or key in seen:
                raise ValueError(f"duplicate memory id {key!r}: ids must be unique (remove it first to replace it)")
            seen.add(key)
        if not keys:
            return
        start = len(self._ext)
        internal = np.arange(start, start + len(keys), dtype=np.int64)
        if not self.trained:
            n_after = self._index.ntotal + len(x)
            if n_after >= MIN_POINTS_PER_LIST * (self.nlist or auto_nlist(n_after)):
                # Train on buffer + this batch (a big first add trains on itself, no buffer copy).
                buffered = self._index.reconstruct_batch(self._live_internal()) if len(self) else None
                self.train(x if buffered is None else np.concatenate([buffered, x]))
        self._index.add_with_ids(x, internal)
        if self._gpu is not None and not self._gpu_stale:
            try:
                self._gpu.add_with_ids(x, internal)
            except RuntimeError:
                self._gpu_stale = True
        for n, key, ep in zip(internal.tolist(), keys, episodes):
            self._ext.append(key)
            self._episode.append(ep)
            self._by_ext[key] = n
            if ep is not None:
                self._by_episode.setdefault(ep, set()).add(n)

    @locked
    def remove(self, ids: Iterable[MemoryId]) -> None:
        """Remove memories by id; all-or-nothing (an unknown id raises KeyError, nothing is removed)."""
        internal = sorted({self._internal(i) for i in ids})
        if not internal:
            return
        arr = np.asarray(internal, dtype=np.int64)
        if self.kind == "hnsw":
            self._tombstones.update(internal)
            self._tomb_sel = None
        elif self.kind == "ivf" and self.trained:
            self._index.remove_ids(faiss.IDSelectorArray(arr))  # hashtable direct map wants an array
        else:
            self._index.remove_ids(faiss.IDSelectorBatch(arr))
        for n in internal:
            key, ep = self._ext[n], self._episode[n]
            del self._by_ext[key]
            self._ext[n] = self._episode[n] = None
            if ep is not None:
                members = self._by_episode[ep]
                members.discard(n)
                if not members:
                    del self._by_episode[ep]
        self._gpu_stale = self._gpu is not None
        if self.kind == "hnsw" and len(self._tombstones) > max(1024, len(self)):
            self.compact()

    @locked
    def compact(self) -> None:
        """Rebuild an HNSW graph from its live vectors, dropping tombstones (no-op otherwise)."""
        if self.kind != "hnsw" or not self._tombstones:
            return
        live = self._live_internal()
        x = self._index.reconstruct_batch(live) if len(live) else np.zeros((0, self.dim), np.float32)
        log.info("compacting HNSW index: %d live, %d tombstones", len(live), len(self._tombstones))
        self._index = self._new_index()
        if len(live):
            self._index.add_with_ids(x, live)
        self._tombstones.clear()
        self._tomb_sel = None

    # ---- queries ------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._by_ext)

    def __contains__(self, i: object) -> bool:
        return i in self._by_ext

    @locked
    def ids(self) -> list[MemoryId]:
        """Live memory ids in insertion order."""
        return [k for k in self._ext if k is not None]

    @locked
    def episode_of(self, i: MemoryId) -> Any:
        return self._episode[self._internal(i)]

    @locked
    def get_vectors(self, ids: Sequence[MemoryId]) -> np.ndarray:
        """The stored vectors of ``ids``, (n, dim) float32, reconstructed from the index."""
        internal = np.asarray([self._internal(i) for i in ids], dtype=np.int64)
        if not len(internal):
            return np.zeros((0, self.dim), np.float32)
        return self._index.reconstruct_batch(internal)

    @locked
    def search(self, queries: np.ndarray, k: int, episode_id: Any | Sequence[Any] | None = None,
               within: Iterable[MemoryId] | None = None) -> tuple[list[list[MemoryId | None]], np.ndarray]:
        """Top-k memories by inner product for each query.

        ``episode_id``: None (whole bank), one episode for all queries, or a list with one
        entry per query (entries may be None). ``within``: only these memory ids (for every
        query; with an episode, its members among them), filtered inside the search like an
        episode. Rows with fewer than k results are padded with id None and score -inf.
        Returns (ids, scores) with scores of shape (n, k).
        """
        k = check_k(k)  # rows are padded to k: an unbounded k allocates without bound
        q = np.asarray(queries, dtype=np.float32)
        q = self._check_vectors(q[None, :] if q.ndim == 1 else q, "queries")
        n, k = len(q), int(k)
        if episode_id is None or isinstance(episode_id, (str, int, np.integer, np.bool_, float)):
            groups = {self._check_episode(episode_id): np.arange(n)}
        else:
            per_query = [self._check_episode(ep) for ep in episode_id]
            if len(per_query) != n:
                raise ValueError(f"episode_id has {len(per_query)} entries but there are {n} queries")
            groups = {}
            for row, ep in enumerate(per_query):
                groups.setdefault(ep, []).append(row)
        subset = None if within is None else {self._by_ext[i] for i in within if i in self._by_ext}
        labels = np.full((n, k), -1, dtype=np.int64)
        scores = np.full((n, k), -np.inf, dtype=np.float32)
        for ep, rows in groups.items():
            rows = np.asarray(rows, dtype=np.int64)
            lab, sc = self._search_scope(q[rows], k, ep, subset)
            labels[rows, : lab.shape[1]] = lab
            scores[rows, : sc.shape[1]] = sc
        out = [[self._ext[j] if j >= 0 else None for j in row] for row in labels.tolist()]
        return out, scores

    def _search_scope(self, q: np.ndarray, k: int, episode: Any,
                      subset: set[int] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Internal labels (-1 = none) and scores for queries restricted to one scope (and a subset)."""
        if episode is None:
            members, size = None, len(self)
        else:
            members = self._by_episode.get(episode)
            size = len(members) if members else 0
        if subset is not None:
            members = subset if members is None else subset & members
            size = len(members)
        kk = min(k, size)
        if kk == 0:
            return np.full((len(q), 0), -1, np.int64), np.zeros((len(q), 0), np.float32)
        member_arr = None if members is None else np.sort(np.fromiter(members, np.int64, len(members)))
        if member_arr is not None and len(member_arr) <= SMALL_SCOPE and 8 * len(member_arr) <= self._index.ntotal:
            return self._exact_among(q, member_arr, kk)
        if member_arr is not None:
            sel = faiss.IDSelectorBatch(member_arr)
        elif self._tombstones:
            sel = self._tombstone_selector()
        else:
            sel = None
        if sel is None and self._use_gpu and kk <= 2048:
            self._sync_gpu()
        if sel is None and self._gpu is not None and kk <= 2048:
            with contextlib.suppress(AttributeError):
                self._gpu.nprobe = self.nprobe
            dist, lab = self._gpu.search(q, kk)
        else:
            dist, lab = self._index.search(q, kk, params=self._params(sel))
        dist = np.where(lab >= 0, dist, -np.inf).astype(np.float32)
        if member_arr is not None:  # approximate kinds can miss a small episode: redo those rows exactly
            short = np.flatnonzero((lab >= 0).sum(axis=1) < kk)
            if len(short):
                vecs = self._index.reconstruct_batch(member_arr)
                s = q[short] @ vecs.T
                top = np.argsort(-s, axis=1, kind="stable")[:, :kk]
                lab[short] = member_arr[top]
                dist[short] = np.take_along_axis(s, top, axis=1)
        return lab, dist

    def _exact_among(self, q: np.ndarray, members: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Exact top-``k`` of ``q`` among a few ``members`` (internal ids, ascending): their own vectors' inner
        products. A search with an id selector visits every vector of the index to test its id (FAISS flat, dim
        672: 0.35 ms for a scope of 100 among 100,000 memories, against 0.04 ms here), and a served search is
        almost always one user's scope; exact on every kind, so an approximate index misses nothing in it.
        Ties keep the lower internal id first, as FAISS's flat scan does."""
        vecs = self._index.reconstruct_batch(members)
        s = q @ vecs.T
        top = np.argsort(-s, axis=1, kind="stable")[:, :k]
        return members[top], np.take_along_axis(s, top, axis=1).astype(np.float32)

    def _tombstone_selector(self) -> faiss.IDSelector:
        """NOT(tombstones), cached until the next remove or compact (building it is O(#tombstones))."""
        if self._tomb_sel is None:
            batch = faiss.IDSelectorBatch(np.fromiter(self._tombstones, np.int64, len(self._tombstones)))
            self._tomb_sel = (faiss.IDSelectorNot(batch), batch)  # batch kept alive: NOT points to it
        return self._tomb_sel[0]

    def _params(self, sel: faiss.IDSelector | None) -> faiss.SearchParameters:
        """Per-call search parameters; explicit nprobe/efSearch because their defaults are not the index's."""
        if self.kind == "ivf" and self.trained:
            p = faiss.SearchParametersIVF()
            p.nprobe = self.nprobe
        elif self.kind == "hnsw":
            p = faiss.SearchParametersHNSW()
            p.efSearch = self.ef_search
        else:
            p = faiss.SearchParameters()
        if sel is not None:
            p.sel = sel
        p._sel_ref = sel  # keep the selector alive as long as the params
        return p

    # ---- persistence --------------------------------------------------------------------

    def save(self, path: str | Path) -> Path:
        """Write the index as the folder ``path`` (meta.json + index-<token>.faiss), atomically as a whole.

        The folder is built in a staging folder and swapped in last (sam_model.io.atomic_dir): a crash at
        any point leaves the previous version loadable, and concurrent saves end with one complete version.
        Anything else in ``path`` is replaced with it. The index is copied under its lock (:meth:`snapshot`)
        and written without it, so searches wait only for the copy.
        """
        folder = Path(path)
        if folder.exists() and not folder.is_dir():
            raise SAMFileError(f"memory index path {folder} is a file; MemoryIndex.save writes a folder")
        snap = self.snapshot()
        with atomic_dir(folder, META_FILE, ("index_file",)) as tmp:
            self.write_snapshot(tmp, snap)
        return folder

    @locked
    def snapshot(self) -> tuple[dict, faiss.Index]:
        """(metadata, a copy of the FAISS index) of this moment, for :meth:`write_snapshot`. ``clone_index`` is one
        copy of the vectors; serialising them here (two copies through a byte buffer) held the lock ten times as
        long."""
        live = self._live_internal()
        meta = {
            "format": FORMAT, "version": FORMAT_VERSION, "dim": self.dim, "config": self.config(),
            "trained": self.trained, "index_file": f"index-{uuid.uuid4().hex[:12]}.faiss",
            "ntotal": int(self._index.ntotal), "next_id": len(self._ext), "internal": live.tolist(),
            "ids": [self._ext[n] for n in live.tolist()],
            "episodes": [self._episode[n] for n in live.tolist()],
            "tombstones": sorted(self._tombstones),
        }
        return meta, faiss.clone_index(self._index)

    @staticmethod
    def write_snapshot(folder: Path, snap: tuple[dict, faiss.Index]) -> None:
        """Write a :meth:`snapshot` into the (staging) folder ``folder``, with the FAISS file's SHA-256 in its
        meta.json (``sha256``): bytes changed inside its vectors keep FAISS's framing, and such a file loaded, its
        searches ranked by other vectors or NaN (:meth:`_read` checks it)."""
        meta, index = snap
        faiss.write_index(index, str(folder / meta["index_file"]))
        atomic_write_text(folder / META_FILE, json.dumps({**meta, "sha256": file_sha256(folder / meta["index_file"])}))

    @classmethod
    def load(cls, path: str | Path, expected_dim: int | None = None, device: str | None = None) -> MemoryIndex:
        """Read a folder written by ``save``; every mismatch raises SAMFileError naming the file.

        The folder is held still while it is read (sam_model.io.reading): a concurrent save waits.
        """
        with reading(path) as folder:
            return cls._read(folder, expected_dim, device)

    @classmethod
    def _read(cls, folder: Path, expected_dim: int | None, device: str | None) -> MemoryIndex:
        meta_path = folder / META_FILE
        if not folder.is_dir() or not meta_path.is_file():
            raise SAMFileError(f"memory index not found: {meta_path} is missing "
                               "(give the folder written by MemoryIndex.save, or rebuild the index)")
        meta = read_format_json(meta_path, FORMAT, FORMAT_VERSION, "MemoryIndex metadata",
                                "rebuild the index with this version")
        try:
            dim, cfg, index_name = int(meta["dim"]), dict(meta["config"]), meta["index_file"]
            internal, ids, episodes = meta["internal"], meta["ids"], meta["episodes"]
            tombstones, trained, next_id = meta["tombstones"], meta["trained"], int(meta["next_id"])
            if not isinstance(trained, bool):
                raise TypeError(f"'trained' must be true or false, got {trained!r}")
        except (KeyError, TypeError, ValueError) as err:
            raise SAMFileError(f"{meta_path}: index metadata lacks or mangles {err}; rebuild the index") from err
        if expected_dim is not None and dim != expected_dim:
            raise SAMFileError(f"{meta_path}: index has dim {dim} but the model expects dim {expected_dim}; "
                               "rebuild the index with this model's encoder")
        if not all(isinstance(x, list) for x in (internal, ids, episodes, tombstones)) or \
                not (len(internal) == len(ids) == len(episodes)):
            raise SAMFileError(f"{meta_path}: ids, internal ids and episodes must be lists of one length; rebuild "
                               "the index")
        whole = (int, np.integer)
        if any(isinstance(n, bool) or not isinstance(n, whole) or not 0 <= n < next_id for n in internal + tombstones) \
                or len(set(internal) | set(tombstones)) != len(internal) + len(tombstones) \
                or next_id > max(internal + tombstones, default=-1) + 1 + MAX_ID_GAP:
            raise SAMFileError(f"{meta_path}: internal ids must be distinct integers below next_id ({next_id}), "
                               f"which may pass the largest by at most {MAX_ID_GAP:,}; rebuild the index")
        if any(isinstance(k, bool) or not isinstance(k, (str, int)) for k in ids) or len(set(ids)) != len(ids):
            raise SAMFileError(f"{meta_path}: memory ids must be distinct strings or integers; rebuild the index")
        if any(e is not None and (isinstance(e, bool) or not isinstance(e, (str, int))) for e in episodes):
            raise SAMFileError(f"{meta_path}: episodes must be strings, integers or null; rebuild the index")
        index_path = safe_name(folder, index_name, f"{meta_path}: field 'index_file'", "rebuild the index")
        if not index_path.is_file():
            raise SAMFileError(f"memory index file not found: {index_path} (named by {meta_path}); "
                               "rebuild the index")
        check_digest(index_path, meta.get("sha256"), meta_path, "sha256",
                     "restore the folder from a backup, or rebuild the index")
        try:
            index = faiss.read_index(str(index_path))
        except RuntimeError as err:
            raise SAMFileError(f"{index_path}: corrupt or not a FAISS index ({str(err).splitlines()[0][:200]}); "
                               "delete the folder and rebuild the index") from err
        if index.d != dim:
            raise SAMFileError(f"{index_path}: FAISS index has dim {index.d} but {meta_path} says {dim}; "
                               "rebuild the index")
        if index.ntotal != len(internal) + len(tombstones) or index.ntotal != meta.get("ntotal"):
            raise SAMFileError(f"{index_path}: holds {index.ntotal} vectors but {meta_path} lists "
                               f"{len(internal)} memories + {len(tombstones)} tombstones; the files are out "
                               "of sync, rebuild the index")
        expect_ivf = cfg.get("kind") == "ivf" and trained
        if isinstance(index, faiss.IndexIVF) != expect_ivf:
            raise SAMFileError(f"{index_path}: FAISS index type {type(index).__name__} does not match "
                               f"kind {cfg.get('kind')!r} in {meta_path}; rebuild the index")
        inner = faiss.downcast_index(index.index) if isinstance(index, faiss.IndexIDMap2) else index
        kind = cfg.get("kind")
        if kind == "hnsw" and not isinstance(inner, faiss.IndexHNSW) or kind == "flat" and not isinstance(
                inner, faiss.IndexFlat):
            raise SAMFileError(f"{index_path}: FAISS index type {type(inner).__name__} does not match kind {kind!r} "
                               f"in {meta_path}; rebuild the index")
        if isinstance(index, faiss.IndexIDMap2):
            stored = np.sort(faiss.vector_to_array(index.id_map))
            if not np.array_equal(stored, np.sort(np.asarray(internal + tombstones, dtype=np.int64))):
                raise SAMFileError(f"{index_path}: its ids do not match {meta_path}; rebuild the index")
        try:
            self = cls.from_config(dim, {**cfg, "device": device})
        except (TypeError, ValueError) as err:
            raise SAMFileError(f"{meta_path}: bad index config ({err}); rebuild the index") from err
        self._index, self.trained, self.nlist = index, trained, cfg.get("nlist")
        if expect_ivf:
            index.nprobe = self.nprobe
            self.nlist = index.nlist
        self._ext = [None] * next_id
        self._episode = [None] * next_id
        for n, key, ep in zip(internal, ids, episodes):
            self._ext[n], self._episode[n] = key, ep
            self._by_ext[key] = n
            if ep is not None:
                self._by_episode.setdefault(ep, set()).add(n)
        self._tombstones = set(tombstones)
        self._gpu_stale = True
        self._sync_gpu()
        return self

    def __repr__(self) -> str:
        extra = f", nlist={self.nlist}, nprobe={self.nprobe}, trained={self.trained}" if self.kind == "ivf" else ""
        if self.kind == "hnsw":
            extra = f", M={self.M}, ef_search={self.ef_search}, tombstones={len(self._tombstones)}"
        return f"MemoryIndex(dim={self.dim}, kind={self.kind!r}, size={len(self)}{extra}, device={self.device!r})"
