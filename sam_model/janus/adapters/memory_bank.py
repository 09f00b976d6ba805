"""Adapter (2): the SAM memory bank — Janus gates the bank's own writes, decay and pruning.

The run-time bank changes after every event: writes, links, corrections, decay, and — over
capacity — pruning. A pruning rule tuned too tight, or a burst of new tasks that crowds out
old ones, silently drops memories that later decisions need. Janus wraps those rules:

- the **memory** is a :class:`~sam_model.memory.bank.MemoryBank` itself (its ``save``/``load`` are
  already atomic single files, which is all the Janus ``Memory`` protocol asks);
- a **task** is a :class:`BankTask`: a chunk of agent-log events ending at a decision point
  (:func:`bank_tasks` cuts episodes that way), or a whole episode;
- the **updater** (:class:`BankUpdater`) copies the bank (save/load through a temp dir, so the
  deployed bank is never touched) and runs the state-driven :class:`~sam_model.memory.rules.BankRules`
  over the tasks' events;
- **correct** (:class:`BankEvaluator`): the top-1 (or any of the top-k) unit the bank returns for
  the decision point stands for one of its labelled memories (``MemoryUnit.sources``: a unit that
  absorbed a pruned memory's facts counts, as in the memory benchmark);
- **φ** (:class:`BankFeatures`): importance-weighted mean of the unit vectors, kind histogram, size.

    r = HashingEncoder()                     # or SAMRetriever.load(export_dir)
    ctrl = JanusController(BankUpdater(r), BankEvaluator(r), BankFeatures(), make_gate("mmt"),
                           HybridEvalSet(BankTaskFeatures(r)), "runs/janus-bank")
    bank = ctrl.run(((batch, None) for batch in batched(bank_tasks(episodes), 8)), MemoryBank(r.dim))
"""

from __future__ import annotations

import dataclasses
import math
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from sam_model.data.schema import Event, State
from sam_model.encoding import Encoder as Retriever
from sam_model.memory.bank import MemoryBank
from sam_model.memory.config import MemoryConfig
from sam_model.memory.rules import BankRules as Updater
from sam_model.memory.unit import MemoryUnit
from sam_model.store import refuse_reuse

# kinds that get their own bin in φ's histogram; anything else falls in "other"
PHI_KINDS = ("user", "system", "observation", "thought", "action", "result", "summary")
# config fields that shape the tiers; a candidate cannot change them (the tiers are built once per bank)
_TIER_FIELDS = ("working_size", "ivf_nlist", "ivf_nprobe")


@dataclass(frozen=True)
class BankTask:
    """Events the bank observes, ending (usually) at a decision point whose labels grade retrieval.

    ``decision`` is the last decision point among ``events`` (None if there is none: such a task is
    observed but can never be solved). ``id`` is for humans and manifests.
    """

    events: tuple[Event, ...]
    id: str = ""

    @property
    def decision_points(self) -> list[Event]:
        return [e for e in self.events if e.is_decision_point]

    @property
    def decision(self) -> Event | None:
        dps = self.decision_points
        return dps[-1] if dps else None

    def labels(self, event: Event | None = None) -> set[str]:
        """Memory ids (``episode#step``) labelled useful for ``event`` (default: the decision)."""
        e = self.decision if event is None else event
        return set() if e is None else {f"{e.episode_id}#{s}" for s in e.useful_memory_steps}


def bank_tasks(episodes: Iterable[Any]) -> list[BankTask]:
    """Cut episodes (``Episode`` objects or event lists) into one task per decision point.

    A task holds the events since the previous decision point up to and including its own, so
    each task is graded on exactly one decision. Events after an episode's last decision point
    join its last task; an episode without any decision point becomes one task of its own.
    """
    out: list[BankTask] = []
    for ep in episodes:
        events = list(ep.events if hasattr(ep, "events") else ep)
        if not events:
            continue
        chunks: list[list[Event]] = [[]]
        for e in events:
            chunks[-1].append(e)
            if e.is_decision_point:
                chunks.append([])
        if not chunks[-1]:
            chunks.pop()
        elif len(chunks) > 1:  # trailing events after the last decision point
            chunks[-2].extend(chunks.pop())
        for c in chunks:
            last = next((e for e in reversed(c) if e.is_decision_point), c[-1])
            out.append(BankTask(tuple(c), f"{last.episode_id}#{last.step}"))
    return out


def copy_bank(bank: MemoryBank) -> MemoryBank:
    """An independent copy through the bank's own save/load (faiss tiers do not deep-copy)."""
    with tempfile.TemporaryDirectory(prefix="janus-bank-") as tmp:
        path = Path(tmp) / "bank.npz"
        bank.save(path)
        return MemoryBank.load(path)


def _as_tasks(tasks: Sequence[Any]) -> list[BankTask]:
    out = []
    for i, t in enumerate(tasks):
        if not isinstance(t, BankTask):
            raise TypeError(f"task {i} is a {type(t).__name__}, not a BankTask; build tasks with bank_tasks(episodes)")
        if not t.events:
            raise ValueError(f"task {t.id or i} has no events; a BankTask needs at least one")
        out.append(t)
    return out


class BankUpdater:
    """The base updater: a copy of the bank observes every event of the tasks, in order.

    ``config`` (optional) replaces the bank's rules in the candidate — e.g. a smaller ``capacity``
    or a faster ``half_life`` — so that a change of policy is gated like any other update; the tier
    shape (working_size, ivf_nlist, ivf_nprobe) must stay the same. ``feedback`` is None or one
    iterable of memory ids per task: the memories the agent actually used, reinforced after the
    task's events (the bank's run-time signal of use).
    """

    def __init__(self, retriever: Retriever, config: MemoryConfig | None = None, batch_size: int = 64):
        refuse_reuse(retriever, type(self).__name__)
        self.retriever, self.config, self.batch_size = retriever, config, batch_size

    def propose(self, memory: MemoryBank, tasks: Sequence[BankTask], feedback: Any = None) -> MemoryBank:
        tasks = _as_tasks(tasks)
        if feedback is not None and len(feedback) != len(tasks):
            raise ValueError(f"feedback has {len(feedback)} entries for {len(tasks)} tasks; give one list of "
                             "used memory ids per task, or None")
        if memory.dim != self.retriever.dim:
            raise ValueError(f"the bank has dim {memory.dim} but the retriever encodes dim {self.retriever.dim}")
        bank = copy_bank(memory)
        if self.config is not None:
            bad = [f for f in _TIER_FIELDS if getattr(self.config, f) != getattr(bank.config, f)]
            if bad:
                raise ValueError(f"BankUpdater config changes the tier shape ({', '.join(bad)}); a bank's tiers are "
                                 "fixed when it is built — keep these fields as in the bank's config")
            bank.config = dataclasses.replace(self.config)
        updater = Updater(bank, encode=lambda units: self.retriever.encode_memories(units, self.batch_size))
        vectors = self._embed(bank, updater, tasks)
        for i, task in enumerate(tasks):
            for e in task.events:
                try:
                    updater.observe(e, vectors.get((e.episode_id, e.step)))
                except ValueError as exc:
                    raise ValueError(f"task {task.id or i}: {exc}") from None
            if feedback is not None and feedback[i]:
                updater.reinforce(list(feedback[i]))
        return bank

    def _embed(self, bank: MemoryBank, updater: Updater, tasks: list[BankTask]) -> dict[tuple[str, int], np.ndarray]:
        """Encode every unit the tasks will write in one batch (the write filter and each unit's text
        depend only on the episode's previous state, replayed here)."""
        last: dict[str, State] = {}
        keys, units = [], []
        for task in tasks:
            for e in task.events:
                prev = last.get(e.episode_id, bank.last_state.get(e.episode_id))
                last[e.episode_id] = e.state
                if updater.keeps(e.kind, e.state.phase):
                    keys.append((e.episode_id, e.step))
                    units.append(MemoryUnit.from_event(e, prev, 0, e.state))
        if not units:
            return {}
        vecs = np.asarray(self.retriever.encode_memories(units, self.batch_size), np.float32)
        return dict(zip(keys, vecs))


class BankEvaluator:
    """Is the top-1 (``k=1``) or any of the top-``k`` units retrieved for a task's decision point one
    of its labelled memories? Queries are encoded in one batch; the bank is only read.

    The bank has usually observed the decision point itself (and what followed in its episode), so
    those units are left out of the ranking, as candidates and as the units the bank's expansion walks from
    (MemoryBank.search's ``before``): retrieval is graded as it was *at* the decision. With
    ``all_points`` a task is solved only if every decision point in it is (for whole-episode tasks);
    a task without a decision point is never solved.
    """

    def __init__(self, retriever: Retriever, k: int = 1, all_points: bool = False, batch_size: int = 64):
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError(f"k must be a positive int, got {k!r}")
        refuse_reuse(retriever, "BankEvaluator")
        self.retriever, self.k, self.all_points, self.batch_size = retriever, k, all_points, batch_size

    def correct(self, memory: MemoryBank, tasks: Sequence[BankTask]) -> np.ndarray:
        tasks = _as_tasks(tasks)
        points = [(i, e) for i, t in enumerate(tasks)
                  for e in (t.decision_points if self.all_points else [t.decision] if t.decision else [])]
        out = np.zeros(len(tasks), bool)
        if not points or len(memory) == 0:
            return out
        q = self.retriever.encode_queries([e.state for _, e in points], [e.text for _, e in points],
                                          self.batch_size)
        ok = np.zeros(len(points), bool)
        for j, (_, e) in enumerate(points):  # the bank's search at the decision: its own unit and later ones are
            # neither hits nor reached by expansion (MemoryBank.search's before)
            hits = memory.search(q[j], self.k, needs=e.state.uncertainty_flags, before=(e.episode_id, e.step))
            labels = {f"{e.episode_id}#{s}" for s in e.useful_memory_steps}
            ok[j] = any(memory.unit(h.id).sources() & labels for h in hits)
        idx = np.array([i for i, _ in points])
        if self.all_points:
            out[:] = True
            np.logical_and.at(out, idx, ok)
            out[[i for i, t in enumerate(tasks) if not t.decision_points]] = False
        else:
            out[idx] = ok
        return out


class BankFeatures:
    """φ(bank): [importance-weighted mean unit vector | kind histogram | size], fixed length dim + 10.

    The mean says *what* the bank holds (weighted by what it still considers important, so decay
    and suppression move it; ``weighting="uniform"`` weighs every unit alike, so that what the bank
    holds counts whatever its importance); the kind histogram (fractions) how it is composed (pruning
    turns details into summaries); log1p(#units) and log1p(total importance) how much. ``kind_weight``
    and ``size_weight`` balance the parts in cosines. Identical banks give identical vectors. It reuses
    the vectors the writes stored: no text is encoded, one pass over the bank.
    """

    WEIGHTINGS = ("importance", "uniform")

    def __init__(self, kind_weight: float = 1.0, size_weight: float = 0.1, weighting: str = "importance"):
        if weighting not in self.WEIGHTINGS:
            raise ValueError(f"weighting must be one of {self.WEIGHTINGS}, got {weighting!r}")
        self.kind_weight, self.size_weight, self.weighting = kind_weight, size_weight, weighting

    def __call__(self, memory: MemoryBank) -> np.ndarray:
        units = sorted(memory, key=lambda u: u.id)  # a fixed order: float sums are order-sensitive
        hist = np.zeros(len(PHI_KINDS) + 1)
        if not units:
            return np.zeros(memory.dim + len(hist) + 2)
        w = np.array([memory.importance(u.id) for u in units], np.float64)
        emb = memory.vectors([u.id for u in units]).astype(np.float64)
        mw = w if self.weighting == "importance" else np.ones_like(w)
        mean = (mw[:, None] * emb).sum(0) / max(mw.sum(), 1e-12)
        for u in units:
            hist[PHI_KINDS.index(u.kind) if u.kind in PHI_KINDS else -1] += 1
        size = [math.log1p(len(units)), math.log1p(float(w.sum()))]
        return np.concatenate([mean, self.kind_weight * hist / len(units), self.size_weight * np.array(size)])


class BankTaskFeatures:
    """Task embeddings for the coverage set: the retriever's query vector of each task's decision
    point (its last event when it has none), L2-normalised."""

    def __init__(self, retriever: Retriever, batch_size: int = 64):
        self.retriever, self.batch_size = retriever, batch_size

    def __call__(self, tasks: Sequence[BankTask]) -> np.ndarray:
        tasks = _as_tasks(tasks)
        evs = [t.decision or t.events[-1] for t in tasks]
        x = np.asarray(self.retriever.encode_queries([e.state for e in evs], [e.text for e in evs],
                                                     self.batch_size), np.float32)
        return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)
