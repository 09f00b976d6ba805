"""SAMMemory in an agent loop with a fake LLM, and the example script end to end."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from sam_model.data.schema import State
from sam_model.memory import HashingEncoder, MemoryConfig, SAMMemory, build_prompt, parse_reply

REPO = Path(__file__).resolve().parents[1]


class FakeLLM:
    """Remembers its prompts; answers with a thought citing memory 1 and a booking action."""

    def __init__(self, action: str):
        self.action, self.prompts = action, []

    def __call__(self, prompt: str) -> str:
        self.prompts.append(prompt)
        return f"Some preamble.\nThought: memory [1] has the destination.\nAction: {self.action}\n"


def test_loop_observe_retrieve_prompt_record():
    mem = SAMMemory(HashingEncoder(128), config=MemoryConfig(half_life=50.0), episode_id="trip", k=3)
    known = {"destination": "Lisbon", "budget": 900}
    mem.observe("I want to fly to Lisbon", State("clarify", ("trip",), {"destination": "Lisbon"}), kind="user")
    mem.observe("Budget is 900 dollars", State("clarify", ("trip",), known), kind="user")
    for i in range(4):
        mem.observe(f"My friend Ana likes museums {i}", State("clarify", ("trip",), known), kind="user")
    decision = State("book_flight", ("trip", "book_flight"), {"budget": 900}, ("destination",), "none")
    llm = FakeLLM("CALL BookFlight(to=Lisbon, max_price=900)")

    thought, action = mem.step(llm, decision, "ok, book the flight to the destination")
    assert action == "CALL BookFlight(to=Lisbon, max_price=900)"
    assert thought == "memory [1] has the destination."
    prompt = llm.prompts[0]
    hits = mem.last_hits
    assert 1 <= len(hits) <= 3
    assert "trip#0" in [h.id for h in hits]  # the memory that holds the needed destination
    for part in ("## Current state", "Phase: book_flight", "Still needed: destination", "Known: budget=900",
                 "## Retrieved memories", "1. [", "## Observation", "ok, book the flight", "Thought:", "Action:"):
        assert part in prompt, part
    assert prompt.index("## Current state") < prompt.index("## Retrieved memories") < prompt.index("## Observation")
    assert all(mem.bank.unit(h.id).access_count == 1 for h in hits)

    before = {h.id: mem.bank.importance(h.id) for h in hits}
    written = mem.record(thought, action, "BookFlight: confirmed TP123")
    assert [u.kind for u in written] == ["thought", "action", "result"]
    assert [u.step for u in written] == [6, 7, 8]
    used = set(mem.last_used)
    assert hits[0].id in used  # cited as [1]
    assert "trip#0" in used  # its value (Lisbon) is in the action
    for uid, imp in before.items():
        if uid in used:
            assert mem.bank.importance(uid) > imp
    assert mem.bank.graph.has_edge(written[1].id, "trip#0", "derived_from")


def test_prompt_and_reply_helpers_without_memories():
    text = build_prompt(State(), [], "hello")
    assert "(none)" in text and "Phase: none" in text and text.rstrip().endswith("Action: <the next action>")
    assert parse_reply("just do X") == ("", "just do X")
    assert parse_reply("THOUGHT: a\naction:  b ") == ("a", "b")
    mem = SAMMemory(HashingEncoder(32))
    assert mem.retrieve(State(), "anything") == []  # an empty bank answers nothing, never fails


def test_bank_and_encoder_must_agree_on_dim():
    import pytest

    from sam_model.memory import MemoryBank

    with pytest.raises(ValueError, match="dim 16 but the encoder encodes dim 32"):
        SAMMemory(HashingEncoder(32), MemoryBank(16))


def test_example_script_runs_on_a_demo_episode(tmp_path):
    out = subprocess.run([sys.executable, str(REPO / "examples" / "agent_loop.py"), "--hashing", "--episodes", "1",
                          "--save", str(tmp_path / "bank.npz")], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "labelled memories covered" in out.stdout and "| action: CALL" in out.stdout
    assert "decisions: MRR" in out.stdout and (tmp_path / "bank.npz").is_file()


@pytest.mark.parametrize("flag, value", [("--episodes", "0"), ("--k", "0"), ("--capacity", "-1")])
def test_example_script_refuses_counts_that_run_nothing(flag, value):
    out = subprocess.run([sys.executable, str(REPO / "examples" / "agent_loop.py"), "--hashing", flag, value],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and f"argument {flag}: want an integer from" in out.stderr  # was: nothing, exit 0


def test_build_prompt_reads_the_bank_under_its_lock(monkeypatch):
    """Another agent sharing the bank pruned a unit between build_prompt's membership test and its read: KeyError.
    Here the prune starts at that very moment, from another thread; under the lock it waits for the prompt."""
    import threading

    mem = SAMMemory(HashingEncoder(64), episode_id="trip", k=2)
    mem.observe("I want to fly to Lisbon", State("clarify", (), {"destination": "Lisbon"}), kind="user")
    hits = mem.retrieve(State("book", (), {}, ("destination",)), "book it")
    bank, cls = mem.bank, type(mem.bank)
    contains, pruner = cls.__contains__, []

    def contains_then_pruned(self, uid):
        found = contains(self, uid)
        if found and not pruner:
            pruner.append(threading.Thread(target=bank.remove, args=(uid,)))
            pruner[0].start()
            pruner[0].join(timeout=0.5)  # done at once unless the prompt holds the bank's lock
        return found

    monkeypatch.setattr(cls, "__contains__", contains_then_pruned)
    prompt = mem.build_prompt(State("book"), hits, "book it")  # was: KeyError from bank.unit
    pruner[0].join()
    assert "Lisbon" in prompt and hits[0].id not in bank
