"""Tool-call transcript files → agent-log events: the importer (files, the fixed split, the CLI).

Agents log what the LLM API saw and said, in one of several formats; a reader per format
(:mod:`sam_model.data.formats`) turns each conversation into chat messages, and the labelling rule of
``../shared/spec/tool-transcripts.md`` (:mod:`sam_model.data.toolstate`) derives the state and the labels from
them. Nothing is dropped silently: bad conversations stop the import or are skipped and counted, and a file
that yields no conversation or no tool call is an error unless asked for. The rule's names are re-exported here (``TranscriptState``, ``live_state``, ``says``, ...)
for code written against this module.

CLI::

    python -m sam_model.data.transcripts ../shared/data/tau-bench/gpt-4o-airline.json.gz OUT.jsonl [--split train]
    python -m sam_model.data.transcripts examples/logs/anthropic.jsonl OUT.jsonl [--format anthropic]
"""

from __future__ import annotations

import argparse
import difflib
import gzip
import hashlib
import json
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from sam_model.data.advice import Advice, spelt
from sam_model.data.argumentleaves import leaves  # noqa: F401  (re-exported: the rule's public names)
from sam_model.data.callshapes import schema_paths  # noqa: F401
from sam_model.data.chatmessages import ToolCall, content_text, parse_tool_calls, policy_of  # noqa: F401
from sam_model.data.eventtexts import RESULT_CUT, call_text, result_shape  # noqa: F401
from sam_model.data.formats import (
    FORMATS,
    Chat,
    Conversation,
    adk,
    detect,
    files,
    openhands,
    openhands_v1,
    to_chat,
    tool_mark_kinds,
    tool_marks,
)
from sam_model.data.formats.base import (
    ANSWERS,
    FAILED,
    OwnFieldError,
    TranscriptFormatError,  # noqa: F401
)
from sam_model.data.formats.chat import ROLES
from sam_model.data.formats.files import episode_id_of, is_transcript_file  # noqa: F401  (re-exported)
from sam_model.data.lives import make_lives
from sam_model.data.reader import check_output
from sam_model.data.sayings import mask_constraints, says  # noqa: F401
from sam_model.data.toolstate import (  # noqa: F401
    LABELS,
    OUTCOMES,
    Decision,
    Label,
    TranscriptState,
    live_state,
)
from sam_model.data.trivialvalues import is_free_text, is_trivial  # noqa: F401
from sam_model.io import SAMFileError, atomic_path, cli_name, json_type, run_cli
from sam_model.progress import progress_bar

Split = Literal["all", "train", "test"]
SPLITS: tuple[str, ...] = ("all", "train", "test")
TEST_FRACTION = 0.2  # share of task groups held out as "test" (by a hash of the group: a fixed split)
PROGRESS_AFTER_S = 1.0  # a conversion done sooner shows no progress (and a bad input's error stays one line)
MIN_REPEAT_EVENTS = 2  # a conversation of fewer events (a greeting alone) repeats another by chance


def first_listed(items: Sequence[Any], limit: int = 20, what: str = "", show: Callable[[Any], str] = str,
                 sep: str = ", ", last: str = " and") -> str:
    """The first ``limit`` of ``items`` shown (``show``) and joined by ``sep``, then "and N more" (``last``, the
    word ``what`` after it) where there are more: a report's note names a few and counts the rest, so a folder of
    thousands of files is still one line. Only the items named are shown; one helper, so each note says it alike."""
    listed = sep.join(show(item) for item in items[:limit])
    more = len(items) - limit
    return listed + (f"{last} {more} more" + (f" {what}" if what else "") if more > 0 else "")


def _in_file(entry: tuple[str, int]) -> str:
    """A (where first, how many) entry of a note of a file's lines: the first, with the rest of that file counted."""
    at, k = entry
    return f"{at}" + (f" (and {k - 1} more in the file)" if k > 1 else "")


# OpenTelemetry spans hold no 'group': a conversation logged a trace a turn is one only through its id
OTEL_REPEATS = ("; OpenTelemetry spans: a trace whose spans, and their ancestors', name no gen_ai.conversation.id is a "
                "conversation of its own, so an agent traced a trace a user turn repeats the earlier turns in each: "
                "record the id on its invoke_agent or chat spans")


@dataclass
class ImportReport:
    """What an import derived, and what it skipped or kept despite a fault: nothing is dropped silently."""

    conversations: int = 0
    events: int = 0
    decision_points: int = 0
    labels: int = 0
    calls: int = 0
    calls_without_history: int = 0
    invalid_arguments: list[str] = field(default_factory=list)  # where, and why
    unmatched_results: list[str] = field(default_factory=list)  # tool results that answer no earlier call
    outcomes: Counter = field(default_factory=Counter)
    free_text: int = 0  # of the trivial outcomes, whole arguments of free text (never traced)
    untraceable: Counter = field(default_factory=Counter)  # TOOL.PATH -> untraceable values of that argument
    unanswered: int = 0  # tool calls (with an id) that no tool result answers
    unanswered_in: int = 0  # conversations holding one
    unanswered_at: str = ""  # where the first was made
    distances: Counter = field(default_factory=Counter)  # step distance to a label -> count
    labels_per_decision: Counter = field(default_factory=Counter)
    candidates: int = 0  # summed over decision points
    skipped: list[TranscriptFormatError] = field(default_factory=list)
    out_of_split: int = 0
    formats: Counter = field(default_factory=Counter)  # conversations read per format
    user_tool_calls: int = 0  # tau2 user-side calls (device actions): never in the agent's memory
    ignored: Counter = field(default_factory=Counter)  # parts no event is made of, by type
    lacking: Counter = field(default_factory=Counter)  # what conversations were read without (Conversation.lacking)
    without_tool_calls: int = 0  # conversations with messages but no tool call
    marks: Counter = field(default_factory=Counter)  # what tool-like content those showed, for the error
    result_limit: int | None = None  # the --result-limit the import ran with (None: whole results)
    results_cut: int = 0  # tool results cut at result_limit
    cut_lines: list[str] = field(default_factory=list)  # session files' last lines cut mid-write, left out: FILE:LINE
    stderr_lines: dict[str, int] = field(default_factory=dict)  # a file's first line of stderr mixed in -> its count
    abandoned: dict[str, int] = field(default_factory=dict)  # a session's first turn of a branch it left -> their count
    continuing: list[str] = field(default_factory=list)  # conversations begun at a request continuing a lacked response
    looping: list[str] = field(default_factory=list)  # requests read alone, their previous ids leading round a loop
    misplaced: dict[str, int] = field(default_factory=dict)  # a session's first result read past later calls -> count
    other_roles: Counter = field(default_factory=Counter)  # messages of a role outside OpenAI's (events of its kind)
    other_role_at: dict[str, str] = field(default_factory=dict)  # each such role -> where it was first met
    openings: dict[int, str] = field(default_factory=dict, repr=False)  # a proper opening's events -> whose it is
    wholes: dict[int, str] = field(default_factory=dict, repr=False)  # a conversation's events -> where it is
    copies: list[tuple[str, str]] = field(default_factory=list)  # a conversation repeating another whole -> both
    passed: list[str] = field(default_factory=list)  # a folder's files passed over (files.passed_over), each warned of

    def seen(self, where: str, events: list[dict[str, Any]]) -> None:
        """Keep what a converted conversation's events say (kind and text, a chained hash of each opening) to tell
        the conversations that repeat another's opening or all of it (:meth:`repeats`)."""
        h, chain = 0, []
        for e in events:
            h = hash((h, e["kind"], e["text"]))
            chain.append(h)
        if len(chain) < MIN_REPEAT_EVENTS:
            return
        for c in chain[MIN_REPEAT_EVENTS - 1:-1]:
            self.openings.setdefault(c, where)
        if chain[-1] in self.wholes:
            self.copies.append((where, self.wholes[chain[-1]]))
        else:
            self.wholes[chain[-1]] = where

    def repeats(self) -> list[tuple[str, str]]:
        """(where, where the longer or first one is) of each conversation whose events are the opening of a longer
        one or another's whole, event for event: a log of every model request, each holding the conversation so
        far (a proxy's, LangSmith's LLM runs). Their decisions are trained on again and the split draws each copy
        apart from the rest, so validation scores conversations training saw."""
        return self.copies + [(where, self.openings[h]) for h, where in self.wholes.items() if h in self.openings]

    def repeats_note(self) -> str:
        """The repeated conversations (:meth:`repeats`): how many, and the first (sam-data transcripts and
        sam-train say it alike)."""
        found = self.repeats()
        n = len(found)
        return (f"{n} conversation{'s' if n > 1 else ''} repeat{'' if n > 1 else 's'} the opening of a longer one or "
                "another whole, event for event (a log of every model request, each with the conversation so far?): "
                "trained on again, and split apart from it so that validation scores what training saw; keep each "
                "conversation's last request, or give the copies one 'group'" + (OTEL_REPEATS if self.formats.get("otel")
                                                                                  else "") + ": "
                + first_listed(found, 5, show=lambda pair: f"{pair[0]} (of {pair[1]})"))

    def lines(self) -> list[str]:
        n = max(self.decision_points, 1)
        leaves_total = sum(self.outcomes.values()) or 1
        free = self.free_text  # of the trivial ones: whole arguments never traced, said apart
        dist = sorted(self.distances.elements())
        out = [f"{self.conversations} conversations, {self.events} events, {self.decision_points} decision points, "
               f"{self.labels} labels ({self.labels / n:.2f} per decision, {self.candidates / n:.1f} candidates)",
               "formats: " + ", ".join(f"{k} {v}" for k, v in sorted(self.formats.items())),
               "labels per decision: " + ", ".join(f"{k}: {v}" for k, v in sorted(self.labels_per_decision.items())),
               f"tool calls: {self.calls} ({self.calls_without_history} without history, skipped; "
               f"{len(self.invalid_arguments)} with arguments that are not a JSON object, kept as raw text)",
               "argument values: " + ", ".join(f"{o} {self.outcomes[o]} ({self.outcomes[o] / leaves_total:.0%}"
                                               + (f": {free} free text, more than 8 words or 100 characters, never "
                                                  "traced" if o == "trivial" and free else "") + ")"
                                               for o in OUTCOMES)]
        if self.untraceable:
            out.append(self.untraceable_note())
        if dist:
            q = [dist[min(len(dist) - 1, int(p * len(dist)))] for p in (0.5, 0.9)]
            out.append(f"step distance to the labels: mean {sum(dist) / len(dist):.1f}, median {q[0]}, "
                       f"90th percentile {q[1]}, max {dist[-1]}")
        out += [f"  {w}" for w in self.invalid_arguments[:20]]
        if self.unmatched_results:
            out.append(f"{len(self.unmatched_results)} tool results answer no earlier tool call, or a call id given "
                       "twice (kept, named by their 'name', else the latest call's, else 'tool'; a truncated or merged "
                       "transcript?):")
            out += [f"  {w}" for w in self.unmatched_results[:5]]
        if self.result_limit is not None:
            out.append(f"{self.results_cut} tool results cut at {self.result_limit} characters (--result-limit)")
        if self.user_tool_calls:
            out.append(f"user-side tool calls kept out of the agent's memory (tau2 device actions): "
                       f"{self.user_tool_calls}")
        if self.unanswered:
            out.append(self.unanswered_note())
        if self.without_tool_calls:
            out.append(f"{self.without_tool_calls} conversations without a tool call (their events are kept)")
        if self.calls > self.calls_without_history and not self.decision_points:  # written, yet nothing to train on
            out.append(f"no decision point: no argument value of the {self.calls} tool calls is said by an earlier "
                       "event (the counts above), so this log labels nothing to train or evaluate on. Values are "
                       "traced whole, a string as one value, but for a shell tool's command line (grep -n parse "
                       "src/a.py: its words parse and src/a.py) and SWE-agent's text commands, split into words")
        if self.cut_lines:
            out.append(self.cut_note())
        if self.stderr_lines:
            out.append(self.stderr_note())
        if self.abandoned:
            out.append(self.abandoned_note())
        if self.continuing:
            out.append(self.continuing_note())
        if self.looping:
            out.append(self.looping_note())
        if self.misplaced:
            out.append(self.misplaced_note())
        if self.other_roles:
            out.append(self.roles_note())
        if self.repeats():
            out.append(self.repeats_note())
        if self.lacking:
            out.append(self.lacking_note())
        if self.ignored:
            out.append("parts not read (no event is made of them): " +
                       ", ".join(f"{k} {v}" for k, v in self.ignored.most_common()))
        if self.out_of_split:
            out.append(f"{self.out_of_split} conversations outside the chosen split")
        if self.passed:
            out.append(self.passed_note())
        if self.skipped:
            out.append(f"skipped {len(self.skipped)} bad conversations:")
            out += first_listed(self.skipped, show="  {}".format, sep="\n", last="\n  ... and").split("\n")
        return out

    def passed_note(self) -> str:
        """The folder's files passed over as no log (an empty or another program's sessions.db or .msgpack, a session
        snapshot damaged in its first bytes, which cannot be told from one): said in a warning each, first of the
        output, and with a folder of many sessions that warning scrolled away above the summary unseen."""
        n = len(self.passed)
        return (f"{n} file{'s' if n > 1 else ''} of the folder passed over as no session, each said why in a warning "
                "above (empty, another program's, or a session damaged in its very first bytes, which cannot be told "
                "from one): " + first_listed(self.passed))

    def cut_note(self) -> str:
        """The session files read without their last line, cut mid-write (sam-data transcripts and sam-train say it
        alike: the line is left out of what they train on)."""
        n = len(self.cut_lines)
        return (f"{n} session file{'s' if n > 1 else ''} read without {'their' if n > 1 else 'its'} last line, cut "
                "mid-write (still being written?): " + first_listed(self.cut_lines))

    def stderr_note(self) -> str:
        """The lines of agents' stdout files that are no JSON, left out as their stderr mixed in (``2>&1 | tee``):
        how many, and the first of each file (sam-data transcripts and sam-train say it alike)."""
        n, files = sum(self.stderr_lines.values()), list(self.stderr_lines.items())
        return (f"{n} line{'s' if n > 1 else ''} that {'are' if n > 1 else 'is'} no JSON read as stderr mixed into "
                "the output and left out (2>FILE keeps it apart): " + first_listed(files, what="files", show=_in_file))

    def unanswered_note(self) -> str:
        """The tool calls no result answers. A conversation's last call may be cut off by its end, but a log of
        the model's outputs alone (a Responses API response object holds no input: neither the user's words nor the
        function_call_output items the next request sends) answers none, and the values most calls take, ids a
        result returned, then trace to nothing: found by a walkthrough, whose report said nothing of it."""
        n, k = self.unanswered, self.unanswered_in
        return (f"{n} tool call{'s' if n > 1 else ''} with no result answering {'them' if n > 1 else 'it'}, in {k} "
                f"conversation{'s' if k > 1 else ''} (the first at {self.unanswered_at}): a conversation cut off after "
                "its last call, or a log of the model's outputs without the inputs that carried the results back (a "
                "Responses API response object alone holds no input: log each request's 'input' beside its 'output')")

    def untraceable_note(self) -> str:
        """Which arguments the untraceable values were, the most frequent first: a value no earlier event says as
        written (the agent's own choice, or said in another form: a weekday the call writes as a date) labels
        nothing, and an argument that is always so is one to check in the logs."""
        counted = self.untraceable.most_common()
        return ("untraceable by argument (no earlier event says the value as written: the agent's own, or said in "
                "another form): " + first_listed(counted, 6, "arguments" if len(counted) > 7 else "argument",
                                                 lambda pair: f"{pair[0]} {pair[1]}"))

    def abandoned_note(self) -> str:
        """The turns of branches a session left (a Claude Code rewind, edited prompt or retried response; a Gemini
        CLI rewind; a Responses request sent again), which the agent keeps in its file and the reader leaves out:
        how many, and the first of each conversation (sam-data transcripts and sam-train say it alike). Those past
        the twentieth are counted as conversations: a file of Responses requests holds many (they were 'more
        files', of one file)."""
        n, convs = sum(self.abandoned.values()), list(self.abandoned.items())
        return (f"{n} entr{'ies' if n > 1 else 'y'} of branches the conversation left (a rewind, an edited prompt, a "
                "retried response: the agent keeps them in its session file) left out: "
                + first_listed(convs, what="conversations", show=_in_file))

    def lacking_note(self) -> str:
        """What conversations were read without that their log keeps elsewhere (Conversation.lacking: an AutoGen
        state's system_message, in a config saved beside it), by what, with where to find it."""
        return ("conversations read without a part their log keeps elsewhere: " +
                ", ".join(f"{k} {v}" for k, v in self.lacking.most_common()))

    def continuing_note(self) -> str:
        """The conversations that begin at a Responses request continuing a response the file lacks: what was said
        before that request is not read, so the values it said trace to nothing (a log rotated by day, a line lost),
        which nothing else in the report said."""
        n, at = len(self.continuing), self.continuing[0]
        return (f"{n} conversation{'s' if n > 1 else ''} begin{'' if n > 1 else 's'} at a request whose "
                f"previous_response_id names a response no line of the file holds (the first at {at}): what was said "
                "before it is not read; give each conversation's requests in one file (cat the days' files in order) "
                "and log every request")

    def looping_note(self) -> str:
        """The Responses requests whose previous_response_id leads round a loop of ids (an app's made-up ids: a
        continues b, b continues a), none of them a first request: each is read as a conversation of its own, which
        the report had not said (the requests simply were not joined)."""
        n, at = len(self.looping), self.looping[0]
        return (f"{n} request{'s' if n > 1 else ''} read as {'conversations' if n > 1 else 'a conversation'} of "
                f"{'their' if n > 1 else 'its'} own: following previous_response_id from {'each' if n > 1 else 'it'} "
                f"leads round a loop of ids, none of them a first request (the first at {at}); log response.id as "
                "the API returns it, and previous_response_id as the request sent it")

    def misplaced_note(self) -> str:
        """The tool results a reader read after calls of a later response, the file lacking the marks its producer
        writes between responses (a Codex 0.3x-0.77 rollout without a turn_context line before each model
        request: the request read as one, all its calls one turn before their results): how many, and the first of
        each session (sam-data transcripts and sam-train say it alike). Kept as read: the note says where to look."""
        n, files = sum(self.misplaced.values()), list(self.misplaced.items())
        return (f"{n} tool result{'s' if n > 1 else ''} read after calls of a later model response (those calls "
                "read as made before them): a rollout of Codex 0.3x-0.77 without the turn_context line those "
                "versions write before each model request (edited or merged?): "
                + first_listed(files, what="files", show=_in_file))

    def roles_note(self) -> str:
        """The roles outside OpenAI's, which the spec keeps as events of their own kind: each with its count and where
        it was first met, and the API role it is close to (a misspelt ``asistant`` made events no model reads as the
        agent's words). sam-data transcripts and sam-train say it alike."""
        def role_seen(entry: tuple[str, int]) -> str:
            role, n = entry
            close = difflib.get_close_matches(role.lower(), ROLES, n=1)
            return (f"{role!r} in {n} message{'s' if n > 1 else ''}, first at {self.other_role_at[role]}"
                    + (f" (did you mean {close[0]!r}? then fix the log)" if close else ""))

        return (f"roles outside OpenAI's ({', '.join(ROLES)}), read as events of their own kind as the spec says: "
                + first_listed(self.other_roles.most_common(), 10, "roles", role_seen, sep="; ", last="; and"))

    def no_tool_call_reason(self) -> tuple[str | Advice, ...]:
        """Why a file whose conversations hold no tool call is refused: what tool-like content was seen (the parts
        of a TranscriptFormatError's reason). No other reader is advised: a conversation with another reader's
        calls was refused already (convert_conversation), so what is seen here its own reader read (it said "try
        --format X" of the X that had read it)."""
        saw = "; ".join(f"{what} found in {n} conversations, read by the {fmt} reader without a tool call among them"
                        for (what, fmt), n in self.marks.most_common(3))
        return (f"{self.conversations} conversations ({self.events} events) but no tool call was read, so nothing "
                "can be labelled (formats read: " + ", ".join(f"{k} {v}" for k, v in sorted(self.formats.items()))
                + "); " + (saw or "no tool-call fields of any format at all (none of: " + ", ".join(tool_mark_kinds())
                           + ")")
                + "; if these conversations really have no tools, ",
                Advice("allow_empty"))


def _another_reader(conv: Conversation) -> tuple[str, str] | None:
    """(what was seen, the format whose reader reads it) for a conversation read by a reader not its own (a forced
    --format on a log of another format): the format its messages' shape tells (detect, whose order settles which
    of several formats' marks a log holds: a SWE-agent history holds OpenAI's tool_calls too), named by the tool
    calls of it that it holds (tool_marks); else another reader's tool calls; None when its own reader is the one
    (the shape tells it: a SWE-agent history's own error was told to try --format openai, for its tool_calls)."""
    shape = detect(conv.messages)
    fmt = conv.format or shape
    others = [(what, f) for what, f in tool_marks(conv.messages) if FORMATS[f].to_chat is not FORMATS[fmt].to_chat]
    if FORMATS[shape].sniff(conv.messages):
        if FORMATS[shape].to_chat is FORMATS[fmt].to_chat:
            return None
        return next(((what, f) for what, f in others if f == shape), (f"messages of {FORMATS[shape].title}", shape))
    return others[0] if others else None


def _other_reader(conv: Conversation) -> tuple[str | Advice, ...]:
    """For a conversation its reader could not read: the reader of what it holds, when that is another (a forced
    --format on another format's log crashed inside the reader, which then said only what Python did)."""
    other = _another_reader(conv)
    if other:
        return f"; it holds {other[0]}, which the {other[1]} reader reads: ", Advice("format", other[1])
    fmt = conv.format or detect(conv.messages)
    return (f"; the {fmt} reader expects {FORMATS[fmt].title} (sam-data formats lists the formats)",)


def _read(conv: Conversation, fmt: str) -> Chat:
    """``conv`` as chat messages; a reader's refusal (an unknown role, a block of a shape it does not know) names the
    reader that would read the conversation when it is another's (a Gemini log forced through --format bedrock
    said only "role 'model' is not a Converse role")."""
    try:  # a V1 conversation's head its state names (base_state.json), an ADK session's owner (whose memories are
        # SAM's recall in it): the readers given what their container holds beside the messages
        if conv.head and fmt == openhands.V1:
            chat = openhands_v1.to_chat(conv.messages, conv.where, conv.head)
        elif conv.owner and fmt == "adk":
            chat = adk.to_chat(conv.messages, conv.where, owner=conv.owner)
        else:
            chat = to_chat(conv.messages, conv.where, fmt)
    except TranscriptFormatError as err:
        if err.advice or isinstance(err, OwnFieldError) or _another_reader(conv) is None:
            raise
        raise TranscriptFormatError(err.where, *err.parts, *_other_reader(conv)) from None
    chat.known_before(conv.cwd)  # a directory the container records apart from the messages (mini-swe-agent's)
    return chat


def convert_conversation(conv: Conversation, label: Label = "origin", masked: bool = True,
                         report: ImportReport | None = None, result_limit: int | None = None) -> list[dict[str, Any]]:
    """One conversation (in any format) → the event dicts of one episode; raises TranscriptFormatError naming the
    message of the file. Tool results are kept whole unless ``result_limit`` (characters) is given."""
    if not isinstance(conv.messages, list):
        raise TranscriptFormatError(conv.where, f"'messages' is {json_type(conv.messages)}, expected a list")
    if not conv.messages:
        raise TranscriptFormatError(conv.where, "empty conversation (no messages)")
    fmt = conv.format or detect(conv.messages)
    chat = _read(conv, fmt)
    for m in chat.messages:  # results of the calls the container flags as failed (OpenTelemetry's tool spans)
        if conv.failed_calls and m.get("role") == "tool" and m.get("tool_call_id") in conv.failed_calls:
            m[FAILED] = True
    messages = ([{"role": "system", "content": conv.policy}] if conv.policy else []) + chat.messages
    sources = (["policy"] if conv.policy else []) + chat.sources
    st = TranscriptState(conv.episode_id, policy_of(messages, conv.where), label, masked, result_limit)
    local = ImportReport()
    asked: dict[str, str] = {}  # each call's id -> where it was made; answered ones are dropped (unanswered_note)
    for message, source in zip(messages, sources):
        where = f"{conv.where}, {source}"
        made = (parse_tool_calls(message, where) if isinstance(message, Mapping)
                and message.get("role") == "assistant" else [])
        n_calls = len(made)
        if isinstance(message, Mapping) and message.get("role") == "tool":
            for answered in (message.get("tool_call_id"), *(message.get(ANSWERS) or ())):
                asked.pop(str(answered), None)
        asked.update({str(c.id): where for c in made if c.id is not None})
        decided_at = len(st.events) - 1
        decision, _ = st.feed(message, where)
        local.calls += n_calls
        if n_calls and decision is None:
            local.calls_without_history += n_calls
        elif decision is not None:
            local.outcomes.update(decision.outcomes)
            local.free_text += decision.free_text
            local.untraceable.update(decision.untraceable)
            if decision.labels:
                local.decision_points += 1
                local.labels += len(decision.labels)
                local.labels_per_decision[len(decision.labels)] += 1
                local.distances.update(decision.distances)
                local.candidates += st.events[decided_at]["step"]
    # a forced reader that reads none of another format's messages (Converse's under anthropic, Gemini's under
    # openai) made no event: the empty conversation names the reader whose calls it holds
    if not st.events:
        raise TranscriptFormatError(conv.where, "empty conversation (no user, assistant or tool content)",
                                    *(_other_reader(conv) if _another_reader(conv) else ()))
    # another format's tool calls: none read, or (a forced reader that also takes them) every one of them another's
    marks = tool_marks(conv.messages)
    misread = [(what, f) for what, f in marks if FORMATS[f].to_chat is not FORMATS[fmt].to_chat]
    if misread and (not local.calls or len(misread) == len(marks)):
        what, other = misread[0]
        read = f"{local.calls} tool calls read by the {fmt} reader" if local.calls else f"no tool call read by the {fmt} reader"
        raise TranscriptFormatError(conv.where, f"{read}, but {what} found: the {other} reader reads these, ",
                                    Advice("format", other))
    if conv.group != conv.episode_id:  # episodes of one group (a task's trials) stay in one split downstream too
        for event in st.events:
            event["meta"] = {**event.get("meta", {}), "group": conv.group}
    if report is not None:
        report.conversations += 1
        report.events += len(st.events)
        report.invalid_arguments += st.invalid_arguments
        report.unmatched_results += st.unmatched_results  # each names its file, line and message
        report.result_limit, report.results_cut = result_limit, report.results_cut + st.results_cut
        for name in ("decision_points", "labels", "calls", "calls_without_history", "candidates"):
            setattr(report, name, getattr(report, name) + getattr(local, name))
        report.outcomes.update(local.outcomes)
        report.free_text += local.free_text
        if asked:
            report.unanswered += len(asked)
            report.unanswered_in += 1
            report.unanswered_at = report.unanswered_at or next(iter(asked.values()))
        report.untraceable.update(local.untraceable)
        report.distances.update(local.distances)
        report.labels_per_decision.update(local.labels_per_decision)
        report.formats[fmt] += 1
        report.user_tool_calls += chat.user_tool_calls
        report.ignored.update(chat.ignored)
        report.lacking.update(conv.lacking)
        report.other_roles.update(chat.other_roles)
        for role, at in chat.other_role_at.items():
            report.other_role_at.setdefault(role, at)
        if conv.cut and conv.cut not in report.cut_lines:  # once a file, whichever of its conversations is read
            report.cut_lines.append(conv.cut)
        if conv.stderr:  # once a file too: its conversations share its lines
            report.stderr_lines.setdefault(conv.stderr[0], len(conv.stderr))
        if conv.abandoned:  # the main chain's alone: one conversation a file
            report.abandoned.setdefault(conv.abandoned[0], len(conv.abandoned))
        if conv.continues:
            report.continuing.append(f"{conv.where}, continuing {conv.continues}")
        if conv.loops:
            report.looping.append(f"{conv.where}, ids {conv.loops}")
        if chat.misplaced:
            report.misplaced.setdefault(chat.misplaced[0], len(chat.misplaced))
        report.without_tool_calls += not local.calls
        report.marks.update(marks)
    return st.events


def iter_conversations(path: str | Path, report: ImportReport | None = None, format: str | None = None,
                       on_file: Callable[[Path], None] | None = None,
                       on_passed: Callable[[str], None] | None = None) -> Iterator[Conversation]:
    """Conversations of a log file of any format (sam_model.data.formats.files): JSON Lines of conversations
    (optional ``group``: conversations that share a split), a JSON list of them or of tau-bench trajectories, a
    tau2 results file, OTLP spans. ``format`` forces a reader (None: told from the content).

    A container-level fault of one conversation (bad JSON line, no ``id``) raises, or with ``report`` given
    is recorded in ``report.skipped`` and the conversation is skipped. ``on_file``: called with each file of a
    trajectory folder once it was read; ``on_passed``: with each file a folder passes over as no log (warned of too).
    """
    for item in files.conversations(path, format, on_file, on_passed):
        if isinstance(item, TranscriptFormatError):
            if report is None:
                raise _skippable(item)
            report.skipped.append(item)
        else:
            yield item


def _shown(path: str | Path, report: ImportReport | None, format: str | None, desc: str,
           enabled: bool, on_passed: Callable[[str], None] | None = None) -> Iterator[Conversation]:
    """iter_conversations, with progress (sam_model.progress: a bar on a terminal, lines into a file) once reading
    takes longer than PROGRESS_AFTER_S: conversations counted, and a folder's files against their total (a folder
    of thousands of runs, or a big file, converted in silence)."""
    folder = Path(path).is_dir()
    total = len(files.trajectory_files(Path(path))) if enabled and folder else None
    read = 0
    with progress_bar(total=total, desc=desc, unit=" files" if folder else " conversations", disable=not enabled,
                      delay=PROGRESS_AFTER_S) as bar:
        def file_read(_: Path) -> None:
            bar.set_postfix_str(f"{read} conversations", refresh=False)
            bar.update()

        for conv in iter_conversations(path, report, format, file_read if folder else None, on_passed):
            read += 1
            if not folder:
                bar.update()
            yield conv


def _skippable(err: TranscriptFormatError) -> TranscriptFormatError:
    err.skippable = True
    return err


def skip_would_help(exc: BaseException) -> bool:
    """Whether ``exc`` is one bad conversation that a skip option (``--skip-bad``, ``data.on_error: skip``,
    ``--skip-bad-lines``) would pass over: the one test every caller's "or skip it" hint uses. Not a fault of the
    whole file, nor one whose reason advises what to do (another reader, keeping what a cut file held) or names a
    command (an agent log given as transcripts: skipping would skip every line)."""
    return isinstance(exc, TranscriptFormatError) and exc.skippable and not exc.advice and "--" not in exc.reason


def _group_hash(group: str) -> str:
    return hashlib.sha1(f"sam_model-split:{group}".encode()).hexdigest()


def held_out_groups(groups: Iterable[str], test_fraction: float = TEST_FRACTION) -> frozenset[str]:
    """The fixed test split: of the distinct groups, the ``round(test_fraction · n)`` (at least one when the
    fraction is positive and there are two or more groups) with the smallest hash of their name.

    A hash, not the file order, decides, so every file that holds the same tasks (other agents' trials of
    them) splits them alike, and the trials of one task always land together.
    """
    distinct = sorted(set(groups), key=_group_hash)
    n = round(test_fraction * len(distinct))
    if test_fraction > 0 and len(distinct) >= 2:
        n = max(n, 1)
    return frozenset(distinct[:n])


def iter_transcript_events(path: str | Path, label: Label = "origin", masked: bool = True, split: Split = "all",
                           test_fraction: float = TEST_FRACTION, skip_bad: bool = False,
                           report: ImportReport | None = None, max_conversations: int | None = None,
                           format: str | None = None, allow_empty: bool = False,
                           result_limit: int | None = None, progress: bool = False) -> Iterator[dict[str, Any]]:
    """Agent-log event dicts of every conversation of ``path`` in the chosen split, episode after episode.

    Bad conversations raise TranscriptFormatError, or with ``skip_bad`` are skipped and recorded in ``report``.
    ``format``: force a reader (sam_model.data.formats.FORMATS; None: told from the content). A file that gives
    no conversation, or conversations without a single tool call, raises at its end (after its events were
    yielded: write them atomically) unless ``allow_empty``. ``result_limit``: cut tool results at this many
    characters (counted in ``report.results_cut``); None keeps them whole. ``progress``: show the conversations (and
    a folder's files) read, on stderr, once it takes longer than PROGRESS_AFTER_S.
    """
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    report = report if report is not None else ImportReport()
    test: frozenset[str] = frozenset()
    name = Path(path).name
    if split != "all":  # a first pass over the groups only
        with closing(_shown(path, ImportReport() if skip_bad else None, format, f"grouping {name} (--split)",
                            progress)) as first:
            test = held_out_groups((c.group for c in first), test_fraction)
    count = 0
    with closing(_shown(path, report if skip_bad else None, format, f"converting {name}", progress,
                        report.passed.append)) as convs:
        for conv in convs:
            if split != "all" and (conv.group in test) != (split == "test"):
                report.out_of_split += 1
                continue
            if max_conversations is not None and count >= max_conversations:
                break
            try:
                events = convert_conversation(conv, label, masked, report, result_limit)
            except TranscriptFormatError as err:
                if not skip_bad:
                    _skippable(err)
                    raise
                report.skipped.append(err)
                continue
            except (AttributeError, KeyError, TypeError, RecursionError) as exc:  # a shape no check foresaw
                err = TranscriptFormatError(conv.where, f"malformed conversation ({type(exc).__name__}: {exc})",
                                            *_other_reader(conv))
                if not skip_bad:
                    raise _skippable(err) from None
                report.skipped.append(err)
                continue
            count += 1
            report.seen(conv.where, events)
            yield from events
    if allow_empty or (max_conversations == 0):
        return
    if not report.conversations:
        outside = f" ({report.out_of_split} outside the split)" if report.out_of_split else ""
        if report.skipped:  # every one was bad: say why, not "an empty file?"
            first = report.skipped[0]
            raise TranscriptFormatError(first.where, f"no conversation converted{outside}: all {len(report.skipped)} "
                                                     "were bad, the first because ", *first.parts)
        raise TranscriptFormatError(str(path), f"no conversation converted{outside}: an empty file? ",
                                    Advice("allow_empty"))
    if not report.calls:
        raise TranscriptFormatError(str(path), *report.no_tool_call_reason())


def main(argv: list[str] | None = None) -> int:
    """The CLI: a bad input ends in one ``error: ...`` line (``--traceback`` for the full trace)."""
    return run_cli(_main, argv)


def _main(argv: list[str]) -> int:
    width = max(map(len, FORMATS))
    formats = "\n".join(f"  {f.name:<{width}} {f.title}: {f.file}" for f in FORMATS.values())
    parser = argparse.ArgumentParser(
        prog=cli_name("python -m sam_model.data.transcripts"), formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Convert the logs an agent wrote (tool-call conversations, in any of the formats below) into an "
                    "agent-log JSONL file with task states and\nretrieval labels derived from the conversations "
                    "(rules: shared/spec/tool-transcripts.md), and print what was derived.\n\nformats (told from "
                    f"the content; --format NAME forces one; sam-data formats lists them):\n{formats}\n\n"
                    "A file with no conversation, or with conversations but no tool call, is an error that says what "
                    "was seen (--allow-empty writes it anyway).")
    parser.add_argument("transcripts", help="the log file: .jsonl / .jsonl.gz (one conversation, or one OTLP "
                                            "export, per line), .json / .json.gz (one document), or a SWE-agent "
                                            ".traj (one run) or the folder of them, or a mini-swe-agent "
                                            "{instance_id}.traj.json (one run) or the folder of them, or the folder "
                                            "of OpenHands "
                                            "trajectories (.json), or a Strands Agents session folder (session_<id>/"
                                            "agents/agent_<id>/messages/message_<N>.json) or OpenHands session store "
                                            "(sessions/<sid>/events/<N>.json), or an OpenHands V1 conversation folder "
                                            "(events/event-NNNNN-ID.json), or the folder of them, or a Codex CLI rollout "
                                            "(rollout-*.jsonl, one session) or a folder of them (~/.codex/sessions), "
                                            "or a Claude Code session file (~/.claude/projects/<project>/<session "
                                            "id>.jsonl) or project folder, or the folder of them, or the stdout of "
                                            "claude -p --output-format stream-json --verbose or of codex exec --json "
                                            "(.jsonl, or Harbor's agent/claude-code.txt, agent/codex.txt: runs "
                                            "appended read one a session or thread), or a Gemini CLI session file "
                                            "(~/.gemini/tmp/<project hash>/chats/session-*.jsonl, or .json) or its "
                                            "chats folder, or a Pydantic AI history (.json: all_messages_json(), "
                                            "one conversation) or the folder of them, or an AutoGen agent's "
                                            "save_state() (.json, one conversation) or the folder of them, or a "
                                            "smolagents agent's memory steps (.json: get_full_steps(), one "
                                            "conversation), or a LlamaIndex agent's chat history (.json: "
                                            "[m.model_dump(mode='json') for m in memory.get_all()], one conversation), or "
                                            "a Google ADK session (.json: session.model_dump_json(), one "
                                            "conversation; a .jsonl of them, one a line); a folder "
                                            "holding "
                                            "runs of several of these is read whole, each run by its reader (a .json "
                                            "beside the others is a run when it holds a list of events)")
    parser.add_argument("out", help="output agent log (.jsonl, or .jsonl.gz to gzip it); written atomically")
    parser.add_argument("--format", choices=list(FORMATS), default=None,
                        help="read the file as this format instead of telling it from the content (a folder's files tell "
                             "their reader: another is refused)")
    parser.add_argument("--allow-empty", action="store_true",
                        help="write the log even when the file holds no conversation or no tool call (default: an "
                             "error that says what was seen)")
    parser.add_argument("--label", choices=LABELS, default="origin",
                        help="which earlier event labels a needed argument value: the first that says it (origin, "
                             "default), the last (latest) or every one (all)")
    parser.add_argument("--unmasked", action="store_true",
                        help="keep needed values in the decision point's constraints and leave its uncertainty flags "
                             "as they were (default: mask them and flag the needed argument paths)")
    parser.add_argument("--split", choices=SPLITS, default="all",
                        help="keep the conversations of one split: train or test, fixed per task group by a hash "
                             "(tau-bench: the task, so a task's trials stay together; JSON Lines: the line's 'group' "
                             "or 'task_id', else its id; SWE-agent: the instance id of the run's replay_config, "
                             "else the .traj's name (a .jsonl line without one: its line); mini-swe-agent: the run's "
                             "instance_id, else the file's name; OpenHands: an evaluation "
                             "line's instance_id, else the file's name, or its session's (V1: the conversation's "
                             "folder); Strands: the session; Codex: the session, a fork's the session it was forked "
                             "from; Claude Code: the session, its subagents' with it; a Pydantic AI .json: the "
                             "file's name; a smolagents memory's or LlamaIndex history's .json: the file's name; an ADK session: its user, app and id; an AutoGen save_state() .json: the file's name, a team's assistants "
                             "together); default all")
    parser.add_argument("--test-fraction", type=float, default=TEST_FRACTION, metavar="F",
                        help=f"share of groups in the test split (default {TEST_FRACTION})")
    parser.add_argument("--skip-bad", action="store_true",
                        help="skip bad lines and conversations and count them (each is listed with FILE:LINE or FILE: "
                             "conversation N, message M and the reason) instead of stopping at the first")
    parser.add_argument("--life", type=int, default=1, metavar="N",
                        help="concatenate every N consecutive conversations (of the split) into one agent life "
                             "(episode ids lifeN-00000, steps and labels shifted, the conversation kept in "
                             "meta.source_episode; default 1)")
    parser.add_argument("--result-limit", type=int, default=None, metavar="N",
                        help="cut each tool result's event text at N characters, as text[:N] + ' ...[+M chars]', and "
                             "report how many were cut (default: keep whole results; the spec's cut is "
                             f"{RESULT_CUT})")
    parser.add_argument("--force", action="store_true",
                        help="replace OUT even when it exists and is not an agent log (default: refused, nothing "
                             "written: a second input typed as OUT was replaced)")
    parser.add_argument("--max-conversations", type=int, default=None, metavar="N",
                        help="convert only the first N conversations of the split (default: all)")
    args = parser.parse_args(argv)
    if not 0.0 <= args.test_fraction <= 1.0:
        parser.error("--test-fraction must be between 0 and 1")
    if args.max_conversations is not None and args.max_conversations < 0:
        parser.error("--max-conversations must be >= 0")
    if args.life < 1:
        parser.error("--life must be >= 1")
    if args.result_limit is not None and args.result_limit < 1:
        parser.error("--result-limit must be >= 1 (characters)")
    try:
        check_output(args.out, [args.transcripts], args.force)
    except SAMFileError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    start = time.perf_counter()
    report = ImportReport()
    try:
        with atomic_path(args.out) as tmp:
            opener = gzip.open if str(args.out).endswith(".gz") else open
            with opener(tmp, "wt", encoding="utf-8") as out:
                lives, candidates = set(), 0
                for event in make_lives(iter_transcript_events(
                        args.transcripts, args.label, not args.unmasked, args.split, args.test_fraction, args.skip_bad,
                        report, args.max_conversations, args.format, args.allow_empty, args.result_limit,
                        progress=True),
                        args.life):
                    out.write(json.dumps(event, ensure_ascii=False) + "\n")
                    lives.add(event["episode_id"])
                    candidates += event["step"] if "useful_memory_steps" in event else 0
    except SAMFileError as exc:
        fix = skip_would_help(exc)
        print(f"error: {exc}" + (f"; fix it, or {spelt('skip', 'sam-data')} to convert the other conversations (each "
                                 "skipped one is listed)" if fix else ""), file=sys.stderr)
        return 1
    print(f"wrote {args.out} ({args.label}, {'unmasked' if args.unmasked else 'masked'}, split {args.split}) "
          f"in {time.perf_counter() - start:.1f} s")
    for line in report.lines():
        print(line)
    if args.life > 1:
        print(f"lives of {args.life}: {len(lives)} episodes, "
              f"{candidates / max(report.decision_points, 1):.1f} candidates per decision point")
    if report.decision_points and args.split == "all":  # the README's check before a fit: say the fit
        print(fit_line(args))
    return 0


def fit_line(args: argparse.Namespace) -> str:
    """The fit that adapts the default model to what was converted, as a command that runs as printed (its path
    quoted for the shell and the list). The transcripts as they are where the fit reads them as this run did;
    the converted log where it would not (a --format the fit cannot be told, bad conversations skipped, another
    labelling or masking, results cut): a fit of the transcripts failed or trained on other labels."""
    import shlex

    as_read = not (args.format or args.skip_bad or args.label != "origin" or args.unmasked
                   or args.result_limit is not None)
    path = str(args.transcripts if as_read else args.out)
    listed = f"[{path}]" if not set(path) & set(",[]{}#&*!|>'\"%@`:") and path.strip() == path \
        else json.dumps([path])  # YAML's flow list reads a plain path; JSON any other
    also = f"; the transcripts as they are, or {shlex.quote(str(args.out))}" if as_read else (
        ", the log converted with your options")
    return (f"next: sam-train fit --config adapt.yaml --data.train {shlex.quote(listed)} adapts the default model "
            f"to them (README \"Train on your own logs\"{also})")


if __name__ == "__main__":
    sys.exit(main())
