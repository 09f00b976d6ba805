"""State encoder: phase embedding + BERT over the state as text + fusion MLP → v_s.

The phase gets its own embedding because it is the strongest, cleanest signal of what
the agent needs next; the text path carries everything else (sub-goals, open needs,
constraints, last result) and the phase name too, so an unseen phase (id 0) still works.
"""

from __future__ import annotations

import torch
from torch import nn

from sam_model.models.text_encoder import TextEncoder


def fusion_mlp(n_in: int, hidden: int, dim: int, dropout: float) -> nn.Sequential:
    return nn.Sequential(nn.Linear(n_in, hidden), nn.GELU(), nn.Dropout(dropout), nn.Linear(hidden, dim))


class StateEncoder(nn.Module):
    def __init__(self, text_encoder: TextEncoder, n_phases: int, dim: int = 256, phase_dim: int = 32,
                 hidden: int = 512, dropout: float = 0.1):
        super().__init__()
        self.text_encoder = text_encoder
        self.phase_emb = nn.Embedding(n_phases, phase_dim)
        self.fuse = fusion_mlp(text_encoder.hidden_size + phase_dim, hidden, dim, dropout)

    def forward(self, state_texts: list[str], phase_ids: torch.Tensor, pooled: torch.Tensor | None = None) -> torch.Tensor:
        """``pooled``: the BERT vectors of ``state_texts`` when the caller has them (one pass for a whole query)."""
        h = self.text_encoder(state_texts) if pooled is None else pooled
        v = self.fuse(torch.cat([h, self.phase_emb(phase_ids)], dim=-1))
        return nn.functional.normalize(v, dim=-1)
