"""What the adapters cost: every way to search SAM memory against a bare ``MemoryStore.search``, one query at a time.

    python -m sam_model.bench.adapters [--retriever checkpoints/demo/export] [--episodes 20] [--rounds 5]

All paths hold the same memories (held-out demo episodes, written through each path's own API) and answer the
same decision points with the same state, observation, step and task start; they differ only in the adapter
around the one store search: ``SAMRetriever.search`` (delegation), ``SAMMemory.retrieve`` (the memory bank: its
tiers and hit objects), ``ScopedMemory.search`` (scopes, Mem0-style result dicts) and, with the [langchain] extra,
``SAMLangChainRetriever.invoke`` (callbacks, Documents) with the state given in the run's config, and with the
state rebuilt from chat messages (the transcript importer's rules over the conversation so far). Each query is
timed in every path in a rotating order, ``--rounds`` times; the figure is the median latency and the median of
the per-query overheads over the bare search. ``cold``: the frozen-BERT text cache is emptied before each query, as
for a new observation (what an agent sees); ``warm``: texts already cached (the encoder costs least, so the
relative overhead is largest). Default encoder: the packaged MiniLM under untrained heads (an encoder of the
real size). Prints a markdown table; ``--json`` keeps the figures.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable

import faiss
import torch

from sam_model.data.examples import episode_memories
from sam_model.data.lives import task_starts
from sam_model.data.reader import Episode
from sam_model.data.schema import parse_event
from sam_model.data.synthetic import generate_episodes
from sam_model.io import atomic_write_text
from sam_model.memory import MemoryConfig, SAMMemory, ScopedMemory
from sam_model.store import MemoryStore, encoder_of, store_config_of
from sam_model.storeconfig import StoreConfig


def load(retriever: str | None):
    """An exported retriever, or MiniLM under untrained heads (with the demo's re-rank settings)."""
    from sam_model.retriever import SAMRetriever

    if retriever:
        return SAMRetriever.load(retriever, device="cpu")
    from sam_model.models.sam import SAMConfig, SAMNet

    torch.manual_seed(0)
    return SAMRetriever(SAMNet(SAMConfig(time_features=16)).to("cpu"),
                        StoreConfig(slot_match=0.3, provenance=True, source_kinds=["user", "system"]))


def demo_episodes(n: int, seed: int) -> list[Episode]:
    eps = []
    for raw in generate_episodes(n, seed=seed):
        events = tuple(parse_event(d, "<demo>", i + 1) for i, d in enumerate(raw))
        eps.append(Episode(events[0].episode_id, events))
    return eps


def paths(model, episodes: list[Episode], k: int) -> dict[str, Callable]:
    """name -> search(event, task_start) over the same memories (everything before each query's event)."""
    encoder, cfg = encoder_of(model), store_config_of(model)
    bare = MemoryStore(encoder, cfg)
    retr = type(model)(model.net, cfg) if hasattr(model, "net") else None
    bank = SAMMemory(model, config=MemoryConfig(half_life=0.0, suppress=1.0, importance_weight=0.0,
                                                superseded_factor=1.0, expand=False), k=k)
    scoped = ScopedMemory(model, cfg, k=k)
    for ep in episodes:
        recs = episode_memories(ep)
        bare.add(recs)
        if retr is not None:
            retr.add_memories(recs)
        bank.begin(ep.episode_id)
        for e in ep.events:
            bank.observe(e)
        scoped.add(list(ep.events), run_id=ep.episode_id)
    out: dict[str, Callable] = {
        "MemoryStore.search (bare)": lambda e, t: bare.search(e.state, e.text, k, episode_id=e.episode_id, step=e.step,
                                                              task_start=t)}
    if retr is not None:
        out["SAMRetriever.search"] = lambda e, t: retr.search(e.state, e.text, k, episode_id=e.episode_id,
                                                              step=e.step, task_start=t)

    def memory(e, t):
        bank._enter(e.episode_id)
        return bank.retrieve(e.state, e.text, k, step=e.step, task_start=t)

    out["SAMMemory.retrieve"] = memory
    out["ScopedMemory.search"] = lambda e, t: scoped.search(e.text, e.state, run_id=e.episode_id, k=k, step=e.step,
                                                            task_start=t)
    try:
        from sam_model.integrations.langchain import SAMLangChainRetriever
    except ImportError:
        return out
    lc = SAMLangChainRetriever(memory=scoped, k=k)
    out["SAMLangChainRetriever.invoke (state in config)"] = lambda e, t: lc.invoke(
        e.text, {"configurable": {"sam_state": e.state, "thread_id": e.episode_id, "sam_step": e.step,
                                  "sam_task_start": t}})  # at the query's step, as every path: the same candidates
    return out


def measure(model, episodes: list[Episode], k: int, rounds: int, cold: bool) -> dict[str, dict[str, float]]:
    fns = paths(model, episodes, k)
    queries = [(e, s) for ep in episodes for e, s in zip(ep.events, task_starts(ep.events)) if e.is_decision_point]
    names = list(fns)
    times: dict[str, list[float]] = {n: [] for n in names}
    clear = getattr(encoder_of(model), "clear_cache", lambda: None)
    for r in range(rounds):
        for j, (e, start) in enumerate(queries):
            order = names[(j + r) % len(names):] + names[:(j + r) % len(names)]
            for n in order:
                if cold:
                    clear()
                else:
                    fns[n](e, start)  # fill the cache for this query
                t0 = time.perf_counter()
                fns[n](e, start)
                times[n].append(time.perf_counter() - t0)
    base = times[names[0]]
    return {n: {"p50_ms": 1000 * statistics.median(ts),
                "overhead_pct": 100 * statistics.median([t / b - 1 for t, b in zip(ts, base)])}
            for n, ts in times.items()}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m sam_model.bench.adapters", description=__doc__.split("\n\n")[0])
    p.add_argument("--retriever", default=None, metavar="DIR", help="an exported retriever (default: MiniLM, "
                                                                     "untrained heads)")
    p.add_argument("--episodes", type=int, default=20, help="held-out demo episodes in memory (default 20)")
    p.add_argument("--rounds", type=int, default=3, help="times each decision point is timed per path (default 3)")
    p.add_argument("--k", type=int, default=5, help="memories per search (default 5)")
    p.add_argument("--threads", type=int, default=1, help="torch and FAISS threads (default 1: one query at a time)")
    p.add_argument("--json", default=None, metavar="FILE", help="also write the figures here")
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    faiss.omp_set_num_threads(args.threads)
    model = load(args.retriever)
    episodes = demo_episodes(args.episodes, seed=1)
    report = {"cold": measure(model, episodes, args.k, args.rounds, True),
              "warm": measure(model, episodes, args.k, args.rounds, False),
              "memories": sum(len(ep.events) for ep in episodes),
              "queries": sum(len(ep.decision_points) for ep in episodes), "k": args.k, "threads": args.threads}
    print(f"{report['queries']} decision points over {report['memories']} memories, k = {args.k}, batch 1, "
          f"{args.threads} thread(s)\n")
    print("| path | cold p50 ms | cold overhead | warm p50 ms | warm overhead |\n|---|---|---|---|---|")
    for n in report["cold"]:
        c, w = report["cold"][n], report["warm"][n]
        print(f"| {n} | {c['p50_ms']:.2f} | {c['overhead_pct']:+.1f}% | {w['p50_ms']:.2f} | {w['overhead_pct']:+.1f}% |")
    if args.json:
        atomic_write_text(args.json, json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
