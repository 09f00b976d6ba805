"""QdrantIndex: the store's vectors in a Qdrant collection — embedded, or a server or cluster one URL away.

The same code runs three ways (``StoreConfig(index={"kind": "qdrant", ...})``):

- ``{"kind": "qdrant"}``: Qdrant's local mode in memory (tests, CI; gone with the process);
- ``{"kind": "qdrant", "path": "memories/qdrant"}``: local mode shared by every store of this process that names
  the same path (the engine stays in memory; see Save);
- ``{"kind": "qdrant", "url": "http://qdrant:6333"}``: a Qdrant server or cluster (API key from $QDRANT_API_KEY,
  never written to disk). Its HNSW search is approximate: ``hnsw_ef`` trades speed for recall, ``exact: true``
  asks for brute force.

Qdrant's local mode is brute force in NumPy (exact, so it ranks as FAISS ``flat`` does). Its own on-disk format
stores points as pickles in SQLite, and loading a pickle can run code, so sam_model never opens it: the embedded
engine always runs in memory, and the store's save writes its points itself (below).

Each memory is one point: id = uuid5 of the memory id (Qdrant takes only ints and UUIDs), the vector, and a
payload ``{"sam_id", "episode", "user_id", "agent_id", "run_id", "wseq"}``. The scopes are payload filters
inside Qdrant's search (``filters_scopes``: the store passes ``scopes=`` instead of an id set), so a tenant's
search never reaches another's points and a small scope is not starved by a global top-k; an explicit id set
(a metadata filter's matches) becomes a ``HasIdCondition``. The store's record decides a memory's scopes: a load
rewrites a payload that disagrees with it (``PointBook.repair_payloads``), and a search keeps only candidates the
record puts in its scope. The store re-scores and re-ranks the candidates from
``get_vectors`` (float64), so with exact search the ranking equals FAISS's (tests/test_backends.py). An add or a
remove of more than BATCH (1,024) points is several calls, all or nothing: one failing takes the others back
(sam_model.backends.points.all_or_nothing; a remove reads each batch's points before deleting it).

Save: the folder holds meta.json (the ids in write order, their episodes, the collection and ``next_wseq``); for
the embedded engine also points.npy (the vectors, float32, read with ``allow_pickle=False``) and points.json (their
payloads), from which a load rebuilds the collection exactly as saved. On a server the vectors stay in Qdrant: ``wseq`` numbers every write; loading rolls the collection back to the save by
deleting the points written after it (``wseq >= next_wseq``) but those of memories the save holds: an update is
a remove and an add, so an updated memory's point is written anew, and deleting it left the store a memory with no
vector. Those, and points of saved memories deleted since, are encoded again by the store from the saved texts
(MemoryStore.read, with its encoder; without one it warns), so a store folder and its collection agree — the
served memory (sam_model.serve) then replays its write-ahead log on top.
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import threading
import uuid
import weakref
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

try:
    from qdrant_client import QdrantClient, models
except ImportError as exc:
    raise ImportError("the Qdrant backend needs qdrant-client: pip install 'sam_model[serve]'") from exc

from sam_model.backends.kinds import QDRANT, QDRANT_FORMAT
from sam_model.backends.points import SCOPE_FIELDS, PointBook, all_or_nothing, point_id
from sam_model.index import META_FILE
from sam_model.io import (
    NPY_LOCK,
    SAMFileError,
    atomic_write_text,
    check_digest,
    file_sha256,
    read_format_json,
    reading,
)
from sam_model.limits import check_int
from sam_model.locking import locked, new_lock

log = logging.getLogger(__name__)

FORMAT_VERSION = 1
BATCH = 1024  # points per upsert / retrieve call
POINTS_FILE, PAYLOADS_FILE = "points.npy", "points.json"  # the embedded engine's points, saved by sam_model
CONFIG_KEYS = {"kind", "url", "path", "collection", "hnsw_ef", "exact", "timeout"}

URLS_ENV = "SAM_QDRANT_URLS"  # comma-separated Qdrant server URLs a saved folder may name (see trust_url)
_trusted: set[str] = set()


def trust_url(url: str) -> None:
    """Let folders loaded in this process name the Qdrant server at ``url`` (sam-serve's ``--qdrant-url`` does).

    A store config given in code connects where it says; one read from a folder (an export's config.json, an
    index's meta.json) names a URL someone else may have written, and connecting would send that server this
    process's $QDRANT_API_KEY (and let it answer for, or delete, the collection). So a URL read from a file must be
    trusted here first, or listed in $SAM_QDRANT_URLS."""
    _trusted.add(url.rstrip("/"))


def check_trusted(url: str, where: str) -> None:
    """Raise SAMFileError unless the server ``url`` (read from the file ``where``) is trusted (:func:`trust_url`)."""
    env = {u.strip().rstrip("/") for u in os.environ.get(URLS_ENV, "").split(",") if u.strip()}
    if url.rstrip("/") not in _trusted | env:
        raise SAMFileError(f"{where}: the store's vectors are in a Qdrant server at {url}, which a folder cannot "
                           f"choose to connect to (it would get your $QDRANT_API_KEY): if it is yours, list it in "
                           f"${URLS_ENV} or call sam_model.backends.qdrant.trust_url(url) before loading")


_clients: dict[tuple[str, str], tuple[QdrantClient, threading.RLock]] = {}
_clients_lock = threading.Lock()
# (client key, collection) -> the indexes of this process attached to it: an embedded collection is shared state
_live: dict[tuple[tuple[str, str], str], weakref.WeakSet] = {}
_attach_lock = threading.Lock()  # a load's look for a live holder of its collection and its attach are one step


def _client_key(url: str | None, path: str | None) -> tuple[str, str] | None:
    """The key of the shared client of a server URL or a local folder (None: a private in-memory engine)."""
    if url is None and path is None:
        return None
    return ("url", url) if url is not None else ("path", str(Path(path).resolve()))


def client_for(url: str | None, path: str | None) -> tuple[QdrantClient, threading.RLock]:
    """One client per server URL or local folder in this process (local mode locks its folder), with the lock
    that serialises calls into it (the local engine is plain Python state; a server client is locked too, which
    costs nothing next to a network round trip). In memory: a new engine each time."""
    if url is None and path is None:
        return QdrantClient(location=":memory:"), threading.RLock()
    key = _client_key(url, path)
    with _clients_lock:
        if key not in _clients:  # never QdrantClient(path=...): its files are pickles (module doc)
            client = (QdrantClient(url=url, api_key=os.environ.get("QDRANT_API_KEY") or None)
                      if url is not None else QdrantClient(location=":memory:"))
            if not _clients:
                atexit.register(close_clients)
            _clients[key] = (client, threading.RLock())
        return _clients[key]


def close_clients() -> None:
    """Close the shared clients (at exit: releases local folders while the interpreter can still do so)."""
    with _clients_lock:
        for client, lock in _clients.values():
            with lock:
                client.close()
        _clients.clear()


class QdrantIndex(PointBook):
    """MemoryIndex's API over one Qdrant collection (see the module doc)."""

    kind = QDRANT
    filters_scopes = True  # MemoryStore passes scopes= (payload filters), not the scope's id set

    def __init__(self, dim: int, url: str | None = None, path: str | None = None, collection: str | None = None,
                 hnsw_ef: int | None = None, exact: bool = False, timeout: int | None = None, *,
                 attach: bool = False):
        """A new, empty index. ``collection`` (default: a fresh ``sam_<hex>``) is created; an existing one must be
        empty unless ``attach`` (what :meth:`load` does: the save says what it holds)."""
        if not isinstance(dim, (int, np.integer)) or isinstance(dim, bool) or dim < 1:
            raise ValueError(f"index dim must be a positive int, got {dim!r}")
        self.check_config({"kind": QDRANT, "url": url, "path": path, "collection": collection, "hnsw_ef": hnsw_ef,
                           "exact": exact, "timeout": timeout})
        self.dim, self.url, self.path = int(dim), url, None if path is None else str(path)
        self.collection = collection or f"sam_{uuid.uuid4().hex[:12]}"
        self.hnsw_ef, self.exact, self.timeout = hnsw_ef, bool(exact), timeout
        self.client, self._client_lock = client_for(url, self.path)
        key = _client_key(url, self.path)
        if key is not None:
            _live.setdefault((key, self.collection), weakref.WeakSet()).add(self)
        self.lock = new_lock()  # one caller at a time (sam_model.locking)
        self._episode: dict[Any, Any] = {}  # memory id -> episode, in write order (the ids live here too)
        self._wseq = 0
        self._stale: list = []  # a server's memories whose points changed after the save loaded (take_stale)
        with self._client_lock:
            if not self.client.collection_exists(self.collection):
                self.client.create_collection(self.collection, vectors_config=models.VectorParams(
                    size=self.dim, distance=models.Distance.DOT))
                if url is not None:  # local mode has no payload indexes (and says so)
                    for name in (*SCOPE_FIELDS, "episode"):
                        self.client.create_payload_index(self.collection, name, models.PayloadSchemaType.KEYWORD)
            else:
                size = self.client.get_collection(self.collection).config.params.vectors.size
                if size != self.dim:
                    raise ValueError(f"Qdrant collection {self.collection!r} holds vectors of dim {size}, not "
                                     f"{self.dim}; choose another collection")
                if not attach and self._count() > 0:
                    raise ValueError(f"Qdrant collection {self.collection!r} already holds {self._count()} points: "
                                     "load the store saved with it (MemoryStore.load), or choose another collection")

    @staticmethod
    def check_config(cfg: Any, where: str = "index") -> None:
        """Raise ValueError naming ``<where>.<key>`` for an unknown key or a bad value."""
        PointBook.check_keys(cfg, where, QDRANT, CONFIG_KEYS, ("url", "path", "collection"))
        if cfg.get("url") is not None and cfg.get("path") is not None:
            raise ValueError(f"field '{where}': give url (a Qdrant server) or path (embedded), not both")
        c = cfg.get("collection")
        if c is not None and not all(ch.isalnum() or ch in "_-" for ch in str(c)):
            raise ValueError(f"field '{where}.collection' may hold only letters, digits, '_' and '-', got {c!r}")
        for name in ("hnsw_ef", "timeout"):
            if cfg.get(name) is not None:
                check_int(cfg[name], f"field '{where}.{name}'", 1, 1 << 20)
        PointBook.check_exact(cfg, where)

    @classmethod
    def from_config(cls, dim: int, cfg: dict | None, where: str = "index", attach: bool = False) -> QdrantIndex:
        cfg = dict(cfg or {})
        cls.check_config(cfg, where)
        cfg.pop("kind", None)
        return cls(dim, **cfg, attach=attach)

    def config(self) -> dict:
        """The constructor arguments, as saved (the collection included, so a load finds it; never an API key)."""
        return {"kind": QDRANT, "url": self.url, "path": self.path, "collection": self.collection,
                "hnsw_ef": self.hnsw_ef, "exact": self.exact, "timeout": self.timeout}

    @property
    def backend(self) -> str:
        where = self.url or (f"embedded at {self.path}" if self.path else "embedded in memory")
        return f"qdrant-client ({where}), collection {self.collection}"

    # ---- helpers ------------------------------------------------------------------------------------------

    def _count(self) -> int:
        with self._client_lock:
            return int(self.client.count(self.collection, exact=True).count)

    def _payloads(self, pids: list[str]) -> dict[str, dict]:
        """The payloads of these points (those that exist), by point id."""
        got: dict[str, dict] = {}
        with self._client_lock:
            for s in range(0, len(pids), BATCH):
                for rec in self.client.retrieve(self.collection, pids[s:s + BATCH], with_payload=True,
                                                with_vectors=False):
                    got[str(rec.id)] = dict(rec.payload or {})
        return got

    def _set_payloads(self, payloads: Mapping[str, dict]) -> None:
        """Set these fields of these points' payloads (the others, ``wseq``, kept)."""
        with self._client_lock:
            for pid, payload in payloads.items():
                self.client.set_payload(self.collection, payload, points=[pid], wait=True)

    # ---- mutation -----------------------------------------------------------------------------------------

    def train(self, vectors: np.ndarray) -> None:
        """Nothing to train (Qdrant builds its HNSW graph as points arrive)."""

    def compact(self) -> None:
        """Nothing to compact (Qdrant's optimiser vacuums deleted points itself)."""

    @locked
    def add(self, ids: Sequence[Any], vectors: np.ndarray, episode_ids: Sequence[Any] | str | None = None,
            scopes: Mapping[str, Any] | None = None) -> None:
        """Add memories; ``scopes`` (user_id, agent_id, run_id) go into every point's payload for the filters. All or
        nothing: over BATCH points the upsert is several calls, and one failing takes the others back."""
        keys, x, episodes, scope = self._checked_add(ids, vectors, episode_ids, scopes)
        points = [models.PointStruct(id=point_id(k), vector=v.tolist(),
                                     payload={"sam_id": k, "episode": ep, "wseq": self._wseq + n, **scope})
                  for n, (k, v, ep) in enumerate(zip(keys, x, episodes))]
        with self._client_lock:
            all_or_nothing(points, BATCH, lambda batch: self.client.upsert(self.collection, batch, wait=True),
                           lambda batch: self.client.delete(self.collection, models.PointIdsList(
                               points=[p.id for p in batch]), wait=True), f"Qdrant collection {self.collection}: an add")
        self._wseq += len(points)
        for k, ep in zip(keys, episodes):
            self._episode[k] = ep

    @locked
    def remove(self, ids: Iterable[Any]) -> None:
        """Remove memories by id; all-or-nothing (an unknown id raises KeyError, nothing is removed). Over BATCH
        points the delete is several calls: each batch's points are read first, and a call failing puts back the
        batches deleted before it (and its own)."""
        keys = list(dict.fromkeys(self._known(i) for i in ids))
        if not keys:
            return
        kept: dict[str, Any] = {}  # point id -> its record, read before a delete of more than one call

        def delete(batch: Sequence[str]) -> None:
            if len(keys) > BATCH:
                kept.update((str(r.id), r) for r in self.client.retrieve(self.collection, list(batch),
                                                                         with_vectors=True, with_payload=True))
            self.client.delete(self.collection, models.PointIdsList(points=list(batch)), wait=True)

        def put_back(batch: Sequence[str]) -> None:
            points = [models.PointStruct(id=r.id, vector=r.vector, payload=r.payload) for p in batch
                      if (r := kept.get(p)) is not None]
            if points:
                self.client.upsert(self.collection, points, wait=True)

        with self._client_lock:
            all_or_nothing([point_id(k) for k in keys], BATCH, delete, put_back,
                           f"Qdrant collection {self.collection}: a remove")
        for k in keys:
            del self._episode[k]

    # ---- queries ------------------------------------------------------------------------------------------

    @locked
    def get_vectors(self, ids: Sequence[Any]) -> np.ndarray:
        """The stored vectors of ``ids`` (n, dim) float32, read back from Qdrant."""
        keys = [self._known(i) for i in ids]
        if not keys:
            return np.zeros((0, self.dim), np.float32)
        pids = [point_id(k) for k in keys]
        got: dict[str, Any] = {}
        with self._client_lock:
            for s in range(0, len(pids), BATCH):
                for rec in self.client.retrieve(self.collection, pids[s:s + BATCH], with_vectors=True,
                                                with_payload=False):
                    got[str(rec.id)] = rec.vector
        missing = [k for k, p in zip(keys, pids) if p not in got]
        if missing:
            raise KeyError(f"memory {missing[0]!r} has no point in Qdrant collection {self.collection!r} "
                           f"({len(missing)} missing): the collection and the store are out of sync")
        return np.asarray([got[p] for p in pids], dtype=np.float32).reshape(len(pids), self.dim)

    def _filter(self, episode: Any, within: Iterable[Any] | None, scopes: Mapping[str, Any] | None) -> Any:
        must: list = [models.FieldCondition(key=name, match=models.MatchValue(value=v))
                      for name, v in (scopes or {}).items() if v is not None]
        if episode is not None:
            must.append(models.FieldCondition(key="episode", match=models.MatchValue(value=episode)))
        if within is not None:
            must.append(models.HasIdCondition(has_id=[point_id(i) for i in within if i in self._episode]))
        return models.Filter(must=must) if must else None

    @locked
    def search(self, queries: np.ndarray, k: int, episode_id: Any | Sequence[Any] | None = None,
               within: Iterable[Any] | None = None, scopes: Mapping[str, Any] | None = None
               ) -> tuple[list[list[Any]], np.ndarray]:
        """Top-k memories by inner product per query, filtered inside Qdrant by episode, ``scopes`` (payload)
        and ``within`` (ids). Rows are padded with id None and score -inf, as MemoryIndex's."""
        k, q, per_query, within = self._search_args(queries, k, episode_id, within)
        if within is not None and not within:
            return self._rows((), len(q), k)
        params = models.SearchParams(hnsw_ef=self.hnsw_ef, exact=self.exact)
        requests = [models.QueryRequest(query=row.tolist(), filter=self._filter(ep, within, scopes), limit=k,
                                        params=params, with_payload=["sam_id"]) for row, ep in zip(q, per_query)]
        with self._client_lock:
            answers = self.client.query_batch_points(self.collection, requests, timeout=self.timeout)
        return self._rows([answer.points for answer in answers], len(q), k)

    # ---- persistence --------------------------------------------------------------------------------------

    @locked
    def snapshot(self) -> tuple[dict, tuple[np.ndarray, list[dict]] | None]:
        """meta.json's content and, for the embedded engine, its points (vectors and payloads, in id order)."""
        meta = {"format": QDRANT_FORMAT, "version": FORMAT_VERSION, "dim": self.dim, "config": self.config(),
                "ids": list(self._episode), "episodes": list(self._episode.values()), "next_wseq": self._wseq}
        if self.url is not None:
            return meta, None
        pids = [point_id(k) for k in self._episode]
        got: dict[str, Any] = {}
        with self._client_lock:
            for s in range(0, len(pids), BATCH):
                for rec in self.client.retrieve(self.collection, pids[s:s + BATCH], with_vectors=True,
                                                with_payload=True):
                    got[str(rec.id)] = rec
        vectors = np.asarray([got[p].vector for p in pids], np.float32).reshape(len(pids), self.dim)
        return meta, (vectors, [dict(got[p].payload) for p in pids])

    @staticmethod
    def write_snapshot(folder: Path, snap: tuple[dict, tuple[np.ndarray, list[dict]] | None]) -> None:
        meta, points = snap
        if points is not None:
            with open(Path(folder) / POINTS_FILE, "wb") as f:
                np.save(f, points[0], allow_pickle=False)
            atomic_write_text(Path(folder) / PAYLOADS_FILE, json.dumps(points[1]))
            meta = {**meta, "points_sha256": file_sha256(Path(folder) / POINTS_FILE)}  # the load checks it
        atomic_write_text(Path(folder) / META_FILE, json.dumps(meta))

    @staticmethod
    def _read_raw_points(folder: Path) -> tuple[np.ndarray, object] | OSError | ValueError:
        """The embedded engine's saved points as read (never unpickled); a read error is returned, not raised."""
        try:
            with NPY_LOCK:  # numpy parses the header with ast (sam_model.io.NPY_LOCK)
                points = np.load(folder / POINTS_FILE, allow_pickle=False)
            return points, json.loads((folder / PAYLOADS_FILE).read_text())
        except (OSError, ValueError) as err:
            return err

    @staticmethod
    def _check_points(meta_path: Path, raw, dim: int, ids: list, fix: str) -> tuple[np.ndarray, list[dict]]:
        """The saved points, checked against meta.json's ids and dim."""
        if raw is None or isinstance(raw, Exception):
            raise SAMFileError(f"{meta_path.parent}: the embedded Qdrant's points ({POINTS_FILE}, {PAYLOADS_FILE}) "
                               f"are missing or damaged ({raw or 'not found'}); {fix}")
        vectors, payloads = raw
        if (vectors.dtype != np.float32 or vectors.shape != (len(ids), dim) or not isinstance(payloads, list)
                or [p.get("sam_id") if isinstance(p, dict) else None for p in payloads] != ids):
            raise SAMFileError(f"{meta_path.parent / POINTS_FILE}: holds {vectors.shape} {vectors.dtype} vectors / "
                               f"{len(payloads) if isinstance(payloads, list) else '?'} payloads that do not match "
                               f"meta.json's {len(ids)} ids of dim {dim}; {fix}")
        return vectors, payloads

    @classmethod
    def load(cls, path: str | os.PathLike, expected_dim: int | None = None, device: str | None = None) -> QdrantIndex:
        """Reattach to the saved collection and roll it back to the save (points written later are deleted)."""
        with reading(path) as folder:
            meta_path = Path(folder) / META_FILE
            meta = read_format_json(meta_path, QDRANT_FORMAT, FORMAT_VERSION, "Qdrant index metadata",
                                    "save the store again")
            raw = cls._read_raw_points(Path(folder)) if (Path(folder) / POINTS_FILE).exists() else None
            if isinstance(raw, tuple):  # vectors changed inside points.npy kept numpy's header: rebuilt from, NaN and all
                check_digest(Path(folder) / POINTS_FILE, meta.get("points_sha256"), meta_path, "points_sha256",
                             "save the store again, or rebuild it")
        fix = "save the store again, or rebuild it"
        dim, cfg, ids, episodes, (next_wseq,) = cls.read_meta(meta, meta_path, expected_dim, fix, ("next_wseq",))
        embedded = cfg.get("url") is None
        if not embedded:
            check_trusted(str(cfg["url"]), str(meta_path))
        points = cls._check_points(meta_path, raw, dim, ids, fix) if embedded else None
        key = _client_key(None, cfg.get("path")) if embedded and cfg.get("path") else None
        with _attach_lock:  # threads loading one folder at once found no holder, and all attached to one collection
            if key is not None and len(_live.get((key, cfg.get("collection")), ())):
                # a live store of this process holds that embedded collection: rebuilding it here would pull its
                # points from under it (it then missed memories and could not save); the loaded copy gets a
                # collection of its own
                fresh = f"{cfg['collection']}_{uuid.uuid4().hex[:8]}"
                log.warning("%s: collection %r is held by a live store of this process; loading into %r", meta_path,
                            cfg["collection"], fresh)
                cfg = {**cfg, "collection": fresh}
            try:
                self = cls.from_config(dim, cfg, f"{meta_path}: config", attach=True)
            except (TypeError, ValueError) as err:
                raise SAMFileError(f"{meta_path}: {err}") from None
        self._episode = dict(zip(ids, episodes))
        self._wseq = next_wseq
        if points is not None:  # the embedded engine: the collection is rebuilt exactly as saved
            with self._client_lock:
                self.client.delete_collection(self.collection)
                self.client.create_collection(self.collection, vectors_config=models.VectorParams(
                    size=self.dim, distance=models.Distance.DOT))
                structs = [models.PointStruct(id=point_id(k), vector=v.tolist(), payload=pl)
                           for k, v, pl in zip(ids, points[0], points[1])]
                for s in range(0, len(structs), BATCH):
                    self.client.upsert(self.collection, structs[s:s + BATCH], wait=True)
            return self
        self._roll_back(next_wseq)
        return self

    def _roll_back(self, next_wseq: int) -> None:
        """Take a server's collection back to the save whose writes ended before ``next_wseq``: the points written
        after it are deleted, but for those of memories the save holds (an update is a remove and an add, so an
        updated memory's point is written anew: deleting it left the store a memory with no vector); those, and
        the save's memories deleted since, are :meth:`take_stale`'s, for the store to encode again from the
        saved texts."""
        saved, later, offset = {point_id(k): k for k in self._episode}, [], None
        after = models.Filter(must=[models.FieldCondition(key="wseq", range=models.Range(gte=next_wseq))])
        with self._client_lock:
            while True:
                recs, offset = self.client.scroll(self.collection, after, limit=BATCH, offset=offset,
                                                  with_payload=False, with_vectors=False)
                later += [str(r.id) for r in recs]
                if offset is None:
                    break
            gone = [pid for pid in later if pid not in saved]
            for s in range(0, len(gone), BATCH):
                self.client.delete(self.collection, models.PointIdsList(points=gone[s:s + BATCH]), wait=True)
        self._stale = [saved[pid] for pid in later if pid in saved]
        if self._count() != len(saved):  # the save's memories whose points were deleted after it
            held = self._payloads(list(saved))
            self._stale += [k for pid, k in saved.items() if pid not in held]

    def take_stale(self) -> list:
        """The memories whose points are not the save's since :meth:`load` (written again after it, or deleted),
        once: their vectors are a later version, or gone."""
        out, self._stale = self._stale, []
        return out

    def __repr__(self) -> str:
        return f"QdrantIndex(dim={self.dim}, collection={self.collection!r}, size={len(self)}, {self.backend})"


__all__ = ["QdrantIndex", "check_trusted", "client_for", "close_clients", "point_id", "trust_url"]
