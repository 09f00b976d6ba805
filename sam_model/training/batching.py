"""Turning episodes into training batches.

A batch is a set of whole episodes: every event of an episode is a memory, and every
decision point of it a query whose hard negatives are the episode's other earlier
events. Encoding each memory once per batch (not once per query) is what makes
training on long episodes affordable.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import torch
from torch.utils.data import Sampler

from sam_model.data.chunks import Chunking, CountTokens, chunk_record, label_chunks
from sam_model.data.examples import MemoryRecord
from sam_model.data.lives import task_openings
from sam_model.data.reuse import recency, running_uses, use_ranks
from sam_model.data.text import content_text, drop_known


def collate_episodes(rows: Sequence[tuple[int, dict[str, Any]]], chunking: Chunking | None = None,
                     count_tokens: CountTokens | None = None) -> dict[str, Any]:
    """Rows are (episode index, episode row as made by sam_model.data.hf.episode_row).

    With ``chunking`` each long memory is its chunks (sam_model.data.chunks), all at their event's step; of an
    event a decision labels only the chunks that say a value that decision needed are its positives
    (``mem_label``, queries x memories; every chunk when none says one), the event's other chunks stay
    candidates: the label of a value is the chunk that says it. Per decision, not per event: an event two
    decisions label made the chunks of both decisions' values positives of each (31 % of such pairs in the
    AutoCodeRover train split). ``count_tokens``: the memory encoder's token count, for chunks sized in tokens.
    ``mem_opens``: whether each memory opened its task (sam_model.data.lives.task_openings; every chunk of
    that event), for a model with ``task_opening``. ``q_used``: per query, the steps of the memories earlier
    decision points of its task labelled (sam_model.data.reuse.earlier_uses; -1 pads), for a model with
    ``task_reuse`` (:func:`reuse_matrix`); ``q_recent``: r = 1/k of each of those (sam_model.data.reuse.use_ranks;
    0 pads), for a model with ``task_recency`` (:func:`recency_matrix`); ``q_used_episode``, ``q_recent_episode``:
    the same over every earlier decision of the query's episode, what a query whose task start is hidden is told
    (:func:`uses_seen`)."""
    rows = [(i, {**row, "opens": opens_of(row)}) for i, row in rows]
    if chunking is not None:
        rows = [(i, chunk_row(row, chunking, count_tokens)) for i, row in rows]
    b: dict[str, Any] = {k: [] for k in ("mem_texts", "mem_contents", "mem_kinds", "mem_phases", "q_state_texts",
                                         "q_phases", "q_obs", "mem_opens")}
    mem_ep, mem_step, q_ep, q_step, q_labels, q_task, q_used, q_recent = [], [], [], [], [], [], [], []
    ep_used: list[list[int]] = []  # per query: the uses of every earlier decision of its episode (task start hidden)
    ep_recent: list[list[float]] = []
    not_positive: list[list[int]] = []  # per query: the memories (batch positions) of its events it must not label
    for ep_idx, row in rows:
        offset = len(mem_step)
        b["mem_texts"] += row["memory_texts"]
        b["mem_contents"] += [content_text(k, t) for k, t in zip(row["kinds"], row["texts"])]
        b["mem_kinds"] += row["kinds"]
        b["mem_phases"] += row["phases"]
        b["mem_opens"] += row["opens"]
        mem_ep += [ep_idx] * len(row["steps"])
        mem_step += row["steps"]
        q = row.get("queries", row)  # the events (a chunked row's memory lists hold chunks)
        unlabelled = q.get("unlabelled")
        starts = q["task_starts"] if "task_starts" in q else [q["steps"][0] if q["steps"] else None] * len(q["steps"])
        # earlier_uses' rule read at the decisions only: earlier_uses sorts every event's uses, which on one long
        # task made collating twice as slow (4,000 events, a third decisions: 3.6 s, now 1.4 s)
        uses = running_uses(q["steps"], q["labels"], starts)
        # a query whose task start training hides is told the uses of its whole episode, as a search told none
        # (see uses_seen); in an episode of one task they are its task's
        whole = running_uses(q["steps"], q["labels"]) if len(set(starts)) > 1 else None
        for i, labels in enumerate(q["labels"]):
            last = next(uses)
            last_ep = last if whole is None else next(whole)
            if labels:
                b["q_state_texts"].append(q["state_texts"][i])
                b["q_phases"].append(q["phases"][i])
                b["q_obs"].append(q["texts"][i])
                q_ep.append(ep_idx)
                q_step.append(q["steps"][i])
                q_task.append(q["task_starts"][i] if "task_starts" in q else q["steps"][0])
                q_labels.append(labels)
                used, recent = use_marks(last)
                q_used.append(used)
                q_recent.append(recent)
                used, recent = (used, recent) if last_ep is last else use_marks(last_ep)
                ep_used.append(used)
                ep_recent.append(recent)
                not_positive.append([offset + j for j in unlabelled[i]] if unlabelled else [])
    width = max((len(x) for x in q_labels), default=1)
    b["mem_key"] = torch.tensor([memory_key(t, k, p) for t, k, p in zip(b["mem_texts"], b["mem_kinds"], b["mem_phases"])],
                                dtype=torch.long)
    b["mem_episode"] = torch.tensor(mem_ep, dtype=torch.long)
    b["mem_step"] = torch.tensor(mem_step, dtype=torch.long)
    b["q_episode"] = torch.tensor(q_ep, dtype=torch.long)
    b["q_step"] = torch.tensor(q_step, dtype=torch.long)
    b["q_task_start"] = torch.tensor(q_task, dtype=torch.long)
    b["q_labels"] = torch.tensor([x + [-1] * (width - len(x)) for x in q_labels], dtype=torch.long).view(-1, width)
    for suffix, used, recent in (("", q_used, q_recent), ("_episode", ep_used, ep_recent)):
        width = max((len(x) for x in used), default=1) or 1
        b["q_used" + suffix] = torch.tensor([x + [-1] * (width - len(x)) for x in used],
                                            dtype=torch.long).view(-1, width)
        b["q_recent" + suffix] = torch.tensor([x + [0.0] * (width - len(x)) for x in recent],
                                              dtype=torch.float32).view(-1, width)
    if chunking is not None:
        b["mem_label"] = torch.ones(len(q_step), len(mem_step), dtype=torch.bool)
        for i, js in enumerate(not_positive):
            b["mem_label"][i, js] = False
    return b


def use_marks(last: dict[int, int]) -> tuple[list[int], list[float]]:
    """One decision's uses (memory step -> latest use, sam_model.data.reuse.running_uses) as collate_episodes
    gives them: the used memories' steps in order, and r = 1/k of each (sam_model.data.reuse.use_ranks)."""
    used = sorted(last)
    ranks = use_ranks(last)
    return used, [recency(ranks[m]) for m in used]


def opens_of(row: dict[str, Any]) -> list[bool]:
    """Per event of an episode row, whether it opened its task (its first user event): the rule MemoryRecorder
    applies as it records. A row without task starts is one task from its first step."""
    starts = row.get("task_starts") or [row["steps"][0] if row["steps"] else None] * len(row["steps"])
    return task_openings(row["kinds"], starts)


def memory_key(text: str, kind: str, phase: str) -> int:
    """A memory's identity as the encoder reads it (64-bit, the same in every process, unlike ``hash``): copies of
    one event (``data.repeat``, an episode alone and inside a life) share it."""
    digest = hashlib.blake2b(f"{kind}\x00{phase}\x00{text}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little", signed=True)


def chunk_row(row: dict[str, Any], chunking: Chunking, count_tokens: CountTokens | None = None) -> dict[str, Any]:
    """An episode row whose memory lists (steps, kinds, texts, phases, memory texts) hold chunks and whose query
    lists (``queries``) hold the events, with ``unlabelled``: per event, the chunks (positions in the memory
    lists) of the events it labels that say none of the values its decision needed, so not its positives."""
    out: dict[str, Any] = {k: [] for k in ("steps", "kinds", "texts", "phases", "memory_texts", "opens")}
    chunks_at: dict[int, tuple[int, list[MemoryRecord]]] = {}  # step -> (position of its first chunk, its chunks)
    for step, kind, text, phase, mtext, opens in zip(row["steps"], row["kinds"], row["texts"], row["phases"],
                                                     row["memory_texts"], row.get("opens") or opens_of(row)):
        rec = MemoryRecord("m", row["episode_id"], step, kind, phase, mtext, content_text(kind, text))
        chunks = chunk_record(rec, chunking, count_tokens)
        chunks_at[step] = (len(out["steps"]), chunks)
        for c in chunks:
            out["steps"].append(step)
            out["kinds"].append(kind)
            out["texts"].append(c.content[len(kind) + 3:])
            out["phases"].append(phase)
            out["memory_texts"].append(c.text)
            out["opens"].append(opens)
    unlabelled = []
    for labels, values in zip(row["labels"], row.get("needed") or [[] for _ in row["steps"]]):
        drop: list[int] = []
        for s in labels:
            first, chunks = chunks_at.get(s, (0, []))
            if len(chunks) > 1:
                keep = set(label_chunks(chunks, values))
                drop += [first + j for j in range(len(chunks)) if j not in keep]
        unlabelled.append(drop)
    queries = {k: row[k] for k in ("steps", "texts", "phases", "state_texts", "labels", "task_starts") if k in row}
    return {**row, **out, "queries": {**queries, "unlabelled": unlabelled}}

def hidden_starts(n: int, task_dropout: float, generator: torch.Generator | None = None) -> list[bool] | None:
    """Which of ``n`` queries have their task start hidden, each with probability ``task_dropout`` (None: 0, no
    draw). One draw for the time features (:func:`encode_batch`) and the reuse marks (:func:`uses_seen`)."""
    if not task_dropout:
        return None
    return (torch.rand(n, generator=generator) < task_dropout).tolist()


def uses_seen(batch: dict[str, Any], hidden: list[bool] | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """(q_used, q_recent) of a batch as each query's search is told them: a query whose task start is hidden
    (``hidden``, :func:`hidden_starts`) has the uses of every earlier decision of its episode (``q_used_episode``,
    ``q_recent_episode``), as evaluate.py --task-start unknown and a live scope with no task start give them (a
    life's earlier tasks' too); the others, their task's. Why: the task's uses alone say where the hidden start
    is (nothing before it is marked, and a new task's first decisions have none), so the model learnt the reuse
    weight on a cleaner signal than the one it gets where the start is unknown. In an episode of one task the two
    are the same."""
    used, recent = batch["q_used"], batch["q_recent"]
    if hidden is None or not any(hidden):
        return used, recent
    ep_used, ep_recent = batch["q_used_episode"], batch["q_recent_episode"]
    width = max(used.shape[1], ep_used.shape[1])
    h = torch.tensor(hidden, dtype=torch.bool, device=used.device)[:, None]

    def widen(t: torch.Tensor, pad: float) -> torch.Tensor:
        return torch.nn.functional.pad(t, (0, width - t.shape[1]), value=pad)

    return (torch.where(h, widen(ep_used.to(used.device), -1), widen(used, -1)),
            torch.where(h, widen(ep_recent.to(recent.device), 0.0), widen(recent, 0.0)))


def encode_batch(net, batch: dict[str, Any], task_dropout: float = 0.0,
                 generator: torch.Generator | None = None, phase_dropout: float = 0.0,
                 known_dropout: float = 0.0, hidden: list[bool] | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Query and memory vectors of a batch, steps included (the time part of sam_model.models.time).

    ``task_dropout``: the share of queries whose task start is hidden, so the model also learns to rank when
    an agent does not say where its task began (then only the step distance is known). ``hidden``: which, drawn
    already (:func:`hidden_starts`, for the reuse marks too: :func:`uses_seen`); then ``task_dropout`` is unused.
    ``phase_dropout``: the share of queries and memories whose phase is replaced by the unknown phase (id 0):
    an unseen tool or service maps there at inference, and without this its embedding is never trained.
    ``known_dropout``: the share of queries whose state text loses its known values (``drop_known``), so the
    model also ranks from the needs, sub-goals and phase alone, and leans less on one domain's way of listing
    what is known (in a transcript the arguments of earlier calls, in an agent's own state the slots the user gave).
    """
    task = batch["q_task_start"].tolist()
    if hidden is None:
        hidden = hidden_starts(len(task), task_dropout, generator)
    if hidden is not None:
        task = [None if d else t for t, d in zip(task, hidden, strict=True)]
    q_phases, mem_phases = batch["q_phases"], batch["mem_phases"]
    if phase_dropout:
        q_phases, mem_phases = (drop_phases(p, phase_dropout, generator) for p in (q_phases, mem_phases))
    states = batch["q_state_texts"]
    if known_dropout:
        drop = (torch.rand(len(states), generator=generator) < known_dropout).tolist()
        states = [drop_known(t) if d else t for t, d in zip(states, drop)]
    q = net.encode_queries(states, q_phases, batch["q_obs"],
                           steps=batch["q_step"].tolist(), task_starts=task)
    m = net.encode_memories(batch["mem_texts"], batch["mem_kinds"], mem_phases, batch.get("mem_contents"),
                            steps=batch["mem_step"].tolist(), opens=batch.get("mem_opens"))
    return q, m


def drop_phases(phases: list[str], share: float, generator: torch.Generator | None = None) -> list[str]:
    """``phases`` with each one replaced by the unknown phase (sam_model.models.vocab.UNK) with probability
    ``share``."""
    from sam_model.models.vocab import UNK

    drop = (torch.rand(len(phases), generator=generator) < share).tolist()
    return [UNK if d else p for p, d in zip(phases, drop)]


def candidate_masks(q_episode: torch.Tensor, q_step: torch.Tensor, q_labels: torch.Tensor,
                    mem_episode: torch.Tensor, mem_step: torch.Tensor,
                    in_batch_negatives: bool = True,
                    mem_label: torch.Tensor | None = None,
                    mem_key: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """(allowed, positive) masks of shape (n_queries, n_memories).

    allowed: earlier memories of the query's own episode, plus (with in-batch negatives)
    every memory of every other episode except copies of the query's positives (``mem_key``, sam_model.training.
    batching.memory_key: a repeated episode, or one inside a life, brings the same memories again; as negatives
    they asked the model to rank a memory above itself). positive: own-episode memories at a labelled step (and,
    for chunks, where ``mem_label`` (queries x memories) holds: the chunks that say a value the query needed).
    """
    same = q_episode[:, None] == mem_episode[None, :]
    earlier = mem_step[None, :] < q_step[:, None]
    own = same & earlier
    labelled = (mem_step[None, :, None] == q_labels[:, None, :]).any(-1)
    if mem_label is not None:
        labelled = labelled & mem_label
    positive = own & labelled
    other = ~same
    if in_batch_negatives and mem_key is not None:
        uniq, inv = torch.unique(mem_key, return_inverse=True)
        pos_keys = torch.zeros(len(q_episode), len(uniq), dtype=torch.bool, device=mem_key.device)
        qi, mj = positive.nonzero(as_tuple=True)
        pos_keys[qi, inv[mj]] = True  # which memory texts each query has as a positive
        other = other & ~pos_keys[:, inv]
    allowed = own | other if in_batch_negatives else own
    return allowed, positive


def reuse_matrix(q_episode: torch.Tensor, q_used: torch.Tensor, mem_episode: torch.Tensor,
                 mem_step: torch.Tensor) -> torch.Tensor:
    """U (queries x memories, bool): the memory is of the query's episode at a step an earlier decision point of
    the query's task labelled (``q_used``, collate_episodes; every chunk of that event), the u_m(t) of
    sam_model.models.reuse. Another episode's memories (in-batch negatives) are never used by the query."""
    same = q_episode[:, None] == mem_episode[None, :]
    return same & (mem_step[None, :, None] == q_used[:, None, :]).any(-1)


def used_apart(allowed: torch.Tensor, positive: torch.Tensor,
               used: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(allowed, positive) of the ranking the store serves with its used ordering (``used``: U of
    :func:`reuse_matrix`, as the reuse marks see it). The served ranking (sam_model.data.reuse.used_first) puts the
    memories an earlier call of the task used above every other and leaves the model to order within each group,
    so a loss over every candidate spends its gradient on separating used from unused memories, which the ordering
    does anyway. Per query q, with P = positive[q] and A = allowed[q]:

        P ∩ U ≠ ∅:  A' = A ∩ U,  P' = P ∩ U   (the served first hit is a used memory: rank among the used ones)
        P ∩ U = ∅:  A' = A ∩ ¬U,  P' = P       (the used ones sit above anyway: rank the label among the rest)

    In the second case the in-batch negatives of other episodes stay (U never marks them). A query with no
    positive gets a loss of 0 either way."""
    hit = (positive & used).any(dim=1, keepdim=True)
    return torch.where(hit, allowed & used, allowed & ~used), torch.where(hit, positive & used, positive)


def recency_matrix(q_episode: torch.Tensor, q_used: torch.Tensor, q_recent: torch.Tensor,
                   mem_episode: torch.Tensor, mem_step: torch.Tensor) -> torch.Tensor:
    """R (queries x memories, float): r_m(t) = 1/k of each memory :func:`reuse_matrix` marks used (``q_recent``,
    collate_episodes; every chunk of that event), 0 elsewhere: the recency part of sam_model.models.reuse."""
    same = q_episode[:, None] == mem_episode[None, :]
    hit = same[:, :, None] & (mem_step[None, :, None] == q_used[:, None, :])
    return (hit.to(q_recent.dtype) * q_recent[:, None, :]).sum(-1)


QUERY_STRIDE = 100_000  # more decision points than one validation batch holds


def validation_query_ids(n: int, batch_idx: int, rank: int = 0, world_size: int = 1) -> torch.Tensor:
    """Ids of a validation batch's queries for the retrieval metrics, distinct across batches *and* processes:
    torchmetrics gathers every process's (score, target, id) before grouping by id, so ids that restart on each
    rank merged two ranks' queries into one (under DDP, MRR 0.789 against 0.681 on one process)."""
    return torch.arange(n) + (batch_idx * world_size + rank) * QUERY_STRIDE


class EpochShuffle(Sampler[int]):
    """A shuffle that depends on (seed, epoch) alone, never on the global RNG.

    ``epoch()`` is read when an epoch's iteration starts. A run resumed from ``last.ckpt`` at epoch e
    therefore sees exactly the batches the uninterrupted run saw at epoch e (a plain RandomSampler draws
    its order from the global RNG, whose state a checkpoint does not hold).
    """

    def __init__(self, n: int, seed: int, epoch: Callable[[], int]):
        self.n, self.seed, self.epoch = n, int(seed), epoch

    def __len__(self) -> int:
        return self.n

    def __iter__(self) -> Iterator[int]:
        g = torch.Generator().manual_seed(self.seed * 1_000_003 + int(self.epoch()))
        return iter(torch.randperm(self.n, generator=g).tolist())
