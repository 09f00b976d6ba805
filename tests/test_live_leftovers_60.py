"""Leftovers of the live memory path (stop 59's list): agent-log events added with steps of their own are placed as
evaluate.py reads the same events (sam_model.memory.scopedsteps), and an open turn of OpenAI Responses items reads
an item of the turn given again in its place (sam_model.memory.live_responses)."""

from __future__ import annotations

import test_live_gemini_turn as gemini
import test_live_reuse
from test_agreement import DEPTH, retriever
from test_live_responses import INSTRUCTIONS, conversation, feed, imported, labelled, stored, want
from test_live_reuse import _life, _steps

from sam_model.data.transcripts import live_state
from sam_model.memory import HashingEncoder, ScopedMemory

reuse_net = test_live_reuse.reuse_net  # its tiny network, a fixture of this module too


def ev(s: int, text: str = "", **kw) -> dict:
    return {"kind": "result", "text": text or f"value V{s}", "step": s, **kw}


def _as(eid: str, events: list[dict]) -> list[dict]:
    """``events`` as a log's episode ``eid`` (a live add gives them without: they take the scope's)."""
    return [{"episode_id": eid, **e} for e in events]


def _placed(memory: ScopedMemory, user: str, points: list[tuple[int, int | None]]) -> list[list[int]]:
    """The uses the scope tells each of evaluate.py's decisions (its step and task start in the life)."""
    return [_steps(memory.used({"episode": user, "step": s, "task_start": t})) for s, t in points]


def test_a_first_batch_out_of_order_is_stored_as_evaluate_reads_its_file(reuse_net, tmp_path):
    """A first batch whose steps are out of order (a sidecar's lines flushed late) is one episode, its steps its
    own and its labels kept, as evaluate.py reads the same events as a file (sorted by step). Before, the batch was
    numbered in the order given: stored at 2, 3, 4, 6, a task starting at 3 (its step 0), the labels of step 3
    naming another numbering; results are listed in the order the events were given."""
    batch = [ev(2, "the booking code is K1NW8N"), ev(0, "user mia_li_3668"),
             ev(1, "reservation ZFA04Y", useful_memory_steps=[0]), ev(3, "refund", useful_memory_steps=[1, 2])]
    _, want, points = _life(tmp_path, [_as("e", batch)])
    assert want == [[], [0]] and points == [(1, 0), (3, 0)]  # evaluate's reading: can fail
    memory = ScopedMemory(retriever(reuse_net), k=DEPTH)
    added = memory.add(batch, user_id="u")["results"]
    assert [r["step"] for r in added] == [2, 0, 1, 3]
    assert _steps(h.id for h in memory.store.get_all()) == [0, 1, 2, 3]
    assert memory.query_input("", user_id="u")[1]["task_start"] == 0
    assert _placed(memory, "u", points) == want


def test_a_batch_going_on_with_the_episode_or_with_a_gap_keeps_the_order_given(reuse_net):
    """Sorting is for one run of an episode's steps: a batch that goes on with the scope's current episode and then
    starts the next one under the same id ([3, 4, 0, 1] after steps 0-2: a sidecar's chunk across the boundary) or a
    first batch with a gap ([7, 8, 0, 1, 2]: an episode's end, then the next one) keeps the order given, each
    step 0 beginning a task. Sorted by step (as this stop's first ordering did), the next episode's events took the
    current one's steps and the two were mixed in one task."""
    memory = ScopedMemory(retriever(reuse_net), k=DEPTH)
    memory.add([ev(0), ev(1), ev(2)], user_id="u")
    added = memory.add([ev(3), ev(4), ev(0, "user noah"), ev(1, "call", useful_memory_steps=[0])], user_id="u")
    assert [r["step"] for r in added["results"]] == [3, 4, 5, 6]
    assert memory.query_input("", user_id="u")[1]["task_start"] == 5
    assert list(memory.used(memory.query_input("", user_id="u")[1])) == ["u#5"]
    added = memory.add([ev(7), ev(8), ev(0), ev(1), ev(2)], user_id="v")["results"]
    assert [r["step"] for r in added] == [7, 8, 9, 10, 11]
    assert memory.query_input("", user_id="v")[1]["task_start"] == 9


def test_two_episodes_interleaved_in_one_batch_are_evaluates_life_of_them(reuse_net, tmp_path):
    """Two episode ids interleaved in one add (an event file holding both): evaluate.py reads each id's events
    together, in the order the ids first appear, its life of them two tasks, each with its labels. Before, the
    other id's steps past 0 were numbered on with their labels dropped."""
    a = [ev(0, "A user mia", episode_id="A"), ev(1, "A call", episode_id="A", useful_memory_steps=[0])]
    b = [ev(0, "B user noah", episode_id="B"), ev(1, "B call", episode_id="B", useful_memory_steps=[0]),
         ev(2, "B next call", episode_id="B", useful_memory_steps=[1])]
    _, want, points = _life(tmp_path, [a, b])
    assert want == [[], [], [2]] and points == [(1, 0), (3, 2), (4, 2)]  # evaluate's reading: can fail
    memory = ScopedMemory(retriever(reuse_net), k=DEPTH)
    memory.add([a[0], b[0], a[1], b[1], b[2]], user_id="u")
    assert memory.query_input("", user_id="u")[1]["task_start"] == 2
    assert _placed(memory, "u", points) == want


def test_a_step_0_again_in_one_batch_begins_the_task_evaluates_life_begins(reuse_net, tmp_path):
    """[0, 0, 1, 2] under one id (events added without an id of their own take the scope's): two episodes, the second
    a task from its step 0, stored where evaluate.py's life of the two places them (steps 0 to 3, the task from
    1, its labels naming its own steps); evaluate.py refuses the same events as one episode's file (a duplicate
    step), so the life is the reading the live path can match. Unchanged by the ordering: a batch whose id repeats
    a step keeps the order given (only the order tells its episodes apart)."""
    first = [ev(0, "user mia")]
    second = [ev(0, "user noah"), ev(1, "call", useful_memory_steps=[0]), ev(2, "next call", useful_memory_steps=[1])]
    _, want, points = _life(tmp_path, [_as("e1", first), _as("e2", second)])
    assert want == [[], [1]] and points == [(2, 1), (3, 1)]
    memory = ScopedMemory(retriever(reuse_net), k=DEPTH)
    assert [r["step"] for r in memory.add([*first, *second], user_id="u")["results"]] == [0, 1, 2, 3]
    assert memory.query_input("", user_id="u")[1]["task_start"] == 1
    assert _placed(memory, "u", points) == want


def test_a_delete_of_an_unrelated_memory_keeps_a_responses_turn_open(tmp_path):
    """A streaming Responses agent adds an item at response.output_item.added and again at .done; a delete of an
    earlier memory between them (one that set no values, before the open turn) leaves the turn open, so the .done
    replaces its version in place: the importer's memories but the deleted one. Before, every delete closed the
    turn and the .done was read as a new item, stored twice."""
    items = conversation()
    memory = ScopedMemory(HashingEncoder(16))
    memory.add([{"role": "system", "content": INSTRUCTIONS}], user_id="t", run_id="r")
    gone = None
    for x in items:
        if x.get("id") == "msg_3":
            memory.add([{**x, "status": "in_progress", "content": [{"type": "output_text", "text": "Found"}]}],
                       user_id="t", run_id="r")
            gone = next(r for r in memory.get_all(user_id="t", run_id="r", limit=None)["results"]
                        if r["memory"] == "Sorry to hear that. What's going on?")
            memory.delete(gone["id"])
        memory.add([x], user_id="t", run_id="r")
    assert gone is not None
    memories, labels = want(imported(tmp_path, items))
    assert stored(memory) == [m for m in memories if m[0] != gone["step"]]
    assert labelled(memory) == labels


def test_gemini_words_before_a_call_are_one_turn_for_live_state_as_for_the_importer(tmp_path):
    """Gemini's reader joins consecutive model contents into one turn (a streamed answer, a chunk each), words and
    then a call alike, so the importer decides before the words, as it does for a Responses preamble; live_state,
    given the contents up to the call, decided at the words (the preamble rule was Responses' alone), flagging the
    unit the user's last message gave (an observation to the importer). One rule now (formats.base.JOINS_CALLS)."""
    contents = gemini.conversation()[:6]  # the user's phone, the unit asked and given, the words, the call, its result
    decided = next(e for e in gemini.imported(tmp_path, contents) if e[4])
    assert decided[2] == "Unit 4B, the kitchen sink leaks."  # the importer's: can fail
    (at, call), *_ = gemini.calls(contents)
    got = live_state(contents[:at], call)
    assert got["uncertainty_flags"] == ["phone"]
    assert got == decided[3]


def test_a_bare_message_said_twice_is_two_memories_as_the_importer_reads_it(tmp_path):
    """Documents behaviour (passes before): a message without an id (a user's bare one) has nothing but its words
    and place: given again right after itself it is the importer's reading of a log holding it twice (two memories),
    not deduplicated (kept: a resend and the same words said again cannot be told apart; a response's items, which
    have ids, are read once)."""
    items = conversation()
    yes = {"role": "user", "content": "Yes, please."}
    items = [*items[:3], yes, yes, *items[3:]]
    memory, _ = feed(ScopedMemory(HashingEncoder(16)), items)
    memories, labels = want(imported(tmp_path, items))
    assert sum(m[2] == "Yes, please." for m in memories) == 2  # the importer's: can fail
    assert (stored(memory), labelled(memory)) == (memories, labels)
