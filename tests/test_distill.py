"""Distillation from a trained retriever (model.distill_from): the KL term, the teacher kept out of what is trained
and saved, and a student that reads less of the query pulled towards the teacher's rankings."""

from __future__ import annotations

import pytest
import pytorch_lightning as pl
import torch

from sam_model.export import save_exported
from sam_model.models.adapt import extended_config
from sam_model.models.losses import MultiPositiveInfoNCE, ScoreDistillation
from sam_model.models.sam import SAMConfig
from sam_model.retriever import SAMRetriever
from sam_model.training.datamodule import AgentLogDataModule
from sam_model.training.module import SAMLightningModule
from sam_model.training.objective import batch_loss


def test_kl_is_zero_for_the_teachers_own_scores_and_ignores_what_is_not_allowed():
    torch.manual_seed(0)
    teacher = torch.randn(4, 6)
    allowed = torch.tensor([[1, 1, 1, 0, 0, 0], [1, 1, 1, 1, 1, 1], [0, 0, 0, 0, 0, 0], [1, 0, 1, 0, 1, 0]]).bool()
    kd = ScoreDistillation(0.5)
    assert torch.allclose(kd(teacher.clone(), teacher, allowed), torch.zeros(4), atol=1e-6)
    student = teacher + torch.randn(4, 6)
    loss = kd(student, teacher, allowed)
    assert loss[2] == 0 and (loss[[0, 1, 3]] > 0).all()  # no candidate: nothing to match
    moved = student.clone()
    moved[~allowed] += 100.0  # what is not a candidate does not count
    assert torch.allclose(kd(moved, teacher, allowed), loss)
    # the definition, by hand, on the first query's three candidates
    p_t, p_s = torch.softmax(teacher[0, :3] / 0.5, -1), torch.softmax(student[0, :3] / 0.5, -1)
    assert torch.isclose(loss[0], (p_t * (p_t.log() - p_s.log())).sum(), atol=1e-6)
    student.requires_grad_(True)
    t = teacher.clone().requires_grad_(True)
    kd(student, t, allowed).sum().backward()
    assert t.grad is None and student.grad.abs().sum() > 0  # the teacher is a target, not trained
    with pytest.raises(ValueError, match="temperature must be > 0"):
        ScoreDistillation(0.0)


def test_a_run_may_read_fewer_query_tokens_than_the_model_it_starts_from():
    base = SAMConfig(dim=16, hidden=32, proj_hidden=32, time_features=4, max_length=32, observation_max_length=8)
    run = SAMConfig(dim=16, hidden=32, proj_hidden=32, time_features=4, max_length=32, state_max_length=20)
    cfg = extended_config(base, [], [], run)
    # what the run sets, not the base's; what it leaves at the default, the base's (it was reset to 0: whole)
    assert (cfg.state_max_length, cfg.observation_max_length) == (20, 8)


@pytest.fixture(scope="module")
def teacher_and_data(tmp_path_factory, small_demo_logs, tiny_bert_dir):
    """A head on the tiny BERT (frozen), trained briefly on the demo logs and exported: the teacher."""
    tmp = tmp_path_factory.mktemp("teacher")
    train, _ = small_demo_logs
    pl.seed_everything(0)
    dm = AgentLogDataModule(train=[str(train)], batch_episodes=8, cache_dir=str(tmp / "cache"))
    cfg = SAMConfig(bert_path=str(tiny_bert_dir), dim=16, hidden=32, proj_hidden=32, trainable_layers=0,
                    max_length=32)
    module = SAMLightningModule(net=cfg, vocab=dm.vocab, lr=1e-2, warmup_steps=1)
    pl.Trainer(max_steps=10, limit_val_batches=0, logger=False, enable_progress_bar=False, enable_checkpointing=False,
               enable_model_summary=False, default_root_dir=tmp, accelerator="cpu").fit(module, dm)
    return save_exported(module.net.eval(), tmp / "export"), dm, cfg


def test_the_teacher_is_frozen_shares_the_students_bert_and_is_not_saved(teacher_and_data, tmp_path):
    export, dm, cfg = teacher_and_data
    student = SAMLightningModule(net=cfg, vocab=dm.vocab, distill_from=str(export), distill_weight=2.0)
    teacher = student.teacher
    assert teacher.state_encoder.text_encoder is student.net.state_encoder.text_encoder
    assert not any(p.requires_grad for p in teacher.parameters())
    assert not any(k.startswith("teacher") for k in student.state_dict())
    trained = {id(p) for g in student.configure_optimizers()["optimizer"].param_groups for p in g["params"]}
    assert not trained & {id(p) for p in teacher.parameters()}
    # the loss is InfoNCE plus the weighted KL to the teacher's scores, on the same candidates
    dm.setup("fit")
    batch = next(iter(dm.train_dataloader()))
    plain = batch_loss(student.net, student.loss_fn, batch)
    with_kd = batch_loss(student.net, student.loss_fn, batch, teacher=teacher, distill=student.distill,
                         distill_weight=2.0)
    assert with_kd > plain
    # a student that is the teacher (same weights, same reading) has nothing to learn from it
    twin = SAMLightningModule(net=cfg, vocab=dm.vocab, init_from=str(export), distill_from=str(export))
    same = batch_loss(twin.net.eval(), twin.loss_fn, batch)
    assert torch.isclose(batch_loss(twin.net, twin.loss_fn, batch, teacher=twin.teacher, distill=twin.distill,
                                    distill_weight=1.0), same, atol=1e-5)
    with pytest.raises(ValueError, match="distill_weight must be >= 0"):
        SAMLightningModule(net=cfg, vocab=dm.vocab, distill_from=str(export), distill_weight=-1.0)
    with pytest.raises(ValueError, match="shares one frozen BERT"):
        SAMLightningModule(net=SAMConfig(**{**cfg.to_dict(), "trainable_layers": 1}), vocab=dm.vocab,
                           distill_from=str(export))


def test_distillation_pulls_a_student_that_reads_less_towards_the_teachers_rankings(teacher_and_data, tmp_path):
    export, dm, cfg = teacher_and_data
    short = SAMConfig(**{**cfg.to_dict(), "state_max_length": 6})  # the student reads 6 state tokens, the teacher 32

    def kl_after(weight: float) -> float:
        pl.seed_everything(1)
        module = SAMLightningModule(net=short, vocab=dm.vocab, init_from=str(export), distill_from=str(export),
                                    distill_weight=weight, lr=5e-3, warmup_steps=1)
        trainer = pl.Trainer(max_steps=15, limit_val_batches=0, logger=False, enable_progress_bar=False,
                             enable_checkpointing=False, enable_model_summary=False, default_root_dir=tmp_path,
                             accelerator="cpu")
        trainer.fit(module, dm)
        trainer.save_checkpoint(tmp_path / "student.ckpt")  # its card says whom it learned from
        info = SAMRetriever.load(tmp_path / "student.ckpt", device="cpu").net.training_info
        assert info["distill_from"] == str(export) and info["distill_weight"] == weight
        net, teacher = module.net.eval(), module.teacher
        total = 0.0
        with torch.no_grad():
            for batch in dm.val_dataloader():
                full = batch_loss(net, MultiPositiveInfoNCE(), batch, teacher=teacher, distill=module.distill,
                                  distill_weight=1.0)
                total += float(full - batch_loss(net, MultiPositiveInfoNCE(), batch))
        return total

    assert kl_after(20.0) < kl_after(0.0)


def test_the_logged_training_loss_is_synced_across_processes(teacher_and_data, monkeypatch):
    """Under DDP each process's loss is its share scaled by the world size (objective.batch_loss: so that gradient
    averaging gives the single-process gradient); logged unsynced, rank 0 wrote its own share scaled up, not the
    global batch's mean. Synced (a mean over processes), it is the global mean; with one process nothing changes."""
    from types import SimpleNamespace

    _, dm, cfg = teacher_and_data
    module = SAMLightningModule(net=cfg, vocab=dm.vocab)
    module._trainer = SimpleNamespace(world_size=1)
    logged = {}
    monkeypatch.setattr(module, "log", lambda name, value, **kw: logged.__setitem__(name, kw))
    dm.setup("fit")
    module.training_step(next(iter(dm.train_dataloader())), 0)
    assert logged["train/loss"].get("sync_dist") is True
