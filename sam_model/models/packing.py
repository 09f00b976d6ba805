"""Several texts in one BERT row: the vectors of one text per row, from fewer and fuller forward passes.

BERT is per token except in attention. A row holding texts a, b, ... one after the other, with

- attention masked block-diagonally (a token attends only to the tokens of its own text: the additive mask is
  0 inside a text's block and the float minimum elsewhere, so ``softmax`` gives every other token weight
  exp(min − max) = 0 exactly),
- position ids restarting at 0 where each text starts, and token type 0 throughout,

computes for every text what a row of its own computes, up to the order of float sums (~1e-6). Each text's
vector is its own pooling, a row of weights over the row's tokens (mean: 1/len on its tokens; cls: 1 on its first
token, its [CLS]): ``pooled[b, k] = Σ_t w[b, k, t] · hidden[b, t]``.

Why: a query is two texts (the state text, ~60 tokens, and the observation, ~40), and a forward pass has a fixed
part (PyTorch's per-operator dispatch: worth ~30 tokens, measured), so one row of ~100 tokens is one pass instead
of two without padding the observation to the state text's length. Packing only adds attention (every token
attends over its whole row's width before the mask), so whether a cut packs is decided per call by the measured
cost (sam_model.models.call_cost, TextEncoder._plan): thousands of training texts, which length batching
already pads little, stay one per row.

Only where it is the same maths (``packable``): a ``BertModel`` with absolute position embeddings and eager or SDPA
attention. Other encoders make positions their own way (RoBERTa from its padding index, MPNet and DeBERTa
relative, ModernBERT rotary with its own unpadding) and keep one text per row.
"""

from __future__ import annotations

import bisect

import numpy as np
import torch
from torch import nn

PACK_WIDTH = 128  # tokens per packed row: a query's state text and observation at max_length 64 fit one row


def packable(bert: nn.Module) -> bool:
    """Whether ``bert`` computes a packed row exactly as its texts apart (see the module doc)."""
    from transformers import BertModel

    cfg = bert.config
    return (isinstance(bert, BertModel) and getattr(cfg, "position_embedding_type", "absolute") == "absolute"
            and not cfg.is_decoder and getattr(cfg, "_attn_implementation", "eager") in ("eager", "sdpa"))


def pack_rows(lengths: list[int], width: int = PACK_WIDTH) -> list[list[int]]:
    """Text indices grouped into rows of at most ``width`` tokens (a longer text gets a row of its own): best fit
    over the texts longest first (each goes to the row it fills most tightly), which leaves little room unused
    when many texts are packed; O(n log n)."""
    rows: list[list[int]] = []
    free: list[tuple[int, int]] = []  # (room left, row), sorted
    for i in sorted(range(len(lengths)), key=lambda j: -lengths[j]):
        k = bisect.bisect_left(free, (lengths[i], -1))
        if k == len(free):
            rows.append([i])
            room, r = width - lengths[i], len(rows) - 1
        else:
            room, r = free.pop(k)
            rows[r].append(i)
            room -= lengths[i]
        if room > 0:
            bisect.insort(free, (room, r))
    return rows


def packed_inputs(rows: list[list[list[int]]], pooling: str, pad_id: int) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """The arrays of :class:`Packed` for ``rows`` (each a list of token-id lists), and for each text in row order the
    index of its vector in the flattened (rows × texts per row) output.

    input_ids / position_ids / segments: (rows, tokens) int64, segments 1, 2, ... per text and 0 on padding;
    pool: (rows, texts per row, tokens) float32, the pooling weights.
    """
    width = max(sum(len(x) for x in row) for row in rows)
    slots = max(len(row) for row in rows)
    shape = (len(rows), width)
    ids, pos, seg = np.full(shape, pad_id, np.int64), np.zeros(shape, np.int64), np.zeros(shape, np.int64)
    weights = np.zeros((len(rows), slots, width), np.float32)
    flat = []
    for r, row in enumerate(rows):
        start = 0
        for k, x in enumerate(row):
            end = start + len(x)
            ids[r, start:end], pos[r, start:end], seg[r, start:end] = x, np.arange(len(x)), k + 1
            if pooling == "cls":
                weights[r, k, start] = 1.0
            else:
                weights[r, k, start:end] = 1.0 / max(len(x), 1)
            flat.append(r * slots + k)
            start = end
    return {"input_ids": ids, "position_ids": pos, "segments": seg, "pool": weights}, np.asarray(flat, np.int64)


def packed_forward(bert: nn.Module, input_ids: torch.Tensor, position_ids: torch.Tensor, segments: torch.Tensor,
                   pool: torch.Tensor) -> torch.Tensor:
    """``pool · BERT(ids, positions, block-diagonal mask)``: (rows, texts per row, hidden), in ``pool``'s dtype."""
    same = segments[:, :, None] == segments[:, None, :]  # padding attends to padding: no row is all masked
    dtype = bert.get_input_embeddings().weight.dtype
    bias = (~same).to(dtype)[:, None] * torch.finfo(dtype).min
    hidden = bert(input_ids=input_ids, attention_mask=bias, position_ids=position_ids,
                  token_type_ids=torch.zeros_like(input_ids)).last_hidden_state
    if hidden.dtype != pool.dtype:  # a bfloat16 BERT (sam_model.models.bf16_text): the mean over tokens in float32
        hidden = hidden.to(pool.dtype)
    return pool @ hidden


class Packed(nn.Module):
    """:func:`packed_forward` as a module: what the ONNX graph of a packable BERT computes."""

    def __init__(self, bert: nn.Module):
        super().__init__()
        self.bert = bert

    def forward(self, input_ids: torch.Tensor, position_ids: torch.Tensor, segments: torch.Tensor,
                pool: torch.Tensor) -> torch.Tensor:
        return packed_forward(self.bert, input_ids, position_ids, segments, pool)
