"""The Mem0-style ScopedMemory: add messages or events per user, agent and run; search, get_all, delete, reset;
one user's search never returns another's memories; save and load."""

from __future__ import annotations

import random

import pytest

from sam_model.data.schema import Event, State
from sam_model.memory import HashingEncoder, ScopedMemory
from sam_model.store import StoreConfig

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
    assert memory.get_all(user_id="bo")["results"][0]["episode_id"] == "bo/trip"

    path = memory.save(tmp_path / "mem")
    back = ScopedMemory.load(path, HashingEncoder(2048))
    assert back.search("vegetarian from Lisbon", user_id="ana", k=3) == memory.search("vegetarian from Lisbon", user_id="ana", k=3)
    back.add([{"role": "user", "content": "and an aisle seat for my son"}], user_id="ana", agent_id="travel")
    assert [r["step"] for r in back.get_all(user_id="ana", agent_id="travel")["results"]] == [0, 1, 2]

    memory.delete(found[0]["id"])
    assert all(r["id"] != found[0]["id"] for r in memory.search("vegetarian", user_id="ana", k=5)["results"])
    memory.delete_all(user_id="ana")
    assert memory.get_all(user_id="ana")["results"] == [] and len(memory.get_all(user_id="bo")["results"]) == 1
    memory.reset()
    assert memory.get_all(all_scopes=True)["results"] == []


def test_bad_calls_are_named():
    memory = ScopedMemory(HashingEncoder(16))
    with pytest.raises(ValueError, match="give user_id, agent_id or run_id"):
        memory.add("hello")
    with pytest.raises(ValueError, match="user_id must be a non-empty string without '/'"):
        memory.add("hello", user_id="a/b")
    with pytest.raises(TypeError, match="not a mix"):
        memory.add([{"role": "user", "content": "hi"}, 3], user_id="a")
    with pytest.raises(TypeError, match="query must be a string"):
        memory.search(None, user_id="a")
