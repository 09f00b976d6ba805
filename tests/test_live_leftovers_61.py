"""Leftovers of the live (run-time add and search) path found at the end of stop 60, each reproduced here first."""

from __future__ import annotations

import numpy as np
import pytest
from test_live_gemini_turn import imported, stored, text
from test_reuse_recent import _replay

from sam_model.evaluation.ranking import used_ranks
from sam_model.memory import HashingEncoder, ScopedMemory
from sam_model.store import MemoryStore
from sam_model.storeconfig import StoreConfig


@pytest.mark.parametrize("rank", [0, -1, "a", True, 1.5])
def test_a_recency_search_refuses_a_bad_rank_of_an_id_not_stored(tiny_bert_dir, tmp_path, rank):
    """A rank is checked for every id of used=, stored or not: a bad one of an id the store does not hold was passed
    over without a word when no told id was stored (the check ran only once a told id was found)."""
    enc, data, _, _ = _replay(tiny_bert_dir, tmp_path, -1.0, 4.0)
    store = MemoryStore(enc, StoreConfig(provenance=False))
    store.add(data.memories)
    ex = data.examples[-1]
    q = np.asarray(enc.encode_queries([ex.state], [ex.observation], steps=[ex.step], task_starts=[ex.task_start]),
                   dtype=np.float32)[0]
    assert store.search_vector(q, 3, episode_id=ex.episode_id, used={"gone": 1})  # a good rank: searched
    with pytest.raises(ValueError, match=r"used\['gone'\] must be the rank") as err:
        store.search_vector(q, 3, episode_id=ex.episode_id, used={"gone": rank})
    assert "\n" not in str(err.value)
    ranks = {data.memories[p].id: k for p, k in used_ranks(data.memories, ex).items()}
    with pytest.raises(ValueError, match=r"used\['gone'\]"):  # beside stored ones too
        store.search_vector(q, 3, episode_id=ex.episode_id, used={**ranks, "gone": rank})


CALL = {"role": "model", "parts": [{"functionCall": {"name": "lookup_tenant", "args": {"phone": "(415) 555-0142"}}}]}
STREAM = [text("user", "Hi, my phone is (415) 555-0142."), text("model", "Let me"), text("model", "  "),
          text("model", "look."), CALL,
          {"role": "user", "parts": [{"functionResponse": {"name": "lookup_tenant", "response": {"id": "TN-1"}}}]}]


@pytest.mark.parametrize("how", ["in process", "saved and loaded", "checked first"])
def test_a_gemini_chunk_of_whitespace_joins_the_words_as_the_importer_joins_it(tmp_path, how):
    """A streamed answer's chunk of whitespace alone, a content an add, joins the model's words before it as the
    importer's reader joins it ('Let me  look.'): it was refused as a message of whitespace, and the chunks after it
    stored 'Let melook.'. A sidecar checking each add first (sam-serve's check_add) is answered alike."""
    want = imported(tmp_path, STREAM)
    assert want[1][2] == "Let me  look."  # the importer's: the blank chunk kept between the words
    memory = ScopedMemory(HashingEncoder(16))
    for c in STREAM:
        read = memory.check_add([c], "data", user_id="t", run_id="r") if how == "checked first" else None
        memory.add([c], user_id="t", run_id="r", read=read)
        if how == "saved and loaded":
            memory = ScopedMemory.load(memory.save(tmp_path / "m"), HashingEncoder(16))
    assert stored(memory) == want


POLICY = "You are Brightline's support agent. Plans: FIBER100, FIBER500."
SYSTEMS = {  # each API's instruction as an add gives it, and a conversation after it
    "gemini": ({"role": "system", "parts": [{"text": POLICY}]}, STREAM[:1] + [CALL]),
    "responses": ({"type": "message", "role": "developer", "content": POLICY},
                  [{"type": "message", "role": "user", "content": "Hi, my phone is (415) 555-0142."},
                   {"type": "function_call", "call_id": "c1", "name": "lookup_tenant", "arguments": "{}"}]),
    "chat": ({"role": "system", "content": POLICY}, [{"role": "user", "content": "Hi, my phone is (415) 555-0142."}]),
}


def policy(memory: ScopedMemory) -> str:
    return memory._trackers["t//r"].policy_norm


@pytest.mark.parametrize("api", SYSTEMS)
@pytest.mark.parametrize("how", ["again with the conversation", "then the conversation an item an add"])
def test_an_instruction_added_alone_then_again_is_the_policy_once(api, how):
    """The instruction added alone, then sent again with the conversation at each request (or the conversation's
    items added after it, re-read with the open turn), was joined to the policy once more each time (Gemini and
    Responses: three times after two adds, growing with each add); the policy is now the conversation's added at
    once, and an instruction that differs is still joined."""
    system, conversation = SYSTEMS[api]
    whole = ScopedMemory(HashingEncoder(16))
    whole.add([system, *conversation], user_id="t", run_id="r")
    memory = ScopedMemory(HashingEncoder(16))
    memory.add([system], user_id="t", run_id="r")
    for _ in range(3):
        for add in ([[system, *conversation]] if how.startswith("again") else [[c] for c in conversation]):
            memory.add(add, user_id="t", run_id="r")
    assert policy(memory) == policy(whole) and policy(whole).count("fiber500") == 1
    other = {**system, **({"parts": [{"text": "Be brief."}]} if api == "gemini" else {"content": "Be brief."})}
    memory.add([other], user_id="t", run_id="r")
    assert policy(memory) == policy(whole) + " be brief."


def test_documents_behaviour_each_add_of_a_gemini_open_turn_reads_it_again_whole(monkeypatch):
    """Documents behaviour (README, 'An open turn holds at most 5,000 lines'): a streamed answer added a chunk an add
    is read again whole at each add, its words' memory re-read and embedded again, so an add costs in proportion to
    the open turn (in all its square, up to the cap); the whole answer in one add reads each chunk once."""
    from sam_model.data.formats import gemini

    read = []
    monkeypatch.setattr(gemini, "part", lambda p, where, part=gemini.part: read.append(where) or part(p, where))

    def parts_read(n: int, at_once: bool) -> int:
        memory = ScopedMemory(HashingEncoder(16))
        memory.add([STREAM[0]], user_id="t", run_id="r")
        chunks = [text("model", f"w{i} ") for i in range(n)]
        read.clear()
        for add in [chunks] if at_once else [[c] for c in chunks]:
            memory.add(add, user_id="t", run_id="r")
        assert stored(memory)[1][2] == "".join(f"w{i} " for i in range(n))
        return len(read)

    twenty, forty = parts_read(20, False), parts_read(40, False)
    assert forty >= 40 * 41 // 2  # each add reads the turn's chunks so far
    assert forty > 3 * twenty  # twice the chunks, about four times the reading
    assert parts_read(40, True) < 3 * 40  # in one add: each chunk read once or twice (the add's check, the turn)


class _Id(str):
    """A Gemini CLI message id that counts how often it is hashed (looked up in a set or a dict, put in one)."""

    hashed = 0

    def __hash__(self) -> int:
        _Id.hashed += 1
        return str.__hash__(self)


def _cli_session(turns: int) -> list[dict]:
    from test_format_gemini_cli import as_jsonl, to_gemini_cli

    chat = [m for i in range(turns) for m in ({"role": "user", "content": f"question {i}"},
                                              {"role": "assistant", "content": f"answer {i}"})]
    lines = as_jsonl(to_gemini_cli(chat))
    return [{**x, "id": _Id(x["id"])} if isinstance(x.get("id"), str) else x for x in lines]


def test_a_gemini_cli_session_added_a_line_at_a_time_looks_each_closed_id_up_a_bounded_number_of_times(tmp_path):
    """The closed turns' message ids (a message written again after them is refused) were made a set anew at each
    add, every id hashed once an add: work that grew with the session (a session of 200 turns hashed its ids 3.7
    times as often as one of 100). The set is now kept as the list grows (live.ClosedIds): twice the session, twice
    the hashing. Saved and loaded, a message written again after a later one is still refused."""
    counts = []
    for turns in (100, 200):
        lines = _cli_session(turns)
        memory = ScopedMemory(HashingEncoder(16))
        _Id.hashed = 0
        for x in lines:
            memory.add([x], user_id="t", run_id="r")
        counts.append(_Id.hashed)
    assert counts[1] < 2.5 * counts[0]
    memory = ScopedMemory.load(memory.save(tmp_path / "m"), HashingEncoder(16))
    first = next(x for x in lines if x.get("type") == "gemini")
    with pytest.raises(ValueError, match=rf"^data\[0\]: Gemini CLI message '{first['id']}' written again"):
        memory.add([first], user_id="t", run_id="r")


def test_documents_behaviour_a_delete_of_the_open_turns_words_closes_it_and_keeps_them_out(tmp_path):
    """Documents behaviour (README, the open turn's 'a delete ... closes it'): a delete of a memory of the open turn
    itself closes the turn, as one of a call that set values does. Kept open, its lines, read again at the next add,
    would put the deleted words back into the conversation and trace the next call's arguments to them. So the call
    after deleted words is decided at their place (kept, blank: the steps after it do not move), as a chat add
    decides, not before them as the importer does with the log whole or without them: labels [0, 2], the user's
    last values flagged, where the importer gives [0]. A delete of an unrelated earlier memory keeps the turn open
    (tests/test_live_leftovers_60.py)."""
    from test_live_gemini_turn import conversation

    contents = conversation()
    memory = ScopedMemory(HashingEncoder(16))
    for c in contents[:4]:
        memory.add([c], user_id="t", run_id="r")
    said = {r["memory"]: r["id"] for r in memory.get_all(user_id="t", run_id="r")["results"]}
    memory.delete(said["Let me look."], user_id="t", run_id="r")
    assert not memory._open["t//r"].lines  # closed: the scope's next lines begin a turn
    call = contents[4]["parts"][0]["functionCall"]
    flags = memory.search("", call=call, user_id="t", run_id="r", limit=3)["state"]["uncertainty_flags"]
    for c in contents[4:]:
        memory.add([c], user_id="t", run_id="r")
    got = stored(memory)
    kept = {e[2] for e in got} | {r["memory"] for r in memory.get_all(user_id="t", run_id="r")["results"]}
    assert "Let me look." not in kept and "Found you. Booking a plumber." in kept  # gone, and the rest stored
    assert (got[3][2], got[3][4], flags) == ("", [0, 2], ["phone", "unit"])  # decided at the words' blank place
    rest = next(e for e in imported(tmp_path, contents[:3] + contents[4:]) if e[4])
    whole = next(e for e in imported(tmp_path, contents, "whole") if e[4])
    assert (rest[0], rest[4]) == (whole[0], whole[4]) == (2, [0])  # the importer's: before the words, either way


def _claim() -> list[dict]:
    """A Strands Agents claims conversation (Converse messages), two invocations of 4 messages each."""
    from test_walkthrough_bedrock import ANSWER, MESSAGES, POLICY

    tool = {"toolUse": {"toolUseId": "t2", "name": "file_fnol", "input": {"policy_number": POLICY}}}
    return [*MESSAGES, ANSWER, {"role": "user", "content": [{"text": "ok, go ahead"}]},
            {"role": "assistant", "content": [tool]},
            {"role": "user", "content": [{"toolResult": {"toolUseId": "t2", "status": "success",
                                                         "content": [{"json": {"claim_id": "CLM-38140"}}]}}]},
            {"role": "assistant", "content": [{"text": "Your claim CLM-38140 is open."}]}]


def _words(role: str, said: str) -> dict:
    return {"role": role, "content": [{"text": said}]}


@pytest.mark.parametrize("how", ["in process", "saved and loaded"])
def test_converse_messages_added_whole_after_each_invocation_are_the_adds_of_the_new_ones(tmp_path, how):
    """agent.messages added whole after each invocation (then sent again, an add retried) stores the memories,
    states and labels of the adds of each invocation's new messages: the start that is the scope's last add, its
    tool calls by their toolUseIds, is read once, and the add's notes say so."""
    msgs, ends = _claim(), [4, 8, 8]
    whole, new = ScopedMemory(HashingEncoder(16)), ScopedMemory(HashingEncoder(16))
    n, answers = 0, []
    for end in ends:
        answers.append(whole.add(msgs[:end], user_id="t", run_id="r"))
        if end > n:
            new.add(msgs[n:end], user_id="t", run_id="r")
        n = end
        if how == "saved and loaded":
            whole = ScopedMemory.load(whole.save(tmp_path / "m"), HashingEncoder(16))
    assert stored(whole) == stored(new) and len(stored(new)) == 8  # labels and states too
    assert [len(a["results"]) for a in answers] == [4, 4, 0]
    assert [a.get("notes", [{}])[0].get("reason", "")[:10] for a in answers] == ["", "data[0:4]:", "data[0:8]:"]


def test_converse_messages_said_again_without_a_call_id_are_stored_again():
    """Guard (passes before): without a toolUseId among them, messages that open an add as the last add's did
    are new ones: a "yes" said again is a memory of its own (as the importer reads a log holding it twice). A
    first invocation of words alone sent again whole with calls after it was stored again until stop 62; the
    scope's first add is its whole conversation, and is now read once (tests/test_live_leftovers_62.py)."""
    memory = ScopedMemory(HashingEncoder(16))
    yes = [_words("user", "yes")]
    for add in (yes, yes, [*yes, _words("assistant", "Booked.")]):
        memory.add(add, user_id="t", run_id="r")
    assert [e[2] for e in stored(memory)] == ["yes", "yes", "yes", "Booked."]
    msgs, other = _claim(), ScopedMemory(HashingEncoder(16))
    first = [_words("user", "Hi"), _words("assistant", "Hello, how can I help?")]
    other.add(first, user_id="t", run_id="r")
    other.add([*first, *msgs[:4]], user_id="t", run_id="r")
    assert [e[2] for e in stored(other)][:3] == ["Hi", "Hello, how can I help?", msgs[0]["content"][0]["text"]]
