"""Reuse within a task: a memory that already supplied an argument value of an earlier call, weighed by the state.

A decision point's labels trace its call's values back to the events that first said them (sam_model.data.reuse);
once a call is made they are known, so at decision t the memories the task's earlier decisions used are known
causally. An issue statement supplies many calls, a message giving a user id one: a memory used before is likely
to be used again, whichever domain, and the state can say when (a call that needs the task's values against one
that needs the last result). So, as the task-opening flag (sam_model.models.opening) but changing over time:

    memory:  u_m(t) = 1 if m was a label of an earlier decision point of t's task (before t's event), else 0
    query:   w_u(v_s) = a·v_s + b                                               (a linear head, zero at init)

    score += w_u(v_s)·u_m(t)

served as one more dimension on each side, after the opening flag's: the query vector ends in [.., w_u(v_s)],
the memory vector in [.., u_m]. A memory is written with u_m = 0 (nothing used it yet) and the index keeps it so;
a search told which memories earlier calls of the query's task took values from (MemoryStore.search_vector's
``used``) scores those with u_m = 1, exactly the inner product of an index that held 1 there, the same whoever
searches: evaluate.py's replay of a log tells each decision's search (sam_model.evaluation.methods.StoreReplay),
and ScopedMemory tells its own from the scope's conversation (sam_model.memory.scopeduses). Training adds
w_u(v_s)·U to the scores, U the (decision, memory) matrix of the same rule
(sam_model.training.batching.reuse_matrix). A search not told the uses (a store searched directly without
``used``, the memory bank) is refused for such a model. w starts at zero, so an untrained part scores nothing.
"""

from __future__ import annotations

import torch
from torch import nn

from sam_model.models.time import zero_head


class TaskReuse(nn.Module):
    """u_m's slot for memories (0: unused when written) and w_u(v_s) for queries (formulas above); with ``recency``
    r_m's slot and w_r(v_s) after them (its own zero head, so a model without it keeps its parameters' names)."""

    def __init__(self, dim: int, recency: bool = False):
        super().__init__()
        self.head = zero_head(dim, 1)
        self.recency = zero_head(dim, 1) if recency else None

    @property
    def out_dim(self) -> int:
        return 1 if self.recency is None else 2

    def memory(self, n: int, dtype: torch.dtype) -> torch.Tensor:
        """[u_m(, r_m)] as a memory is written, (n, out_dim): 0, until a call of its task uses it (:func:`with_uses`)."""
        return torch.zeros(n, self.out_dim, dtype=dtype, device=self.head.weight.device)

    def query(self, v_s: torch.Tensor) -> torch.Tensor:
        """[w_u(v_s)(, w_r(v_s))], (n, out_dim)."""
        return self.head(v_s) if self.recency is None else torch.cat([self.head(v_s), self.recency(v_s)], dim=-1)


def with_uses(scores: torch.Tensor, queries: torch.Tensor, used: torch.Tensor,
              recent: torch.Tensor | None = None) -> torch.Tensor:
    """``scores`` (queries x memories, written with u_m = 0) with each used memory's u_m = 1: + w_u(v_s)·U.
    ``queries`` end in w_u (the last column); ``used`` is U (queries x memories, bool). With ``recent`` (R, the
    r_m(t) of each pair, sam_model.training.batching.recency_matrix: a model with ``task_recency``) the queries end
    in [w_u, w_r] and the scores gain w_r(v_s)·R too."""
    if recent is None:
        return scores + queries[:, -1:] * used.to(scores.dtype)
    return scores + queries[:, -2:-1] * used.to(scores.dtype) + queries[:, -1:] * recent.to(scores.dtype)
