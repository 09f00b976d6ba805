"""A review of the live path (stop 60): the ordering of an add's agent-log events (scopedsteps.in_file_order) is
evaluate.py's reading of the same events as a file (the batches written one after another), whatever the order a
batch going on with the scope's current episode gives them in and whatever other episode's events come first in
it; an Event object's step is checked as an event line's is; Gemini contents added one at a time are decided as the
importer decides (a scope keeps an open turn of them)."""

from __future__ import annotations

import json
import random

import pytest
import test_live_gemini_turn as gemini
import test_live_reuse
from test_agreement import DEPTH, retriever, write_events
from test_live_leftovers_60 import _placed, ev
from test_live_reuse import _steps

from sam_model.data.lives import make_lives
from sam_model.data.reader import read_episodes
from sam_model.data.schema import Event, State
from sam_model.data.synthetic import generate_episodes
from sam_model.data.transcripts import iter_transcript_events, live_state
from sam_model.evaluation.data import build_eval_data
from sam_model.evaluation.ranking import used_memories
from sam_model.memory import HashingEncoder, ScopedMemory

reuse_net = test_live_reuse.reuse_net  # its tiny network, a fixture of this module too


def _read_as_file(tmp_path, batches: list[list[dict]], name: str = "file"):
    """evaluate.py's reading of ``batches`` written one after another as an event file (each episode id's events
    together, the ids in the order they first appear, each by step) and its life of the episodes: the life's
    (step, text) of each event, the used memories' steps of each decision and the decisions' (step, task start)."""
    flat = [d for b in batches for d in b]
    by_key = {(d["episode_id"], d["step"]): d for d in flat}
    episodes = read_episodes(write_events(tmp_path / f"{name}.jsonl", flat))
    ordered = [by_key[(e.episode_id, e.step)] for ep in episodes for e in ep.events]
    life = list(make_lives(ordered, len(episodes)))
    log = write_events(tmp_path / f"{name}-life.jsonl", life)
    data = build_eval_data(str(log), read_episodes(log), "episode")
    used = [sorted(data.memories[p].step for p in used_memories(data.memories, ex)) for ex in data.examples]
    return sorted((e["step"], e["text"]) for e in life), used, [(ex.step, ex.task_start) for ex in data.examples]


def _added(memory: ScopedMemory, batches: list[list[dict]], user: str = "u") -> list[tuple[int, str]]:
    for b in batches:
        memory.add(b, user_id=user)
    return sorted((r["step"], r["memory"]) for r in memory.get_all(user_id=user, limit=None)["results"])


def test_a_batch_going_on_with_the_episode_out_of_order_or_with_a_gap_is_read_as_its_file(reuse_net, tmp_path):
    """After steps 0-2, a batch [3, 5, 4] (a sidecar's lines flushed out of order) or [5, 3] (step 4 lost) goes on
    with the episode: the file of both batches is one episode, by step, its labels kept. Before, the batch was
    taken in the order given wherever its first event was the step after the episode's last (or its steps had a
    gap): step 4 (or 3) was numbered on past 5, its labels dropped."""
    first = [ev(0, "user mia_li_3668", episode_id="e"), ev(1, "reservation ZFA04Y", episode_id="e"),
             ev(2, "the booking code is K1NW8N", episode_id="e")]
    for name, then in [("shuffled", [ev(3, "refund", episode_id="e", useful_memory_steps=[1]),
                                     ev(5, "cancel", episode_id="e", useful_memory_steps=[2]),
                                     ev(4, "rebook", episode_id="e", useful_memory_steps=[0, 3])]),
                       ("gap", [ev(5, "cancel", episode_id="e", useful_memory_steps=[2]),
                                ev(3, "refund", episode_id="e", useful_memory_steps=[1])])]:
        life, want, points = _read_as_file(tmp_path, [first, then], name)
        assert any(want) and len(points) == len(then)  # evaluate's reading: its decisions, uses, can fail
        memory = ScopedMemory(retriever(reuse_net), k=DEPTH)
        assert _added(memory, [first, then]) == life, name
        assert _placed(memory, "u", points) == want, name


def test_the_current_episode_going_on_after_another_ids_events_in_a_batch_comes_first(reuse_net, tmp_path):
    """After episode A's steps 0-2, a batch [B0, A3, B1, B2] (an event file's next lines: A's last step, B's first
    ones): evaluate.py reads A (0-3) before B, as A began the file. Before, the batch's ids were taken in the order
    they first appear in it, B first: A3 was numbered on after B's task, its labels dropped."""
    a = [ev(0, "A user mia", episode_id="A"), ev(1, "A order 51234", episode_id="A"),
         ev(2, "A lookup 51234", episode_id="A", useful_memory_steps=[1])]
    then = [ev(0, "B user noah", episode_id="B"), ev(3, "A refund 51234", episode_id="A", useful_memory_steps=[1, 2]),
            ev(1, "B call noah", episode_id="B", useful_memory_steps=[0]),
            ev(2, "B next call", episode_id="B", useful_memory_steps=[1])]
    life, want, points = _read_as_file(tmp_path, [a, then])
    assert want == [[], [1], [], [4]] and points == [(2, 0), (3, 0), (5, 4), (6, 4)]  # evaluate's reading: can fail
    memory = ScopedMemory(retriever(reuse_net), k=DEPTH)
    assert _added(memory, [a, then]) == life
    assert _placed(memory, "u", points) == want


def test_episodes_cut_into_batches_each_shuffled_are_read_as_their_file(reuse_net, tmp_path):
    """Random lives: synthetic episodes (ids of their own) written in order, cut into batches at random places,
    each batch's events shuffled, added batch by batch (saved and loaded now and then): the stored memories, the
    task starts and each decision's uses are evaluate.py's reading of the batches as one file. An episode's events
    in a later batch all lie past those of an earlier one, so the file's reading is one the live path can match."""
    episodes = generate_episodes(3, seed=7)
    stream = [d for ep in episodes for d in ep]
    for seed in range(4):
        rng = random.Random(seed)
        cuts = sorted(rng.sample(range(1, len(stream)), 6))
        batches = [stream[i:j] for i, j in zip([0, *cuts], [*cuts, len(stream)])]
        for b in batches:
            rng.shuffle(b)
        life, want, points = _read_as_file(tmp_path, batches, f"r{seed}")
        memory = ScopedMemory(retriever(reuse_net), k=DEPTH)
        for k, b in enumerate(batches):
            memory.add(b, user_id="u")
            if rng.random() < 0.4:
                memory = ScopedMemory.load(memory.save(tmp_path / f"s{seed}-{k}"), retriever(reuse_net))
                assert "numbering" in json.loads((tmp_path / f"s{seed}-{k}" / "scoped.json").read_text())
        got = sorted((r["step"], r["memory"]) for r in memory.get_all(user_id="u", limit=None)["results"])
        assert got == life, seed
        assert _placed(memory, "u", points) == want, seed
        assert _steps(h.id for h in memory.store.get_all()) == [s for s, _ in life]


def test_an_event_given_with_a_step_an_event_line_may_not_hold_is_refused_and_nothing_stored(tmp_path):
    """An Event object (not a dict, which parse_event checks) whose step is a string, a bool, negative or past 64
    bits is refused in one line naming the item, nothing stored, and the memory still saves and loads. Before, "3"
    failed in the ordering's sort with a TypeError naming no item, and -1 or True was stored (at 0, at 1) with a
    numbering whose save ScopedMemory.load refused: the memory could no longer be loaded."""
    for step in ("3", -1, True, 2**63):
        memory = ScopedMemory(HashingEncoder(16))
        memory.add([ev(0, "user mia")], user_id="u")
        with pytest.raises(ValueError, match=r"^data\[1\]: an Event's step must be an integer"):
            memory.add([ev(1, "reservation ZFA04Y"), Event("e", step, "result", "value", State())], user_id="u")
        assert [r["memory"] for r in memory.get_all(user_id="u", limit=None)["results"]] == ["user mia"]
        loaded = ScopedMemory.load(memory.save(tmp_path / f"m{step}"), HashingEncoder(16))
        assert [r["step"] for r in loaded.add([ev(1, "reservation ZFA04Y")], user_id="u")["results"]] == [1]


def test_gemini_contents_added_one_at_a_time_are_decided_as_the_importer_decides(tmp_path):
    """The importer's Gemini reader joins the model's words and its functionCall content into one turn, deciding at
    the user's message before them; a scope kept no open turn of Gemini contents (README said so, and how to work
    around it), so the words added alone were decided at: the call's labels [0, 2] at the words where the importer
    gives [0] at the user's message, and a search by the call after the words flagged ['phone', 'unit'] (the
    importer's ['phone']). The scope now keeps one (tests/test_live_gemini_turn.py, whose conversation this is)."""
    contents = gemini.conversation()[:6]  # up to the first call's functionResponse
    want = gemini.imported(tmp_path, contents)
    decided = next(e for e in want if e[4])
    assert (decided[0], decided[4], decided[3]["uncertainty_flags"]) == (2, [0], ["phone"])  # the importer's: can fail
    memory, states = gemini.feed(ScopedMemory(HashingEncoder(16)), contents)
    assert states == [decided[3]]
    assert [(e[0], e[4]) for e in gemini.stored(memory) if e[4]] == [(2, [0])]  # [(3, [0, 2])] before: at the words
    assert gemini.stored(memory) == want


def test_a_refused_event_of_a_batch_stored_in_step_order_is_named_by_its_place_in_the_add():
    """The store is given an add's events in step order (the recorder reads a task's start event by event), so its
    check named a blank event's place in that order: [4, 3 (blank)] was refused as memories[0], the event the
    agent gave first. The add now names it data[1], and a refused batch changes nothing: the same steps then take
    their places and labels."""
    memory = ScopedMemory(HashingEncoder(16))
    memory.add([ev(0, "user mia"), ev(1, "order 51234"), ev(2, "card 4111")], user_id="u")
    with pytest.raises(ValueError, match=r"^data\[1\]\.text must not be empty"):
        memory.add([ev(4, "refund", useful_memory_steps=[1]), ev(3, "   ")], user_id="u")
    assert len(memory.get_all(user_id="u", limit=None)["results"]) == 3
    added = memory.add([ev(4, "refund", useful_memory_steps=[1]), ev(3, "lookup")], user_id="u")["results"]
    assert [r["step"] for r in added] == [4, 3]
    assert list(memory.used({"episode": "u", "step": 5, "task_start": 0})) == ["u#1"]


def _rollout_line(payload: dict) -> dict:
    return {"timestamp": "2025-10-29T00:59:38.317Z", "type": "response_item", "payload": payload}


def test_a_codex_rollouts_preamble_is_decided_before_as_the_importer_does(tmp_path):
    """A Codex rollout's response_item lines are read by the Responses reader, which joins the assistant's message
    and the function_call right after it into one turn: the importer decides before the words. The preamble rule
    (formats.base.JOINS_CALLS) left Codex out, so live_state given the lines up to the call, and a scope fed the
    rollout line by line searched by the call after the message's line, decided at the words, flagging the unit the
    user's last message gave (['phone', 'unit'], the importer's ['phone'])."""
    args = {"phone": "(415) 555-0142", "unit": "4B"}
    meta = {"timestamp": "2025-10-29T00:59:38.317Z", "type": "session_meta", "payload": {
        "id": "0199a213-81c0-7800-8aa1-bbab2a035a53", "timestamp": "2025-10-29T00:59:38.317Z",
        "cwd": "/home/agent/airline", "originator": "codex_cli_rs", "cli_version": "0.58.0", "source": "cli",
        "model_provider": "openai", "base_instructions": {"text": "You are the maintenance agent."}}}

    def said(role: str, text: str) -> dict:
        kind = "input_text" if role == "user" else "output_text"
        return _rollout_line({"type": "message", "role": role, "content": [{"type": kind, "text": text}]})

    call = {"type": "function_call", "name": "lookup_tenant", "arguments": json.dumps(args), "call_id": "c1"}
    lines = [meta, said("user", "Hi, my phone is (415) 555-0142."), said("assistant", "Which unit?"),
             said("user", "Unit 4B, the kitchen sink leaks."), said("assistant", "Let me look."), _rollout_line(call),
             _rollout_line({"type": "function_call_output", "call_id": "c1", "output": '{"id": "TN-1"}'})]
    log = tmp_path / "rollout.jsonl"
    log.write_text("".join(json.dumps(x) + "\n" for x in lines))
    imported = list(iter_transcript_events(log))
    decided = next(e for e in imported if e.get("useful_memory_steps"))
    assert decided["text"] == "Unit 4B, the kitchen sink leaks."  # the importer's: can fail
    assert live_state(lines[:5], {"name": "lookup_tenant", "arguments": call["arguments"]}) == decided["state"]
    memory = ScopedMemory(HashingEncoder(16))
    for x in lines:
        if x["payload"].get("type") == "function_call":
            for given in (call, {"name": "lookup_tenant", "arguments": call["arguments"]}):
                assert memory.search("", call=given, user_id="t", run_id="r", limit=3)["state"] == decided["state"]
        memory.add([x], user_id="t", run_id="r")
    assert gemini.stored(memory) == gemini.events(imported)

