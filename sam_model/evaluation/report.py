"""report.json, report.md and the console table: one set of numbers, three views."""

from __future__ import annotations

import json
import math
from pathlib import Path

from sam_model.data.chunks import Chunking
from sam_model.io import atomic_write_text
from sam_model.janus.stats import fmt_interval

MAX_PHASE_ROWS = 30


def _fmt(name: str, value) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, float):
        return f"{value:.2f}" if name.startswith("latency") else f"{value:.3f}"
    return str(value)


def metric_columns(methods: dict[str, dict[str, float]]) -> list[str]:
    first = next(iter(methods.values()), {})
    return list(first)


def _md_table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


METRIC_NOTES = {  # a column's family (its key up to '@') -> what it is, README 'What the figures are'
    "mrr": "MRR: 1 / the rank of the first useful memory (0 below the depth)",
    "recall": "recall@k (R@k): the share of the useful memories in the top k",
    "precision": "precision@k (P@k): the share of the top k that is useful",
    "ndcg": "nDCG@10: binary gains over the ideal ranking",
    "coverage": "coverage@k (Cov@k): 1 when every useful memory is in the top k",
    "grounding": "grounding@5 (Ground@5): the share of the needed argument values, over all decisions, that some "
                 "top-5 memory says word for word",
    "latency_ms_p50": "latency (p50 / p99 ms): one query at a time, encoded and searched",
}


def metric_legend(keys: list[str]) -> str:
    """What each metric of ``keys`` is, in one line: the console and report.md named Cov@5 and Ground@5 and nothing
    said what they were (grounding@5 was defined only in the README's tau-bench benchmark)."""
    notes = dict.fromkeys(METRIC_NOTES[k.split("@")[0]] for k in keys if k.split("@")[0] in METRIC_NOTES)
    return "; ".join(notes) + "." if notes else ""


def methods_table_rows(methods: dict[str, dict[str, float]]) -> tuple[list[str], list[list[str]]]:
    cols = metric_columns(methods)
    return ["method", *cols], [[m, *(_fmt(c, v.get(c)) for c in cols)] for m, v in methods.items()]


INTERVAL_TITLES = {"mrr": "MRR"}  # recall@k: "Recall@k"


def interval_title(key: str) -> str:
    return INTERVAL_TITLES.get(key, key.replace("recall", "Recall"))


def interval_cell(entry: dict, signed: bool = False) -> str:
    """'0.512 [0.480, 0.545]' from a report.json interval entry, or '0.512 (no interval)' (one conversation)."""
    lo, hi = entry["ci"] or (None, None)
    return fmt_interval((entry["mean"], lo, hi), signed)


def interval_note(iv: dict) -> str:
    """What the intervals are, in one sentence (report.md, the console, the model card)."""
    n = iv["n_conversations"]
    if n < 2:
        return "One conversation: no interval (a conversation is the unit an interval resamples)."
    return (f"Each cell is mean [low, high]: the {round(100 * iv['level'])} % bootstrap interval over the {n} "
            f"conversations (each drawn with all its decisions; {iv['n_boot']:,} draws, seed {iv['seed']}). A paired "
            "difference A − B subtracts B's figure from A's on the same decisions; one whose interval holds or "
            "touches 0 is no difference.")


def interval_rows(iv: dict, keys: list[str] | None = None) -> tuple[list[str], list[list[str]], list[list[str]]]:
    """(header, method rows, paired-difference rows 'a − b') of the report's intervals, for ``keys`` (default
    all)."""
    keys = [k for k in iv["metrics"] if keys is None or k in keys]
    rows = [[m, *(interval_cell(v[k]) for k in keys)] for m, v in iv["methods"].items()]
    diffs = [[f"{p['a']} − {p['b']}", *(interval_cell(p[k], signed=True) for k in keys)] for p in iv["paired"]]
    return [interval_title(k) for k in keys], rows, diffs


def _intervals_md(report: dict) -> list[str]:
    iv = report.get("intervals")
    if not iv:  # a report.json written before the intervals
        return []
    header, rows, diffs = interval_rows(iv)
    out = ["", "## 95 % intervals over conversations", "", interval_note(iv), "", _md_table(["method", *header], rows)]
    if diffs:
        out += ["", "### Paired differences (decision by decision)", "", _md_table(["difference", *header], diffs)]
    return out


def chunking_line(ch: dict) -> str:
    """What ``--chunking`` searched, in words: report.md and the run's own line said nothing of it (the run printed
    a Python dict), so a chunked report read as an unchunked one."""
    windows = Chunking.from_dict({k: ch[k] for k in ("size", "tokens", "overlap") if ch.get(k) is not None})
    line = (f"chunked ({windows.describe()}): {ch['split_events']} of {ch['events']} memories split, "
            f"{ch['chunks']} searched ({ch['chunks_per_event']:.1f} per memory); every method ranks chunks, folded "
            f"to their memory (per_query.jsonl's `top_chunks`: which chunk ranked it)")
    return line + (f"; the retriever's encoder reads {ch['visible']:.1%} of their text" if "visible" in ch else "")


def unchunked_line(store_chunking: dict) -> str:
    """The note for a retriever whose store chunks long memories (an export of configs/coding_chunks.yaml) measured
    on whole memories: ``--chunking`` alone decides what is searched, which the report did not say."""
    windows = Chunking.from_dict(store_chunking)
    return (f"whole memories: the retriever's store searches {windows.describe()}, which this run did not "
            f"(--chunking off); --chunking on (or its SIZE:OVERLAP) measures it as it searches")


def to_markdown(report: dict) -> str:
    """The whole report as markdown: metrics table, per-phase table, diagnostics."""
    header, rows = methods_table_rows(report["methods"])
    parts = [
        "# Retrieval benchmark",
        f"data: `{report['data']}` · scope: **{report['scope']}** · queries: {report['n_queries']} · "
        f"memories: {report.get('n_memories', '?')} · MRR@{report.get('depth', '?')} · "
        f"latency over {report.get('latency_queries', '?')} queries at batch 1",
        *([chunking_line(report["chunking"])] if report.get("chunking") else []),
        *([unchunked_line(report["retriever_chunking"])] if report.get("retriever_chunking") else []),
        "",
        _md_table(header, rows),
        *(["", legend] if (legend := metric_legend(metric_columns(report["methods"]))) else []),
        *_intervals_md(report),
    ]
    if report.get("per_phase"):
        names = list(report["methods"])
        prow = []
        for phase, entry in list(report["per_phase"].items())[:MAX_PHASE_ROWS]:
            cells = [f"{_fmt('', entry['methods'][m]['mrr'])} / {_fmt('', entry['methods'][m]['recall@5'])}"
                     for m in names]
            prow.append([phase, str(entry["n_queries"]), *cells])
        more = len(report["per_phase"]) - MAX_PHASE_ROWS
        parts += ["", "## Per phase (MRR / Recall@5)", "", _md_table(["phase", "n", *names], prow)]
        if more > 0:
            parts.append(f"\n({more} more phases in report.json)")
    parts += ["", *_diagnostics_md(report.get("diagnostics", {}))]
    return "\n".join(parts) + "\n"


def _diagnostics_md(diag: dict) -> list[str]:
    out = ["## Diagnostics", ""]
    dist = diag.get("state_distinctiveness")
    if dist:
        out.append(f"- state distinctiveness: inter/intra-phase distance = {_fmt('', dist.get('inter_over_intra'))}, "
                   f"silhouette by phase = {_fmt('', dist.get('silhouette'))} "
                   f"({dist.get('n_states')} states, {dist.get('n_phases')} phases)")
    proj = diag.get("projection_weights")
    if proj:
        out.append(f"- projection weights w_s: mean {_fmt('', proj['mean'])}, between-phase std per dim "
                   f"{_fmt('', proj['between_phase_std'])} (0 = W_s ignores the phase)")
    for name, file in diag.get("figures", {}).items():
        out.append(f"- {name}: ![{name}]({file})")
    for note in diag.get("notes", []):
        out.append(f"- note: {note}")
    util = diag.get("memory_utilisation", {})
    if util:
        k = next(iter(util.values()))["k"]
        out += ["", f"### Memory utilisation (top {k})", "",
                _md_table(["method", "never retrieved", "retrieved by kind (share of top-k slots)",
                           "retrieved by age"],
                          [[m, _fmt("", u["never_retrieved_share"]), _shares(u["by_kind"]), _shares(u["by_age"])]
                           for m, u in util.items()])]
        first = next(iter(util.values()))
        out += ["", "target mix (relevant memories): by kind " + _shares(first["by_kind"], "relevant")
                + "; by age " + _shares(first["by_age"], "relevant")]
    return out


def _shares(table: dict[str, dict[str, float]], which: str = "retrieved") -> str:
    return ", ".join(f"{key} {v[which]:.2f}" for key, v in table.items() if v[which] > 0) or "-"


def write_reports(report: dict, out_dir: Path) -> tuple[Path, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    js, md = out_dir / "report.json", out_dir / "report.md"
    atomic_write_text(js, json.dumps(report, indent=2, allow_nan=True) + "\n")
    atomic_write_text(md, to_markdown(report))
    return js, md


PER_QUERY_TOP = 5


def per_query_lines(data, rankings: dict, per_query: dict[str, dict], top: int = PER_QUERY_TOP,
                    chunks: dict | None = None) -> str:
    """``per_query.jsonl``: one decision point per line with every method's reciprocal rank, recall@5
    and top memory ids, for reading failures ("which decisions did SAM miss that the ablation found?")
    rather than only their mean. ``chunks`` (a chunked evaluation): per method and decision, the chunk of each
    top event that ranked it (``top_chunks``)."""
    lines = []
    for i, ex in enumerate(data.examples):
        methods = {}
        for name, ranks in rankings.items():
            methods[name] = {"rr": round(float(per_query[name]["mrr"][i]), 4),
                             "recall@5": round(float(per_query[name]["recall@5"][i]), 4),
                             "top": [data.memories[int(j)].id for j in ranks[i][:top]]}
            if chunks and name in chunks:
                methods[name]["top_chunks"] = chunks[name][i][:top]
        lines.append(json.dumps({"episode_id": ex.episode_id, "step": ex.step, "phase": ex.state.phase,
                                 "observation": ex.observation, "relevant": sorted(ex.relevant_ids),
                                 "methods": methods}, ensure_ascii=False))
    return "\n".join(lines) + "\n"


CONSOLE_COLUMNS = {"mrr": "MRR", "recall@1": "R@1", "recall@5": "R@5", "recall@10": "R@10",
                   "precision@5": "P@5", "ndcg@10": "nDCG@10", "coverage@5": "Cov@5",
                   "grounding@5": "Ground@5", "latency_ms_p50": "p50 ms", "latency_ms_p99": "p99 ms"}


def print_table(report: dict) -> None:
    """The headline metrics as a rich table (report.md has every k), then MRR's and Recall@k's intervals and the
    paired differences."""
    import shutil

    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"{report['data']} · scope {report['scope']} · {report['n_queries']} queries")
    table.add_column("method", style="bold")
    for label in CONSOLE_COLUMNS.values():
        table.add_column(label, justify="right")
    for name, values in report["methods"].items():
        table.add_row(name, *(_fmt(key, values.get(key)) for key in CONSOLE_COLUMNS))
    console = Console(width=max(shutil.get_terminal_size((120, 24)).columns, 120))
    console.print(table)
    legend = metric_legend([k for k in CONSOLE_COLUMNS if any(k in v for v in report["methods"].values())])
    if legend:
        console.print(legend, markup=False)
    iv = report.get("intervals")
    if iv:
        header, rows, diffs = interval_rows(iv, list(CONSOLE_COLUMNS))
        for title, first, body in (("95 % intervals over conversations", "method", rows),
                                   ("paired differences (decision by decision)", "difference", diffs)):
            if body:
                t = Table(title=title)
                t.add_column(first, style="bold")  # a long name wraps here, never an interval (split, unreadable)
                for label in header:
                    t.add_column(label, justify="right", no_wrap=True)
                for r in body:
                    t.add_row(*r)
                console.print(t)
        console.print(interval_note(iv), markup=False)  # "[low, high]" is text, not a rich style
