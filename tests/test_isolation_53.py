"""Stop 53's adversarial review of memory isolation: one scope (tenant, user, agent, run) never sees, changes, deletes
or is influenced by another's memories, on any entry point. Each test is one attempt; all but two held when
written: a backup restored into another tenant's folder and another tenant's log copied into it were bugs, fixed
with them (test_a_checkpoint_restored_into_another_tenants_folder_is_refused and
test_another_tenants_log_copied_into_a_tenants_folder_is_refused fail before).

Attempts: scope names with separators ('/', '#'), unicode look-alikes and empty or missing scopes; a run id equal to
another user's id; filters that try to widen; another scope's memory ids on get, update, delete and history (after
a delete too); search by ``call``, live_state and query_input against another scope's conversation; concurrent
adds of two scopes; another scope's memories changing a search's scores; the same over sam-serve's HTTP routes and
MCP tools; a kill between the write-ahead log and the store; a checkpoint restored, or a log copied, into another
tenant's folder; the LangChain retriever and vector store bound to a scope; Qdrant's and FAISS's scope filters."""

from __future__ import annotations

import json
import shutil
import threading
from urllib.parse import quote

import pytest

from sam_model.memory import HashingEncoder, ScopedMemory
from sam_model.storeconfig import StoreConfig

CARD = "4111111111111111"
PAID = [{"role": "user", "content": "pay for the Lisbon hotel please"},
        {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": {
            "name": "find_booking", "arguments": json.dumps({"city": "Lisbon"})}}]},
        {"role": "tool", "tool_call_id": "c1", "content": json.dumps({"booking": "BK-77Q", "card": CARD})},
        {"role": "assistant", "content": "I found your booking. Shall I pay it with the card on file?"},
        {"role": "user", "content": "yes please"}]
STORED = 5  # the memories PAID makes: the user's two turns, the call, its result, the reply
PAY = {"name": "pay", "arguments": {"booking": "BK-77Q", "card": CARD}}


def memory(**kw) -> ScopedMemory:
    return ScopedMemory(HashingEncoder(64), StoreConfig(**kw), k=20)


def texts(found: dict) -> set:
    return {r["memory"] for r in found["results"]}


# ---- ScopedMemory ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("scope", [{"user_id": "mia/bot"}, {"agent_id": "/bot"}, {"run_id": "mia//trip"},
                                   {"user_id": ""}, {"user_id": 7}])
def test_a_scope_with_a_separator_or_empty_is_refused_on_every_entry_point(scope):
    m = memory()
    m.add(PAID, user_id="mia", agent_id="bot")
    mid = m.get_all(user_id="mia")["results"][0]["id"]
    for call in (lambda: m.add("x", **scope), lambda: m.search("x", **scope), lambda: m.get_all(**scope),
                 lambda: m.delete_all(**scope), lambda: m.get(mid, **scope), lambda: m.history(mid, **scope),
                 lambda: m.delete(mid, **scope), lambda: m.update(mid, "x", **scope),
                 lambda: m.live_state(**scope), lambda: m.live_state(**scope, call=PAY),
                 lambda: m.search("", call=PAY, **scope), lambda: m.query_input("x", **scope),
                 lambda: m.search("x", filters=scope)):
        with pytest.raises(ValueError, match="must be a non-empty string without '/'"):
            call()
    assert len(m.get_all(user_id="mia")["results"]) == STORED  # nothing deleted or changed


def test_missing_scopes_are_refused_never_widened_and_read_no_conversation():
    m = memory()
    m.add(PAID, user_id="mia")
    for call in (lambda: m.search("pay"), lambda: m.get_all(), lambda: m.delete_all(), lambda: m.add("x"),
                 lambda: m.search("", call=PAY), lambda: m.search("pay", filters={"user_id": None}),
                 lambda: m.search("pay", filters={"user_id": "*"}), lambda: m.get_all(filters={"OR": [{"x": 1}]})):
        with pytest.raises(ValueError):
            call()
    # live_state with no scope reads the empty conversation, not any user's
    assert m.live_state(call=PAY).constraints == {} and m.live_state().phase == ""
    with pytest.raises(TypeError, match="all_scopes must be true or false"):
        m.search("pay", all_scopes="false")


@pytest.mark.parametrize("other", ["m\u0131a", "Mia", "mia ", "mia\u2215bot", "mia#0", "mia%2Fbot"])
def test_look_alike_names_are_other_scopes(other):
    """Unicode look-alikes (a dotless i, a division slash), case, a trailing space, '#' (the ids' separator) and a
    URL-encoded slash name other users: nothing of mia's reaches them. (A zero-width space, an NFD form or fullwidth
    letters, which NFKC changes, are refused: tests/test_scope_lookalikes.py, tests/test_scope_confusables.py.)"""
    m = memory()
    m.add(PAID, user_id="mia", agent_id="bot")
    mine = m.add("mia's passport number is P1234567", user_id="mia")["results"][0]["id"]
    m.add("their own note", user_id=other)
    assert texts(m.search("passport number Lisbon hotel", user_id=other)) == {"their own note"}
    assert texts(m.get_all(user_id=other)) == {"their own note"}
    assert m.get(mine, user_id=other) is None and m.history(mine, user_id=other) == []
    with pytest.raises(KeyError):
        m.delete(mine, user_id=other)
    state = m.search("", call=PAY, user_id=other)["state"]
    assert state["constraints"] == {} and state["uncertainty_flags"] == [] and state["subgoal_stack"] == []
    m.delete(mine, user_id="mia")
    assert m.history(mine, user_id=other) == [] and m.history(mine, user_id="mia")
    assert m.delete_all(user_id=other)["message"] == "1 memories deleted"
    assert len(m.get_all(user_id="mia")["results"]) == STORED


def test_a_run_id_equal_to_another_users_id_reaches_nothing_of_that_user():
    m = memory()
    m.add(PAID, user_id="mia")
    secret = m.add("mia's PIN is 4242", user_id="mia")["results"][0]["id"]
    m.add("the run's own words", run_id="mia")
    m.add("the agent's own words", agent_id="mia")
    for scope in ({"run_id": "mia"}, {"agent_id": "mia"}):
        assert "mia's PIN is 4242" not in texts(m.search("PIN", **scope))
        assert m.get(secret, **scope) is None and m.history(secret, **scope) == []
        assert m.search("", call=PAY, **scope)["state"]["constraints"] == {}
    m.delete(secret)
    assert m.history(secret, run_id="mia") == [] and m.history(secret, agent_id="mia") == []
    assert m.delete_all(run_id="mia")["message"] == "1 memories deleted"
    assert "mia's PIN is 4242" not in json.dumps(m.history(secret, user_id="nobody"))
    assert len(m.get_all(user_id="mia")["results"]) == STORED and m.get_all(agent_id="mia")["results"]


@pytest.mark.parametrize("filters", [
    {"user_id": {"in": ["mia", "eve"]}}, {"OR": [{"user_id": "mia"}, {"user_id": "eve"}]},
    {"user_id": {"ne": "nobody"}}, {"NOT": [{"user_id": "eve"}]}, {"AND": [{"run_id": {"nin": ["x"]}}]},
    {"kind": {"in": ["user", "result", "action"]}}])
def test_filters_that_try_to_widen_stay_inside_the_scope(filters):
    m = memory()
    m.add(PAID, user_id="mia")
    m.add("eve's own note about Lisbon hotels", user_id="eve")
    for call in ({}, {"call": PAY}):
        found = m.search("Lisbon hotel pay" if not call else "", user_id="eve", filters=filters, **call)
        assert texts(found) <= {"eve's own note about Lisbon hotels"}, filters
    assert texts(m.get_all(user_id="eve", filters=filters)) <= {"eve's own note about Lisbon hotels"}
    with pytest.raises(ValueError, match="user_id is 'eve' but filters.user_id is 'mia'"):
        m.search("x", user_id="eve", filters={"user_id": "mia"})


def test_another_scopes_conversation_never_feeds_a_search_by_call():
    """mia's tool result says the booking and the card; eve's (and mia's agent-only and run scopes') search by the
    same call is ranked by a state that traces nothing to mia's words: its own empty conversation's."""
    m = memory()
    m.add(PAID, user_id="mia", agent_id="bot")
    mias = m.search("", call=PAY, user_id="mia", agent_id="bot")["state"]
    assert {"booking", "card"} <= set(mias["uncertainty_flags"])
    for scope in ({"user_id": "eve"}, {"user_id": "eve", "agent_id": "bot"}, {"agent_id": "bot"},
                  {"user_id": "mia"}, {"user_id": "mia", "agent_id": "bot", "run_id": "r"}):
        state = m.search("", call=PAY, **scope)["state"]
        assert state == {"phase": "pay", "subgoal_stack": [], "constraints": {}, "uncertainty_flags": [],
                         "last_action_result": "none"}, scope
        assert m.live_state(**scope, call=PAY).to_json() == state
        kind, inputs = m.query_input("", **scope, call=PAY)
        assert inputs["observation"] == "" and inputs["state"].to_json() == state


def test_a_tool_result_naming_another_scopes_call_id_is_not_that_call():
    """eve answers mia's call id 'c1': her conversation does not know that call (its tool's name, its arguments)."""
    m = memory()
    m.add(PAID, user_id="mia")
    m.add([{"role": "tool", "tool_call_id": "c1", "content": "error: no such booking"}], user_id="eve")
    state = m.live_state(user_id="eve")
    assert state.last_action_result.startswith("tool: error") and state.subgoal_stack == ()
    assert m.live_state(user_id="mia").last_action_result.startswith("find_booking: ok")


def test_events_claiming_another_scopes_episode_and_steps_are_written_to_their_own():
    from sam_model.data.schema import Event, State

    m = memory()
    m.add(PAID, user_id="mia")
    mias = {r["id"]: r["memory"] for r in m.get_all(user_id="mia")["results"]}
    out = m.add([{"kind": "user", "text": "eve posing as mia", "episode_id": "mia", "step": 0},
                 Event("mia", 1, "user", "eve again", State(phase="pay"))], user_id="eve")["results"]
    assert [r["id"] for r in out] == ["eve#0", "eve#1"]
    assert {r["id"]: r["memory"] for r in m.get_all(user_id="mia")["results"]} == mias
    assert m.search("", call=PAY, user_id="eve")["state"]["constraints"] == {}


def test_concurrent_adds_of_two_scopes_keep_two_conversations():
    m = memory()
    barrier = threading.Barrier(2)

    def talk(user: str) -> None:
        barrier.wait()
        for i in range(30):
            m.add([{"role": "user", "content": f"{user} says thing {i}"},
                   {"role": "assistant", "tool_calls": [{"id": f"{user}{i}", "type": "function", "function": {
                       "name": "note", "arguments": json.dumps({"who": user, "n": i})}}]}], user_id=user)

    threads = [threading.Thread(target=talk, args=(u,)) for u in ("mia", "eve")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for user, other in (("mia", "eve"), ("eve", "mia")):
        events = m._trackers[user].events
        assert len(events) == 60 and not any(other in e["text"] for e in events)
        assert not any(other in r["memory"] for r in m.get_all(user_id=user, limit=None)["results"])
        assert m.live_state(user_id=user).constraints["who"] == user


def ranked(found: dict) -> list:
    return [(r["id"], r["memory"], round(r["score"], 9)) for r in found["results"]]


@pytest.mark.parametrize("config", [{}, {"slot_match": 0.5, "lexical": 0.3, "chunking": {"size": 40, "overlap": 10}}],
                         ids=["plain", "reranked-chunked"])
def test_another_scopes_memories_change_no_score_of_a_search(config):
    """eve writing the very words mia searches for (and a conversation that traces them) changes neither the
    memories nor the scores of mia's search, by text, by state or by call. (Which of mia's memories of exactly equal
    scores comes first does change: ties are broken by the store's write sequence, which other scopes' writes
    advance; reported, not changed here: the tie order is the evaluation's too.)"""
    def mias(m: ScopedMemory) -> list:
        out = []
        for kw in ({"query": "Lisbon hotel card"}, {"query": "card", "state": "live"}, {"query": "", "call": PAY}):
            found = ranked(m.search(**kw, user_id="mia"))
            out.append(([score for _, _, score in found], sorted(found)))
        return out

    alone, crowded = memory(**config), memory(**config)
    for m in (alone, crowded):
        m.add(PAID, user_id="mia")
    crowded.add(PAID + [{"role": "user", "content": "Lisbon hotel card BK-77Q " + CARD}], user_id="eve")
    crowded.add(PAID, run_id="mia")
    crowded.add(PAID, user_id="mia", agent_id="bot")  # mia's own bot: hers, found by a search of user mia
    alone.add(PAID, user_id="mia", agent_id="bot")
    assert mias(alone) == mias(crowded)


def test_ids_of_another_scopes_memories_change_nothing():
    m = memory()
    m.add(PAID, user_id="mia")
    ids = [r["id"] for r in m.get_all(user_id="mia")["results"]]
    for i in ids:
        with pytest.raises(KeyError):
            m.update(i, "overwritten by eve", user_id="eve")
        with pytest.raises(KeyError):
            m.delete(i, user_id="eve")
        assert m.get(i, user_id="eve") is None and m.history(i, user_id="eve") == []
    assert [r["id"] for r in m.get_all(user_id="mia")["results"]] == ids
    assert not any("overwritten" in json.dumps(m.history(i)) for i in ids)
    assert {"booking", "card"} <= set(m.search("", call=PAY, user_id="mia")["state"]["uncertainty_flags"])


def test_delete_all_of_one_scope_leaves_the_others_conversation_and_memories():
    m = memory()
    for scope in ({"user_id": "mia"}, {"user_id": "eve"}, {"agent_id": "mia"}):
        m.add(PAID, **scope)
    before = {json.dumps(s): m.search("", call=PAY, **s)["state"] for s in ({"user_id": "eve"}, {"agent_id": "mia"})}
    m.delete_all(user_id="mia")
    assert m.get_all(user_id="mia")["results"] == []
    assert m.search("", call=PAY, user_id="mia")["state"]["constraints"] == {}  # forgotten with its memories
    for s, state in before.items():
        assert m.search("", call=PAY, **json.loads(s))["state"] == state
        assert len(m.get_all(**json.loads(s))["results"]) == STORED


def test_a_saved_and_loaded_memory_keeps_every_scope_apart(tmp_path):
    m = memory()
    m.add(PAID, user_id="mia")
    m.add("eve's note", user_id="eve")
    gone = m.add("mia's deleted words", user_id="mia")["results"][0]["id"]
    m.delete(gone)
    back = ScopedMemory.load(m.save(tmp_path / "m"), HashingEncoder(64))
    assert texts(back.get_all(user_id="eve")) == {"eve's note"}
    assert back.history(gone, user_id="eve") == [] and back.history(gone, user_id="mia")
    assert back.search("", call=PAY, user_id="eve")["state"]["constraints"] == {}
    assert back.search("", call=PAY, user_id="mia")["state"] == m.search("", call=PAY, user_id="mia")["state"]


# ---- the FAISS and Qdrant scope filters --------------------------------------------------------------------------

@pytest.mark.parametrize("index", [{"kind": "flat"}, {"kind": "hnsw"}, {"kind": "qdrant"}])
@pytest.mark.filterwarnings("ignore:Payload indexes have no effect in the local Qdrant")
def test_an_engines_scope_filter_tells_fields_apart_and_passes_no_other_scope(index):
    if index["kind"] == "qdrant":
        pytest.importorskip("qdrant_client", reason="the [serve] extra is not installed")
    m = memory(index=index)
    for scope in ({"user_id": "mia"}, {"run_id": "mia"}, {"agent_id": "mia"}, {"user_id": "mia", "agent_id": "x"},
                  {"user_id": "eve"}):
        for i in range(8):
            m.add(f"note {i} of {json.dumps(scope, sort_keys=True)}", **scope)
    for scope, n in (({"user_id": "mia"}, 16), ({"run_id": "mia"}, 8), ({"agent_id": "mia"}, 8),
                     ({"agent_id": "x"}, 8), ({"user_id": "eve"}, 8), ({"user_id": "mia", "agent_id": "x"}, 8)):
        found = m.search("note of", **scope, limit=40)["results"]
        assert len(found) == n, scope
        assert all(all(r[k] == v for k, v in scope.items()) for r in found), scope


# ---- sam-serve: HTTP, MCP, the log, the checkpoint ---------------------------------------------------------------

fastapi = pytest.importorskip("fastapi", reason="the [serve] extra is not installed (pip install -e '.[serve]')")


def tenants_in(folder, **kw):
    from serving import keys_file

    from sam_model.serve.tenants import Tenants, read_keys

    return Tenants(read_keys(keys_file(folder)), folder / "data", HashingEncoder(64), StoreConfig(), **kw)


def test_every_http_route_keeps_users_and_tenants_apart(tmp_path):
    from fastapi.testclient import TestClient
    from serving import KEYS

    from sam_model.serve.batching import BatchedSearch
    from sam_model.serve.http import create_app

    tenants = tenants_in(tmp_path)
    http = TestClient(create_app(tenants, BatchedSearch(window=0.0)))
    a, g = {"X-API-Key": KEYS["acme"]}, {"X-API-Key": KEYS["globex"]}
    assert http.post("/v1/memories", headers=a, json={"messages": PAID, "user_id": "mia"}).status_code == 200
    ids = [r["id"] for r in http.get("/v1/memories", headers=a, params={"user_id": "mia"}).json()["results"]]
    assert len(ids) == STORED
    http.post("/v1/memories", headers=a, json={"messages": "eve's note", "user_id": "eve"})
    flags = http.post("/v1/memories/search", headers=a, json={"query": "", "call": PAY, "user_id": "mia"}).json()
    assert {"booking", "card"} <= set(flags["state"]["uncertainty_flags"])
    for headers, scope in ((a, {"user_id": "eve"}), (a, {"run_id": "mia"}), (g, {"user_id": "mia"})):
        found = http.post("/v1/memories/search", headers=headers, json={"query": "", "call": PAY, **scope}).json()
        assert found["state"]["constraints"] == {} and not any(r["user_id"] == "mia" for r in found["results"])
        widened = http.post("/v1/memories/search", headers=headers, json={
            "query": "Lisbon card", **scope, "filters": {"OR": [{"user_id": "mia"}, {"user_id": {"ne": "x"}}]}})
        assert not any(r["user_id"] == "mia" for r in widened.json()["results"])
        for i in ids:
            path = "/v1/memories/" + quote(i, safe="")
            assert http.get(path, headers=headers, params=scope).status_code == 404
            assert http.put(path, headers=headers, params=scope, json={"data": "x"}).status_code == 404
            assert http.delete(path, headers=headers, params=scope).status_code == 404
            assert http.get("/v1/history/" + quote(i, safe=""), headers=headers, params=scope).json() == []
        assert not any(r["user_id"] == "mia" for r in http.get("/v1/memories", headers=headers, params=scope).json()[
            "results"])
    for bad in ({"user_id": "mia/x"}, {"user_id": ""}, {"agent_id": "/mia"}):
        assert http.post("/v1/memories/search", headers=a, json={"query": "", "call": PAY, **bad}).status_code == 422
        assert http.get("/v1/memories", headers=a, params=bad).status_code == 422
    assert http.delete("/v1/memories", headers=g, params={"user_id": "mia"}).json()["message"] == "0 memories deleted"
    assert http.post("/v1/memories/search", headers=a, json={"query": "x", "call": PAY}).status_code == 422
    assert [r["id"] for r in http.get("/v1/memories", headers=a, params={"user_id": "mia"}).json()["results"]] == ids
    tenants.close()


def test_mcp_tools_keep_users_and_tenants_apart(tmp_path):
    pytest.importorskip("mcp", reason="the [serve] extra is not installed")
    from test_mcp_remember import mcp_calls

    tenants = tenants_in(tmp_path)
    mine = {"user_id": "mia", "run_id": "trip"}
    added, = mcp_calls(tenants, "acme", ("remember", {"messages": PAID, **mine}))
    ids = [r["id"] for r in json.loads(added.content[0].text)["results"]]
    calls = [("recall", {"query": "", "call": PAY, **scope}) for scope in (
        {"user_id": "eve", "run_id": "trip"}, {"run_id": "trip"}, {"user_id": "mia"}, mine)]
    calls += [("forget", {"memory_id": ids[0], "user_id": "eve"}), ("forget", {"memory_id": ids[0], "run_id": "x"})]
    *others, own, forget_eve, forget_x = mcp_calls(tenants, "acme", *calls)
    for r in others:
        state = json.loads(r.content[0].text)["state"]
        assert state["constraints"] == {} and state["uncertainty_flags"] == []
    assert {"booking", "card"} <= set(json.loads(own.content[0].text)["state"]["uncertainty_flags"])
    assert forget_eve.is_error and forget_x.is_error
    theirs, = mcp_calls(tenants, "globex", ("recall", {"query": "Lisbon card", "call": PAY, **mine}))
    assert json.loads(theirs.content[0].text) == {"results": [], "state": {
        "phase": "pay", "subgoal_stack": [], "constraints": {}, "uncertainty_flags": [], "last_action_result": "none"}}
    assert len(tenants.tenants["acme"].memory.get_all(**mine)["results"]) == STORED
    tenants.close()


def test_a_write_logged_before_a_kill_replays_into_its_own_scope_only(tmp_path):
    """A kill between the log and the store (the record on disk, the memory not yet written): the replay writes
    it into its own scope's conversation, and eve's search, state and memories are as they were."""
    tenants = tenants_in(tmp_path)
    acme = tenants.tenants["acme"]
    acme.write("add", {"data": "eve's note", "user_id": "eve"})
    eve = acme.memory.search("", call=PAY, user_id="eve")
    acme.wal.append("add", {"data": PAID, "user_id": "mia", "agent_id": None, "run_id": None, "metadata": None})
    for t in tenants.tenants.values():
        t.release()  # what a kill leaves: no checkpoint, the last record never applied
    again = tenants_in(tmp_path).tenants["acme"].memory
    assert len(again.get_all(user_id="mia")["results"]) == STORED
    assert texts(again.get_all(user_id="eve")) == {"eve's note"}
    now = again.search("", call=PAY, user_id="eve")  # (created_at: the replay's time)
    assert now["state"] == eve["state"] and ranked(now) == ranked(eve)
    assert {"booking", "card"} <= set(again.search("", call=PAY, user_id="mia")["state"]["uncertainty_flags"])


def test_a_checkpoint_restored_into_another_tenants_folder_is_refused(tmp_path):
    """Found by this review: a checkpoint did not say whose it was, so acme's backup restored into globex's folder
    (the start's own advice on a damaged checkpoint: 'restore the checkpoint folder from a backup') was served to
    globex's key, acme's users' memories and all; on a Qdrant server globex also attached to acme's collection, its
    load deleted acme's points written since the backup, and its adds overwrote acme's points of the same ids. A
    checkpoint now names its tenant, and another tenant's is refused in one line before anything is loaded."""
    from sam_model.io import SAMFileError

    tenants = tenants_in(tmp_path)
    tenants.tenants["acme"].write("add", {"data": "acme's vault code is 1234", "user_id": "mia"})
    tenants.close()
    data = tmp_path / "data"
    shutil.rmtree(data / "globex" / "checkpoint")
    shutil.copytree(data / "acme" / "checkpoint", data / "globex" / "checkpoint")
    with pytest.raises(SAMFileError, match=r"globex.checkpoint.seq\.json: this checkpoint is tenant 'acme''s, not "
                                           r"'globex''s .*nothing was loaded"):
        tenants_in(tmp_path)
    seq = data / "globex" / "checkpoint" / "seq.json"
    assert json.loads(seq.read_text())["tenant"] == "acme"
    seq.write_text(json.dumps({"seq": 1, "tenant": "globex"}))  # globex is acme renamed: the operator says so
    again = tenants_in(tmp_path)
    assert texts(again.tenants["globex"].memory.get_all(user_id="mia")) == {"acme's vault code is 1234"}
    again.close()
    seq.write_text(json.dumps({"seq": 1}))  # a checkpoint written before checkpoints named their tenant: loaded
    tenants_in(tmp_path).close()
    assert json.loads(seq.read_text())["tenant"] == "globex"  # and named at the next checkpoint
    seq.write_text(json.dumps({"seq": 1, "tenant": 5}))
    with pytest.raises(SAMFileError, match="field 'tenant' must be the name of the tenant"):
        tenants_in(tmp_path)



def test_another_tenants_log_copied_into_a_tenants_folder_is_refused(tmp_path):
    """Found by this review: the write-ahead log named no tenant, so acme's wal.log copied alone into globex's folder
    (the checkpoint's check passes: it is globex's own) was replayed into globex's memory, acme's users' words
    served to globex's key. Every record now names its tenant, and another tenant's log is refused in one line
    before anything is replayed (and before the file is changed: its torn last line stays)."""
    from sam_model.io import SAMFileError

    tenants = tenants_in(tmp_path)
    acme = tenants.tenants["acme"]
    acme.write("add", {"data": "acme's vault code is 1234", "user_id": "mia"})
    acme.write("add", {"data": "acme's second note", "user_id": "mia"})
    for t in tenants.tenants.values():
        t.release()  # a kill: acme's writes are in its log alone
    data = tmp_path / "data"
    log = data / "acme" / "wal.log"
    torn = log.read_bytes() + b"0badc0de {\"seq\": 9"
    (data / "globex" / "wal.log").write_bytes(torn)
    with pytest.raises(SAMFileError, match=r"globex.wal\.log: line 1 is a write of tenant 'acme', not 'globex' "
                                           r".*nothing was replayed or changed"):
        tenants_in(tmp_path)
    assert (data / "globex" / "wal.log").read_bytes() == torn
    assert all(json.loads(line.split(b" ", 1)[1])["tenant"] == "acme" for line in log.read_bytes().splitlines())
    (data / "globex" / "wal.log").write_bytes(b"")
    again = tenants_in(tmp_path)  # acme's own log in acme's folder: replayed, as ever
    assert texts(again.tenants["acme"].memory.get_all(user_id="mia")) == {"acme's vault code is 1234",
                                                                          "acme's second note"}
    assert again.tenants["globex"].memory.get_all(user_id="mia")["results"] == []
    for t in again.tenants.values():
        t.release()


def test_a_log_written_before_records_named_their_tenant_is_read_as_its_folders(tmp_path):
    """A log of records without 'tenant' (written before they named theirs) is replayed into its folder's tenant,
    as a checkpoint without one is loaded; a record whose 'tenant' is no name is damage, named with its line."""
    import zlib

    from sam_model.io import SAMFileError

    tenants = tenants_in(tmp_path)
    for t in tenants.tenants.values():
        t.release()

    def line(record: dict) -> bytes:
        body = json.dumps(record).encode()
        return b"%08x %s\n" % (zlib.crc32(body), body)

    log = tmp_path / "data" / "globex" / "wal.log"
    old = {"seq": 1, "op": "add", "args": {"data": "globex's old note", "user_id": "mia"}}
    log.write_bytes(line(old))
    again = tenants_in(tmp_path)
    assert texts(again.tenants["globex"].memory.get_all(user_id="mia")) == {"globex's old note"}
    for t in again.tenants.values():
        t.release()
    log.write_bytes(line({**old, "tenant": 5}))
    with pytest.raises(SAMFileError, match=r"line 1 has a good checksum but its 'tenant' is 5, not a tenant's name"):
        tenants_in(tmp_path)


# ---- LangChain ---------------------------------------------------------------------------------------------------

def test_langchain_bound_to_a_scope_reaches_no_other():
    pytest.importorskip("langchain_core", reason="the [langchain] extra is not installed")
    from sam_model.integrations.langchain import SAMLangChainRetriever, SAMVectorStore

    m = memory()
    m.add(PAID, user_id="mia")
    eve_ids = SAMVectorStore(m, user_id="eve").add_texts(["eve's pin is 0000"], ids=["pin"])
    retriever = SAMLangChainRetriever(memory=m, user_id="mia", k=10)
    for kw in ({"user_id": "eve"}, {"filters": {"user_id": "eve"}}):
        with pytest.raises(ValueError, match="eve"):
            retriever.invoke("pin", **kw)
    assert all(d.metadata["user_id"] == "mia" for d in retriever.invoke("pin", filters={"OR": [{"user_id": "eve"}]}))
    assert all(d.metadata["user_id"] == "mia" for d in retriever.invoke(
        "", config={"configurable": {"sam_messages": PAID, "sam_tool_call": PAY}}))
    store = SAMVectorStore(m, user_id="mia")
    eve_memory = m.get_all(user_id="eve")["results"][0]["id"]
    assert eve_ids == ["pin"] and store.get_by_ids(["pin", eve_memory]) == []
    with pytest.raises(KeyError):
        store.delete(["pin"])
    store.add_texts(["mia's pin is 1111"], ids=["pin"])  # mia's own "pin": eve's stays as it was
    assert texts(m.get_all(user_id="eve")) == {"eve's pin is 0000"}
    assert [d.page_content for d in store.get_by_ids(["pin"])] == ["mia's pin is 1111"]
    assert all(d.metadata["user_id"] == "mia" for d in store.similarity_search("pin", k=10))
