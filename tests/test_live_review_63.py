"""A non-author review of the live-path leftovers of stop 63 (tests/test_live_leftovers_63.py): what it missed."""

from __future__ import annotations

import pytest
from test_live_adds import (
    as_jsonl,
    fed,
    imported,
    rich,
    rollout_name,
    stored,
    to_claude_code,
    to_codex_exec,
    to_gemini_cli,
    to_rollout,
)

from sam_model.memory import HashingEncoder, ScopedMemory


def _blank_before_calls() -> list[dict]:
    """The rich conversation with the model's words of whitespace alone before its calls (Claude writes a "\\n\\n"
    text block there, a line of its own in Claude Code's file)."""
    chat = rich()
    chat.insert(2, {"role": "assistant", "content": "\n\n"})
    return chat


SESSIONS = {"claude-code": lambda c: ("0b6c8d5e-live.jsonl", to_claude_code(c)),
            "gemini-cli": lambda c: ("chats/session-2026-03-30T10-00-live.jsonl", as_jsonl(to_gemini_cli(c))),
            "codex": lambda c: (rollout_name(), to_rollout(c)),
            "codex exec": lambda c: ("codex-exec.jsonl", to_codex_exec(c))}


@pytest.mark.parametrize("how", ["a line an add", "one add", "checked first"])
@pytest.mark.parametrize("session", sorted(SESSIONS))
def test_a_session_line_of_the_models_blank_words_is_no_memory_and_stops_no_add(tmp_path, session, how):
    """A session's model words of whitespace alone were refused ('entry 0.content is only whitespace'), stopping a
    sidecar forwarding each line (and the whole session's add), though the importer reads the file. They are no
    memory, said in the add's skipped: the memories are the importer's words but the blank ones, in order."""
    name, lines = SESSIONS[session](_blank_before_calls())
    want = [e["text"] for e in imported(tmp_path, name, lines) if e["text"].strip()]
    plain, without = SESSIONS[session](rich())  # the importer reads the blank words as nothing else
    assert want == [e["text"] for e in imported(tmp_path / "plain", plain, without)]
    batches = [lines] if how == "one add" else [[x] for x in lines]
    if how == "checked first":
        memory, skipped = ScopedMemory(HashingEncoder(16)), []
        for batch in batches:
            read = memory.check_add(batch, "messages", user_id="me", run_id="s")
            skipped += memory.add(batch, user_id="me", run_id="s", read=read).get("skipped", [])
        assert any("only whitespace" in s["reason"] for s in skipped)
    else:
        memory = fed(lines, batches)
    assert [t for _, _, t in stored(memory)] == want


def _words(role: str, said: str) -> dict:
    return {"role": role, "content": [{"text": said}]}


CALL = {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": "book", "input": {"guests": 2}}}]}
RESULT = {"role": "user", "content": [{"toolResult": {"toolUseId": "t1", "content": [{"text": "booked"}]}}]}


@pytest.mark.parametrize("reply", ["\n\n", " "])
def test_a_history_added_whole_after_a_model_reply_of_no_words_stores_the_messages_after_it(reply):
    """Claude on Bedrock at times ends its turn after a tool result with no words (Strands keeps the reply, its
    "\\n\\n" block, in agent.messages): the add holding it was refused ('content is only whitespace'), and
    so was every later add of the whole history, which holds it, so nothing said after it was stored. The reply
    is no memory, said in the add's skipped; the messages after it are stored once."""
    history = [_words("user", "A table for two tonight"), CALL, RESULT, _words("assistant", reply),
               _words("user", "Thanks! Also, I'm allergic to nuts."), _words("assistant", "Noted.")]
    memory = ScopedMemory(HashingEncoder(16))
    answers = [memory.add(history[:end], user_id="t", run_id="r") for end in (1, 2, 3, 4, 6)]
    assert "only whitespace, the model's reply of no words" in answers[3]["skipped"][0]["reason"]
    got = [r["memory"] for r in memory.get_all(user_id="t", run_id="r", limit=None)["results"]]
    assert got == ["A table for two tonight", "CALL book(guests=2)", "book: booked",
                   "Thanks! Also, I'm allergic to nuts.", "Noted."]


def test_an_autogen_context_with_a_reply_of_no_words_stores_the_runs_after_it():
    """The same in AutoGen's model context added whole after each run: an AssistantMessage of content ''."""
    def user(t: str) -> dict:
        return {"type": "UserMessage", "content": t, "source": "user"}

    run1 = [user("Reset my password"),
            {"type": "AssistantMessage", "source": "helpdesk",
             "content": [{"id": "c1", "name": "reset_password", "arguments": '{"user": "mia"}'}]},
            {"type": "FunctionExecutionResultMessage",
             "content": [{"call_id": "c1", "content": "sent", "name": "reset_password", "is_error": False}]},
            {"type": "AssistantMessage", "content": "", "source": "helpdesk"}]
    memory = ScopedMemory(HashingEncoder(16))
    memory.add(run1, user_id="t", run_id="r")
    memory.add([*run1, user("Got it, thanks")], user_id="t", run_id="r")
    got = [r["memory"] for r in memory.get_all(user_id="t", run_id="r", limit=None)["results"]]
    assert got[0] == "Reset my password" and got[-1] == "Got it, thanks" and len(got) == 4


def test_a_users_blank_message_is_still_refused_with_its_batch():
    """Guard: a blank message of the user's (or one with no content) is the caller's mistake, refused naming it."""
    memory = ScopedMemory(HashingEncoder(16))
    for first, bad in ((_words("user", "hi"), _words("user", " ")),
                       ({"role": "user", "content": "hi"}, {"role": "user", "content": " "}),
                       ({"role": "user", "content": "hi"}, {"role": "assistant", "content": None})):
        with pytest.raises(ValueError, match=r"^data(\[1\]|, message 1)\.content is (only whitespace|missing)"):
            memory.add([first, bad], user_id="t", run_id="r")
    assert memory.get_all(user_id="t", run_id="r")["results"] == []


def test_a_model_reply_of_no_words_is_a_200_over_http_that_lists_it_in_skipped(tmp_path):
    """Over sam-serve's HTTP add the refusal was a 422 at every add of the history holding the reply; it is a 200
    listing the reply in skipped, and the next add of the history stores what was said after it."""
    pytest.importorskip("fastapi", reason="the [serve] extra is not installed (pip install -e '.[serve]')")
    from fastapi.testclient import TestClient
    from serving import KEYS, keys_file

    from sam_model.serve.http import create_app
    from sam_model.serve.tenants import Tenants, read_keys
    from sam_model.storeconfig import StoreConfig

    tenants = Tenants(read_keys(keys_file(tmp_path)), tmp_path / "data", HashingEncoder(32), StoreConfig())
    http, auth = TestClient(create_app(tenants)), {"Authorization": f"Bearer {KEYS['acme']}"}
    history = [_words("user", "A table for two tonight"), CALL, RESULT, _words("assistant", "\n\n"),
               _words("user", "I'm allergic to nuts.")]
    r = http.post("/v1/memories", headers=auth, json={"user_id": "mia", "run_id": "r", "messages": history[:4]})
    assert r.status_code == 200 and [n["message"] for n in r.json()["skipped"]] == [3], r.text
    r = http.post("/v1/memories", headers=auth, json={"user_id": "mia", "run_id": "r", "messages": history})
    assert r.status_code == 200 and [m["memory"] for m in r.json()["results"]] == ["I'm allergic to nuts."], r.text


def test_an_openai_legacy_function_call_of_empty_content_is_no_reply_skipped():
    """Guard: an assistant message of content '' holding OpenAI's legacy function_call is a call, not a reply of no
    words: it is never said unstored with its call gone silently (885da3b skipped it, the call lost, its result
    stored alone); it is stored with its call, or refused naming it."""
    msgs = [{"role": "user", "content": "my phone is 555"},
            {"role": "assistant", "content": "", "function_call": {"name": "lookup", "arguments": '{"phone": "555"}'}},
            {"role": "function", "name": "lookup", "content": "ok"}]
    memory = ScopedMemory(HashingEncoder(16))
    try:
        out = memory.add(msgs, user_id="t", run_id="r")
    except ValueError as err:
        assert str(err).startswith("data[1].content")
    else:
        assert "CALL lookup(phone=555)" in [r["memory"] for r in out["results"]]
