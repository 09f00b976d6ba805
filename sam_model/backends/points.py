"""The point layout both Qdrant engines share (the client's collections and the embedded Edge shard): one memory
is one point whose id is derived from the memory id, with the scopes in its payload. Kept apart so that neither
engine's module imports the other's library (qdrant-client, qdrant-edge-py)."""

from __future__ import annotations

import json
import logging
import os
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from sam_model.index import MemoryIndex
from sam_model.io import SAMFileError, atomic_dir
from sam_model.limits import check_k
from sam_model.locking import locked

log = logging.getLogger(__name__)

SCOPE_FIELDS = ("user_id", "agent_id", "run_id")
NAMESPACE = uuid.UUID("5b0c4a52-2f5e-4a8e-9a51-8f3c2f7a9e10")  # of the point ids; fixed: changing it orphans data


def point_id(i: str | int) -> str:
    """The Qdrant point id of memory id ``i`` (str and int ids never collide: the type is part of the name);
    Qdrant takes only ints and UUIDs."""
    return str(uuid.uuid5(NAMESPACE, json.dumps([type(i).__name__, str(i)])))


def all_or_nothing(items: Sequence[Any], size: int, write: Callable[[Sequence[Any]], None],
                   undo: Callable[[Sequence[Any]], None], what: str, unit: str = "points") -> None:
    """``write`` ``items`` in engine calls of at most ``size``; when one fails, ``undo`` every batch tried, its own
    too (a call whose answer was lost may have been applied), and raise its error. A write of more than one call
    failing midway had left its first batches applied while the index said none was: points the store knew nothing
    of were searched, or memories it held had lost their vectors. An undo that fails too is logged (``unit``: what
    the items are, in that line); the error raised is still the write's."""
    tried = 0
    try:
        for start in range(0, len(items), size):
            tried = start + size
            write(items[start:start + size])
    except BaseException:
        try:
            for start in range(0, min(tried, len(items)), size):
                undo(items[start:start + size])
        except Exception as err:
            log.warning("%s of %d %s failed midway and could not be taken back (%s: %s): the engine and the "
                        "index may differ; load the store's last save", what, len(items), unit, type(err).__name__,
                        str(err)[:200])
        raise


class PointBook:
    """The memory ids of an engine's points and their episodes, in write order (``self._episode``, which the
    engine sets up and fills): Qdrant keeps only the derived point ids, so the ids a store asks about are answered
    here, the same way for both engines. A subclass holds ``self._lock`` (sam_model.locking)."""

    _episode: dict[Any, Any]
    dim: int
    _check_id = staticmethod(MemoryIndex._check_id)
    _check_episode = staticmethod(MemoryIndex._check_episode)
    _check_vectors = MemoryIndex._check_vectors  # the same checks and messages as the FAISS index

    @staticmethod
    def check_keys(cfg: Any, where: str, kind: str, keys: set[str], strings: Sequence[str]) -> None:
        """The first checks of an engine's index config, alike for both: an object, no key but ``keys`` (the message
        names the ``kind`` they are allowed for), and each of ``strings`` (url, path, collection) a non-empty string
        where given. Raises ValueError naming ``<where>.<key>``; the engine then checks its own values."""
        if not isinstance(cfg, dict):
            raise ValueError(f"field '{where}' must be an object such as {{\"kind\": \"{kind}\"}}, got {cfg!r}")
        unknown = sorted(set(cfg) - keys)
        if unknown:
            raise ValueError(f"field '{where}' has unknown key(s) {unknown}; allowed for kind '{kind}': {sorted(keys)}")
        for name in strings:
            v = cfg.get(name)
            if v is not None and (not isinstance(v, (str, os.PathLike)) or not str(v)):
                raise ValueError(f"field '{where}.{name}' must be a non-empty string, got {v!r}")

    @staticmethod
    def check_exact(cfg: Mapping[str, Any], where: str) -> None:
        """An engine config's ``exact`` (Qdrant's brute force instead of its HNSW graph), where given, is a bool."""
        if not isinstance(cfg.get("exact", False), bool):
            raise ValueError(f"field '{where}.exact' must be true or false, got {cfg.get('exact')!r}")

    @staticmethod
    def read_meta(meta: Mapping[str, Any], meta_path: Path, expected_dim: int | None, fix: str,
                   counters: Sequence[str] = ()) -> tuple[int, dict, list, list, list[int]]:
        """(dim, config, ids, episodes, the ints named by ``counters``) of an engine's saved meta.json, checked as
        both engines' loads need them: each present and of its type, the dim the model's (``expected_dim``), one
        episode per id. A SAMFileError names ``meta_path`` and ends with ``fix``."""
        try:
            dim, cfg, ids, episodes = int(meta["dim"]), dict(meta["config"]), list(meta["ids"]), list(meta["episodes"])
            counts = [int(meta[name]) for name in counters]
        except (KeyError, TypeError, ValueError) as err:
            raise SAMFileError(f"{meta_path}: index metadata lacks or mangles {err}; {fix}") from None
        if expected_dim is not None and dim != expected_dim:
            raise SAMFileError(f"{meta_path}: index has dim {dim} but the model expects dim {expected_dim}; {fix}")
        if len(ids) != len(episodes):
            raise SAMFileError(f"{meta_path}: ids and episodes differ in length; {fix}")
        return dim, cfg, ids, episodes, counts

    def _checked_add(self, ids: Sequence[Any], vectors: Any, episode_ids: Sequence[Any] | str | None,
                     scopes: Mapping[str, Any] | None) -> tuple[list, np.ndarray, list, dict[str, Any]]:
        """(keys, vectors, episodes, scope payload) of an ``add``, checked before anything is written: one id per
        vector and per episode, no id twice or already present (ValueError naming it)."""
        keys = [self._check_id(i) for i in ids]
        x = self._check_vectors(vectors, "memory vectors")
        if len(keys) != len(x):
            raise ValueError(f"add got {len(keys)} ids but {len(x)} vectors")
        episodes = [episode_ids] * len(keys) if episode_ids is None or isinstance(episode_ids, str) else [
            self._check_episode(ep) for ep in episode_ids]
        if len(episodes) != len(keys):
            raise ValueError(f"add got {len(keys)} ids but {len(episodes)} episode_ids")
        if len(set(keys)) != len(keys) or any(k in self._episode for k in keys):
            dup = next(k for n, k in enumerate(keys) if k in self._episode or k in keys[:n])
            raise ValueError(f"memory id {dup!r} is already in the index")
        return keys, x, episodes, {name: (scopes or {}).get(name) for name in SCOPE_FIELDS}

    def _per_query(self, episode_id: Any, n: int) -> list:
        """A search's episode per query (one for all, or a list of one per query), each checked as an add's."""
        if episode_id is None or isinstance(episode_id, (str, int, np.integer, np.bool_, float)):
            return [self._check_episode(episode_id)] * n
        per_query = [self._check_episode(ep) for ep in episode_id]
        if len(per_query) != n:
            raise ValueError(f"episode_id has {len(per_query)} entries but there are {n} queries")
        return per_query

    def _search_args(self, queries: Any, k: Any, episode_id: Any, within: Iterable[Any] | None
                     ) -> tuple[int, np.ndarray, list, set | None]:
        """A search's arguments checked as the FAISS index checks them: k, the queries as float32 rows of the
        index's dim (one vector is one query), an episode per query, and ``within`` as a set (None: no id filter)."""
        k = check_k(k)
        q = np.asarray(queries, dtype=np.float32)
        q = self._check_vectors(q[None, :] if q.ndim == 1 else q, "queries")
        return k, q, self._per_query(episode_id, len(q)), None if within is None else set(within)

    @staticmethod
    def _rows(answers: Iterable[Sequence[Any]], n: int, k: int) -> tuple[list[list[Any]], np.ndarray]:
        """The ids and scores of ``n`` queries from the engine's answers (each its scored points, best first, with
        payload ``sam_id``), padded with id None and score -inf as MemoryIndex's rows (no answers: all padding)."""
        ids: list[list[Any]] = [[None] * k for _ in range(n)]
        scores = np.full((n, k), -np.inf, np.float32)
        for r, answer in enumerate(answers):
            for c, p in enumerate(answer[:k]):
                ids[r][c], scores[r, c] = p.payload["sam_id"], p.score
        return ids, scores

    def _known(self, i: Any) -> str | int:
        key = self._check_id(i)
        if key not in self._episode:
            raise KeyError(f"memory id {key!r} is not in the index")
        return key

    def __len__(self) -> int:
        return len(self._episode)

    def __contains__(self, i: object) -> bool:
        return i in self._episode

    @locked
    def ids(self) -> list:
        return list(self._episode)

    @locked
    def episode_of(self, i: Any) -> Any:
        return self._episode[self._known(i)]

    @locked
    def repair_payloads(self, scopes: Mapping[Any, Mapping[str, Any]], where: str) -> list:
        """Make every point's payload say what the store's record says of its memory (its id, its episode and
        ``scopes[id]``), and return the ids whose payload did not, rewritten with a warning naming the first.

        Qdrant filters a search by the payloads, and the store keeps only the candidates its own record puts in the
        scope: so a payload naming another user or episode (a save edited or damaged) hid the memory from its own
        user's search, with no word, while never showing it to the other. The record is what the store answers by
        (its scopes, ``episode_of``), so the payload follows it. A point that is missing is the engine's load's to
        tell."""
        keys = list(self._episode)
        have = self._payloads([point_id(k) for k in keys])
        wrong: dict[Any, tuple[dict, dict]] = {}
        for k in keys:
            want = {"sam_id": k, "episode": self._episode[k], **{n: (scopes.get(k) or {}).get(n) for n in SCOPE_FIELDS}}
            got = have.get(point_id(k))
            if got is not None and any(got.get(n) != v for n, v in want.items()):
                wrong[k] = (got, want)
        if wrong:
            self._set_payloads({point_id(k): want for k, (_, want) in wrong.items()})
            k, (got, want) = next(iter(wrong.items()))
            log.warning("%s: %d points held a payload the store's record disagrees with (memory %r: %s, the record "
                        "says %s); rewritten from the record, so a search of its scopes finds it again: save the store "
                        "to keep the repair", where, len(wrong), k, json.dumps({n: got.get(n) for n in want})[:200],
                        json.dumps(want)[:200])
        return list(wrong)

    def save(self, path: str | os.PathLike) -> Path:
        """Write the index folder ``path`` atomically: the engine's ``snapshot`` is taken under its lock (meta.json's
        content, and whatever the engine copies: the Edge shard, the embedded client's points), then
        ``write_snapshot`` writes it without the lock into a staging folder swapped in last (sam_model.io.atomic_dir)."""
        snap = self.snapshot()
        with atomic_dir(path, "meta.json", ("format",)) as tmp:
            self.write_snapshot(tmp, snap)
        return Path(path)


__all__ = ["NAMESPACE", "SCOPE_FIELDS", "PointBook", "all_or_nothing", "point_id"]
