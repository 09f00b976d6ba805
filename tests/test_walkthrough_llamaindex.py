"""What a walkthrough of the README as a LlamaIndex team found (a pharmacy's prescription-refill desk,
tests/llamaindex_refills.py): the memory's saved messages were read by no reader, a saved workflow Context was refused
as no tau-bench trajectory, the memory added whole after each run stored the earlier runs again, and LlamaIndex's own
call shapes searched by flagged nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from llamaindex_refills import conversations
from transcript_logs import added_whole_after_each_run, listed

from sam_model.data.transcripts import ImportReport, iter_transcript_events, main
from sam_model.memory import HashingEncoder, ScopedMemory

# what ctx.to_dict() of a FunctionAgent's Context holds after a run (llama-index-core 0.14.25, trimmed): no messages
CONTEXT = {"version": 2, "state": {"store_type": "in_memory", "state_type": "DictState", "state_data": {"_data": {
    "max_iterations": "20", "num_tool_calls": "2", "user_msg_str": "\"I'm Ruiz, refill please\"", "scratchpad": "[]"}}},
    "is_running": False, "workers": {}, "stream_seq": 0, "work_item_seq": 16, "deliveries": [], "streams": {}}


def calls_of(messages: list[dict]) -> list[str]:
    return [b["tool_name"] for m in messages for b in m["blocks"] if b["block_type"] == "tool_call"]


def events_of(path, **kw) -> list[dict]:
    return list(iter_transcript_events(path, **kw))


def test_a_folder_of_saved_histories_converts_each_call_once(tmp_path, capsys):
    """json.dump([m.model_dump() for m in memory.get_all()], f), a .json a conversation: a folder of them was read as
    OpenHands trajectories ('an event must be an object with action or observation'), one file as a list of
    conversations ('expected ... a conversation {"id": ..., "messages": [...]}'). Each call is read from its block,
    not again from the OpenAI SDK's copy in additional_kwargs. A wrong --format names the reader."""
    convs = conversations(3, 0)
    for cid, messages in convs:
        (tmp_path / f"{cid}.json").write_text(json.dumps(messages, indent=1))
    report = ImportReport()
    events = events_of(tmp_path, report=report)
    assert report.formats == {"llamaindex": 3}
    for cid, messages in convs:
        mine = [e for e in events if e["episode_id"] == cid]
        assert [e["text"].split("(")[0].removeprefix("CALL ") for e in mine if e["kind"] == "action"] == \
            calls_of(messages)
        assert [e["text"] for e in mine if e["kind"] == "user"] == [
            m["blocks"][0]["text"] for m in messages if m["role"] == "user"]
    assert sum("useful_memory_steps" in e for e in events) > 0
    one = tmp_path / f"{convs[0][0]}.json"
    assert events_of(one) == [e for e in events if e["episode_id"] == convs[0][0]]
    assert main([str(one), str(tmp_path / "o.jsonl"), "--format", "openai"]) == 1  # said no reader before
    assert "which the llamaindex reader reads: try --format llamaindex" in capsys.readouterr().err
    lines = tmp_path / "lines.jsonl"  # the {"id", "messages"} line of the same conversation
    lines.write_text(json.dumps({"id": convs[0][0], "messages": convs[0][1]}) + "\n")
    assert [{k: v for k, v in e.items() if k != "meta"} for e in events_of(lines)] == \
        [{k: v for k, v in e.items() if k != "meta"} for e in events_of(one)]


def test_the_sdk_copy_alone_older_content_and_gemini_model_role_read_alike(tmp_path):
    """An integration (or a version) writing a call only as additional_kwargs.tool_calls, a message's words as
    'content' (before 0.12), and Gemini's 'model' role: read as the blocks are. Other blocks are counted."""
    cid, messages = conversations(1, 0)[0]
    older = []
    for m in messages:
        text = "\n".join(b["text"] for b in m["blocks"] if b["block_type"] == "text") or None
        older.append({"role": "model" if m["role"] == "assistant" else m["role"], "content": text,
                      "additional_kwargs": m["additional_kwargs"]})
    older[1]["additional_kwargs"] = {"tool_calls": [{"tool_id": c["id"], "tool_name": c["function"]["name"],
                                                     "tool_kwargs": json.loads(c["function"]["arguments"])}
                                                    for c in older[1]["additional_kwargs"]["tool_calls"]]}
    thinking = [dict(m) for m in messages]
    thinking[1] = {**thinking[1], "blocks": [{"block_type": "thinking", "content": "look them up"},
                                             *thinking[1]["blocks"]]}
    (tmp_path / "a.json").write_text(json.dumps(messages))
    (tmp_path / "b.json").write_text(json.dumps(older))
    (tmp_path / "c.json").write_text(json.dumps(thinking))
    report = ImportReport()
    want = events_of(tmp_path / "a.json")
    assert events_of(tmp_path / "b.json", report=report) == [{**e, "episode_id": "b"} for e in want]
    assert report.formats == {"llamaindex": 1}
    report = ImportReport()
    assert events_of(tmp_path / "c.json", report=report) == [{**e, "episode_id": "c"} for e in want]
    assert report.ignored == {"thinking blocks": 1}


def test_a_saved_context_is_refused_saying_what_to_save(tmp_path, capsys):
    """ctx.to_dict() holds no messages (llama-index-core skips the memory): it was 'expected a tau-bench trajectory',
    in a folder 'not an OpenHands trajectory'. Beside saved histories it is no run."""
    ctx = tmp_path / "ctx.json"
    ctx.write_text(json.dumps(CONTEXT))
    assert main([str(ctx), str(tmp_path / "o.jsonl")]) == 1
    err = capsys.readouterr().err
    assert "a LlamaIndex workflow Context (ctx.to_dict()), which holds no chat messages" in err, err
    # model_dump() keeps an image block's url (pydantic's AnyUrl) or path as an object: json.dump of the advice
    # given until then raised "Object of type AnyUrl is not JSON serializable" on a memory holding an image
    assert "json.dump([m.model_dump(mode='json') for m in memory.get_all()], f)" in err and err.count("\n") == 1
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "ctx-1.json").write_text(json.dumps(CONTEXT))
    assert main([str(runs), str(tmp_path / "o.jsonl")]) == 1
    assert "ctx-1.json: a LlamaIndex workflow Context" in capsys.readouterr().err
    cid, messages = conversations(1, 0)[0]
    (runs / "chat-1.json").write_text(json.dumps(messages))
    assert {e["episode_id"] for e in events_of(runs)} == {"chat-1"}


def test_the_memory_added_live_stores_the_importers_memories_once(tmp_path):
    """Each message added as it comes was refused ('data[0].content is missing': its words are in blocks); the whole memory added
    after each run (await agent.run(..., memory=memory), then memory.get_all()) stored the earlier runs again, 28
    memories for 16. The call ids, written once, tell the last add sent again."""
    cid, messages = conversations(1, 0)[0]
    (tmp_path / "m.json").write_text(json.dumps(messages))
    want = [(e["step"], e["text"]) for e in events_of(tmp_path / "m.json")]
    one = ScopedMemory(HashingEncoder(16))
    for m in messages:
        one.add([m], user_id="me", run_id="s")
    assert listed(one) == want
    runs = [i for i, m in enumerate(messages) if m["role"] == "user"][1:] + [len(messages)]
    assert len(runs) >= 2
    whole, result = added_whole_after_each_run(messages, runs)
    assert result["notes"] == [{"reason": f"data[0:{runs[-2]}]: the scope's last add of LlamaIndex messages (told "
                                          "by their call ids), sent again: read once, not stored again"}]
    assert listed(whole) == want


def test_llamaindex_calls_searched_by_give_the_importers_state():
    """A ToolCallBlock or a ToolSelection (what FunctionAgent's AgentOutput.tool_calls hold), dumped, flagged no
    argument (their tool_kwargs read as none), silently; the assistant ChatMessage making the call was 'a tool call
    with no tool name'. Each now gives the OpenAI entry's state."""
    cid, messages = conversations(1, 0)[0]
    last = max(i for i, m in enumerate(messages) if calls_of([m]))
    memory = ScopedMemory(HashingEncoder(16))
    memory.add(messages[:last], user_id="me", run_id="s")
    block = messages[last]["blocks"][0]
    want = memory.live_state(user_id="me", run_id="s", call=messages[last]["additional_kwargs"]["tool_calls"][0])
    assert want.uncertainty_flags  # the refill id an earlier result gave
    selection = {"tool_id": block["tool_call_id"], "tool_name": block["tool_name"],
                 "tool_kwargs": json.loads(block["tool_kwargs"])}
    for call in (block, selection, messages[last]):
        assert memory.live_state(user_id="me", run_id="s", call=call) == want


def test_chat_message_objects_are_refused_naming_what_to_give():
    """memory.add(memory.get_all()) gave the ChatMessage objects: refused as 'got ChatMessage' with no word of what
    to give."""
    ChatMessage = type("ChatMessage", (), {"__module__": "llama_index.core.base.llms.types"})
    with pytest.raises(TypeError, match=r"\[m\.model_dump\(\) for m in messages\]"):
        ScopedMemory(HashingEncoder(16)).add([ChatMessage()], user_id="me", run_id="s")


def test_a_langchain_chat_message_is_not_taken_for_llamaindex():
    """A LangChain ChatMessage's model_dump holds a role and additional_kwargs too (its type 'chat'): a LangChain
    conversation holding one was read by the llamaindex reader once it came."""
    from sam_model.data.formats import detect

    dump = {"additional_kwargs": {}, "response_metadata": {}, "name": None, "id": None}
    messages = [{"content": "hi", "type": "human", **dump},
                {"content": "a critic's note", "type": "chat", "role": "critic", **dump},
                {"content": "", "type": "ai", "tool_calls": [{"name": "f", "args": {"a": 1}, "id": "c1"}], **dump}]
    assert detect(messages) == "langchain"
    assert detect(conversations(1, 0)[0][1]) == "llamaindex"



def openai_messages_with_kwargs() -> list[dict]:
    """OpenAI messages as an exporter writes them with an additional_kwargs beside OpenAI's own fields."""
    call = {"id": "call_1", "type": "function", "function": {"name": "find_patient",
                                                             "arguments": json.dumps({"last_name": "Ruiz"})}}
    return [{"role": "user", "content": "refill RX-7734521 for Ruiz", "additional_kwargs": {}},
            {"role": "assistant", "content": None, "additional_kwargs": {}, "tool_calls": [call]},
            {"role": "tool", "content": '{"patient_id": "PT-48213"}', "tool_call_id": "call_1", "additional_kwargs": {}},
            {"role": "assistant", "content": "Found you.", "additional_kwargs": {}}]


def test_openai_messages_with_additional_kwargs_stay_openai(tmp_path):
    """OpenAI messages carrying an additional_kwargs (each, the user's words none of OpenAI's fields) were read by
    the llamaindex reader, their top-level tool_calls and tool_call_id unread: the conversation the openai reader
    converted before was refused as 'no tool call read by the llamaindex reader'."""
    from sam_model.data.formats import detect

    messages = openai_messages_with_kwargs()
    assert detect(messages) == "openai"
    path = tmp_path / "chats.jsonl"
    path.write_text(json.dumps({"id": "c1", "messages": messages}) + "\n")
    plain = tmp_path / "plain.jsonl"
    plain.write_text(json.dumps({"id": "c1", "messages": [{k: v for k, v in m.items() if k != "additional_kwargs"}
                                                          for m in messages]}) + "\n")
    report = ImportReport()
    assert events_of(path, report=report) == events_of(plain)
    assert report.formats == {"openai": 1}


def test_anthropic_and_converse_calls_in_additional_kwargs_are_read(tmp_path):
    """Before ToolCallBlock (llama-index-core 0.12, 0.13) the Anthropic integration wrote a call only as its
    ToolUseBlock's dict in additional_kwargs.tool_calls ({"id", "name", "input", "type": "tool_use"}), Bedrock
    Converse's as {"toolUseId", "name", "input"}: the whole conversation was refused ('a tool call must be {"id",
    "function": ...}'). Each reads as the OpenAI SDK's copy does."""
    cid, messages = conversations(1, 0)[0]
    sdk, anthropic, converse = [], [], []
    for m in messages:
        text = "\n".join(b["text"] for b in m["blocks"] if b["block_type"] == "text") or None
        calls = m["additional_kwargs"].get("tool_calls", [])
        kwargs = {"tool_call_id": m["additional_kwargs"]["tool_call_id"]} if m["role"] == "tool" else {}
        old = {"role": m["role"], "content": text}
        sdk.append({**old, "additional_kwargs": {**kwargs, **({"tool_calls": calls} if calls else {})}})
        anthropic.append({**old, "additional_kwargs": {**kwargs, **({"tool_calls": [
            {"id": c["id"], "input": json.loads(c["function"]["arguments"]), "name": c["function"]["name"],
             "type": "tool_use"} for c in calls]} if calls else {})}})
        converse.append({**old, "additional_kwargs": {**kwargs, **({"tool_calls": [
            {"toolUseId": c["id"], "input": c["function"]["arguments"], "name": c["function"]["name"]}
            for c in calls]} if calls else {})}})
    for name, history in (("sdk", sdk), ("anthropic", anthropic), ("converse", converse)):
        (tmp_path / f"{name}.json").write_text(json.dumps(history))
    want = events_of(tmp_path / "sdk.json")
    assert sum(e["kind"] == "action" for e in want) == len(calls_of(messages))
    for name in ("anthropic", "converse"):
        report = ImportReport()
        assert events_of(tmp_path / f"{name}.json", report=report) == [{**e, "episode_id": name} for e in want]
        assert report.formats == {"llamaindex": 1}


def test_a_jsonl_converted_before_the_llamaindex_reader_is_converted_again(tmp_path, monkeypatch):
    """A .jsonl line holding a LlamaIndex history from before 0.12 (content, the calls in additional_kwargs) was
    converted by the openai reader under CONVERSION_VERSION 165 (its results alone, no call), and the llamaindex
    reader came with no new version: train.py and evaluate.py kept that conversion cached (the cache is per
    machine)."""
    from sam_model.data import sources

    cid, messages = conversations(1, 0)[0]
    older = [{"role": m["role"], "additional_kwargs": m["additional_kwargs"],
              "content": "\n".join(b["text"] for b in m["blocks"] if b["block_type"] == "text") or None}
             for m in messages]
    path = tmp_path / "chats.jsonl"
    path.write_text(json.dumps({"id": cid, "messages": older}) + "\n")
    monkeypatch.setattr(sources, "CONVERSION_VERSION", 165)  # the version the openai reader converted it under
    old = sources.materialise(path, cache_dir=tmp_path / "cache")
    old.write_text("".join(line.replace('"kind": "action"', '"kind": "user"') + "\n"
                           for line in old.read_text().splitlines()))  # what it wrote then: no call
    monkeypatch.undo()
    new = sources.materialise(path, cache_dir=tmp_path / "cache")
    assert new != old
    assert [json.loads(line)["kind"] for line in new.read_text().splitlines()].count("action") == \
        len(calls_of(messages))


def react_memory() -> list[dict]:
    """What a ReActAgent's memory holds after a run (llama-index-core 0.14.25, a scripted model): the user's message
    and one assistant message joining the reasoning steps' get_content(), the action input a dict's Python repr."""
    reasoning = "\n".join([
        "Thought: I need the patient.", "Action: find_patient", "Action Input: {'last_name': 'Ruiz'}",
        "Observation: {'patient_id': 'PT-48213', 'store': 'store-0412'}",
        "Thought: Now the refills.", "Action: request_refill",
        "Action Input: {'patient_id': 'PT-48213', 'rx_number': 'RX-7734521'}",
        "Observation: no refills left on RX-7734521:", "ask the prescriber",
        "Thought: I can answer.", "Answer: RX-7734521 has no refills left; ask your prescriber."])
    return [{"role": "user", "additional_kwargs": {}, "blocks": [{"block_type": "text",
                                                                                "text": "refill RX-7734521 for Ruiz"}]},
            {"role": "assistant", "additional_kwargs": {}, "blocks": [{"block_type": "text", "text": reasoning}]}]


def test_a_react_agents_calls_in_its_words_are_read(tmp_path):
    """A ReActAgent writes its calls as Thought / Action / Action Input lines and the tools' results as Observation
    lines, one assistant message in its memory: read as words, the memory held no call and was refused ('no
    tool-call fields of any format at all'). Each action is a call, its observation the result, the answer the
    assistant's words; a message opening with a thought but making no call is words, as before."""
    path = tmp_path / "react.json"
    path.write_text(json.dumps(react_memory()))
    events = events_of(path)
    assert [e["text"] for e in events if e["kind"] == "action"] == [
        "CALL find_patient(last_name=Ruiz)", "CALL request_refill(patient_id=PT-48213, rx_number=RX-7734521)"]
    results = [e for e in events if e["kind"] == "result"]
    assert [e["text"] for e in results] == [
        "find_patient: {'patient_id': 'PT-48213', 'store': 'store-0412'}",
        "request_refill: no refills left on RX-7734521:\nask the prescriber"]
    assert events[-1]["text"] == "RX-7734521 has no refills left; ask your prescriber."
    assert any(e.get("useful_memory_steps") == [0] for e in events)  # RX-7734521, traced to the user's words
    for text in ("Thought: nothing to call.\nAnswer: hello",  # no action
                 "Thought: I need the patient.\nAction: find_patient\nAction Input: {'last_name': 'Ruiz'}"):
        words = react_memory()  # the second: a model's words that look like an action, no tool ran (no observation)
        words[1]["blocks"][0]["text"] = text
        (tmp_path / "words.json").write_text(json.dumps(words))
        assert [e["text"] for e in events_of(tmp_path / "words.json", allow_empty=True)][-1] == text


def test_a_question_asked_again_is_stored_where_ollama_named_its_results_by_the_tool():
    """Before ToolCallBlock, Ollama's integration gave no call id: its calls in additional_kwargs.tool_calls, each
    result's additional_kwargs.tool_call_id the tool's name. Read as an id written once (only the blocks' names were
    known), a question asked again in a new run, answered alike and added alone, was read as the last add sent
    again and not stored."""
    run = [{"role": "user", "content": "is RX-7734521 ready?", "additional_kwargs": {}},
           {"role": "assistant", "content": None, "additional_kwargs": {"tool_calls": [
               {"function": {"name": "get_refill_status", "arguments": {"rx_number": "RX-7734521"}}}]}},
           {"role": "tool", "content": "{'status': 'ready'}", "additional_kwargs": {"tool_call_id": "get_refill_status"}},
           {"role": "assistant", "content": "Ready for pickup.", "additional_kwargs": {}}]
    memory = ScopedMemory(HashingEncoder(16))
    memory.add(run, user_id="me", run_id="s")
    assert "notes" not in memory.add(run, user_id="me", run_id="s")
    assert len(listed(memory)) == 2 * len(run)
    ids = [{**m, "additional_kwargs": {"tool_call_id": "call_9"}} if m["role"] == "tool" else m for m in run]
    again = ScopedMemory(HashingEncoder(16))  # a real id is written once: the add sent again is read once
    again.add(ids, user_id="me", run_id="s")
    assert again.add(ids, user_id="me", run_id="s")["notes"]
    assert len(listed(again)) == len(run)


def test_a_history_trimmed_at_its_start_is_stored_once():
    """memory.get() of a ChatMemoryBuffer drops the history's start past its token limit (llama-index-core 0.14.25:
    after three runs it held the second and third): added after each run, the trimmed history opened with the end of
    the last add, no kept add, and was stored again from there. A call's id among those messages tells them."""
    messages = next(m for _, m in conversations(10, 0) if sum(x["role"] == "user" for x in m) >= 3)
    starts = [i for i, m in enumerate(messages) if m["role"] == "user"]
    (tmp := ScopedMemory(HashingEncoder(16))).add(messages, user_id="me", run_id="s")
    want = listed(tmp)
    memory = ScopedMemory(HashingEncoder(16))
    memory.add(messages[:starts[2]], user_id="me", run_id="s")  # the first two runs, whole
    result = memory.add(messages[starts[1]:], user_id="me", run_id="s")  # the first run trimmed away
    again = starts[2] - starts[1]
    assert result["notes"] == [{"reason": f"data[0:{again}]: the end of the scope's last add (the history trimmed "
                                          "before it) of LlamaIndex messages (told by their call ids), sent again: "
                                          "read once, not stored again"}]
    assert listed(memory) == want
    runs = ScopedMemory(HashingEncoder(16))  # each run's messages added alone: none opens with the last's end
    for a, b in zip(starts, [*starts[1:], len(messages)]):
        assert "notes" not in runs.add(messages[a:b], user_id="me", run_id="s")
    assert listed(runs) == want


def test_a_folder_is_walked_once_for_the_histories_told_by_their_content(tmp_path, monkeypatch):
    """A folder's Pydantic AI histories, smolagents memories, LlamaIndex histories and workflow Contexts are told
    by their content at any depth: the folder was walked once for each of them (four walks of a folder of runs)."""
    from pydantic_ai_travel import conversations as histories
    from smolagents_leave import conversations as memories

    from sam_model.data.formats.files import layouts

    day = tmp_path / "2026-12-06"
    day.mkdir()
    (day / "p.json").write_text(json.dumps(histories(1, 0)[0][1]))
    (day / "s.json").write_text(json.dumps(memories(1, 0)[0][1]))
    (day / "l.json").write_text(json.dumps(conversations(1, 0)[0][1]))
    walks, rglob = [], Path.rglob
    monkeypatch.setattr(Path, "rglob", lambda self, pattern, **kw: walks.append(pattern) or rglob(self, pattern, **kw))
    found = layouts(tmp_path)
    assert {k: [q.name for q in v] for k, v in found.items()} == {
        "pydantic-ai": ["p.json"], "smolagents": ["s.json"], "llamaindex": ["l.json"]}
    assert walks.count("*.json*") == 1, walks
