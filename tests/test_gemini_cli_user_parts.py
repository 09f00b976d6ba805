"""Gemini CLI's JSONL session writes a user message's content as parts (``[{"text": ...}]``, a PartListUnion), the
way the CLI sends it to the model. Added to ScopedMemory alone, a line at a time as a sidecar tails the file (README
"Codex CLI and Claude Code"), that record was read as Bedrock Converse (a block of one member and no type) and
refused ("role 'None' is not a Converse role"): every prompt the user typed was lost from the live memory, and the
memories no longer matched the importer's. A walkthrough found it on six hand-written sessions."""

from __future__ import annotations

import hashlib
import json

from sam_model.data.formats import detect
from sam_model.data.transcripts import ImportReport, iter_transcript_events
from sam_model.memory import HashingEncoder, ScopedMemory

ROOT = "/home/me/pricebook"
HEAD = {"sessionId": "s-1", "projectHash": hashlib.sha256(ROOT.encode()).hexdigest(),
        "startTime": "2026-03-21T10:00:00.000Z", "lastUpdated": "2026-03-21T10:00:00.000Z", "kind": "main"}


def user(i: str, text: str) -> dict:
    return {"id": i, "timestamp": "2026-03-21T10:00:01.000Z", "type": "user", "content": [{"text": text}]}


def gemini(i: str, call: dict | None, text: str = "") -> dict:
    return {"id": i, "timestamp": "2026-03-21T10:00:02.000Z", "type": "gemini", "content": text, "thoughts": [],
            "model": "gemini-2.5-pro", **({"toolCalls": [call]} if call else {})}


def tool(cid: str, name: str, args: dict, out: str) -> dict:
    return {"id": cid, "name": name, "args": args, "status": "success", "timestamp": "2026-03-21T10:00:03.000Z",
            "result": [{"functionResponse": {"id": cid, "name": name, "response": {"output": out}}}]}


def session() -> list[dict]:
    return [HEAD, user("u1", "tax_for('ca', 10000) raises KeyError; region codes come lower case"),
            {"$set": {"lastUpdated": "2026-03-21T10:00:01.500Z"}},
            gemini("g1", tool("c1", "search_file_content", {"pattern": "def tax_for"},
                              'Found 1 match for pattern "def tax_for":\n---\nFile: pricebook/tax.py\nL11: def tax_for(r'
                              'egion, amount):\n---')),
            gemini("g2", tool("c2", "read_file", {"absolute_path": f"{ROOT}/pricebook/tax.py"}, "RATES = {}")),
            user("u2", "also accept ' ca ' with spaces"),
            gemini("g3", None, "Will do.")]


def test_a_user_record_of_parts_alone_is_told_as_gemini_cli():
    assert detect([user("u1", "hello")]) == "gemini-cli"
    assert detect([user("u1", "hello"), {"$set": {"lastUpdated": "x"}}]) == "gemini-cli"


def test_a_session_with_parts_prompts_added_line_by_line_is_the_importers(tmp_path):
    path = tmp_path / "session-2026-03-21T10-00-s1.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in session()))
    events = list(iter_transcript_events(path, report=ImportReport()))
    memory = ScopedMemory(HashingEncoder(16))
    for line in session():
        memory.add([line], user_id="me", run_id="s")
    got = [m["memory"] for m in memory.get_all(user_id="me", run_id="s", limit=100)["results"]]
    assert got == [e["text"] for e in events]
    assert got[0].startswith("tax_for('ca', 10000)") and "also accept ' ca ' with spaces" in got
