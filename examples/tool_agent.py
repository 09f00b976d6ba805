"""Argument grounding for a tool-calling agent: replay held-out transcripts as if live.

At every tool call, at the moment the model has chosen the tool but not written its arguments, the live state
is built from the messages so far, the tool and its argument *names* (sam_model.data.transcripts.live_state with
tool= and arguments=: every argument a slot to fill, no value known); the retriever searches the memories written
so far; and for each argument value that must come from memory (not trivial, not in the current message, not in
the policy, said by an earlier event) the script prints the top-5 memory that holds it, and its rank. The figure
at the end, the **grounding rate**, is the share of those values that appear verbatim in the top-5 retrieved
memories: what an agent that puts the retrieved memories into its context before writing the call has at hand.
``python -m sam_model.bench.grounding`` measures the same against other rankings, with intervals.

    python examples/tool_agent.py --retriever sam-general \\
        --transcripts ../shared/data/tau-bench/gpt-4o-airline.json.gz --split test
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sam_model.data.schema import parse_event  # noqa: E402
from sam_model.data.text import norm  # noqa: E402
from sam_model.data.transcripts import (  # noqa: E402
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
from sam_model.limits import int_option  # noqa: E402
from sam_model.retriever import SAMRetriever  # noqa: E402


def replay(retriever: SAMRetriever, conv, k: int, verbose: bool) -> tuple[int, int]:
    """One conversation as if live; returns (needed values, values found verbatim in the top k).

    Messages go through TranscriptState.feed, as the importer writes them, and the memory holds every event
    before the decision event (written once its state is final), so each search sees the state and the
    memories evaluate.py sees for the same decision, and ranks them the same (one store)."""
    tracker = TranscriptState(conv.episode_id, policy=policy_of(conv.messages, conv.where))
    indexed = 0  # events already in the retriever's memory
    needed = grounded = 0
    for i, message in enumerate(conv.messages):
        where = f"{conv.where}, message {i}"
        calls = parse_tool_calls(message, where) if message.get("role") == "assistant" else []
        decision = tracker.decide(calls) if calls else None
        if decision is not None and decision.needed:
            last = len(tracker.events) - 1  # the decision event (the current observation)
            new = [parse_event(e) for e in tracker.events[indexed:last]]
            if new:
                retriever.add_memories(new)
                indexed += len(new)
            observation = tracker.events[last]["text"]
            names = sorted({p for c in calls if c.valid for n, v in c.arguments.items() for p, _ in leaves(v, n)})
            before = live_state(conv.messages[:i], tool=calls[0].name, arguments=names)  # the call is not written yet
            hits = retriever.search(before, observation, k=k, episode_id=conv.episode_id, task_start=0)
            if verbose:
                print(f"\n[{conv.episode_id}] step {last} -> {', '.join(c.name for c in calls)}"
                      f" | fills {', '.join(names)} | observation: {observation[:80]!r}")
            for path, values in decision.needed.items():
                for value in values:
                    rank = next((r for r, h in enumerate(hits, 1) if says(norm(h.content), value)), None)
                    needed += 1
                    grounded += rank is not None
                    if verbose:
                        hit = hits[rank - 1] if rank else None
                        where_found = (f"rank {rank}: step {hit.step} [{hit.kind}] {hit.content[:70]!r}"
                                       if hit else f"not in the top {k}")
                        print(f"    {path} = {value!r} <- {where_found}")
        tracker.feed(message, where)
    return needed, grounded


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Replay tool-call transcripts as if live and report, per tool-call "
                                            "argument, where the retriever finds its value (argument grounding).")
    p.add_argument("--retriever", default="sam-general",
                   help="an export folder or packaged retriever name (default sam-general, the packaged default)")
    p.add_argument("--transcripts", required=True,
                   help="transcript file: .jsonl[.gz] of {\"id\", \"messages\"} or a tau-bench .json[.gz]")
    p.add_argument("--split", choices=("all", "train", "test"), default="test",
                   help="which fixed task split to replay (default test: the held-out tasks)")
    p.add_argument("--k", type=int_option(1), default=5, help="memories retrieved per tool call (default 5)")
    p.add_argument("--conversations", type=int_option(1, 2**31), default=None, metavar="N", help="replay only the first N")
    p.add_argument("--quiet", action="store_true", help="print only the figure, not every argument")
    args = p.parse_args(argv)
    retriever = SAMRetriever.from_pretrained(args.retriever)
    conversations = list(iter_conversations(args.transcripts, ImportReport()))
    if args.split != "all":
        test = held_out_groups(c.group for c in conversations)
        conversations = [c for c in conversations if (c.group in test) == (args.split == "test")]
    conversations = conversations[: args.conversations]
    needed = grounded = 0
    for conv in conversations:
        n, g = replay(retriever, conv, args.k, not args.quiet)
        needed, grounded = needed + n, grounded + g
    rate = grounded / needed if needed else float("nan")
    print(f"\ngrounding rate: {grounded} of {needed} needed argument values appear verbatim in the top {args.k} "
          f"retrieved memories ({rate:.3f}) over {len(conversations)} conversations")
    return 0


if __name__ == "__main__":
    from sam_model.io import run_cli

    raise SystemExit(run_cli(main))  # a bad path or file: one line, not a trace
