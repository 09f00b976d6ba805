"""Vector backends: where the store's memory vectors live and which engine answers its candidate search.

SAM scores a memory as q_sᵀ v_m (the query absorbs the state projection W_s), so any inner-product vector engine
serves it unchanged: the store (sam_model.store) asks the backend only for the top max(k, D) candidates inside a
scope, then recomputes the scores from the stored vectors and re-ranks them itself. The protocol is
:class:`~sam_model.index.MemoryIndex`'s method set — ``add(ids, vectors, episode_ids)``, ``remove``,
``search(queries, k, episode_id, within)``, ``get_vectors``, ``ids``, ``episode_of``, ``snapshot`` /
``write_snapshot`` / ``load`` — and three engines implement it:

- ``flat`` / ``ivf`` / ``hnsw``: FAISS in the process (sam_model.index), the embedded default;
- ``qdrant``: a Qdrant collection (sam_model.backends.qdrant), embedded (``path`` or in memory, for tests and one
  machine) or a server or cluster at ``url`` with the same code. Its scopes (user, agent, run, episode) are
  payload filters inside Qdrant's search;
- ``qdrant-edge``: Qdrant's own engine (HNSW, payload indexes) embedded in the process, no server
  (sam_model.backends.qdrant_edge): the same filtered search as a server, saved with the store.

A store picks the engine by ``StoreConfig.index["kind"]``; ``qdrant_client`` / ``qdrant_edge`` are imported only
when that kind is asked for, so the core install never needs them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sam_model.backends.kinds import QDRANT, QDRANT_EDGE, QDRANT_EDGE_FORMAT, QDRANT_FORMAT
from sam_model.index import KINDS, META_FILE, MemoryIndex
from sam_model.io import SAMFileError


def check_index_config(cfg: Any, where: str = "index") -> None:
    """Raise ValueError naming ``<where>.<key>`` for a bad index config of any backend."""
    if isinstance(cfg, dict) and cfg.get("kind") == QDRANT:
        from sam_model.backends.qdrant import QdrantIndex

        QdrantIndex.check_config(cfg, where)
    elif isinstance(cfg, dict) and cfg.get("kind") == QDRANT_EDGE:
        from sam_model.backends.qdrant_edge import QdrantEdgeIndex

        QdrantEdgeIndex.check_config(cfg, where)
    else:
        MemoryIndex.check_config(cfg, where)


def index_from_config(dim: int, cfg: dict | None, where: str = "index") -> Any:
    """The backend a config names: ``{"kind": "flat"}`` (FAISS, default) ... ``{"kind": "qdrant", "url": ...}``."""
    cfg = dict(cfg or {})
    if cfg.get("kind") == QDRANT:
        from sam_model.backends.qdrant import QdrantIndex

        return QdrantIndex.from_config(dim, cfg, where)
    if cfg.get("kind") == QDRANT_EDGE:
        from sam_model.backends.qdrant_edge import QdrantEdgeIndex

        return QdrantEdgeIndex.from_config(dim, cfg, where)
    return MemoryIndex.from_config(dim, cfg, where)


def load_index(folder: Path, expected_dim: int | None = None, device: str | None = None) -> Any:
    """Read an index folder written by any backend's ``save``/``write_snapshot`` (dispatch on its meta.json)."""
    meta = Path(folder) / META_FILE
    try:
        fmt = json.loads(meta.read_text(encoding="utf-8")).get("format") if meta.is_file() else None
    except (OSError, UnicodeDecodeError, ValueError, AttributeError) as err:
        raise SAMFileError(f"{meta}: unreadable index metadata ({err}); rebuild the index") from None
    if fmt == QDRANT_FORMAT:
        from sam_model.backends.qdrant import QdrantIndex

        return QdrantIndex.load(folder, expected_dim=expected_dim)
    if fmt == QDRANT_EDGE_FORMAT:
        from sam_model.backends.qdrant_edge import QdrantEdgeIndex

        return QdrantEdgeIndex.load(folder, expected_dim=expected_dim)
    return MemoryIndex.load(folder, expected_dim=expected_dim, device=device)


KINDS_ALL = (*KINDS, QDRANT, QDRANT_EDGE)

__all__ = ["KINDS_ALL", "QDRANT", "QDRANT_EDGE", "QDRANT_EDGE_FORMAT", "QDRANT_FORMAT", "check_index_config", "index_from_config", "load_index"]
