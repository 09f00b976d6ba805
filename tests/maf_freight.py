"""Templated conversations of a freight forwarder's shipment-exceptions desk built on Microsoft Agent Framework, as
a FileSessionStore keeps them.

Each conversation is a real ``Agent`` (agent-framework-core 1.26) driven by a scripted chat client
(tests/maf_fake.py: no network, no language model): two or three turns of a shipper, each a request (where a
shipment is, a customs hold, a rebooking onto another vessel, a delivery appointment), the shipment found by the
tracking number the shipper says or by the booking reference; the container id, the hold's id and the vessels come
from tool results; a mistyped tracking number raises in the tool (the framework marks the result failed) and is
said again. Saved as the README says, ``{**session.to_dict(), "instructions":
agent.default_options["instructions"]}``, one ``SESSION_ID.json`` a conversation.

Written by a template with varied values (ids, ports, dates) and several phrasings: figures measured on these logs
are easy and must be reported as templated. ``python tests/maf_freight.py OUT N SEED`` (with agent-framework-core
installed) writes N conversations into the folder OUT.
"""

from __future__ import annotations

import asyncio
import json
import random
import string
import sys
from typing import Any

import walkthrough_cli

POLICY = ("You run the shipment-exceptions desk of Blue Anchor Freight. Find the shipment by its tracking number or "
          "booking reference before acting on it. Never rebook a container or release a customs hold without the "
          "shipper's consent.")
PORTS = ["Rotterdam", "Hamburg", "Antwerp", "Felixstowe", "Le Havre", "Valencia", "Gdansk", "Piraeus"]
VESSELS = ["MSC Aurora", "Maersk Elba", "CMA CGM Tage", "Ever Gentle", "Hapag Lisbon", "ONE Harmony", "Cosco Pearl"]
CARRIERS = ["MSCU", "MAEU", "CMAU", "EGLV", "HLCU", "ONEU"]

WORLD: dict[str, Any] = {}  # the tools' answers for the conversation being run: set before each run


def track_shipment(tracking_number: str) -> str:
    """Where a shipment is: its container, port, status and any hold."""
    s = WORLD["shipment"]
    if tracking_number != s["tracking_number"]:
        raise ValueError(f"no shipment {tracking_number}")
    return json.dumps(s)


def find_booking(booking_ref: str) -> str:
    """A shipment by its booking reference."""
    s = WORLD["shipment"]
    if booking_ref != s["booking_ref"]:
        raise ValueError(f"no booking {booking_ref}")
    return json.dumps(s)


def customs_hold(hold_id: str) -> str:
    """A customs hold's reason and the documents it needs."""
    return json.dumps({"hold_id": hold_id, "reason": WORLD["reason"], "documents": WORLD["documents"]})


def submit_documents(hold_id: str, container_id: str, document: str) -> str:
    """Send a document to customs for a hold on a container."""
    return json.dumps({"submission_id": WORLD["submission"], "status": "received"})


def vessel_options(port: str, container_id: str) -> str:
    """The next sailings with space for a container from a port."""
    return json.dumps({"options": WORLD["options"]})


def rebook_container(container_id: str, voyage_id: str) -> str:
    """Move a container onto another sailing."""
    return json.dumps({"booking_ref": WORLD["shipment"]["booking_ref"], "voyage_id": voyage_id, "status": "rebooked"})


def delivery_slot(container_id: str, date: str) -> str:
    """Book a delivery appointment for a container on a date."""
    return json.dumps({"appointment_id": WORLD["appointment"], "date": date, "window": WORLD["window"]})


TOOLS = [track_shipment, find_booking, customs_hold, submit_documents, vessel_options, rebook_container, delivery_slot]


def _digits(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(string.digits) for _ in range(n))


def world(rng: random.Random) -> dict[str, Any]:
    """One shipment and what the tools will answer."""
    port = rng.choice(PORTS)
    hold = rng.random() < 0.7
    shipment = {"tracking_number": f"BAF{_digits(rng, 9)}", "booking_ref": f"BK-{_digits(rng, 6)}",
                "container_id": f"{rng.choice(CARRIERS)}{_digits(rng, 7)}", "port": port,
                "status": "customs hold" if hold else "awaiting vessel", "vessel": rng.choice(VESSELS),
                "hold_id": f"CH-{_digits(rng, 5)}" if hold else None}
    options = [{"voyage_id": f"V{_digits(rng, 4)}{rng.choice('NSEW')}", "vessel": v,
                "departs": f"2026-12-{rng.randint(10, 28):02d}"} for v in rng.sample(VESSELS, 2)]
    return {"shipment": shipment, "reason": rng.choice(["missing commercial invoice", "HS code query",
                                                        "missing certificate of origin"]),
            "documents": rng.sample(["commercial invoice", "packing list", "certificate of origin"], 2),
            "submission": f"SUB-{_digits(rng, 6)}", "options": options, "appointment": f"AP-{_digits(rng, 5)}",
            "window": rng.choice(["08:00-12:00", "12:00-16:00", "16:00-20:00"])}


def _typo(value: str, rng: random.Random) -> str:
    i = rng.randrange(3, len(value))
    return value[:i] + rng.choice([d for d in string.digits if d != value[i]]) + value[i + 1:]


def script(w: dict[str, Any], rng: random.Random) -> tuple[list[str], list[tuple[str, Any]]]:
    """The shipper's turns and the model's steps: ("say", text) or ("call", (name, arguments))."""
    s = w["shipment"]
    tn, ref, box = s["tracking_number"], s["booking_ref"], s["container_id"]
    turns: list[str] = []
    steps: list[tuple[str, Any]] = []
    by_tracking = rng.random() < 0.6
    requests = ["hold"] if s["hold_id"] else []
    requests += rng.sample(["rebook", "delivery"], rng.choice([1, 2]))
    rng.shuffle(requests)
    opener = rng.choice(["Hi, where is my shipment? Tracking number {t}.", "Can you check shipment {t} for me?",
                         "Our cargo seems stuck. The tracking number is {t}."] if by_tracking else
                        ["Hello, booking {r} hasn't moved in days. What's going on?",
                         "Can you look up booking reference {r}?", "Hi, I'm chasing booking {r}."])
    turns.append(opener.format(t=tn, r=ref))
    if by_tracking and rng.random() < 0.25:  # a mistyped number: the tool raises, the shipper says it again
        steps.append(("call", ("track_shipment", {"tracking_number": _typo(tn, rng)})))
        steps.append(("say", "I couldn't find that tracking number. Could you check it?"))
        turns.append(rng.choice([f"Sorry, it's {tn}.", f"My mistake: {tn}.", f"It should be {tn}."]))
    steps.append(("call", ("track_shipment", {"tracking_number": tn}) if by_tracking else
                  ("find_booking", {"booking_ref": ref})))
    steps.append(("say", f"Container {box} is at {s['port']}, status: {s['status']}."))
    for req in requests:
        turns.append(rng.choice({"hold": ["What is the customs hold about?", "Can we clear the customs hold?"],
                                     "rebook": ["Can you put it on an earlier vessel?", "Please rebook it."],
                                 "delivery": ["Can you book the delivery?", "I need a delivery slot."]}[req]))
        if req == "hold":
            steps.append(("call", ("customs_hold", {"hold_id": s["hold_id"]})))
            steps.append(("say", f"Customs holds it for a {w['reason']}; they need the {w['documents'][0]}. "
                                 "Shall I submit it?"))
            turns.append(rng.choice(["Yes, send it.", "Please do.", "Go ahead and submit it."]))
            steps.append(("call", ("submit_documents", {"hold_id": s["hold_id"], "container_id": box,
                                                        "document": w["documents"][0]})))
            steps.append(("say", f"Submitted as {w['submission']}."))
        elif req == "rebook":
            steps.append(("call", ("vessel_options", {"port": s["port"], "container_id": box})))
            o = w["options"]
            steps.append(("say", f"{o[0]['vessel']} ({o[0]['voyage_id']}) departs {o[0]['departs']}, "
                                 f"{o[1]['vessel']} ({o[1]['voyage_id']}) departs {o[1]['departs']}. Which one?"))
            pick = rng.choice(o)
            turns.append(rng.choice([f"The {pick['vessel']} please.", f"Let's take {pick['vessel']}."]))
            steps.append(("call", ("rebook_container", {"container_id": box, "voyage_id": pick["voyage_id"]})))
            steps.append(("say", f"Rebooked on {pick['vessel']}, voyage {pick['voyage_id']}."))
        else:
            date = f"2027-01-{rng.randint(2, 28):02d}"
            steps.append(("say", "Which day should it be delivered?"))
            turns.append(rng.choice([f"On {date}.", f"{date} works.", f"Deliver it on {date} please."]))
            steps.append(("call", ("delivery_slot", {"container_id": box, "date": date})))
            steps.append(("say", f"Delivery {w['appointment']} booked on {date}, {w['window']}."))
    return turns, steps


def plans(n: int, seed: int) -> list[tuple[str, dict[str, Any], list[str], list[tuple[str, Any]]]]:
    """N conversations to run: (session id, the tools' world, the shipper's turns, the model's steps)."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        w = world(rng)
        turns, steps = script(w, rng)
        out.append((f"freight-{seed}-{i:03d}", w, turns, steps))
    return out


async def run(plan: tuple[str, dict[str, Any], list[str], list[tuple[str, Any]]], providers: list[Any] = (),
              session_user: tuple[Any, str] | None = None) -> dict[str, Any]:
    """The plan run through a real Agent, a turn a run of the session (made by ``session_user``'s provider for
    that user where given: SAMContextProvider.create_session); the session as saved, its instructions beside it."""
    from agent_framework import Agent, Content, tool
    from maf_fake import ScriptedClient

    sid, w, turns, steps = plan
    WORLD.clear()
    WORLD.update(w)
    script = [[Content.from_text(x)] if kind == "say" else
              [Content.from_function_call(call_id=f"call_{sid}_{i}", name=x[0], arguments=x[1])]
              for i, (kind, x) in enumerate(steps)]
    client = ScriptedClient(script)
    agent = Agent(client=client, instructions=POLICY, tools=[tool(f) for f in TOOLS], context_providers=list(providers))
    session = (session_user[0].create_session(agent, session_user[1], session_id=sid) if session_user
               else agent.create_session(session_id=sid))
    for text in turns:
        await agent.run(text, session=session)
    assert not client.script, f"{sid}: {len(client.script)} scripted responses left"
    return {**session.to_dict(), "instructions": agent.default_options["instructions"]}


def conversations(n: int, seed: int) -> list[tuple[str, dict[str, Any]]]:
    """N sessions as saved, (session id, the saved dict); needs agent-framework-core."""
    return [(plan[0], asyncio.run(run(plan))) for plan in plans(n, seed)]


write = walkthrough_cli.one_json_a_session(conversations)


def main(argv: list[str] | None = None) -> int:
    return walkthrough_cli.main(write, __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
