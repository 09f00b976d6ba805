"""Leftovers of the live (run-time add) path found at the end of stop 61, each reproduced here first."""

from __future__ import annotations

import pytest
from test_live_gemini_turn import stored
from test_live_leftovers_61 import _claim, _words
from test_live_responses import stored as stored_items
from test_live_reuse import reuse_net  # noqa: F401  (the fixture)

from sam_model.memory import HashingEncoder, ScopedMemory


def _memory() -> ScopedMemory:
    return ScopedMemory(HashingEncoder(16))


def added_whole_and_alone(msgs: list, how: str, tmp_path) -> tuple[ScopedMemory, ScopedMemory]:
    """Two scopes given ``msgs``: one the whole history at each message (a hook adding agent.messages: checked first,
    or saved and loaded after each add, as ``how`` says), the other each message alone; each message stored once
    means the two hold the same memories."""
    whole, alone = _memory(), _memory()
    for end in range(1, len(msgs) + 1):
        read = whole.check_add(msgs[:end], "data", user_id="t", run_id="r") if how == "checked first" else None
        whole.add(msgs[:end], user_id="t", run_id="r", read=read)
        alone.add(msgs[end - 1:end], user_id="t", run_id="r")
        if how == "saved and loaded":
            whole = ScopedMemory.load(whole.save(tmp_path / "m"), HashingEncoder(16))
    return whole, alone


@pytest.mark.parametrize("how", ["in process", "saved and loaded"])
def test_a_whole_history_added_at_each_message_stores_the_first_user_message_once(tmp_path, how):
    """A hook adding agent.messages whole at each message (Strands' MessageAddedEvent) adds the user's first
    message alone, words with nothing written once, then again with the model's call: it was stored twice (9
    memories for 8). The scope's first add is its whole conversation, so an add opening with it and going on with
    something written once is it sent again."""
    whole, alone = added_whole_and_alone(_claim(), how, tmp_path)
    assert stored(whole) == stored(alone) and len(stored(alone)) == 8


@pytest.mark.parametrize("how", ["delete_all", "each deleted", "delete_all, saved and loaded"])
def test_a_whole_history_sent_after_its_memories_are_deleted_keeps_them_deleted(tmp_path, how):
    """A user deletes every memory of a scope while the agent still holds the conversation: the whole history it
    sends after its next invocation opened with the deleted turns, and stored them all again (the scope had
    forgotten its last add with its conversation). The key of the last add (a digest and a count, no word) stays,
    so the deleted start is read once, its notes say so, and only the new turns are stored."""
    msgs = _claim()
    memory = _memory()
    memory.add(msgs[:4], user_id="t", run_id="r")
    if how.startswith("delete_all"):
        memory.delete_all(user_id="t", run_id="r")
    else:
        for r in memory.get_all(user_id="t", run_id="r")["results"]:
            memory.delete(r["id"], user_id="t", run_id="r")
    if how.endswith("loaded"):
        memory = ScopedMemory.load(memory.save(tmp_path / "m"), HashingEncoder(16))
    out = memory.add(msgs[:8], user_id="t", run_id="r")
    assert out["notes"][0]["reason"].startswith("data[0:4]: the scope's last add")
    kept = [r["memory"] for r in memory.get_all(user_id="t", run_id="r")["results"]]
    fresh = _memory()
    fresh.add(msgs[4:8], user_id="t", run_id="r")
    assert kept == [r["memory"] for r in fresh.get_all(user_id="t", run_id="r")["results"]] and len(kept) == 4


def test_the_notes_of_an_add_over_http_name_the_bodys_field(tmp_path):
    """The add's note that its start was the scope's last add sent again said 'data[0:4]: ...', ScopedMemory.add's
    argument, over HTTP, where the body's field is 'messages': it names the caller's field, as errors do."""
    pytest.importorskip("fastapi", reason="the [serve] extra is not installed (pip install -e '.[serve]')")
    from fastapi.testclient import TestClient
    from serving import KEYS, keys_file

    from sam_model.serve.http import create_app
    from sam_model.serve.tenants import Tenants, read_keys
    from sam_model.storeconfig import StoreConfig

    tenants = Tenants(read_keys(keys_file(tmp_path)), tmp_path / "data", HashingEncoder(16), StoreConfig())
    http, key, scope = TestClient(create_app(tenants)), {"X-API-Key": KEYS["acme"]}, {"user_id": "t", "run_id": "r"}
    msgs = _claim()
    for end in (4, 8):
        r = http.post("/v1/memories", headers=key, json={"messages": msgs[:end], **scope})
        assert r.status_code == 200, r.text
    assert r.json()["notes"][0]["reason"].startswith("messages[0:4]: the scope's last add of Converse messages")
    tenants.close()


@pytest.mark.parametrize("how", ["in process", "saved and loaded"])
def test_a_deleted_streaming_responses_preamble_stays_deleted_at_its_done(tmp_path, how):
    """A streaming Responses agent adds its preamble at response.output_item.added and again at .done; a delete of
    its memory between them closes the open turn (the words are gone from the conversation), and the .done,
    another version of an item of a closed turn, was read as a new item: the deleted words were back. Responses
    writes the item's id (msg_...) once, so its later versions stay out; the rest is stored as the importer
    reads the log."""
    from test_live_responses import INSTRUCTIONS, conversation, imported

    items = conversation()
    memory = _memory()
    memory.add([{"role": "system", "content": INSTRUCTIONS}], user_id="t", run_id="r")
    for x in items:
        if x.get("id") == "msg_3":
            memory.add([{**x, "status": "in_progress", "content": [{"type": "output_text", "text": "Found"}]}],
                       user_id="t", run_id="r")
            gone = next(r for r in memory.get_all(user_id="t", run_id="r", limit=None)["results"]
                        if r["memory"] == "Found")
            memory.delete(gone["id"])
            if how == "saved and loaded":
                memory = ScopedMemory.load(memory.save(tmp_path / "m"), HashingEncoder(16))
        memory.add([x], user_id="t", run_id="r")
    got = [e[2] for e in stored_items(memory)]
    want = [e["text"] for e in imported(tmp_path, items)]
    done = items[7]["content"][0]["text"]
    assert done in want and done not in got and "Found" not in got
    assert got == [t for t in want if t != done]


@pytest.mark.parametrize("how", ["in process", "saved and loaded"])
def test_two_runs_of_one_conversation_made_at_once_store_its_history_once(tmp_path, how):
    """Two threads each run the agent from one history and add their whole history after their run: the second's
    add opened with the history, not with the scope's last add (the first's, which held the other run), and its
    start was stored again. The scope keeps its last adds, so each thread's add is read from after the history;
    the thread that goes on after its run still opens with its own last add."""
    msgs = _claim()
    history, ours, theirs = msgs[:4], msgs[4:8], [_words("user", "Can I also add roadside assistance?"),
                                                   _words("assistant", "Yes, for $4 a month.")]
    memory = _memory()
    memory.add(history, user_id="t", run_id="r")
    if how == "saved and loaded":
        memory = ScopedMemory.load(memory.save(tmp_path / "m"), HashingEncoder(16))
    memory.add([*history, *ours], user_id="t", run_id="r")
    out = memory.add([*history, *theirs], user_id="t", run_id="r")
    assert out["notes"][0]["reason"].startswith("data[0:4]: one of the scope's last 8 adds of Converse messages")
    more = [_words("user", "thanks")]
    assert memory.add([*history, *ours, *more], user_id="t", run_id="r")["notes"][0]["reason"].startswith("data[0:8]")
    got = [e[2] for e in stored(memory)]
    want = [m["content"][0]["text"] for m in (history[0], ours[0], ours[-1], *theirs, *more)]
    assert len(got) == 4 + 4 + 2 + 1 and all(got.count(t) == 1 for t in want)


def test_a_save_keeping_the_last_add_alone_loads_and_reads_it_once(tmp_path):
    """Guard: a save from before the scope kept its last adds (one key, [digest, count]) loads, its add read once."""
    import json

    msgs = _claim()
    memory = _memory()
    memory.add(msgs[:4], user_id="t", run_id="r")
    saved = memory.save(tmp_path / "m")
    d = json.loads((saved / "scoped.json").read_text())
    assert d["sent"]["t//r"][0][1] == 4
    d["sent"]["t//r"] = d["sent"]["t//r"][0][:2]  # the shape saved until stop 62
    (saved / "scoped.json").write_text(json.dumps(d))
    loaded = ScopedMemory.load(saved, HashingEncoder(16))
    assert len(loaded.add(msgs[:8], user_id="t", run_id="r")["results"]) == 4


@pytest.mark.parametrize("how", ["in process", "saved and loaded", "checked first"])
def test_a_compacted_pydantic_ai_history_added_whole_stores_the_turns_it_kept_once(tmp_path, how):
    """all_messages() added after each run, the history compacted before the third (its start replaced by a
    compaction summary, the second run kept after it): the add opened with no add the scope kept, and the kept
    run was stored again (its 8 memories twice). The turns kept are the end of the scope's last add, told by each
    message's digest and their timestamps: read once, the summary and the new run stored, as adds of each run's
    new messages store them."""
    import json

    from test_walkthrough_pydantic_ai import conversations, runs

    _, messages = conversations(1, 0)[0]
    r1, r2, r3, *_ = runs(json.loads(json.dumps(messages)))
    summary = {"kind": "request", "parts": [{"part_kind": "compaction", "content": "Summary: a trip to Lisbon.",
                                             "timestamp": "2026-12-06T11:00:00.000001Z"}]}
    memory, new = _memory(), _memory()
    answer = None
    for whole, alone in (([*r1], r1), ([*r1, *r2], r2), ([summary, *r2, *r3], [summary, *r3])):
        read = memory.check_add(whole, "messages", user_id="me", run_id="s") if how == "checked first" else None
        answer = memory.add(whole, user_id="me", run_id="s", read=read)
        new.add(alone, user_id="me", run_id="s")
        if how == "saved and loaded":
            memory = ScopedMemory.load(memory.save(tmp_path / "m"), HashingEncoder(16))

    def texts(m: ScopedMemory) -> list[str]:
        return [r["memory"] for r in sorted(m.get_all(user_id="me", run_id="s", limit=None)["results"],
                                            key=lambda r: r["step"])]

    assert texts(memory) == texts(new) and "Summary: a trip to Lisbon." in texts(memory)
    assert answer["notes"][0]["reason"].startswith(f"data[1:{1 + len(r2)}]: the end of the scope's last add")


def test_a_served_search_and_recall_take_used_order_for_themselves_alone(reuse_net, tmp_path):  # noqa: F811
    """sam-serve's search had no used_order of its own (only the store's default for every search): the HTTP body's
    and MCP recall's now order that search alone, as ScopedMemory.search(used_order=) does, the server's default
    unchanged after it; a value that is none of 'model', 'latest', 'needed', 'off' is a 4xx naming the field, in one line."""
    pytest.importorskip("fastapi", reason="the [serve] extra is not installed (pip install -e '.[serve]')")
    from fastapi.testclient import TestClient
    from serving import KEYS, keys_file
    from test_agreement import retriever
    from test_live_reuse import CHAT
    from test_mcp_remember import answer, mcp_calls

    from sam_model.serve.http import create_app
    from sam_model.serve.tenants import Tenants, read_keys
    from sam_model.store import store_config_of

    sam = retriever(reuse_net)
    tenants = Tenants(read_keys(keys_file(tmp_path)), tmp_path / "data", sam, store_config_of(sam))
    http, acme = TestClient(create_app(tenants)), {"X-API-Key": KEYS["acme"]}
    assert http.post("/v1/memories", headers=acme, json={"messages": CHAT, "run_id": "a"}).status_code == 200
    memory = tenants.tenants["acme"].memory

    def ids(**kw) -> list[str]:
        r = http.post("/v1/memories/search", headers=acme, json={"query": "", "run_id": "a", "limit": 6, **kw})
        assert r.status_code == 200, r.text
        return [h["id"] for h in r.json()["results"]]

    latest = [r["id"] for r in memory.search("", run_id="a", limit=6, used_order="latest")["results"]]
    model = [r["id"] for r in memory.search("", run_id="a", limit=6, used_order="off")["results"]]
    assert latest != model  # the orders differ: the test can fail
    assert ids(used_order="latest") == latest and ids() == model and ids(used_order="off") == model
    bad = http.post("/v1/memories/search", headers=acme, json={"query": "", "run_id": "a", "used_order": "newest"})
    assert bad.status_code == 422 and "used_order" in bad.text and "\n" not in bad.text
    got, refused = mcp_calls(tenants, "acme", ("recall", {"query": "", "run_id": "a", "limit": 6,
                                                          "used_order": "latest"}),
                             ("recall", {"query": "", "run_id": "a", "used_order": "newest"}))
    assert [h["id"] for h in answer(got)["results"]] == latest and ids() == model
    assert refused.is_error and "argument 'used_order' must be 'model', 'latest', 'needed', 'off'" in refused.content[0].text
    tenants.close()
