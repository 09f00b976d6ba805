"""SAMRetriever: a trained encoder and the memory store it searches, as one object. No Lightning.

    r = SAMRetriever.load("checkpoints/demo/export")
    r.add_memories(events)                                  # Events in step order, or MemoryRecords
    hits = r.search(state, "ok, go ahead", k=5, episode_id="trip-17")
    hits[0].id, hits[0].text, hits[0].score, hits[0].linked_from

It holds nothing of its own: ``r.encoder`` (sam_model.encoder.SAMEncoder, stateless) makes the vectors and
``r.store`` (sam_model.store.MemoryStore) owns the memories and the one search every path uses — the same
ranking and scores as evaluate.py, SAMMemory and the memory API for the same state and memories. The export
folder carries the store's settings (config.json ``store``: slot match, provenance, re-rank depth, index kind).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from sam_model.data.examples import MemoryRecord
from sam_model.data.schema import State
from sam_model.encoder import TEXT_CACHE, SAMEncoder
from sam_model.hit import Hit
from sam_model.io import SAMFileError, atomic_dir, reading
from sam_model.models.sam import SAMNet
from sam_model.store import MemoryStore
from sam_model.storeconfig import StoreConfig

STORE_DIR = "store"  # inside a saved retriever folder: the memory store (store.json + index/)
LEGACY_INDEX_DIR = "index"  # where retrievers saved before the store kept their index and rerank.json


class SAMRetriever:
    """``encoder`` + ``store``; every method below is one of theirs."""

    def __init__(self, net: SAMNet, store_config: StoreConfig | None = None, index_config: dict | None = None,
                 backend: str | None = None, text_cache: int | None = TEXT_CACHE):
        """``index_config`` (e.g. {"kind": "ivf"}) replaces ``store_config.index``; ``backend`` runs BERT
        (``auto`` | ``onnx`` | ``torch``) and ``text_cache`` bounds its cache of recent texts' vectors (0: none;
        None: no bound), both sam_model.encoder.SAMEncoder. ``store_config`` None: the settings ``net`` is served with
        (sam_model.export.served_store: the defaults, with a learned lexical weight where the net has one)."""
        from sam_model.export import served_store

        self.encoder = SAMEncoder(net, backend, text_cache)
        cfg = dataclasses.replace(store_config or served_store(net))
        if index_config is not None:
            cfg.index = dict(index_config)
        self.store = MemoryStore(self.encoder, cfg)

    @classmethod
    def load(cls, path: str | os.PathLike, device: str | None = None, index_config: dict | None = None,
             backend: str | None = None, text_cache: int | None = TEXT_CACHE) -> SAMRetriever:
        """The one loader. ``path`` is told apart by what it holds (sam_model.export.kind_of):

        - an export folder (``python -m sam_model.export``), with the store :meth:`save` put beside it in
          ``store/`` when it was saved with memories (a saved retriever);
        - a training checkpoint (``.ckpt``, read weights_only with torch; Lightning is not imported);
        - the name of a packaged retriever (``"sam-general"``, sam_model.pretrained) when no such path exists.

        A saved memory store alone (``store.json``, no network) or any other file is a one-line error saying
        what to give. The path is held still while it is read (sam_model.io.reading), so network and store are
        always one version, even while another process saves to ``path``. A folder saved by an older version
        (``index/`` with rerank.json) loads too and ranks as it did; its memories' texts were not saved then.
        """
        from sam_model.export import HINT, read_model
        from sam_model.models.onnx_text import check_backend
        from sam_model.models.text_encoder import check_cache_entries
        from sam_model.pretrained import resolve

        check_cache_entries(text_cache)  # the arguments first: the try below would blame the folder for them
        check_backend(backend)
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"path must be an export folder, a .ckpt file or a packaged name, got "
                            f"{type(path).__name__}")
        if device is not None:
            try:
                torch.device(device)
            except (RuntimeError, TypeError):
                raise ValueError(f"device {device!r} is not a torch device (give 'cpu', 'cuda', 'cuda:1' or None)"
                                 ) from None
        if index_config is not None:
            dataclasses.replace(StoreConfig(), index=dict(index_config))  # checked: one line naming the field
        with reading(resolve(path)) as where:
            if index_config is not None and (where / STORE_DIR).exists():
                raise SAMFileError(f"{where} holds a saved store, searched by the index it was saved with: load it "
                                   "without index_config (it applies to a new store: MemoryStore(r.encoder, "
                                   "StoreConfig(index=...)), then add the memories)")
            if (where / STORE_DIR).is_symlink():
                raise SAMFileError(f"{where / STORE_DIR} is a link; a saved retriever holds its memories itself: "
                                   "save the retriever again")
            try:
                net, store_config = read_model(where, device)
                r = cls(net, store_config, index_config, backend, text_cache)
                if (where / STORE_DIR).exists():
                    r.store = MemoryStore.read(where / STORE_DIR, r.encoder, config=r.store.config)
                elif (where / LEGACY_INDEX_DIR).exists():
                    r.store = MemoryStore.from_legacy_index(where / LEGACY_INDEX_DIR, r.encoder, r.store.config)
            except SAMFileError:
                raise
            except Exception as exc:  # a half-written or foreign folder: say which, not a bare traceback
                raise SAMFileError(f"cannot load the retriever {where}: {type(exc).__name__}: {exc} ({HINT})") from None
        return r

    def save(self, path: str | os.PathLike) -> Path:
        """Export the network and its store settings, with the store (memories, links, index) in ``store/``.

        Atomic as a whole (sam_model.io.atomic_dir): the complete folder is built in a staging folder and
        swapped in last, so a kill at any point leaves the previous version, and concurrent saves to one
        path end with one of them complete (the last to finish).
        """
        from sam_model.export import CONFIG_FILE, EXPORT_KEYS, write_export

        out = Path(path)
        with atomic_dir(out, CONFIG_FILE, EXPORT_KEYS) as tmp:
            write_export(self.net, tmp, self.store.config)
            if len(self.store):
                (tmp / STORE_DIR).mkdir()
                self.store.write(tmp / STORE_DIR)
        return out

    @classmethod
    def from_pretrained(cls, path: str | os.PathLike, device: str | None = None, index_config: dict | None = None,
                        backend: str | None = None, text_cache: int | None = TEXT_CACHE) -> SAMRetriever:
        """The Hugging Face / sentence-transformers name for :meth:`load` (an alias: the same code path, the same
        folders, checkpoints and names, the same checks).
        ``from_pretrained("sam-general")`` is the default retriever that ships with the package (trained on SGD
        and the tau-bench airline tasks; its card: sam_model/pretrained/sam-general/README.md)."""
        return cls.load(path, device, index_config, backend, text_cache)

    def save_pretrained(self, path: str | os.PathLike) -> Path:
        """The Hugging Face / sentence-transformers name for :meth:`save`: a folder ``from_pretrained`` (or
        ``load``) reads back, with its model card, written atomically as a whole."""
        return self.save(path)

    # ---- the encoder's ------------------------------------------------------------------------------------

    @property
    def net(self) -> SAMNet:
        return self.encoder.net

    @property
    def dim(self) -> int:
        return self.encoder.dim

    @property
    def device(self) -> torch.device:
        return self.encoder.device

    def clear_cache(self) -> None:
        self.encoder.clear_cache()

    def encode_queries(self, states: Sequence[State | Mapping], observations: Sequence[str], batch_size: int = 64,
                       progress: bool = False, steps: Sequence[int | None] | None = None,
                       task_starts: Sequence[int | None] | None = None) -> np.ndarray:
        """q vectors (n, dim), float32 (sam_model.encoder.SAMEncoder.encode_queries)."""
        return self.encoder.encode_queries(states, observations, batch_size, progress, steps, task_starts)

    def encode_memories(self, memories: Sequence[Any], batch_size: int = 64, progress: bool = False) -> np.ndarray:
        """v_m vectors (n, dim), float32 (sam_model.encoder.SAMEncoder.encode_memories)."""
        return self.encoder.encode_memories(memories, batch_size, progress)

    def encode_states(self, states, observations=None, batch_size: int = 64) -> np.ndarray:
        return self.encoder.encode_states(states, observations, batch_size)

    def projection_weights(self, states, observations=None, batch_size: int = 64) -> np.ndarray:
        return self.encoder.projection_weights(states, observations, batch_size)

    # ---- the store's --------------------------------------------------------------------------------------

    def add_memories(self, memories: Sequence[Any], batch_size: int = 64, progress: bool = False, **scopes) -> list:
        """Store memories in write order (sam_model.store.MemoryStore.add); returns their ids."""
        return self.store.add(memories, batch_size=batch_size, progress=progress, **scopes)

    def search(self, state: State | Mapping, observation: str, k: int = 5, episode_id: str | None = None,
               step: int | None = None, task_start: int | None = None, **filters) -> list[Hit]:
        """The k best memories, with why each ranked (sam_model.store.MemoryStore.search)."""
        return self.store.search(state, observation, k, episode_id=episode_id, step=step, task_start=task_start,
                                 **filters)


def default_retriever(device: str | None = None) -> SAMRetriever:
    """``SAMRetriever.from_pretrained("sam-general")``: what ScopedMemory and the LangChain retriever use when
    given none (here, not in sam_model.pretrained, which the loaders import: no import circle)."""
    from sam_model.pretrained import DEFAULT

    return SAMRetriever.from_pretrained(DEFAULT, device)


__all__ = ["Hit", "MemoryRecord", "SAMRetriever", "default_retriever"]
