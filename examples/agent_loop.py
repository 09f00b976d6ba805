"""SAM inside an agent loop, over the built-in demo episodes, with a scripted policy as the LLM.

Every event an agent would see goes into memory with ``observe``. At each decision point the
agent calls ``step`` (retrieve for its state and observation, build the prompt, ask the LLM),
then ``record``s its thought and action. The "LLM" here is a scripted policy that replays the
action the demo log took next, so the run is reproducible without a model; swap in any
``llm(prompt) -> str``. For each decision the script prints what memory returned and whether it
covered the memories the log labels as useful (memory ids count the agent's own steps, which
run ahead of the log's because the agent's thoughts are memories too).

    python examples/agent_loop.py --episodes 2               # content baseline (MiniLM)
    python examples/agent_loop.py --retriever runs/export    # an exported SAMRetriever
    python examples/agent_loop.py --hashing --show-prompt    # no weights at all
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sam_model.data.schema import Event, parse_event  # noqa: E402
from sam_model.data.synthetic import generate_episodes  # noqa: E402
from sam_model.limits import int_option  # noqa: E402
from sam_model.memory import HashingEncoder, MemoryConfig, SAMMemory  # noqa: E402
from sam_model.memory.encoders import ContentEncoder  # noqa: E402
from sam_model.retriever import SAMRetriever  # noqa: E402


def scripted_llm(next_action: str):
    """A stand-in LLM: it reads the prompt and answers with the action the log took next."""

    def llm(prompt: str) -> str:
        n = prompt.count("\n", prompt.index("## Retrieved memories"), prompt.index("## Observation")) - 2
        return f"Thought: I have {max(n, 0)} memories to go on; acting now.\nAction: {next_action}"

    return llm


def run_episode(mem: SAMMemory, events: list[Event], k: int, show_prompt: bool = False) -> list[tuple[float, float]]:
    """Play one episode; returns (reciprocal rank, coverage@k) per decision point."""
    mem.begin(events[0].episode_id)
    unit_of: dict[int, str] = {}  # log step -> memory id
    scores = []
    i = 0
    while i < len(events):
        e = events[i]
        nxt = events[i + 1] if i + 1 < len(events) else None
        if e.is_decision_point and nxt is not None and nxt.kind == "action":
            thought, action = mem.step(scripted_llm(nxt.text), e.state, e.text, k)
            hits = mem.last_hits
            relevant = {unit_of[s] for s in e.useful_memory_steps if s in unit_of}
            covered = [mem.bank.unit(h.id).sources() & relevant for h in hits]
            first = next((r for r, c in enumerate(covered, 1) if c), None)
            got = set().union(*covered) if covered else set()
            scores.append((1 / first if first else 0.0, float(got == relevant)))
            print(f"\n[{e.episode_id}, log step {e.step}] phase={e.state.phase} needs={', '.join(e.state.uncertainty_flags)}"
                  f" | observation: {e.text!r}")
            if show_prompt:
                print("    " + mem.build_prompt(e.state, hits, e.text).replace("\n", "\n    "))
            for r, h in enumerate(hits, 1):
                mark = "*" if covered[r - 1] else " "
                via = f"  via {h.edge[0]} from {h.edge[1]}" if h.edge else ""
                print(f"  {mark}{r}. {h.score:.2f} {h.text[:90]}{via}")
            print(f"  labelled memories covered: {len(got)}/{len(relevant)} | action: {action}")
            unit = mem.observe(e.text, e.state, kind=e.kind)
            if unit is not None:
                unit_of[e.step] = unit.id
            for u in mem.record(thought, action, state=nxt.state):
                if u.kind == "action":
                    unit_of[nxt.step] = u.id
            i += 2
            continue
        unit = mem.observe(e.text, e.state, kind=e.kind)
        if unit is not None:
            unit_of[e.step] = unit.id
        i += 1
    return scores


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run SAMMemory in an agent loop over demo episodes with a "
                                                 "scripted policy and print what it retrieved at each decision.")
    parser.add_argument("--episodes", type=int_option(1), default=2, help="number of demo episodes (default: 2)")
    parser.add_argument("--seed", type=int, default=1,
                        help="seed of the demo episodes (default: 1, the held-out seed: the demo retriever "
                             "is trained on seed 0)")
    parser.add_argument("--retriever", default=None, metavar="DIR",
                        help="an exported SAMRetriever folder (default: the MiniLM content baseline)")
    parser.add_argument("--hashing", action="store_true",
                        help="use the hashed bag-of-words retriever instead (no model weights; for smoke runs)")
    parser.add_argument("--k", type=int_option(1), default=5, help="memories retrieved per decision (default: 5)")
    parser.add_argument("--capacity", type=int_option(0, 2**62), default=0, help="bank capacity in units (default: 0 = unbounded)")
    parser.add_argument("--save", default=None, metavar="FILE", help="save the bank here at the end (atomic)")
    parser.add_argument("--show-prompt", action="store_true", help="print the full prompt at each decision")
    args = parser.parse_args(argv)
    retriever = (HashingEncoder() if args.hashing else SAMRetriever.load(args.retriever) if args.retriever
                 else ContentEncoder())
    mem = SAMMemory(retriever, config=dataclasses.replace(MemoryConfig.for_encoder(retriever), capacity=args.capacity),
                    k=args.k)
    scores = []
    for n, raw in enumerate(generate_episodes(args.episodes, seed=args.seed)):
        events = [parse_event(d, f"<demo episode {n}>", j + 1) for j, d in enumerate(raw)]
        scores += run_episode(mem, events, args.k, args.show_prompt)
    if scores:
        mrr = sum(s for s, _ in scores) / len(scores)
        cov = sum(c for _, c in scores) / len(scores)
        print(f"\n{len(scores)} decisions: MRR {mrr:.3f}, all labelled memories in the top {args.k}: {cov:.1%}; "
              f"bank holds {len(mem.bank)} units")
    if args.save:
        print(f"saved the bank to {mem.bank.save(args.save)}")
    return 0


if __name__ == "__main__":
    from sam_model.io import run_cli

    raise SystemExit(run_cli(main))  # a bad path or file: one line, not a trace
