"""What chunking costs: index size, encode time and search latency per 1,000 events, with and without chunks.

Chunking (sam_model.data.chunks) turns a long event into several memories, so the index holds more vectors,
the encoder reads more texts and a search ranks more candidates (and folds them per event). This benchmark
takes the first ``--events`` events of a log (by default the held-out AutoCodeRover instances: long search
results), stores them once whole and once chunked through the one store (MemoryStore, flat index), and
measures for each:

- memories and index size: vectors (float32) plus the store's saved text and metadata (store.json), in MB;
- encode time: the retriever's memory encoder over every memory, text caches cleared first (seconds);
- search latency: ``search_vector(q, k=5)`` over the whole store (whole memories) or with ``fold=True``
  (chunks; one hit per event), for ``--queries`` decision-point query vectors encoded beforehand (the query
  encoding is the same either way), p50 and p99 in ms.

Figures are scaled to 1,000 events. ::

    python -m sam_model.bench.chunks --retriever sam-general --events 500 --out runs/bench-chunks
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np

from sam_model.data.chunks import Chunking, chunk_records, describe
from sam_model.data.sources import SourceOptions
from sam_model.evaluation.data import load_eval_data
from sam_model.evaluation.methods import clear_text_caches
from sam_model.io import atomic_write_text
from sam_model.retriever import SAMRetriever
from sam_model.store import MemoryStore
from sam_model.storeconfig import StoreConfig

CODING = "../shared/data/coding-agents/autocoderover-gpt4-swebench-lite-train.chat.jsonl.gz"


def folder_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 1e6


def measure(retriever, memories, queries: np.ndarray, fold: bool, batch_size: int) -> dict:
    """Encode, store, save and search one set of memories."""
    encoder = retriever.encoder
    clear_text_caches(retriever)
    t0 = time.perf_counter()
    x = np.asarray(encoder.encode_memories(memories, batch_size, True), dtype=np.float32)
    encode_s = time.perf_counter() - t0
    store = MemoryStore(encoder, StoreConfig(provenance=False, index={"kind": "flat", "device": "cpu"}), x.shape[1])
    store.add(memories, x)
    with tempfile.TemporaryDirectory() as tmp:
        saved = store.save(Path(tmp) / "store")
        size = folder_mb(saved)
    seconds = []
    for q in queries:
        t0 = time.perf_counter()
        store.search_vector(q, 5, fold=fold)
        seconds.append(time.perf_counter() - t0)
    ms = np.array(seconds) * 1e3
    return {"memories": len(memories), "store_mb": size, "vectors_mb": x.nbytes / 1e6, "encode_s": encode_s,
            "search_ms_p50": float(np.percentile(ms, 50)), "search_ms_p99": float(np.percentile(ms, 99))}


def per_1k(row: dict, events: int) -> dict:
    f = 1000.0 / events
    return {**row, "memories_per_1k": row["memories"] * f, "store_mb_per_1k": row["store_mb"] * f,
            "encode_s_per_1k": row["encode_s"] * f}


def markdown(rows: dict[str, dict], events: int, chunking: Chunking) -> str:
    lines = [f"{events} events; chunks of {chunking.size} characters, overlap {chunking.overlap}; per 1,000 events:",
             "", "| memories as | memories | store (vectors + texts), MB | encode, s | search p50, ms | search p99, ms |",
             "|---|---|---|---|---|---|"]
    for name, r in rows.items():
        lines.append(f"| {name} | {r['memories_per_1k']:.0f} | {r['store_mb_per_1k']:.2f} | "
                     f"{r['encode_s_per_1k']:.1f} | {r['search_ms_p50']:.2f} | {r['search_ms_p99']:.2f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(prog="python -m sam_model.bench.chunks", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--retriever", default="sam-general",
                    help="the encoder: an exported folder or a packaged retriever's name (default sam-general)")
    ap.add_argument("--data", default=CODING, help=f"log or transcript file to take events from (default {CODING})")
    ap.add_argument("--split", choices=("all", "train", "test"), default="test",
                    help="for a transcript file: its fixed split to read (default test, the held-out instances)")
    ap.add_argument("--events", type=int, default=500, help="events to store (the log's first N; default 500)")
    ap.add_argument("--queries", type=int, default=100, help="decision points to time searches for (default 100)")
    ap.add_argument("--size", type=int, default=Chunking.size, help=f"chunk size, characters (default {Chunking.size})")
    ap.add_argument("--overlap", type=int, default=Chunking.overlap,
                    help=f"chunk overlap, characters (default {Chunking.overlap})")
    ap.add_argument("--batch-size", type=int, default=64, help="encoding batch size (default 64)")
    ap.add_argument("--out", default=None, help="folder for chunks.json and chunks.md (default: print only)")
    args = ap.parse_args(argv)
    for flag in ("events", "queries", "batch_size"):
        if getattr(args, flag) < 1:
            ap.error(f"--{flag.replace('_', '-')} must be >= 1")
    chunking = Chunking(args.size, args.overlap)
    data = load_eval_data(args.data, "episode", options=SourceOptions(split=args.split))
    events = data.memories[: args.events]
    examples = [e for e in data.examples if e.cutoff <= len(events)][: args.queries]
    if not examples:
        ap.error(f"no decision point among the first {len(events)} events of {args.data}; take more --events")
    retriever = SAMRetriever.load(args.retriever)
    queries = np.asarray(retriever.encoder.encode_queries([e.state for e in examples], [e.observation for e in examples],
                                                          steps=[e.step for e in examples],
                                                          task_starts=[e.task_start for e in examples]), np.float32)
    chunks = chunk_records(events, chunking)
    print(f"{len(events)} events -> {describe(chunks)}")
    rows = {"whole": per_1k(measure(retriever, events, queries, False, args.batch_size), len(events)),
            "chunked": per_1k(measure(retriever, chunks, queries, True, args.batch_size), len(events))}
    table = markdown(rows, len(events), chunking)
    print(table)
    result = {"events": len(events), "chunking": chunking.to_dict(), "data": str(data.source),
              "retriever": args.retriever, "rows": rows}
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        atomic_write_text(out / "chunks.json", json.dumps(result, indent=2))
        atomic_write_text(out / "chunks.md", table + "\n")
    return result


if __name__ == "__main__":
    main()
