"""A Gemini CLI rewind (``/rewind``, Esc Esc) appends ``{"$rewindTo": id}`` to the session's ``.jsonl`` and keeps the
turns it removes in the file. Gemini CLI's loader (chatRecordingService.ts, loadConversationRecord) removes the
message of that id and every message written after it, the messages written after the record being the new branch;
the reader does the same, and reports the removed ones as it reports a Claude Code session's abandoned branches.
Read where they were written, they were spliced into the conversation and later calls' values traced to them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_format_gemini_cli import as_jsonl, call, gemini, header, read, user, write

from sam_model.data.formats import to_chat
from sam_model.data.sources import SourceOptions, iter_source_events
from sam_model.data.transcripts import main
from sam_model.memory import HashingEncoder, ScopedMemory

HI = "Hi, I'm Ann (ann_lee_123)."
USER = '{"name": "Ann Lee", "reservations": ["QX7Z9A", "ZZ1234"]}'
REWOUND = "messages of abandoned branches (a rewind: Gemini CLI keeps them)"
SHOW = '{"reservation_id": "QX7Z9A", "cabin": "economy"}'


def texts(events: list[dict]) -> list[str]:
    return [e["text"] for e in events]


def traced(events: list[dict], call_text: str) -> list[str]:
    """The texts of the events the decision before the call whose text is ``call_text`` is labelled with."""
    at = texts(events).index(call_text)
    return [events[i]["text"] for i in events[at - 1]["useful_memory_steps"]]


def line(path: Path, mid: str) -> str:
    """FILE:LINE of the first line of message ``mid`` in the session file ``path``."""
    ids = [json.loads(x).get("id") for x in path.read_text().splitlines()]
    return f"{path}:{ids.index(mid) + 1}"


def before_the_rewind() -> list[dict]:
    """Ann's session up to its branch point: her id, the lookup, the assistant's words."""
    return [user("u1", HI), gemini("g1", "", [call("c1", "get_user", {"user_id": "ann_lee_123"}, USER)]),
            gemini("g2", "You hold two reservations.")]


def abandoned() -> list[dict]:
    """A prompt, a call and its result, words: the branch the rewind leaves."""
    return [user("u2", "Show me the first one."),
            gemini("g3", "", [call("c2", "get_reservation", {"reservation_id": "QX7Z9A"}, SHOW)]),
            gemini("g4", "It is an economy seat.")]


def new_branch() -> list[dict]:
    return [user("u3", "Cancel the first one."),
            gemini("g5", "", [call("c3", "cancel", {"reservation_id": "QX7Z9A"}, "cancelled QX7Z9A")]),
            gemini("g6", "Cancelled.")]


def test_a_rewind_after_a_tool_call_leaves_the_branch_out_and_traces_nothing_to_it(tmp_path):
    """Ann asked for QX7Z9A's details (a call and its result), rewound to that prompt and asked to cancel it: the
    abandoned prompt, call and result were read as turns, so the cancel's reservation id traced (label latest) to the
    result of a call the conversation no longer had. They are left out and reported; the new branch's call traces to
    the lookup the conversation kept. The kept answer written again after the rewind (its tokens, as
    recordMessageTokens writes the last message again) stays at its place."""
    kept = before_the_rewind()
    lines = [*as_jsonl([*kept, *abandoned()]), {"$rewindTo": "u2"}, {**kept[-1], "tokens": {"total": 3}},
             *as_jsonl(new_branch())[1:]]
    path = write(tmp_path / "chats" / "session-2026-05-22T14-59-aaaaaaaa.jsonl", lines)
    events, report = read(path, label="latest")
    assert texts(events) == [HI, "CALL get_user(user_id=ann_lee_123)", f"get_user: {USER}",
                             "You hold two reservations.", "Cancel the first one.",
                             "CALL cancel(reservation_id=QX7Z9A)", "cancel: cancelled QX7Z9A", "Cancelled."]
    assert traced(events, "CALL cancel(reservation_id=QX7Z9A)") == [f"get_user: {USER}"]
    assert report.abandoned == {line(path, "u2"): 3}
    assert report.ignored[REWOUND] == 3 and report.ignored["$rewindTo records"] == 1
    assert report.calls == 2 and not report.unmatched_results
    assert main([str(path), str(tmp_path / "o.jsonl")]) == 0


def test_a_rewind_to_the_first_message_leaves_only_the_new_branch(tmp_path, capsys):
    """/rewind to the session's first prompt removes every turn before the record; a session rewound whole with no
    new prompt yet has no conversation: refused alone in one line, no run in a folder."""
    lines = [*as_jsonl(before_the_rewind()), {"$rewindTo": "u1"}]
    gone = write(tmp_path / "gone" / "session-b.jsonl", lines)
    assert main([str(gone), str(tmp_path / "o.jsonl")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{gone}: a Gemini CLI session whose every message was rewound (3 left out" in err
    path = write(tmp_path / "chats" / "session-a.jsonl", [*lines, *as_jsonl(new_branch())[1:]])
    (tmp_path / "chats" / gone.name).write_text(gone.read_text())
    events, report = read(tmp_path / "chats")
    assert texts(events)[0] == "Cancel the first one." and HI not in texts(events)
    assert report.conversations == 1 and report.abandoned == {line(path, "u1"): 3}


def test_a_rewind_of_an_id_the_file_lacks_removes_every_message_before_it_as_the_cli_loader_does(tmp_path, capsys):
    """Gemini CLI writes $rewindTo only for a message of its history, and its loader, given an id no message has,
    drops every message before the record: the file lacks part of that history, so which of the turns before it the
    conversation kept is unknown. None is read (none invented), the ones after are, and sam-train says what it left."""
    lines = [*as_jsonl([*before_the_rewind(), *abandoned()]), {"$rewindTo": "never-written"},
             *as_jsonl(new_branch())[1:]]
    path = write(tmp_path / "session-c.jsonl", lines)
    events, report = read(path)
    assert texts(events)[0] == "Cancel the first one." and len(events) == 4
    assert report.abandoned == {line(path, "u1"): 6}
    events = list(iter_source_events(path, SourceOptions()))
    assert [e["text"] for e in events][0] == "Cancel the first one."
    assert f"{path}: 6 entries of branches the conversation left (a rewind, an edited prompt, a retried response: " \
           f"the agent keeps them in its session file) left out: {line(path, 'u1')} (and 5 more in the file)" \
           in capsys.readouterr().out


def test_a_message_written_again_after_its_rewind_is_a_turn_of_the_new_branch():
    """The loader keeps messages in a Map: one removed by a rewind and written again after it (the same id) is
    placed anew at the end, not at its old place."""
    chat = to_chat([header(), user("u1", HI), gemini("g1", "first try"), {"$rewindTo": "g1"},
                    user("u2", "Go on."), gemini("g1", "second try")])
    assert [m["content"] for m in chat.messages] == [HI, "Go on.", "second try"]
    assert chat.ignored[REWOUND] == 1


def test_a_rewind_record_of_no_message_id_is_refused_in_one_line(tmp_path, capsys):
    path = write(tmp_path / "session-d.jsonl", [*as_jsonl(before_the_rewind()), {"$rewindTo": 7}])
    assert main([str(path), str(tmp_path / "o.jsonl")]) == 1
    err = capsys.readouterr().err
    assert f"{path}:{len(as_jsonl(before_the_rewind())) + 1}: " in err and "'$rewindTo' of a number, not a message id" in err
    assert err.count("\n") == 1
    with pytest.raises(Exception, match=r"'\$rewindTo' is a number, expected the id of the message rewound to"):
        to_chat([header(), user("u1", HI), {"$rewindTo": 7}])


def test_a_live_add_of_session_lines_applies_its_rewinds_and_refuses_one_of_an_earlier_adds_message():
    """ScopedMemory.add of a session's lines reads them as the importer does: an add holding the rewind and the
    messages it removes stores none of them. An add whose rewind removes messages an earlier add stored is refused
    in one line (an add cannot take memories back, and later calls would be traced to them), storing nothing."""
    lines = [header(), *before_the_rewind(), *abandoned(), {"$rewindTo": "u2"}, *new_branch()]
    memory = ScopedMemory(HashingEncoder(16))
    memory.add(lines, user_id="ann")
    said = [r["memory"] for r in memory.get_all(user_id="ann")["results"]]
    assert "CALL cancel(reservation_id=QX7Z9A)" in said and "Show me the first one." not in said
    assert not any("get_reservation" in s for s in said)
    later = ScopedMemory(HashingEncoder(16))
    later.add([header(), *before_the_rewind(), *abandoned()], user_id="ann")
    n = len(later.get_all(user_id="ann")["results"])
    with pytest.raises(ValueError) as err:
        later.add([{"$rewindTo": "u2"}, *new_branch()], user_id="ann")
    assert str(err.value).startswith("data[0]: a Gemini CLI $rewindTo of message 'u2', which is not among this add's")
    assert "\n" not in str(err.value) and len(later.get_all(user_id="ann")["results"]) == n


def test_a_sidecar_going_on_after_a_refused_rewind_stores_nothing_of_the_new_branch(tmp_path):
    """A sidecar adds the session's next records after the refusal of its $rewindTo (a hook a line an add, its
    errors logged): the new branch's messages name no parent, so they were read after the turns the rewind removed
    (the cancel stored after 'It is an economy seat.'), as if no rewind had been written. Each later add is refused
    alike (saved and loaded between them too), the store as before the rewind, until the session is added again."""
    memory = ScopedMemory(HashingEncoder(16))
    memory.add([header(), *before_the_rewind(), *abandoned()], user_id="ann")
    stored = [r["memory"] for r in memory.get_all(user_id="ann")["results"]]
    with pytest.raises(ValueError, match=r"^data\[0\]: a Gemini CLI \$rewindTo of message 'u2'"):
        memory.add([{"$rewindTo": "u2"}], user_id="ann")
    memory = ScopedMemory.load(memory.save(tmp_path / "m"), HashingEncoder(16))
    for record in new_branch():
        with pytest.raises(ValueError) as err:
            memory.add([record], user_id="ann")
        assert str(err.value).startswith("data: an earlier add of this session's lines was refused for its $rewindTo "
                                         "of message 'u2'") and "delete_all" in str(err.value)
    assert [r["memory"] for r in memory.get_all(user_id="ann")["results"]] == stored
    memory.delete_all(user_id="ann")
    memory.add([header(), *before_the_rewind(), *abandoned(), {"$rewindTo": "u2"}, *new_branch()], user_id="ann")
    assert "CALL cancel(reservation_id=QX7Z9A)" in [r["memory"] for r in memory.get_all(user_id="ann")["results"]]
