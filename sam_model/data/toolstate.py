"""The labelling rule of tool-call conversations: the spec's running state, its decision points and labels.

``../shared/spec/tool-transcripts.md`` derives a task state and retrieval labels from what an agent's LLM API
saw and said; this module is that rule, and only that rule (it reproduces
``tau-bench-airline-first20.golden.jsonl`` through the importer). The rule is the one of the SGD adapter with
tool calls in place of service calls: at a tool call, each argument value that the current event does not say is
traced back to the earlier event that first said it; that event is the label.

It reads conversations as OpenAI chat messages (``system``/``user``/``assistant`` with ``tool_calls``/``tool``);
readers of other log formats (:mod:`sam_model.data.formats`) turn their logs into these messages first. Files,
splits and the CLI live in :mod:`sam_model.data.transcripts`; run-time modules (the scoped memory, the
integrations, the metrics) import this module only.

**An extension of the spec for formats that flag failures.** The spec reads ``last_action_result`` from a tool
result's words alone (``error...`` → ``name: error (reason)``), all OpenAI chat allows, since it has no failure
flag. Most other formats do flag a failed call: Anthropic's ``tool_result`` ``is_error``, Bedrock Converse's (and
Strands') ``toolResult`` ``status: "error"``, LangChain's ``ToolMessage.status == "error"``, tau2's tool message
``error``, OpenHands' error observations and failed commands (V1's ``is_error`` observations, agent errors and
rejected calls), Gemini's ``{"error": ...}`` response, a Responses ``mcp_call`` ``error``, the OpenAI Agents SDK's
fixed answer for a tool that raised, and an OpenTelemetry ``execute_tool`` span that ended in an error. A failed call whose words
do not start with "error" (``Document not found: ...``, ``Not allowed: fare class``) read ``name: ok``: the state
said the last action succeeded when it failed, and uncertainty after a failed action is what the memory is searched
by. So each reader sets ``"is_error": true`` on the chat tool message of a flagged result, and such a result reads
``name: error (reason)`` by the spec's own rule, the reason from its words; the event's text stays the tool's words.
A result without the flag, and so every OpenAI chat transcript (no such field), reads exactly as the spec says; a
chat tool message that carries ``is_error`` itself (a logger's, a ScopedMemory.add caller's) is read as the readers'
are, and one that is no boolean is refused.

**An extension of the spec for amounts: a JSON number is also said as people write it.** A model writes a price
as the bill showed it, ``"amount": 45.60``, or the customer's budget of $3,500 as ``3500``, and JSON keeps the numbers
45.6 and 3500, whose ``norm`` no text saying ``$45.60`` or ``$3,500`` says as a whole token: a credit's or refund's
amount was untraceable whenever its cents ended in 0 (one price in ten), and any amount from 1,000 on written with a
separator. Such a number is also said by its two-digit form (45.60) and its forms with thousands separators (3,500;
1,234.5 and 1,234.50) (:func:`~sam_model.data.sayings.number_forms`), one with separators only as a whole number
(:func:`~sam_model.data.sayings.whole_amount`: 3,500 is not said by 3,500,000), and no number is said inside one written
with separators (500 is not said by $3,500: :func:`~sam_model.data.sayings.says`); a string value keeps its one form (a version
``"3.1"`` is not ``"3.10"``), and the needed value recorded is ``norm``'s.

**An extension of the spec for names: a value said alone is labelled before one said inside a longer name.** The
spec's whole token ends at a hyphen, so ``ledger-api`` says ``ledger``: where an event says a needed value alone
(the service catalog's ``"namespace": "ledger"``), the label is chosen among those events, not among the earlier
ones that say it only inside a hyphenated name (the user's question about ``ledger-api``)
(:func:`~sam_model.data.sayings.says_alone`). Where none says it alone (a deployment named only by its pods,
``payments-api-7f9c6d8b5-2xkqp``), those that say it inside a name are its label as before; whether the decision
event (its observation) or the policy says it is the spec's reading as before. The preference is a name's
(:func:`~sam_model.data.sayings.is_name_part`: a string with a letter and no capital, as hyphen-joined names are
written): a number inside a range (a budget of ``800-1200``) or a code inside a route (``JFK-LAX``) was given by that
mention, and a later event that says it alone by chance (a loyalty balance of 1200) is no better label.

**An extension of the spec for SQL tools: a query is traced by its literals** (:mod:`sam_model.data.sqlwords`, of
:func:`sam_model.data.toolarguments.is_sql_query`): its string and number literals, not its schema names, so
``WHERE tenant = 'acme-eu'`` traces the tenant the user gave (a query of more than 8 words was free text).

**An extension of the spec for shell tools: a command line is traced by its words.** The spec traces each argument
leaf whole. A coding agent whose tool is a shell (Claude Code's ``Bash``, OpenHands' ``execute_bash``/``terminal``,
SWE-agent's ``bash``, Gemini CLI's ``run_shell_command``, Cline's ``execute_command``, Codex's ``shell`` with an argv
``["bash", "-lc", ...]``) writes every action as one command line, ``cat src/foo/bar.py``, that no earlier event says
whole, although the earlier ``find`` printed the path: its logs labelled almost nothing (or, for an argv, ``bash`` and
``-lc`` to the first call). So the leaves of a shell command argument
(:func:`sam_model.data.toolarguments.is_command_line`: an argument named ``command`` or ``cmd`` of a tool whose name says
shell, bash, terminal, ssh or exec/run a command and no other language, or ``script`` of one that says a shell,
holding a string or an argv list) are the words of its command line, as bash reads them
(:func:`sam_model.data.shellwords.command_words`, the splitting the SWE-agent reader's text commands use; a PowerShell
tool's as PowerShell reads them, its backslashes a path's): the program word of each simple command, its sub-command
(``git commit``), reserved words, flags and the program a wrapper runs (``sudo``, ``xargs``) are not traced
(``--key=value``, ``KEY=value`` and a flag before a sub-command, ``git -C /repo``, give their value; a redirection to
``/dev/null`` or a descriptor is none), ``bash -c SCRIPT`` is the script's words, a heredoc's body is one text (free
text by the spec, so skipped) unless a shell or Python reads it, and ``./src/a.py`` or ``src/`` names the path a
listing prints (``src/a.py``, ``src``); the module doc of :mod:`sam_model.data.shellwords` lists the rest (search
patterns, line ranges, sed edits, substitutions, containers, ssh, Python scripts). A Codex patch is traced by the
paths it names, its hunks free text: in a command line, in a patch tool's argument
(:func:`~sam_model.data.argumentleaves.argument_leaves`) and as the raw input of the freeform ``apply_patch`` call,
no JSON object, whose paths are judged at ``input`` (:func:`~sam_model.data.argumentleaves.call_leaves`). A grep
tool's ``pattern`` (Claude Code's ``Grep``) is read as a shell grep's
(:func:`sam_model.data.toolarguments.search_pattern`).
Each word is judged as the spec judges a leaf, at the argument's path (``command``), so the uncertainty flags and the
masking name ``command``. A line whose quotes do not close, of more than :data:`~sam_model.data.shelltokens.MAX_WORDS`
words or of more than :data:`~sam_model.data.shelltokens.MAX_LINE_CHARS` characters is one leaf as the spec reads it,
and every other tool's argument reads as the spec says, but for a file editor's (OpenHands' ``str_replace_editor``,
Anthropic's text editor tool): its operation, a one-word ``command`` (``view``, ``str_replace``), is syntax, judged
trivial (:func:`sam_model.data.toolarguments.is_operation`), and its ``view_range`` is read as the same line range of
``sed -n`` (:func:`sam_model.data.toolarguments.view_lines`: a page's bounds are none). tau-bench, SGD and the
generated tool worlds convert as before. The running constraints keep the whole command line
(:meth:`TranscriptState._call`): they are part of the state text the model reads, which this extension leaves as it
was; only labels and masking read the words. A shell
tool's arguments, in a call that runs a command line, whose names say a timeout, an output limit, a permission or a description
(:func:`sam_model.data.toolarguments.is_shell_setting`: Codex's ``timeout_ms``, Claude Code's ``timeout`` and
``description``, OpenHands' ``security_risk``) say how the command runs, not what it acts on, and are judged trivial:
Codex repeats ``"timeout_ms": 120000`` on every call, which traced each later call to the first one.
So are a file tool's output settings (:func:`sam_model.data.toolarguments.is_tool_setting`: Claude Code's Grep
``output_mode`` and ``head_limit``, its Read's ``limit``), which its Grep repeats as a shell repeats a timeout, and
a file read's ``offset`` that starts a page with its ``limit`` (:func:`sam_model.data.toolarguments.is_page_offset`:
``Read(offset=201, limit=200)``, how far the agent has read, as an editor's ``view_range`` page is; a search's
``offset`` at a multiple of its ``head_limit``, Grep's page of results).
A search tool's pattern (:func:`sam_model.data.toolarguments.search_pattern`: the ``pattern`` or ``regex`` of a tool whose
name says grep or search, Claude Code's Grep, Gemini CLI's ``search_file_content``) is read as a shell grep's pattern
is: a regex or code (``def due_date``) is its names, any other pattern one value.

**An extension of the spec for paths under the working directory.** Claude Code's Read, Edit and Write take an
absolute ``file_path`` always, and Codex's commands often name one: the agent reads ``/home/me/app/app/tax.py``
because the user said ``app/tax.py`` or a grep run in ``/home/me/app`` printed ``app/tax.py:42:``, and no earlier
event says the absolute path. Where the log records the agent's working directory (Claude Code's entries' ``cwd``,
Codex's ``session_meta`` and ``turn_context``; OpenHands' command observations; mini-swe-agent's run config; Gemini
CLI's project root, recovered from its hash; the reader tells it on the chat message after it changes,
:data:`~sam_model.data.formats.base.CWD`, so a live memory learns it as the importer does; Gemini CLI's on the
message whose calls revealed it, which are judged in it too, :data:`~sam_model.data.formats.base.CWD_BY_CALLS`), a
string leaf that is an absolute path strictly below it and that the spec's rule finds untraceable is judged again by
its relative part
(:func:`sam_model.data.shellpaths.relative_paths`: ``..`` read as a step up, ``./`` and a trailing slash dropped; on
Windows with backslashes, then slashes); a hit makes it needed (or an observation, or the policy's) with that part
as its needed value, at the argument's path as any leaf. A path said whole keeps its label; a path outside the
directory, the directory itself, and every path of a log with no directory (OpenAI chat, tau-bench, SGD, the
AutoCodeRover log, SWE-agent) are judged as the spec says. No suffix of a path is tried where the directory is
unknown: which part of it is the project's is what only the directory tells, and a suffix such as
``tests/__init__.py`` or ``src/index.ts`` is said of any package's file.

**An extension of the spec for line numbers.** A coding agent's editor takes line numbers (SWE-agent's ``goto 583``,
``edit 213:214``, ``open x.py 212``), and the spec traces each to the first event that says the number anywhere: the
issue's ``#212`` or a test count, where the line came from the view or search that printed it as a line of the file.
Where a reader knows its tools' outputs and calls (:data:`~sam_model.data.formats.base.SHOWN_LINES` on a result: the
lines of each file it printed with their numbers; :data:`~sam_model.data.formats.base.LINE_ARGUMENTS` on a call's
message: which of its arguments are line numbers of which file; SWE-agent's reader sets both, and
:func:`sam_model.data.formats.numbered.mark` for the other coding agents' readers), a needed line number
of a file is labelled by the most recent earlier event that showed that line of that file (every such event for
``all``), the one whose text the agent read the line in; a number no such event showed is labelled as the spec
says. An event that showed the line says it though its text may not say the number as a whole token (Gemini CLI's
search hits, ``L212: code``; ``nl -n rz``'s ``000212``): a line shown only there is needed, not untraceable, and one
the decision point showed is in its observation. A log without the marks (every other reader's, OpenAI chat,
tau-bench, SGD) is labelled as before.

The rule's parts are modules of their own, each read top to bottom: :mod:`~sam_model.data.chatmessages` (the
messages' content, tool calls and policy), :mod:`~sam_model.data.trivialvalues` (values never traced),
:mod:`~sam_model.data.sayings` (which events say a value, and the masking of constraints),
:mod:`~sam_model.data.argumentleaves` (which leaves of a call are judged), :mod:`~sam_model.data.shownlines` (the
line-number marks), :mod:`~sam_model.data.eventtexts` (the words the events and ``last_action_result`` say) and
:mod:`~sam_model.data.callshapes` (what a live agent hands :func:`live_state`); this module ties them.

One :class:`TranscriptState` walks the messages, keeps the spec's running state (phase = last tool,
sub-goal stack = tools called, constraints = argument values already used, last action result = a
value-free summary of the last tool result) and writes the events. The importer and a live agent use
the same object, so training and inference see the same state::

    state = live_state(messages_so_far, {"name": "book_reservation", "arguments": {...}})
    state = live_state(messages_so_far, tool="book_reservation", arguments=["user_id", "payment_id"])
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from sam_model.data.advice import Advice
from sam_model.data.argumentleaves import call_leaves, leaves, raw_patch
from sam_model.data.callshapes import (
    TOOL_SHAPE,
    argument_names,
    argument_schema,
    as_calls,
    check_arguments,
    schema_paths,
    system_text,
    tool_definition,
)
from sam_model.data.chatmessages import (
    MAX_ARGUMENT_DEPTH,
    ToolCall,
    content_text,
    parse_tool_calls,
    policy_of,
)
from sam_model.data.eventtexts import call_text, cut_text, result_shape
from sam_model.data.formats import claude_code, detect, gemini, to_chat
from sam_model.data.formats.base import CWD, CWD_BY_CALLS, FAILED, TranscriptFormatError, preamble
from sam_model.data.lineranges import PageBound
from sam_model.data.sayings import Sayings, is_name_part, mask_constraints, number_forms, whole_amount
from sam_model.data.searchhits import hit_lines
from sam_model.data.shellpaths import relative_paths
from sam_model.data.shellwords import command_words
from sam_model.data.shownlines import in_runs, line_arguments, line_runs, same_file, saved_runs, shown_lines
from sam_model.data.text import norm
from sam_model.data.trivialvalues import is_free_text, is_trivial
from sam_model.io import json_type

Label = Literal["origin", "latest", "all"]
LABELS: tuple[str, ...] = ("origin", "latest", "all")
OUTCOMES = ("needed", "observation", "policy", "untraceable", "trivial")  # what happens to an argument leaf
_LINE = re.compile(r"\d{1,12}")  # a line number (int() refuses a word of over 4300 digits)


@dataclass
class Decision:
    """What a tool call needs: its decision-point state, the labels and how each argument leaf was judged."""

    state: dict[str, Any]
    labels: list[int]
    needed: dict[str, list[str]]  # path -> normalised needed values
    outcomes: Counter = field(default_factory=Counter)  # OUTCOMES -> number of leaves
    distances: list[int] = field(default_factory=list)  # decision step - label step, per label
    # each call's own needed values (path -> normalised values), in call order: what forgetting the call takes out of
    # the decision's meta, the values its leaves were judged needed by, whichever reading gave them (call_leaves)
    per_call: list[dict[str, list[str]]] = field(default_factory=list)
    free_text: int = 0  # of the trivial leaves, those that are free text: whole arguments never traced (the report)
    # the leaves judged untraceable, as TOOL.PATH: which arguments the import report names (a share alone said
    # nothing a user could act on: a walkthrough's 23 % were a date said as a weekday and the agent's own words)
    untraceable: list[str] = field(default_factory=list)


class TranscriptState:
    """The spec's running state over one conversation, and the events it writes.

    Feed messages in order with :meth:`add`; :meth:`decide` gives the decision-point state (and labels) for
    tool calls about to be made after the messages fed so far. The importer calls ``decide`` for every
    assistant message with tool calls before adding it; a live agent calls it before running a call.

    ``result_limit``: cut a tool result's event text at this many characters (``text[:N] + " ...[+M chars]"``, the
    spec's 2,000 is :data:`~sam_model.data.eventtexts.RESULT_CUT`); None (the default) keeps whole results, so a
    value deep inside a long file view is still traced to it. ``results_cut`` counts the results cut.
    """

    result_limit: int | None = None  # class defaults: a state dict saved before these existed still loads
    results_cut: int = 0
    cwd: str = ""

    def __init__(self, episode_id: str = "live", policy: str = "", label: Label = "origin", masked: bool = True,
                 result_limit: int | None = None):
        if label not in LABELS:
            raise ValueError(f"label must be one of {LABELS}, got {label!r}")
        if result_limit is not None and result_limit < 1:
            raise ValueError(f"result_limit must be a positive number of characters or None, got {result_limit!r}")
        self.episode_id, self.label, self.masked = episode_id, label, masked
        self.result_limit, self.results_cut = result_limit, 0
        self.policy_norm = norm(policy)
        self.phase, self.last = "start", "none"
        self.stack: list[str] = []
        self.cons: dict[str, Any] = {}
        self.events: list[dict[str, Any]] = []
        self._norms: list[str] = []  # norm(text) of each event
        self._call_names: dict[str, str] = {}  # tool_call_id -> tool name
        self.invalid_arguments: list[str] = []  # where a call's arguments were not a JSON object (kept raw)
        self.unmatched_results: list[str] = []  # tool results that answer no earlier call (named as the spec says)
        # what each tool call set in ``cons`` ({"step": its event, "wrote": {path: value}, "decided": the event whose
        # meta.needed it fed, or None, "needed": {path: [the values it fed there]}}), in step order, so that deleting
        # its memory takes its values out (forget); a call that set none but fed needed values has one too
        self.writes: list[dict[str, Any]] = []
        self.writes_from = 0  # the first event whose call's writes are kept (a tracker saved before: after its events)
        self.cwd = ""  # the agent's working directory, as the last message that told it said (CWD); "" unknown
        # [event, file, [[first, last], ...]] of each result's SHOWN_LINES (its lines as runs: line_runs), in step order
        self.shown: list[list[Any]] = []
        self._sayings = Sayings()  # which events say each value judged so far (not saved: state_dict)
        # a result's search hits (searchhits.hit_lines), by event, with the text they were read from: read once, not at
        # every page bound of every later decision; never saved (state_dict), dropped with a forgotten text
        self._hits: dict[int, tuple[str, frozenset[int]]] = {}

    def snapshot(self) -> dict[str, Any]:
        return {"phase": self.phase, "subgoal_stack": list(self.stack),
                "constraints": {k: list(v) if isinstance(v, list) else v for k, v in self.cons.items()},
                "uncertainty_flags": [], "last_action_result": self.last}

    def _emit(self, kind: str, text: str) -> None:
        self.events.append({"episode_id": self.episode_id, "step": len(self.events), "kind": kind, "text": text,
                            "state": self.snapshot()})
        self._norms.append(norm(text))

    def add(self, message: Mapping[str, Any], where: str = "message") -> None:
        """Write the events of one message (see the spec's "Events, in message order")."""
        if not isinstance(message, Mapping):
            raise TranscriptFormatError(where, f"a message must be an object, got {json_type(message)}")
        role = message.get("role")
        if role in (None, ""):
            raise TranscriptFormatError(where, "message without 'role' (expected system, user, assistant or tool)")
        if not isinstance(role, str):  # it was called missing (a served add of role 3 said "without 'role'")
            raise TranscriptFormatError(where, f"'role' is {json_type(role)} ({str(role)[:40]}), expected a string "
                                               "such as user, assistant or tool")
        text = content_text(message.get("content"), where, result=role == "tool")
        self._take_cwd(message, where)
        if message.get("tool_calls") and role != "assistant":  # its calls would vanish (they are the labels)
            raise TranscriptFormatError(where, f"a {role[:40]!r} message carries tool_calls; only assistant messages "
                                               "call tools: give it the role assistant, or read the log as its own "
                                               "format: ", Advice("format", "NAME"), " (sam-data formats lists the formats)")
        if role == "system":
            return  # the policy: common knowledge of every episode, not an event
        if role == "assistant":
            calls = parse_tool_calls(message, where)
            if text:
                self._emit("system", text)
            for call in calls:
                self._call(call, where)
        elif role == "tool":
            call_id = message.get("tool_call_id")
            if call_id is not None and (not isinstance(call_id, (str, int)) or isinstance(call_id, bool) or call_id == ""):
                raise TranscriptFormatError(where, f"tool message's 'tool_call_id' is {repr(call_id)[:40]}: give the "
                                                   "id of the assistant tool call it answers (a string), or leave it out")
            if call_id is None or str(call_id) not in self._call_names:  # the spec's "else 'tool'": kept, reported
                self.unmatched_results.append(f"{where}: " + ("no tool_call_id" if call_id is None else
                                              f"tool_call_id {call_id!r} answers no earlier tool call"))
            name = message.get("name")
            if not isinstance(name, str) or not name:
                name = self._call_names.get(str(call_id), "tool") if call_id is not None else "tool"
            failed = message.get(FAILED)
            if failed is not None and not isinstance(failed, bool):
                raise TranscriptFormatError(where, f"tool message's '{FAILED}' is {json_type(failed)}: give true (the "
                                                   "call failed) or false, or leave it out")
            lines = shown_lines(message, where)  # refused before any event is written
            self.last = result_shape(name, text, failed is True)
            shown = name + ": " + text
            if self.result_limit is not None and len(shown) > self.result_limit:
                shown = cut_text(shown, self.result_limit)
                self.results_cut += 1
            self._emit("result", shown)
            self.shown += [[len(self.events) - 1, f, line_runs(ns)] for f, ns in lines.items()]
        elif text:
            self._emit(role, text)

    def _take_cwd(self, message: Mapping[str, Any], where: str) -> None:
        """The working directory a message tells (:data:`~sam_model.data.formats.base.CWD`, set by the readers of
        formats that record one): the agent's after this message. A message's own calls are judged in the directory
        told before it, as a search by call made before the message was added is (the readers tell it on the first
        message after it changed: a session's first, a command's result after a ``cd``), unless their message is
        marked :data:`~sam_model.data.formats.base.CWD_BY_CALLS` (:meth:`_calls_cwd`)."""
        cwd = message.get(CWD)
        if cwd is not None and not isinstance(cwd, str):
            raise TranscriptFormatError(where, f"message's '{CWD}' is {json_type(cwd)}: give the agent's working "
                                               "directory (a string), or leave it out")
        self.cwd = self.cwd if cwd is None else cwd

    def _calls_cwd(self, message: Mapping[str, Any], where: str) -> str | None:
        """The directory an assistant message's own calls are judged in where they revealed it themselves
        (:data:`~sam_model.data.formats.base.CWD_BY_CALLS`: Gemini CLI's project root, found from the paths they
        name, which a search by call finds from the call in hand too); None: the one told before the message."""
        by = message.get(CWD_BY_CALLS)
        if by is None or by is False:
            return None
        cwd = message.get(CWD)
        if by is not True or not isinstance(cwd, str):
            raise TranscriptFormatError(where, f"message's '{CWD_BY_CALLS}' is {json_type(by)} beside a '{CWD}' of "
                                               f"{json_type(cwd)}: give true with the directory its calls revealed "
                                               "(a string), or leave it out")
        return cwd

    def _call(self, call: ToolCall, where: str) -> None:
        """The running state after ``call``: its tool is the phase and joins the stack, and each argument's
        non-free-text leaves (:func:`~sam_model.data.argumentleaves.leaves`, the spec's) are its constraints. A
        shell command line stays whole here, not split into the words the labels trace
        (:func:`~sam_model.data.argumentleaves.argument_leaves`): the constraints are state text the model reads,
        and what it read before the shell extension it reads still (masking drops the entry whose line says a needed
        word)."""
        self.phase = call.name
        if call.name not in self.stack:
            self.stack.append(call.name)
        if call.id is not None:
            if call.id in self._call_names:  # its results can no longer tell the two calls apart: said, not hidden
                self.unmatched_results.append(f"{where}: tool_call_id {call.id!r} given again (first to "
                                              f"{self._call_names[call.id]}); its results are named {call.name}")
            self._call_names[call.id] = call.name
        if not call.valid:
            if raw_patch(call) is None:  # a freeform patch's raw input is what its tool takes, no bad argument
                self.invalid_arguments.append(f"{where}: arguments of {call.name} are not a JSON object (or nest "
                                              f"more than {MAX_ARGUMENT_DEPTH} levels); kept as the raw string (no "
                                              "argument of this call is traced)")
        else:
            wrote: dict[str, Any] = {}
            for name, value in call.arguments.items():
                kept: dict[str, list[Any]] = {}
                for path, v in leaves(value, name):
                    if not (isinstance(v, str) and is_free_text(norm(v))):
                        kept.setdefault(path, []).append(v)
                for path, vs in kept.items():
                    self.cons[path] = wrote[path] = vs[0] if len(vs) == 1 else vs
            if wrote:
                self.writes.append({"step": len(self.events), "wrote": wrote, "decided": None})
        self._emit("action", call_text(call.name, call.arguments))

    def decide(self, calls: Sequence[ToolCall], cwd: str | None = None,
               lines: Mapping[str, tuple[str, frozenset[str]]] | None = None) -> Decision | None:
        """The decision for ``calls`` made right after the messages fed so far; None without history. ``cwd``: the
        working directory the calls are judged in where they revealed it themselves (:meth:`_calls_cwd`); None: the
        one the messages told. ``lines``: per call id, the file and the arguments that are its line numbers
        (:func:`line_arguments`, the extension of the module doc, "line numbers").

        Its event is the last one written. Leaves that are trivial, said by that event, said by the policy or
        said by no earlier event are skipped; the rest are needed, labelled by the first (``origin``), last
        (``latest``) or every (``all``) earlier event that says them.
        """
        if not self.events:
            return None
        d_step = len(self.events) - 1
        self._sayings.sync(self._norms)  # the events' texts: the decision point's own last
        cwd = self.cwd if cwd is None else cwd
        printed: dict[tuple[int, str], set[int]] = {}  # (line, file) -> the earlier results that print it as a hit
        marked: dict[int, list[tuple[str, list[int]]]] = {}  # a result -> the lines of each file it showed (shown)
        file = ""  # the file the call being judged takes line numbers of (LINE_ARGUMENTS), "" unknown

        def hit(line: int) -> bool:  # grep -n's FILE:LINE: (read only for a page's bounds, which are rare)
            if file and not marked:
                for step, f, ns in self.shown:
                    marked.setdefault(step, []).append((f, ns))
            if (line, file) not in printed:  # a result a reader marked is a hit only where it showed the call's file's
                printed[line, file] = {i for i, e in enumerate(self.events[:d_step])
                                       if e["kind"] == "result" and line in self._hit_lines(i)
                                       and (not file or i not in marked
                                            or any(same_file(f, file) and in_runs(line, ns) for f, ns in marked[i]))}
            return bool(printed[line, file])

        outcomes: Counter = Counter()
        free = 0
        untraceable: list[str] = []
        needed: dict[str, list[str]] = {}
        per_call: list[dict[str, list[str]]] = []
        steps: set[int] = set()
        for call in calls:
            per_call.append({})
            of = (lines or {}).get(call.id) if call.id is not None else None
            file = of[0] if of is not None else ""
            for path, v, setting in call_leaves(call, hit):
                outcome, hits, traced = ("trivial", [], "") if setting else self._judge(path, v, self._norms, cwd)
                if outcome == "needed" and isinstance(v, PageBound) and hit(int(v)):
                    # a window's bound a hit printed: traced to the results that printed it as a hit
                    hits = [i for i in hits if i in printed[int(v), file]]
                    outcome = outcome if hits else "untraceable"
                if outcome in ("needed", "untraceable") and of is not None and path.split(".")[0] in of[1] \
                        and (showed := self._showed(of[0], v, range(d_step + 1))):
                    # a line shown is said there, whether or not the text says the number whole (L212:)
                    outcome, hits = ("observation", []) if showed[-1] == d_step \
                        else ("needed", showed if self.label == "all" else showed[-1:])
                outcomes[outcome] += 1
                free += outcome == "trivial" and isinstance(v, str) and is_free_text(norm(v))
                if outcome == "untraceable":
                    untraceable.append(f"{call.name}.{path}")
                if outcome == "needed":
                    needed.setdefault(path, []).append(traced)
                    per_call[-1].setdefault(path, []).append(traced)
                    steps.update({"origin": hits[:1], "latest": hits[-1:], "all": hits}[self.label])
        labels = sorted(steps)
        state = self.events[d_step]["state"]
        state = {**state, "phase": calls[0].name if calls else state["phase"],
                 "constraints": dict(state["constraints"]), "uncertainty_flags": list(state["uncertainty_flags"])}
        if needed and self.masked:
            state["constraints"] = mask_constraints(state["constraints"], needed)
            state["uncertainty_flags"] = sorted(needed)
        return Decision(state, labels, needed, outcomes, [d_step - s for s in labels], per_call, free, untraceable)

    def _hit_lines(self, step: int) -> frozenset[int]:
        """The lines result ``step`` printed as search hits (searchhits.hit_lines), read once for its text: a long
        session paging through files read every earlier result again at each page bound (2,000 events, 100 KB
        results: a decision read 1,000 results, the session a million)."""
        text = self.events[step]["text"]
        kept = self._hits.get(step)
        if kept is None or kept[0] is not text:  # a text rewritten, or another event at the step after a rollback
            kept = self._hits[step] = (text, hit_lines(text))
        return kept[1]

    def call_state(self, calls: Sequence[ToolCall], cwd: str | None = None) -> dict[str, Any]:
        """The state an agent is in when it is about to make ``calls`` (one assistant message's, at least one) after
        the messages fed so far, without feeding them: the decision state the importer writes (:meth:`decide`; ``cwd``
        as there), or, without history (no event yet), the running state with the first call's tool as its phase.
        live_state and a scoped memory's search by call (ScopedMemory.live_state(call=...)) both read it here."""
        decision = self.decide(calls, cwd)
        return decision.state if decision is not None else {**self.snapshot(), "phase": calls[0].name}

    def feed(self, message: Mapping[str, Any], where: str = "message") -> tuple[Decision | None, int]:
        """One message as the importer writes it: before an assistant message with tool calls, the decision
        for those calls, and if it has labels the last event becomes that decision point (its state the
        decision state, its labels and ``meta.needed``); then the message's events. Returns the decision (None
        without tool calls or history) and how many events already written it revised (0 or 1), so a memory
        fed message by message holds exactly the importer's events."""
        decision, revised = None, 0
        if isinstance(message, Mapping) and message.get("role") == "assistant":
            calls = parse_tool_calls(message, where)
            if calls:
                decision = self.decide(calls, self._calls_cwd(message, where), line_arguments(message, where))
                if decision is not None and decision.labels:
                    event = self.events[-1]
                    event["state"] = decision.state
                    event["useful_memory_steps"] = decision.labels
                    event["meta"] = {"needed": decision.needed}  # for grounding@k; the model never reads meta
                    revised = 1
        n = len(self.events)
        self.add(message, where)
        if revised and decision is not None:  # this message's calls fed the event before it: each keeps its needed
            mine = {w["step"]: w for w in self.writes if w["step"] >= n}
            steps = [t for t in range(n, len(self.events)) if self.events[t]["kind"] == "action"]  # one per call
            for t, needed in zip(steps, decision.per_call):
                if t not in mine and needed:  # a call that set no constraint (a patch's paths) still needed values
                    mine[t] = {"step": t, "wrote": {}}
                if t in mine:
                    mine[t].update(decided=n - 1, needed=needed)
            self.writes = [w for w in self.writes if w["step"] < n] + [mine[t] for t in sorted(mine)]
        return decision, revised

    def mark(self) -> dict[str, Any]:
        """What :meth:`rollback` needs to undo the messages fed after this call (cheap: the new events are cut off,
        the last event's fields and the small running fields are copied, not the whole conversation)."""
        return {"n": len(self.events), "last_event": dict(self.events[-1]) if self.events else None,
                "phase": self.phase, "last": self.last, "stack": list(self.stack), "cons": dict(self.cons),
                "calls": dict(self._call_names), "invalid": len(self.invalid_arguments), "writes": len(self.writes),
                "unmatched": len(self.unmatched_results), "results_cut": self.results_cut, "policy_norm": self.policy_norm,
                "cwd": self.cwd, "shown": len(self.shown)}

    def rollback(self, mark: Mapping[str, Any]) -> None:
        """The state as it was at ``mark`` (a batch of messages refused part-way is taken whole or not at all)."""
        n = mark["n"]
        del self.events[n:], self._norms[n:]
        self._hits = {k: v for k, v in self._hits.items() if k < n}  # the texts of the events cut are held nowhere
        if mark["last_event"] is not None:
            self.events[n - 1] = dict(mark["last_event"])  # a tool call revises the last event in place
        self.phase, self.last, self.stack, self.cons = mark["phase"], mark["last"], mark["stack"], mark["cons"]
        self._call_names, self.results_cut, self.policy_norm = mark["calls"], mark["results_cut"], mark["policy_norm"]
        self.cwd = mark["cwd"]
        del self.shown[mark.get("shown", len(self.shown)):]
        del self.invalid_arguments[mark["invalid"]:]
        del self.writes[mark["writes"]:]
        del self.unmatched_results[mark.get("unmatched", len(self.unmatched_results)):]

    def note(self, kind: str, text: str, state: Mapping[str, Any]) -> None:
        """An event written to the conversation apart from its messages (an agent-log event added to the same
        memory): it takes the next step, so the steps of the events after it stay those of the memory, and later
        tool-call arguments are traced to it as to any event. The running state does not change."""
        self.events.append({"episode_id": self.episode_id, "step": len(self.events), "kind": kind, "text": text,
                            "state": dict(state)})
        self._norms.append(norm(text))

    def rewrite(self, step: int, text: str) -> None:
        """Event ``step`` says ``text`` now (its memory was updated): later arguments are traced to the new words,
        and a later tool call that revises the event's state keeps them."""
        self.events[step] = {**self.events[step], "text": text}
        self._norms[step] = norm(text)
        self._hits.pop(step, None)  # a forgotten text is held nowhere

    def forget(self, step: int) -> dict[str, int | None]:
        """Blank the text of event ``step`` (its memory was deleted): no later argument is traced to it, and a saved
        tracker holds its words no more. Its place stays, so the steps of the events after it do not move.

        A tool call's event also takes out of the constraints the paths the call set (a card number it paid with):
        of the running state, unless a later call that is still remembered set the path again (then the state holds
        that call's value, as it did), and of the states of the events from the call on, up to the next such call;
        its needed values leave the meta of the event before it. An earlier call's value of the path is not put
        back: the conversation had replaced it (a user who changed the city and then deleted the change did not ask
        for the old city), deleting a memory only takes away, and the earlier call's own memory still says it. The
        needed values taken out are those the call's leaves were judged needed by (:attr:`Decision.per_call`, kept
        with its writes: a shell command's words, a patch's paths, a search pattern's names or phrases, the relative
        part of a path under the working directory); two calls of one message that needed the same value at the same
        path lose it from that meta together. A tracker saved before those were kept compares the meta with the
        values the call wrote and their command words (:func:`_wrote`), and one saved before calls' writes were kept
        tells them by the events' states (:meth:`_inferred`, :meth:`_decided`). Returns each path taken out with the
        event of the next call that set it again (None: none), for :func:`cleared`."""
        self.rewrite(step, "")
        self.shown = [x for x in self.shown if x[0] != step]  # the file it named and the lines it showed
        mine = next((w for w in self.writes if w["step"] == step), None)
        if mine is not None:
            self.writes.remove(mine)
        elif self.events[step]["kind"] == "action" and step < self.writes_from:  # saved before writes were kept
            mine = {"wrote": self._inferred(step), "decided": self._decided(step)}
        if not mine:
            return {}
        until: dict[str, int | None] = dict.fromkeys(mine["wrote"])
        later = [(t, self._inferred(t)) for t in range(step + 1, min(self.writes_from, len(self.events)))
                 if self.events[t]["kind"] == "action"]  # calls of a tracker saved before writes were kept
        for t, wrote in later + [(w["step"], w["wrote"]) for w in self.writes if w["step"] > step]:
            for p in wrote.keys() & until.keys():
                until[p] = t if until[p] is None else until[p]
        for t in range(step, len(self.events)):
            self.events[t] = _without(self.events[t], cleared(until, step, t))
        for p, u in until.items():
            if u is None:
                self.cons.pop(p, None)
        d = mine["decided"]
        if d is not None and isinstance(meta := self.events[d].get("meta"), Mapping):
            if isinstance(gave := mine.get("needed"), Mapping):  # what the call's leaves were judged needed by
                needed = {p: [x for x in vs if x not in gave.get(p, ())] for p, vs in meta.get("needed", {}).items()}
            else:  # saved before: a needed value is a leaf's, or a word of a shell command line (argument_leaves)
                said = {p: {norm(v) for _, v in leaves(value, p)} | {norm(w) for w in command_words(value) or ()}
                        for p, value in mine["wrote"].items()}
                needed = {p: [x for x in vs if not _wrote(said.get(p, set()), x)]
                          for p, vs in meta.get("needed", {}).items()}
            self.events[d] = {**self.events[d], "meta": {**meta, "needed": {p: vs for p, vs in needed.items() if vs}}}
        return until

    def _inferred(self, t: int) -> dict[str, Any]:
        """What the call of event ``t`` set, in a tracker saved before calls' writes were kept: the constraints its
        state holds otherwise than the state before the call, the one of the last event before it that is no
        decision point (a decision's constraints are masked: compared with them, the call seemed to set every path
        masked there, an earlier call's too). A value a call set again unchanged is not told apart."""
        j = t - 1
        while j >= 0 and self.events[j]["kind"] != "action" and "meta" in self.events[j]:
            j -= 1
        before = self.events[j]["state"].get("constraints", {}) if j >= 0 else {}
        return {p: v for p, v in self.events[t]["state"].get("constraints", {}).items() if before.get(p) != v}

    def _decided(self, t: int) -> int | None:
        """The decision point whose meta holds the needed values of the call of event ``t`` (a tracker saved before
        calls' writes were kept): the event before its message's calls, when it is one."""
        j = t - 1
        while j >= 0 and self.events[j]["kind"] == "action" and "meta" not in self.events[j]:
            j -= 1
        return j if j >= 0 and "meta" in self.events[j] else None

    def state_dict(self) -> dict[str, Any]:
        """Everything the tracker knows, JSON-able (a saved memory continues a conversation where it was)."""
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in vars(self).items()
                if k not in ("_sayings", "_hits")}

    @classmethod
    def from_state_dict(cls, d: Mapping[str, Any]) -> TranscriptState:
        """A tracker from :meth:`state_dict`; an unknown field, or a field of another type, is a ValueError naming it
        (a hand-edited save loaded, then failed at the conversation's next message). A field a save predates takes
        a new tracker's value."""
        fresh = vars(cls())
        if not isinstance(d, Mapping):
            raise ValueError(f"a conversation tracker must be an object, got {json_type(d)}")
        if unknown := sorted(set(d) - set(fresh)):
            raise ValueError(f"unknown conversation tracker fields {unknown[:5]}")
        if missing := sorted({"episode_id", "events", "phase"} - set(d)):
            raise ValueError(f"a conversation tracker must have the fields {missing}")
        kept = "writes" in d  # else saved before calls' writes were kept: forget infers its calls' (writes_from)
        d = {**fresh, **d}
        for k, v in d.items():
            want = type(fresh[k])
            ok = v is None or isinstance(v, int) and not isinstance(v, bool) if k == "result_limit" else \
                isinstance(v, Mapping) if want is dict else isinstance(v, want)
            if not ok:
                should = "a number or null" if k == "result_limit" else "true or false" if want is bool else \
                    json_type(fresh[k])
                raise ValueError(f"conversation tracker field {k!r} must be {should}, got {json_type(v)}")
        n = len(d["events"])
        for i, w in enumerate(d["writes"]):
            if not (isinstance(w, Mapping) and _is_event(w.get("step"), n) and isinstance(w.get("wrote"), Mapping)
                    and (w.get("decided") is None or _is_event(w.get("decided"), n))
                    and (w.get("needed") is None or _is_needed(w["needed"]))):
                raise ValueError(f"conversation tracker field 'writes' item {i} must be {{\"step\": <event>, \"wrote\": "
                                 f"{{<path>: <value>}}, \"decided\": <event> or null, \"needed\": {{<path>: [<value>, "
                                 f"...]}} or left out}}, got {json.dumps(w)[:80]}")
        shown = []
        for i, x in enumerate(d["shown"]):
            runs = saved_runs(x[2]) if isinstance(x, list) and len(x) == 3 else None
            if runs is None or not (_is_event(x[0], n) and isinstance(x[1], str)):
                raise ValueError(f"conversation tracker field 'shown' item {i} must be [<event>, <file>, [[<first line>, "
                                 f"<last line>], ...]] (or a save's from before runs: [<line number>, ...]), got "
                                 f"{json.dumps(x)[:80]}")
            shown.append([x[0], x[1], runs])
        d["shown"] = shown
        self = cls.__new__(cls)
        self.__dict__.update({k: (dict(v) if isinstance(v, Mapping) else v) for k, v in d.items()})
        if not kept:
            self.writes_from = len(self.events)
        return self

    def _judge(self, path: str, value: Any, texts: list[str], cwd: str) -> tuple[str, list[int], str]:
        """(outcome, the earlier events that say the value, the normalised value traced): the spec's rule, and for an
        absolute path under the working directory ``cwd`` that it finds untraceable, the same rule of its relative
        part (the extension of the module doc, "paths under the working directory")."""
        outcome, hits = self._judge_one(path, value, texts)
        if outcome == "untraceable" and isinstance(value, str) and cwd:
            for rel in relative_paths(value, cwd):
                found = self._judge_one(path, rel, texts)
                if found[0] in ("needed", "observation", "policy"):
                    return *found, norm(rel)
        return outcome, hits, norm(value)

    def _judge_one(self, path: str, value: Any, texts: list[str]) -> tuple[str, list[int]]:
        """The spec's rule for one leaf: ``texts`` the events' normalised texts, the decision point's own last (its
        observation), the earlier ones before it."""
        if is_trivial(path, value):
            return "trivial", []
        forms = number_forms(value)  # its norm first, which the spec's says judges; an amount's other forms after it
        hits = sorted({i for n, s in enumerate(forms) for i in self._sayings.hits(texts, s)
                       if n == 0 or whole_amount(texts[i], s)})
        if hits[-1:] == [len(texts) - 1]:
            return "observation", []
        if any(self._sayings.policy(self.policy_norm, s) and (n == 0 or whole_amount(self.policy_norm, s))
               for n, s in enumerate(forms)):
            return "policy", []
        # the events that say it alone where there are any, not those that say it inside a longer hyphenated name
        # (says_alone: ledger-api said namespace ledger, the catalog's row gave it); a name's part alone, not a
        # number of a range (800-1200) or a code of a route (JFK-LAX): is_name_part
        alone = [i for i in hits if any(self._sayings.alone(texts, i, s) and (n == 0 or whole_amount(texts[i], s))
                                        for n, s in enumerate(forms))] if is_name_part(value) else []
        return ("needed", alone or hits) if hits else ("untraceable", [])

    def _showed(self, file: str, value: Any, hits: Collection[int]) -> list[int]:
        """The events among ``hits`` that showed line ``value`` of ``file`` (SHOWN_LINES), in step order; none where
        ``value`` is no line number."""
        if isinstance(value, bool) or not _LINE.fullmatch(str(value)):
            return []
        n, said = int(value), set(hits)
        return [step for step, f, ns in self.shown if step in said and same_file(f, file) and in_runs(n, ns)]


def _wrote(said: set[str], value: str) -> bool:
    """Whether a call whose values at a path are ``said`` (normalised) needed ``value`` there: one of them, or the
    part of one below a working directory (a path traced by its relative part: :meth:`TranscriptState._judge`)."""
    tail = "/" + value.replace("\\", "/")
    return value in said or any(s.replace("\\", "/").endswith(tail) for s in said)


def cleared(until: Mapping[str, int | None], step: int, t: int) -> set[str]:
    """The paths a state at event ``t`` no longer holds after the call at event ``step`` was forgotten
    (:meth:`TranscriptState.forget`'s ``until``): from the call on, up to the next call that set the path again."""
    return {p for p, u in until.items() if step <= t and (u is None or t < u)}


def _without(event: dict[str, Any], paths: set[str]) -> dict[str, Any]:
    """``event`` with ``paths`` out of its state's constraints (a new dict: a mark may hold the old one)."""
    cons = event["state"].get("constraints") or {}
    if not paths & cons.keys():
        return event
    return {**event, "state": {**event["state"], "constraints": {k: v for k, v in cons.items() if k not in paths}}}


def _is_needed(x: Any) -> bool:
    """Whether ``x`` is a call's needed values as :meth:`TranscriptState.feed` keeps them: {path: [strings]}."""
    return isinstance(x, Mapping) and all(isinstance(v, list) and all(isinstance(s, str) for s in v) for v in x.values())


def _is_event(x: Any, n: int) -> bool:
    """Whether ``x`` is the index of one of ``n`` events."""
    return isinstance(x, int) and not isinstance(x, bool) and 0 <= x < n


def live_state(messages: Iterable[Mapping[str, Any]],
               call: Mapping[str, Any] | ToolCall | Sequence[Mapping[str, Any] | ToolCall] | None = None, *,
               tool: str | Mapping[str, Any] | None = None,
               arguments: Mapping[str, Any] | Sequence[str] | None = None,
               masked: bool = True, policy: str | Sequence[Any] | Mapping[str, Any] = "") -> dict[str, Any]:
    """The decision-point state of the spec for a tool call about to be made after ``messages``.

    ``messages``: the running conversation in any format :mod:`sam_model.data.formats` reads (OpenAI chat, tau2,
    Anthropic, Bedrock Converse, Responses items, GenAI parts, LangChain messages as dicts, Gemini contents), told
    from its shape; ``policy``: system text kept apart from the messages (Anthropic's and Bedrock's ``system``,
    Responses ``instructions``, Gemini ``system_instruction``), read as a leading system message: a string, or as
    the API keeps it (a list of text blocks or parts, a Content with ``parts``).

    Give the call itself (``{"name", "arguments"}``, an OpenAI ``tool_calls`` entry, a
    :class:`~sam_model.data.chatmessages.ToolCall`, or a list of them: all the calls of one assistant message): the
    state is then exactly what the importer writes on the decision event (phase = the tool, uncertainty flags = the
    argument paths whose values lie in earlier events, constraints = what earlier calls used, minus those values).
    Or give ``tool`` and its argument names (a list of paths, a JSON-schema ``parameters`` object, or the tool's
    definition as the agent declares it to its model: :func:`~sam_model.data.callshapes.tool_definition`) before the
    values exist: the flags are then every argument path, and constraints lose those paths. ``tool`` may be that
    definition itself (its name and parameters). An agent that retrieves before writing the call sees more flags
    than training did.
    """
    items = list(messages)
    fmt = detect(items)  # sniffed once: the reader's and the preamble's format
    chat = to_chat(items, "live_state", fmt)
    st = TranscriptState(policy="\n".join(filter(None, (system_text(policy), policy_of(chat.messages)))),
                         masked=masked)
    fed = list(zip(chat.messages, chat.sources))
    response = claude_code.response_start(items, call) if fmt == "claude-code" and call is not None else None
    if response is not None:  # a Claude Code call's line: decided before its response, as the importer decides it
        fed = [(m, source) for m, source in fed if claude_code.entry_at(source) < response]
    elif call is not None and fed and preamble(fmt, chat) and (fmt != "gemini" or gemini.turn_open(items)):
        # the assistant's words right before the call are its turn's: decided before them (a Gemini user's content
        # without text after them closed their turn: gemini.turn_open)
        fed = fed[:-1]
    for m, source in fed:
        st.add(m, source)
    if call is not None:
        call = claude_code.given_calls(call)
        calls = as_calls(call)
        check_arguments(calls, argument_names(call))  # no JSON object: no argument to flag, refused (one rule)
        return st.call_state(calls)
    if tool is None:
        raise ValueError("live_state needs the tool call, or tool= and arguments= (its argument names)")
    if isinstance(tool, Mapping):
        tool, declared = tool_definition(tool, "tool")
        arguments = declared if arguments is None else arguments
    if not isinstance(tool, str) or not tool:
        raise ValueError(f"live_state's tool is {json_type(tool)}: give the tool's name or its definition "
                         f"({TOOL_SHAPE})")
    paths = sorted(set(schema_paths(argument_schema(arguments))))
    state = {**(st.events[-1]["state"] if st.events else st.snapshot()), "phase": tool}
    if masked:
        state["constraints"] = {k: v for k, v in state["constraints"].items() if k not in paths}
        state["uncertainty_flags"] = paths
    return state
