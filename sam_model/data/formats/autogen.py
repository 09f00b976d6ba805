"""Microsoft AutoGen (autogen-agentchat 0.4+) model contexts: what ``await agent.save_state()`` writes.

An ``AssistantAgent``'s state is ``{"type": "AssistantAgentState", "version", "llm_context": {"messages": [...]}}``,
its model context's messages each an ``LLMMessage`` (autogen_core.models) dumped by pydantic, naming its ``type``:
``SystemMessage`` (``content``: the policy), ``UserMessage`` (``content`` a string, or strings and images; ``source``
the user, or in a team the participant whose message it passes on), ``AssistantMessage`` (``content`` the model's
words, or a list of ``FunctionCall`` ``{"id", "arguments", "name"}``, the arguments JSON text; ``thought`` the
words or reasoning beside the calls; ``source``) and ``FunctionExecutionResultMessage`` (``content`` a list of
``{"content", "name", "call_id", "is_error"}``, one a call, ``is_error`` flagging a failed one). The agent's
``system_message`` is not in the state (the agent keeps it apart from its model context and puts it before the
context at each model call): AutoGen saves it in the agent's declarative config, ``agent.dump_component()``
(``{"provider": "autogen_agentchat.agents.AssistantAgent", "component_type": "agent", "config": {"name",
"system_message", ...}}``; a team's lists its participants' in ``config.participants``, a SocietyOfMindAgent's its
inner team's in ``config.team``): a folder's states are read with the configs saved beside them (:func:`is_config`),
each context's agent's ``system_message`` its policy, the agent found in the config of the state's own team by its
path of participant names (:func:`resolve`; the config named as the state first). A state read without one has no
policy unless its context holds a ``SystemMessage`` (a value only the system message said is then untraceable),
and is counted so (:data:`NO_POLICY`, :data:`AMBIGUOUS`). A team's ``save_state()`` (``TeamState``) holds each participant's state in ``agent_states``
(a ``ChatAgentContainerState``'s ``agent_state``): each assistant's model context is a conversation of its own (its
view: the others' words reach it as user messages), the manager's thread is not read. A ``SocietyOfMindAgent``'s
(``SocietyOfMindAgentState``, alone or a participant's) holds its inner team's in ``inner_team_state``, whose
assistants' contexts are read as a team's are, at any depth (a team a participant of a team, too); its own
``model_context_state`` (the outer chat as it saw it, and its summaries: no calls) is not read. AutoGen resets the
inner team after each of its runs, so a state saved between runs holds its assistants' contexts empty: no
conversation.
An agent given ``memory`` adds what it retrieved to its context each run as a ``SystemMessage`` ("Relevant memory
content (in chronological order): 1. ..."), or, SAMAutoGenMemory's, as a ``UserMessage`` framed as data (recalls.is_frame):
counted, not read as the policy nor the user's words (the values in it are the episode's, not common knowledge, and
a recall's memories the store's already), as the ``MemoryQueryEvent`` a run yields of it is.

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
from collections.abc import Mapping, Sequence
from typing import Any

from sam_model.data.formats.base import FAILED, Chat, TranscriptFormatError, chat_call, each
from sam_model.data.formats.recalls import SOURCE, is_frame, leading_frames
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
SOCIETY = "SocietyOfMindAgentState"  # a SocietyOfMindAgent's: its inner team's state in inner_team_state
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
    :func:`contexts` naming the field, not as no conversation of any format), a team's or a SocietyOfMindAgent's."""
    return isinstance(doc, Mapping) and (
        doc.get("type") == AGENT or (doc.get("type") == TEAM and isinstance(doc.get("agent_states"), Mapping))
        or (doc.get("type") == SOCIETY and isinstance(doc.get("inner_team_state"), Mapping)))


def is_config(doc: Any) -> bool:
    """An autogen_agentchat agent's or team's declarative config, as ``dump_component().model_dump()`` writes it
    (``{"provider": "autogen_agentchat....", "component_type": "agent" | "team", "config": {...}}``): where AutoGen
    keeps an agent's ``system_message``, which its saved state lacks."""
    return (isinstance(doc, Mapping) and isinstance(doc.get("provider"), str)
            and doc["provider"].startswith("autogen_agentchat.") and doc.get("component_type") in ("agent", "team")
            and isinstance(doc.get("config"), Mapping))


# what a context read without its agent's system_message is counted as (ImportReport.lacking): a state file given
# alone, or a folder with no config of the state's team, or configs of it that disagree
NO_POLICY = ("AutoGen system_message (no dump_component() config of the state's agent or team read beside it: save "
             "it to the state's folder and give the folder)")
AMBIGUOUS = ("AutoGen system_message (configs beside the state give its agent different ones: name the state's "
             "config as the state, STATE.json and STATE.config.json)")


def _participants(component: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """A team config's participants, or a SocietyOfMindAgent's inner team's (``config.team``)."""
    config = component.get("config")
    if not isinstance(config, Mapping):
        return []
    team = config.get("team")
    found = config.get("participants") if config.get("participants") is not None else (
        team["config"].get("participants") if isinstance(team, Mapping) and isinstance(team.get("config"), Mapping)
        else None)
    return [c for c in found if isinstance(c, Mapping) and isinstance(c.get("config"), Mapping)] \
        if isinstance(found, list) else []


def resolve(component: Mapping[str, Any], path: tuple[str, ...]) -> Mapping[str, Any] | None:
    """The agent config a saved context's path of participant names leads to in a declarative config
    (:func:`is_config`), None where the config is of another agent or team: a state's context is joined to the
    config of its own team, participant by participant down the path, not to any agent of its name (two teams'
    assistants are often named alike, and the name alone took another team's system message). A lone agent's state
    (the empty path) is an agent config's, no team's (of the agent its messages name, :func:`contexts`)."""
    node: Mapping[str, Any] | None = component
    for name in path:
        node = next((c for c in _participants(node) if c["config"].get("name") == name), None)
        if node is None:
            return None
    return node if path or (component.get("component_type") == "agent" and not _participants(component)) else None


def system_message(component: Mapping[str, Any] | None) -> str:
    """An agent config's ``system_message`` ("" where it has none)."""
    text = component["config"].get("system_message") if component is not None else None
    return text if isinstance(text, str) and text.strip() else ""


OWN = (*TYPES[1:], *AGENTCHAT)  # the types no other format names: a SystemMessage's is a LangChain class name too


def sniff(messages: list[Any]) -> bool:
    return any(is_message(m) and m["type"] in OWN for m in messages)


def contexts(doc: Mapping[str, Any], where: str, configs: Sequence[Mapping[str, Any]] = (),
             paired: Mapping[str, Any] | None = None) -> list[tuple[str, list[Any], str, str, str]]:
    """The model contexts a saved state holds, as (participant's name, "" for an agent's own state; its messages;
    where; its agent's system message; what it was read without, "" or :data:`NO_POLICY` / :data:`AMBIGUOUS`),
    each one conversation: an AssistantAgentState's, or each assistant's of a TeamState, and of the inner team of a
    SocietyOfMindAgentState (named by the path of participants to it). The system message is the config's the
    state's team is (:func:`resolve`: every context of the state found in it by its path): ``paired``, the config
    named as the state, where it is the team's, else ``configs``, those saved beside it; a context whose configs
    give different ones has none, and is counted so."""
    every = _contexts(doc, where, ())
    # a team's assistant that never spoke, or a SocietyOfMindAgent's inner team, reset after each of its runs: empty
    found = every if doc["type"] == AGENT else [c for c in every if c[1]]
    if not found and every:
        raise TranscriptFormatError(where, f"a {doc['type']} whose assistants' model contexts are all empty: nothing "
                                           "to read (a SocietyOfMindAgent resets its inner team after each run; log "
                                           "its runs' TaskResult.messages, which hold the inner team's, instead)")
    if not found:
        raise TranscriptFormatError(where, f"a {doc['type']} whose agent_states hold no AssistantAgentState (no model "
                                           "context to read): save each assistant agent's state instead "
                                           "(await agent.save_state())")
    paths = [path for path, _, _ in found]
    teams = [c for c in ([paired] if paired is not None else []) if all(resolve(c, p) for p in paths)] or [
        c for c in configs if all(resolve(c, p) for p in paths)]
    named = []
    for path, messages, at in found:
        speaker = _speaker(messages) if not path else None  # a lone agent's state names no agent: its messages do
        mine = [c for c in teams if c["config"].get("name") == speaker] if speaker else teams
        texts = {system_message(resolve(c, path)) for c in mine} - {""}
        own = any(isinstance(m, Mapping) and m.get("type") == "SystemMessage" and isinstance(m.get("content"), str)
                  and not m["content"].lstrip().startswith(MEMORY) for m in messages)  # its context holds one
        lacking = "" if len(texts) == 1 or own else AMBIGUOUS if texts else NO_POLICY
        named.append(("/".join(path), messages, at, next(iter(texts)) if len(texts) == 1 else "", lacking))
    return named if len(named) > 1 else [("", *named[0][1:])]


def _speaker(messages: list[Any]) -> str | None:
    """The agent whose model context ``messages`` is, by the ``source`` its AssistantMessages name (None: none, or
    several): a lone agent's saved state names no agent, and of several agents' configs beside it, the one of
    that name is its own."""
    names = {m.get("source") for m in messages if isinstance(m, Mapping) and m.get("type") == "AssistantMessage"
             and isinstance(m.get("source"), str)}
    return names.pop() if len(names) == 1 else None


def _contexts(doc: Mapping[str, Any], where: str, path: tuple[str, ...],
              at: str = "") -> list[tuple[tuple[str, ...], list[Any], str]]:
    """The model contexts of a state of any kind (an agent's, a team's, a SocietyOfMindAgent's), by the path of
    participant names to each (``where``: the state's place; ``at``: its conversation's, its participant's)."""
    if doc.get("type") == AGENT:
        return [(path, _messages(doc, where), at or where)]
    if doc.get("type") == SOCIETY and isinstance(doc.get("inner_team_state"), Mapping):
        return _contexts(doc["inner_team_state"], f"{where}, inner_team_state", path)
    if doc.get("type") != TEAM or not isinstance(doc.get("agent_states"), Mapping):
        return []
    found = []
    for name, state in doc["agent_states"].items():
        inner = state.get("agent_state") if isinstance(state, Mapping) and state.get("type") == CONTAINER else None
        if isinstance(inner, Mapping):
            found += _contexts(inner, f"{where}, agent_states.{name}.agent_state", (*path, str(name)),
                               f"{where}, agent_states.{name}")
    return found


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
        elif kind == "UserMessage" and m.get("source") == SOURCE and isinstance(content, str) and is_frame(content):
            chat.ignored["memory"] += 1  # SAMAutoGenMemory's recall, framed as data: no one's words
        elif kind == "UserMessage":
            framed = leading_frames(content)[0]  # SAMAutoGenMemory's recall before the user's words: no one's
            chat.ignored["memory"] += framed
            words = _user(content[framed:] if framed else content, w, chat)
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
