"""First-epoch encoding: frozen-BERT texts per second, before and after, on the same texts in one process.

    python -m sam_model.bench.encode [--config configs/tools.yaml] [--texts 3000] [--rounds 3] --out runs/encode

The texts are what a training run's frozen BERT reads (sam_model.training.datamodule.AgentLogDataModule.texts: the
memory texts, state texts and observations of its training and validation episodes), from ``--config``'s data
(default tools.yaml: SGD and the tau-bench airline train split); ``--texts`` of them, a seeded sample, in their
order of appearance. The ways to turn them into vectors, each once a round, ``--rounds`` rounds:

- **before**: what the first epoch did: per training batch (``--batch-episodes`` episodes' texts at a time, as
  the data loader gives them), the texts sorted by characters and cut into chunks of 256, each padded to its
  longest, on PyTorch (the code of TextEncoder._encode before this change, kept here as the reference);
- **length-batched, one text per row**, on PyTorch and on ONNX Runtime: every distinct text at once, one tokenizer
  call, batched by token length at the least padding cost (sam_model.models.text_encoder.length_batches);
- **packed rows**, on each: several texts per row where that costs less (sam_model.models.packing), the cut chosen
  by the call cost measured at load (sam_model.models.call_cost);
- **length-batched, bfloat16** (only on a CPU with bfloat16 units; sam_model.models.bf16_text): PyTorch with a
  bfloat16 copy of BERT, vectors ~0.99996 cosine to the float32 ones;
- **auto**: each call where it costs less (bfloat16 among them where loaded): what training's frozen pass does now.

Every method starts from an empty cache (nothing is read from or written to ~/.cache/sam_model/text).

**How far from this CPU's limit** (the roofline columns): BERT's work is matrix products, so each method's useful
GFLOP/s (the FLOPs of the texts' real tokens, :func:`bert_flops`, over its seconds) is set beside the rate this
CPU reaches on BERT's largest product alone (:func:`matmul_rate`: the feed-forward pair, 4,096 rows, the same
threads, ONNX Runtime where installed, else PyTorch). "before" also computed its padding (its computed GFLOP are
printed); no method can beat ``before_s · rate / useful``, the ceiling, without doing less arithmetic
(fewer tokens, int8, bfloat16), which changes the vectors. Where bfloat16 is loaded, the rate of the same
products in bfloat16 (PyTorch) is printed beside it, and the bfloat16 rows' share is of that rate.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path

import numpy as np
import torch

from sam_model.cpus import cores
from sam_model.io import RawDefaultsHelp, atomic_write_text
from sam_model.janus.stats import t_interval
from sam_model.models import bf16_text, onnx_text
from sam_model.models.bert import load_bert, pool
from sam_model.models.text_encoder import TextEncoder

CHUNK = 256  # the old TextEncoder batch size


def legacy_calls(texts: list[str]) -> list[list[int]]:
    """The indices of ``texts`` in each call :func:`legacy_encode` makes: sorted by characters, 256 a call."""
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    return [order[i : i + CHUNK] for i in range(0, len(order), CHUNK)]


def legacy_encode(bert, tokenizer, texts: list[str], max_length: int) -> torch.Tensor:
    """The first epoch's encoder before this change: sorted by characters, chunks of 256, HF padding, PyTorch."""
    calls = legacy_calls(texts)
    order = [j for call in calls for j in call]
    chunks = []
    for call in calls:
        batch = [texts[j] for j in call]
        tok = tokenizer(batch, padding=True, truncation=True, max_length=max_length, return_tensors="pt")
        out = bert(input_ids=tok["input_ids"], attention_mask=tok["attention_mask"])
        chunks.append(pool(out.last_hidden_state, tok["attention_mask"], "mean"))
    pooled = torch.cat(chunks)
    inverse = torch.empty(len(order), dtype=torch.long)
    inverse[torch.tensor(order)] = torch.arange(len(order))
    return pooled[inverse]


def bert_flops(config, lengths: list[int], attention: bool = True) -> float:
    """FLOPs of one BERT pass over texts of ``lengths`` tokens, each in its own row (no padding).

    Per layer and text of n tokens: the Q, K, V and output projections and the feed-forward pair,
    2·n·(4·d² + 2·d·f), plus, with ``attention``, the scores QKᵀ and their mix with V, 2·2·n²·d (d: hidden
    size, f: intermediate size). Embeddings, layer norms, softmax and GELU are left out: they are O(n·d), a few
    percent. A padded batch of rows × width costs ``bert_flops(config, [width] * rows)``.
    """
    d, f, layers = config.hidden_size, config.intermediate_size, config.num_hidden_layers
    return float(layers * sum(2 * n * (4 * d * d + 2 * d * f) + (4 * n * n * d if attention else 0)
                              for n in lengths))


def matmul_rate(config, threads: int, rows: int = 4096, repeats: int = 10,
                dtype: torch.dtype = torch.float32) -> tuple[float, str]:
    """GFLOP/s of BERT's feed-forward pair (rows × d) @ (d × f) @ (f × d) on random floats, and the library:
    the most a BERT pass made of such products can reach here (float32 on ONNX Runtime where installed, else on
    PyTorch; another ``dtype`` on PyTorch)."""
    d, f = config.hidden_size, config.intermediate_size
    rng = np.random.default_rng(0)
    x = rng.standard_normal((rows, d), dtype=np.float32)
    w1, w2 = rng.standard_normal((d, f), dtype=np.float32), rng.standard_normal((f, d), dtype=np.float32)
    if onnx_text.available() and dtype == torch.float32:
        import onnxruntime as ort
        from onnx import TensorProto, helper, numpy_helper

        graph = helper.make_graph(
            [helper.make_node("MatMul", ["x", "w1"], ["h"]), helper.make_node("MatMul", ["h", "w2"], ["y"])], "ffn",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, d])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, d])],
            [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(w2, "w2")])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", onnx_text.OPSET)])
        model.ir_version = 8
        opts = ort.SessionOptions()
        opts.intra_op_num_threads, opts.inter_op_num_threads = threads, 1
        session = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
        run, lib = (lambda: session.run(None, {"x": x})), "ONNX Runtime"
    else:
        tx, t1, t2 = (torch.from_numpy(a).to(dtype) for a in (x, w1, w2))
        run, lib = (lambda: (tx @ t1) @ t2), "PyTorch"
    for _ in range(3):
        run()
    best = min(timed(run) for _ in range(repeats))
    return 2 * 2 * rows * d * f / best / 1e9, lib


def training_texts(configs: list[str], n: int, seed: int) -> tuple[list[list[str]], int]:
    """The texts of the configs' data, grouped as the first epoch met them (per batch of episodes, new texts only),
    sampled down to about ``n``; and the count of all distinct texts."""
    import yaml

    from sam_model.cli_config import resolve_config
    from sam_model.training.datamodule import AgentLogDataModule

    data: dict = {}
    net: dict = {}
    for c in configs:  # stacked configs: the later one's data (and model.net) fields win
        cfg = yaml.safe_load(Path(resolve_config(c)).read_text()) or {}
        data.update(cfg.get("data") or {})
        net.update((cfg.get("model") or {}).get("net") or {})
    dm = AgentLogDataModule(**data)
    if dm.chunking is not None and dm.chunking.tokens is not None:  # as SAMLightningModule.setup gives it
        from sam_model.models.bert import default_bert_path, load_tokenizer
        from sam_model.models.sam import SAMConfig
        from sam_model.models.text_encoder import TokenCount

        dm.count_tokens = TokenCount(load_tokenizer(net.get("bert_path") or default_bert_path()),
                                     int(net.get("max_length", SAMConfig.max_length)))
    every = dm.texts()
    keep = set(random.Random(seed).sample(every, min(n, len(every))))
    dm.setup("fit")
    seen: set[str] = set()
    batches = []
    for batch in dm.train_dataloader():
        texts = [t for t in batch["mem_texts"] + batch["q_state_texts"] + batch["q_obs"] if t in keep and t not in seen]
        seen.update(texts)
        if texts:
            batches.append(list(dict.fromkeys(texts)))
    return batches, len(every)


def token_lengths(tokenizer, texts: list[str], max_length: int) -> list[int]:
    """Tokens BERT reads of each text ([CLS] and [SEP] included, cut at ``max_length``)."""
    return [len(ids) for ids in tokenizer(texts, truncation=True, max_length=max_length)["input_ids"]]


def legacy_rows(tokenizer, texts: list[str], max_length: int) -> list[list[int]]:
    """The token lengths of each padded call :func:`legacy_encode` makes (sorted by characters, 256 a call)."""
    return [token_lengths(tokenizer, [texts[j] for j in call], max_length) for call in legacy_calls(texts)]


def mean_t95(xs: np.ndarray) -> tuple[float, float]:
    """Mean and half-width of its 95 % t-interval (the rounds are few, so not the normal 1.96)."""
    mean, _, high = t_interval(xs)
    return mean, high - mean


def timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(prog="python -m sam_model.bench.encode", description=__doc__,
                                 formatter_class=RawDefaultsHelp)
    ap.add_argument("--config", action="append", default=None,
                    help="training config(s) whose data gives the texts (repeat to stack; default configs/tools.yaml)")
    ap.add_argument("--texts", type=int, default=3000, help="texts to encode (a seeded sample of the distinct ones)")
    ap.add_argument("--max-length", type=int, default=64, help="BERT max tokens per text (tools.yaml: 64)")
    ap.add_argument("--threads", type=int, default=cores(),
                    help="torch and ONNX Runtime threads (default: the CPUs this process may use)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the sample")
    ap.add_argument("--rounds", type=int, default=3,
                    help="times every method runs, interleaved (at least 2; the intervals are over them)")
    ap.add_argument("--out", type=Path, required=True, help="folder for encode.json and encode.md")
    args = ap.parse_args(argv)
    if args.texts < 1 or args.threads < 1:
        ap.error("--texts and --threads must be >= 1")
    if args.rounds < 2:
        ap.error(f"--rounds must be at least 2 (an interval needs two), got {args.rounds}")
    torch.set_num_threads(args.threads)
    batches, n_all = training_texts(args.config or ["configs/tools.yaml"], args.texts, args.seed)
    texts = [t for b in batches for t in b]
    bert, tok = load_bert()
    bert.eval()
    enc = TextEncoder(bert, tok, args.max_length, trainable_layers=0, cache=False)
    names = {"torch": "PyTorch", "onnx": "ONNX Runtime", "bf16": "PyTorch bfloat16"}
    bf16 = bf16_text.in_auto()
    width = enc.pack_width
    methods = [("before: per batch, 256 by characters, PyTorch", "torch", 0,
                lambda: [legacy_encode(bert, tok, b, args.max_length) for b in batches])]
    for backend in ("torch", "onnx") if onnx_text.available() else ("torch",):
        methods += [(f"length-batched, one text per row, {names[backend]}", backend, 0, None),  # width 0: one per row
                    (f"packed rows, measured cut, {names[backend]}", backend, width, None)]
    if bf16:
        methods.append((f"length-batched, one text per row, {names['bf16']}", "bf16", 0, None))
    if onnx_text.available() or bf16:
        methods.append(("auto: each call where it costs less (now)", "auto", width, None))
    seconds: dict[str, list[float]] = {m[0]: [] for m in methods}
    rates, rates16 = [], []
    with torch.inference_mode():
        for r in range(args.rounds):  # every method once a round, so a slower spell of the machine hits them all
            for name, backend, w, run in methods:
                enc.use_backend(backend)
                enc.pack_width = w
                seconds[name].append(timed(run or (lambda: enc(texts))))
            rate, lib = matmul_rate(bert.config, args.threads)
            rates.append(rate)
            if bf16:
                rates16.append(matmul_rate(bert.config, args.threads, dtype=torch.bfloat16)[0])
            print(f"round {r + 1}/{args.rounds}: " + ", ".join(f"{v[-1]:.1f} s" for v in seconds.values())
                  + f"; matmul {rate:.0f} GFLOP/s" + (f", bfloat16 {rates16[-1]:.0f}" if bf16 else ""),
                  file=sys.stderr, flush=True)
        ref = legacy_encode(bert, tok, texts[:200], args.max_length)
        now = enc(texts[:200])  # auto's, the last method run
        err = float((now - ref).abs().max())
        cos = float(torch.nn.functional.cosine_similarity(now, ref).min())
    rate = max(rates)  # what this CPU can do: its best spell
    rate16 = max(rates16) if rates16 else rate
    useful = bert_flops(bert.config, token_lengths(tok, texts, args.max_length))
    padded = sum(bert_flops(bert.config, [max(ls)] * len(ls)) for b in batches
                 for ls in legacy_rows(tok, b, args.max_length))
    before = np.asarray(next(iter(seconds.values())))
    rows = []
    on16 = {m[0] for m in methods if m[1] == "bf16" or m[1] == "auto" and bf16}  # bfloat16 runs (some of) their calls
    for name, secs in seconds.items():
        mid = float(np.median(secs))
        gain, half = mean_t95(before / np.asarray(secs))  # paired: each round's before over its own time
        rows.append({"method": name, "seconds": secs, "median_s": mid, "texts_per_s": len(texts) / mid,
                     "vs_before": gain, "vs_before_ci95": half, "useful_gflop_s": useful / mid / 1e9,
                     "of_rate": useful / mid / 1e9 / (rate16 if name in on16 else rate)})
    ceiling, ceiling_half = mean_t95(before * rate * 1e9 / useful)
    lines = [f"Frozen-BERT encoding of {len(texts)} distinct training texts (a sample of {n_all}; "
             f"{len(batches)} training batches), max_length {args.max_length}, {args.threads} threads, "
             f"{os.cpu_count()} cores, {args.rounds} rounds (median seconds; vs before: the mean of the rounds' "
             f"ratios, 95 % interval); auto against before over 200 vectors: largest |difference| {err:.1e}, lowest "
             f"cosine {cos:.6f}.", "",
             "| method | s | texts/s | vs before | useful GFLOP/s | of the matmul rate |", "|---|---|---|---|---|---|"]
    lines += [f"| {r['method']} | {r['median_s']:.1f} | {r['texts_per_s']:.0f} | {r['vs_before']:.2f}× "
              f"± {r['vs_before_ci95']:.2f} | {r['useful_gflop_s']:.0f} | {r['of_rate']:.0%} |"
              for r in rows]
    lines += ["", f"Useful work {useful / 1e9:.0f} GFLOP (real tokens only); before computed {padded / 1e9:.0f} "
              f"GFLOP with its padding. This CPU's matmul rate ({lib}, BERT's feed-forward pair, the best of the "
              f"rounds: {', '.join(f'{x:.0f}' for x in rates)}): {rate:.0f} GFLOP/s. Ceiling for any method that "
              f"computes the same float32 vectors (useful work at that rate): {ceiling:.2f}× ± {ceiling_half:.2f} "
              "before."]
    if bf16:
        lines += ["", f"bfloat16 (this CPU has the units): the same products in bfloat16 on PyTorch ran at "
                  f"{', '.join(f'{x:.0f}' for x in rates16)} GFLOP/s (best {rate16:.0f}); the share of the rows that "
                  "run bfloat16 (auto among them) is of that rate."]
    else:
        lines += ["", "This CPU has no bfloat16 units (or $SAM_TEXT_BF16=0): bfloat16 is left out."]
    md = "\n".join(lines) + "\n"
    args.out.mkdir(parents=True, exist_ok=True)
    result = {"texts": len(texts), "distinct_texts": n_all, "batches": len(batches), "max_abs_diff": err,
              "rows": rows, "useful_gflop": useful / 1e9, "before_computed_gflop": padded / 1e9,
              "matmul_gflop_s": rates, "matmul_library": lib, "bf16_matmul_gflop_s": rates16, "min_cosine": cos,
              "ceiling_vs_before": ceiling,
              "config": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()}}
    atomic_write_text(args.out / "encode.json", json.dumps(result, indent=2))
    atomic_write_text(args.out / "encode.md", md)
    print(md)
    return result


if __name__ == "__main__":
    main()
