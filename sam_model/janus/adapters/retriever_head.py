"""Adapter (1): retriever checkpoints — the memory is the SAM retriever's trainable head.

BERT stays frozen and its pooled vectors are cached, so a memory state is only the small
head of :class:`~sam_model.models.sam.SAMNet` (state/memory fusion MLPs, phase and kind
embeddings, the W_s network, α): about a megabyte, cheap to checkpoint at every comparison.

- **tasks** are indices into ``HeadContext.examples`` (decision points with their candidates);
- the **updater** fine-tunes the head for a few steps on the latest tasks (multi-positive InfoNCE), on the
  true useful memories or on the ones the agent reported (``feedback``; the benchmark's noisy regime);
- **correct** = the top-1 candidate of the task's episode is a useful memory;
- **φ**: ``ProbeFeatures`` (what the benchmark uses) embeds a head by its behaviour, the log-likelihoods
  of the useful memories on fixed probe tasks; the count sketch of the head's parameters (a fixed random
  signed bucketing, linear, so φ(M̂) − φ(M) sketches the parameter step) is the cheap alternative, but
  fresh-Adam steps are nearly orthogonal in parameter space, so its cosines carry little signal.

Everything runs on ``HeadContext.device`` (CUDA when available): the cached vectors live there.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file
from torch import nn

from sam_model.data.examples import MemoryRecord, RetrievalExample
from sam_model.io import SAMFileError
from sam_model.models.losses import MultiPositiveInfoNCE
from sam_model.models.sam import SAMNet

BERT_KEY = "text_encoder.bert."


def head_state(net: nn.Module) -> dict[str, torch.Tensor]:
    """The head's tensors (everything but BERT), detached CPU copies."""
    return {k: v.detach().to("cpu", copy=True).contiguous() for k, v in net.state_dict().items()
            if BERT_KEY not in k}


@dataclass
class HeadMemory:
    """A retriever-head checkpoint: name → tensor, saved as safetensors."""

    tensors: dict[str, torch.Tensor]

    def save(self, path: str | os.PathLike) -> None:
        save_file(self.tensors, str(path))

    @classmethod
    def load(cls, path: str | os.PathLike) -> HeadMemory:
        if not os.path.exists(path):
            raise SAMFileError(f"retriever-head checkpoint not found: {path}")
        try:
            return cls(load_file(str(path)))
        except (SafetensorError, OSError) as exc:
            raise SAMFileError(f"{path} is not a retriever-head checkpoint (safetensors: {exc})") from None


class HeadContext:
    """What every Janus call shares: the SAMNet (BERT frozen), the memories and the decision points.

    ``vectors`` maps text → pooled BERT vector for every text the tasks will touch (states,
    observations, memories); with it the head never runs BERT. Tasks are indices into ``examples``;
    candidates are episode scope (the earlier events of the task's episode).
    """

    def __init__(self, net: SAMNet, memories: Sequence[MemoryRecord], examples: Sequence[RetrievalExample],
                 vectors: dict[str, np.ndarray] | None = None, device: str | torch.device | None = None):
        if net.state_encoder.text_encoder.trainable_layers != 0:
            raise ValueError("the retriever-head adapter needs a frozen BERT (SAMConfig.trainable_layers=0)")
        self.device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
        self.net = net.to(self.device)
        self.memories, self.examples = list(memories), list(examples)
        self.head_keys = set(head_state(net))
        if vectors:
            self.add_vectors(vectors)
        # integer views, so that masks are tensor ops: episode number of each memory position, and the
        # positions of each task's useful memories
        ep_of: dict[str, int] = {}
        self.mem_episode = np.array([ep_of.setdefault(m.episode_id, len(ep_of)) for m in self.memories])
        self.relevant_pos = [[p for p in e.candidate_range("episode") if self.memories[p].id in e.relevant_ids]
                             for e in self.examples]

    def add_vectors(self, vectors: dict[str, np.ndarray]) -> None:
        """Put pooled BERT vectors in the text encoders' caches (on the device), so BERT is never run."""
        encoders = {id(m): m for m in (self.net.state_encoder.text_encoder, self.net.memory_encoder.text_encoder)}
        texts = list(vectors)
        block = torch.as_tensor(np.stack([vectors[t] for t in texts]), dtype=torch.float32, device=self.device)
        for enc in encoders.values():
            enc.prime(texts, block)

    def load(self, memory: HeadMemory) -> None:
        """Make ``memory`` the net's head (BERT untouched)."""
        keys = set(memory.tensors)
        if keys != self.head_keys:
            missing, extra = sorted(self.head_keys - keys)[:3], sorted(keys - self.head_keys)[:3]
            raise SAMFileError(f"retriever-head checkpoint does not fit this SAMNet (missing {missing}, "
                               f"unexpected {extra}); was it made with another SAMConfig?")
        self.net.load_state_dict(memory.tensors, strict=False)

    def memory(self) -> HeadMemory:
        return HeadMemory(head_state(self.net))

    # -- scoring -----------------------------------------------------------------------------------------
    def _queries(self, idx: Sequence[int]) -> torch.Tensor:
        ex = [self.examples[i] for i in idx]
        return self.net.encode_queries([e.state_text for e in ex], [e.state.phase for e in ex],
                                       [e.observation for e in ex])

    def _candidates(self, idx: Sequence[int]) -> tuple[list[int], torch.Tensor]:
        """Positions (global memory order) of every candidate of the tasks, and their vectors."""
        pos = sorted({p for i in idx for p in self.examples[i].candidate_range("episode")})
        mems = [self.memories[p] for p in pos]
        return pos, self.net.encode_memories([m.text for m in mems], [m.kind for m in mems],
                                             [m.phase for m in mems])

    def masks(self, idx: Sequence[int], pos: list[int], labels: Mapping[int, Sequence[int]] | None = None
              ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(candidate, positive, same_episode), bool (n_tasks, n_positions).

        ``labels``: task → memory positions to treat as useful instead of the true ones (reported
        feedback, see ``HeadFineTuner.propose``); tasks it omits keep their true labels.
        """
        dev = self.device
        p = torch.as_tensor(pos, device=dev)
        ex = [self.examples[i] for i in idx]
        ep_m = torch.as_tensor(self.mem_episode[pos], device=dev)
        ep_q = torch.as_tensor(self.mem_episode[[e.episode_start for e in ex]], device=dev)
        same = ep_q[:, None] == ep_m[None, :]
        cand = same & (p[None, :] < torch.as_tensor([e.cutoff for e in ex], device=dev)[:, None])
        col = {q: j for j, q in enumerate(pos)}
        rel = [self.relevant_pos[i] for i in idx] if labels is None else \
            [self._labels(i, labels.get(i, self.relevant_pos[i])) for i in idx]
        rows = [r for r, ps in enumerate(rel) for _ in ps]
        cols = [col[q] for ps in rel for q in ps]
        positive = torch.zeros_like(cand)
        positive[torch.as_tensor(rows, dtype=torch.long, device=dev),
                 torch.as_tensor(cols, dtype=torch.long, device=dev)] = True
        return cand, positive, same

    def _labels(self, task: int, positions: Sequence[int]) -> list[int]:
        e = self.examples[task]
        bad = [int(p) for p in positions if not e.episode_start <= int(p) < e.cutoff]
        if bad:
            raise ValueError(f"feedback for task {task} names memory positions {bad[:3]} that are not among its "
                             f"candidates [{e.episode_start}, {e.cutoff})")
        return [int(p) for p in positions]

    def scores(self, idx: Sequence[int], labels: Mapping[int, Sequence[int]] | None = None
               ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """Scores of the tasks against every candidate position of the batch, and the three masks."""
        pos, m = self._candidates(idx)
        cand, positive, same = self.masks(idx, pos, labels)
        return self._queries(idx) @ m.T, cand, positive, same

    @torch.no_grad()
    def correct(self, memory: HeadMemory, tasks: Sequence[int], batch_size: int = 512) -> np.ndarray:
        """Top-1 of each task's candidates is useful; batched, on the context's device."""
        self.load(memory)
        self.net.eval()
        out = []
        for i in range(0, len(tasks), batch_size):
            idx = [int(t) for t in tasks[i : i + batch_size]]
            s, cand, positive, _ = self.scores(idx)
            top = s.masked_fill(~cand, float("-inf")).argmax(1)
            out.append(positive.gather(1, top[:, None])[:, 0].cpu().numpy())
        return np.concatenate(out) if out else np.zeros(0, bool)

    @torch.no_grad()
    def correct_many(self, memories: Sequence[HeadMemory], tasks: Sequence[int], batch_size: int = 512,
                     batched: bool | None = None) -> list[np.ndarray]:
        """``correct`` of several heads on the same tasks in one pass: E_t judged for both memories at once.

        Candidates, masks and the cached text vectors are gathered once per chunk of tasks; with
        ``batched`` (default: on CUDA, with more than one memory) the heads then run as one batched
        forward (``torch.func.vmap`` over their stacked tensors), otherwise one after the other. Both
        give the same answers (tested on the CPU); only the batched pass saves time, on a GPU.
        """
        memories = list(memories)
        if batched is None:
            batched = self.device.type == "cuda" and len(memories) > 1
        if not batched:
            return [self.correct(m, tasks, batch_size) for m in memories]
        from torch.func import functional_call, vmap

        for m in memories:
            self.load(m)  # checks that every head fits this net
        self.net.eval()
        stacked = {k: torch.stack([m.tensors[k] for m in memories]).to(self.device) for k in sorted(self.head_keys)}
        scorer = _PairScorer(self.net)
        out: list[list[np.ndarray]] = [[] for _ in memories]
        for i in range(0, len(tasks), batch_size):
            idx = [int(t) for t in tasks[i : i + batch_size]]
            ex = [self.examples[j] for j in idx]
            pos = sorted({p for j in idx for p in self.examples[j].candidate_range("episode")})
            mems = [self.memories[p] for p in pos]
            cand, positive, _ = self.masks(idx, pos)
            args = ([e.state_text for e in ex], [e.state.phase for e in ex], [e.observation for e in ex],
                    [m.text for m in mems], [m.kind for m in mems], [m.phase for m in mems])
            s = vmap(lambda p, args=args: functional_call(scorer, {f"net.{k}": v for k, v in p.items()}, args))(stacked)
            top = s.masked_fill(~cand[None], float("-inf")).argmax(2)
            hit = positive[None].expand(len(memories), -1, -1).gather(2, top[..., None])[..., 0].cpu().numpy()
            for r in range(len(memories)):
                out[r].append(hit[r])
        return [np.concatenate(o) if o else np.zeros(0, bool) for o in out]

    def task_embeddings(self, tasks: Sequence[int]) -> np.ndarray:
        """Pooled BERT vectors of the tasks' states (the coverage set clusters what tasks are about)."""
        enc = self.net.state_encoder.text_encoder
        with torch.no_grad():
            v = enc([self.examples[int(t)].state_text for t in tasks])
        return nn.functional.normalize(v, dim=-1).cpu().numpy().astype(np.float32)


class _PairScorer(nn.Module):
    """Scores of queries against candidates as one ``forward``, so ``functional_call`` can swap heads in."""

    def __init__(self, net: SAMNet):
        super().__init__()
        self.net = net

    def forward(self, state_texts, phases, observations, mem_texts, mem_kinds, mem_phases) -> torch.Tensor:
        q = self.net.encode_queries(state_texts, phases, observations)
        return q @ self.net.encode_memories(mem_texts, mem_kinds, mem_phases).T


class HeadEvaluator:
    """Evaluator protocol over a HeadContext; ``correct_many`` judges several heads in one pass."""

    def __init__(self, ctx: HeadContext):
        self.ctx = ctx

    def correct(self, memory: HeadMemory, tasks: Sequence[int]) -> np.ndarray:
        return self.ctx.correct(memory, tasks)

    def correct_many(self, memories: Sequence[HeadMemory], tasks: Sequence[int]) -> list[np.ndarray]:
        return self.ctx.correct_many(memories, tasks)


class HeadFineTuner:
    """The base updater: ``steps`` Adam steps on minibatches of the latest tasks, from a fresh optimiser.

    Fresh optimiser and seeds derived from the task ids make ``propose`` a pure function of
    (memory, tasks), which is what lets a Janus run resume exactly.
    """

    def __init__(self, ctx: HeadContext, steps: int = 10, lr: float = 1e-3, batch_size: int = 16,
                 temperature: float = 0.05, weight_decay: float = 0.0, in_batch_negatives: bool = True,
                 seed: int = 0):
        self.ctx, self.steps, self.lr, self.batch_size = ctx, steps, lr, batch_size
        self.weight_decay, self.in_batch_negatives, self.seed = weight_decay, in_batch_negatives, seed
        self.loss_fn = MultiPositiveInfoNCE(temperature, learnable=False).to(ctx.device)

    def _seed(self, tasks: Sequence[int]) -> int:
        h = hashlib.blake2b(np.asarray(tasks, dtype=np.int64).tobytes(), digest_size=8).digest()
        return (int.from_bytes(h, "little") + self.seed) % 2**63

    def propose(self, memory: HeadMemory, tasks: Sequence[int],
                feedback: Mapping[int, Sequence[int]] | None = None) -> HeadMemory:
        """Fine-tune on ``tasks``. ``feedback``: what the agent reported, task → positions (in the context's
        memory order) of the memories that were useful; None = the context's true labels. Tasks the
        feedback omits keep their true labels; a task reported with no useful memory carries no signal
        and is left out."""
        tasks = [int(t) for t in tasks]
        labels = None if feedback is None else {int(k): [int(p) for p in v] for k, v in feedback.items()}
        if labels is not None:
            tasks = [t for t in tasks if labels.get(t, self.ctx.relevant_pos[t])]
        if not tasks:
            return memory
        ctx = self.ctx
        ctx.load(memory)
        params = [p for p in ctx.net.parameters() if p.requires_grad]
        opt = torch.optim.Adam(params, lr=self.lr, weight_decay=self.weight_decay)
        seed = self._seed(tasks)
        rng = np.random.default_rng(seed)
        devices = [ctx.device.index or 0] if ctx.device.type == "cuda" else []
        with torch.random.fork_rng(devices=devices):
            torch.manual_seed(seed)  # dropout
            ctx.net.train()
            for _ in range(self.steps):
                idx = tasks if len(tasks) <= self.batch_size else \
                    rng.choice(tasks, self.batch_size, replace=False).tolist()
                s, cand, positive, same = ctx.scores(idx, labels)
                allowed = cand | ~same if self.in_batch_negatives else cand  # other episodes' memories
                loss = self.loss_fn(s, allowed, positive).mean()
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
        ctx.net.eval()
        return ctx.memory()


class ParamSketch:
    """φ(memory): a count sketch of the head's parameters into ``dim`` buckets (fixed seed)."""

    tasks_per_call = 0.0  # reads the parameters only: no task is scored

    def __init__(self, dim: int = 4096, seed: int = 0):
        self.dim, self.seed = dim, seed
        self._plan: tuple[list[str], np.ndarray, np.ndarray] | None = None

    def __call__(self, memory: HeadMemory) -> np.ndarray:
        keys = sorted(k for k, v in memory.tensors.items() if v.is_floating_point())
        theta = np.concatenate([memory.tensors[k].double().reshape(-1).numpy() for k in keys])
        if self._plan is None or self._plan[0] != keys or len(self._plan[1]) != len(theta):
            rng = np.random.default_rng(self.seed)
            self._plan = (keys, rng.integers(0, self.dim, len(theta)), rng.choice([-1.0, 1.0], len(theta)))
        _, bucket, sign = self._plan
        return np.bincount(bucket, weights=sign * theta, minlength=self.dim)


class ProbeFeatures:
    """φ(memory): how the head behaves on a fixed set of probe tasks.

    Parameter steps of a freshly initialised Adam are nearly orthogonal to each other whatever they
    do (hundreds of thousands of noisy coordinates), so their cosines say little. Steps in behaviour do.

    - ``loglik`` (default): per probe, log of the probability mass the head puts on the useful memories
      (softmax over its candidates at ``scale`` = 1/temperature). A step that raises it on the probes
      that earlier deployed steps raised points along the momentum; one that lowers them — forgetting —
      points against it. Needs labelled probes (M_0's training tasks serve).
    - ``probs``: the whole softmax over each probe's candidates, concatenated; label-free, but a change
      of retrieval is not signed as better or worse.
    """

    KINDS = ("loglik", "probs")

    def __init__(self, ctx: HeadContext, probe_tasks: Sequence[int], scale: float = 20.0, kind: str = "loglik"):
        if not len(probe_tasks):
            raise ValueError("ProbeFeatures needs at least one probe task")
        if kind not in self.KINDS:
            raise ValueError(f"ProbeFeatures kind must be one of {self.KINDS}, got {kind!r}")
        self.ctx, self.probe, self.scale, self.kind = ctx, [int(t) for t in probe_tasks], scale, kind

    @property
    def tasks_per_call(self) -> float:
        """Its cost in the unit of a comparison: every probe task is scored once per call."""
        return float(len(self.probe))

    @torch.no_grad()
    def __call__(self, memory: HeadMemory) -> np.ndarray:
        ctx = self.ctx
        ctx.load(memory)
        ctx.net.eval()
        s, cand, positive, _ = ctx.scores(self.probe)
        logp = torch.log_softmax((s * self.scale).masked_fill(~cand, float("-inf")), dim=1)
        if self.kind == "probs":
            return logp.exp()[cand].double().cpu().numpy()
        return torch.logsumexp(logp.masked_fill(~positive, float("-inf")), dim=1).double().cpu().numpy()
