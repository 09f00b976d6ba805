"""When: step distance and the current task's start, as features an inner product can carry.

A long-lived agent's memory holds many tasks whose states look alike (the same service, the same slots), so
what a state needs now is mostly in the *current* task, and recent. Both are functions of steps, and both go
into the one inner product the index computes, so search stays exact:

    memory:  φ(t_m) = [cos ω_k t_m, sin ω_k t_m]_k                  (state-independent, indexed)
    query:   ψ = R(t_q)·(α, β) + R(t_0)·(γ, δ),  (α, β, γ, δ) = h(v_s)

    ψ·φ = Σ_k α_k cos ω_k(t_q − t_m) + β_k sin ω_k(t_q − t_m)        a learned function of the step distance
        + Σ_k γ_k cos ω_k(t_0 − t_m) + δ_k sin ω_k(t_0 − t_m)        … and of the distance to the task's start

with t_q the query's step, t_0 the step where its task began (the first event of the current source episode
of a life, sam_model.data.lives; unknown → that term is 0), R(t) the rotation that turns (α, β) into
(α cos ωt + β sin ωt, α sin ωt − β cos ωt), and periods 2, 4, …, 2^K steps. Sine terms make the functions
one-sided (before vs after the task start), and h(v_s) makes them state-adaptive: a user id is looked for far
back, a flight number among the last results. h starts at zero, so an untrained time part scores nothing.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import nn


def _steps(values: Sequence[int | None] | None, n: int, device) -> tuple[torch.Tensor, torch.Tensor]:
    """(steps as float64, known mask) for a list that may hold None (unknown) or be None altogether."""
    if values is None:
        return torch.zeros(n, dtype=torch.float64, device=device), torch.zeros(n, dtype=torch.bool, device=device)
    if len(values) != n:
        raise ValueError(f"got {len(values)} steps for {n} items; give one step (or None) per item")
    known = torch.tensor([v is not None for v in values], dtype=torch.bool, device=device)
    t = torch.tensor([float(v) if v is not None else 0.0 for v in values], dtype=torch.float64, device=device)
    return t, known


def zero_head(dim: int, out: int) -> nn.Linear:
    """A linear head of the state whose weight and bias start at zero: a part added to the score (this one, the
    task-opening flag's, the reuse flag's) scores nothing until training moves it, so adding it changes no ranking."""
    head = nn.Linear(dim, out)
    nn.init.zeros_(head.weight)
    nn.init.zeros_(head.bias)
    return head


class TimeEncoding(nn.Module):
    """φ(t_m) for memories and the state-dependent ψ(v_s, t_q, t_0) for queries (formulas above)."""

    def __init__(self, dim: int, n_frequencies: int = 16):
        super().__init__()
        if n_frequencies < 1:
            raise ValueError(f"n_frequencies must be >= 1, got {n_frequencies}")
        self.k = n_frequencies
        self.register_buffer("omega", 2 * math.pi / 2.0 ** torch.arange(1, n_frequencies + 1, dtype=torch.float64),
                             persistent=False)
        self.head = zero_head(dim, 4 * n_frequencies)

    @property
    def out_dim(self) -> int:
        return 2 * self.k

    def _angles(self, t: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        a = t[:, None] * self.omega[None, :]  # float64: exact enough for steps in the millions
        return torch.cos(a), torch.sin(a)

    def memory(self, steps: Sequence[int | None] | None, n: int, dtype: torch.dtype) -> torch.Tensor:
        """φ(t_m) (n, 2K); zero for memories without a step."""
        t, known = _steps(steps, n, self.omega.device)
        c, s = self._angles(t)
        return (torch.cat([c, s], dim=-1) * known[:, None]).to(dtype)

    def query(self, v_s: torch.Tensor, steps: Sequence[int | None] | None,
              task_starts: Sequence[int | None] | None) -> torch.Tensor:
        """ψ (n, 2K): the query's step and task-start terms; each is 0 where its step is unknown."""
        n = len(v_s)
        coef = self.head(v_s).double()
        out = torch.zeros(n, 2 * self.k, dtype=torch.float64, device=v_s.device)
        for j, values in enumerate((steps, task_starts)):
            t, known = _steps(values, n, v_s.device)
            alpha, beta = coef[:, 2 * j * self.k:(2 * j + 1) * self.k], coef[:, (2 * j + 1) * self.k:(2 * j + 2) * self.k]
            c, s = self._angles(t)
            out = out + torch.cat([alpha * c + beta * s, alpha * s - beta * c], dim=-1) * known[:, None]
        return out.to(v_s.dtype)
