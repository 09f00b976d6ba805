"""``python evaluate.py``: the retriever and every baseline on the same queries, one report.

The steps: read the log into memories and decision points; rank every query's candidates
with each method; score rankings with torchmetrics; bootstrap MRR's and Recall@k's 95 % intervals over
conversations, and every --compare model's paired difference against the retriever; time queries one at a time;
run the diagnostics on the retriever; write report.json, report.md, per_query.jsonl and the figures.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from sam_model import tensorboard_log
from sam_model.data.chunks import Chunking, describe, fold_positions, visible_share
from sam_model.data.examples import Scope, check_scope
from sam_model.evaluation.data import ChunkedData, EvalData, chunk_eval_data, load_eval_data
from sam_model.evaluation.diagnostics import (
    distinctiveness,
    memory_utilisation,
    phase_label,
    projection_figure,
    sample_indices,
    save_figure,
    tsne_figure,
)
from sam_model.evaluation.methods import (
    BASELINES,
    USED_SUFFIXES,
    Method,
    StoreMethod,
    make_baselines,
    retriever_methods,
)
from sam_model.evaluation.metrics import (
    grounding,
    intervals,
    latency_stats,
    mean_metrics,
    metric_ks,
    per_phase,
    per_query_metrics,
    relevant_positions,
)
from sam_model.evaluation.options import Once, add_log_options, add_search_options, read_log
from sam_model.evaluation.ranking import tie_jitter
from sam_model.evaluation.report import (
    chunking_line,
    per_query_lines,
    print_table,
    to_markdown,
    unchunked_line,
    write_reports,
)
from sam_model.io import SAMFileError, atomic_write_text, check_replaceable, cli_name
from sam_model.limits import MAX_K, int_option
from sam_model.progress import progress_bar

if TYPE_CHECKING:
    from sam_model.models.text_encoder import TokenCount

UTILISATION_K = 10  # memory utilisation looks at the top 10, the largest k every report has
CHUNK_DEPTH = 8  # chunks ranked per event kept: a chunked search ranks depth * 8 chunks, then folds


def deepen(method: Method, search: EvalData, scope: Scope, ranked: list[np.ndarray], parents: Sequence[int],
           depth: int, searched: int, jitter: np.ndarray) -> list[np.ndarray]:
    """Chunk rankings that hold at least ``depth`` distinct events, or every candidate: a query whose ``searched``
    chunks came from fewer events (an episode of long tool results, ~100 chunks each) is ranked again, four times
    deeper each round, up to MAX_K. Why: folded, a cut ranking held 5-6 events where the report said 100, and a
    label at event rank 8 counted as never found (MRR and recall undercounted exactly where chunking matters)."""
    def short(r: np.ndarray, d: int) -> bool:
        return len(r) >= d and len({parents[int(j)] for j in r}) < depth

    ranked, d = list(ranked), searched
    need = [i for i, r in enumerate(ranked) if short(r, d)]
    while need and d < min(MAX_K, len(search.memories)):
        d = min(MAX_K, len(search.memories), d * 4)
        again = method.rank(dataclasses.replace(search, examples=[search.examples[i] for i in need]), scope, d,
                            jitter)
        for i, r in zip(need, again, strict=True):
            ranked[i] = r
        need = [i for i in need if short(ranked[i], d)]
    return ranked


def compare_chunks(data: EvalData, chunking: Chunking, tokens: TokenCount, main: ChunkedData, compare: dict,
                   say) -> dict[str, tuple[ChunkedData, TokenCount]]:
    """Each ``--compare`` model's chunks and token count when windows are sized in tokens: cut by its own memory
    encoder's tokenizer and max_length, as its own store would cut them (the retriever's count gave a model with
    another tokenizer windows it reads past or cuts short). Models that count alike share one set of chunks.
    Paired differences stay sound: every ranking folds to the same events, so each decision is scored on the
    same candidates and labels, whatever chunks ranked them. Character windows are the same for every model."""
    if chunking.tokens is None:
        return {}
    sets = {_count_key(tokens): main}
    out = {}
    for name, other in compare.items():
        count = getattr(getattr(other, "encoder", other), "memory_tokens", None)
        if count is None:
            raise ValueError(f"--chunking tokens:{chunking.tokens}: --compare {name} has no memory encoder "
                             "tokenizer to size its chunks by; chunk by SIZE:OVERLAP characters to compare it")
        chunking.check_encoder(count.max_length, f"--chunking (--compare {name})")
        key = _count_key(count)
        if key not in sets:
            sets[key] = chunk_eval_data(data, chunking, count)
            say(f"  chunked for {name}'s tokenizer: {describe(sets[key].search.memories)}")
        out[name] = (sets[key], count)
    return out


def _count_key(count) -> tuple:
    """What decides a token count's windows: its tokenizer (a fast one's whole definition, vocabulary and special
    tokens; else the object itself) and max_length."""
    tok = getattr(count, "tokenizer", None)
    backend = getattr(tok, "backend_tokenizer", None)
    return (backend.to_str() if backend is not None else id(tok if tok is not None else count), count.max_length)


def chunk_search(data: EvalData, chunking: Chunking | None, tokens: TokenCount | None,
                 depth: int) -> tuple[ChunkedData | None, int]:
    """The chunks every method searches (None: whole memories, ``chunking`` None) and how deep a search ranks
    them (chunks of one event crowd a ranking: CHUNK_DEPTH times ``depth``); ``tokens``: the retriever's memory
    encoder's count, which sizes windows given in tokens."""
    if chunking is None:
        return None, depth
    if chunking.tokens is not None:
        if tokens is None:
            raise ValueError(f"chunking by tokens ({chunking.tokens}) sizes chunks by the retriever's memory "
                             "encoder's tokenizer, and no SAM retriever was given: give --retriever, or chunk "
                             "by SIZE:OVERLAP characters")
        chunking.check_encoder(tokens.max_length, "--chunking")
    return chunk_eval_data(data, chunking, tokens), min(MAX_K, depth * CHUNK_DEPTH)


def rank_events(method: Method, where: EvalData, folds: Sequence[int] | None, scope: Scope, depth: int,
                search_depth: int, jitter: np.ndarray) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Every query of ``where`` ranked by ``method``: the events' rankings (what the metrics score) and what was
    ranked (chunk positions, the best chunk of each event, where ``folds`` maps chunks to events; else the
    same rankings)."""
    ranked = method.rank(where, scope, search_depth, jitter)
    if folds is None:
        return ranked, ranked
    ranked = deepen(method, where, scope, ranked, folds, depth, search_depth, jitter)
    folded = [fold_positions(r, folds, depth) for r in ranked]
    return ([np.array(e, dtype=np.int64) for e, _ in folded],
            [np.array(b, dtype=np.int64) for _, b in folded])  # the best chunk of each event hit


def score_retriever(retriever, data: EvalData, *, scope: str = "episode", ks: Sequence[int] = (1, 5, 10),
                    depth: int = 100, seed: int = 0, batch_size: int = 64,
                    chunking: Chunking | None = None, used_order: str | None = None) -> dict[str, float]:
    """The mean metrics (mrr, recall@k, ...) of ``retriever`` on ``data``, as :func:`evaluate` reports them for
    ``sam`` with the same arguments: the same search through its store, chunks, folding, depth and tie-break
    jitter, and nothing else (no baselines, timing, diagnostics or files). A choice made with it (a WiSE-FT weight,
    sam_model.interpolate --choose-on) is made on the number the benchmark prints. ``used_order``: every search's
    (MemoryStore.search_vector's; None: the store's own, as deployed)."""
    return score_orders(retriever, data, [used_order], scope=scope, ks=ks, depth=depth, seed=seed,
                        batch_size=batch_size, chunking=chunking)[used_order]


def score_orders(retriever, data: EvalData, orders: Sequence[str | None], *, scope: str = "episode",
                 ks: Sequence[int] = (1, 5, 10), depth: int = 100, seed: int = 0, batch_size: int = 64,
                 chunking: Chunking | None = None) -> dict[str | None, dict[str, float]]:
    """:func:`score_settings` for each store ``used_order`` of ``orders`` ("off", "model", "latest"; None: the
    store's own) at the store's own lexical weight, keyed by the order: evaluate's ``sam`` / ``sam+used`` /
    ``sam+used-latest`` rows (one code path)."""
    scores = score_settings(retriever, data, [(o, None) for o in orders], scope=scope, ks=ks, depth=depth,
                            seed=seed, batch_size=batch_size, chunking=chunking)
    return {order: scores[(order, None)] for order in orders}


def score_settings(retriever, data: EvalData, settings: Sequence[tuple[str | None, float | None]], *,
                   scope: str = "episode", ks: Sequence[int] = (1, 5, 10), depth: int = 100, seed: int = 0,
                   batch_size: int = 64, chunking: Chunking | None = None
                   ) -> dict[tuple[str | None, float | None], dict[str, float]]:
    """:func:`score_retriever` for each (store ``used_order``, store ``lexical`` weight) of ``settings`` (None:
    the store's own), keyed by it: one replay of the log, its memory and query vectors encoded once, each setting's
    searches through the store with that setting, as a store whose config.json sets it searches (the lexical weight
    only re-ranks, so it needs no new vectors; sam_model.choose_order chooses a store's settings by it)."""
    scope = check_scope(scope)
    ks = metric_ks(ks)
    depth = max(depth, max(ks))
    tokens = getattr(getattr(retriever, "encoder", retriever), "memory_tokens", None)
    chunked, search_depth = chunk_search(data, chunking, tokens, depth)
    search, parents = (chunked.search, chunked.parents) if chunked is not None else (data, None)
    base = retriever_methods("sam", retriever, batch_size, progress=False)[0]  # its caller says a line a score
    jitter = tie_jitter(len(search.memories), seed)
    own = base.replay.config
    out: dict[tuple[str | None, float | None], dict[str, float]] = {}
    try:
        for order, lexical in settings:
            base.replay.config = own if lexical is None else own.with_lexical(float(lexical))
            method = base if order is None else StoreMethod(base.name, base.replay, base.rerank, used_order=order)
            events, _ = rank_events(method, search, parents, scope, depth, search_depth, jitter)
            out[(order, lexical)] = mean_metrics(per_query_metrics(events, relevant_positions(data), ks, depth))
    finally:
        base.replay.config = own
    return out


def few_decisions_warning(data: EvalData) -> str | None:
    """One warning line when ``data`` measures fewer decision points than fit wants of its validation
    (:data:`sam_model.training.split_report.MIN_VAL_DECISIONS`), else None: one decision ranked 2nd instead of 1st
    moves an MRR by 0.5 / n, and an interval over a few conversations says little (two conversations that both
    rank first give 1.000 [1.000, 1.000]), yet the table looks as certain as one over hundreds."""
    from sam_model.training import split_report

    n = len(data.examples)
    if n >= split_report.MIN_VAL_DECISIONS:
        return None
    conversations = len({ex.episode_id for ex in data.examples})
    return (f"warning: only {n} decision points ({conversations} conversations) are measured: an MRR moves by "
            f"{0.5 / max(n, 1):.3f} when one of them ranks 2nd instead of 1st, and an interval over {conversations} "
            f"conversations says little; measure more conversations (or fewer left out by --max-queries) "
            f"({split_report.MIN_VAL_DECISIONS} or more decision points)")


def evaluate(data: str | os.PathLike | EvalData, out_dir: str | os.PathLike, retriever=None, *,
             scope: str = "episode", ks: Sequence[int] = (1, 5, 10), baselines: Sequence[str] = BASELINES,
             compare: dict | None = None, tensorboard: str | os.PathLike | None = None,
             max_queries: int | None = None, depth: int = 100, latency_queries: int = 200,
             tsne_points: int = 2000, seed: int = 0, bert_path: str | None = None, device: str | None = None,
             batch_size: int = 64, skip_bad_lines: bool = False, quiet: bool = False,
             text_cache: str | os.PathLike | None = None, chunking: Chunking | None = None,
             plus_used: bool = False) -> dict:
    """Run the benchmark and write the report; returns the report dict (the content of report.json).

    ``retriever`` and the values of ``compare`` are retriever objects (see methods.Retriever);
    the retriever is reported as ``sam`` and is the one the diagnostics look at. ``text_cache``: the on-disk
    frozen-BERT vector cache folder that training fills (sam_model.models.text_encoder), read before ranking
    and extended after it, so a re-run does not encode the same memories again.

    ``chunking``: every method searches the chunks of long memories (sam_model.data.chunks) and its ranking is
    folded to events (an event ranks where its best chunk does: found when one of its chunks is); the metrics
    are the events', grounding@k reads the best chunks' texts, and per_query.jsonl says which chunk. Windows in
    tokens are the retriever's memory encoder's (the baselines search those too); each ``compare`` model's are
    its own encoder's (:func:`compare_chunks`).

    ``plus_used``: also ``sam+used``, ``sam+used-latest`` and ``sam+used-needed`` (``NAME+used``, ... for each
    ``compare`` model): its ranking with the memories the task's earlier calls took values from (``used-first``'s set)
    first, in its order or by their latest use, or by it but only those that supplied a slot the call needs, searched
    through the store's ``used_order`` (methods.StoreMethod.ordered).
    """
    scope = check_scope(scope)
    ks = metric_ks(ks)
    depth = max(depth, max(ks))
    out = Path(out_dir)
    if not isinstance(data, EvalData):
        data = load_eval_data(data, scope, max_queries, seed, skip_bad_lines, progress=not quiet)
    say = (lambda *a: None) if quiet else (lambda *a: print(*a, file=sys.stderr))
    say(f"evaluating {len(data.examples)} decision points over {len(data.memories)} memories "
        f"(scope {scope}) from {data.source}")
    if (few := few_decisions_warning(data)) is not None:
        say(few)
    search, parents = data, None
    own: dict[str, tuple[ChunkedData, TokenCount]] = {}  # --compare models with token windows of their own
    tokens = getattr(getattr(retriever, "encoder", retriever), "memory_tokens", None)  # its tokenizer's count
    chunked, search_depth = chunk_search(data, chunking, tokens, depth)
    if chunked is not None:  # methods rank chunks; rankings are folded back to events below
        search, parents = chunked.search, chunked.parents
        say(f"  {chunking_line({**chunking.to_dict(), **describe(search.memories)})}")
        own = compare_chunks(data, chunking, tokens, chunked, compare or {}, say)
    searched = {name: (c.search, c.parents) for name, (c, _) in own.items()}  # what each of them searches

    methods: list[Method] = []
    if retriever is not None:  # with what the query-time re-rank adds, on the same vectors
        methods += retriever_methods("sam", retriever, batch_size, index_only="sam-index-only")
    methods += make_baselines(list(baselines), search, bert_path, device, batch_size, text_cache)
    for name, other in (compare or {}).items():
        methods += retriever_methods(name, other, batch_size)
    if plus_used:
        methods += [m.ordered(order) for order in USED_SUFFIXES for m in list(methods)
                    if isinstance(m, StoreMethod) and m.rerank and m.used_order is None]
        taken = [n for n, k in Counter(m.name for m in methods).items()
                 if k > 1 and n.endswith(tuple(USED_SUFFIXES.values()))]
        if taken:  # named: the whole list of methods hid which one it was
            raise ValueError(f"plus_used: {', '.join(map(repr, taken))} would name two methods, a --compare model and "
                             f"the +used ranking of {', '.join(repr(_unsuffixed(n)) for n in taken)}; rename "
                             f"that --compare model (the methods: {', '.join(m.name for m in methods)})")
    if taken := [n for n, k in Counter(m.name for m in methods).items() if k > 1]:  # one name, one column of results
        raise ValueError(f"{', '.join(map(repr, taken))} would name two methods (a --compare model named as sam, "
                         f"sam-index-only or a baseline is): rename that --compare model (the methods: "
                         f"{', '.join(m.name for m in methods)})")
    if not methods:
        raise ValueError("nothing to evaluate: give a retriever, a baseline or a --compare retriever")

    caches = text_caches([retriever, *(compare or {}).values()], text_cache)
    jitters = {id(s): tie_jitter(len(s.memories), seed) for s, _ in [(search, parents), *searched.values()]}
    relevant = relevant_positions(data)
    timed = sample_indices(len(data.examples), latency_queries, seed)
    results, per_query, rankings, chunks = {}, {}, {}, {}
    for m in methods:  # rank every method before any timing: timing empties the text caches they share
        t0 = time.perf_counter()
        where, folds = searched.get(searches_as(m), (search, parents))  # a --compare model's own token windows
        rankings[m.name], ranked = rank_events(m, where, folds, scope, depth, search_depth, jitters[id(where)])
        if folds is not None:
            chunks[m.name] = [[where.memories[int(j)].chunk for j in b] for b in ranked]
        per_query[m.name] = per_query_metrics(rankings[m.name], relevant, ks, depth)
        results[m.name] = mean_metrics(per_query[m.name])
        ground = grounding(ranked, where, 5)
        if ground is not None:
            results[m.name]["grounding@5"] = ground
        say(f"  {m.name}: mrr {results[m.name]['mrr']:.3f}, recall@5 {results[m.name]['recall@5']:.3f} "
            f"({time.perf_counter() - t0:.1f} s)")
    for enc, path in caches:
        enc.save_cache(path)
    for m in methods:
        where = searched.get(searches_as(m), (search, parents))[0]
        jitter = jitters[id(where)]
        m.time_query(where, int(timed[0]), scope, search_depth, jitter)  # warm-up: lazy loads, caches
        seconds = [m.time_query(where, int(i), scope, search_depth, jitter)
                   for i in progress_bar(timed, desc=f"  timing {m.name}", unit="q", leave=False, disable=quiet)]
        results[m.name] |= latency_stats(seconds)

    phases = [ex.state.phase for ex in data.examples]
    diagnostics: dict = {"figures": {}, "notes": [], "memory_utilisation": {
        name: memory_utilisation(r, relevant, data, scope, UTILISATION_K) for name, r in rankings.items()}}
    writer = tensorboard_log.writer(tensorboard, out.absolute().name or "evaluate")  # LOGDIR/<out's name>_N
    try:  # closed, its events written, also when a diagnostic or a report fails
        if retriever is not None:
            _retriever_diagnostics(retriever, data, out, diagnostics, writer, tsne_points, seed, say)
        else:
            diagnostics["notes"].append("no retriever given: state diagnostics skipped")

        report = {
            "data": str(data.source), "n_queries": len(data.examples), "scope": scope,
            "methods": results, "per_phase": per_phase(per_query, phases), "diagnostics": diagnostics,
            "n_memories": len(data.memories), "n_decision_points_in_log": data.n_decision_points,
            "k": list(ks), "depth": depth, "latency_queries": int(len(timed)), "seed": seed,
            "intervals": intervals(per_query, [ex.episode_id for ex in data.examples], compared=list(compare or {})),
        }
        if chunking is not None:
            report["chunking"] = {**chunking.to_dict(), **describe(search.memories), "search_depth": search_depth}
            if tokens is not None:  # the share of the events' text the retriever's encoder reads in some chunk
                report["chunking"]["visible"] = visible_share(search.memories, tokens.read)
            if own:  # each --compare model's token windows, cut and read by its own encoder
                report["chunking"]["compare"] = {
                    name: {**describe(c.search.memories), "visible": visible_share(c.search.memories, count.read)}
                    for name, (c, count) in own.items()}
        store_chunking = getattr(getattr(getattr(retriever, "store", None), "config", None), "chunking", None)
        if chunking is None and store_chunking:
            report["retriever_chunking"] = dict(store_chunking)
            say(f"  {unchunked_line(store_chunking)}")
        write_reports(report, out)
        atomic_write_text(out / "per_query.jsonl", per_query_lines(data, rankings, per_query, chunks=chunks))
        if writer is not None:
            _log_scalars(writer, report)
            writer.add_text("report", to_markdown(report))
    finally:
        if writer is not None:
            writer.close()
    if not quiet:
        print_table(report)
        wrote = [out / name for name in ("report.json", "report.md", "per_query.jsonl",
                                         *diagnostics["figures"].values())]  # the plots too: the README promises them
        print(f"wrote {', '.join(map(str, wrote[:-1]))} and {wrote[-1]}")
    return report


def _unsuffixed(name: str) -> str:
    """The retriever a ``NAME+used`` or ``NAME+used-latest`` method's name names."""
    for suffix in sorted(USED_SUFFIXES.values(), key=len, reverse=True):
        if name.endswith(suffix):
            return name.removesuffix(suffix)
    return name


def searches_as(method: Method) -> str:
    """The method whose memories ``method`` searches: its own, or (``NAME+used``) its retriever's."""
    return getattr(method, "searches_as", method.name)


def text_caches(retrievers, folder) -> list:
    """(text encoder, cache file) of every frozen, caching BERT of the retrievers, loaded from ``folder``."""
    if not folder:
        return []
    from sam_model.models.text_encoder import TextEncoder

    out, seen = [], set()
    for r in retrievers:
        net = getattr(r, "net", None)
        for module in net.modules() if net is not None else ():
            if isinstance(module, TextEncoder) and module.use_cache and id(module) not in seen:
                seen.add(id(module))
                path = module.cache_file(folder)
                module.limit_cache(None)  # a batch job: hold the whole file, not a loaded retriever's recent few
                module.load_cache(path)
                out.append((module, path))
    return out


def _log_scalars(writer, report: dict) -> None:
    for method, values in report["methods"].items():
        for name, v in values.items():
            writer.add_scalar(f"eval/{method}/{name}", v)


def _retriever_diagnostics(retriever, data: EvalData, out: Path, diag: dict, writer, tsne_points: int,
                           seed: int, say) -> None:
    """t-SNE and distinctiveness of state vectors, projection heatmap: for a retriever that exposes them."""
    idx = sample_indices(len(data.examples), tsne_points, seed)
    states = [data.examples[i].state for i in idx]
    observations = [data.examples[i].observation for i in idx]
    phases = [data.examples[i].state.phase for i in idx]
    if hasattr(retriever, "encode_states"):
        say("diagnostics: state embeddings, t-SNE")
        vectors = np.asarray(retriever.encode_states(states, observations), dtype=np.float32)
        diag["state_distinctiveness"] = distinctiveness(vectors, phases)
        fig, _ = tsne_figure(vectors, phases, seed)
        if fig is not None:
            save_figure(fig, out / "tsne_states.png")
            diag["figures"]["tsne_states"] = "tsne_states.png"
            if writer is not None:
                writer.add_figure("diagnostics/tsne_states", fig)
                writer.add_embedding(vectors, metadata=[phase_label(p) for p in phases], tag="state_embeddings")
        else:
            diag["notes"].append(f"t-SNE skipped: only {len(vectors)} states")
    else:
        diag["notes"].append("the retriever has no encode_states: t-SNE and distinctiveness skipped")
    if hasattr(retriever, "projection_weights"):
        weights = np.asarray(retriever.projection_weights(states, observations), dtype=np.float32)
        if weights.ndim == 2 and len(weights) == len(states):
            fig, diag["projection_weights"] = projection_figure(weights, phases)
            save_figure(fig, out / "projection_by_phase.png")
            diag["figures"]["projection_by_phase"] = "projection_by_phase.png"
            if writer is not None:
                writer.add_figure("diagnostics/projection_by_phase", fig)
        else:
            diag["notes"].append(f"projection_weights returned shape {weights.shape}; heatmap skipped")
    else:
        diag["notes"].append("the retriever has no projection_weights: heatmap skipped")
    import matplotlib.pyplot as plt

    plt.close("all")


def _parse_ks(text: str) -> list[int]:
    try:
        ks = [int(t) for t in text.split(",") if t.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--k must be comma-separated integers, got {text!r}") from None
    if not ks or any(not 1 <= k <= MAX_K for k in ks):  # a search ranks at most MAX_K: above, it failed mid-run
        raise argparse.ArgumentTypeError(f"--k needs integers from 1 to {MAX_K}, got {text!r}")
    return ks


def _parse_baselines(text: str) -> list[str]:
    names = [t.strip() for t in text.split(",") if t.strip() and t.strip() != "none"]
    bad = [n for n in names if n not in BASELINES]
    if bad:
        raise argparse.ArgumentTypeError(f"unknown baseline(s) {bad}; choose from {', '.join(BASELINES)} or none")
    return list(dict.fromkeys(names))


def _parse_compare(items: Sequence[str], parser: argparse.ArgumentParser) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            parser.error(f"--compare takes NAME=DIR, got {item!r}")
        if name in ("sam", "sam-index-only", *BASELINES) or name in out:  # sam-index-only: the re-rank ablation
            parser.error(f"--compare name {name!r} is taken; pick another")
        out[name] = path
    return out


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=cli_name("python evaluate.py"),
        description="Benchmark a trained SAM retriever against recency, the task first then recency, BM25 and "
                    "untrained MiniLM baselines on the decision points of an agent log, and run the tuning "
                    "diagnostics (t-SNE of state embeddings, state distinctiveness, projection heatmap, memory "
                    "utilisation, per-phase metrics). Writes OUT_DIR/report.json, OUT_DIR/report.md, "
                    "OUT_DIR/per_query.jsonl (every decision point: each method's reciprocal rank, recall@5 and top ids) and PNG figures.")
    p.add_argument("--retriever", required=True, metavar="DIR|CKPT",
                   help="the retriever under test (reported as 'sam'): an exported folder, a packaged one's name "
                        "(sam-general, the default model) or a Lightning .ckpt")
    p.add_argument("--data", required=True, metavar="LOG", action=Once,
                   help="agent log (.jsonl or .jsonl.gz) with labelled decision points, a tool-call transcript file "
                        "in any format `sam-data formats` lists (OpenAI chat, tau-bench, Anthropic, Gemini, Bedrock "
                        "Converse, ...; state and labels derived by sam_model.data.transcripts), a folder of SWE-agent "
                        "or OpenHands trajectories, a session folder (Strands Agents, OpenHands), or an SGD split "
                        "folder")
    add_log_options(p)
    p.add_argument("--out", required=True, metavar="OUT_DIR",
                   help="folder for report.json, report.md, per_query.jsonl and PNGs")
    p.add_argument("--k", type=_parse_ks, default=[1, 5, 10], metavar="K1,K2",
                   help="cut-offs for recall@k, precision@k and coverage@k (default 1,5,10; 1, 5 and 10 are "
                        "always reported)")
    p.add_argument("--baselines", type=_parse_baselines, default=list(BASELINES), metavar="NAMES",
                   help=f"comma-separated baselines to run, or none (default: {','.join(BASELINES)})")
    p.add_argument("--compare", action="extend", nargs="+", default=[], metavar="NAME=DIR",
                   help="other exported retrievers (folder or .ckpt) to report as NAME, e.g. the content-only "
                        "ablation: --compare a=DIR b=DIR, or --compare repeated; each also gets its paired difference "
                        "NAME - sam with a 95%% interval over conversations")
    tensorboard_log.add_option(p, "the metrics, the t-SNE figure, the state embeddings (projector) and the "
                                  "projection heatmap")
    p.add_argument("--latency-queries", type=int_option(1, 2**31), default=200, metavar="N",
                   help="queries timed one at a time (encode + score) for latency p50/p99 (default 200)")
    p.add_argument("--tsne-points", type=int_option(1, 2**31), default=2000, metavar="N",
                   help="at most N decision-point states in the t-SNE and distinctiveness (default 2000)")
    p.add_argument("--bert", default=None, metavar="DIR",
                   help="BERT folder for the dense baselines (default: the packaged all-MiniLM-L6-v2)")
    add_search_options(p)
    p.add_argument("--plus-used", action="store_true",
                   help="also rank each SAM retriever's candidates with the memories the task's earlier calls took "
                        "values from first, in the retriever's own order (methods sam+used, NAME+used) and by their "
                        "latest use (sam+used-latest, NAME+used-latest), and by it but only those that supplied a "
                        "slot the call needs (sam+used-needed, NAME+used-needed), through the store's used_order "
                        "option (default off)")
    p.add_argument("--card", default=None, metavar="DIR",
                   help="an export folder whose model card (README.md) gets this evaluation's table (replacing an "
                        "earlier one); usually the --retriever folder")
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    compare_paths = _parse_compare(args.compare, parser)
    if args.card and not Path(args.card).is_dir():
        parser.error(f"--card {args.card}: not a folder (give the exported retriever's folder)")
    try:  # before the evaluation runs: a wrong --card or --out fails in a second, and touches nothing
        if args.card:
            from sam_model.card import check_card

            check_card(args.card)
        if Path(args.out).is_dir():
            check_replaceable(Path(args.out), "report.json", ("methods",))  # nor a folder of other files
    except SAMFileError as exc:
        parser.error(str(exc).replace("save to a new or empty folder", "give a new or empty folder, or an earlier "
                                                                       "evaluation's"))
    for flag, folder in (("--out", args.out), ("--tensorboard", args.tensorboard)):  # before the evaluation runs
        if folder and (problem := tensorboard_log.unwritable(Path(folder))):
            parser.error(f"{flag} {folder}: {problem}; give a folder to write into")
    try:
        # Check the log before the (slow) model loads, so a typo fails in a second.
        data = read_log(args.data, args)
        from sam_model.retriever import SAMRetriever

        retriever = SAMRetriever.load(args.retriever, args.device)
        compare = {name: SAMRetriever.load(path, args.device) for name, path in compare_paths.items()}
        from sam_model.evaluation.seen import trained_on_warning

        for name, model in {"sam": retriever, **compare}.items():  # figures that look held-out and are not
            if (seen := trained_on_warning(name, model, args.data, args.split)) is not None:
                print(seen, file=sys.stderr)
        report = evaluate(data, args.out, retriever, scope=args.scope, ks=args.k, baselines=args.baselines,
                          compare=compare, tensorboard=args.tensorboard, depth=args.depth,
                          latency_queries=args.latency_queries, tsne_points=args.tsne_points, seed=args.seed,
                          bert_path=args.bert, device=args.device, batch_size=args.batch_size,
                          text_cache=args.text_cache, chunking=args.chunking, plus_used=args.plus_used)
        if args.card:
            from sam_model.card import add_evaluation

            print(f"model card: {add_evaluation(args.card, report)}")
    except SAMFileError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


def run(argv: list[str] | None = None) -> int:
    """evaluate.py and ``sam-eval``: any bad input (not only a SAMFileError) ends in one ``error: ...`` line;
    ``--traceback`` or SAM_TRACEBACK=1 shows the full trace."""
    from sam_model.io import run_cli

    return run_cli(main, argv)
