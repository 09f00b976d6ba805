"""The encoder: states and observations → query vectors, memories → memory vectors. Stateless, no Lightning.

SAM's score is one inner product, q·m (sam_model.models.sam), so everything that searches — the store
(sam_model.store), evaluate.py, the memory bank — needs only these two maps; what was written, when and for
whom lives in the store, never here. ``Encoder`` (sam_model.encoding, beside the store) is that contract (a
trained ``SAMEncoder``, or the stand-ins of sam_model.memory.encoders); ``SAMEncoder`` wraps a trained ``SAMNet``:

    enc = SAMRetriever.load("checkpoints/demo/export").encoder   # the one loader (sam_model.retriever)
    q = enc.encode_queries([state], ["ok, go ahead"], steps=[42], task_starts=[30])   # (1, dim) float32
    m = enc.encode_memories(records)                                                  # (n, dim) float32
    scores = q @ m.T
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch

from sam_model.data.examples import memory_record
from sam_model.data.schema import Event, State, as_state
from sam_model.data.text import state_to_text
from sam_model.encoding import Encoder  # noqa: F401 - the contract SAMEncoder meets, re-exported
from sam_model.limits import check_batch_size
from sam_model.models.sam import SAMNet
from sam_model.models.text_encoder import TokenCount
from sam_model.progress import progress_bar

TEXT_CACHE = 4096  # BERT vectors of recent texts a loaded encoder keeps (~6 MB for MiniLM): repeats cost no BERT


class SAMEncoder:
    """A trained SAMNet as an :class:`Encoder` (eval mode, inference only, batched).

    ``backend``: what runs BERT — ``auto`` (on a CPU, each call on whichever is measured cheaper for it of PyTorch,
    ONNX Runtime where the ``[onnx]`` extra is installed, and PyTorch in bfloat16 where the CPU has bfloat16 units;
    on a GPU, PyTorch), ``onnx``, ``bf16``, ``int8`` or ``torch``; None: $SAM_TEXT_BACKEND, else auto
    (sam_model.models.onnx_text, sam_model.models.bf16_text). ONNX Runtime gives PyTorch's vectors to float
    rounding, bfloat16 to ~0.99996 cosine (rankings within 0.002 MRR, README "CPU speed"), int8 (asked for by name
    only) to ~0.993, where rankings change; ``self.backend`` says what is loaded ("onnx+bf16": both may run calls).

    ``text_cache``: how many texts' BERT vectors a frozen BERT keeps, least recently used dropped first
    (:meth:`limit_text_cache`). An agent's state text often repeats between calls (its state did not change), and
    then a query costs one BERT pass, not two; the bound keeps a process that runs for days from growing.
    """

    def __init__(self, net: SAMNet, backend: str | None = None, text_cache: int | None = TEXT_CACHE):
        self.net = net.eval()
        self._texts = list({id(m): m for m in (net.state_encoder.text_encoder,
                                               net.memory_encoder.text_encoder)}.values())
        self.backend = [enc.use_backend(backend) for enc in self._texts][0]
        self.limit_text_cache(text_cache)

    @property
    def dim(self) -> int:
        return self.net.out_dim

    @property
    def device(self) -> torch.device:
        return self.net.alpha_logit.device

    @property
    def content_only(self) -> bool:
        """The content-only ablation: it must not see the agent's state, so the store re-ranks nothing for it."""
        return self.net.content_only

    def clear_cache(self) -> None:
        """Forget cached BERT vectors of texts (they grow with every new text seen by a frozen BERT)."""
        for module in self.net.modules():
            if hasattr(module, "clear_cache") and module is not self.net:
                module.clear_cache()

    def limit_text_cache(self, entries: int | None) -> None:
        """At most ``entries`` cached text vectors per BERT (0: none, e.g. where tenants share this encoder and a
        hit would tell one, by its timing, that another sent the same text; None: no bound, for a batch job that
        loads a whole on-disk cache). Vectors are the same either way; only BERT's work changes."""
        for enc in self._texts:
            enc.limit_cache(entries)

    @property
    def memory_tokens(self) -> TokenCount:
        """How the memory encoder's tokenizer reads a memory's text (sam_model.models.text_encoder.TokenCount:
        called, its token count; ``max_length``): what the store and evaluate.py cut token-sized chunks by."""
        return self.net.memory_encoder.text_encoder.token_count()

    def _batched(self, n: int, batch_size: int, progress: bool, desc: str, fn) -> np.ndarray:
        check_batch_size(batch_size)
        out = []
        with torch.inference_mode():
            for i in progress_bar(range(0, n, batch_size), desc=desc, disable=not progress, unit="batch"):
                out.append(fn(slice(i, i + batch_size)).float().cpu().numpy())
        return np.concatenate(out) if out else np.zeros((0, self.dim), dtype=np.float32)

    def encode_queries(self, states: Sequence[State | Mapping], observations: Sequence[str], batch_size: int = 64,
                       progress: bool = False, steps: Sequence[int | None] | None = None,
                       task_starts: Sequence[int | None] | None = None) -> np.ndarray:
        """q = [α·W_sᵀ v_s, (1−α)·c_obs, ψ] per query, (n, dim) float32."""
        if len(states) != len(observations):
            raise ValueError(f"got {len(states)} states but {len(observations)} observations; give one each")
        st = [as_state(s) for s in states]
        texts, phases, obs = [state_to_text(s) for s in st], [s.phase for s in st], list(observations)
        return self._batched(len(st), batch_size, progress, "queries", lambda sl: self.net.encode_queries(
            texts[sl], phases[sl], obs[sl], None if steps is None else list(steps[sl]),
            None if task_starts is None else list(task_starts[sl])))

    @property
    def text_queries(self) -> bool:
        """Whether :meth:`encode_text_queries` works: the network has a content block."""
        return self.net.uses_content

    def encode_text_queries(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
        """q = [0, c_text, 0] per text, (n, dim) float32: a plain query scored by content similarity alone
        (SAMNet.encode_text_queries), for a caller with words and no agent state."""
        texts = list(texts)
        return self._batched(len(texts), batch_size, False, "queries",
                             lambda sl: self.net.encode_text_queries(texts[sl]))

    def encode_memories(self, memories: Sequence[Any], batch_size: int = 64, progress: bool = False) -> np.ndarray:
        """m = [v_m, c_m, φ(t_m)] per memory, (n, dim) float32: MemoryRecords, Events (read without the state
        before them), or anything with .text/.kind/.phase (.content and .step when it has them)."""
        ms = [memory_record(m, None) if isinstance(m, Event) else m for m in memories]
        texts, kinds, phases = [m.text for m in ms], [m.kind for m in ms], [m.phase for m in ms]
        contents = [getattr(m, "content", "") or m.text for m in ms]
        steps = [getattr(m, "step", None) for m in ms]
        opens = None
        if self.net.opening is not None:  # only a model that reads it: a bare event cannot say
            if not all(isinstance(getattr(m, "opens_task", None), bool) for m in memories):
                raise ValueError("this model scores whether a memory opened its task (task_opening): give "
                                 "memories that say it (opens_task: MemoryRecords made by MemoryRecorder, the "
                                 "store's memories, the bank's units), not bare events")
            opens = [m.opens_task for m in ms]
        return self._batched(len(ms), batch_size, progress, "memories", lambda sl: self.net.encode_memories(
            texts[sl], kinds[sl], phases[sl], contents[sl], steps[sl], None if opens is None else opens[sl]))

    def _per_state(self, fn, desc: str, states, observations, batch_size: int) -> np.ndarray:
        st = [as_state(s) for s in states]
        obs = list(observations) if observations is not None else [""] * len(st)
        texts, phases = [state_to_text(s) for s in st], [s.phase for s in st]
        return self._batched(len(st), batch_size, False, desc, lambda sl: fn(texts[sl], phases[sl], obs[sl]))

    def encode_states(self, states: Sequence[State | Mapping], observations: Sequence[str] | None = None,
                      batch_size: int = 64) -> np.ndarray:
        """v_s (n, d): the state embedding before projection (for diagnostics such as t-SNE)."""
        return self._per_state(self.net.encode_states, "states", states, observations, batch_size)

    def projection_weights(self, states: Sequence[State | Mapping], observations: Sequence[str] | None = None,
                           batch_size: int = 64) -> np.ndarray:
        """The diagonal of W_s per state (n, d): which dimensions each state turns up or down."""
        return self._per_state(self.net.projection_diagonal, "projection", states, observations, batch_size)
