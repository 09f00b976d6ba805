"""QdrantEdgeIndex: the store's vectors in an embedded Qdrant Edge shard — Qdrant's own Rust engine in-process.

``StoreConfig(index={"kind": "qdrant-edge", "m": 16, "ef_construct": 100, "hnsw_ef": 128})`` (pip install
'sam_model[qdrant-edge]'). Qdrant Edge (qdrant-edge-py) is the engine a Qdrant server runs — segments, HNSW,
payload indexes — as a library, with no server and no network: where qdrant-client's local mode is brute force in
NumPy (fine for tests, never for 1M memories), the Edge shard searches an HNSW graph in Rust, so one machine gets
Qdrant's approximate search and its filtered HNSW without running a service. It is not the server: no replicas, no
background optimiser, one process owns a shard.

Points are laid out as the server's (sam_model.backends.points): id = uuid5 of the memory id, payload
``{"sam_id", "episode", "user_id", "agent_id", "run_id"}`` with keyword payload indexes on the scopes (``user_id``
as the tenant key), so a scope is a payload filter inside the HNSW search (``filters_scopes``): a tenant's search
never reaches another's points and a small scope is not starved by a global top-k. The store re-scores the
candidates from ``get_vectors`` (float64), so with ``exact: true`` the ranking equals FAISS's.

Indexing. Edge has no background optimiser: new points sit in an appendable segment that is searched by brute force
(in Rust) until ``optimize()`` turns full segments into HNSW-indexed ones. ``optimize: "auto"`` (default) runs it
after every add — a no-op (microseconds) until a segment passes Qdrant's indexing threshold (10 MB of vectors),
then the add that crossed it pays the build, as the server's optimiser would in the background. ``"manual"``
leaves it to :meth:`compact` (bulk loads: add everything, then index once).

The live shard is a private folder (under ``path``, default the system temp dir) removed when the index goes.
Qdrant's own write-ahead log is off (the live shard is scratch: the store's saves, and the served memory's log,
are the record). Save: the shard is flushed and its folder copied into the store's index folder (``shard/``,
beside meta.json with the ids in write order and their episodes); a load copies it back to a new private folder
and opens it there, so a saved folder is never written by the engine and the HNSW graph is not rebuilt. Its files are Qdrant's segment
format (JSON and raw arrays, no pickles), copied with their holes (Qdrant preallocates sparse 32 MB files).
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import tempfile
import weakref
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

try:
    import qdrant_edge as qe
except ImportError as exc:
    raise ImportError("the Qdrant Edge backend needs qdrant-edge-py: pip install 'sam_model[qdrant-edge]'") from exc

from sam_model.backends.kinds import QDRANT_EDGE, QDRANT_EDGE_FORMAT
from sam_model.backends.points import SCOPE_FIELDS, PointBook, all_or_nothing, point_id
from sam_model.index import META_FILE
from sam_model.io import SAMFileError, atomic_write_text, read_format_json, reading
from sam_model.limits import check_int
from sam_model.locking import locked, new_lock

FORMAT_VERSION = 1
SHARD_DIR = "shard"  # the Edge shard's folder inside a saved index folder
BATCH = 1024  # points per upsert / retrieve call
CONFIG_KEYS = {"kind", "path", "m", "ef_construct", "hnsw_ef", "exact", "optimize"}
DEFAULTS = {"m": 16, "ef_construct": 100}  # Qdrant's own HNSW defaults (the server's too)
FULL_SCAN_KB = 10_000  # Qdrant's default: a filtered search whose matches hold less than this scans them exactly
OPTIMIZE = ("auto", "manual")


def copy_sparse(src: str, dst: str) -> str:
    """Copy one file keeping its holes: Qdrant preallocates its mmap files (32 MB chunks, mostly holes), and a
    plain copy would write every zero (a shard of a few memories would take ~100 MB per save)."""
    if not hasattr(os, "SEEK_DATA"):
        return shutil.copy2(src, dst)
    with open(src, "rb") as fin, open(dst, "wb") as fout:
        fd, pos = fin.fileno(), 0
        size = os.fstat(fd).st_size
        while pos < size:
            try:
                start = os.lseek(fd, pos, os.SEEK_DATA)
                end = os.lseek(fd, start, os.SEEK_HOLE)
            except OSError as err:
                if err.errno == errno.ENXIO:  # only a hole is left
                    break
                start, end = pos, size  # this file system keeps no holes: copy the rest
            fin.seek(start)
            fout.seek(start)
            while start < end:
                chunk = fin.read(min(end - start, 1 << 22))
                if not chunk:
                    break
                fout.write(chunk)
                start += len(chunk)
            pos = end
        fout.truncate(size)
    shutil.copystat(src, dst)
    return dst


def _close(shard: Any, folder: str) -> None:
    """Close a live shard and delete its private folder (at garbage collection or exit)."""
    try:
        shard.close()
    except Exception:  # noqa: BLE001 - already closed, or the interpreter is going down
        pass
    shutil.rmtree(folder, ignore_errors=True)


class QdrantEdgeIndex(PointBook):
    """MemoryIndex's API over one embedded Qdrant Edge shard (see the module doc)."""

    kind = QDRANT_EDGE
    filters_scopes = True  # MemoryStore passes scopes= (payload filters), not the scope's id set

    def __init__(self, dim: int, path: str | None = None, m: int = DEFAULTS["m"],
                 ef_construct: int = DEFAULTS["ef_construct"], hnsw_ef: int | None = None, exact: bool = False,
                 optimize: str = "auto", *, _shard_from: Path | None = None):
        """A new, empty shard in a private folder under ``path`` (or one copied from a saved ``_shard_from``)."""
        if not isinstance(dim, (int, np.integer)) or isinstance(dim, bool) or dim < 1:
            raise ValueError(f"index dim must be a positive int, got {dim!r}")
        self.check_config({"kind": QDRANT_EDGE, "path": path, "m": m, "ef_construct": ef_construct,
                           "hnsw_ef": hnsw_ef, "exact": exact, "optimize": optimize})
        self.dim, self.path = int(dim), None if path is None else str(path)
        self.m, self.ef_construct, self.hnsw_ef, self.exact, self.optimize = m, ef_construct, hnsw_ef, exact, optimize
        self.lock = new_lock()  # one caller at a time (sam_model.locking)
        self._episode: dict[Any, Any] = {}  # memory id -> episode, in write order (the ids live here too)
        if self.path is not None:
            Path(self.path).mkdir(parents=True, exist_ok=True)
        self.folder = tempfile.mkdtemp(prefix="sam-qdrant-edge-", dir=self.path)
        live = os.path.join(self.folder, SHARD_DIR)
        if _shard_from is not None:
            shutil.copytree(_shard_from, live, copy_function=copy_sparse)
            self.shard = qe.EdgeShard.load(live, self._edge_config())
        else:
            self.shard = qe.EdgeShard.create(live, self._edge_config())
            for name in SCOPE_FIELDS:
                self.shard.update(qe.UpdateOperation.create_field_index(
                    name, qe.KeywordIndexParams(is_tenant=name == "user_id")))
        self._finalizer = weakref.finalize(self, _close, self.shard, self.folder)

    def _edge_config(self) -> Any:
        hnsw = qe.HnswIndexConfig(m=self.m, ef_construct=self.ef_construct, full_scan_threshold=FULL_SCAN_KB)
        return qe.EdgeConfig(vectors=qe.EdgeVectorParams(size=self.dim, distance=qe.Distance.Dot), hnsw_config=hnsw,
                             wal_enabled=False)  # durable at flush (every save); the store's save is the record

    @staticmethod
    def check_config(cfg: Any, where: str = "index") -> None:
        """Raise ValueError naming ``<where>.<key>`` for an unknown key or a bad value."""
        PointBook.check_keys(cfg, where, QDRANT_EDGE, CONFIG_KEYS, ("path",))
        for name, lo in (("m", 2), ("ef_construct", 4), ("hnsw_ef", 1)):
            if cfg.get(name) is not None:
                check_int(cfg[name], f"field '{where}.{name}'", lo, 1 << 16)
        PointBook.check_exact(cfg, where)
        if cfg.get("optimize", "auto") not in OPTIMIZE:
            raise ValueError(f"field '{where}.optimize' must be one of {OPTIMIZE}, got {cfg.get('optimize')!r}")

    @classmethod
    def from_config(cls, dim: int, cfg: dict | None, where: str = "index") -> QdrantEdgeIndex:
        cfg = dict(cfg or {})
        cls.check_config(cfg, where)
        cfg.pop("kind", None)
        return cls(dim, **{k: v for k, v in cfg.items() if v is not None})  # None: the default

    def config(self) -> dict:
        """The constructor arguments, as saved."""
        return {"kind": QDRANT_EDGE, "path": self.path, "m": self.m, "ef_construct": self.ef_construct,
                "hnsw_ef": self.hnsw_ef, "exact": self.exact, "optimize": self.optimize}

    @property
    def backend(self) -> str:
        return (f"qdrant-edge-py (Qdrant's engine embedded; HNSW m={self.m}, ef_construct={self.ef_construct}, "
                f"hnsw_ef={self.hnsw_ef or 'default'}{', exact' if self.exact else ''})")

    def info(self) -> dict:
        """Points, segments and how many vectors are HNSW-indexed (the rest are searched by brute force)."""
        i = self.shard.info()
        return {"points": i.points_count, "segments": i.segments_count, "indexed": i.indexed_vectors_count}

    def _payloads(self, pids: list[str]) -> dict[str, dict]:
        """The payloads of these points (those that exist), by point id."""
        got: dict[str, dict] = {}
        for s in range(0, len(pids), BATCH):
            for rec in self.shard.retrieve(pids[s:s + BATCH], with_payload=True, with_vector=False):
                got[str(rec.id)] = dict(rec.payload or {})
        return got

    def _set_payloads(self, payloads: Mapping[str, dict]) -> None:
        """Set these fields of these points' payloads."""
        for pid, payload in payloads.items():
            self.shard.update(qe.UpdateOperation.set_payload([pid], payload))

    # ---- mutation -----------------------------------------------------------------------------------------

    def train(self, vectors: np.ndarray) -> None:
        """Nothing to train (Qdrant builds its HNSW graph from the points)."""

    @locked
    def compact(self) -> None:
        """Run Qdrant's optimisers now: index the segments past the threshold, merge small ones, vacuum deletes."""
        self.shard.optimize()

    @locked
    def add(self, ids: Sequence[Any], vectors: np.ndarray, episode_ids: Sequence[Any] | str | None = None,
            scopes: Mapping[str, Any] | None = None) -> None:
        """Add memories; ``scopes`` (user_id, agent_id, run_id) go into every point's payload for the filters. All or
        nothing: over BATCH points the upsert is several calls, and one failing takes the others back."""
        keys, x, episodes, scope = self._checked_add(ids, vectors, episode_ids, scopes)
        rows = x.tolist()
        all_or_nothing(range(len(keys)), BATCH, lambda batch: self.shard.update(qe.UpdateOperation.upsert_points(
            [qe.Point(point_id(keys[n]), rows[n], {"sam_id": keys[n], "episode": episodes[n], **scope}) for n in batch])),
            lambda batch: self.shard.update(qe.UpdateOperation.delete_points([point_id(keys[n]) for n in batch])),
            "the Qdrant Edge shard: an add")
        for k, ep in zip(keys, episodes):
            self._episode[k] = ep
        if self.optimize == "auto":
            self.shard.optimize()

    @locked
    def remove(self, ids: Iterable[Any]) -> None:
        """Remove memories by id; all-or-nothing (an unknown id raises KeyError, nothing is removed). Over BATCH
        points the delete is several calls: each batch's points are read first, and a call failing puts back the
        batches deleted before it (and its own)."""
        keys = list(dict.fromkeys(self._known(i) for i in ids))
        kept: dict[str, Any] = {}  # point id -> its record, read before a delete of more than one call

        def delete(batch: Sequence[str]) -> None:
            if len(keys) > BATCH:
                kept.update((str(r.id), r) for r in self.shard.retrieve(list(batch), with_payload=True,
                                                                        with_vector=True))
            self.shard.update(qe.UpdateOperation.delete_points(list(batch)))

        def put_back(batch: Sequence[str]) -> None:
            points = [qe.Point(r.id, r.vector, r.payload) for p in batch if (r := kept.get(p)) is not None]
            if points:
                self.shard.update(qe.UpdateOperation.upsert_points(points))

        all_or_nothing([point_id(k) for k in keys], BATCH, delete, put_back, "the Qdrant Edge shard: a remove")
        for k in keys:
            del self._episode[k]

    # ---- queries ------------------------------------------------------------------------------------------

    @locked
    def get_vectors(self, ids: Sequence[Any]) -> np.ndarray:
        """The stored vectors of ``ids`` (n, dim) float32, read back from the shard."""
        keys = [self._known(i) for i in ids]
        pids = [point_id(k) for k in keys]
        got: dict[str, Any] = {}
        for s in range(0, len(pids), BATCH):
            for rec in self.shard.retrieve(pids[s:s + BATCH], with_payload=False, with_vector=True):
                got[str(rec.id)] = rec.vector
        missing = [k for k, p in zip(keys, pids) if p not in got]
        if missing:
            raise KeyError(f"memory {missing[0]!r} has no point in the Qdrant Edge shard ({len(missing)} missing): "
                           "the shard and the store are out of sync; load the store's last save")
        return np.asarray([got[p] for p in pids], dtype=np.float32).reshape(len(pids), self.dim)

    def _filter(self, episode: Any, within: set | None, scopes: Mapping[str, Any] | None) -> Any:
        must: list = [qe.FieldCondition(key=name, match=qe.MatchValue(v))
                      for name, v in (scopes or {}).items() if v is not None]
        if episode is not None:
            must.append(qe.FieldCondition(key="episode", match=qe.MatchValue(episode)))
        if within is not None:
            must.append(qe.HasIdCondition({point_id(i) for i in within if i in self._episode}))
        return qe.Filter(must=must) if must else None

    @locked
    def search(self, queries: np.ndarray, k: int, episode_id: Any | Sequence[Any] | None = None,
               within: Iterable[Any] | None = None, scopes: Mapping[str, Any] | None = None
               ) -> tuple[list[list[Any]], np.ndarray]:
        """Top-k memories by inner product per query, filtered inside the HNSW search by episode, ``scopes``
        (payload) and ``within`` (ids). Rows are padded with id None and score -inf, as MemoryIndex's."""
        k, q, per_query, within = self._search_args(queries, k, episode_id, within)
        n = len(q)
        if within is not None and not within:
            return self._rows((), n, k)
        params = qe.SearchParams(hnsw_ef=self.hnsw_ef, exact=self.exact)
        requests = [qe.QueryRequest(limit=k, query=qe.Query.Nearest(row), filter=self._filter(ep, within, scopes),
                                    params=params, with_payload=["sam_id"]) for row, ep in zip(q.tolist(), per_query)]
        answers = ([self.shard.query(requests[0])] if n == 1
                   else self.shard.query_batch(qe.QueryBatchRequest(requests)))
        return self._rows(answers, n, k)

    # ---- persistence --------------------------------------------------------------------------------------

    @locked
    def snapshot(self) -> tuple[dict, Path]:
        """meta.json's content and a copy of the flushed shard of this moment (in a staging folder beside the
        live one; :meth:`write_snapshot` moves it into place)."""
        meta = {"format": QDRANT_EDGE_FORMAT, "version": FORMAT_VERSION, "dim": self.dim, "config": self.config(),
                "ids": list(self._episode), "episodes": list(self._episode.values())}
        self.shard.flush()
        staged = Path(tempfile.mkdtemp(prefix="snapshot-", dir=self.folder)) / SHARD_DIR
        shutil.copytree(Path(self.folder) / SHARD_DIR, staged, copy_function=copy_sparse)
        return meta, staged

    @staticmethod
    def write_snapshot(folder: Path, snap: tuple[dict, Path]) -> None:
        meta, staged = snap
        shutil.move(str(staged), str(Path(folder) / SHARD_DIR), copy_function=copy_sparse)
        shutil.rmtree(staged.parent, ignore_errors=True)
        atomic_write_text(Path(folder) / META_FILE, json.dumps(meta))

    @classmethod
    def load(cls, path: str | os.PathLike, expected_dim: int | None = None, device: str | None = None
             ) -> QdrantEdgeIndex:
        """Open a copy of the saved shard (the saved folder itself is never written)."""
        fix = "save the store again, or rebuild it"
        with reading(path) as folder:
            meta_path = Path(folder) / META_FILE
            meta = read_format_json(meta_path, QDRANT_EDGE_FORMAT, FORMAT_VERSION, "Qdrant Edge index metadata", fix)
            dim, cfg, ids, episodes, _ = cls.read_meta(meta, meta_path, expected_dim, fix)
            shard = Path(folder) / SHARD_DIR
            if not (shard / "segments").is_dir():
                raise SAMFileError(f"{shard}: the Qdrant Edge shard is missing; {fix}")
            try:
                cls.check_config(cfg, f"{meta_path}: config")
                cfg.pop("kind", None)
                self = cls(dim, **cfg, _shard_from=shard)
            except (TypeError, ValueError, OSError) as err:
                raise SAMFileError(f"{meta_path}: {err}") from None
            except Exception as err:  # noqa: BLE001 - the engine's own error (a damaged segment)
                raise SAMFileError(f"{shard}: Qdrant Edge cannot open the saved shard ({err}); {fix}") from None
        self._episode = dict(zip(ids, episodes))
        held = self.info()["points"]
        if held != len(ids):
            raise SAMFileError(f"{shard}: holds {held} points but {meta_path} lists {len(ids)} memories; {fix}")
        return self

    def close(self) -> None:
        """Close the shard and delete its private folder now (otherwise at garbage collection or exit)."""
        self._finalizer()

    def __repr__(self) -> str:
        return f"QdrantEdgeIndex(dim={self.dim}, size={len(self)}, {self.backend})"


__all__ = ["QdrantEdgeIndex"]
