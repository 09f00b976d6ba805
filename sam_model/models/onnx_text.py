"""The text encoder's BERT as an ONNX Runtime graph: the same pooled vectors, without PyTorch's per-operator cost.

A query costs its BERT pass (the state text and the observation, packed into one row: sam_model.models.packing)
and little else (the profile in the README), so the CPU speed of SAM is the speed of its BERT. ONNX Runtime runs
MiniLM's fixed graph without PyTorch's per-operator dispatch; the graph is exported from the network's own weights
(``torch.onnx``, made once at load and cached on disk) and computes what :class:`TextEncoder` computes on
PyTorch (packed rows where the BERT allows them, else ``pool(BERT(ids, mask))``), so vectors agree to float
rounding (about 1e-6) and rankings do not change (README, "CPU speed").

An ONNX graph is data (operators and weights; no Python is run from it), and nothing from the cache is trusted:

- the cache file's name is a SHA-256 over the BERT's config, *every* weight, the pooling and the opset, so a
  graph is only ever used for the weights it was made from;
- at load, one probe batch goes through both PyTorch and the graph; a graph whose vectors differ by more than
  ``TOLERANCE`` is made again, and if it still differs the encoder stays on PyTorch (with a warning);
- :class:`OnnxText` remembers the weights' version counters; if anyone changes the weights in place (training),
  it says so (``stale``) and the text encoder goes back to PyTorch.

``backend``: ``torch`` (PyTorch), ``onnx`` (ONNX Runtime, float32; an error when onnxruntime is absent), ``bf16``
(PyTorch in bfloat16, sam_model.models.bf16_text), ``int8`` (ONNX Runtime over the graph's int8 version,
:func:`int8_graph`; asked for by name only, since rankings change) or ``auto`` (the default: on a CPU, PyTorch,
ONNX Runtime where onnxruntime is installed and bfloat16 where the CPU has bfloat16 units are loaded, and each
call runs on the one whose measured cost is lower for its shape, sam_model.models.call_cost; on a GPU, PyTorch).
onnxruntime and onnx come with the ``[onnx]`` extra (``pip install 'sam_model[onnx]'``); the core install works
without them.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import warnings
from pathlib import Path

import numpy as np
import torch
from torch import nn

from sam_model.models.bert import pool
from sam_model.models.packing import Packed, packed_inputs
from sam_model.models.runner import FrozenRunner

BACKENDS = ("auto", "torch", "onnx", "bf16", "int8")  # bf16: sam_model.models.bf16_text; int8: int8_graph
OPSET = 17
TOLERANCE = 1e-3  # largest |torch - onnx| allowed on the probe's pooled vectors (float32 rounding is ~1e-6)
INT8_COSINE = 0.95  # lowest cosine to PyTorch's vectors allowed on the probe for the int8 graph (MiniLM: ~0.98-0.99)
PROBE = ["the user changed the budget to 3500 dollars, ok go ahead", "phase: book. needs: date"]
SPIN = False  # let ONNX Runtime's idle threads busy-wait (see OnnxText)
BACKEND_ENV = "SAM_TEXT_BACKEND"  # overrides the default backend ("auto") of every loader


def available() -> bool:
    """Whether ONNX Runtime (and onnx, to make the graph) are installed: the ``[onnx]`` extra."""
    return all(importlib.util.find_spec(m) is not None for m in ("onnxruntime", "onnx"))


def check_backend(backend: str | None) -> str:
    """The backend asked for (None: $SAM_TEXT_BACKEND, else ``auto``), checked."""
    b = backend or os.environ.get(BACKEND_ENV) or "auto"
    if b not in BACKENDS:
        raise ValueError(f"text backend must be one of {BACKENDS}, got {b!r} (argument backend or ${BACKEND_ENV})")
    if b in ("onnx", "int8") and not available():
        raise ValueError(f"text backend {b!r} needs onnxruntime and onnx: pip install 'sam_model[onnx]' (or use "
                         "backend 'auto', which falls back to PyTorch)")
    return b


def default_cache_dir() -> Path:
    """~/.cache/sam_model/onnx (or $SAM_CACHE_DIR/onnx): where the graphs made at load are kept."""
    from sam_model.data.sources import default_cache_dir as base

    return base() / "onnx"


class _Pooled(nn.Module):
    """What the graph computes: the pooled vector of each text, ``pool(BERT(ids, mask))``."""

    def __init__(self, bert: nn.Module, pooling: str):
        super().__init__()
        self.bert, self.pooling = bert, pooling

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        return pool(self.bert(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state, attention_mask,
                    self.pooling)


def graph_module(bert: nn.Module, pooling: str, packed: bool) -> nn.Module:
    """What the graph computes: packed rows of texts (sam_model.models.packing.Packed) where the BERT allows it,
    else one text per row (_Pooled)."""
    return (Packed(bert) if packed else _Pooled(bert, pooling)).eval()


def example_inputs(ids: list[list[int]], pooling: str, packed: bool, pad_id: int = 0) -> dict[str, np.ndarray]:
    """Inputs of the graph for token ids ``ids``: packed, the first two texts share a row and the rest have rows of
    their own (several texts per row, and padding); else one padded text per row."""
    if packed:
        return packed_inputs([ids[:2]] + [[x] for x in ids[2:]], pooling, pad_id)[0]
    width = max(len(x) for x in ids)
    tok = np.full((len(ids), width), pad_id, np.int64)
    mask = np.zeros((len(ids), width), np.int64)
    for r, x in enumerate(ids):
        tok[r, : len(x)], mask[r, : len(x)] = x, 1
    return {"input_ids": tok, "attention_mask": mask}


def weights_digest(bert: nn.Module, pooling: str, packed: bool = False) -> str:
    """SHA-256 over the config, every weight (in state_dict order), the pooling, the opset and the graph's kind."""
    h = hashlib.sha256(bert.config.to_json_string().encode())
    h.update(json.dumps([pooling, OPSET] + (["packed"] if packed else [])).encode())
    for name, t in bert.state_dict().items():
        h.update(name.encode())
        h.update(t.detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()


def export_graph(bert: nn.Module, pooling: str, path: Path, packed: bool = False) -> None:
    """Write the graph (graph_module) with dynamic batch, length (and texts per row), atomically."""
    from sam_model.io import atomic_path

    model = graph_module(bert, pooling, packed)
    inputs = example_inputs([[1, 5, 6, 2], [1, 7, 2], [1, 5, 6, 7, 8, 2]], pooling, packed)
    rows = {0: "batch", 1: "tokens"}
    axes = {k: ({0: "batch", 1: "texts", 2: "tokens"} if k == "pool" else rows) for k in inputs}
    axes["pooled"] = {0: "batch", 1: "texts"} if packed else {0: "batch"}
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as tmp, warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")  # the TorchScript exporter's deprecation and tracer notes
        torch.onnx.export(model, tuple(torch.from_numpy(v) for v in inputs.values()), str(tmp),
                          input_names=list(inputs), output_names=["pooled"], dynamic_axes=axes, opset_version=OPSET,
                          dynamo=False)


class OnnxText(FrozenRunner):
    """An ONNX Runtime session computing the pooled vectors of one BERT (see the module doc); ``stale`` once the
    BERT's weights changed in place, and never copied with the network (sam_model.models.runner)."""

    def __init__(self, bert: nn.Module, pooling: str, path: Path, threads: int | None = None, kind: str = "onnx"):
        import onnxruntime as ort

        super().__init__(bert)
        self.kind = kind  # "onnx" (float32) or "int8" (int8_graph): the backend name it runs under
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads or torch.get_num_threads()
        opts.inter_op_num_threads = 1
        opts.log_severity_level = 3
        # ONNX Runtime's threads spin (busy-wait) after a run by default; on a few cores that spinning takes the
        # cores the heads, FAISS and the next request need (README, "CPU speed": ~20 ms a query on 2 cores)
        opts.add_session_config_entry("session.intra_op.allow_spinning", "1" if SPIN else "0")
        self.session = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
        self.path = path

    def __call__(self, inputs: dict[str, np.ndarray]) -> np.ndarray:
        """Pooled vectors float32 ((rows, texts per row, hidden) packed, else (rows, hidden)) of the graph's inputs
        (example_inputs, sam_model.models.packing.packed_inputs)."""
        return self.session.run(None, inputs)[0]


def probe(runner: OnnxText, bert: nn.Module, tokenizer, pooling: str, max_length: int,
          packed: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """The probe texts' pooled vectors from the graph and from PyTorch, (vectors, hidden) each."""
    ids = tokenizer(PROBE, truncation=True, max_length=max_length)["input_ids"]
    inputs = example_inputs(ids + ids[1:], pooling, packed, tokenizer.pad_token_id or 0)
    with torch.no_grad():
        ref = graph_module(bert, pooling, packed)(**{k: torch.from_numpy(v) for k, v in inputs.items()})
    got, want = runner(inputs), ref.float().numpy()  # packed: (rows, texts per row, hidden)
    return got.reshape(-1, got.shape[-1]), want.reshape(-1, want.shape[-1])


def probe_error(runner: OnnxText, bert: nn.Module, tokenizer, pooling: str, max_length: int,
                packed: bool = False) -> float:
    """Largest |torch - onnx| over the pooled vectors of the probe texts."""
    got, ref = probe(runner, bert, tokenizer, pooling, max_length, packed)
    return float(np.abs(got - ref).max())


def probe_cosine(runner: OnnxText, bert: nn.Module, tokenizer, pooling: str, max_length: int,
                 packed: bool = False) -> float:
    """Lowest cosine between the graph's and PyTorch's pooled vectors of the probe texts (padding slots, all
    zero in both, count as 1)."""
    got, ref = probe(runner, bert, tokenizer, pooling, max_length, packed)
    norms = np.linalg.norm(got, axis=1) * np.linalg.norm(ref, axis=1)
    cos = np.where(norms > 0, (got * ref).sum(1) / np.maximum(norms, 1e-12), 1.0)
    return float(cos.min())


def int8_graph(path: Path) -> Path:
    """The int8 version of the float graph at ``path``, made once beside it (``...-int8.onnx``), atomically.

    ONNX Runtime's dynamic quantisation: every weight matrix int8 with a scale per output channel, activations
    quantised per call; the products run on the CPU's integer dot-product units (VNNI where present), in one native
    call like the float graph. Per-channel scales matter: per-tensor ones gave vectors 0.95 cosine to the float
    ones on MiniLM, per-channel 0.993 (0.98 at worst). Rankings change (README, "CPU speed"), so ``auto`` never
    chooses it: backend ``int8`` is asked for by name, for throughput where that matters more (a saturated
    service)."""
    import logging

    from sam_model.io import atomic_path

    out = path.with_name(path.stem + "-int8.onnx")
    if out.is_file():
        return out
    from onnxruntime.quantization import QuantType, quantize_dynamic

    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)  # the quantiser's advice to pre-process the graph, logged on the root logger
    try:
        with atomic_path(out) as tmp:
            quantize_dynamic(str(path), str(tmp), weight_type=QuantType.QInt8, per_channel=True)
    finally:
        root.setLevel(level)
    return out


def onnx_text(bert: nn.Module, tokenizer, pooling: str, max_length: int,
              cache_dir: str | os.PathLike | None = None, packed: bool = False,
              int8: bool = False) -> OnnxText | None:
    """An :class:`OnnxText` for ``bert`` (from the cache, else exported into it), checked on the probe; None (with a
    warning) when the graph cannot be made or disagrees with PyTorch. ``packed``: the graph of packed rows
    (sam_model.models.packing), for a BERT that allows them. ``int8``: its int8 version (int8_graph), checked by
    cosine (INT8_COSINE); where that fails, the float graph (with a warning)."""
    digest = weights_digest(bert, pooling, packed)[:32]
    path = Path(cache_dir or default_cache_dir()).expanduser() / f"text-{digest}.onnx"
    why = ""
    for attempt in range(2):
        try:
            if attempt or not path.is_file():
                export_graph(bert, pooling, path, packed)
            runner = OnnxText(bert, pooling, path)
            err = probe_error(runner, bert, tokenizer, pooling, max_length, packed)
        except Exception as exc:  # noqa: BLE001 - a broken cache file or an exporter failure: remake once, else torch
            why = f"{type(exc).__name__}: {str(exc).strip()[:160]}"
            continue
        if err <= TOLERANCE:
            return _int8(runner, bert, tokenizer, pooling, max_length, packed) if int8 else runner
        why = f"its vectors differ from PyTorch's by {err:.2g} (> {TOLERANCE})"
    warnings.warn(f"ONNX text encoder {path} not used ({why}); the text encoder runs on PyTorch", stacklevel=2)
    return None


def _int8(runner: OnnxText, bert: nn.Module, tokenizer, pooling: str, max_length: int, packed: bool) -> OnnxText:
    """The int8 runner of float ``runner``'s graph where it can be made and passes the probe, else ``runner``."""
    try:
        q = OnnxText(bert, pooling, int8_graph(runner.path), kind="int8")
        cos = probe_cosine(q, bert, tokenizer, pooling, max_length, packed)
    except Exception as exc:  # noqa: BLE001 - the quantiser's many failure kinds: keep the float graph
        why = f"{type(exc).__name__}: {str(exc).strip()[:160]}"
    else:
        if cos >= INT8_COSINE:
            return q
        why = f"its vectors are {cos:.3f} cosine to PyTorch's (< {INT8_COSINE})"
    warnings.warn(f"int8 text encoder for {runner.path} not used ({why}); the float ONNX graph runs", stacklevel=3)
    return runner
