"""The text encoder's BERT in bfloat16 on a CPU that has bfloat16 units: about twice the texts per second.

A frozen BERT's time is its matrix products (README, "CPU speed": the frozen pass ran at 75-85 % of this CPU's
float32 matrix rate, so float32 had nothing left to give). A CPU with bfloat16 dot-product units (AVX512-BF16 on
AMD Zen 4 and Intel Cooper Lake, AMX on Sapphire Rapids and later) multiplies bfloat16 matrices at about twice
the float32 rate, through oneDNN, which PyTorch uses for ``torch.bfloat16`` linear layers on such CPUs.

The vectors are not the float32 ones to rounding, as ONNX Runtime's are: bfloat16 keeps 8 bits of mantissa, so
each product carries ~0.4 % relative error, averaged down over 384 dimensions. Measured on MiniLM: cosine to the
float32 vectors 0.99996 on average (0.9999 at worst), where the text cache's float16 storage already costs ~1e-7;
rankings agree within the issue's 0.002 MRR (README, "CPU speed"). The pooling (a mean over tokens) and
everything after BERT stay float32: only the transformer runs in bfloat16.

How it is used: :class:`Bf16Text` is a runner like ``onnx_text.OnnxText`` (inputs in, pooled float32 vectors
out); ``TextEncoder.use_backend`` loads it for backend ``bf16``, and for ``auto`` only where the CPU has the
units (:func:`native`; $SAM_TEXT_BF16=0 leaves it out, as ``sam-serve`` does by default). Under ``auto`` each
encode runs on the backend whose measured cost for its cut is lowest (sam_model.models.call_cost): one query may
stay on ONNX Runtime while the frozen pass's full batches go to bfloat16. Without the units bfloat16 is emulated
and slower than float32, so ``auto`` never loads it there.
"""

from __future__ import annotations

import copy
import os

import numpy as np
import torch
from torch import nn

from sam_model.models.bert import pool
from sam_model.models.packing import packed_forward
from sam_model.models.runner import FrozenRunner

AUTO_ENV = "SAM_TEXT_BF16"  # "0": backend auto leaves bfloat16 out (float32 vectors only, as without the units)


def native() -> bool:
    """Whether this CPU multiplies bfloat16 matrices in hardware (AVX512-BF16 or AMX) through oneDNN."""
    try:
        return bool(torch.backends.mkldnn.is_available() and torch.ops.mkldnn._is_mkldnn_bf16_supported()
                    and (torch.cpu._is_avx512_bf16_supported() or torch.cpu._is_amx_tile_supported()))
    except (AttributeError, RuntimeError):  # an older or other build of PyTorch: treat as absent
        return False


def in_auto() -> bool:
    """Whether backend ``auto`` loads bfloat16: where the CPU has the units, unless $SAM_TEXT_BF16 is "0"."""
    value = os.environ.get(AUTO_ENV, "1").strip()
    if value not in ("0", "1"):
        raise ValueError(f"${AUTO_ENV} must be 0 (auto leaves bfloat16 out) or 1 (auto may use it where the CPU "
                         f"has bfloat16 units), got {value!r}")
    return value == "1" and native()


class Bf16Text(FrozenRunner):
    """A bfloat16 copy of a frozen BERT, computing the pooled float32 vectors of one call's inputs (the arrays of
    ``TextEncoder._calls``: packed rows for a packable BERT, else ids and mask); ``stale`` once the float32 weights
    changed in place, and never copied with the network (sam_model.models.runner)."""

    def __init__(self, bert: nn.Module, pooling: str, packed: bool):
        super().__init__(bert)
        self.copy = copy.deepcopy(bert).to(torch.bfloat16).eval()
        for p in self.copy.parameters():
            p.requires_grad_(False)
        self.pooling, self.packed = pooling, packed

    @torch.no_grad()
    def __call__(self, inputs: dict[str, np.ndarray]) -> np.ndarray:
        """Pooled float32 vectors: (rows, texts per row, hidden) for packed inputs, else (rows, hidden)."""
        t = {k: torch.from_numpy(v) for k, v in inputs.items()}
        if "pool" in t:
            if t["pool"].shape[1] == 1:  # one text per row: BERT's own padding mask, as TextEncoder._run does
                hidden = self.copy(input_ids=t["input_ids"], attention_mask=(t["segments"] > 0).long()
                                   ).last_hidden_state.float()
                return (t["pool"] @ hidden).numpy()
            return packed_forward(self.copy, **t).numpy()
        hidden = self.copy(**t).last_hidden_state.float()
        return pool(hidden, t["attention_mask"], self.pooling).numpy()
