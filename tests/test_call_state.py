"""A search by the tool call about to be made: ScopedMemory computes the call's decision-point state from the scope's
recorded conversation, by the code live_state and the transcript importer run (what is benchmarked is what is
served), ranks by it, records nothing, and reads no other scope's (or tenant's) conversation; sam-serve's HTTP search
and MCP recall take the same ``call``, batched or not."""

from __future__ import annotations

import copy
import gzip
import json
import os
from pathlib import Path

import pytest

from sam_model.data.toolstate import live_state
from sam_model.data.transcripts import Conversation, convert_conversation
from sam_model.memory import HashingEncoder, ScopedMemory

REPO = Path(__file__).resolve().parents[1]
TAU = Path(os.environ.get("SAM_SHARED_DIR", REPO / ".." / "shared")).resolve() / "data/tau-bench/gpt-4o-airline.json.gz"


def call(name: str, call_id: str, **arguments) -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


def calls(*entries: dict) -> dict:
    return {"role": "assistant", "content": None, "tool_calls": list(entries)}


# three decision points: the first without labels (its value is in its own event), two with (values said earlier)
CHAT = [
    {"role": "system", "content": "You are an airline agent. Cabins: economy, business."},
    {"role": "user", "content": "Hi, I'm ann_lee_123 and I want to cancel a trip."},
    calls(call("get_user", "c1", user_id="ann_lee_123")),
    {"role": "tool", "tool_call_id": "c1", "content": json.dumps({"name": "Ann", "reservations": ["QX7Z9A", "PL2K8M"]})},
    {"role": "assistant", "content": "You have QX7Z9A and PL2K8M. Which one?"},
    {"role": "user", "content": "The first one, please."},
    calls(call("cancel_reservation", "c2", reservation_id="QX7Z9A", user_id="ann_lee_123", cabin="economy")),
    {"role": "tool", "tool_call_id": "c2", "content": "Error: reservation QX7Z9A is not refundable"},
    {"role": "assistant", "content": "It is not refundable. Cancel PL2K8M instead?"},
    {"role": "user", "content": "yes"},
    calls(call("cancel_reservation", "c3", reservation_id="PL2K8M", user_id="ann_lee_123")),
]
AT = 6  # the cancel of QX7Z9A: CHAT[:AT] is the conversation before it
CANCEL = CHAT[AT]["tool_calls"][0]
MIA = {"user_id": "mia", "run_id": "trip"}


def decision_points(chat: list[dict]) -> list[int]:
    return [i for i, m in enumerate(chat) if m.get("role") == "assistant" and m.get("tool_calls")]


def importer_states(chat: list[dict], episode: str = "ep") -> dict[int, dict]:
    """The importer's decision-point state of each labelled call: message index -> the state it wrote."""
    out = {}
    for i in decision_points(chat):
        events = convert_conversation(Conversation(episode, chat[:i + 1], "test", episode))
        before = len(convert_conversation(Conversation(episode, chat[:i], "test", episode))) - 1
        if "useful_memory_steps" in events[before]:
            out[i] = events[before]["state"]
    return out


def test_a_calls_state_is_live_state_and_the_importers_decision_state():
    """At every tool call of the conversation, fed in one add or a message at a time, the state the memory computes
    for the call is live_state of the messages before it and the call, and, where the importer labelled the call, the
    state it wrote for training; one call or the message's list of them, in the OpenAI or the {name, arguments} shape."""
    labelled = importer_states(CHAT)
    assert sorted(labelled) == [6, 10]  # two decision points with labels, the first call without
    for i in decision_points(CHAT):
        want = live_state(CHAT[:i], CHAT[i]["tool_calls"])
        if i in labelled:
            assert want == labelled[i]
        for batches in ([CHAT[:i]], [[m] for m in CHAT[:i]]):
            memory = ScopedMemory(HashingEncoder(16))
            for batch in batches:
                memory.add(batch, **MIA)
            entry = CHAT[i]["tool_calls"][0]
            plain = {"name": entry["function"]["name"], "arguments": json.loads(entry["function"]["arguments"])}
            for given in (CHAT[i]["tool_calls"], entry, plain):
                assert memory.live_state(**MIA, call=given).to_json() == want, (i, given)
    assert labelled[6]["uncertainty_flags"] == ["reservation_id", "user_id"]  # the example means what it says


@pytest.mark.skipif(not TAU.is_file(), reason=f"tau-bench data absent ({TAU}); set SAM_SHARED_DIR")
def test_a_calls_state_is_the_importers_on_real_agent_transcripts():
    """tau-bench airline trajectories fed to the memory a message at a time, as an agent adds its turns: before each
    assistant message with tool calls, the memory's state for those calls is live_state's and the importer's."""
    checked = 0
    for item in json.loads(gzip.open(TAU, "rt").read())[:4]:
        traj = item["traj"]
        labelled = importer_states(traj)
        memory = ScopedMemory(HashingEncoder(16))
        for i, m in enumerate(traj):
            if m.get("role") == "assistant" and m.get("tool_calls"):
                got = memory.live_state(user_id="u", call=m["tool_calls"]).to_json()
                assert got == live_state(traj[:i], m["tool_calls"]), i
                if i in labelled:
                    assert got == labelled[i], i
                    checked += 1
            memory.add([m], user_id="u")
    assert checked >= 5


def test_a_search_by_call_ranks_by_that_state_and_records_nothing():
    """Before: a search took a ready state or "live" (the state after the last message: the last tool as the phase,
    no flags for the new call's arguments). A search by call ranks as evaluate.py ranks the decision point: by
    live_state of the call, with a blank query the decision event's words as the observation, at that event's step,
    over the memories written before it (tests/test_agreement.py holds it to evaluate.py's rankings); it answers the
    state, and leaves the conversation as it was: adding the call afterwards stores what it would have."""
    memory, untouched = ScopedMemory(HashingEncoder(256)), ScopedMemory(HashingEncoder(256))
    for m in (memory, untouched):
        m.add(CHAT[:AT], **MIA)
    before = copy.deepcopy(memory._trackers["mia//trip"].state_dict())
    want = live_state(CHAT[:AT], CANCEL)
    assert memory.live_state(**MIA).to_json() != want  # "live" is not the call's state
    decision = memory.store.next_step("mia//trip") - 1  # the newest event: the decision point's own
    for query, observation in (("", CHAT[AT - 1]["content"]), ("which reservation?", "which reservation?")):
        got = memory.search(query, call=CANCEL, **MIA, limit=4)
        same = memory.store.search(want, observation, 4, **MIA, step=decision, fold=True,
                                   exclude=[f"mia//trip#{decision}"])
        assert got["state"] == want
        assert [(r["id"], r["score"]) for r in got["results"]] == [(h.memory_id, h.score) for h in same]
        assert len(got["results"]) == 4 and f"mia//trip#{decision}" not in [r["id"] for r in got["results"]]
    assert memory._trackers["mia//trip"].state_dict() == before and len(memory.store) == len(untouched.store)
    for m in (memory, untouched):
        m.add(CHAT[AT:], **MIA)
    assert [(h.id, h.text, h.phase) for h in memory.store.get_all()] == \
        [(h.id, h.text, h.phase) for h in untouched.store.get_all()]
    assert memory._trackers["mia//trip"].state_dict() == untouched._trackers["mia//trip"].state_dict()


def test_a_calls_state_comes_only_from_its_own_scopes_conversation():
    """Each combination of scopes is its own conversation: mia's trip holds QX7Z9A and ann_lee_123; bob, mia without
    the run, mia's other run and an agent named mia hold other words or none. Their state for the same call is
    live_state of their own messages (none: the empty conversation's, the call's tool and nothing else), never
    flagging a value only mia's trip said; a search of every scope has no conversation of its own."""
    memory = ScopedMemory(HashingEncoder(64))
    memory.add(CHAT[:AT], **MIA)
    others = {("bob", None, None): [{"role": "user", "content": "I want to cancel a reservation"},
                                    {"role": "assistant", "content": "Which one?"}],
              ("mia", None, "other"): [{"role": "user", "content": "Is my flight on time?"}],
              ("mia", None, None): [], (None, "mia", None): [], (None, None, "trip"): []}
    for (user, agent, run), messages in others.items():
        if messages:
            memory.add(messages, user_id=user, agent_id=agent, run_id=run)
        got = memory.search("", call=CANCEL, user_id=user, agent_id=agent, run_id=run)
        assert got["state"] == live_state(messages, CANCEL), (user, agent, run)
        assert got["state"]["uncertainty_flags"] == [] and got["state"]["subgoal_stack"] == []
        given = {"user_id": user, "agent_id": agent, "run_id": run}
        assert all(r[n] == v for r in got["results"] for n, v in given.items() if v is not None)
    assert live_state([], CANCEL) == {"phase": "cancel_reservation", "subgoal_stack": [], "constraints": {},
                                      "uncertainty_flags": [], "last_action_result": "none"}
    assert memory.search("", call=CANCEL, all_scopes=True)["state"] == live_state([], CANCEL)
    assert memory.search("", call=CANCEL, **MIA)["state"]["uncertainty_flags"] == ["reservation_id", "user_id"]


@pytest.mark.parametrize("given, says", [
    ("cancel_reservation", r"^call: a tool call is expected, got a string: give \{\"name\": \"the_tool\""),
    ([], r"^call: an empty list: give the tool call about to be made"),
    ([CANCEL, 5], r"^call\[1\]: a tool call is expected, got a number"),
    ({"arguments": {"user_id": "ann_lee_123"}}, r"^call: a tool call with no tool name: give"),
    ([{"function": {"name": "", "arguments": "{}"}}], r"^call\[0\]: a tool call with no tool name"),
    ({"name": "bulk", "arguments": {"ids": list(range(1000, 1300))}},
     r"^call: its tool calls hold 300 argument values, more than 256"),
])
def test_a_bad_call_is_named_and_changes_nothing(given, says):
    memory = ScopedMemory(HashingEncoder(16))
    memory.add(CHAT[:AT], **MIA)
    before = copy.deepcopy(memory._trackers["mia//trip"].state_dict())
    with pytest.raises(ValueError, match=says) as err:
        memory.search("", call=given, **MIA)
    assert type(err.value) is ValueError and "\n" not in str(err.value)  # not a file's error (a 500 over HTTP)
    assert memory._trackers["mia//trip"].state_dict() == before
    if "argument values" not in says:  # live_state reads the call by the same code (it had no size to keep to)
        with pytest.raises(ValueError, match=says):
            live_state(CHAT[:AT], given)


def test_a_call_with_a_state_or_already_added_is_refused():
    """Both a state and a call: one of them would be ignored. A call whose assistant message was added before the
    search is the conversation's newest event: its state would be the one after it (its own values in the
    observation, its tool the last one), so it is refused with what to do; the same call again after its result is
    a new call."""
    memory = ScopedMemory(HashingEncoder(16))
    memory.add(CHAT[:AT + 1], **MIA)
    for state in ("live", {"phase": "x"}):
        with pytest.raises(ValueError, match=r"^give state or call, not both"):
            memory.search("", state, call=CANCEL, **MIA)
    for given, where in ((CANCEL, "call"), ([CHAT[2]["tool_calls"][0], CANCEL], r"call\[1\]")):
        with pytest.raises(ValueError, match=rf"^{where}: this call to 'cancel_reservation' is already the "
                                             r"conversation's newest message .* search with the call before adding"):
            memory.search("", call=given, **MIA)
    memory.add(CHAT[AT + 1:AT + 2], **MIA)
    assert memory.search("", call=CANCEL, **MIA)["state"] == live_state(CHAT[:AT + 2], CANCEL)


# ------------------------------------------------------------------------------------------------ sam-serve
def served(tmp_path, encoder, batched: bool):
    pytest.importorskip("fastapi", reason="the [serve] extra is not installed (pip install -e '.[serve]')")
    from fastapi.testclient import TestClient
    from serving import keys_file

    from sam_model.serve.batching import BatchedSearch
    from sam_model.serve.http import create_app
    from sam_model.serve.tenants import Tenants, read_keys
    from sam_model.store import store_config_of

    tenants = Tenants(read_keys(keys_file(tmp_path)), tmp_path / "data", encoder, store_config_of(encoder))
    return tenants, TestClient(create_app(tenants, BatchedSearch(0.001, 8) if batched else None))


@pytest.fixture(scope="module")
def sam(tiny_bert_dir, tmp_path_factory):
    from serving import tiny_export

    from sam_model.retriever import SAMRetriever

    return SAMRetriever.load(tiny_export(tiny_bert_dir, tmp_path_factory.mktemp("export") / "export"), device="cpu")


@pytest.mark.parametrize("batched", [True, False], ids=["batched", "unbatched"])
def test_a_served_search_by_call_is_the_state_live_state_gives_and_ranks_by_it(sam, tmp_path, batched):
    """Over HTTP a client in any language sends the call and the scope: the state the server computes is
    live_state(messages, call) of the messages it was sent (the importer's decision state), and the ranking is
    that of a search by that state at the decision event's step, over the memories before it (as evaluate.py ranks
    a decision point). Another tenant's conversation in the same scopes never feeds it."""
    from serving import KEYS

    tenants, http = served(tmp_path, sam, batched)
    acme, globex = {"X-API-Key": KEYS["acme"]}, {"X-API-Key": KEYS["globex"]}
    theirs = CHAT[:AT]
    ours = [{"role": "user", "content": "Hi, I want to cancel a trip."}, {"role": "assistant", "content": "Which?"},
            {"role": "user", "content": "The first one, please."}]
    assert http.post("/v1/memories", headers=globex, json={"messages": theirs, **MIA}).status_code == 200
    assert http.post("/v1/memories", headers=acme, json={"messages": ours, **MIA}).status_code == 200
    for tenant, headers, messages in (("globex", globex, theirs), ("acme", acme, ours)):
        for query in ("", "which reservation?"):
            r = http.post("/v1/memories/search", headers=headers, json={"query": query, "call": CANCEL, **MIA})
            assert r.status_code == 200, r.text
            want = live_state(messages, CANCEL)
            assert r.json()["state"] == want
            store = tenants.tenants[tenant].memory.store
            decision = store.next_step("mia//trip") - 1
            same = store.search(want, query or messages[-1]["content"], len(messages), **MIA, step=decision,
                                fold=True, exclude=[f"mia//trip#{decision}"])
            assert [(h["id"], round(h["score"], 5)) for h in r.json()["results"]] == \
                [(h.memory_id, round(h.score, 5)) for h in same]
            assert r.json()["results"] and {h["user_id"] for h in r.json()["results"]} == {"mia"}
    assert live_state(theirs, CANCEL)["uncertainty_flags"] == ["reservation_id", "user_id"]
    assert live_state(ours, CANCEL)["uncertainty_flags"] == []  # globex's words never reached acme's state
    r = http.post("/v1/memories/search", headers=acme, json={"query": "", "call": CANCEL, "user_id": "nobody"})
    assert r.status_code == 200 and r.json() == {"results": [], "state": live_state([], CANCEL)}
    tenants.close()


@pytest.mark.parametrize("body, says", [
    ({"state": "live", "call": CANCEL}, "give state or call, not both"),
    ({"call": []}, "call: an empty list: give the tool call about to be made"),
    ({"call": {"arguments": {}}}, "call: a tool call with no tool name"),
    ({"call": [{"function": {"name": "x", "arguments": "{}"}}, {"name": ""}]}, "call[1]: a tool call with no tool name"),
    ({"call": CHAT[2]["tool_calls"][0]}, "call: this call to 'get_user' is already the conversation's newest"),
    ({"call": "get_user"}, "call"),  # pydantic's: neither an object nor a list
    # a name no add could store (its memory's text holds it): was echoed in a 300 KB state
    ({"call": {"name": "x" * 300_000, "arguments": {}}}, "call.name: a tool name of 300000 characters, more than"),
    ({"call": [CANCEL, {"name": "x" * 100_001}]}, "call[1].name: a tool name of 100001 characters"),
])
def test_a_bad_served_call_is_a_422_naming_it(tmp_path, body, says):
    from serving import KEYS

    tenants, http = served(tmp_path, HashingEncoder(32), batched=True)
    headers = {"X-API-Key": KEYS["acme"]}
    http.post("/v1/memories", headers=headers, json={"messages": CHAT[:3], **MIA})
    r = http.post("/v1/memories/search", headers=headers, json={"query": "", **MIA, **body})
    assert r.status_code == 422, r.text
    assert says in str(r.json()["detail"]) and "Extra inputs are not permitted" not in str(r.json()["detail"])
    tenants.close()


def test_mcp_recall_takes_the_call_and_says_what_it_is(tmp_path):
    """The recall tool's schema describes ``call`` for an LLM; a recall by call answers what the memory's search by
    call answers, and a bad call is one line naming it."""
    pytest.importorskip("mcp", reason="the [serve] extra is not installed (pip install -e '.[serve]')")
    import asyncio

    from mcp import Client

    from sam_model.serve.mcp import create_mcp

    tenants, _ = served(tmp_path, HashingEncoder(64), batched=False)
    memory = tenants.tenants["acme"].memory
    memory.add(CHAT[:AT], **MIA)
    server = create_mcp(tenants, stdio_tenant="acme")

    async def calls() -> list:
        async with Client(server) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            return [tools["recall"].input_schema, *[await client.call_tool("recall", args) for args in (
                {"query": "", "call": CANCEL, **MIA}, {"query": "", "call": {"name": ""}, **MIA})]]

    schema, ok, bad = asyncio.run(calls())
    described = schema["properties"]["call"]["description"]
    assert "about to make" in described and '"arguments"' in described and "run_id" in described
    assert not ok.is_error
    assert json.loads(ok.content[0].text) == memory.search("", call=CANCEL, **MIA)
    assert bad.is_error and "call: a tool call with no tool name" in bad.content[0].text
    assert "\n" not in bad.content[0].text
    tenants.close()
