"""Sentence vectors by text, cached on disk: the content retriever of the bank stream, without paying BERT twice.

Unit texts and queries of a bank stream repeat across policies and runs, so each text is encoded once (untrained
all-MiniLM-L6-v2, mean-pooled and L2-normalised, as ``ContentRetriever``) and kept under
``$SAM_CACHE_DIR/janus-bank`` (default ``~/.cache/sam_model``), never in the repository.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from sam_model.io import atomic_path, atomic_write_text
from sam_model.memory.retrievers import query_text


class CachedTextRetriever:
    """The content retriever (untrained MiniLM on query text and unit text) with a vector per text cached.

    Texts not in the cache are encoded when first asked for (``encoded`` counts them) and the cache is
    written back by ``save``; unit texts of summaries change as they absorb facts, so they cannot all be
    known in advance.
    """

    def __init__(self, folder: Path, bert_path: str | None = None):
        self.folder, self.bert_path = folder, bert_path
        self.vectors: dict[str, np.ndarray] = self._read()
        self._disk_changed()  # remember the file's stamp
        self._embedder = None
        self.encoded, self._saved = 0, len(self.vectors)
        self.dim = next(iter(self.vectors.values())).shape[0] if self.vectors else self.embedder.dim

    @property
    def embedder(self):
        if self._embedder is None:
            from sam_model.models.bert import TextEmbedder

            self._embedder = TextEmbedder(self.bert_path or None, "cpu")
        return self._embedder

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        missing = list(dict.fromkeys(t for t in texts if t not in self.vectors))
        if missing and self._disk_changed():  # another run may have encoded them meanwhile
            self.vectors = {**self._read(), **self.vectors}
            missing = [t for t in missing if t not in self.vectors]
        if missing:
            for t, v in zip(missing, self.embedder.encode(missing, batch_size=64)):
                self.vectors[t] = v
            self.encoded += len(missing)
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        return np.stack([self.vectors[t] for t in texts]).astype(np.float32)

    def encode_queries(self, states, observations, batch_size: int = 64, progress: bool = False) -> np.ndarray:
        return self.embed([query_text(s, o) for s, o in zip(states, observations)])

    def encode_memories(self, memories, batch_size: int = 64, progress: bool = False) -> np.ndarray:
        return self.embed([m.text for m in memories])

    def _disk_changed(self) -> bool:
        path = self.folder / "texts.json"
        stamp = path.stat().st_mtime_ns if path.exists() else None
        changed, self._stamp = stamp != getattr(self, "_stamp", None), stamp
        return changed

    def _read(self) -> dict[str, np.ndarray]:
        folder = self.folder
        if not ((folder / "texts.json").exists() and (folder / "vectors.npy").exists()):
            return {}
        try:
            texts = json.loads((folder / "texts.json").read_text(encoding="utf-8"))
            vecs = np.load(folder / "vectors.npy")
        except (json.JSONDecodeError, ValueError, OSError):
            return {}  # a damaged cache is rebuilt
        return dict(zip(texts, vecs)) if len(texts) == len(vecs) else {}

    def save(self) -> None:
        """Write the cache, merged with what another run may have written meanwhile (same texts, same vectors)."""
        if len(self.vectors) == self._saved:
            return
        self.vectors = {**self._read(), **self.vectors}
        texts = list(self.vectors)
        self.folder.mkdir(parents=True, exist_ok=True)
        with atomic_path(self.folder / "vectors.npy") as tmp, open(tmp, "wb") as fh:
            np.save(fh, np.stack([self.vectors[t] for t in texts]).astype(np.float32))
        atomic_write_text(self.folder / "texts.json", json.dumps(texts, ensure_ascii=False))
        self._saved = len(texts)
        self._disk_changed()


def cache_folder(bert_path: str) -> Path:
    import hashlib

    root = Path(os.environ.get("SAM_CACHE_DIR", Path.home() / ".cache" / "sam_model"))
    return root / "janus-bank" / hashlib.sha1(json.dumps([bert_path, 128]).encode()).hexdigest()[:12]
