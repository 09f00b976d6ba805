"""The training objective on one batch of episodes, free of Lightning so it can be tested under
plain ``torch.distributed`` and reused by Janus's retriever-head updater."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from typing import Any

import torch
import torch.distributed as dist

from sam_model.models.losses import MultiPositiveInfoNCE, ScoreDistillation, gather_across_devices
from sam_model.models.reuse import with_uses
from sam_model.models.sam import SAMNet
from sam_model.rerank import bm25_matrix
from sam_model.training.batching import (
    candidate_masks,
    encode_batch,
    hidden_starts,
    recency_matrix,
    reuse_matrix,
    used_apart,
    uses_seen,
)


def seen_uses(batch: dict, mem_ep: torch.Tensor, mem_step: torch.Tensor, hidden: list[bool] | None = None,
              recency: bool = False) -> tuple[torch.Tensor, torch.Tensor | None]:
    """(U, R) of a batch as each query's search is told the uses: U (queries x memories, bool) which memories
    earlier calls of the query's task used (sam_model.training.batching.reuse_matrix), R how recently (recency_matrix;
    None unless ``recency``). ``hidden``: the queries whose task start is hidden, told the uses of their whole
    episode (sam_model.training.batching.uses_seen). One computation for the reuse marks and ``used_apart``."""
    q_used, q_recent = uses_seen(batch, hidden)
    q_ep, q_used = batch["q_episode"].to(mem_ep.device), q_used.to(mem_ep.device)
    used = reuse_matrix(q_ep, q_used, mem_ep, mem_step)
    if not recency:
        return used, None
    return used, recency_matrix(q_ep, q_used, q_recent.to(mem_ep.device), mem_ep, mem_step)


def add_uses(net: SAMNet, scores: torch.Tensor, q: torch.Tensor, used: torch.Tensor,
             recent: torch.Tensor | None = None) -> torch.Tensor:
    """``scores`` with u_m(t) (``used``, :func:`seen_uses`) and, for a model with ``task_recency``, r_m(t)
    (``recent``), as a search told the uses scores them (sam_model.models.reuse); ``scores`` itself for a model
    without reuse. Training and validation alike."""
    if net.reuse is None:
        return scores
    q = q[:, :q.shape[1] - net.lexical_tail]  # the reuse weights end the vector but for a lexical_state model's w
    if net.reuse.recency is None:
        return with_uses(scores, q, used)
    return with_uses(scores, q, used, recent)


def served_first(scores: torch.Tensor, allowed: torch.Tensor, used: torch.Tensor) -> torch.Tensor:
    """``scores`` ranked as the store's used ordering serves them, for the validation metrics (their order alone
    counts; float64, no gradient): every used memory (``used``) above every other allowed one, the model's order
    within each group, ties kept. Exact: the other scores are as given, and each used one becomes one more than the
    batch's best allowed score plus its rank among the batch's distinct used scores, an integer, so no rounding
    ties two scores the model told apart. A shift added to the float32 scores did: one query's span of 2e4 made it
    2e4, where float32 steps by 0.002, and tied another query's used memories at 0.1 and 0.1001. The order among
    used memories is the model's (the store's ``+used-latest`` orders them by latest use first, ties by the model)."""
    out = scores.detach().to(torch.float64)
    lift = allowed & used
    if not lift.any():
        return out
    _, rank = torch.unique(out[lift], sorted=True, return_inverse=True)
    out[lift] = out[allowed].max() + 1.0 + rank.to(torch.float64)
    return out


@contextmanager
def reuse_reads_fixed_state(net: SAMNet) -> Iterator[None]:
    """Inside, the reuse head (w_u, and w_r with ``task_recency``) reads v_s detached, so the gradient of the reuse
    term reaches its own weights and not the state encoder: ``model.reuse_soft`` trains that head alone on the
    whole ranking (:func:`soft_losses`). A forward pre-hook on each head, removed on leaving."""
    heads = [] if net.reuse is None else [h for h in (net.reuse.head, net.reuse.recency) if h is not None]
    handles = [h.register_forward_pre_hook(lambda _m, args: tuple(a.detach() for a in args)) for h in heads]
    try:
        yield
    finally:
        for handle in handles:
            handle.remove()


def soft_losses(net: SAMNet, loss_fn: MultiPositiveInfoNCE, base: torch.Tensor, q: torch.Tensor,
                allowed: torch.Tensor, positive: torch.Tensor, used: torch.Tensor,
                recent: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """(split, full) per-query losses of ``model.reuse_soft``, summed by the callers. split: the served ranking's
    loss (``used_apart``'s split candidates) on ``base`` (q·m with the opening flag and the lexical term, no reuse
    term) with the reuse term added detached, so no gradient of it reaches w_u; full: the loss over every candidate
    of base.detach() + w_u(v_s)·U (+ w_r(v_s)·R),
    whose gradient reaches the reuse head alone (τ fixed in it; v_s detached by :func:`reuse_reads_fixed_state`).
    Why: the base ranks each group as ``used_apart`` trains it, and w_u learns per state how far used memories
    should rise over the rest, in place of the hard used ordering. Weight 1 each (fixed, not tuned)."""
    split_allowed, split_positive = used_apart(allowed, positive, used)
    split = loss_fn(add_uses(net, base, q.detach(), used, recent), split_allowed, split_positive)
    full = loss_fn(add_uses(net, base.detach(), q, used, recent), allowed, positive, fixed_scale=True)
    return split, full


def mine(n_local: int, device: torch.device) -> torch.Tensor | None:
    """Which of the memories gathered from every process are this process's own; None without DDP (all are)."""
    if not (dist.is_available() and dist.is_initialized()) or dist.get_world_size() == 1:
        return None
    rank = dist.get_rank()
    return gather_across_devices(torch.full((n_local,), rank, device=device)) == rank


def own_columns(label: torch.Tensor, n_all: int) -> torch.Tensor:
    """``label`` (this process's queries x its memories) widened to the memories gathered from every process:
    another process's memories are of other episodes, never a query's positive, so they are left True."""
    own = mine(label.shape[1], label.device)
    if own is None:
        return label
    out = torch.ones(label.shape[0], n_all, dtype=torch.bool, device=label.device)
    out[:, own] = label
    return out


def lexical_matrix(batch: dict, allowed: torch.Tensor, gathered: bool = True) -> torch.Tensor:
    """L[i, j] = BM25(query i's state text, memory j's text) / the best of query i's allowed candidates (0 where
    that is 0), document frequencies over the batch's memory texts: the store's lexical match
    (sam_model.rerank.lexical_bonus) at weight 1, normalised over the query's in-batch candidates where the store
    normalises over its index's top RERANK_DEPTH. No gradient: a constant of the batch. Under DDP the memories
    gathered from other processes get L = 0 (their texts are not gathered), so a query is helped by its own
    process's memories' words alone. ``gathered`` False: ``allowed``'s columns are this process's memories alone
    (validation gathers none), so no collective is run (one rank's batch without a decision skips it)."""
    raw = torch.from_numpy(bm25_matrix(batch["q_state_texts"], batch["mem_texts"])).to(allowed.device)
    own = mine(raw.shape[1], allowed.device) if gathered else None
    if own is not None:
        wide = raw.new_zeros(raw.shape[0], allowed.shape[1])
        wide[:, own] = raw
        raw = wide
    raw = raw * allowed
    top = raw.amax(dim=1, keepdim=True) if raw.shape[1] else raw.new_zeros(raw.shape[0], 1)
    return torch.where(top > 0, raw / top.clamp(min=1e-300), raw.new_zeros(()))


def add_lexical(net: SAMNet, scores: torch.Tensor, batch: dict, allowed: torch.Tensor,
                gathered: bool = True, q: torch.Tensor | None = None, stats: dict | None = None) -> torch.Tensor:
    """``scores`` + w·L for a model with ``lexical_learned`` (:func:`lexical_matrix`; the gradient reaches w and the
    scores, none goes through L), + w(v_s)[:, None]·L for one with ``lexical_state``, w(v_s) the last part of each
    query vector ``q`` (the weight the store reads off it, sam_model.models.lexstate); ``scores`` itself for a model
    with neither. Training and validation alike; validation scores this process's memories alone (``gathered``
    False). ``stats`` gets ``lexical_w``, the weight's batch mean, for the training log."""
    if net.lexical_state is not None:
        if q is None:
            raise ValueError("add_lexical needs the query vectors q for a lexical_state model (w(v_s) is their last part)")
        w = q[:, -1:]
    else:
        w = net.lexical_weight
    if w is None:
        return scores
    if stats is not None:
        stats["lexical_w"] = w.detach().mean()
    return scores + w * lexical_matrix(batch, allowed, gathered).to(scores.dtype)


def scored(net: SAMNet, loss_fn: MultiPositiveInfoNCE, q: torch.Tensor, scores: torch.Tensor, batch: dict,
           allowed: torch.Tensor, positive: torch.Tensor, mem_ep: torch.Tensor, mem_step: torch.Tensor,
           apart: bool = False, soft: bool = False, hidden: list[bool] | None = None, gathered: bool = True,
           served: bool = False, stats: dict | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(scores, per-query losses, the candidates the loss ranked) of ``scores`` = q·m: the reuse marks
    (:func:`add_uses`, on the uses :func:`seen_uses` gives) and the lexical term (:func:`add_lexical`) added, the
    loss over every candidate, or with ``apart`` over :func:`used_apart`'s split, or with ``soft`` the two terms of
    :func:`soft_losses`. One function for training (:func:`batch_loss`) and validation (the Lightning module's
    ``validation_step``, ``gathered`` False), so the two score a batch alike. ``served`` (validation's metrics): with
    ``apart`` the scores returned rank every candidate as the used ordering serves them (:func:`served_first`; the
    split loss is the same either way); ``soft`` is served as its own ranking."""
    used = recent = None
    if net.reuse is not None or apart:
        used, recent = seen_uses(batch, mem_ep, mem_step, hidden, net.reuse is not None and net.reuse.recency is not None)
    if soft:
        base = add_lexical(net, scores, batch, allowed, gathered, q=q, stats=stats)
        split, full = soft_losses(net, loss_fn, base, q, allowed, positive, used, recent)
        return add_uses(net, base, q, used, recent), split + full, allowed
    scores = add_lexical(net, add_uses(net, scores, q, used, recent), batch, allowed, gathered, q=q, stats=stats)
    if not apart:
        return scores, loss_fn(scores, allowed, positive), allowed
    # the split after the lexical term, which stays normalised over every candidate as without the flag
    split_allowed, split_positive = used_apart(allowed, positive, used)
    losses = loss_fn(scores, split_allowed, split_positive)
    return (served_first(scores, allowed, used) if served else scores), losses, split_allowed


def batch_loss(net: SAMNet, loss_fn: MultiPositiveInfoNCE, batch: dict[str, Any],
               in_batch_negatives: bool = True, world_size: int = 1, task_dropout: float = 0.0,
               phase_dropout: float = 0.0, teacher: SAMNet | None = None,
               distill: ScoreDistillation | None = None, distill_weight: float = 0.0,
               known_dropout: float = 0.0, apart: bool = False, soft: bool = False,
               stats: dict | None = None) -> torch.Tensor:
    """Mean loss over the *global* batch of decision points.

    Memories are gathered from every process with gradient; each process divides its
    summed query losses by the global query count times ``1/world_size``, so that DDP's
    gradient averaging yields exactly the single-process gradient of the whole batch.

    With a ``teacher`` (a frozen trained network) each query's loss adds ``distill_weight`` times the KL divergence
    from the teacher's distribution over the same candidates to the student's (``distill``). The teacher reads the
    batch as it was logged: no task, phase or known-value dropout, its own text clipping.

    ``apart`` (``model.used_apart``): the loss of the ranking the store serves with its used ordering
    (sam_model.training.batching.used_apart, on the same U the reuse marks see); off, the loss over every candidate.
    ``stats``: filled with the batch's lexical weight (:func:`add_lexical`) for the training log.
    ``soft`` (``model.reuse_soft``, with ``apart`` and a reuse head): :func:`soft_losses` (the split loss for the
    base, the whole ranking for the reuse head alone); a teacher then sees the full scores, base + w_u·U.
    """
    if soft and (not apart or net.reuse is None):
        raise ValueError("model.reuse_soft needs model.used_apart and model.net.task_reuse")
    hidden = hidden_starts(len(batch["q_task_start"]), task_dropout)  # encode_batch's draw, for the uses too
    with reuse_reads_fixed_state(net) if soft else nullcontext():
        q, m = encode_batch(net, batch, phase_dropout=phase_dropout, known_dropout=known_dropout, hidden=hidden)
    m_all = gather_across_devices(m)
    mem_ep = gather_across_devices(batch["mem_episode"].to(m.device))
    mem_step = gather_across_devices(batch["mem_step"].to(m.device))
    label = batch.get("mem_label")
    label = None if label is None else own_columns(label.to(m.device), len(m_all))
    key = batch.get("mem_key")
    key = None if key is None else gather_across_devices(key.to(m.device))
    allowed, positive = candidate_masks(batch["q_episode"].to(m.device), batch["q_step"].to(m.device),
                                        batch["q_labels"].to(m.device), mem_ep, mem_step, in_batch_negatives, label,
                                        key)
    scores, losses, allowed = scored(net, loss_fn, q, q @ m_all.T, batch, allowed, positive, mem_ep, mem_step,
                                     apart, soft, hidden, stats=stats)
    if teacher is not None and distill is not None and distill_weight:
        with torch.no_grad():
            tq, tm = encode_batch(teacher, batch)
            t_scores = tq @ gather_across_devices(tm).T
        losses = losses + distill_weight * distill(scores, t_scores, allowed)
    n_global = gather_across_devices(torch.tensor([float(len(losses))], device=m.device)).sum()
    return losses.sum() * world_size / n_global.clamp(min=1.0)
