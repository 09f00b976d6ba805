"""The building blocks of generated tool worlds: vocabularies, id formats, entities, tool names, result
shapes and a chat recorder, shared by the fixed plot (sam_model.data.toolworlds) and the random plots
(sam_model.data.toolplots).

They live apart from both generators so that neither imports the other: toolworlds chooses a plot generator,
and each generator only draws from these parts. Every function takes the caller's ``random.Random``, so a seed
fixes a conversation byte for byte.
"""

from __future__ import annotations

import json
import random
from typing import Any

NOUNS = ("order", "ticket", "device", "account", "shipment", "invoice", "plan", "booking", "subscription", "claim",
          "patient", "appointment", "repository", "branch", "file", "issue", "package", "vehicle", "policy",
          "payment", "room", "course", "student", "server", "container", "job", "contract", "product", "line",
          "router", "card", "loan", "delivery", "recipe", "member", "project", "task", "warehouse", "parcel",
          "module", "function", "class", "build", "release", "dataset", "model", "pipeline", "sensor", "meter")
VERBS = ("get", "find", "lookup", "fetch", "search", "list", "show", "read", "query", "inspect")
ACTIONS = ("update", "cancel", "modify", "create", "book", "transfer", "refund", "reset", "activate", "suspend",
            "assign", "move", "close", "schedule", "exchange", "return", "patch", "deploy", "merge", "apply")
FIRST = ("mia", "liam", "noah", "emma", "olivia", "ava", "yusuf", "chen", "aarav", "sofia", "lucas", "amara",
          "ivan", "fatima", "kenji", "lena", "omar", "zoe", "mateo", "priya")
LAST = ("li", "garcia", "smith", "kim", "nguyen", "patel", "muller", "rossi", "silva", "khan", "sato", "jones",
         "brown", "lopez", "novak", "ali", "dubois", "berg", "costa", "ito")
WORDS = ("alpha", "delta", "core", "util", "parser", "cache", "index", "query", "model", "view", "form", "field",
          "router", "handler", "config", "session", "token", "report", "schema", "stream", "batch", "admin")
CITIES = ("Boston", "Denver", "Lisbon", "Osaka", "Nairobi", "Lyon", "Austin", "Quito", "Perth", "Oslo")


def invented(rng: random.Random) -> str:
    """A pronounceable made-up word: entity nouns a real domain would never share with training."""
    return "".join(rng.choice("bdfgklmnprstvz") + rng.choice("aeiou") for _ in range(rng.randint(2, 3)))


def digits(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("0123456789") for _ in range(n))


def id_format(rng: random.Random):
    """A random id format of one entity type: a function rng -> a fresh value of that shape."""
    prefix = rng.choice(["#W", "ORD-", "TK", "acct_", "INV-", "P", "SR-", "".join(rng.choices("ABCDEFGHJKMNPRSTXZ",
                                                                                               k=rng.randint(2, 3)))])
    n = rng.randint(4, 8)
    ext = rng.choice([".py", ".js", ".go", ".ts", ".rb"])
    formats = [
        lambda r: prefix + digits(r, n),
        lambda r: f"{r.choice(FIRST)}_{r.choice(LAST)}_{digits(r, 4)}",
        lambda r: "".join(r.choice("0123456789abcdef") for _ in range(n + 4)),
        lambda r: f"{r.choice(WORDS)}/{r.choice(WORDS)}/{r.choice(WORDS)}_{r.choice(WORDS)}{ext}",
        lambda r: f"{r.choice(WORDS).title()}{r.choice(WORDS).title()}.{r.choice(ACTIONS)}_{r.choice(WORDS)}",
        lambda r: f"{r.choice(FIRST)}.{r.choice(LAST)}{digits(r, 2)}@{r.choice(WORDS)}.com",
        lambda r: f"2024-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}",
        lambda r: f"{digits(r, 3)}-{digits(r, 3)}-{digits(r, 4)}",
        lambda r: "".join(r.choices("ABCDEFGHJKMNPRSTXZ", k=3)) + digits(r, 3),
    ]
    return rng.choice(formats)


class Entity:
    """One entity type of a world: its noun, id format, the argument name tools take its id by and the key a
    tool result shows it under (often a different word: provenance, not name matching)."""

    def __init__(self, rng: random.Random, noun: str):
        self.noun, self.new_id = noun, id_format(rng)
        self.arg = rng.choice([f"{noun}_id", f"{noun}Id", f"{noun}_ref", noun, f"{noun}_number", f"{noun}_code"])
        self.key = self.arg if rng.random() < 0.5 else rng.choice(["id", "ref", f"{noun}_key", "identifier", "uid"])


def tool_name(style: str, verb: str, noun: str) -> str:
    if style == "camel":
        return verb + "".join(w.title() for w in noun.split("_"))
    return f"{verb}.{noun}" if style == "dotted" else f"{verb}_{noun}"


def result(rng: random.Random, fields: dict[str, Any]) -> str:
    """A tool result in one of the shapes agents log: JSON, key: value lines, or a sentence."""
    shape = rng.random()
    if shape < 0.6:
        return json.dumps(fields)
    if shape < 0.85:
        return "\n".join(f"{k}: {json.dumps(v) if isinstance(v, list) else v}" for k, v in fields.items())
    return "Found " + ", ".join(f"{k} {', '.join(map(str, v)) if isinstance(v, list) else v}" for k, v in fields.items())


class Chat:
    """Messages of one conversation with call ids."""

    def __init__(self, policy: str):
        self.messages: list[dict[str, Any]] = [{"role": "system", "content": policy}]
        self.calls = 0

    def say(self, role: str, text: str) -> None:
        self.messages.append({"role": role, "content": text})

    def call(self, name: str, args: dict[str, Any], result: str) -> None:
        self.calls += 1
        cid = f"call_{self.calls}"
        self.messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}]})
        self.messages.append({"role": "tool", "tool_call_id": cid, "name": name, "content": result})
