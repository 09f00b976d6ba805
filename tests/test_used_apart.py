"""The loss of the served ranking (``model.used_apart``): training and validation rank the used memories apart from
the rest, as the store's used ordering serves them (sam_model.training.batching.used_apart)."""

from __future__ import annotations

import torch

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
from sam_model.training.objective import batch_loss, served_first

TEXTS = ["user id 42 asks for a refund", "order 7 shipped", "card ending 1234", "weather is fine", "refund done"]


def _rows(n: int = 3) -> list[tuple[int, dict]]:
    """Episodes of one task: the decision at step 2 takes memory 0, the one at 3 memory 1 (no call used it yet),
    the one at 4 memory 0 again (used by the call at 2)."""
    row = {"steps": [0, 1, 2, 3, 4], "texts": TEXTS, "memory_texts": TEXTS, "kinds": ["user", "tool", "user",
                                                                                         "tool", "tool"],
           "phases": ["collect"] * 5, "labels": [[], [], [0], [1], [0]],
           "state_texts": [f"phase: collect step {s}" for s in range(5)], "task_starts": [0] * 5}
    return [(ep, row) for ep in range(n)]


def _net(bert_dir, **kw):
    import training

    return training.make_net(bert_dir, ["collect"], ["user", "tool"], task_opening=True, task_reuse=True, **kw)


def _used(batch) -> torch.Tensor:
    return reuse_matrix(batch["q_episode"], batch["q_used"], batch["mem_episode"], batch["mem_step"])


def test_the_masks_split_the_candidates_by_the_label_being_used():
    t, f = True, False
    allowed = torch.tensor([[t, t, t, t], [t, t, t, t], [t, t, t, t], [t, t, f, f]])
    positive = torch.tensor([[f, t, f, f], [t, f, f, f], [t, t, f, f], [f, f, f, f]])
    used = torch.tensor([[f, t, t, f], [f, t, f, f], [f, t, f, f], [t, f, f, f]])  # column 3: another episode
    a, p = used_apart(allowed, positive, used)
    assert a[0].tolist() == [f, t, t, f] and p[0].tolist() == [f, t, f, f]  # used label: the used candidates alone
    assert a[1].tolist() == [t, f, t, t] and p[1].tolist() == [t, f, f, f]  # unused label: the used ones leave,
    # the other episode's negative (column 3) stays
    assert a[2].tolist() == [f, t, f, f] and p[2].tolist() == [f, t, f, f]  # one positive used: the used ones rank
    assert a[3].tolist() == [f, t, f, f] and not p[3].any()  # no positive: nothing to learn either way
    assert (a >= p).all()


def test_off_the_loss_is_todays(tiny_bert_dir):
    """Without the flag the loss is the one over every candidate, computed as before the flag existed."""
    net = _net(tiny_bert_dir).eval()
    with torch.no_grad():
        net.reuse.head.bias.fill_(0.7)  # a reuse weight that moves the used memories' scores
        batch = collate_episodes(_rows())
        loss_fn = MultiPositiveInfoNCE(0.1, learnable=False)
        q, m = encode_batch(net, batch)
        allowed, positive = candidate_masks(batch["q_episode"], batch["q_step"], batch["q_labels"],
                                            batch["mem_episode"], batch["mem_step"], True, batch.get("mem_label"),
                                            batch.get("mem_key"))
        plain = loss_fn(with_uses(q @ m.T, q, _used(batch)), allowed, positive)
        assert _used(batch).any()
        assert batch_loss(net, loss_fn, batch).item() == (plain.sum() / len(plain)).item()
        assert batch_loss(net, loss_fn, batch, apart=False).item() == (plain.sum() / len(plain)).item()


def test_on_the_loss_ignores_the_used_memories_shift(tiny_bert_dir):
    """The reuse weight shifts every used memory's score by w_u(v_s), a constant per query: the served ordering puts
    them first whatever it is, and the loss of the served ranking does not move with it (over every candidate it
    does: that is the gradient the flag stops spending)."""
    batch = collate_episodes(_rows())
    loss_fn = MultiPositiveInfoNCE(0.1, learnable=False)
    losses = {}
    for shift in (0.0, 3.0, -2.0):
        net = _net(tiny_bert_dir).eval()
        with torch.no_grad():
            net.reuse.head.bias.fill_(shift)
            losses[shift] = (batch_loss(net, loss_fn, batch, apart=True).item(), batch_loss(net, loss_fn, batch).item())
    apart = [on for on, _ in losses.values()]
    every = [off for _, off in losses.values()]
    assert max(apart) - min(apart) < 1e-5 * abs(apart[0])
    assert len(set(every)) == 3


def test_the_gradient_of_the_split_loss_reaches_no_reuse_weight(tiny_bert_dir):
    net = _net(tiny_bert_dir)
    batch_loss(net, MultiPositiveInfoNCE(0.1, learnable=False), collate_episodes(_rows()), apart=True).backward()
    assert net.reuse.head.bias.grad.abs().item() < 1e-6
    net.zero_grad()
    batch_loss(net, MultiPositiveInfoNCE(0.1, learnable=False), collate_episodes(_rows())).backward()
    assert net.reuse.head.bias.grad.abs().item() > 1e-4


def test_served_first_puts_every_used_memory_above_the_rest_keeping_each_groups_order():
    scores = torch.tensor([[5.0, -3.0, 2.0, 9.0], [0.1, 0.2, 0.3, 0.4]])
    allowed = torch.tensor([[True, True, True, False], [True, True, True, True]])
    used = torch.tensor([[False, True, True, False], [False, False, False, False]])
    served = served_first(scores, allowed, used)
    assert served[0, 2] > served[0, 1] > served[0, 0]  # used (model's order among them), then the unused one
    assert torch.equal(served[1], scores[1])


def _validation(bert_dir, apart: bool) -> tuple[list[list[float]], list[list[bool]], float]:
    """(scores, targets, val/loss) validation_step gives for episodes whose reuse weight pushes used memories down."""
    from sam_model.training.module import SAMLightningModule

    torch.manual_seed(0)
    cfg = SAMConfig(bert_path=str(bert_dir), dim=16, hidden=32, proj_hidden=32, max_length=32, dropout=0.0,
                    phases=["collect"], kinds=["user", "tool"], task_opening=True, task_reuse=True)
    module = SAMLightningModule(cfg, lr=1e-3, warmup_steps=0, used_apart=apart)
    with torch.no_grad():
        module.net.reuse.head.bias.fill_(-5.0)
    seen: list = []
    logged: dict = {}
    module.val_metrics.update = lambda preds, target, indexes: seen.append((preds.tolist(), target.tolist()))
    module.log = lambda name, value, **kw: logged.__setitem__(name, float(value))
    with torch.no_grad():
        module.validation_step(collate_episodes(_rows(1)), 0)
    (preds, target), = seen
    return preds, target, logged["val/loss"]


def test_validation_ranks_as_served(tiny_bert_dir):
    """One episode, a query per decision (steps 2, 3, 4; candidates the earlier steps); at step 4 memories 0 and 1
    are used (the calls at 2 and 3 took them) and the decision needs memory 0. Served, a used memory is first
    whatever the model says of it (here its reuse weight pushes them down)."""
    preds, target, loss = _validation(tiny_bert_dir, apart=True)
    last = slice(len(preds) - 4, len(preds))  # the decision at 4: memories 0-3
    p = preds[last]
    assert target[last] == [True, False, False, False]
    assert max(p[:2]) > max(p[2:])  # a used memory first
    off_preds, off_target, off_loss = _validation(tiny_bert_dir, apart=False)
    assert off_target == target and max(off_preds[last][:2]) < max(off_preds[last][2:])  # the model alone: lower
    assert loss != off_loss


def test_served_first_is_exact_per_query_whatever_another_querys_span():
    """One validation batch holds every query: a query whose scores span 2e4 must not round another query's used
    memories (0.1 and 0.1001) into a tie, which torchmetrics breaks in any order (float32 at 2e4 steps by 0.002)."""
    scores = torch.tensor([[1e4, -1e4, 0.0, 0.0], [0.1, 0.1001, 0.3, 0.0]])
    allowed = torch.ones(2, 4, dtype=torch.bool)
    used = torch.tensor([[False, False, False, False], [True, True, False, False]])
    served = served_first(scores, allowed, used)
    assert served[1, 1] > served[1, 0] > served[1, 2] > served[1, 3]  # used by the model's order, then the rest
    assert served[0, 0] > served[0, 2] == served[0, 3] > served[0, 1]  # no used memory: the order, ties kept
    ties = served_first(torch.tensor([[0.5, 0.5, 0.2]]), torch.ones(1, 3, dtype=torch.bool),
                        torch.tensor([[True, True, False]]))
    assert ties[0, 0] == ties[0, 1] > ties[0, 2]  # equal scores stay tied, as without the ordering


def test_the_split_is_by_the_memories_the_served_ordering_puts_first():
    """U of training (collate_episodes' running uses, a query's task's; its episode's where the start is hidden) is
    the set a served search is told (sam_model.evaluation.ranking.used_memories: earlier_uses over the episode cut
    at the task start, task_uses), decision by decision, over random lives of several tasks: the loss splits the
    candidates where the served ranking does."""
    import random

    from sam_model.data.reuse import earlier_uses, task_uses

    rnd = random.Random(0)
    for _ in range(200):
        n = rnd.randint(2, 12)
        steps, starts, start = list(range(n)), [], 0
        for s in steps:
            start = s if s and rnd.random() < 0.25 else start
            starts.append(start)
        labels = [sorted({rnd.randrange(s) for _ in range(rnd.randint(1, 3))}) if s and rnd.random() < 0.6 else []
                  for s in steps]
        row = {"steps": steps, "texts": ["t"] * n, "memory_texts": ["t"] * n, "kinds": ["user"] * n,
               "phases": ["collect"] * n, "labels": labels, "state_texts": ["s"] * n, "task_starts": starts}
        batch = collate_episodes([(0, row)])
        ev = earlier_uses(steps, labels)
        decisions = [i for i in steps if labels[i]]
        for suffix, known in (("", True), ("_episode", False)):  # the task start known; hidden
            used = reuse_matrix(batch["q_episode"], batch["q_used" + suffix], batch["mem_episode"], batch["mem_step"])
            for q, i in enumerate(decisions):
                served = task_uses(ev[i], starts[i] if known else None)
                assert set(used[q].nonzero().flatten().tolist()) == set(served)


def test_off_validation_is_todays(tiny_bert_dir):
    """Without the flag validation scores and its loss are those over every candidate, computed as before the flag
    existed (the reuse marks added to q·m, no ordering), so older runs' val/mrr and picked checkpoints stand."""
    from sam_model.training.module import SAMLightningModule

    torch.manual_seed(0)
    cfg = SAMConfig(bert_path=str(tiny_bert_dir), dim=16, hidden=32, proj_hidden=32, max_length=32, dropout=0.0,
                    phases=["collect"], kinds=["user", "tool"], task_opening=True, task_reuse=True)
    module = SAMLightningModule(cfg, lr=1e-3, warmup_steps=0).eval()
    seen: list = []
    logged: dict = {}
    module.val_metrics.update = lambda preds, target, indexes: seen.append(preds)
    module.log = lambda name, value, **kw: logged.__setitem__(name, float(value))
    batch = collate_episodes(_rows(2))
    with torch.no_grad():
        module.net.reuse.head.bias.fill_(0.7)
        module.validation_step(batch, 0)
        q, m = encode_batch(module.net, batch)
        allowed, positive = candidate_masks(batch["q_episode"], batch["q_step"], batch["q_labels"],
                                            batch["mem_episode"], batch["mem_step"], in_batch_negatives=False)
        scores = with_uses(q @ m.T, q, _used(batch))
        loss = module.loss_fn(scores, allowed, positive).mean()
    assert torch.equal(seen[0], scores[allowed])
    assert logged["val/loss"] == float(loss)
