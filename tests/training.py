"""A tiny SAMNet and the few steps of training that show one of its parts learns: what tests/test_opening.py and
tests/test_time.py each wrote out (the net's settings, and an Adam loop over one part's parameters with the loss
before and after), kept in one place so the two tests train alike."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import torch

from sam_model.models.losses import MultiPositiveInfoNCE
from sam_model.models.sam import SAMConfig, SAMNet
from sam_model.training.objective import batch_loss


def make_net(bert_dir, phases: Sequence[str], kinds: Sequence[str], **kw: Any) -> SAMNet:
    """A SAMNet small enough to train on the CPU in a test, seeded: its initial weights are the same every run."""
    torch.manual_seed(0)
    return SAMNet(SAMConfig(bert_path=str(bert_dir), dim=16, hidden=32, proj_hidden=32, max_length=32, dropout=0.0,
                            phases=list(phases), kinds=list(kinds), **kw))


def train_part(net: SAMNet, params: Iterable[torch.nn.Parameter], batch: Mapping[str, Any], steps: int,
               lr: float = 0.05) -> tuple[float, float]:
    """(the loss before the first step, the loss at the last) of ``steps`` Adam steps on ``params`` alone, the
    batch's in-episode InfoNCE at a fixed temperature (no in-batch negatives): the rest of the net stays as made, so
    what the loss loses is what that part learned."""
    loss_fn, opt = MultiPositiveInfoNCE(0.1, learnable=False), torch.optim.Adam(params, lr=lr)
    first = last = None
    for _ in range(steps):
        loss = batch_loss(net, loss_fn, batch, in_batch_negatives=False)
        first = loss.item() if first is None else first
        last = loss.item()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return first, last


def group_rates(module: Any) -> dict[int, float]:
    """Each trained parameter's learning rate (by id) in ``module``'s optimiser: which group a parameter lands in."""
    return {id(p): g["initial_lr"] for g in module.configure_optimizers()["optimizer"].param_groups for p in g["params"]}
