"""A walkthrough of the README as a team whose IT helpdesk assistant is a Microsoft AutoGen ``AssistantAgent``, its
conversations kept as AutoGen saves them (``json.dump(await agent.save_state(), f)``, one ``.json`` a conversation,
or a team's ``TeamState``). No reader took them: a folder of them was "not an OpenHands trajectory", one file
"expected ... a conversation {"id": ..., "messages": [...]}", a ``.jsonl`` of the model context's messages "message
without 'role'" and ``sam-data validate`` named no reader; a search by the AssistantMessage about to call was "a tool
call with no tool name", and ``memory.add(state)`` was refused as "item 0 ... without 'kind'" (its JSON text stored
whole as one memory). The logs are templated (tests/autogen_helpdesk.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from autogen_helpdesk import agent_state, conversations, team_state, write_folder, write_jsonl
from transcript_logs import added_whole_after_each_run, listed

from sam_model.data.formats import TranscriptFormatError, autogen, files, to_chat, tool_marks
from sam_model.data.toolstate import live_state
from sam_model.data.transcripts import ImportReport, iter_transcript_events, main
from sam_model.memory import HashingEncoder, ScopedMemory


def events(path: Path, **kw: Any) -> tuple[list[dict], ImportReport]:
    report = ImportReport()
    return list(iter_transcript_events(path, report=report, **kw)), report


def test_a_folder_of_saved_states_converts_as_the_jsonl_of_their_messages(tmp_path, capsys):
    write_folder(tmp_path / "states", 9, 0)
    write_jsonl(tmp_path / "chats.jsonl", 9, 0)
    folder, report = events(tmp_path / "states")
    assert report.formats == {"autogen": 9} and report.conversations == 9
    assert sum("useful_memory_steps" in e for e in folder) >= 25
    lines, report = events(tmp_path / "chats.jsonl")
    assert report.formats == {"autogen": 9} and folder == lines  # the files are named by the conversations' ids
    one, _ = events(tmp_path / "states" / "s0-helpdesk-004.json")
    assert one == [e for e in lines if e["episode_id"] == "s0-helpdesk-004"]
    assert main([str(tmp_path / "states"), str(tmp_path / "out.jsonl")]) == 0
    assert "formats: autogen 9" in capsys.readouterr().out


def test_the_runs_task_result_messages_read_as_the_saved_context(tmp_path, capsys):
    """What ``agent.run(task=...)`` returns, ``TaskResult.messages`` dumped (TextMessage, ThoughtEvent,
    ToolCallRequestEvent, ToolCallExecutionEvent, ToolCallSummaryMessage), the runs one after another: the same
    events as the saved model context (the summary, the results' text again, counted, not read). It was 'message
    without 'role''."""
    write_jsonl(tmp_path / "runs.jsonl", 9, 0, task_results=True)
    write_jsonl(tmp_path / "chats.jsonl", 9, 0)
    runs, report = events(tmp_path / "runs.jsonl")
    assert report.formats == {"autogen": 9} and report.ignored["ToolCallSummaryMessage"] > 0
    assert runs == events(tmp_path / "chats.jsonl")[0]
    _, messages = conversations(1, 0, task_results=True)[0]
    thought = next(i for i, m in enumerate(messages) if m["type"] == "ThoughtEvent")
    assert to_chat(messages[:thought + 1]).ignored == {"ThoughtEvent": 1}  # no call after it: a reasoning model's
    bad = json.loads(json.dumps(messages))
    del bad[1]["source"]
    with pytest.raises(TranscriptFormatError, match=r"^c, message 1: no 'source', expected the name"):
        to_chat(bad, "c", format="autogen")
    assert main([str(tmp_path / "runs.jsonl"), str(tmp_path / "o.jsonl"), "--format", "openai"]) != 0
    assert "ToolCallRequestEvent" in capsys.readouterr().err  # the wrong reader names the right one


def test_a_teams_state_reads_each_assistants_context(tmp_path):
    """``await team.save_state()``: one assistant's context is the conversation, named by the file; two assistants'
    are two conversations, named by the file and each one's name, in one group."""
    cid, messages = conversations(1, 2)[0]
    (tmp_path / "agent.json").write_text(json.dumps(agent_state(messages)))
    (tmp_path / "team.json").write_text(json.dumps(team_state(messages)))
    agent, _ = events(tmp_path / "agent.json")
    team, _ = events(tmp_path / "team.json")
    assert [{**e, "episode_id": "x"} for e in team] == [{**e, "episode_id": "x"} for e in agent] and agent
    state = team_state(messages)
    state["agent_states"]["triage"] = state["agent_states"]["helpdesk"]
    (tmp_path / "two.json").write_text(json.dumps(state))
    two, report = events(tmp_path / "two.json")
    assert report.conversations == 2 and {e["episode_id"] for e in two} == {"two_helpdesk", "two_triage"}
    state["agent_states"] = {"RoundRobinGroupChatManager": state["agent_states"]["RoundRobinGroupChatManager"]}
    (tmp_path / "none.json").write_text(json.dumps(state))
    with pytest.raises(TranscriptFormatError, match=r"none\.json: a TeamState whose agent_states hold no "
                                                    r"AssistantAgentState"):
        events(tmp_path / "none.json")


def test_sam_data_validate_a_wrong_format_and_a_state_a_line_name_the_reader(tmp_path, capsys):
    from sam_model.data.validate import main as validate_main

    write_folder(tmp_path / "states", 1, 0)
    path = tmp_path / "states" / "s0-helpdesk-000.json"
    assert validate_main([str(path)]) != 0
    assert "--format autogen" in capsys.readouterr().err
    chats = write_jsonl(tmp_path / "chats.jsonl", 2, 0)
    assert main([str(chats), str(tmp_path / "out.jsonl"), "--format", "openai"]) != 0
    assert "the autogen reader reads: try --format autogen" in capsys.readouterr().err
    lines = tmp_path / "states.jsonl"  # a state a line, as json.dumps(await agent.save_state()) + "\n" writes it
    lines.write_text(json.dumps(agent_state(conversations(1, 0)[0][1])) + "\n")
    assert main([str(lines), str(tmp_path / "out.jsonl")]) != 0
    err = capsys.readouterr().err
    assert "states.jsonl:1: an AutoGen save_state() written as a line without a conversation id" in err


def test_failed_results_thoughts_and_bad_fields():
    """``is_error`` flags the call as failed; a ``thought`` beside the calls is the assistant's words; a bad field is
    one line naming the message, the call or result and the field."""
    messages = next(m for _, m in conversations(30, 0) if any(
        r.get("is_error") for x in m if x["type"] == "FunctionExecutionResultMessage" for r in x["content"]))
    chat = to_chat(messages)
    assert [m["content"] for m in chat.messages if m.get("is_error")] == ["Error: priority must be one of P1, P2, P3, "
                                                                          "P4"]
    assert "Checking the device and the knowledge base together." in [m.get("content") for m in chat.messages]
    failed = next(i for i, m in enumerate(messages) if m["type"] == "FunctionExecutionResultMessage"
                  and m["content"][0]["is_error"])
    assert live_state(messages[:failed + 1], messages[failed + 1]["content"])["last_action_result"].startswith(
        "create_ticket: error")
    bad = json.loads(json.dumps(messages))
    bad[2]["content"][0]["call_id"] = ""
    with pytest.raises(TranscriptFormatError, match=r"^c, message 2, result 0: 'call_id' is \"\", expected"):
        to_chat(bad, "c", format="autogen")
    bad = json.loads(json.dumps(messages))
    bad[1]["type"] = "FunctionCallMessage"
    with pytest.raises(TranscriptFormatError, match=r"^c, message 1: 'type' is \"FunctionCallMessage\", expected "
                                                    "one of SystemMessage"):
        to_chat(bad, "c", format="autogen")


def test_a_system_message_is_no_langchain_mark_in_an_autogen_context():
    """AutoGen's SystemMessage type is a LangChain class name: in a context of AutoGen messages it is AutoGen's, not
    a LangChain message the autogen reader failed to read (a conversation without calls was refused so)."""
    messages = [{"content": "You are the helpdesk.", "type": "SystemMessage"},
                {"content": "hi", "source": "user", "type": "UserMessage"},
                {"content": "hello", "thought": None, "source": "a", "type": "AssistantMessage"}]
    assert tool_marks(messages) == []
    assert to_chat(messages).messages[0] == {"role": "system", "content": "You are the helpdesk."}


def test_live_adds_of_the_context_messages_store_the_importers_memories(tmp_path):
    """README: ``memory.add(messages)`` of the model context's messages as they come stores the importer's memories
    and states."""
    cid, messages = conversations(1, 3)[0]
    memory = ScopedMemory(HashingEncoder(16))
    for m in messages:
        memory.add([m], user_id="me", run_id="s")
    got = sorted(memory.get_all(user_id="me", run_id="s", limit=None)["results"], key=lambda r: r["step"])
    (tmp_path / "c.jsonl").write_text(json.dumps({"id": cid, "messages": messages}) + "\n")
    want, _ = events(tmp_path / "c.jsonl")
    assert [(r["step"], r["memory"]) for r in got] == [(e["step"], e["text"]) for e in want]
    decided = [(e["state"], e.get("useful_memory_steps") or []) for e in memory._trackers["me//s"].events]
    assert decided == [(e["state"], e.get("useful_memory_steps") or []) for e in want]


def test_a_search_by_the_assistant_message_about_to_call():
    """A search by the AssistantMessage about to call (or one of its FunctionCalls, or the ToolCallRequestEvent a run
    yields of them) ranks by that call's state: the message and the event were 'a tool call with no tool name'."""
    _, messages = conversations(1, 3)[0]
    last = max(i for i, m in enumerate(messages) if m["type"] == "AssistantMessage" and isinstance(m["content"], list))
    memory = ScopedMemory(HashingEncoder(16))
    memory.add(messages[:last], user_id="me", run_id="s")
    want = live_state(messages[:last], messages[last]["content"])
    assert want["uncertainty_flags"] == ["ticket_id"]
    assert memory.search("", call=messages[last], user_id="me", run_id="s", limit=3)["state"] == want
    assert memory.search("", call=messages[last]["content"][0], user_id="me", run_id="s", limit=3)["state"] == want
    _, run = conversations(1, 3, task_results=True)[0]
    request = [m for m in run if m["type"] == "ToolCallRequestEvent"][-1]  # the event a run yields of the same call
    assert request["content"] == messages[last]["content"]
    assert memory.search("", call=request, user_id="me", run_id="s", limit=3)["state"] == want


@pytest.mark.parametrize("as_text", [False, True])
def test_a_saved_state_given_to_add_is_refused_saying_what_to_give(as_text):
    """``memory.add(await agent.save_state())`` was refused as 'item 0 ... without kind', and its JSON text was
    stored whole as one memory."""
    state = agent_state(conversations(1, 0)[0][1])
    memory = ScopedMemory(HashingEncoder(16))
    with pytest.raises(ValueError, match=r"data is an AutoGen save_state\(\).*state\[\"llm_context\"\]\[\"messages\"\]"):
        memory.add(json.dumps(state) if as_text else state, user_id="me", run_id="s")
    assert memory.get_all(user_id="me", run_id="s", limit=None)["results"] == []


def test_the_whole_context_added_after_each_run_stores_each_message_once():
    """An agent that adds ``state["llm_context"]["messages"]`` whole after each run sends the earlier runs again: the
    call ids AutoGen writes once tell the last add sent again, read once (21 memories were stored 47 times)."""
    cid, messages = conversations(1, 3)[0]
    runs = [i for i, m in enumerate(messages) if m["type"] == "UserMessage"][1:] + [len(messages)]
    assert len(runs) == 3
    once, _ = added_whole_after_each_run(messages, [len(messages)])
    whole, result = added_whole_after_each_run(messages, runs)
    assert result["notes"] == [{"reason": f"data[0:{runs[1]}]: the scope's last add of AutoGen messages (told by "
                                          "their call ids), sent again: read once, not stored again"}]
    assert listed(whole) == listed(once) and len(listed(once)) == 21
    assert [e["state"] for e in whole._trackers["me//s"].events] == [e["state"] for e in once._trackers["me//s"].events]


@pytest.mark.parametrize("saved", [False, True])
def test_a_whole_context_sent_after_delete_all_keeps_the_deleted_runs_deleted(tmp_path, saved):
    """README "Deleting": the key of a scope's last adds stays when its memories are all deleted, for AutoGen
    messages as for Converse and Pydantic AI ones (the README named those two alone): the whole context added after
    the next run opens with the deleted run, read once, and only the new run is stored."""
    _, messages = conversations(1, 3)[0]
    first, second = [i for i, m in enumerate(messages) if m["type"] == "UserMessage"][1:3]
    memory = ScopedMemory(HashingEncoder(16))
    memory.add(messages[:first], user_id="me", run_id="s")
    memory.delete_all(user_id="me", run_id="s")
    if saved:
        memory = ScopedMemory.load(memory.save(tmp_path / "m"), HashingEncoder(16))
    out = memory.add(messages[:second], user_id="me", run_id="s")
    assert out["notes"][0]["reason"].startswith(f"data[0:{first}]: the scope's last add of AutoGen messages")
    fresh = ScopedMemory(HashingEncoder(16))
    fresh.add(messages[first:second], user_id="me", run_id="s")
    kept = [r["memory"] for r in memory.get_all(user_id="me", run_id="s", limit=None)["results"]]
    assert kept == [r["memory"] for r in fresh.get_all(user_id="me", run_id="s", limit=None)["results"]] and kept


def test_a_folder_of_no_runs_is_refused_in_one_sentence_naming_autogen_states(tmp_path):
    """The lead's merge of the AutoGen and Pydantic AI folder refusals left both sentences' ends in source_kind's
    message ("... in it; files (.jsonl) nor OTLP JSON files ... in it; give ...")."""
    from sam_model.data.sources import source_kind
    from sam_model.io import SAMFileError

    (tmp_path / "notes.txt").write_text("nothing an agent wrote\n")
    with pytest.raises(SAMFileError) as err:
        source_kind(tmp_path)
    text = str(err.value)
    assert text.count("OTLP JSON files") == 1 and text.count("session files (.jsonl)") == 1, text
    assert "AutoGen saved states" in text and "Pydantic AI histories" in text


def taskresult(kind: str, source: str, content: Any, n: int, **extra: Any) -> dict[str, Any]:
    """An autogen_agentchat message as TaskResult.messages dumps it (model_dump())."""
    return {"id": f"0f1e2d3c-0000-4000-8000-{n:012d}", "source": source, "models_usage": None, "metadata": {},
            "created_at": "2026-03-02T09:00:00Z", "content": content, "type": kind, **extra}


def test_a_structured_message_is_the_agents_words():
    """An AssistantAgent given output_content_type answers with a StructuredMessage, its type the generic's name
    (StructuredMessage[Ticket]) and its content the model's object: a run's messages holding one were refused
    whole (its type no agentchat type), though its model context holds the same answer as the model's words."""
    call = {"id": "call_1", "arguments": json.dumps({"employee_id": "E-48213"}), "name": "lookup_employee"}
    messages = [taskresult("TextMessage", "user", "my employee id is E-48213", 0),
                taskresult("ToolCallRequestEvent", "helpdesk", [call], 1),
                taskresult("ToolCallExecutionEvent", "helpdesk", [{"content": "{}", "name": "lookup_employee",
                                                                   "call_id": "call_1", "is_error": False}], 2),
                taskresult("StructuredMessage[Ticket]", "helpdesk", {"ticket": "INC-7731", "group": "net-ops"}, 3)]
    chat = to_chat(messages, "run")
    assert chat.messages[-1]["role"] == "assistant"
    assert json.loads(chat.messages[-1]["content"]) == {"ticket": "INC-7731", "group": "net-ops"}


def test_a_user_proxys_words_in_a_teams_run_are_the_users():
    """A team with a UserProxyAgent: the person's words are a TextMessage from the proxy's name (not "user"),
    after the UserInputRequestedEvent it yields before asking; they were read as the agent's words (a system
    event), the person's id in them said by the agent."""
    call = {"id": "call_1", "arguments": json.dumps({"employee_id": "E-48213"}), "name": "lookup_employee"}
    messages = [taskresult("TextMessage", "user", "reset my password", 0),
                taskresult("TextMessage", "helpdesk", "What is your employee id?", 1),
                taskresult("UserInputRequestedEvent", "employee", "", 2, request_id="r-1"),
                taskresult("TextMessage", "employee", "it is E-48213", 3),
                taskresult("ToolCallRequestEvent", "helpdesk", [call], 4),
                taskresult("UserInputRequestedEvent", "employee", "", 5, request_id="r-2"),
                taskresult("HandoffMessage", "employee", "thanks, done", 6, target="helpdesk", context=[])]
    chat = to_chat(messages, "run")
    roles = [(m["role"], m.get("content")) for m in chat.messages]
    assert roles[:3] == [("user", "reset my password"), ("assistant", "What is your employee id?"),
                         ("user", "it is E-48213")]
    assert roles[-1] == ("user", "thanks, done")
    assert chat.ignored["UserInputRequestedEvent"] == 2


def test_an_agent_state_without_its_model_context_is_refused_as_an_autogen_state(tmp_path):
    """An AssistantAgentState holding no llm_context (another autogen-agentchat's, whose context is kept under
    another name) was 'expected a tau-bench trajectory ..., a conversation ...' from the file, naming no AutoGen,
    and 'item 0 ... without kind' from memory.add."""
    state = {"type": "AssistantAgentState", "version": "1.0.0", "llm_messages": conversations(1, 0)[0][1]}
    path = tmp_path / "old.json"
    path.write_text(json.dumps(state))
    with pytest.raises(Exception, match=r"old\.json.*AssistantAgentState.*'llm_context'.*save_state"):
        list(iter_transcript_events(path))
    memory = ScopedMemory(HashingEncoder(16))
    with pytest.raises(ValueError, match=r"data is an AutoGen save_state\(\)"):
        memory.add(state, user_id="me", run_id="s")


def test_the_model_context_given_to_add_is_refused_saying_to_give_its_messages():
    """``memory.add(state["llm_context"])``, one level short of the messages, was 'item 0 ... without kind'."""
    context = agent_state(conversations(1, 0)[0][1])["llm_context"]
    memory = ScopedMemory(HashingEncoder(16))
    with pytest.raises(ValueError, match=r"data is an AutoGen model context .*\[\"messages\"\]"):
        memory.add(context, user_id="me", run_id="s")
    assert memory.add(context["messages"], user_id="me", run_id="s")["results"]


def test_an_agents_handoff_in_a_swarms_run_is_its_transfer_calls_result_once():
    """In a Swarm an agent hands off by calling its transfer tool: the run yields the call, its result (the handoff's
    message) and then a HandoffMessage holding that message again, which the agent's model context never holds; it
    was read as the agent's words, an event the saved context did not give. A person's HandoffMessage (the task
    given back to the agent that asked, source user) stays the user's words."""
    call = {"id": "call_9", "arguments": "{}", "name": "transfer_to_billing"}
    moved = "Transferred to billing, adopting the role of billing immediately."
    run = [taskresult("TextMessage", "user", "refund order 5521", 0),
           taskresult("ToolCallRequestEvent", "triage", [call], 1),
           taskresult("ToolCallExecutionEvent", "triage", [{"content": moved, "name": call["name"],
                                                              "call_id": "call_9", "is_error": False}], 2),
           taskresult("HandoffMessage", "triage", moved, 3, target="billing", context=[]),
           taskresult("HandoffMessage", "user", "order 5521, the blue one", 4, target="billing", context=[])]
    chat = to_chat(run, "run")
    assert [m.get("content") for m in chat.messages].count(moved) == 1
    assert chat.messages[-1] == {"role": "user", "content": "order 5521, the blue one"}
    assert chat.ignored["HandoffMessage"] == 1
    context = [{"content": "refund order 5521", "source": "user", "type": "UserMessage"},
               {"content": [call], "thought": None, "source": "triage", "type": "AssistantMessage"},
               {"content": [{"content": moved, "name": call["name"], "call_id": "call_9", "is_error": False}],
                "type": "FunctionExecutionResultMessage"},
               {"content": "order 5521, the blue one", "source": "user", "type": "UserMessage"}]
    assert to_chat(context, "context").messages == chat.messages


def test_memories_an_agent_was_given_are_not_its_policy():
    """An AssistantAgent given memory=[...] (ListMemory, or autogen-ext's) adds what it retrieved to its model context
    each run as a SystemMessage ("Relevant memory content (in chronological order): 1. ..."), which save_state()
    keeps: it was read as the policy, so an id the user said and a memory restated was common knowledge, no label,
    and the saved context and the run's messages (a MemoryQueryEvent, counted) gave different events."""
    call = {"id": "call_1", "arguments": json.dumps({"employee_id": "E-48213"}), "name": "lookup_employee"}
    memory = "\nRelevant memory content (in chronological order):\n1. Priya's employee id is E-48213\n"
    context = [{"content": "You are the helpdesk.", "type": "SystemMessage"},
               {"content": "my employee id is E-48213", "source": "user", "type": "UserMessage"},
               {"content": memory, "type": "SystemMessage"},
               {"content": [call], "thought": None, "source": "helpdesk", "type": "AssistantMessage"}]
    chat = to_chat(context, "context")
    assert [m["role"] for m in chat.messages] == ["system", "user", "assistant"]
    assert chat.ignored["memory"] == 1
    run = [taskresult("TextMessage", "user", "my employee id is E-48213", 0),
           taskresult("MemoryQueryEvent", "helpdesk", [{"content": "Priya's employee id is E-48213",
                                                          "mime_type": "text/plain", "metadata": None}], 1),
           taskresult("ToolCallRequestEvent", "helpdesk", [call], 2)]
    assert to_chat(run, "run").messages == chat.messages[1:]


def test_a_value_a_memory_restated_is_still_labelled_where_the_user_said_it(tmp_path):
    call = {"id": "call_1", "arguments": json.dumps({"employee_id": "E-48213"}), "name": "lookup_employee"}
    memory = "\nRelevant memory content (in chronological order):\n1. Priya's employee id is E-48213\n"
    context = [{"content": "my employee id is E-48213", "source": "user", "type": "UserMessage"},
               {"content": "Let me look that up.", "thought": None, "source": "helpdesk", "type": "AssistantMessage"},
               {"content": "yes please", "source": "user", "type": "UserMessage"},
               {"content": memory, "type": "SystemMessage"},
               {"content": [call], "thought": None, "source": "helpdesk", "type": "AssistantMessage"}]
    (tmp_path / "c.json").write_text(json.dumps(agent_state(context)))
    got, _ = events(tmp_path / "c.json")
    assert [e.get("useful_memory_steps") for e in got if "useful_memory_steps" in e] == [[0]]


POLICY = ("You are Contoso's IT helpdesk. Tickets take a priority of P1, P2, P3 or P4 and go to one of the groups "
          "net-ops, desktop-support or messaging.")


def component(name: str, system_message: str | None = POLICY) -> dict[str, Any]:
    """What ``agent.dump_component().model_dump()`` writes for an AssistantAgent (autogen-agentchat 0.7)."""
    return {"provider": "autogen_agentchat.agents.AssistantAgent", "component_type": "agent", "version": 1,
            "component_version": 2, "description": "An agent that provides assistance with tool use.",
            "label": "AssistantAgent", "config": {
                "name": name, "model_client": {"provider": "autogen_ext.models.openai.OpenAIChatCompletionClient",
                                               "component_type": "model", "config": {"model": "gpt-4o"}},
                "tools": [], "handoffs": [], "model_context": None, "memory": None,
                "description": "An agent that provides assistance with tool use.",
                "system_message": system_message, "model_client_stream": False, "reflect_on_tool_use": True,
                "tool_call_summary_format": "{result}", "max_tool_iterations": 1, "metadata": {}}}


def test_the_system_message_is_read_from_the_config_saved_beside_the_states(tmp_path):
    """save_state() holds the model context only: the agent's system_message (its policy) is in its declarative
    config, dump_component(), which a folder's reader left unread beside the states, so a priority or group only the
    system message names was untraceable. It is now the policy of each state the config's agent saved, by the
    agent's name (a team's config: each participant's); without a config nothing changes."""
    states = write_folder(tmp_path / "states", 9, 0)
    plain, before = events(states)
    (states / "helpdesk-agent.json").write_text(json.dumps(component("helpdesk")))
    read, report = events(states)
    assert before.outcomes["policy"] == 0 and report.outcomes["policy"] > 0, report.outcomes
    assert report.outcomes["untraceable"] < before.outcomes["untraceable"]
    assert report.conversations == before.conversations == 9  # the config is no conversation
    assert [e["text"] for e in read] == [e["text"] for e in plain]  # the policy is no event
    teams = write_folder(tmp_path / "teams", 9, 0, team=True)
    team = {"provider": "autogen_agentchat.teams.RoundRobinGroupChat", "component_type": "team", "version": 1,
            "component_version": 1, "label": "RoundRobinGroupChat",
            "config": {"participants": [component("triage", "Route tickets."), component("helpdesk")],
                       "termination_condition": None, "max_turns": None, "emit_team_events": False}}
    (teams / "team.json").write_text(json.dumps(team))
    _, by_team = events(teams)
    assert by_team.outcomes == report.outcomes
    (teams / "team.json").write_text(json.dumps({**team, "config": {**team["config"], "participants": [
        component("triage")]}}))  # another agent's system message is not this one's
    _, other = events(teams)
    assert other.outcomes == before.outcomes


def test_a_society_of_mind_agents_inner_team_is_read(tmp_path):
    """A SocietyOfMindAgent's save_state() (SocietyOfMindAgentState) holds its inner team's in inner_team_state: the
    assistants who made the calls. Alone it was no saved state ("expected ... a conversation"), and as a participant
    of an outer team "a TeamState whose agent_states hold no AssistantAgentState". Its inner team's contexts are now
    read as a team's are, named by the path of participants to each; its own model context (the outer chat and its
    summaries, no calls) is not."""
    _, messages = conversations(1, 2)[0]
    (tmp_path / "agent.json").write_text(json.dumps(agent_state(messages)))
    agent, _ = events(tmp_path / "agent.json")
    outer_chat = {"messages": [{"content": "Please help Priya.", "source": "user", "type": "UserMessage"}]}
    society = {"type": "SocietyOfMindAgentState", "version": "1.0.0", "inner_team_state": team_state(messages),
               "model_context_state": outer_chat}
    (tmp_path / "society.json").write_text(json.dumps(society))
    alone, _ = events(tmp_path / "society.json")
    assert [{**e, "episode_id": "x"} for e in alone] == [{**e, "episode_id": "x"} for e in agent] and agent
    outer = {"type": "TeamState", "version": "1.0.0", "agent_states": {
        "support": {"type": "ChatAgentContainerState", "version": "1.0.0", "agent_state": society,
                    "message_buffer": []},
        "reviewer": {"type": "ChatAgentContainerState", "version": "1.0.0",
                     "agent_state": agent_state(messages), "message_buffer": []},
        "RoundRobinGroupChatManager": {"type": "RoundRobinManagerState", "version": "1.0.0", "message_thread": [],
                                       "current_turn": 0, "next_speaker_index": 0}}}
    (tmp_path / "outer.json").write_text(json.dumps(outer))
    both, report = events(tmp_path / "outer.json")
    assert report.conversations == 2
    assert {e["episode_id"] for e in both} == {"outer_support_helpdesk", "outer_reviewer"}
    (tmp_path / "states").mkdir()
    (tmp_path / "states" / "s.json").write_text(json.dumps(society))  # a folder of them: a saved state each
    folder, _ = events(tmp_path / "states")
    assert [e["text"] for e in folder] == [e["text"] for e in agent]
    outer["agent_states"]["reviewer"]["agent_state"] = agent_state([])  # an assistant that never spoke: none
    (tmp_path / "outer.json").write_text(json.dumps(outer))
    assert {e["episode_id"] for e in events(tmp_path / "outer.json")[0]} == {"outer"}  # one context: the file
    (tmp_path / "reset.json").write_text(json.dumps({**society, "inner_team_state": team_state([])}))
    with pytest.raises(TranscriptFormatError, match=r"reset\.json: a SocietyOfMindAgentState whose assistants' "
                                                    r"model contexts are all empty.*TaskResult\.messages"):
        events(tmp_path / "reset.json")  # saved between runs: AutoGen resets the inner team after each


def _team(name: str, *participants: dict[str, Any]) -> dict[str, Any]:
    """What ``team.dump_component().model_dump()`` writes for a RoundRobinGroupChat of ``participants``."""
    return {"provider": "autogen_agentchat.teams.RoundRobinGroupChat", "component_type": "team", "version": 1,
            "component_version": 1, "label": name, "config": {"participants": list(participants),
                                                              "termination_condition": None, "max_turns": None}}


def _teams_state(messages: list[dict[str, Any]], *names: str) -> dict[str, Any]:
    """A TeamState whose participants ``names`` each hold the context ``messages``."""
    state = team_state(messages)
    one = state["agent_states"].pop("helpdesk")
    state["agent_states"] = {**{n: one for n in names}, **state["agent_states"]}
    return state


def test_a_teams_state_takes_its_own_teams_config_not_another_teams_agent_named_alike(tmp_path):
    """Two teams saved in one folder, each with an assistant named helpdesk: the configs were joined by agent name
    across the folder, so one team's helpdesk took the other's system message where its own config gave none, and
    where both gave one neither was read, without a word. Each state now takes its own team's config (every
    participant of the state found in it); what no config gives, or configs give differently, is counted."""
    _, messages = conversations(1, 0)[0]
    (tmp_path / "a.json").write_text(json.dumps(_teams_state(messages, "helpdesk", "triage")))
    (tmp_path / "b.json").write_text(json.dumps(_teams_state(messages, "helpdesk", "billing")))
    (tmp_path / "a-team.json").write_text(json.dumps(_team("a", component("triage", "Route tickets."),
                                                           component("helpdesk"))))
    (tmp_path / "b-team.json").write_text(json.dumps(_team("b", component("billing", "Bill."),
                                                           component("helpdesk", None))))
    read = {c.episode_id: c for c in files.conversations(tmp_path)}
    assert read["a_helpdesk"].policy == POLICY and read["a_triage"].policy == "Route tickets."
    assert read["b_helpdesk"].policy == "" and read["b_billing"].policy == "Bill."  # not team a's helpdesk's
    assert read["b_helpdesk"].lacking == (autogen.NO_POLICY,) and read["a_helpdesk"].lacking == ()
    # a second config of team a's participants that says otherwise: which one is a's cannot be told, and is said
    (tmp_path / "a-copy.json").write_text(json.dumps(_team("a2", component("triage", "Route tickets."),
                                                           component("helpdesk", "Be brief."))))
    read = {c.episode_id: c for c in files.conversations(tmp_path)}
    assert read["a_helpdesk"].policy == "" and read["a_helpdesk"].lacking == (autogen.AMBIGUOUS,)
    assert read["a_triage"].policy == "Route tickets."
    (tmp_path / "a.config.json").write_text(json.dumps(_team("a", component("triage", "Route tickets."),
                                                             component("helpdesk"))))
    read = {c.episode_id: c for c in files.conversations(tmp_path)}  # the config named as the state is its own
    assert read["a_helpdesk"].policy == POLICY and read["a_helpdesk"].lacking == ()
    _, report = events(tmp_path)
    assert report.lacking == {autogen.NO_POLICY: 1}
    assert any(line.startswith("conversations read without a part") and "AutoGen system_message" in line
               for line in report.lines())


def test_a_lone_agents_state_takes_no_teams_config_and_one_alone_is_counted(tmp_path):
    """A lone AssistantAgent's state took the one system message of any config beside it, a team's participant's
    too; it is an agent config's only. A state file given alone has no config: counted, not silent."""
    _, messages = conversations(1, 0)[0]
    (tmp_path / "c.json").write_text(json.dumps(agent_state(messages)))
    (tmp_path / "team.json").write_text(json.dumps(_team("t", component("triage", "Route tickets."))))
    (read,) = files.conversations(tmp_path)
    assert read.policy == "" and read.lacking == (autogen.NO_POLICY,)
    (tmp_path / "agent.json").write_text(json.dumps(component("helpdesk")))
    (read,) = files.conversations(tmp_path)
    assert read.policy == POLICY and read.lacking == ()
    _, report = events(tmp_path / "c.json")  # the file alone: no config read
    assert report.lacking == {autogen.NO_POLICY: 1}
    # another agent's config beside it: the state's own is the one its messages name (source), not ambiguous
    (tmp_path / "triage.json").write_text(json.dumps(component("triage", "Route tickets.")))
    (read,) = files.conversations(tmp_path)
    assert read.policy == POLICY and read.lacking == ()
    (tmp_path / "agent.json").unlink()
    (read,) = files.conversations(tmp_path)
    assert read.policy == "" and read.lacking == (autogen.NO_POLICY,)  # triage's is not helpdesk's


def test_a_source_read_without_its_system_message_says_so(tmp_path, capsys):
    """A folder of states given as a training source (sam_model.data.sources.materialise, what training and evaluation read)
    printed the import's notes but not what the conversations were read without: a state with no config of its
    agent beside it lost its system message without a word there, where the importer's report counts it."""
    from sam_model.data.sources import iter_source_events

    _, messages = conversations(1, 0)[0]
    (tmp_path / "c.json").write_text(json.dumps(agent_state(messages)))
    assert list(iter_source_events(tmp_path))
    out = capsys.readouterr().out
    assert f"{tmp_path}: conversations read without a part their log keeps elsewhere: {autogen.NO_POLICY} 1" in out
    (tmp_path / "agent.json").write_text(json.dumps(component("helpdesk")))
    assert list(iter_source_events(tmp_path))
    assert "read without a part" not in capsys.readouterr().out  # its config beside it: nothing lacking
