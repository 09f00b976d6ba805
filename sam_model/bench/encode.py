"""First-epoch encoding: frozen-BERT texts per second, before and after, on the same texts in one process.

    python -m sam_model.bench.encode [--config configs/tools.yaml] [--texts 3000] [--out runs/encode]

The texts are what a training run's frozen BERT reads (sam_model.training.datamodule.AgentLogDataModule.texts: the
memory texts, state texts and observations of its training and validation episodes), from ``--config``'s data
(default tools.yaml: SGD and the tau-bench airline train split); ``--texts`` of them, a seeded sample, in their
order of appearance. The ways to turn them into vectors, back to back:

- **before**: what the first epoch did: per training batch (``--batch-episodes`` episodes' texts at a time, as
  the data loader gives them), the texts sorted by characters and cut into chunks of 256, each padded to its
  longest, on PyTorch (the code of TextEncoder._encode before this change, kept here as the reference);
- **length-batched, one text per row**, on PyTorch and on ONNX Runtime: every distinct text at once, one tokenizer
  call, batched by token length at the least padding cost (sam_model.models.text_encoder.length_batches);
- **packed rows**, on each: several texts per row where that costs less (sam_model.models.packing), the cut chosen
  by the call cost measured at load (sam_model.models.call_cost);
- **auto**: each call where it costs less: what training's frozen pass does now.

Every method starts from an empty cache (nothing is read from or written to ~/.cache/sam_model/text).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import time
from pathlib import Path

import torch

from sam_model.models import onnx_text
from sam_model.models.bert import load_bert, pool
from sam_model.models.text_encoder import TextEncoder

CHUNK = 256  # the old TextEncoder batch size


def legacy_encode(bert, tokenizer, texts: list[str], max_length: int) -> torch.Tensor:
    """The first epoch's encoder before this change: sorted by characters, chunks of 256, HF padding, PyTorch."""
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    chunks = []
    for i in range(0, len(texts), CHUNK):
        batch = [texts[j] for j in order[i : i + CHUNK]]
        tok = tokenizer(batch, padding=True, truncation=True, max_length=max_length, return_tensors="pt")
        out = bert(input_ids=tok["input_ids"], attention_mask=tok["attention_mask"])
        chunks.append(pool(out.last_hidden_state, tok["attention_mask"], "mean"))
    pooled = torch.cat(chunks)
    inverse = torch.empty(len(order), dtype=torch.long)
    inverse[torch.tensor(order)] = torch.arange(len(order))
    return pooled[inverse]


def training_texts(configs: list[str], n: int, seed: int) -> tuple[list[list[str]], int]:
    """The texts of the configs' data, grouped as the first epoch met them (per batch of episodes, new texts only),
    sampled down to about ``n``; and the count of all distinct texts."""
    import yaml

    from sam_model.cli_config import resolve_config
    from sam_model.training.datamodule import AgentLogDataModule

    data: dict = {}
    for c in configs:  # stacked configs: the later one's data fields win
        data.update((yaml.safe_load(Path(resolve_config(c)).read_text()) or {}).get("data") or {})
    dm = AgentLogDataModule(**data)
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


def timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(prog="python -m sam_model.bench.encode", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", action="append", default=None,
                    help="training config(s) whose data gives the texts (repeat to stack; default configs/tools.yaml)")
    ap.add_argument("--texts", type=int, default=3000, help="texts to encode (a seeded sample of the distinct ones)")
    ap.add_argument("--max-length", type=int, default=64, help="BERT max tokens per text (tools.yaml: 64)")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="torch and ONNX Runtime threads")
    ap.add_argument("--seed", type=int, default=0, help="seed of the sample")
    ap.add_argument("--out", type=Path, required=True, help="folder for encode.json and encode.md")
    args = ap.parse_args(argv)
    if args.texts < 1 or args.threads < 1:
        ap.error("--texts and --threads must be >= 1")
    torch.set_num_threads(args.threads)
    batches, n_all = training_texts(args.config or ["configs/tools.yaml"], args.texts, args.seed)
    texts = [t for b in batches for t in b]
    bert, tok = load_bert()
    bert.eval()
    enc = TextEncoder(bert, tok, args.max_length, trainable_layers=0, cache=False)
    seconds = {}
    with torch.inference_mode():
        seconds["before: per batch, 256 by characters, PyTorch"] = timed(
            lambda: [legacy_encode(bert, tok, b, args.max_length) for b in batches])
        width = enc.pack_width
        names = {"torch": "PyTorch", "onnx": "ONNX Runtime"}
        for backend in ("torch", "onnx") if onnx_text.available() else ("torch",):
            enc.use_backend(backend)
            enc.pack_width = 0  # width 0: one text per row
            seconds[f"length-batched, one text per row, {names[backend]}"] = timed(lambda: enc(texts))
            enc.pack_width = width
            seconds[f"packed rows, measured cut, {names[backend]}"] = timed(lambda: enc(texts))
        if enc.use_backend("auto") == "onnx":
            seconds["auto: packed rows, each call where it costs less (now)"] = timed(lambda: enc(texts))
        ref = legacy_encode(bert, tok, texts[:200], args.max_length)
        err = float((enc(texts[:200]) - ref).abs().max())
    rows = [{"method": k, "seconds": s, "texts_per_s": len(texts) / s} for k, s in seconds.items()]
    base = rows[0]["texts_per_s"]
    lines = [f"Frozen-BERT encoding of {len(texts)} distinct training texts (a sample of {n_all}; "
             f"{len(batches)} training batches), max_length {args.max_length}, {args.threads} threads, "
             f"{os.cpu_count()} cores; largest |now - before| over 200 vectors: {err:.1e}.", "",
             "| method | s | texts/s | vs before |", "|---|---|---|---|"]
    lines += [f"| {r['method']} | {r['seconds']:.1f} | {r['texts_per_s']:.0f} | {r['texts_per_s'] / base:.2f}× |"
              for r in rows]
    md = "\n".join(lines) + "\n"
    args.out.mkdir(parents=True, exist_ok=True)
    result = {"texts": len(texts), "distinct_texts": n_all, "batches": len(batches), "max_abs_diff": err,
              "rows": rows, "config": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()}}
    (args.out / "encode.json").write_text(json.dumps(result, indent=2))
    (args.out / "encode.md").write_text(md)
    print(md)
    return result


if __name__ == "__main__":
    main()
