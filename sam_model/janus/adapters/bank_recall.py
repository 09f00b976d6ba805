"""The memory bank under the bank stream (:mod:`sam_model.bench.janus_bank_stream`): updater with faults, recall
evaluator, and the stream's batches and tasks they read (:class:`BankBatch`, :class:`RecallTask`, :class:`Visit`).

- :class:`StreamUpdater` — the base updater of the stream: a copy of the deployed bank observes the batch
  (its new dialogues, then the returning users' visits, then any flood of near-duplicates) through the
  bank's own state-driven :class:`~sam_model.memory.rules.BankRules` (writes, ``corrects`` links, decay,
  pruning to capacity, tier moves); a ``prune`` batch ends with one over-eager pruning pass.
  It is :class:`~sam_model.janus.adapters.memory_bank.BankUpdater` with the stream's events looked up by
  batch: a pure function of (deployed bank, batch), so runs resume exactly.
- :class:`RecallEvaluator` — the agent reads the top-k units of the task's episode (the bank's own search:
  similarity, needs-steered expansion, importance and superseded priors) in rank order and takes the first
  value they record for the asked slot (``facts``: what a write, a correction or a summary set); the task
  is solved when that value is the true one. A wrong value ranked above the right one (a misread that
  corrected it) is a miss, and so is a slot no retrieved unit records (pruned, or crowded out). ``correct_many`` scores several banks on the same tasks with one encoding of
  the queries (what a comparison does: both memories, one pass).
- :class:`RecallTaskFeatures` — the coverage set clusters tasks by their query vectors.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from sam_model.data.schema import Event, State
from sam_model.encoding import Encoder
from sam_model.janus.adapters.memory_bank import BankTask, BankUpdater, copy_bank
from sam_model.memory.bank import MemoryBank
from sam_model.memory.rules import BankRules
from sam_model.store import refuse_reuse


@dataclass(frozen=True)
class RecallTask:
    """Asked of the memory: in episode ``episode_id``, what is ``slot``? ``value`` is the truth (normalised)."""

    id: str
    episode_id: str
    slot: str
    value: str
    state: State
    text: str
    batch: int  # the batch that brought its dialogue (0 = the history, served before the stream)


@dataclass(frozen=True)
class Visit:
    """A returning user's message: slot := value in an old episode (a misread when ``misread``)."""

    episode_id: str
    slot: str
    value: str
    text: str
    step: int
    misread: bool = False


@dataclass
class BankBatch:
    """Stream batch ``t`` (1-based): what the bank observes, what Janus is asked, and its fault (None = clean)."""

    t: int
    events: list[Event]  # the new dialogues' events, in order
    visits: list[Visit]
    tasks: list[RecallTask]  # the stream's tasks: probes of the new dialogues
    fault: str | None = None
    flood: list[Event] = field(default_factory=list)


def _as_recall(tasks: Sequence[Any]) -> list[RecallTask]:
    bad = [type(t).__name__ for t in tasks if not isinstance(t, RecallTask)]
    if bad:
        raise TypeError(f"expected RecallTask tasks, got {bad[0]}; build them with "
                        "sam_model.bench.janus_bank_stream.build_bank_stream")
    return list(tasks)


class StreamUpdater(BankUpdater):
    """Observe stream batch t (found from the tasks' ``batch``) on a copy of the bank; see the module docstring.

    ``prune_keep``: the fraction of the bank a ``prune`` fault keeps. ``prune_mode``: ``"delete"`` (a cleanup
    policy that deletes the least important units outright, facts and all) or ``"absorb"`` (the bank's own
    pruning rules at that capacity: each pruned unit's current facts pass to a neighbour or a summary).
    """

    PRUNE_MODES = ("delete", "absorb")

    def __init__(self, retriever: Encoder, batches: Sequence[BankBatch], prune_keep: float = 0.5,
                 prune_mode: str = "delete", batch_size: int = 64):
        super().__init__(retriever, None, batch_size)
        if not 0.0 < prune_keep < 1.0:
            raise ValueError(f"prune_keep is a fraction of the bank in (0, 1), got {prune_keep}")
        if prune_mode not in self.PRUNE_MODES:
            raise ValueError(f"prune_mode must be one of {self.PRUNE_MODES}, got {prune_mode!r}")
        self.batches = {b.t: b for b in batches}
        self.prune_keep, self.prune_mode = prune_keep, prune_mode
        self.calls: dict[str, int] = {"events": 0, "visits": 0, "flood": 0, "pruned_by_fault": 0}

    def propose(self, memory: MemoryBank, tasks: Sequence[RecallTask], feedback: Any = None) -> MemoryBank:
        tasks = _as_recall(tasks)
        ts = {task.batch for task in tasks}
        if len(ts) != 1 or next(iter(ts)) not in self.batches:
            raise ValueError(f"a proposal covers one stream batch; these tasks come from batches {sorted(ts)}")
        batch = self.batches[ts.pop()]
        bank = copy_bank(memory)
        updater = BankRules(bank, encode=lambda units: self.retriever.encode_memories(units, self.batch_size))
        self.observe(bank, updater, batch.events)
        self.observe(bank, updater, self.visit_events(bank, batch))
        self.observe(bank, updater, batch.flood)
        if batch.fault == "prune":
            self.prune_pass(bank, updater)
        return bank

    def observe(self, bank: MemoryBank, updater: BankRules, events: Sequence[Event]) -> None:
        """Every event through the bank's updater, their units encoded in one batch."""
        if not events:
            return
        vectors = self._embed(bank, updater, [BankTask(tuple(events))])
        for e in events:
            updater.observe(e, vectors.get((e.episode_id, e.step)))
        self.calls["events"] += len(events)

    def visit_events(self, bank: MemoryBank, batch: BankBatch) -> list[Event]:
        """A visit continues the episode's last state with one slot changed; a visit to an episode the bank
        does not hold (its batch was rejected) has nothing to continue and is dropped."""
        out = []
        for v in batch.visits:
            last = bank.last_state.get(v.episode_id)
            if last is None:
                continue
            state = dataclasses.replace(last, constraints={**last.constraints, v.slot: v.value}, uncertainty_flags=())
            out.append(Event(v.episode_id, v.step, "user", v.text, state))
        self.calls["visits"] += len(out)
        return out

    def prune_pass(self, bank: MemoryBank, updater: BankRules) -> list[str]:
        """The fault: prune the bank to prune_keep · its size, least important units first (``prune_mode``)."""
        keep = max(1, int(self.prune_keep * len(bank)))
        if self.prune_mode == "delete":
            now, decay = bank.clock, bank.config.decay
            order = sorted(bank, key=lambda u: (u.importance_at(now, decay), u.tick, u.id))
            pruned = [u.id for u in order[: len(bank) - keep]]
            for uid in pruned:
                bank.remove(uid)
        else:
            saved = bank.config
            bank.config = dataclasses.replace(saved, capacity=keep)
            try:
                pruned = updater.enforce_capacity()
            finally:
                bank.config = saved
        updater.balance_tiers()
        self.calls["pruned_by_fault"] += len(pruned)
        return pruned


class RecallEvaluator:
    """Top-k recall within the task's episode, graded by the first value read; see the module docstring."""

    def __init__(self, retriever: Encoder, k: int = 5, batch_size: int = 64):
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError(f"k must be a positive int, got {k!r}")
        refuse_reuse(retriever, "RecallEvaluator")
        self.retriever, self.k, self.batch_size = retriever, k, batch_size

    def correct(self, memory: MemoryBank, tasks: Sequence[RecallTask]) -> np.ndarray:
        return self.correct_many([memory], tasks)[0]

    def correct_many(self, memories: Sequence[MemoryBank], tasks: Sequence[RecallTask]) -> list[np.ndarray]:
        """One bool array per memory; the queries are encoded once for all of them."""
        tasks = _as_recall(tasks)
        if not tasks:
            return [np.zeros(0, bool) for _ in memories]
        q = np.asarray(self.retriever.encode_queries([t.state for t in tasks], [t.text for t in tasks],
                                                     self.batch_size), np.float32)
        out = []
        for bank in memories:
            ok = np.zeros(len(tasks), bool)
            for j, t in enumerate(tasks):
                hits = bank.search(q[j], self.k, needs=(t.slot,), episode_id=t.episode_id)
                facts = [bank.unit(h.id).facts for h in hits]
                ok[j] = next((f[t.slot] for f in facts if t.slot in f), None) == t.value
            out.append(ok)
        return out


class RecallTaskFeatures:
    """Task embeddings for the coverage set: each task's query vector, L2-normalised."""

    def __init__(self, retriever: Encoder, batch_size: int = 64):
        self.retriever, self.batch_size = retriever, batch_size

    def __call__(self, tasks: Sequence[RecallTask]) -> np.ndarray:
        tasks = _as_recall(tasks)
        x = np.asarray(self.retriever.encode_queries([t.state for t in tasks], [t.text for t in tasks],
                                                     self.batch_size), np.float32)
        return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)
