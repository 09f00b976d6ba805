"""Search benchmark: MemoryIndex kinds × bank sizes on synthetic clustered memory vectors.

For every (kind, size) it measures build time, memory, latency at batch 1 and 64, QPS and
recall@10 against exact search, for two query paths over the same bank:

- plain: content search, ``index.search(v)`` with a query vector from the memory distribution;
- state: the SAM path, ``q_s = StateProjection(kind, dim).query(v_s)`` (torch, CPU, no_grad)
  then ``index.search(q_s)``; its recall is against exact search for q_s.

The state/plain latency ratio is the price of state adaptivity at query time.

Synthetic data: a Gaussian mixture in a ``--latent-dim`` space mapped to ``--dim`` by a random
orthonormal basis, plus isotropic noise, L2-normalised. Text embeddings have a low intrinsic
dimension and cluster by topic; uniformly random vectors would make every ANN index look
worse (and every neighbour a near tie) than on real memories. The projection is randomly
initialised so that W_s ≠ I (diagonal entries spread by ``--proj-spread`` around 1).

    python -m sam_model.bench.search --sizes 10000,100000 --out runs/bench

It writes ``OUT/search.json``, the table ``OUT/search.md`` and ``OUT/search.png``: per index kind, batch-1 p50
latency and recall@10 against the bank size, plain and state paths side by side (what the state path costs and
how an approximate index keeps up as the bank grows), and with ``--sweep-nprobe`` / ``--sweep-ef`` recall against
batch-64 QPS at each setting. ``--tensorboard LOGDIR`` logs the same lines as scalars (step: the bank size, or the
swept setting) and the PNG as an image.
"""

from __future__ import annotations

import argparse
import gc
import inspect
import json
import os
import platform
import time
from pathlib import Path

import faiss
import numpy as np
import torch

from sam_model import tensorboard_log
from sam_model.cpus import cores
from sam_model.index import KINDS, MemoryIndex, tune_blas_threshold
from sam_model.io import RawDefaultsHelp, atomic_write_text
from sam_model.models.projection import PROJECTIONS, StateProjection
from sam_model.progress import progress_bar

K = 10
DEFAULTS = {n: p.default for n, p in inspect.signature(MemoryIndex).parameters.items()
            if p.default is not inspect.Parameter.empty}


# ---- data ------------------------------------------------------------------------------------


class Mixture:
    """Clustered unit vectors of low intrinsic dimension; ``sample`` draws from the same law."""

    def __init__(self, dim: int, latent_dim: int, clusters: int, spread: float, noise: float, seed: int):
        rng = np.random.default_rng(seed)
        self.basis = np.linalg.qr(rng.standard_normal((dim, latent_dim)))[0].astype(np.float32)
        self.centers = rng.standard_normal((clusters, latent_dim)).astype(np.float32)
        self.dim, self.spread, self.noise = dim, spread, noise

    def sample(self, n: int, seed: int, chunk: int = 100_000) -> np.ndarray:
        rng = np.random.default_rng(seed)
        out = np.empty((n, self.dim), np.float32)
        for s in range(0, n, chunk):
            m = min(chunk, n - s)
            z = self.centers[rng.integers(0, len(self.centers), m)]
            z += self.spread * rng.standard_normal(z.shape, dtype=np.float32)
            x = z @ self.basis.T
            x *= 1.0 / np.sqrt(z.shape[1])
            x += (self.noise / np.sqrt(self.dim)) * rng.standard_normal(x.shape, dtype=np.float32)
            x /= np.linalg.norm(x, axis=1, keepdims=True)
            out[s : s + m] = x
        return out


def random_projection(kind: str, dim: int, spread: float, v_s: torch.Tensor, seed: int) -> StateProjection:
    """A StateProjection whose W_s differs from I: its last layer (zero at init) gets random weights
    scaled so the diagonal of W_s has standard deviation ``spread`` over the given states."""
    torch.manual_seed(seed)
    proj = StateProjection(kind, dim).eval()
    last = proj.g[-1]
    with torch.no_grad():
        base = proj.diagonal(v_s)
        last.weight.normal_()
        scale = spread / max(float((proj.diagonal(v_s) - base).std()), 1e-12)
        last.weight.mul_(scale)
    return proj


# ---- measurements -----------------------------------------------------------------------------


def rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def peak_rss_mb() -> float | None:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def reset_peak() -> bool:
    """Reset the kernel's peak-RSS counter (Linux ≥ 4.0); False where not allowed."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def exact_top(base: np.ndarray, queries: np.ndarray, k: int) -> np.ndarray:
    flat = faiss.IndexFlatIP(base.shape[1])
    flat.add(base)
    return flat.search(queries, k)[1]


def recall_at(got: list[list], truth: np.ndarray) -> float:
    hits = [len({g for g in row if g is not None} & set(t.tolist())) for row, t in zip(got, truth)]
    return float(np.mean(hits)) / truth.shape[1]


def timed_search(search, queries: np.ndarray, batch: int, max_calls: int) -> tuple[np.ndarray, list[list]]:
    """Per-call latencies (s) and the concatenated result ids."""
    times, ids = [], []
    for s in range(0, min(len(queries), batch * max_calls), batch):
        t = time.perf_counter()
        got = search(queries[s : s + batch])
        times.append(time.perf_counter() - t)
        ids.extend(got)
    return np.asarray(times), ids


def measure_path(search, queries: np.ndarray, truth: np.ndarray, b1_calls: int) -> dict:
    t1, _ = timed_search(search, queries, 1, b1_calls)
    t64, ids = timed_search(search, queries, 64, len(queries))
    return {
        "recall@10": recall_at(ids, truth[: len(ids)]),
        "b1_p50_ms": 1e3 * float(np.percentile(t1, 50)), "b1_p99_ms": 1e3 * float(np.percentile(t1, 99)),
        "b64_p50_ms": 1e3 * float(np.percentile(t64, 50)), "b64_p99_ms": 1e3 * float(np.percentile(t64, 99)),
        "qps_b1": len(t1) / float(t1.sum()), "qps_b64": len(ids) / float(t64.sum()),
    }


def bench_one(kind: str, cfg: dict, base: np.ndarray, plain_q: np.ndarray, plain_truth: np.ndarray,
              proj: StateProjection, v_s: np.ndarray, state_truth: np.ndarray, b1_calls: int,
              sweep: list[int]) -> tuple[dict, list[dict]]:
    gc.collect()
    rss0, can_peak = rss_mb(), reset_peak()
    t = time.perf_counter()
    index = MemoryIndex(base.shape[1], kind, **cfg, device="cpu")
    index.add(np.arange(len(base)), base)
    build_s = time.perf_counter() - t
    peak = peak_rss_mb()

    def plain(q):
        return index.search(q, K)[0]

    def state(v):
        with torch.no_grad():
            q = proj.query(torch.from_numpy(v)).numpy()
        return index.search(q, K)[0]

    row = {"kind": kind, "size": len(base), "build_s": build_s, "trained": index.trained,
           "index_mb": faiss.serialize_index(index._index).nbytes / 2**20, "rss_mb": rss_mb() - rss0,
           "peak_mb": (peak - rss0) if can_peak and peak else None,
           "nlist": index.nlist, "nprobe": index.nprobe if kind == "ivf" else None,
           "M": index.M if kind == "hnsw" else None, "ef_search": index.ef_search if kind == "hnsw" else None}
    row["plain"] = measure_path(plain, plain_q, plain_truth, b1_calls)
    row["state"] = measure_path(state, v_s, state_truth, b1_calls)
    sweeps = []
    knob = {"ivf": "nprobe", "hnsw": "ef_search"}.get(kind)
    for value in sweep if knob else []:
        setattr(index, knob, value)
        t64, ids = timed_search(plain, plain_q, 64, len(plain_q))
        sweeps.append({"kind": kind, "size": len(base), knob: value, "recall@10": recall_at(ids, plain_truth),
                       "qps_b64": len(ids) / float(t64.sum())})
    gc.collect()
    return row, sweeps


# ---- report -------------------------------------------------------------------------------------


def markdown(rows: list[dict], sweeps: list[dict], header: str) -> str:
    flat_qps = {r["size"]: r["plain"]["qps_b64"] for r in rows if r["kind"] == "flat"}
    flat_b1 = {r["size"]: r["plain"]["b1_p50_ms"] for r in rows if r["kind"] == "flat"}
    lines = [header, "",
             "| kind | size | params | build s | index MB | peak RSS +MB | recall@10 plain / state "
             "| b1 p50/p99 ms plain | b1 p50/p99 ms state | b64 p50/p99 ms plain | QPS b64 plain / state "
             "| state/plain latency b1, b64 | speed vs flat b1, b64 |",
             "|" + "---|" * 13]
    for r in rows:
        p, s = r["plain"], r["state"]
        ivf = f"nlist={r['nlist']} nprobe={r['nprobe']}" if r["trained"] else "untrained: exact buffer"
        params = {"flat": "exact", "ivf": ivf,
                  "hnsw": f"M={r['M']} ef={r['ef_search']}"}[r["kind"]]
        vs_flat = (f"{flat_b1[r['size']] / p['b1_p50_ms']:.1f}×, {p['qps_b64'] / flat_qps[r['size']]:.1f}×"
                   if r["size"] in flat_qps else "n/a")
        peak = f"{r['peak_mb']:.0f}" if r["peak_mb"] is not None else "n/a"
        lines.append(
            f"| {r['kind']} | {r['size']:,} | {params} | {r['build_s']:.1f} | {r['index_mb']:.0f} | {peak} "
            f"| {p['recall@10']:.3f} / {s['recall@10']:.3f} "
            f"| {p['b1_p50_ms']:.2f} / {p['b1_p99_ms']:.2f} | {s['b1_p50_ms']:.2f} / {s['b1_p99_ms']:.2f} "
            f"| {p['b64_p50_ms']:.1f} / {p['b64_p99_ms']:.1f} | {p['qps_b64']:,.0f} / {s['qps_b64']:,.0f} "
            f"| {s['b1_p50_ms'] / p['b1_p50_ms']:.2f}, {s['b64_p50_ms'] / p['b64_p50_ms']:.2f} | {vs_flat} |")
    if sweeps:
        lines += ["", "Search-parameter sweep (plain queries, batch 64):", "",
                  "| kind | size | setting | recall@10 | QPS b64 | QPS vs flat |", "|---|---|---|---|---|---|"]
        for s in sweeps:
            knob = "nprobe" if "nprobe" in s else "ef_search"
            vs_flat = f"{s['qps_b64'] / flat_qps[s['size']]:.1f}×" if s["size"] in flat_qps else "n/a"
            lines.append(f"| {s['kind']} | {s['size']:,} | {knob}={s[knob]} | {s['recall@10']:.3f} "
                         f"| {s['qps_b64']:,.0f} | {vs_flat} |")
    return "\n".join(lines) + "\n"


def plot(rows: list[dict], sweeps: list[dict], path: Path,
         tensorboard: str | None = None) -> dict[str, list[tuple[int, float]]]:
    """search.png: per index kind, batch-1 p50 ms and recall@10 against the bank size, plain (solid) and state
    (dashed) queries; with a sweep, recall@10 against batch-64 QPS at each swept setting. Also to the TensorBoard
    log ``tensorboard`` (steps: the bank size; a sweep's, the setting). Returns the lines drawn, by label."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from sam_model.evaluation.diagnostics import save_figure

    lines: dict[str, list[tuple[int, float]]] = {}
    fig, axes = plt.subplots(1, 3 if sweeps else 2, figsize=(15 if sweeps else 10, 4.2))
    colour = {k: f"C{i}" for i, k in enumerate(dict.fromkeys(r["kind"] for r in rows))}
    for kind in colour:
        mine = sorted((r for r in rows if r["kind"] == kind), key=lambda r: r["size"])
        for q, ls in (("plain", "-"), ("state", "--")):
            for ax, metric, label in ((axes[0], "b1_p50_ms", "b1 p50 ms"), (axes[1], "recall@10", "recall@10")):
                points = [(r["size"], r[q][metric]) for r in mine]
                lines[f"{label}/{kind} {q}"] = points
                ax.plot(*zip(*points), marker="o", ls=ls, color=colour[kind], label=f"{kind}, {q}")
    sizes = sorted({r["size"] for r in rows})
    plain_number = matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}")  # 0.2, not 2 x 10^-1
    for ax, ylabel in ((axes[0], "p50 ms per query (batch 1)"), (axes[1], "recall@10 against exact search")):
        ax.set_xscale("log")
        ax.set_xticks(sizes, [f"{n:,}" for n in sizes])
        ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
        ax.set(xlabel="memories in the bank", ylabel=ylabel)
        ax.grid(alpha=0.3)
    axes[0].set_yscale("log")
    axes[0].yaxis.set_major_formatter(plain_number)
    axes[0].yaxis.set_minor_formatter(plain_number)
    axes[0].set_title("Latency against the bank size")
    axes[1].set_title("Recall against the bank size")
    axes[1].legend(fontsize=8)
    if sweeps:
        ax = axes[2]
        by_size = {n: ("os^D"[i % 4], ("-", ":", "--", "-.")[i % 4]) for i, n in enumerate(sizes)}  # one per size
        for kind, size in dict.fromkeys((s["kind"], s["size"]) for s in sweeps):
            knob = {"ivf": "nprobe", "hnsw": "ef_search"}[kind]
            mine = sorted((s for s in sweeps if (s["kind"], s["size"]) == (kind, size)), key=lambda s: s[knob])
            lines[f"sweep recall@10/{kind} {size} by {knob}"] = [(s[knob], s["recall@10"]) for s in mine]
            lines[f"sweep QPS b64/{kind} {size} by {knob}"] = [(s[knob], s["qps_b64"]) for s in mine]
            ax.plot([s["qps_b64"] for s in mine], [s["recall@10"] for s in mine], marker=by_size[size][0],
                    ls=by_size[size][1], color=colour[kind], label=f"{kind}, {size:,} ({knob})")
            for s in mine:
                ax.annotate(str(s[knob]), (s["qps_b64"], s["recall@10"]), fontsize=7, xytext=(3, 3),
                            textcoords="offset points")
        ax.set(xlabel="QPS at batch 64 (plain queries)", ylabel="recall@10", title="Recall against throughput")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    save_figure(fig, path)
    plt.close(fig)
    tensorboard_log.log_figure(tensorboard, "search", lines, path)
    return lines


def parse_ints(text: str) -> list[int]:
    try:
        return [int(float(t)) for t in text.split(",") if t.strip()]
    except ValueError as err:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from err


def parse_kinds(text: str) -> list[str]:
    kinds = [t.strip() for t in text.split(",") if t.strip()]
    bad = [k for k in kinds if k not in KINDS]
    if bad or not kinds:
        raise argparse.ArgumentTypeError(f"kinds must be from {KINDS}, got {text!r}")
    return kinds


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(prog="python -m sam_model.bench.search", description=__doc__,
                                 formatter_class=RawDefaultsHelp)
    ap.add_argument("--sizes", type=parse_ints, default=[10_000, 100_000],
                    help="comma-separated bank sizes (number of memory vectors), e.g. 10000,100000,1000000")
    ap.add_argument("--out", type=Path, required=True,
                    help="folder for search.json, search.md and search.png (latency and recall by bank size)")
    ap.add_argument("--dim", type=int, default=384, help="vector dimension (384 = MiniLM)")
    ap.add_argument("--kinds", type=parse_kinds, default=list(KINDS), help="comma-separated MemoryIndex kinds to build: flat, ivf, hnsw")
    ap.add_argument("--queries", type=int, default=1000, help="queries per path (recall and batch-64 timing)")
    ap.add_argument("--b1-queries", type=int, default=200, help="queries timed one at a time (batch-1 latency)")
    ap.add_argument("--projection", choices=PROJECTIONS, default="diag", help="StateProjection kind, state path")
    ap.add_argument("--proj-spread", type=float, default=0.5,
                    help="std of the diagonal of the random W_s around 1 (0 gives W_s = I)")
    ap.add_argument("--nlist", type=int, default=DEFAULTS["nlist"], help="IVF lists (default ≈ 4·√size)")
    ap.add_argument("--nprobe", type=int, default=DEFAULTS["nprobe"], help="IVF lists probed per query")
    ap.add_argument("--M", type=int, default=DEFAULTS["M"], help="HNSW neighbours per node")
    ap.add_argument("--ef-search", type=int, default=DEFAULTS["ef_search"], help="HNSW efSearch: candidates kept while searching (more: higher recall, slower)")
    ap.add_argument("--ef-construction", type=int, default=DEFAULTS["ef_construction"], help="HNSW efConstruction: candidates kept while building the graph")
    ap.add_argument("--sweep-nprobe", type=parse_ints, default=[],
                    help="also measure recall/QPS of the built IVF at these nprobe values, e.g. 8,16,32,64")
    ap.add_argument("--sweep-ef", type=parse_ints, default=[],
                    help="also measure recall/QPS of the built HNSW at these efSearch values, e.g. 32,64,128")
    ap.add_argument("--clusters", type=int, default=1000, help="mixture components of the synthetic data")
    ap.add_argument("--latent-dim", type=int, default=32, help="intrinsic dimension of the synthetic data")
    ap.add_argument("--spread", type=float, default=1.0, help="within-cluster std relative to centre spread")
    ap.add_argument("--noise", type=float, default=0.1, help="isotropic noise norm added in the full space")
    ap.add_argument("--threads", type=int, default=cores(),
                    help="FAISS and torch threads (default: the CPUs this process may use; on a busy host, 1 "
                         "gives steadier latencies)")
    ap.add_argument("--faiss-blas-default", action="store_true",
                    help="keep FAISS's BLAS threshold (nq·d ≥ 128000) instead of tune_blas_threshold(threads), "
                         "which makes batched flat search several times faster on few threads")
    ap.add_argument("--seed", type=int, default=0, help="seed for data, queries and projection")
    tensorboard_log.add_option(ap, "search.png's lines (latency and recall by bank size, the sweeps by setting) "
                                   "and the PNG")
    args = ap.parse_args(argv)
    for name in ("dim", "queries", "b1_queries", "threads", "clusters", "latent_dim"):
        if getattr(args, name) < 1:
            ap.error(f"--{name.replace('_', '-')} must be ≥ 1")
    if args.latent_dim > args.dim:
        ap.error(f"--latent-dim {args.latent_dim} exceeds --dim {args.dim}")
    if why := tensorboard_log.problem(args.tensorboard):
        ap.error(why)

    faiss.omp_set_num_threads(args.threads)
    torch.set_num_threads(args.threads)
    blas = faiss.cvar.distance_compute_blas_threshold if args.faiss_blas_default else tune_blas_threshold(args.threads)
    mix = Mixture(args.dim, args.latent_dim, args.clusters, args.spread, args.noise, args.seed)
    plain_q = mix.sample(args.queries, args.seed + 1)
    v_s = mix.sample(args.queries, args.seed + 2)
    proj = random_projection(args.projection, args.dim, args.proj_spread, torch.from_numpy(v_s), args.seed)
    with torch.no_grad():
        q_s = proj.query(torch.from_numpy(v_s)).numpy()
    cfgs = {"flat": {}, "ivf": {"nlist": args.nlist, "nprobe": args.nprobe},
            "hnsw": {"M": args.M, "ef_search": args.ef_search, "ef_construction": args.ef_construction}}
    config = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}
    config.update(faiss=faiss.__version__, torch=torch.__version__, cpu=platform.processor() or platform.machine(),
                  cores=os.cpu_count(), blas_threshold=blas)
    rows: list[dict] = []
    sweeps: list[dict] = []
    args.out.mkdir(parents=True, exist_ok=True)
    bar = progress_bar(total=len(args.sizes) * len(args.kinds), desc="search bench", unit="index")
    for size in args.sizes:
        base = mix.sample(size, args.seed + 3)
        plain_truth, state_truth = exact_top(base, plain_q, K), exact_top(base, q_s, K)
        for kind in args.kinds:
            bar.set_postfix(kind=kind, size=f"{size:,}")
            sweep = {"ivf": args.sweep_nprobe, "hnsw": args.sweep_ef}.get(kind, [])
            row, sw = bench_one(kind, cfgs[kind], base, plain_q, plain_truth, proj, v_s, state_truth,
                                args.b1_queries, sweep)
            rows.append(row)
            sweeps.extend(sw)
            bar.update()
            result = {"config": config, "results": rows, "sweeps": sweeps}
            atomic_write_text(args.out / "search.json", json.dumps(result, indent=2))  # partial results survive
        del base
    bar.close()
    header = (f"Search benchmark: dim {args.dim}, {args.queries} queries, projection {args.projection}, "
              f"{args.threads} threads, faiss {faiss.__version__} (BLAS threshold nq·d ≥ {blas}), {os.cpu_count()} cores "
              f"({config['cpu']}); synthetic mixture: {args.clusters} clusters, latent dim {args.latent_dim}.")
    md = markdown(rows, sweeps, header)
    atomic_write_text(args.out / "search.md", md)
    plot(rows, sweeps, args.out / "search.png", args.tensorboard)
    print(md)
    return result


if __name__ == "__main__":
    main()
