"""The task's opening statement: a memory-side flag with a state-dependent weight, in the one inner product.

An agent given work by delegation (an issue, a ticket, a request) is told most values once, in the task's first
user message, and needs them many tool results later. The time part (sam_model.models.time) knows a memory's
distance to the task start t_0, but its score is a sum of a function of the step and a function of the kind, so
"a user event AND the first one of its task" is not expressible, and nothing tells a memory that it opened its
task (in AutoCodeRover the issue is t_0 + 1, after a system prompt; elsewhere a greeting may come first). So:

    memory:  o_m  = 1 if m is the first event of kind ``user`` at or after its task's start, else 0   (indexed)
    query:   w(v_s) = a·v_s + b                                                 (a linear head, zero at init)

    score += w(v_s)·o_m

served as one more dimension on each side: the query vector ends in [.., w(v_s)], the memory vector in [.., o_m].
The task start is the one the time part and sam_model.data.lives use (the first event of the episode, or of its
``meta.source_episode`` within a life; MemoryRecorder.new_task where an agent says so), and the flag is computed
where the memory is recorded (MemoryRecorder, MemoryRecord.opens_task) or, for training rows, from the row's kinds
and task starts (sam_model.data.lives.task_openings): the same rule both ways. w starts at zero, so an untrained
part scores nothing; w depends on the state, so a decision that needs the task's values can weigh the statement up
and one that needs the last result can weigh it down.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

from sam_model.models.time import zero_head


class TaskOpening(nn.Module):
    """o_m for memories and w(v_s) for queries (formulas above)."""

    out_dim = 1

    def __init__(self, dim: int):
        super().__init__()
        self.head = zero_head(dim, 1)

    def memory(self, opens: Sequence[bool], dtype: torch.dtype) -> torch.Tensor:
        """o_m, (n, 1): 1 where the memory opened its task."""
        return torch.tensor([[1.0 if o else 0.0] for o in opens], dtype=dtype,
                            device=self.head.weight.device).view(len(opens), 1)

    def query(self, v_s: torch.Tensor) -> torch.Tensor:
        """w(v_s), (n, 1)."""
        return self.head(v_s)
