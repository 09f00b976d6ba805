"""A lexical weight read from the state: how much the store's BM25 match should count, per query.

One learned scalar (SAMConfig.lexical_learned) moved in training but did not carry to a new domain: BM25 of the
state text helps where a state names values a memory repeats (ids, names a call needs) and misleads where it does
not, and one number must split the difference for every state of every domain. So, as the opening and reuse heads
read v_s:

    query:   w(v_s) = softplus(a·v_s + b) >= 0           (a = 0, b = softplus⁻¹(0.1): w = 0.1 for every state at start)
    memory:  0

    score += w(v_s) · BM25(state text, memory text) / the best candidate's BM25

served as one more dimension on each side, LAST: the query vector ends in w(v_s), every memory vector in 0, so the
inner product is unchanged by it, and the store's lexical re-rank reads each query's own weight off the query
vector's last part (StoreConfig.lexical_per_query, set by sam_model.export.served_store). Training adds
w(v_s)[:, None]·L to the scores (sam_model.training.objective.add_lexical, L = lexical_matrix).
"""

from __future__ import annotations

import math

import torch
from torch import nn

from sam_model.models.time import zero_head


class LexicalState(nn.Module):
    """w(v_s) for queries, 0 for memories (formulas above)."""

    out_dim = 1

    def __init__(self, dim: int, init: float):
        super().__init__()
        self.head = zero_head(dim, 1)
        with torch.no_grad():  # softplus⁻¹(init): every state starts at the one learned scalar's start
            self.head.bias.fill_(math.log(math.expm1(init)))

    def query(self, v_s: torch.Tensor) -> torch.Tensor:
        """[w(v_s)], (n, 1), >= 0."""
        return nn.functional.softplus(self.head(v_s))

    def memory(self, n: int, dtype: torch.dtype) -> torch.Tensor:
        """[0], (n, 1): the memory side adds nothing to the inner product."""
        return torch.zeros(n, 1, dtype=dtype, device=self.head.weight.device)
