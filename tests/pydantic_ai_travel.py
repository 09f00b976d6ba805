"""Templated conversations of an employee travel-and-expense assistant built on Pydantic AI, as its message history
is logged (``result.all_messages_json()`` / ``ModelMessagesTypeAdapter.dump_json``): requests and responses of
parts, several runs a conversation (``message_history=result.all_messages()``), a tool's argument validation
failing once (a ``retry-prompt`` answering the call) and the call made again, thinking parts, parallel calls,
arguments as a dict (Anthropic, Gemini) or a JSON string (OpenAI), the policy as system-prompt parts or as each
request's ``instructions``.

Written by a template with varied values (names, cities, amounts, ids): figures measured on these logs are easy
and must be reported as templated. Used by tests/test_walkthrough_pydantic_ai.py; ``python
tests/pydantic_ai_travel.py OUT.jsonl N SEED`` writes a ``.jsonl`` of ``{"id", "messages"}`` conversations (the
walkthrough in README), ``--folder`` one ``.json`` file a conversation, as ``all_messages_json()`` writes it.
"""

from __future__ import annotations

import json
import random
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

POLICY = ("You are Atlas, the travel and expense assistant of Northwind Ltd. Book within the employee's travel "
          "policy, file receipts on the trip's expense report and submit it to the approver the policy names.")
NAMES = ["Priya Sharma", "Tomás Ruiz", "Aiko Tanaka", "Jonas Weber", "Fatima Khan", "Liam O'Brien", "Chen Wei",
         "Sofia Rossi", "Kwame Mensah", "Elena Petrova", "Noah Johnson", "Maya Cohen"]
CITIES = [("SFO", "San Francisco"), ("JFK", "New York"), ("ORD", "Chicago"), ("SEA", "Seattle"), ("BOS", "Boston"),
          ("AUS", "Austin"), ("DEN", "Denver"), ("LHR", "London"), ("FRA", "Frankfurt"), ("YYZ", "Toronto")]
PURPOSES = ["the customer kickoff", "the sales offsite", "the quarterly review", "a partner workshop",
            "the security audit", "the product launch"]
AIRLINES = [("UA", "United"), ("DL", "Delta"), ("AA", "American"), ("AC", "Air Canada"), ("LH", "Lufthansa")]
HOTELS = ["Hilton Garden Inn", "Marriott Courtyard", "Hyatt Place", "Holiday Inn Express", "Westin"]
TAXIS = ["Yellow Cab", "Uber", "Lyft", "Blacklane"]
APPROVERS = ["m.chen", "r.okafor", "s.lindqvist", "d.alvarez", "k.nakamura"]
MODELS = [("gpt-5-mini", "openai", False), ("claude-sonnet-4-5", "anthropic", True), ("gemini-2.5-flash",
                                                                                      "google-gla", True)]


class Log:
    """One conversation's messages, as Pydantic AI appends them: a request of parts, the model's response, ..."""

    def __init__(self, rng: random.Random, start: datetime, instructions: bool) -> None:
        self.rng, self.t, self.messages = rng, start, []  # type: ignore[var-annotated]
        self.model, self.provider, self.dict_args = rng.choice(MODELS)
        self.instructions = instructions
        self.run_id, self.calls, self.pending = "", 0, []  # type: ignore[var-annotated]

    def _now(self) -> str:
        self.t += timedelta(seconds=self.rng.randint(1, 9))
        return self.t.isoformat().replace("+00:00", "Z")

    def run(self, words: str, first: bool = False) -> None:
        """A new agent run: the user's prompt (the system prompt too, first, unless the agent uses instructions)."""
        self.run_id = f"{self.rng.getrandbits(64):016x}"
        parts = [] if self.instructions or not first else [
            {"content": POLICY, "timestamp": self._now(), "dynamic_ref": None, "part_kind": "system-prompt"}]
        parts.append({"content": words, "timestamp": self._now(), "part_kind": "user-prompt"})
        self._request(parts)

    def _request(self, parts: list[dict[str, Any]]) -> None:
        self.messages.append({"parts": parts, "timestamp": self._now(),
                              "instructions": POLICY if self.instructions else None, "kind": "request",
                              "run_id": self.run_id, "metadata": None})

    def _response(self, parts: list[dict[str, Any]]) -> None:
        if self.rng.random() < 0.3 and self.provider != "openai":
            parts = [{"content": "Let me check what the tools say.", "id": None, "signature": None,
                      "provider_name": self.provider, "part_kind": "thinking"}, *parts]
        self.messages.append({"parts": parts, "usage": {"input_tokens": self.rng.randint(400, 3000),
                                                        "output_tokens": self.rng.randint(20, 200)},
                              "model_name": self.model, "timestamp": self._now(), "kind": "response",
                              "provider_name": self.provider, "provider_response_id": f"resp_{self.calls:04d}",
                              "finish_reason": "tool_call" if any(p["part_kind"] == "tool-call" for p in parts)
                              else "stop", "run_id": self.run_id, "metadata": None})

    def call(self, *calls: tuple[str, dict[str, Any]]) -> list[str]:
        """The model's tool calls, in one response; their ids, for the results."""
        ids, parts = [], []
        for name, args in calls:
            self.calls += 1
            ids.append(f"call_{self.rng.getrandbits(40):010x}")
            parts.append({"tool_name": name, "args": args if self.dict_args else json.dumps(args),
                          "tool_call_id": ids[-1], "id": None, "provider_name": None, "part_kind": "tool-call"})
        self._response(parts)
        return ids

    def results(self, *results: tuple[str, str, Any]) -> None:
        """The tools' returns (tool name, call id, content) in one request, as the agent graph sends them back."""
        self._request([{"tool_name": name, "content": content, "tool_call_id": cid, "metadata": None,
                        "timestamp": self._now(), "part_kind": "tool-return"} for name, cid, content in results])

    def retry(self, name: str, cid: str, errors: list[dict[str, Any]]) -> None:
        """A call whose arguments failed validation: Pydantic AI answers it with the errors, and the model retries."""
        self._request([{"content": errors, "tool_name": name, "tool_call_id": cid, "timestamp": self._now(),
                        "part_kind": "retry-prompt"}])

    def say(self, words: str) -> None:
        self._response([{"content": words, "id": None, "part_kind": "text"}])


def conversation(rng: random.Random, n: int) -> tuple[str, list[dict[str, Any]]]:
    """One conversation (its id and messages): a trip booked and expensed, or a returned report fixed."""
    start = datetime(2026, 3, 1, 8, tzinfo=timezone.utc) + timedelta(hours=rng.randint(0, 24 * 60))
    log = Log(rng, start, instructions=rng.random() < 0.5)
    name, emp = rng.choice(NAMES), f"E{rng.randint(10000, 99999)}"
    year = 2026
    report = f"EXP-{year}-{rng.randint(100, 999):04d}"
    approver = rng.choice(APPROVERS)
    cost_center = f"CC-{rng.randint(100, 899)}"
    if n % 3 == 2:  # a report returned by the approver: fix it and submit again
        taxi, amount = rng.choice(TAXIS), round(rng.uniform(18, 95), 2)
        day = (start - timedelta(days=rng.randint(3, 20))).strftime("%B %-d")
        log.run(f"Hi, this is {name} ({emp}). What's the status of my expense report {report}?", first=True)
        (c,) = log.call(("get_report_status", {"report_id": report}))
        log.results(("get_report_status", c, {"report_id": report, "status": "returned", "approver": approver,
                                              "reason": "missing receipt for a taxi ride", "total": round(
                                                  rng.uniform(300, 2000), 2), "currency": "USD"}))
        log.say(f"{report} was returned by {approver}: a taxi receipt is missing. Do you have it?")
        log.run(f"Yes, it was {taxi}, ${amount:.2f} on {day}.")
        (c,) = log.call(("add_receipt", {"report_id": report, "merchant": taxi, "amount": amount,
                                         "currency": "USD", "category": "ground_transport", "date": day}))
        if rng.random() < 0.5:  # the date as the user said it fails validation: retried as an ISO date
            log.retry("add_receipt", c, [{"type": "date_from_datetime_parsing", "loc": ["date"],
                                          "msg": "Input should be a valid date or datetime, input is too short",
                                          "input": day}])
            iso = (start - timedelta(days=3)).date().isoformat()
            (c,) = log.call(("add_receipt", {"report_id": report, "merchant": taxi, "amount": amount,
                                             "currency": "USD", "category": "ground_transport", "date": iso}))
        receipt = f"RC-{rng.randint(10000, 99999)}"
        log.results(("add_receipt", c, {"receipt_id": receipt, "report_id": report, "status": "attached"}))
        log.say(f"Added receipt {receipt}. Shall I resubmit {report} to {approver}?")
        log.run("yes please")
        (c,) = log.call(("submit_for_approval", {"report_id": report, "approver": approver}))
        approval = f"APR-{rng.randint(1000, 9999)}"
        log.results(("submit_for_approval", c, {"approval_id": approval, "status": "pending_approval"}))
        log.say(f"Resubmitted: {approval}, pending {approver}'s approval.")
        return f"travel-{n:03d}", log.messages
    (o_code, o_city), (d_code, d_city) = rng.sample(CITIES, 2)
    purpose = rng.choice(PURPOSES)
    day = start + timedelta(days=rng.randint(7, 40))
    said_day = day.strftime("%Y-%m-%d") if rng.random() < 0.5 else day.strftime("%B %-d")
    log.run(f"Hi, I'm {name}, employee {emp}. I need a flight from {o_city} to {d_city} on {said_day} for "
            f"{purpose}. Charge it to {cost_center}.", first=True)
    max_fare = rng.choice([450, 600, 750, 900])
    c1, c2 = log.call(("get_policy", {"employee_id": emp, "category": "air"}),
                      ("search_flights", {"origin": o_code, "destination": d_code, "date": day.date().isoformat(),
                                          "cabin": "economy"}))
    flights = []
    for _ in range(3):
        code, _airline = rng.choice(AIRLINES)
        hour = rng.randint(6, 20)
        flights.append({"flight_id": f"{code}{rng.randint(100, 2999)}", "departs": f"{hour:02d}:{rng.choice(['05', '20', '45'])}",
                        "fare": round(rng.uniform(180, max_fare + 200), 2), "cabin": "economy"})
    log.results(("get_policy", c1, {"employee_id": emp, "max_fare": max_fare, "cabin": "economy",
                                    "approver": approver, "per_diem": rng.choice([55, 65, 75])}),
                ("search_flights", c2, flights))
    ok = [f for f in flights if f["fare"] <= max_fare] or [min(flights, key=lambda f: f["fare"])]
    pick = rng.choice(ok)
    log.say("Within your policy (economy, up to $" + str(max_fare) + "): " + "; ".join(
        f"{f['departs']} at ${f['fare']:.2f}" for f in ok) + ". Which one?")
    log.run(f"The {pick['departs']} one. And open an expense report for the trip.")
    (c,) = log.call(("create_expense_report", {"employee_id": emp, "trip_name": f"{d_city} - {purpose}",
                                               "cost_center": cost_center}))
    log.results(("create_expense_report", c, {"report_id": report, "status": "draft", "currency": "USD"}))
    (c,) = log.call(("add_receipt", {"report_id": report, "merchant": pick["flight_id"], "amount": f"{pick['fare']} USD",
                                     "currency": "USD", "category": "airfare"}))
    log.retry("add_receipt", c, [{"type": "float_parsing", "loc": ["amount"],
                                  "msg": "Input should be a valid number, unable to parse string as a number",
                                  "input": f"{pick['fare']} USD"}])
    (c,) = log.call(("add_receipt", {"report_id": report, "merchant": pick["flight_id"], "amount": pick["fare"],
                                     "currency": "USD", "category": "airfare"}))
    log.results(("add_receipt", c, {"receipt_id": f"RC-{rng.randint(10000, 99999)}", "status": "attached"}))
    log.say(f"Booked {pick['flight_id']} and opened {report} with the fare on it.")
    hotel, nights = rng.choice(HOTELS), rng.randint(1, 4)
    total = round(nights * rng.uniform(120, 260), 2)
    log.run(f"I also stayed at the {hotel} for {nights} nights, {total:,.2f} dollars in total. Add it and send the "
            "report for approval.")
    (c,) = log.call(("add_receipt", {"report_id": report, "merchant": hotel, "amount": total, "currency": "USD",
                                     "category": "lodging"}))
    log.results(("add_receipt", c, {"receipt_id": f"RC-{rng.randint(10000, 99999)}", "status": "attached"}))
    (c,) = log.call(("submit_for_approval", {"report_id": report, "approver": approver}))
    approval = f"APR-{rng.randint(1000, 9999)}"
    log.results(("submit_for_approval", c, {"approval_id": approval, "status": "pending_approval"}))
    log.say(f"Sent {report} to {approver} for approval ({approval}).")
    return f"travel-{n:03d}", log.messages


def conversations(count: int, seed: int) -> list[tuple[str, list[dict[str, Any]]]]:
    """``count`` conversations of seed ``seed`` (ids ``travel-SSS...``: another seed, other ids)."""
    rng = random.Random(seed)
    return [(f"s{seed}-{cid}", msgs) for cid, msgs in (conversation(rng, n) for n in range(count))]


def write_jsonl(path: Path, count: int, seed: int) -> Path:
    """A ``.jsonl`` of ``{"id", "messages": json.loads(result.all_messages_json())}`` lines, one a conversation."""
    path.write_text("".join(json.dumps({"id": cid, "messages": msgs}) + "\n" for cid, msgs in conversations(count, seed)))
    return path


def write_folder(folder: Path, count: int, seed: int) -> Path:
    """One ``CONVERSATION_ID.json`` a conversation, holding what ``result.all_messages_json()`` returns."""
    folder.mkdir(parents=True, exist_ok=True)
    for cid, msgs in conversations(count, seed):
        (folder / f"{cid}.json").write_text(json.dumps(msgs))
    return folder


if __name__ == "__main__":
    out, count, seed = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    (write_folder if "--folder" in sys.argv else write_jsonl)(out, count, seed)
