"""Training through Lightning, export, and the Lightning-free retriever agreeing with it."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
import pytorch_lightning as pl
import torch

from sam_model.data import episode_memories, read_episodes
from sam_model.export import save_exported
from sam_model.io import SAMFileError
from sam_model.models.projection import PROJECTIONS
from sam_model.models.sam import SAMConfig
from sam_model.retriever import SAMRetriever
from sam_model.training.datamodule import AgentLogDataModule
from sam_model.training.module import SAMLightningModule


def _fit(tmp_path, log, bert_dir, projection: str, steps: int = 3) -> tuple[SAMLightningModule, str]:
    pl.seed_everything(0)
    dm = AgentLogDataModule(train=[str(log)], batch_episodes=4, cache_dir=str(tmp_path / "cache"))
    cfg = SAMConfig(bert_path=str(bert_dir), dim=16, projection=projection, rank=4, hidden=32, proj_hidden=32,
                    alpha=0.8, learn_alpha=True, trainable_layers=1)
    module = SAMLightningModule(net=cfg, vocab=dm.vocab, lr=1e-2, warmup_steps=1)
    trainer = pl.Trainer(max_steps=steps, limit_val_batches=1, logger=False, enable_progress_bar=False,
                         enable_model_summary=False, default_root_dir=tmp_path, accelerator="cpu",
                         num_sanity_val_steps=0)
    trainer.fit(module, dm)
    ckpt = tmp_path / f"{projection}.ckpt"
    trainer.save_checkpoint(ckpt)
    return module, str(ckpt)


@pytest.mark.parametrize("projection", PROJECTIONS)
def test_exported_scores_equal_lightning_module(tmp_path, small_demo_logs, tiny_bert_dir, projection):
    train, _ = small_demo_logs
    module, ckpt = _fit(tmp_path, train, tiny_bert_dir, projection)
    net = module.net.eval()
    ep = read_episodes(train)[0]
    mems = episode_memories(ep)
    dps = ep.decision_points
    with torch.no_grad():
        from sam_model.data.text import state_to_text

        q_ref = net.encode_queries([state_to_text(e.state) for e in dps], [e.state.phase for e in dps],
                                   [e.text for e in dps])
        m_ref = net.encode_memories([m.text for m in mems], [m.kind for m in mems], [m.phase for m in mems])
    ref = (q_ref @ m_ref.T).numpy()

    out = save_exported(SAMRetriever.load(ckpt, device="cpu").net, tmp_path / "export")
    r = SAMRetriever.load(out, device="cpu")
    got = r.encode_queries([e.state for e in dps], [e.text for e in dps]) @ r.encode_memories(mems).T
    np.testing.assert_allclose(got, ref, atol=1e-4)
    assert json.loads((out / "config.json").read_text())["sam"]["projection"] == projection


def test_trained_retriever_searches_its_index(tmp_path, trained_demo_export, small_demo_logs):
    _, heldout = small_demo_logs
    r = SAMRetriever.load(trained_demo_export)
    assert r.store.config.slot_match == 0.3 and r.store.provenance  # configs/demo.yaml's model.store
    ep = read_episodes(heldout)[0]
    r.add_memories(episode_memories(ep))
    dp = ep.decision_points[0]
    hits = r.search(dp.state, dp.text, k=5, episode_id=ep.episode_id)
    ids = [h.id for h in hits]
    assert len(ids) == 5 and all(i.startswith(ep.episode_id) for i in ids)
    q = r.encode_queries([dp.state], [dp.text], steps=[r.store.next_step(ep.episode_id)])[0]
    np.testing.assert_allclose([h.index_score for h in hits], r.store.index.get_vectors(ids) @ q, atol=1e-5)
    np.testing.assert_allclose([h.score for h in hits], [h.index_score + h.rerank_bonus for h in hits])
    plain = r.search(dp.state, dp.text, k=5, episode_id=ep.episode_id, rerank=False)
    assert np.all(np.diff([h.score for h in plain]) <= 0)  # without the re-rank the index ranks by score alone
    # the store travels with the export and comes back
    saved = r.save(tmp_path / "with_index")
    r2 = SAMRetriever.load(saved)
    assert len(r2.store) == len(ep.events)
    hits2 = r2.search(dp.state, dp.text, k=5, episode_id=ep.episode_id)
    assert [h.id for h in hits2] == ids and np.allclose([h.score for h in hits2], [h.score for h in hits], atol=1e-5)
    assert [h.text for h in hits2] == [h.text for h in hits]
    # the Hugging Face names write and read the same folder, model card included
    pre = r2.save_pretrained(tmp_path / "pretrained")
    assert (pre / "README.md").read_text().startswith("---\nlibrary_name: sam_model")
    r3 = SAMRetriever.from_pretrained(pre)
    assert [h.id for h in r3.search(dp.state, dp.text, k=5, episode_id=ep.episode_id)] == ids


def test_export_errors_name_the_problem(tmp_path, tiny_bert_dir):
    with pytest.raises(SAMFileError, match="not found"):
        SAMRetriever.load(tmp_path / "missing")
    with pytest.raises(SAMFileError, match="checkpoint not found"):
        SAMRetriever.load(tmp_path / "missing.ckpt")
    run = tmp_path / "checkpoints" / "adapt"  # the README's best-epoch=NN.ckpt copied as written (a walkthrough)
    run.mkdir(parents=True)
    for name in ("best-epoch=03.ckpt", "last.ckpt"):
        (run / name).write_bytes(b"x")
    with pytest.raises(SAMFileError, match=r"best-epoch=NN.ckpt \(.*adapt holds best-epoch=03.ckpt, last.ckpt: give "):
        SAMRetriever.load(run / "best-epoch=NN.ckpt")
    bad = tmp_path / "bad.ckpt"
    bad.write_bytes(b"not a checkpoint")
    with pytest.raises(SAMFileError, match="cannot be read as a checkpoint"):
        SAMRetriever.load(bad)
    from sam_model.models.sam import SAMNet

    mismatched = tmp_path / "mismatched.ckpt"
    cfg = SAMConfig(bert_path=str(tiny_bert_dir), dim=8, hidden=16, proj_hidden=16).to_dict()
    torch.save({"hyper_parameters": {"net": cfg}, "state_dict": {"net.not_a_weight": torch.zeros(1)}}, mismatched)
    with pytest.raises(SAMFileError, match="does not match its own configuration"):
        SAMRetriever.load(mismatched)
    net = SAMNet(SAMConfig(bert_path=str(tiny_bert_dir), dim=8, hidden=16, proj_hidden=16))
    out = save_exported(net, tmp_path / "exp")
    (out / "model.safetensors").write_bytes(b"\x00" * 64)  # corrupt weights
    with pytest.raises(SAMFileError, match="corrupt"):
        SAMRetriever.load(out)
    out = save_exported(net, tmp_path / "exp")  # replaced atomically
    cfg = json.loads((out / "config.json").read_text())
    cfg["format_version"] = 99
    (out / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(SAMFileError, match=rf"{out / 'config.json'}: field 'format_version' is export format version 99"):
        SAMRetriever.load(out)
    cfg["format_version"] = 1
    (out / "config.json").write_text(json.dumps(cfg))
    (out / "vocab.json").unlink()
    with pytest.raises(SAMFileError, match="vocab.json is missing"):
        SAMRetriever.load(out)


def test_the_one_loader_tells_its_inputs_apart(tmp_path, tiny_bert_dir):
    """SAMRetriever.load reads an export, a saved retriever (export + store/) and a .ckpt (test above), and says in
    one line what a saved store alone or another file is; from_pretrained is the same loader."""
    from sam_model.data.examples import MemoryRecord
    from sam_model.models.sam import SAMNet
    from sam_model.store import MemoryStore

    net = SAMNet(SAMConfig(bert_path=str(tiny_bert_dir), dim=8, hidden=16, proj_hidden=16))
    export = save_exported(net, tmp_path / "export")
    r = SAMRetriever.load(export, device="cpu")
    assert len(r.store) == 0 and r.dim == net.out_dim
    r.add_memories([MemoryRecord(f"m{i}", "ep", i, "user", "plan", f"memory {i}") for i in range(3)])
    saved = r.save(tmp_path / "saved")
    assert sorted(SAMRetriever.load(saved).store.ids()) == ["m0", "m1", "m2"]
    assert sorted(SAMRetriever.from_pretrained(saved).store.ids()) == ["m0", "m1", "m2"]
    store_only = MemoryStore.load(saved / "store", r.encoder).save(tmp_path / "store_only")
    with pytest.raises(SAMFileError, match=r"store_only is a saved memory store, not a retriever.*MemoryStore.load"):
        SAMRetriever.load(store_only)
    other = tmp_path / "weights.bin"
    other.write_bytes(b"x")
    with pytest.raises(SAMFileError, match=r"weights.bin is a file but not a .ckpt"):
        SAMRetriever.load(other)


def test_export_cli_and_train_help(tmp_path):
    res = subprocess.run([sys.executable, "-m", "sam_model.export", str(tmp_path / "no.ckpt"), str(tmp_path / "o")],
                         capture_output=True, text=True)
    assert res.returncode == 1 and "checkpoint not found" in res.stderr
    repo = str(__import__("pathlib").Path(__file__).resolve().parents[1])
    res = subprocess.run([sys.executable, "train.py", "fit", "--help"], capture_output=True, text=True, cwd=repo)
    assert res.returncode == 0 and "--data.train" in res.stdout and "--model.net.help" in res.stdout
    res = subprocess.run([sys.executable, "train.py", "fit", "--model.net.help", "SAMConfig"], capture_output=True,
                         text=True, cwd=repo)
    assert res.returncode == 0 and "--model.net.projection" in res.stdout and "diag | lowrank | full" in res.stdout


def test_line_progress_prints_plain_lines_for_files():
    import io
    from types import SimpleNamespace

    from sam_model.training.progress import LineProgress

    out = io.StringIO()
    bar = LineProgress(every_s=0.0, stream=out)
    trainer = SimpleNamespace(num_training_batches=10, current_epoch=0, max_epochs=3, global_rank=0,
                              sanity_checking=False, callback_metrics={"train/loss": 1.5, "val/mrr": 0.75})
    bar.on_train_epoch_start(trainer, None)
    bar.on_train_batch_end(trainer, None, None, None, 4)
    bar.on_validation_end(trainer, None)
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("epoch 00 (1/3)  train 5/10 (50%)") and "ETA" in lines[0] and "loss 1.5000" in lines[0]
    assert "done in" in lines[1] and "mrr 0.7500" in lines[1]
    # the epoch's line holds the validation metrics, val/loss among them: said so, not a bare "loss" that read as the
    # training loss of the line above it
    trainer.callback_metrics["val/loss"] = 0.9
    bar.on_validation_end(trainer, None)
    done = out.getvalue().splitlines()[-1]
    assert "  validation: loss 0.9000  mrr 0.7500" in done, done
    # `train.py validate` trains no epoch: its line says validation and its own time, not the time since boot
    trainer.state = SimpleNamespace(fn="validate")
    bar = LineProgress(every_s=0.0, stream=out)
    bar.on_validation_start(trainer, None)
    bar.on_validation_end(trainer, None)
    last = out.getvalue().splitlines()[-1]
    assert last.startswith("validation done in 0m0") and "mrr 0.7500" in last and "epoch" not in last, last
    # validation inside an epoch (val_check_interval < 1) says where it is, not "done" (it printed done twice)
    progress = SimpleNamespace(current=SimpleNamespace(completed=5))
    trainer = SimpleNamespace(**{**vars(trainer), "state": SimpleNamespace(fn="fit"),
                                 "fit_loop": SimpleNamespace(epoch_loop=SimpleNamespace(batch_progress=progress))})
    bar.on_validation_end(trainer, None)
    last = out.getvalue().splitlines()[-1]
    assert last.startswith("epoch 00 (1/3)  validation at train 5/10") and "done" not in last, last


def test_export_has_a_model_card_with_data_config_and_evaluation(tmp_path, trained_demo_export, small_demo_logs):
    from sam_model.card import add_evaluation
    from sam_model.evaluation.run import main as evaluate_main

    card = (trained_demo_export / "README.md").read_text()
    train, heldout = small_demo_logs
    assert card.startswith("---\nlibrary_name: sam_model") and str(train) in card  # the training source, named
    assert "| agent-log | 48 |" in card  # its kind and episode count
    assert "projection W_s" in card and "Selected checkpoint" in card and "Not evaluated yet" in card
    folder = tmp_path / "export"
    import shutil

    shutil.copytree(trained_demo_export, folder)
    assert evaluate_main(["--retriever", str(folder), "--data", str(heldout), "--out", str(tmp_path / "ev"),
                          "--baselines", "recency", "--latency-queries", "2", "--card", str(folder)]) == 0
    text = (folder / "README.md").read_text()
    assert "| sam | " in text and "| recency | " in text and "Not evaluated yet" not in text
    report = {"methods": {"sam": {"mrr": 0.5}}, "data": "x", "scope": "episode", "n_queries": 1, "n_memories": 2}
    add_evaluation(folder, report)
    assert (folder / "README.md").read_text().count("<!-- evaluation:start -->") == 1  # replaced, not appended


def test_weight_decay_applies_to_weight_matrices_only(tiny_bert_dir):
    """nanoGPT-style groups: linear maps' matrices decay; biases, LayerNorm, embeddings, α and τ do not; BERT's
    trainable layers keep their own learning rate; every trainable parameter is in exactly one group."""
    from sam_model.training.module import SAMLightningModule

    module = SAMLightningModule(SAMConfig(bert_path=str(tiny_bert_dir), dim=8, hidden=16, proj_hidden=16,
                                          trainable_layers=1, phases=["a", "b"], kinds=["x"]),
                                lr=1e-3, bert_lr=2e-5, weight_decay=0.1, learn_temperature=True)
    groups = module.configure_optimizers()["optimizer"].param_groups
    where = {id(p): (g["weight_decay"], g["initial_lr"]) for g in groups for p in g["params"]}  # lr: warm-up scaled
    trainable = {n: p for n, p in module.named_parameters() if p.requires_grad}
    assert sum(len(g["params"]) for g in groups) == len(where) == len(trainable)
    decay = {n: where[id(p)] for n, p in trainable.items()}
    assert decay["net.alpha_logit"][0] == decay["loss_fn.log_scale"][0] == 0.0
    assert decay["net.state_encoder.phase_emb.weight"][0] == decay["net.memory_encoder.kind_emb.weight"][0] == 0.0
    assert decay["net.state_encoder.fuse.0.weight"] == (0.1, 1e-3) and decay["net.state_encoder.fuse.0.bias"] == (0.0, 1e-3)
    bert = {n: d for n, d in decay.items() if ".bert." in n}
    assert bert and all(lr == 2e-5 for _, lr in bert.values())
    assert all(d == 0.0 for n, (d, _) in bert.items() if "LayerNorm" in n or n.endswith(".bias"))
    assert any(d == 0.1 for n, (d, _) in bert.items() if n.endswith("query.weight"))


@pytest.mark.parametrize("projection, options", [
    *[(p, {"time_features": 4, "state_content": True, "state_max_length": 12, "observation_max_length": 8,
           "shared_bert": False}) for p in PROJECTIONS],
    ("lowrank", {"query_input": "observation", "time_features": 3}),
    ("full", {"alpha": 1.0, "learn_alpha": False}),
])
def test_training_scores_are_what_the_exported_store_searches(tmp_path, small_demo_logs, tiny_bert_dir, projection,
                                                              options):
    """The score matrix training's loss reads (episode rows collated into a batch: steps, task starts, clipped state
    texts and observations, the α-mix, β, the time part) is, query by query, the score the exported retriever's
    store gives each memory of the episode: W_s kind by kind, every part of the vectors on."""
    from sam_model.data.examples import episode_row, task_starts
    from sam_model.store import MemoryStore
    from sam_model.storeconfig import StoreConfig
    from sam_model.training.batching import collate_episodes, encode_batch

    episodes = read_episodes(small_demo_logs[0])[:3]
    torch.manual_seed(0)
    net = _random_net(tiny_bert_dir, projection, options)
    batch = collate_episodes([(j, episode_row(ep)) for j, ep in enumerate(episodes)])
    with torch.no_grad():
        q, m = encode_batch(net.eval(), batch)
    train_scores = (q @ m.T).numpy()
    r = SAMRetriever.load(save_exported(net, tmp_path / "export"), device="cpu")
    row = 0
    for j, ep in enumerate(episodes):
        store = MemoryStore(r.encoder, StoreConfig())
        mems = episode_memories(ep)
        store.add(mems)
        cols = (batch["mem_episode"] == j).nonzero().flatten().tolist()
        for e, start in zip(ep.events, task_starts(ep.events)):
            if not e.is_decision_point:
                continue
            hits = store.search(e.state, e.text, k=len(mems), episode_id=ep.episode_id, step=e.step,
                                task_start=start, rerank=False)
            score = {h.id: h.score for h in hits}
            # evaluation's candidates: the memories before the decision's own event (the store leaves the rest out)
            before = [i for i, x in enumerate(mems) if x.step < e.step]
            assert set(score) == {mems[i].id for i in before}
            np.testing.assert_allclose([score[mems[i].id] for i in before], train_scores[row, cols][before], atol=1e-5)
            row += 1
    assert row == len(q) > 3


def _random_net(bert_dir, projection: str, options: dict):
    """A tiny SAMNet whose every head weight is random (no part at its identity or zero start)."""
    from sam_model.models.sam import SAMNet

    phases = ["search_flights", "book_flight", "collect"]
    net = SAMNet(SAMConfig(bert_path=str(bert_dir), dim=12, rank=3, hidden=24, proj_hidden=24, phase_dim=4,
                           kind_dim=4, max_length=48, projection=projection, dropout=0.0, phases=phases,
                           kinds=["user", "system", "action", "result"], **options))
    with torch.no_grad():
        for name, p in net.named_parameters():
            if ".bert." not in name:
                p.add_(torch.randn_like(p) * 0.3)
    return net
