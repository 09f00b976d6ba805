"""OpenHands (formerly OpenDevin) trajectories: the event stream of one run, as OpenHands serialises it
(openhands/events/serialization/event.py, ``event_to_dict``): a list of events ``{"id", "source", "message",
"action", "args", "tool_call_metadata"}`` or ``{"id", "source", "observation", "content", "extras", "cause",
"tool_call_metadata"}``. OpenHands' ``save_trajectory_path`` setting (``[core]`` of its config.toml, or
``SAVE_TRAJECTORY_PATH``; a setting, not a command-line option) writes one run as such a list (``{session}.json``,
one per run when the path is a folder); an evaluation's ``output.jsonl`` has one run a line, ``{"instance_id",
"instruction", "history": [events], ...}`` (older ones: ``history`` as ``[action, observation]`` pairs).

Read as OpenHands' own ConversationMemory builds what the model saw:

- a ``system`` action is the system prompt (the policy); a ``message`` action is the user's words (``source``
  ``user``) or the agent's (otherwise);
- any other agent action is a tool call. With ``tool_call_metadata`` (function calling) the call is the model's
  own: the tool call of ``model_response`` whose id is ``tool_call_id`` (its name, such as ``execute_bash``,
  ``str_replace_editor``, ``browser``, ``execute_ipython_cell``, and the arguments the model wrote), beside every
  other call and the words (the thought) of that response, so one response is one assistant turn; without
  ``model_response``, ``function_name`` and the action's ``args``. Without metadata (text-mode CodeAct, OpenDevin)
  the call is the action (``run``, ``read``, ...) with its ``args`` less its ``thought`` (the words) and
  OpenHands' own bookkeeping (:data:`BOOKKEEPING`);
- the **working directory**, a command observation's ``extras.metadata.working_dir`` (the shell's ``pwd`` after it),
  is told on the chat message after it changes (:data:`~sam_model.data.formats.base.CWD`): toolstate traces an
  absolute path under it (``str_replace_editor``'s ``/workspace/<repo>/...``) by its relative part. A call before
  the first command's result has no directory (its paths traced whole);
- an observation whose ``cause`` is a call's action (or whose ``tool_call_metadata`` names the call; in an older
  ``[action, observation]`` pair that names no cause, the pair's action) is its result, its ``content`` whole,
  flagged as failed (toolstate's extension of the spec) where OpenHands says so: an ``error`` observation,
  ``success: false`` (event_to_dict writes it for a command's output), or, in trajectories saved before that field,
  an exit code other than 0 (CmdOutputObservation.error); ``recall``, ``agent_state_changed`` and other internal
  observations (:data:`QUIET`) are counted, not read; any other observation (an error with no cause, what a command
  the user ran printed) is a user turn, as OpenHands shows it to the model, and so is an action of the user's other
  than a message (its ``message``, such as ``Running command: ls``).

Bookkeeping actions (:data:`NOT_CALLS`: state changes, condensation, recall) are counted, not read; so are the
model's reasoning fields and images.

OpenHands V1's events (the software-agent-sdk's, each with a ``kind``) are another format, read by
:mod:`sam_model.data.formats.openhands_v1`: the two share nothing but their containers (a list of events, an
evaluation's ``output.jsonl`` line), which this module reads for both, each run tagged with its reader by its first
event (:func:`version`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from sam_model.data.advice import Advice
from sam_model.data.formats.base import (
    FAILED,
    Chat,
    Conversation,
    TranscriptFormatError,
    chat_call,
    failure,
    result_text,
    text_of,
)
from sam_model.data.formats.numbered import mark
from sam_model.data.formats.openhands_tree import LaterParent, left
from sam_model.io import json_shape, json_type

NOT_CALLS = frozenset({"system", "message", "null", "change_agent_state", "recall", "condensation", "pause",
                       "resume", "stop", "start", "loop_recovery"})
QUIET = frozenset({"recall", "agent_state_changed", "null", "loop_detection", "llm_response"})
BOOKKEEPING = frozenset({"thought", "blocking", "hidden", "is_confirmed", "confirmation_state", "security_risk",
                         "impl_source", "translated_ipython_code", "keep_prompt", "kernel_init_code", "include_extra",
                         "is_static", "cwd", "wait_for_response", "image_urls"})


# an event that is a document of its own (a line of a .jsonl, a file): OpenHands writes a run's events as one list
ALONE = ("an OpenHands event alone, not a run: the openhands reader reads a run's events as one JSON list (a .json, "
         "as the save_trajectory_path setting writes it) or an evaluation's output.jsonl line {\"instance_id\", "
         "\"history\": [events]}: write the run's events as one list, or give the session's folder (sessions/<sid>, "
         "whose events/<id>.json files are read as one run)")


# OpenHands V1 (the software-agent-sdk: OpenHands 1.x, its CLI and its benchmarks' output.jsonl) writes other events
V1 = "openhands-v1"
ALONE_V1 = ("an OpenHands V1 event alone, not a run: the openhands-v1 reader reads a run's events as one JSON list, "
            "an evaluation's output.jsonl line {\"instance_id\", \"history\": [events]}, or the conversation's "
            "folder as the SDK saves it (events/event-NNNNN-ID.json): give the folder, or write the events as one list")


def is_v1_event(m: Any) -> bool:
    """An event of OpenHands V1, told by its ``kind`` beside the id, timestamp and source every V1 event has."""
    return isinstance(m, Mapping) and isinstance(m.get("kind"), str) and "role" not in m \
        and all(k in m for k in ("id", "timestamp", "source"))


def is_event(m: Any) -> bool:
    """An OpenHands 0.x event: exactly one of ``action`` and ``observation``, and no ``role`` or ``type`` (SWE-agent's
    steps have both, chat messages a role, a Responses ``computer_call`` item a type), nor a V1 event's ``kind``
    (its ActionEvent has an ``action`` object)."""
    return isinstance(m, Mapping) and ("action" in m) != ("observation" in m) and "role" not in m \
        and "type" not in m and any(k in m for k in ("source", "args", "extras", "tool_call_metadata", "cause")) \
        and not is_v1_event(m)


def version(events: list[Any]) -> str:
    """The reader of a run's events, told by its first: ``openhands-v1`` for a V1 event, else ``openhands``."""
    first = events[0] if events else None
    return V1 if is_v1_event(first[0] if isinstance(first, list) and first else first) else "openhands"


def format_of(doc: Any) -> str | None:
    """The reader of an OpenHands document (a list of events, an evaluation line), None for any other document."""
    if not is_trajectory(doc):
        return None
    return version((doc.get("history") if isinstance(doc, Mapping) else doc) or [])


def sniff(messages: list[Any]) -> bool:
    return any(is_event(m) for m in messages)


def to_chat(events: list[Any], where: str) -> Chat:
    """The events of one run as chat messages (an older evaluation's ``[action, observation]`` pairs too)."""
    chat = Chat()
    by_action: dict[Any, str] = {}  # an action's event id -> the id of its call
    turn: tuple[Any, list[str]] = (None, [])  # the latest model response read: its id, its calls' ids
    made: dict[int, str] = {}  # an action event (by object) -> the id of its call, for its pair's observation
    for i, (e, pair) in enumerate(_flat(events)):
        source = f"event {i}"
        w = f"{where}, {source}" + (f" (id {e['id']})" if isinstance(e, Mapping) and "id" in e else "")
        if is_v1_event(e):  # its ActionEvent has an action object: it was "'action' is an object"
            raise TranscriptFormatError(w, "an OpenHands V1 event (software-agent-sdk: {\"kind\": ...}), not one of "
                                           "OpenHands 0.x, which the openhands-v1 reader reads: ", Advice("format", V1))
        if not is_event(e):
            raise TranscriptFormatError(w, "an event must be an object with 'action' or 'observation' (one of them), "
                                           f"got {json_shape(e)}")
        for key in ("id", "cause"):
            if e.get(key) is not None and (isinstance(e[key], bool) or not isinstance(e[key], (int, str))):
                raise TranscriptFormatError(w, f"'{key}' is {json_type(e[key])}, expected an event id (an integer)")
        if "observation" in e:
            if not isinstance(e["observation"], str):  # it was "unhashable type", a TypeError
                raise TranscriptFormatError(w, f"'observation' is {json_type(e['observation'])}, expected a string "
                                               "(the observation's kind, such as run)")
            _observation(chat, e, source, by_action, w, made.get(id(pair)) if pair is not None else None)
            continue
        kind, args = e["action"], {} if e.get("args") is None else e["args"]
        if not isinstance(kind, str) or not isinstance(args, Mapping):
            bad = "action" if not isinstance(kind, str) else "args"
            raise TranscriptFormatError(w, f"'{bad}' is {json_type(e[bad])}, expected "
                                           f"{'a string' if bad == 'action' else 'an object'}")
        if kind == "system":
            chat.add({"role": "system", "content": _text(args.get("content", e.get("message")), "args.content", w)},
                     source)
        elif kind == "message":
            text = _text(args.get("content", e.get("message")), "args.content", w)
            if isinstance(args.get("image_urls"), list) and args["image_urls"]:
                chat.ignored["images"] += len(args["image_urls"])
            if text:
                chat.add({"role": "user" if e.get("source") == "user" else "assistant", "content": text}, source)
        elif kind in NOT_CALLS:
            chat.ignored[f"{kind} actions"] += 1
        elif e.get("source") == "user":  # the user ran it: shown to the model as the user's words
            chat.add({"role": "user", "content": _text(e.get("message"), "message", w) or result_text(args)}, source)
        elif e.get("tool_call_metadata") is None:
            call = chat_call(f"event-{e.get('id', i)}", kind, _arguments(args), w)
            words = _text(args.get("thought"), "args.thought", w)
            chat.add({"role": "assistant", "content": words or None, "tool_calls": [call]}, source)
            by_action[e.get("id")] = made[id(e)] = call["id"]
        else:
            call_id, response, calls, words = _model_call(e["tool_call_metadata"], args, w, chat)
            by_action[e.get("id")] = made[id(e)] = call_id
            if response == turn[0] and call_id in turn[1]:
                continue  # a later call of a response already read
            chat.add({"role": "assistant", "content": words or None, "tool_calls": calls}, source)
            turn = (response, [c["id"] for c in calls])
    return mark(chat)


def _arguments(args: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in args.items() if k not in BOOKKEEPING}


def _observation(chat: Chat, e: Mapping[str, Any], source: str, by_action: dict[Any, str], where: str,
                 paired: str | None = None) -> None:
    """A call's result, a user turn, or (internal) a count; ``paired``: the call of the action this observation is
    paired with in an older evaluation's ``[action, observation]`` history."""
    meta = e.get("tool_call_metadata")
    meta_id = meta.get("tool_call_id") if isinstance(meta, Mapping) else None
    call_id = by_action.get(e["cause"]) if e.get("cause") is not None else None
    call_id = call_id or (None if meta_id is None else str(meta_id))
    if call_id is None and e.get("cause") is None and e["observation"] not in QUIET:
        call_id = paired  # OpenDevin paired them before observations named their cause: the pair says whose it is
    content = result_text(e.get("content"))
    chat.cwd = working_dir(e.get("extras"), "extras", where) or chat.cwd
    if call_id is not None:  # a call id no call has is counted by the importer as an unanswered result
        chat.add({"role": "tool", "tool_call_id": call_id, "content": content, **_failed(e, where)}, source)
    elif e["observation"] in QUIET:
        chat.ignored[f"{e['observation']} observations"] += 1
    elif content:
        chat.add({"role": "user", "content": content}, source)


def working_dir(holder: Any, field: str, where: str) -> str:
    """The shell's working directory after a command, as its observation records it (``metadata.working_dir``:
    CmdOutputMetadata, the ``$(pwd)`` of OpenHands' PS1 prompt; 0.x's ``extras``, V1's ``observation``); "" where
    none is recorded. Told on the chat message after it (Chat.cwd): toolstate traces an absolute path under it by
    its relative part."""
    meta = holder.get("metadata") if isinstance(holder, Mapping) else None
    found = meta.get("working_dir") if isinstance(meta, Mapping) else None
    if found is not None and not isinstance(found, str):
        raise TranscriptFormatError(where, f"'{field}.metadata.working_dir' is {json_type(found)}, expected the "
                                           "shell's working directory (a string) or null")
    return found or ""


def _failed(e: Mapping[str, Any], where: str) -> dict[str, bool]:
    """The failure flag of a call's observation, as OpenHands sets it (see the module doc)."""
    if failure(e.get("success"), False, True, "success", where) or e["observation"] == "error":
        return {FAILED: True}
    if e.get("success") is not None:
        return {}
    extras = e.get("extras") if isinstance(e.get("extras"), Mapping) else {}
    meta = extras.get("metadata") if isinstance(extras.get("metadata"), Mapping) else {}
    code = meta.get("exit_code", extras.get("exit_code"))
    return {FAILED: True} if isinstance(code, int) and not isinstance(code, bool) and code != 0 else {}


def _model_call(meta: Any, args: Mapping[str, Any], w: str, chat: Chat) -> tuple[str, Any, list[dict], str]:
    """(the call's id, the model response's id, the response's calls, its words) of an action's metadata."""
    if not isinstance(meta, Mapping) or not isinstance(meta.get("function_name"), str) \
            or not isinstance(meta.get("tool_call_id"), (str, int)) or isinstance(meta.get("tool_call_id"), bool):
        raise TranscriptFormatError(w, "'tool_call_metadata' needs a string 'function_name' and a 'tool_call_id' "
                                       f"(got {json_shape(meta)})")
    call_id = str(meta["tool_call_id"])
    own = [chat_call(call_id, meta["function_name"], _arguments(args), w)]
    response = meta.get("model_response")
    if response is None:
        return call_id, (call_id,), own, _text(args.get("thought"), "args.thought", w)
    at = f"{w}, tool_call_metadata.model_response"
    choices = response.get("choices") if isinstance(response, Mapping) else None
    message = choices[0].get("message") if isinstance(choices, list) and choices and isinstance(choices[0], Mapping) \
        else None
    if not isinstance(message, Mapping):
        raise TranscriptFormatError(at, f"expected a model response {{\"id\", \"choices\": [{{\"message\": ...}}]}} "
                                        f"(got {json_shape(response)})")
    raw = message.get("tool_calls") or []
    if not isinstance(raw, list):
        raise TranscriptFormatError(f"{at}.choices[0].message", f"'tool_calls' is {json_type(raw)}, expected a list")
    calls = []
    for j, c in enumerate(raw):
        fn = c.get("function") if isinstance(c, Mapping) else None
        if not isinstance(fn, Mapping):
            raise TranscriptFormatError(f"{at}.choices[0].message, tool call {j}",
                                        f"expected {{\"id\", \"function\": {{\"name\", \"arguments\"}}}}, got {json_shape(c)}")
        calls.append(chat_call(c.get("id"), fn.get("name"), fn.get("arguments"), f"{at}, tool call {j}"))
    if call_id not in [c["id"] for c in calls]:  # the response lacks this call: the action is the call
        calls = own
    if message.get("reasoning_content") or message.get("thinking_blocks"):
        chat.ignored["reasoning"] += 1
    words = text_of(message.get("content"), f"{at}.choices[0].message", ignored=chat.ignored)
    return call_id, response.get("id") or tuple(c["id"] for c in calls), calls, words


def _text(value: Any, field: str, where: str) -> str:
    if value is None or isinstance(value, str):
        return value or ""
    raise TranscriptFormatError(where, f"'{field}' is {json_type(value)}, expected a string")


def _flat(history: list[Any]) -> Iterator[tuple[Any, Any]]:
    """Each event of a ``history``, and for the observation of an ``[action, observation]`` pair (older evaluation
    outputs write them) its action, None otherwise."""
    for item in history:
        if not isinstance(item, list):
            yield item, None
            continue
        pair = len(item) == 2 and isinstance(item[0], Mapping) and "action" in item[0]
        for j, e in enumerate(item):
            yield e, item[0] if pair and j == 1 else None


def is_trajectory(doc: Any) -> bool:
    """A list of events (``save_trajectory_path``) or an evaluation output line ``{"instance_id", "history"}``
    (its history empty or null: a run that failed before its first step)."""
    if isinstance(doc, Mapping):
        history = doc.get("history")
        if history:
            return isinstance(history, list) and is_trajectory(history)
        # no events: a run that stopped before its first step ([], or null as EvalOutput writes a timed-out run)
        return "history" in doc and history in (None, []) and "instance_id" in doc \
            and not any(k in doc for k in ("trajectory", "messages"))
    return isinstance(doc, list) and bool(doc) and (is_event(doc[0]) or is_v1_event(doc[0]) or isinstance(doc[0], list)
                                                    and bool(doc[0]) and is_event(doc[0][0]))


def conversations(doc: Any, where: str, name: str, group: str, id_of,
                  format: str | None = None) -> Iterator[Conversation | TranscriptFormatError]:
    """The run of one document: a list of events (episode ``name``) or an evaluation output line (episode and
    group: its ``instance_id``), read by ``format`` (None: told by its events, 0.x or V1); a bad one is yielded as
    its error."""
    if isinstance(doc, Mapping) and "history" in doc and (doc["history"] is None or isinstance(doc["history"], list)):
        instance = doc.get("instance_id")
        if instance is not None:
            if isinstance(instance, bool) or not isinstance(instance, (str, int)) or instance == "":
                yield TranscriptFormatError(where, f"'instance_id' is {json_type(instance)}, expected a string")
                return
            name = group = str(instance)
        if not doc["history"]:  # an evaluation writes a run that timed out or failed to start so: say why it is empty
            error = f"; its error: {str(doc['error'])[:300]}" if doc.get("error") else ""
            yield TranscriptFormatError(where, f"run {name} has no events (its history is "
                                               f"{'null' if doc['history'] is None else 'empty'}: it stopped before "
                                               f"its first step{error})")
            return
        yield _run(id_of(name), doc["history"], where, group, format or version(doc["history"]))
    elif isinstance(doc, list):
        yield _run(id_of(name), doc, where, group, format or version(doc))
    elif is_v1_event(doc):
        yield TranscriptFormatError(where, ALONE_V1)
    elif is_event(doc):
        yield TranscriptFormatError(where, ALONE)
    else:
        yield TranscriptFormatError(where, "not an OpenHands trajectory: expected a list of events (as "
                                           "OpenHands' save_trajectory_path setting writes) or an evaluation output line "
                                           f"{{\"instance_id\", \"history\": [events]}}; got {json_shape(doc)} (sam-data "
                                           "formats lists what is read)")


def _run(episode: str, events: list[Any], where: str, group: str,
         format: str) -> Conversation | TranscriptFormatError:
    """A run's conversation; a V1 run's events of branches it left (openhands_tree) named for the import report, a
    tree whose chain loops its error."""
    try:
        off = left(events) if format == V1 else []
    except LaterParent as err:
        return TranscriptFormatError(f"{where}, event {err.at}", str(err))
    return Conversation(episode, events, where, group, format, abandoned=tuple(f"{where}, event {i}" for i in off))
