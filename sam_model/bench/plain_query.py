"""Plain queries — words and no agent state — against a content search over the same memories.

    python -m sam_model.bench.plain_query [--retriever sam-general] [--transcripts TAU.json.gz] [--split test]

A caller of ScopedMemory.search (or the LangChain retriever, or SAMStore) often has only a question. Two checks,
each method over the same memories through ScopedMemory.search (the agent's path):

1. **Probe questions**: one user's memories (chat messages, as Mem0 is fed) and five questions in words; top-1
   right or not, and whether a nonsense query ranks otherwise than a real one (the words steer the ranking).
2. **Held-out airline tasks, observation-only queries**: every decision point of the test-split tau-bench
   transcripts, its memories the events before it, the query its observation alone; MRR and Recall@5 of the
   labelled memories, per decision point, with 95% bootstrap intervals and paired differences.

Methods: ``SAM, text only`` (no state: the model's content block, the default for a plain query);
``SAM, live state`` (the run's newest state — what a plain query ranked by before); ``MiniLM (untrained), text
only`` (the content search the target is set against); and for reference on the airline tasks ``SAM, decision
state`` (what SAM is for: the state of the call about to be made).
"""

from __future__ import annotations

import argparse
import json

import numpy as np

from sam_model.bench.grounding import add_arguments, conversations, load_model, missing
from sam_model.data.schema import parse_event
from sam_model.data.transcripts import convert_conversation
from sam_model.io import DefaultsHelp, atomic_write_text
from sam_model.janus.stats import bootstrap_ci, fmt_ci, fmt_diff, paired
from sam_model.memory import ContentEncoder, ScopedMemory
from sam_model.progress import progress_bar

PROBE_MEMORIES = [
    "My budget for the whole trip is $1,400.",
    "Actually, make the budget $3,500, my company pays half.",
    "I live in Lisbon, near the river.",
    "I'm vegetarian, so no meat or fish for me.",
    "My daughter Ana flies with me, she is 7.",
    "I always want an aisle seat on long flights.",
    "Charge everything to the credit card ending 4421.",
    "We would love to see Kyoto in April.",
]
PROBES = [("what is my budget?", {0, 1}), ("where do I live?", {2}), ("what food can I eat?", {3}),
          ("who is travelling with me?", {4}), ("which seat do I like?", {5})]
NONSENSE = ("zzzz qqqq", "where do I live?")
TEXT, LIVE, MINILM, DECISION = "SAM, text only", "SAM, live state", "MiniLM (untrained), text only", "SAM, decision state"


def probes(model, content: ContentEncoder) -> dict:
    """Top-1 right per probe question per method, and whether the nonsense query ranks as the real one."""
    out = {}
    for name, enc, state in ((TEXT, model, None), (LIVE, model, "live"), (MINILM, content, None)):
        mem = ScopedMemory(enc, k=len(PROBE_MEMORIES))
        ids = [mem.add(t, user_id="probe")["results"][0]["id"] for t in PROBE_MEMORIES]
        ranks = {q: [ids.index(r["id"]) for r in mem.search(q, state, user_id="probe")["results"]]
                 for q, _ in PROBES + [(NONSENSE[0], set())]}
        out[name] = {"top1": [ranks[q][0] in right for q, right in PROBES],
                     "top3": [bool(set(ranks[q][:3]) & right) for q, right in PROBES],
                     "nonsense_same_order": ranks[NONSENSE[0]] == ranks[NONSENSE[1]]}
    return out


def airline(model, content: ContentEncoder, convs: list, progress: bool = True) -> dict:
    """Per decision point: reciprocal rank of the first labelled memory and Recall@5, per method."""
    sam = ScopedMemory(model)  # one memory per encoder: the same memories, only the query differs
    runs = {TEXT: (sam, None), LIVE: (sam, "live"), MINILM: (ScopedMemory(content), None), DECISION: (sam, "decision")}
    rr: dict[str, list[float]] = {name: [] for name in runs}
    r5: dict[str, list[float]] = {name: [] for name in runs}
    of: list[str] = []  # each decision's conversation: the unit its intervals resample
    for conv in progress_bar(convs, desc="conversations", disable=not progress):
        events = [parse_event(e) for e in convert_conversation(conv)]
        for e in events:
            if e.is_decision_point:
                of.append(conv.episode_id)
                want = {f"{conv.episode_id}#{s}" for s in e.useful_memory_steps}
                for name, (mem, how) in runs.items():
                    state = e.state if how == "decision" else how
                    got = [r["id"] for r in mem.search(e.text, state, run_id=conv.episode_id, limit=100)["results"]]
                    first = next((n for n, i in enumerate(got, 1) if i in want), None)
                    rr[name].append(1.0 / first if first else 0.0)
                    r5[name].append(len(want & set(got[:5])) / len(want))
            for mem in {id(m): m for m, _ in runs.values()}.values():
                mem.add(e, run_id=conv.episode_id)
    return {"decisions": len(rr[TEXT]), "conversations": len(convs), "mrr": rr, "recall@5": r5, "conversation": of}


def tables(report: dict) -> str:
    pr = report["probes"]
    lines = ["| method | probe top-1 right | probe top-3 right | nonsense query ranks as a real one |", "|---|---|---|---|"]
    for name, m in pr.items():
        lines.append(f"| {name} | {sum(m['top1'])}/{len(m['top1'])} | {sum(m['top3'])}/{len(m['top3'])} | "
                     f"{'yes' if m['nonsense_same_order'] else 'no'} |")
    a = report["airline"]
    lines += ["", f"| method | MRR (95% CI) | Recall@5 (95% CI) | MRR paired vs {MINILM} |", "|---|---|---|---|"]
    groups = a.get("conversation")  # conversations resampled, not decisions (sam_model.janus.stats.bootstrap_ci)
    for name in a["mrr"]:
        diff = "" if name == MINILM else fmt_diff(paired(a["mrr"][name], a["mrr"][MINILM], groups=groups), scale=1,
                                                   digits=3)
        lines.append(f"| {name} | {fmt_ci(bootstrap_ci(a['mrr'][name], groups=groups), scale=1, digits=3)} | "
                     f"{fmt_ci(bootstrap_ci(a['recall@5'][name], groups=groups), scale=1, digits=3)} | {diff} |")
    lines.append(f"\n{a['decisions']} decision points of {a['conversations']} held-out conversations, observation-only "
                 "queries (the decision-state row is the reference, not a plain query).")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m sam_model.bench.plain_query",
                                description="Plain queries (text, no state) against untrained MiniLM over the same "
                                            "memories: probe questions and held-out airline decision points.",
                                formatter_class=DefaultsHelp)
    add_arguments(p)
    args = p.parse_args(argv)
    if missing(args.transcripts):
        return 2
    model, content = load_model(args.retriever), ContentEncoder()
    report = {"retriever": args.retriever, "probes": probes(model, content),
              "airline": airline(model, content, conversations(args.transcripts, args.split, args.conversations,
                                                        args.stride)), "stride": args.stride}
    print(tables(report))
    if args.json:
        atomic_write_text(args.json, json.dumps(report, indent=1, default=lambda x: float(np.asarray(x))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
