"""OpenTelemetry GenAI spans exported as OTLP JSON (``{"resourceSpans": [...]}``, a file or one per line).

Follows the GenAI semantic conventions **v1.37.0** and later (the version that introduced the attributes below;
checked against the conventions' ``gen-ai-input-messages.json`` / ``gen-ai-output-messages.json`` /
``gen-ai-system-instructions.json`` schemas): an inference span (``gen_ai.operation.name`` ``chat``,
``generate_content``, ``text_completion``, ...) carries ``gen_ai.input.messages``, ``gen_ai.output.messages`` and
``gen_ai.system_instructions``, as JSON strings or structured OTLP values, on the span or on its
``gen_ai.client.inference.operation.details`` event. A message is ``{"role", "parts": [...]}`` with parts
``{"type": "text", "content"}``, ``{"type": "tool_call", "id", "name", "arguments"}`` and
``{"type": "tool_call_response", "id", "response"}``; other part types (reasoning, blobs, uris) are counted.
Roles are the schema's (``system``, ``user``, ``assistant``, ``tool``), any case, and the names instrumentations
also write (``human``, ``ai``, ``model``, ``developer``).

The spans of one conversation (``gen_ai.conversation.id``, else the trace) are read in start order; each call's
input repeats the history, perhaps with its start rewritten (a compaction summary, a window of the latest turns),
so each call adds what :func:`~sam_model.data.formats.history.join` finds new in it. A ``tool_call_response`` part carries no failure flag; the
conventions record a failed tool call on its ``execute_tool`` span (``error.type`` set, status ERROR), whose
``gen_ai.tool.call.id`` names the call: its result is flagged as failed (toolstate's extension of the spec); one
naming no call is paired with it by its tool's name, time and arguments (:func:`_unnamed_run`). The
deprecated per-message events of v1.36 and earlier, and vendor attributes (``gen_ai.prompt.0.*``), carry no
messages this reader reads: a file of them is refused with a message that says so, and a span of such attributes in
a conversation read from other spans is named in a warning (only what a later call's input repeats of its turn is
read), as is a conversation of such spans alone beside conversations that are read.

OpenInference spans (Arize Phoenix's, every OpenInference instrumentation's) are read here too, told by their
attributes, each as its GenAI twin would say it (:mod:`sam_model.data.formats.openinference`): a collector exports
both families in one file, and a conversation is read the same whichever family recorded it.
"""

from __future__ import annotations

import json
import logging
import re
from collections import Counter
from collections.abc import Collection, Iterable, Iterator, Mapping
from typing import Any

from sam_model.data.formats import openinference
from sam_model.data.formats.base import (
    Blocks,
    Chat,
    Conversation,
    TranscriptFormatError,
    cut_hint,
    each,
    read_blocks,
    result_text,
    strict_loads,
)
from sam_model.data.formats.history import Inputs, Unrecorded
from sam_model.io import json_type

log = logging.getLogger(__name__)
INPUT, OUTPUT, SYSTEM = "gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions"
DETAILS_EVENT = "gen_ai.client.inference.operation.details"
CONVERSATION = "gen_ai.conversation.id"
TOOL_CALL_ID = "gen_ai.tool.call.id"
TOOL_NAME, TOOL_ARGUMENTS = "gen_ai.tool.name", "gen_ai.tool.call.arguments"  # a run naming no call is paired by them
ROLES = ("system", "user", "assistant", "tool")
ALIASES = {"human": "user", "ai": "assistant", "model": "assistant", "developer": "system"}  # instrumentations' names


BLOCKS = Blocks("part", "content", "tool_call", "arguments", "tool_call_response", "id")


def to_chat(messages: list[Any], where: str) -> Chat:
    chat = Chat()
    for i, m, w in each(messages, where):
        parts = m.get("parts")
        if parts is None and isinstance(m.get("content"), str):
            parts = [{"type": "text", "content": m["content"]}]  # a plain chat message among them
        if not isinstance(parts, list):
            raise TranscriptFormatError(w, "expected a GenAI message {\"role\": ..., \"parts\": [...]}")
        role = m.get("role")
        role = ALIASES.get(role.lower(), role.lower()) if isinstance(role, str) else role
        if role not in ROLES:
            raise TranscriptFormatError(w, f"role {role!r} is not a GenAI role (expected one of {', '.join(ROLES)})")
        read_blocks(chat, role, parts, w, f"message {i}", BLOCKS, lambda p, at: result_text(p.get("response")))
    return chat


def sniff(messages: list[Any]) -> bool:
    return any(isinstance(m, Mapping) and isinstance(m.get("parts"), list) and "role" in m for m in messages)


def is_otlp(doc: Any) -> bool:
    return isinstance(doc, Mapping) and "resourceSpans" in doc


def value(v: Any) -> Any:
    """An OTLP JSON ``AnyValue`` as a Python value."""
    if not isinstance(v, Mapping):
        return v
    for key in ("stringValue", "boolValue", "doubleValue"):
        if key in v:
            return v[key]
    if "intValue" in v:
        return _int(v["intValue"], "intValue")
    if "arrayValue" in v:
        return [value(x) for x in (v["arrayValue"] or {}).get("values") or []]
    if "kvlistValue" in v:
        return attributes((v["kvlistValue"] or {}).get("values") or [])
    return None


def _int(x: Any, what: str) -> int:
    """An OTLP JSON int64 (a string, or a number); ValueError naming ``what`` otherwise."""
    if isinstance(x, float) and x.is_integer():
        return int(x)
    if isinstance(x, bool) or not isinstance(x, (int, str)) or not _INT.fullmatch(str(x).strip()):
        raise ValueError(f"{what} {str(x)[:40]!r} is not an integer")
    return int(x)


_INT = re.compile(r"[+-]?[0-9]+")


def attributes(kvs: Any) -> dict[str, Any]:
    """OTLP ``KeyValue`` list as a dict; ValueError naming what is not one."""
    out: dict[str, Any] = {}
    for kv in _list(kvs, "attributes"):
        if isinstance(kv, Mapping) and "key" in kv:
            if not isinstance(kv["key"], str):
                raise ValueError(f"an attribute key is {json_type(kv['key'])}, expected a string")
            out[kv["key"]] = value(kv.get("value"))
    return out


def _list(x: Any, what: str) -> list[Any]:
    if x is None:
        return []
    if not isinstance(x, list):
        raise ValueError(f"{what} is {json_type(x)}, expected a list")
    return x


def _spans(docs: Iterable[tuple[Any, str]]) -> Iterator[tuple[dict[str, Any] | TranscriptFormatError, str]]:
    """Each span of each document, or the error of a document whose nesting is not OTLP's."""
    for doc, where in docs:
        try:
            for i, rs in enumerate(_list(doc.get("resourceSpans"), "resourceSpans")):
                if not isinstance(rs, Mapping):
                    raise ValueError(f"resourceSpans[{i}] is {json_type(rs)}, expected an object")
                scopes = rs.get("scopeSpans") or rs.get("instrumentationLibrarySpans")
                for j, ss in enumerate(_list(scopes, f"resourceSpans[{i}].scopeSpans")):
                    if not isinstance(ss, Mapping):
                        raise ValueError(f"resourceSpans[{i}].scopeSpans[{j}] is {json_type(ss)}, expected an "
                                         "object")
                    for span in _list(ss.get("spans"), f"resourceSpans[{i}].scopeSpans[{j}].spans"):
                        if isinstance(span, Mapping):
                            yield span, where
        except ValueError as exc:
            yield TranscriptFormatError(where, f"not OTLP JSON: {exc}"), where


def _messages(raw: Any, where: str, key: str) -> list[Any]:
    if isinstance(raw, str):
        try:
            raw = strict_loads(raw, unique=False)  # model output, as files.parse reads it
        except ValueError as exc:
            raise TranscriptFormatError(where, f"{key} is not JSON ({exc})"
                                        f"{cut_hint(exc, raw, 'the gen_ai message attributes')}") from None
        except RecursionError:
            raise TranscriptFormatError(where, f"{key} is nested too deeply") from None
    if not isinstance(raw, list):
        raise TranscriptFormatError(where, f"{key} is {json_type(raw)}, expected a list of messages")
    return raw


def _tool_failed(span: Mapping[str, Any], attrs: Mapping[str, Any]) -> bool:
    """An ``execute_tool`` span of a call id that ended in an error (:func:`_errored`)."""
    return attrs.get("gen_ai.operation.name") == "execute_tool" and attrs.get(TOOL_CALL_ID) not in (None, "") and \
        _errored(span, attrs)


def _unnamed_run(span: Mapping[str, Any], attrs: Mapping[str, Any], start: int, where: str) -> openinference.Run | None:
    """An ``execute_tool`` span that names no call, as its run :func:`openinference.failed_runs` pairs with the call
    by its tool's name, time and input: ``gen_ai.tool.call.id`` is Recommended, not Required, by the conventions
    (instrumentations omit it), and OpenInference's TOOL spans of LangChain name none. Its tool is ``tool.name`` or
    ``gen_ai.tool.name``, else the span's name less the conventions' ``execute_tool`` prefix; its input is
    ``input.value`` or, opt-in, ``gen_ai.tool.call.arguments``."""
    if attrs.get("gen_ai.operation.name") != "execute_tool" or attrs.get(TOOL_CALL_ID) not in (None, ""):
        return None
    name = attrs.get(openinference.TOOL_NAME) or attrs.get(TOOL_NAME) or \
        str(span.get("name") or "").removeprefix("execute_tool ")
    key = openinference.TOOL_INPUT if openinference.TOOL_INPUT in attrs else TOOL_ARGUMENTS
    return start, str(name), attrs.get(key), _errored(span, attrs), where, key


def _errored(span: Mapping[str, Any], attrs: Mapping[str, Any]) -> bool:
    """A span that ended in an error: ``error.type`` set, or its status ERROR (OTLP JSON writes the code as 2, some
    exporters as its name)."""
    status = span.get("status") if isinstance(span.get("status"), Mapping) else {}
    return attrs.get("error.type") is not None or status.get("code") in (2, "2", "STATUS_CODE_ERROR")


OUTPUT_ONLY = ("finish_reason",)  # what an output message has and its repeat in the next call's input has not


def _key(m: Any) -> str:
    """One message, as an output and as a later call's input, as one string: the output-only fields aside (the
    conventions' output messages carry a ``finish_reason`` their repeat does not). A string, so a long history is
    looked up, not compared message by message with every earlier one."""
    if isinstance(m, Mapping):
        m = {k: v for k, v in m.items() if k not in OUTPUT_ONLY}
    return json.dumps(m, sort_keys=True, default=str)


# spans around model calls, not model calls: an agent's run, its creation, a workflow's run (semantic conventions
# v1.41's invoke_workflow, whose span carries the run's input and answer as an agent's does)
AGENT_OPERATIONS = ("invoke_agent", "create_agent", "invoke_workflow")
_BROKEN, _ROOT = ("broken",), ("root",)  # an ancestry that stops at a span not read (or loops); one that is whole


class _Ancestry:
    """Where a span without ``gen_ai.conversation.id`` belongs, told by its ancestors (each span's answer kept, so a
    deep tree is walked once, not once a span: a 20,000-span chain took 228 s).

    Its nearest ancestor's id (an agent framework sets it on its ``invoke_agent`` span, and the model client's
    ``chat`` spans below know none), but not past an ``invoke_agent`` span without the id that runs inside another
    agent's (an agent called as a tool, a delegate: its own history, a conversation of its own: read under the
    outer agent's id, its calls were a segment of the outer conversation). Only where the ancestry stops at a span
    not read (an exporter that dropped it, a file not given) is the span given the one id its trace holds; a whole
    ancestry without an id (a guardrail's or a title's model call beside the agent's span) was given it too, its
    call read into the conversation."""

    def __init__(self, cids: Mapping[tuple[str, str], str], parents: Mapping[tuple[str, str], str],
                 agents: set[tuple[str, str]]):
        self.cids, self.parents, self.agents = cids, parents, agents
        self._of: dict[tuple[str, str], tuple[str, ...]] = {}
        self._under_agent: dict[tuple[str, str], bool] = {}
        self._agents_at: dict[tuple[str, str], Any] = {}  # span -> the nearest invoke_agent span at or above it
        self.roots = Counter(trace for (trace, _), parent in parents.items() if not parent)  # trace -> its roots

    def _walk(self, trace: str, span: str, memo: dict, step) -> Any:
        """Follow parents from ``span`` until ``step(key)`` answers (not None) or a memoized span is met; every span
        passed takes that answer. ``step`` is asked of read spans only: a parent not read, or a loop, is _BROKEN."""
        path, on_path, at = [], set(), span
        while True:
            key = (trace, at)
            if key in memo:
                found = memo[key]
                break
            if key not in self.parents or at in on_path:
                found = _BROKEN
                break
            path.append(key)
            on_path.add(at)
            found = step(key)
            if found is not None:
                break
            at = self.parents[key]
        for key in path:
            memo[key] = found
        return found

    def under_agent(self, trace: str, span: str) -> bool:
        """Whether an ``invoke_agent`` span is among the strict ancestors of ``span``."""
        parent = self.parents.get((trace, span), "")
        if not parent:
            return False
        found = self._walk(trace, parent, self._under_agent,
                           lambda key: True if key in self.agents else (False if not self.parents[key] else None))
        return found is True

    def delegate(self, trace: str, span: str, sessions: Collection[tuple[str, str]]) -> str | None:
        """The nested agent's run ``span`` is of (the nearest ``invoke_agent`` span at or above it, itself inside
        another's), where both runs carry one conversation id, OpenInference's session.id (``sessions``: the spans
        whose id is one), and ``span`` that id or none: its context stamps every span of a session, a delegate's
        too; else None. A delegate holds its own history."""
        agent = (trace, span) if (trace, span) in self.agents else self._agent_above(trace, span)
        outer = self._agent_above(*agent) if agent is not None else None
        if outer is None or agent not in sessions:
            return None
        cid = self.cids[agent]
        return agent[1] if self.cids.get(outer) == cid == self.cids.get((trace, span), cid) else None

    def _agent_above(self, trace: str, span: str) -> tuple[str, str] | None:
        """The nearest ``invoke_agent`` span strictly above ``span`` (each span's answer kept: a chain walked once)."""
        parent = self.parents.get((trace, span), "")
        if not parent:
            return None
        found = self._walk(trace, parent, self._agents_at,
                           lambda key: key if key in self.agents else (None if self.parents[key] else _ROOT))
        return None if found is _ROOT or found is _BROKEN else found

    def of(self, trace: str, span: str) -> tuple[str, ...]:
        """("id", ID), ("agent", SPAN) for a nested agent's run without an id, _ROOT or _BROKEN."""
        def step(key: tuple[str, str]) -> tuple[str, ...] | None:
            if key in self.cids:
                return ("id", self.cids[key])
            if key in self.agents and self.under_agent(*key):
                return ("agent", key[1])
            return None if self.parents[key] else _ROOT

        return self._walk(trace, span, self._of, step)


def _agent_of(attrs: Mapping[str, Any]) -> str | None:
    """The agent a span names (``gen_ai.agent.id``, else ``gen_ai.agent.name``), or None."""
    who = attrs.get("gen_ai.agent.id") or attrs.get("gen_ai.agent.name")
    return str(who) if who else None


def _runs_without_operation(runs: list[tuple[str, str]], named: Mapping[tuple[str, str], str],
                            parents: Mapping[tuple[str, str], str]) -> set[tuple[str, str]]:
    """The spans of ``runs`` (naming an agent by ``gen_ai.agent.id`` or ``.name``, without ``gen_ai.operation.name``
    or messages) that are an agent's run: Pydantic AI before its ``invoke_agent`` operation name wrote an agent's run
    span so (``agent_name`` and ``gen_ai.agent.name`` alone), and a nested agent's calls below it, known only by
    ``invoke_agent``, were read into the outer agent's conversation as a new segment. One whose parent names the
    same agent is no run of its own: a span the run's baggage stamped with its agent (Pydantic AI sets
    ``gen_ai.agent.name`` as baggage, which a baggage span processor copies onto every span below)."""
    return {key for key in runs if named.get((key[0], parents.get(key, ""))) != named[key]}


def _above_calls(calls: list[tuple[str, str]], parents: Mapping[tuple[str, str], str],
                 agents: set[tuple[str, str]], wrappers: set[tuple[str, str]]
                 ) -> tuple[set[tuple[str, str]], dict[tuple[str, str], bool]]:
    """Which spans around model calls (``wrappers``: agents', workflows') have one of ``calls`` (model-call spans
    with messages) below them, and, per call, whether an ``invoke_agent`` span is above it (whose agent made it is
    known). An agent's span with messages repeats the turn its model calls hold and is not read beside them; one
    no call is below, beside calls each of which is below an agent (another agent's: a sibling, its own model
    calls not recorded), is the only record of its turn, which had been dropped without a word. Where a call's
    ancestry names no agent (a parent link lost, a span not given), whose it is is unknown, and the conversation's
    agent spans are not read beside its calls, as before. Each span is walked once (a memo of whether an agent is
    at or above it), so a deep chain is linear."""
    covered: set[tuple[str, str]] = set()
    memo: dict[tuple[str, str], bool] = {}  # span -> whether an invoke_agent span is at or above it
    placed: dict[tuple[str, str], bool] = {}
    for call in calls:
        path, on, found = [], set(), False
        at = (call[0], parents[call]) if parents.get(call) else None
        while at is not None:
            if at in memo:
                found = memo[at]
                break
            if at not in parents or at in on:  # a parent not read, or a loop: no agent known above
                break
            path.append(at)
            on.add(at)
            covered |= {at} & wrappers
            at = (at[0], parents[at]) if parents[at] else None
        for key in reversed(path):
            found = found or key in agents
            memo[key] = found
        placed[call] = found
    return covered, placed


def _conversation_of(trace: str, span: str, wraps: bool, ancestry: _Ancestry,
                     trace_ids: Mapping[str, set[str]]) -> str:
    """The conversation a span without ``gen_ai.conversation.id`` is read in (:class:`_Ancestry`): an id; its
    nested agent's run (``TRACE/SPAN``); where its ancestry stops at a span not read or at one of its trace's
    several roots (a parent link lost: a trace has one root), or the span ``wraps`` model
    calls (an agent's or workflow's run, the id on the agent spans below it), the one id its trace holds; else its
    trace (a trace a conversation, as before ids were read)."""
    found = ancestry.of(trace, span)
    if found[0] == "id":
        return found[1]
    if found[0] == "agent":
        return f"{trace}/{found[1]}"
    ids = trace_ids.get(trace, set())
    lost = found is _BROKEN or ancestry.roots[trace] > 1  # a trace has one root: a second lost its parent link
    return next(iter(ids)) if (lost or wraps) and len(ids) == 1 else trace or "trace"


UNREAD = {  # the attributes of a model call that carry no messages: (what, which messages not, why, what to do)
    "gen_ai": ("gen_ai.prompt.* / gen_ai.completion.*", INPUT, "vendors' attributes, no schema's",
               "record content as semantic conventions v1.37+ do in every instrumentation"),
    "llm": (f"{openinference.PROMPTS}.* / {openinference.CHOICES}.*", openinference.INPUT,
            "OpenInference's record of a completions API call: a prompt's text, no chat messages",
            "call the model through its chat API for its turns to be read"),
}


def _parts(messages: Iterable[Any]) -> Iterator[Mapping[str, Any]]:
    """The parts of messages read (each checked by the labelling rule, which refuses a bad one, naming it)."""
    for m in messages:
        for part in m.get("parts") or () if isinstance(m, Mapping) and isinstance(m.get("parts"), list) else ():
            if isinstance(part, Mapping):
                yield part


def _legacy_warning(path: str, key: str, n: int, first: str, alone: bool, family: str = "gen_ai") -> None:
    """Say that ``n`` spans of conversation ``key`` (``first`` the first) carry only attributes of the ``family``
    (:data:`UNREAD`) read not: vendors' ``gen_ai.prompt.*``, OpenInference's ``llm.prompts.*``; beside spans of
    messages in the conversation (only what a later call's input repeats of their turns is read), or ``alone``, the
    whole conversation so recorded, in a file whose other conversations are read (it had been dropped without a
    word: only a file of nothing but such spans was refused)."""
    what, messages, why, do = UNREAD[family]
    log.warning("%s: %d span%s of conversation %s (the first: %s) carr%s %s attributes and no %s: not read (%s); %s; "
                "%s", path, n, "s" if n > 1 else "", key, first, "y" if n > 1 else "ies", what, messages, why,
                "no span of the conversation carries messages, so it is not read at all" if alone else
                f"only what a later call's {messages} repeats of such a turn is read", do)


def _hidden_warning(path: str, hidden: Collection[str], unanswered: int) -> None:
    """Say, once a file, that ``hidden`` spans' outputs were hidden whole (OPENINFERENCE_HIDE_OUTPUTS) and read as
    not recorded, ``unanswered`` of their answers missing (the next call's input repeats none: a conversation's last,
    or one a window or a new history dropped, which a count of last answers alone left out): until 2026-12-07 such a
    span was read without its answer and without a word, and for a while that day it refused its conversation, though
    the next call's input holds the answer."""
    log.warning("%s: %d LLM span%s output hidden whole (the first: %s: output.value is %s, no %s.*; "
                "OPENINFERENCE_HIDE_OUTPUTS, or its TraceConfig's hide_outputs): read as not recorded, what a later "
                "call's input repeats of it read there; %d such answer%s, repeated by no later input (a "
                "conversation's last, or one the next call's input dropped), %s missing; trace with it unset to train "
                "on every answer", path, len(hidden), "s'" if len(hidden) > 1 else "'s", next(iter(hidden)),
                openinference.REDACTED, openinference.OUTPUT, unanswered,
                *(("", "is") if unanswered == 1 else ("s", "are")))


def conversations(docs: Iterable[tuple[Any, str]], path: str, id_of) -> Iterator[Conversation | TranscriptFormatError]:
    """The conversations of OTLP documents (``(doc, where)`` pairs): one per conversation id (a span's own, else
    as :func:`_conversation_of` tells), else per trace.
    Spans but no messages at all is an error that says what the spans were."""
    groups: dict[str, list[tuple[int, int, dict[str, Any], str]]] = {}
    traces: dict[str, set[str]] = {}  # conversation -> its spans' traces
    bad: dict[str, TranscriptFormatError] = {}  # trace -> the first malformed span's error
    bad_keys: dict[str, TranscriptFormatError] = {}  # conversation -> the same, where its attributes told it
    seen: Counter = Counter()
    cids: dict[tuple[str, str], str] = {}  # (trace, span) -> the conversation id the span carries
    parents: dict[tuple[str, str], str] = {}  # (trace, span) -> its parent span's id
    trace_ids: dict[str, set[str]] = {}  # trace -> the conversation ids its spans carry
    held: list[tuple[str, str, tuple[int, int, dict[str, Any], str]]] = []  # the spans with messages, in file order
    agents: set[tuple[str, str]] = set()  # (trace, span) of the agent runs (invoke_agent; _runs_without_operation)
    named: dict[tuple[str, str], str] = {}  # (trace, span) -> the agent its gen_ai.agent.id (or .name) names
    unnamed_runs: list[tuple[str, str]] = []  # spans naming an agent, without an operation name or messages
    wrappers: set[tuple[str, str]] = set()  # (trace, span) of the spans around model calls (AGENT_OPERATIONS)
    malformed: list[tuple[str, str, dict[str, Any], TranscriptFormatError]] = []  # spans whose attributes were read
    failed: dict[str, set[str]] = {}  # trace (or "conversation ID") -> the ids of its tool calls that failed
    old_style: list[tuple[str, str, dict[str, Any], str, str]] = []  # spans of attributes read not (UNREAD), no
    # messages: (trace, span, attributes, where, family)
    by_session: set[tuple[str, str]] = set()  # (trace, span) whose conversation id is OpenInference's session.id
    runs: list[tuple[str, str, dict[str, Any], openinference.Run]] = []  # tool spans naming no call (_unnamed_run)
    hidden: dict[str, None] = {}  # the LLM spans whose output was hidden whole (openinference.output_hidden), by where
    for n, (span, where) in enumerate(_spans(docs)):
        if isinstance(span, TranscriptFormatError):
            yield span
            continue
        attrs = None
        try:
            attrs = attributes(span.get("attributes"))
            for event in _list(span.get("events"), "events"):
                if isinstance(event, Mapping) and event.get("name") == DETAILS_EVENT:
                    attrs = {**attributes(event.get("attributes")), **attrs}
            session = CONVERSATION not in attrs and attrs.get(openinference.SESSION) not in (None, "")
            attrs = openinference.as_genai(attrs)  # an OpenInference span, as its GenAI twin would say it
            start = _int(span.get("startTimeUnixNano") or 0, "startTimeUnixNano")
            attrs.update(openinference.messages(attrs, span.get("droppedAttributesCount"), (*ROLES, *ALIASES)))
        except ValueError as exc:
            err = TranscriptFormatError(f"{where}, span {str(span.get('spanId', n))[:40]}",
                                        str(exc) if isinstance(exc, openinference.Unreadable)
                                        else f"not OTLP JSON: {exc}")
            trace = span.get("traceId")  # its conversation is refused whole, with this reason, not written without it
            if attrs is not None:  # its conversation told as a good span's, once every span is seen: its own
                sid = str(span.get("spanId", n))  # id, else its ancestors' (its children's spans, which take
                key = (str(trace or ""), sid)  # its id, were written as a conversation of their own)
                parents[key] = str(span.get("parentSpanId") or "")
                if attrs.get(CONVERSATION):
                    cids[key] = str(attrs[CONVERSATION])
                    trace_ids.setdefault(key[0], set()).add(cids[key])
                malformed.append((*key, attrs, err))
            elif trace:
                bad.setdefault(str(trace), err)
            else:
                yield err
            continue
        op = str(attrs.get("gen_ai.operation.name", "without gen_ai.operation.name"))
        seen[op] += 1
        trace, sid = str(span.get("traceId") or ""), str(span.get("spanId", n))
        if attrs.get(CONVERSATION):
            cids[(trace, sid)] = str(attrs[CONVERSATION])
            trace_ids.setdefault(trace, set()).add(cids[(trace, sid)])
            if session:
                by_session.add((trace, sid))
        parents[(trace, sid)] = str(span.get("parentSpanId") or "")
        if (who := _agent_of(attrs)) is not None:
            named[(trace, sid)] = who
            if "gen_ai.operation.name" not in attrs and INPUT not in attrs and OUTPUT not in attrs:
                unnamed_runs.append((trace, sid))
        if op == "invoke_agent":
            agents.add((trace, sid))
        if op in AGENT_OPERATIONS:
            wrappers.add((trace, sid))
        if _tool_failed(span, attrs):  # a failed call: its result, in a later call's input, is flagged
            call = str(attrs[TOOL_CALL_ID])
            failed.setdefault(trace, set()).add(call)
            if attrs.get(CONVERSATION):
                failed.setdefault(f"conversation {attrs[CONVERSATION]}", set()).add(call)
        if OUTPUT not in attrs and openinference.output_hidden(attrs):  # read as not recorded: said once a file
            hidden[f"{where}, span {span.get('spanId', n)}"] = None
        if (run := _unnamed_run(span, attrs, start, f"{where}, span {span.get('spanId', n)}")) is not None:
            runs.append((trace, sid, attrs, run))  # paired with its call by name and time (openinference.failed_runs)
        legacy = sorted({k.split(".")[1] for k in attrs if k.startswith(("gen_ai.prompt.", "gen_ai.completion."))})
        seen.update(f"gen_ai.{k}.* attributes" for k in legacy)
        completion = openinference.completion(attrs)  # a completion model's prompt, no messages
        if completion:
            seen[f"{openinference.PROMPTS}.* attributes"] += 1
        if INPUT not in attrs and OUTPUT not in attrs:
            if legacy or completion:  # said of its conversation (_legacy_warning)
                old_style.append((trace, sid, attrs, f"{where}, span {span.get('spanId', n)}",
                                  "gen_ai" if legacy else "llm"))
            continue
        held.append((trace, sid, (start, n, attrs, f"{where}, span {span.get('spanId', n)}")))
    agents |= _runs_without_operation(unnamed_runs, named, parents)
    ancestry = _Ancestry(cids, parents, agents)

    def key_of(trace: str, sid: str, attrs: Mapping[str, Any]) -> str:
        """The span's conversation: its id, else as :func:`_conversation_of` tells; a nested agent's run where the
        id is OpenInference's session.id, shared by an outer agent's run (:meth:`_Ancestry.delegate`)."""
        if ((trace, sid) in by_session or not attrs.get(CONVERSATION)) and (
                agent := ancestry.delegate(trace, sid, by_session)) is not None:
            return f"{trace}/{agent}"
        return str(attrs.get(CONVERSATION) or _conversation_of(
            trace, sid, attrs.get("gen_ai.operation.name") in AGENT_OPERATIONS, ancestry, trace_ids))
    unread: Counter = Counter()  # (conversation, family) -> its spans of attributes read not (UNREAD) alone
    first_unread: dict[tuple[str, str], str] = {}
    for trace, sid, attrs, where, family in old_style:
        key = key_of(trace, sid, attrs)
        unread[(key, family)] += 1
        first_unread.setdefault((key, family), where)
    for trace, sid, attrs, err in malformed:
        bad_keys.setdefault(key_of(trace, sid, attrs), err)
    runs_of: dict[str, list[openinference.Run]] = {}
    for trace, sid, attrs, run in runs:
        runs_of.setdefault(key_of(trace, sid, attrs), []).append(run)
    for trace, sid, item in held:  # grouped once every span was seen: an ancestor's id may come later in the file
        key = key_of(trace, sid, item[2])
        groups.setdefault(key, []).append(item)
        traces.setdefault(key, set()).add(trace)
    span_of = {item[1]: (trace, sid) for trace, sid, item in held}
    calls = [span_of[s[1]] for spans in groups.values() for s in spans
             if s[2].get("gen_ai.operation.name") not in AGENT_OPERATIONS]
    covered, placed = _above_calls(calls, parents, agents, wrappers)
    for key, spans in groups.items():  # an agent's span repeats the turn its model calls hold: read them alone
        own = [s for s in spans if s[2].get("gen_ai.operation.name") not in AGENT_OPERATIONS]
        if own:  # but an agent's beside them whose calls none is (another agent's turn, its calls not recorded)
            sure = all(placed[span_of[s[1]]] for s in own)
            groups[key] = [s for s in spans if s[2].get("gen_ai.operation.name") not in AGENT_OPERATIONS
                           or sure and span_of[s[1]] not in covered]
    unanswered = 0  # hidden answers that no next input repeats
    for key, spans in groups.items():
        w = f"{path}: conversation {key}"
        hit = sorted(traces[key] & set(bad))
        if key in bad_keys or hit:
            err = bad_keys.pop(key, None) or bad[hit[0]]
            for trace in hit:
                bad.pop(trace)
            yield TranscriptFormatError(w, f"{err.reason} in {err.where}: the conversation is refused whole rather "
                                           "than read without that span")
            continue
        conv: list[Any] = []
        at: dict[str, int] = {}
        after: list[str | None] = []
        policy: list[str] = []
        made: list[tuple[int, str, str, Any]] = []  # the calls read, each with the start of the span that made it
        answered: dict[str, int] = {}  # call id -> the start of the span whose input first held its result
        inputs = Inputs(lambda m: [m], _key)  # what an input repeats of the previous one: its keys made once
        late = Unrecorded()  # hidden answers, each read where a later input of its own history repeats it
        try:
            for t, n, attrs, where in sorted(spans, key=lambda s: s[:2]):
                inp = inputs.messages(_messages(attrs.get(INPUT, []), where, INPUT))
                out = _messages(attrs.get(OUTPUT, []), where, OUTPUT)
                found, before, hid, answer = late.join(conv, at, after, inp, out, _key,  # its trace: whose call
                                                       [*map(inputs.key, (*inp, *out))], t, where in hidden,
                                                       span_of[n][0], span_of[n])
                if found < 0 and inp and before:
                    log.warning("%s: its input repeats none of the %d messages read so far of %s (its history "
                                "rewritten whole, or another agent's calls under one conversation id?): its messages "
                                "are read as a new segment after them", where, before, f"conversation {key}")
                outs = {id(m) for m in out}
                # a call first read in an input that repeats the answer of a span whose output was hidden was made by
                # that span: dated by this one, a failed tool run between them (a TOOL span naming no call) paired
                # with no call made before it, and its result was not flagged
                for m in [*answer, *conv[before:]]:
                    when = t if hid is None or id(m) in outs else hid
                    for part in _parts([m]):
                        if part.get("id") in (None, ""):
                            continue  # no call to pair (refused by the labelling rule)
                        if part.get("type") == "tool_call":
                            made.append((when, str(part.get("id")), str(part.get("name")), part.get("arguments")))
                        elif part.get("type") == "tool_call_response":
                            answered.setdefault(str(part.get("id")), t)
                for part in _messages(attrs.get(SYSTEM, []), where, SYSTEM):
                    text = part.get("content") if isinstance(part, Mapping) and part.get("type") == "text" else None
                    if isinstance(text, str) and text not in policy:
                        policy.append(text)
        except TranscriptFormatError as err:
            yield err
            continue
        unanswered += late.missing()
        for family in UNREAD:
            if unread[(key, family)]:
                _legacy_warning(path, key, unread[(key, family)], first_unread[(key, family)], False, family)
        calls = set().union(failed.get(f"conversation {key}", set()), *(failed.get(t, set()) for t in traces[key]),
                            openinference.failed_runs(runs_of.get(key, ()), made, answered, w))
        yield Conversation(id_of(key), conv, w, key, "otel", "\n".join(policy), frozenset(calls))
    if hidden:
        _hidden_warning(path, hidden, unanswered)
    for key, family in sorted(unread) if groups else ():  # none read: the file's error says so
        if key not in groups:
            _legacy_warning(path, key, unread[(key, family)], first_unread[(key, family)], True, family)
    yield from [*bad_keys.values(), *bad.values()]  # malformed spans no conversation took: each said once
    if not groups:
        saw = ", ".join(f"{k} {v}" for k, v in seen.most_common()) or "no spans"
        yield TranscriptFormatError(path, f"no span carries {INPUT} or {OUTPUT} (saw spans by operation and "
                                          f"attributes: {saw}); record message content in the instrumentation "
                                          "(semantic conventions v1.37+, e.g. OTEL_SEMCONV_STABILITY_OPT_IN="
                                          "gen_ai_latest_experimental and OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_"
                                          "CONTENT=SPAN_ONLY; OpenInference's llm.input_messages.N.*, with the "
                                          "OPENINFERENCE_HIDE_* settings of messages unset); gen_ai.prompt.*/"
                                          "gen_ai.completion.* are not read, nor are a completions API's "
                                          "llm.prompts.*")

