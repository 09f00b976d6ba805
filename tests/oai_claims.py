"""Templated conversations of a travel-insurance claims desk built on the OpenAI Agents SDK, as an app keeps them.

Each conversation is a real ``Runner`` of a claims ``Agent`` (openai-agents 0.24.0) driven by a scripted ``Model``
(no network, no language model): the policy found by its number or the traveller's email, a claim opened for a trip,
a receipt listed by an earlier tool result attached to it, a claim's status checked, and a handoff to a "payouts"
agent that needs the claim id and the IBAN the customer says. A mistyped policy number raises once (the SDK gives
the model "An error occurred while running the tool.") and is said again. Kept by ``SQLiteSession`` (one database,
many sessions) and returned as the line the README says to write, ``{"id", "instructions", "messages":
result.to_input_list()}``.

Written by a template with varied values and several phrasings: figures measured on these logs are easy and must be
reported as templated. ``python tests/oai_claims.py OUT N SEED`` (with openai-agents importable) writes N
conversations into OUT/sessions.db and OUT/chats.jsonl.
"""

from __future__ import annotations

import asyncio
import json
import random
import sys
from pathlib import Path
from typing import Any

import walkthrough_cli

POLICY = ("You are the claims agent of Wayfarer Travel Insurance. Find the traveller's policy by its number or email "
          "before opening a claim. Attach only receipts the traveller has uploaded. Hand payouts to the payouts agent.")
PAYOUTS = "You are the payouts agent. Pay an approved claim to the IBAN the traveller gives."
NAMES = ["Ava Lindqvist", "Ravi Patel", "Chloe Dubois", "Mateo Rossi", "Nia Adeyemi", "Kenji Sato", "Elsa Berg",
         "Omar Haddad", "Lena Fischer", "Tomás Ruiz", "Priya Nair", "Jonas Weber"]
PLACES = ["Lisbon", "Kyoto", "Reykjavik", "Marrakesh", "Cusco", "Hanoi", "Cape Town", "Vancouver", "Tbilisi"]
REASONS = {"baggage": ["my suitcase was lost", "the airline lost my bag", "my luggage never arrived"],
           "medical": ["I needed a doctor", "I was treated at a clinic", "I had to see a doctor for an infection"],
           "delay": ["my flight was delayed overnight", "a 14 hour delay", "my connection was cancelled"]}

WORLD: dict[str, Any] = {}  # the tools' answers for the conversation being run: set before each Runner


def find_policy(policy_number: str = "", email: str = "") -> str:
    """Find a travel policy by its number or the traveller's email."""
    w = WORLD
    if policy_number and policy_number != w["policy"] or email and email != w["email"]:
        raise LookupError(f"no policy {policy_number or email}")
    return json.dumps({"policy_number": w["policy"], "holder": w["name"], "email": w["email"],
                       "trips": [{"trip_id": w["trip"], "destination": w["place"], "dates": w["dates"]}],
                       "uploads": [{"receipt_id": r, "amount": a} for r, a in w["receipts"]]})


def open_claim(policy_number: str, trip_id: str, kind: str, description: str) -> str:
    """Open a claim on a policy for a trip."""
    return json.dumps({"claim_id": WORLD["claim"], "status": "open"})


def attach_receipt(claim_id: str, receipt_id: str) -> str:
    """Attach an uploaded receipt to a claim."""
    return json.dumps({"claim_id": claim_id, "attached": receipt_id})


def claim_status(claim_id: str) -> str:
    """The status of a claim."""
    if claim_id != WORLD["claim"]:
        raise LookupError(f"unknown claim {claim_id}")
    return json.dumps({"claim_id": claim_id, "status": WORLD["status"], "approved_amount": WORLD["approved"]})


def issue_payout(claim_id: str, iban: str) -> str:
    """Pay an approved claim to an IBAN."""
    return json.dumps({"payout_id": WORLD["payout"], "claim_id": claim_id, "iban": iban})


def world(rng: random.Random) -> dict[str, Any]:
    """One traveller's policy, trip, uploads and what the tools will answer."""
    name = rng.choice(NAMES)
    receipts = [(f"RC-{rng.randint(10000, 99999)}", f"{rng.randint(20, 900)}.{rng.randint(0, 99):02d}")
                for _ in range(rng.choice([1, 2, 3]))]
    return {"name": name, "email": f"{name.split()[0].lower()}.{rng.randint(10, 99)}@example.com",
            "policy": f"WTI-{rng.randint(100000, 999999)}", "trip": f"TR-{rng.randint(1000, 9999)}",
            "place": rng.choice(PLACES), "dates": f"2026-{rng.randint(5, 11):02d}-{rng.randint(1, 28):02d}",
            "receipts": receipts, "claim": f"CLM-{rng.randint(100000, 999999)}",
            "status": rng.choice(["approved", "approved", "in review"]), "approved": receipts[0][1],
            "payout": f"PO-{rng.randint(10000, 99999)}",
            "iban": f"DE{rng.randint(10, 99)}{rng.randint(10**17, 10**18 - 1)}"}


def _typo(value: str, rng: random.Random) -> str:
    i = rng.randrange(4, len(value))
    return value[:i] + rng.choice([d for d in "0123456789" if d != value[i]]) + value[i + 1:]


def script(w: dict[str, Any], rng: random.Random) -> tuple[list[str], list[Any]]:
    """The traveller's turns and the model's outputs, each a text or a call (name, args)."""
    by_number = rng.random() < 0.5
    said = w["policy"] if by_number else w["email"]
    kind = rng.choice(sorted(REASONS))
    turns = [rng.choice(["I need to make a claim for my trip to {p}: {r}. My policy is {s}.",
                         "Hello, {r} on my {p} trip and I want to claim. It's {s}.",
                         "Can you open a claim? {r} in {p}. You can find me by {s}."]).format(
        p=w["place"], r=rng.choice(REASONS[kind]), s=said)]
    key = "policy_number" if by_number else "email"
    out: list[Any] = []
    if by_number and rng.random() < 0.3:  # a mistyped number: the tool raises, the agent asks, it is said again
        out += [("find_policy", {key: _typo(said, rng)}), "I could not find that policy. Could you repeat it?"]
        turns.append(rng.choice([f"Sorry, it's {said}.", f"It should be {said}."]))
    receipt = rng.choice(w["receipts"])[0]
    out += [("find_policy", {key: said}),
            ("open_claim", {"policy_number": w["policy"], "trip_id": w["trip"], "kind": kind,
                            "description": turns[0][:60]}),
            ("attach_receipt", {"claim_id": w["claim"], "receipt_id": receipt}),
            f"Claim {w['claim']} is open with receipt {receipt} attached."]
    if rng.random() < 0.8:
        turns.append(rng.choice(["What's the status of my claim now?", "Has it been approved?",
                                 "Can you check where the claim stands?"]))
        out += [("claim_status", {"claim_id": w["claim"]}),
                f"Claim {w['claim']} is {w['status']}, {w['approved']} approved."]
    if w["status"] == "approved" and rng.random() < 0.8:
        turns.append(rng.choice(["Please pay it to my account {i}.", "My IBAN is {i}, can you send the money?",
                                 "Pay it out to {i} please."]).format(i=w["iban"]))
        out += [("transfer_to_payouts", {}), ("issue_payout", {"claim_id": w["claim"], "iban": w["iban"]}),
                f"Payout {w['payout']} is on its way."]
    return turns, out


def plans(n: int, seed: int) -> list[tuple[str, dict[str, Any], list[str], list[Any]]]:
    """N conversations to run: (session id, the tools' world, the traveller's turns, the model's outputs)."""
    rng = random.Random(seed)
    return [(f"claims-{seed}-{i:03d}", w, *script(w, rng)) for i, w in ((i, world(rng)) for i in range(n))]


def agents(model: Any, extra: tuple[Any, ...] = ()) -> Any:
    """The claims agent, handing off to payouts; both answer from ``model``."""
    from agents import Agent, function_tool

    payouts = Agent(name="payouts", instructions=PAYOUTS, model=model, tools=[function_tool(issue_payout)])
    return Agent(name="claims", instructions=POLICY, model=model, handoffs=[payouts],
                 tools=[function_tool(f) for f in (find_policy, open_claim, attach_receipt, claim_status)]
                 + list(extra))


def scripted(outputs: list[Any]) -> Any:
    """A Model answering each call with the next scripted output (text, or (name, args) a call)."""
    from agents import Usage
    from agents.items import ModelResponse
    from agents.models.interface import Model
    from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

    class Scripted(Model):
        def __init__(self) -> None:
            self.outputs, self.n, self.requests = list(outputs), 0, []

        async def get_response(self, system_instructions, input, *args, **kwargs) -> ModelResponse:
            self.requests.append((system_instructions, input))
            self.n += 1
            o = self.outputs.pop(0)
            item = ResponseOutputMessage(id=f"msg_{self.n}", type="message", role="assistant", status="completed",
                                         content=[ResponseOutputText(type="output_text", text=o, annotations=[])]) \
                if isinstance(o, str) else ResponseFunctionToolCall(
                    id=f"fc_{self.n}", call_id=f"call_{self.n}", type="function_call", name=o[0],
                    arguments=json.dumps(o[1]))
            return ModelResponse(output=[item], usage=Usage(), response_id=None)

        def stream_response(self, *args, **kwargs):
            raise NotImplementedError

    return Scripted()


async def run(plan: tuple[str, dict[str, Any], list[str], list[Any]], session: Any) -> dict[str, Any]:
    """The plan through a real Runner, kept by ``session``; the line to log."""
    from agents import Runner

    sid, w, turns, outputs = plan
    WORLD.clear()
    WORLD.update(w)
    model = scripted(outputs)
    agent, result = agents(model), None
    for text in turns:
        result = await Runner.run(agent, text, session=session)
        agent = result.last_agent if result.last_agent.name == "claims" else agent
    assert not model.outputs, f"{sid}: {len(model.outputs)} scripted outputs left"
    items = await session.get_items()
    assert result is not None and result.to_input_list() == items, sid  # the whole conversation either way
    return {"id": sid, "instructions": POLICY, "messages": items}


def write(out: Path, n: int, seed: int) -> None:
    """N conversations into OUT/sessions.db (one SQLiteSession each) and OUT/chats.jsonl."""
    from agents import SQLiteSession, set_tracing_disabled

    set_tracing_disabled(True)
    out.mkdir(parents=True, exist_ok=True)
    with (out / "chats.jsonl").open("w") as f:
        for plan in plans(n, seed):
            f.write(json.dumps(asyncio.run(run(plan, SQLiteSession(plan[0], str(out / "sessions.db"))))) + "\n")


def main(argv: list[str] | None = None) -> int:
    return walkthrough_cli.main(write, __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
