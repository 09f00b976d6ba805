"""Contrastive loss for (state, useful-memory) pairs, sentence-transformers style.

Multiple-positive InfoNCE: a decision point usually needs several memories (every
slot of the call it is about to make), so the positive term sums over all of them:

    loss(q) = logsumexp_{c ∈ allowed(q)} s(q,c)/τ − logsumexp_{p ∈ pos(q)} s(q,p)/τ

allowed(q) = the other earlier memories of q's episode (hard negatives) ∪ every memory
of the other episodes in the global batch (in-batch negatives). Under DDP the memory
embeddings are gathered from all processes *with* gradient, so each process sees the
same negatives a single process would see on the whole batch.
"""

from __future__ import annotations

import math
import warnings

import torch
import torch.distributed as dist
from torch import nn


def gather_across_devices(t: torch.Tensor) -> torch.Tensor:
    """Concatenate ``t`` (dim 0) from every process, keeping the gradient path to the local part.

    Sizes may differ per process (episodes have different lengths), so they are padded
    to the largest and trimmed after the gather.
    """
    if not (dist.is_available() and dist.is_initialized()) or dist.get_world_size() == 1:
        return t
    from torch.distributed.nn.functional import all_gather

    n = torch.tensor([t.shape[0]], device=t.device)
    sizes = [torch.zeros_like(n) for _ in range(dist.get_world_size())]
    dist.all_gather(sizes, n)
    max_n = int(max(s.item() for s in sizes))
    pad = torch.zeros((max_n - t.shape[0], *t.shape[1:]), dtype=t.dtype, device=t.device)
    with warnings.catch_warnings():
        # Deprecated in favour of _functional_collectives.all_gather_tensor_autograd, whose backward is a
        # reduce-scatter (not offered by gloo, so not by CPU DDP); sentence-transformers uses this one too.
        warnings.simplefilter("ignore", FutureWarning)
        parts = all_gather(torch.cat([t, pad]))
    return torch.cat([p[: int(s.item())] for p, s in zip(parts, sizes)])


MAX_SCALE = 100.0  # the largest 1/τ InfoNCE uses (CLIP's)
POSITIVES = ("any", "each")  # how a decision's several useful memories are scored (see MultiPositiveInfoNCE)


class MultiPositiveInfoNCE(nn.Module):
    """InfoNCE with several positives per query and a learnable temperature τ (as a log-scale).

    ``positives="any"`` maximises the summed probability of the positives (formula above): one
    confident positive is enough, which favours MRR. ``positives="each"`` averages the loss of every
    positive against all candidates (SupCon style), so each needed memory is pushed up: better
    recall and coverage when a decision needs several memories.
    """

    def __init__(self, temperature: float = 0.05, learnable: bool = True, max_scale: float = MAX_SCALE,
                 positives: str = "any"):
        super().__init__()
        if positives not in POSITIVES:
            raise ValueError(f"positives must be 'any' or 'each', got {positives!r}")
        if not temperature >= 1.0 / max_scale:  # below, the scale is clamped: it would train at another τ
            raise ValueError(f"temperature must be >= {1.0 / max_scale:g} (1 / max_scale), got {temperature}")
        self.positives = positives
        self.log_scale = nn.Parameter(torch.tensor(math.log(1.0 / temperature)), requires_grad=learnable)
        self.max_scale = max_scale

    @property
    def scale(self) -> torch.Tensor:
        """1/τ, at most ``max_scale``: clamped in log space, where the bound itself still passes the gradient."""
        return self.log_scale.clamp(max=math.log(self.max_scale)).exp()

    def forward(self, scores: torch.Tensor, allowed: torch.Tensor, positive: torch.Tensor,
                fixed_scale: bool = False) -> torch.Tensor:
        """Per-query losses (n_q,). ``scores``: (n_q, n_m); ``allowed`` ⊇ ``positive``: bool (n_q, n_m).
        ``fixed_scale``: τ gets no gradient from these losses (a term that trains one head alone,
        sam_model.training.objective.soft_losses).

        Returned unreduced so that callers can average over the *global* number of queries. A query with no
        positive gets 0 and no gradient, in both modes: it says nothing about which memory is useful (it cost
        ~3.4e38 with ``any``, the log of the float minimum, and with both modes pushed every candidate down).
        """
        if self.log_scale.requires_grad and torch.is_grad_enabled() and not fixed_scale:
            # Keep a learned τ within its bound (as CLIP does): a scale clamped only where it is used had no
            # gradient above the bound, so once an optimiser step crossed it τ stayed at 0.01 for good.
            with torch.no_grad():
                self.log_scale.clamp_(max=math.log(self.max_scale))
        logits = scores * (self.scale.detach() if fixed_scale else self.scale)
        neg_inf = torch.finfo(logits.dtype).min
        denom = torch.logsumexp(logits.masked_fill(~allowed, neg_inf), dim=-1)
        if self.positives == "each":
            n_pos = positive.sum(-1).clamp(min=1)
            losses = denom - (logits * positive).sum(-1) / n_pos
        else:
            losses = denom - torch.logsumexp(logits.masked_fill(~positive, neg_inf), dim=-1)
        return torch.where(positive.any(-1), losses, torch.zeros_like(losses))


class ScoreDistillation(nn.Module):
    """KL divergence from a teacher's candidate distribution to the student's (RocketQAv2 / sentence-transformers'
    ``DistillKLDivLoss``), over the same allowed candidates InfoNCE ranks:

        loss(q) = Σ_c p_T(c|q) · (log p_T(c|q) − log p_S(c|q)),   p_X(·|q) = softmax_{c ∈ allowed(q)} s_X(q,c)/τ

    Why: a student that reads less of the query (fewer state tokens) learns from labels alone which memory is
    useful, but not the teacher's order among the others; matching the teacher's whole distribution is meant to
    keep the rankings it replaces (on the data distilled on: README "CPU speed" measures what it does elsewhere).
    τ is fixed and the same for both, so the targets do not drift with the student's learned InfoNCE temperature.
    """

    def __init__(self, temperature: float = 0.05):
        super().__init__()
        if temperature <= 0:
            raise ValueError(f"distillation temperature must be > 0, got {temperature}")
        self.temperature = temperature

    def forward(self, student: torch.Tensor, teacher: torch.Tensor, allowed: torch.Tensor) -> torch.Tensor:
        """Per-query losses (n_q,). ``student``, ``teacher``: scores (n_q, n_m); ``allowed``: bool (n_q, n_m). A
        query with no allowed candidate gets 0."""
        neg_inf = torch.finfo(student.dtype).min
        log_s = torch.log_softmax((student / self.temperature).masked_fill(~allowed, neg_inf), dim=-1)
        log_t = torch.log_softmax((teacher.detach() / self.temperature).masked_fill(~allowed, neg_inf), dim=-1)
        kl = (log_t.exp() * (log_t - log_s)).masked_fill(~allowed, 0.0).sum(-1)
        return kl * allowed.any(-1)
