"""Which part of an explicit state a head reads: the same agent log with one state field taken away.

    python -m sam_model.bench.state_fields LOG OUT --drop known      # then: python evaluate.py --data OUT ...

An agent that logs its own state (the spec's ``phase``, ``subgoal_stack``, ``constraints``, ``uncertainty_flags``,
``last_action_result``) gives SAM two places to read it: the query (the decision point's state, as text) and every
memory (an event's text carries the slots its state set, ``sets``: sam_model.data.text.memory_to_text). Scoring a
head on copies of one log, each missing one of these, says which of them its ranking rests on, and comparing two
heads that way says where one loses to the other (README "Leave one domain out", the demo domain). ``--drop``:

- ``phase``, ``subgoals``, ``needs`` (``uncertainty_flags``), ``known`` (``constraints``), ``last``
  (``last_action_result``): emptied in the states of the decision points only (the queries); the memories keep
  their text and their ``sets``;
- ``constraints``: every event's constraints emptied, so no query says what is known and no memory's text says
  which slots it set (against ``known``, what the memories' ``sets`` add).

Labels, texts and kinds are untouched. The output is an agent log (.jsonl) like the input.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from sam_model.io import atomic_write_text

QUERY_FIELDS = {"phase": ("phase", ""), "subgoals": ("subgoal_stack", []), "needs": ("uncertainty_flags", []),
                "known": ("constraints", {}), "last": ("last_action_result", "")}
DROPS = (*QUERY_FIELDS, "constraints")


def drop_field(lines: list[dict], drop: str) -> list[dict]:
    """The events of an agent log (dicts in file order) with ``drop`` taken away (see the module doc)."""
    if drop not in DROPS:
        raise ValueError(f"--drop: unknown field {drop!r}; choose from {', '.join(DROPS)}")
    out = []
    for event in lines:
        event = json.loads(json.dumps(event))  # a deep copy: the input stays as read
        state = event.setdefault("state", {})
        if drop == "constraints":
            state["constraints"] = {}
        elif event.get("useful_memory_steps"):
            key, empty = QUERY_FIELDS[drop]
            state[key] = empty
        out.append(event)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m sam_model.bench.state_fields", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("log", type=Path, help="an agent log (.jsonl) whose events carry explicit states")
    ap.add_argument("out", type=Path, help="the copy to write (.jsonl)")
    ap.add_argument("--drop", required=True, choices=DROPS, help="the state field to take away (module doc)")
    args = ap.parse_args(argv)
    try:
        text = args.log.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SystemExit(f"error: {args.log}: cannot read it ({exc}); give an agent log (.jsonl)") from None
    lines = []
    for n, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                lines.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise SystemExit(f"error: {args.log}, line {n}: not JSON ({exc.msg}); give an agent log (.jsonl)") from None
    events = drop_field(lines, args.drop)
    atomic_write_text(args.out, "".join(json.dumps(e) + "\n" for e in events))
    print(f"wrote {args.out}: {len(events)} events, {sum(bool(e.get('useful_memory_steps')) for e in events)} "
          f"decision points, '{args.drop}' taken away")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
