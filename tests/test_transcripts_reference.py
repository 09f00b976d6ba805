"""The converter against the spec written out word for word (transcript_reference.py) on generated hostile OpenAI
chat conversations: parallel calls, arguments as JSON text, as an object or not JSON, nested objects and lists,
numbers as strings, negative and decimal numbers, short ids, regex characters, unicode, underscores, a leading '#',
content as parts (text, image) or null, results answering no call or one call twice, errors in any case, JSON
lists, objects and empty results, system messages in the middle, other roles, results past the 2,000 cut, and
tools whose names look like a shell's. Any difference is a departure from the spec on an input of the kind."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest
import transcript_reference as spec

from sam_model.data.transcripts import RESULT_CUT, Conversation, convert_conversation

SHARED = Path(os.environ.get("SAM_SHARED_DIR", Path(__file__).resolve().parents[1] / ".." / "shared")).resolve()
TAU = SHARED / "data" / "tau-bench" / "gpt-4o-airline.json.gz"
GOLDEN = SHARED / "spec" / "tau-bench-airline-first20.golden.jsonl"

VALUES = ["usr_12", "#W1234", "W1234", 42, 123, "123", "-45.5", -45.5, 45.5, "new_york", "New York", "a.b*c",
          "café", "yes", "x", "ORD-77", 7, "7", 12, "12", 100, 250.0, "250", "b2", "ZX9", "(555) 123-4567",
          "jane.doe@example.com", "economy", "2024-05-01", "Sam Lee", "pay_001", "#1", "#ab", "gift_card_7",
          "Ünïcode Ñame", None, True, False, "", "tab\there", "über", "A_B", "x_y_z", "ΩMEGA", "10:30"]
TOOLS = ["get_user", "book_flight", "cancel_order", "update_address", "lookup", "update_terminal"]
ARGUMENTS = ["user_id", "order_id", "amount", "city", "note", "k_id", "flights", "passenger", "count", "code",
             "UserId", "description", "max_refund"]
WORDS = ["my", "is", "and", "please", "the", "order", "ok", "id:", "with", "for"]


def _value(rng: random.Random, depth: int = 0):
    r = rng.random()
    if depth < 2 and r < 0.12:
        return [_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    if depth < 2 and r < 0.22:
        return {rng.choice(["id", "name", "zip", "flight_number"]): _value(rng, depth + 1) for _ in range(3)}
    return rng.choice(VALUES)


def _words(rng: random.Random) -> str:
    return " ".join(str(rng.choice(VALUES)) if rng.random() < 0.5 else rng.choice(WORDS)
                    for _ in range(rng.randint(1, 8)))


def _content(rng: random.Random, text: str):
    r = rng.random()
    return None if r < 0.1 else [{"type": "text", "text": text}, {"type": "image_url", "image_url": {"url": "u"}}] \
        if r < 0.2 else [{"type": "text", "text": text}, {"type": "text", "text": _words(rng)}] if r < 0.25 else text


def _result(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.2:
        return rng.choice(["Error: ", "error ", "ERROR:", "Errors "]) + _words(rng)
    if r < 0.4:
        return json.dumps([_value(rng) for _ in range(rng.randint(0, 3))])
    if r < 0.7:
        return json.dumps({rng.choice(["status", "Name", "id1", "user_id", "x_y"]): _value(rng) for _ in range(4)})
    return "" if r < 0.75 else "x" * rng.randint(1990, 2100) if r < 0.8 else _words(rng)


def _call(rng: random.Random, call_id: str) -> dict:
    arguments = {a: _value(rng) for a in rng.sample(ARGUMENTS, rng.randint(0, 4))}
    r = rng.random()
    raw = json.dumps(arguments) if r < 0.6 else arguments if r < 0.85 else rng.choice(
        ["{bad", "[1,2]", "", "null", '"s"', '{"a": 1,}'])
    return {"id": call_id, "type": "function", "function": {"name": rng.choice(TOOLS), "arguments": raw}}


def conversation(rng: random.Random) -> list[dict]:
    messages = [{"role": "system", "content": "Policy: " + _words(rng)}] if rng.random() < 0.7 else []
    ids: list[str] = []
    for _ in range(rng.randint(1, 12)):
        r = rng.random()
        if r < 0.3:
            messages.append({"role": "user", "content": _content(rng, _words(rng))})
        elif r < 0.6:
            m = {"role": "assistant", "content": _content(rng, _words(rng)) if rng.random() < 0.5 else None}
            calls = []
            for _ in range(rng.choice([0, 1, 1, 1, 2, 3])):
                ids.append(f"c{len(ids)}")
                calls.append(_call(rng, rng.choice(ids[:-1]) if rng.random() < 0.05 and len(ids) > 1 else ids[-1]))
            messages.append({**m, "tool_calls": calls} if calls else m)
        elif r < 0.9:
            m = {"role": "tool", "content": _result(rng)}
            if ids and rng.random() < 0.9:
                m["tool_call_id"] = rng.choice(ids) if rng.random() < 0.8 else "unknown"
            if rng.random() < 0.2:
                m["name"] = rng.choice(["named_tool", ""])
            messages.append(m)
        else:
            messages.append({"role": rng.choice(["system", "observation", "ipython"]), "content": _words(rng)})
    return messages


@pytest.mark.skipif(not (TAU.is_file() and GOLDEN.is_file()), reason="tau-bench data or golden file absent")
def test_the_reference_reproduces_the_golden_file():
    """The reference is the spec: it writes the golden file line for line, as the converter does."""
    import gzip

    data = json.loads(gzip.open(TAU, "rt").read())[:20]
    ours = [{"episode_id": f"tau1-airline-gpt-4o-task{t['task_id']}-trial{t['trial']}", **e}
            for t in data for e in spec.convert(t["traj"], cut=RESULT_CUT)]
    golden = [{k: v for k, v in json.loads(line).items() if k != "meta"} for line in GOLDEN.read_text().splitlines()]
    assert ours == golden


@pytest.mark.parametrize("seed, label, masked, cut", [
    (1, "origin", True, None), (2, "all", True, RESULT_CUT), (3, "latest", False, None)])
def test_hostile_conversations_convert_as_the_spec_says(seed, label, masked, cut):
    rng = random.Random(seed)
    compared = 0
    for n in range(300):
        messages = conversation(rng)
        if not any(m["role"] not in ("system",) and (m.get("content") or m["role"] == "tool" or m.get("tool_calls"))
                   for m in messages):
            continue  # no event: the converter refuses an empty conversation
        events = convert_conversation(Conversation("ep", json.loads(json.dumps(messages)), f"gen:{n}", "ep"),
                                      label=label, masked=masked, result_limit=cut)
        ours = [{k: v for k, v in e.items() if k not in ("episode_id", "meta")} for e in events]
        assert ours == spec.convert(json.loads(json.dumps(messages)), label, masked, cut), json.dumps(messages)
        compared += 1
    assert compared > 250
