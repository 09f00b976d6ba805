"""sam_model.integrations.smolagents: SAMStepCallback (a smolagents step callback adding each finished step to
ScopedMemory) and SAMRecallTool (a smolagents Tool searching it). smolagents is no dependency: where it is not
installed a stand-in of the types the adapter uses (Tool; the memory steps and an agent calling its callbacks as
smolagents 1.26 does) checks the adapter's own logic; the last tests run real smolagents agents with a scripted model
where smolagents is installed."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import json
import re
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest
from smolagents_leave import conversations

from sam_model.data.transcripts import iter_transcript_events
from sam_model.integrations.fitting import CUT_AT
from sam_model.memory import HashingEncoder, ScopedMemory

MODULE = "sam_model.integrations.smolagents"
FIXTURE = Path(__file__).parent / "fixtures" / "smolagents_scripted.py"


def _fake_smolagents() -> types.ModuleType:
    """smolagents' Tool as the adapter uses it: class attributes checked when made (forward's parameters must be
    the inputs' names, as Tool.validate_arguments requires), a call runs forward."""
    module = types.ModuleType("smolagents")

    class Tool:
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            self.is_initialized = False
            for attr, kind in (("name", str), ("description", str), ("inputs", dict), ("output_type", str)):
                assert isinstance(getattr(self, attr, None), kind), attr
            params = set(inspect.signature(self.forward).parameters)
            assert params == set(self.inputs), f"forward takes {params}, inputs are {set(self.inputs)}"

        def __call__(self, *args: Any, **kwargs: Any) -> Any:
            return self.forward(*args, **kwargs)

    class AgentMemory:  # an agent's memory (smolagents 1.8 and later): its system prompt's step and its steps
        pass

    module.Tool, module.AgentMemory, module.__version__ = Tool, AgentMemory, "1.26.0"
    return module


@pytest.fixture
def adapter(monkeypatch):
    """sam_model.integrations.smolagents, over the real smolagents where installed, else over the stand-in."""
    if importlib.util.find_spec("smolagents") is None:
        monkeypatch.setitem(sys.modules, "smolagents", _fake_smolagents())
    monkeypatch.delitem(sys.modules, MODULE, raising=False)
    yield importlib.import_module(MODULE)
    sys.modules.pop(MODULE, None)


class Step:
    """A memory step whose ``dict()`` is the one given (an ActionStep's also holds ``model_input_messages``, which
    get_succinct_steps() leaves out). ``kind``: the class a CallbackRegistry would register it under."""

    def __init__(self, d: dict[str, Any], kind: str) -> None:
        self.d, self.kind = d, kind
        self.system_prompt = d.get("system_prompt")

    def dict(self) -> dict[str, Any]:
        extra = {"model_input_messages": [{"role": "system", "content": "ignored"}]} if self.kind == "action" else {}
        return {**extra, **self.d}


class Memory:
    """An agent's memory (smolagents' AgentMemory): its system prompt's step and its steps."""

    def __init__(self) -> None:
        self.system_prompt: Step | None = None
        self.steps: list[Step] = []


class Agent:
    """A smolagents agent's run as it calls its callbacks: run() sets memory.system_prompt, resets the memory's
    steps (a new list) or not, appends the TaskStep (no callback), then each planning or action step is given to
    the callbacks registered for its kind and then appended; the FinalAnswerStep is given to callbacks, never
    appended. ``callbacks``: a list (ActionSteps alone, as smolagents registers one) or a dict kind -> callback."""

    def __init__(self, callbacks: list | dict) -> None:
        self.callbacks = {"action": callbacks} if isinstance(callbacks, list) else {
            k: v if isinstance(v, list) else [v] for k, v in callbacks.items()}
        self.memory = Memory()

    def _finalize(self, step: Step) -> None:
        for cb in self.callbacks.get(step.kind, []):
            cb(step) if len(inspect.signature(cb).parameters) == 1 else cb(step, agent=self)

    def run(self, prompt: str, steps: list[dict[str, Any]], reset: bool) -> None:
        self.memory.system_prompt = Step({"system_prompt": prompt}, "system")
        if reset:
            self.memory.steps = []
        self.memory.steps.append(Step(steps[0], "task"))
        for d in steps[1:]:
            step = Step(d, "planning" if "plan" in d else "action")
            self._finalize(step)
            self.memory.steps.append(step)
        self._finalize(Step({"output": "done"}, "final"))


def runs(steps: list[dict[str, Any]]) -> tuple[str, list[list[dict[str, Any]]]]:
    """A dumped memory's system prompt and its runs (each from its TaskStep)."""
    starts = [i for i, s in enumerate(steps) if "task" in s] + [len(steps)]
    return steps[0]["system_prompt"], [steps[a:b] for a, b in zip(starts, starts[1:])]


def listed(memory: ScopedMemory, **scopes: str) -> list[tuple[int, str]]:
    return [(r["step"], r["memory"]) for r in sorted(memory.get_all(**scopes, limit=None)["results"],
                                                      key=lambda r: r["step"])]


def imported(steps: list[dict[str, Any]], path: Path) -> list[tuple[int, str]]:
    path.write_text(json.dumps(steps, default=str))
    return [(e["step"], e["text"]) for e in iter_transcript_events(path)]


def test_the_callback_stores_what_the_importer_reads_of_the_dumped_memory(adapter, tmp_path):
    """Each run of a leave assistant (two ToolCallingAgents and a CodeAgent, two or three runs with reset=False each),
    the callback given the ActionSteps alone as a list of step_callbacks: the system prompt and each run's task,
    which no callback is called for, are taken from the agent's memory, so the scope holds sam-data transcripts'
    memories of the same memory dumped, each once."""
    for n, (cid, steps) in enumerate(conversations(3, 0)):
        memory = ScopedMemory(HashingEncoder(16))
        agent = Agent([adapter.SAMStepCallback(memory, user_id="emp", run_id=cid)])
        prompt, each = runs(steps)
        for i, run in enumerate(each):
            agent.run(prompt, run, reset=i == 0)
        dumped = [agent.memory.system_prompt.d, *(s.d for s in agent.memory.steps)]
        assert dumped == steps
        assert listed(memory, user_id="emp", run_id=cid) == imported(steps, tmp_path / f"{n}.json")


def test_registered_for_every_kind_of_step_each_is_added_once(adapter, tmp_path):
    """A dict of step_callbacks registering the callback for planning, action and final answer steps (each called
    before its step joins the memory, the final answer never): a plan is read as the reader reads it, the final
    answer step is not added, nothing twice; a run with reset=True starts a new list of steps, added from its task."""
    cid, steps = conversations(1, 1)[0]
    prompt, each = runs(steps)
    plan = {"plan": "1. look up the balance\n2. book the leave", "model_output_message": None, "timing": {},
            "token_usage": None}
    first = [each[0][0], plan, *each[0][1:]]
    memory = ScopedMemory(HashingEncoder(16))
    callback = adapter.SAMStepCallback(memory, user_id="emp")
    agent = Agent({"planning": callback, "action": callback, "final": callback})
    agent.run(prompt, first, reset=True)
    agent.run(prompt, each[1], reset=True)
    want = [{"system_prompt": prompt}, *first, *each[1]]
    assert listed(memory, user_id="emp") == imported(want, tmp_path / "m.json")
    assert any(text.startswith("1. look up the balance") for _, text in listed(memory, user_id="emp"))


def test_one_callback_given_to_two_agents_adds_each_step_once(adapter, tmp_path):
    """One callback in two agents' step_callbacks (a manager's and its managed agent's, or a pool of agents made
    with one list): each agent's memory is read on from where the callback left it, not from its start again when
    the other agent's step came between (it stored the other agent's earlier runs again each time)."""
    (_, first), (_, second) = conversations(2, 0)
    memory = ScopedMemory(HashingEncoder(16))
    callback = adapter.SAMStepCallback(memory, user_id="emp")
    one, two = Agent([callback]), Agent([callback])
    (prompt1, runs1), (prompt2, runs2) = runs(first), runs(second)
    one.run(prompt1, runs1[0], reset=True)
    two.run(prompt2, runs2[0], reset=True)
    one.run(prompt1, runs1[1], reset=False)
    first_run = imported([first[0], *runs1[0]], tmp_path / "a.json")
    both_runs = imported([first[0], *runs1[0], *runs1[1]], tmp_path / "a2.json")
    want = [*first_run, *imported([second[0], *runs2[0]], tmp_path / "b.json"), *both_runs[len(first_run):]]
    assert [text for _, text in listed(memory, user_id="emp")] == [text for _, text in want]


def test_a_step_longer_than_a_memory_is_stored_cut_and_the_run_goes_on(adapter, tmp_path, caplog):
    """A tool's output past MAX_TEXT_CHARS (a web page read whole): ScopedMemory refuses such a message, and the
    refusal, raised in the agent's step, ended its run and stored none of its later steps. It is stored cut as
    ``sam-data transcripts --result-limit 90000`` cuts it (its first characters and the count left out), said in a
    warning, and the steps after it are stored."""
    cid, steps = conversations(1, 0)[0]
    at = next(i for i, s in enumerate(steps) if s.get("observations"))
    page = " ".join(f"w{i}" for i in range(30_000))
    steps = [*steps[:at], {**steps[at], "observations": page}, *steps[at + 1:]]
    memory = ScopedMemory(HashingEncoder(16))
    agent = Agent([adapter.SAMStepCallback(memory, user_id="emp")])
    prompt, each = runs(steps)
    with caplog.at_level("WARNING", logger=MODULE):
        for i, run in enumerate(each):
            agent.run(prompt, run, reset=i == 0)
    path = tmp_path / "m.json"
    path.write_text(json.dumps(steps))
    want = [(e["step"], e["text"]) for e in iter_transcript_events(path, result_limit=CUT_AT)]
    assert listed(memory, user_id="emp") == want
    assert f"{len(page):,} characters" in caplog.text


def test_a_callback_after_it_that_changes_the_step_is_said(adapter, caplog):
    """Each step is read once, when the callback is called: what a callback after it writes into the step (a
    browser agent's screenshot callback adding the page's URL to its observations) is in the dumped memory but not
    stored, and nothing said so. The next call finds the step changed and says to give the callback last."""
    cid, steps = conversations(1, 0)[0]
    prompt, each = runs(steps)

    def url(step: Step, agent: Any) -> None:
        step.d = {**step.d, "observations": f"{step.d.get('observations') or ''}\nCurrent url: https://hr.example"}

    for order, warned in (([None, url], True), ([url, None], False)):
        memory = ScopedMemory(HashingEncoder(16))
        callback = adapter.SAMStepCallback(memory, user_id="emp")
        agent = Agent([callback if c is None else c for c in order])
        caplog.clear()
        with caplog.at_level("WARNING", logger=MODULE):
            agent.run(prompt, each[0], reset=True)
        assert ("give SAMStepCallback last in step_callbacks" in caplog.text) is warned, caplog.text
        stored = " ".join(text for _, text in listed(memory, user_id="emp"))
        assert ("Current url" in stored) is not warned


def test_called_without_the_agent_it_adds_the_step_alone(adapter):
    """A callback of smolagents before it passed the agent (or called by hand) gets the step alone: it is added as
    the reader reads it, once each call."""
    cid, steps = conversations(1, 0)[0]
    memory = ScopedMemory(HashingEncoder(16))
    callback = adapter.SAMStepCallback(memory, user_id="emp")
    memory.add([{"task": steps[1]["task"]}], user_id="emp")
    callback(Step(steps[2], "action"))
    got = listed(memory, user_id="emp")
    assert got[0] == (0, steps[1]["task"]) and len(got) > 1
    assert all("ignored" not in text for _, text in got)  # the step's model input is no memory


def test_the_recall_tool_searches_its_scopes_by_the_live_state(adapter):
    store = ScopedMemory(HashingEncoder(64))
    mia, ola = ({"user_id": u, "agent_id": "hr-leave"} for u in ("mia", "ola"))
    store.add("Mia's employee id is EMP-40213", **mia)
    store.add("Ola's employee id is EMP-77001", **ola)
    tool = adapter.SAMRecallTool(store, **mia, k=3)
    assert tool.name == "recall_memory" and set(tool.inputs) == {"query"} and tool.output_type == "string"
    said = tool(query="which employee id?")
    assert said == "[1 memory recalled by SAM]\n1. Mia's employee id is EMP-40213", said
    assert [h["memory"] for h in tool.search("employee id")] == ["Mia's employee id is EMP-40213"]
    assert adapter.SAMRecallTool(store, user_id="noa")(query="employee id") == adapter.NOTHING
    with pytest.raises(ValueError, match="needs a scope"):
        adapter.SAMRecallTool(store)
    with pytest.raises(ValueError, match="needs a scope"):
        adapter.SAMStepCallback(store)


def _action(n: int, calls: list[tuple[str, dict[str, Any]]], observations: str, code: str | None = None
            ) -> dict[str, Any]:
    """An ActionStep's dict as smolagents 1.26 writes it: a ToolCallingAgent's ``calls``, or a CodeAgent's ``code``
    (its one python_interpreter call)."""
    made = [{"id": f"call_{n}_{i}", "type": "function", "function": {"name": name, "arguments": args}}
            for i, (name, args) in enumerate(calls)] if code is None else [
        {"id": f"call_{n}", "type": "function", "function": {"name": "python_interpreter", "arguments": code}}]
    return {"step_number": n, "model_output": "Thought: ...", "tool_calls": made, "observations": observations,
            "error": None, "code_action": code, "action_output": None, "is_final_answer": False, **TIMING}


TIMING = {"start_time": 0.0, "end_time": 1.0, "duration": 1.0, "timing": {}, "token_usage": None,
          "observations_images": None, "model_output_message": None}


@pytest.mark.parametrize("kind", ["tool_calling", "code"])
def test_a_recall_is_stored_as_its_call_and_a_marker_not_as_the_memories_again(adapter, tmp_path, kind):
    """The recall tool's output is the store's memories: stored as the step's observation, each recall copied them
    under a new step (a memory recalled each run stored once more each run, in the bank and its training data).
    The call is stored and its result as a marker saying how many were recalled; the step's other output (a
    CodeAgent's other prints) is stored as it was."""
    store = ScopedMemory(HashingEncoder(64))
    scopes = {"user_id": "mia", "agent_id": "hr-leave"}
    store.add("Mia's employee id is EMP-40213", **scopes)
    store.add("Mia's manager is r.okafor", **scopes)
    tool = adapter.SAMRecallTool(store, **scopes)
    agent = Agent([adapter.SAMStepCallback(store, **scopes)])
    said = tool(query="employee id")
    assert "EMP-40213" in said and "r.okafor" in said, said
    if kind == "code":
        seen = f"Execution logs:\n{said}\nbalance: 12 days\nLast output from code snippet:\nNone"
        step = _action(1, [], seen, 'print(recall_memory(query="employee id"))\nprint("balance: 12 days")')
    else:
        step = _action(1, [("recall_memory", {"query": "employee id"})], said)
    agent.run("You are an HR assistant.", [{"task": "Book my leave", "task_images": None}, step], reset=True)
    texts = [text for _, text in listed(store, **scopes)]
    assert sum("EMP-40213" in t for t in texts) == 1 and sum("r.okafor" in t for t in texts) == 1, texts
    assert "CALL recall_memory(query=employee id)" in texts, texts
    marked = [t for t in texts if "[2 memories recalled: stored already]" in t]
    assert len(marked) == 1 and marked[0].startswith("recall_memory: "), texts
    assert ("balance: 12 days" in marked[0]) is (kind == "code"), marked
    want = {**step, "observations": step["observations"].replace(said, "[2 memories recalled: stored already]")}
    assert listed(store, **scopes)[2:] == [(s + 2, t) for s, t in imported(
        [{"system_prompt": "You are an HR assistant."}, {"task": "Book my leave", "task_images": None}, want],
        tmp_path / "m.json")]


def test_only_a_recall_the_callbacks_user_could_be_given_is_left_out(adapter):
    """A recall of another store (not this store's memories) or of another user of the same store (what it gave says
    nothing in this user's scope) is stored as it is, and "No memories found." (no memory's copy) too. A shared
    tool's recall (no user's memories) is stored as it is in a user's scope, where no search of hers finds those
    memories (it was left out, lost from her scope; the shared tool never reads her copy), and left out by a
    callback of no user's, whose scope holds them."""
    store, other = ScopedMemory(HashingEncoder(64)), ScopedMemory(HashingEncoder(64))
    other.add("Ola's employee id is EMP-77001", user_id="ola")
    store.add("Ola's badge is B-12", user_id="ola")
    store.add("badges are renewed in May", agent_id="hr")
    elsewhere = adapter.SAMRecallTool(other, user_id="ola")(query="employee id")
    olas = adapter.SAMRecallTool(store, user_id="ola")(query="badge")
    shared_tool = adapter.SAMRecallTool(store, agent_id="hr")
    shared_tool.name = "recall_shared"  # beside the user's recall_memory (smolagents wants the names unique)
    shared = shared_tool(query="badge")
    none = adapter.SAMRecallTool(store, user_id="mia")(query="employee id")
    assert none == adapter.NOTHING and "B-12" in olas and "May" in shared
    agent = Agent([adapter.SAMStepCallback(store, user_id="mia", agent_id="hr")])  # the shared tool's agent
    agent.run("You are an HR assistant.", [{"task": "Book my leave", "task_images": None},
                                           _action(1, [("other_recall", {"query": "id"})], elsewhere),
                                           _action(2, [("recall_memory", {"query": "id"})], none),
                                           _action(3, [("lookup", {"query": "badge"})], olas),
                                           _action(4, [("recall_shared", {"query": "badge"})], shared)], reset=True)
    texts = [text for _, text in listed(store, user_id="mia")]
    assert f"other_recall: {elsewhere}" in texts and f"recall_memory: {adapter.NOTHING}" in texts, texts
    assert f"lookup: {olas}" in texts, texts
    assert f"recall_shared: {shared}" in texts, texts
    agent = Agent([adapter.SAMStepCallback(store, agent_id="hr")])  # the shared tool's own scope
    agent.run("You are an HR assistant.", [{"task": "When are badges renewed?", "task_images": None},
                                           _action(1, [("recall_shared", {"query": "badge"})], shared)], reset=True)
    texts = [text for _, text in listed(store, agent_id="hr", filters={"user_id": {"eq": None}})]
    assert "recall_shared: [1 memory recalled: stored already]" in texts and "May" not in "".join(texts[1:]), texts


def test_a_recalls_text_inside_a_line_of_other_output_is_stored_as_it_is(adapter):
    """A recall's text is its own lines in a step's output (a ToolCallingAgent's result, a CodeAgent's print of it):
    the same words inside a line of a genuine tool's output ("11. Mia took 3 days in March") are that tool's, and
    replaced by the marker they were lost from the store (matched as a substring, they were)."""
    store = ScopedMemory(HashingEncoder(64))
    store.add("Mia took 3 days", user_id="mia")
    said = adapter.SAMRecallTool(store, user_id="mia", k=1)(query="days taken")
    assert said == "[1 memory recalled by SAM]\n1. Mia took 3 days", said  # its head: what the reader knows it by
    log = "Leave log:\n11. Mia took 3 days in March\n12. Mia took 1. Mia took 3 days"
    agent = Agent([adapter.SAMStepCallback(store, user_id="mia")])
    agent.run("You are an HR assistant.", [{"task": "Book my leave", "task_images": None},
                                           _action(1, [("recall_memory", {"query": "days taken"})], said),
                                           _action(2, [("leave_log", {})], log)], reset=True)
    texts = [text for _, text in listed(store, user_id="mia")]
    assert "recall_memory: [1 memory recalled: stored already]" in texts, texts
    assert f"leave_log: {log}" in texts, texts


def test_other_users_recalls_between_do_not_make_a_users_recall_stored_again(adapter):
    """A store serving many users keeps each user's recent recalls: the 64 recalls of the whole store it kept were
    pushed out by other users' recalls made while one user's step ran (a managed agent's run, a slow tool beside the
    recall), and that user's recall was stored again. What is kept stays bounded however many users recall."""
    store = ScopedMemory(HashingEncoder(64))
    for user in ("mia", *(f"user{i}" for i in range(80))):
        store.add(f"{user}'s employee id is EMP-{len(user)}", user_id=user)
    said = adapter.SAMRecallTool(store, user_id="mia")(query="employee id")
    for i in range(80):  # other users' agents recalling while mia's step runs
        adapter.SAMRecallTool(store, user_id=f"user{i}")(query="employee id")
    agent = Agent([adapter.SAMStepCallback(store, user_id="mia")])
    agent.run("You are an HR assistant.", [{"task": "Book my leave", "task_images": None},
                                           _action(1, [("recall_memory", {"query": "id"})], said)], reset=True)
    texts = [text for _, text in listed(store, user_id="mia")]
    assert "recall_memory: [1 memory recalled: stored already]" in texts, texts
    for i in range(adapter.USERS + 10):
        adapter._recalled(store, f"u{i}", "[1 memory recalled by SAM]\n1. x",
                          [{"memory": "x", "user_id": f"u{i}", "agent_id": None, "run_id": None}], "recall_memory")
    assert len(adapter._recalls[store]) == adapter.USERS and "mia" not in adapter._recalls[store]


def test_a_shared_tools_recall_for_one_user_leaves_another_users_tool_output_whole(adapter):
    """A shared recall tool (no user's memories) serves every user's agent: what it gave ola's agent is left out of
    a step of mia's only where mia's step called it. A tool of mia's giving the same lines ("1. Refunds take 5 days",
    a policy list) was replaced by the marker in mia's scope, where no search of hers finds the shared memory: her
    tool's words lost by what another user's agent did."""
    store = ScopedMemory(HashingEncoder(64))
    store.add("Refunds take 5 days", agent_id="faq")
    shared = adapter.SAMRecallTool(store, agent_id="faq", k=1)
    shared.name = "recall_faq"  # beside a user's recall_memory: smolagents wants the names of an agent's tools unique
    said = shared(query="refund")  # ola's agent's call
    assert said == "[1 memory recalled by SAM]\n1. Refunds take 5 days", said
    agent = Agent([adapter.SAMStepCallback(store, user_id="mia", agent_id="faq")])
    agent.run("You are a shop assistant.", [{"task": "How long do refunds take?", "task_images": None},
                                            _action(1, [("policy", {"topic": "refunds"})], said),
                                            _action(2, [("recall_faq", {"query": "refund"})], shared(query="refund"))],
              reset=True)
    texts = [text for _, text in listed(store, user_id="mia")]
    assert f"policy: {said}" in texts, texts
    assert f"recall_faq: {said}" in texts, texts  # the shared memory is news in her scope: stored as it is


def test_a_users_recall_is_left_out_only_where_a_step_called_it_or_a_managed_agent(adapter):
    """The user's own recall is left out of the step that called the recall tool, or a managed agent quoting it in
    its answer; a later tool of the user's giving the same lines ("1. Mia took 3 days", a numbered log) is that
    tool's output, stored as it is (it was replaced by the marker, its words lost)."""
    store = ScopedMemory(HashingEncoder(64))
    store.add("Mia took 3 days", user_id="mia")
    tool = adapter.SAMRecallTool(store, user_id="mia", k=1)
    said = tool(query="days taken")
    agent = Agent([adapter.SAMStepCallback(store, user_id="mia")])
    agent.managed_agents = {"hr_helper": object()}
    answer = f"Here is the final answer from your managed agent 'hr_helper':\n{said}"
    agent.run("You are an HR assistant.", [{"task": "Book my leave", "task_images": None},
                                           _action(1, [("recall_memory", {"query": "days taken"})], said),
                                           _action(2, [("leave_log", {})], said),
                                           _action(3, [("hr_helper", {"task": "days taken"})], answer)], reset=True)
    texts = [text for _, text in listed(store, user_id="mia")]
    assert "recall_memory: [1 memory recalled: stored already]" in texts, texts
    assert f"leave_log: {said}" in texts, texts
    assert "hr_helper: Here is the final answer from your managed agent 'hr_helper':\n[1 memory recalled: stored " \
           "already]" in texts, texts


def test_a_recall_is_left_out_exactly_where_the_callbacks_scopes_find_its_memories(adapter):
    """A recall is left out where a search of the callback's scopes finds each memory it returned, whatever the
    tool's scopes. Kept by the tool's scopes, a user-wide tool's recall of Mia's hr memories in a step of her shop
    agent was left out, where no shop search finds them (her hr facts lost from that scope), and her hr tool's recall
    in a step of her user-wide callback stored again, found twice by her searches. A recall of both is stored as the
    marker of those the scope holds and the others' lines, as the recall numbered them."""
    def stored(tool: dict[str, str], scopes: dict[str, str], query: str, k: int = 1) -> tuple[str, list[str]]:
        store = ScopedMemory(HashingEncoder(64))  # a store each: its recalls of the same lines kept apart
        store.add("Mia's manager is r.okafor", user_id="mia", agent_id="hr", run_id="r0")
        store.add("Mia's shop order is SO-7", user_id="mia", agent_id="shop")
        said = adapter.SAMRecallTool(store, user_id="mia", k=k, **tool)(query=query)
        agent = Agent([adapter.SAMStepCallback(store, user_id="mia", **scopes)])
        agent.run("You are an assistant.", [{"task": "What do I know?", "task_images": None},
                                            _action(1, [("recall_memory", {"query": query})], said)], reset=True)
        return said, [text for _, text in listed(store, user_id="mia", **scopes)]

    marker = "recall_memory: [1 memory recalled: stored already]"
    for tool, scopes in (({}, {"agent_id": "shop"}),  # a user-wide tool's recall of her hr memory in the shop scope
                         ({"agent_id": "hr"}, {"agent_id": "shop"}),  # another agent of hers
                         ({"agent_id": "hr"}, {"agent_id": "hr", "run_id": "r2"}),  # another run of the agent
                         ({"agent_id": "hr", "run_id": "r0"}, {"agent_id": "hr", "run_id": "r1"})):
        said, texts = stored(tool, scopes, "manager")
        assert "r.okafor" in said and f"recall_memory: {said}" in texts and marker not in texts, (tool, texts)
    for tool, scopes in (({"agent_id": "hr"}, {}),  # her hr tool's recall in a step of her user-wide callback
                         ({"agent_id": "hr", "run_id": "r0"}, {"agent_id": "hr"}),
                         ({}, {"agent_id": "hr", "run_id": "r0"})):  # a user-wide tool's recall of the run's memory
        said, texts = stored(tool, scopes, "manager")
        assert "r.okafor" in said and marker in texts and f"recall_memory: {said}" not in texts, (tool, texts)
        assert sum("r.okafor" in t for t in texts) == 1, texts  # the memory itself, found once
    said, texts = stored({}, {"agent_id": "shop"}, "Mia's manager shop order", k=2)  # one of each
    hr, shop = (line for line in said.split("\n")[1:])
    hr, shop = (hr, shop) if "okafor" in hr else (shop, hr)
    assert f"{marker}\n{hr}" in texts, texts  # the hr memory kept under its number, the shop one left out
    assert sum("SO-7" in t for t in texts) == 1, texts


@pytest.mark.parametrize("make", ["SAMStepCallback", "SAMRecallTool"])
@pytest.mark.parametrize(("given", "named"), [({"user_id": "", "agent_id": "hr"}, "user_id"),
                                              ({"user_id": "mia", "run_id": "a/b"}, "run_id"),
                                              ({"user_id": 7}, "user_id"),
                                              ({"user_id": "mia", "k": 0}, "k")])
def test_a_bad_scope_or_k_is_refused_when_made(adapter, make, given, named):
    """A scope ScopedMemory refuses (an empty string, a '/', a number) or a k out of range was taken when made and
    refused at the first step (the callback's ValueError ending the agent's run) or call of the tool (its error
    said to the model, "limit must be ...", a name the developer never gave): now refused when made, naming it."""
    if named == "k" and make == "SAMStepCallback":
        pytest.skip("a callback takes no k")
    with pytest.raises(ValueError, match=f"^{named} "):
        getattr(adapter, make)(ScopedMemory(HashingEncoder(16)), **given)


def test_the_recall_tool_numbers_each_memory_of_several_lines_once(adapter):
    """A memory of several lines (a tool's output printed over lines, a list) was written as is: its later lines
    read as memories of their own, unnumbered, and a line "2. ..." inside one as the second memory. Its lines after
    the first are indented under its number, so that each line at the margin opens a memory."""
    store = ScopedMemory(HashingEncoder(64))
    store.add("Holidays in August:\n2. 15 August (Assumption)\n3. none else", user_id="mia")
    store.add("Mia's manager is r.okafor", user_id="mia")
    said = adapter.SAMRecallTool(store, user_id="mia")(query="holidays in August")
    opening = [line for line in said.splitlines()[1:] if not line.startswith(" ")]  # after its head
    assert [line.split(".", 1)[0] for line in opening] == ["1", "2"], said
    assert "   2. 15 August (Assumption)" in said.splitlines()


def test_a_tool_of_no_user_reads_no_users_memories(adapter):
    """Scopes are filters: a search of agent_id="hr-leave" alone matched every user's memories with that agent
    (sam_model.integrations.autogen's leak). The agent's own tool, made without user_id, reads only memories of no
    user; a user's tool reads hers and not the agent's shared ones of no user."""
    store = ScopedMemory(HashingEncoder(64))
    store.add("Mia's card number ends in 4242", user_id="mia", agent_id="hr-leave")
    store.add("a card reader is reset by unplugging it", agent_id="hr-leave")
    shared = adapter.SAMRecallTool(store, agent_id="hr-leave")
    assert shared(query="which card number?") == "[1 memory recalled by SAM]\n1. a card reader is reset by unplugging it"
    mine = adapter.SAMRecallTool(store, user_id="mia", agent_id="hr-leave")
    assert mine(query="which card number?") == "[1 memory recalled by SAM]\n1. Mia's card number ends in 4242"


def test_without_smolagents_the_import_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "smolagents", None)  # as if not installed
    monkeypatch.delitem(sys.modules, MODULE, raising=False)
    with pytest.raises(ImportError, match="pip install smolagents"):
        importlib.import_module(MODULE)
    sys.modules.pop(MODULE, None)


def test_a_smolagents_without_agent_memory_is_refused_at_the_import(monkeypatch):
    """smolagents before 1.8 keeps no ``agent.memory`` (it had ``agent.logs``) and writes no ``step.dict()``: the
    import went through, and the callback's first step ended the agent's run with an AttributeError. Refused at the
    import, in one line naming the version found and what to install."""
    old = _fake_smolagents()
    del old.AgentMemory
    old.__version__ = "1.7.0"
    monkeypatch.setitem(sys.modules, "smolagents", old)
    monkeypatch.delitem(sys.modules, MODULE, raising=False)
    with pytest.raises(ImportError, match=r"needs smolagents 1\.8 or later \(found 1\.7\.0.*pip install -U smolagents"):
        importlib.import_module(MODULE)
    sys.modules.pop(MODULE, None)


def test_a_smolagents_writing_its_steps_otherwise_is_named_at_the_first_step(adapter):
    """A smolagents whose ActionStep.dict() writes keys the reader reads in no version (neither 1.19+'s
    "step_number" nor 1.8-1.18's "step"): the reader's refusal named the keys and the format expected, not that
    smolagents is the cause. The first step's error names the version found and what to install; nothing is
    stored."""
    memory = ScopedMemory(HashingEncoder(16))
    agent = Agent([adapter.SAMStepCallback(memory, user_id="emp")])
    other = {"tool_calls": [], "start_time": 0.0, "end_time": 1.0, "index": 1, "error": None, "duration": 1.0,
             "model_output": "Thought: ...", "observations": "ok", "action_output": None}
    found = re.escape(adapter.smolagents.__version__)  # the stand-in's 1.26.0, or the smolagents installed
    with pytest.raises(ValueError, match=rf"smolagents {found} writes its Step with the keys tool_calls, start_time.*"
                                         r"pip install -U smolagents$"):
        agent.run("You are an HR assistant.", [{"task": "Book my leave", "task_images": None}, other], reset=True)
    assert memory.get_all(user_id="emp")["results"] == []


def test_a_step_of_smolagents_1_8_to_1_18_is_stored(adapter):
    """smolagents 1.8-1.18 number an ActionStep as "step" (1.19 renamed it "step_number"); the reader reads those
    memories, so the callback stores such a step's observation as it does 1.26's."""
    memory = ScopedMemory(HashingEncoder(16))
    agent = Agent([adapter.SAMStepCallback(memory, user_id="emp")])
    old = {"tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get_balance",
                                                                          "arguments": {"employee": "emp-7"}}}],
           "start_time": 0.0, "end_time": 1.0, "step": 1, "error": None, "duration": 1.0,
           "model_output": "Thought: ...", "observations": "balance of emp-7: 12 days", "action_output": None}
    agent.run("You are an HR assistant.", [{"task": "Book my leave", "task_images": None}, old], reset=True)
    texts = [m["memory"] for m in memory.get_all(user_id="emp")["results"]]
    assert any("balance of emp-7: 12 days" in t for t in texts), texts


def test_the_core_package_never_imports_smolagents():
    code = ("import sys, sam_model, sam_model.memory, sam_model.data.formats.files, sam_model.integrations; "
            "print(sorted(m for m in sys.modules if m.startswith(('smolagents', 'sam_model.integrations.smolagents'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]", out


def _scripted():
    """tests/fixtures/smolagents_scripted.py (its Scripted model and get_user tool), loaded by path."""
    spec = importlib.util.spec_from_file_location("smolagents_scripted", FIXTURE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("kind", ["tool_calling", "code"])
def test_a_real_agent_stores_its_steps_and_recalls_its_users_memories(kind, tmp_path):
    """A real smolagents agent (a scripted model, no network) given the callback and the tool: it calls
    recall_memory, which returns the user's memory (not another user's), and its scope holds what sam-data
    transcripts reads of its memory dumped afterwards."""
    smolagents = pytest.importorskip("smolagents", reason="smolagents is not installed (pip install smolagents): the "
                                                          "stand-in above checks the adapter without it")
    from sam_model.integrations.smolagents import SAMRecallTool, SAMStepCallback

    fixture = _scripted()
    store = ScopedMemory(HashingEncoder(64))
    scopes = {"user_id": "ann", "agent_id": "hr"}
    store.add("Ann's manager is m.chen", **scopes)  # an earlier run's
    store.add("Ola's manager is r.okafor", user_id="ola", agent_id="hr")
    if kind == "code":
        model = fixture.Scripted([
            'Thought: look the user up.\n<code>\nuser = get_user("ann_lee_123")\nprint(user)\n</code>',
            'Thought: recall the manager.\n<code>\nprint(recall_memory(query="manager"))\n</code>',
            'Thought: answer.\n<code>\nfinal_answer("Your manager is m.chen.")\n</code>'])
        make = smolagents.CodeAgent
    else:
        model = fixture.Scripted([
            ("I will look you up.", [("get_user", {"user_id": "ann_lee_123"})]),
            ("Let me recall your manager.", [("recall_memory", {"query": "manager"})]),
            ("", [("final_answer", {"answer": "Your manager is m.chen."})])])
        make = smolagents.ToolCallingAgent
    agent = make(tools=[fixture.get_user, SAMRecallTool(store, **scopes)], model=model, max_steps=4,
                 step_callbacks=[SAMStepCallback(store, **scopes)], verbosity_level=0)
    assert agent.run("Hi, my user id is ann_lee_123. Who is my manager?") == "Your manager is m.chen."
    recalled = agent.memory.steps[2].observations
    assert "m.chen" in recalled and "r.okafor" not in recalled, recalled
    # the recall's output (a CodeAgent's printed in its logs) is stored as a marker, the memories not again
    said = recalled.removeprefix("Execution logs:\n").split("\nLast output from code snippet:", 1)[0].strip()
    marker = f"[{len(re.findall(r'^[0-9]+[.] ', said, re.MULTILINE))} memories recalled: stored already]"
    steps = [agent.memory.system_prompt.dict(), *agent.memory.get_succinct_steps()]
    steps[3] = {**steps[3], "observations": steps[3]["observations"].replace(said, marker)}
    got = listed(store, **scopes)
    assert got[0] == (0, "Ann's manager is m.chen")
    assert got[1:] == [(step + 1, text) for step, text in imported(steps, tmp_path / "m.json")], got
    assert not [text for _, text in got[1:] if "Ann's manager is m.chen" in text], got


@pytest.mark.parametrize("kind", ["tool_calling", "code"])
@pytest.mark.parametrize(("tool", "scopes", "left_out"), [({}, {"agent_id": "shop"}, False),
                                                          ({"agent_id": "hr"}, {}, True)])
def test_a_real_agents_recall_is_left_out_where_the_callbacks_scopes_find_it(kind, tool, scopes, left_out):
    """A real agent's recall of Ann's hr memory: by a user-wide tool in her shop agent's steps, stored as it is (left
    out, the shop scope lost it); by her hr tool in a step of her user-wide callback, left out (stored again, her
    searches found it twice)."""
    smolagents = pytest.importorskip("smolagents", reason="smolagents is not installed (pip install smolagents): the "
                                                          "stand-in above checks the adapter without it")
    from sam_model.integrations.smolagents import SAMRecallTool, SAMStepCallback

    fixture = _scripted()
    store = ScopedMemory(HashingEncoder(64))
    store.add("Ann's manager is m.chen", user_id="ann", agent_id="hr")
    if kind == "code":
        model = fixture.Scripted(['Thought: recall.\n<code>\nprint(recall_memory(query="manager"))\n</code>',
                                  'Thought: answer.\n<code>\nfinal_answer("m.chen")\n</code>'])
    else:
        model = fixture.Scripted([("Let me recall.", [("recall_memory", {"query": "manager"})]),
                                  ("", [("final_answer", {"answer": "m.chen"})])])
    make = smolagents.CodeAgent if kind == "code" else smolagents.ToolCallingAgent
    agent = make(tools=[SAMRecallTool(store, user_id="ann", **tool)], model=model, max_steps=3, verbosity_level=0,
                 step_callbacks=[SAMStepCallback(store, user_id="ann", **scopes)])
    assert agent.run("Who is my manager?") == "m.chen"
    texts = [text for _, text in listed(store, user_id="ann", **scopes)]
    assert any("[1 memory recalled: stored already]" in t for t in texts) is left_out, texts
    assert sum("manager is m.chen" in t for t in texts) == 1, texts  # once: neither lost nor twice


@pytest.mark.parametrize("kind", ["tool_calling", "code"])
def test_a_real_agents_dumped_memory_reads_its_recalls_as_the_marker(kind, tmp_path):
    """A real agent's memory dumped after a run with SAMRecallTool ([system_prompt, *get_succinct_steps()]), read by
    sam-data transcripts as it was written: its recall's memories were read as the tool's output (stored again
    under a new step each time the dump is read); they are read as the marker, and the dump reads as the callback
    stored the run."""
    smolagents = pytest.importorskip("smolagents", reason="smolagents is not installed (pip install smolagents)")
    from sam_model.integrations.smolagents import SAMRecallTool, SAMStepCallback

    fixture = _scripted()
    store, scopes = ScopedMemory(HashingEncoder(64)), {"user_id": "ann", "agent_id": "hr"}
    store.add("Ann's manager is m.chen", **scopes)
    if kind == "code":
        model = fixture.Scripted(['Thought: recall.\n<code>\nprint(recall_memory(query="manager"))\n</code>',
                                  'Thought: answer.\n<code>\nfinal_answer("Your manager is m.chen.")\n</code>'])
        make = smolagents.CodeAgent
    else:
        model = fixture.Scripted([("", [("recall_memory", {"query": "manager"})]),
                                  ("", [("final_answer", {"answer": "Your manager is m.chen."})])])
        make = smolagents.ToolCallingAgent
    agent = make(tools=[SAMRecallTool(store, **scopes)], model=model, max_steps=3, verbosity_level=0,
                 step_callbacks=[SAMStepCallback(store, **scopes)])
    assert agent.run("Who is my manager?") == "Your manager is m.chen."
    steps = [agent.memory.system_prompt.dict(), *agent.memory.get_succinct_steps()]
    assert "[1 memory recalled by SAM]\n1. Ann's manager is m.chen" in steps[2]["observations"]
    read = imported(steps, tmp_path / "m.json")
    assert not [text for _, text in read if "1. Ann's manager is m.chen" in text], read
    assert any("[1 memory recalled: stored already]" in text for _, text in read), read
    assert listed(store, **scopes)[1:] == [(step + 1, text) for step, text in read]


def test_a_manager_and_its_managed_agent_given_one_callback_store_each_step_once(tmp_path):
    """A real manager agent and its managed agent made with the same step_callbacks list: the managed agent's steps
    come between two of the manager's, and the manager's task and earlier steps were stored again after them."""
    smolagents = pytest.importorskip("smolagents", reason="smolagents is not installed (pip install smolagents)")
    from sam_model.integrations.smolagents import SAMStepCallback

    fixture = _scripted()
    store = ScopedMemory(HashingEncoder(64))
    callbacks = [SAMStepCallback(store, user_id="ann")]
    helper = smolagents.ToolCallingAgent(
        tools=[fixture.get_user], model=fixture.Scripted([("", [("get_user", {"user_id": "ann_lee_123"})]),
                                                          ("", [("final_answer", {"answer": "Ann, QX7Z9A"})])]),
        name="lookup", description="Looks a user up.", max_steps=3, step_callbacks=callbacks, verbosity_level=0)
    manager = smolagents.ToolCallingAgent(
        tools=[fixture.get_user], managed_agents=[helper], max_steps=4, step_callbacks=callbacks, verbosity_level=0,
        model=fixture.Scripted([("", [("get_user", {"user_id": "ann_lee_123"})]),
                                ("", [("lookup", {"task": "find ann_lee_123"})]),
                                ("", [("final_answer", {"answer": "You have QX7Z9A."})])]))
    assert manager.run("Which reservation do I have?") == "You have QX7Z9A."
    stored = [text for _, text in listed(store, user_id="ann")]
    dumps = [[a.memory.system_prompt.dict(), *a.memory.get_succinct_steps()] for a in (manager, helper)]
    texts = [text for n, steps in enumerate(dumps) for _, text in imported(steps, tmp_path / f"{n}.json")]
    assert sorted(stored) == sorted(texts), stored


def test_a_managed_agents_answer_quoting_its_recall_is_left_out_of_the_managers_step(tmp_path):
    """A real manager given the user's callback calls a managed agent whose answer is its recall of the user's
    memory: the manager's step stores the marker in its place, as the managed agent's own recall step does."""
    smolagents = pytest.importorskip("smolagents", reason="smolagents is not installed (pip install smolagents)")
    from sam_model.integrations.smolagents import SAMRecallTool, SAMStepCallback

    fixture = _scripted()
    store = ScopedMemory(HashingEncoder(64))
    store.add("Ann's manager is m.chen", user_id="ann")
    quoted = "[1 memory recalled by SAM]\n1. Ann's manager is m.chen"  # the recall's output, as it was
    callbacks = [SAMStepCallback(store, user_id="ann")]
    helper = smolagents.ToolCallingAgent(
        tools=[SAMRecallTool(store, user_id="ann", k=1)], name="hr", description="Knows the user's HR facts.",
        model=fixture.Scripted([("", [("recall_memory", {"query": "manager"})]),
                                ("", [("final_answer", {"answer": quoted})])]),
        max_steps=3, step_callbacks=callbacks, verbosity_level=0)
    manager = smolagents.ToolCallingAgent(
        tools=[], managed_agents=[helper], max_steps=3, step_callbacks=callbacks, verbosity_level=0,
        model=fixture.Scripted([("", [("hr", {"task": "who is the user's manager?"})]),
                                ("", [("final_answer", {"answer": "m.chen"})])]))
    assert manager.run("Who is my manager?") == "m.chen"
    assert quoted in manager.memory.steps[1].observations
    texts = [text for _, text in listed(store, user_id="ann")]
    assert [t for t in texts if t.startswith("hr: ")] == [
        manager.memory.steps[1].observations.replace(quoted, "[1 memory recalled: stored already]").join(["hr: ", ""])]
    assert "recall_memory: [1 memory recalled: stored already]" in texts, texts


def test_a_code_agent_step_added_alone_loses_what_earlier_code_bound():
    """What README says of a CodeAgent's steps added one at a time without the callback (ScopedMemory keeps no
    scope's earlier code to read the next step with): step.dict() holds the prompt it was given, so a positional
    literal is named, but a value an earlier step's code bound is left out of the call; a step without its model
    input (model_input_messages dropped) names a positional literal arg1 too. The callback reads each step with
    those before it: both are named and traced."""
    smolagents = pytest.importorskip("smolagents", reason="smolagents is not installed (pip install smolagents)")
    from sam_model.integrations.smolagents import SAMStepCallback

    fixture = _scripted()
    calls = {}
    for how in ("step.dict()", "without model input", "callback"):
        store = ScopedMemory(HashingEncoder(64))

        def add(step: Any, agent: Any, how: str = how, store: ScopedMemory = store) -> None:
            d = json.loads(json.dumps(step.dict(), default=str))
            if how == "without model input":
                d.pop("model_input_messages")
            store.add([d], user_id="ann")

        model = fixture.Scripted(['Thought: keep the id.\n<code>\nuid = "ann_lee_123"\nprint(uid)\n</code>',
                                  'Thought: look.\n<code>\nuser = get_user(uid)\nprint(get_user("ann_lee_123"))\n</code>',
                                  'Thought: answer.\n<code>\nfinal_answer("done")\n</code>'])
        callback = SAMStepCallback(store, user_id="ann") if how == "callback" else add
        agent = smolagents.CodeAgent(tools=[fixture.get_user], model=model, max_steps=4, step_callbacks=[callback],
                                     verbosity_level=0)
        agent.run("Who am I?")
        calls[how] = [t for _, t in listed(store, user_id="ann") if t.startswith("CALL get_user")]
    assert calls == {"step.dict()": ["CALL get_user()", "CALL get_user(user_id=ann_lee_123)"],
                     "without model input": ["CALL get_user()", "CALL get_user(arg1=ann_lee_123)"],
                     "callback": ["CALL get_user(user_id=ann_lee_123)", "CALL get_user(user_id=ann_lee_123)"]}, calls


def test_the_readme_snippet_runs_as_written_with_real_smolagents():
    """README's smolagents block (a plain fence: the README's tests run without smolagents) run as written, given
    the agent's own ``model`` (scripted) and ``get_leave_balance``: the agent recalls and its steps are stored."""
    pytest.importorskip("smolagents", reason="smolagents is not installed (pip install smolagents)")
    import docset
    from smolagents import tool

    readme = docset.text()  # README.md and docs/*.md: the passage may live in either
    start = readme.index("```\nfrom smolagents import ToolCallingAgent\n") + 4
    code = readme[start:readme.index("```", start)]
    fixture = _scripted()

    @tool
    def get_leave_balance(employee_id: str) -> str:
        """The days of annual leave an employee has left.

        Args:
            employee_id: the employee's id
        """
        return "12 days"

    model = fixture.Scripted([("", [("get_leave_balance", {"employee_id": "EMP-40213"})]),
                              ("", [("recall_memory", {"query": "leave balance"})]),
                              ("", [("final_answer", {"answer": "Booked."})])])
    names = {"model": model, "get_leave_balance": get_leave_balance}
    exec(compile(code, "README.md (smolagents)", "exec"), names)
    agent, memory, scopes = names["agent"], names["memory"], names["scopes"]
    assert "get_leave_balance: 12 days" in agent.memory.steps[2].observations
    stored = [r["memory"] for r in memory.get_all(**scopes, limit=None)["results"]]
    assert "Book my annual leave from 3 to 7 August" in stored and "get_leave_balance: 12 days" in stored


def test_a_recall_reaches_the_model_as_a_tool_turn_never_two_user_messages_in_a_row():
    """SAMRecallTool's recall is a tool's result, and the callback adds nothing to the prompt: the messages smolagents
    prepares for a model (Model._prepare_completion_kwargs, what TransformersModel hands the chat template: tool
    turns as the user's and assistant's, same-role neighbours merged) alternate user and assistant after the system
    prompt in each call, the recall inside a user turn of its own."""
    smolagents = pytest.importorskip("smolagents", reason="smolagents is not installed (pip install smolagents)")
    from sam_model.integrations.smolagents import SAMRecallTool, SAMStepCallback

    fixture = _scripted()
    sent: list[list[dict[str, Any]]] = []

    class Recording(fixture.Scripted):
        def generate(self, messages, stop_sequences=None, response_format=None, tools_to_call_from=None, **kw):
            sent.append(self._prepare_completion_kwargs(messages, stop_sequences=stop_sequences,
                                                        flatten_messages_as_text=True)["messages"])
            return super().generate(messages, stop_sequences, response_format, tools_to_call_from, **kw)

    store, scopes = ScopedMemory(HashingEncoder(64)), {"user_id": "ann", "agent_id": "hr"}
    store.add("Ann's manager is m.chen", **scopes)
    model = Recording([("", [("recall_memory", {"query": "manager"})]),
                       ("", [("final_answer", {"answer": "Your manager is m.chen."})])])
    agent = smolagents.ToolCallingAgent(tools=[SAMRecallTool(store, **scopes)], model=model, max_steps=3,
                                        verbosity_level=0, step_callbacks=[SAMStepCallback(store, **scopes)])
    assert agent.run("Who is my manager?") == "Your manager is m.chen."
    assert len(sent) == 2, sent
    for messages in sent:
        roles = [str(m["role"].value if hasattr(m["role"], "value") else m["role"]) for m in messages]
        assert roles[0] == "system" and all(a != b for a, b in zip(roles[1:], roles[2:])), roles
    recall = [m for m in sent[1] if "recalled by SAM" in str(m["content"])]
    assert len(recall) == 1 and str(recall[0]["role"].value if hasattr(recall[0]["role"], "value") else
                                    recall[0]["role"]) == "user", sent[1]
