"""What every log-format reader shares: the error, the conversation it yields and the chat messages it writes.

A reader turns the messages of one conversation, as its format writes them, into **chat messages**: the OpenAI
chat shape the labelling rule (:mod:`sam_model.data.toolstate`) reads — ``{"role": "system" | "user" |
"assistant" | "tool", "content": str, "tool_calls": [{"id", "function": {"name", "arguments"}}],
"tool_call_id"}``, and on a tool message whose format flags the call as failed ``"is_error": true`` (:data:`FAILED`;
OpenAI chat has no such flag, the other formats mostly do). Each chat message keeps where it came from
(``sources``), so an error names the message of the file, not of the translation.
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from sam_model.data.advice import AdvisedError
from sam_model.io import json_type, unique_keys


def unread_database(p: Any, exc: Exception, what: str, then: str = "") -> str:
    """Why an SQLite file that may hold sessions was not read (a writer's lock), and what to do: its sessions are not
    dropped. One text for every session database reader (ADK's, the Agents SDK's): each wrote its own, and one
    read's error lacked the advice."""
    return (f"cannot read {p} as {what}: {exc} (an app writing it?): retry when the app is idle, or convert a copy "
            f"(sqlite3 {p} '.backup COPY.db')" + (f"; {then}" if then else ""))


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"bare {name} is not JSON (write null, or the value as a string)")


def _finite(text: str) -> float:
    value = float(text)
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError(f"the number {text[:40]} is out of range (it would be Infinity, which is not JSON; write a "
                         "smaller number, or null)")
    return value


def stops_mid_json(exc: json.JSONDecodeError, raw: str) -> bool:
    """Whether the JSON text fails only because it ends (an OTLP attribute cut by a length limit): a string left
    open (where a length limit cuts a long history, inside a message's text, json says "Unterminated string starting
    at" the string's start, not at the end: the hint was missing for the very case it names), an escape or literal
    cut short, or nothing after the fault's place."""
    tail = raw[exc.pos:].rstrip()
    return (exc.msg.startswith("Unterminated string") or not tail
            or (exc.msg.startswith("Invalid \\uXXXX") and len(tail) < 6)
            or (exc.msg == "Expecting value" and any(w.startswith(tail) for w in ("true", "false", "null"))))


def cut_hint(exc: ValueError, raw: str, what: str) -> str:
    """Why an attribute that is no JSON ends there: cut at an attribute length limit (the SDK's
    ``OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT`` / ``SpanLimits``, a collector's truncate), which a long conversation's
    history reaches first; "is not JSON (Expecting ...: char 4096)" named no cause. Empty where the fault is inside.
    One text for both span families' readers (the otel reader's messages, OpenInference's values and a tool call's
    arguments), kept beside :func:`stops_mid_json` so the GenAI reader need not reach into OpenInference's module
    for it; ``what``: the attributes whose limit to raise."""
    if not (isinstance(exc, json.JSONDecodeError) and stops_mid_json(exc, raw)):
        return ""
    return (f"; it stops mid-JSON after {len(raw)} characters: cut by an attribute length limit (the SDK's "
            "OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT or SpanLimits, or a collector processor that truncates attributes)? "
            f"raise or lift the limit for {what}")


def strict_loads(text: str, unique: bool = True) -> Any:
    """JSON as every other reader reads it: no bare NaN/Infinity, no number that overflows to infinity (Python's
    json takes both, and a log written from them is one no JSON reader, ours included, reads back), and with
    ``unique`` no key given twice in one object (Python keeps the last silently; io.unique_keys). ``unique=False``
    is for what a model wrote that a program already read the usual way, the last value winning: a tool call's
    arguments (the tool ran with the last value) and the transcripts that carry them (sam_model.data.formats:
    model output, in string or object form, inside the export of a conversation)."""
    try:
        doc = json.loads(text, parse_constant=_refuse_constant, parse_float=_finite,
                         object_pairs_hook=unique_keys if unique else _last_value_wins)
    except ValueError as exc:  # Python's own limit on integer digits said "use sys.set_int_max_str_digits()"
        if isinstance(exc, json.JSONDecodeError) or "integer string conversion" not in str(exc):
            raise
        raise ValueError(f"a number of more than {sys.get_int_max_str_digits()} digits, longer than any reader "
                         "takes: write it as a string") from None
    if _SURROGATE.search(text):  # rare: only then is the whole document checked
        try:
            json.dumps(doc, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError("a lone UTF-16 surrogate (an escape \\ud800-\\udfff without its pair: half of a "
                             "character such as an emoji) in a string; no UTF-8 file can hold it, so nothing read "
                             "from here could be saved: write the whole character, or remove the escape") from None
    return doc


def _last_value_wins(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A key given twice: the last value, as the program that read it did (a tool's argument), unless a value it
    drops is a list or an object: a conversation's ``messages`` twice (two exports run together) lost a whole
    conversation silently."""
    d = dict(pairs)
    if len(d) < len(pairs):
        for i, (k, v) in enumerate(pairs):
            if isinstance(v, (list, dict)) and any(k == later for later, _ in pairs[i + 1:]):
                raise ValueError(f"the key {k[:60]!r} is given twice in one object and its first value, a "
                                 f"{'list' if isinstance(v, list) else 'object'}, would be dropped (keep one)")
    return d


# a JSON escape of a high surrogate not followed by a low one, or of a low one not after a high one (an escaped
# backslash before "u" matches too: the encode check above then decides); a pair, as Python's json writes an emoji,
# does not match, so such logs are not serialised again
_SURROGATE = re.compile(r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
                        r"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}")


class TranscriptFormatError(AdvisedError):
    """A conversation breaks its format. ``str()`` reads ``WHERE: reason``, where ``WHERE`` is ``FILE:LINE``
    (JSON Lines), ``FILE: conversation N`` (a JSON list), plus ``, message M`` when one message is at fault; an
    option the reason advises is an Advice, which the tool that read the file spells (sam_model.data.advice).

    ``skippable``: set by the reader when a skip option (``--skip-bad``, ``data.on_error: skip``) would have passed
    over this conversation and read on; a fault of the whole file (nothing converted) is not."""

    skippable = False


class OwnFieldError(TranscriptFormatError):
    """A message holds the reader's own field, of a type it cannot read (an Agent Framework message's ``contents`` a
    string): the format is the reader's, so no other reader is advised. A session whose every ``contents`` was a
    string had been told ``try --format openai``, a reader of no ``contents`` at all."""


class CutLine(TranscriptFormatError):
    """The last line of a JSON Lines file, with no newline after it, that does not parse: the file ends inside it.
    An agent appends its session's file as it runs, so a copy taken meanwhile (of ``~/.claude/projects``, of
    ``~/.codex/sessions``) ends so; a session reader reads the complete lines before it, as no line after it could
    need it, and reports it (a bad line anywhere else is still an error)."""


class NotJSON(TranscriptFormatError):
    """A line of a JSON Lines file that is no JSON and does not open an object (its first character past blanks is
    not ``{``): no record broken or cut, but another program's text mixed into the file, as a harness keeping an
    agent's stdout with ``2>&1 | tee`` mixes in its stderr notes (Codex's ``Reading prompt from stdin...``, its
    timestamped log lines). The headless readers (:mod:`claude_stream`, :mod:`codex_exec`) leave such lines out and
    report them; every other reader refuses one as any bad line (a line opening ``{`` that does not parse is a
    broken record, and a JSON value that is no object a bad one, everywhere)."""


@dataclass(frozen=True)
class Conversation:
    """One episode's messages as its file writes them, and where they came from (for errors and the split).

    ``format``: the reader of the messages (None: told from the messages themselves); ``policy``: system text
    the container keeps apart from the messages (Anthropic's and Bedrock's ``system``, Responses ``instructions``,
    Gemini ``system_instruction``, the tau2 domain policy), read as a leading system message; ``failed_calls``: the
    ids of tool calls the container flags as failed apart from the messages (OpenTelemetry's ``execute_tool`` spans
    that ended in an error), whose results are flagged as a message's own flag is (``is_error``); ``cut``: where
    the file's last line was cut mid-write (FILE:LINE, :class:`CutLine`), left out of a session still being written,
    for the import report; ``stderr``: where the file's lines that are no JSON are (FILE:LINE, :class:`NotJSON`),
    left out of a headless run's output as its stderr mixed in, for the import report; ``abandoned``: where the
    turns of branches the conversation left are (FILE:LINE: a Claude Code rewind's, an edited prompt's, a retried
    response's; a Gemini CLI rewind's), which its reader leaves out, for the import report; ``cwd``: the agent's
    working directory the container records apart from the messages, for the whole run (mini-swe-agent's
    ``info.config.environment.cwd``), told from the first message on (:meth:`Chat.known_before`); ``continues``: the
    ``previous_response_id`` of a Responses request that begins the conversation although no line of its file is
    that response (logged in another file, or lost), for the import report; ``lacking``: what the conversation is
    read without that its reader says where to find (an AutoGen state's system_message, kept in a config beside
    it), for the import report."""

    episode_id: str
    messages: list[Any]
    where: str  # FILE:LINE or FILE: conversation N
    group: str  # conversations of one group (a task's trials) share a split
    format: str | None = None
    policy: str = ""
    failed_calls: frozenset[str] = frozenset()
    cut: str = ""
    stderr: tuple[str, ...] = ()
    abandoned: tuple[str, ...] = ()
    cwd: str = ""
    continues: str = ""  # the response id a Responses request continues that its file lacks (response_chains)
    head: str = ""  # an OpenHands V1 conversation's leaf_event_id (base_state.json): the branch read ends there
    loops: str = ""  # the ids a Responses request's previous_response_id leads round, none a first request (looping)
    lacking: tuple[str, ...] = ()  # what the container lacks that the conversation is read without (its policy)
    owner: tuple[str, str] | None = None  # an ADK session's (user_id, app_name): whose memories are SAM's recall in it


@dataclass
class Chat:
    """A conversation translated to chat messages: ``messages[i]`` came from ``sources[i]`` (``message 3``,
    ``item 5``); ``user_tool_calls`` counts tool calls (and their results) made by the user side, which the agent
    never sees and its memory never holds; ``ignored`` counts parts of types no event is made of (reasoning,
    images, built-in tool items), by type. ``cwd``: the agent's working directory where its format records one
    (Claude Code's entries, Codex's session meta and turn contexts, OpenHands' command observations; Gemini CLI's
    project root, recovered from its hash), set by the reader as it reads (mini-swe-agent's run config, kept apart
    from the messages: :attr:`Conversation.cwd`); the first message
    added after it changes carries it as its :data:`CWD`, which the labelling rule reads (toolstate: an absolute path
    under it is traced by its relative part), so a live memory fed a line at a time learns it as the importer does;
    a directory an assistant message's own calls revealed is marked :data:`CWD_BY_CALLS` on it by its reader.
    ``other_roles`` counts the messages of a role outside OpenAI's, which the spec keeps as events of that kind (Llama's
    ``ipython``, or a misspelt ``asistant``), and ``other_role_at`` says where each was first met, for the import
    report. ``misplaced``: where a reader read tool results after calls the file says came after them, the file
    not holding the marks its producer writes to tell them apart (FILE:LINE of each result: a Codex rollout of
    0.3x-0.77 without a turn_context line before each model request), for the import report."""

    messages: list[dict[str, Any]] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    user_tool_calls: int = 0
    ignored: Counter = field(default_factory=Counter)
    other_roles: Counter = field(default_factory=Counter)
    other_role_at: dict[str, str] = field(default_factory=dict)
    misplaced: list[str] = field(default_factory=list)
    cwd: str = ""
    _told: str = ""  # the working directory the messages added so far carry

    def add(self, message: dict[str, Any], source: str) -> None:
        if self.cwd != self._told:
            message[CWD], self._told = self.cwd, self.cwd
        self.messages.append(message)
        self.sources.append(source)

    def other_role(self, role: str, where: str) -> None:
        """Count a message of a role outside OpenAI's (kept as its own kind of event), ``where`` it was met first."""
        self.other_roles[role] += 1
        self.other_role_at.setdefault(role, where)

    def known_before(self, cwd: str) -> None:
        """The working directory known before these messages, told apart from them (a run's recorded config, a live
        scope's earlier lines): told on the first message unless it tells its own, and the directory after them
        unless they moved it (a reader never tells "" after a directory)."""
        if cwd and self.messages and CWD not in self.messages[0]:
            self.messages[0][CWD] = cwd
        self.cwd = self.cwd or cwd


# the formats whose reader joins the assistant's words and the calls right after them into one turn (decided
# before the words): Responses (a preamble message item, then its function_call), a Codex rollout (its
# response_item lines, read by the Responses reader; until 2026-12-06 left out, so live_state and a scope's search
# decided at a rollout's preamble), codex exec --json events (an agent_message, then the items of the calls right
# after it; left out until 2026-12-06 alike) and Gemini contents (consecutive model contents, a streamed answer a
# chunk each). OpenAI chat, Anthropic and the other session formats write words and calls in one message, two
# messages being two turns; Claude Code joins an API message's entries by its id, which only a call given as its
# session line carries (left out here: sam_model.data.formats.claude_code.response_start places such a line).
JOINS_CALLS = frozenset({"responses", "codex", "codex-exec", "gemini"})
# those of them whose lines a ScopedMemory reads in an open turn (sam_model.memory.live.deciding) and whose next
# call the reader joins to the words whatever shape a search gives it in: a rollout's response_item function_call,
# a codex exec item, a model's functionCall content (Gemini; until 2026-12-06 no open turn: a model's words added
# alone were decided at)
JOINS_NEXT_CALL = frozenset({"codex", "codex-exec", "gemini"})


def preamble(fmt: str | None, chat: Chat) -> bool:
    """Whether a call made next joins the assistant's words a conversation read in ``fmt`` ends in (a model's
    preamble, "Let me look you up.", then its call, in one response): the reader reads them as one turn, so
    live_state, given the messages up to the call, decides before those words, where the importer's decision point
    is, not at them (sam_model.memory.live.deciding alike for a scope's open turn). One rule for every format
    (until 2026-12-06 Responses' alone: Gemini contents ending in the model's words decided at them)."""
    return fmt in JOINS_CALLS and ends_in_words(chat)


def ends_in_words(chat: Chat) -> bool:
    """Whether ``chat`` ends in the assistant's words (its message without a call): what a call made next joins
    where the reader joins them (:func:`preamble`)."""
    last = chat.messages[-1] if chat.messages else None
    return isinstance(last, Mapping) and last.get("role") == "assistant" and not last.get("tool_calls")


def text_of(content: Any, where: str, text_types: tuple[str, ...] = ("text",), key: str = "text",
            ignored: Counter | None = None) -> str:
    """Text of a content that is a string, null, or a list of parts: parts of ``text_types`` give their ``key``,
    joined by newlines; other parts are counted in ``ignored`` by type."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise TranscriptFormatError(where, f"'content' is {json_type(content)}; expected a string, null or a "
                                           "list of parts")
    texts = []
    for j, part in enumerate(content):
        if not isinstance(part, Mapping):
            raise TranscriptFormatError(where, f"content part {j} is {json_type(part)}, expected an object "
                                               f"such as {{\"type\": \"{text_types[0]}\", \"{key}\": ...}}")
        if part.get("type") in text_types:
            if not isinstance(part.get(key), str):
                raise TranscriptFormatError(where, f"content part {j} has type {part.get('type')!r} but no string "
                                                   f"{key!r}")
            texts.append(part[key])
        elif ignored is not None:
            ignored[str(part.get("type"))] += 1
    return "\n".join(texts)


def chat_call(call_id: Any, name: Any, arguments: Any, where: str) -> dict[str, Any]:
    """One OpenAI ``tool_calls`` entry; ``arguments`` (an object, a JSON string or null) kept as given."""
    if not isinstance(name, str) or not name:
        raise TranscriptFormatError(where, "tool call without a name")
    if arguments is not None and not isinstance(arguments, (str, Mapping)):
        arguments = json.dumps(arguments, ensure_ascii=False)
    return {"id": None if call_id is None else str(call_id), "type": "function",
            "function": {"name": name, "arguments": arguments}}


def result_text(value: Any) -> str:
    """A tool result as the text of its event: strings as they are, anything else as JSON."""
    return value if isinstance(value, str) else "" if value is None else json.dumps(value, ensure_ascii=False)


# media blocks that keep their payload under a key of its own, not their type's: Anthropic's image/document
# {"type": "image", "source": {...}}, LangChain 1.x's {"type": "image", "base64": ..., "mime_type": ...} (url, file_id)
MEDIA_TYPES = frozenset({"image", "audio", "video", "file", "document"})
MEDIA_PAYLOADS = ("source", "base64", "url", "file_id", "data")


def is_part(item: Any) -> bool:
    """A content part as OpenAI (and Anthropic, for text) writes one: ``{"type": T, T: ...}``, its payload under the
    key its type names (``{"type": "text", "text": ...}``, ``{"type": "image_url", "image_url": ...}``), or a media
    block (:data:`MEDIA_TYPES`) holding one of :data:`MEDIA_PAYLOADS`; a record of a tool's result with a ``type``
    field (``{"type": "flight", "number": ...}``, ``{"type": "file", "name": ...}``) is none. Read as data, a
    screenshot tool's image block became its base64 as the result's text."""
    if not isinstance(item, Mapping) or not isinstance(item.get("type"), str):
        return False
    return item["type"] in item or item["type"] in MEDIA_TYPES and any(k in item for k in MEDIA_PAYLOADS)


def json_result(content: Any) -> str | None:
    """A tool result its logger wrote as JSON data rather than text (``"content": {"status": "ok", "id": "A-17"}``,
    a list of records, a number): its JSON text, keys in the order written (what the agent was shown), so that its
    values are traced as a text result's are; None for content that is text (a string, null, or a list holding a
    content part, which is read as parts). An empty list stays the empty content it is in the API."""
    if content is None or isinstance(content, str) or (isinstance(content, list)
                                                       and (not content or any(map(is_part, content)))):
        return None
    return json.dumps(content, ensure_ascii=False)


FAILED = "is_error"  # a chat tool message's failure flag: the call failed, whatever its words say (toolstate)
# a chat tool message's other calls it answers, beside its tool_call_id: one output for several calls (smolagents
# keeps a step's parallel calls' outputs as one text), so none of them is reported as a call no result answered
ANSWERS = "answers"
CWD = "cwd"  # a chat message's working directory of the agent from that message on (toolstate: paths under it)
# true on an assistant message whose own calls revealed the CWD it tells (Gemini CLI's project root, found from the
# paths they name): its calls are judged in it too, as a search by call finds it from the call in hand
CWD_BY_CALLS = "cwd_by_calls"
# a chat tool message's {FILE: [N, ...]}: the lines of each file its text printed with their numbers (a file view's
# "212:def f():", a search's "Line 212:") or named by a location (a test run's "tests/test_a.py:212: AssertionError", a
# traceback's 'File "a.py", line 212': said as a line of that file), set by readers that know their tools' outputs
# (toolstate: line numbers)
SHOWN_LINES = "shown_lines"
# an assistant message's {tool_call_id: {"file": FILE, "arguments": [NAME, ...]}}: the arguments of a call that are
# line numbers of FILE (an editor's goto, an edit's line range), set by the same readers (toolstate: line numbers)
LINE_ARGUMENTS = "line_arguments"


def failure(value: Any, failed: Any, ok: Any, field: str, where: str) -> dict[str, bool]:
    """The chat tool message's flag from a result's own: ``{"is_error": True}`` where ``value`` is ``failed``,
    nothing where it is absent (None) or ``ok``; any other value is refused, naming ``field`` (a flag read wrong
    would say a failed call succeeded, or the reverse). Compared with its type, so ``1`` is no ``true``."""
    same = lambda a, b: type(a) is type(b) and a == b  # noqa: E731
    if value is None or same(value, ok):
        return {}
    if same(value, failed):
        return {FAILED: True}
    raise TranscriptFormatError(where, f"'{field}' is {json.dumps(value, ensure_ascii=False, default=str)[:40]}, "
                                       f"expected {json.dumps(failed)} (the call failed) or {json.dumps(ok)}, or "
                                       "leave it out")


def each(messages: list[Any], where: str, noun: str = "message",
         start: int = 0) -> Iterator[tuple[int, Mapping[str, Any], str]]:
    """(index, message, where) for each message, refusing one that is not an object; ``start``: the first one's
    index (the messages a slice of those the file gives)."""
    for i, m in enumerate(messages, start):
        w = f"{where}, {noun} {i}"
        if not isinstance(m, Mapping):
            raise TranscriptFormatError(w, f"{'an' if noun[0] in 'aeiou' else 'a'} {noun} must be an object, got "
                                           f"{json_type(m)}")
        yield i, m, w


@dataclass(frozen=True)
class Blocks:
    """How a format writes the blocks of one message (Anthropic content blocks, GenAI parts): the key of a text
    block's text, the type of a tool call and its id and arguments keys, the type of a tool result and the key
    naming the call it answers; ``flag``: a result's failure flag as (key, its value when the call failed, its
    value when it did not), None for a format without one."""

    noun: str
    text: str
    call: str
    call_args: str
    result: str
    result_id: str
    flag: tuple[str, Any, Any] | None = None


def read_blocks(chat: Chat, role: str, blocks: list[Any], where: str, source: str, kinds: Blocks,
                result_of: Callable[[Mapping[str, Any], str], str]) -> None:
    """One message's blocks as chat messages: a tool message per result (in order), then the words, with the
    assistant's tool calls on them; blocks of other types are counted in ``chat.ignored``."""
    texts, calls = [], []
    for j, b in enumerate(blocks):
        if not isinstance(b, Mapping):
            raise TranscriptFormatError(where, f"{kinds.noun} {j} is {json_type(b)}, expected an object")
        kind = b.get("type")
        if kind == "text":
            if not isinstance(b.get(kinds.text), str):
                raise TranscriptFormatError(where, f"{kinds.noun} {j} has type 'text' but no string '{kinds.text}'")
            texts.append(b[kinds.text])
        elif kind == kinds.call and role == "assistant":
            calls.append(chat_call(b.get("id"), b.get("name"), b.get(kinds.call_args), f"{where}, {kinds.noun} {j}"))
        elif kind == kinds.result:
            call_id = b.get(kinds.result_id)
            if not isinstance(call_id, (str, int)) or isinstance(call_id, bool) or call_id == "":
                raise TranscriptFormatError(where, f"{kind} {kinds.noun} {j} without a '{kinds.result_id}' (the "
                                                   "call it answers)")
            at = f"{where}, {kinds.noun} {j}"
            flag = failure(b.get(kinds.flag[0]), *kinds.flag[1:], kinds.flag[0], at) if kinds.flag else {}
            chat.add({"role": "tool", "tool_call_id": str(call_id), "content": result_of(b, at), **flag}, source)
        else:
            chat.ignored[str(kind)] += 1
    text = "\n".join(texts)
    if role == "assistant" and (text or calls):
        chat.add({"role": "assistant", "content": text or None, **({"tool_calls": calls} if calls else {})}, source)
    elif text and role != "tool":
        chat.add({"role": role, "content": text}, source)
