"""The state-to-projection network g(v_s) → W_s, in three sizes.

score(s, m) = v_sᵀ W_s v_m = (W_sᵀ v_s)ᵀ v_m, so every variant exposes
``query(v_s) = W_sᵀ v_s``: the query absorbs the state-dependent projection and a
plain, state-independent inner-product index over v_m serves the search. We never
normalise the projected memory (cos(v_s, W_s v_m)), because that cannot be indexed.

- ``diag``    W_s = diag(w(v_s))                          O(d) per query (default)
- ``lowrank`` W_s = diag(w(v_s)) + A diag(c(v_s)) Bᵀ        O(d·r)
- ``full``    W_s = reshape(g(v_s), d×d)                    O(d²), the seed's full matrix
"""

from __future__ import annotations

import torch
from torch import nn

PROJECTIONS = ("diag", "lowrank", "full")


class StateProjection(nn.Module):
    """g(v_s): a small MLP whose output parameterises W_s."""

    def __init__(self, kind: str = "diag", dim: int = 256, hidden: int = 256, rank: int = 16):
        super().__init__()
        if kind not in PROJECTIONS:
            raise ValueError(f"projection must be one of {PROJECTIONS}, got {kind!r}")
        self.kind, self.dim, self.rank = kind, dim, rank
        n_out = {"diag": dim, "lowrank": dim + rank, "full": dim * dim}[kind]
        self.g = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, n_out))
        # Start at W_s = I (diag/lowrank) so training begins from plain dot-product retrieval.
        nn.init.zeros_(self.g[-1].weight)
        nn.init.zeros_(self.g[-1].bias)
        if kind == "lowrank":
            self.A = nn.Parameter(torch.randn(dim, rank) / dim**0.5)
            self.B = nn.Parameter(torch.randn(dim, rank) / dim**0.5)
        if kind == "full":
            with torch.no_grad():
                self.g[-1].bias.copy_(torch.eye(dim).flatten())

    def diagonal(self, v_s: torch.Tensor) -> torch.Tensor:
        """The per-state diagonal of W_s (what the diagnostics heatmap shows)."""
        out = self.g(v_s)
        if self.kind == "full":
            return torch.diagonal(out.view(-1, self.dim, self.dim), dim1=-2, dim2=-1)
        return 1.0 + out[..., : self.dim]

    def matrix(self, v_s: torch.Tensor) -> torch.Tensor:
        """W_s as a (batch, d, d) tensor — for tests and inspection, never on the hot path."""
        out = self.g(v_s)
        if self.kind == "full":
            return out.view(-1, self.dim, self.dim)
        w = torch.diag_embed(1.0 + out[..., : self.dim])
        if self.kind == "lowrank":
            c = out[..., self.dim :]
            w = w + torch.einsum("dr,br,er->bde", self.A, c, self.B)
        return w

    def query(self, v_s: torch.Tensor) -> torch.Tensor:
        """q_s = W_sᵀ v_s, computed without forming W_s for diag and lowrank."""
        out = self.g(v_s)
        if self.kind == "full":
            return torch.einsum("bde,bd->be", out.view(-1, self.dim, self.dim), v_s)
        q = (1.0 + out[..., : self.dim]) * v_s
        if self.kind == "lowrank":
            c = out[..., self.dim :]
            q = q + (c * (v_s @ self.A)) @ self.B.T
        return q

    def score(self, v_s: torch.Tensor, v_m: torch.Tensor) -> torch.Tensor:
        """v_sᵀ W_s v_m for every (state, memory) pair, through the explicit matrix: the reference
        that ``query(v_s) @ v_mᵀ`` must equal."""
        return torch.einsum("bd,bde,me->bm", v_s, self.matrix(v_s), v_m)
