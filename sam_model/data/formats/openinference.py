"""OpenInference spans (Arize Phoenix, Arize, and every OpenInference instrumentation: OpenAI, LangChain,
LlamaIndex, DSPy, smolagents, CrewAI, Bedrock, ...) as the GenAI attributes the ``otel`` reader reads.

OpenInference writes a model call's messages flattened into attributes, not as one JSON attribute:
``llm.input_messages.{i}.message.role`` / ``.message.content`` / ``.message.contents.{k}.message_content.text``,
an assistant's calls ``.message.tool_calls.{j}.tool_call.id`` / ``.tool_call.function.name`` /
``.tool_call.function.arguments`` (JSON text), a tool result's ``.message.tool_call_id``; the output likewise under
``llm.output_messages``. Names from openinference-semantic-conventions (``SpanAttributes``, ``MessageAttributes``,
``MessageContentAttributes``, ``ToolCallAttributes``). A span is told by its attributes, not by a format of its
own: a collector exports both families in one file, and the same agent may be traced by both. So the reader of
OTLP files takes each span as what its GenAI twin would say, as the instrumentation's own ``enable_genai_semconv``
writes it (``openinference.instrumentation._genai_conversion``): the span kind as the operation (LLM ``chat``, TOOL
``execute_tool``, AGENT ``invoke_agent``), ``session.id`` as ``gen_ai.conversation.id`` (bar a delegate agent's
run, which the session's context stamps too: ``otel._Ancestry.delegate``), a TOOL span's ``tool.id``
(else ``tool_call.id``) as ``gen_ai.tool.call.id`` (its status ERROR flags that call's result as failed; a TOOL span
naming no call, as LangChain's tracer writes each, is paired by its tool's name and time as an ``execute_tool`` span
naming none is: :func:`failed_runs`), and
the messages as GenAI messages; GenAI attributes a span also carries (that option on) are read as they are.

The conversion is stricter than the instrumentation's where lenience would lose a turn or mislabel one: a tool call
without an id (its result could not be paired), arguments that are not JSON text (the convention's attribute is
JSON; text that is not was cut by a length limit), a text the instrumentation hid (``__REDACTED__``), messages
written as one attribute (not the conventions' layout), a message index missing or a message without a role (the plain
OpenTelemetry SDK keeps 128 attributes a span and drops the oldest first, the history's first messages; a span says
how many it dropped) are refused, naming the attribute. Messages the instrumentation hid
(OPENINFERENCE_HIDE_INPUT_MESSAGES) are read from the request's JSON its ``input.value`` still holds
(:func:`_from_value`); that value hidden too is refused. An output hidden whole (OPENINFERENCE_HIDE_OUTPUTS) is read
as not recorded (:func:`output_hidden`), what a later input of its own history repeats of it read there and put
after the input it answers (history.Unrecorded).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from sam_model.data.formats.base import cut_hint, strict_loads
from sam_model.data.formats.history import Call, ran
from sam_model.io import json_type

log = logging.getLogger(__name__)

KIND = "openinference.span.kind"
SESSION = "session.id"
INPUT, OUTPUT = "llm.input_messages", "llm.output_messages"
PROMPTS, CHOICES = "llm.prompts", "llm.choices"  # a completions API's texts (llm.prompts.N.prompt.text): no messages
REDACTED = "__REDACTED__"  # what a TraceConfig that hides a text writes in its place
TOOL_IDS = ("tool.id", "tool_call.id")  # a TOOL span's call: the instrumentation's dual write reads them so
TOOL_NAME, TOOL_INPUT = "tool.name", "input.value"  # what a TOOL span without a call id is paired by (failed_runs)
OPERATIONS = {"LLM": "chat", "TOOL": "execute_tool", "AGENT": "invoke_agent"}  # its span kinds the reader uses
ROLES = {"agent": "assistant", "function": "tool"}  # the conventions' names beside the GenAI roles (otel.ALIASES)
_INDEX = re.compile(r"(\d+)\.(.+)")


class Unreadable(ValueError):
    """An OpenInference attribute the reader cannot read: its message names the attribute and what to do."""


def is_openinference(attrs: Mapping[str, Any]) -> bool:
    return KIND in attrs or any(k.startswith((f"{INPUT}.", f"{OUTPUT}.")) for k in attrs)


def completion(attrs: Mapping[str, Any]) -> bool:
    """Whether a span records a completions API call (a completion model's prompt and choices, texts with no roles):
    no messages to read, so the reader names it in a warning rather than passing it over."""
    return any(k in (PROMPTS, CHOICES) or k.startswith((f"{PROMPTS}.", f"{CHOICES}.")) for k in attrs)


def as_genai(attrs: dict[str, Any]) -> dict[str, Any]:
    """``attrs`` with the GenAI names of what OpenInference says of the span (its operation, conversation, tool
    call id); never raises, so a span whose messages are refused still tells its conversation (refused whole)."""
    if not is_openinference(attrs):
        return attrs
    out = dict(attrs)
    kind = str(attrs.get(KIND, "LLM" if any(k.startswith(f"{INPUT}.") for k in attrs) else "")).upper()
    if kind in OPERATIONS:
        out.setdefault("gen_ai.operation.name", OPERATIONS[kind])
    if attrs.get(SESSION) not in (None, ""):
        out.setdefault("gen_ai.conversation.id", str(attrs[SESSION]))
    call = next((attrs[k] for k in TOOL_IDS if attrs.get(k) not in (None, "")), None)
    if kind == "TOOL" and call is not None:
        out.setdefault("gen_ai.tool.call.id", str(call))
    return out


# a tool's run naming no call (otel._unnamed_run): (start, tool name, its input, failed, where, the input's attribute)
Run = tuple[int, str, Any, bool, str, str]


def failed_runs(runs: Iterable[Run], made: Sequence[Call], answered: Mapping[str, int], where: str) -> set[str]:
    """The ids of the calls that tool spans naming none ran and failed (status ERROR), so their results are flagged
    as the failure of a span with a call id is. ``made``: the conversation's calls, each with the start of the model
    call that made it; ``answered``: call id -> the start of the model call whose input first held its result. A run
    pairs, in start order, with the calls of its tool made before it whose result a later model call read and that
    no run took yet (:func:`~sam_model.data.formats.history.ran`, by its input where several wait; calls
    alike are none of them). A failed run paired with none is said in a warning, its call's result not flagged."""
    paired: set[str] = set()
    failed: set[str] = set()
    unsure: list[tuple[str, str]] = []
    by_tool: dict[str, list[Call]] = {}  # a run looks through its tool's calls alone, not every call each time
    for c in made:
        by_tool.setdefault(c[2], []).append(c)
    for t, name, inp, error, w, key in sorted(runs, key=lambda r: (r[0], r[4])):
        pending = [c for c in by_tool.get(name, ()) if c[0] <= t and c[1] not in paired
                   and answered.get(c[1], t) > t]
        call = ran(pending, inp, alike=False)
        if call is not None:
            paired.add(call)
            failed |= {call} if error else set()
        elif error:
            unsure.append((w, f"no call of {name} made before it has a result read after it" if not pending else
                           f"it could be any of {len(pending)} calls of {name}, its {key} telling not which"
                           if inp is not None else f"it could be any of {len(pending)} calls of {name}, and it records "
                           f"no {key} to tell which"))
    if unsure:
        log.warning("%s: %d tool span%s that ended in an error name%s no tool call id (the first: %s: %s): the result "
                    "of %s call is not flagged as failed; record the call's id on the span (gen_ai.tool.call.id, "
                    "OpenInference's tool_call.id)", where,
                    len(unsure), "s" if len(unsure) > 1 else "", "" if len(unsure) > 1 else "s", *unsure[0],
                    "their" if len(unsure) > 1 else "its")
    return failed


def messages(attrs: Mapping[str, Any], dropped: Any, roles: Collection[str]) -> dict[str, list[dict[str, Any]]]:
    """The span's OpenInference messages as ``gen_ai.input.messages`` / ``gen_ai.output.messages`` values (GenAI
    messages, ``{"role", "parts"}``), from its flattened attributes or, where the instrumentation hid them, its
    request's or response's JSON (:func:`_from_value`); none where the span carries GenAI messages already (both
    written: a text hidden in its OpenInference attributes is refused still, as the conversion copied the word),
    bar a side's hidden, or no OpenInference ones. ``dropped``: the span's ``droppedAttributesCount``, named where a message is incomplete;
    ``roles``: those the GenAI reader reads (a role beside them is refused here, naming its attribute). Raises
    :class:`Unreadable`."""
    written = {k for k in ("gen_ai.input.messages", "gen_ai.output.messages") if k in attrs}
    if written:
        for key, v in attrs.items():  # converted from these as written: a hidden text is in them too
            if v == REDACTED and key.startswith((f"{INPUT}.", f"{OUTPUT}.")):
                _text(key, v)
        if len(written) == 2:
            return {}
    hint = _dropped_hint(dropped)
    out = {}
    for prefix, key in ((INPUT, "gen_ai.input.messages"), (OUTPUT, "gen_ai.output.messages")):
        if prefix in attrs:  # not the conventions' layout: passed over, its turns would be lost without a word
            raise Unreadable(f"{prefix} is one attribute ({json_type(attrs[prefix])}), not the conventions' "
                             f"flattened {prefix}.N.message.*: a layout this reader does not read; export the "
                             "instrumentation's attributes as it writes them")
        found = _indexed(attrs, prefix, hint) or _indexed(_from_value(attrs, prefix), prefix, hint)
        if found:
            out[key] = [_message(f"{prefix}.{i}.", m, hint, roles) for i, m in enumerate(found)]
    # written both ways, one side's messages hidden (the conversion had none to copy): the span is read whole as its
    # OpenInference twin, the hidden side from its JSON value (one side of each conversion: a call's arguments
    # compared as text against an object, every message was read twice); else its GenAI messages, as written
    return {} if written and out.keys() <= written else out


def _from_value(attrs: Mapping[str, Any], prefix: str) -> dict[str, Any]:
    """An LLM span's messages as the instrumentation writes them of the request (response) JSON its ``input.value``
    (``output.value``) holds, where it wrote none: OPENINFERENCE_HIDE_INPUT_MESSAGES (_OUTPUT_MESSAGES) leaves out
    the messages, not the value (the span was read without the user's words and the tools' results, its calls
    unanswered, without a word). Read only where the mime type says JSON and it is a chat request (``messages``) or
    a chat completion of one choice, of the OpenAI instrumentation's spans (``llm.system`` openai, or none given).
    An input value hidden too (OPENINFERENCE_HIDE_INPUTS) is refused: the setting hides every span's input, so no
    later input holds the user's words. An output value hidden (OPENINFERENCE_HIDE_OUTPUTS) gives no messages, a
    value not recorded (:func:`output_hidden`): the next call of its history repeats the answer in its input."""
    if str(attrs.get(KIND, "")).upper() != "LLM" or any(k.startswith(f"{prefix}.") for k in attrs):
        return {}
    side = "input" if prefix == INPUT else "output"
    value = attrs.get(f"{side}.value")
    if value == REDACTED and prefix == OUTPUT:  # the answer not recorded: what a later input repeats of it is read
        return {}
    if value == REDACTED:
        raise Unreadable(f"{side}.value is {REDACTED} and the span has no {prefix}.*: the instrumentation hid the "
                         f"model call's {side} (OPENINFERENCE_HIDE_{side.upper()}S, or its TraceConfig's "
                         f"hide_{side}s); trace with it unset to train on the conversation")
    if attrs.get(f"{side}.mime_type") != "application/json" or not isinstance(value, str) or attrs.get(
            "llm.system", "openai") != "openai":  # another provider's request (Anthropic's: its own blocks, its system
        return {}  # prompt apart) was read as OpenAI's, its calls and results lost as parts of no known type
    try:
        doc = strict_loads(value, unique=False)
    except (ValueError, RecursionError) as exc:
        raise Unreadable(f"{side}.value is not JSON ({str(exc)[:60]})" + (
            cut_hint(exc, value, f"{side}.value") if isinstance(exc, ValueError) else "")) from None
    if prefix == INPUT:
        sent = doc.get("messages") if isinstance(doc, Mapping) else None
    else:
        choices = doc.get("choices") if isinstance(doc, Mapping) else None
        sent = [choices[0]["message"]] if isinstance(choices, list) and len(choices) == 1 and isinstance(
            choices[0], Mapping) and isinstance(choices[0].get("message"), Mapping) else None
    if not isinstance(sent, list) or not all(isinstance(m, Mapping) and "role" in m for m in sent):
        return {}  # not a chat request or completion (the Responses API's): no messages, as before
    return {f"{prefix}.{i}.{k}": v for i, m in enumerate(sent) for k, v in _flattened(m).items()}


def output_hidden(attrs: Mapping[str, Any]) -> bool:
    """Whether an LLM span's output was hidden whole (OPENINFERENCE_HIDE_OUTPUTS: ``output.value`` is
    ``__REDACTED__``, no ``llm.output_messages.*``): read as a value not recorded, as the Langfuse reader reads a
    value masked whole (its MASKS hold this stand-in), so what a later call's input repeats of the answer is read and
    the reader warns of the rest (a conversation's last answer); a trace cannot be taken again."""
    return str(attrs.get(KIND, "")).upper() == "LLM" and attrs.get("output.value") == REDACTED and not any(
        k.startswith(f"{OUTPUT}.") for k in attrs)


def _flattened(m: Mapping[str, Any]) -> dict[str, Any]:
    """One OpenAI chat message as the OpenAI instrumentation flattens it (``_request_attributes_extractor``): its
    role, call id, text (or its parts, text and image), and its calls."""
    out: dict[str, Any] = {"message.role": m.get("role")}
    if m.get("tool_call_id"):
        out["message.tool_call_id"] = m["tool_call_id"]
    content = m.get("content")
    if isinstance(content, str) and content:
        out["message.content"] = content
    elif isinstance(content, list):
        for k, part in enumerate(content):
            at = f"message.contents.{k}.message_content"
            kind = part.get("type") if isinstance(part, Mapping) else json_type(part)
            out[f"{at}.type"] = "image" if kind == "image_url" else kind
            if kind == "text":
                out[f"{at}.text"] = part.get("text") or ""
            elif kind == "image_url":
                image = part.get("image_url")
                out[f"{at}.image.image.url"] = image.get("url") if isinstance(image, Mapping) else image
    for j, c in enumerate(m.get("tool_calls") or ()):
        at = f"message.tool_calls.{j}.tool_call"
        function = c.get("function") if isinstance(c, Mapping) else None
        function = function if isinstance(function, Mapping) else {}
        out.update({f"{at}.id": c.get("id") if isinstance(c, Mapping) else None,
                    f"{at}.function.name": function.get("name"), f"{at}.function.arguments": function.get("arguments")})
    return out


def _dropped_hint(dropped: Any) -> str:
    n = dropped if isinstance(dropped, int) else int(dropped) if isinstance(dropped, str) and dropped.isdigit() else 0
    return (f" (the span dropped {n} attributes: the OpenTelemetry SDK keeps 128 a span by default and drops the "
            "oldest first, the history's first messages; set OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT=10000, the "
            "limit OpenInference's own TracerProvider sets)") if n > 0 else ""


def _indexed(attrs: Mapping[str, Any], prefix: str, hint: str) -> list[dict[str, Any]]:
    """The attributes under ``prefix.{i}.`` grouped by ``i`` (each group's keys without the prefix), in order;
    Unreadable where an index is missing (a message not recorded: refused rather than read without it)."""
    groups: dict[int, dict[str, Any]] = {}
    for key, v in attrs.items():
        if key.startswith(f"{prefix}."):
            m = _INDEX.fullmatch(key[len(prefix) + 1:])
            if m is None:
                raise Unreadable(f"{key}: expected {prefix}.N.<field>, N the item's index")
            groups.setdefault(int(m[1]), {})[m[2]] = v
    missing = next((i for i in range(len(groups)) if i not in groups), None)
    if missing is not None:
        raise Unreadable(f"{prefix}.{missing}.* is missing (the span has {prefix}.{max(groups)}.*): an item was not "
                         f"recorded{hint}; export the span whole")
    return [groups[i] for i in range(len(groups))]


def _text(at: str, v: Any) -> str:
    """A string attribute's value; a text the instrumentation hid (its ``__REDACTED__``) is refused, not read as
    the words said."""
    if not isinstance(v, str):
        raise Unreadable(f"{at} is {json_type(v)}, expected a string")
    if v == REDACTED:
        side = "INPUT" if at.startswith(INPUT) else "OUTPUT"
        raise Unreadable(f"{at} is {REDACTED}: the instrumentation hid the text (OPENINFERENCE_HIDE_{side}_TEXT, "
                         f"or its TraceConfig's hide_{side.lower()}_text); trace with it unset to train on the text")
    return v


def _message(at: str, m: Mapping[str, Any], hint: str, roles: Collection[str]) -> dict[str, Any]:
    """One flattened message (``at``: its attributes' prefix) as a GenAI message."""
    if m.get("message.role") in (None, ""):
        raise Unreadable(f"{at}message.role is missing: a message without its role{hint}; export the span whole")
    role = _text(f"{at}message.role", m["message.role"]).lower()
    role = ROLES.get(role, role)
    if role not in roles:
        raise Unreadable(f"{at}message.role {m['message.role']!r} is not a role the reader knows (one of "
                         f"{', '.join(sorted({*roles, *ROLES}))})")
    parts: list[dict[str, Any]] = []
    content = m.get("message.content")
    if role == "tool":
        call = m.get("message.tool_call_id")
        if call in (None, ""):
            raise Unreadable(f"{at}message.tool_call_id is missing: a tool result that names no call cannot be paired "
                             "with it; record the id the result answers")
        texts = [p["content"] for p in _contents(at, m, hint) if p.get("type") == "text"]
        response = _text(f"{at}message.content", content) if content is not None else "\n".join(texts)
        return {"role": role, "parts": [{"type": "tool_call_response", "id": str(call), "response": response}]}
    if content not in (None, ""):
        parts.append({"type": "text", "content": _text(f"{at}message.content", content)})
    parts += [p for p in _contents(at, m, hint) if not (p.get("type") == "text" and (
        not p["content"] or content == p["content"]))]  # the same text written both ways: once
    parts += _calls(at, m, hint)
    return {"role": role, "parts": parts}


def _contents(at: str, m: Mapping[str, Any], hint: str) -> list[dict[str, Any]]:
    """``message.contents.{k}.message_content.*`` as GenAI parts: text as text, an image as its uri, other types
    as a part of their type (the reader counts them, as it counts a GenAI message's blobs)."""
    parts = []
    for k, c in enumerate(_indexed(m, "message.contents", hint)):
        where = f"{at}message.contents.{k}.message_content"
        kind = _text(f"{where}.type", c.get("message_content.type", "text"))
        if kind == "text":
            parts.append({"type": "text", "content": _text(f"{where}.text", c.get("message_content.text", ""))})
        elif kind == "image":
            parts.append({"type": "uri", "modality": "image", "uri": c.get("message_content.image.image.url")})
        else:
            parts.append({"type": kind})
    return parts


def _calls(at: str, m: Mapping[str, Any], hint: str) -> list[dict[str, Any]]:
    """``message.tool_calls.{j}.tool_call.*`` as GenAI ``tool_call`` parts, the arguments as the JSON text given."""
    parts = []
    for j, c in enumerate(_indexed(m, "message.tool_calls", hint)):
        where = f"{at}message.tool_calls.{j}.tool_call"
        if c.get("tool_call.id") in (None, ""):
            raise Unreadable(f"{where}.id is missing: a tool call without an id cannot be paired with its result; "
                             "record the call's id (the model's tool_call id)")
        if c.get("tool_call.function.name") in (None, ""):
            raise Unreadable(f"{where}.function.name is missing: a tool call names its tool")
        args = c.get("tool_call.function.arguments")
        if args is not None:
            args = _text(f"{where}.function.arguments", args)
            try:
                json.loads(args) if args.strip() else None
            except (ValueError, RecursionError) as exc:
                raise Unreadable(f"{where}.function.arguments is not JSON ({str(exc)[:60]})" + (
                    cut_hint(exc, args, "a call's arguments")
                    or ": the conventions write a call's arguments as JSON text")) from None
        parts.append({"type": "tool_call", "id": str(c["tool_call.id"]),
                      "name": _text(f"{where}.function.name", c["tool_call.function.name"]), "arguments": args})
    return parts
