"""The reuse head trained on the whole ranking over an ``used_apart`` base (``model.reuse_soft``): the split loss
trains the base and gives w_u no gradient, the loss over every candidate on the base held fixed trains w_u alone,
so the state decides how far used memories rise; validation ranks as served, base + w_u·U with no used ordering."""

from __future__ import annotations

import pytest
import torch
from test_resume import _config

from sam_model.models.losses import MultiPositiveInfoNCE
from sam_model.models.reuse import with_uses
from sam_model.models.sam import SAMConfig
from sam_model.training.batching import (
    candidate_masks,
    collate_episodes,
    encode_batch,
    reuse_matrix,
    used_apart,
)
from sam_model.training.objective import batch_loss, reuse_reads_fixed_state, soft_losses

TEXTS = ["user id 42 asks for a refund", "order 7 shipped", "card ending 1234", "weather is fine", "refund done"]
AGAIN, NEW = "phase: collect the same order again", "phase: collect a new request about the weather"


def _row(labels: list[list[int]], state: str) -> dict:
    return {"steps": [0, 1, 2, 3, 4], "texts": TEXTS, "memory_texts": TEXTS,
            "kinds": ["user", "tool", "user", "tool", "tool"], "phases": ["collect"] * 5, "labels": labels,
            "state_texts": [f"{state} {s}" for s in range(5)], "task_starts": [0] * 5}


def _rows() -> list[tuple[int, dict]]:
    """Episodes of one task each. 'Again': the decisions at 3 and 4 take memory 0 again, which the call at 2 used
    (the used memory is the label). 'New': they take memories 1 and 3, which no call used, while memory 0 is used."""
    again = _row([[], [], [0], [0], [0]], AGAIN)
    new = _row([[], [], [0], [1], [3]], NEW)
    return [(ep, again if ep % 2 == 0 else new) for ep in range(4)]


def _net(bert_dir):
    import training

    return training.make_net(bert_dir, ["collect"], ["user", "tool"], task_opening=True, task_reuse=True)


def _terms(net, batch, loss_fn):
    """(split, full) of soft_losses on ``batch``, encoded as batch_loss encodes it with the flag."""
    with reuse_reads_fixed_state(net):
        q, m = encode_batch(net, batch)
    allowed, positive = candidate_masks(batch["q_episode"], batch["q_step"], batch["q_labels"], batch["mem_episode"],
                                        batch["mem_step"], True, batch.get("mem_label"), batch.get("mem_key"))
    used = reuse_matrix(batch["q_episode"], batch["q_used"], batch["mem_episode"], batch["mem_step"])
    assert used.any()
    return soft_losses(net, loss_fn, q @ m.T, q, allowed, positive, used)


def _grads(net) -> tuple[float, float]:
    """(largest |grad| of the reuse head, largest |grad| of every other parameter)."""
    reuse = {id(p) for p in net.reuse.parameters()}
    top = {True: 0.0, False: 0.0}
    for p in net.parameters():
        if p.grad is not None:
            top[id(p) in reuse] = max(top[id(p) in reuse], p.grad.abs().max().item())
    return top[True], top[False]


def test_the_split_term_trains_the_base_alone_and_the_full_term_the_reuse_head_alone(tiny_bert_dir):
    torch.manual_seed(0)
    net = _net(tiny_bert_dir)
    with torch.no_grad():  # weights not 0 (as after a step): at 0 no gradient reaches v_s through w_u whatever it reads
        net.reuse.head.weight.copy_(0.05 * torch.randn(net.reuse.head.weight.shape))
        net.reuse.head.bias.fill_(0.5)
    loss_fn = MultiPositiveInfoNCE(0.1, learnable=True)
    batch = collate_episodes(_rows())
    split, full = _terms(net, batch, loss_fn)
    split.sum().backward()
    reuse, rest = _grads(net)
    assert reuse == 0.0 and rest > 1e-4
    net.zero_grad(set_to_none=True)
    loss_fn.zero_grad(set_to_none=True)
    split, full = _terms(net, batch, loss_fn)
    full.sum().backward()
    reuse, rest = _grads(net)
    assert reuse > 1e-4 and rest == 0.0
    assert loss_fn.log_scale.grad is None or loss_fn.log_scale.grad.item() == 0.0  # τ: the base's loss alone


def test_batch_loss_with_the_flag_is_the_sum_of_both_terms(tiny_bert_dir):
    net = _net(tiny_bert_dir).eval()
    loss_fn = MultiPositiveInfoNCE(0.1, learnable=False)
    batch = collate_episodes(_rows())
    with torch.no_grad():
        net.reuse.head.bias.fill_(0.7)
        split, full = _terms(net, batch, loss_fn)
        want = ((split + full).sum() / len(split)).item()
        assert batch_loss(net, loss_fn, batch, apart=True, soft=True).item() == pytest.approx(want, rel=1e-6)
        assert abs(want - batch_loss(net, loss_fn, batch, apart=True).item()) > 1e-3


def test_off_the_losses_are_todays_bit_for_bit(tiny_bert_dir):
    net = _net(tiny_bert_dir).eval()
    loss_fn = MultiPositiveInfoNCE(0.1, learnable=False)
    batch = collate_episodes(_rows())
    with torch.no_grad():
        net.reuse.head.bias.fill_(0.7)
        q, m = encode_batch(net, batch)
        allowed, positive = candidate_masks(batch["q_episode"], batch["q_step"], batch["q_labels"],
                                            batch["mem_episode"], batch["mem_step"], True, batch.get("mem_label"),
                                            batch.get("mem_key"))
        used = reuse_matrix(batch["q_episode"], batch["q_used"], batch["mem_episode"], batch["mem_step"])
        scores = with_uses(q @ m.T, q, used)
        every = loss_fn(scores, allowed, positive)
        split = loss_fn(scores, *used_apart(allowed, positive, used))
        assert batch_loss(net, loss_fn, batch).item() == (every.sum() / len(every)).item()
        assert batch_loss(net, loss_fn, batch, apart=True, soft=False).item() == (split.sum() / len(split)).item()


def test_the_flag_needs_the_split_loss_and_a_reuse_head(tiny_bert_dir):
    from sam_model.training.module import SAMLightningModule

    with pytest.raises(ValueError, match="model.reuse_soft needs model.used_apart"):
        batch_loss(_net(tiny_bert_dir), MultiPositiveInfoNCE(0.1), collate_episodes(_rows()), soft=True)
    cfg = SAMConfig(bert_path=str(tiny_bert_dir), dim=16, hidden=32, proj_hidden=32, max_length=32,
                    phases=["collect"], kinds=["user", "tool"], task_opening=True, task_reuse=True)
    with pytest.raises(ValueError, match="set model.used_apart: true"):
        SAMLightningModule(cfg, reuse_soft=True)


def test_the_reuse_head_learns_to_lift_used_memories_where_they_are_the_label(tiny_bert_dir):
    """A few steps on the reuse head alone (the only part the full term trains): w_u(v_s) rises for the states
    whose label is the used memory above those whose label is a memory no call used (the tiny encoder tells the two
    kinds of state apart a little, so the margin is small, but it is the state's: a shared bias lifts both)."""
    torch.manual_seed(0)
    net = _net(tiny_bert_dir)
    loss_fn = MultiPositiveInfoNCE(0.1, learnable=False)
    batch = collate_episodes(_rows())
    opt = torch.optim.Adam(net.reuse.parameters(), lr=0.05)
    for _ in range(30):
        opt.zero_grad()
        batch_loss(net, loss_fn, batch, apart=True, soft=True).backward()
        opt.step()
    with torch.no_grad():
        w_u = encode_batch(net.eval(), batch)[0][:, -1]
    later = batch["q_step"] >= 3  # the decisions after a call used memory 0
    again = torch.tensor([batch["q_episode"][i].item() % 2 == 0 for i in range(len(w_u))])
    assert w_u[later & again].min() > w_u[later & ~again].max() + 0.05, w_u


def _validation(bert_dir) -> tuple[torch.Tensor, torch.Tensor, list[float], float, float]:
    from sam_model.training.module import SAMLightningModule

    torch.manual_seed(0)
    cfg = SAMConfig(bert_path=str(bert_dir), dim=16, hidden=32, proj_hidden=32, max_length=32, dropout=0.0,
                    phases=["collect"], kinds=["user", "tool"], task_opening=True, task_reuse=True)
    module = SAMLightningModule(cfg, lr=1e-3, warmup_steps=0, used_apart=True, reuse_soft=True)
    with torch.no_grad():
        module.net.reuse.head.bias.fill_(-5.0)  # pushes used memories down: served as it is, no used ordering
    seen: list = []
    logged: dict = {}
    module.val_metrics.update = lambda preds, target, indexes: seen.append(preds.tolist())
    module.log = lambda name, value, **kw: logged.__setitem__(name, float(value))
    batch = collate_episodes(_rows()[:1])
    with torch.no_grad():
        module.validation_step(batch, 0)
        q, m = encode_batch(module.net, batch)
        allowed, positive = candidate_masks(batch["q_episode"], batch["q_step"], batch["q_labels"],
                                            batch["mem_episode"], batch["mem_step"], in_batch_negatives=False)
        used = reuse_matrix(batch["q_episode"], batch["q_used"], batch["mem_episode"], batch["mem_step"])
        split, full = soft_losses(module.net, module.loss_fn, q @ m.T, q, allowed, positive, used)
    (preds,) = seen
    return with_uses(q @ m.T, q, used)[allowed], used[allowed], preds, logged["val/loss"], (split + full).mean().item()


def test_validation_ranks_by_the_models_own_scores_and_logs_the_summed_loss(tiny_bert_dir):
    want, used, preds, loss, summed = _validation(tiny_bert_dir)
    assert used.any()
    assert torch.allclose(torch.tensor(preds, dtype=want.dtype), want, atol=1e-6)  # base + w_u·U, no shift
    assert max(p for p, u in zip(preds, used.tolist()) if u) < min(p for p, u in zip(preds, used.tolist()) if not u)
    assert loss == pytest.approx(summed, rel=1e-6)


def test_the_lodo_variant_soft_is_apart_with_the_flag():
    from pathlib import Path

    import yaml

    from sam_model.bench import lodo

    soft, apart = lodo.VARIANTS["soft"], lodo.VARIANTS["apart"]
    assert soft.configs == (*apart.configs, "configs/reuse_soft.yaml") and soft.on == "apart"
    assert (soft.worlds, soft.plots, soft.brief, soft.turn) == (apart.worlds, apart.plots, apart.brief, apart.turn)
    root = Path(__file__).resolve().parents[1]
    assert yaml.safe_load((root / "configs" / "reuse_soft.yaml").read_text())["model"] == {"reuse_soft": True}


def test_a_fit_with_the_flag_writes_a_checkpoint_and_says_it_on_the_card(tmp_path, tiny_bert_dir):
    import json

    from sam_model.data.synthetic import write_synthetic
    from sam_model.training.cli import main as train_main

    log = tmp_path / "train.jsonl"
    write_synthetic(log, 20, seed=0)
    train_main(["fit", "--config", str(_config(tmp_path, "soft", log, tiny_bert_dir)), "--trainer.max_epochs=1",
                "--model.net.task_opening=true", "--model.net.task_reuse=true", "--model.used_apart=true",
                "--model.reuse_soft=true"])
    (ckpt,) = (tmp_path / "soft").glob("best-*.ckpt")
    assert torch.load(ckpt, map_location="cpu", weights_only=True)["hyper_parameters"]["reuse_soft"] is True
    assert json.loads((tmp_path / "soft" / "export" / "training.json").read_text())["reuse_soft"] is True
