"""The thin LightningModule around SAMNet: loss, optimiser, validation metrics, logging."""

from __future__ import annotations

import copy
import sys
import time
from pathlib import Path
from typing import Any

import pytorch_lightning as pl
import torch
from torch import nn
from torchmetrics import MetricCollection
from torchmetrics.retrieval import RetrievalMRR, RetrievalNormalizedDCG, RetrievalRecall
from tqdm.auto import tqdm

from sam_model.data.chunks import Chunking
from sam_model.io import SAMFileError
from sam_model.models.adapt import extend_net, extended_config
from sam_model.models.call_cost import REPEATS, SHAPES
from sam_model.models.losses import MAX_SCALE, POSITIVES, MultiPositiveInfoNCE, ScoreDistillation
from sam_model.models.sam import SAMConfig, SAMNet, split_search_fields
from sam_model.progress import say
from sam_model.storeconfig import StoreConfig
from sam_model.training.batching import candidate_masks, encode_batch, validation_query_ids
from sam_model.training.objective import batch_loss, scored


def matrix_weights(model: nn.Module) -> set[int]:
    """The ids of the parameters weight decay applies to: the weight matrices of linear maps (any parameter with
    two or more dimensions outside an ``nn.Embedding``).

    As in nanoGPT and most transformer trainers, biases, LayerNorm gains, embedding tables, and scalars such as
    α (``alpha_logit``) and the InfoNCE temperature are left alone: decaying them pulls a gain or a temperature
    towards 0, or shrinks rarely seen embedding rows, instead of regularising what a matrix can express.
    """
    out: set[int] = set()
    for module in model.modules():
        if isinstance(module, nn.Embedding):
            continue
        out.update(id(p) for p in module.parameters(recurse=False) if p.ndim >= 2)
    return out


def lexical_parameters(net: SAMNet) -> list[nn.Parameter]:
    """The parameters ``model.lexical_lr`` trains in their own group: the learned scalar of ``lexical_learned``, or
    the BIAS of ``lexical_state``'s head (sam_model.models.lexstate), whose weights stay at the heads' rate. Why the
    bias alone: Adam moves each parameter by about its learning rate per step, so one scalar at the heads' 1e-3 did
    not move in a fold training's ~130 steps (0.100 -> 0.104) and needs 3e-2, while the head's 384 weights at 1e-3
    move its output together (each step's change sums over them); at 3e-2 they would swing w(v_s) by ~10 a step."""
    if net.lexical_raw is not None:
        return [net.lexical_raw]
    return [net.lexical_state.head.bias] if net.lexical_state is not None else []


class SAMLightningModule(pl.LightningModule):
    """Trains SAMNet with multi-positive InfoNCE.

    Args:
        net: the network's configuration (see SAMConfig).
        vocab: {"phases": [...], "kinds": [...], "source_kinds": [...]} learned from the training logs;
            linked from the data module.
        lr: learning rate of the heads (encoders' MLPs, projection, α, temperature).
        bert_lr: learning rate of trainable BERT layers.
        weight_decay: AdamW weight decay of the weight matrices (``matrix_weights``); biases, norms, embeddings,
            α and τ are not decayed.
        temperature: initial InfoNCE temperature τ.
        learn_temperature: learn τ (false: keep it at ``temperature``).
        positives: "any" (the summed probability of a decision's useful memories) or "each" (every useful
            memory scored against all candidates; better recall when decisions need several memories).
        in_batch_negatives: add other episodes' memories (gathered over all devices) as negatives.
        warmup_steps: optimiser steps of the linear learning-rate warm-up (from lr / warmup_steps up to lr).
        bert_config: recorded automatically (the BERT's config), so a checkpoint rebuilds without the folder.
        text_cache_dir: with a frozen BERT, keep its text vectors in this folder between runs (a file per
            BERT, its exact weights and precision: TextEncoder.cache_file), so re-runs and ablations on the same
            data skip BERT; empty = off.
        training_data: recorded automatically (the data module's sources, statistics and options), for the
            model card of an export.
        task_dropout: with time features, the share of training queries whose task start is hidden, so the
            model also ranks well when an agent does not say where its current task began (with ``task_reuse``
            such a query is told the uses of its whole episode, as such an agent's search is:
            sam_model.training.batching.uses_seen).
        phase_dropout: the share of training queries and memories whose phase is hidden (the unknown phase,
            id 0, where every tool or service never seen in training maps), so that id is trained too.
        known_dropout: the share of training queries whose state text loses its known values (the ``known:``
            field; sam_model.data.text.drop_known), so the model does not lean on how one domain lists
            what is known.
        store: the search settings exported with the model (sam_model.storeconfig.StoreConfig: slot_match,
            provenance, rerank_depth, index); training ignores them. ``source_kinds`` is set from ``vocab``.
        init_from: start from a trained retriever: an export folder or a packaged name (``sam-general``, the
            default model; sam_model.pretrained). Its architecture and weights are the start, its vocabularies
            extended with the training logs' new phases and kinds (sam_model.models.adapt); ``net`` may be left
            out (its architecture must be the pretrained one's), ``store`` defaults to the pretrained one's.
            Empty: train from scratch.
        distill_from: a trained retriever (export folder or packaged name) to distil from: each query's loss adds
            ``distill_weight`` times the KL divergence from its score distribution over the batch's candidates to
            the student's (sam_model.models.losses.ScoreDistillation, at ``distill_temperature``). For a student
            that reads less of the query than the teacher (``net.state_max_length``) but should rank as it does.
            The teacher is frozen, shares the student's frozen BERT and text cache, and is not saved in
            checkpoints or exports. Empty: no teacher.
        distill_weight: the weight of the distillation term against the contrastive loss (>= 0; used only with
            ``distill_from``).
        distill_temperature: the temperature of the teacher's and the student's score distributions in the
            distillation term (> 0; used only with ``distill_from``).
        opening_lr: the learning rate of the task-opening head (``net.task_opening``, sam_model.models.opening) in an
            optimiser group of its own; 0 (the default) trains it with the heads at ``lr``, as before. Adam moves a
            parameter by about its learning rate per step whatever the gradient's size, so at ``lr`` = 1e-3 the
            flag's weight w(v_s) can move by ~0.1 in a fold training's ~130 steps, while the score it adds to
            spans ~1 (README, "The flag's step fixed before it ran"). Needs ``net.task_opening``.
        lexical_lr: the learning rate of the learned lexical weight (``net.lexical_learned``: w = softplus(raw)) in
            an optimiser group of its own; 0 (the default) trains it with the heads at ``lr``. At 1e-3 raw moves by
            ~0.13 in a fold training's ~130 steps, and dw/draw = sigmoid(raw) ≈ 0.095 at w = 0.1, so w can only
            reach ~0.11 (measured: 0.100 -> 0.104, docs/benchmarks/leave-one-domain-out.md); the store's weights
            span 0-0.5 (raw -4.6 to -0.4 from -2.25), which 3e-2 lets it cross. Needs ``net.lexical_learned``, or
            ``net.lexical_state``, whose head's bias it trains (its weights at ``lr``: :func:`lexical_parameters`).
        used_apart: train and validate on the ranking the store serves with its used ordering (the memories an
            earlier call of the task used first, then the rest, each group in the model's order): a query whose
            positives include a used memory is ranked among the used memories alone, any other query among the
            memories no call used (sam_model.training.batching.used_apart), so no gradient is spent separating used
            from unused memories, which the ordering does anyway; validation ranks used memories above every other
            (sam_model.training.objective.served_first), so val/mrr and val/loss measure what is served and the
            checkpoint is picked by it. Off (the default): the loss over every candidate, as before.
        reuse_soft: with ``used_apart`` and ``net.task_reuse``, the reuse head w_u(v_s) is trained on the whole
            ranking over the base scores held fixed, beside the split loss that trains the base
            (sam_model.training.objective.soft_losses), so the state decides how far used memories rise and the model
            is served as its own ranking, with no used ordering; validation ranks by base + w_u·U over every
            candidate (no used-first shift) and val/loss is the sum of both losses. Off (the default): as before.
        net_fields: the ``model.net`` fields a config file or the command line set (sam-train fills it; not an
            option to give): with ``init_from`` those are the run's, every other field the pretrained model's.
        resumed: a resume (sam-train sets it with ``--ckpt_path``; not an option to give): ``net`` is then the
            checkpoint's whole network and its weights load over all of it, so ``init_from`` stays the record of
            where the run started and is not read (a resume needed its folder, which may be gone by then).
    """

    def __init__(self, net: SAMConfig | None = None, vocab: dict | None = None,
                 lr: float = 1e-3, bert_lr: float = 2e-5, weight_decay: float = 0.01,
                 temperature: float = 0.05, learn_temperature: bool = True, positives: str = "any",
                 in_batch_negatives: bool = True,
                 warmup_steps: int = 50, bert_config: dict | None = None,
                 text_cache_dir: str = "", task_dropout: float = 0.3, training_data: dict | None = None,
                 store: StoreConfig | None = None, init_from: str = "", phase_dropout: float = 0.0,
                 distill_from: str = "", distill_weight: float = 1.0, distill_temperature: float = 0.05,
                 known_dropout: float = 0.0, net_fields: list[str] | None = None, resumed: bool = False,
                 opening_lr: float = 0.0, lexical_lr: float = 0.0, used_apart: bool = False,
                 reuse_soft: bool = False):
        super().__init__()
        for key, share in (("task_dropout", task_dropout), ("phase_dropout", phase_dropout),
                           ("known_dropout", known_dropout)):
            if not 0.0 <= share <= 1.0:
                raise ValueError(f"model.{key} must be a share of training queries in [0, 1], got {share}")
        for key, value in (("lr", lr), ("temperature", temperature), ("distill_temperature", distill_temperature)):
            if not value > 0:  # a negative lr trained (uphill) without a word; NaN fails this too
                raise ValueError(f"model.{key} must be > 0, got {value}")
        if temperature < 1.0 / MAX_SCALE:  # the loss clamps 1/τ at MAX_SCALE: it trained at 0.01 without a word
            raise ValueError(f"model.temperature must be >= {1.0 / MAX_SCALE:g}, got {temperature}")
        for key, value in (("bert_lr", bert_lr), ("weight_decay", weight_decay), ("distill_weight", distill_weight),
                           ("opening_lr", opening_lr), ("lexical_lr", lexical_lr)):
            if not value >= 0:
                raise ValueError(f"model.{key} must be >= 0, got {value}")
        if positives not in POSITIVES:  # named no key: "positives must be 'any' or 'each'"
            raise ValueError(f"model.positives must be one of {', '.join(POSITIVES)}, got {positives!r}")
        if isinstance(warmup_steps, bool) or not isinstance(warmup_steps, int) or warmup_steps < 0:
            raise ValueError(f"model.warmup_steps must be an integer >= 0, got {warmup_steps!r}")  # was taken as 1
        if isinstance(net, dict) and store is None and split_search_fields(net)[1]:  # an older checkpoint's hparams
            store = StoreConfig.from_legacy({"slot_match": 0.0, **split_search_fields(net)[1]}, "net")
        cfg = SAMConfig.from_dict(dict(net)) if isinstance(net, dict) else copy.deepcopy(net or SAMConfig())
        cfg.check("model.net")  # before a pretrained model or BERT loads, naming the key to fix
        if cfg.bert_path and Path(cfg.bert_path).is_dir():  # recorded absolute: the checkpoint is read elsewhere
            cfg.bert_path = str(Path(cfg.bert_path).resolve())  # (an export, a load or a resume in another folder
            # found no 'mybert': the tokenizer comes from that folder)
        base = None
        new_phases, new_kinds = list((vocab or {}).get("phases", [])), list((vocab or {}).get("kinds", []))
        if init_from and resumed:  # the logs' new names appended as the start did (refused in on_load_checkpoint)
            cfg = extended_config(cfg, new_phases, new_kinds)
        elif init_from:
            from sam_model.retriever import SAMRetriever

            loaded = SAMRetriever.load(init_from, device="cpu")
            base = loaded.net
            store = store if store is not None else loaded.store.config
            cfg = extended_config(base.cfg, new_phases, new_kinds, cfg if net is not None else None, net_fields)
        elif vocab:
            cfg.phases, cfg.kinds = list(vocab.get("phases", [])), list(vocab.get("kinds", []))
        store = StoreConfig.from_dict(store, "store") if isinstance(store, dict) else copy.deepcopy(store or StoreConfig())
        if vocab:
            store.source_kinds = list(vocab.get("source_kinds", store.source_kinds))
        if base is not None:
            self.net = extend_net(base, cfg)
        else:
            self.net = SAMNet(cfg)
        if opening_lr and self.net.opening is None:
            raise ValueError(f"model.opening_lr is {opening_lr:g} but model.net.task_opening is off: there is no "
                             "task-opening head to train at that rate; set model.net.task_opening: true or "
                             "model.opening_lr: 0")
        if lexical_lr and self.net.lexical_raw is None and self.net.lexical_state is None:
            raise ValueError(f"model.lexical_lr is {lexical_lr:g} but model.net.lexical_learned is off, and "
                             "lexical_state too: there is no learned lexical weight to train at that rate; set "
                             "model.net.lexical_learned (or lexical_state): true or model.lexical_lr: 0")
        if reuse_soft and not (used_apart and self.net.reuse is not None):
            raise ValueError("model.reuse_soft trains the reuse head over a base trained with model.used_apart: set "
                             "model.used_apart: true and model.net.task_reuse: true (configs/task_reuse.yaml and "
                             "configs/used_apart.yaml before configs/reuse_soft.yaml), or model.reuse_soft: false")
        if store.lexical_per_query and self.net.lexical_state is None:  # refused now, not at the export hours later
            raise ValueError("model.store.lexical_per_query is on but model.net.lexical_state is off: the vectors' "
                             "last part is no lexical weight; set model.store.lexical_per_query: false (a fixed "
                             "weight: model.store.lexical) or model.net.lexical_state: true")
        self.store_config = store
        chunking = Chunking.from_dict(store.chunking, "model.store.chunking")  # tokens: what the export's encoder reads
        if chunking is not None:
            chunking.check_encoder(cfg.max_length, "model.store.chunking")
        self.save_hyperparameters({"net": cfg.to_dict(), "store": store.to_dict(), "lr": lr, "bert_lr": bert_lr,
                                   "weight_decay": weight_decay, "temperature": temperature,
                                   "learn_temperature": learn_temperature, "positives": positives,
                                   "in_batch_negatives": in_batch_negatives, "warmup_steps": warmup_steps,
                                   "bert_config": self.net.state_encoder.text_encoder.bert.config.to_dict(),
                                   "task_dropout": task_dropout, "init_from": init_from,
                                   "phase_dropout": phase_dropout, "known_dropout": known_dropout,
                                   "distill_from": distill_from,
                                   "distill_weight": distill_weight, "distill_temperature": distill_temperature,
                                   "opening_lr": opening_lr, "lexical_lr": lexical_lr, "used_apart": used_apart,
                                   "reuse_soft": reuse_soft, "training_data": (vocab or {}).get("data") or training_data})
        self.loss_fn = MultiPositiveInfoNCE(temperature, learn_temperature, positives=positives)
        if distill_from and distill_weight < 0:
            raise ValueError(f"model.distill_weight must be >= 0 (0: the teacher is loaded but not used), "
                             f"got {distill_weight}")
        self.distill = ScoreDistillation(distill_temperature) if distill_from else None
        # A plain attribute, not a submodule: the teacher's weights stay out of the optimiser, checkpoints and exports.
        self.__dict__["teacher"] = self._load_teacher(distill_from) if distill_from else None
        self.text_cache_dir = text_cache_dir
        self._seed: int | None = None  # base of the per-epoch seeds (on_train_epoch_start)
        self.task_dropout, self.phase_dropout, self.known_dropout = task_dropout, phase_dropout, known_dropout
        self.used_apart, self.reuse_soft = used_apart, reuse_soft
        self.val_metrics = MetricCollection({
            "mrr": RetrievalMRR(), "recall@1": RetrievalRecall(top_k=1), "recall@5": RetrievalRecall(top_k=5),
            "ndcg@10": RetrievalNormalizedDCG(top_k=10)}, prefix="val/")

    def training_step(self, batch: dict[str, Any], batch_idx: int) -> torch.Tensor | None:
        if len(batch["q_step"]) == 0 and self.trainer.world_size == 1:
            return None  # no decision point in these episodes: nothing to learn (DDP ranks must all step)
        if self.teacher is not None and self.teacher.alpha_logit.device != self.device:
            self.teacher.to(self.device)
        stats: dict = {}
        loss = batch_loss(self.net, self.loss_fn, batch, self.hparams.in_batch_negatives, self.trainer.world_size,
                          self.task_dropout, self.phase_dropout, self.teacher, self.distill,
                          self.hparams.distill_weight, self.known_dropout, self.used_apart, self.reuse_soft,
                          stats)
        n = max(len(batch["q_step"]), 1)
        # synced: under DDP each process's loss is its share times the world size (batch_loss), the mean over
        # processes the global batch's mean; unsynced, rank 0 logged its own share scaled up
        self.log("train/loss", loss, prog_bar=True, batch_size=n, sync_dist=True)
        self.log("train/temperature", 1.0 / self.loss_fn.scale, batch_size=n)
        self.log("train/alpha", self.net.alpha.detach(), batch_size=n)
        if "lexical_w" in stats:  # the learned scalar, or the batch's mean w(v_s) (lexical_state)
            self.log("train/lexical_w", stats["lexical_w"], batch_size=n)
        return loss

    def _load_teacher(self, name: str) -> SAMNet:
        """The frozen teacher of ``distill_from``, reading through the student's text encoder (the same frozen
        BERT, so one text cache and one frozen pass serve both)."""
        from sam_model.retriever import SAMRetriever

        teacher = SAMRetriever.load(name, device="cpu").net
        student_text = self.net.state_encoder.text_encoder
        if not student_text.frozen or teacher.cfg.trainable_layers:
            raise ValueError(f"model.distill_from {name!r}: distillation shares one frozen BERT between teacher and "
                             "student; set model.net.trainable_layers to 0")
        if teacher.cfg.max_length != self.net.cfg.max_length or teacher.cfg.pooling != self.net.cfg.pooling:
            raise ValueError(f"model.distill_from {name!r}: its text encoder (max_length {teacher.cfg.max_length}, "
                             f"pooling {teacher.cfg.pooling!r}) is not the student's; distil between models of one "
                             "text encoder")
        teacher.state_encoder.text_encoder = student_text
        teacher.memory_encoder.text_encoder = student_text
        teacher.eval().requires_grad_(False)
        return teacher

    def validation_step(self, batch: dict[str, Any], batch_idx: int) -> None:
        if len(batch["q_step"]) == 0:
            return  # no decision point in these episodes: nothing to score (torchmetrics rejects empty input)
        q, m = encode_batch(self.net, batch)
        allowed, positive = candidate_masks(batch["q_episode"], batch["q_step"], batch["q_labels"],
                                            batch["mem_episode"], batch["mem_step"], in_batch_negatives=False,
                                            mem_label=batch.get("mem_label"))
        # as in training (no memory is gathered here), the metrics ranking every candidate as served
        scores, losses, _ = scored(self.net, self.loss_fn, q, q @ m.T, batch, allowed, positive, batch["mem_episode"],
                                   batch["mem_step"], self.used_apart, self.reuse_soft, gathered=False, served=True)
        loss = losses.mean()
        rank, world = (self.trainer.global_rank, self.trainer.world_size) if self._trainer is not None else (0, 1)
        qid = validation_query_ids(len(q), batch_idx, rank, world).to(q.device)[:, None].expand_as(scores)
        self.val_metrics.update(scores[allowed], positive[allowed], indexes=qid[allowed])
        self.log("val/loss", loss, batch_size=max(len(q), 1), sync_dist=True)

    def on_validation_epoch_end(self) -> None:
        self.log_dict(self.val_metrics.compute(), prog_bar=True, sync_dist=True)
        self.val_metrics.reset()

    def setup(self, stage: str) -> None:
        """Chunks sized in tokens (``data.chunking.tokens``) are cut by this network's memory tokenizer: the data
        module gets its count here, before any batch is made (sam_model.data imports no model)."""
        dm = getattr(self.trainer, "datamodule", None)
        chunking = getattr(dm, "chunking", None)
        if chunking is not None and chunking.tokens is not None:
            chunking.check_encoder(self.net.cfg.max_length, "data.chunking")
            dm.count_tokens = self.net.memory_encoder.text_encoder.token_count()

    def _text_cache_file(self):
        enc = self.net.state_encoder.text_encoder
        if not (self.text_cache_dir and enc.use_cache):
            return None, enc
        return enc.cache_file(self.text_cache_dir), enc

    def on_fit_start(self) -> None:
        enc = self.net.state_encoder.text_encoder
        # The precision first: the cache file's name carries the one the frozen pass computes in (bfloat16 on a CPU
        # with the units), and with it chosen after the load a float32 file took bfloat16 vectors. Only that: the
        # engines are timed (~20 s on 2 busy cores) when the frozen pass has texts to encode, which a run whose
        # texts are all cached has not (it timed them for nothing)
        if enc.use_cache:
            enc.defer_auto()
        path, enc = self._text_cache_file()
        if path is not None:
            n = enc.load_cache(path)
            if n:
                print(f"text cache: {n} BERT vectors loaded from {path}")
        self._frozen_pass(path)

    def _choose_backend(self) -> str:
        """The frozen text encoder's ``auto`` backend, said before and after (sam_model.progress.say, so a log file
        has it too): loading ONNX Runtime and timing each engine took 23 s on 2 busy cores, in which a fit printed
        nothing after Lightning's "Seed set to 0"."""
        enc = self.net.state_encoder.text_encoder
        engines = enc.auto_engines()
        say(f"choosing the text encoder's engine (timing {', '.join(engines[:-1])} against {engines[-1]} on "
            f"{len(SHAPES)} call shapes, {REPEATS} times each) ..." if len(engines) > 1 else
            f"timing the text encoder's BERT calls on {engines[0]} ({len(SHAPES)} call shapes, {REPEATS} times "
            "each: how texts are cut into calls) ...")
        t = time.perf_counter()
        backend = enc.use_backend("auto")
        say(f"text encoder's engine: {enc.engine_verdict()}; chosen in {time.perf_counter() - t:.0f} s")
        return backend

    def _frozen_pass(self, path) -> None:
        """A frozen BERT's vectors of every training and validation text, made before the first epoch: the distinct
        texts of the whole data (not batch by batch), sorted by token length, each call on the backend measured cheapest
        for it (``auto``: ONNX Runtime where it is installed, the same vectors to float rounding; bfloat16 on a CPU
        with bfloat16 units, ~0.99996 cosine and about twice the texts per second: sam_model.models.bf16_text), then
        saved to the text cache (``path``, named for the precision of backend auto, which on_fit_start settled). The
        engines are chosen (_choose_backend) only when some text is missing from the cache."""
        enc = self.net.state_encoder.text_encoder
        texts_of = getattr(getattr(self.trainer, "datamodule", None), "texts", None)
        if not (enc.use_cache and callable(texts_of)) or self.global_rank != 0 and self.trainer.world_size > 1:
            return
        texts = texts_of(self.net.content_only, self.net.observations_read, self.net.states_read)
        if self.teacher is not None:  # what the teacher reads too (its own clipping)
            texts = list(dict.fromkeys(texts + texts_of(self.teacher.content_only, self.teacher.observations_read,
                                                        self.teacher.states_read)))
        missing = enc.uncached(texts)
        if not missing:
            return
        backend = self._choose_backend()
        encoded = enc.encoded
        t = time.perf_counter()
        chunk = 16 * enc.batch_size
        plain, last = not sys.stderr.isatty(), t  # into a file: a line every 30 s, not a redrawn bar
        with tqdm(total=len(missing), desc=f"frozen BERT pass ({backend})", unit="text", disable=plain) as bar:
            for i in range(0, len(missing), chunk):
                enc(missing[i : i + chunk])
                bar.update(len(missing[i : i + chunk]))
                now, done = time.perf_counter(), min(i + chunk, len(missing))
                if plain and (now - last >= 30 or done == len(missing)):
                    last, rate = now, done / max(now - t, 1e-9)
                    print(f"frozen BERT pass ({backend}): {done}/{len(missing)} texts ({done / len(missing):.0%}), "
                          f"{rate:.0f} texts/s, ETA {(len(missing) - done) / max(rate, 1e-9) / 60:.1f} min",
                          file=sys.stderr, flush=True)
        took = time.perf_counter() - t
        print(f"frozen BERT pass: {enc.encoded - encoded} texts in {took:.0f} s "
              f"({(enc.encoded - encoded) / max(took, 1e-9):.0f} texts/s, {backend})")
        if path is not None:
            enc.save_cache(path)

    def on_train_epoch_start(self) -> None:
        # Dropout's randomness depends on (seed, epoch) alone, with the seed kept in the checkpoint: a run
        # resumed from last.ckpt trains its epochs exactly as the uninterrupted run (with the data module's
        # epoch-seeded order, sam_model.training.batching.EpochShuffle).
        if self._seed is None:
            self._seed = torch.initial_seed()
        torch.manual_seed((self._seed * 1_000_003 + self.current_epoch) % 2**63)

    def on_save_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        checkpoint["sam_seed"] = self._seed

    def on_load_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        """A resume continues the checkpoint's model, whose phase and kind rows are its vocabularies': logs that give
        other ones (a new tool, a renamed one) would put its trained rows under other names (silently, when the
        count is the same) or fail on a size mismatch, so they are refused before any weight is loaded."""
        saved = (checkpoint.get("hyper_parameters") or {}).get("net") or {}
        for name in ("phases", "kinds"):
            old, new = list(saved.get(name) or []), list(getattr(self.net.cfg, name))
            if saved.get(name) is not None and old != new:
                gone, added = [x for x in old if x not in new], [x for x in new if x not in old]
                what = "; ".join(part for part in (f"new: {added[:5]}" if added else "",
                                                   f"not in these logs: {gone[:5]}" if gone else "") if part)
                raise SAMFileError(f"the checkpoint was trained with other {name} than these logs give ("
                                   f"{what or 'another order'}): resume with the logs it was trained on, or start a "
                                   "new run from its export (--model.init_from checkpoints/RUN/export --run NEW)")
        self._seed = checkpoint.get("sam_seed")

    def on_train_epoch_end(self) -> None:
        path, enc = self._text_cache_file()
        if path is not None and self.global_rank == 0 and self.current_epoch == 0:
            enc.save_cache(path)  # after the first epoch every training text has been seen once

    def configure_optimizers(self):
        decay = matrix_weights(self)
        opening_lr = self.hparams.get("opening_lr", 0.0)
        own = {id(p) for p in self.net.opening.parameters()} if opening_lr and self.net.opening is not None else set()
        lexical_lr = self.hparams.get("lexical_lr", 0.0)
        lexical = {id(p) for p in lexical_parameters(self.net)} if lexical_lr else set()

        def part_of(name: str, p: nn.Parameter) -> str:
            return ("bert" if ".bert." in name else "opening" if id(p) in own else "lexical" if id(p) in lexical
                    else "head")

        groups = []  # with opening_lr and lexical_lr 0 the groups are those before they existed, in the same order
        for part, lr in (("head", self.hparams.lr), ("bert", self.hparams.bert_lr), ("opening", opening_lr),
                         ("lexical", lexical_lr)):
            for decayed in (True, False):
                params = [p for name, p in self.named_parameters() if p.requires_grad
                          and part_of(name, p) == part and (id(p) in decay) == decayed]
                if params:
                    groups.append({"params": params, "lr": lr,
                                   "weight_decay": self.hparams.weight_decay if decayed else 0.0})
        opt = torch.optim.AdamW(groups)
        warm = max(int(self.hparams.warmup_steps), 1)
        sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / warm))
        return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "step"}}
