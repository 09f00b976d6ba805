"""The ``Encoder`` protocol: what the store, and so every search, needs of a model — the two vector maps.

It sits beside the store (sam_model.store types ``MemoryStore(encoder: Encoder | None)`` with it), apart from its
torch implementation ``sam_model.encoder.SAMEncoder``, so that the store, the memory bank, the stand-in encoders
(sam_model.memory.encoders) and the Janus adapters name the contract without importing torch or the network.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from sam_model.data.schema import State


@runtime_checkable
class Encoder(Protocol):
    """What a search needs from a model: the two vector maps (and their width).

    ``steps`` / ``task_starts``: each query's step and the step where its task began (the learned time part
    of SAMConfig.time_features); None leaves that part out. Memories bring their own ``.step``.
    """

    dim: int

    def encode_queries(self, states: Sequence[State | Mapping], observations: Sequence[str], batch_size: int = 64,
                       progress: bool = False, steps: Sequence[int | None] | None = None,
                       task_starts: Sequence[int | None] | None = None) -> np.ndarray: ...

    def encode_memories(self, memories: Sequence[Any], batch_size: int = 64, progress: bool = False) -> np.ndarray: ...
