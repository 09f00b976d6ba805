"""Stand-in encoders (sam_model.encoder.Encoder), for when no trained SAM is exported.

A search needs only ``dim``, ``encode_queries(states, observations)`` and ``encode_memories(memories)``.
``HashingEncoder`` needs nothing (tests, smoke runs); ``ContentEncoder`` is the content-only baseline:
untrained MiniLM vectors of the state written as text plus the observation, against the memory text.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Sequence

import numpy as np

from sam_model.data.schema import State
from sam_model.data.text import state_to_text

_WORD = re.compile(r"\w+")


def query_text(state: State, observation: str) -> str:
    """What a content retriever reads for a query: the state in words, then the observation."""
    return f"{state_to_text(state)} | observation: {observation}"


class HashingEncoder:
    """Hashed bag-of-words vectors (L2-normalised): lexical overlap as an inner product."""

    def __init__(self, dim: int = 256, seed: int = 0):
        self.dim, self.seed = dim, seed

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), np.float32)
        for i, text in enumerate(texts):
            for tok in _WORD.findall(text.lower()):
                h = zlib.crc32(f"{self.seed}:{tok}".encode())
                out[i, h % self.dim] += 1.0 if (h >> 16) & 1 else -1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.maximum(norms, 1e-9)

    def encode_queries(self, states, observations, batch_size: int = 64, progress: bool = False,
                       steps=None, task_starts=None) -> np.ndarray:
        return self.embed([query_text(s, o) for s, o in zip(states, observations)])

    text_queries = True

    def encode_text_queries(self, texts, batch_size: int = 64) -> np.ndarray:
        return self.embed(list(texts))

    def encode_memories(self, memories, batch_size: int = 64, progress: bool = False) -> np.ndarray:
        return self.embed([m.text for m in memories])


class ContentEncoder:
    """Untrained sentence vectors (``TextEmbedder``, MiniLM by default) of query and memory text.

    With ``cache_dir`` (the package's text-vector cache, e.g. ``~/.cache/sam_model/text``) every text is
    encoded once across runs: ``save()`` writes what this run added; ``encoded`` counts BERT's work.
    """

    def __init__(self, bert_path: str | None = None, device: str | None = None, cache_dir: str | None = None):
        from sam_model.models.text_encoder import TextEmbedder

        self.embedder = TextEmbedder(bert_path, device, cache_dir=cache_dir)
        self.dim = self.embedder.dim

    @property
    def encoded(self) -> int:
        return self.embedder.encoder.encoded

    def save(self) -> None:
        self.embedder.save_cache()

    def encode_queries(self, states, observations, batch_size: int = 64, progress: bool = False,
                       steps=None, task_starts=None) -> np.ndarray:
        texts = [query_text(s, o) for s, o in zip(states, observations)]
        return self.embedder.encode(texts, batch_size, progress)

    text_queries = True

    def encode_text_queries(self, texts, batch_size: int = 64) -> np.ndarray:
        return self.embedder.encode(list(texts), batch_size)

    def encode_memories(self, memories, batch_size: int = 64, progress: bool = False) -> np.ndarray:
        return self.embedder.encode([m.text for m in memories], batch_size, progress)
