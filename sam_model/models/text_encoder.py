"""BERT over text → one pooled vector per text, with an optional cache for frozen BERTs (``TextEncoder``),
and the untrained sentence embeddings made with it (``TextEmbedder``).

On a 2-core CPU, fine-tuning MiniLM over every memory of every episode is out of
reach, but a frozen BERT only has to see each distinct text once: the cache turns
later epochs into a few small MLPs. With trainable layers the cache is off.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from pathlib import Path

import numpy as np
import torch
from torch import nn

from sam_model.models.bert import layer_stack, load_bert, pool
from sam_model.models.call_cost import DEFAULT, SHAPES, CallCost, cached
from sam_model.models.packing import PACK_WIDTH, pack_rows, packable, packed_forward, packed_inputs
from sam_model.models.runner import FrozenRunner

log = logging.getLogger(__name__)

MAX_CACHE_ENTRIES = 1_000_000  # vectors kept in one on-disk cache file (the oldest fall out)
# The config fields a text encoder's fingerprint reads: what shapes its vectors, nothing a transformers release adds.
FINGERPRINT_FIELDS = ("model_type", "vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
                      "intermediate_size", "hidden_act", "max_position_embeddings", "type_vocab_size",
                      "layer_norm_eps")
PACK_GAIN = 0.9  # pack texts into shared rows only where that is predicted to cost at least 10 % less
# PyTorch runs one text per row (its padding mask, as before packing): on two quiet cores packed rows with their 4-D
# mask were no faster there (README, "CPU speed"); ONNX Runtime runs the same graph either way
PACK_ON_TORCH = False
CALL_COST = 16  # what one more BERT call costs, in padded token slots (rows × tokens): measured, both backends


def length_batches(lengths: list[int], max_batch: int, call_cost: float = CALL_COST,
                   attention: float = 0.0) -> list[list[int]]:
    """Indices grouped into BERT batches by token length, at the least cost.

    The texts (or packed rows) are sorted by length and cut into consecutive batches of at most ``max_batch``; a
    batch of n whose longest has L tokens costs ``call_cost + n·L·(1 + attention·L)`` token slots (every row padded
    to L; sam_model.models.call_cost). The cut is the cheapest one (dynamic programming over the sorted lengths,
    O(n · max_batch)): with a large fixed cost a query's two texts go in one call, with a small one in two (padding
    the observation to the state text's length costs more than the call), while thousands of training texts go in
    full batches of near-equal length.
    """
    n = len(lengths)
    if n == 0:
        return []
    order = sorted(range(n), key=lengths.__getitem__)
    sl = np.asarray([lengths[i] for i in order], dtype=np.int64)
    best = np.zeros(n + 1, dtype=np.float64)  # best[i]: the cheapest cost of the first i sorted texts
    cut = np.zeros(n + 1, dtype=np.int64)
    for i in range(1, n + 1):
        j = np.arange(max(0, i - max_batch), i)
        cost = best[j] + call_cost + (i - j) * sl[i - 1] * (1.0 + attention * sl[i - 1])
        k = int(np.argmin(cost))
        best[i], cut[i] = cost[k], j[k]
    batches, i = [], n
    while i > 0:
        batches.append(order[cut[i] : i])
        i = int(cut[i])
    return batches[::-1]


def check_cache_entries(entries: int | None) -> int | None:
    """A text cache's bound as given, or a one-line error: an integer >= 0, or None for no bound."""
    if entries is not None and (isinstance(entries, bool) or not isinstance(entries, int) or entries < 0):
        raise ValueError(f"text_cache (vectors kept) must be an integer >= 0 (0: no cache) or None (no bound), "
                         f"got {entries!r}")
    return entries


class TextCache:
    """text → pooled vector of a frozen BERT, the least recently used first, at most ``entries`` of them (None: no
    bound, as a training run's frozen pass needs every text; 0: nothing kept).

    Why a bound: a retriever that serves an agent for days sees a new text at nearly every call, and an unbounded
    cache grows until the process dies; the texts that repeat (an agent's state text between calls where its state
    did not change) are the recent ones. Why a lock: threads share a loaded retriever, and an OrderedDict is not
    safe against them (a value's destructor may release the GIL inside an update; seen here: 5 entries counted, an
    empty order, the bound broken).
    """

    def __init__(self, entries: int | None = None):
        self.entries = check_cache_entries(entries)
        self._d: OrderedDict[str, torch.Tensor] = OrderedDict()
        self._lock = threading.Lock()

    def __getstate__(self) -> dict:  # copies and pickles (a module deep-copied, a spawned worker) get a new lock
        with self._lock:
            return {"entries": self.entries, "_d": OrderedDict(self._d)}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._d)

    def __contains__(self, text: object) -> bool:
        return text in self._d

    def __iter__(self) -> Iterator[str]:
        """The texts, least recently used first (a snapshot: safe while other threads change the cache)."""
        with self._lock:
            return iter(list(self._d))

    def __getitem__(self, text: str) -> torch.Tensor:
        return self._d[text]

    def lookup(self, texts: Iterable[str]) -> dict[str, torch.Tensor]:
        """The cached vectors among ``texts`` (each now the most recently used)."""
        with self._lock:
            found = {t: v for t in texts if (v := self._d.get(t)) is not None}
            if self.entries is not None:
                for t in found:
                    self._d.move_to_end(t)
        return found

    def update(self, pairs: Iterable[tuple[str, torch.Tensor]] | TextCache) -> None:
        """Keep these vectors (the most recently used now), then drop the oldest beyond the bound."""
        if isinstance(pairs, TextCache):
            with pairs._lock:
                pairs = list(pairs._d.items())
        if self.entries == 0:
            return
        if self.entries is not None:  # a row of its batch's tensor would keep the whole batch alive
            pairs = [(t, v.clone()) for t, v in pairs]
        with self._lock:
            if self.entries is None:
                self._d.update(pairs)
                return
            for t, v in pairs:
                self._d[t] = v
                self._d.move_to_end(t)
            self._trim()

    def limit(self, entries: int | None) -> None:
        with self._lock:
            self.entries = check_cache_entries(entries)
            self._trim()

    def clear(self) -> None:
        with self._lock:
            self._d.clear()

    def _trim(self) -> None:  # under the lock
        while self.entries is not None and len(self._d) > self.entries:
            self._d.popitem(last=False)


class TokenCount:
    """How a text encoder's tokenizer reads a text: its token count and how much of it fits in ``max_length``.

    What token-sized chunks (sam_model.data.chunks, ``Chunking.tokens``) are cut by: ``count(text)`` is the number
    of ids the encoder's tokenizer gives ``text``, special tokens included, uncut, so a chunk whose count is at
    most ``max_length`` is read whole. It holds the tokenizer only, not BERT: a DataLoader worker gets a small copy.
    """

    def __init__(self, tokenizer, max_length: int):
        self.tokenizer, self.max_length = tokenizer, max_length

    def __call__(self, text: str) -> int:
        return len(self.tokenizer(text, verbose=False)["input_ids"])

    def read(self, text: str) -> int:
        """How many characters of ``text`` the encoder reads: all of them when it fits, else up to the end of its
        last token within ``max_length`` (what a chunk's search can find; needs a fast tokenizer)."""
        if self(text) <= self.max_length:
            return len(text)
        offsets = self.tokenizer(text, truncation=True, max_length=self.max_length,
                                 return_offsets_mapping=True)["offset_mapping"]
        return max((end for _, end in offsets), default=0)


ENGINES = {"onnx": "ONNX Runtime", "int8": "ONNX Runtime int8", "bf16": "PyTorch bfloat16", "torch": "PyTorch"}


class DeferredAuto(FrozenRunner):
    """Backend ``auto`` still to load and time (TextEncoder.defer_auto): a FrozenRunner for what it remembers, the
    weights it was asked for (``stale`` once trained in place: then PyTorch, as a loaded runner goes) and that a copy
    of the network does not carry it."""

    def __init__(self, bert: nn.Module, cache_dir: str | os.PathLike | None):
        super().__init__(bert)
        self.cache_dir = cache_dir


class TextEncoder(nn.Module):
    """Pooled sentence vectors of any BERT-style encoder: the mean of its tokens (the pooling all-MiniLM-L6-v2
    was trained with) or its first token (``pooling="cls"``)."""

    def __init__(self, bert: nn.Module, tokenizer, max_length: int = 96, trainable_layers: int = -1,
                 cache: bool = True, batch_size: int = 256, pooling: str = "mean"):
        super().__init__()
        self.bert, self.tokenizer, self.max_length, self.batch_size = bert, tokenizer, max_length, batch_size
        self.pooling = pooling
        self.trainable_layers = trainable_layers
        self.hidden_size = bert.config.hidden_size
        self._freeze(trainable_layers)
        self.use_cache = cache and self.frozen
        self._cache = TextCache()  # unbounded until limit_cache: a training run's frozen pass needs every text
        self.encoded = 0  # texts BERT actually ran on (cache misses): what a benchmark pays for encoding
        self.calls = 0  # BERT forward passes run (on either backend)
        self.runner = None  # an ONNX Runtime graph of this BERT (sam_model.models.onnx_text), set by use_backend
        self.bf16 = None  # a bfloat16 copy of this BERT (sam_model.models.bf16_text), set by use_backend
        # several texts per BERT row where that is the same maths (sam_model.models.packing); rows of pack_width tokens
        self.packed = packable(bert)
        self.pack_width = max(PACK_WIDTH, 2 * max_length)
        self.costs: dict[str, CallCost] = {}  # what a call costs per backend here, measured by use_backend
        self.auto = False  # backend "auto" with a runner loaded: each call runs where it costs least
        self.deferred: DeferredAuto | None = None  # backend "auto" to load and time at the first BERT call (defer_auto)

    def use_backend(self, backend: str | None = "auto", cache_dir: str | os.PathLike | None = None) -> str:
        """Run BERT on PyTorch (``torch``), ONNX Runtime (``onnx``), PyTorch in bfloat16 (``bf16``) or ONNX Runtime
        over an int8 graph (``int8``); ``auto``: each call on whichever of those loaded costs least for its shape
        (on a CPU: ONNX Runtime where it is installed, bfloat16 where the CPU has bfloat16 units and $SAM_TEXT_BF16
        is not "0"; never int8; on a GPU, PyTorch); None: $SAM_TEXT_BACKEND, else auto. Returns what was loaded:
        "torch", "onnx", "bf16", "int8" or, under auto, those besides PyTorch joined by "+" ("onnx+bf16"). It
        measures what a call costs on each backend loaded, on the device the BERT is on (sam_model.models.call_cost;
        once per process): on a GPU a call's fixed part is nearly all of it, so a query's two texts go in one call
        there, where the CPU's costs would cut them into two (README "CPU speed", "On a GPU"). ONNX
        Runtime's vectors are PyTorch's to float rounding; bfloat16's are ~0.99996 cosine to them
        (sam_model.models.bf16_text), with rankings within 0.002 MRR; int8's ~0.993, and rankings change (README,
        "CPU speed")."""
        from sam_model.models import bf16_text, onnx_text

        backend = onnx_text.check_backend(backend)
        on_cpu = self.device.type == "cpu"
        if backend in ("onnx", "bf16", "int8") and not on_cpu:
            raise ValueError(f"text backend {backend!r} runs on the CPU only; use 'torch' (or 'auto') on a GPU "
                             "(training there takes trainer.precision: bf16-mixed)")
        # defer_auto's bfloat16 copy, of these very weights: kept, not made again (a deep copy of the BERT)
        kept = self.bf16 if backend == "auto" and self.deferred is not None and self.bf16 is not None \
            and not self.bf16.stale else None
        self.runner = self.bf16 = self.deferred = None
        if backend in ("auto", "onnx", "int8") and on_cpu and onnx_text.available():
            self.runner = onnx_text.onnx_text(self.bert, self.tokenizer, self.pooling, self.max_length, cache_dir,
                                              self.packed, int8=backend == "int8")
        if backend == "bf16" or backend == "auto" and self._auto_bf16():
            self.bf16 = kept or bf16_text.Bf16Text(self.bert, self.pooling, self.packed)
        self.auto = backend == "auto" and (self.runner is not None or self.bf16 is not None)
        self.costs = {}
        device = self.device
        key = (type(self.bert).__name__, self.bert.config.to_json_string(), self.packed, self.max_length,
               torch.get_num_threads(), str(device))
        for name, runner in self._candidates().items():
            self.costs[name] = cached((name, *key), lambda r, w, x=runner: self._time_call(r, w, x), self._shapes())
        return self.backend

    def defer_auto(self, cache_dir: str | os.PathLike | None = None) -> str:
        """Backend ``auto`` with only what names its vectors' precision made now (the bfloat16 copy auto loads on a
        CPU with bfloat16 units: ``precision``, and with it the text cache's file name, are then what
        ``use_backend("auto")`` gives), while loading ONNX Runtime and timing each engine wait for the first call
        that runs BERT, or for ``use_backend``. Why: a fit timed the engines (~20 s on 2 busy cores) before it knew
        whether any text was missing from its cache, and when none was the timings went unused. Returns what is
        loaded so far ("bf16" or "torch")."""
        from sam_model.models import bf16_text

        self.runner = None
        self.bf16 = bf16_text.Bf16Text(self.bert, self.pooling, self.packed) if self._auto_bf16() else None
        self.auto, self.costs = self.bf16 is not None, {}
        self.deferred = DeferredAuto(self.bert, cache_dir)
        return self.backend

    def _auto_bf16(self) -> bool:
        """Whether backend ``auto`` loads a bfloat16 copy here: on a CPU with the units (bf16_text.in_auto)."""
        from sam_model.models import bf16_text

        return self.device.type == "cpu" and bf16_text.in_auto()

    def auto_engines(self) -> list[str]:
        """What backend ``auto`` loads and times here, named for a person, before use_backend runs: the wait is then
        said before it (a training run was silent for 23 s of 27 on 2 busy cores while it timed them)."""
        from sam_model.models import onnx_text

        on_cpu = self.device.type == "cpu"
        return [ENGINES[name] for name, ok in (("onnx", on_cpu and onnx_text.available()),
                                               ("bf16", self._auto_bf16()), ("torch", True)) if ok]

    def engine_verdict(self) -> str:
        """What use_backend chose, in words: the engine cheapest for a short call and for a long one, and what such a
        call was measured to cost on each engine loaded (under ``auto`` each call runs on the cheapest for its
        shape)."""
        if not self.costs:
            return ENGINES.get(self.backend, self.backend)
        long = self.pack_width if self.packed else self._longest()
        shown, best = [], []
        for rows, width in ((1, min(32, self._longest())), (4, min(128, long))):
            costs = sorted((cost.ms(rows, width), ENGINES.get(name, name)) for name, cost in self.costs.items())
            best += [costs[0][1]] if costs[0][1] not in best else []
            shown.append(f"{rows} row{'s' if rows > 1 else ''} of {width} tokens "
                         + ", ".join(f"{who} {ms:.0f} ms" for ms, who in costs))
        if len(self.costs) == 1:
            return f"{best[0]}, the only one loaded (a call of {'; '.join(shown)})"
        return (f"{' and '.join(best)} (measured per call: {'; '.join(shown)}; each call runs on the cheapest for its "
                "shape)")

    def _candidates(self) -> dict[str, object]:
        """What may run a call, by backend name: the runners loaded, and PyTorch (None) under auto or alone."""
        out: dict[str, object] = {self.runner.kind: self.runner} if self.runner is not None else {}
        if self.bf16 is not None:
            out["bf16"] = self.bf16
        if not out or self.auto:
            out["torch"] = None
        return out

    def _shapes(self) -> list[tuple[int, int]]:
        """The (rows, width) of the calls timed for the cost: call_cost.SHAPES, one text per row no longer than a
        text can be (max_length) unless rows are packed."""
        return list(SHAPES) if self.packed else [(r, min(w, self._longest())) for r, w in SHAPES]

    def _longest(self) -> int:
        return max(1, min(self.max_length, getattr(self.bert.config, "max_position_embeddings", self.max_length)))

    def _time_call(self, rows: int, width: int, runner) -> None:
        """One BERT call of ``rows`` rows of ``width`` tokens (what call_cost.measure times); a packed row is made
        of texts no longer than a text can be."""
        vocab, piece = self.bert.config.vocab_size, self._longest()
        sizes = [min(piece, width - s) for s in range(0, width, piece)] if self.packed else [min(width, piece)]
        ids = [[(7 * i + 1) % vocab for i in range(n)] for n in sizes] * rows  # the cost depends on the shape only
        k = len(sizes)
        ((inputs, _, _),) = self._calls(ids, plan=[[list(range(r * k, (r + 1) * k)) for r in range(rows)]])
        with torch.no_grad():
            runner(inputs) if runner is not None else self._run(inputs)
        device = self.device
        if device.type == "cuda":  # a GPU call returns before it has run: time it to its end
            torch.cuda.synchronize(device)

    @property
    def backend(self) -> str:
        """What runs BERT here: "torch", or the runners loaded besides it ("onnx", "bf16", "onnx+bf16", "int8")."""
        return "+".join(k for k in self._candidates() if k != "torch") or "torch"

    @property
    def device(self) -> torch.device:
        """Where the PyTorch BERT's weights are (a HF model's own ``.device`` says the same; one name for it here)."""
        return next(self.bert.parameters()).device

    @property
    def frozen(self) -> bool:
        return self.trainable_layers == 0

    def _freeze(self, trainable_layers: int) -> None:
        """-1: all layers train; 0: frozen; n: only the top n transformer layers train. Every weight is set either
        way: a BERT taken from a frozen network (a pretrained model adapted with ``trainable_layers: -1``,
        sam_model.models.adapt) comes with every weight frozen, and left as it was it trained nothing."""
        for p in self.bert.parameters():
            p.requires_grad_(trainable_layers < 0)
        if trainable_layers > 0:
            for layer in layer_stack(self.bert)[-trainable_layers:]:
                for p in layer.parameters():
                    p.requires_grad_(True)

    def _pad(self, ids: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
        """Token ids and attention mask (n, longest), padded on the tokenizer's side with its pad id."""
        width = max(len(x) for x in ids)
        out = np.full((len(ids), width), self.tokenizer.pad_token_id or 0, dtype=np.int64)
        mask = np.zeros((len(ids), width), dtype=np.int64)
        left = getattr(self.tokenizer, "padding_side", "right") == "left"
        for r, x in enumerate(ids):
            sl = slice(width - len(x), width) if left else slice(0, len(x))
            out[r, sl], mask[r, sl] = x, 1
        return out, mask

    def _runners(self) -> dict[str, object]:
        """What may run this call (_candidates): the runners only when no gradient is wanted and the weights are
        the ones they were made from (else PyTorch)."""
        if torch.is_grad_enabled() and not self.frozen:
            return {"torch": None}
        loaded = self.runner or self.bf16
        if loaded is not None and loaded.stale:  # trained in place since: back to PyTorch for good
            self.runner = self.bf16 = None
            self.auto = False
        if self.deferred is not None:  # defer_auto: loaded and timed now, unless the weights changed since
            if self.deferred.stale:
                self.deferred = None
            else:
                self.use_backend("auto", self.deferred.cache_dir)
        return self._candidates()

    def _plan(self, lengths: list[int], cost: CallCost, pack: bool = True) -> tuple[list[list[list[int]]], float]:
        """The cheapest cut of texts of token ``lengths`` into BERT calls under ``cost``: per call, its rows, each a
        list of text indices; and its cost in ms. The texts (one per row) batched by length (length_batches); for a
        packable BERT, texts packed into rows of ``pack_width`` tokens (pack_rows) where that is predicted to cost
        PACK_GAIN less (the cost model underrates attention over large packed batches; README, "CPU speed"), and
        only with ``pack``."""
        best: tuple[list[list[list[int]]], float] | None = None
        for width in ((0, self.pack_width) if pack and self.packed and self.pack_width else (0,)):  # 0: one per row
            rows = pack_rows(lengths, width)
            row_len = [sum(lengths[j] for j in row) for row in rows]
            calls = [[rows[r] for r in batch] for batch in length_batches(
                row_len, self.batch_size, cost.fixed_tokens, cost.attention)]
            ms = sum(cost.ms(len(c), max(sum(lengths[j] for j in row) for row in c)) for c in calls)
            if best is None or ms < PACK_GAIN * best[1]:
                best = (calls, ms)
        return best

    def _calls(self, ids: list[list[int]], plan: list[list[list[int]]]) -> list[tuple[dict[str, np.ndarray],
                                                                                   np.ndarray, list[int]]]:
        """The BERT calls of ``plan`` (_plan) over token ids ``ids``: per call, the graph's inputs, where each of its
        texts' vectors is in the flattened output, and those texts' indices."""
        pad = self.tokenizer.pad_token_id or 0
        out = []
        for rows in plan:
            which = [j for row in rows for j in row]
            if self.packed:
                inputs, flat = packed_inputs([[ids[j] for j in row] for row in rows], self.pooling, pad)
            else:
                tok, mask = self._pad([ids[j] for j in which])
                inputs, flat = {"input_ids": tok, "attention_mask": mask}, np.arange(len(which))
            out.append((inputs, flat, which))
        return out

    def _run(self, inputs: dict[str, np.ndarray]) -> torch.Tensor:
        """One BERT call on PyTorch: the pooled vectors, flattened to (vectors, hidden)."""
        device = self.device
        t = {k: torch.from_numpy(v).to(device) for k, v in inputs.items()}
        if self.packed and t["pool"].shape[1] == 1:  # one text per row: BERT's own padding mask, as unpacked
            hidden = self.bert(input_ids=t["input_ids"], attention_mask=(t["segments"] > 0).long()).last_hidden_state
            return (t["pool"].to(hidden.dtype) @ hidden).flatten(0, 1)
        if self.packed:
            return packed_forward(self.bert, **t).flatten(0, 1)
        return pool(self.bert(**t).last_hidden_state, t["attention_mask"], self.pooling)

    def _encode(self, texts: list[str]) -> torch.Tensor:
        """Pooled vectors of ``texts``: one tokenizer call, then the cheapest cut into BERT calls (_plan: packed rows
        or length batches), on ONNX Runtime or PyTorch (``auto``: whichever costs less for this cut)."""
        device = self.device
        if not texts:
            return torch.zeros(0, self.hidden_size, device=device)
        ids = self.tokenizer(list(texts), truncation=True, max_length=self.max_length)["input_ids"]
        lengths = [len(x) for x in ids]
        best = None
        for name, runner in self._runners().items():  # the cheapest cut on each backend that may run it
            plan, ms = self._plan(lengths, self.costs.get(name, DEFAULT), name in ("onnx", "int8") or PACK_ON_TORCH)
            if best is None or ms < best[2]:
                best = (runner, plan, ms)
        runner, plan, _ = best
        chunks, order = [], []
        for inputs, flat, which in self._calls(ids, plan):
            self.calls += 1
            out = torch.from_numpy(runner(inputs)).to(device).flatten(0, -2) if runner is not None else \
                self._run(inputs)
            chunks.append(out[torch.from_numpy(flat).to(device)])
            order += which
        inverse = torch.empty(len(order), dtype=torch.long, device=device)
        inverse[torch.tensor(order, device=device)] = torch.arange(len(order), device=device)
        return torch.cat(chunks)[inverse]

    def forward(self, texts: list[str]) -> torch.Tensor:
        if not self.use_cache:
            self.encoded += len(texts)
            if self.frozen:
                with torch.no_grad():
                    return self._encode(texts)
            return self._encode(texts)
        distinct = list(dict.fromkeys(texts))
        found = self._cache.lookup(distinct)  # this call's own: other threads may evict them meanwhile
        missing = [t for t in distinct if t not in found]
        if missing:
            self.encoded += len(missing)
            # frozen: dropout off, so cached vectors are deterministic; train() keeps it so and a caller may still
            # have set it. Checked, not set, each call: eval() walks 100+ modules (0.7 ms, a query's BERT is ~20)
            if self.bert.training:
                self.bert.eval()
            with torch.no_grad():
                new = list(zip(missing, self._encode(missing)))
            found.update(new)
            self._cache.update(new)
        return torch.stack([found[t] for t in texts]) if texts else self._encode([])

    def token_count(self) -> TokenCount:
        """This encoder's tokenizer and max_length as a :class:`TokenCount` (what token-sized chunks fit)."""
        return TokenCount(self.tokenizer, self.max_length)

    def clip(self, texts: list[str], tokens: int) -> list[str]:
        """Each text cut, as a string, to what its first ``tokens`` BERT tokens cover ([CLS] and [SEP] counted, as in
        max_length); a text that fits is returned as it is. Why a string and not a shorter tokenizer call: the cache is
        keyed by text, so a clipped text has its own vector, the same in training, export and search. The cut falls
        at a token's end, so the clipped text tokenizes to the original's first tokens (tested)."""
        keep = tokens - self.tokenizer.num_special_tokens_to_add(pair=False)
        if keep < 1:
            raise ValueError(f"a clip to {tokens} tokens keeps no text (the tokenizer adds "
                             f"{tokens - keep} special tokens); use at least {tokens - keep + 1}")
        long = [i for i, t in enumerate(texts) if len(t) > keep]  # a token covers at least one character
        if not long:
            return list(texts)
        if not getattr(self.tokenizer, "is_fast", False):
            raise ValueError("clipping texts to a token count needs a fast tokenizer (tokenizer.json in the BERT "
                             "folder); set state_max_length and observation_max_length to 0")
        offsets = self.tokenizer([texts[i] for i in long], add_special_tokens=False, truncation=True,
                                 max_length=keep + 1, return_offsets_mapping=True)["offset_mapping"]
        out = list(texts)
        for i, offs in zip(long, offsets):
            if len(offs) > keep:
                out[i] = texts[i][: offs[keep - 1][1]]
        return out

    @property
    def cache_entries(self) -> int | None:
        return self._cache.entries

    def limit_cache(self, entries: int | None) -> None:
        """Keep at most ``entries`` vectors in memory, the least recently used dropped first (0: cache nothing;
        None: keep all; why: :class:`TextCache`)."""
        self._cache.limit(entries)

    def uncached(self, texts: list[str]) -> list[str]:
        """The distinct texts among ``texts`` that BERT would have to encode (all of them without a cache)."""
        return list(dict.fromkeys(t for t in texts if not self.use_cache or t not in self._cache))

    def clear_cache(self) -> None:
        self._cache.clear()

    def prime(self, texts: list[str], vectors: torch.Tensor) -> None:
        """Put pooled vectors computed elsewhere (a shared cache, another process) in the cache, so that
        BERT never runs on these texts; only for a frozen, caching encoder, whose vectors never change."""
        if not self.use_cache:
            raise ValueError("this text encoder does not cache (it is trainable, or SAMConfig.cache_text is "
                             "false): priming it would be ignored")
        if vectors.ndim != 2 or len(texts) != vectors.shape[0]:
            raise ValueError(f"prime needs one vector per text: {len(texts)} texts, vectors of shape "
                             f"{tuple(vectors.shape)}")
        self._cache.update(zip(texts, vectors))

    def fingerprint(self) -> str:
        """Identifies the frozen BERT (its architecture, max length, a weight checksum) for an on-disk cache and
        for the check that a head-only export runs on the encoder it was trained on.

        Only the architecture fields of the config count (``FINGERPRINT_FIELDS``), never the whole config: its JSON
        carries ``transformers_version`` and whatever defaults a transformers release adds, so a fingerprint of it
        changed with every transformers upgrade, cooling every text cache and refusing the packaged model.
        """
        import hashlib

        config = self.bert.config.to_dict()
        h = hashlib.sha1(json.dumps({k: config.get(k) for k in FINGERPRINT_FIELDS}, sort_keys=True).encode())
        h.update(str(self.max_length).encode())
        if self.pooling != "mean":  # mean-pooled caches keep the key they always had
            h.update(self.pooling.encode())
        with torch.no_grad():
            for p in list(self.bert.parameters())[:4]:
                h.update(f"{p.double().sum().item():.6f}".encode())
        return h.hexdigest()[:16]

    @property
    def precision(self) -> str:
        """The numeric format this encoder computes vectors in, a part of its text cache's key (cache_file).

        Why: the fingerprint names the BERT, not how it is run, and training's frozen pass (backend ``auto``) runs
        bfloat16 on a CPU with bfloat16 units: without this a float32 reader of the same BERT and max_length read
        (and extended) a file of bfloat16 vectors. "int8" for the int8 graph; "bfloat16" where a bfloat16 copy may
        run calls (``bf16``, or ``auto`` with it loaded: the file may hold both kinds); else the weights' dtype
        ("float32": PyTorch, or ONNX Runtime's float graph, the same vectors to float rounding). Where PyTorch may
        run a float32 call and ``torch.set_float32_matmul_precision`` allows lower internal precision (TF32 on a
        GPU, bfloat16 passes on a CPU), "-matmul-high" or "-matmul-medium" is added.
        """
        if self.runner is not None and self.runner.kind == "int8":
            return "int8"
        dtype = next(self.bert.parameters()).dtype
        name = "bfloat16" if self.bf16 is not None else str(dtype).removeprefix("torch.")
        matmul = torch.get_float32_matmul_precision()
        if dtype == torch.float32 and "torch" in self._candidates() and matmul != "highest":
            name += f"-matmul-{matmul}"
        return name

    def cache_key(self) -> str:
        """What an on-disk text cache is keyed by, beside the precision: the fingerprint and a digest of every
        weight's bytes (~0.2 s for MiniLM). The fingerprint sums the first few weights only (the embeddings), which a
        BERT tuned in its top layers (trainable_layers n > 0) keeps: frozen again (a run started from it), it read
        the untuned BERT's cached vectors."""
        import hashlib

        h = hashlib.blake2b(self.fingerprint().encode(), digest_size=8)
        for name, t in self.bert.state_dict().items():
            h.update(name.encode())
            h.update(t.detach().reshape(-1).contiguous().view(torch.uint8).cpu().numpy())
        return h.hexdigest()

    def cache_file(self, folder: str | Path) -> Path:
        """This BERT's file in an on-disk text-vector cache folder: one file per :meth:`cache_key` (the exact
        weights, max_length, pooling) and precision; a float32 encoder's file has no precision in its name
        (``text-vectors-<key>.pt``), another precision's adds it (``text-vectors-<key>-bfloat16.pt``)."""
        tag = "" if self.precision == "float32" else f"-{self.precision}"
        return Path(folder).expanduser() / f"text-vectors-{self.cache_key()}{tag}.pt"

    def save_cache(self, path: str | Path, max_entries: int | None = None) -> None:
        """Write the cached vectors (float16) so a later run on the same texts skips BERT entirely.

        Vectors already in the file that this encoder does not hold are kept: training, evaluation and the
        Janus benchmarks share one cache, and none of them should drop what the others computed. The file
        holds at most ``max_entries`` vectors (default ``MAX_CACHE_ENTRIES``, ~0.8 GB for a 384-dim
        MiniLM): this run's texts first, then the file's others, newest first; the oldest fall out.
        """
        if not self._cache:
            return
        from sam_model.io import atomic_path, merge_lock

        cap = MAX_CACHE_ENTRIES if max_entries is None else max_entries
        texts = list(self._cache)[-cap:] if cap > 0 else []
        vectors = torch.stack([self._cache[t] for t in texts]).half().cpu() if texts else torch.zeros(0)
        with merge_lock(path):  # another run saving the same cache now would drop these, or these its
            old = self._read(path)
            room = cap - len(texts)
            if old is not None and room > 0:
                keep = [i for i, t in enumerate(old["texts"]) if t not in self._cache][:room]
                texts += [old["texts"][i] for i in keep]
                vectors = torch.cat([vectors, old["vectors"][keep].half()]) if keep else vectors
            if not texts:
                return
            with atomic_path(path) as tmp:
                torch.save({"fingerprint": self.cache_key(), "precision": self.precision, "texts": texts,
                            "vectors": vectors}, tmp)

    def _read(self, path: str | Path) -> dict | None:
        p = Path(path)
        if not p.exists():
            return None
        try:
            blob = torch.load(p, map_location="cpu", weights_only=True)
        except Exception:  # noqa: BLE001 - a broken cache is only a lost speed-up
            return None
        if not isinstance(blob, dict) or blob.get("fingerprint") != self.cache_key():
            return None
        if blob.get("precision", "float32") != self.precision:  # files from before the key had it: float32's name
            log.warning("%s: text vectors computed in %s, not %s as this encoder's; ignored, and replaced by the "
                        "next save", p, blob.get("precision", "float32"), self.precision)
            return None
        texts, vectors = blob.get("texts"), blob.get("vectors")
        width = getattr(getattr(self.bert, "config", None), "hidden_size", None)
        if not (isinstance(texts, list) and all(isinstance(t, str) for t in texts) and isinstance(vectors, torch.Tensor)
                and vectors.dim() == 2 and len(vectors) == len(texts) and (width is None or vectors.shape[1] == width)):
            log.warning("%s: a text cache of the wrong shape (texts %s, vectors %s); ignored, and replaced by the "
                        "next save", p, len(texts) if isinstance(texts, list) else type(texts).__name__,
                        tuple(vectors.shape) if isinstance(vectors, torch.Tensor) else type(vectors).__name__)
            return None
        return blob

    def load_cache(self, path: str | Path) -> int:
        """Load vectors saved by ``save_cache`` for this same BERT; returns how many were loaded."""
        blob = self._read(path) if self.use_cache else None
        if blob is None:
            return 0
        device = self.device
        vectors = blob["vectors"].float().to(device)
        self._cache.update(zip(blob["texts"], vectors))
        return len(blob["texts"])

    def train(self, mode: bool = True):
        super().train(mode)
        if self.frozen:
            self.bert.eval()
        return self


class TextEmbedder:
    """Untrained sentence embeddings (mean pooled, L2-normalised): the content-only baseline
    and the cheap encoder for caches, benchmarks and Janus task embeddings.

    A frozen :class:`TextEncoder` underneath, so it shares the package's one
    text-vector cache: with ``cache_dir`` (e.g. ``~/.cache/sam_model/text``) vectors computed once are read
    back by every later run (``save_cache`` writes them).
    """

    def __init__(self, path: str | None = None, device: str | None = None, max_length: int = 128,
                 cache_dir: str | os.PathLike | None = None):
        model, tokenizer = load_bert(path)
        self.device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
        self.encoder = TextEncoder(model.to(self.device).eval(), tokenizer, max_length, trainable_layers=0)
        self.model, self.tokenizer, self.max_length = self.encoder.bert, tokenizer, max_length
        self.dim = self.model.config.hidden_size
        self.cache_file = self.encoder.cache_file(cache_dir) if cache_dir else None
        if self.cache_file is not None:
            self.encoder.load_cache(self.cache_file)

    def save_cache(self) -> None:
        """Extend the on-disk cache with the vectors computed so far (nothing without ``cache_dir``)."""
        if self.cache_file is not None:
            self.encoder.save_cache(self.cache_file)

    @torch.no_grad()
    def encode(self, texts: list[str], batch_size: int = 64, progress: bool = False) -> np.ndarray:
        from sam_model.progress import progress_bar

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        chunk = max(batch_size, 1) * 16
        for i in progress_bar(range(0, len(texts), chunk), desc="embedding", disable=not progress, unit="chunk"):
            h = self.encoder(list(texts[i : i + chunk]))
            out[i : i + chunk] = torch.nn.functional.normalize(h, dim=-1).float().cpu().numpy()
        return out
