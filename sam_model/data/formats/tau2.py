"""tau2-bench results files: ``{info, tasks, simulations: [{id, task_id, trial, messages}]}``.

tau2 messages are chat messages whose tool calls are ``{"id", "name", "arguments": {...}, "requestor"}`` and
whose tool messages answer by ``id`` (and carry ``requestor`` and ``error``, true where the call failed: the chat
message's ``is_error``, read as an error whatever the words say, toolstate's extension of the spec). In the dual-control domains
(telecom) the simulated user calls tools of its own (device actions, ``requestor: "user"``): the agent never sees
them, so they are kept out of the conversation (its memory) and counted. The domain policy
(``info.environment_info.policy``) is the conversation's policy: common knowledge, not an event. Episode ids read
``tau2-{domain}-{agent llm}-task{task_id}-trial{trial}``; a task's trials share a split.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from sam_model.data.formats.base import Chat, Conversation, TranscriptFormatError, chat_call, each, failure
from sam_model.io import json_type

ROLES = ("system", "user", "assistant", "tool")


def to_chat(messages: list[Any], where: str) -> Chat:
    chat = Chat()
    user_calls: set[str] = set()
    for i, m, w in each(messages, where):
        if m.get("role") == "tool" and isinstance(m.get("tool_messages"), list):  # a MultiToolMessage
            inner = to_chat(m["tool_messages"], w)
            for message in inner.messages:
                if message.get("tool_call_id") not in user_calls:
                    chat.add(message, f"message {i}")
            continue
        role = m.get("role")
        if role not in ROLES:
            raise TranscriptFormatError(w, f"role {role!r} is not a tau2 role (expected one of {', '.join(ROLES)})")
        if role == "tool":
            call_id = m.get("id", m.get("tool_call_id"))
            if m.get("requestor") == "user" or (call_id is not None and str(call_id) in user_calls):
                continue  # the result of a user-side call: counted with the call
            if not isinstance(call_id, (str, int)) or call_id == "":
                raise TranscriptFormatError(w, "tool message without an 'id' (the id of the tool call it answers)")
            chat.add({"role": "tool", "tool_call_id": str(call_id), "content": m.get("content"),
                      **failure(m.get("error"), True, False, "error", w)}, f"message {i}")
            continue
        raw = m.get("tool_calls") or []
        if not isinstance(raw, list):
            raise TranscriptFormatError(w, f"'tool_calls' is {json_type(raw)}, expected a list of calls")
        calls = []
        for j, c in enumerate(raw):
            if not isinstance(c, Mapping):
                raise TranscriptFormatError(w, f"tool call {j} is {json_type(c)}, expected an object")
            if role == "user" or c.get("requestor") == "user":
                chat.user_tool_calls += 1
                if c.get("id") is not None:
                    user_calls.add(str(c["id"]))
                continue
            if "function" in c:  # already an OpenAI entry
                calls.append(dict(c))
            else:
                call_id = None if c.get("id") in (None, "") else c.get("id")  # id 0 is an id
                calls.append(chat_call(call_id, c.get("name"), c.get("arguments"), f"{w}, tool call {j}"))
        if role == "user" and not (m.get("content") or "").strip():
            continue  # a user turn that only acted on the device
        out = {"role": role, "content": m.get("content")}
        if calls:
            out["tool_calls"] = calls
        chat.add(out, f"message {i}")
    return chat


def sniff(messages: list[Any]) -> bool:
    """tau2's own marks: ``requestor``, tool calls with a top-level ``name``, tool messages answering by ``id``."""
    for m in messages:
        if not isinstance(m, Mapping):
            continue
        if "requestor" in m or (m.get("role") == "tool" and "id" in m and "tool_call_id" not in m):
            return True
        calls = m.get("tool_calls")
        if isinstance(calls, list) and any(isinstance(c, Mapping) and "name" in c and "function" not in c
                                           for c in calls):
            return True
    return False


def is_results(doc: Any) -> bool:
    return isinstance(doc, Mapping) and isinstance(doc.get("simulations"), list)


def conversations(doc: Mapping[str, Any], where: str, id_of) -> Iterator[Conversation | TranscriptFormatError]:
    """The simulations of a results file, in order; a bad one is yielded as its error (the caller skips or stops)."""
    info = doc.get("info") if isinstance(doc.get("info"), Mapping) else {}
    env = info.get("environment_info") if isinstance(info.get("environment_info"), Mapping) else {}
    agent = info.get("agent_info") if isinstance(info.get("agent_info"), Mapping) else {}
    domain = str(env.get("domain_name") or "unknown")
    model = str(agent.get("llm") or agent.get("implementation") or "agent")
    policy = env.get("policy") if isinstance(env.get("policy"), str) else ""
    for n, sim in enumerate(doc["simulations"]):
        w = f"{where}: simulation {n}"
        if not isinstance(sim, Mapping) or "messages" not in sim:
            yield TranscriptFormatError(w, "expected a simulation {\"task_id\", \"trial\", \"messages\": [...]}")
            continue
        if sim.get("task_id") in (None, ""):
            yield TranscriptFormatError(w, "simulation without 'task_id'")
            continue
        task = sim["task_id"]
        trial = sim.get("trial") if sim.get("trial") is not None else 0
        yield Conversation(id_of(f"tau2-{domain}-{model}-task{task}-trial{trial}"), sim["messages"], w,
                           f"{domain}-task{task}", "tau2", policy)
