"""Langfuse traces: the model calls an app's Langfuse integration recorded, as its public API returns them.

Checked against the ``langfuse`` package's generated API models (4.18 and 5.2): ``GET /api/public/traces/{traceId}``
returns a ``TraceWithFullDetails``, ``{"id", "timestamp", "sessionId", ..., "observations": [ObservationsView]}``;
``GET /api/public/v2/observations`` (the read path of Langfuse v4, whose SDK 5.x has no trace models left) a page
``{"data": [ObservationV2], "meta": {"cursor"}}`` whose ``input`` and ``output`` are the stored strings, JSON text for
anything but a string; ``GET /api/public/traces`` a page of ``TraceWithDetails``, whose ``observations`` are ids
only (refused with what to fetch instead); the UI's Download JSON of a trace ``{"trace", "observations"}``. An
observation is ``{"id", "traceId", "type", "name", "startTime", "input", "output", "level", "statusMessage",
"parentObservationId", ...}``, its type ``GENERATION`` for a model call (``SPAN``, ``EVENT``, and since SDK 3.x
``AGENT``, ``TOOL``, ``CHAIN``, ``RETRIEVER``, ``EVALUATOR``, ``EMBEDDING``, ``GUARDRAIL``).

A generation's input is what its integration sent: the OpenAI integration's messages list, or ``{"messages",
"tools"}`` when tools were given; LangChain's callback's messages (``{"role", "content", "tool_calls": [{"name",
"args", "id"}]}``), or ``{"messages": [...]}``; a plain string (a prompt). Its output is the model's message
(``{"role", "content", "tool_calls"}``) or its text; the Anthropic SDK's ``{"system", "messages"}``, its blocks read as
the anthropic reader reads them (:func:`_blocks`). Every call's input repeats the history, so a conversation (a
session's traces, else a trace) is read from its generations in start order, each adding what
:func:`~sam_model.data.formats.history.join` finds new. A tool call that no later input answers is answered by the
``TOOL`` (or ``SPAN``) observation of its name that started after the call, of parallel calls the one whose
arguments its input holds (:func:`~sam_model.data.formats.history.ran`); one at level ``ERROR`` flags the result as failed (toolstate's extension),
answered there or in a later input. An input or output of another shape (the
Responses API's items, several choices) is counted and named in a warning, not guessed at. A message's text that is
a mask's stand-in (:data:`MASKS` but :data:`WHOLE_ONLY`, read as said) is refused, not read as words; a whole input
or output that is one (the SDK's, ``_client/span.py``, where the app's ``mask`` raised on that value) is read as one
not recorded, and warned of; an answer so masked is read where a later input of its history repeats it and put
after the input it answers (history.Unrecorded, the OpenInference reader's rule for a hidden output).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime, timezone
from typing import Any

from sam_model.data.formats import chat
from sam_model.data.formats.base import (
    FAILED,
    Chat,
    Conversation,
    TranscriptFormatError,
    stops_mid_json,
    strict_loads,
)
from sam_model.data.formats.history import Inputs, Unrecorded, decoded, ran
from sam_model.data.formats.openinference import REDACTED
from sam_model.io import json_type

log = logging.getLogger(__name__)
TYPES = ("GENERATION", "SPAN", "EVENT", "AGENT", "TOOL", "CHAIN", "RETRIEVER", "EVALUATOR", "EMBEDDING", "GUARDRAIL")
ANSWERS = ("TOOL", "SPAN")  # observations that may record a tool's run (@observe(as_type="tool"), LangChain's tools)
OUTPUT_ONLY = ("refusal", "annotations", "audio", "finish_reason")  # what an output has and its repeat has not
# a whole text that stands for words masked before they were sent -> why, and what to do: read as the words, it
# became a user's prompt (or a model's answer, a tool's result) and memories of words never said
MASKS = {
    "<fully masked due to failed mask function>": "the Langfuse SDK's stand-in when the app's mask function raised "
    "(its log says \"Masking error\"): fix the mask function and trace again",
    "REDACTED": "the stand-in of the mask function in Langfuse's masking docs: have the mask replace only the "
    "sensitive words, or leave this trace out",
    REDACTED: "OpenInference's stand-in for a text its TraceConfig hides (OPENINFERENCE_HIDE_INPUTS and the like, "
    "exported to Langfuse): trace with it unset to train on the text",
}
# the stand-ins that are words a user may type too: one only where it is a whole value (the docs' mask replaces a whole
# string; the SDK masks each input and output whole), a message's text read as said (a user who answered "REDACTED"
# lost the session: no mask writes it there but an app's own, which may write any word)
WHOLE_ONLY = frozenset({"REDACTED"})
FETCH = ("fetch each trace with GET /api/public/traces/{traceId}, or its observations with GET "
         "/api/public/v2/observations?traceId=...&fields=core,basic,io")


def is_observation(doc: Any) -> bool:
    return isinstance(doc, Mapping) and doc.get("type") in TYPES and "startTime" in doc and "id" in doc


def is_trace(doc: Any) -> bool:
    """A trace with its observations (the API's, or the UI's download ``{"trace", "observations"}``)."""
    return isinstance(doc, Mapping) and isinstance(doc.get("observations"), list) and (
        "timestamp" in doc or "htmlPath" in doc or isinstance(doc.get("trace"), Mapping))


def is_page(doc: Any) -> bool:
    return isinstance(doc, Mapping) and isinstance(doc.get("data"), list) and isinstance(doc.get("meta"), Mapping) \
        and bool(doc["data"]) and (is_trace(doc["data"][0]) or is_observation(doc["data"][0]))


def is_export(doc: Any) -> bool:
    """Whether a document is Langfuse's: a trace, a page, an observation, or a list of traces or observations."""
    if isinstance(doc, list):
        return bool(doc) and (is_trace(doc[0]) or is_observation(doc[0]))
    return is_trace(doc) or is_page(doc) or is_observation(doc)


def sniff(messages: list[Any]) -> bool:
    return any(is_observation(m) and m.get("type") == "GENERATION" for m in messages)


def start(obs: Mapping[str, Any], where: str) -> datetime:
    """An observation's ``startTime`` (ISO 8601, as the API writes it), one without a zone taken as UTC."""
    raw = obs.get("startTime")
    try:
        t = datetime.fromisoformat(raw) if isinstance(raw, str) else None
    except ValueError:
        t = None
    if t is None:
        raise TranscriptFormatError(where, f"startTime {str(raw)[:40]!r} is not an ISO 8601 time: give each "
                                           "observation's startTime as the API returns it")
    return t if t.tzinfo else t.replace(tzinfo=timezone.utc)


def _where(obs: Mapping[str, Any], where: str) -> str:
    return f"{where}, trace {str(obs.get('traceId'))[:80]}, observation {str(obs.get('id'))[:80]}"


def _fault(value: Any) -> Exception | None:
    """Why a string that opens as JSON is not read as JSON, by the loader every reader uses (strict_loads: no bare
    NaN or Infinity, no object or list given twice under one key, as :func:`~sam_model.data.formats.history.decoded`
    reads it); None where it reads, or is no JSON text (words)."""
    if not isinstance(value, str) or value.lstrip()[:1] not in ("[", "{"):
        return None
    try:
        strict_loads(value, unique=False)
    except (ValueError, RecursionError) as exc:
        return exc
    return None


def _cut(value: Any) -> bool:
    """Whether a value is JSON text that stops short (a stored value cut by a size limit): not a prompt's words."""
    exc = _fault(value)
    return isinstance(exc, json.JSONDecodeError) and stops_mid_json(exc, value)


def _refused(value: Any) -> str | None:
    """What the strict loader refuses in JSON text that Python's json reads (a bare NaN, a list given twice under one
    key): JSON, not words, so not read as a prompt; None where there is none."""
    exc = _fault(value)
    return str(exc) if isinstance(exc, ValueError) and not isinstance(exc, json.JSONDecodeError) else None


def _mask(value: Any) -> str | None:
    """The mask's stand-in (:data:`MASKS`) a whole input or output value is, None where it is none: the SDK masks an
    observation's input and output whole, so the words were not recorded, as where a call returned nothing."""
    return value.strip() if isinstance(value, str) and value.strip() in MASKS else None


def _unmasked(m: Mapping[str, Any], where: str) -> None:
    """Refuse a message whose text is a mask's stand-in (:data:`MASKS` but :data:`WHOLE_ONLY`, words a user may type
    too), the words it stands for never said; its conversation is refused whole, as OpenInference's ``__REDACTED__``
    is, rather than read without the turn."""
    content = m.get("content")
    texts = [content] if isinstance(content, str) else [p.get("text") for p in content if isinstance(p, Mapping)] \
        if isinstance(content, list) else []
    mask = next((t.strip() for t in texts if isinstance(t, str) and t.strip() in MASKS.keys() - WHOLE_ONLY), None)
    if mask is not None:
        raise TranscriptFormatError(where, f"a {m.get('role')} message's text is {mask!r}, {MASKS[mask]}")


def _shape(value: Any) -> str:
    """What an input or output this reader does not read is, for the warning that names it."""
    if _cut(value):
        return f"a string that stops mid-JSON after {len(value)} characters (a value cut short)"
    if isinstance(value, Mapping):
        return f"an object with keys {', '.join(sorted(map(str, value))[:6])}"
    return json_type(value)


def _message(m: Mapping[str, Any]) -> dict[str, Any]:
    """A message as the OpenAI reader reads it: LangChain's tool calls (``{"name", "args", "id"}``) as OpenAI's,
    its ``additional_kwargs`` (the provider's raw fields, the same calls again) and empty fields left out; the
    calls there read where the message has none of its own (LangChain before its ``tool_calls`` field, and the
    handler's dumps of then, gave OpenAI's calls only there: their results answered no call)."""
    out = {k: v for k, v in m.items() if v is not None and k != "additional_kwargs" and not (
        k in OUTPUT_ONLY and not v)}
    extra = m.get("additional_kwargs")
    if isinstance(extra, Mapping) and not out.get("tool_calls") and not out.get("function_call"):
        out.update({k: extra[k] for k in ("tool_calls", "function_call") if extra.get(k)})
    calls = out.get("tool_calls")
    if isinstance(calls, list):
        out["tool_calls"] = [{"id": c.get("id"), "type": "function", "function": {
            "name": c["name"], "arguments": json.dumps(c.get("args") or {}, ensure_ascii=False)}}
            if isinstance(c, Mapping) and "function" not in c and "args" in c and "name" in c else c for c in calls]
        if not calls:
            del out["tool_calls"]
    return out


def _blocks(m: dict[str, Any]) -> list[dict[str, Any]]:
    """An Anthropic message (the SDK's, as an app logs its calls) as the OpenAI reader reads it: an assistant's
    ``tool_use`` blocks its tool calls, a user's ``tool_result`` blocks a tool message each before its words (as the
    anthropic reader reads them, ``is_error`` the result's failure flag); they were counted as parts not read, every
    call and result lost. A message with tool calls of its own (LangChain's, the same calls) is left as it is."""
    content = m.get("content")
    kind = {"assistant": "tool_use", "user": "tool_result"}.get(str(m.get("role")))
    if not isinstance(content, list) or m.get("tool_calls") or not any(
            isinstance(b, Mapping) and b.get("type") == kind for b in content):
        return [m]
    mine = [b for b in content if isinstance(b, Mapping) and b.get("type") == kind]
    rest = [b for b in content if not (isinstance(b, Mapping) and b.get("type") == kind)]
    if kind == "tool_use":
        return [{**m, "content": rest or None, "tool_calls": [{"id": b.get("id"), "type": "function", "function": {
            "name": b.get("name"), "arguments": json.dumps({} if b.get("input") is None else b["input"],
                                                           ensure_ascii=False)}} for b in mine]}]
    results = [{"role": "tool", "tool_call_id": b.get("tool_use_id"), "content": b.get("content") or "",
                **({FAILED: True} if b.get("is_error") is True else {})} for b in mine]
    return [*results, *([{**m, "content": rest}] if rest else [])]


def _messages(value: Any, output: bool, inputs: Inputs | None = None) -> list[dict[str, Any]] | None:
    """A generation's input (``output``: its output) as chat messages; None where it is no shape read here.
    ``inputs``: the previous inputs' reading, for an input that repeats them."""
    value = decoded(value)
    if isinstance(value, str):
        return None if _cut(value) else [{"role": "assistant" if output else "user", "content": value}]
    system: list[dict[str, Any]] = []
    if isinstance(value, Mapping) and isinstance(value.get("messages"), list) and not output:
        if isinstance(value.get("system"), (str, list)) and value["system"]:  # Anthropic's request: apart
            system = [{"role": "system", "content": value["system"]}]
        value = value["messages"]  # tools given (OpenAI integration), or LangChain's {"messages": [...]}
    if isinstance(value, Mapping) and output and ("role" in value or "content" in value or "tool_calls" in value):
        return _blocks(_message({**value, "role": value.get("role") or "assistant"}))
    if isinstance(value, Mapping) and "role" in value:
        return _blocks(_message(value))
    if isinstance(value, list) and all(isinstance(m, Mapping) and "role" in m for m in value) and (
            not output or len(value) == 1):
        return [*system, *(inputs.messages(value) if inputs is not None and not output
                           else (x for m in value for x in _blocks(_message(m))))]
    return None


def calls_in(obs: Mapping[str, Any]) -> bool:
    """Whether a generation's output holds tool calls (a sign of tool use, for a file where none was read)."""
    out = _messages(obs.get("output"), True)
    return any(m.get("tool_calls") for m in out or ())


def _key(m: Any) -> str:
    """One message as an output and as its repeat in a later input: both read by :func:`_message`."""
    return json.dumps(m, sort_keys=True, default=str)


def to_chat(observations: list[Any], where: str) -> Chat:
    """One conversation's observations (a session's, or a trace's) as chat messages."""
    seen: list[tuple[datetime, int, Mapping[str, Any], str]] = []
    for i, obs in enumerate(observations):
        if not isinstance(obs, Mapping):
            raise TranscriptFormatError(f"{where}, observation {i}", f"an observation must be an object, got "
                                                                    f"{json_type(obs)}")
        w = _where(obs, where)
        seen.append((start(obs, w), i, obs, w))
    conv: list[Any] = []
    at: dict[str, int] = {}
    after: list[str | None] = []
    origin: dict[str, str] = {}  # a message's key -> the observation that added it
    # tool name -> its calls not answered yet, each (the generation's start, call id, tool name, arguments): a tool
    # observation looks through its tool's alone, those answered since left out as it does (looking through every
    # call of a long session for each, then every call of its tool, was quadratic)
    calls: dict[str, list[tuple[datetime, str, str, Any]]] = {}
    answers: dict[str, Mapping[str, Any]] = {}  # call id -> the TOOL / SPAN observation that ran it
    results: set[Any] = set()  # the calls a tool message read so far answers: no observation of theirs to come
    unread: list[tuple[str, str]] = []
    unpaired: list[str] = []
    masked: list[tuple[str, str, str]] = []  # (observation, "input" or "output", the stand-in) of values masked whole
    inputs = Inputs(lambda m: _blocks(_message(m)), _key)  # each input's reading, what it repeats taken
    late = Unrecorded()  # outputs masked whole, each read where a later input of its own history repeats it
    # tool name -> the observations of it that no call held when each was read, each (its start, it, where): it may
    # have run a call of an answer masked whole, read from a later input (:func:`_pair_late`)
    early: dict[str, list[tuple[datetime, Mapping[str, Any], str]]] = {}
    for t, _, obs, w in sorted(seen, key=lambda s: s[:2]):
        if obs.get("type") in ANSWERS:
            name = obs.get("name")
            pending = [c for c in (calls.get(name, ()) if isinstance(name, str) else ()) if c[0] <= t
                       and c[1] not in answers and c[1] not in results]
            call = ran(pending, obs.get("input"))
            if isinstance(name, str) and name in calls:  # every call held was made before it (a generation started earlier, read earlier)
                calls[name] = [c for c in pending if c[1] != call]
            if call is not None:
                answers[call] = obs  # its flag kept for the result a later input repeats; a masked output gives none
                masked += [(w, "output", mask) for mask in (_mask(obs.get("output")),) if mask is not None]
            elif pending:
                unpaired.append(w)
            elif isinstance(name, str):
                early.setdefault(name, []).append((t, obs, w))
            continue
        if obs.get("type") != "GENERATION":
            continue
        hidden = {what: mask for what in ("input", "output") if (mask := _mask(obs.get(what))) is not None}
        masked += [(w, what, mask) for what, mask in hidden.items()]  # not recorded: what later inputs repeat is read
        inp = None if "input" in hidden else _messages(obs.get("input"), False, inputs)
        out = _messages(obs.get("output"), True)
        if obs.get("output") is None or "output" in hidden:
            out = []  # a call that returned nothing (it failed), or its output masked whole: its input is read
        for value, read, what in ((obs.get("input"), inp, "input"), (obs.get("output"), out, "output")):
            fault = _refused(value) if read and read[0].get("content") is value else None  # a string read as words
            if fault is not None:
                raise TranscriptFormatError(w, f"its {what} is JSON text no reader here reads: {fault}")
            if read is None and what not in hidden:
                unread.append((w, f"its {what} is {_shape(decoded(value))}"))
        if inp is None:  # nothing to tell where its messages go
            continue
        out = out or []  # its answer unread: what the next input repeats of it is read there
        seq = [*inp, *out]
        keys = [inputs.key(m) for m in seq]
        for a, b in _runs([i for i, k in enumerate(keys) if k not in at]):  # a bad message is refused here, named by
            chat.to_chat(seq[a:b], w, start=a)  # its observation; a repeat of one read was checked then (each input
            # checked whole, every message was checked again at each repeat: quadratic in a long trace)
        found, before, made, answer = late.join(conv, at, after, inp, out, _key, keys, t, "output" in hidden)
        if found < 0 and inp and before:
            log.warning("%s: its input repeats none of the %d messages read so far of %s: its messages are read as "
                        "a new segment after them", w, before, where)
        for m in [*answer, *conv[before:]]:  # a masked answer a later input repeats: put after the input it answers
            _unmasked(m, w)  # new here: each message is checked once, not at each repeat
            origin.setdefault(_key(m), w.removeprefix(f"{where}, "))
            results.add(_id(m.get("tool_call_id")) if m.get("role") == "tool" else None)
        outs = {id(m) for m in out}  # the calls of its output; with those of an answer masked whole its input repeats
        made_late = []  # (dated by that generation: the tool observations read since may have run them)
        for m in [*answer, *conv[before:]] if made is not None else out:
            for c in m.get("tool_calls") or ():
                if isinstance(c, Mapping) and isinstance(c.get("function"), Mapping) and _id(c.get("id")):  # a bad
                    # call: refused by the labelling rule
                    call = (t if id(m) in outs else made, c["id"], str(c["function"].get("name")),
                            c["function"].get("arguments"))
                    (calls.setdefault(call[2], []) if id(m) in outs else made_late).append(call)
        unpaired += _pair_late(made_late, early, answers, calls, masked)
    if unread:
        log.warning("%s: %d generation%s not read (the first: %s: %s): no chat this reader reads (an OpenAI or "
                    "LangChain messages list, or a string); only what a later generation's input repeats of them is "
                    "read", where, len(unread), "s" if len(unread) > 1 else "", *unread[0])
    if unpaired:
        log.warning("%s: %d tool observation%s not paired with a call (the first: %s): it ran one of several calls "
                    "of its tool with other arguments, and its input tells not which; those calls' results are read "
                    "where a later input repeats them, else not", where, len(unpaired), "s" if len(unpaired) > 1
                    else "", unpaired[0])
    if masked and not conv:  # every input masked: nothing recorded to read (a mask that raises on a list of messages)
        w, what, mask = masked[0]
        raise TranscriptFormatError(w, f"its {what} is {mask!r}, {MASKS[mask]}; no generation's input of it was "
                                       "recorded unmasked, so there is nothing to read")
    if masked:
        log.warning("%s: %d input%s or output%s a mask's stand-in for the words (the first: %s: its %s is %r, %s): not "
                    "read, as a value not recorded; what a later generation's input repeats of them is read, the rest "
                    "(a last answer, a tool's result no later input holds) is missing", where, len(masked),
                    *(("s",) * 2 if len(masked) > 1 else ("",) * 2), masked[0][0], masked[0][1], masked[0][2],
                    MASKS[masked[0][2]])
    return _answered(conv, answers, origin, where)


def _pair_late(made: list[tuple[datetime, str, str, Any]], early: dict[str, list[tuple[datetime, Mapping[str, Any], str]]],
               answers: dict[str, Mapping[str, Any]], calls: dict[str, list[tuple[datetime, str, str, Any]]],
               masked: list[tuple[str, str, str]]) -> list[str]:
    """Pair the calls of an answer masked whole (``made``, dated by its generation), read from a later input, with
    the tool observations of their tools that started after it and were read before that input (``early``: no call
    was held then), as :func:`to_chat` pairs a recorded call: unpaired, a failed run flagged nothing and its result,
    repeated by the later input, read as a success. The calls left are held for observations to come (``calls``).
    Returns the observations that ran one of several calls and tell not which."""
    unpaired: list[str] = []
    for name in dict.fromkeys(c[2] for c in made):
        mine, kept = [c for c in made if c[2] == name], []
        for t, obs, w in early.get(name, ()):
            pending = [c for c in mine if c[0] <= t and c[1] not in answers]
            call = ran(pending, obs.get("input")) if pending else None
            if call is not None:
                answers[call] = obs
                masked += [(w, "output", mask) for mask in (_mask(obs.get("output")),) if mask is not None]
            elif pending:
                unpaired.append(w)
            else:
                kept.append((t, obs, w))
        early[name] = kept
        calls.setdefault(name, []).extend(c for c in mine if c[1] not in answers)
    return unpaired


def _runs(indices: list[int]) -> Iterator[tuple[int, int]]:
    """Ascending indices as runs of consecutive ones, each ``(first, last + 1)``."""
    start = None
    for n, i in enumerate(indices):
        if start is None:
            start = i
        if n + 1 == len(indices) or indices[n + 1] != i + 1:
            yield start, i + 1
            start = None


def _id(value: Any) -> str | None:
    """A call id as given, None where it is no string (the labelling rule refuses it, naming the message; here it
    pairs with nothing rather than failing as unhashable)."""
    return value if isinstance(value, str) else None


def _answered(conv: list[Any], answers: Mapping[str, Mapping[str, Any]], origin: Mapping[str, str],
              where: str) -> Chat:
    """The conversation with each call's result: a later input's tool message, else its tool observation's
    output (its ``statusMessage`` where it has none), flagged as failed where the observation's level is ERROR."""
    answered = {_id(m.get("tool_call_id")) for m in conv if m.get("role") == "tool"}
    messages: list[dict[str, Any]] = []
    sources: list[str] = []
    for m in conv:
        sources.append(origin.get(_key(m), ""))  # its key as added, before a failure flag is given it
        if m.get("role") == "tool" and _id(m.get("tool_call_id")) in answers:
            m = {**m, **({FAILED: True} if answers[m["tool_call_id"]].get("level") == "ERROR" else {})}
        messages.append(m)
        for c in m.get("tool_calls") or () if m.get("role") == "assistant" else ():
            obs = answers.get(_id(c.get("id"))) if isinstance(c, Mapping) else None
            if obs is not None and c["id"] not in answered and _mask(obs.get("output")) is None:
                output = obs.get("output")  # a string as stored (v2: JSON text), data as the API parsed it
                _unmasked({"role": "tool", "content": output}, _where(obs, where))
                messages.append({"role": "tool", "tool_call_id": c["id"], "content": output if output is not None
                                 else obs.get("statusMessage") or "", **({FAILED: True} if obs.get("level") == "ERROR"
                                                                          else {})})
                sources.append(_where(obs, "").removeprefix(", "))
    read = chat.to_chat(messages, where)
    invalid = sum(len(m["invalid_tool_calls"]) for m in messages if isinstance(m.get("invalid_tool_calls"), list))
    if invalid:  # calls the model wrote that LangChain could not parse: none to label, counted
        read.ignored["LangChain invalid_tool_calls"] += invalid
    read.sources = [sources[int(s.split()[1])] if s.startswith("message ") and sources[int(s.split()[1])] else s
                    for s in read.sources]
    return read


def conversations(docs: Iterable[tuple[Any, str]], path: str, id_of) -> Iterator[Conversation | TranscriptFormatError]:
    """The conversations of Langfuse documents (``(doc, where)`` pairs): one per ``sessionId``, its traces in time
    order, else one per trace. A trace is in the session any of its observations names (a v2 observation carries the
    sessionId it was created with: one started before the app set it has none, yet is of the session's trace); where
    they name several, in the trace's own ``sessionId``, else the first seen, said in a warning (a trace is read
    whole in one conversation: the others miss its turns)."""
    traces: dict[str, list[Mapping[str, Any]]] = {}
    named: dict[str, dict[str, bool]] = {}  # trace -> the sessions named, first seen first -> whether the trace's own
    unfit: dict[str, TranscriptFormatError] = {}  # by trace
    refused = False  # a document refused: said already, not again as "no GENERATION observation"
    for doc, where in docs:
        for obs, own, session, w in _observations(doc, where):
            if isinstance(obs, TranscriptFormatError):
                refused = True
                yield obs
                continue
            trace = str(obs.get("traceId"))
            traces.setdefault(trace, []).append(obs)
            for name, is_own in ((own, True), (session, False)):
                if name:
                    names = named.setdefault(trace, {})
                    names[name] = names.get(name, False) or is_own
            if not isinstance(obs.get("startTime"), str):
                unfit.setdefault(trace, TranscriptFormatError(_where(obs, w), f"startTime is "
                                 f"{json_type(obs.get('startTime'))}, expected an ISO 8601 time as the API returns it"))
    sessions = {trace: _session(trace, names, path) for trace, names in named.items()}
    groups: dict[str, list[Mapping[str, Any]]] = {}
    bad: dict[str, TranscriptFormatError] = {}
    for trace, observations in traces.items():
        key = f"session {sessions[trace]}" if trace in sessions else f"trace {trace}"
        groups.setdefault(key, []).extend(observations)
        if trace in unfit:
            bad.setdefault(key, unfit[trace])
    for key, observations in groups.items():
        if key in bad:
            yield bad[key]
            continue
        if not any(o.get("type") == "GENERATION" for o in observations):
            if any(o.get("type") == "GENERATION" for obs in groups.values() for o in obs):  # else the file's error
                log.warning("%s: %s holds no GENERATION observation (saw %s): no model call of it was recorded, so "
                            "it is not read", path, key, ", ".join(sorted({str(o.get("type")) for o in observations})))
            continue
        yield Conversation(id_of(key.split(" ", 1)[1]), observations, f"{path}: {key}", key.split(" ", 1)[1],
                           "langfuse")
    if not refused and not any(any(o.get("type") == "GENERATION" for o in obs) for obs in groups.values()):
        types = sorted({str(o.get("type")) for obs in groups.values() for o in obs})
        yield TranscriptFormatError(path, f"no GENERATION observation (saw {', '.join(types) or 'no observations'}): "
                                          "Langfuse records a model call as a generation; trace the model client with "
                                          "a Langfuse integration (OpenAI, LangChain), or " + FETCH)


def _session(trace: str, names: Mapping[str, bool], path: str) -> str:
    """The session a trace is read in, of those it and its observations name: the trace's own ``sessionId``, else
    the first an observation names; more than one said in a warning (its turns are missing from the others)."""
    chosen = next((n for n, own in names.items() if own), next(iter(names)))
    if len(names) > 1:
        log.warning("%s: trace %s: its observations name %d sessions (%s): it is read whole in session %s (%s); the "
                    "other session%s conversation misses its turns", path, trace[:80], len(names),
                    ", ".join(n[:80] for n in names), chosen[:80], "the trace's own sessionId" if names[chosen] else
                    "the first named", "s'" if len(names) > 2 else "'s")
    return chosen


def _observations(doc: Any, where: str) -> Iterator[tuple[Any, str, str, str]]:
    """(observation or its error, its trace's own session id, the observation's, where) of one document."""
    if isinstance(doc, list):
        for n, item in enumerate(doc):
            yield from _observations(item, f"{where}: item {n}")
    elif isinstance(doc, Mapping) and isinstance(doc.get("data"), list) and "meta" in doc:  # a page, empty too
        for n, item in enumerate(doc["data"]):
            yield from _observations(item, f"{where}: data[{n}]")
    elif is_trace(doc):
        trace = doc["trace"] if isinstance(doc.get("trace"), Mapping) else doc
        for n, obs in enumerate(doc["observations"]):
            if isinstance(obs, str):
                yield TranscriptFormatError(f"{where}, trace {str(trace.get('id'))[:80]}", "its observations are "
                                            "ids only (what GET /api/public/traces lists): " + FETCH), "", "", where
                return
            if not isinstance(obs, Mapping):
                yield TranscriptFormatError(f"{where}, trace {str(trace.get('id'))[:80]}, observation {n}",
                                            f"an observation must be an object, got {json_type(obs)}"), "", "", where
                return
            yield {**obs, "traceId": obs.get("traceId") or trace.get("id")}, str(trace.get("sessionId") or ""), str(
                obs.get("sessionId") or ""), where
    elif is_observation(doc):
        yield doc, "", str(doc.get("sessionId") or ""), where
    else:
        yield TranscriptFormatError(where, f"expected a Langfuse trace {{\"id\", \"timestamp\", \"observations\"}}, "
                                           f"a page {{\"data\", \"meta\"}} or an observation, got {_shape(doc)}"), "", "", where
