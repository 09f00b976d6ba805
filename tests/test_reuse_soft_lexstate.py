"""``model.reuse_soft`` with ``lexical_state`` (and ``task_recency``): the two were merged by hand in batch_loss and
validation_step, so these pin what the merge must keep: w(v_s)·L added once to the base, the reuse marks read from
their columns before w(v_s), train/lexical_w still filled, no gradient of the whole-ranking term reaching any part
but the reuse heads, validation ranked by base + w_u·U + w_r·R, and the flag off as the used_apart run before it."""

from __future__ import annotations

import pytest
import torch
import training
from test_reuse_soft import _rows

from sam_model.models.losses import MultiPositiveInfoNCE
from sam_model.models.sam import SAMConfig
from sam_model.training.batching import candidate_masks, collate_episodes, encode_batch, used_apart
from sam_model.training.objective import batch_loss, lexical_matrix, seen_uses, served_first


def _net(bert_dir):
    net = training.make_net(bert_dir, ["collect"], ["user", "tool"], task_opening=True, task_reuse=True,
                            task_recency=True, lexical_state=True)
    with torch.no_grad():  # every part scores something, so a term added twice or read off the wrong column shows
        for head in (net.reuse.head, net.reuse.recency):  # weights not 0: a gradient through v_s would then show
            head.weight.copy_(0.05 * torch.randn(head.weight.shape, generator=torch.Generator().manual_seed(1)))
        net.reuse.head.bias.fill_(0.6)
        net.reuse.recency.bias.fill_(-0.4)
        net.lexical_state.head.bias.fill_(1.5)
    return net


def _by_hand(net, batch, in_batch_negatives: bool = True):
    """(scores, allowed, positive, used): base + w(v_s)·L + w_u·U + w_r·R, each weight read off its own column."""
    q, m = encode_batch(net, batch)
    allowed, positive = candidate_masks(batch["q_episode"], batch["q_step"], batch["q_labels"], batch["mem_episode"],
                                        batch["mem_step"], in_batch_negatives, batch.get("mem_label"),
                                        batch.get("mem_key"))
    used, recent = seen_uses(batch, batch["mem_episode"], batch["mem_step"], recency=True)
    lexical = lexical_matrix(batch, allowed, gathered=False)
    assert used.any() and (recent > 0).any() and (lexical > 0).any()
    w, w_u, w_r = q[:, -1:], q[:, -3:-2], q[:, -2:-1]  # [.., w_u, w_r, w(v_s)]
    assert (w > 1.0).all() and (w_u > 0.3).all() and (w_r < -0.2).all()
    scores = q @ m.T + w * lexical + w_u * used + w_r * recent
    return scores, allowed, positive, used


def test_the_losses_add_the_lexical_term_once_and_read_the_marks_before_it(tiny_bert_dir):
    net = _net(tiny_bert_dir).eval()
    loss_fn = MultiPositiveInfoNCE(0.1, learnable=False)
    batch = collate_episodes(_rows())
    stats: dict = {}
    with torch.no_grad():
        scores, allowed, positive, used = _by_hand(net, batch)
        split = loss_fn(scores, *used_apart(allowed, positive, used))
        full = loss_fn(scores, allowed, positive)
        got = batch_loss(net, loss_fn, batch, apart=True, soft=True, stats=stats)
        off = batch_loss(net, loss_fn, batch, apart=True)
        w = encode_batch(net, batch)[0][:, -1]
    assert got.item() == pytest.approx((split + full).mean().item(), rel=1e-6)
    assert off.item() == pytest.approx(split.mean().item(), rel=1e-6)  # off: used_apart's split loss, as before
    assert stats["lexical_w"].item() == pytest.approx(w.mean().item(), rel=1e-6)  # train/lexical_w still logged


def _grads(net, loss_fn, batch, **kw) -> dict[str, torch.Tensor | None]:
    net.zero_grad(set_to_none=True)
    loss_fn.zero_grad(set_to_none=True)
    batch_loss(net, loss_fn, batch, **kw).backward()
    out = {n: None if p.grad is None else p.grad.clone() for n, p in net.named_parameters()}
    out["log_scale"] = loss_fn.log_scale.grad
    return out


def test_the_whole_ranking_reaches_the_reuse_heads_alone(tiny_bert_dir):
    """Every part but the reuse heads (BERT side, fusion, W_s, the opening and lexical heads, τ) gets the gradient
    used_apart gives it, the split loss alone; the reuse heads get one only from the whole ranking."""
    net = _net(tiny_bert_dir)
    loss_fn = MultiPositiveInfoNCE(0.1, learnable=True)
    batch = collate_episodes(_rows())
    apart = _grads(net, loss_fn, batch, apart=True)
    soft = _grads(net, loss_fn, batch, apart=True, soft=True)
    compared = 0
    for name, g in apart.items():
        if name.startswith("reuse."):
            assert g is None or g.abs().max().item() < 1e-6, name  # a constant shift within each split group
            assert soft[name] is not None and soft[name].abs().max().item() > 1e-3, name
        elif g is not None:
            assert soft[name] is not None and torch.allclose(soft[name], g, rtol=1e-5, atol=1e-7), name
            compared += g.abs().max().item() > 0
        else:
            assert soft[name] is None or not soft[name].any(), name
    assert compared > 5 and soft["lexical_state.head.bias"].abs().item() > 0


def _validation(bert_dir, reuse_soft: bool) -> tuple[list[float], float, torch.Tensor, torch.Tensor]:
    from sam_model.training.module import SAMLightningModule

    cfg = SAMConfig(bert_path=str(bert_dir), dim=16, hidden=32, proj_hidden=32, max_length=32, dropout=0.0,
                    phases=["collect"], kinds=["user", "tool"], task_opening=True, task_reuse=True,
                    task_recency=True, lexical_state=True)
    torch.manual_seed(0)
    module = SAMLightningModule(cfg, lr=1e-3, warmup_steps=0, used_apart=True, reuse_soft=reuse_soft)
    module.net.load_state_dict(_net(bert_dir).state_dict())
    module.eval()
    seen: list = []
    logged: dict = {}
    module.val_metrics.update = lambda preds, target, indexes: seen.append(preds.tolist())
    module.log = lambda name, value, **kw: logged.__setitem__(name, float(value))
    batch = collate_episodes(_rows()[:2])
    with torch.no_grad():
        module.validation_step(batch, 0)
        scores, allowed, positive, used = _by_hand(module.net, batch, in_batch_negatives=False)
        split = module.loss_fn(scores, *used_apart(allowed, positive, used))
        full = module.loss_fn(scores, allowed, positive)
    want = scores if reuse_soft else served_first(scores, allowed, used)
    loss = (split + full).mean() if reuse_soft else split.mean()
    (preds,) = seen
    return preds, logged["val/loss"], want[allowed], loss


@pytest.mark.parametrize("reuse_soft", [True, False])
def test_validation_ranks_as_served_with_the_lexical_term(tiny_bert_dir, reuse_soft):
    """On: every candidate by base + w(v_s)·L + w_u·U + w_r·R, no used-first shift, val/loss both terms. Off: the
    used_apart validation (used memories first, the split loss)."""
    preds, loss, want, want_loss = _validation(tiny_bert_dir, reuse_soft)
    assert torch.allclose(torch.tensor(preds, dtype=torch.float64), want.to(torch.float64), atol=1e-5)
    assert loss == pytest.approx(want_loss.item(), rel=1e-6)
