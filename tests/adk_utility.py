"""Templated conversations of an electricity and gas utility's customer-service desk built on Google ADK, as a
session service keeps them.

Each conversation is a real ``Runner`` of one ``LlmAgent`` (google-adk 2.13.0) driven by a scripted ``BaseLlm`` (no
network, no language model): two or three turns of the customer, each a request (a meter's readings, an outage
ticket, a payment plan, a move of the contract), the account found by the address or the account number the customer
says; the meter, ticket and contract ids come from tool results; a payment plan's monthly amount is the balance
divided by the months, which the agent computes; a mistyped account number or meter id fails once (ADK's ``{"error":
...}``) and is said again. Saved as the README says, ``{**session.model_dump(mode="json"), "system":
agent.instruction}``, one ``SESSION_ID.json`` a conversation.

Written by a template with varied values (names, addresses, ids, amounts) and several phrasings: figures measured on
these logs are easy and must be reported as templated. ``python tests/adk_utility.py OUT N SEED`` (with google-adk
installed) writes N conversations into the folder OUT.
"""

from __future__ import annotations

import asyncio
import random
import sys
from typing import Any

import walkthrough_cli

POLICY = ("You are the customer-service agent of Northwind Energy (electricity and gas). Find the customer's account "
          "by its number or the service address before acting on it. Never move a contract or set up a payment plan "
          "without the customer's consent.")
NAMES = ["Olivia Brandt", "Marcus Lee", "Ingrid Solberg", "Diego Herrera", "Hannah Okafor", "Yuki Mori",
         "Pavel Novak", "Grace Mwangi", "Luca Bianchi", "Zara Ahmed", "Owen Price", "Mei Lin", "Sven Larsen"]
STREETS = ["Maple Avenue", "Cedar Lane", "Harbour Road", "Kingsway", "Mill Street", "Orchard Close", "Station Road",
           "Birch Grove", "Quarry Hill", "Elmwood Drive"]
TOWNS = ["Ashford", "Bramley", "Colbury", "Dunmore"]

# the tools' answers for the conversation being run: set before each Runner
WORLD: dict[str, Any] = {}


def find_account(account_number: str = "", address: str = "") -> dict:
    """Find a customer's account by its account number or its service address."""
    acct = WORLD["account"]
    if account_number and account_number != acct["account_number"] or address and address != acct["address"]:
        return {"error": f"no account found for {account_number or address}"}
    return acct


def get_meter_readings(meter_id: str, months: int = 3) -> dict:
    """The last readings of a meter."""
    meter = WORLD["meters"].get(meter_id)
    if meter is None:
        return {"error": f"unknown meter {meter_id}"}
    return {"meter_id": meter_id, "fuel": meter["fuel"], "readings": meter["readings"][:months]}


def open_outage_ticket(account_number: str, address: str, fuel: str, description: str) -> dict:
    """Open a ticket for a supply outage at an address."""
    return {"ticket_id": WORLD["ticket"], "status": "open", "crew_eta": WORLD["eta"]}


def get_balance(account_number: str) -> dict:
    """The account's outstanding balance."""
    return {"account_number": account_number, "balance": WORLD["balance"], "due_date": WORLD["due"]}


def create_payment_plan(account_number: str, total: str, months: int, monthly_amount: str) -> dict:
    """Set up a payment plan: the total paid in equal monthly amounts."""
    return {"plan_id": WORLD["plan"], "first_payment": WORLD["first_payment"], "monthly_amount": monthly_amount}


def move_contract(account_number: str, new_address: str, move_date: str, meter_read: str) -> dict:
    """Move the supply contract to a new address from a date, closing the old address on its final reading."""
    return {"contract_id": WORLD["contract"], "new_address": new_address, "start": move_date}


TOOLS = [find_account, get_meter_readings, open_outage_ticket, get_balance, create_payment_plan, move_contract]


def _call(name: str, **args: Any) -> dict[str, Any]:
    return {"name": name, "args": args}


def world(rng: random.Random) -> dict[str, Any]:
    """One customer's account, meters and what the tools will answer."""
    number = f"{rng.randint(100, 999)}-{rng.randint(100000, 999999)}"
    address = f"{rng.randint(1, 220)} {rng.choice(STREETS)}, {rng.choice(TOWNS)}"
    meters = {}
    for fuel in rng.sample(["electricity", "gas"], rng.choice([1, 2])):
        mid = f"{'E' if fuel == 'electricity' else 'G'}{rng.randint(10, 99)}-{rng.randint(1000000, 9999999)}"
        unit = "kWh" if fuel == "electricity" else "m3"
        base = rng.randint(10000, 60000)
        readings = [{"date": f"2026-{m:02d}-{rng.randint(1, 28):02d}", "value": base - 300 * (11 - m), "unit": unit}
                    for m in (11, 10, 9)]
        meters[mid] = {"fuel": fuel, "readings": readings}
    balance = rng.choice([180, 240, 312.6, 455.4, 600, 726.9, 960])
    return {"account": {"account_number": number, "name": rng.choice(NAMES), "address": address,
                        "meters": [{"meter_id": m, "fuel": v["fuel"]} for m, v in meters.items()], "tariff":
                        rng.choice(["Fixed 12", "Flex", "Green Saver"])},
            "meters": meters, "ticket": f"OUT-{rng.randint(100000, 999999)}", "eta": f"{rng.randint(1, 6)} hours",
            "balance": f"{balance:.2f}", "due": f"2026-12-{rng.randint(10, 28):02d}",
            "plan": f"PP-{rng.randint(10000, 99999)}", "first_payment": f"2027-01-{rng.randint(1, 28):02d}",
            "contract": f"CT-{rng.randint(1000000, 9999999)}"}


def _typo(value: str, rng: random.Random) -> str:
    i = rng.randrange(len(value))
    digits = [d for d in "0123456789" if d != value[i]] if value[i].isdigit() else ["0"]
    return value[:i] + rng.choice(digits) + value[i + 1:]


def script(w: dict[str, Any], rng: random.Random) -> tuple[list[str], list[list[Any]]]:
    """The customer's turns and the model's responses (a list of parts each: a text or a call)."""
    acct = w["account"]
    number, address = acct["account_number"], acct["address"]
    turns: list[str] = []
    model: list[list[Any]] = []
    by_number = rng.random() < 0.5
    said = number if by_number else address
    requests = rng.sample(["readings", "outage", "plan", "move"], rng.choice([2, 3]))
    openers = {
        "readings": ["Hi, can you tell me my last meter readings? My account number is {n}.",
                     "Hello, I'd like to check the readings on my meter. I live at {a}.",
                     "Could you read me my recent {fuel} readings? Account {n}."],
        "outage": ["There's no {fuel} at {a} since this morning, can you help?",
                   "I want to report an outage. Account number {n}.",
                   "Our {fuel} supply is out. We're at {a}."],
        "plan": ["I can't pay my bill in one go. Can I spread it? Account {n}.",
                 "Hi, I'd like a payment plan for my balance. The address is {a}.",
                 "Could I pay what I owe in instalments? My account is {n}."],
        "move": ["I'm moving house and want to take my contract with me. Account {n}.",
                 "Hello, we are moving out of {a} and need the supply moved.",
                 "Please move my energy contract to my new place. My account number is {n}."],
    }
    followups = {
        "readings": ["One more thing: what were my last meter readings?", "Also, can you read me my meter readings?"],
        "outage": ["And the {fuel} is out at the moment too, can you log that?",
                   "Also, we have no {fuel} right now. Please report it."],
        "plan": ["Could I also spread my balance over a few months?", "Also, can I pay my bill in instalments?"],
        "move": ["Oh, and I'm moving soon: can the contract come with me?", "Also, I need my contract moved."],
    }
    fuel_meter = acct["meters"][0]
    first = True
    for req in requests:
        if first:
            template = rng.choice([t for t in openers[req] if ("{n}" in t) == by_number])
        else:
            template = rng.choice(followups[req])
        turns.append(template.format(n=number, a=address, fuel=fuel_meter["fuel"]))
        if first:
            if rng.random() < 0.25:  # a mistyped id: the tool fails, the agent asks, the customer says it again
                house = address.split()[0]
                wrong = _typo(number, rng) if by_number else address.replace(house, str(int(house) + 1), 1)
                model.append([_call("find_account", **({"account_number": wrong} if by_number
                                                        else {"address": wrong}))])
                model.append(["I couldn't find that account. Could you say it again?"])
                turns.append(rng.choice([f"Sorry, it's {said}.", f"Let me check... {said}.", f"It should be {said}."]))
            model.append([_call("find_account", **({"account_number": number} if by_number else {"address": address}))])
            first = False
        n = acct["account_number"]
        if req == "readings":
            meter = rng.choice(acct["meters"])
            if rng.random() < 0.2:
                bad = _typo(meter["meter_id"], rng)
                model.append([_call("get_meter_readings", meter_id=bad, months=3)])
            model.append([_call("get_meter_readings", meter_id=meter["meter_id"], months=3)])
            r = w["meters"][meter["meter_id"]]["readings"]
            model.append([f"Your {meter['fuel']} meter {meter['meter_id']} read {r[0]['value']} {r[0]['unit']} on "
                          f"{r[0]['date']}, {r[1]['value']} on {r[1]['date']}."])
        elif req == "outage":
            meter = fuel_meter
            model.append([_call("open_outage_ticket", account_number=n, address=address, fuel=meter["fuel"],
                                description=rng.choice(["no supply since this morning", "supply out",
                                                        "outage reported by customer"]))])
            model.append([f"I've opened ticket {w['ticket']}; a crew should be there within {w['eta']}."])
        elif req == "plan":
            months = rng.choice([3, 4, 6])
            model.append([_call("get_balance", account_number=n)])
            model.append([f"Your balance is {w['balance']} due {w['due']}. Over how many months would you like to "
                          "pay?"])
            turns.append(rng.choice([f"{months} months please.", f"Let's do {months}.",
                                     f"Can we make it {months} monthly payments?"]))
            monthly = f"{float(w['balance']) / months:.2f}"
            model.append([_call("create_payment_plan", account_number=n, total=w["balance"], months=months,
                                monthly_amount=monthly)])
            model.append([f"Done: plan {w['plan']}, {months} payments of {monthly}, the first on "
                          f"{w['first_payment']}."])
        else:
            new = f"{rng.randint(1, 220)} {rng.choice(STREETS)}, {rng.choice(TOWNS)}"
            date = f"2027-01-{rng.randint(2, 28):02d}"
            model.append(["Where are you moving, and from which date?"])
            turns.append(rng.choice([f"To {new}, from {date}.", f"We move to {new} on {date}.",
                                     f"New address is {new}; the move is {date}."]))
            meter = rng.choice(acct["meters"])
            model.append([_call("get_meter_readings", meter_id=meter["meter_id"], months=1)])
            last = w["meters"][meter["meter_id"]]["readings"][0]["value"]
            model.append([_call("move_contract", account_number=n, new_address=new, move_date=date,
                                meter_read=str(last))])
            model.append([f"Your contract {w['contract']} starts at {new} on {date}; the old address closes on "
                          f"the reading {last}."])
    return turns, model


def plans(n: int, seed: int) -> list[tuple[str, str, dict[str, Any], list[str], list[list[Any]]]]:
    """N conversations to run: (session id, user id, the tools' world, the customer's turns, the model's script)."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        w = world(rng)
        turns, model_script = script(w, rng)
        out.append((f"desk-{seed}-{i:03d}", w["account"]["name"].lower().replace(" ", "_"), w, turns, model_script))
    return out


async def run(plan: tuple[str, str, dict[str, Any], list[str], list[list[Any]]], memory: Any = None,
              tools: tuple[Any, ...] = (), sessions: Any = None) -> dict[str, Any]:
    """The plan run through a real Runner (``sessions``, an in-memory session service unless given), the session
    added to ``memory`` (an ADK memory service) after each turn as ADK apps do; the session as saved, its
    instruction beside it."""
    from google.adk.agents import LlmAgent
    from google.adk.models.base_llm import BaseLlm
    from google.adk.models.llm_response import LlmResponse
    from google.adk.runners import Runner
    from google.adk.sessions import InMemorySessionService
    from google.genai import types

    class Scripted(BaseLlm):
        """Answers from the script, one response a call."""

        model: str = "scripted"
        script: list[list[Any]] = []

        async def generate_content_async(self, llm_request: Any, stream: bool = False):
            parts = [types.Part(text=p) if isinstance(p, str) else types.Part(function_call=types.FunctionCall(**p))
                     for p in self.script.pop(0)]
            yield LlmResponse(content=types.Content(role="model", parts=parts))

    sid, user, w, turns, model_script = plan
    WORLD.clear()
    WORLD.update(w)
    llm = Scripted(script=list(model_script))
    agent = LlmAgent(name="utility_agent", model=llm, instruction=POLICY, tools=[*TOOLS, *tools])
    sessions = sessions or InMemorySessionService()
    runner = Runner(agent=agent, app_name="utility", session_service=sessions, memory_service=memory)
    await sessions.create_session(app_name="utility", user_id=user, session_id=sid)
    for text in turns:
        async for _ in runner.run_async(user_id=user, session_id=sid,
                                        new_message=types.Content(role="user", parts=[types.Part(text=text)])):
            pass
        if memory is not None:
            await memory.add_session_to_memory(await sessions.get_session(app_name="utility", user_id=user,
                                                                          session_id=sid))
    assert not llm.script, f"{sid}: {len(llm.script)} scripted responses left"
    session = await sessions.get_session(app_name="utility", user_id=user, session_id=sid)
    return {**session.model_dump(mode="json"), "system": agent.instruction}


def conversations(n: int, seed: int) -> list[tuple[str, dict[str, Any]]]:
    """N sessions as saved, (session id, the saved dict); needs google-adk."""
    return [(plan[0], asyncio.run(run(plan))) for plan in plans(n, seed)]


write = walkthrough_cli.one_json_a_session(conversations)


def main(argv: list[str] | None = None) -> int:
    return walkthrough_cli.main(write, __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
