"""Micro-batching: concurrent searches share one encoder forward.

A served search is mostly the encoder: the state text through the frozen BERT and the projection, a few ms per
query on a CPU, while the index search and the re-rank over 100k memories take well under a millisecond. Run one
forward per request and 16 concurrent clients queue behind each other (p99 ≈ 16 forwards). A forward of 16
queries costs far less than 16 forwards of one, so each search here

1. asks its memory what it would encode (ScopedMemory.query_input, under the tenant's lock: the state, the
   newest one or that of the tool call the search names, traced once through the run's conversation, with the
   search's ``step`` and ``task_start``: the vector reads them, and the memories at or after the step are left out
   by the prepared query's, so a batched search is the in-process one);
2. hands that to one worker thread, which waits at most ``window`` seconds for more (or until ``max_batch``),
   then encodes every waiting query of one kind and one encoder in a single call (ScopedMemory.encode_query);
3. searches with its vector and that state (ScopedMemory.search(query_vector=..., prepared=...), under the
   tenant's lock again).

Searches of every tenant batch together (the tenants share the one encoder); the encoder is not inside any
tenant's lock while it runs, so one tenant's writes do not wait for another's forward. Latency added to a lone
query: at most ``window``.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

from sam_model.memory.scoped import ScopedMemory

MAX_WINDOW_S = 1.0  # a lone search waits up to the window: more is no batching, only a delay


@dataclass
class _Job:
    memory: ScopedMemory
    kind: str
    inputs: dict[str, Any]
    done: threading.Event = field(default_factory=threading.Event)
    vector: Any = None
    error: BaseException | None = None


class BatchedSearch:
    """``search(tenant, **ScopedMemory.search arguments)`` with the query encoded in a shared batch."""

    def __init__(self, window: float = 0.002, max_batch: int = 32):
        if not 0 <= window <= MAX_WINDOW_S or not max_batch >= 1:  # inf: the worker's wait overflowed, and every
            # search then waited for ever; NaN passed as no window
            raise ValueError(f"batch window must be 0-{MAX_WINDOW_S} s and max batch >= 1, got {window}, {max_batch}")
        self.window, self.max_batch = float(window), int(max_batch)
        self._cond = threading.Condition()
        self._pending: list[_Job] = []
        self.batches = 0  # forwards run, and queries they encoded: mean batch = queries / batches
        self.queries = 0
        threading.Thread(target=self._work, name="sam-serve-encoder", daemon=True).start()

    def __call__(self, tenant: Any, **kwargs: Any) -> dict:
        memory: ScopedMemory = tenant.memory
        scopes, _ = memory.search_scopes(*(kwargs.get(n) for n in ("user_id", "agent_id", "run_id")),
                                         kwargs.get("filters"), kwargs.get("all_scopes", False))  # filters' too
        kind, inputs = memory.query_input(kwargs["query"], kwargs.get("state"), **scopes, call=kwargs.get("call"),
                                          step=kwargs.get("step"), task_start=kwargs.get("task_start"))
        return memory.search(**kwargs, query_vector=self.encode(memory, kind, inputs), prepared=(kind, inputs))

    def encode(self, memory: ScopedMemory, kind: str, inputs: dict[str, Any]) -> Any:
        job = _Job(memory, kind, inputs)
        with self._cond:
            self._pending.append(job)
            self._cond.notify()
        job.done.wait()
        if job.error is not None:
            raise job.error
        return job.vector

    def _work(self) -> None:
        while True:
            with self._cond:
                while not self._pending:
                    self._cond.wait()
                deadline = time.monotonic() + self.window
                while len(self._pending) < self.max_batch and (left := deadline - time.monotonic()) > 0:
                    self._cond.wait(left)
                jobs, self._pending = self._pending[: self.max_batch], self._pending[self.max_batch:]
            groups: dict[tuple[int, str], list[_Job]] = {}
            for j in jobs:
                groups.setdefault((id(j.memory.store.encoder), j.kind), []).append(j)
            for (_, kind), group in groups.items():
                try:
                    vectors = group[0].memory.encode_query(kind, [j.inputs for j in group])
                    for j, v in zip(group, vectors):
                        j.vector = v
                except BaseException as err:  # noqa: B036 - handed to the waiting requests, not swallowed
                    if len(group) == 1:
                        group[0].error = err
                    else:  # one query's failure must not fail the others (other tenants' among them): each alone
                        for j in group:
                            try:
                                j.vector = j.memory.encode_query(kind, [j.inputs])[0]
                            except BaseException as one:  # noqa: B036 - handed to its own request
                                j.error = one
                self.batches += 1
                self.queries += len(group)
                for j in group:
                    j.done.set()


__all__ = ["BatchedSearch"]
