"""Memory item encoder: BERT over one memory's text + its kind + the phase it was written in → v_m.

v_m depends on the memory alone, never on the query, so every memory is encoded once
and put in a plain inner-product index.
"""

from __future__ import annotations

import torch
from torch import nn

from sam_model.models.state_encoder import fusion_mlp
from sam_model.models.text_encoder import TextEncoder


class MemoryItemEncoder(nn.Module):
    def __init__(self, text_encoder: TextEncoder, n_kinds: int, n_phases: int, dim: int = 256,
                 kind_dim: int = 16, phase_dim: int = 32, hidden: int = 512, dropout: float = 0.1):
        super().__init__()
        self.text_encoder = text_encoder
        self.kind_emb = nn.Embedding(n_kinds, kind_dim)
        self.phase_emb = nn.Embedding(n_phases, phase_dim)
        self.fuse = fusion_mlp(text_encoder.hidden_size + kind_dim + phase_dim, hidden, dim, dropout)

    def forward(self, texts: list[str], kind_ids: torch.Tensor, phase_ids: torch.Tensor,
                pooled: torch.Tensor | None = None) -> torch.Tensor:
        """``pooled`` lets the caller reuse BERT vectors it already computed for the content score."""
        h = self.text_encoder(texts) if pooled is None else pooled
        v = self.fuse(torch.cat([h, self.kind_emb(kind_ids), self.phase_emb(phase_ids)], dim=-1))
        return nn.functional.normalize(v, dim=-1)
