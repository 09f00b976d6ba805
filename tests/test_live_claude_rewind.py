"""A Claude Code session's lines added as Claude Code writes them (ScopedMemory.add, a line or a few an add) across a
rewind, an edited prompt or a retried response: the file keeps the branch the conversation left, and the importer
leaves it out (tests/test_format_claude_code_branches.py). An add reads the open turn's lines alone, so a new prompt
under an earlier entry was read as the next turn after the abandoned ones: their memories stayed the task's, searched
and traced to, where the importer has none of them. An add that leaves turns an earlier add stored on such a branch
is refused in one line, storing nothing, as a Gemini CLI $rewindTo of a stored message is; every other split of the
same sessions stores the importer's memories."""

from __future__ import annotations

import pytest
from test_format_claude_code import Session, text, tool_use
from test_format_claude_code_branches import HI, before_the_rewind, parallel, rewound_then_compacted

from sam_model.data.formats import claude_code
from sam_model.memory import HashingEncoder, ScopedMemory

ANN = {"user_id": "ann", "run_id": "s1"}


def rewound() -> tuple[list[dict], int | None]:
    """Ann asked for QX7Z9A's details (a call, its result, words), then rewound to before that prompt."""
    s, point = before_the_rewind()
    s.user("Show me the first one.")
    s.respond(tool_use("t2", "get_reservation", {"reservation_id": "QX7Z9A"}))
    s.result("t2", '{"reservation_id": "QX7Z9A", "cabin": "economy"}')
    s.respond(text("It is an economy seat."))
    at = len(s.entries)
    s.user("Cancel the first one.", parent=point["uuid"])
    s.respond(tool_use("t3", "cancel", {"reservation_id": "QX7Z9A"}))
    s.result("t3", "cancelled QX7Z9A")
    s.respond(text("Cancelled."))
    return s.entries, at


def parallel_calls() -> tuple[list[dict], int | None]:
    """Parallel calls (each result under its own call's line, not the entry written last) on both sides of a rewind."""
    s = Session()
    s.user(HI)
    parallel(s, ("t1", "get_user", {"user_id": "ann_lee_123"}, "Ann Lee"),
             ("t2", "get_reservation", {"reservation_id": "QX7Z9A"}, "QX7Z9A: economy"))
    (point,) = s.respond(text("Found both."))
    s.user("Now ZZ1234.")
    parallel(s, ("t3", "get_reservation", {"reservation_id": "ZZ1234"}, "ZZ1234: basic"))
    at = len(s.entries)
    s.user("Cancel QX7Z9A.", parent=point["uuid"])
    parallel(s, ("t4", "cancel", {"reservation_id": "QX7Z9A"}, "cancelled QX7Z9A"),
             ("t5", "notify", {"user_id": "ann_lee_123"}, "sent"), ("t6", "log", {"x": "y"}, "logged"))
    return s.entries, at


def retried() -> tuple[list[dict], int | None]:
    """A response cut off by an API error and generated again under the same prompt."""
    s = Session()
    prompt = s.user("Cancel my reservation QX7Z9A.")
    s.respond(text("Cancelling ZZ1234."), tool_use("t1", "cancel", {"reservation_id": "ZZ1234"}))
    s.add("system", subtype="api_error", level="error", retryAttempt=1, maxRetries=10)
    s.responses += 1
    at = len(s.entries)
    s.respond(text("Cancelling QX7Z9A."), tool_use("t2", "cancel", {"reservation_id": "QX7Z9A"}))[0]["parentUuid"] = \
        prompt["uuid"]
    s.result("t2", "cancelled QX7Z9A")
    return s.entries, at


def compacted() -> tuple[list[dict], int | None]:
    """A rewind, then a compaction (its boundary's parent null, its logicalParentUuid the turn it continues)."""
    s, _, again = rewound_then_compacted()
    return s.entries, s.entries.index(again)


def missing_parents() -> tuple[list[dict], int | None]:
    """No branch: entries whose parent the file lacks (a resumed session, a parent never written)."""
    s = Session("s2-resumed")
    s.user(HI, parent="s1-first-m0009")
    s.respond(tool_use("t1", "get_user", {"user_id": "ann_lee_123"}))
    s.result("t1", "Ann Lee: QX7Z9A")
    s.user("Cancel it.", parent="never-written")
    s.respond(tool_use("t2", "cancel", {"reservation_id": "QX7Z9A"}))
    s.result("t2", "cancelled")
    return s.entries, None


def said(memory: ScopedMemory) -> list[str]:
    return [r["memory"] for r in memory.get_all(**ANN, limit=None)["results"]]


def added(adds: list[list[dict]]) -> tuple[ScopedMemory, str | None]:
    """A memory given ``adds`` in turn, and the refusal that stopped them (None: none), checked to store nothing."""
    memory = ScopedMemory(HashingEncoder(16))
    for lines in adds:
        before = said(memory)
        try:
            memory.add(lines, **ANN)
        except ValueError as err:
            assert said(memory) == before
            return memory, str(err)
    return memory, None


@pytest.mark.parametrize("session", [rewound, parallel_calls, retried, compacted, missing_parents])
def test_every_split_stores_the_importers_memories_or_is_refused_where_a_stored_turn_is_left(session):
    """Added in two adds at every split, and a line an add: where an earlier add stored a turn of the branch the
    session left (the split after its first entry, before the entry that rewinds), the add is refused; elsewhere the
    memories are those of the whole file in one add (the importer's reading)."""
    entries, at = session()
    gone = claude_code.abandoned(entries)
    assert bool(gone) == (at is not None)
    whole, _ = added([entries])
    for k in [*range(1, len(entries)), None]:
        memory, refused = added([[e] for e in entries] if k is None else [entries[:k], entries[k:]])
        stored_a_branch = at is not None and min(gone, default=len(entries)) < (at if k is None else k) and (
            k is None or k <= at)
        assert bool(refused) == stored_a_branch, (k, refused)
        if refused:
            assert refused.startswith(f"data[{0 if k is None else at - k}]: this Claude Code entry goes on from entry ")
            assert "on a branch the conversation left" in refused and "delete_all" in refused and "\n" not in refused
        else:
            assert said(memory) == said(whole), k


def test_the_stored_branch_is_no_longer_searched_as_the_tasks():
    """The repro: added a line at a time, the abandoned lookup's memories were kept beside the new branch's and came
    back first for a search about the seat; now the add of the rewind is refused and names the entry and the first
    stored turn it leaves, and the store holds what it held before it."""
    entries, at = rewound()
    memory, refused = added([[e] for e in entries])
    assert refused == (f"data[0]: this Claude Code entry goes on from entry {entries[3]['uuid']!r}, which an earlier add "
                       f"stored, leaving 4 later stored entries (the first a prompt {entries[4]['uuid']!r}) on a branch "
                       "the conversation left (a rewind, an edited prompt, a retried response: the importer leaves them "
                       "out): an add cannot take their memories back (later calls would be traced to them); delete the "
                       "run's memories (delete_all) and add the session's lines again from its start in one add, or "
                       "convert its session file (sam-data transcripts)")
    assert "Cancel the first one." not in said(memory) and "It is an economy seat." in said(memory)
    memory.delete_all(**ANN)  # as the refusal says: the session's lines again in one add
    memory.add(entries, **ANN)
    assert said(memory) == said(added([entries])[0]) and "It is an economy seat." not in said(memory)


def test_the_stored_links_are_saved_with_the_scope(tmp_path):
    """What tells the branch point (the stored lines' links) is saved with the scope's open turn: a memory saved
    and loaded between the adds refuses the rewind alike."""
    entries, at = rewound()
    memory = ScopedMemory(HashingEncoder(16))
    for e in entries[:at]:
        memory.add([e], **ANN)
    memory = ScopedMemory.load(memory.save(tmp_path / "m"), HashingEncoder(16))
    with pytest.raises(ValueError, match=r"^data\[0\]: this Claude Code entry goes on from entry "):
        memory.add(entries[at:], **ANN)


@pytest.mark.parametrize("session", [rewound, parallel_calls, retried, compacted])
def test_a_sidecar_going_on_after_the_refusal_stores_nothing_of_the_new_branch(session, tmp_path):
    """A sidecar adds the session's next lines after a refusal (a hook a line an add, its errors logged): their
    parent is the refused entry, which the scope never stored, and the reader took it for a link the file lacks,
    reading them as going on from the entry stored last: the new branch's calls were stored after the abandoned
    turns, the rewound prompt lost. Each of them is refused alike (saved and loaded between them too), the store
    holds the lines before the rewind as they were, and the refusal's remedy gives the importer's memories."""
    entries, at = session()
    memory, refused = ScopedMemory(HashingEncoder(16)), []
    for n, e in enumerate(entries):
        if n == at + 1:
            memory = ScopedMemory.load(memory.save(tmp_path / "m"), HashingEncoder(16))
        before = said(memory)
        try:
            memory.add([e], **ANN)
        except ValueError as err:
            assert said(memory) == before and "\n" not in str(err) and "delete_all" in str(err)
            refused.append(n)
    assert refused == [n for n in range(at, len(entries)) if claude_code.placed(entries[n])]
    assert said(memory) == said(added([[e] for e in entries[:at]])[0])
    memory.delete_all(**ANN)
    memory.add(entries, **ANN)
    assert said(memory) == said(added([entries])[0])


def test_parallel_calls_results_added_a_line_at_a_time_read_no_whole_session_for_a_branch(monkeypatch):
    """Each result of parallel calls goes on from its own call's line, not the entry written last, so at each such
    line the add ran claude_code.abandoned twice over the links of the whole session: a line-by-line session of
    parallel calls was quadratic (1,601 lines of three calls a turn: 2-3 s of CPU before the links, 7-9 s with
    them). Results under the lines of the response stored last leave no stored turn and are told so from the lines
    after their call; a rewind beside them is still refused (the parallel_calls session above)."""
    s = Session()
    s.user(HI)
    for t in range(4):
        parallel(s, (f"a{t}", "get", {"x": t}, "A"), (f"b{t}", "get", {"y": t}, "B"), (f"c{t}", "get", {"z": t}, "C"))
        s.respond(text(f"Done {t}."))
        s.user(f"Next {t}.")
    read = claude_code.abandoned
    on_links = []
    monkeypatch.setattr(claude_code, "abandoned", lambda entries: on_links.append(len(entries)) or read(entries)
                        if any("said" in (e.get("message") or {}) for e in entries) else read(entries))
    memory, refused = added([[e] for e in s.entries])
    assert refused is None and on_links == []
    assert said(memory) == said(added([s.entries])[0])


def test_a_compactions_replay_of_stored_turns_is_not_stored_again():
    """A compaction can write copies of earlier entries (same time, parent and message, new uuids) after the rest;
    the importer reads each once (tests/test_format_claude_code_branches.py), but an add reads the open turn's lines
    alone, so copies of lines an earlier add closed were stored again (a line an add: 13 memories for the file's
    10). Told on the stored lines' links, they are not; every split in two adds stores the file's memories too."""
    s, _ = before_the_rewind()
    s.user("Cancel QX7Z9A.")
    s.respond(tool_use("t2", "cancel", {"reservation_id": "QX7Z9A"}))
    s.result("t2", "cancelled QX7Z9A")
    entries = [*s.entries, *({**e, "uuid": f"copy-{n}"} for n, e in enumerate(s.entries[:3]))]
    whole = said(added([entries])[0])
    assert len(whole) == len(set(whole)) == 7
    for adds in [[[e] for e in entries], *([entries[:k], entries[k:]] for k in range(1, len(entries)))]:
        memory, refused = added(adds)
        assert refused is None and said(memory) == whole, [len(a) for a in adds]
