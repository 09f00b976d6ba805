"""The open turn of an agent's session file fed to ScopedMemory.add as the agent writes it, a line or a turn an add.

A sidecar that forwards each new line of Claude Code's, Codex's or Gemini CLI's session file (or codex exec's
events, or an OpenHands agent's events from its event stream's callback) gives each add a piece of what the format's
reader reads whole, and the readers need lines an add lacks: a Claude Code response is a line per content block
sharing its ``message.id`` (a call's result may come between them), a Gemini CLI message is written again as its
calls finish, a Codex 0.3x-0.77 request's parallel calls are written each with its output (the reader moves the
outputs after the calls: the session_meta's version says so, and it comes in the first add only), Gemini CLI's
project root is found by the metadata line's hash (the first line only) and Codex's working directory may be told by
its session_meta alone, a codex exec call's ``item.started`` and ``item.completed`` come apart, OpenHands 0.x reads
a response's parallel calls all at its first action and answers a text-mode call by its observation's ``cause``
alone, V1 joins a response's consecutive ActionEvents. Read an add at a time, a response's calls became turns of
their own (each deciding after the one before), a rewritten message a second turn, a path under the working
directory was traced whole, and so on.

So each scope keeps its **open turn**: the lines since the last one that closes every earlier turn (:func:`opens`: a
Claude Code prompt or a response of a new ``message.id``, a Gemini CLI user or gemini message of a new id, a Codex
turn_context of a request-marked rollout once one came (the reader reads the items before it in file order) or else
a message or a call after an output (an output stays in its call's turn: the reader reads the lines an output shows
by its call, numbered.mark), codex exec's turn and run events,
words or a call after every call ended, OpenHands 0.x's next action once every call has its observation, V1's next
event read as a message other than a result), with the conversation's tracker mark and the store recorder's row where it began, and what
the format's earlier lines said that later ones need (:class:`OpenTurn`'s ``facts``: the first line as the reader
needs it again, put back in front of the open turn's lines; the working directory the lines before the open turn
told, told on its first message; Gemini CLI's closed message ids; ``begun``: a request-marked Codex rollout's lines held a
turn_context), a Gemini CLI message written again held in its
latest version only (:func:`latest`). Each add reads the open turn and its lines again,
whole, with the format's reader; ScopedMemory feeds them from the mark and stores the difference (a memory whose
event changed is updated, the rest added), the messages the turn's last read fed alike passed over (:class:`Read`:
a line appending a message feeds that message alone). An add sent again (a sidecar retrying one whose answer it
lost) is read once where its lines say so: Claude Code's by their uuids (:func:`opens`), Codex's and codex exec's by
their times, call ids and item ids (:func:`retried`). OpenAI Responses items an agent adds as it gets them (a
response's preamble message, then its function_call, which the reader joins into one turn) keep an open turn alike,
cut where sam_model.memory.live_responses says, and so do Gemini contents (the reader joins consecutive model
contents into one turn: the model's words, then its functionCall content; :func:`opens`); a search by a call the
open preamble will join decides before it (:func:`deciding`). Nothing here is a reader: the readers read, this says
where to cut.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sam_model.data.chatmessages import ToolCall
from sam_model.data.formats import (
    claude_code,
    codex,
    codex_exec,
    gemini,
    gemini_cli,
    openhands,
    openhands_v1,
    to_chat,
)
from sam_model.data.formats.base import CWD, JOINS_NEXT_CALL, Chat, preamble
from sam_model.data.formats.numbered import mark
from sam_model.data.formats.responses import OUTPUTS
from sam_model.data.schema import State
from sam_model.data.toolstate import TranscriptState
from sam_model.io import SAMFileError
from sam_model.memory import live_responses, live_v1

# the session formats an agent appends line by line (OpenHands: an event an add, from its event stream's callback)
LIVE = ("claude-code", "gemini-cli", "codex", "codex-exec", "openhands", "openhands-v1")
# the formats a scope keeps an open turn of: the session formats and an API's items an agent adds as it gets them
# (Responses: a response's preamble message, then its function_call; sam_model.memory.live_responses), whose texts
# are held to the length limit as a chat message's are (the agent's own, which it can split)
# (Gemini contents: the model's words, then its functionCall content, which the reader joins into one turn)
GEMINI = "gemini"
TURNS = (*LIVE, live_responses.FORMAT, GEMINI)
# what an open turn holds: each add reads its lines again (and revises its memories: those whose text changed are
# logged with their texts), and each checkpoint saves them; past either, the open turn closes where it is (:func:`over`)
MAX_OPEN_LINES = 5_000
MAX_OPEN_BYTES = 4_000_000  # its lines as JSON: 40 results of MAX_TEXT_CHARS (a Gemini CLI message: its latest version)


@dataclasses.dataclass
class Read:
    """What an add's read of the open turn leaves the next add (not saved: a loaded turn is read again whole):
    the turn's messages, those not fed (``skip``) and the policy they were fed with; the tracker's marks before
    its last messages and after them (``marks``: message index -> mark, KEEP_MARKS); the recorder's row after each event of the
    turn (``rows``: event index -> MemoryRecorder row). The next add's messages that are these (:func:`alike`), up to a kept
    mark, are not fed again, nor their events recorded again: an add appending a message (a call's result) feeds
    that message alone, where each add fed the whole turn again."""

    messages: list[Any]
    skip: set[int]
    policy: str
    marks: dict[int, dict[str, Any]]
    rows: dict[int, list | None]

    def reused(self, messages: list[Any], skip: set[int], policy: str) -> int:
        """How many of ``messages`` (fed with ``skip`` and ``policy``) need not be fed again: the last kept mark at
        or before the first message that differs from this read's (0: none)."""
        if policy != self.policy:
            return 0
        same = 0
        for a, b in zip(self.messages, messages):
            if not alike(a, b) or ((same in self.skip) != (same in skip)):
                break
            same += 1
        return max((i for i in self.marks if 0 < i <= same), default=0)


def alike(a: Any, b: Any) -> bool:
    """Whether two messages are the same JSON: of one type at every place, not only equal. Python's ``==`` takes
    1 == 1.0 == True, so a message rewritten with a call's argument changed from 1 to true (a Gemini CLI message
    written again as its calls finish) was taken as the one already fed, and its memory kept ``limit=1`` where the
    whole file's read stores ``limit=true``. Without recursion: a line may nest deeper than Python's stack."""
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if x is y:
            continue
        if type(x) is not type(y):
            return False
        if isinstance(x, dict):
            if x.keys() != y.keys():
                return False
            stack += [(v, y[k]) for k, v in x.items()]
        elif isinstance(x, (list, tuple)):
            if len(x) != len(y):
                return False
            stack += zip(x, y)
        elif isinstance(x, float):
            if repr(x) != repr(y):  # -0.0 and 0.0 are two JSON texts; NaN is itself
                return False
        elif x != y:
            return False
    return True


KEEP_MARKS = 2  # a Read keeps the marks before the turn's last 2 messages and after them (each copies the calls so far)


@dataclasses.dataclass
class OpenTurn:
    """A scope's open turn: its format, its lines, the tracker's events before it and the tracker's mark and the
    recorder's row where it began (``recorder``: [state, task, task start, state before] as JSON, None: no row),
    and ``facts`` the format's earlier lines gave (``meta``: the session's first line as the reader needs it again,
    :func:`head`; ``cwd``: the working directory the lines before the open turn told, ``Chat.cwd``; ``ids``: Gemini
    CLI's message ids of closed turns; ``begun``: a Codex rollout's lines held a turn_context, :func:`learn`; ``added``:
    the digest of the scope's last add of Codex or codex exec lines, ``added_lines`` how many it held, :func:`retried`;
    ``seen``: the keys of the last lines read that Codex writes once, :func:`remember`).
    ``logged``: the history entries (ids) adds of this open turn logged for memories the next add may revise; a
    later change in the turn revises such an entry, where it is still its memory's last, rather than logging
    another (ScopedMemory._log)."""

    format: str
    lines: list[Any]
    start: int
    mark: dict[str, Any]
    recorder: list[Any] | None
    facts: dict[str, Any]
    logged: list[str] = dataclasses.field(default_factory=list)
    read: Read | None = dataclasses.field(default=None, repr=False, compare=False)
    # id(line) -> (the line, its size as JSON): each of its lines measured once for over (not saved)
    sizes: dict[int, tuple[Any, int]] = dataclasses.field(default_factory=dict, repr=False, compare=False)

    def state_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(dataclasses.replace(self, read=None, sizes={}))
        del d["read"], d["sizes"]
        return d

    def size(self, lines: list[Any]) -> int:
        """The size of ``lines`` as JSON, those of the turn's own measured once (kept in ``sizes``, carried to the
        turn after an add by :meth:`carry`): each add measured the whole turn again."""
        own, total = {id(x) for x in self.lines}, 0
        for x in lines:
            got = self.sizes.get(id(x))
            if got is None or got[0] is not x:
                got = (x, len(json.dumps(x, default=str)))
                if id(x) in own:
                    self.sizes[id(x)] = got
            total += got[1]
        return total

    def carry(self, turn: OpenTurn | None) -> OpenTurn:
        """This turn with the sizes ``turn`` measured of the lines it holds still."""
        if turn is not None:
            self.sizes = {id(x): got for x in self.lines if (got := turn.sizes.get(id(x))) is not None and got[0] is x}
        return self

    @classmethod
    def from_state_dict(cls, d: Any) -> OpenTurn:
        """An open turn from :meth:`state_dict`; a field missing or of another type is a ValueError naming it."""
        want = {"format": str, "lines": list, "start": int, "mark": Mapping, "recorder": (list, type(None)),
                "facts": Mapping, "logged": list}
        if isinstance(d, Mapping) and "logged" not in d:  # saved before it: no entry to revise
            d = {**d, "logged": []}
        if not isinstance(d, Mapping) or set(d) != set(want):
            raise ValueError(f"an open turn must be an object with the fields {sorted(want)}")
        for k, t in want.items():
            if not isinstance(d[k], t) or isinstance(d[k], bool):
                raise ValueError(f"open turn field {k!r} has the wrong type")
        if d["format"] not in TURNS:
            raise ValueError(f"open turn field 'format' is {d['format'][:40]!r}, expected one of {', '.join(TURNS)}")
        facts = {"meta": Mapping, "cwd": str, "ids": list, "begun": bool, "added": str, "added_lines": int,
                 "seen": list, "gone": list, "run": str, "links": list, "refused": list,
                 "rewound": str}  # else refused
        for k, t in facts.items():
            if k in d["facts"] and not isinstance(d["facts"][k], t):
                raise ValueError(f"open turn field 'facts.{k}' has the wrong type")
        if not all(isinstance(k, str) for k in (*d["facts"].get("seen", ()), *d["facts"].get("gone", ()))):
            raise ValueError("open turn fields 'facts.seen' and 'facts.gone' must be lists of line keys")
        if not all(claude_code.placed(x) for x in d["facts"].get("links", ())):  # else a KeyError at the next add
            raise ValueError("open turn field 'facts.links' must be a list of Claude Code entry links (type, uuid)")
        if not all(isinstance(i, str) for i in d["facts"].get("ids", ())):  # else a TypeError at the next add
            raise ValueError("open turn field 'facts.ids' must be a list of Gemini CLI message or OpenHands V1 event ids")
        if not all(isinstance(u, str) for u in d["facts"].get("refused", ())):
            raise ValueError("open turn field 'facts.refused' must be a list of Claude Code entry or V1 event ids")
        if not all(isinstance(i, str) for i in d["logged"]):
            raise ValueError("open turn field 'logged' must be a list of history entry ids")
        facts = {**d["facts"], **({"ids": ClosedIds(d["facts"]["ids"])} if "ids" in d["facts"] else {})}
        return cls(d["format"], list(d["lines"]), d["start"], dict(d["mark"]), d["recorder"], facts,
                   list(d["logged"]))


def row(kept: list | None) -> list[Any] | None:
    """A recorder row (MemoryRecorder.mark's value) as JSON."""
    js = lambda s: s.to_json() if s is not None else None  # noqa: E731
    return None if kept is None else [js(kept[0]), kept[1], kept[2], js(kept[3])]


def unrow(kept: list[Any] | None) -> list | None:
    st = lambda s: State.from_json(s) if s is not None else None  # noqa: E731
    return None if kept is None else [st(kept[0]), kept[1], kept[2], st(kept[3])]


def format_of(items: list[Any], turn: OpenTurn | None, fmt: str | None) -> str | None:
    """The live format ``items`` are written in (None: none): ``fmt``, what detect tells of them (its caller's, told
    once: a 2,000-item list's detect takes ~7 ms), or the open turn's where every item is a line of it (a Gemini CLI
    user record or ``$set`` alone, a Codex rollout's bare items after the meta of the layout before the wrapper,
    tell no format)."""
    if turn is not None and fmt != turn.format and all(_line_of(turn.format, x) for x in items):
        return turn.format
    return fmt if fmt in TURNS else None


def _line_of(fmt: str, x: Any) -> bool:
    if not isinstance(x, Mapping):
        return False
    return {"gemini-cli": gemini_cli.is_record, "claude-code": claude_code.is_entry, "codex-exec": codex_exec.is_event,
            "codex": lambda x: codex.is_line(x) or "type" in x or "role" in x or "record_type" in x,
            "openhands": openhands.is_event, "openhands-v1": openhands.is_v1_event,
            live_responses.FORMAT: live_responses.is_item, GEMINI: _is_content}[fmt](x)


def _is_content(x: Mapping[str, Any]) -> bool:
    """Whether ``x`` is a Gemini content (``{"role", "parts": [...]}``), read as one where a scope's open turn is of
    them: a content detect tells no format of (no parts yet), not one whose parts carry a ``type`` (OpenTelemetry's
    GenAI messages, read by their reader: read as Gemini parts, their text was lost)."""
    parts = x.get("parts")
    return isinstance(parts, list) and isinstance(x.get("role"), (str, type(None))) and x.get("role") in gemini.ROLES \
        and not any(isinstance(p, Mapping) and "type" in p for p in parts)


def opens(fmt: str, turn: list[Any], line: Any, facts: Mapping[str, Any]) -> bool:
    """Whether ``line`` closes every turn before it: no line after it changes how the lines before it read."""
    if not isinstance(line, Mapping):
        return False
    if fmt == live_responses.FORMAT:
        return live_responses.opens(turn, line)
    if fmt == GEMINI:  # the reader joins a model content to the model contents right before it, nothing else
        return not (_modelled(line) and _modelled(turn[-1]))
    if fmt == "claude-code":
        if line.get("isSidechain") is True or not isinstance(line.get("message"), Mapping):
            return False
        if isinstance(line.get("uuid"), str) and any(isinstance(e, Mapping) and e.get("uuid") == line["uuid"]
                                                     for e in turn):
            return False  # the entry again (a sidecar's add retried): read with it, once, as the importer reads it
        content = line["message"].get("content")
        if line.get("type") == "user":  # a prompt, not a result (nor a compaction's summary, counted after turns)
            return line.get("isCompactSummary") is not True and not (isinstance(content, list) and any(
                isinstance(b, Mapping) and b.get("type") == "tool_result" for b in content))
        if line.get("type") == "assistant":
            mid = line["message"].get("id")
            return mid is None or mid not in {e["message"].get("id") for e in turn if isinstance(e, Mapping)
                                              and e.get("type") == "assistant" and isinstance(e.get("message"), Mapping)}
        return False
    if fmt == "gemini-cli":
        return gemini_cli.is_message(line) and line["type"] in gemini_cli.TURNS and _key(line.get("id")) not in {
            _key(r.get("id")) for r in turn if gemini_cli.is_message(r)}
    if fmt == "codex":
        item = line.get("payload") if codex.is_line(line) else line
        if marked(facts) and line.get("type") == "turn_context":
            return True
        if marked(facts) and (facts.get("begun") or any(isinstance(e, Mapping) and e.get("type") == "turn_context"
                                                        for e in turn)):
            return False  # a request's outputs may move after its later call (codex._in_response_order)
        if not (codex.is_line(line) and line["type"] == "response_item" and isinstance(item, Mapping)):
            return False
        # an output closed the turn before it until its call's line was needed to read it (numbered.mark: the lines
        # of a file it printed), so a call after the outputs opens the turn now, as a message does
        return item.get("type") == "message" or item.get("type") in codex.CALL_ITEMS and _last_item(turn) in OUTPUTS
    if fmt == "openhands":
        return _openhands_opens(turn, line)
    if fmt == "openhands-v1":
        return _v1_opens(turn, line)
    kind, item = line.get("type"), line.get("item")
    started, ended, last = set(), set(), None
    for e in turn:
        it = e.get("item") if isinstance(e, Mapping) else None
        if isinstance(it, Mapping) and codex_exec.item_type(it) in codex_exec.CALLS:
            started.add(it.get("id"))
            if e.get("type") == "item.completed":
                ended.add(it.get("id"))
        if isinstance(it, Mapping):
            last = (e.get("type"), codex_exec.item_type(it))
    if started - ended:  # a call still runs: what comes may join its turn
        return False
    if kind in codex_exec.STARTS or kind in codex_exec.TURNS:
        return True
    if kind in codex_exec.ITEMS and isinstance(item, Mapping):
        itype = codex_exec.item_type(item)
        return (itype in codex_exec.WORDS and kind == "item.completed") or (
            itype in codex_exec.CALLS and last is not None and last[0] == "item.completed" and last[1] in codex_exec.CALLS)
    return False


def worded(turn: OpenTurn | None) -> bool:
    """Whether ``turn``, a scope's open turn of Gemini contents, ends in model contents holding words: a streamed
    answer's chunk of whitespace alone, added next, joins them as the reader joins it (read_add takes it). A blank
    chunk that opens a turn is said unstored (the add's skipped) and not fed, its memory would be blank, which the
    store refuses; it stays in the open turn, and the chunks after it join it as the reader joins them (until stop
    63 it was refused, and an agent feeding each chunk stopped at it)."""
    if turn is None or turn.format != GEMINI:
        return False
    for x in reversed(turn.lines):
        if not _modelled(x):
            return False
        if any(isinstance(p, Mapping) and isinstance(p.get("text"), str) and p["text"].strip() and not p.get("thought")
               for p in x.get("parts") or ()):
            return True
    return False


def _modelled(x: Any) -> bool:
    """Whether ``x`` is a model's Gemini content (gemini.ROLES reads it as the assistant's)."""
    return isinstance(x, Mapping) and isinstance(x.get("role"), str) and gemini.ROLES.get(x["role"]) == "assistant"


def _last_item(turn: list[Any]) -> str | None:
    """The type of the last message, call or output among a Codex open turn's lines (None: none)."""
    for x in reversed(turn):
        item = x.get("payload") if codex.is_line(x) and x["type"] == "response_item" else None
        if isinstance(item, Mapping) and (item.get("type") == "message" or item.get("type") in (*codex.CALL_ITEMS,
                                                                                                  *OUTPUTS)):
            return item["type"]
    return None


def _openhands_opens(turn: list[Any], line: Mapping[str, Any]) -> bool:
    """OpenHands 0.x: the reader reads a response's calls all at its first action (a later action of it adds
    nothing) and answers a text-mode call by its observation's ``cause`` alone (the action's event id). The agent
    acts again only once its last action's observation came (OpenHands' controller waits for it; a response's queued
    calls come one a step), so its next action closes the turn unless it is a later call of a response read in it.
    A user's event (a message, a command run in the UI) may come while a call runs, or between a response's calls
    (OpenHands runs the queued ones after it): it closes the turn only once every call acted in it has its observation
    and every call its responses listed has come. Observations and bookkeeping actions (NOT_CALLS) never do: they add
    no message of their own before a later call (and an agent's finish gets no observation: the next action closes)."""
    if not isinstance(line.get("action"), str) or line["action"] in openhands.NOT_CALLS - {"message", "system"}:
        return False
    listed: set[str] = set()  # the call ids of the responses read in the turn
    acted: list[tuple[Any, str | None]] = []  # a call action's (event id, tool call id)
    causes, answered = set(), set()  # what the observations answer: by cause (an event id), by tool call id
    for e in turn:
        if isinstance(e, Mapping) and "observation" in e:
            causes.add(_event_id(e.get("cause")))
            answered.add(_tool_call_id(e))
        elif isinstance(e, Mapping) and _is_call(e):
            acted.append((_event_id(e.get("id")), _tool_call_id(e)))
            listed |= {_tool_call_id(e)} | _response_calls(e)
    for found in (causes, answered, listed):
        found.discard(None)
    if line.get("source") != "user":
        return _tool_call_id(line) not in listed if _is_call(line) else True
    return all(i in causes or c in answered for i, c in acted if i is not None or c is not None) \
        and listed <= answered | {c for _, c in acted}


def _key(v: Any) -> Any:
    """An id as a set member, equal where it is (==): a list or an object as its JSON (a line's id of another type
    was "TypeError: unhashable type" here, before the reader, which takes it, read the line)."""
    return ("json", json.dumps(v, sort_keys=True, default=str)) if isinstance(v, (list, dict, Mapping)) else v


def _is_call(e: Mapping[str, Any]) -> bool:
    """An OpenHands 0.x agent action the reader reads as a tool call."""
    return isinstance(e.get("action"), str) and e["action"] not in openhands.NOT_CALLS and e.get("source") != "user"


def _event_id(v: Any) -> int | str | None:
    return v if isinstance(v, (int, str)) and not isinstance(v, bool) else None


def _tool_call_id(e: Mapping[str, Any]) -> str | None:
    meta = e.get("tool_call_metadata")
    found = meta.get("tool_call_id") if isinstance(meta, Mapping) else None
    return None if found is None else str(found)


def _response_calls(e: Mapping[str, Any]) -> set[str]:
    """The call ids of the model response an action's metadata holds (the reader reads them all at its first)."""
    meta = e.get("tool_call_metadata")
    response = meta.get("model_response") if isinstance(meta, Mapping) else None
    choices = response.get("choices") if isinstance(response, Mapping) else None
    message = choices[0].get("message") if isinstance(choices, list) and choices and isinstance(choices[0], Mapping) \
        else None
    calls = message.get("tool_calls") if isinstance(message, Mapping) else None
    return {str(c["id"]) for c in calls if isinstance(c, Mapping) and c.get("id") is not None} \
        if isinstance(calls, list) else set()


def _v1_opens(turn: list[Any], line: Mapping[str, Any]) -> bool:
    """OpenHands V1: results name their call (``tool_call_id``), and consecutive ActionEvents of one
    ``llm_response_id`` are one message: so an event that reads as a message of its own closes the turn, unless it
    is an ActionEvent of a response read in it (a parallel call) or a result (read with its call, whose arguments
    say which file's lines it printed: numbered.mark). An event read as none (a state update, a
    condensation) may sit between a response's ActionEvents, which still join across it."""
    if line.get("kind") == "ActionEvent" and line.get("llm_response_id") is not None and _key(line["llm_response_id"]) in {
            _key(e.get("llm_response_id")) for e in turn if isinstance(e, Mapping) and e.get("kind") == "ActionEvent"}:
        return False
    try:
        messages = openhands_v1.to_chat([line], "data").messages
    except SAMFileError:
        return False  # a bad event: the read of the turn names it
    # a result stays in its call's turn: the reader reads the lines it shows by its call (numbered.mark)
    return any(m.get("role") != "tool" for m in messages)


def marked(facts: Mapping[str, Any]) -> bool:
    """Whether the rollout's meta says its requests are marked (codex.marks_requests)."""
    return "meta" in facts and codex.marks_requests([facts["meta"]])


def head(fmt: str, line: Any, first: bool) -> dict[str, Any] | None:
    """What of a session's first line (``first``: the add's first line) its reader needs when it reads later lines
    (None: ``line`` is no such line): Codex's session_meta as its version (the instructions are read once, as the
    policy) or the meta of the layout before the wrapper, Gemini CLI's metadata line (its ``projectHash``, which the
    project root is found by) without a ``.json``'s messages."""
    if fmt == "codex":
        if first and codex.is_old_meta(line):
            return {"id": line["id"], "timestamp": line["timestamp"]}
        if codex.is_line(line) and line["type"] == "session_meta" and isinstance(line["payload"], Mapping):
            return {"type": "session_meta", "payload": {"cli_version": line["payload"].get("cli_version")}}
    if fmt == "gemini-cli" and gemini_cli.is_header(line):
        return {k: v for k, v in line.items() if k != "messages"}
    return None


def learn(fmt: str, facts: dict[str, Any], lines: list[Any]) -> None:
    """What ``lines`` (read in a scope's open turn) say that later adds need: the first line's :func:`head` (a later
    session_meta, a fork's copy, is no policy), kept as ``meta`` once; whether a Codex rollout's lines held a
    turn_context (``begun``): a rollout of 0.3x-0.77 is read in file order up to its first one, as a later Codex's
    (a message or a call after an output closes a turn), and by requests from there (only a turn_context does; one without
    any, an early 0.3x's, closed no turn, its open turn read again whole at each add up to the cap)."""
    if fmt == "codex" and not facts.get("begun") and any(codex.is_line(x) and x["type"] == "turn_context"
                                                         for x in lines):
        facts["begun"] = True
    if "meta" in facts:
        return
    for i, x in enumerate(lines):
        if (found := head(fmt, x, i == 0)) is not None:
            facts["meta"] = found
            return


def chat(fmt: str, lines: list[Any], facts: Mapping[str, Any]) -> Chat:
    """The chat of an open turn's lines, as the format's reader reads them after the lines before: the first line's
    facts (``meta``) put back in front, and the working directory the lines before told (``cwd``) on its first
    message, as the reader tells it on the message after it changes (``Chat.cwd``: the directory after the lines),
    the lines its outputs showed marked again in it (numbered.mark)."""
    if "meta" in facts and not (lines and head(fmt, lines[0], True) is not None):
        lines = [facts["meta"], *lines]
    if not lines:
        return Chat()
    try:
        read = to_chat(lines, "data", fmt)
    except SAMFileError as err:
        raise ValueError(str(err)) from None
    cwd = facts.get("cwd", "")
    told = bool(cwd and read.messages) and CWD not in read.messages[0]
    read.known_before(cwd)
    # the reader marked the lines its outputs showed before it knew the directory (numbered.mark): a file named
    # relative to it (../lib/x.py) was no file a call naming it whole took lines of, as the importer finds it is
    return mark(read) if told else read


def calls_cwd(turn: OpenTurn | None, cwd: str, calls: list[ToolCall]) -> str | None:
    """The working directory ``calls`` about to be made are judged in where they reveal it themselves, as the reader
    finds it on their message (CWD_BY_CALLS): a Gemini CLI session's project root, found from their arguments by the
    hash of the metadata line the scope keeps, while the conversation has no directory (``cwd``). None: the one the
    lines told (TranscriptState.call_state)."""
    if cwd or turn is None or turn.format != "gemini-cli" or not isinstance(turn.facts.get("meta"), Mapping):
        return None
    return gemini_cli.calls_root(turn.facts["meta"], [c.arguments for c in calls if c.valid]) or None


def split(fmt: str, old: list[Any], new: list[Any], facts: Mapping[str, Any]) -> int:
    """Where the lines ``old + new`` are cut: the index of the last line of ``new`` that opens a turn (the lines
    before it are closed), 0 where none does."""
    cut, turn = 0, list(old)
    for i, line in enumerate(new):
        if turn and opens(fmt, turn, line, facts):
            cut, turn = len(old) + i, []
        turn.append(line)
    return cut


def retried(fmt: str, turn: list[Any], facts: Mapping[str, Any], new: list[Any], added: str) -> list[Any]:
    """``new`` without the lines an add sent again (a sidecar retrying an add whose answer it lost), where the lines
    say they were written once (the importer reads the file, which holds each once): an add of the lines the last
    add of the scope gave (``facts["added"]`` is ``added``, this add's :func:`digest`), one of them at least a line
    Codex writes once (:func:`_once`: a rollout line with its time to the millisecond, a call or its output by its
    call_id, codex exec's item.started or item.completed of an item id, its turn.completed with its token counts; an
    add that starts a run holding such a turn.completed, :func:`_turn_end`), is dropped whole, and an add opening
    with them (``facts["added_lines"]`` of them: a sidecar sending every line not yet
    answered, those written since its lost answer too) drops them; and a
    call, an output or a codex exec item event equal to one the open turn ``turn`` holds (since its run's
    thread.started) is dropped wherever it comes, and so is any line Codex writes once among the scope's last
    SEEN_LINES read (``facts["seen"]``, :func:`remember`; codex exec's since its run's thread.started): a resend of an
    add that is not the last, or of part of the last, was read again. A repeated command is a new call (a new call_id, a new time), so it
    is read. A codex exec run's start sent again (the thread.started of the scope's last run up to a turn.completed
    the scope read in that run, :func:`_resent_run`) is dropped wherever it comes: until 2026-12-06 a thread.started began a run again, and
    the lines after it were read again whole. Lines that do not say so (a bare message of the layout before the
    wrapper, a turn event, a run's thread.started with first items but no turn.completed read, which a resumed run
    prints again with its events from item_0) are read as they come: the agent may write them twice."""
    if fmt not in ("codex", "codex-exec"):
        return new
    n = facts.get("added_lines")  # the last add's: a sidecar may send them again with lines written since
    n = n if isinstance(n, int) and not isinstance(n, bool) and n > 0 else len(new)
    last = new[:n] if n < len(new) else new
    run = fmt == "codex-exec" and any(isinstance(x, Mapping) and x.get("type") in codex_exec.STARTS for x in last)
    if facts.get("added") == (added if last is new else digest(last)) and (
            not run or any(_turn_end(x) for x in last)) and any(_once(fmt, x) for x in last):
        new = new[len(last):]
    held, out, seen = list(turn), [], set(facts.get("seen", ()))
    skip = 0
    for i, x in enumerate(new):
        if skip:
            skip -= 1
            continue
        if fmt == "codex-exec" and isinstance(x, Mapping) and x.get("type") in codex_exec.STARTS:
            skip = _resent_run(new, i, seen, facts.get("run"))
            if skip:  # the run's start sent again: told by its turn.completed, read (and so its lines before it)
                skip -= 1
                continue
            seen = set()  # a run begins (a resumed one numbers its items from item_0 again)
        if _once(fmt, x, called=True) and x in (held[_run_start(held):] if fmt == "codex-exec" else held) or (
                _kept(fmt, x) and line_key(x) in seen):
            continue
        held.append(x)
        out.append(x)
    return out


def _turn_end(x: Any) -> bool:
    """Whether ``x`` is codex exec's turn.completed with its token counts: a line no resumed run prints alike (its
    turn reads the thread before it, so its counts differ), where its thread.started and first items are the same
    (:func:`retried`)."""
    return isinstance(x, Mapping) and x.get("type") == "turn.completed" and isinstance(x.get("usage"), Mapping) \
        and bool(x["usage"])


def _resent_run(new: list[Any], i: int, seen: set[str], run: Any) -> int:
    """How many lines of ``new`` from its thread.started at ``i`` are that run's start sent again: up to its first
    turn.completed (before another run's start) when the scope read that very line in its run (``seen``,
    :func:`remember`), so every line before it in the file too (a sidecar sends them in order); 0 when none is (a
    resumed run: the same thread and first items, a turn.completed of other counts), which is read. The
    thread.started must be the one that began the scope's last run (``run``, its :func:`line_key`): a turn.completed
    holds no id, only token counts, and a new run of another thread whose counts came out the same was dropped whole
    (a scope whose facts predate ``run`` reads it, as before 2026-12-06)."""
    if run is None or line_key(new[i]) != run:
        return 0
    for j in range(i + 1, len(new)):
        x = new[j]
        if isinstance(x, Mapping) and x.get("type") in codex_exec.STARTS:
            return 0
        if _turn_end(x):
            return j - i + 1 if line_key(x) in seen else 0
    return 0


SEEN_LINES = 256  # lines written once a scope's facts keep the keys of (:func:`remember`): a resend comes soon after


def line_key(x: Any) -> str:
    """A line as a short key to tell it again by (64 bits of its digest): :func:`remember` keeps many."""
    return digest([x])[:16]


def remember(fmt: str, facts: dict[str, Any], lines: list[Any]) -> None:
    """Keep in ``facts["seen"]`` the keys of the last SEEN_LINES lines an add read that Codex writes once
    (:func:`_kept`; codex exec's since its run's thread.started), so that a resend of them is dropped by
    :func:`retried` wherever it comes: a retry that came after a later add, or one of part of an add (the last add's
    digest told only the whole add, or an add opening with it), past the open turn too (which told calls and outputs
    alone); and in ``facts["run"]`` the key of the last run's thread.started (the run a resend of its start
    belongs to)."""
    if fmt not in ("codex", "codex-exec"):
        return
    seen = list(facts.get("seen", ()))
    for x in lines:
        if fmt == "codex-exec" and isinstance(x, Mapping) and x.get("type") in codex_exec.STARTS:
            seen, facts["run"] = [], line_key(x)  # the run a resend of its start belongs to (:func:`_resent_run`)
        if _kept(fmt, x):
            seen.append(line_key(x))
    facts["seen"] = seen[-SEEN_LINES:]


def _kept(fmt: str, x: Any) -> bool:
    """Whether :func:`remember` keeps ``x``'s key: a line that is a memory's and that Codex writes once, told by its
    content: a call or an output by its call_id, codex exec's item event by its item id, a rollout message by its time
    (to the millisecond, with its words). A rollout's bookkeeping lines (a turn_context, a token count, a reasoning
    item) are not kept: Codex may write one alike again, and a turn_context read again closes the turn it opens."""
    if fmt == "codex" and codex.is_line(x) and x.get("type") == "response_item" and isinstance(x.get("payload"), Mapping) \
            and x["payload"].get("type") == "message":
        return _once(fmt, x)
    return _once(fmt, x, called=True)


def digest(lines: list[Any]) -> str:
    """An add's lines as one string to tell them again by (:func:`retried`), kept with the open turn's facts."""
    return hashlib.sha1(json.dumps(lines, sort_keys=True, default=str).encode()).hexdigest()


def _once(fmt: str, x: Any, called: bool = False) -> bool:
    """Whether ``x`` is a line the agent writes once (:func:`retried`); ``called``: by its call or item id alone (a
    rollout line's time is taken where the add repeats the last add's lines, or the whole line, time and all, is
    one the scope read, :func:`remember`)."""
    if not isinstance(x, Mapping):
        return False
    if fmt == "codex-exec":
        item = x.get("item")
        return _turn_end(x) or x.get("type") in ("item.started", "item.completed") and isinstance(item, Mapping) \
            and isinstance(item.get("id"), str) and bool(item["id"])
    if codex.is_line(x) and not called and isinstance(x.get("timestamp"), str) and x["timestamp"]:
        return True
    item = x.get("payload") if codex.is_line(x) and x.get("type") == "response_item" else x
    return isinstance(item, Mapping) and item.get("type") in (*codex.CALL_ITEMS, *OUTPUTS) \
        and isinstance(item.get("call_id"), str) and bool(item["call_id"])


def _run_start(lines: list[Any]) -> int:
    """Where the last codex exec run among ``lines`` begins (its thread.started; 0: none)."""
    return next((i for i in range(len(lines) - 1, -1, -1)
                 if isinstance(lines[i], Mapping) and lines[i].get("type") in codex_exec.STARTS), 0)


def latest(fmt: str, lines: list[Any]) -> list[Any]:
    """An open turn's lines as it keeps them: a Gemini CLI message written again (as its calls finish, each version
    holding every result so far) kept once, its latest version at the place of its first, which is how the reader
    reads it (gemini_cli.replay): kept whole, the open turn's bytes grew with the square of a message's results.
    A version after a ``$rewindTo`` record stays where it is (the rewind may have removed the message: then it is
    read anew, at its own place)."""
    if fmt != "gemini-cli":
        return lines
    out: list[Any] = []
    at: dict[str, int] = {}  # a message id -> its place in ``out``, since the last rewind
    for x in lines:
        if isinstance(x, Mapping) and "$rewindTo" in x:
            at = {}
        elif gemini_cli.is_message(x) and isinstance(x.get("id"), str):
            if x["id"] in at:
                out[at[x["id"]]] = x
                continue
            at[x["id"]] = len(out)
        out.append(x)
    return out


def read_cut(fmt: str, old: list[Any], new: list[Any], facts: Mapping[str, Any]) -> tuple[dict[str, Any], int]:
    """(``facts`` with what the open turn's lines ``old`` and an add's ``new`` say (:func:`learn`), where ``old +
    new`` are cut (:func:`split`)): worked out once an add, for :func:`over` and the read (each worked them out)."""
    learned = dict(facts)
    learn(fmt, learned, [*old, *new])
    return learned, split(fmt, old, new, learned)


def over(turn: OpenTurn, new: list[Any], cut: int) -> str | None:
    """Why the open turn closes where it is before ``new`` is read (None: it does not): with ``new`` it would hold
    more than MAX_OPEN_LINES lines or MAX_OPEN_BYTES of them as JSON (a Codex request of ~2,500 parallel calls, a
    Claude Code response of large results). One turn longer than that cannot be read again at every add, and a
    refusal would lose the lines of a sidecar that goes on: so the lines before stay as read so far, and the add's
    are read after them as if the turn had ended. ``cut``: where the lines are cut (:func:`read_cut`)."""
    if not turn.lines:
        return None
    held = latest(turn.format, [*turn.lines, *new][cut:])
    size = turn.size(held) if len(held) <= MAX_OPEN_LINES else 0
    if len(held) <= MAX_OPEN_LINES and size <= MAX_OPEN_BYTES:
        return None
    what = f"{len(held)} lines" if len(held) > MAX_OPEN_LINES else f"{size:,} bytes of lines"
    return (f"data: the scope's open turn would hold {what}, more than {MAX_OPEN_LINES} lines or {MAX_OPEN_BYTES:,} "
            "bytes (each add reads it again): it closed where it was, before these lines, which were read as a new "
            "turn's; its memories stay as read so far, and where these lines continue it they read apart from it "
            "(a response's later call as a turn of its own, a Gemini CLI message's new version stored again): "
            "sam-data transcripts reads the session file whole")


class ClosedIds(list):
    """Gemini CLI's closed message ids (``facts["ids"]``), with a set of them kept as the list grows (it is only
    extended, in place, by :func:`close`): :func:`rewritten` built a set of the whole list at every add, a cost that
    grew with the session. Saved, copied and compared as the list it is: a copy has a set of its own (copy.copy
    shared it, so the copy held the ids the original took after it), and a change other than one at the end (an
    id removed, replaced or put before others) makes the set anew at the next look-up (it kept a removed id)."""

    def __init__(self, ids: Iterable[Any] = ()) -> None:
        super().__init__(ids)
        self._set: set[Any] = set()
        self._n = 0

    def holds(self, i: Any) -> bool:
        if self._n < len(self):
            self._set.update(self[self._n:])
            self._n = len(self)
        return i in self._set

    def __copy__(self) -> ClosedIds:
        return ClosedIds(self)

    def __deepcopy__(self, memo: dict) -> ClosedIds:
        return ClosedIds(self)  # its ids are strings

    def _changed(self) -> None:
        self._set, self._n = set(), 0

    # a change other than at the end (append, extend and += keep the set): the set made anew at the next look-up
    def __setitem__(self, *args: Any) -> None:
        super().__setitem__(*args)
        self._changed()

    def __delitem__(self, *args: Any) -> None:
        super().__delitem__(*args)
        self._changed()

    def __imul__(self, n: Any) -> ClosedIds:
        super().__imul__(n)
        self._changed()
        return self

    def insert(self, *args: Any) -> None:
        super().insert(*args)
        self._changed()

    def remove(self, *args: Any) -> None:
        super().remove(*args)
        self._changed()

    def pop(self, *args: Any) -> Any:
        out = super().pop(*args)
        self._changed()
        return out

    def clear(self) -> None:
        super().clear()
        self._changed()


def rewritten(fmt: str, new: list[Any], facts: Mapping[str, Any]) -> str | None:
    """Why an add is refused for writing again a message of a closed turn (None: it is not): Gemini CLI's message
    of an id a later message followed."""
    if fmt != "gemini-cli":  # facts["ids"] holds OpenHands V1's event ids too (live_v1): not copied at every add
        return None
    ids = facts.get("ids", ())
    closed = ids if isinstance(ids, ClosedIds) else ClosedIds(ids)
    for i, r in enumerate(new):
        if fmt == "gemini-cli" and gemini_cli.is_message(r) and isinstance(r.get("id"), str) and closed.holds(r["id"]):
            return (f"data[{i}]: Gemini CLI message {str(r['id'])[:60]!r} written again after a later message, an "
                    "update or a delete closed its turn: an earlier add stored it, so its new version cannot replace it; add the "
                    "session's lines as Gemini CLI appends them, or convert its session file (sam-data transcripts)")
    return None


def close(fmt: str, facts: dict[str, Any], lines: list[Any]) -> None:
    """Note the closed lines' Gemini CLI message ids (a later version of one is :func:`rewritten`), or the links of
    Claude Code's (:func:`keep_links`). Called once the add (or update, delete) is stored, on the facts of the turn
    that replaces the open one: the lists are extended in place (see :func:`keep_links`)."""
    if fmt == "gemini-cli":
        if not isinstance(facts.get("ids"), ClosedIds):  # a loaded turn's list: its set kept from now on
            facts["ids"] = ClosedIds(facts.get("ids", ()))
        facts["ids"].extend(r["id"] for r in lines if gemini_cli.is_message(r) and isinstance(r.get("id"), str))
    elif fmt == live_v1.FORMAT:
        live_v1.keep(facts, lines)
    keep_links(fmt, facts, lines)


def keep_links(fmt: str, facts: dict[str, Any], lines: list[Any]) -> None:
    """Keep in ``facts["links"]`` what of a Claude Code session's stored lines tells its branches (claude_code.link:
    ids, parents, message ids; not the words), for :func:`left_behind`: an add reads the open turn's lines alone.
    Extended in place: the list was copied whole at every closed turn, quadratic in a session added a line at a time
    (the turn it came from is replaced; a caller that may keep that turn, an add not yet stored, copies it first)."""
    if fmt == "claude-code":
        facts.setdefault("links", []).extend(x for e in lines if (x := claude_code.link(e)) is not None)


def _branches(facts: Mapping[str, Any], turn: list[Any], new: list[Any]) -> bool:
    """Whether a main-chain line of ``new`` names a parent other than the entry stored last or a line of ``new``
    before it (a parent no add gave too): only then can it leave a stored turn (:func:`left_behind` reads them all)."""
    last = next((e["uuid"] for e in reversed(turn) if claude_code.placed(e)), None)
    if last is None and facts.get("links"):
        last = facts["links"][-1]["uuid"]
    known = {last, None}
    for e in new:
        if claude_code.placed(e):
            if e.get("parentUuid") not in known or e.get("logicalParentUuid") not in known:
                return True
            known.add(e["uuid"])
    return False


def left_behind(fmt: str, facts: Mapping[str, Any], turn: list[Any], new: list[Any]) -> str | None:
    """Why an add of Claude Code lines is refused (None: it is not): a line of ``new`` goes on from an entry an
    earlier add stored (a rewind, an edited prompt, a retried response) so that turns those adds stored lie on the
    branch the conversation left, which the importer leaves out of the file (claude_code.abandoned), and an add
    cannot take their memories back. Read on the links of the stored lines (``facts["links"]``), the open turn's
    ``turn`` and ``new``; only where a line's parent is a stored entry other than the one written last (else no
    stored turn can be left)."""
    if fmt == live_v1.FORMAT:  # a head moved back (the SDK's history tree): live_v1
        return live_v1.left_behind(facts, turn, new)
    if fmt != "claude-code" or not new or not _branches(facts, turn, new):
        return None
    stored = [*facts.get("links", ()), *(x for e in turn if (x := claude_code.link(e)) is not None)]
    added = [(i, x) for i, e in enumerate(new) if (x := claude_code.link(e)) is not None]
    uuids = {x["uuid"] for x in stored}
    last = stored[-1]["uuid"] if stored else None
    points = {p for _, x in added for p in (x.get("parentUuid"), x.get("logicalParentUuid")) if p in uuids and p != last}
    if not points:
        return None
    at = {}
    for k, x in enumerate(stored):
        at.setdefault(x["uuid"], k)
    if all(_one_response_after(stored, at[p]) for p in points):  # parallel calls' results, each under its call
        return None
    before = set(claude_code.abandoned(stored))
    left = [j for j in claude_code.abandoned([*stored, *(x for _, x in added)]) if j < len(stored) and j not in before]
    if not left:
        return None
    i, point = next((i, p) for i, x in added for p in (x.get("parentUuid"), x.get("logicalParentUuid"))
                    if p in uuids and p != last)
    first = stored[left[0]]
    said = "a response line" if first["type"] == "assistant" else "a result" if claude_code.holds_results(first) \
        else "a prompt"
    return (f"data[{i}]: this Claude Code entry goes on from entry {point[:60]!r}, which an "
            f"earlier add stored, leaving {len(left)} later stored entr{'y' if len(left) == 1 else 'ies'} (the first "
            f"{said} {first['uuid'][:60]!r}) on a branch "
            "the conversation left (a rewind, an edited prompt, a retried response: the importer leaves them out): "
            "an add cannot take their memories back (later calls would be traced to them); delete the run's "
            "memories (delete_all) and add the session's lines again from its start in one add, or convert its "
            "session file (sam-data transcripts)")


def deciding(turn: OpenTurn | None, tracker: TranscriptState, call: Any = None) -> TranscriptState:
    """The conversation ``call`` about to be made (None: a decision_point's) is decided after: ``tracker``, or,
    where the scope's open turn ends in the assistant's words that the call will join (a preamble), a copy of it
    without them: the importer reads the words and the call after them as one turn and decides before the words
    (formats.base.preamble; toolstate.live_state alike), where the tracker fed the words alone decided at them.
    The call joins them in a turn of Responses items where live_responses.joins says so, and in one of a Codex
    rollout's lines, codex exec's events or Gemini contents whatever shape the call is given in (JOINS_NEXT_CALL; until
    2026-12-06 decided at the words). A Claude Code call given as its line is decided before its response's first
    line in the open turn (claude_code.response_start: its message.id), whatever the turn holds after it (words, an
    earlier call and its result, a subagent's lines), as the importer joins them (until 2026-12-06 such a line was
    no call, then joined the words the turn ended in alone). An OpenAI chat
    agent's words (a bare message joins the open turn) and its call in chat's shape are read apart, as its tool_calls
    message is added: decided at the words, as before 2026-12-06."""
    response = claude_code.response_start(turn.lines, call) if turn is not None and turn.format == "claude-code" \
        else None
    if response is not None:  # a Claude Code call's line: decided before its response, the lines since kept out
        messages = chat(turn.format, turn.lines[:response], turn.facts).messages if response else []
    elif turn is None or not turn.lines or not (turn.format in JOINS_NEXT_CALL or turn.format == live_responses.FORMAT
                                                and live_responses.joins(turn.lines, call)):
        return tracker
    else:
        read = chat(turn.format, turn.lines, turn.facts)
        if not preamble(turn.format, read):
            return tracker
        messages = read.messages[:-1]
    work, m = fork(tracker), turn.mark
    work.rollback({**m, "stack": list(m["stack"]), "cons": dict(m["cons"]), "calls": dict(m["calls"])})
    for i, message in enumerate(messages):
        work.feed(message, f"the open turn's message {i}")
    return work


def _one_response_after(stored: list[Mapping[str, Any]], k: int) -> bool:
    """Whether every stored turn after the link ``stored[k]`` is a line of its response (its ``message.id``, under
    a line from ``k`` on or under ``stored[k]``'s parent) or a result under one, other entries no turns: then a line
    going on from ``stored[k]`` leaves none of them (claude_code.abandoned keeps a response's lines and their results
    with any of them), as each result of parallel calls goes on from its own call's line. Saves running
    claude_code.abandoned twice on the whole session at each such line, which made a line-by-line session of
    parallel calls quadratic (1,601 lines: 4.2 s before the links, 11.6 s with them)."""
    head = stored[k]
    said = head.get("message") if head["type"] == "assistant" else None
    mid = said.get("id") if isinstance(said, Mapping) else None
    if mid is None:
        return False
    lines, parents = {head["uuid"]}, {head["uuid"], head.get("parentUuid")}
    for x in reversed(stored[:k]):  # the response's lines before it (a result may answer any of them)
        if x["type"] == "assistant" and isinstance(x.get("message"), Mapping) and x["message"].get("id") == mid:
            lines.add(x["uuid"])
        elif x["type"] in claude_code.TURNS and not claude_code.holds_results(x) or "attachment" in x:
            break
    for x in stored[k + 1:]:
        said = x.get("message") if isinstance(x.get("message"), Mapping) else {}
        if x["type"] == "assistant" and said.get("id") == mid and x.get("parentUuid") in parents:
            lines.add(x["uuid"])
        elif not (x["type"] == "user" and claude_code.holds_results(x) and x.get("parentUuid") in lines) and (
                x["type"] in claude_code.TURNS or "attachment" in x):
            return False
        parents.add(x["uuid"])
    return True


def replays(fmt: str, facts: Mapping[str, Any], turn: list[Any], new: list[Any]) -> list[Any]:
    """``new`` without the Claude Code turns that repeat one written before them (claude_code's replay: same type,
    time, parent and message under a new uuid, a compaction's copies of earlier entries, or the same entry again, a
    resumed session's): the importer reads each once (claude_code.to_chat counts the repeats), but an add reads the
    open turn's lines alone, so a copy of a line an earlier add closed was stored again, and one kept in the open
    turn was read again apart from its original at the next add. Read on the stored lines' links
    (``facts["links"]``), the open turn's ``turn`` and ``new``, only for a line no later than one before it (a copy
    repeats an earlier time)."""
    if fmt != "claude-code":
        return new
    last = next((e for e in reversed(turn) if claude_code.placed(e)), None) or (facts.get("links") or [{}])[-1]
    latest = last.get("timestamp") if isinstance(last.get("timestamp"), str) else ""
    mine = []
    for k, e in enumerate(new):
        x = claude_code.link(e)
        stamp = x.get("timestamp") if x is not None else None
        if isinstance(stamp, str):
            if stamp <= latest and claude_code.replay(x) is not None:
                mine.append((k, x))
            latest = max(latest, stamp)
    if not mine:
        return new
    near = {(x["type"], x["timestamp"], x.get("parentUuid")) for _, x in mine}
    before = [*facts.get("links", ()), *(x for e in turn if (x := claude_code.link(e)) is not None)]
    seen = {claude_code.replay(x) for x in before if (x["type"], x.get("timestamp"), x.get("parentUuid")) in near}
    drop = set()
    for k, e in enumerate(new):
        x = claude_code.link(e)
        if x is None or (x["type"], x.get("timestamp"), x.get("parentUuid")) not in near:
            continue
        if (key := claude_code.replay(x)) in seen:
            drop.add(k)
        seen.add(key)
    return [e for k, e in enumerate(new) if k not in drop]


def off_refused(fmt: str, facts: Mapping[str, Any], new: list[Any]) -> str | None:
    """Why an add of Claude Code lines is refused (None: it is not) because a line goes on from an entry an earlier
    add gave and :func:`left_behind` refused (``facts["refused"]``: the uuids of such entries and of those after
    them). A sidecar goes on adding the session's next lines after a refusal; their parent is then an entry the scope
    never stored, which the reader takes for a link the file lacks (a resumed session's) and reads as going on from
    the entry stored last: the branch the rewind began was stored on the one it left, the rewound prompt lost."""
    if fmt == live_v1.FORMAT:
        return live_v1.off_refused(facts, new)
    gone = set(facts.get("refused", ())) if fmt == "claude-code" else set()
    for i, e in enumerate(new):
        if gone and claude_code.placed(e):
            point = next((p for p in (e.get("parentUuid"), e.get("logicalParentUuid")) if p in gone), None)
            if point is not None:
                return (f"data[{i}]: this Claude Code entry goes on from entry {str(point)[:60]!r}, which an earlier "
                        "add was refused for (it went on from an entry stored before turns an add had stored: a "
                        "rewind, an edited prompt, a retried response), so it would be read on the branch the "
                        "conversation left; delete the run's memories (delete_all) and add the session's lines "
                        "again from its start in one add, or convert its session file (sam-data transcripts)")
    return None


def refuse(fmt: str, facts: dict[str, Any], new: list[Any], turn: Sequence[Any] = ()) -> None:
    """Note in ``facts["refused"]`` the entries of a refused add (:func:`left_behind`, :func:`off_refused`), so that
    the lines a sidecar adds after them are refused alike, not read on the stored branch; for Gemini CLI, whose
    messages name no parent, the refused rewind itself (:func:`after_rewind`). ``turn``: the open turn's lines (an
    OpenHands V1 event of them or of an earlier add, sent again, is stored, not refused: live_v1.refuse)."""
    if fmt == "claude-code":
        facts["refused"] = [*facts.get("refused", ()), *(e["uuid"] for e in new if claude_code.placed(e))]
    elif fmt == live_v1.FORMAT:
        live_v1.refuse(facts, new, turn)
    elif fmt == "gemini-cli" and "rewound" not in facts:
        facts["rewound"] = next((str(r["$rewindTo"]) for r in new if isinstance(r, Mapping) and "$rewindTo" in r), "")


def after_rewind(fmt: str, facts: Mapping[str, Any]) -> str | None:
    """Why an add of Gemini CLI lines is refused (None: it is not) because an earlier add's $rewindTo of a stored
    message was (gemini_cli.rewind_elsewhere): the lines a sidecar adds after it are the new branch, and their
    messages name no parent, so they were read after the turns the rewind removed, as if it had not been written."""
    if fmt != "gemini-cli" or "rewound" not in facts:
        return None
    return (f"data: an earlier add of this session's lines was refused for its $rewindTo of message "
            f"{facts['rewound'][:60]!r}, which an earlier add stored: these lines go on from the rewound conversation "
            "and would be read after the turns it removed; delete the run's memories (delete_all) and add the "
            "session's lines again from its start in one add, or convert its session file (sam-data transcripts)")


def fork(t: TranscriptState) -> TranscriptState:
    """A copy of a tracker to feed an add into, swapped in once the add is stored (kept apart on failure): its lists
    and dicts copied, the events shared but the last (a tool call revises it in place)."""
    s = TranscriptState.__new__(TranscriptState)
    s.__dict__.update(vars(t))
    for k in ("events", "_norms", "stack", "invalid_arguments", "unmatched_results", "writes", "shown"):
        setattr(s, k, list(getattr(t, k)))  # shown too: a refused add's lines were left in the scope's (unloadable)
    s.cons, s._call_names, s._hits = dict(t.cons), dict(t._call_names), dict(t._hits)
    if s.events:
        s.events[-1] = dict(s.events[-1])
    return s
