"""CPU speed: a SAM search beside a dense MiniLM search over the same memories, and the profile of one query.

    python -m sam_model.bench.speed [--retriever sam-general] [--data AIRLINE.json.gz] [--sizes 1000,100000,1000000]
                                    [--batches 1,32] [--backends torch,onnx] [--out runs/speed] [--tensorboard LOGDIR]

It writes ``OUT/speed.json``, the table ``OUT/speed.md`` and ``OUT/speed.png`` (p50 ms of one query against the
memories searched, SAM and dense per BERT backend); ``--tensorboard LOGDIR`` logs the same lines as scalars (step:
the memories searched) and the PNG as an image.

- **SAM**: ``SAMRetriever.search`` (state text and observation through BERT, the heads, FAISS, the re-rank), the
  whole path an agent calls; at batch 32, ``encode_queries`` for 32 queries then 32 ``store.search_vector`` (what
  evaluate.py does).
- **dense**: the baseline it is measured against: all-MiniLM-L6-v2 (sam_model.models.text_encoder.TextEmbedder)
  over the observation, then a FAISS flat inner-product search (sam_model.index.MemoryIndex) of the memories'
  MiniLM vectors: one BERT pass and one index search.

Both run back to back on the same queries in one process (the load of a shared machine hits both alike), every
text cache cleared before each query so BERT always runs, the same number of FAISS threads and the same
``--backends`` for BERT (``torch``: PyTorch; ``onnx``: ONNX Runtime, sam_model.models.onnx_text; ``bf16``: PyTorch in
bfloat16, sam_model.models.bf16_text; ``int8``: ONNX Runtime over the graph's int8 version; ``auto``: each call on
whichever costs less, sam_model.models.call_cost; one store serves all, only what runs BERT changes).

Memories: the held-out airline tasks (``--data``, test split; ~1,000 memories, their decision points the queries),
else a synthetic demo log made on the fly. At a size beyond the real memories the index is filled with synthetic
memory vectors: rows of the real ones with Gaussian noise (σ ``--noise`` per coordinate), each block renormalised,
in the same store (encoding a million texts is not what is measured here; the FAISS scan is). Queries search the
whole store (no episode filter), so every size scans every memory.

``--replay``: also an agent's loop at batch 1 (rows "agent loop"): every query once, in episode and step order, the
text caches cleared once at the start of the row and then kept as a loaded retriever keeps them (its recent
texts, sam_model.encoder.TEXT_CACHE; the dense MiniLM the same), so an agent's state text that repeats between
calls costs no BERT pass, as it would not in the agent. The row reports how many SAM queries ran BERT on one text
or none (the state text, the observation or both cached); a cold row (caches cleared before every query) is the
worst case, this one the deployed path.

``--profile``: where one query's time goes (batch 1, the smallest size): tokenising, the BERT pass, the heads,
the FAISS search, the re-rank, and the rest (Python).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from sam_model import tensorboard_log
from sam_model.bench.encode import bert_flops
from sam_model.cpus import cores
from sam_model.data.examples import MemoryRecord
from sam_model.data.sources import SourceOptions
from sam_model.data.text import state_to_text
from sam_model.evaluation.data import load_eval_data
from sam_model.index import MemoryIndex
from sam_model.io import RawDefaultsHelp
from sam_model.progress import progress_bar

K = 5
AIRLINE = Path("../shared/data/tau-bench/gpt-4o-airline.json.gz")


def load_data(path: Path | None):
    """The held-out airline tasks when the file is there, else a synthetic demo log (40 episodes)."""
    if path is not None and path.exists():
        return load_eval_data(path, "episode", options=SourceOptions(split="test")), f"{path.name} (test split)"
    from sam_model.data.synthetic import write_synthetic

    log = Path(tempfile.mkdtemp()) / "demo.jsonl"
    write_synthetic(log, 40, seed=1)
    return load_eval_data(log, "episode"), "synthetic demo log (40 episodes, seed 1)"


def filler(real: np.ndarray, n: int, blocks: list[int], noise: float, seed: int) -> np.ndarray:
    """``n`` synthetic memory vectors: random rows of ``real`` plus Gaussian noise, each block (widths ``blocks``)
    renormalised to the norm it had, so scores keep the scale of real ones."""
    rng = np.random.default_rng(seed)
    out = np.empty((n, real.shape[1]), np.float32)
    for s in range(0, n, 100_000):
        x = real[rng.integers(0, len(real), min(100_000, n - s))].copy()
        x += noise * rng.standard_normal(x.shape, dtype=np.float32)
        start = 0
        for w in blocks:
            block = x[:, start : start + w]
            norms = np.linalg.norm(real[:, start : start + w], axis=1).mean()
            block *= norms / np.maximum(np.linalg.norm(block, axis=1, keepdims=True), 1e-12)
            start += w
        out[s : s + len(x)] = x
    return out


def filler_records(n: int, offset: int) -> list[MemoryRecord]:
    return [MemoryRecord(f"filler#{offset + i}", "filler", offset + i, "system", "NONE", f"filler memory {offset + i}")
            for i in range(n)]


def pct(times: list[float]) -> dict[str, float]:
    return {"p50_ms": 1e3 * float(np.percentile(times, 50)), "p99_ms": 1e3 * float(np.percentile(times, 99))}


class Bench:
    """One SAM retriever and one dense MiniLM over the same memories, grown to each size in turn."""

    def __init__(self, retriever, dense, data, noise: float, seed: int):
        self.r, self.dense, self.data, self.noise, self.seed = retriever, dense, data, noise, seed
        mems = data.memories
        self.r.store.add(mems)
        self.sam_real = self.r.store.index.get_vectors([m.id for m in mems]).astype(np.float32)
        self.dense_real = dense.encode([m.content or m.text for m in mems])
        self.index = MemoryIndex(self.dense_real.shape[1], "flat", device="cpu")
        self.index.add([m.id for m in mems], self.dense_real)
        net = retriever.net
        self.sam_blocks = [net.cfg.dim] + ([net.state_encoder.text_encoder.hidden_size] if net.uses_content else []) \
            + ([net.time.out_dim] if net.time is not None else [])

    def grow(self, size: int) -> None:
        """Fill both stores with synthetic memories up to ``size``."""
        n = size - len(self.r.store)
        if n <= 0:
            return
        for s in range(0, n, 100_000):
            m = min(100_000, n - s)
            seed = self.seed + len(self.r.store)
            recs = filler_records(m, len(self.r.store))
            self.r.store.add(recs, vectors=filler(self.sam_real, m, self.sam_blocks, self.noise, seed))
            self.index.add([x.id for x in recs], filler(self.dense_real, m, [self.dense_real.shape[1]], self.noise, seed))

    def clear(self) -> None:
        self.r.clear_cache()
        self.dense.encoder.clear_cache()

    def sam(self, exs) -> None:
        if len(exs) == 1:
            ex = exs[0]
            self.r.search(ex.state, ex.observation, k=K, step=ex.step, task_start=ex.task_start)
            return
        q = self.r.encode_queries([e.state for e in exs], [e.observation for e in exs], len(exs),
                                  steps=[e.step for e in exs], task_starts=[e.task_start for e in exs])
        for e, v in zip(exs, q):
            self.r.store.search_vector(v, K, e.state.uncertainty_flags)

    def dense_search(self, exs) -> None:
        q = self.dense.encode([e.observation for e in exs], batch_size=len(exs))
        self.index.search(q, K)

    def time(self, batch: int, calls: int) -> dict[str, dict[str, float]]:
        """p50/p99 per call of both, interleaved call by call, every text cache cleared before each call."""
        exs = self.data.examples
        t = {"sam": [], "dense": []}
        for c in range(calls):
            group = [exs[(c * batch + j) % len(exs)] for j in range(batch)]
            for name, fn in (("sam", self.sam), ("dense", self.dense_search)):
                self.clear()
                s = time.perf_counter()
                fn(group)
                t[name].append(time.perf_counter() - s)
        return {name: pct(v) for name, v in t.items()}

    def replay(self) -> dict:
        """p50/p99 of both over every query once in episode and step order (batch 1), the caches kept between
        calls as a loaded retriever keeps them; ``one_text_or_none``: the share of SAM queries whose BERT read at
        most one of their two texts (the other, or both, found in the cache)."""
        text = self.r.net.state_encoder.text_encoder
        order = sorted(self.data.examples, key=lambda e: (e.episode_id, e.step))
        self.clear()
        t, cached = {"sam": [], "dense": []}, 0
        for ex in order:
            for name, fn in (("sam", self.sam), ("dense", self.dense_search)):
                n, s = text.encoded, time.perf_counter()
                fn([ex])
                t[name].append(time.perf_counter() - s)
                cached += name == "sam" and text.encoded - n <= 1
        return {**{name: pct(v) for name, v in t.items()}, "one_text_or_none": cached / max(len(order), 1)}

    def profile(self, calls: int) -> dict[str, float]:
        """Median ms per stage of one SAM query (batch 1), each stage timed on its own over the same queries."""
        r, net, exs = self.r, self.r.net, self.data.examples
        text = net.state_encoder.text_encoder
        stages: dict[str, list[float]] = {k: [] for k in ("total", "state to text", "tokenise", "BERT", "heads",
                                                          "FAISS", "re-rank + hits", "dense: whole search")}
        # BERT: tokenising and the forward passes of the query's texts; heads: encode_queries on cached texts (state
        # to text, the MLPs, the projection, the time part); the rest: what none of these covers.
        bert_calls, flop_ratio = [], []
        for c in range(calls):
            ex = exs[c % len(exs)]
            self.clear()
            n, s = text.calls, time.perf_counter()
            r.search(ex.state, ex.observation, k=K, step=ex.step, task_start=ex.task_start)
            stages["total"].append(time.perf_counter() - s)
            bert_calls.append(text.calls - n)
            s = time.perf_counter()
            st = state_to_text(ex.state)
            stages["state to text"].append(time.perf_counter() - s)
            s = time.perf_counter()
            (st,), (obs,) = net.states_read([st]), net.observations_read([ex.observation])  # as SAM reads them
            ids = text.tokenizer([st, obs], truncation=True, max_length=text.max_length)["input_ids"]
            stages["tokenise"].append(time.perf_counter() - s)
            lengths = [len(x) for x in ids]  # the arithmetic of SAM's texts against dense's (the whole observation)
            dense = bert_flops(text.bert.config, [len(text.tokenizer(ex.observation, truncation=True,
                                                                     max_length=text.max_length)["input_ids"])])
            flop_ratio.append(bert_flops(text.bert.config, lengths if st != obs else lengths[1:]) / dense)
            self.clear()
            s = time.perf_counter()
            with torch.inference_mode():
                text._encode(list(dict.fromkeys([st, obs])))
            if text.device.type == "cuda":  # a GPU forward returns before it has run: time it to its end
                torch.cuda.synchronize(text.device)
            stages["BERT"].append(time.perf_counter() - s)
            r.encode_queries([ex.state], [ex.observation], steps=[ex.step], task_starts=[ex.task_start])  # cached now
            s = time.perf_counter()
            q = r.encode_queries([ex.state], [ex.observation], steps=[ex.step], task_starts=[ex.task_start])[0]
            stages["heads"].append(time.perf_counter() - s)
            s = time.perf_counter()
            r.store.index.search(q[None], max(K, r.store.config.rerank_depth))
            stages["FAISS"].append(time.perf_counter() - s)
            s = time.perf_counter()
            r.store.search_vector(q, K, ex.state.uncertainty_flags)
            stages["re-rank + hits"].append(time.perf_counter() - s - stages["FAISS"][-1])
            self.clear()
            s = time.perf_counter()
            self.dense_search([ex])
            stages["dense: whole search"].append(time.perf_counter() - s)
        out = {k: 1e3 * float(np.median(v)) for k, v in stages.items()}
        out["rest (Python)"] = out["total"] - sum(out[k] for k in ("BERT", "heads", "FAISS", "re-rank + hits"))
        out["BERT calls per query (mean, not ms)"] = float(np.mean(bert_calls))
        out["BERT FLOPs, SAM / dense (median, not ms)"] = float(np.median(flop_ratio))
        return out


def markdown(rows: list[dict], profiles: dict[str, dict[str, float]], header: str) -> str:
    lines = [header, "", "| BERT on | memories | batch | SAM p50 / p99 ms | dense MiniLM p50 / p99 ms | SAM / dense p50 |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        s, d = r["sam"], r["dense"]
        batch = r["batch"] if "one_text_or_none" not in r else \
            f"1, agent loop ({r['one_text_or_none']:.0%} of queries: BERT on one text or none)"
        lines.append(f"| {r['backend']} | {r['size']:,} | {batch} | {s['p50_ms']:.1f} / {s['p99_ms']:.1f} "
                     f"| {d['p50_ms']:.1f} / {d['p99_ms']:.1f} | {s['p50_ms'] / d['p50_ms']:.2f}× |")
    for backend, p in profiles.items():
        lines += ["", f"Profile of one SAM query (batch 1, BERT on {backend}; median ms of each stage timed apart):",
                  "", "| stage | ms |", "|---|---|"]
        lines += [f"| {k} | {v:.2f} |" for k, v in p.items()]
    return "\n".join(lines) + "\n"


def plot(rows: list[dict], path: Path, tensorboard: str | None = None) -> dict[str, list[tuple[int, float]]]:
    """speed.png: p50 ms of one query (batch 1, every cache cleared) against the memories searched, SAM and dense
    per BERT backend; how the cost grows with the memory is a curve, not rows of a table. Also to the TensorBoard
    log ``tensorboard`` (step: the memories searched). Returns the series drawn, by label."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from sam_model.evaluation.diagnostics import save_figure

    series: dict[str, list[tuple[int, float]]] = {}
    for r in rows:
        if r["batch"] != 1 or "one_text_or_none" in r:  # the agent loop keeps its caches: another measure
            continue
        for method, name in (("sam", "SAM"), ("dense", "dense MiniLM")):
            series.setdefault(f"{name}, BERT on {r['backend']}", []).append((r["size"], r[method]["p50_ms"]))
    fig, ax = plt.subplots(figsize=(7, 4.5))
    colour = {b: f"C{i}" for i, b in enumerate(dict.fromkeys(r["backend"] for r in rows))}  # one per backend
    for label, points in series.items():
        points.sort()
        ax.plot(*zip(*points), marker="o", ls="-" if label.startswith("SAM") else "--", label=label,
                color=colour[label.rsplit(" ", 1)[1]])
    ax.set_xscale("log")
    ax.set_xlabel("memories searched")
    ax.set_ylabel("p50 ms per query (batch 1)")
    ax.set_ylim(bottom=0)
    ax.set_title("Query latency against the memories searched")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    save_figure(fig, path)
    plt.close(fig)
    tensorboard_log.log_figure(tensorboard, "speed", series, path)
    return series


def parse_list(kind):
    def parse(text: str) -> list:
        try:
            return [kind(float(t)) if kind is int else kind(t) for t in text.split(",") if t.strip()]
        except ValueError as err:
            raise argparse.ArgumentTypeError(f"expected a comma-separated list, got {text!r}") from err
    return parse


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(prog="python -m sam_model.bench.speed", description=__doc__,
                                 formatter_class=RawDefaultsHelp)
    ap.add_argument("--retriever", default="sam-general", help="export folder or packaged name (default sam-general)")
    ap.add_argument("--data", type=Path, default=AIRLINE,
                    help="tau-bench transcripts whose test split gives memories and queries (default "
                         f"{AIRLINE}); absent: a synthetic demo log")
    ap.add_argument("--sizes", type=parse_list(int), default=[1000, 100_000, 1_000_000],
                    help="memory counts, comma-separated (beyond the real memories: synthetic vectors)")
    ap.add_argument("--batches", type=parse_list(int), default=[1, 32], help="query batch sizes, comma-separated")
    ap.add_argument("--backends", type=parse_list(str), default=["torch", "onnx"],
                    help="what runs BERT for both methods, comma-separated: torch, onnx, bf16 (PyTorch in bfloat16, "
                         "for a CPU with bfloat16 units), int8 (ONNX Runtime over an int8 graph: rankings change), "
                         "auto (each call where it costs less, measured at load)")
    ap.add_argument("--calls", type=int, default=60, help="timed calls at batch 1 per (size, backend) and method")
    ap.add_argument("--batch-calls", type=int, default=10, help="timed calls at the larger batch sizes")
    ap.add_argument("--replay", action="store_true",
                    help="also time an agent's loop at batch 1: every query once in episode order, the text caches "
                         "kept between calls as a loaded retriever keeps them (a repeated state text costs no BERT)")
    ap.add_argument("--profile", action="store_true", help="also profile one SAM query stage by stage")
    ap.add_argument("--threads", type=int, default=cores(),
                    help="torch, ONNX Runtime and FAISS threads (default: the CPUs this process may use)")
    ap.add_argument("--device", default="cpu", help="where BERT runs for both methods: cpu (default) or cuda "
                                                    "(then --backends torch; FAISS stays on the CPU for both)")
    ap.add_argument("--bert", default=None, metavar="DIR",
                    help="the dense baseline's BERT folder (default: the packaged MiniLM; with a stand-in retriever "
                         "of sam_model.bench.device --standin, its bert folder)")
    ap.add_argument("--noise", type=float, default=0.02, help="σ of the noise of the synthetic memory vectors")
    ap.add_argument("--seed", type=int, default=0, help="seed of the synthetic memory vectors")
    ap.add_argument("--out", type=Path, required=True,
                    help="folder for speed.json, speed.md and speed.png (latency against the memories searched)")
    tensorboard_log.add_option(ap, "speed.png's lines (p50 ms per query by memories searched) and the PNG")
    args = ap.parse_args(argv)
    if min(args.calls, args.batch_calls, args.threads) < 1 or not args.sizes or not args.batches:
        ap.error("--calls and --threads must be >= 1, --sizes and --batches non-empty")
    if args.device != "cpu" and args.backends != ["torch"]:
        ap.error(f"--device {args.device} runs BERT on PyTorch: give --backends torch")
    if why := tensorboard_log.problem(args.tensorboard):
        ap.error(why)
    import faiss

    from sam_model.encoder import TEXT_CACHE
    from sam_model.io import atomic_write_text
    from sam_model.models.text_encoder import TextEmbedder
    from sam_model.retriever import SAMRetriever

    torch.set_num_threads(args.threads)
    faiss.omp_set_num_threads(args.threads)
    data, source = load_data(args.data)
    args.out.mkdir(parents=True, exist_ok=True)
    rows, profiles = [], {}
    config = {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()}
    from sam_model.models import bf16_text

    config.update(source=source, memories=len(data.memories), queries=len(data.examples), cores=os.cpu_count(),
                  cpu=platform.processor() or platform.machine(), torch=torch.__version__, faiss=faiss.__version__,
                  bf16_units=bf16_text.native(),  # whether auto may run bfloat16 here
                  gpu=torch.cuda.get_device_name(0) if args.device.startswith("cuda") else None)
    r = SAMRetriever.from_pretrained(args.retriever, device=args.device, backend=args.backends[0])
    dense = TextEmbedder(args.bert, device=args.device, max_length=r.net.cfg.max_length)
    bench = Bench(r, dense, data, args.noise, args.seed)
    text = r.net.state_encoder.text_encoder

    def use(backend: str) -> None:  # one store for both backends: only what runs BERT changes
        for enc in (text, dense.encoder):
            if enc.use_backend(backend) != backend and backend != "auto":
                raise SystemExit(f"error: BERT backend {backend!r} is not available here (pip install -e '.[onnx]')")

    for backend in args.backends:
        use(backend)
        bench.time(1, 3)  # warm-up
        if args.profile:
            profiles[backend] = bench.profile(args.calls)
    dense.encoder.limit_cache(TEXT_CACHE)  # both keep recent texts as a loaded retriever does (--replay)
    per_size = len(args.batches) + args.replay
    bar = progress_bar(total=len(args.backends) * len(args.sizes) * per_size, desc="speed bench", unit="row")
    for size in sorted(args.sizes):
        bench.grow(size)
        for backend in args.backends:
            use(backend)
            for batch in args.batches:
                bar.set_postfix(backend=backend, size=f"{size:,}", batch=batch)
                rows.append({"backend": backend, "size": max(size, len(data.memories)), "batch": batch,
                             **bench.time(batch, args.calls if batch == 1 else args.batch_calls)})
                bar.update()
            if args.replay:
                bar.set_postfix(backend=backend, size=f"{size:,}", batch="agent loop")
                rows.append({"backend": backend, "size": max(size, len(data.memories)), "batch": 1, **bench.replay()})
                bar.update()
            atomic_write_text(args.out / "speed.json", json.dumps({"config": config, "rows": rows,
                                                                   "profiles": profiles}, indent=2))
    bar.close()
    on_gpu = f"; BERT on {args.device} ({config['gpu']})" if config["gpu"] else ""
    header = (f"Speed: {args.retriever} vs dense all-MiniLM-L6-v2, {source}: {len(data.memories)} real memories, "
              f"{len(data.examples)} queries; k={K}, {args.threads} threads, {args.calls} calls per row, "
              f"{os.cpu_count()} cores ({config['cpu']}{', bfloat16 units' if config['bf16_units'] else ''}), "
              f"torch {torch.__version__}, faiss {faiss.__version__}{on_gpu}.")
    md = markdown(rows, profiles, header)
    atomic_write_text(args.out / "speed.md", md)
    if any(r["batch"] == 1 and "one_text_or_none" not in r for r in rows):
        plot(rows, args.out / "speed.png", args.tensorboard)
    print(md)
    return {"config": config, "rows": rows, "profiles": profiles}


if __name__ == "__main__":
    main()
