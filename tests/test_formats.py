"""One conversation written by hand in every log format gives the same agent-log lines; each format's conversation
without tools is refused, not silently empty; the live state reads every format; bad files are named FILE:LINE."""

from __future__ import annotations

import gzip
import json
import os
import re
from pathlib import Path

import pytest

from sam_model.data.formats import FORMATS, detect, to_chat
from sam_model.data.toolstate import live_state
from sam_model.data.transcripts import ImportReport, TranscriptFormatError, iter_transcript_events, main

POLICY = "You are an agent. Cabins: economy, business."
HI, SEE, YES, DONE = "Hi, my user id is ann_lee_123.", "I see reservation QX7Z9A. Cancel it?", "yes please", "Sorry."
USER = {"name": "Ann", "reservations": ["QX7Z9A"]}
ARGS1 = {"user_id": "ann_lee_123"}
ARGS2 = {"reservation_id": "QX7Z9A", "user_id": "ann_lee_123", "reason": "change of plans", "refund": True,
         "cabin": "economy"}
ERROR = "Error: reservation QX7Z9A is already cancelled"
SHARED = Path(os.environ.get("SAM_SHARED_DIR", Path(__file__).resolve().parents[1] / ".." / "shared")).resolve()
TAU = SHARED / "data" / "tau-bench" / "gpt-4o-airline.json.gz"
needs_tau = pytest.mark.skipif(not TAU.is_file(), reason=f"tau-bench data absent ({TAU}); set SAM_SHARED_DIR")


def openai_messages() -> list[dict]:
    call = lambda i, n, a: {"id": i, "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}  # noqa: E731
    return [{"role": "system", "content": POLICY}, {"role": "user", "content": HI},
            {"role": "assistant", "content": None, "tool_calls": [call("c1", "get_user", ARGS1)]},
            {"role": "tool", "tool_call_id": "c1", "content": json.dumps(USER)},
            {"role": "assistant", "content": SEE}, {"role": "user", "content": YES},
            {"role": "assistant", "content": None, "tool_calls": [call("c2", "cancel", ARGS2)]},
            {"role": "tool", "tool_call_id": "c2", "content": ERROR}, {"role": "assistant", "content": DONE}]


def tau2_messages() -> list[dict]:
    call = lambda i, n, a, who="assistant": {"id": i, "name": n, "arguments": a, "requestor": who}  # noqa: E731
    return [{"role": "user", "content": HI, "turn_idx": 0},
            {"role": "assistant", "content": None, "tool_calls": [call("c1", "get_user", ARGS1)]},
            {"role": "tool", "id": "c1", "content": json.dumps(USER), "requestor": "assistant", "error": False},
            {"role": "assistant", "content": SEE},
            {"role": "user", "content": None, "tool_calls": [call("u1", "toggle_airplane_mode", {}, "user")]},
            {"role": "tool", "id": "u1", "content": "airplane mode off", "requestor": "user", "error": False},
            {"role": "user", "content": YES},
            {"role": "assistant", "content": None, "tool_calls": [call("c2", "cancel", ARGS2)]},
            {"role": "tool", "id": "c2", "content": ERROR, "requestor": "assistant", "error": True},
            {"role": "assistant", "content": DONE}]


def anthropic_messages() -> list[dict]:
    text = lambda t: {"type": "text", "text": t}  # noqa: E731
    return [{"role": "user", "content": HI},
            {"role": "assistant", "content": [{"type": "thinking", "thinking": "look up"},
                                              {"type": "tool_use", "id": "c1", "name": "get_user", "input": ARGS1}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1", "content": json.dumps(USER)}]},
            {"role": "assistant", "content": [text(SEE)]}, {"role": "user", "content": [text(YES)]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "c2", "name": "cancel", "input": ARGS2}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c2", "is_error": True,
                                          "content": [text(ERROR)]}]},
            {"role": "assistant", "content": DONE}]


def bedrock_messages() -> list[dict]:
    """As the Converse API (and Strands Agents' agent.messages) writes them: blocks keyed by their member, no type."""
    text = lambda t: {"text": t}  # noqa: E731
    return [{"role": "user", "content": [text(HI)]},
            {"role": "assistant", "content": [{"reasoningContent": {"reasoningText": {"text": "look up",
                                                                                      "signature": "s"}}},
                                              {"toolUse": {"toolUseId": "c1", "name": "get_user", "input": ARGS1}}]},
            {"role": "user", "content": [{"toolResult": {"toolUseId": "c1", "content": [{"json": USER}],
                                                         "status": "success"}}]},
            {"role": "assistant", "content": [text(SEE)]}, {"role": "user", "content": [text(YES)]},
            {"role": "assistant", "content": [{"toolUse": {"toolUseId": "c2", "name": "cancel", "input": ARGS2}}]},
            {"role": "user", "content": [{"toolResult": {"toolUseId": "c2", "content": [text(ERROR)],
                                                         "status": "error"}}]},
            {"role": "assistant", "content": [text(DONE)]}]


def responses_items() -> list[dict]:
    fc = lambda i, n, a: {"type": "function_call", "id": f"fc_{i}", "call_id": i, "name": n,  # noqa: E731
                          "arguments": json.dumps(a)}
    out = lambda i, o: {"type": "function_call_output", "call_id": i, "output": o}  # noqa: E731
    msg = lambda r, t, kind: {"type": "message", "role": r, "content": [{"type": kind, "text": t}]}  # noqa: E731
    return [{"role": "user", "content": HI}, {"type": "reasoning", "summary": []}, fc("c1", "get_user", ARGS1),
            out("c1", json.dumps(USER)), msg("assistant", SEE, "output_text"), msg("user", YES, "input_text"),
            fc("c2", "cancel", ARGS2), out("c2", ERROR), msg("assistant", DONE, "output_text")]


def genai_messages() -> list[dict]:
    text = lambda t: {"type": "text", "content": t}  # noqa: E731
    return [{"role": "user", "parts": [text(HI)]},
            {"role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": "get_user", "arguments": ARGS1}]},
            {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": json.dumps(USER)}]},
            {"role": "assistant", "parts": [text(SEE)]}, {"role": "user", "parts": [text(YES)]},
            {"role": "assistant", "parts": [{"type": "tool_call", "id": "c2", "name": "cancel", "arguments": ARGS2}]},
            {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c2", "response": ERROR}]},
            {"role": "assistant", "parts": [text(DONE)], "finish_reason": "stop"}]


def langchain_messages() -> list[dict]:
    """As LangChain's messages_to_dict writes a LangGraph state's messages (fields it fills with nulls left out)."""
    msg = lambda t, **data: {"type": t, "data": {"type": t, "additional_kwargs": {}, **data}}  # noqa: E731
    call = lambda i, n, a: {"name": n, "args": a, "id": i, "type": "tool_call"}  # noqa: E731
    return [msg("system", content=POLICY), msg("human", content=HI),
            msg("ai", content="", tool_calls=[call("c1", "get_user", ARGS1)], invalid_tool_calls=[]),
            msg("tool", content=json.dumps(USER), tool_call_id="c1", name="get_user", status="success"),
            msg("ai", content=SEE, tool_calls=[]), msg("human", content=YES),
            msg("ai", content=[{"type": "tool_use", "id": "c2", "name": "cancel", "input": ARGS2}],  # ChatAnthropic
                tool_calls=[call("c2", "cancel", ARGS2)]),
            msg("tool", content=ERROR, tool_call_id="c2", name="cancel", status="error"), msg("ai", content=DONE)]


def gemini_contents() -> list[dict]:
    """As the Gemini API's REST JSON writes the conversation (camelCase): a thought (not words said to the user) and
    its signature on the first call, which has no id (the SDK's automatic function calling answers it by name) and
    returns {"result": ...}; the second call has an id, answered with {"error": ...}."""
    text = lambda t: {"text": t}  # noqa: E731
    return [{"role": "user", "parts": [text(HI)]},
            {"role": "model", "parts": [{"text": "look up", "thought": True},
                                        {"functionCall": {"name": "get_user", "args": ARGS1}, "thoughtSignature": "c2ln"}]},
            {"role": "user", "parts": [{"functionResponse": {"name": "get_user", "response": {"result": USER}}}]},
            {"role": "model", "parts": [text(SEE)]}, {"role": "user", "parts": [text(YES)]},
            {"role": "model", "parts": [{"functionCall": {"id": "c2", "name": "cancel", "args": ARGS2}}]},
            {"role": "user", "parts": [{"functionResponse": {"id": "c2", "name": "cancel",
                                                             "response": {"error": ERROR.removeprefix("Error: ")}}}]},
            {"role": "model", "parts": [text(DONE)]}]


def pydantic_ai_messages() -> list[dict]:
    """As Pydantic AI's result.all_messages_json() writes the conversation: requests and responses of parts, the system
    prompt a part of the first request, a thinking part (not words said), the first call's arguments a dict and
    its tool's return the JSON data it returned, the second's arguments a JSON string (OpenAI's) and its tool failed
    (outcome "failed", as ToolFailed or a raised error writes it)."""
    now = "2026-12-06T10:00:00Z"
    request = lambda *parts: {"parts": list(parts), "timestamp": now, "instructions": None, "kind": "request",  # noqa: E731
                              "run_id": "r1"}
    response = lambda *parts: {"parts": list(parts), "usage": {"input_tokens": 50, "output_tokens": 9},  # noqa: E731
                               "model_name": "gpt-5", "timestamp": now, "kind": "response", "run_id": "r1"}
    text = lambda t: {"content": t, "id": None, "part_kind": "text"}  # noqa: E731
    user = lambda t: {"content": t, "timestamp": now, "part_kind": "user-prompt"}  # noqa: E731
    call = lambda i, n, a: {"tool_name": n, "args": a, "tool_call_id": i, "part_kind": "tool-call"}  # noqa: E731
    ret = lambda i, n, c, **o: {"tool_name": n, "content": c, "tool_call_id": i, "metadata": None,  # noqa: E731
                                "timestamp": now, "part_kind": "tool-return", **o}
    return [request({"content": POLICY, "timestamp": now, "dynamic_ref": None, "part_kind": "system-prompt"}, user(HI)),
            response({"content": "look up", "id": None, "signature": None, "part_kind": "thinking"},
                     call("c1", "get_user", ARGS1)),
            request(ret("c1", "get_user", USER)), response(text(SEE)), request(user(YES)),
            response(call("c2", "cancel", json.dumps(ARGS2))),
            request(ret("c2", "cancel", ERROR, outcome="failed")), response(text(DONE))]


def autogen_messages() -> list[dict]:
    """As an AutoGen AssistantAgent's model context holds the conversation (save_state()'s llm_context.messages,
    LLMMessages dumped by pydantic): the policy a SystemMessage the context was given, the calls FunctionCalls with
    their arguments as JSON text, the results one FunctionExecutionResultMessage a turn, the failed one is_error."""
    call = lambda i, n, a: {"content": [{"id": i, "arguments": json.dumps(a), "name": n}], "thought": None,  # noqa: E731
                            "source": "agent", "type": "AssistantMessage"}
    result = lambda i, n, c, e=False: {"content": [{"content": c, "name": n, "call_id": i, "is_error": e}],  # noqa: E731
                                       "type": "FunctionExecutionResultMessage"}
    words = lambda t, who="agent": ({"content": t, "source": who, "type": "UserMessage"} if who == "user"  # noqa: E731
                                    else {"content": t, "thought": None, "source": who, "type": "AssistantMessage"})
    return [{"content": POLICY, "type": "SystemMessage"}, words(HI, "user"), call("c1", "get_user", ARGS1),
            result("c1", "get_user", json.dumps(USER)), words(SEE), words(YES, "user"), call("c2", "cancel", ARGS2),
            result("c2", "cancel", ERROR, True), words(DONE)]


def llamaindex_messages() -> list[dict]:
    """As a LlamaIndex FunctionAgent's memory saves the conversation, [m.model_dump() for m in memory.get_all()]
    (llama-index-core 0.14, its OpenAI integration: each call a tool_call block and the SDK's copy in
    additional_kwargs; a result a tool message naming the call's id), a thinking block before the first call."""
    out = []
    for m in openai_messages():
        blocks = [{"block_type": "text", "text": m["content"]}] if m.get("content") else []
        kwargs = {"tool_call_id": m["tool_call_id"]} if m["role"] == "tool" else {}
        if m.get("tool_calls"):
            blocks += [{"block_type": "tool_call", "tool_call_id": c["id"], "tool_name": c["function"]["name"],
                        "tool_kwargs": c["function"]["arguments"]} for c in m["tool_calls"]]
            kwargs = {"tool_calls": m["tool_calls"]}
        out.append({"role": m["role"], "additional_kwargs": kwargs, "blocks": blocks})
    out[2]["blocks"].insert(0, {"block_type": "thinking", "content": "Look the user up.", "num_tokens": None,
                                "additional_information": {}})
    return out


def adk_events() -> list[dict]:
    """As a Google ADK session holds the conversation, session.model_dump_json(exclude_none=True)'s events (what the
    SQL session services store; tests/test_adk_memory.py replays it through a real Runner with a scripted model):
    snake_case, two invocations, an agent's calls and its function results authored by the agent, the results' role
    user, the first tool's dict its response as returned, the second's {"error": ...} (ADK's convention for a tool
    that failed)."""
    acts = {"state_delta": {}, "artifact_delta": {}, "requested_auth_configs": {}, "requested_tool_confirmations": {}}
    event = lambda n, inv, author, role, *parts: {  # noqa: E731
        "content": {"parts": list(parts), "role": role}, "invocation_id": f"e-{inv}", "author": author,
        "actions": acts, "id": f"ev-{n}", "timestamp": 1796600000.0 + n}
    call = lambda i, n, a: {"function_call": {"id": i, "args": a, "name": n}}  # noqa: E731
    answer = lambda i, n, r: {"function_response": {"id": i, "name": n, "response": r}}  # noqa: E731
    return [event(0, 1, "user", "user", {"text": HI}),
            event(1, 1, "airline_agent", "model", call("adk-c1", "get_user", ARGS1)),
            event(2, 1, "airline_agent", "user", answer("adk-c1", "get_user", USER)),
            event(3, 1, "airline_agent", "model", {"text": SEE}),
            event(4, 2, "user", "user", {"text": YES}),
            event(5, 2, "airline_agent", "model", call("adk-c2", "cancel", ARGS2)),
            event(6, 2, "airline_agent", "user", answer("adk-c2", "cancel", {"error": ERROR.removeprefix("Error: ")})),
            event(7, 2, "airline_agent", "model", {"text": DONE})]


def adk_session() -> dict:
    """The session around :func:`adk_events`, dumped with the agent's instruction added as its "system" (the session
    does not hold it)."""
    return {"id": "conv-1", "app_name": "airline", "user_id": "ann_lee_123", "state": {}, "events": adk_events(),
            "last_update_time": 1796600007.0, "system": POLICY}


def agent_framework_messages() -> list[dict]:
    """As a Microsoft Agent Framework session holds the conversation (agent-framework-core 1.26, session.to_dict()'s
    state["in_memory"]["messages"]; tests/test_agent_framework_memory.py makes one with a real Agent): each message's
    contents typed, a call's id call_id beside the framework's own id, the results in tool messages, the failed one
    marked by the exception the framework writes as FunctionInvocationError (its words the program's, as
    include_detailed_errors gives them), a reasoning content before the first call."""
    content = lambda t, **kw: {"type": t, **kw, "additional_properties": {}}  # noqa: E731
    message = lambda role, *contents: {"role": role, "contents": list(contents), **(  # noqa: E731
        {"author_name": "airline_agent"} if role != "user" else {}), "additional_properties": {}, "type": "message"}
    call = lambda i, n, a: content("function_call", call_id=i, name=n, arguments=a, hosted=False, id=f"af-call-{i}")  # noqa: E731
    result = lambda i, r, **kw: content("function_result", call_id=i, **kw, result=r,  # noqa: E731
                                        items=[content("text", text=r)], id=f"af-call-{i}")
    return [message("user", content("text", text=HI)),
            message("assistant", content("text_reasoning", text="Look the user up."), call("c1", "get_user", ARGS1)),
            message("tool", result("c1", json.dumps(USER))), message("assistant", content("text", text=SEE)),
            message("user", content("text", text=YES)), message("assistant", call("c2", "cancel", json.dumps(ARGS2))),
            message("tool", result("c2", ERROR, exception="FunctionInvocationError")),
            message("assistant", content("text", text=DONE))]


def agent_framework_session() -> dict:
    """The session around :func:`agent_framework_messages`, with the agent's instructions added beside it (the
    session does not hold them)."""
    return {"type": "session", "session_id": "conv-1", "service_session_id": None,
            "state": {"in_memory": {"messages": agent_framework_messages()}}, "instructions": POLICY}


def smolagents_steps() -> list[dict]:
    """As a smolagents ToolCallingAgent's memory dumps the conversation, two runs (run(HI), then run(YES,
    reset=False)): [agent.memory.system_prompt.dict(), *agent.memory.get_succinct_steps()], the policy the system
    prompt's step (written as the policy alone, where smolagents' own prompt holds it among its rules), each answer a
    final_answer call; the cancel raised, so its step holds no tool_calls but the model's message and the error
    (its message written as the tool's words, where smolagents wraps them: "Error executing tool 'cancel' ...")."""
    timing = {"start_time": 1796601600.0, "end_time": 1796601601.0, "duration": 1.0}
    call = lambda i, n, a: {"id": i, "type": "function", "function": {"name": n, "arguments": a}}  # noqa: E731

    def action(n: int, calls: list, observations: str | None, error: str | None = None) -> dict:
        message = {"role": "assistant", "content": None, "tool_calls": [
            {"function": {"arguments": c["function"]["arguments"], "name": c["function"]["name"], "description": None},
             "id": c["id"], "type": "function"} for c in calls], "raw": None, "token_usage": None}
        return {"step_number": n, "timing": timing, "tool_calls": [] if error else calls,
                "error": {"type": "AgentToolExecutionError", "message": error} if error else None,
                "model_output_message": message, "model_output": None, "code_action": None,
                "observations": observations, "observations_images": None, "action_output": None,
                "token_usage": None, "is_final_answer": calls[0]["function"]["name"] == "final_answer"}
    return [{"system_prompt": POLICY}, {"task": HI, "task_images": None},
            action(1, [call("c1", "get_user", ARGS1)], json.dumps(USER)),
            action(2, [call("a1", "final_answer", {"answer": SEE})], SEE), {"task": YES, "task_images": None},
            action(1, [call("c2", "cancel", ARGS2)], None, ERROR),
            action(2, [call("a2", "final_answer", {"answer": DONE})], DONE)]


GEMINI_PART = ("media_resolution", "code_execution_result", "executable_code", "file_data", "function_call",
               "function_response", "inline_data", "text", "thought", "thought_signature", "video_metadata",
               "tool_call", "tool_response", "part_metadata")  # google-genai's Part fields


def snake_case(contents: list[dict]) -> list[dict]:
    """Gemini contents as the SDK's ``model_dump()`` writes them: snake_case, every unset field null (a function's
    arguments and response are the caller's own, kept as they are)."""
    def part(p: dict) -> dict:
        out = dict.fromkeys(GEMINI_PART)
        for k, v in p.items():
            k = re.sub(r"[A-Z]", lambda x: "_" + x.group().lower(), k)
            if k == "function_call":
                v = {"id": None, "partial_args": None, "will_continue": None, **v}
            elif k == "function_response":
                v = {"will_continue": None, "scheduling": None, "parts": None, "id": None, **v}
            out[k] = v
        return out
    return [{"parts": [part(p) for p in c["parts"]], "role": c.get("role")} for c in contents]


def swe_agent_history() -> list[dict]:
    """As SWE-agent 1.x writes its history with function calling: every item names its agent and message type, a
    demonstration (a solved example in the prompt, not this episode's memory) is marked ``is_demo``, a tool item
    answers by ``tool_call_ids``, and an assistant's ``thought`` and ``action`` repeat its words and call."""
    item = lambda role, content, kind, **more: {"role": role, "content": content, "agent": "main",  # noqa: E731
                                                "message_type": kind, **more}
    call = lambda i, n, a: {"id": i, "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}  # noqa: E731
    return [item("system", POLICY, "system_prompt"),
            item("user", "Demonstration: the user said their id is bo_ng_9; get_user bo_ng_9 found them.",
                 "demonstration", is_demo=True),
            item("user", HI, "observation"),
            item("assistant", "", "action", thought="", action="get_user ann_lee_123",
                 tool_calls=[call("c1", "get_user", ARGS1)]),
            item("tool", json.dumps(USER), "observation", tool_call_ids=["c1"]),
            item("assistant", SEE, "thought", thought=SEE, action=""), item("user", YES, "observation"),
            item("assistant", "", "action", thought="", action="cancel QX7Z9A ann_lee_123",
                 tool_calls=[call("c2", "cancel", ARGS2)]),
            item("tool", ERROR, "observation", tool_call_ids=["c2"]),
            item("assistant", DONE, "thought", thought=DONE, action="")]


def swe_agent_traj(history: list[dict]) -> dict:
    """A .traj as SWE-agent saves it: the steps, the history, what the run ended with."""
    steps = [{"action": m["action"], "observation": nxt["content"], "response": m["content"], "thought": m["thought"],
              "execution_time": 0.1, "state": {"working_dir": "/repo"}, "query": [], "extra_info": {}}
             for m, nxt in zip(history, history[1:]) if m["role"] == "assistant" and m.get("tool_calls")]
    return {"trajectory": steps, "history": history,
            "info": {"exit_status": "submitted", "model_stats": {"api_calls": len(steps)}},
            "replay_config": None, "environment": "main"}


def to_openhands(msgs: list[dict], internal: bool = False) -> list[dict]:
    """Chat messages as the event stream OpenHands saves (openhands/events/serialization/event.py, event_to_dict;
    the calls as openhands/agenthub/codeact_agent/function_calling.py makes them): a tool the agent was given is an
    MCP action whose ``tool_call_metadata`` holds the model's whole response, answered by an ``mcp`` observation
    whose ``cause`` is the action; ``internal``: a recall and an agent-state observation after the first user turn,
    as a run writes them."""
    events: list[dict] = []
    add = lambda **e: events.append({"id": len(events), "timestamp": "2025-05-01T10:00:00", **e}) or events[-1]  # noqa: E731
    for n, m in enumerate(msgs):
        if m["role"] == "system":
            add(source="agent", message=m["content"], action="system",
                args={"content": m["content"], "tools": [], "openhands_version": "0.38.0", "agent_class": "CodeActAgent"})
        elif m["role"] == "user":
            add(source="user", message=m["content"], action="message",
                args={"content": m["content"], "image_urls": None, "wait_for_response": False})
            if internal and n <= 1:
                add(source="environment", message="Added workspace context", cause=events[-1]["id"],
                    observation="recall", content="Added workspace context", extras={"recall_type": "workspace_context"})
                add(source="environment", message="", observation="agent_state_changed", content="",
                    extras={"agent_state": "running", "reason": ""})
        elif m["role"] == "assistant" and not m.get("tool_calls"):
            add(source="agent", message=m["content"], action="message",
                args={"content": m["content"], "image_urls": None, "wait_for_response": True})
        elif m["role"] == "assistant":
            response = {"id": f"chatcmpl-{n}", "model": "gpt-4o", "object": "chat.completion", "choices": [
                {"finish_reason": "tool_calls", "index": 0, "message": {"content": m.get("content"), "role": "assistant",
                                                                        "tool_calls": m["tool_calls"]}}]}
            for j, c in enumerate(m["tool_calls"]):  # one action a call, each answered before the next runs
                meta = {"function_name": c["function"]["name"], "tool_call_id": c["id"], "model_response": response,
                        "total_calls_in_response": len(m["tool_calls"])}
                args = json.loads(c["function"]["arguments"])
                action = add(source="agent", message="", action="call_tool_mcp", tool_call_metadata=meta,
                             args={"name": c["function"]["name"], "arguments": args,
                                   "thought": m.get("content") or "" if j == 0 else ""})
                result = next(r for r in msgs[n:] if r["role"] == "tool" and r["tool_call_id"] == c["id"])
                add(source="agent", message=result["content"], cause=action["id"], observation="mcp",
                    tool_call_metadata=meta, content=result["content"],
                    extras={"name": c["function"]["name"], "arguments": args})
    return events


def openhands_events() -> list[dict]:
    return to_openhands(openai_messages(), internal=True)


def to_openhands_v1(msgs: list[dict], internal: bool = False) -> list[dict]:
    """Chat messages as the events of an OpenHands V1 conversation, as the software-agent-sdk dumps them
    (openhands-sdk/openhands/sdk/event/llm_convertible/: SystemPromptEvent, MessageEvent, ActionEvent with the
    model's ``tool_call`` and the ``action`` the SDK built from it, ObservationEvent answering its ``tool_call_id``;
    event/base.py, each event's id, timestamp and source): the tools are the agent's own (an SDK ToolDefinition
    whose observation's ``content`` is the tool's text, openhands/sdk/tool/schema.py), the calls of one response
    share its ``llm_response_id``, its words the first call's ``thought``; ``internal``: a state update after the
    first user turn, as a conversation writes them."""
    events: list[dict] = []
    text = lambda t: [{"cache_prompt": False, "type": "text", "text": t}] if t else []  # noqa: E731

    def add(kind: str, source: str, **fields) -> dict:
        events.append({"kind": kind, "id": f"00000000-0000-4000-8000-{len(events):012d}",
                       "timestamp": "2026-01-05T10:00:00.000000", "source": source, **fields})
        return events[-1]

    def message(role: str, words: str, response: str | None) -> dict:
        return {"llm_message": {"role": role, "content": text(words), "tool_calls": None, "tool_call_id": None,
                                "name": None, "reasoning_content": None, "thinking_blocks": [],
                                "responses_reasoning_item": None},
                "llm_response_id": response, "activated_skills": [], "extended_content": [], "sender": None,
                "critic_result": None}

    kind = lambda name, suffix: "".join(w.title() for w in name.split("_")) + suffix  # noqa: E731
    for n, m in enumerate(msgs):
        if m["role"] == "system":
            add("SystemPromptEvent", "agent", system_prompt=text(m["content"])[0], tools=[], dynamic_context=None)
        elif m["role"] == "user":
            add("MessageEvent", "user", **message("user", m["content"], None))
            if internal and n <= 1:
                add("ConversationStateUpdateEvent", "environment", key="execution_status", value="running")
        elif m["role"] == "assistant" and not m.get("tool_calls"):
            add("MessageEvent", "agent", **message("assistant", m["content"], f"chatcmpl-{n}"))
        elif m["role"] == "assistant":
            calls = m["tool_calls"]
            actions = [add("ActionEvent", "agent", thought=text(m.get("content")) if j == 0 else [],
                           reasoning_content=None, thinking_blocks=[], responses_reasoning_item=None,
                           action={"kind": kind(c["function"]["name"], "Action"),
                                   **json.loads(c["function"]["arguments"])},
                           tool_name=c["function"]["name"], tool_call_id=c["id"],
                           tool_call={"id": c["id"], "name": c["function"]["name"],
                                      "arguments": c["function"]["arguments"], "origin": "completion"},
                           llm_response_id=f"chatcmpl-{n}", security_risk="UNKNOWN", critic_result=None,
                           summary=None)
                       for j, c in enumerate(calls)]  # the SDK emits a response's actions, then runs them
            for action in actions:
                result = next(r for r in msgs[n:] if r["role"] == "tool" and r["tool_call_id"] == action["tool_call_id"])
                add("ObservationEvent", "environment", tool_name=action["tool_name"],
                    tool_call_id=action["tool_call_id"], action_id=action["id"], extended_content=[],
                    observation={"kind": kind(action["tool_name"], "Observation"), "content": text(result["content"]),
                                 "is_error": False})
    return events


def openhands_v1_events() -> list[dict]:
    return to_openhands_v1(openai_messages(), internal=True)


def otlp(messages: list[dict], conversation: str = "conv-1", system: str = POLICY) -> dict:
    """The spans an instrumented agent exports: one chat span per model call (in the file out of order), each
    with the history so far as input and the model's message as output."""
    attr = lambda k, v: {"key": k, "value": {"stringValue": v}}  # noqa: E731
    calls = [i for i, m in enumerate(messages) if m["role"] == "assistant"]
    spans = [{"traceId": "t1", "spanId": f"s{n}", "name": "chat gpt", "startTimeUnixNano": str(1000 + n),
              "attributes": [attr("gen_ai.operation.name", "chat"), attr("gen_ai.conversation.id", conversation),
                             attr("gen_ai.system_instructions", json.dumps([{"type": "text", "content": system}])),
                             attr("gen_ai.input.messages", json.dumps(messages[:i])),
                             attr("gen_ai.output.messages", json.dumps(messages[i:i + 1]))]}
             for n, i in enumerate(calls)]
    spans.append({"traceId": "t1", "spanId": "tool", "name": "execute_tool cancel", "startTimeUnixNano": "1",
                  "attributes": [attr("gen_ai.operation.name", "execute_tool")]})
    return {"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"scope": {"name": "x"},
                                                                               "spans": spans[::-1]}]}]}


EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "logs"


def write_all(tmp_path: Path) -> dict[str, Path]:
    """The conversation in every format, as each is written to a file (examples/logs holds these files)."""
    files = {"openai": tmp_path / "openai.jsonl", "tau1": tmp_path / "gpt-airline.json",
             "tau2": tmp_path / "tau2-results.json", "anthropic": tmp_path / "anthropic.jsonl",
             "responses": tmp_path / "responses.jsonl", "otel": tmp_path / "otel-traces.json",
             "langchain": tmp_path / "langchain.jsonl", "swe-agent": tmp_path / "swe-agent.traj",
             "bedrock": tmp_path / "bedrock.jsonl", "gemini": tmp_path / "gemini.jsonl",
             "openhands": tmp_path / "openhands.json", "openhands-v1": tmp_path / "openhands-v1.jsonl",
             "codex": tmp_path / "codex.jsonl", "pydantic-ai": tmp_path / "pydantic-ai.jsonl",
             "autogen": tmp_path / "autogen.json", "smolagents": tmp_path / "smolagents.json",
             "llamaindex": tmp_path / "llamaindex.json", "adk": tmp_path / "adk.json",
             "agent-framework": tmp_path / "agent-framework.json"}
    files["openai"].write_text(json.dumps({"id": "conv-1", "messages": openai_messages()}) + "\n")
    files["tau1"].write_text(json.dumps([{"task_id": 7, "trial": 0, "traj": openai_messages()}]))
    files["tau2"].write_text(json.dumps({"info": {"environment_info": {"domain_name": "airline", "policy": POLICY},
                                                  "agent_info": {"llm": "gpt"}},
                                         "tasks": [], "simulations": [{"id": "s", "task_id": "7", "trial": 0,
                                                                       "messages": tau2_messages()}]}))
    files["anthropic"].write_text(json.dumps({"id": "conv-1", "system": [{"type": "text", "text": POLICY}],
                                              "messages": anthropic_messages()}) + "\n")
    items = responses_items()
    files["responses"].write_text(json.dumps({"id": "conv-1", "instructions": POLICY, "input": items[:6],
                                              "output": items[6:]}) + "\n")
    files["otel"].write_text(json.dumps(otlp(genai_messages())))
    files["langchain"].write_text(json.dumps({"id": "conv-1", "messages": langchain_messages()}) + "\n")
    files["pydantic-ai"].write_text(json.dumps({"id": "conv-1", "messages": pydantic_ai_messages()}) + "\n")
    files["autogen"].write_text(json.dumps({"type": "AssistantAgentState", "version": "1.0.0",  # save_state()
                                            "llm_context": {"messages": autogen_messages()}}, indent=2) + "\n")
    files["smolagents"].write_text(json.dumps(smolagents_steps(), indent=2) + "\n")  # json.dump(steps, f)
    files["llamaindex"].write_text(json.dumps(llamaindex_messages(), indent=2) + "\n")  # memory.get_all()'s dumps
    files["adk"].write_text(json.dumps(adk_session(), indent=2) + "\n")  # session.model_dump_json(), "system" added
    files["agent-framework"].write_text(json.dumps(agent_framework_session(), indent=2) + "\n")  # session.to_dict()
    files["swe-agent"].write_text(json.dumps(swe_agent_traj(swe_agent_history()), indent=2) + "\n")
    converse = bedrock_messages()  # the last Converse call logged: its request (with an id) and its response's output
    files["bedrock"].write_text(json.dumps({"id": "conv-1", "modelId": "anthropic.claude-sonnet-4",
                                            "system": [{"text": POLICY}, {"cachePoint": {"type": "default"}}],
                                            "messages": converse[:-1], "output": {"message": converse[-1]}}) + "\n")
    files["gemini"].write_text(json.dumps({"id": "conv-1", "systemInstruction": {"parts": [{"text": POLICY}]},
                                           "contents": gemini_contents()}) + "\n")
    files["openhands"].write_text(json.dumps(openhands_events(), indent=2) + "\n")  # as save_trajectory_path
    files["openhands-v1"].write_text(json.dumps({  # a benchmark's output.jsonl line (benchmarks/utils/models.py)
        "instance_id": "openhands-v1", "attempt": 1, "test_result": {}, "instruction": HI, "metadata": None,
        "history": openhands_v1_events(), "metrics": None, "error": None, "instance": None,
        "runtime_runs": None}) + "\n")
    # imported here, not above: those modules import this one's conversation (the format's tests hold its writer)
    from test_format_claude_code import to_claude_code
    from test_format_codex import example_rollout
    from test_format_gemini_cli import as_jsonl, to_gemini_cli
    from test_format_headless import example_codex_exec
    from test_format_langfuse import example_session
    from test_format_mini_swe_agent import example_mini_swe_agent

    files["codex"].write_text("".join(json.dumps(line) + "\n" for line in example_rollout()))  # a session's rollout
    files["claude-code"] = tmp_path / "claude-code.jsonl"  # a session file as Claude Code appends it
    files["claude-code"].write_text("".join(json.dumps(e) + "\n" for e in to_claude_code(openai_messages())))
    files["codex-exec"] = tmp_path / "codex-exec.jsonl"  # codex exec --json's stdout: two runs of one thread
    files["codex-exec"].write_text("".join(json.dumps(e) + "\n" for e in example_codex_exec()))
    files["gemini-cli"] = tmp_path / "gemini-cli.jsonl"  # a session file as Gemini CLI appends it (chats/session-*)
    files["gemini-cli"].write_text("".join(json.dumps(r) + "\n" for r in as_jsonl(to_gemini_cli(openai_messages()))))
    files["mini-swe-agent"] = tmp_path / "mini-swe-agent.traj.json"  # a shell agent's run: no airline tools
    files["mini-swe-agent"].write_text(json.dumps(example_mini_swe_agent(), indent=2) + "\n")
    files["langfuse"] = tmp_path / "langfuse.jsonl"  # two traces of one session, as the API returns each
    files["langfuse"].write_text("".join(json.dumps(t) + "\n" for t in example_session()))
    return files


def test_every_format_gives_the_same_agent_log_lines(tmp_path):
    files = write_all(tmp_path)
    assert set(files) == set(FORMATS)
    expected = list(iter_transcript_events(files["openai"]))
    assert sum("useful_memory_steps" in e for e in expected) == 1  # the conversation has a decision point
    for name, path in files.items():
        report = ImportReport()
        events = list(iter_transcript_events(path, report=report))
        assert report.formats == {name: 1}, name
        if name in ("swe-agent", "openhands", "openhands-v1", "autogen", "smolagents", "llamaindex"):  # named by
            # the instance (or session, or an AutoGen state's, smolagents memory's or LlamaIndex history's file)
            assert {e["episode_id"] for e in events} == {name}
            events = [{**e, "episode_id": "conv-1"} for e in events]
        if name == "adk":  # named by the session's user, app and id, ADK's key of a session
            assert {e["episode_id"] for e in events} == {"ann_lee_123_airline_conv-1"}
            events = [{**e, "episode_id": "conv-1"} for e in events]
        if name == "codex":  # named by the session's id (a UUID), as Codex names the rollout
            events = [{**e, "episode_id": "conv-1"} for e in events]
        if name == "codex-exec":  # it prints no prompt and no user words: tests/test_format_headless.py compares it
            continue  # with the OpenAI events of the conversation it holds
        if name == "mini-swe-agent":  # its one tool is a shell: tests/test_format_mini_swe_agent.py reads its run
            continue
        if name in ("tau1", "tau2"):  # the spec names their episodes by task and trial, and keeps the task's group
            assert events[0]["episode_id"] == f"{name}-airline-gpt-task7-trial0"
            events = [{**{k: v for k, v in e.items() if k != "meta"}, "episode_id": "conv-1",
                       **({"meta": {"needed": e["meta"]["needed"]}} if "needed" in e.get("meta", {}) else {})}
                      for e in events]
        assert events == expected, name
        assert report.user_tool_calls == (1 if name == "tau2" else 0)
        if name == "swe-agent":  # the demonstration is no event: had it been read, every step after it would move
            assert report.ignored == {"demonstration items": 1}
        if name == "openhands":  # OpenHands' own events are no turn of the conversation
            assert report.ignored == {"recall observations": 1, "agent_state_changed observations": 1}
        if name == "openhands-v1":
            assert report.ignored == {"ConversationStateUpdateEvent events": 1}
    forced = list(iter_transcript_events(files["anthropic"], format="anthropic"))
    assert forced == expected


def test_the_shipped_examples_are_this_conversation(tmp_path):
    """examples/logs (the README's commands) holds exactly these files, so the README shows what is tested."""
    for path in write_all(tmp_path).values():
        shipped = EXAMPLES / path.name
        assert shipped.is_file(), f"regenerate examples/logs: {shipped} is missing"
        load = (lambda p: [json.loads(x) for x in p.read_text().splitlines()]) if path.suffix == ".jsonl" else (
            lambda p: json.loads(p.read_text()))
        assert load(shipped) == load(path), f"{shipped} differs from the conversation of tests/test_formats.py"


def test_formats_are_told_from_the_messages():
    assert [detect(m) for m in (openai_messages(), tau2_messages(), anthropic_messages(), responses_items(),
                                genai_messages(), langchain_messages(), swe_agent_history(), bedrock_messages(),
                                gemini_contents(), snake_case(gemini_contents()), openhands_events(),
                                openhands_v1_events(), pydantic_ai_messages(), autogen_messages(),
                                smolagents_steps(), llamaindex_messages(), adk_events(), agent_framework_messages())] == [
        "openai", "tau2", "anthropic", "responses", "otel", "langchain", "swe-agent", "bedrock", "gemini", "gemini",
        "openhands", "openhands-v1", "pydantic-ai", "autogen", "smolagents", "llamaindex", "adk", "agent-framework"]
    chat = to_chat(tau2_messages())
    assert chat.user_tool_calls == 1 and "toggle_airplane_mode" not in json.dumps(chat.messages)
    assert to_chat(anthropic_messages()).ignored == {"thinking": 1}
    assert to_chat(bedrock_messages()).ignored == {"reasoningContent": 1}  # not words the agent said
    assert to_chat(pydantic_ai_messages()).ignored == {"thinking": 1}
    assert to_chat(agent_framework_messages()).ignored == {"text_reasoning contents": 1}
    genai = [{"role": "Human", "parts": [{"type": "text", "content": "hi"}]},  # as LangChain instrumentations write
             {"role": "AI", "parts": [{"type": "text", "content": "hello"}], "finish_reason": "stop"}]
    assert [m["role"] for m in to_chat(genai).messages] == ["user", "assistant"]


@pytest.mark.parametrize("name, messages, policy", [
    ("openai", openai_messages, ""), ("tau2", tau2_messages, POLICY), ("anthropic", anthropic_messages, POLICY),
    ("responses", responses_items, POLICY), ("otel", genai_messages, POLICY), ("langchain", langchain_messages, ""),
    ("swe-agent", swe_agent_history, ""), ("bedrock", bedrock_messages, POLICY), ("gemini", gemini_contents, POLICY),
    ("openhands", openhands_events, ""), ("openhands-v1", openhands_v1_events, ""),
    ("pydantic-ai", pydantic_ai_messages, ""), ("autogen", autogen_messages, ""),
    ("smolagents", smolagents_steps, ""), ("llamaindex", llamaindex_messages, ""), ("adk", adk_events, ""),
    ("agent-framework", agent_framework_messages, "")])
def test_live_state_reads_every_format(name, messages, policy):
    """The state before the second call, from the running conversation in each format, is the importer's."""
    want = live_state(openai_messages()[:6], openai_messages()[6]["tool_calls"])
    msgs = messages()
    last = max(i for i, m in enumerate(msgs) if "c2" in json.dumps(m) and m.get("role") != "tool"
               and m.get("type") not in ("function_call_output", "tool") and "observation" not in m
               and m.get("kind") != "ObservationEvent" and m.get("type") != "FunctionExecutionResultMessage"
               and not any(r in json.dumps(m) for r in ("tool_result", "toolResult", "functionResponse", "tool-return",
                                                        "function_response")))
    call = {"tau2": lambda m: m["tool_calls"][0], "anthropic": lambda m: m["content"][0],
            "responses": lambda m: m, "otel": lambda m: m["parts"][0],
            "openai": lambda m: m["tool_calls"][0], "langchain": lambda m: m["data"]["tool_calls"][0],
            "swe-agent": lambda m: m["tool_calls"][0], "bedrock": lambda m: m["content"][0],
            "gemini": lambda m: m["parts"][0],
            "openhands": lambda m: m["tool_call_metadata"]["model_response"]["choices"][0]["message"]["tool_calls"][0],
            "openhands-v1": lambda m: m["tool_call"], "pydantic-ai": lambda m: m["parts"][0],
            "autogen": lambda m: m["content"][0], "smolagents": lambda m: m["model_output_message"]["tool_calls"][0],
            "llamaindex": lambda m: m["additional_kwargs"]["tool_calls"][0],
            "adk": lambda m: m["content"]["parts"][0]["function_call"],
            "agent-framework": lambda m: m["contents"][0],
            }[name](msgs[last])
    assert live_state(msgs[:last], call, policy=policy) == want
    assert want["uncertainty_flags"] == ["reservation_id", "user_id"]


NO_TOOLS = {
    "openai": {"id": "a", "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]},
    "anthropic": {"id": "a", "system": "be kind", "messages": [{"role": "user", "content": [{"type": "text",
                                                                                            "text": "hi"}]}]},
    "responses": {"id": "a", "input": "hi", "output": [{"type": "message", "role": "assistant",
                                                        "content": [{"type": "output_text", "text": "hello"}]}]},
    "langchain": {"id": "a", "messages": [{"type": "human", "data": {"content": "hi"}},
                                          {"type": "ai", "data": {"content": "hello", "tool_calls": []}}]},
    "bedrock": {"id": "a", "system": [{"text": "be kind"}], "messages": [{"role": "user", "content": [{"text": "hi"}]}],
                "output": {"message": {"role": "assistant", "content": [{"text": "hello"}]}}},
    "gemini": {"id": "a", "contents": [{"role": "user", "parts": [{"text": "hi"}]},
                                       {"role": "model", "parts": [{"text": "hello"}]}]},
    "pydantic-ai": {"id": "a", "messages": [{"kind": "request", "parts": [{"content": "hi", "part_kind": "user-prompt"}]},
                                            {"kind": "response", "parts": [{"content": "hello", "part_kind": "text"}]}]},
    "autogen": {"id": "a", "messages": [{"content": "hi", "source": "user", "type": "UserMessage"},
                                        {"content": "hello", "thought": None, "source": "a", "type": "AssistantMessage"}]},
    "smolagents": {"id": "a", "steps": [{"task": "hi", "task_images": None}, {
        "step_number": 1, "tool_calls": [{"id": "a1", "type": "function", "function": {
            "name": "final_answer", "arguments": {"answer": "hello"}}}], "model_output": None, "observations": "hello",
        "error": None, "is_final_answer": True}]},
    "llamaindex": {"id": "a", "messages": [{"role": "user", "additional_kwargs": {}, "blocks": [
        {"block_type": "text", "text": "hi"}]}, {"role": "assistant", "additional_kwargs": {}, "blocks": [
            {"block_type": "text", "text": "hello"}]}]},
    "adk": {"id": "a", "app_name": "app", "user_id": "u", "events": [
        {"author": "user", "invocation_id": "e-1", "content": {"role": "user", "parts": [{"text": "hi"}]}},
        {"author": "bot", "invocation_id": "e-1", "content": {"role": "model", "parts": [{"text": "hello"}]}}]},
    "langfuse": {"id": "a", "timestamp": "2026-01-05T10:00:00Z", "observations": [  # a trace of one generation
        {"id": "g", "traceId": "a", "type": "GENERATION", "startTime": "2026-01-05T10:00:01Z",
         "input": [{"role": "user", "content": "hi"}], "output": {"role": "assistant", "content": "hello"}}]},
    "agent-framework": {"type": "session", "session_id": "a", "state": {"in_memory": {"messages": [
        {"type": "message", "role": "user", "contents": [{"type": "text", "text": "hi"}]},
        {"type": "message", "role": "assistant", "contents": [{"type": "text", "text": "hello"}]}]}}},
}


@pytest.mark.parametrize("name", list(FORMATS))
def test_a_conversation_without_tools_is_refused_unless_allowed(name, tmp_path, capsys):
    path = tmp_path / {"tau1": "m-shop.json", "tau2": "r.json", "otel": "t.jsonl"}.get(name, "c.jsonl")
    if name in NO_TOOLS:
        path.write_text(json.dumps(NO_TOOLS[name]) + "\n")
    elif name == "tau1":
        path.write_text(json.dumps([{"task_id": 1, "traj": NO_TOOLS["openai"]["messages"]}]))
    elif name == "tau2":
        path.write_text(json.dumps({"info": {}, "tasks": [], "simulations": [
            {"task_id": "1", "trial": 0, "messages": NO_TOOLS["openai"]["messages"]}]}))
    elif name == "swe-agent":  # a run whose model never gave a command (every output a format error, say)
        path = tmp_path / "c.traj"
        path.write_text(json.dumps({"history": [{"role": "user", "content": "hi", "message_type": "observation"},
                                                {"role": "assistant", "content": "hello", "action": ""}]}))
    elif name == "openhands":  # a run that only talked
        path = tmp_path / "c.json"
        path.write_text(json.dumps(to_openhands(NO_TOOLS["openai"]["messages"])))
    elif name == "openhands-v1":
        path = tmp_path / "c.json"
        path.write_text(json.dumps(to_openhands_v1(NO_TOOLS["openai"]["messages"])))
    else:
        path.write_text(json.dumps(otlp([{"role": "user", "parts": [{"type": "text", "content": "hi"}]},
                                         {"role": "assistant", "parts": [{"type": "text", "content": "hello"}]}])))
    out = tmp_path / "out.jsonl"
    assert main([str(path), str(out)]) == 1 and not out.exists()
    assert "no tool call was read" in capsys.readouterr().err
    assert main([str(path), str(out), "--allow-empty"]) == 0 and out.read_text().count("\n") >= 1


def test_a_file_without_a_tool_call_is_not_told_to_try_the_reader_that_read_it(tmp_path, capsys):
    """Found by review: Anthropic conversations holding tool_result blocks but no tool_use were refused with
    "content blocks of type tool_result found in 1 conversations: the anthropic reader reads these, try --format
    anthropic", the reader that had read them; another reader's calls are refused per conversation before this."""
    path = tmp_path / "results_only.jsonl"
    path.write_text(json.dumps({"id": "a", "messages": [
        {"role": "user", "content": "My id is mia_li_3668."}, {"role": "assistant", "content": "Looking."},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ABC123"}]}]}) + "\n")
    assert main([str(path), str(tmp_path / "o.jsonl")]) == 1
    err = capsys.readouterr().err
    assert ("(formats read: anthropic 1); content blocks of type tool_result found in 1 conversations, read by the "
            "anthropic reader without a tool call among them; if these conversations really have no tools, pass "
            "--allow-empty") in err, err
    assert "try --format" not in err


def test_the_wrong_reader_says_which_one_reads_the_file(tmp_path, capsys):
    path = write_all(tmp_path)["anthropic"]
    assert main([str(path), str(tmp_path / "o.jsonl"), "--format", "openai"]) == 1
    err = capsys.readouterr().err
    assert "content blocks of type tool_use found: the anthropic reader reads these, try --format anthropic" in err
    # a reader that also takes another format's calls (tau2 reads OpenAI entries) is no reason to call them tau2
    openai = write_all(tmp_path)["openai"]
    assert main([str(openai), str(tmp_path / "o.jsonl"), "--format", "tau2"]) == 1
    assert ("tool calls read by the tau2 reader, but 'tool_calls' entries with a 'function' found: the openai "
            "reader reads these, try --format openai") in capsys.readouterr().err
    tau2 = write_all(tmp_path)["tau2"]
    assert main([str(tau2), str(tmp_path / "o.jsonl"), "--format", "tau2"]) == 0
    capsys.readouterr()
    assert main([str(openai), str(tmp_path / "o.jsonl"), "--format", "tau1"]) == 1  # was read as openai, silently
    assert "--format tau1 reads a tau-bench v1 file" in capsys.readouterr().err
    assert main([str(write_all(tmp_path)["tau1"]), str(tmp_path / "o.jsonl"), "--format", "tau1"]) == 0
    capsys.readouterr()
    anthropic = write_all(tmp_path)["anthropic"]  # the tau2 reader crashed on its blocks: say which reader reads them
    assert main([str(anthropic), str(tmp_path / "o.jsonl"), "--format", "tau2"]) == 1
    assert "which the anthropic reader reads: try --format anthropic" in capsys.readouterr().err
    otel = tmp_path / "legacy.json"  # spans with vendor attributes only: no messages this reader reads
    otel.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "t", "attributes": [
        {"key": "gen_ai.prompt.0.content", "value": {"stringValue": "hi"}}]}]}]}]}))
    assert main([str(otel), str(tmp_path / "o.jsonl")]) == 1
    assert "no span carries gen_ai.input.messages" in capsys.readouterr().err


def test_a_tool_calls_arguments_with_a_key_twice_read_as_the_tool_did():
    """Arguments are a model's text that the agent's framework parsed the usual way (the last value wins): the
    call is kept with that value, not refused, as the whole-file readers refuse a key given twice."""
    from sam_model.data.chatmessages import parse_tool_calls

    msg = {"role": "assistant", "tool_calls": [{"id": "1", "function": {
        "name": "book", "arguments": '{"date": "May 1", "date": "May 2"}'}}]}
    (call,) = parse_tool_calls(msg, "t.jsonl:1")
    assert call.arguments == {"date": "May 2"}


def test_a_transcript_with_a_key_twice_reads_as_its_client_did(tmp_path):
    """Arguments in object form (Anthropic's tool_use input, a chat export's parsed arguments) with a key twice were
    refused, and a first line holding one made a .jsonl transcript look like an agent log (found by review): a
    transcript is model output exported by a program, read here as that program read it."""
    line = ('{"id": "c", "messages": [{"role": "user", "content": "book Boston"}, {"role": "assistant", '
            '"tool_calls": [{"id": "1", "type": "function", "function": {"name": "book", '
            '"arguments": {"city": "Paris", "city": "Boston"}}}]}]}')
    path = tmp_path / "t.jsonl"
    path.write_text(line + "\n")
    events = list(iter_transcript_events(path))
    assert any("Boston" in e["text"] and "Paris" not in e["text"] for e in events if e["kind"] == "action"), events
    twice = tmp_path / "twice.jsonl"  # two exports run together: the first conversation was dropped, silently
    twice.write_text('{"id": "c", "messages": [{"role": "user", "content": "first"}], "messages": '
                     '[{"role": "user", "content": "second"}]}\n')
    with pytest.raises(TranscriptFormatError, match=r"twice.jsonl:1: .*'messages' is given twice in one object and "
                                                    "its first value, a list, would be dropped"):
        list(iter_transcript_events(twice))


# ---- bad files (issue 22): one line naming FILE:LINE and the reason; --skip-bad skips and counts ----------
GOOD = json.dumps({"id": "ok", "messages": openai_messages()})


@pytest.mark.parametrize("line, reason", [
    (json.dumps({"id": "b", "messages": [{"role": "user", "content": "x"}, {"role": "tool", "tool_call_id": True,
                                                                             "content": "r"}]}),
     "message 1: tool message's 'tool_call_id' is True"),
    (json.dumps({"id": "b", "messages": [{"role": "<b>hacker</b>", "content": "x"}]}),
     "message 0: role '<b>hacker</b>' is not a name"),
    ('{"id": "b", "messages": [{"role": "user", "content": NaN}]}', "bare NaN is not JSON"),
    ('{"id": "b", "x": Infinity, "messages": []}', "bare Infinity is not JSON"),
    (json.dumps({"id": {"a": 1}, "messages": openai_messages()}), "'id' is an object; expected a string or an integer"),
    ('{"id": "b", "messages": ' + "[" * 5000 + "]" * 5000 + "}", "nested too deeply"),
    ('{"id": "b", "messages": [' + '{"a": ' * 300 + "1" + "}" * 300 + "]}", "nested too deeply"),
])
def test_bad_lines_are_named_and_skippable(line, reason, tmp_path, capsys):
    path = tmp_path / "t.jsonl"
    path.write_text(GOOD + "\n" + line + "\n")
    with pytest.raises(TranscriptFormatError, match=rf"t\.jsonl:2.*{reason}"):
        list(iter_transcript_events(path))
    assert main([str(path), str(tmp_path / "o.jsonl")]) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "t.jsonl:2" in err and "Traceback" not in err
    assert main([str(path), str(tmp_path / "o.jsonl"), "--skip-bad"]) == 0
    printed = capsys.readouterr().out
    assert "1 conversations" in printed and "skipped 1 bad conversations" in printed


def test_non_utf8_is_named_by_line(tmp_path, capsys):
    path = tmp_path / "t.jsonl"
    path.write_bytes(GOOD.encode() + b'\n{"id": "b", "messages": "\xff"}\n')
    assert main([str(path), str(tmp_path / "o.jsonl")]) == 1
    assert "t.jsonl:2: not UTF-8 (byte 26 of the line is 0xff)" in capsys.readouterr().err
    whole = tmp_path / "m-shop.json"
    whole.write_bytes(b'[\n{"task_id": 1,\n "traj": "\xfe"}]')
    assert main([str(whole), str(tmp_path / "o.jsonl")]) == 1
    assert "m-shop.json: not UTF-8 (line 3, byte 11 of the line is 0xfe)" in capsys.readouterr().err


@pytest.mark.parametrize("content", ["", "  \n\n \t\n"])
def test_empty_files_are_an_error_unless_allowed(content, tmp_path, capsys):
    path = tmp_path / "t.jsonl"
    path.write_text(content)
    out = tmp_path / "o.jsonl"
    assert main([str(path), str(out)]) == 1 and not out.exists()
    assert "no conversation converted" in capsys.readouterr().err
    assert main([str(path), str(out), "--allow-empty"]) == 0 and out.read_text() == ""


def test_the_output_folder_must_exist(tmp_path, capsys):
    path = tmp_path / "t.jsonl"
    path.write_text(GOOD + "\n")
    missing = tmp_path / "nonexistent_dir" / "deeper"
    assert main([str(path), str(missing / "o.jsonl")]) == 1
    assert "does not exist" in capsys.readouterr().err and not (tmp_path / "nonexistent_dir").exists()
    assert main([str(path), str(tmp_path)]) == 1 and "is a folder" in capsys.readouterr().err
    assert main([str(path), str(path)]) == 1 and "is the input file" in capsys.readouterr().err
    assert path.read_text() == GOOD + "\n"


def test_the_langchain_adapter_takes_the_graphs_messages_in_any_format():
    pytest.importorskip("langchain_core", reason="the [langchain] extra is not installed")
    from sam_model.integrations.langchain import state_from_messages

    want = live_state(openai_messages()[:6], openai_messages()[6]["tool_calls"])
    system = [{"role": "system", "content": POLICY}]
    for msgs in (anthropic_messages()[:6], tau2_messages()[:8], genai_messages()[:6], responses_items()[:7],
                 bedrock_messages()[:6], gemini_contents()[:6], pydantic_ai_messages()[:6]):
        state, observation = state_from_messages(system + msgs)  # the trailing call is the decision
        assert state == want and observation == YES


# ---- real conversations: tau-bench's airline trajectories rewritten in every format read as the spec reads them -
def to_anthropic(msgs: list[dict]) -> dict:
    out: list[dict] = []
    for m in msgs:
        if m["role"] == "assistant":
            blocks = [{"type": "text", "text": m["content"]}] if m.get("content") else []
            blocks += [{"type": "tool_use", "id": c["id"], "name": c["function"]["name"],
                        "input": json.loads(c["function"]["arguments"])} for c in m.get("tool_calls") or []]
            out.append({"role": "assistant", "content": blocks})
        elif m["role"] == "tool":
            block = {"type": "tool_result", "tool_use_id": m["tool_call_id"], "content": m["content"]}
            if out and out[-1]["role"] == "user" and isinstance(out[-1]["content"], list):
                out[-1]["content"].append(block)  # one user turn answers all the calls of a turn
            else:
                out.append({"role": "user", "content": [block]})
        elif m["role"] == "user":
            out.append({"role": "user", "content": m["content"]})
    return {"system": "\n".join(m["content"] for m in msgs if m["role"] == "system"), "messages": out}


def to_bedrock(msgs: list[dict]) -> dict:
    """Chat messages as Converse writes them, by way of their Anthropic blocks (one user turn answers a turn)."""
    anthropic = to_anthropic(msgs)
    block = {"text": lambda b: {"text": b["text"]},  # noqa: E731
             "tool_use": lambda b: {"toolUse": {"toolUseId": b["id"], "name": b["name"], "input": b["input"]}},
             "tool_result": lambda b: {"toolResult": {"toolUseId": b["tool_use_id"], "content": [{"text": b["content"]}]}}}
    return {"system": [{"text": anthropic["system"]}],
            "messages": [{"role": m["role"], "content": [block[b["type"]](b) for b in m["content"]]
                          if isinstance(m["content"], list) else [{"text": m["content"]}]} for m in anthropic["messages"]]}


def to_responses(msgs: list[dict]) -> dict:
    items: list[dict] = []
    for m in msgs:
        if m["role"] == "assistant":
            if m.get("content"):
                items.append({"type": "message", "role": "assistant",
                              "content": [{"type": "output_text", "text": m["content"]}]})
            items += [{"type": "function_call", "call_id": c["id"], "name": c["function"]["name"],
                       "arguments": c["function"]["arguments"]} for c in m.get("tool_calls") or []]
        elif m["role"] == "tool":
            items.append({"type": "function_call_output", "call_id": m["tool_call_id"], "output": m["content"]})
        elif m["role"] == "user":
            items.append({"type": "message", "role": "user", "content": [{"type": "input_text", "text": m["content"]}]})
    return {"instructions": "\n".join(m["content"] for m in msgs if m["role"] == "system"), "items": items}


def to_swe_agent(msgs: list[dict]) -> list[dict]:
    """Chat messages as SWE-agent's function-calling history items."""
    kinds = {"system": "system_prompt", "assistant": "action", "user": "observation", "tool": "observation"}
    out = []
    for m in msgs:
        item = {"role": m["role"], "content": m.get("content") or "", "agent": "main", "message_type": kinds[m["role"]]}
        if m["role"] == "assistant":
            item.update(thought=m.get("content") or "", action="", tool_calls=m.get("tool_calls"))
        elif m["role"] == "tool":
            item["tool_call_ids"] = [m["tool_call_id"]]
        out.append(item)
    return out


def to_genai(msgs: list[dict]) -> list[dict]:
    out = []
    for m in msgs:
        parts = [{"type": "text", "content": m["content"]}] if m.get("content") and m["role"] != "tool" else []
        parts += [{"type": "tool_call", "id": c["id"], "name": c["function"]["name"],
                   "arguments": json.loads(c["function"]["arguments"])} for c in m.get("tool_calls") or []]
        if m["role"] == "tool":
            parts = [{"type": "tool_call_response", "id": m["tool_call_id"], "response": m["content"]}]
        if m["role"] != "system":
            out.append({"role": m["role"], "parts": parts})
    return out


def to_tau2(msgs: list[dict]) -> list[dict]:
    out = []
    for m in msgs:
        if m["role"] == "tool":
            out.append({"role": "tool", "id": m["tool_call_id"], "content": m["content"], "requestor": "assistant"})
        elif m["role"] != "system":
            calls = [{"id": c["id"], "name": c["function"]["name"], "arguments": json.loads(c["function"]["arguments"]),
                      "requestor": "assistant"} for c in m.get("tool_calls") or []]
            out.append({"role": m["role"], "content": m.get("content"), "tool_calls": calls or None})
    return out


def to_langchain(msgs: list[dict]) -> list[dict]:
    """As LangChain's dumpd writes messages (LangSmith, LangGraph's JSON serializer): constructors."""
    kinds = {"system": "SystemMessage", "user": "HumanMessage", "assistant": "AIMessage", "tool": "ToolMessage"}
    out = []
    for m in msgs:
        kwargs = {"content": m.get("content") or ""}
        if m.get("tool_calls"):
            kwargs["tool_calls"] = [{"name": c["function"]["name"], "args": json.loads(c["function"]["arguments"]),
                                     "id": c["id"], "type": "tool_call"} for c in m["tool_calls"]]
        if m["role"] == "tool":
            kwargs["tool_call_id"] = m["tool_call_id"]
        out.append({"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", kinds[m["role"]]],
                    "kwargs": kwargs})
    return out


def to_gemini(msgs: list[dict]) -> dict:
    """Chat messages as the SDK's chat history, model_dump()ed: calls without ids (the Gemini API's, answered by name
    in call order), the results of one turn's calls in one user content, each {"result": ...} as the SDK's automatic
    function calling writes it."""
    names: dict[str, str] = {}  # call id -> the latest call's name (tau-bench gives one id to several calls)
    out: list[dict] = []
    for m in msgs:
        names.update((c["id"], c["function"]["name"]) for c in m.get("tool_calls") or [])
        if m["role"] == "assistant":
            parts = [{"text": m["content"]}] if m.get("content") else []
            parts += [{"functionCall": {"name": c["function"]["name"], "args": json.loads(c["function"]["arguments"])}}
                      for c in m.get("tool_calls") or []]
            out.append({"role": "model", "parts": parts})
        elif m["role"] == "tool":
            part = {"functionResponse": {"name": names[m["tool_call_id"]], "response": {"result": m["content"]}}}
            if out and out[-1]["role"] == "user" and "functionResponse" in out[-1]["parts"][-1]:
                out[-1]["parts"].append(part)
            else:
                out.append({"role": "user", "parts": [part]})
        elif m["role"] == "user":
            out.append({"role": "user", "parts": [{"text": m["content"]}]})
    policy = "\n".join(m["content"] for m in msgs if m["role"] == "system")
    return {"config": {"system_instruction": {"parts": [{"text": policy}]}}, "contents": snake_case(out)}


def to_pydantic_ai(msgs: list[dict]) -> list[dict]:
    """Chat messages as Pydantic AI's message history: the system prompt and the user's words parts of a request, an
    assistant message a response (its words, then its calls, the arguments as the JSON string OpenAI's model gives),
    the results of one turn's calls one request (their content the text the tool returned)."""
    out: list[dict] = []
    names = {c["id"]: c["function"]["name"] for m in msgs for c in m.get("tool_calls") or []}
    for m in msgs:
        if m["role"] == "assistant":
            parts = [{"content": m["content"], "part_kind": "text"}] if m.get("content") else []
            parts += [{"tool_name": c["function"]["name"], "args": c["function"]["arguments"], "tool_call_id": c["id"],
                       "part_kind": "tool-call"} for c in m.get("tool_calls") or []]
            out.append({"kind": "response", "parts": parts, "model_name": "gpt-4o"})
            continue
        kind = {"system": "system-prompt", "user": "user-prompt", "tool": "tool-return"}[m["role"]]
        part = {"content": m["content"], "part_kind": kind}
        if m["role"] == "tool":
            part.update(tool_name=names[m["tool_call_id"]], tool_call_id=m["tool_call_id"])
        if out and out[-1]["kind"] == "request" and m["role"] != "user":
            out[-1]["parts"].append(part)  # one request sends a turn's results back (and the first, its prompts)
        else:
            out.append({"kind": "request", "parts": [part]})
    return out


def to_autogen(msgs: list[dict]) -> dict:
    """Chat messages as an AutoGen AssistantAgent's save_state(): the system prompt a SystemMessage, an assistant
    message with calls an AssistantMessage of FunctionCalls (its words their thought), one turn's results one
    FunctionExecutionResultMessage (the tool's name beside each)."""
    out: list[dict] = []
    names = {c["id"]: c["function"]["name"] for m in msgs for c in m.get("tool_calls") or []}
    for m in msgs:
        if m["role"] == "tool":
            result = {"content": m["content"], "name": names[m["tool_call_id"]], "call_id": m["tool_call_id"],
                      "is_error": False}
            if out and out[-1]["type"] == "FunctionExecutionResultMessage":
                out[-1]["content"].append(result)
            else:
                out.append({"content": [result], "type": "FunctionExecutionResultMessage"})
        elif m["role"] == "assistant" and m.get("tool_calls"):
            out.append({"content": [{"id": c["id"], "arguments": c["function"]["arguments"], "name": c["function"][
                "name"]} for c in m["tool_calls"]], "thought": m.get("content") or None, "source": "agent",
                        "type": "AssistantMessage"})
        elif m["role"] == "assistant":
            out.append({"content": m["content"], "thought": None, "source": "agent", "type": "AssistantMessage"})
        else:
            out.append({"content": m["content"], **({"source": "user"} if m["role"] == "user" else {}),
                        "type": "UserMessage" if m["role"] == "user" else "SystemMessage"})
    return {"type": "AssistantAgentState", "version": "1.0.0", "llm_context": {"messages": out}}


@needs_tau
def test_tau_bench_rewritten_in_every_format_gives_the_spec_events(tmp_path):
    data = json.loads(gzip.open(TAU, "rt").read())[:40]
    expected = list(iter_transcript_events(TAU, max_conversations=40))
    policy = "\n".join(m["content"] for m in data[0]["traj"] if m["role"] == "system")
    assert all("\n".join(m["content"] for m in d["traj"] if m["role"] == "system") == policy for d in data)
    files = {"anthropic": tmp_path / "a.jsonl", "responses": tmp_path / "r.jsonl", "otel": tmp_path / "o.jsonl",
             "tau2": tmp_path / "t.json", "langchain": tmp_path / "l.jsonl", "bedrock": tmp_path / "b.jsonl",
             "gemini": tmp_path / "g.jsonl", "pydantic-ai": tmp_path / "p.jsonl"}
    files["pydantic-ai"].write_text("".join(json.dumps({"id": f"c{n}", "messages": to_pydantic_ai(d["traj"])}) + "\n"
                                            for n, d in enumerate(data)))
    files["bedrock"].write_text("".join(json.dumps({"id": f"c{n}", **to_bedrock(d["traj"])}) + "\n"
                                        for n, d in enumerate(data)))
    files["gemini"].write_text("".join(json.dumps({"id": f"c{n}", **to_gemini(d["traj"])}) + "\n"
                                       for n, d in enumerate(data)))
    files["langchain"].write_text("".join(json.dumps({"id": f"c{n}", "messages": to_langchain(d["traj"])}) + "\n"
                                          for n, d in enumerate(data)))
    files["anthropic"].write_text("".join(json.dumps({"id": f"c{n}", **to_anthropic(d["traj"])}) + "\n"
                                          for n, d in enumerate(data)))
    files["responses"].write_text("".join(json.dumps({"id": f"c{n}", **to_responses(d["traj"])}) + "\n"
                                          for n, d in enumerate(data)))
    files["otel"].write_text("".join(json.dumps(otlp(to_genai(d["traj"]), f"c{n}", policy)) + "\n"
                                     for n, d in enumerate(data)))
    files["tau2"].write_text(json.dumps({"info": {"environment_info": {"domain_name": "airline", "policy": policy}},
                                         "simulations": [{"task_id": d["task_id"], "trial": d["trial"],
                                                          "messages": to_tau2(d["traj"])} for d in data]}))
    files["swe-agent"] = tmp_path / "trajectories"  # SWE-agent's output folder: {instance}/{instance}.traj
    for n, d in enumerate(data):
        (files["swe-agent"] / f"c{n:02d}").mkdir(parents=True)
        (files["swe-agent"] / f"c{n:02d}" / f"c{n:02d}.traj").write_text(json.dumps(
            {"history": to_swe_agent(d["traj"]), "info": {"exit_status": "submitted"}}))
    files["autogen"] = tmp_path / "states"  # json.dump(await agent.save_state(), f): a conversation a file
    files["autogen"].mkdir()
    for n, d in enumerate(data):
        (files["autogen"] / f"c{n:02d}.json").write_text(json.dumps(to_autogen(d["traj"])))
    files["openhands"] = tmp_path / "openhands"  # the folder save_trajectory_path writes: {session}.json
    files["openhands"].mkdir()
    for n, d in enumerate(data):
        (files["openhands"] / f"c{n:02d}.json").write_text(json.dumps(to_openhands(d["traj"])))
    files["openhands-v1"] = tmp_path / "conversations"  # the SDK's: {conversation}/events/event-{index:05d}-{id}.json
    for n, d in enumerate(data):
        (files["openhands-v1"] / f"c{n:02d}" / "events").mkdir(parents=True)
        for i, e in enumerate(to_openhands_v1(d["traj"])):
            (files["openhands-v1"] / f"c{n:02d}" / "events" / f"event-{i:05d}-{e['id']}.json").write_text(json.dumps(e))
    strip = lambda e: {k: v for k, v in e.items() if k not in ("episode_id", "meta")}  # noqa: E731
    by_episode: dict[str, list] = {}
    for e in expected:
        by_episode.setdefault(e["episode_id"], []).append(strip(e))
    want = list(by_episode.values())
    for name, path in files.items():
        report = ImportReport()
        got: dict[str, list] = {}
        for e in iter_transcript_events(path, report=report):
            got.setdefault(e["episode_id"], []).append(strip(e))
        assert report.formats == {name: 40} and len(got) == 40, name
        if name == "gemini":  # every result found its call by name, parallel calls of one tool included (the
            # OpenAI reading counts 17 results whose id tau-bench gave to two calls)
            assert not report.unmatched_results and report.calls == sum(
                len(m.get("tool_calls") or []) for d in data for m in d["traj"]), report.unmatched_results[:3]
        for n, (mine, theirs) in enumerate(zip(got.values(), want)):
            if name == "otel":  # a trace records no message after the agent's last model call
                theirs = theirs[:len(mine)]
            assert mine == theirs, (name, n)


def any_value(v):
    """A Python value as an OTLP JSON AnyValue (what exporters write for structured attributes)."""
    if isinstance(v, str):
        return {"stringValue": v}
    if isinstance(v, bool):
        return {"boolValue": v}
    if isinstance(v, int):
        return {"intValue": str(v)}
    if isinstance(v, list):
        return {"arrayValue": {"values": [any_value(x) for x in v]}}
    return {"kvlistValue": {"values": [{"key": k, "value": any_value(x)} for k, x in v.items()]}}


def test_otlp_structured_attributes_and_trimmed_histories(tmp_path):
    """Messages as structured OTLP values on the details event, and an agent that drops old history from its
    calls, still give the conversation."""
    doc = otlp(genai_messages())
    spans = doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
    for span in spans:
        attrs = {a["key"]: a["value"] for a in span["attributes"]}
        if "gen_ai.input.messages" not in attrs:
            continue
        inputs = json.loads(attrs["gen_ai.input.messages"]["stringValue"])
        if len(inputs) > 4:
            inputs = inputs[2:]  # history trimmed: the join finds the overlap
        details = [{"key": "gen_ai.input.messages", "value": any_value(inputs)},
                   {"key": "gen_ai.output.messages",
                    "value": any_value(json.loads(attrs["gen_ai.output.messages"]["stringValue"]))}]
        span["attributes"] = [a for a in span["attributes"] if a["key"] not in ("gen_ai.input.messages",
                                                                                 "gen_ai.output.messages")]
        span["events"] = [{"name": "gen_ai.client.inference.operation.details", "attributes": details}]
    path = tmp_path / "t.json"
    path.write_text(json.dumps(doc))
    want = list(iter_transcript_events(write_all(tmp_path)["openai"]))
    assert list(iter_transcript_events(path)) == want


def test_otlp_output_messages_with_finish_reason_join_their_repeat_in_the_next_input(tmp_path):
    """The conventions' output messages carry ``finish_reason`` (required there); the next call's input repeats the
    same message without it. The join compared whole messages, found no overlap and wrote the history again after
    every model call: 20 events for 8, a user turn said three times, labels on the copies (found by review)."""
    doc = otlp(genai_messages())
    for span in doc["resourceSpans"][0]["scopeSpans"][0]["spans"]:
        for a in span["attributes"]:
            if a["key"] == "gen_ai.output.messages":
                out = json.loads(a["value"]["stringValue"])
                for m in out:
                    m["finish_reason"] = "tool_call" if m["parts"][0]["type"] == "tool_call" else "stop"
                a["value"]["stringValue"] = json.dumps(out)
            elif a["key"] == "gen_ai.input.messages":  # inputs are chat messages: no finish_reason
                a["value"]["stringValue"] = json.dumps([{k: v for k, v in m.items() if k != "finish_reason"}
                                                        for m in json.loads(a["value"]["stringValue"])])
    path = tmp_path / "t.json"
    path.write_text(json.dumps(doc))
    want = list(iter_transcript_events(write_all(tmp_path)["openai"]))
    assert list(iter_transcript_events(path)) == want


def test_tau2_multi_tool_messages_and_user_results_stay_out():
    msgs = tau2_messages()
    msgs[2] = {"role": "tool", "tool_messages": [msgs[2]]}
    chat = to_chat(msgs)
    assert chat.user_tool_calls == 1 and [m["role"] for m in chat.messages].count("tool") == 2
    assert "airplane" not in json.dumps(chat.messages)


def test_other_roles_and_unanswered_results_are_kept_as_the_spec_says(tmp_path, capsys):
    """The spec: "any other role with non-empty content → kind=role", and a result's name is "the message's name,
    else the name of the call it answers, else 'tool'". Llama's ``ipython`` and an ``observation`` role were refused,
    and so were results of a transcript cut before their call: the whole conversation was lost (found by review)."""
    call = {"id": "c1", "type": "function", "function": {"name": "find", "arguments": {"q": "abc"}}}
    messages = [{"role": "user", "content": "find abc"}, {"role": "assistant", "content": None, "tool_calls": [call]},
                {"role": "ipython", "content": "printed 42"}, {"role": "observation", "content": "it is sunny"},
                {"role": "tool", "tool_call_id": "c9", "content": "late"}, {"role": "tool", "content": "no id"},
                {"role": "tool", "tool_call_id": "c7", "name": "lookup", "content": "named"}]
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps({"id": "a", "messages": messages}) + "\n")
    report = ImportReport()
    events = list(iter_transcript_events(path, report=report))
    assert [(e["kind"], e["text"]) for e in events[2:]] == [
        ("ipython", "printed 42"), ("observation", "it is sunny"), ("result", "tool: late"),
        ("result", "tool: no id"), ("result", "lookup: named")]
    assert len(report.unmatched_results) == 3 and "tool_call_id 'c9'" in report.unmatched_results[0]
    assert main([str(path), str(tmp_path / "o.jsonl")]) == 0
    assert "3 tool results answer no earlier tool call" in capsys.readouterr().out


def test_review_of_the_readers_edge_cases(tmp_path, capsys):
    """Found by review, each lost a conversation, or every one, or gave a traceback: a tau2 call with id 0 (its
    result was refused as unanswered); a result of 3,000 nested brackets (RecursionError); parts of a content list
    that are not text (dropped without a count); a lone surrogate escape (the import failed at write time, naming
    nothing); a cut .gz (nothing written even with --skip-bad); OTLP whose nesting is not OTLP's (tracebacks)."""
    msgs = tau2_messages()
    for m in msgs:
        for c in m.get("tool_calls") or []:
            c["id"] = {"c1": 0}.get(c["id"], c["id"])
        if m.get("id") == "c1":
            m["id"] = 0
    chat = to_chat(msgs)
    assert any(m.get("tool_call_id") == "0" and m["role"] == "tool" for m in chat.messages), chat.messages

    call = {"id": "c", "type": "function", "function": {"name": "f", "arguments": {"u": "abc_1"}}}
    deep = "[" * 3000 + "]" * 3000
    conv = [{"role": "user", "content": [{"type": "text", "text": "id abc_1"}, {"type": "image_url", "image_url": {}}]},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c", "content": deep},
            {"role": "tool", "tool_call_id": "c", "content": [{"flight": "HAT001"}]}]
    path = tmp_path / "a.jsonl"
    path.write_text(json.dumps({"id": "a", "messages": conv}) + "\n")
    report = ImportReport()
    events = list(iter_transcript_events(path, report=report))
    assert events[2]["text"] == "f: " + deep and events[2]["state"]["last_action_result"] == "f: ok"
    # a list of records is the tool's JSON data, not content parts of no type (test_json_results.py)
    assert events[3]["text"] == 'f: [{"flight": "HAT001"}]' and events[3]["state"]["last_action_result"] == "f: 1 results"
    assert report.ignored == {"image_url parts": 1}

    bad = tmp_path / "s.jsonl"
    bad.write_text(json.dumps({"id": "a", "messages": conv[:2]}) + "\n"
                   + '{"id": "b", "messages": [{"role": "user", "content": "half \\ud83d"}]}\n')
    assert main([str(bad), str(tmp_path / "o.jsonl")]) == 1
    err = capsys.readouterr().err
    assert "s.jsonl:2" in err and "lone UTF-16 surrogate" in err and err.count("\n") == 1
    assert main([str(bad), str(tmp_path / "o.jsonl"), "--skip-bad"]) == 0
    assert (tmp_path / "o.jsonl").read_text(encoding="utf-8").count("\n") == 2
    bad.write_text(bad.read_text(encoding="utf-8").splitlines()[1] + "\n")  # every conversation bad: say why
    assert main([str(bad), str(tmp_path / "o3.jsonl"), "--skip-bad"]) == 1
    err = capsys.readouterr().err
    assert "s.jsonl:1: no conversation converted: all 1 were bad, the first because invalid JSON (a lone UTF-16" in err

    line = json.dumps({"id": "x", "messages": conv[:2]})
    raw = gzip.compress("".join(line.replace('"x"', f'"x{i}"') + "\n" for i in range(300)).encode())
    cut = tmp_path / "c.jsonl.gz"
    cut.write_bytes(raw[: len(raw) // 2])
    assert main([str(cut), str(tmp_path / "o2.jsonl")]) == 1
    err = capsys.readouterr().err
    assert "c.jsonl.gz:" in err and "cannot be read on from here" in err and "Traceback" not in err
    assert main([str(cut), str(tmp_path / "o2.jsonl"), "--skip-bad"]) == 0
    kept = (tmp_path / "o2.jsonl").read_text(encoding="utf-8").count("\n")
    assert 0 < kept < 600 and kept % 2 == 0  # the conversations before the cut, two events each
    cut.write_bytes(raw[:40])  # cut inside its first block: no line at all
    assert main([str(cut), str(tmp_path / "o4.jsonl")]) == 1
    assert "c.jsonl.gz:1: the file cannot be read on from here" in (err := capsys.readouterr().err)
    assert "no line could be read" in err and "lines 1-0" not in err

    for i, doc in enumerate([{"resourceSpans": "oops"}, {"resourceSpans": [{"scopeSpans": ["x"]}]},
                             {"resourceSpans": [{"scopeSpans": [{"spans": [{"startTimeUnixNano": "yesterday"}]}]}]},
                             {"resourceSpans": [{"scopeSpans": [{"spans": [{"attributes": [{"key": ["k"]}]}]}]}]}]):
        p = tmp_path / f"o{i}.json"
        p.write_text(json.dumps(doc))
        assert main([str(p), str(tmp_path / f"out{i}.jsonl")]) == 1
        err = capsys.readouterr().err
        assert err.startswith(f"error: {p}") and "not OTLP JSON" in err and err.count("\n") == 1, err


def test_a_duplicate_conversation_id_names_where_it_was_first(tmp_path):
    """Ids that differ only in characters the spec replaces ("order 1", "order/1") are one episode: the error named
    only "order_1" (found by review); it now says where the first was read."""
    line = json.loads(GOOD)
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps({**line, "id": "order 1"}) + "\n" + json.dumps({**line, "id": "order/1"}) + "\n")
    with pytest.raises(TranscriptFormatError, match=r"t\.jsonl:2: duplicate conversation id 'order_1', first at .*t\.jsonl:1"):
        list(iter_transcript_events(path))


def test_tool_calls_on_another_role_are_refused_not_dropped(tmp_path):
    """After other roles became events of their kind, a Gemini-style ``model`` message's tool calls vanished (the
    report said 0 calls and its results answered nothing; a second review). An API role in capitals is the role."""
    call = {"id": "t1", "type": "function", "function": {"name": "cancel", "arguments": {"res": "RES123ABC"}}}
    user = {"role": "user", "content": "cancel RES123ABC please"}
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps({"id": "a", "messages": [user, {"role": "model", "tool_calls": [call]}]}) + "\n")
    with pytest.raises(TranscriptFormatError, match="message 1: a 'model' message carries tool_calls"):
        list(iter_transcript_events(path))
    path.write_text(json.dumps({"id": "a", "messages": [user, {"role": "Assistant", "content": "sure",
                                                               "tool_calls": [call]}]}) + "\n")
    assert [e["kind"] for e in iter_transcript_events(path)] == ["user", "system", "action"]
    with pytest.raises(TranscriptFormatError, match="carries tool_calls"):
        live_state([user, {"role": "model", "tool_calls": [call]}], call)


def test_a_malformed_otlp_span_refuses_its_conversation_and_integral_numbers_read(tmp_path):
    """One bad span was reported, but its conversation was still written without it (6 of 8 messages); an intValue
    of 5.0 or "+5" had read before the stricter check (a second review)."""
    doc = otlp(genai_messages())
    spans = doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
    good = tmp_path / "good.json"
    for span in spans:
        span["attributes"].append({"key": "x.count", "value": {"intValue": 5.0}})
        span["attributes"].append({"key": "x.plus", "value": {"intValue": "+5"}})
    good.write_text(json.dumps(doc))
    assert list(iter_transcript_events(good)) == list(iter_transcript_events(write_all(tmp_path)["openai"]))
    spans[-1]["startTimeUnixNano"] = "yesterday"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    report = ImportReport()
    assert list(iter_transcript_events(bad, skip_bad=True, report=report, allow_empty=True)) == []
    assert len(report.skipped) == 1  # one conversation skipped, counted once, with the span's reason
    assert "startTimeUnixNano 'yesterday'" in str(report.skipped[0]) and "refused whole" in str(report.skipped[0])


def test_a_call_id_given_twice_is_counted(tmp_path):
    """Two parallel calls sharing one id both had their results named by the later call, with no word (found by
    review); the import report now lists it with the unanswered results."""
    calls = [{"id": "c", "type": "function", "function": {"name": n, "arguments": {"u": "abc_1"}}}
             for n in ("get_a", "get_b")]
    msgs = [{"role": "user", "content": "id abc_1"}, {"role": "assistant", "content": None, "tool_calls": calls},
            {"role": "tool", "tool_call_id": "c", "content": "first"}, {"role": "tool", "tool_call_id": "c",
                                                                         "content": "second"}]
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps({"id": "a", "messages": msgs}) + "\n")
    report = ImportReport()
    list(iter_transcript_events(path, report=report))
    assert len(report.unmatched_results) == 1 and "tool_call_id 'c' given again (first to get_a)" in \
        report.unmatched_results[0]


def test_escaped_surrogate_pairs_read_and_only_lone_halves_are_refused():
    """Python's json writes an emoji as a pair of surrogate escapes; only a half of one is refused (the check is a
    regex for lone halves, so such logs are not serialised a second time)."""
    from sam_model.data.formats.base import _SURROGATE, strict_loads

    assert strict_loads('"a \\ud83d\\ude00 b"') == "a \U0001F600 b" and not _SURROGATE.search('"\\ud83d\\ude00"')
    for lone in ('"\\ud83d"', '"\\ude00\\ud83d"', '"x \\uDE00"'):
        with pytest.raises(ValueError, match="lone UTF-16 surrogate"):
            strict_loads(lone)
    assert strict_loads('"\\\\ud83d"') == "\\ud83d"  # an escaped backslash, then the letters: text, not a surrogate


def test_an_existing_out_that_is_no_agent_log_is_not_replaced(tmp_path, capsys):
    """Found by review: OUT was replaced whatever it was, so a second input typed as OUT (another transcript, a
    tau2 results file) was gone, atomically; and a .json OUT held JSON Lines that every reader then took for one
    document. Re-running a conversion over its own earlier output is fine; --force replaces anything."""
    from sam_model.data.synthetic import main as synthetic

    files = write_all(tmp_path)
    raw, other = files["openai"], files["anthropic"]
    before = other.read_bytes()
    assert main([str(raw), str(other)]) == 1
    assert "exists and is not an agent log" in capsys.readouterr().err and other.read_bytes() == before
    assert synthetic([str(other), "--episodes", "2"]) == 1 and other.read_bytes() == before
    assert main([str(raw), str(tmp_path / "log.json")]) == 1
    assert "name it log.json.jsonl" in capsys.readouterr().err and not (tmp_path / "log.json").exists()
    out = tmp_path / "log.jsonl"
    assert main([str(raw), str(out)]) == 0 and main([str(raw), str(out)]) == 0  # its own output: re-run
    assert main([str(raw), str(other), "--force"]) == 0 and other.read_bytes() == out.read_bytes()
    capsys.readouterr()


def test_langchains_own_serialisations_read_as_the_openai_conversation(tmp_path):
    """What langchain_core itself writes (messages_to_dict, dumpd, model_dump; chunks; a RemoveMessage; ChatAnthropic's
    tool_use blocks beside tool_calls) reads as the same conversation, and the LangChain adapter takes the dicts."""
    lc = pytest.importorskip("langchain_core.messages", reason="the [langchain] extra is not installed")
    from langchain_core.load import dumpd

    msgs = lc.convert_to_messages(openai_messages())
    anthropic_style = lc.AIMessageChunk(content=[{"type": "tool_use", "id": "c2", "name": "cancel", "input": ARGS2}],
                                        tool_calls=[{"name": "cancel", "args": ARGS2, "id": "c2"}])
    msgs[6] = anthropic_style  # a streamed ChatAnthropic turn: its calls twice, as blocks and as tool_calls
    with_remove = [*msgs[:5], lc.RemoveMessage(id="gone"), *msgs[5:]]
    expected = list(iter_transcript_events(write_all(tmp_path)["openai"]))
    for name, messages in (("messages_to_dict", lc.messages_to_dict(with_remove)),
                           ("dumpd", [dumpd(m) for m in msgs]), ("model_dump", [m.model_dump() for m in msgs])):
        path = tmp_path / f"{name}.jsonl"
        path.write_text(json.dumps({"id": "conv-1", "messages": messages}) + "\n")
        report = ImportReport()
        assert list(iter_transcript_events(path, report=report)) == expected, name
        assert report.formats == {"langchain": 1}, name
    assert to_chat(lc.messages_to_dict(with_remove)).ignored == {"remove markers": 1}
    pytest.importorskip("langchain_core", reason="the [langchain] extra is not installed")
    from sam_model.integrations.langchain import state_from_messages

    want = live_state(openai_messages()[:6], openai_messages()[6]["tool_calls"])
    state, observation = state_from_messages(lc.messages_to_dict(msgs[:7]))
    assert state == want and observation == YES


def test_langchain_content_lists_with_plain_strings_read_as_text(tmp_path):
    """LangChain's content is str | list[str | dict] (Gemini writes strings among its blocks): each string is text,
    as BaseMessage.text reads it, and the conversation gives the OpenAI file's lines (it was refused: 'content part 0
    is a str'; found by review)."""
    lc = pytest.importorskip("langchain_core.messages", reason="the [langchain] extra is not installed")
    msgs = lc.convert_to_messages(openai_messages())
    for i in (1, 3, 4, 5):  # the user's words, a tool result, the assistant's words: each one plain string
        msgs[i].content = [msgs[i].content]
    path = tmp_path / "lc.jsonl"
    path.write_text(json.dumps({"id": "conv-1", "messages": lc.messages_to_dict(msgs)}) + "\n")
    assert list(iter_transcript_events(path)) == list(iter_transcript_events(write_all(tmp_path)["openai"]))
    mixed = lc.HumanMessage(content=["yes ", {"type": "image", "url": "https://x/y.png"}, "please"])
    chat = to_chat(lc.messages_to_dict([mixed]))
    assert chat.messages[0]["content"] == "yes \nplease" and chat.ignored == {"image": 1}


def test_the_langchain_adapter_takes_message_objects_beside_langchain_dicts():
    """A history loaded from a file (messages_to_dict) with the graph's new turn appended as objects, and the other
    way round: the state is the one of the objects alone (the list was read whole as LangChain dicts, and the objects,
    made OpenAI dicts, were refused as 'not a LangChain message'; found by review)."""
    lc = pytest.importorskip("langchain_core.messages", reason="the [langchain] extra is not installed")
    from langchain_core.load import dumpd

    from sam_model.integrations.langchain import state_from_messages

    msgs = lc.convert_to_messages(openai_messages())[:7]
    want = state_from_messages(msgs)
    assert want[0] == live_state(openai_messages()[:6], openai_messages()[6]["tool_calls"])
    for dicts in (lc.messages_to_dict(msgs), [dumpd(m) for m in msgs], [m.model_dump() for m in msgs]):
        assert state_from_messages([*dicts[:5], *msgs[5:]]) == want  # loaded, then the new turn
        assert state_from_messages([*msgs[:3], *dicts[3:]]) == want
        assert state_from_messages([*dicts[:3], lc.messages_to_dict([lc.RemoveMessage(id="x")])[0], *msgs[3:]]) == want


def test_a_bad_langchain_message_is_named():
    bad = [{"type": "human", "data": {"content": "hi"}}, {"type": "ai", "data": {"content": "", "tool_calls": "x"}}]
    with pytest.raises(TranscriptFormatError, match="conversation, message 1: 'tool_calls' is a string, expected"):
        to_chat(bad)
    with pytest.raises(TranscriptFormatError, match="message 1, tool call 0: tool call without a name"):
        to_chat([bad[0], {"type": "ai", "data": {"content": "", "tool_calls": [{"args": {}}]}}])
    with pytest.raises(TranscriptFormatError, match="message 1: not a LangChain message"):
        to_chat([bad[0], {"role": "user", "content": "mixed in"}], format="langchain")


@pytest.mark.parametrize("role, says", [(None, "message without 'role'"), (7, "'role' is a number \\(7\\), expected a string"),
                                        (["user"], "'role' is a list")])
def test_a_role_that_is_missing_or_no_string_is_named_as_such(role, says):
    """A number as the role was reported as a message without one (found by review)."""
    msg = {"content": "hi"} if role is None else {"role": role, "content": "hi"}
    with pytest.raises(TranscriptFormatError, match=f"conversation, message 0: {says}"):
        to_chat([msg], format="openai")


def test_bedrock_and_anthropic_blocks_are_told_apart_and_the_wrong_reader_names_the_right_one(tmp_path, capsys):
    """Converse's camelCase blocks carry no type, Anthropic's always one: neither is read as the other, and a forced
    reader of the other's file reads no call and names the reader that does."""
    others = (openai_messages(), tau2_messages(), anthropic_messages(), responses_items(), genai_messages(),
              langchain_messages(), swe_agent_history(), gemini_contents(), snake_case(gemini_contents()),
              openhands_events(), openhands_v1_events())
    assert not any(FORMATS["bedrock"].sniff(m) for m in others)
    assert not FORMATS["anthropic"].sniff(bedrock_messages())
    from sam_model.data.formats import main as formats_main
    assert formats_main([]) == 0 and re.search(r"\nbedrock +Amazon Bedrock Converse messages", capsys.readouterr().out)
    files = write_all(tmp_path)
    assert main([str(files["bedrock"]), str(tmp_path / "o.jsonl"), "--format", "anthropic"]) == 1
    assert ("empty conversation (no user, assistant or tool content); it holds content blocks with a toolUse member "
            "(Converse), which the bedrock reader reads: try --format bedrock") in capsys.readouterr().err
    assert main([str(files["anthropic"]), str(tmp_path / "o.jsonl"), "--format", "bedrock"]) == 1
    assert ("no tool call read by the bedrock reader, but content blocks of type tool_use found: the anthropic reader "
            "reads these, try --format anthropic") in capsys.readouterr().err


def test_a_converse_request_with_parallel_calls_json_and_failed_results_reads_as_its_openai_twin(tmp_path):
    """A logged Converse request (modelId, toolConfig, inferenceConfig beside the messages, an id added) with its
    response's output: two toolUse blocks in one turn are one assistant message with two calls, answered by two
    toolResult blocks of one user turn in their order; a json result is its JSON; status "error" flags the call as
    failed whatever its words say (as Anthropic's is_error): the state is its OpenAI twin's with that result flagged
    (is_error), where the unflagged twin, as the spec reads words alone, said the call went well."""
    flights = [{"flight": "HAT170", "date": "2024-05-20"}]
    said = "I am ann_lee_123; cancel QX7Z9A and show my flights on 2024-05-20."
    openai = [{"role": "system", "content": POLICY}, {"role": "user", "content": said},
              {"role": "assistant", "content": "Checking.", "tool_calls": [
                  {"id": "a", "type": "function", "function": {"name": "cancel", "arguments": json.dumps(ARGS2)}},
                  {"id": "b", "type": "function",
                   "function": {"name": "flights", "arguments": json.dumps({"date": "2024-05-20"})}}]},
              {"role": "tool", "tool_call_id": "a", "content": "Not allowed: the fare is basic economy"},
              {"role": "tool", "tool_call_id": "b", "content": json.dumps(flights)},
              {"role": "assistant", "content": "Done."}]
    converse = {"id": "conv-1", "modelId": "amazon.nova-pro-v1:0", "system": [{"text": POLICY}],
                "toolConfig": {"tools": [{"toolSpec": {"name": "cancel", "inputSchema": {"json": {}}}}]},
                "inferenceConfig": {"maxTokens": 512},
                "messages": [{"role": "user", "content": [{"text": said}]},
                             {"role": "assistant", "content": [
                                 {"text": "Checking."}, {"toolUse": {"toolUseId": "a", "name": "cancel", "input": ARGS2}},
                                 {"toolUse": {"toolUseId": "b", "name": "flights", "input": {"date": "2024-05-20"}}}]},
                             {"role": "user", "content": [
                                 {"toolResult": {"toolUseId": "a", "status": "error",
                                                 "content": [{"text": "Not allowed: the fare is basic economy"}]}},
                                 {"toolResult": {"toolUseId": "b", "content": [{"json": flights}]}}]}],
                "output": {"message": {"role": "assistant", "content": [{"text": "Done."}]}},
                "stopReason": "end_turn"}
    (tmp_path / "o.jsonl").write_text(json.dumps({"id": "conv-1", "messages": openai}) + "\n")
    (tmp_path / "b.jsonl").write_text(json.dumps(converse) + "\n")
    unflagged = list(iter_transcript_events(tmp_path / "o.jsonl"))
    assert [e["state"]["last_action_result"] for e in unflagged[4:6]] == ["cancel: ok", "flights: 1 results"]
    openai[3]["is_error"] = True
    (tmp_path / "o.jsonl").write_text(json.dumps({"id": "conv-1", "messages": openai}) + "\n")
    want = list(iter_transcript_events(tmp_path / "o.jsonl"))
    assert [e["kind"] for e in want] == ["user", "system", "action", "action", "result", "result", "system"]
    assert [e["state"]["last_action_result"] for e in want[4:6]] == [
        "cancel: error (Not allowed: the fare is basic economy)", "flights: 1 results"]
    assert [e["text"] for e in want] == [e["text"] for e in unflagged]  # the memory holds the tool's words
    assert list(iter_transcript_events(tmp_path / "b.jsonl")) == want
    converse["messages"][2]["content"][0]["toolResult"]["content"] = [{"text": ERROR}]
    (tmp_path / "b.jsonl").write_text(json.dumps(converse) + "\n")
    failed = list(iter_transcript_events(tmp_path / "b.jsonl"))
    assert failed[4]["state"]["last_action_result"] == "cancel: error (reservation is already cancelled)"


@pytest.mark.parametrize("messages, says", [
    ([{"role": "tool", "content": []}], "message 0: role 'tool' is not a Converse role"),
    ([{"role": "user", "content": {"text": "hi"}}], "message 0: 'content' is an object, expected a list of content"),
    ([{"role": "user", "content": ["hi"]}], "message 0: content block 0 is a string, expected an object"),
    ([{"role": "user", "content": [{"text": 5}]}], "message 0: content block 0: 'text' is a number, expected a string"),
    ([{"role": "assistant", "content": [{"text": "a", "toolUse": {}}]}],
     "message 0: content block 0 holds text and toolUse; a Converse block holds one"),
    ([{"role": "assistant", "content": [{"toolUse": "get_user"}]}],
     "message 0: content block 0: 'toolUse' is a string, expected an object"),
    ([{"role": "assistant", "content": [{"toolUse": {"name": "get_user", "input": {}}}]}],
     "message 0: content block 0: toolUse without a 'toolUseId'"),
    ([{"role": "assistant", "content": [{"toolUse": {"toolUseId": "t", "input": {}}}]}],
     "message 0, content block 0: tool call without a name"),
    ([{"role": "user", "content": [{"toolResult": {"content": [{"text": "ok"}]}}]}],
     "message 0: toolResult content block 0 without a 'toolUseId'"),
    ([{"role": "user", "content": [{"toolResult": {"toolUseId": "t", "content": {"text": "ok"}}}]}],
     "message 0, content block 0: 'content' is an object, expected a list"),
    ([{"role": "user", "content": [{"toolResult": {"toolUseId": "t", "content": [{"text": ["ok"]}]}}]}],
     "message 0, content block 0: content part 0: 'text' is a list, expected a string"),
    ([{"role": "user", "content": [{"guardContent": {"text": "hi"}}]}],
     "message 0: content block 0: guardContent without its words"),
])
def test_bad_converse_messages_are_named_by_message_and_block(messages, says):
    with pytest.raises(TranscriptFormatError) as err:
        to_chat(messages, "logs.jsonl:3", "bedrock")
    assert str(err.value).startswith(f"logs.jsonl:3, {says}"), str(err.value)


def test_converse_words_beside_the_calls_and_what_is_counted_not_read(tmp_path):
    """Guardrail-assessed words and cited text are words; server tools (run by Bedrock inside the model's turn),
    images, documents and cache points are counted; a bad response output and system are refused by line."""
    msgs = [{"role": "user", "content": [{"guardContent": {"text": {"text": HI, "qualifiers": ["query"]}}},
                                         {"image": {"format": "png", "source": {"bytes": ""}}}, {"cachePoint": {}}]},
            {"role": "assistant", "content": [
                {"citationsContent": {"content": [{"text": SEE}], "citations": [{"title": "policy"}]}},
                {"toolUse": {"toolUseId": "w", "name": "web", "input": {"q": "x"}, "type": "server_tool_use"}},
                {"toolResult": {"toolUseId": "w", "content": [{"text": "found"}], "type": "web_search_result"}}]}]
    chat = to_chat(msgs, "c", "bedrock")
    assert chat.messages == [{"role": "user", "content": HI}, {"role": "assistant", "content": SEE}]
    assert chat.ignored == {"image": 1, "cachePoint": 1, "server toolUse": 1, "server toolResult": 1}
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"id": "a", "messages": msgs, "output": {"message": "Done."}}) + "\n"
                    + json.dumps({"id": "b", "system": {"text": POLICY}, "messages": msgs}) + "\n"
                    + json.dumps({"id": "c", "system": [POLICY], "messages": msgs}) + "\n")
    with pytest.raises(TranscriptFormatError, match=r"bad\.jsonl:1: 'output\.message' is a string, expected a message"):
        list(iter_transcript_events(path))
    report = ImportReport()
    list(iter_transcript_events(path, report=report, skip_bad=True, allow_empty=True))
    assert [str(e).split(": ", 1)[1] for e in report.skipped] == [
        "'output.message' is a string, expected a message {\"role\": \"assistant\", \"content\": [...]}",
        "'system' is an object, expected a list of {\"text\": ...} blocks",
        "content block 0 is a string, expected an object such as {\"text\": ...}"]
    assert str(report.skipped[2]).startswith(f"{path}:3, system: content block 0")


# ---- Gemini contents: both spellings, matching results to calls, streamed turns, bad input ----------------------
def test_gemini_reads_the_sdks_model_dump_as_the_rest_json():
    """The SDK's model_dump() (snake_case, every unset field null) and the API's REST JSON (camelCase) are one
    conversation; thoughts, media and built-in tool parts are counted, not read."""
    camel = gemini_contents()
    camel[3]["parts"] += [{"inlineData": {"mimeType": "image/png", "data": "iVBO"}},
                          {"executableCode": {"code": "print(1)", "language": "PYTHON"}}, {"someFuturePart": {}}]
    a, b = to_chat(camel, "c"), to_chat(snake_case(camel), "c")
    assert a.messages == b.messages and a.ignored == b.ignored == {
        "thought": 1, "inlineData": 1, "executableCode": 1, "someFuturePart": 1}
    assert [m["role"] for m in a.messages] == ["user", "assistant", "tool", "assistant", "user", "assistant", "tool",
                                               "assistant"]
    assert a.messages[2] == {"role": "tool", "name": "get_user", "content": json.dumps(USER),
                             "tool_call_id": a.messages[1]["tool_calls"][0]["id"]}


def test_gemini_results_answer_the_call_of_their_id_else_the_earliest_of_their_name():
    """Parallel calls in one model turn: results with ids answer their call whatever their order; results without
    answer the earliest unanswered call of their name, so two calls of one tool are told apart by order."""
    call = lambda name, arg, i=None: {"functionCall": {"name": name, "args": {"q": arg}, **({"id": i} if i else {})}}  # noqa: E731
    done = lambda name, out, i=None: {"functionResponse": {"name": name, "response": {"output": out},  # noqa: E731
                                                             **({"id": i} if i else {})}}
    user = {"role": "user", "parts": [{"text": "find AB12 and CD34, then book"}]}
    by_name = [user, {"role": "model", "parts": [call("find", "AB12"), call("find", "CD34"), call("book", "x")]},
               {"role": "user", "parts": [done("book", "booked"), done("find", "first"), done("find", "second")]}]
    chat = to_chat(by_name, "c")
    ids = [c["id"] for c in chat.messages[1]["tool_calls"]]
    assert len(set(ids)) == 3 and len(chat.messages[1]["tool_calls"]) == 3  # parallel calls: one assistant turn
    assert [(m["tool_call_id"], m["content"]) for m in chat.messages[2:]] == [
        (ids[2], "booked"), (ids[0], "first"), (ids[1], "second")]
    by_id = [user, {"role": "model", "parts": [call("find", "AB12", "f1"), call("find", "CD34", "f2")]},
             {"role": "user", "parts": [done("find", "second", "f2"), done("find", "first", "f1"),
                                        done("find", "late", "f9"), done("lookup", "stray")]}]
    assert [(m.get("tool_call_id"), m["name"]) for m in to_chat(by_id, "c").messages[2:]] == [
        ("f2", "find"), ("f1", "find"), ("f9", "find"), (None, "lookup")]  # f9 and the stray: counted unanswered


def test_gemini_streamed_chunks_are_one_turn():
    """The SDK's chat history records a streamed answer as one model Content per chunk: its text is one text (joined
    as response.text joins it, so a value split between chunks is whole) and its calls are one turn's calls."""
    chunks = [{"role": "user", "parts": [{"text": "cancel QX7Z9A and QX7Z9B"}]},
              {"role": "model", "parts": [{"text": "Cancelling QX7"}]}, {"role": "model", "parts": [{"text": "Z9A and"}]},
              {"role": "model", "parts": [{"text": " QX7Z9B.", "thoughtSignature": "c2ln"},
                                          {"functionCall": {"name": "cancel", "args": {"r": "QX7Z9A"}}}]},
              {"role": "model", "parts": [{"functionCall": {"name": "cancel", "args": {"r": "QX7Z9B"}}}]},
              {"role": "user", "parts": [{"text": "ok"}]},
              {"role": "model", "parts": [{"text": "", "thoughtSignature": "c2ln"}]}]  # a last chunk of no words
    (user, turn, ok) = to_chat(chunks, "c").messages
    assert turn["content"] == "Cancelling QX7Z9A and QX7Z9B." and len(turn["tool_calls"]) == 2


def test_gemini_media_in_a_multimodal_function_response_is_counted_not_dropped():
    """A function response may carry media beside its JSON (FunctionResponse.parts: FunctionResponsePart's inlineData
    or fileData, as a screenshot tool returns an image): its words are the result, its media counted as the user's
    are, in both spellings; they were dropped without a count."""
    shot = {"functionResponse": {"name": "screenshot", "response": {"output": "the page at /checkout"},
                                 "parts": [{"inlineData": {"mimeType": "image/png", "data": "iVBO"}},
                                           {"fileData": {"mimeType": "image/png", "fileUri": "gs://b/shot.png"}}]}}
    contents = [{"role": "user", "parts": [{"text": "what is on the page?"}]},
                {"role": "model", "parts": [{"functionCall": {"name": "screenshot", "args": {}}}]},
                {"role": "user", "parts": [shot]}]
    for c in (contents, snake_case(contents)):
        chat = to_chat(c, "c")
        assert chat.messages[2]["content"] == "the page at /checkout"
        assert chat.ignored == {"inlineData": 1, "fileData": 1}
    contents[2]["parts"][0]["functionResponse"]["parts"] = {"inlineData": {}}
    with pytest.raises(TranscriptFormatError, match="content 2, part 0: the functionResponse's 'parts' is an object"):
        to_chat(contents, "c")


@pytest.mark.parametrize("contents, says", [
    ([{"role": "user", "parts": ["hi"]}], "content 0, part 0: a part must be an object such as {\"text\": ...}, got a "
                                          "string"),
    ([{"role": "user", "parts": [{"functionCall": {"name": "f", "args": {}}}]}],
     "content 0, part 0: a functionCall in a user turn: the model calls functions, the user's turns answer them"),
    ([{"role": "model", "parts": [{"functionResponse": {"name": "f", "response": {}}}]}],
     "content 0, part 0: a functionResponse in a model turn"),
    ([{"role": "model", "parts": [{"text": "x", "functionCall": {"name": "f"}}]}],
     "content 0, part 0: the part holds text and functionCall; a Gemini part holds one of them"),
    ([{"role": "assistant", "parts": [{"text": "x"}]}], "content 0: role 'assistant' is not a Gemini role"),
    ([{"role": "model", "parts": {"text": "x"}}], "content 0: 'parts' is an object, expected a list of parts"),
    ([{"role": "user", "parts": [{"functionResponse": {"response": {}}}]}],
     "content 0, part 0: functionResponse without a 'name'"),
    ([{"role": "model", "parts": [{"functionCall": {"args": {}}}]}], "content 0, part 0: tool call without a name"),
    ([{"role": "model", "parts": [{"text": 3}]}], "content 0, part 0: 'text' is a number, expected a string"),
    ([{"role": "model", "parts": [{"function_call": "f(1)"}]}], "content 0, part 0: 'functionCall' is a string"),
])
def test_bad_gemini_contents_are_named_by_content_and_part(contents, says, tmp_path, capsys):
    path = tmp_path / "g.jsonl"
    path.write_text(json.dumps({"id": "a", "contents": contents}) + "\n")
    assert main([str(path), str(tmp_path / "o.jsonl")]) == 1
    err = capsys.readouterr().err
    assert f"g.jsonl:1, {says}" in err and err.count("\n") == 1, err


@pytest.mark.parametrize("contents, what", [("What is on the page?", "a string"),
                                            ({"role": "user", "parts": [{"text": "hi"}]}, "an object")])
def test_gemini_contents_that_are_no_list_are_named_as_contents(contents, what, tmp_path, capsys):
    """A request dump may hold contents as the SDK takes them (a string, one Content): refused naming 'contents', the
    field the line has; it was "'messages' is a string", a field the line does not have."""
    path = tmp_path / "g.jsonl"
    path.write_text(json.dumps({"id": "a", "contents": contents}) + "\n")
    assert main([str(path), str(tmp_path / "o.jsonl")]) == 1
    err = capsys.readouterr().err
    assert f"g.jsonl:1: 'contents' is {what}, expected a list of Gemini contents" in err and err.count("\n") == 1, err


@pytest.mark.parametrize("name, events", [("openhands", openhands_events), ("openhands-v1", openhands_v1_events)])
def test_openhands_sniffed_first_takes_no_other_formats_messages(name, events, tmp_path, capsys):
    """OpenHands (V1, then 0.x) is sniffed before every other format: its sniff must take none of their messages
    (chat messages have a role, Responses items and LangChain messages a type, SWE-agent steps both action and
    observation; a V1 ActionEvent holds an 'action' too, which the 0.x sniff took), and a forced reader of an
    OpenHands trajectory names the reader that reads it."""
    others = (openai_messages(), tau2_messages(), anthropic_messages(), responses_items(), genai_messages(),
              langchain_messages(), swe_agent_history(), bedrock_messages(), gemini_contents(),
              snake_case(gemini_contents()), openhands_events(), openhands_v1_events())
    assert [m for m in others if FORMATS[name].sniff(m)] == [events()]
    assert not any(FORMATS[f].sniff(events()) for f in FORMATS if f not in (name, "tau1"))
    path = write_all(tmp_path)[name]
    for forced in ("bedrock", "gemini", "openai", *{"openhands", "openhands-v1"} - {name}):
        assert main([str(path), str(tmp_path / "o.jsonl"), "--format", forced]) == 1
        err = capsys.readouterr().err
        assert f"which the {name} reader reads: try --format {name}" in err and err.count("\n") == 1, (forced, err)


def test_gemini_logs_read_by_another_reader_say_which_one_reads_them(tmp_path, capsys):
    """Gemini's parts carry no type: no other sniff takes them but otel's (sniffed after gemini), and gemini's takes
    no other format's messages, Bedrock's untyped blocks included; a forced reader that reads none of them names
    the reader that does."""
    others = (openai_messages(), tau2_messages(), anthropic_messages(), responses_items(), genai_messages(),
              langchain_messages(), swe_agent_history(), bedrock_messages(), openhands_events(), openhands_v1_events())
    assert not any(FORMATS["gemini"].sniff(m) for m in others)
    path = write_all(tmp_path)["gemini"]
    assert main([str(path), str(tmp_path / "o.jsonl"), "--format", "openai"]) == 1
    assert ("empty conversation (no user, assistant or tool content); it holds parts with a functionCall (Gemini), "
            "which the gemini reader reads: try --format gemini") in capsys.readouterr().err
    bad = tmp_path / "b.jsonl"
    bad.write_text(json.dumps({"id": "a", "systemInstruction": 7, "contents": gemini_contents()}) + "\n")
    assert main([str(bad), str(tmp_path / "o.jsonl")]) == 1
    assert "b.jsonl:1, system_instruction: is a number, expected a string or a Content" in capsys.readouterr().err
