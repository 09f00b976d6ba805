"""Templated conversations of a pharmacy's prescription-refill desk built on LlamaIndex, as its memory saves them.

Each conversation is what ``[m.model_dump() for m in memory.get_all()]`` writes after two or three ``await
agent.run(user_msg, memory=memory)`` of one ``FunctionAgent`` (llama-index-core 0.14.25, its OpenAI integration's
shape): ``{"role", "additional_kwargs", "blocks"}`` messages, a user's words a ``text`` block, a call a
``tool_call`` block ``{"tool_call_id", "tool_name", "tool_kwargs"}`` (the model's JSON text) with the SDK's copy in
``additional_kwargs.tool_calls``, a result a ``tool`` message naming ``additional_kwargs.tool_call_id`` whose text is
``str()`` of what the tool returned (a dict's Python repr), a tool that raised its exception's words; the answer a
``text`` block. Shaped after a real FunctionAgent run with a scripted ``MockFunctionCallingLLM`` in a throwaway venv
(no language model was called). Coverage and interaction checks are made in parallel; a prescription without refills
left is refused once by ``request_refill`` and renewed with ``contact_prescriber`` (the prescriber's id from
``list_prescriptions``).

Written by a template with varied values (names, drugs, stores, ids): figures measured on these logs are easy and
must be reported as templated. ``python tests/llamaindex_refills.py OUT N SEED`` writes one ``CONVERSATION_ID.json`` a
conversation into the folder OUT; ``--jsonl`` a ``.jsonl`` of ``{"id", "messages"}`` lines instead.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path
from typing import Any

NAMES = ["Priya Sharma", "Tomás Ruiz", "Aiko Tanaka", "Jonas Weber", "Fatima Khan", "Liam O'Brien", "Chen Wei",
         "Sofia Rossi", "Kwame Mensah", "Elena Petrova", "Noah Johnson", "Maya Cohen", "Ravi Iyer", "Ana Costa"]
DRUGS = ["atorvastatin 20 mg", "metformin 500 mg", "lisinopril 10 mg", "levothyroxine 50 mcg", "sertraline 50 mg",
         "amlodipine 5 mg", "omeprazole 20 mg", "albuterol inhaler"]
STORES = {"Elm Street": "store-0412", "Harbor Mall": "store-0977", "Northgate": "store-1130", "Riverside": "store-0268"}
PLANS = ["BlueCross PPO", "Aetna Silver", "Medicare Part D", "Cigna Choice"]


def _call(cid: str, name: str, args: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    text = json.dumps(args)
    return ({"block_type": "tool_call", "tool_call_id": cid, "tool_name": name, "tool_kwargs": text},
            {"id": cid, "function": {"arguments": text, "name": name}, "type": "function"})


def _say(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "additional_kwargs": {}, "blocks": [{"block_type": "text", "text": text}]}


class _Run:
    """One conversation's messages as the agent's memory gets them."""

    def __init__(self, rng: random.Random) -> None:
        self.messages: list[dict[str, Any]] = []
        self.rng = rng

    def calls(self, *calls: tuple[str, dict[str, Any], Any]) -> None:
        """An assistant message of parallel calls, then each tool's result (a dict's str(), an exception's words)."""
        made = [(f"call_{self.rng.getrandbits(64):016x}", name, args, out) for name, args, out in calls]
        pairs = [_call(cid, name, args) for cid, name, args, _ in made]
        self.messages.append({"role": "assistant", "additional_kwargs": {"tool_calls": [p[1] for p in pairs]},
                              "blocks": [p[0] for p in pairs]})
        for cid, _, _, out in made:
            self.messages.append({"role": "tool", "additional_kwargs": {"tool_call_id": cid},
                                  "blocks": [{"block_type": "text", "text": str(out)}]})


def conversation(rng: random.Random) -> list[dict[str, Any]]:
    name = rng.choice(NAMES)
    last = name.split()[-1]
    dob = f"19{rng.randint(40, 99)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
    pid = f"PT-{rng.randint(10000, 99999)}"
    home, other = rng.sample(list(STORES), 2)
    drugs = rng.sample(DRUGS, 3)
    rxs = [{"rx_number": f"RX-{rng.randint(1000000, 9999999)}", "drug": d, "refills_left": rng.choice([0, 1, 2, 3]),
            "prescriber_id": f"NPI-{rng.randint(1000000000, 1999999999)}"} for d in drugs]
    want = rng.randrange(3)
    rx = rxs[want]
    run = _Run(rng)
    run.messages.append(_say("user", f"Hi, this is {name}, born {dob}. I need a refill of my {rx['drug']}."))
    run.calls(("find_patient", {"last_name": last, "date_of_birth": dob},
               {"patient_id": pid, "name": name, "preferred_store": STORES[home]}))
    run.calls(("list_prescriptions", {"patient_id": pid}, rxs))
    copay = f"{rng.choice([0, 5, 10, 12.5, 25, 40]):.2f}"
    run.calls(("check_coverage", {"patient_id": pid, "rx_number": rx["rx_number"]},
               {"plan": rng.choice(PLANS), "copay": copay, "prior_auth_required": False}),
              ("check_interactions", {"patient_id": pid, "rx_number": rx["rx_number"]}, {"interactions": []}))
    pickup = f"2026-12-{rng.randint(8, 20):02d}"
    refill = f"RF-2026-{rng.randint(10000, 99999)}"
    if rx["refills_left"] == 0:
        run.calls(("request_refill", {"rx_number": rx["rx_number"], "store_id": STORES[home], "pickup_date": pickup},
                   f"No refills left on {rx['rx_number']}: the prescriber must renew it"))
        renewal = f"RN-{rng.randint(100000, 999999)}"
        run.calls(("contact_prescriber", {"rx_number": rx["rx_number"], "prescriber_id": rx["prescriber_id"]},
                   {"renewal_id": renewal, "status": "sent"}))
        run.messages.append(_say("assistant", f"{rx['rx_number']} has no refills left, so I asked your prescriber to "
                                              f"renew it (request {renewal}). Your copay will be ${copay}."))
        run.messages.append(_say("user", "Thanks. Please put the refill in as soon as the renewal comes through."))
        run.calls(("get_renewal_status", {"renewal_id": renewal}, {"renewal_id": renewal, "status": "approved",
                                                                     "refills_left": 3}))
    run.calls(("request_refill", {"rx_number": rx["rx_number"], "store_id": STORES[home], "pickup_date": pickup},
               {"refill_id": refill, "store_id": STORES[home], "ready_at": f"{pickup}T15:00"}))
    run.messages.append(_say("assistant", f"Your refill {refill} of {rx['drug']} will be ready at {home} on {pickup} "
                                          f"after 3 pm; your copay is ${copay}."))
    if rng.random() < 0.5:
        run.messages.append(_say("user", f"Could I pick it up at {other} instead?"))
        run.calls(("transfer_refill", {"refill_id": refill, "store_id": STORES[other]},
                   {"refill_id": refill, "store_id": STORES[other], "status": "moved"}))
        run.messages.append(_say("assistant", f"Done: {refill} is now at {other}."))
    run.messages.append(_say("user", "Is it ready yet?"))
    run.calls(("get_refill_status", {"refill_id": refill}, {"refill_id": refill, "status": "ready", "bin": f"B-{rng.randint(1, 40)}"}))
    run.messages.append(_say("assistant", f"Yes, {refill} is ready for pickup."))
    return run.messages


def conversations(n: int, seed: int) -> list[tuple[str, list[dict[str, Any]]]]:
    rng = random.Random(seed)
    return [(f"refill-{seed}-{i:03d}", conversation(rng)) for i in range(n)]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out", type=Path)
    p.add_argument("n", type=int)
    p.add_argument("seed", type=int)
    p.add_argument("--jsonl", action="store_true", help="one .jsonl of {id, messages} lines (default: a .json each)")
    a = p.parse_args(argv)
    convs = conversations(a.n, a.seed)
    if a.jsonl:
        a.out.write_text("".join(json.dumps({"id": cid, "messages": m}) + "\n" for cid, m in convs))
    else:
        a.out.mkdir(parents=True, exist_ok=True)
        for cid, m in convs:
            (a.out / f"{cid}.json").write_text(json.dumps(m, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
