"""OpenHands V1 event streams: the events of the OpenHands software-agent-sdk (package ``openhands-sdk``, behind
OpenHands 1.x, its CLI and its benchmarks), each ``{"kind", "id", "timestamp", "source", ...}`` as the SDK's pydantic
models dump them (openhands-sdk/openhands/sdk/event/). A run is a list of them: an evaluation's ``output.jsonl``
line ``{"instance_id", "attempt", "history": [events], ...}`` (OpenHands/benchmarks, benchmarks/utils/models.py
EvalOutput), or a conversation's folder as the SDK persists it, ``base_state.json`` and one event a file,
``events/event-{index:05d}-{event id}.json`` (openhands/sdk/conversation/persistence_const.py), read in index order.
The containers are :mod:`sam_model.data.formats.openhands`'s, which reads them for OpenHands 0.x too.

Read as the SDK builds what the model saw (``LLMConvertibleEvent.events_to_messages``, event/base.py), as the 0.x
reader follows OpenHands' ConversationMemory:

- a ``SystemPromptEvent`` is the system message (the policy): its ``system_prompt`` text and its
  ``dynamic_context``;
- a ``MessageEvent`` is its ``llm_message``, the user's words or the agent's by its role, with the
  ``extended_content`` the agent context added to it;
- an ``ActionEvent`` is the model's call, its ``tool_call`` (``{"id", "name", "arguments"}``: the tool's name and the
  arguments as the model wrote them; not ``action``, which the SDK built from them), its ``thought`` the words;
  consecutive ActionEvents of one ``llm_response_id`` (parallel calls, the thought on the first) are one assistant
  turn, as the SDK joins them;
- an ``ObservationEvent`` is the result of the call its ``tool_call_id`` names: its ``observation``'s ``content``,
  whole (the tool's words; what a tool's code adds around them for the model, such as the terminal's exit-code line,
  is not in the event), flagged as failed (toolstate's extension of the spec) where ``is_error`` is true (the SDK
  sets it for a command it could not run) or a command's ``exit_code`` is not 0 (it ran and failed: OpenHands 0.x
  flags the same command so, and the 0.x reader reads its flag). Events of SDK releases before ``content`` and
  ``is_error`` hold ``output`` and ``error``, read the same way (an editor's ``error`` text is its words). An
  ``AgentErrorEvent`` (a call the agent could not run: an unknown tool, arguments that did not validate) answers its
  call with its ``error``, flagged; a ``UserRejectObservation`` with ``Action rejected: REASON``, flagged (the call
  did not run);
- a terminal observation's ``metadata.working_dir`` (the shell's ``pwd`` after the command) is the working
  directory, told on the chat message after it changes (:data:`~sam_model.data.formats.base.CWD`): toolstate traces
  an absolute path under it by its relative part; a call before the first command's result has none;
- every other event (``Condensation``, ``ConversationStateUpdateEvent``, ``PauseEvent``, token and log events, ...)
  is counted, not read, and so are reasoning and images. A ``Condensation``'s summary stands for forgotten events
  only in what the model saw later (the View): the events it forgets stay in the log (the SDK's event log and an
  evaluation's history keep every event), and they are read here, so a later call traces to the result that said
  its value, whatever the label. Read as an event, the summary, the condenser model's paraphrase of them, would be a
  second memory of the same values, and under ``--label latest`` or ``all`` be credited with values it only repeats.
  So it is counted, as the 0.x reader counts condensation actions, and so is a ``CondensationSummaryEvent`` (the
  View's stand-in for the summary, not in the saved log).
- a conversation whose events form a tree (the SDK's history tree: each event's ``parent_id``; ``navigate_to`` or a
  fork from an earlier event writes new events under it, beside the ones they replace) is read on the branch of
  its last event, as the model saw it (:mod:`sam_model.data.formats.openhands_tree`); the events of the branches it
  left are counted, not read, and the first is named in the import report. A log without ``parent_id`` is one
  branch, read in log order as before; one whose chain holds a ``parent_id`` naming the event itself or a later
  one (a cycle, events out of order) is refused, naming the event.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sam_model.data.advice import Advice
from sam_model.data.formats.base import FAILED, Chat, TranscriptFormatError, chat_call, failure, text_of
from sam_model.data.formats.numbered import mark
from sam_model.data.formats.openhands import is_event, is_v1_event, working_dir
from sam_model.data.formats.openhands_tree import LaterParent, left
from sam_model.io import json_shape, json_type

RESULTS = frozenset({"ObservationEvent", "AgentErrorEvent", "UserRejectObservation"})
LEFT = "events of branches the conversation left (its head moved back: the SDK keeps them)"
REASONING = ("reasoning_content", "thinking_blocks", "responses_reasoning_item", "reasoning_details")


def sniff(messages: list[Any]) -> bool:
    return any(is_v1_event(m) for m in messages)


def to_chat(events: list[Any], where: str, leaf: str | None = None) -> Chat:
    """The events of one run as chat messages, on the branch ending at ``leaf`` (the state's ``leaf_event_id``, where
    a conversation folder's ``base_state.json`` names one; openhands_tree.left)."""
    chat = Chat()
    turn: tuple[Any, dict[str, Any]] | None = None  # the latest assistant turn of calls: its response id, its message
    try:
        off = set(left(events, leaf))
    except LaterParent as err:
        raise TranscriptFormatError(f"{where}, event {err.at}", str(err)) from None
    for i, e in enumerate(events):
        if i in off:  # a branch the conversation left (openhands_tree): the model did not see it
            chat.ignored[LEFT] += 1
            continue
        source = f"event {i}"
        w = f"{where}, {source}" + (f" (id {e['id']})" if isinstance(e, Mapping) and isinstance(e.get("id"), str) else "")
        if is_event(e):
            raise TranscriptFormatError(w, "an OpenHands 0.x event ({\"action\": ...} or {\"observation\": ...}), not "
                                           "a V1 one, which the openhands reader reads: ", Advice("format", "openhands"))
        if not isinstance(e, Mapping) or not isinstance(e.get("kind"), str):
            raise TranscriptFormatError(w, "an OpenHands V1 event must be an object with a string 'kind' (ActionEvent, "
                                           f"ObservationEvent, MessageEvent, ...), got {json_shape(e)}")
        kind = e["kind"]
        if kind == "ActionEvent":
            call = _call(e, w)
            response = e.get("llm_response_id")
            if turn is not None and response is not None and response == turn[0] and chat.messages[-1] is turn[1]:
                turn[1]["tool_calls"].append(call)  # a parallel call of the response just read
                continue
            _reasoning(e, chat)
            turn = (response, {"role": "assistant", "content": _words(e.get("thought"), "thought", w, chat) or None,
                               "tool_calls": [call]})
            chat.add(turn[1], source)
        elif kind in RESULTS:
            result = _result(e, w, chat)
            chat.cwd = working_dir(e.get("observation"), "observation", w) or chat.cwd  # told on this result
            chat.add(result, source)
        elif kind == "SystemPromptEvent":
            prompt = [_text_content(e.get(k), k, w) for k in ("system_prompt", "dynamic_context")]
            chat.add({"role": "system", "content": "\n".join(t for t in prompt if t)}, source)
        elif kind == "MessageEvent":
            _message(e, w, chat, source)
        else:
            chat.ignored[f"{kind} events"] += 1
    return mark(chat)


def _call(e: Mapping[str, Any], w: str) -> dict[str, Any]:
    """An ActionEvent's call as the model wrote it (MessageToolCall: id, name, arguments as a JSON string)."""
    call = e.get("tool_call")
    if not isinstance(call, Mapping):
        raise TranscriptFormatError(w, f"'tool_call' is {json_type(call)}, expected the model's call {{\"id\", "
                                       "\"name\", \"arguments\"}")
    call_id = call.get("id")
    if not isinstance(call_id, str) or not call_id:
        raise TranscriptFormatError(w, f"'tool_call.id' is {json_type(call_id)}, expected the call's id (a string)")
    return chat_call(call_id, call.get("name"), call.get("arguments"), f"{w}, tool_call")


def _result(e: Mapping[str, Any], w: str, chat: Chat) -> dict[str, Any]:
    """The tool message of an observation, an agent error or a rejection: the words the model was given."""
    call_id = e.get("tool_call_id")
    if not isinstance(call_id, str) or not call_id:
        raise TranscriptFormatError(w, f"'tool_call_id' is {json_type(call_id)}, expected the id of the call it "
                                       "answers (a string)")
    if e["kind"] == "AgentErrorEvent":
        words, flag = _string(e.get("error"), "error", w), {FAILED: True}
    elif e["kind"] == "UserRejectObservation":
        reason = _string(e.get("rejection_reason"), "rejection_reason", w) or "User rejected the action"
        words, flag = f"Action rejected: {reason}", {FAILED: True}
    else:
        obs = e.get("observation")
        if not isinstance(obs, Mapping):
            raise TranscriptFormatError(w, f"'observation' is {json_type(obs)}, expected an object {{\"kind\", "
                                           "\"content\", \"is_error\"}")
        if "content" in obs or "output" not in obs:
            words = _words(obs.get("content"), "observation.content", w, chat)
            flag = failure(obs.get("is_error"), True, False, "observation.is_error", w)
        else:  # releases before content and is_error: output, and error (a command's true, an editor's words)
            error = obs.get("error")
            if error is not None and not isinstance(error, (bool, str)):
                raise TranscriptFormatError(w, f"'observation.error' is {json_type(error)}, expected true, false or "
                                               "the error's words")
            words = error if isinstance(error, str) and error else _string(obs.get("output"), "observation.output", w)
            flag = {FAILED: True} if error else {}
        flag = flag or _exited(obs, w)
    more = _words(e.get("extended_content"), "extended_content", w, chat)
    return {"role": "tool", "tool_call_id": call_id, "content": "\n".join(t for t in (words, more) if t), **flag}


def _exited(obs: Mapping[str, Any], w: str) -> dict[str, bool]:
    """The flag of a command that ran and exited other than 0 (a terminal observation's ``exit_code``; -1: still
    running at the soft timeout, or interrupted). The SDK's ``is_error`` is only for a command it could not run;
    OpenHands 0.x flagged the same command by its exit code (CmdOutputObservation.success), and one agent's failed
    command reads the same in both versions."""
    code = obs.get("exit_code")
    if code is None:
        return {}
    if not isinstance(code, int) or isinstance(code, bool):
        raise TranscriptFormatError(w, f"'observation.exit_code' is {json_type(code)}, expected the command's exit "
                                       "code (an integer) or null")
    return {FAILED: True} if code != 0 else {}


def _message(e: Mapping[str, Any], w: str, chat: Chat, source: str) -> None:
    """A MessageEvent's llm_message (and what the agent context extended it with): words, and any calls on it."""
    message = e.get("llm_message")
    if not isinstance(message, Mapping):
        raise TranscriptFormatError(w, f"'llm_message' is {json_type(message)}, expected a message {{\"role\", "
                                       "\"content\": [...]}")
    role = message.get("role")
    if role not in ("user", "assistant", "system"):
        raise TranscriptFormatError(w, f"'llm_message.role' is {str(role)[:40]!r}, expected user, assistant or system")
    _reasoning(message, chat)
    words = [_words(message.get("content"), "llm_message.content", w, chat),
             _words(e.get("extended_content"), "extended_content", w, chat)]
    raw = message.get("tool_calls") or []
    if not isinstance(raw, list) or role != "assistant" and raw:
        raise TranscriptFormatError(w, f"'llm_message.tool_calls' is {json_type(raw)} on a {role} message, expected "
                                       "a list on an assistant message, or null")
    calls = [_call({"tool_call": c}, f"{w}, llm_message.tool_calls[{j}]") for j, c in enumerate(raw)]
    text = "\n".join(t for t in words if t)
    if text or calls:
        chat.add({"role": role, "content": text or None, **({"tool_calls": calls} if calls else {})}, source)


def _words(value: Any, field: str, w: str, chat: Chat) -> str:
    """The text of content parts (TextContent; images counted), or of a string."""
    if value is not None and not isinstance(value, (str, list)):
        raise TranscriptFormatError(w, f"'{field}' is {json_type(value)}, expected a list of content parts "
                                       "{\"type\": \"text\", \"text\": ...}")
    return text_of(value, f"{w}, {field}", ignored=chat.ignored)


def _text_content(value: Any, field: str, w: str) -> str:
    """A TextContent's text (a SystemPromptEvent's prompt and dynamic context), or null."""
    if value is not None and not (isinstance(value, Mapping) and isinstance(value.get("text"), str)):
        raise TranscriptFormatError(w, f"'{field}' is {json_shape(value)}, expected {{\"type\": \"text\", \"text\": ...}}")
    return value["text"] if value is not None else ""


def _string(value: Any, field: str, w: str) -> str:
    if value is None or isinstance(value, str):
        return value or ""
    raise TranscriptFormatError(w, f"'{field}' is {json_type(value)}, expected a string")


def _reasoning(holder: Mapping[str, Any], chat: Chat) -> None:
    if any(holder.get(k) for k in REASONING):
        chat.ignored["reasoning"] += 1
