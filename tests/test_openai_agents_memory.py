"""SAMSession and sam_recall_tool against the real OpenAI Agents SDK, run with a scripted Model (no network).

Run where openai-agents is installed: PYTHONPATH=$PWD:$PWD/tests:<the venv's site-packages> python -m pytest ...
"""

from __future__ import annotations

import asyncio
import importlib.util
import json

import pytest

if importlib.util.find_spec("agents") is None:
    pytest.skip("openai-agents is not installed (pip install openai-agents; run with its environment)",
                allow_module_level=True)

from agents import Agent, Runner, SQLiteSession, Usage, function_tool, set_tracing_disabled  # noqa: E402
from agents.items import ModelResponse  # noqa: E402
from agents.models.interface import Model  # noqa: E402
from agents.tool_context import ToolContext  # noqa: E402
from openai.types.responses import (  # noqa: E402
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

from sam_model.integrations.openai_agents import SAMSession, sam_recall_tool  # noqa: E402
from sam_model.memory import HashingEncoder, ScopedMemory  # noqa: E402

set_tracing_disabled(True)  # the SDK's traces go to OpenAI's servers: a test run reaches no network


def _say(text: str) -> ResponseOutputMessage:
    return ResponseOutputMessage(id="msg_1", type="message", role="assistant", status="completed",
                                 content=[ResponseOutputText(type="output_text", text=text, annotations=[])])


def _call(name: str, args: dict, i: int) -> ResponseFunctionToolCall:
    return ResponseFunctionToolCall(id=f"fc_{i}", call_id=f"call_{i}", type="function_call", name=name,
                                    arguments=json.dumps(args))


class Scripted(Model):
    """A Model answering each call with the next scripted output item."""

    def __init__(self, turns: list) -> None:
        self.turns = list(turns)

    async def get_response(self, *args, **kwargs) -> ModelResponse:
        return ModelResponse(output=[self.turns.pop(0)], usage=Usage(), response_id=None)

    def stream_response(self, *args, **kwargs):
        raise NotImplementedError


@function_tool
def lookup_order(order_id: str) -> str:
    """Look up an order."""
    return f"order {order_id}: shipped to Lisbon"


def _run(memory: ScopedMemory, user: str, order: str, tmp_path, turns: list, tools: list) -> SAMSession:
    session = SAMSession(SQLiteSession(user, str(tmp_path / "s.db")), memory, user_id=user, agent_id="shop")
    agent = Agent(name="Shop", instructions="Help with orders.", tools=tools, model=Scripted(turns))
    asyncio.run(Runner.run(agent, f"Where is my order {order}?", session=session))
    return session


def test_items_are_stored_once_in_their_users_scope_and_recalled_by_that_user_alone(tmp_path):
    memory = ScopedMemory(HashingEncoder(64))
    for user, order in (("mia", "A-77"), ("bob", "B-12")):
        session = _run(memory, user, order, tmp_path, [_call("lookup_order", {"order_id": order}, 1), _say("Done.")],
                       [lookup_order])
    assert len(asyncio.run(session.get_items())) == 4  # the wrapped session keeps the conversation
    mias = [m["memory"] for m in memory.get_all(user_id="mia", agent_id="shop", limit=None)["results"]]
    assert any("A-77" in m for m in mias) and not any("B-12" in m for m in mias), mias
    count = len(memory.get_all(user_id="bob", agent_id="shop", limit=None)["results"])
    # the turn's last items again (a retried save), then the whole list: stored once
    asyncio.run(session.add_items(asyncio.run(session.get_items())[-2:]))
    asyncio.run(session.add_items(asyncio.run(session.get_items())))
    assert len(memory.get_all(user_id="bob", agent_id="shop", limit=None)["results"]) == count
    recall = sam_recall_tool(memory, user_id="mia", agent_id="shop")
    args = json.dumps({"query": "order"})
    ctx = ToolContext(context=None, tool_name="recall_memory", tool_call_id="c1", tool_arguments=args)
    out = asyncio.run(recall.on_invoke_tool(ctx, args))
    assert "A-77" in out and "B-12" not in out, out


def test_a_recall_output_is_stored_as_a_marker(tmp_path):
    memory = ScopedMemory(HashingEncoder(64))
    _run(memory, "mia", "A-77", tmp_path, [_call("lookup_order", {"order_id": "A-77"}, 1), _say("Done.")],
         [lookup_order])
    recall = sam_recall_tool(memory, user_id="mia", agent_id="shop")
    session = SAMSession(SQLiteSession("mia-2", str(tmp_path / "s.db")), memory, user_id="mia", agent_id="shop")
    agent = Agent(name="Shop", instructions="Help.", tools=[recall],
                  model=Scripted([_call("recall_memory", {"query": "order"}, 5), _say("Your order A-77.")]))
    asyncio.run(Runner.run(agent, "Which order was mine?", session=session))
    texts = [m["memory"] for m in memory.get_all(user_id="mia", agent_id="shop", limit=None)["results"]]
    assert any("memories recalled: stored already" in t for t in texts), texts
    assert sum("shipped to Lisbon" in t for t in texts) == 1, texts


def test_scopes_are_checked_when_made():
    with pytest.raises(ValueError, match="needs a scope"):
        sam_recall_tool(ScopedMemory(HashingEncoder(64)))


def test_the_readme_snippet_runs_as_written(tmp_path, monkeypatch):
    """README's OpenAI Agents SDK block (a plain fence: the README's tests run without openai-agents) run as
    written, given the app's ``model`` (scripted) and ``get_order``: the turn is stored in mia's scope."""
    import ast

    monkeypatch.chdir(tmp_path)
    import docset

    readme = docset.text()  # README.md and docs/*.md: the passage may live in either
    start = readme.index("```\nfrom agents import Agent, Runner, SQLiteSession\n") + 4
    code = readme[start:readme.index("```", start)]

    @function_tool
    def get_order() -> str:
        """The user's last order."""
        return "order ORD-5521: shipped to Paris"

    names = {"model": Scripted([_call("get_order", {}, 1), _say("It shipped to Paris.")]), "get_order": get_order}
    ran = eval(compile(code, "README.md (OpenAI Agents SDK)", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT), names)
    if ran is not None:  # a coroutine: the snippet awaits at its top level, as in a notebook
        asyncio.run(ran)
    said = [r["memory"] for r in names["memory"].get_all(user_id="mia", agent_id="shop", limit=None)["results"]]
    assert said[0] == "Where is my last order?" and any("shipped to Paris" in m for m in said), said


def test_a_recall_output_added_by_another_sam_session_is_masked(tmp_path):
    """The recall's call added by one SAMSession, its output by another (a run resumed elsewhere): it was stored
    as the memories' text again."""
    memory = ScopedMemory(HashingEncoder(64))
    memory.add([{"role": "user", "content": "My order is A-77, shipped to Lisbon."}], user_id="mia", agent_id="shop")
    inner = SQLiteSession("mia-3", str(tmp_path / "s.db"))
    call = {"type": "function_call", "name": "recall_memory", "call_id": "call_9", "arguments": "{}"}
    asyncio.run(SAMSession(inner, memory, user_id="mia", agent_id="shop").add_items([call]))
    args = json.dumps({"query": "order"})
    ctx = ToolContext(context=None, tool_name="recall_memory", tool_call_id="call_9", tool_arguments=args)
    said = asyncio.run(sam_recall_tool(memory, user_id="mia", agent_id="shop").on_invoke_tool(ctx, args))
    out = {"type": "function_call_output", "call_id": "call_9", "output": said}
    asyncio.run(SAMSession(inner, memory, user_id="mia", agent_id="shop").add_items([out]))
    texts = [m["memory"] for m in memory.get_all(user_id="mia", agent_id="shop", limit=None)["results"]]
    assert sum("shipped to Lisbon" in t for t in texts) == 1, texts


class ScriptedResponses(Scripted):
    """A Model answering each call with the next scripted list of output items (a response of several)."""

    async def get_response(self, *args, **kwargs) -> ModelResponse:
        return ModelResponse(output=self.turns.pop(0), usage=Usage(), response_id=None)


def test_items_of_a_model_without_item_ids_are_each_stored(tmp_path):
    """A Chat Completions or LiteLLM model's items all carry the SDK's placeholder id "__fake_id__": they were read
    as versions of one item, the turn's preamble replaced by its last message."""
    from openai.types.responses import ResponseReasoningItem
    from openai.types.responses.response_reasoning_item import Summary

    def fake(item):
        item.id = "__fake_id__"
        return item

    think = fake(ResponseReasoningItem(id="x", type="reasoning", summary=[Summary(type="summary_text", text="A-77")]))
    model = ScriptedResponses([[think, fake(_say("Checking order A-77 for you.")),
                                fake(_call("lookup_order", {"order_id": "A-77"}, 1))],
                               [think, fake(_say("It shipped to Lisbon."))]])
    memory = ScopedMemory(HashingEncoder(64))
    session = SAMSession(SQLiteSession("mia", str(tmp_path / "s.db")), memory, user_id="mia", agent_id="shop")
    asyncio.run(Runner.run(Agent(name="Shop", instructions="Help.", tools=[lookup_order], model=model),
                           "Where is my order A-77?", session=session))
    texts = [m["memory"] for m in memory.get_all(user_id="mia", agent_id="shop", limit=None)["results"]]
    assert "Checking order A-77 for you." in texts and texts[-1] == "It shipped to Lisbon.", texts


def _recalled(memory: ScopedMemory, tool, session_id: str, tmp_path) -> list[str]:
    """The memories of mia after a run whose model calls ``tool`` (named recall_memory) then answers."""
    session = SAMSession(SQLiteSession(session_id, str(tmp_path / "s.db")), memory, user_id="mia", agent_id="shop")
    agent = Agent(name="Shop", instructions="Help.", tools=[tool],
                  model=Scripted([_call("recall_memory", {"query": "order"}, 5), _say("Done.")]))
    asyncio.run(Runner.run(agent, "Which order was mine?", session=session))
    return [m["memory"] for m in memory.get_all(user_id="mia", agent_id="shop", limit=None)["results"]]


def test_an_apps_own_recall_memory_tool_is_stored_as_it_answered(tmp_path):
    """Any tool named recall_memory had its output stored as "[N memories recalled ...]": the app's own tool's
    answer (no SAM memory) was lost."""
    @function_tool(name_override="recall_memory")
    def own(query: str) -> str:
        """The app's own notes."""
        return "1. Note: customer prefers DHL"

    texts = _recalled(ScopedMemory(HashingEncoder(64)), own, "mia-4", tmp_path)
    assert any("customer prefers DHL" in t for t in texts) and not any("recalled" in t for t in texts), texts


def test_a_recall_marker_counts_memories_not_lines(tmp_path):
    """The marker counted the output's lines opening with a digit: a memory of several lines (a line break
    numbered() does not indent after) counted as several."""
    memory = ScopedMemory(HashingEncoder(64))
    memory.add([{"role": "user", "content": "My order A-77:\r2 boxes of shoes\u20283 pairs of socks"}],
               user_id="mia", agent_id="shop")
    texts = _recalled(memory, sam_recall_tool(memory, user_id="mia", agent_id="shop"), "mia-5", tmp_path)
    before = texts.index("CALL recall_memory(query=order)")  # the memories the recall (k=5) returned: all before it
    assert f"recall_memory: [{before} memories recalled: stored already]" in texts, texts


def test_a_later_responses_item_of_a_reused_id_is_stored(tmp_path):
    """A model numbering its items afresh in each response (msg_1, rs_1 in every one): the final answer, after the
    call's output, was read as a version of the turn's preamble, which was lost (the importer reads both)."""
    from openai.types.responses import ResponseReasoningItem
    from openai.types.responses.response_reasoning_item import Summary

    think = ResponseReasoningItem(id="rs_1", type="reasoning", summary=[Summary(type="summary_text", text="A-77")])
    model = ScriptedResponses([[think, _say("Checking order A-77 for you."),
                                _call("lookup_order", {"order_id": "A-77"}, 1)],
                               [think, _say("It shipped to Lisbon.")]])
    memory = ScopedMemory(HashingEncoder(64))
    session = SAMSession(SQLiteSession("mia", str(tmp_path / "s.db")), memory, user_id="mia", agent_id="shop")
    asyncio.run(Runner.run(Agent(name="Shop", instructions="Help.", tools=[lookup_order], model=model),
                           "Where is my order A-77?", session=session))
    texts = [m["memory"] for m in memory.get_all(user_id="mia", agent_id="shop", limit=None)["results"]]
    assert "Checking order A-77 for you." in texts and texts[-1] == "It shipped to Lisbon.", texts


def test_a_retry_after_pop_item_stores_the_users_message_once(tmp_path):
    """The SDK's undo: the answer and the user's message popped, the run retried with the same message; the message
    was stored again, as said twice (the module said a popped item added again is not)."""
    memory = ScopedMemory(HashingEncoder(64))
    session = SAMSession(SQLiteSession("mia", str(tmp_path / "s.db")), memory, user_id="mia", agent_id="shop")
    for answer in ("Refunded.", "Sorry, order A-77 cannot be refunded."):
        said = _say(answer)
        said.id = f"msg_{len(answer)}"  # each response's own id, as OpenAI's are
        agent = Agent(name="Shop", instructions="Help.", model=Scripted([said]))
        asyncio.run(Runner.run(agent, "Refund my order A-77.", session=session))
        if answer == "Refunded.":
            asyncio.run(session.pop_item())
            asyncio.run(session.pop_item())
    asyncio.run(Runner.run(Agent(name="Shop", instructions="Help.", model=Scripted([_say("Done.")])),
                           "Refund my order A-77.", session=session))  # said again, not a retry: stored
    texts = [m["memory"] for m in memory.get_all(user_id="mia", agent_id="shop", limit=None)["results"]]
    assert texts == ["Refund my order A-77.", "Refunded.", "Sorry, order A-77 cannot be refunded.",
                     "Refund my order A-77.", "Done."], texts


def test_a_recall_of_one_memory_is_stored_as_one(tmp_path):
    """The marker counts as English does, one text with smolagents' (data.formats.recalls.recalled): the session's
    own said "[1 memories recalled: stored already]"."""
    memory = ScopedMemory(HashingEncoder(64))
    _run(memory, "mia", "A-77", tmp_path, [_call("lookup_order", {"order_id": "A-77"}, 1), _say("Done.")],
         [lookup_order])
    recall = sam_recall_tool(memory, user_id="mia", agent_id="shop", k=1)
    session = SAMSession(SQLiteSession("mia-2", str(tmp_path / "s.db")), memory, user_id="mia", agent_id="shop")
    agent = Agent(name="Shop", instructions="Help.", tools=[recall],
                  model=Scripted([_call("recall_memory", {"query": "order"}, 5), _say("Your order A-77.")]))
    asyncio.run(Runner.run(agent, "Which order was mine?", session=session))
    texts = [m["memory"] for m in memory.get_all(user_id="mia", agent_id="shop", limit=None)["results"]]
    assert any("[1 memory recalled: stored already]" in t for t in texts), texts


def test_a_whole_list_of_a_model_without_item_ids_added_again_stores_nothing_new(tmp_path):
    """Two runs of a Chat Completions or LiteLLM model (every item "__fake_id__"), then the session's whole list
    (get_items) added again: the answers, told by no id, were stored again (the first user message was read as
    OpenAI chat and the adds of one item were no part of what the scope was given)."""
    def fake(item):
        item.id = "__fake_id__"
        return item

    model = ScriptedResponses([[fake(_say("Checking order A-77.")), fake(_call("lookup_order", {"order_id": "A-77"}, 1))],
                               [fake(_say("It shipped to Lisbon."))],
                               [fake(_say("Checking B-12 too.")), fake(_call("lookup_order", {"order_id": "B-12"}, 2))],
                               [fake(_say("B-12 shipped as well."))]])
    memory, inner = ScopedMemory(HashingEncoder(64)), SQLiteSession("mia", str(tmp_path / "s.db"))
    session = SAMSession(inner, memory, user_id="mia", agent_id="shop")
    agent = Agent(name="Shop", instructions="Help.", tools=[lookup_order], model=model)
    for text in ("Where is my order A-77?", "And B-12?"):
        asyncio.run(Runner.run(agent, text, session=session))
    texts = lambda: [m["memory"] for m in memory.get_all(user_id="mia", agent_id="shop", limit=None)["results"]]  # noqa: E731
    before = texts()
    out = memory.add(asyncio.run(inner.get_items()), user_id="mia", agent_id="shop")
    assert out["results"] == [] and texts() == before and len(before) == 10, (out, before)


def test_another_sessions_list_opening_with_the_same_first_words_keeps_them(tmp_path):
    """A session run with SAMSession ("Hi", answered by a model without item ids), then another session's whole
    list (get_items), opening with its own "Hi" and the same greeting, added to the same scope: the session's first
    add, the message alone, still stood for the scope's whole conversation, and the other session's "Hi" was read
    as it sent again and lost (resent.went_on). Its every item is stored (the greeting twice, as said twice)."""
    def fake(item):
        item.id = "__fake_id__"
        return item

    memory = ScopedMemory(HashingEncoder(64))
    hello = lambda: fake(_say("Hello! How can I help?"))  # noqa: E731
    first = SAMSession(SQLiteSession("a", str(tmp_path / "s.db")), memory, user_id="mia", agent_id="shop")
    asyncio.run(Runner.run(Agent(name="Shop", instructions="Help.", model=ScriptedResponses([[hello()]])), "Hi",
                           session=first))
    other = SQLiteSession("b", str(tmp_path / "s.db"))
    agent = Agent(name="Shop", instructions="Help.", model=ScriptedResponses([[hello()], [fake(_say("Booked."))]]))
    for text in ("Hi", "Book a taxi."):
        asyncio.run(Runner.run(agent, text, session=other))
    memory.add(asyncio.run(other.get_items()), user_id="mia", agent_id="shop")
    texts = [m["memory"] for m in memory.get_all(user_id="mia", agent_id="shop", limit=None)["results"]]
    assert texts == ["Hi", "Hello! How can I help?", "Hi", "Hello! How can I help?", "Book a taxi.", "Booked."]


def test_a_recall_reaches_the_model_as_a_tool_result_never_two_user_messages_in_a_row(tmp_path):
    """sam_recall_tool's recall is a function call's output, and SAMSession gives back the session's items: the
    input each model call gets (a second run over the session's history, the recall called in it) holds no two user
    messages in a row, the recall in a function_call_output item right after its call."""
    memory = ScopedMemory(HashingEncoder(64))
    _run(memory, "mia", "A-77", tmp_path, [_call("lookup_order", {"order_id": "A-77"}, 1), _say("Done.")],
         [lookup_order])
    inputs: list[list[dict]] = []

    class Recording(Scripted):
        async def get_response(self, system_instructions, input, *args, **kwargs) -> ModelResponse:
            inputs.append([i if isinstance(i, dict) else i.model_dump() for i in input])
            return await super().get_response(system_instructions, input, *args, **kwargs)

    session = SAMSession(SQLiteSession("mia", str(tmp_path / "s.db")), memory, user_id="mia", agent_id="shop")
    agent = Agent(name="Shop", instructions="Help.", tools=[sam_recall_tool(memory, user_id="mia", agent_id="shop")],
                  model=Recording([_call("recall_memory", {"query": "order"}, 5), _say("Your order A-77.")]))
    asyncio.run(Runner.run(agent, "Which order was mine?", session=session))
    assert len(inputs) == 2, inputs
    for items in inputs:
        users = [i.get("role") == "user" for i in items]
        assert not any(a and b for a, b in zip(users, users[1:])), items
    kinds = [i.get("type") or i.get("role") for i in inputs[1]]
    out = len(kinds) - 1 - kinds[::-1].index("function_call_output")  # the recall's: the newest
    assert kinds[out - 1] == "function_call" and "recalled by SAM" in inputs[1][out]["output"], inputs[1]


def test_items_whose_store_failed_are_stored_with_the_next_add(tmp_path):
    """The memory's add of the answer failed after the wrapped session took it (a disk full for a moment): the SDK
    adds no item twice, so the answer was never stored. The error still reaches the run; the next turn stores it
    before its own items, once."""
    memory = ScopedMemory(HashingEncoder(64))
    calls, add = [], memory.add

    def flaky(*args, **kw):
        calls.append(args)
        if len(calls) == 2:  # the run's second add: its answer (the first is the user's input)
            raise OSError("disk full")
        return add(*args, **kw)

    memory.add = flaky
    session = SAMSession(SQLiteSession("mia", str(tmp_path / "s.db")), memory, user_id="mia", agent_id="shop")
    agent = Agent(name="Shop", instructions="Help.", model=Scripted([_say("It left Porto."), _say("Tomorrow.")]))
    with pytest.raises(OSError, match="disk full"):
        asyncio.run(Runner.run(agent, "Where is my order A-77?", session=session))
    assert [m["memory"] for m in memory.get_all(user_id="mia", agent_id="shop", limit=None)["results"]] == [
        "Where is my order A-77?"]
    asyncio.run(Runner.run(agent, "When does it arrive?", session=session))
    said = [m["memory"] for m in memory.get_all(user_id="mia", agent_id="shop", limit=None)["results"]]
    assert said == ["Where is my order A-77?", "It left Porto.", "When does it arrive?", "Tomorrow."], said
    asyncio.run(session.add_items([{"role": "user", "content": "Thanks"}]))
    assert [m["memory"] for m in memory.get_all(user_id="mia", agent_id="shop",
                                                limit=None)["results"]].count("Where is my order A-77?") == 1


def _stored(memory: ScopedMemory) -> list[str]:
    return [m["memory"] for m in memory.get_all(user_id="mia", agent_id="shop", limit=None)["results"]]


def _after_a_failed_add(tmp_path, memory: ScopedMemory, flaky, text: str = "Kept") -> SAMSession:
    """A session of ``memory``, whose add is ``flaky`` from now on, after its first add (of ``text``) failed there:
    the item is kept, to be stored with a later add."""
    memory.add = flaky
    session = SAMSession(SQLiteSession("mia", str(tmp_path / "s.db")), memory, user_id="mia", agent_id="shop")
    with pytest.raises(OSError):
        asyncio.run(session.add_items([{"role": "user", "content": text}]))
    return session


def test_a_failed_add_beside_another_add_under_way_is_kept_and_stored_once(tmp_path):
    """Two adds of one session at once (two runs gathered): the first's store fails while the second's is under
    way. The second's success cleared what the first kept (its items lost from memory), and an item kept from
    before went to both adds (stored twice); now each add takes the kept items alone, and a failure keeps its own."""
    import threading

    memory = ScopedMemory(HashingEncoder(64))
    add, fail_next = memory.add, [True]
    started, release = threading.Event(), threading.Event()

    def flaky(items, **kw):
        texts = [i.get("content") for i in items]
        if fail_next[0]:  # the first add of all: the disk full for a moment
            fail_next[0] = False
            raise OSError("disk full")
        if "Second" in texts:  # under way while the first fails
            started.set()
            release.wait(10)
        elif "First" in texts and not release.is_set():  # its first try alone fails
            started.wait(10)
            raise OSError("disk full")
        return add(items, **kw)

    session = _after_a_failed_add(tmp_path, memory, flaky)

    async def both() -> None:
        second = asyncio.create_task(session.add_items([{"role": "user", "content": "Second"}]))
        with pytest.raises(OSError):
            await session.add_items([{"role": "user", "content": "First"}])
        release.set()
        await second

    asyncio.run(both())
    asyncio.run(session.add_items([{"role": "user", "content": "Third"}]))
    said = _stored(memory)
    assert sorted(said) == ["First", "Kept", "Second", "Third"], said


def test_an_item_kept_from_a_failed_add_goes_to_one_of_two_adds_at_once(tmp_path):
    """An item whose store failed, then two adds at once that both store: each took it, and it was stored twice."""
    import threading

    memory = ScopedMemory(HashingEncoder(64))
    add, calls = memory.add, []
    both_in = threading.Barrier(2, timeout=10)

    def flaky(items, **kw):
        calls.append(items)
        if len(calls) == 1:
            raise OSError("disk full")
        try:
            both_in.wait()  # the two adds under way at once
        except threading.BrokenBarrierError:  # one add alone (the kept item went to the other's only)
            pass
        return add(items, **kw)

    session = _after_a_failed_add(tmp_path, memory, flaky)

    async def both() -> None:
        await asyncio.gather(session.add_items([{"role": "user", "content": "One"}]),
                             session.add_items([{"role": "user", "content": "Two"}]))

    asyncio.run(both())
    assert sorted(_stored(memory)) == ["Kept", "One", "Two"], _stored(memory)


def test_items_the_memory_refuses_are_not_kept_to_fail_every_later_add(tmp_path):
    """An item the memory refuses (an assistant message of empty text: nothing to store) was kept as one whose store
    failed, sent again before the next add's items and refused again: every later add, every run of the agent,
    failed. A refusal reaches the run once and its items are not kept; items kept from a failure that may pass
    (the disk full) still are, and are stored with the next add."""
    memory = ScopedMemory(HashingEncoder(64))
    add, full = memory.add, [True]

    def flaky(*args, **kw):
        if full[0]:
            full[0] = False
            raise OSError("disk full")
        return add(*args, **kw)

    session = _after_a_failed_add(tmp_path, memory, flaky, "Where is my order A-77?")
    empty = {"type": "message", "role": "assistant", "id": "msg_1", "status": "completed",
             "content": [{"type": "output_text", "text": "", "annotations": []}]}
    with pytest.raises(ValueError, match="nothing to store"):
        asyncio.run(session.add_items([empty]))
    asyncio.run(session.add_items([{"role": "user", "content": "Hello?"}]))
    asyncio.run(session.add_items([{"role": "user", "content": "Anyone?"}]))
    assert _stored(memory) == ["Where is my order A-77?", "Hello?", "Anyone?"], _stored(memory)


def test_a_cancelled_add_does_not_leave_the_kept_items_to_be_stored_again(tmp_path):
    """A run cancelled while its add stores (a timeout around the run): the add's thread stores on, the items kept
    from a failed add among them, but they stayed kept (a cancel is no Exception) and the next add stored them
    again. They are the cancelled add's from the start: stored once."""
    import threading

    memory = ScopedMemory(HashingEncoder(64))
    add, calls = memory.add, []
    entered, release = threading.Event(), threading.Event()

    def flaky(items, **kw):
        calls.append(items)
        if len(calls) == 1:
            raise OSError("disk full")
        if len(calls) == 2:  # the add that is cancelled: under way in its thread
            entered.set()
            release.wait(10)
        return add(items, **kw)

    session = _after_a_failed_add(tmp_path, memory, flaky)

    async def cancelled() -> None:
        task = asyncio.create_task(session.add_items([{"role": "user", "content": "One"}]))
        await asyncio.to_thread(entered.wait, 10)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        release.set()

    asyncio.run(cancelled())
    asyncio.run(session.add_items([{"role": "user", "content": "Two"}]))
    assert sorted(_stored(memory)) == ["Kept", "One", "Two"], _stored(memory)
