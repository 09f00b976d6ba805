"""What Janus needs from a memory system: four small protocols.

Janus never looks inside a memory. It only needs to (1) save and load a memory state,
(2) ask the updater for a candidate, (3) ask the evaluator which tasks a memory solves,
and (4) turn a memory state into a vector φ(M) so that consecutive updates can be
compared by direction. Anything with these methods plugs in: a retriever head, a memory
bank, an insight list. The protocols are ``runtime_checkable`` so adapters can be checked
with ``isinstance`` when a controller is built (attribute presence only).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Memory(Protocol):
    """A memory state. ``save`` writes one file; the controller hands it a temporary path
    and renames it into place, so ``save`` need not be atomic itself."""

    def save(self, path: str | os.PathLike) -> None: ...

    @classmethod
    def load(cls, path: str | os.PathLike) -> Memory: ...


@runtime_checkable
class Updater(Protocol):
    """The base memory updater Janus wraps (fine-tuning, writes + decay, LLM revision...)."""

    def propose(self, memory: Memory, tasks: Sequence[Any], feedback: Any) -> Memory:
        """A candidate memory M̂_t from the deployed one and the latest tasks. Must not mutate ``memory``:
        Janus may keep the old state."""
        ...


@runtime_checkable
class Evaluator(Protocol):
    """Which tasks a memory solves, batched (on GPU when the adapter has one).

    An evaluator may also offer ``correct_many(memories, tasks) -> list of bool arrays``: the controller
    then judges the deployed memory and the candidate on E_t in one call (one pass, on GPU batched), and
    otherwise calls ``correct`` twice.
    """

    def correct(self, memory: Memory, tasks: Sequence[Any]) -> np.ndarray:
        """A bool array, one entry per task."""
        ...


@runtime_checkable
class MemoryFeatures(Protocol):
    """φ: memory state → fixed-size float vector; a plain function ``phi(memory)`` qualifies."""

    def __call__(self, memory: Memory) -> np.ndarray: ...


@runtime_checkable
class TaskFeatures(Protocol):
    """Task embeddings for the coverage set (k-means); a plain function qualifies."""

    def __call__(self, tasks: Sequence[Any]) -> np.ndarray: ...


@runtime_checkable
class Gate(Protocol):
    """Decides whether a candidate is compared before deployment (the trigger policy).

    ``check`` sees the update direction z_t = φ(M̂_t) − φ(M_{t−1}) when ``needs_encoding``
    (otherwise None) and returns (fire, cos); ``commit`` is told what happened, so gates with
    memory (momentum, random streams) can move on. ``state_dict`` must be JSON-serialisable:
    it is how a run resumes.
    """

    name: str
    needs_encoding: bool

    def check(self, t: int, z: np.ndarray | None) -> tuple[bool, float | None]: ...

    def commit(self, t: int, z: np.ndarray | None, accepted: bool) -> None: ...

    def state_dict(self) -> dict: ...

    def load_state_dict(self, state: dict) -> None: ...
