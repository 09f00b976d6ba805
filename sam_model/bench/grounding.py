"""Retrieval before the model writes a tool call's arguments: how often the top-k holds each value it needs.

    python -m sam_model.bench.grounding [--retriever sam-general] [--transcripts TAU.json.gz] [--split test] [--k 5]

Held-out tool-call transcripts (tau-bench airline, the fixed test tasks) are replayed as if live. At every
assistant message with tool calls, the moment is *after the model chose the tool and before it wrote the
arguments*: the memory holds every event before the current one (as evaluate.py's memories), the query is the
current observation, and each method ranks the memories for it. A *needed value* is an argument value the current
message, the policy and triviality do not explain and an earlier event says (sam_model.data.transcripts: the
importer's rule for labels); the figure is the share of needed values that some top-k memory says verbatim
(``says``), i.e. what an agent that puts the retrieved memories into its context before writing the call has
available. Methods, each over the same memories through ScopedMemory.search (the agent's path):

- ``SAM, before the call``: SAM's state for the chosen tool and its argument *names* (live_state with tool= and
  arguments=: every argument flagged, no value known) — the pattern of examples/langgraph_agent.py;
- ``SAM, importer state``: the decision state training saw (it knows which arguments need memory: an upper
  reference, not available before the call is written);
- ``SAM, text only``: the observation alone (ScopedMemory.search with no state: the content block);
- ``MiniLM (untrained), state + text``: untrained MiniLM over the state written as text and the observation;
- ``MiniLM (untrained), text only``; ``recency``: the k newest memories.

Means over conversations with a 95% bootstrap interval, and paired differences (per conversation) against
``SAM, before the call``. ``--retriever untrained`` is MiniLM under untrained SAM heads (no trained weights).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

from sam_model.data.schema import parse_event
from sam_model.data.text import norm
from sam_model.data.transcripts import (
    ImportReport,
    TranscriptState,
    held_out_groups,
    iter_conversations,
    leaves,
    live_state,
    parse_tool_calls,
    policy_of,
    says,
)
from sam_model.io import DefaultsHelp, atomic_write_text
from sam_model.janus.stats import bootstrap_ci, fmt_ci, fmt_diff, paired
from sam_model.memory import ContentEncoder, ScopedMemory
from sam_model.progress import progress_bar

TAU = Path("../shared/data/tau-bench/gpt-4o-airline.json.gz")
BEFORE = "SAM, before the call"


def load_model(name: str):
    """A retriever by name or folder (SAMRetriever.from_pretrained); ``untrained``: MiniLM under untrained heads."""
    from sam_model.bench.adapters import load
    from sam_model.retriever import SAMRetriever

    return load(None) if name == "untrained" else SAMRetriever.from_pretrained(name, device="cpu")


def conversations(path: Path, split: str, limit: int | None, stride: int = 1) -> list:
    """The split's conversations, every ``stride``-th (stride 2 keeps 2 of the 4 trials of each task), the first
    ``limit`` of those."""
    convs = list(iter_conversations(path, ImportReport()))
    if split != "all":
        test = held_out_groups(c.group for c in convs)
        convs = [c for c in convs if (c.group in test) == (split == "test")]
    return convs[::stride][:limit]


def methods(model, content: ContentEncoder, k: int) -> dict[str, tuple[ScopedMemory, Callable]]:
    """name -> (its memory, how it searches: f(memory, observation, before_state, importer_state, run) -> texts).
    Methods of one encoder share one memory (the same memories; only the query differs)."""
    def scoped(mem: ScopedMemory, state_of: Callable):
        return mem, lambda m, obs, before, imported, run: [
            r["memory"] for r in m.search(obs, state_of(before, imported), run_id=run, limit=k)["results"]]

    sam, minilm = ScopedMemory(model, k=k), ScopedMemory(content, k=k)
    return {
        BEFORE: scoped(sam, lambda b, i: b),
        "SAM, importer state": scoped(sam, lambda b, i: i),
        "SAM, text only": scoped(sam, lambda b, i: None),
        "MiniLM (untrained), state + text": scoped(minilm, lambda b, i: b),
        "MiniLM (untrained), text only": scoped(minilm, lambda b, i: None),
        "recency": (minilm, lambda m, obs, b, i, run: [r["memory"] for r in m.get_all(run_id=run, limit=None)[
            "results"]][-k:]),
    }


def replay(conv, runs: dict[str, tuple[ScopedMemory, Callable]]) -> dict[str, tuple[int, int]]:
    """One conversation as if live: per method (needed values, values some top-k memory says)."""
    tracker = TranscriptState(conv.episode_id, policy=policy_of(conv.messages, conv.where))
    written = 0
    out = {name: [0, 0] for name in runs}
    for i, message in enumerate(conv.messages):
        where = f"{conv.where}, message {i}"
        calls = parse_tool_calls(message, where) if message.get("role") == "assistant" else []
        decision = tracker.decide(calls) if calls else None
        if decision is not None and decision.needed:
            last = len(tracker.events) - 1  # the current observation; the memories are the events before it
            new = [parse_event(e) for e in tracker.events[written:last]]
            for mem in {id(m): m for m, _ in runs.values()}.values():
                if new:
                    mem.add(new, run_id=conv.episode_id)
            written = last if new else written
            names = sorted({p for c in calls if c.valid for n, v in c.arguments.items() for p, _ in leaves(v, n)})
            before = live_state(conv.messages[:i], tool=calls[0].name, arguments=names)
            observation = tracker.events[last]["text"]
            for name, (mem, search) in runs.items():
                texts = [norm(t) for t in search(mem, observation, before, decision.state, conv.episode_id)]
                for values in decision.needed.values():
                    for value in values:
                        out[name][0] += 1
                        out[name][1] += any(says(t, value) for t in texts)
        tracker.feed(message, where)
    return {name: (n, g) for name, (n, g) in out.items()}


def run(model, convs: list, k: int, content: ContentEncoder | None = None, progress: bool = True) -> dict:
    """Replay every conversation with every method; per-conversation rates and the pooled rate per method."""
    content = content or ContentEncoder()
    runs = methods(model, content, k)
    per_conv: dict[str, list[float]] = {name: [] for name in runs}
    pooled = {name: [0, 0] for name in runs}
    for conv in progress_bar(convs, desc="conversations", disable=not progress):
        got = replay(conv, runs)
        for name, (n, g) in got.items():
            pooled[name][0] += n
            pooled[name][1] += g
            if n:
                per_conv[name].append(g / n)
    return {"k": k, "conversations": len(convs), "values": pooled[BEFORE][0],
            "methods": {name: {"pooled": pooled[name][1] / max(pooled[name][0], 1), "per_conversation": per_conv[name]}
                        for name in runs}}


def table(report: dict) -> str:
    k = report["k"]
    lines = [f"| method | share of needed values in the top {k} (mean over conversations, 95% CI) | pooled | "
             f"paired vs {BEFORE} |", "|---|---|---|---|"]
    ref = report["methods"][BEFORE]["per_conversation"]
    for name, m in report["methods"].items():
        diff = "" if name == BEFORE else fmt_diff(paired(m["per_conversation"], ref))
        lines.append(f"| {name} | {fmt_ci(bootstrap_ci(m['per_conversation']))} | {100 * m['pooled']:.1f} | {diff} |")
    lines.append(f"\n{report['values']} needed values over {report['conversations']} conversations "
                 "(the conversations with at least one).")
    return "\n".join(lines)


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options every held-out transcript benchmark of this package takes (this one and plain_query)."""
    p.add_argument("--retriever", default="sam-general",
                   help="export folder or packaged name (default sam-general); 'untrained': MiniLM under untrained heads")
    p.add_argument("--transcripts", type=Path, default=TAU,
                   help=f"tau-bench .json[.gz] or .jsonl[.gz] of {{id, messages}} (default {TAU})")
    p.add_argument("--split", choices=("all", "train", "test"), default="test",
                   help="which fixed task split to replay (default test: the held-out tasks)")
    p.add_argument("--conversations", type=int, default=None, metavar="N", help="replay only the first N")
    p.add_argument("--stride", type=int, default=1, metavar="S",
                   help="replay every S-th conversation of the split (2: two of the four trials of every task)")
    p.add_argument("--json", type=Path, default=None, metavar="OUT", help="also write the figures as JSON")


def missing(path: Path) -> bool:
    if path.is_file():
        return False
    print(f"error: {path}: no such transcript file (give --transcripts)", file=sys.stderr)
    return True


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m sam_model.bench.grounding",
                                description="Replay held-out tool-call transcripts and measure how often the memories "
                                            "retrieved before a call's arguments are written hold each value it needs.",
                                formatter_class=DefaultsHelp)
    add_arguments(p)
    p.add_argument("--k", type=int, default=5, help="memories retrieved per call (default 5)")
    args = p.parse_args(argv)
    if missing(args.transcripts):
        return 2
    convs = conversations(args.transcripts, args.split, args.conversations, args.stride)
    report = run(load_model(args.retriever), convs, args.k)
    report["retriever"], report["stride"] = args.retriever, args.stride
    print(table(report))
    if args.json:
        atomic_write_text(args.json, json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
