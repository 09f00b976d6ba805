"""Review of the open turn (sam_model.memory.live) that ScopedMemory keeps for an agent's session added line by
line: an add refused or failing midway leaves the memories and the open turn as they were; threads, scopes and the
write-ahead log never mix or lose an open turn."""

from __future__ import annotations

import pytest
from test_format_gemini_cli import as_jsonl, to_gemini_cli
from test_live_adds import SESSIONS, conversation, fed, rich, stored

from sam_model.memory import HashingEncoder, ScopedMemory

LIVE = ["claude-code interleaved", "gemini-cli", "codex 0.46 parallel calls", "codex exec"]


def failing(memory: ScopedMemory, monkeypatch, add) -> bool:
    """``add`` run while the store's encoder raises: whether it failed (an add that encodes nothing is stored), and
    then the memory is as it was."""
    def boom(*a, **k):
        raise RuntimeError("the encoder failed")

    before = (stored(memory), dict(memory._open), conversation(memory) if memory._trackers else None)
    with monkeypatch.context() as m:
        m.setattr(memory.store.encoder, "encode_memories", boom)
        try:
            add()
        except RuntimeError as err:
            assert str(err) == "the encoder failed"
        else:
            return False
    assert (stored(memory), dict(memory._open), conversation(memory) if memory._trackers else None) == before
    return True


@pytest.mark.parametrize("session", LIVE)
def test_an_add_whose_encoder_fails_keeps_the_open_turn(monkeypatch, session):
    """Found by review: the add took the scope's open turn before storing, so an add that failed (the encoder, the
    store) lost it: the same line sent again read without it stored other memories than the file's (a Claude Code
    response's block as a turn of its own), and codex exec's next event was refused for continuing no open run."""
    _, lines = SESSIONS[session]()
    whole = fed(lines, [lines])
    memory = ScopedMemory(HashingEncoder(16))
    failed = 0
    for x in lines:
        if failing(memory, monkeypatch, lambda x=x: memory.add([x], user_id="me", run_id="s")):
            failed += 1
            memory.add([x], user_id="me", run_id="s")
    assert failed >= 3
    assert stored(memory) == stored(whole)
    assert conversation(memory) == conversation(whole)


def test_an_event_add_that_fails_keeps_the_open_turn(monkeypatch):
    """An add of events closes the open turn once they are stored; one that failed stored nothing and closes
    nothing (it took the open turn before the store refused)."""
    _, lines = SESSIONS["claude-code interleaved"]()
    memory = fed(lines, [lines[:3]])
    assert memory._open
    assert failing(memory, monkeypatch, lambda: memory.add([{"kind": "note", "text": "a fact"}], user_id="me",
                                                           run_id="s"))


def test_a_refused_gemini_line_keeps_the_open_turn():
    """A batch refused for a Gemini CLI message written again after a later one (one line naming it) took the open
    turn with it: the next message's rewrites were then stored again."""
    lines = as_jsonl(to_gemini_cli(rich()))
    whole = fed(lines, [lines])
    memory = ScopedMemory(HashingEncoder(16))
    first = next(x for x in lines if x.get("type") == "gemini" and x.get("toolCalls"))
    refused = 0
    for x in lines:
        if memory._open and first["id"] in memory._open["me//s"].facts.get("ids", ()):  # its turn closed
            before = dict(memory._open)
            with pytest.raises(ValueError, match=r"^data\[0\]: Gemini CLI message .* written again after a later"):
                memory.add([first], user_id="me", run_id="s")
            assert memory._open == before
            refused += 1
        memory.add([x], user_id="me", run_id="s")
    assert refused >= 2
    assert stored(memory) == stored(whole)


@pytest.mark.parametrize("session", ["claude-code interleaved", "gemini-cli"])
def test_an_update_of_a_memory_before_the_open_turn_keeps_its_lines_read_as_the_file(session):
    """Found by review: an update of any memory of the scope dropped its open turn, the session's facts with it,
    though the memory was turns before it: the open message's next lines were read alone (a Gemini CLI message's
    rewrite stored its calls twice, its user record alone was refused as 'message without role'). An update of a
    memory before the open turn (and before the event its calls revise) now leaves it."""
    _, lines = SESSIONS[session]()
    whole = stored(fed(lines, [lines]))
    tried = 0
    for k in range(1, len(lines)):
        memory = fed(lines, [[x] for x in lines[:k]])
        turn = memory._open.get("me//s")
        first = min(memory.get_all(user_id="me", run_id="s", limit=None)["results"], key=lambda r: r["step"],
                    default=None)
        if turn is None or first is None or first["step"] >= turn.start - 1:
            continue
        tried += 1
        memory.update(first["id"], "edited words", user_id="me", run_id="s")
        for x in lines[k:]:
            memory.add([x], user_id="me", run_id="s")
        assert stored(memory) == [(s, kind, "edited words" if s == first["step"] else t) for s, kind, t in whole], k
    assert tried >= 2


def test_a_delete_in_the_open_turn_keeps_the_sessions_facts():
    """A delete of a memory of the open Gemini CLI message closes its turn (its lines would be read again over the
    deleted memory): the message written again is then refused in one line, not stored again beside its memories,
    and the next message's user record alone is read as Gemini CLI's (it was refused as a message without role)."""
    lines = as_jsonl(to_gemini_cli(rich()))
    memory = ScopedMemory(HashingEncoder(16))
    calls = [i for i, x in enumerate(lines) if x.get("type") == "gemini" and x.get("toolCalls")]
    for x in lines[:calls[0] + 1]:
        memory.add([x], user_id="me", run_id="s")
    got = memory.get_all(user_id="me", run_id="s", limit=None)["results"]
    memory.delete(max(got, key=lambda r: r["step"])["id"], user_id="me", run_id="s")
    n = len(memory.get_all(user_id="me", run_id="s", limit=None)["results"])
    again = next(x for x in lines[calls[0] + 1:] if x.get("id") == lines[calls[0]]["id"])
    with pytest.raises(ValueError, match=r"^data\[0\]: Gemini CLI message 'm2' written again after a later message, "
                                         r"an update or a delete closed its turn"):
        memory.add([again], user_id="me", run_id="s")
    assert len(memory.get_all(user_id="me", run_id="s", limit=None)["results"]) == n
    record = next(x for x in lines[calls[0] + 1:] if x.get("type") == "user" or "$set" in x)
    memory.add([record], user_id="me", run_id="s")


@pytest.mark.parametrize("session", ["claude-code interleaved", "gemini-cli", "codex exec"])
def test_a_tenant_killed_mid_turn_replays_its_log_to_the_same_open_turn(tmp_path, session):
    """A served tenant logs each add (its UPDATEs of the open turn's memories are made again by replaying it, with
    their logged vectors), checkpoints mid-turn, and is killed (no checkpoint at shutdown): the restart replays the
    log after the checkpoint to the memories, conversation and open turn it had, and goes on as if never stopped."""
    from sam_model.serve.tenants import Tenant

    _, lines = SESSIONS[session]()
    whole = fed(lines, [lines])

    def start() -> Tenant:
        return Tenant("acme", tmp_path / "t", lambda: ScopedMemory(HashingEncoder(16)),
                      lambda f: ScopedMemory.load(f, HashingEncoder(16)), checkpoint_every=10**6, fsync=False)

    tenant, half = start(), len(lines) // 2
    for i, x in enumerate(lines[:-2]):
        tenant.write("add", {"data": [x], "user_id": "me", "run_id": "s"})
        if i == half:
            tenant.checkpoint()
    seen = (stored(tenant.memory), conversation(tenant.memory), tenant.memory._open["me//s"].state_dict())
    tenant.release()  # a kill: the log holds the writes since the checkpoint
    tenant = start()
    assert (stored(tenant.memory), conversation(tenant.memory), tenant.memory._open["me//s"].state_dict()) == seen
    for x in lines[-2:]:
        tenant.write("add", {"data": [x], "user_id": "me", "run_id": "s"})
    assert stored(tenant.memory) == stored(whole) and conversation(tenant.memory) == conversation(whole)
    tenant.release()


def test_threads_adding_scopes_lines_while_others_search_and_save_never_mix_open_turns(tmp_path):
    """Four sessions, each a scope of its own (two the same user's, other runs), added a line an add by threads of
    their own while two threads search by call and save: each scope ends with the memories and conversation of its
    file, and every save loads back."""
    import threading

    names = ["claude-code interleaved", "gemini-cli", "codex 0.46 parallel calls", "codex exec"]
    sessions = {n: SESSIONS[n]()[1] for n in names}
    scopes = {n: {"user_id": "me" if i < 2 else f"u{i}", "run_id": f"r{i}"} for i, n in enumerate(names)}
    memory, done, errors = ScopedMemory(HashingEncoder(16)), threading.Event(), []

    def adder(n: str) -> None:
        for x in sessions[n]:
            memory.add([x], **scopes[n])

    def other(i: int) -> None:
        while not done.is_set():
            for sc in scopes.values():
                memory.search("", call={"name": "refund", "arguments": {"reservation_id": "ZZ1234"}}, **sc)
            if i:
                ScopedMemory.load(memory.save(tmp_path / "m"), HashingEncoder(16))

    def run(fn, *a) -> None:
        try:
            fn(*a)
        except BaseException as err:  # noqa: BLE001 - reported by the test
            errors.append(err)

    others = [threading.Thread(target=run, args=(other, i)) for i in range(2)]
    adders = [threading.Thread(target=run, args=(adder, n)) for n in names]
    for t in others + adders:
        t.start()
    for t in adders:
        t.join()
    done.set()
    for t in others:
        t.join()
    assert errors == []
    for n in names:
        alone = ScopedMemory(HashingEncoder(16))
        for x in sessions[n]:
            alone.add([x], **scopes[n])
        got, want = ([(r["step"], r["memory"]) for r in m.get_all(**scopes[n], limit=None)["results"]]
                     for m in (memory, alone))
        assert sorted(got) == sorted(want)
        ep = ScopedMemory.episode_of(**scopes[n])
        assert memory._trackers[ep].events == alone._trackers[ep].events
