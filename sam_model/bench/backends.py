"""Vector backends at scale: recall@k against exact search and queries/s, FAISS IVF beside Qdrant.

    python -m sam_model.bench.backends --n 1000000 --dim 64 --queries 200 [--json F] [--log F]

The vectors are synthetic (random clustered unit vectors, ``--clusters`` centres): at this scale what is measured
is the engine, not SAM's encoder, so no text is encoded. The queries are clustered around centres of their own
(``--query-centres new``, the default: away from the memories' clusters, as SAM's state-projected queries are not
drawn from its memories' distribution), or around the memories' centres (``data``, in-distribution). Ground truth is FAISS exact inner-product search
(``MemoryIndex(kind="flat")``). Each engine answers the same queries one at a time, as the store asks them
(top ``--k``, unscoped and scoped to one user of ``--users``), through the same MemoryIndex API the store uses:

- FAISS ``ivf`` (MemoryIndex, nlist ≈ 4·√n, ``--nprobe``) and FAISS ``flat`` (exact, the reference speed);
- Qdrant (sam_model.backends.qdrant.QdrantIndex) in its embedded local mode, or at ``--qdrant-url`` when a
  server is reachable. The local mode is brute force in NumPy (its recall is 1 by construction): it shows that
  the same code runs, and its speed is not a Qdrant server's (HNSW, Rust) — say so when quoting it;
- Qdrant Edge (sam_model.backends.qdrant_edge.QdrantEdgeIndex, extra [qdrant-edge]): Qdrant's own engine embedded
  in the process — the server's segments, HNSW and payload indexes, not the server — at ``--edge-m`` /
  ``--edge-ef-construct``, searched at each ``--edge-ef``; scoped queries are a payload filter on user_id inside its
  search. Its build is the upsert plus the HNSW indexing (``optimize``, timed apart).

Reported: build (add) time, recall@k (mean over queries, with a 95 % interval), queries/s, p50/p99 ms.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from sam_model.bench.serve import emit, progress
from sam_model.index import MemoryIndex, tune_blas_threshold
from sam_model.io import DefaultsHelp


def clustered(n: int, dim: int, clusters: int, rng: np.random.Generator,
              centres: np.ndarray | None = None) -> np.ndarray:
    """Unit vectors around ``clusters`` random centres (drawn from ``rng`` unless given)."""
    if centres is None:
        centres = rng.standard_normal((clusters, dim)).astype(np.float32)
    x = centres[rng.integers(0, clusters, n)] + 0.5 * rng.standard_normal((n, dim)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def mean_ci(xs: list[float]) -> tuple[float, float]:
    a = np.asarray(xs, dtype=np.float64)
    return float(a.mean()), float(1.96 * a.std(ddof=1) / np.sqrt(len(a))) if len(a) > 1 else 0.0


def measure(name: str, index, q: np.ndarray, truth: list[list], k: int, scope: list | None, log) -> dict:
    """Answer each query alone; recall@k against ``truth``, latency figures."""
    times, recalls = [], []
    for r, row in enumerate(q):
        kw = {} if scope is None else scope[r]
        t0 = time.perf_counter()
        ids, _ = index.search(row[None], k, **kw)
        times.append(time.perf_counter() - t0)
        want = {i for i in truth[r] if i is not None}
        recalls.append(len(want & {i for i in ids[0] if i is not None}) / max(1, len(want)))
    mean, ci = mean_ci(recalls)
    t = np.asarray(times) * 1000
    out = {"recall_at_k": round(mean, 4), "recall_ci95": round(ci, 4), "qps": round(float(len(q) / t.sum() * 1000), 1),
           "p50_ms": round(float(np.percentile(t, 50)), 2), "p99_ms": round(float(np.percentile(t, 99)), 2)}
    log(f"{name}: {out}")
    return out


HEARTBEAT = """import sys, time
every, what, path = float(sys.argv[1]), sys.argv[2], sys.argv[3]
start = time.time()
while True:
    time.sleep(every)
    line = time.strftime("[%H:%M:%S] ") + f"{what}: {time.time() - start:.0f} s so far"
    print(line, file=sys.stderr, flush=True)
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(line + "\\n")
"""


@contextmanager
def heartbeat(what: str, log_path: Path | None, every: float = 30.0):
    """Print "<what>: N s so far" every ``every`` seconds while the block runs. Qdrant Edge's optimize holds the
    GIL for the whole HNSW build (minutes at 1M), so no thread of this process can speak: a child process does."""
    child = subprocess.Popen([sys.executable, "-c", HEARTBEAT, str(every), what, str(log_path or "")])
    try:
        yield
    finally:
        child.kill()
        child.wait()


def edge_grid(text: str) -> list[int | str | None]:
    """``"default,64,exact"`` -> [None, 64, "exact"] (None: Qdrant's default, hnsw_ef = ef_construct; "exact":
    Qdrant's brute force, no HNSW)."""
    try:
        return [None if v.strip() == "default" else "exact" if v.strip() == "exact" else int(v)
                for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--edge-ef takes 'default', 'exact' and integers separated by commas, got "
                                         f"{text!r}") from None


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m sam_model.bench.backends", description=__doc__.split("\n\n")[0],
                                formatter_class=DefaultsHelp)
    p.add_argument("--n", type=int, default=1_000_000, help="memories in the bank: synthetic vectors, clustered")
    p.add_argument("--dim", type=int, default=64, help="dimension of the synthetic vectors")
    p.add_argument("--clusters", type=int, default=1000, help="centres of the synthetic vectors")
    p.add_argument("--users", type=int, default=1000, help="users the memories belong to (for the scoped queries)")
    p.add_argument("--queries", type=int, default=200, help="queries per engine and scope")
    p.add_argument("--query-centres", choices=("new", "data"), default="new", help="new: queries around centres "
                   "of their own, away from the memories' clusters (SAM's queries come from another tower than its "
                   "memories); data: around the memories' own centres (in-distribution)")
    p.add_argument("--k", type=int, default=10, help="results per query (recall@k)")
    p.add_argument("--nprobe", type=int, default=32, help="IVF lists probed per query")
    p.add_argument("--qdrant-queries", type=int, default=20, help="queries Qdrant answers unscoped (the embedded "
                   "mode is slow at scale: its brute force runs in Python)")
    p.add_argument("--qdrant-scoped-queries", type=int, default=3, help="queries Qdrant answers scoped to one user "
                   "(the embedded mode evaluates payload filters point by point in Python: seconds per query)")
    p.add_argument("--qdrant-url", default=None, help="a Qdrant server to measure instead of the embedded mode")
    p.add_argument("--no-qdrant", action="store_true", help="skip Qdrant (local mode or --qdrant-url)")
    p.add_argument("--no-edge", action="store_true", help="skip Qdrant Edge (skipped anyway, with a note, when "
                   "qdrant-edge-py is not installed: pip install 'sam_model[qdrant-edge]')")
    p.add_argument("--edge-m", type=int, default=16, help="Qdrant Edge HNSW m (edges per node; Qdrant's default)")
    p.add_argument("--edge-ef-construct", type=int, default=100, help="Qdrant Edge HNSW ef_construct (Qdrant's "
                   "default)")
    p.add_argument("--edge-ef", type=edge_grid, default="default,64,128,256", help="search-time "
                   "hnsw_ef values, one pass of the queries each ('default' = Qdrant's, i.e. ef_construct; 'exact' = "
                   "Qdrant's brute force, no HNSW)")
    p.add_argument("--edge-optimize", choices=("bulk", "auto"), default="bulk", help="bulk: upsert every point, "
                   "then index once (compact); auto: the store's default, Qdrant's optimisers after every add")
    p.add_argument("--edge-path", default=None, help="folder for Qdrant Edge's live shard (default: the system "
                   "temp dir; 1M vectors of dim 64 are 256 MB before the HNSW graph and payloads)")
    p.add_argument("--seed", type=int, default=0, help="seed of vectors, users and queries")
    p.add_argument("--json", type=Path, default=None, help="also write the figures to this JSON file")
    p.add_argument("--log", type=Path, default=None, help="also write progress to this file")
    args = p.parse_args(argv)

    log = progress(args.log)
    tune_blas_threshold()
    rng = np.random.default_rng(args.seed)
    x = clustered(args.n, args.dim, args.clusters, rng)
    ids = [f"m{i}" for i in range(args.n)]
    user = rng.integers(0, args.users, args.n)
    centres = (None if args.query_centres == "new" else  # the memories' own centres: the first draw of their rng
               np.random.default_rng(args.seed).standard_normal((args.clusters, args.dim)).astype(np.float32))
    q = clustered(args.queries, args.dim, args.clusters, np.random.default_rng(args.seed + 1), centres)
    asked = rng.integers(0, args.users, args.queries)
    members = {u: [ids[i] for i in np.flatnonzero(user == u)] for u in set(asked.tolist())}
    out: dict = {"n": args.n, "dim": args.dim, "k": args.k, "queries": args.queries, "vectors": "synthetic clustered",
                 "query_centres": args.query_centres}

    def build(name: str, index, scoped_payload: bool) -> float:
        t0, step = time.perf_counter(), 50_000
        for s in range(0, args.n, step):
            if scoped_payload:
                for u in np.unique(user[s:s + step]).tolist():
                    rows = s + np.flatnonzero(user[s:s + step] == u)
                    index.add([ids[i] for i in rows], x[rows], scopes={"user_id": f"u{u}"})
            else:
                index.add(ids[s:s + step], x[s:s + step])
            log(f"{name}: {min(s + step, args.n)}/{args.n} added")
        return round(time.perf_counter() - t0, 1)

    exact = MemoryIndex(args.dim, "flat", device="cpu")
    out["faiss_flat_build_s"] = build("faiss flat", exact, False)
    truth = [exact.search(row[None], args.k)[0][0] for row in q]
    scope_faiss = [{"within": members[int(u)]} for u in asked]
    truth_scoped = [exact.search(row[None], args.k, **sc)[0][0] for row, sc in zip(q, scope_faiss)]
    out["faiss_flat"] = measure("faiss flat", exact, q, truth, args.k, None, log)
    out["faiss_flat_scoped"] = measure("faiss flat, one user", exact, q, truth_scoped, args.k, scope_faiss, log)
    ivf = MemoryIndex(args.dim, "ivf", nprobe=args.nprobe, device="cpu")
    t0 = time.perf_counter()
    ivf.train(x)
    out["faiss_ivf_train_s"] = round(time.perf_counter() - t0, 1)
    out["faiss_ivf_build_s"] = build("faiss ivf", ivf, False)
    out["faiss_ivf"] = {**measure("faiss ivf", ivf, q, truth, args.k, None, log), "nlist": ivf.nlist,
                        "nprobe": args.nprobe}
    out["faiss_ivf_scoped"] = measure("faiss ivf, one user", ivf, q, truth_scoped, args.k, scope_faiss, log)
    del ivf
    if not args.no_qdrant:
        from sam_model.backends.qdrant import QdrantIndex

        qd = QdrantIndex(args.dim, url=args.qdrant_url)
        out["qdrant_mode"] = qd.backend
        out["qdrant_build_s"] = build("qdrant", qd, True)
        nq, ns = min(args.qdrant_queries, len(q)), min(args.qdrant_scoped_queries, len(q))
        out["qdrant"] = {**measure("qdrant", qd, q[:nq], truth[:nq], args.k, None, log), "queries": nq}
        if ns:
            scope_qd = [{"scopes": {"user_id": f"u{int(u)}"}} for u in asked[:ns]]
            out["qdrant_scoped"] = {**measure("qdrant, one user (payload filter)", qd, q[:ns], truth_scoped[:ns],
                                              args.k, scope_qd, log), "queries": ns}
    if not args.no_edge:
        out.update(edge_rows(args, build, q, truth, truth_scoped, asked, log))
    emit(out, args.json)
    return 0


def edge_rows(args, build, q: np.ndarray, truth: list, truth_scoped: list, asked: np.ndarray, log) -> dict:
    """Qdrant Edge's rows: build (upsert, then HNSW), one unscoped pass per hnsw_ef, the scoped pass."""
    try:
        from sam_model.backends.qdrant_edge import QdrantEdgeIndex
    except ImportError as err:
        log(f"qdrant-edge: skipped ({err})")
        return {"qdrant_edge": f"skipped: {err}"}
    out: dict = {}
    edge = QdrantEdgeIndex(args.dim, path=args.edge_path, m=args.edge_m, ef_construct=args.edge_ef_construct,
                           optimize="auto" if args.edge_optimize == "auto" else "manual")
    out["qdrant_edge_mode"] = edge.backend + f", build {args.edge_optimize}"
    out["qdrant_edge_upsert_s"] = build("qdrant-edge", edge, True)
    log(f"qdrant-edge: upserted, {edge.info()}; indexing (HNSW) ...")
    t0 = time.perf_counter()
    with heartbeat("qdrant-edge: indexing (HNSW)", args.log):
        edge.compact()
    out["qdrant_edge_index_s"] = round(time.perf_counter() - t0, 1)
    out["qdrant_edge_build_s"] = round(out["qdrant_edge_upsert_s"] + out["qdrant_edge_index_s"], 1)
    out["qdrant_edge_info"] = edge.info()
    log(f"qdrant-edge: indexed in {out['qdrant_edge_index_s']} s, {out['qdrant_edge_info']}")
    for ef in args.edge_ef:
        edge.exact, edge.hnsw_ef = ef == "exact", None if ef == "exact" else ef
        name = "qdrant_edge_exact" if ef == "exact" else f"qdrant_edge_ef{ef or 'default'}"
        out[name] = {**measure(f"qdrant-edge hnsw_ef={ef or 'default'}", edge, q, truth, args.k, None, log),
                     "hnsw_ef": None if ef == "exact" else ef or args.edge_ef_construct}
    edge.exact, edge.hnsw_ef = False, None
    scope = [{"scopes": {"user_id": f"u{int(u)}"}} for u in asked]
    out["qdrant_edge_scoped"] = measure("qdrant-edge, one user (payload filter)", edge, q, truth_scoped, args.k,
                                        scope, log)
    edge.close()
    return out


if __name__ == "__main__":
    raise SystemExit(main())
