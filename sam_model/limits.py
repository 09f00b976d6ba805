"""Bounds on what one request may ask for, each refused with one line naming the argument or field.

Without them a careless or hostile caller takes the server down: ``search(k=10**9)`` over 17 memories
allocated 23 GB (FAISS pads every row to k) and was OOM-killed; a config with ``vocab_size: 10**12`` died in
the allocator with a message naming no field. The bounds are far above any real use (a search returns a
handful of memories; evaluate.py ranks 100) and cheap to check.
"""

from __future__ import annotations

from typing import Any

import numpy as np

MAX_K = 10_000  # results of one search
MAX_TEXT_CHARS = 100_000  # one memory's text, one query or observation (~25k tokens; BERT reads 512 at most)
MAX_BATCH_SIZE = 65_536  # texts per encoder batch
MAX_WIDTH = 65_536  # a network width: SAMConfig dims, a text encoder's hidden and intermediate sizes
MAX_VOCAB = 2_000_000  # rows of a text encoder's token embedding
MAX_LAYERS = 256  # transformer layers, attention heads
MAX_POSITIONS = 1_000_000  # a text encoder's position table


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check_int(value: Any, name: str, lo: int = 1, hi: int = MAX_K) -> int:
    """``value`` as an int in [lo, hi], else ValueError "<name> must be an integer from lo to hi, got ..."."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or not lo <= value <= hi:
        raise ValueError(f"{name} must be an integer from {lo} to {hi}, got {_show(value)}")
    return int(value)


def check_k(k: Any, name: str = "k") -> int:
    """The number of results of a search: 1 to MAX_K."""
    return check_int(k, name, 1, MAX_K)


def check_batch_size(batch_size: Any, name: str = "batch_size") -> int:
    return check_int(batch_size, name, 1, MAX_BATCH_SIZE)


def check_text(text: Any, name: str, empty: bool = False) -> str:
    """A text argument: a string of at most MAX_TEXT_CHARS characters (non-blank unless ``empty``)."""
    if not isinstance(text, str):
        raise TypeError(f"{name} must be a string, got {type(text).__name__} {_show(text)}")
    if not empty and not text.strip():
        raise ValueError(f"{name} must not be empty or only whitespace, got {_show(text)}")
    if len(text) > MAX_TEXT_CHARS:
        raise ValueError(f"{name} has {len(text)} characters, more than the limit of {MAX_TEXT_CHARS}; "
                         "split it into several memories or summarise it")
    return text


__all__ = ["MAX_BATCH_SIZE", "MAX_K", "MAX_LAYERS", "MAX_POSITIONS", "MAX_TEXT_CHARS", "MAX_VOCAB", "MAX_WIDTH",
           "check_batch_size", "check_int", "check_k", "check_text"]
