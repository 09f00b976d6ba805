"""The Mem0-style ScopedMemory: add messages or events per user, agent and run; search, get_all, delete, reset;
one user's search never returns another's memories; save and load."""

from __future__ import annotations

import json
import random

import pytest

from sam_model.data.schema import Event, State
from sam_model.memory import HashingEncoder, ScopedMemory
from sam_model.storeconfig import StoreConfig

WORDS = ["flight", "Boston", "refund", "hotel", "Lisbon", "budget", "card", "window", "seat", "dinner"]


def test_one_users_search_never_returns_another_users_memories():
    rng = random.Random(0)
    memory = ScopedMemory(HashingEncoder(64), StoreConfig(provenance=True), k=50)
    users = [f"user{u}" for u in range(6)]
    owner = {}
    for _ in range(120):  # interleaved writes with the same words for everyone
        user = rng.choice(users)
        run = rng.choice(["a", "b"])
        text = " ".join(rng.sample(WORDS, 4))
        for r in memory.add([{"role": "user", "content": text}], user_id=user, run_id=run)["results"]:
            owner[r["id"]] = user
    for user in users:
        mine = {i for i, u in owner.items() if u == user}
        for _ in range(5):
            got = memory.search(" ".join(rng.sample(WORDS, 3)), user_id=user, k=200)["results"]
            assert {r["id"] for r in got} == mine  # all of them (k is large) and nothing else
            assert all(r["user_id"] == user for r in got)
            assert {r["why"]["via"] for r in got} <= {"index", "link"}  # a view of the Hit: how it was reached
        run_a = memory.search("flight", user_id=user, run_id="a", k=200)["results"]
        assert all(r["run_id"] == "a" and r["user_id"] == user for r in run_a)
        assert {r["id"] for r in memory.get_all(user_id=user)["results"]} == mine


def test_add_search_get_all_delete_reset_and_save(tmp_path):
    memory = ScopedMemory(HashingEncoder(2048))
    added = memory.add("I am vegetarian and I fly from Lisbon", user_id="ana")["results"]
    assert [a["event"] for a in added] == ["ADD"] and added[0]["memory"] == "I am vegetarian and I fly from Lisbon"
    memory.add([{"role": "user", "content": "Book me a window seat"},
                {"role": "assistant", "content": "Sure, which flight?"}], user_id="ana", agent_id="travel")
    memory.add([Event("x", 0, "user", "my budget is 900", State("plan", constraints={"budget": 900}))],
               user_id="bo", run_id="trip")
    found = memory.search("vegetarian from Lisbon", user_id="ana", k=3)["results"]
    assert found[0]["memory"] == "I am vegetarian and I fly from Lisbon"
    assert set(found[0]) >= {"id", "memory", "score", "metadata", "user_id", "kind", "step", "why"}
    assert found[0]["why"]["index_score"] == pytest.approx(found[0]["score"] - found[0]["why"]["rerank_bonus"])
    assert len(memory.get_all(user_id="ana")["results"]) == 3
    assert len(memory.get_all(user_id="ana", agent_id="travel")["results"]) == 2
    assert memory.get_all(user_id="bo")["results"][0]["episode_id"] == "bo//trip"  # run_id in its place

    path = memory.save(tmp_path / "mem")
    back = ScopedMemory.load(path, HashingEncoder(2048))
    assert back.history(found[0]["id"]) == memory.history(found[0]["id"]) and back.history(found[0]["id"])
    assert back.get(found[0]["id"])["created_at"] == memory.get(found[0]["id"])["created_at"] is not None
    assert back.search("vegetarian from Lisbon", user_id="ana", k=3) == memory.search("vegetarian from Lisbon", user_id="ana", k=3)
    back.add([{"role": "user", "content": "and an aisle seat for my son"}], user_id="ana", agent_id="travel")
    assert [r["step"] for r in back.get_all(user_id="ana", agent_id="travel")["results"]] == [0, 1, 2]

    memory.delete(found[0]["id"])
    assert all(r["id"] != found[0]["id"] for r in memory.search("vegetarian", user_id="ana", k=5)["results"])
    memory.delete_all(user_id="ana")
    assert memory.get_all(user_id="ana")["results"] == [] and len(memory.get_all(user_id="bo")["results"]) == 1
    memory.reset()
    assert memory.get_all(all_scopes=True)["results"] == []


def test_a_snapshot_is_of_its_moment(tmp_path):
    """snapshot() copies under the lock what write_snapshot() writes later without it (a served tenant's
    checkpoint): an update, an add and a delete made in between are not in the files, and the memory written is
    the one a save at the snapshot's moment writes (times and history included)."""
    memory = ScopedMemory(HashingEncoder(256))
    first = memory.add("I fly from Lisbon", user_id="ana")["results"][0]["id"]
    gone = memory.add("I like aisle seats", user_id="ana")["results"][0]["id"]
    memory.add("my budget is 900", user_id="bo")
    reference = memory.save(tmp_path / "then")
    snap = memory.snapshot()
    memory.update(first, "I fly from Porto")  # changes the memory's times in place, appends to its history
    memory.add("a window seat please", user_id="ana")
    memory.delete(gone)
    back = ScopedMemory.load(memory.write_snapshot(tmp_path / "snap", snap), HashingEncoder(256))
    then = ScopedMemory.load(reference, HashingEncoder(256))
    assert [e["event"] for e in back.history(first)] == ["ADD"] and back.get(first)["memory"] == "I fly from Lisbon"
    assert back.get(first) == then.get(first) and back.get(gone) == then.get(gone) is not None
    assert back.get_all(all_scopes=True) == then.get_all(all_scopes=True)
    assert (tmp_path / "snap" / "scoped.json").read_text() == (tmp_path / "then" / "scoped.json").read_text()


def test_bad_calls_are_named():
    memory = ScopedMemory(HashingEncoder(16))
    with pytest.raises(ValueError, match="give user_id, agent_id or run_id"):
        memory.add("hello")
    with pytest.raises(ValueError, match="user_id must be a non-empty string without '/'"):
        memory.add("hello", user_id="a/b")
    with pytest.raises(TypeError, match=r"^data\[0\]: .*not a mix; got an object without 'kind'"):  # was 'got dict'
        memory.add([{"foo": 1}, {"role": "user", "content": "hi"}], user_id="a")
    with pytest.raises(TypeError, match=r"^data\[2\]: .*not a mix: the first is a chat message, this one a number"):
        memory.add([{"role": "user", "content": "hi"}, {"role": "user", "content": "ok"}, 3], user_id="a")
    with pytest.raises(TypeError, match=r"^data\[1\]: .*this one an object without 'role'"):  # it named item 0, the message
        memory.add([{"role": "user", "content": "ok"}, {"foo": 1}], user_id="a")
    with pytest.raises(TypeError, match="query must be a string"):
        memory.search(None, user_id="a")


MOVIES = [  # Mem0's Python quick-start conversation (docs.mem0.ai, open-source/python-quickstart)
    {"role": "user", "content": "I'm planning to watch a movie tonight. Any recommendations?"},
    {"role": "assistant", "content": "How about thriller movies? They can be quite engaging."},
    {"role": "user", "content": "I'm not a big fan of thriller movies but I love sci-fi movies."},
    {"role": "assistant", "content": "Got it! I'll avoid thriller recommendations and suggest sci-fi movies in the future."},
]


def test_mem0_quick_start_call_sequence_runs_as_written():
    """The calls of Mem0's quick-start, with Mem0's keywords, against ScopedMemory (Memory() -> ScopedMemory(...))."""
    m = ScopedMemory(HashingEncoder(1024))
    result = m.add(MOVIES, user_id="alice", metadata={"category": "movie_recommendations"})
    assert [r["event"] for r in result["results"]] == ["ADD"] * 4
    m.add(MOVIES, user_id="alice", agent_id="movie-assistant", run_id="session-001",
          metadata={"category": "movie_recommendations"})
    m.add("Likes to play cricket on weekends", user_id="alice", metadata={"category": "hobbies"})
    m.add("I love thriller movies", user_id="bob", metadata={"category": "movie_recommendations"})
    all_memories = m.get_all(user_id="alice")
    assert len(all_memories["results"]) == 9 and {r["user_id"] for r in all_memories["results"]} == {"alice"}
    memory_id = all_memories["results"][2]["id"]
    specific_memory = m.get(memory_id)
    assert specific_memory["memory"] == MOVIES[2]["content"] and specific_memory["created_at"]
    assert m.get("892db2ae-06d9-49e5-8b3e-585ef9b85b8e") is None
    related = m.search(query="What do you know about me?", user_id="alice")
    assert related["results"] and {r["user_id"] for r in related["results"]} == {"alice"}
    v1 = m.search("What do you know about me?", filters={"user_id": "alice"})  # Mem0 v1: scopes inside filters
    assert [r["id"] for r in v1["results"]] == [r["id"] for r in related["results"]]
    found = m.search("sci-fi movies", user_id="alice", limit=3, filters={"category": "movie_recommendations"},
                     threshold=0.1)["results"]
    assert 1 <= len(found) <= 3 and all(r["metadata"]["category"] == "movie_recommendations" for r in found)
    assert all(r["score"] >= 0.1 for r in found) and "sci-fi" in found[0]["memory"]
    assert [r["id"] for r in m.search("sci-fi movies", user_id="alice", top_k=3)["results"]] == \
        [r["id"] for r in m.search("sci-fi movies", user_id="alice", limit=3)["results"]]
    assert m.search("cricket", user_id="alice", threshold=2.0)["results"] == []
    hobbies = m.get_all(user_id="alice", filters={"category": {"in": ["hobbies"]}})["results"]
    assert [r["memory"] for r in hobbies] == ["Likes to play cricket on weekends"]
    assert len(m.get_all(user_id="alice", limit=2)["results"]) == 2

    result = m.update(memory_id=memory_id, data="I love India, it is my favorite country.")
    assert "updated" in result["message"]
    after = m.get(memory_id)
    assert after["memory"] == "I love India, it is my favorite country." and after["updated_at"] >= after["created_at"]
    assert m.search("India favorite country", user_id="alice", limit=1)["results"][0]["id"] == memory_id
    history = m.history(memory_id=memory_id)
    assert [(h["event"], h["old_memory"], h["new_memory"]) for h in history] == [
        ("ADD", None, MOVIES[2]["content"]), ("UPDATE", MOVIES[2]["content"], "I love India, it is my favorite country.")]
    m.delete(memory_id=memory_id)
    assert m.get(memory_id) is None and m.history(memory_id)[-1]["event"] == "DELETE"
    m.delete_all(user_id="alice")
    assert m.get_all(user_id="alice")["results"] == [] and len(m.get_all(user_id="bob")["results"]) == 1
    m.reset()
    assert m.get_all(all_scopes=True)["results"] == []


def test_a_missing_scope_is_refused_as_mem0_does_and_update_replaces():
    m = ScopedMemory(HashingEncoder(1024))
    first = m.add("my budget is $1,400", user_id="ana")["results"][0]["id"]
    m.add("my budget is $200", user_id="bo")
    for call in (lambda: m.search("budget"), lambda: m.get_all(), lambda: m.delete_all(),
                 lambda: m.search("budget", filters={"category": "x"})):
        with pytest.raises(ValueError, match="give user_id, agent_id or run_id"):
            call()
    assert {r["user_id"] for r in m.search("budget", all_scopes=True)["results"]} == {"ana", "bo"}
    m.update(first, "my budget is $3,500")  # "make the budget $3,500": one memory, updated, not a second one
    got = m.search("what is my budget?", user_id="ana")["results"]
    assert [r["memory"] for r in got] == ["my budget is $3,500"]
    with pytest.raises(ValueError, match="user_id is 'ana' but filters.user_id is 'bo'"):
        m.search("budget", user_id="ana", filters={"user_id": "bo"})
    with pytest.raises(ValueError, match="unknown operator 'like'"):
        m.search("budget", user_id="ana", filters={"category": {"like": "x"}})
    with pytest.raises(ValueError, match="give one of limit, top_k, k"):
        m.search("budget", user_id="ana", limit=2, top_k=3)
    with pytest.raises(KeyError, match="not in the store"):
        m.update("nope#0", "x")


def test_plain_text_query_ranks_by_content_and_state_live_by_the_run():
    """Text and no state: the content block alone (here the hashed words), so the words steer the ranking."""
    m = ScopedMemory(HashingEncoder(2048), k=3)
    for text in ["I live in Lisbon", "my budget is 900 euros", "I am vegetarian", "my budget was 700 before"]:
        m.add(text, user_id="ana")
    got = [r["memory"] for r in m.search("what is my budget?", user_id="ana", limit=2)["results"]]
    assert set(got) == {"my budget is 900 euros", "my budget was 700 before"}
    assert m.search("where do I live?", user_id="ana", limit=1)["results"][0]["memory"] == "I live in Lisbon"
    q = m.store.encoder.encode_text_queries(["where do I live?"])[0]
    want = m.store.search_vector(q, 3, (), user_id="ana")
    assert [r["id"] for r in m.search("where do I live?", user_id="ana")["results"]] == [h.id for h in want]
    live = m.store.search(m.live_state(user_id="ana"), "where do I live?", 3, user_id="ana")
    assert [r["id"] for r in m.search("where do I live?", "live", user_id="ana")["results"]] == [h.id for h in live]


def test_every_combination_of_scopes_is_its_own_conversation():
    """Scopes in their places: {user alice, agent bot} and {agent alice, run bot} joined only their values, one
    episode, so the second's tool call revised the first's memory and answered with its words."""
    memory = ScopedMemory(HashingEncoder(2048))
    victim, other = {"user_id": "alice", "agent_id": "bot"}, {"agent_id": "alice", "run_id": "bot"}
    eps = {ScopedMemory.episode_of(**s) for s in (victim, other, {"user_id": "alice"}, {"agent_id": "alice"},
                                                   {"run_id": "alice"}, {"user_id": "alice", "run_id": "bot"})}
    assert len(eps) == 6 and ScopedMemory.episode_of(user_id="mia", agent_id="bot") == "mia/bot"  # kept as before
    memory.add([{"role": "user", "content": "I want to go to Paris"}], **other)
    memory.add([{"role": "user", "content": "my card number is 4111-2222"}], **victim)
    out = memory.add([{"role": "assistant", "tool_calls": [{"function": {"name": "book", "arguments":
                                                                         {"city": "Paris"}}}]}], **other)
    assert "4111" not in json.dumps(out) and [r["event"] for r in out["results"]] == ["ADD"]
    mine = memory.get_all(**victim)["results"]
    assert [m["memory"] for m in mine] == ["my card number is 4111-2222"]
    assert [h["event"] for h in memory.history(mine[0]["id"])] == ["ADD"]


def test_a_deleted_memory_leaves_the_conversation_and_stays_deleted(tmp_path):
    memory = ScopedMemory(HashingEncoder(2048))
    memory.add([{"role": "user", "content": "fly me to Paris"}], user_id="u")
    pin = memory.add([{"role": "user", "content": "my pin is 9876"}], user_id="u")["results"][0]["id"]
    memory.delete(pin)
    # the next tool call would revise the deleted event (the last one): it stays deleted, the call is stored
    out = memory.add([{"role": "assistant", "tool_calls": [{"function": {"name": "pay", "arguments":
                                                                         {"city": "Paris"}}}]}],
                     user_id="u")["results"]
    assert [r["event"] for r in out] == ["ADD"] and pin not in memory.store
    call = memory.get(out[0]["id"])
    assert call["kind"] == "action"
    # the deleted words are no longer in the conversation's state, nor in a saved memory (history aside, as Mem0)
    tracker = memory._trackers["u"]
    assert all("9876" not in e["text"] for e in tracker.events[:2])
    memory.save(tmp_path / "m")
    saved = json.loads((tmp_path / "m" / "scoped.json").read_text())
    assert "9876" not in json.dumps(saved["trackers"])


def test_a_revised_event_history_keeps_the_words_not_the_memory_text():
    """The call revises the state of the words before it, its decision point, not their text: Mem0's NONE, so the
    add lists the call alone and the words' history is their ADD, in words (not the memory's "[system] ..." text)."""
    memory = ScopedMemory(HashingEncoder(2048))
    memory.add([{"role": "user", "content": "I am mia_li_3668"}, {"role": "assistant", "content": "Let me look."}],
               user_id="mia")
    out = memory.add([{"role": "assistant", "tool_calls": [{"function": {"name": "get_user", "arguments":
                                                                         {"user_id": "mia_li_3668"}}}]}],
                     user_id="mia")["results"]
    assert [r["event"] for r in out] == ["ADD"] and memory._trackers["mia"].events[1]["useful_memory_steps"]
    assert [(h["event"], h["new_memory"]) for h in memory.history("mia#1")] == [("ADD", "Let me look.")]


def test_a_wildcard_scope_in_filters_is_refused_not_read_as_a_name():
    memory = ScopedMemory(HashingEncoder(2048))
    memory.add("I live in Paris", user_id="mia")
    with pytest.raises(ValueError, match="would search every user"):
        memory.search("where?", filters={"user_id": "*"})
    with pytest.raises(ValueError, match="would search every agent"):
        memory.get_all(user_id="mia", filters={"agent_id": "*"})


def test_a_scoped_json_past_the_parsers_limits_is_one_line(tmp_path):
    from sam_model.io import SAMFileError

    memory = ScopedMemory(HashingEncoder(2048))
    memory.add("I live in Paris", user_id="mia")
    folder = memory.save(tmp_path / "m")
    (folder / "scoped.json").write_text("[" * 100_000)
    with pytest.raises(SAMFileError, match="scoped.json: unreadable memory"):
        ScopedMemory.load(folder, HashingEncoder(2048))


def test_a_refused_batch_leaves_the_conversation_state_exactly_as_it_was():
    """The batch's first message is a tool call that revises the last event in place and sets constraints; the
    second is bad: the rollback restores the tracker to the byte, and the conversation then goes on as if the bad
    batch had never come."""
    import copy

    first = [{"role": "user", "content": "I am mia_li_3668, cancel my Boston flight"},
             {"role": "assistant", "content": "Let me look it up."}]
    call = {"role": "assistant", "tool_calls": [{"id": "c1", "function": {"name": "get_user_details",
                                                                          "arguments": {"user_id": "mia_li_3668"}}}]}
    a, b = ScopedMemory(HashingEncoder(2048)), ScopedMemory(HashingEncoder(2048))
    a.add(first, user_id="mia")
    b.add(first, user_id="mia")
    before = copy.deepcopy(a._trackers["mia"].state_dict())
    with pytest.raises(ValueError, match="message 2"):  # the unanswered result before it is taken back too
        a.add([call, {"role": "tool", "tool_call_id": "nope", "content": "x"},
               {"role": "tool", "tool_call_id": True, "content": "x"}], user_id="mia")
    assert a._trackers["mia"].state_dict() == before and len(a.store) == 2
    for m in (a, b):
        m.add([call, {"role": "tool", "tool_call_id": "c1", "content": "user mia_li_3668: 2 reservations"}],
              user_id="mia")
    assert [(h.id, h.text) for h in a.store.get_all()] == [(h.id, h.text) for h in b.store.get_all()]
    assert a._trackers["mia"].state_dict() == b._trackers["mia"].state_dict()


def test_events_added_between_chat_messages_join_the_conversation(tmp_path):
    """Found by review: an event add took the step the conversation's next message would take, so that message's
    add was refused as a duplicate id (a valid message, 422) and left the conversation one event ahead; a replay of
    the server's log then dropped an acknowledged message. Now the events join the conversation, numbered on, and a
    later tool call is traced to them as to any event."""
    memory = ScopedMemory(HashingEncoder(2048))
    memory.add("hello", user_id="mia")
    memory.add([{"kind": "result", "text": "order O-5513 shipped", "step": 40}], user_id="mia")
    zip_ = memory.add("my zip is 90210", user_id="mia")["results"]
    assert [r["id"] for r in zip_] == ["mia#2"]
    assert [h.text.split("] ", 1)[-1] for h in memory.store.get_all()] == [
        "hello", "order O-5513 shipped", "my zip is 90210"]
    out = memory.add([{"role": "assistant", "tool_calls": [{"function": {"name": "track", "arguments":
                                                                         {"order_id": "O-5513"}}}]}], user_id="mia")
    assert [r["event"] for r in out["results"]] == ["ADD"]  # the event before it, its decision point, kept its text
    assert memory.store.get("mia#2").step == 2 and memory._trackers["mia"].decide([]) is not None
    back = ScopedMemory.load(memory.save(tmp_path / "m"), HashingEncoder(2048))
    assert back.add("and my city is Lyon", user_id="mia")["results"][0]["id"] == "mia#4"


def test_a_batch_the_store_refuses_leaves_the_conversation_as_it_was(monkeypatch):
    """A message the store refuses after the conversation took it (here: an encoder that fails) is taken back
    from the conversation too, with the event a tool call of the batch revised: the retry is stored as if the
    failed try had never come (it was one event ahead, and every later id moved)."""
    call = {"role": "assistant", "tool_calls": [{"id": "c1", "function": {"name": "get_user",
                                                                          "arguments": {"user_id": "mia_li_3668"}}}]}
    a, b = ScopedMemory(HashingEncoder(2048)), ScopedMemory(HashingEncoder(2048))
    for m in (a, b):
        m.add([{"role": "user", "content": "I am mia_li_3668"}], user_id="mia")
    before = json.dumps(a._trackers["mia"].state_dict())
    stored = [(h.id, h.text, h.phase) for h in a.store.get_all()]

    def broken(*args, **kwargs):
        raise RuntimeError("encoder out of memory")

    monkeypatch.setattr(a.store.encoder, "encode_memories", broken)
    with pytest.raises(RuntimeError):
        a.add([call, {"role": "tool", "tool_call_id": "c1", "content": "user found"}], user_id="mia")
    monkeypatch.undo()
    assert json.dumps(a._trackers["mia"].state_dict()) == before
    assert [(h.id, h.text, h.phase) for h in a.store.get_all()] == stored  # the revised event is as it was
    for m in (a, b):
        m.add([call, {"role": "tool", "tool_call_id": "c1", "content": "user found"}], user_id="mia")
    assert [(h.id, h.text, h.phase) for h in a.store.get_all()] == [(h.id, h.text, h.phase) for h in b.store.get_all()]
    assert a._trackers["mia"].state_dict() == b._trackers["mia"].state_dict()


def test_an_update_is_not_undone_by_a_later_tool_call():
    """Found by review: the conversation kept the old words of an updated memory, and the next tool call, which
    stores the event before it again with its decision state, wrote them back over the update."""
    memory = ScopedMemory(HashingEncoder(2048))
    memory.add("my card number is 4111222233334444", user_id="mia")
    memory.add("please book the flight to Lyon", user_id="mia")
    memory.update("mia#1", "please book the flight to Paris instead")
    memory.update("mia#0", "card on file removed")
    memory.add([{"role": "assistant", "tool_calls": [{"function": {"name": "book", "arguments":
                                                                   {"city": "Paris"}}}]}], user_id="mia")
    assert memory.get("mia#1")["memory"] == "please book the flight to Paris instead"
    assert all("4111" not in e["text"] for e in memory._trackers["mia"].events)  # nor traced to the old words


def test_deeply_nested_arguments_and_filters_are_bounded():
    """Found by review: tool-call arguments 900 levels deep recursed past Python's limit (a served add answered
    500, its batch half taken into the conversation); AND/OR/NOT filters as deep did the same to a search. Such
    arguments are kept as the raw string (no leaf traced, as arguments that are not an object); filters are
    refused in one line."""
    memory = ScopedMemory(HashingEncoder(2048))
    deep: dict = {"v": "x"}
    for _ in range(900):
        deep = {"a": deep}
    out = memory.add([{"role": "user", "content": "my code is 9911"},
                      {"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": deep}}]}],
                     user_id="u")["results"]
    assert [r["event"] for r in out] == ["ADD", "ADD"] and out[1]["memory"].startswith('CALL f({"a": {"a":')
    assert memory.add("next", user_id="u")["results"][0]["id"] == "u#2"
    nested: dict = {"kind": "user"}
    for _ in range(900):
        nested = {"NOT": nested}
    with pytest.raises(ValueError, match="nested more than 32 levels"):
        memory.search("code", user_id="u", filters=nested)
    with pytest.raises(ValueError, match="at most 256 characters"):
        memory.add("x", user_id="u" * 257)
    with pytest.raises(ValueError, match="finite"):
        memory.search("code", user_id="u", threshold=float("nan"))
    with pytest.raises(ValueError, match="'live' or none"):
        memory.search("code", user_id="u", state="nope")


def test_delete_all_leaves_no_word_of_the_scope_in_a_save(tmp_path):
    """Found by review: after delete_all, the store's record of the conversation's last state (the values its tool
    calls set) was still saved."""
    card = "4111222233334444"
    memory = ScopedMemory(HashingEncoder(2048))
    memory.add([{"role": "user", "content": "pay please"},
                {"role": "assistant", "tool_calls": [{"function": {"name": "pay", "arguments": {"card": card}}}]}],
               user_id="bob")
    memory.add("I live in Paris", user_id="mia")
    memory.delete_all(user_id="bob")
    folder = memory.save(tmp_path / "m")
    saved = json.loads((folder / "scoped.json").read_text())
    saved.pop("history")  # Mem0's history keeps what was deleted
    assert card not in json.dumps(saved) and card not in (folder / "store" / "store.json").read_text()


class _Failing(HashingEncoder):
    """Encodes ``budget`` more calls of memories, then fails every one (None: no limit)."""

    budget: int | None = None

    def encode_memories(self, memories, batch_size=64, progress=False):
        if self.budget is not None:
            if self.budget <= 0:
                raise RuntimeError("encoder down")
            self.budget -= 1
        return super().encode_memories(memories, batch_size, progress)


def _stored(memory: ScopedMemory) -> list:
    s = memory.store
    return [(i, e.text, e.kind, e.phase, e.sets, e.links, s.index.get_vectors([i]).round(6).tolist())
            for i, e in s._entries.items()]


def test_a_refused_batch_puts_back_the_memory_it_revised_exactly_without_the_encoder():
    """Found by review of the first fix: the undo re-encoded the revised memory from the conversation's copy, so a
    memory updated before (other text, sets, vector) came back changed, and with the encoder still down the undo
    failed before the conversation was rolled back (two phantom events, every later id moved)."""
    enc = _Failing(64)
    memory = ScopedMemory(enc, StoreConfig())
    call = {"role": "assistant", "tool_calls": [{"id": "c0", "function": {"name": "lookup",
                                                                          "arguments": {"user": "mia_li"}}}]}
    memory.add([{"role": "user", "content": "I am mia_li, order 55123"}, call], user_id="mia")
    memory.update("mia#1", "looked up the user")
    memory.add("please cancel it", user_id="mia")
    before, tracker = _stored(memory), json.dumps(memory._trackers["mia"].state_dict())
    cancel = {"role": "assistant", "tool_calls": [{"id": "c1", "function": {"name": "cancel",
                                                                            "arguments": {"order_id": "55123"}}}]}
    for budget in (1, 0):  # the revision is stored and the batch's add fails; or the revision fails
        enc.budget = budget
        with pytest.raises(RuntimeError, match="encoder down"):
            memory.add([cancel, {"role": "tool", "tool_call_id": "c1", "content": "cancelled"}], user_id="mia")
        enc.budget = None
        assert _stored(memory) == before and json.dumps(memory._trackers["mia"].state_dict()) == tracker
    assert memory.add("thanks", user_id="mia")["results"][0]["id"] == "mia#3"


def test_a_conversation_saved_behind_its_memories_catches_up():
    """A memory saved by the code before the event fix holds an event the conversation does not know (at the step
    its next message would take): its next message and event take the next free steps, not a refusal."""
    memory = ScopedMemory(HashingEncoder(64), StoreConfig())
    memory.add("hello", user_id="fz")
    memory.store.add([Event("fz", 1, "result", "order 55 shipped", State())], user_id="fz")  # as the old code did
    assert memory.add("my card ends 4444", user_id="fz")["results"][0]["id"] == "fz#2"
    assert memory.add([{"kind": "result", "text": "order 56 shipped"}], user_id="fz")["results"][0]["id"] == "fz#3"
    assert [e["text"] for e in memory._trackers["fz"].events] == ["hello", "order 55 shipped", "my card ends 4444",
                                                                    "order 56 shipped"]


def test_chunked_memories_are_named_by_their_memory_id_and_a_chunk_is_not_updated_alone():
    """Found by review: a batch's results paired chunk ids with events (a short memory reported under a chunk id of
    the long one), and updating one chunk rewrote the whole event in the conversation; then (the next review) the
    memory's id the results gave could not be read, updated or deleted."""
    memory = ScopedMemory(HashingEncoder(64), StoreConfig(chunking={"size": 180, "overlap": 50}))
    long = "".join(f"line {i} of a long tool output about order 55123\n" for i in range(10))
    out = memory.add([{"role": "user", "content": long}, {"role": "user", "content": "short second"}], user_id="mia")
    assert [(r["id"], r["memory"]) for r in out["results"]] == [("mia#0", long), ("mia#1", "short second")]
    assert memory.history("mia#1")[0]["new_memory"] == "short second"
    assert memory.get("mia#0")["memory"] == long and memory.get("mia#0")["id"] == "mia#0"  # its chunks joined
    with pytest.raises(ValueError, match="chunk 1 of memory 'mia#0': update the memory by its id"):
        memory.update("mia#0/1", "zip code 90210")
    memory.update("mia#0", "a short note now")
    assert memory.get("mia#0")["memory"] == "a short note now" and memory.get("mia#0/1") is None
    assert [h["event"] for h in memory.history("mia#0")] == ["ADD", "UPDATE"]
    memory.update("mia#0", long + "and one more line\n")  # long again: chunked again, read whole
    assert memory.get("mia#0")["memory"] == long + "and one more line\n"
    memory.delete("mia#0")
    assert memory.get("mia#0") is None and [r["id"] for r in memory.get_all(user_id="mia")["results"]] == ["mia#1"]


def test_catching_up_reads_a_chunked_memory_whole_and_a_far_step_starts_afresh():
    memory = ScopedMemory(HashingEncoder(64), StoreConfig(chunking={"size": 60, "overlap": 10}))
    memory.add("hello", user_id="fz")
    text = "order 55 shipped\n" * 8
    memory.store.add([Event("fz", 1, "result", text, State())], user_id="fz")  # as the code before the fix did
    memory.add("thanks", user_id="fz")
    assert [e["text"] for e in memory._trackers["fz"].events] == ["hello", text, "thanks"]
    memory.store.add([Event("fz", 200_000, "result", "far away", State())], user_id="fz")
    assert memory.add("next", user_id="fz")["results"][0]["id"] == "fz#200001"
    assert len(memory._trackers["fz"].events) == 1  # afresh after it, not 200,000 blank places


def test_delete_all_forgets_a_conversation_whose_memories_were_deleted_one_by_one(tmp_path):
    card = "4111111111111111"
    memory = ScopedMemory(HashingEncoder(64), StoreConfig())
    memory.add([{"role": "user", "content": "pay please"},
                {"role": "assistant", "tool_calls": [{"function": {"name": "pay", "arguments": {"card": card}}}]}],
               user_id="mia")
    for r in memory.get_all(user_id="mia")["results"]:
        memory.delete(r["id"])
    memory.delete_all(user_id="mia")
    folder = memory.save(tmp_path / "m")
    assert card not in (folder / "store" / "store.json").read_text()



CARD = "4111222233334444"


def _call(i: int, name: str, arguments: dict) -> dict:
    return {"role": "assistant", "tool_calls": [{"id": f"c{i}", "type": "function", "function": {
        "name": name, "arguments": json.dumps(arguments)}}]}


PAYING = [{"role": "user", "content": f"my card is {CARD}"},
          {"role": "assistant", "content": "Which booking shall I pay?"},
          {"role": "user", "content": "the Lisbon one, BK-77Q"},
          _call(1, "pay", {"card": CARD, "city": "Lisbon", "booking": "BK-77Q"}),  # card needed: said at step 0
          {"role": "tool", "tool_call_id": "c1", "content": "paid"},
          _call(2, "hold", {"city": "Porto"}),  # sets city again
          {"role": "tool", "tool_call_id": "c2", "content": "held"},
          {"role": "assistant", "content": "Done."}]
AGAIN = {"name": "pay", "arguments": {"card": CARD, "booking": "BK-77Q"}}


def _saved_words(memory: ScopedMemory, folder) -> str:
    """What a save holds but the deleted memories' history (Mem0's history keeps what was deleted)."""
    folder = memory.save(folder)
    saved = json.loads((folder / "scoped.json").read_text())
    saved.pop("history")
    return json.dumps(saved) + (folder / "store" / "store.json").read_text()


def test_deleting_a_scopes_memories_one_by_one_forgets_its_conversation_as_delete_all_does(tmp_path):
    """Found by stop 53's review: forgetting every memory one by one (MCP forget has ids only) left the values the
    deleted tool calls set in the conversation's state: a search by call, live_state and a save still held the card
    number. The last memory's delete now forgets the conversation as delete_all does; the ids go on, not reused."""
    memory = ScopedMemory(HashingEncoder(64), StoreConfig())
    memory.add(PAYING, user_id="mia")
    memory.add("I live in Paris", user_id="eve")
    ids = [r["id"] for r in memory.get_all(user_id="mia")["results"]]
    for i in reversed(ids):  # the call's memory last: up to it, its values stay (it is still remembered)
        memory.delete(i, user_id="mia")
    assert memory.search("", call=AGAIN, user_id="mia")["state"]["constraints"] == {}
    assert memory.live_state(user_id="mia").constraints == {}
    assert CARD not in _saved_words(memory, tmp_path / "m")
    assert memory.add("hello again", user_id="mia")["results"][0]["id"] not in ids
    assert [r["memory"] for r in memory.get_all(user_id="eve")["results"]] == ["I live in Paris"]


def test_deleting_a_tool_calls_memory_takes_the_values_it_set_out_of_the_conversation(tmp_path):
    """Found by stop 53's review: a deleted tool call's values stayed in the conversation's constraints (its running
    state, its events' states, the store's last state, the needed values of the event before the call), so a search
    by call, live_state and a save held the card it paid with after the user deleted that call and the message that
    said the card. They leave with the call's memory, but a path a later remembered call set again (city: that
    call's value from it on), and survive a save and a load."""
    memory = ScopedMemory(HashingEncoder(64), StoreConfig())
    memory.add(PAYING, user_id="mia")
    memory = ScopedMemory.load(memory.save(tmp_path / "before"), HashingEncoder(64))
    memory.delete("mia#3", user_id="mia")  # the pay call
    memory.delete("mia#0", user_id="mia")  # the message that said the card
    assert memory.live_state(user_id="mia").constraints == {"city": "Porto"}
    assert memory.search("", call={"name": "pay", "arguments": {"booking": "BK-77Q"}},
                         user_id="mia")["state"]["constraints"] == {"city": "Porto"}
    events = memory._trackers["mia"].events
    assert [sorted(e["state"]["constraints"]) for e in events[3:]] == [[], [], ["city"], ["city"], ["city"]]
    assert "card" not in events[2]["meta"]["needed"]
    assert CARD not in _saved_words(memory, tmp_path / "after") and "BK-77Q" in _saved_words(memory, tmp_path / "a2")
    memory.delete("mia#5", user_id="mia")  # the hold call: city goes, Lisbon (its earlier value) is not put back
    assert memory.live_state(user_id="mia").constraints == {}
    memory.add([_call(3, "pay", {"booking": "BK-77Q"})], user_id="mia")
    assert memory.live_state(user_id="mia").constraints == {"booking": "BK-77Q"}  # the conversation goes on


def test_a_conversation_saved_before_calls_writes_were_kept_still_forgets_a_deleted_calls_values(tmp_path):
    """A save from before the trackers kept what each call set: a deleted call's values are those its event's state
    set (compared with the event before it), taken out to the conversation's end."""
    memory = ScopedMemory(HashingEncoder(64), StoreConfig())
    memory.add(PAYING[:5], user_id="mia")
    folder = memory.save(tmp_path / "m")
    saved = json.loads((folder / "scoped.json").read_text())
    for t in saved["trackers"].values():
        del t["writes"], t["writes_from"]
    (folder / "scoped.json").write_text(json.dumps(saved))
    old = ScopedMemory.load(folder, HashingEncoder(64))
    old.delete("mia#3", user_id="mia")
    old.delete("mia#0", user_id="mia")
    assert old.live_state(user_id="mia").constraints == {}
    assert CARD not in json.dumps(old._trackers["mia"].state_dict()["cons"])


@pytest.mark.parametrize("bad", [[{"step": 99, "wrote": {}, "decided": None}], [{"step": 0, "wrote": []}], ["x"]])
def test_a_saved_conversations_bad_writes_are_refused_naming_them(tmp_path, bad):
    from sam_model.io import SAMFileError

    memory = ScopedMemory(HashingEncoder(64), StoreConfig())
    memory.add(PAYING[:5], user_id="mia")
    folder = memory.save(tmp_path / "m")
    saved = json.loads((folder / "scoped.json").read_text())
    saved["trackers"]["mia"]["writes"] = bad
    (folder / "scoped.json").write_text(json.dumps(saved))
    with pytest.raises((SAMFileError, ValueError), match=r"conversation tracker field 'writes' item 0 must be"):
        ScopedMemory.load(folder, HashingEncoder(64))


def test_a_memory_saved_by_one_model_is_refused_by_another_unless_reencoded(tmp_path):
    from sam_model.io import SAMFileError

    memory = ScopedMemory(HashingEncoder(64, seed=0), StoreConfig())
    memory.add("I live in Paris, my budget is 300", user_id="mia")
    folder = memory.save(tmp_path / "m")
    assert ScopedMemory.load(folder, HashingEncoder(64, seed=0)).get("mia#0")["memory"].startswith("I live")
    with pytest.raises(SAMFileError, match="encoded by another model than the one given"):
        ScopedMemory.load(folder, HashingEncoder(64, seed=1))
    moved = ScopedMemory.load(folder, HashingEncoder(64, seed=1), reencode=True)
    fresh = ScopedMemory(HashingEncoder(64, seed=1), StoreConfig())
    fresh.add("I live in Paris, my budget is 300", user_id="mia")
    assert moved.search("budget", user_id="mia")["results"][0]["score"] == pytest.approx(
        fresh.search("budget", user_id="mia")["results"][0]["score"])


def test_reencode_rebuilds_an_ivf_index_and_skips_memories_the_model_wrote(tmp_path):
    """Found by review: re-encoded vectors went into the old model's IVF lists (recall collapsed); a zero probe
    vector refused its own model; --reencode left on re-encoded at every start."""
    from sam_model.store import MemoryStore

    texts = [f"memory {i} about {w}" for i, w in enumerate(["Paris", "Lyon", "budget", "seat", "train"] * 40)]
    store = MemoryStore(HashingEncoder(64, seed=0), StoreConfig(index={"kind": "ivf", "nlist": 4, "nprobe": 1}))
    store.add([Event("e", i, "user", t, State()) for i, t in enumerate(texts)])
    assert store.index.trained
    store.save(tmp_path / "s")
    moved = MemoryStore.load(tmp_path / "s", HashingEncoder(64, seed=1), reencode=True)
    fresh = MemoryStore(HashingEncoder(64, seed=1), StoreConfig(index={"kind": "ivf", "nlist": 4, "nprobe": 1}))
    fresh.add([Event("e", i, "user", t, State()) for i, t in enumerate(texts)])
    q = fresh.encoder.encode_memories([Event("q", 0, "user", "budget seat", State())])[0]
    assert [h.id for h in moved.search_vector(q, 10)] == [h.id for h in fresh.search_vector(q, 10)]
    calls = []
    enc = HashingEncoder(64, seed=0)
    real = enc.encode_memories
    enc.encode_memories = lambda m, *a, **k: (calls.append(len(m)), real(m, *a, **k))[1]
    MemoryStore.load(tmp_path / "s", enc, reencode=True)
    assert calls == [3]  # the probe only: its own model's memories are not encoded again
    zero = HashingEncoder(9, seed=15)  # a probe text this small hash maps to the zero vector
    z = MemoryStore(zero, StoreConfig())
    z.add([Event("e", 0, "user", "hello", State())])
    z.save(tmp_path / "z")
    assert len(MemoryStore.load(tmp_path / "z", HashingEncoder(9, seed=15))) == 1


def test_a_model_changed_in_place_saves_what_it_is_now(tmp_path):
    """Found by review: the probe was cached per encoder object, so a model whose weights changed in place (Janus's
    head) described itself by its old weights and its own next save did not load."""
    enc = HashingEncoder(64, seed=0)
    memory = ScopedMemory(enc, StoreConfig())
    memory.add("I live in Paris", user_id="mia")
    memory.save(tmp_path / "a")
    enc.seed = 1  # the same object, other vectors
    memory.store.reencode()
    memory.save(tmp_path / "b")
    assert ScopedMemory.load(tmp_path / "b", enc).get("mia#0") is not None


def test_on_a_chunking_store_results_name_memories_and_a_chunk_is_not_deleted_alone():
    """Found by review: search results were chunks ('mia#0/4'); deleting one left the memory's other words stored
    and searchable (a card number in the next chunk), its text spliced, its history under the chunk's id; get_all
    listed chunks."""
    memory = ScopedMemory(HashingEncoder(64), StoreConfig(chunking={"size": 60, "overlap": 10}), k=10)
    long = "".join(f"line {i} says order 5512{i} shipped\n" for i in range(8))
    memory.add(long, user_id="mia")
    memory.add("a short note", user_id="mia")
    assert len(memory.store.get_all(episode_id="mia")) > 3  # the long memory is chunks
    found = memory.search("order 55125 shipped", user_id="mia")["results"]
    assert sorted(r["id"] for r in found) == ["mia#0", "mia#1"]  # one result per memory, by its id
    best = next(r for r in found if r["id"] == "mia#0")
    start, end = best["chunk"]["span"]
    assert 0 <= start < end <= len(long) and len(best["memory"]) < len(long)  # the words that matched
    assert "chunk" not in next(r for r in found if r["id"] == "mia#1")
    listed = memory.get_all(user_id="mia")["results"]
    assert [(r["id"], r["memory"]) for r in listed] == [("mia#0", long), ("mia#1", "a short note")]
    assert memory.get_all(user_id="mia", filters={"kind": "user"}, limit=1)["results"][0]["id"] == "mia#0"
    with pytest.raises(ValueError, match="'mia#0/1' is chunk 1 of memory 'mia#0': delete the memory by its id"):
        memory.delete("mia#0/1")
    assert memory.get("mia#0")["memory"] == long  # nothing gone
    memory.delete("mia#0")
    assert [h.id for h in memory.store.get_all(episode_id="mia")] == ["mia#1"]
    assert [h["event"] for h in memory.history("mia#0")] == ["ADD", "DELETE"]
    assert [r["id"] for r in memory.search("order 55125", user_id="mia")["results"]] == ["mia#1"]


def test_delete_all_deletes_a_chunked_memory_as_one_memory():
    """Found by review: delete_all logged a DELETE per chunk, under the chunks' ids (history and times of ids no
    result ever named, saved with the memory), none under the memory's own id, and counted chunks as memories."""
    memory = ScopedMemory(HashingEncoder(64), StoreConfig(chunking={"size": 60, "overlap": 10}))
    long = "".join(f"line {i} says order 5512{i} shipped\n" for i in range(8))
    memory.add(long, user_id="mia")
    memory.add("a short note", user_id="mia")
    memory.add(long, user_id="bob")
    assert memory.delete_all(user_id="mia") == {"message": "2 memories deleted"}
    assert [(h["event"], h["old_memory"]) for h in memory.history("mia#0")] == [("ADD", None), ("DELETE", long)]
    assert set(memory._history) == set(memory._times) == {"mia#0", "mia#1", "bob#0"}
    assert memory.get("bob#0")["memory"] == long and memory.get_all(user_id="mia")["results"] == []


def test_by_id_calls_given_a_scope_reach_only_that_scopes_memories():
    """Found by review: get/update/delete/history took any id, and ids are guessable ('bob#0'): a server knowing
    whose request it is had no way to say so. Given scopes, another's memory is as an unknown id."""
    memory = ScopedMemory(HashingEncoder(64), StoreConfig())
    bob = memory.add("my card PIN is 4242", user_id="bob")["results"][0]["id"]
    bots = memory.add("bob's bot note", user_id="bob", agent_id="bot")["results"][0]["id"]
    assert memory.get(bob, user_id="mia") is None and memory.get(bob, user_id="bob")["memory"] == "my card PIN is 4242"
    assert memory.get(bots, user_id="bob", agent_id="bot") and memory.get(bots, user_id="bob", agent_id="x") is None
    assert memory.get(bob, agent_id="bot") is None  # a scope the memory does not have is not its
    with pytest.raises(KeyError, match="within user_id='mia'"):
        memory.update(bob, "PIN 0000", user_id="mia")
    with pytest.raises(KeyError, match="within user_id='mia'"):
        memory.delete(bob, user_id="mia")
    assert memory.get(bob)["memory"] == "my card PIN is 4242"
    assert memory.history(bob, user_id="mia") == [] and len(memory.history(bob, user_id="bob")) == 1
    memory.update(bob, "PIN changed", user_id="bob")
    memory.delete(bob, user_id="bob")
    assert memory.history(bob, user_id="mia") == []  # after the delete too: the scopes of its episode
    assert [h["event"] for h in memory.history(bob, user_id="bob")] == ["ADD", "UPDATE", "DELETE"]
    assert memory.history(bots, user_id="bob", agent_id="bot") and memory.history(bots, run_id="r") == []
    with pytest.raises(ValueError, match="user_id must be a non-empty string"):
        memory.get(bots, user_id="")


def test_history_of_a_stored_memory_checks_its_own_scopes_not_its_episode_name():
    """A store saved before episodes placed each scope (an agent-only memory in episode 'bot'): its history was
    shown to user_id='bot', whose name matched the episode's first place."""
    from sam_model.data.schema import Event

    memory = ScopedMemory(HashingEncoder(64), StoreConfig())
    [old] = memory.store.add([Event("bot", 0, "user", "the bot's own note")], agent_id="bot")  # the older naming
    memory._log(old, "ADD", None, "the bot's own note")
    assert old == "bot#0" and memory.history(old, agent_id="bot")
    assert memory.history(old, user_id="bot") == []  # was the whole history


def test_in_and_nin_filters_take_a_list_not_a_string_searched_as_text():
    """Found walking the README: {"topic": {"in": "travel"}} kept a memory whose topic was "a" (a substring of
    "travel") in search and get_all; a number failed as 'not iterable'. Both are refused, naming the filter."""
    memory = ScopedMemory(HashingEncoder(64))
    memory.add("a note", user_id="mia", metadata={"topic": "a"})
    memory.add("a trip note", user_id="mia", metadata={"topic": "travel"})
    listed = memory.get_all(user_id="mia", filters={"topic": {"in": ["travel"]}})["results"]
    assert [r["metadata"]["topic"] for r in listed] == ["travel"]
    for bad in ("travel", 5):
        for op in ("in", "nin"):
            with pytest.raises(ValueError, match=rf"^filters\.topic\.{op} must be a list of values"):
                memory.search("note", user_id="mia", filters={"topic": {op: bad}})
            with pytest.raises(ValueError, match=rf"^filters\.AND\.topic\.{op} must be a list"):
                memory.get_all(user_id="mia", filters={"AND": [{"topic": {op: bad}}]})


def test_a_query_state_with_a_misspelt_field_is_refused_not_searched_as_empty():
    """Found walking the README: search(q, state={"constraint": {...}}) or {"phaes": "cancel"} ranked by an empty
    state, silently (unknown keys became State.extra, which the encoder does not read)."""
    memory = ScopedMemory(HashingEncoder(64))
    memory.add("cancel reservation NO6JO3", user_id="mia")
    for bad, hint in (({"phaes": "cancel"}, "did you mean 'phase'"),
                      ({"phase": "cancel", "constraint": {"id": "NO6JO3"}}, "did you mean 'constraints'"),
                      ({"subgoals": ["cancel"]}, "did you mean 'subgoal_stack'"),
                      ({"goal": "cancel"}, "none of the state fields")):
        with pytest.raises(ValueError, match=rf"^state.* {hint}"):
            memory.search("which one?", state=bad, user_id="mia")
        with pytest.raises(ValueError, match=rf"^state.* {hint}"):
            memory.store.search(bad, "which one?", 1)
    ok = {"phase": "cancel", "phase_id": 3, "constraints": {"id": "NO6JO3"}}  # an extra beside its field: a log's
    assert memory.search("which one?", state=ok, user_id="mia")["results"]
    assert memory.search("which one?", state={}, user_id="mia")["results"]  # empty: an empty state, on purpose


@pytest.mark.parametrize("bad", [["mia#0"], {"id": "mia#0"}, 0])
def test_a_memory_id_that_is_not_a_string_is_named(bad):
    """Found walking the README: get/update/delete/history([...]) raised a bare "unhashable type: 'list'", naming
    no argument, and get(0) answered None as for a missing memory; each now names memory_id and what an id is."""
    memory = ScopedMemory(HashingEncoder(64))
    memory.add("my budget is $1,400", user_id="mia")
    calls = (lambda: memory.get(bad), lambda: memory.update(bad, "my budget is $3,500"), lambda: memory.delete(bad),
             lambda: memory.history(bad), lambda: memory.get(bad, user_id="mia"), lambda: memory.history(bad, user_id="mia"))
    for call in calls:
        with pytest.raises(TypeError, match=rf"^memory_id must be a memory's id, a string .* got {type(bad).__name__}"):
            call()
    assert [r["memory"] for r in memory.get_all(user_id="mia")["results"]] == ["my budget is $1,400"]


IMAGE = {"type": "image_url", "image_url": {"url": "https://example.com/receipt.png"}}


@pytest.mark.parametrize("message, why", [
    ({"role": "user"}, "is missing"), ({"role": "user", "content": ""}, "is empty"),
    ({"role": "user", "content": [{"type": "text", "text": " "}, IMAGE]}, "is only whitespace"),
    ({"role": "assistant", "content": None}, "is missing")])
def test_messages_that_should_hold_text_and_hold_none_are_refused_with_their_batch(message, why):
    """An add of ``[{"role": "user"}]`` was answered ``{"results": []}`` and stored nothing, without a word (blank
    text parts were refused by the store, naming ``memories[0].text``, no field of the call). Now it is a ValueError
    naming the message's content and what to send, alone or beside messages that hold text (a batch with a bad
    message is refused whole)."""
    memory = ScopedMemory(HashingEncoder(16))
    with pytest.raises(ValueError, match=rf"^data\[0\]\.content {why}: nothing to store; memories hold text: send"):
        memory.add([message], user_id="mia")
    with pytest.raises(ValueError, match=rf"^data\.content {why}"):  # one message, not in a list
        memory.add(message, user_id="mia")
    with pytest.raises(ValueError, match=rf"^data\[1\]\.content {why}"):
        memory.add([{"role": "user", "content": "my receipt is attached"}, message], user_id="mia")
    assert memory.get_all(user_id="mia")["results"] == [] and memory.live_state(user_id="mia") == State()


def test_a_message_of_images_alone_is_skipped_and_said_not_refused():
    """A multimodal agent feeding every turn sends a picture on its own: well formed, not text. Refusing it would
    stop the agent's loop on a valid turn (Mem0 skips it with a log line); it is stored as nothing and named in the
    answer's ``skipped``, alone or beside text."""
    memory = ScopedMemory(HashingEncoder(16))
    out = memory.add([{"role": "user", "content": [IMAGE]}], user_id="mia")
    assert out["results"] == [] and [n["message"] for n in out["skipped"]] == [0]
    assert out["skipped"][0]["reason"] == ("data[0].content holds only 'image_url' part(s): not stored "
                                           "(memories hold text)")
    out = memory.add([{"role": "user", "content": "my receipt is attached"}, {"role": "user", "content": [IMAGE]}],
                     user_id="mia")
    assert [r["memory"] for r in out["results"]] == ["my receipt is attached"]
    assert [(n["message"], "part" in n) for n in out["skipped"]] == [(1, False)]
    assert [r["memory"] for r in memory.get_all(user_id="mia")["results"]] == ["my receipt is attached"]


def test_an_image_beside_text_is_said_skipped_and_text_parts_are_checked_for_length():
    """The text of a message is stored and its image part is named in ``skipped``; an add that skips nothing keeps
    Mem0's shape. Text parts are held to the length limit here, naming the message (the store refused them, naming
    ``memories[0].text``)."""
    from sam_model.limits import MAX_TEXT_CHARS

    memory = ScopedMemory(HashingEncoder(16))
    out = memory.add([{"role": "user", "content": [{"type": "text", "text": "this is my receipt"}, IMAGE]}],
                     user_id="mia")
    assert [r["memory"] for r in out["results"]] == ["this is my receipt"]
    assert out["skipped"] == [{"message": 0, "part": 1, "reason": out["skipped"][0]["reason"]}]
    assert out["skipped"][0]["reason"].startswith("data[0].content[1]: a 'image_url' part: not stored")
    assert set(memory.add("plain words", user_id="mia")) == {"results"}
    assert set(memory.add([{"role": "system", "content": "be brief"}], user_id="mia")) == {"results"}  # the policy
    with pytest.raises(ValueError, match=r"^data\[1\]\.content has \d+ characters, more than the limit"):
        memory.add([{"role": "user", "content": "ok"},
                     {"role": "user", "content": [{"type": "text", "text": "x" * (MAX_TEXT_CHARS + 1)}]}], user_id="mia")


def _gemini(role: str, **part) -> dict:
    """A Gemini content as the google-genai SDK's model_dump(mode="json") writes it: unset fields null."""
    fields = dict.fromkeys(("text", "thought", "function_call", "function_response", "inline_data", "thought_signature"))
    return {"role": role, "parts": [{**fields, **part}]}


GEMINI_CHAT = [
    _gemini("user", text="Hi, my email is farid@fastmail.com"),
    _gemini("model", text="look the account up", thought=True),
    _gemini("model", function_call={"id": None, "name": "lookup_customer", "args": {"email": "farid@fastmail.com"}}),
    _gemini("user", function_response={"id": None, "name": "lookup_customer",
                                       "response": {"output": {"account_id": "BL-175954", "zip": "97214"}}}),
    _gemini("model", text="Found BL-175954. Book the technician?"),
    _gemini("user", text="ok go ahead"),
    _gemini("model", function_call={"id": None, "name": "schedule_technician",
                                    "args": {"account_id": "BL-175954", "slot": "morning"}}),
]
BEDROCK_CHAT = [
    {"role": "user", "content": [{"text": "Hi, my email is farid@fastmail.com"}]},
    {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": "lookup_customer",
                                                   "input": {"email": "farid@fastmail.com"}}}]},
    {"role": "user", "content": [{"toolResult": {"toolUseId": "t1", "status": "success",
                                                 "content": [{"json": {"account_id": "BL-175954", "zip": "97214"}}]}}]},
    {"role": "assistant", "content": [{"text": "Found BL-175954. Book the technician?"}]},
    {"role": "user", "content": [{"text": "ok go ahead"}]},
    {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t2", "name": "schedule_technician",
                                                   "input": {"account_id": "BL-175954", "slot": "morning"}}}]},
]


@pytest.mark.parametrize("chat", [GEMINI_CHAT, BEDROCK_CHAT], ids=["gemini", "bedrock"])
def test_messages_of_other_apis_become_the_memories_the_importer_makes_of_them(chat):
    """A Gemini agent's contents (or a Bedrock / Strands agent's Converse messages) are added as they are, as
    live_state reads them: their calls and results are memories, and the decision before a call is revised as in
    the importer's log, whether the conversation comes in one add or one message at a time. (A Gemini content was
    refused as a message without content; Converse's blocks were all 'skipped': nothing stored.)"""
    from sam_model.data.formats import to_chat
    from sam_model.data.toolstate import TranscriptState

    importer = TranscriptState("x")
    for m in to_chat(chat).messages:
        importer.feed(m)
    want = [(e["kind"], e["text"], e["state"]) for e in importer.events]
    for batches in ([chat], [[m] for m in chat]):
        memory = ScopedMemory(HashingEncoder(16))
        for batch in batches:
            memory.add(batch, user_id="farid")
        got = sorted(memory.get_all(user_id="farid")["results"], key=lambda r: r["step"])
        assert [(r["kind"], r["memory"]) for r in got] == [(k, t) for k, t, _ in want]
        assert "CALL lookup_customer(email=farid@fastmail.com)" in [r["memory"] for r in got]
        # the decision before the second call, revised as the importer revises it: its phase is the call's tool
        assert [memory.store.memory(r["id"]).phase for r in got] == [state["phase"] for _, _, state in want]
    assert want[-2][2]["phase"] == "schedule_technician" and want[-2][2]["uncertainty_flags"] == ["account_id"]


def test_what_a_gemini_add_does_not_store_is_said_and_a_bad_part_is_named():
    """Also sam-serve's check of an add's messages (unstored, naming its field), which refused Gemini contents."""
    from sam_model.memory.scopedinput import unstored

    assert unstored(GEMINI_CHAT, "messages") == [{"reason": "messages: 1 thought part(s) of the gemini messages: "
                                                            "not stored (no memory is made of them)"}]
    memory = ScopedMemory(HashingEncoder(16))
    out = memory.add(GEMINI_CHAT[:2], user_id="farid")
    assert [r["memory"] for r in out["results"]] == ["Hi, my email is farid@fastmail.com"]
    assert [n["reason"] for n in out["skipped"]] == ["data: 1 thought part(s) of the gemini messages: not stored "
                                                     "(no memory is made of them)"]
    bad = _gemini("model", function_call="lookup_customer")
    with pytest.raises(ValueError, match=r"^data, content 1, part 0: 'functionCall' is a string"):
        memory.add([GEMINI_CHAT[0], bad], user_id="farid")
    assert len(memory.get_all(user_id="farid")["results"]) == 1  # the batch refused whole


def test_an_add_names_a_role_that_is_no_string_and_what_to_do_with_langchain_messages():
    """Found by a walkthrough: a served add of {"role": 3} answered "message without 'role'" (it had one), and a
    LangGraph agent's state["messages"] given as they are got "got a Python SystemMessage" with no way forward."""
    memory = ScopedMemory(HashingEncoder(16))
    with pytest.raises(ValueError, match=r"message 0: 'role' is a number \(3\), expected a string"):
        memory.add([{"role": 3, "content": "x"}], user_id="a")
    with pytest.raises(ValueError, match="message 0: message without 'role'"):
        memory.add([{"role": None, "content": "x"}], user_id="a")
    messages = pytest.importorskip("langchain_core.messages")
    chat = [messages.SystemMessage("You are NorthWave's agent."), messages.HumanMessage("My zip is 60614")]
    with pytest.raises(TypeError, match=r"messages_to_dict\(messages\) \(langchain_core.messages\)"):
        memory.add(chat, user_id="a")
    assert memory.add(messages.messages_to_dict(chat), user_id="a")["results"][0]["memory"] == "My zip is 60614"
