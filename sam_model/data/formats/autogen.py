"""Microsoft AutoGen (autogen-agentchat 0.4+) model contexts: what ``await agent.save_state()`` writes.

An ``AssistantAgent``'s state is ``{"type": "AssistantAgentState", "version", "llm_context": {"messages": [...]}}``,
its model context's messages each an ``LLMMessage`` (autogen_core.models) dumped by pydantic, naming its ``type``:
``SystemMessage`` (``content``: the policy), ``UserMessage`` (``content`` a string, or strings and images; ``source``
the user, or in a team the participant whose message it passes on), ``AssistantMessage`` (``content`` the model's
words, or a list of ``FunctionCall`` ``{"id", "arguments", "name"}``, the arguments JSON text; ``thought`` the
words or reasoning beside the calls; ``source``) and ``FunctionExecutionResultMessage`` (``content`` a list of
``{"content", "name", "call_id", "is_error"}``, one a call, ``is_error`` flagging a failed one). The agent's
``system_message`` is not in the state (the agent keeps it apart from its model context), so no policy is read
unless the context holds a ``SystemMessage``. A team's ``save_state()`` (``TeamState``) holds each participant's
state in ``agent_states`` (a ``ChatAgentContainerState``'s ``agent_state``): each assistant's model context is a
conversation of its own (its view: the others' words reach it as user messages), the manager's thread is not read.
An agent given ``memory`` adds what it retrieved to its context each run as a ``SystemMessage`` ("Relevant memory
content (in chronological order): 1. ..."): counted, not read as the policy (the values in it are the episode's, not
common knowledge), as the ``MemoryQueryEvent`` a run yields of it is.

What ``agent.run(task=...)`` returns is read too: ``TaskResult.messages``, autogen_agentchat messages dumped by
pydantic (``{"id", "source", "models_usage", "metadata", "created_at", "content", "type"}``), the runs of a
conversation one after another. A ``TextMessage`` (or ``MultiModalMessage``, a person's ``HandoffMessage``) is the
user's words where its ``source`` is ``user`` (what ``run(task=...)`` gives the task) or a ``UserProxyAgent``'s
(a source that yielded a ``UserInputRequestedEvent``, which the proxy does before it asks its person), else the
agent's, as is a ``StructuredMessage[...]`` (an agent's ``output_content_type`` answer: its content object as JSON
text); a ``ToolCallRequestEvent`` the calls (``content`` the FunctionCalls), the ``ThoughtEvent`` just before
it their words, as AssistantMessage's ``thought`` is (any other ``ThoughtEvent``, a reasoning model's, counted); a
``ToolCallExecutionEvent`` the results. An agent's ``HandoffMessage`` (a Swarm's: the message its transfer call's
result already holds, which its own model context does not hold again), a ``ToolCallSummaryMessage`` (a run's
response when the agent does not reflect on its tools: the results' text again, which its model context never
holds) and the other events (``StopMessage``, streaming chunks, memory queries, ...) are counted, not read, so both
logs of a conversation give the same events.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from sam_model.data.formats.base import FAILED, Chat, TranscriptFormatError, chat_call, each
from sam_model.io import json_type

TYPES = ("SystemMessage", "UserMessage", "AssistantMessage", "FunctionExecutionResultMessage")
# autogen_agentchat.messages (MessageFactory's): words said, the calls and their results; the rest counted
HANDOFF = "HandoffMessage"
WORDS = ("TextMessage", "MultiModalMessage", HANDOFF)
REQUEST, EXECUTION, THOUGHT = "ToolCallRequestEvent", "ToolCallExecutionEvent", "ThoughtEvent"
ASKED = "UserInputRequestedEvent"  # a UserProxyAgent's, yielded (its source the proxy's name) before it asks
COUNTED = ("ToolCallSummaryMessage", "StopMessage", "MemoryQueryEvent", ASKED,
           "ModelClientStreamingChunkEvent", "CodeGenerationEvent", "CodeExecutionEvent", "SelectSpeakerEvent",
           "SelectorEvent")
AGENTCHAT = (*WORDS, REQUEST, EXECUTION, THOUGHT, *COUNTED)
STRUCTURED = "StructuredMessage["  # an agent's output_content_type answer: its type the generic's name
# how AutoGen's Memory (ListMemory, autogen-ext's) adds what it retrieved to the model context, a SystemMessage a run
MEMORY = "Relevant memory content"
AGENT, TEAM, CONTAINER = "AssistantAgentState", "TeamState", "ChatAgentContainerState"
UNNAMED = ("an AutoGen save_state() written as a line without a conversation id: write each conversation's as "
           "{\"id\": CONVERSATION_ID, \"messages\": state[\"llm_context\"][\"messages\"]} a line, or each state to "
           "a .json file of its own, named by the conversation (json.dump(await agent.save_state(), f))")


def is_message(m: Any) -> bool:
    """An AutoGen ``LLMMessage`` as pydantic dumps it (one of its four ``type`` names), or an agentchat message (its
    ``type`` and the ``source`` every one has), and no ``role``."""
    return isinstance(m, Mapping) and "role" not in m and (
        m.get("type") in TYPES or (_agentchat_type(m.get("type")) and isinstance(m.get("source"), str)))


def _agentchat_type(kind: Any) -> bool:
    """An autogen_agentchat message type: MessageFactory's, or a StructuredMessage's (``StructuredMessage[Ticket]``,
    named by its content's class)."""
    return kind in AGENTCHAT or (isinstance(kind, str) and kind.startswith(STRUCTURED) and kind.endswith("]"))


def is_call(c: Any) -> bool:
    """A ``FunctionCall`` as dumped: its ``id``, ``name`` and ``arguments`` (JSON text), nothing else of a format's."""
    return isinstance(c, Mapping) and set(c) == {"id", "arguments", "name"} and isinstance(c["arguments"], str)


def is_state(doc: Any) -> bool:
    """What ``save_state()`` returns: an AssistantAgent's state (one without its ``llm_context`` too, refused by
    :func:`contexts` naming the field, not as no conversation of any format) or a team's."""
    return isinstance(doc, Mapping) and (
        doc.get("type") == AGENT or (doc.get("type") == TEAM and isinstance(doc.get("agent_states"), Mapping)))


OWN = (*TYPES[1:], *AGENTCHAT)  # the types no other format names: a SystemMessage's is a LangChain class name too


def sniff(messages: list[Any]) -> bool:
    return any(is_message(m) and m["type"] in OWN for m in messages)


def contexts(doc: Mapping[str, Any], where: str) -> list[tuple[str, list[Any], str]]:
    """The model contexts a saved state holds, as (participant's name, "" for an agent's own state; its messages;
    where), each one conversation: an AssistantAgentState's, or each assistant's of a TeamState."""
    if doc["type"] == AGENT:
        return [("", _messages(doc, where), where)]
    found = []
    for name, state in doc["agent_states"].items():
        inner = state.get("agent_state") if isinstance(state, Mapping) and state.get("type") == CONTAINER else None
        if isinstance(inner, Mapping) and inner.get("type") == AGENT:
            found.append((str(name), _messages(inner, f"{where}, agent_states.{name}.agent_state"),
                          f"{where}, agent_states.{name}"))
    if not found:
        raise TranscriptFormatError(where, "a TeamState whose agent_states hold no AssistantAgentState (no model "
                                           "context to read): save each assistant agent's state instead "
                                           "(await agent.save_state())")
    return found if len(found) > 1 else [("", found[0][1], found[0][2])]


def _messages(state: Mapping[str, Any], where: str) -> list[Any]:
    messages = state["llm_context"].get("messages") if isinstance(state.get("llm_context"), Mapping) else None
    if "llm_context" not in state:
        raise TranscriptFormatError(where, f"an AutoGen AssistantAgentState without 'llm_context' (keys "
                                           f"{', '.join(map(repr, list(state)[:6]))}): save it with autogen-agentchat "
                                           "0.4+ (await agent.save_state()), or write its messages as "
                                           "{\"id\", \"messages\"} lines")
    if not isinstance(messages, list):
        raise TranscriptFormatError(where, f"'llm_context.messages' is {json_type(messages)}, expected the list of "
                                           "the model context's messages")
    return messages


def to_chat(messages: list[Any], where: str) -> Chat:
    chat = Chat()
    thought = ""  # a ThoughtEvent's words, the calls' when a ToolCallRequestEvent follows
    # who speaks for a person: "user" (run's task), and each UserProxyAgent, named by the event it yields to ask
    people = {"user", *(m.get("source") for m in messages if isinstance(m, Mapping) and m.get("type") == ASKED
                        and isinstance(m.get("source"), str))}
    for i, m, w in each(messages, where):
        kind, content, source = m.get("type"), m.get("content"), f"message {i}"
        if kind not in TYPES and not _agentchat_type(kind):
            raise TranscriptFormatError(w, (f"'type' is {json.dumps(kind, default=str)[:40]}" if "type" in m
                                            else "no 'type'") + f", expected one of {', '.join(TYPES)} (an AutoGen "
                                                                "LLMMessage as model_dump() writes it) or an "
                                                                "autogen_agentchat message type (TextMessage, "
                                                                "ToolCallRequestEvent, ...)")
        if thought and kind != REQUEST:
            chat.ignored[THOUGHT] += 1
            thought = ""
        if kind not in TYPES:
            thought = _agentchat(chat, m, w, source, thought, people)
        elif kind == "SystemMessage" and _string(content, w).lstrip().startswith(MEMORY):
            chat.ignored["memory"] += 1
        elif kind == "SystemMessage":
            chat.add({"role": "system", "content": _string(content, w)}, source)
        elif kind == "UserMessage":
            words = _user(content, w, chat)
            if words:
                chat.add({"role": "user", "content": words}, source)
        elif kind == "AssistantMessage":
            _assistant(chat, m, w, source)
        else:
            _results(chat, content, w, source)
    if thought:
        chat.ignored[THOUGHT] += 1
    return chat


def _agentchat(chat: Chat, m: Mapping[str, Any], where: str, source: str, thought: str,
               people: set[str]) -> str:
    """One of ``TaskResult.messages`` read as its model-context twin is (``thought``: the ThoughtEvent's words just
    before it; ``people``: the sources whose words are a person's, the user's); returns a ThoughtEvent's words, which the next message, a ToolCallRequestEvent, takes as its own."""
    kind, content = m["type"], m.get("content")
    if not isinstance(m.get("source"), str):
        raise TranscriptFormatError(where, (f"'source' is {json_type(m['source'])}" if "source" in m else
                                            "no 'source'") + ", expected the name of the agent (or user) that sent "
                                                             "the message, which every agentchat message has")
    if kind == THOUGHT:
        return _string(content, where)
    if kind == REQUEST:
        _assistant(chat, {"content": content, "thought": thought or None}, where, source)
    elif kind == EXECUTION:
        _results(chat, content, where, source)
    elif kind == HANDOFF and m["source"] not in people:  # its transfer call's result again
        chat.ignored[kind] += 1
    elif kind in WORDS or kind.startswith(STRUCTURED):
        words = _structured(content, where) if kind.startswith(STRUCTURED) else _user(content, where, chat)
        if words:
            chat.add({"role": "user" if m["source"] in people else "assistant", "content": words}, source)
    else:
        chat.ignored[kind] += 1
    return ""


def _structured(content: Any, where: str) -> str:
    """A StructuredMessage's words: its content object as JSON text, as AutoGen gives it to models
    (``model_dump_json()``) and as the agent's model context holds its answer (the model's JSON text)."""
    if not isinstance(content, Mapping):
        raise TranscriptFormatError(where, f"'content' is {json_type(content)}, expected the object a "
                                           "StructuredMessage holds (its content model, dumped)")
    return json.dumps(content, ensure_ascii=False, separators=(",", ":"))


def _string(value: Any, where: str, field: str = "content") -> str:
    if not isinstance(value, str):
        raise TranscriptFormatError(where, f"'{field}' is {json_type(value)}, expected a string")
    return value


def _user(content: Any, where: str, chat: Chat) -> str:
    """A user message's words: a string, or the strings of a list (images and files, dumped as objects, counted)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise TranscriptFormatError(where, f"'content' is {json_type(content)}, expected a string or a list of "
                                           "strings and images")
    texts = []
    for item in content:
        if isinstance(item, str):
            texts.append(item)
        else:
            chat.ignored["image" if isinstance(item, Mapping) and set(item) == {"data"} else "file"] += 1
    return "\n".join(texts)


def _assistant(chat: Chat, m: Mapping[str, Any], where: str, source: str) -> None:
    """The model's words, or its calls with the ``thought`` beside them (which AutoGen sends back as the message's
    text); a ``thought`` beside words is a reasoning model's, counted, not read."""
    content, thought = m.get("content"), m.get("thought")
    if thought is not None and not isinstance(thought, str):
        raise TranscriptFormatError(where, f"'thought' is {json_type(thought)}, expected a string or null")
    if isinstance(content, str):
        if thought:
            chat.ignored["thought"] += 1
        chat.add({"role": "assistant", "content": content}, source)
        return
    if not isinstance(content, list):
        raise TranscriptFormatError(where, f"'content' is {json_type(content)}, expected a string or a list of "
                                           "FunctionCall objects {\"id\", \"arguments\", \"name\"}")
    calls = []
    for j, c in enumerate(content):
        at = f"{where}, call {j}"
        if not isinstance(c, Mapping):
            raise TranscriptFormatError(at, f"a call is {json_type(c)}, expected a FunctionCall object {{\"id\", "
                                            "\"arguments\", \"name\"}")
        args = c.get("arguments")
        if args is not None and not isinstance(args, (str, Mapping)):
            raise TranscriptFormatError(at, f"'arguments' is {json_type(args)}, expected JSON text")
        calls.append(chat_call(_call_id(c, "id", at), c.get("name"), args, at))
    chat.add({"role": "assistant", "content": thought or None, **({"tool_calls": calls} if calls else {})}, source)


def _results(chat: Chat, content: Any, where: str, source: str) -> None:
    if not isinstance(content, list):
        raise TranscriptFormatError(where, f"'content' is {json_type(content)}, expected a list of "
                                           "FunctionExecutionResult objects {\"content\", \"name\", \"call_id\", "
                                           "\"is_error\"}")
    for j, r in enumerate(content):
        at = f"{where}, result {j}"
        if not isinstance(r, Mapping):
            raise TranscriptFormatError(at, f"a result is {json_type(r)}, expected an object {{\"content\", "
                                            "\"name\", \"call_id\", \"is_error\"}")
        failed = r.get("is_error")
        if failed is not None and not isinstance(failed, bool):
            raise TranscriptFormatError(at, f"'is_error' is {json_type(failed)}, expected true, false or null")
        chat.add({"role": "tool", "tool_call_id": _call_id(r, "call_id", at), "content": _string(r.get("content"), at),
                  **({FAILED: True} if failed else {})}, source)


def _call_id(obj: Mapping[str, Any], field: str, where: str) -> str:
    """A call's id, or the id a result answers. AutoGen notes it may be empty for some models: such calls cannot be
    told apart, refused rather than paired by guess."""
    cid = obj.get(field)
    if not isinstance(cid, str) or not cid:
        got = json.dumps(cid)[:40] if isinstance(cid, str) else json_type(cid)
        raise TranscriptFormatError(where, f"'{field}' is {got}, expected the call's id (a non-empty string; some "
                                           "models give none, and their calls cannot be paired with their results)")
    return cid
