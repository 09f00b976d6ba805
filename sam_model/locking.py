"""The thread-safety contract of the inference path: one re-entrant lock per object that holds memories.

An agent server answers requests from many threads and shares one memory between them. FAISS releases the GIL
while it adds and searches, so two threads inside one index at once corrupt it (an id read before another
thread's add lands is given twice; FAISS then aborts, or a search returns another user's memory). So every
object that holds memories — :class:`~sam_model.index.MemoryIndex`, :class:`~sam_model.store.MemoryStore`,
the memory bank and its agent, :class:`~sam_model.memory.scoped.ScopedMemory` — guards each public method
with its own :class:`threading.RLock` (:func:`locked`): add, update, delete, search, get and save run one at
a time per object, in any mix of threads. The lock is re-entrant, so a method may call another, and a caller
may hold ``obj.lock`` around several calls to make them one step (``with memory.lock: n = len(memory.store);
memory.save(p)``). A ScopedMemory's lock is its store's: a store may be shared (a SAMStore beside it, ``store=``),
and a ScopedMemory call of several store calls (SAMVectorStore's replacement: an add, then a delete) is one step
for every user of the store only under the store's lock. Locks are always taken outside-in (a SAMStore, then the
store, then the index), never the other way, so they cannot deadlock.

Why one lock and not a readers-writer lock: a search is a few hundred microseconds of FAISS and NumPy work,
most of it while holding the GIL, and the encoders' text caches are shared state too; an uncontended lock
costs well under a microsecond (``python -m sam_model.bench.threads`` measures both, see the README's
Reliability section). Processes share nothing and coordinate through the file locks of sam_model.io.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import threading
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


def new_lock() -> threading.RLock:
    """The lock one memory-holding object guards itself with."""
    return threading.RLock()


def locked(method: F) -> F:
    """Run ``method`` while holding ``self.lock`` (see the module doc)."""

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        with self.lock:
            return method(self, *args, **kwargs)

    return wrapper  # type: ignore[return-value]


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off for a short copy made under a lock, then back as it was.

    A snapshot of 100k memories allocates a few hundred thousand small lists and tuples, and each 700 allocations
    start a collection that, often enough, walks the whole heap: a served tenant's snapshot of 100k memories held
    its lock 0.7-0.9 s with the collector on, 0.2-0.3 s with it off. Nothing the copy makes is garbage, so there is
    nothing to collect. The switch is process-wide: a thread allocating meanwhile is only collected later."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


__all__ = ["gc_paused", "locked", "new_lock"]
