"""SWE-agent trajectories: the ``{instance_id}.traj`` file SWE-agent writes per run, ``{"history", "trajectory",
"info", ...}`` (sweagent/types.py: ``HistoryItem``, ``TrajectoryStep``).

``history`` is what the model saw, in order: items ``{"role", "content", "agent", "message_type"}`` (content a
string or text parts), the system prompt first (the policy: common knowledge). Demonstrations (``is_demo``: a
solved example put in the prompt) are not this episode's memory: they are skipped and counted. Items of an agent
other than the first item's (``agent``; SWE-agent's own history filter keeps its agent's items only) are skipped
and counted too. An assistant item's words are its ``thought`` (the discussion without the command; ``content``
when it has none).

Two generations of actions:

- **function calling** (SWE-agent 1.x): the assistant item's ``tool_calls`` (OpenAI's shape), answered by a
  ``tool`` item whose ``tool_call_ids`` lists the call (SWE-agent writes one; the first is read);
- **text commands** (0.x, and 1.x with a thought-action parser): no ``tool_calls``, the action is the command line
  in ``action`` (``open src/x.py 100``, ``find_file "x.py" src``), and the ``user`` item right after it is its
  output. SWE-agent runs its own commands (:data:`TOOLS`: its editor and search tools, ``submit``; and any other the
  run's system prompt documents, whose ``COMMANDS`` section lists each by its signature, ``summarize <path> - ...``
  in 0.x, ``summarize:`` then ``signature: ...`` in 1.x; or a user item that is no command's output, as 1.x renders
  ``{{command_docs}}`` into every template, the instance template's too: agents.py ``_get_format_dict``) and hands
  every other line to bash. So a command whose first
  word is none of them, or whose first line holds shell syntax (``|``, ``&&``, ``;``, a redirection), is a call of
  the shell tool ``bash`` with the whole line as its ``command`` (1.x function calling's own ``bash`` tool), read by
  the labelling rule's shell reading: ``ls -F`` or ``python -m pytest tests/x.py -q`` by their values, not their
  flags. One of SWE-agent's own commands is a call of that name: its shell-split words (quotes removed, ``#``
  comments dropped, as bash reads them) are its arguments, named by the command's **signature** (:class:`Signature`):
  the one the run's system prompt documents (0.x's ``open <path> [<line_number>] - ...`` line, edit's over three
  lines; a block's ``signature: open "<path>" [<line_number>]``, or its ``arguments:`` list where the signature
  names none), else SWE-agent's own (:data:`SIGNATURES`, cited there; of a command several tool bundles define, the
  first its words fit: ``edit 5:7`` with a text is edit_linting's, ``edit 'old' 'new'`` windowed_edit_replace's).
  So ``open src/x.py 212`` is ``path`` and ``line_number``, ``search_dir parse_header src`` ``search_term`` and
  ``dir``, as a function call names them (the state shows each name beside its value; ``arg1``, ``arg2`` hid what
  each was); a word past the signature, or of a command with none, is ``argN`` by its position.
  ``str_replace_editor``'s signature names ``command`` and ``path`` only: its other arguments are options. A word
  ``--NAME`` takes the words after it as the named argument ``NAME`` (``--view_range 240 260`` is ``view_range:
  [240, 260]``, one word is itself, an integer a number, none ``true``), as 1.x writes a function call's optional
  arguments in text (an option whose ``NAME`` a word before it took, ``edit 5:7 --start_line 9``, or given again
  before its last, is ``argN`` by its position: SWE-agent's tools never read it, windowed's ``open`` reading its
  first two words and the tools that parse options, ``str_replace_editor`` and windowed_edit_linting's ``edit``,
  refusing with argparse an option they do not define and keeping a repeated one's last value); a line range
  ``START:END`` is the list ``[START, END]``, or, for a signature's ``<start_line>:<end_line>``, the two numbers
  under their names, so each line number is a value the labeller traces. A multi-line command that ends in an ``end_of_edit`` line (any ``end_of_*``) takes the words of its first
  line and the lines between as one more argument (the edit's text: its signature's ``replacement_text``, long code
  being free text to the labeller, as ``arg2`` was); any other command is shell-split whole (a quoted argument may
  span lines, as ``edit 'old' 'new'`` writes it), or split at whitespace when its quotes do not close
  (:func:`sam_model.data.shelltokens.words`). So a path a search printed, then opened, is a value traced back to the
  search's result.

The **working directory** (toolstate traces an absolute path under it by its relative part: ``open
/testbed/src/x.py`` to the search that printed ``src/x.py``) is told on the output that records it: the
``(Current directory: DIR)`` line SWE-agent's 0.x templates end each observation with (the issue's too), and a
step's ``state.working_dir`` (1.x writes an object, 0.x its JSON): the one directory the steps state, if one, is
told from the first message on (the run never left it), else each step's on its output. The history's items carry no state, so
there the k-th step's is told on the output of the history's k-th command where the two hold as many commands.

**Line numbers** (:class:`Lines`): a command's line number (``goto 583``, ``edit 213:214``, ``open x.py 212``,
``str_replace_editor``'s ``view_range`` and ``insert_line``: :data:`LINE_NUMBERS`) is of the file the command acts on,
its ``path`` (under the working directory where relative) or else the open file (the ``(Open file: PATH)`` line the
templates end an output with, else the file of the output's last windowed view); an output's view (``[File: PATH (N
lines total)]`` then ``212:code``), ``cat -n`` listing and ``search_file`` result (``Line 212:code``) show lines of a
file. The reader marks both on the chat messages (``line_arguments``, ``shown_lines``), and toolstate labels such a
number by the latest output that showed that line of that file, not by the first event that said the number
anywhere (the issue's ``#212``).

A ``.traj`` without ``history`` is read from its ``trajectory`` steps (``{"thought", "action", "observation"}``:
each step a text command and its output, or an output without a command, read as a ``user`` item is; the steps
hold no system prompt or issue). A retry agent's file lists its
``attempts``: each is an episode of its own (``{file}-attemptN``), all in the instance's split group.

The split group (``--split``: a group's runs stay on one side) is the run's instance: SWE-agent 1.x writes the
run's config into ``replay_config`` (a JSON string of its RunSingleConfig, or null), whose ``problem_statement.id``
is the instance (the SWE-bench instance id, which also names the file ``{id}.traj``); a retry agent's file takes
the first found on it or its attempts. A run without one (0.x, whose ``.traj`` records no instance: ``environment``
names the environment, ``info`` the run's cost and exit) is grouped by its file's name, as SWE-agent names it by the
instance, or, in a ``.jsonl`` of runs, by its line (so runs of one instance there can only be kept together when
they carry their ``replay_config``). Without it the runs of one instance by several models in one ``.jsonl`` fell on
both sides of the split: the test split held the instances trained on.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

from sam_model.data.formats.base import (
    LINE_ARGUMENTS,
    SHOWN_LINES,
    Chat,
    Conversation,
    TranscriptFormatError,
    chat_call,
    result_text,
    strict_loads,
    text_of,
)
from sam_model.data.shelltokens import OPERATOR, bare, tokens
from sam_model.data.shelltokens import words as shell_words
from sam_model.data.toolarguments import is_shell_tool
from sam_model.io import json_shape, json_type

ROLES = ("system", "user", "assistant", "tool")
MARKS = ("message_type", "tool_call_ids", "is_demo")  # fields only SWE-agent's history items carry
# SWE-agent's own commands, 0.x (config/commands: defaults.sh, cursors_defaults.sh, search.sh, edit_linting.sh,
# forfeit.sh, filemap.py, submit.sh) and 1.x (tools/: defaults, windowed, search, edit_anthropic, windowed_edit_*,
# filemap, forfeit, submit, image_tools), and the exits its autosubmission records as a step's action; any other
# command line runs in bash
TOOLS = frozenset({"open", "goto", "scroll_up", "scroll_down", "create", "edit", "insert", "set_cursors", "search_dir",
                   "search_file", "find_file", "submit", "str_replace_editor", "filemap", "view_image", "exit_forfeit",
                   "exit_cost", "exit_context", "exit_error", "exit_format", "exit_api"})
SHELL = "bash"  # the tool a shell command line is a call of (1.x function calling's own, {"command": LINE})
# SWE-agent's own signatures, read where the run's system prompt documents none: 0.x's config/commands (defaults.sh,
# cursors_defaults.sh, search.sh, edit_linting.sh in both its forms, cursors_edit_linting.sh, filemap.py) and 1.x's
# tools/*/config.yaml (windowed, search, windowed_edit_linting, windowed_edit_replace, windowed_edit_rewrite, filemap,
# image_tools, edit_anthropic); a command several bundles define (edit) takes the first whose form its words fit
SIGNATURES: dict[str, tuple[str, ...]] = {
    "open": ('open "<path>" [<line_number>]',),
    "goto": ("goto <line_number>",),
    "create": ("create <filename>",),
    "edit": ("edit <start_line>:<end_line>\n<replacement_text>\nend_of_edit",
             "edit <start_line> <end_line>\n<replacement_text>\nend_of_edit", "edit\n<replacement_text>\nend_of_edit",
             "edit <search> <replace> [<replace-all>]", "edit <text>"),
    "insert": ("insert <text> [<line>]",),
    "set_cursors": ("set_cursors <start_line> <end_line>",),
    "search_dir": ("search_dir <search_term> [<dir>]",),
    "search_file": ("search_file <search_term> [<file>]",),
    "find_file": ("find_file <file_name> [<dir>]",),
    "filemap": ("filemap <file_path>",),
    "view_image": ("view_image <image_file>",),
    "str_replace_editor": ("str_replace_editor <command> <path>",),
}
# commands whose signature's optional arguments are --NAME options (edit_anthropic's argument_format), no positions
FLAGGED = frozenset({"str_replace_editor"})
_END = re.compile(r"end_of_\w+")
_RANGE = re.compile(r"(\d{1,12}):(\d{1,12})")  # as _INT: int() refuses a word of over 4300 digits
_INT = re.compile(r"-?\d{1,12}")
_FLAG = re.compile(r"--([A-Za-z_]\w*)")
_PLACEHOLDER = re.compile(r"<([A-Za-z_][\w-]*)>")
# a command the system prompt documents: 1.x's (and 0.x's detailed docs) "NAME:" then "  docstring:"/"  signature:",
# its signature's lines (a form over lines, edit's, goes on unindented) and its "    - NAME (type) [required]: ..."
# arguments; 0.x's default "NAME <arg> [<arg>] - docstring" entry inside its COMMANDS section (up to its first blank
# line; edit's over three lines, "end_of_edit - docstring" its last)
_DOC_BLOCK = re.compile(r"^([A-Za-z_]\w*):\n  (?:docstring|signature): ", re.MULTILINE)
_DOC_SIGNATURE = re.compile(r"^  signature: (.*(?:\n(?![A-Za-z_]\w*:$)\S.*)*)", re.MULTILINE)
_DOC_ARGUMENT = re.compile(r"^    - ([A-Za-z_][\w-]*) \([^)\n]*\) \[(required|optional)\]", re.MULTILINE)
_DOC_LINE = re.compile(r"^([A-Za-z_]\w*)((?: +[\"']?\[?<[^\n]*?)?(?:\n<[\w-]+>)*(?:\nend_of_\w+)?) - \S", re.MULTILINE)
_COMMANDS = re.compile(r"^COMMANDS:\n(.*?)(?:\n[ \t]*\n|\Z)", re.MULTILINE | re.DOTALL)
_CWD = re.compile(r"^\(Current directory: (.+)\)[ \t]*$", re.MULTILINE)  # 0.x's templates' last lines
_OPEN_FILE = re.compile(r"^\(Open file: (.+)\)[ \t]*$", re.MULTILINE)  # the line before it (1.x's templates too)
# the arguments of SWE-agent's commands that are line numbers of the file they act on (their path, else the open
# file): windowed's open and goto, edit_linting's and the cursors' line ranges, windowed_edit_replace's insert line,
# str_replace_editor's view_range and insert_line (the bundles :data:`SIGNATURES` cites)
LINE_NUMBERS: dict[str, tuple[str, ...]] = {
    "open": ("line_number",), "goto": ("line_number",), "edit": ("start_line", "end_line"), "insert": ("line",),
    "set_cursors": ("start_line", "end_line"), "str_replace_editor": ("view_range", "insert_line")}
# the outputs that print lines of a file with their numbers: windowed's view (WindowedFile.get_window_text:
# "[File: PATH (N lines total)]", then "212:code"), str_replace_editor's (_make_output: "... `cat -n` on PATH:", then
# "   212\tcode"; an edit's "The file PATH has been edited. Here's ... on a snippet of PATH:", an insert's "... on a
# snippet of the edited file:") and search_file's
# ('Found N matches for "TERM" in PATH:', then "Line 212:code"); OpenHands' agent skills print the same windows with
# "212|code" ("[File: PATH (N lines total after edit)]" after an edit, insert or append) and search_file's hits under
# '[Found N matches for "TERM" in PATH]', their lines ending in CRLF (Jupyter's: :func:`_lines`)
_VIEW = re.compile(r"\[File: (.+) \(\d+ lines total(?: after edit)?\)\]")
_CAT_N = re.compile(r".*?Here's the result of running `cat -n` on (?:a snippet of )?(.+):")  # after an edit's words
_FOUND = re.compile(r'Found \d+ matches for ".*" in (.+):|\[Found \d+ matches for ".*" in (.+)\]')
_NUMBERED = re.compile(r" *(\d{1,12})(?::|\t| |\|)")
_SEARCHED = re.compile(r"Line (\d{1,12}):")


def to_chat(items: list[Any], where: str) -> Chat:
    """History items (or ``trajectory`` steps) as chat messages."""
    chat = Chat()
    agent: Any = None
    own = TOOLS  # SWE-agent's own commands, and those the system prompt (or a template) documents
    forms: dict[str, Signature] = {}  # the signatures the system prompt (or a template) documents
    awaiting: str | None = None  # the id of the text command whose output comes next
    state = ""  # the working directory the step of the last command states, told on its output
    lines = Lines()  # the open file, and the file each call acts on: the line numbers of both (toolstate)
    for i, m in enumerate(items):
        step = isinstance(m, Mapping) and "role" not in m and ("action" in m or "observation" in m)
        source = f"{'trajectory step' if step else 'history item'} {i}"
        w = f"{where}, {source}"
        if not isinstance(m, Mapping):
            raise TranscriptFormatError(w, f"a history item must be an object, got {json_type(m)}")
        if step:  # a TrajectoryStep: the command, then its output
            call = command_call(m.get("action"), f"step-{i}", w, own, forms)
            thought = m.get("thought") if isinstance(m.get("thought"), str) else m.get("response")
            chat.add({"role": "assistant", "content": result_text(thought) or None,
                      **({"tool_calls": [call], **lines.calls([call], chat.cwd)} if call else {})}, source)
            output = result_text(m.get("observation"))
            chat.cwd = working_dir(m, w) or told_dir(output) or chat.cwd
            lines.opened(output)
            if call:
                chat.add({"role": "tool", "tool_call_id": call["id"], "content": output,
                          **lines.output(output, call["id"])}, source)
            elif output:  # no command (an autosubmission, a forfeit): what the environment said, as a user item
                chat.add({"role": "user", "content": output}, source)
            continue
        if m.get("is_demo"):
            chat.ignored["demonstration items"] += 1
            continue
        role = m.get("role")
        if role not in ROLES:
            raise TranscriptFormatError(w, f"role {str(role)[:40]!r} is not a SWE-agent history role (expected "
                                           f"{', '.join(ROLES)})")
        if m.get("agent") is not None:
            agent = m["agent"] if agent is None else agent
            if m["agent"] != agent:
                chat.ignored[f"items of agent {str(m['agent'])[:40]}"] += 1
                continue
        if role == "assistant":
            calls = _function_calls(m.get("tool_calls"), w)
            awaiting, state = None, working_dir(m, w)  # a step's state the episode joined to its command's item
            if not calls and (call := command_call(m.get("action"), f"action-{i}", w, own, forms)) is not None:
                calls, awaiting = [call], call["id"]
            words = m["thought"] if isinstance(m.get("thought"), str) else text_of(m.get("content"), w,
                                                                                   ignored=chat.ignored)
            chat.add({"role": "assistant", "content": words or None,
                      **({"tool_calls": calls, **lines.calls(calls, chat.cwd)} if calls else {})}, source)
            continue
        text = text_of(m.get("content"), w, ignored=chat.ignored)
        if role == "system" or role == "user" and awaiting is None:  # the system prompt or a template (the issue's)
            forms.update(signatures(text))
            own = own | documented(text)
        if role in ("tool", "user"):  # an output (or the issue): the directory it ends with, else its step's
            chat.cwd = told_dir(text) or (state if role == "tool" or awaiting else "") or chat.cwd
            lines.opened(text)
        if role == "tool":
            answered = _answered(m, w)
            chat.add({"role": "tool", "tool_call_id": answered, "content": text, **lines.output(text, answered)},
                     source)
        elif role == "user" and awaiting is not None:  # a text command's output
            chat.add({"role": "tool", "tool_call_id": awaiting, "content": text, **lines.output(text, awaiting)},
                     source)
        elif text:
            chat.add({"role": role, "content": text}, source)
        awaiting = None
    return chat


class Lines:
    """The files whose line numbers SWE-agent's commands take, as a run's outputs tell them, for the labelling rule's
    extension for line numbers (toolstate: a line number labelled by the latest output that showed that line of that
    file): the open file (the ``(Open file: PATH)`` line 0.x's and 1.x's templates end an output with, else the file
    of the output's last windowed view) and the file each call acts on (its ``path``, under the working directory
    where relative, else the open file). It marks a call's line-number arguments (:data:`LINE_NUMBERS`) on its
    message (``LINE_ARGUMENTS``) and the numbered lines an output printed on it (``SHOWN_LINES``)."""

    def __init__(self) -> None:
        self.open = ""  # the open file ("": none, or unknown)
        self.acts: dict[str, str] = {}  # call id -> the file its line numbers are of

    def calls(self, calls: list[dict[str, Any]], cwd: str) -> dict[str, Any]:
        """The ``LINE_ARGUMENTS`` mark of a message of ``calls`` made in ``cwd`` (none: ``{}``)."""
        marks = {}
        for call in calls:
            name, args = call["function"]["name"], call["function"]["arguments"]
            if isinstance(args, str):  # a function call's JSON
                try:
                    args = json.loads(args)
                except (ValueError, RecursionError):
                    continue
            if not isinstance(args, Mapping) or call["id"] is None:
                continue
            numbers = [a for a in LINE_NUMBERS.get(name, ()) if a in args]
            path = args.get("path")
            file = (posixpath.normpath(posixpath.join(cwd, path)) if cwd else path) \
                if isinstance(path, str) and path.strip() else self.open
            if numbers and file:
                marks[call["id"]] = {"file": file, "arguments": numbers}
                self.acts[call["id"]] = file
        return {LINE_ARGUMENTS: marks} if marks else {}

    def output(self, text: str, call_id: str | None) -> dict[str, Any]:
        """The ``SHOWN_LINES`` mark of the output of call ``call_id`` (none: ``{}``)."""
        shown = numbered_lines(text, self.acts.get(call_id or "", ""))
        return {SHOWN_LINES: shown} if shown else {}

    def opened(self, text: str) -> None:
        """The open file after an output (or the issue, whose ``(Open file: n/a)`` says none is)."""
        if found := _OPEN_FILE.findall(text[-2000:]):
            self.open = "" if found[-1].strip() == "n/a" else found[-1].strip()
        elif view := viewed_file(text):
            self.open = view


def viewed_file(text: str) -> str:
    """The file of an output's last windowed view (``[File: PATH (N lines total)]``; "": none): the file open after
    it, SWE-agent's and OpenHands' agent skills' alike (goto 212 is a line of it)."""
    if "[File: " not in text:
        return ""
    views = [m.group(1) for line in _lines(text) if (m := _VIEW.fullmatch(line))]
    return views[-1] if views else ""


def numbered_lines(text: str, file: str = "") -> dict[str, list[int]]:
    """The lines of each file an output printed with their numbers: a windowed view's, str_replace_editor's (``file``:
    the one an insert's "snippet of the edited file" is of) and search_file's (the formats above :data:`_VIEW`)."""
    if not any(h in text for h in ("[File: ", "`cat -n` on ", " matches for \"")):
        return {}
    found: dict[str, list[int]] = {}
    at, number = "", _NUMBERED
    for line in _lines(text):
        if m := _VIEW.fullmatch(line) or _CAT_N.fullmatch(line):
            at, number = (file if m.group(1) == "the edited file" else m.group(1)), _NUMBERED
        elif m := _FOUND.fullmatch(line):
            at, number = m.group(1) or m.group(2), _SEARCHED
        elif at and (m := number.match(line)):
            found.setdefault(at, []).append(int(m.group(1)))
    return found


def _lines(text: str) -> list[str]:
    """An output's lines without their line ends, ``\r\n`` as ``\n``: an IPython cell's output comes from Jupyter
    with CRLF line ends (OpenHands' runtime tests compare ``obs.content.replace('\r\n', '\n')``), and a header
    ending in ``\r`` fullmatched no view, so a real CodeAct run's windows and search hits showed no line."""
    return text.replace("\r\n", "\n").split("\n")


class Signature(NamedTuple):
    """A command's documented form, as SWE-agent writes it (``open "<path>" [<line_number>]``): the argument names
    of each word after the name (two for a line range ``<start_line>:<end_line>``) and whether the word is optional
    (bracketed), and the name of the text between its first line and its ``end_of_edit`` line (None: it takes
    none). Its names are what the model read, so the state shows ``path`` and ``line_number`` beside their values, as
    a function call's, where ``arg1`` hid what each was."""

    words: tuple[tuple[tuple[str, ...], bool], ...]
    body: str | None


def signature(text: str, flagged: bool = False) -> Signature:
    """The :class:`Signature` a signature line reads (``flagged``: its optional arguments are ``--NAME`` options, no
    positions, :data:`FLAGGED`); a word ``--NAME <value>`` is a named argument, no position, and a word naming no
    argument (a literal) is none."""
    lines = [line.strip() for line in text.replace("\\n", "\n").strip().split("\n")]
    words: list[tuple[tuple[str, ...], bool]] = []
    option = False
    for word in lines[0].split()[1:]:
        names, optional = tuple(_PLACEHOLDER.findall(word)), word.lstrip("\"'").startswith("[")
        if names and not option and not (flagged and optional):
            words.append((names, optional))
        option = bool(_FLAG.fullmatch(word.lstrip("[")))
    body = None
    if len(lines) > 1 and _END.fullmatch(lines[-1]):
        body = next((n for line in lines[1:-1] for n in _PLACEHOLDER.findall(line)), None)
    return Signature(tuple(words), body)


def signatures(system: str) -> dict[str, Signature]:
    """The signature of each command a SWE-agent system prompt documents (the module doc): a block's ``signature:``
    (its ``arguments:`` list, in order, where the signature names none), or a ``COMMANDS`` entry's words before its
    `` - docstring``."""
    found = {name: signature(name + form, name in FLAGGED) for section in _COMMANDS.findall(system)
             for name, form in _DOC_LINE.findall(section)}
    starts = list(_DOC_BLOCK.finditer(system))
    for m, after in zip(starts, [*starts[1:], None]):
        block = system[m.start():after.start() if after else len(system)]
        if (line := _DOC_SIGNATURE.search(block)) is None:
            continue
        form = signature(line.group(1), m.group(1) in FLAGGED)
        if not form.words and form.body is None and (listed := _DOC_ARGUMENT.findall(block)):
            form = Signature(tuple(((n,), req == "optional") for n, req in listed), None)
        found[m.group(1)] = form
    return found


def documented(system: str) -> frozenset[str]:
    """The commands a SWE-agent system prompt documents (the module doc), less any shell (1.x lists ``bash`` when
    it is a tool: its lines are shell commands all the same)."""
    names = set(_DOC_BLOCK.findall(system))
    for section in _COMMANDS.findall(system):
        names.update(name for name, _ in _DOC_LINE.findall(section))
    return frozenset(n for n in names if not is_shell_tool(n))


def told_dir(text: str) -> str:
    """The working directory an observation ends with, ``(Current directory: DIR)`` ("" where it says none)."""
    found = _CWD.findall(text[-2000:])
    return found[-1].strip() if found else ""


def working_dir(m: Mapping[str, Any], where: str) -> str:
    """A step's ``state.working_dir`` ("" where it records none); its ``state`` an object or, as 0.x writes it, the
    JSON of one. 0.x's string is what its state command printed in the container, so a string that is no JSON (a
    shell's warning before it, a command that failed) tells no directory: the run is read without one there, not
    refused, since the directory is only a hint for tracing paths and the run's messages are whole."""
    state = m.get("state")
    if isinstance(state, str) and state.strip():
        try:
            state = strict_loads(state, unique=False)
        except (ValueError, RecursionError):
            return ""
    if state in (None, "") or isinstance(state, Mapping) and state.get("working_dir") in (None, ""):
        return ""
    if not isinstance(state, Mapping) or not isinstance(state["working_dir"], str):
        bad = json_type(state) if not isinstance(state, Mapping) else f"working_dir {json_type(state['working_dir'])}"
        raise TranscriptFormatError(where, f"'state' has {bad}, expected an object whose working_dir is the "
                                           "directory the command ran in (a string)")
    return state["working_dir"]


def _function_calls(raw: Any, where: str) -> list[dict[str, Any]]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise TranscriptFormatError(where, f"'tool_calls' is {json_type(raw)}, expected a list of calls or null")
    calls = []
    for j, c in enumerate(raw):
        if not isinstance(c, Mapping):
            raise TranscriptFormatError(where, f"tool call {j} is {json_type(c)}, expected an object "
                                               "{\"id\", \"function\": {\"name\", \"arguments\"}}")
        fn = c.get("function") if isinstance(c.get("function"), Mapping) else c
        calls.append(chat_call(c.get("id"), fn.get("name"), fn.get("arguments"), f"{where}, tool call {j}"))
    return calls


def _answered(m: Mapping[str, Any], where: str) -> str | None:
    """The id of the call a tool item answers: the first of ``tool_call_ids`` (or an OpenAI ``tool_call_id``)."""
    ids = m.get("tool_call_ids")
    if ids is None:
        single = m.get("tool_call_id")
        return None if single is None else str(single)
    if not isinstance(ids, list) or not ids or not all(isinstance(x, (str, int)) and not isinstance(x, bool)
                                                       for x in ids):
        raise TranscriptFormatError(where, f"'tool_call_ids' is {json_type(ids)} ({str(ids)[:40]}), expected a list "
                                           "of the ids of the calls this output answers")
    return str(ids[0])


def command_call(action: Any, call_id: str, where: str, own: frozenset[str] = TOOLS,
                 forms: Mapping[str, Signature] | None = None) -> dict[str, Any] | None:
    """A text command as a tool call, by the rule of the module's docstring (``own``: the commands SWE-agent runs
    itself, any other a ``bash`` call of the whole line; ``forms``: the signatures the run's system prompt
    documents, :func:`signatures`); None for no command."""
    if not isinstance(action, str) or not action.strip():
        return None
    text = action.strip()
    whole = shell_words(text)  # read once: the rest reuses it (a 4 MB command line took 5.8 s, read three times)
    if not whole:  # a comment alone: no command
        return None
    lines = text.split("\n")
    first = tokens(lines[0])
    name = (first or lines[0].split() or [""])[0]
    if name not in own or is_shell_tool(name) or any(bare(t) and OPERATOR.fullmatch(t) for t in first or ()):
        return chat_call(call_id, SHELL, {"command": text}, where)
    body = None
    if len(lines) > 1 and _END.fullmatch(lines[-1].strip()):
        words, body = _words(lines[0], shell_words(lines[0])), "\n".join(lines[1:-1])
    else:
        words = _words(text, whole)
    return chat_call(call_id, words[0], _arguments(words[0], words[1:], body, (forms or {}).get(words[0])), where)


# a Windows path written bare: a drive's (C:\repo\x.py), a share's (UNC: \\server\share\x.py) or a relative one, a
# name then a backslash before a name's character (src\http\x.py), up to a space or a quote; its separators may mix
# slashes in (C:/repo/src\x.py, ./src\x.py: Python's os.path.join on Windows writes so); a backslash before a space,
# a quote, a $ or another backslash is bash's escape, no separator (my\ file.py, \$HOME)
_WINDOWS_WORD = re.compile(
    r"(?<!\S)(?:[A-Za-z]:\\|\\\\[\w.-]+\\(?=[\w.-])|(?:[A-Za-z]:/)?[\w./-]+\\(?=[\w.-]))[^\s'\"]*")
# what ends a relative path of one backslash (src\x.py, src\http), not a pattern's escape (foo\.bar, name\b, x\d+)
_PATH_END = re.compile(r"\w+\.\w+|\w{2,}")
_QUOTED = re.compile(r"'[^']*'|\"(?:[^\"\\]|\\.)*\"")
_SEPARATOR = re.compile(r"\\(?=[\w.-])")  # a path's backslash: before a name's character


def _words(line: str, read: list[str]) -> list[str]:
    """The words of SWE-agent's command ``line`` (``read``: the shell's reading of it), each Windows path it writes
    bare (:data:`_WINDOWS_WORD`, outside quotes) with its backslashes: ``open C:\\repo\\src\\x.py 212`` had been
    read as bash reads it, path ``C:reposrcx.py``, a file no output printed, so the path and its line numbers were
    traced to nothing. A model on Windows writes its paths so, and no command of SWE-agent's takes a bare word whose
    backslash escapes a name's character (bash reads ``\\h`` as ``h``); one before a space, a quote, a ``$`` or a
    backslash stays bash's escape (``my\\ file.py``), and so does that of a relative word of one backslash before
    no name (:data:`_PATH_END`: a pattern's ``foo\\.bar``, ``name\\b`` or ``x\\d+``, read as bash reads it, as
    before; ``src\\x.py`` and ``src\\http`` are paths). A line whose quotes do not close is split at whitespace, its
    backslashes kept, as before. A share's path (``\\\\server\\share\\x.py``) keeps its leading pair, which bash
    had read as one backslash, the rest as a drive's."""
    if "\\" not in line:
        return read

    def path(w: re.Match) -> str:  # a relative one of one separator only before a name (not foo\.bar, x\b)
        word = w.group()
        if word.startswith("\\\\"):  # a share's: its leading pair kept (bash reads \\server as \server)
            return "\\" * 4 + _SEPARATOR.sub(r"\\\\", word[2:])
        if word[1] != ":" and word.count("\\") < 2 and not _PATH_END.fullmatch(word.rsplit("\\", 1)[1]):
            return word
        return _SEPARATOR.sub(r"\\\\", word)

    def kept(text: str) -> str:
        return _WINDOWS_WORD.sub(path, text)

    out, at = [], 0
    for m in _QUOTED.finditer(line):
        out += [kept(line[at:m.start()]), m.group()]
        at = m.end()
    text = "".join([*out, kept(line[at:])])
    return read if text == line or tokens(text) is None else shell_words(text)


def _arguments(name: str, words: list[str], body: str | None, documented: Signature | None) -> dict[str, Any]:
    """A command's arguments: its words before any ``--NAME`` and an edit's text, named by its signature (the one
    the system prompt documents, else the first of :data:`SIGNATURES`' that they fit: :func:`_by_position`), then
    each ``--NAME`` with the words after it. An option whose name a word took, or that is given again later, is
    named by its ``--NAME`` word's position (``argN``), as SWE-agent's tools never read its value (the module doc):
    it overwrote the word's value, so the call showed a value the command never used and lost the one it did."""
    positional: list[Any] = []
    options: list[tuple[int, str, list[str]]] = []  # (the --NAME word's position, NAME, the words after it)
    for j, w in enumerate(words):
        if flag := _FLAG.fullmatch(w):
            options.append((j, flag.group(1), []))
        elif not options:
            positional.append(_value(w))
        else:
            options[-1][2].append(w)
    form = documented or next((f for text in SIGNATURES.get(name, ())
                               if _fits(f := signature(text, name in FLAGGED), positional, body)), None)
    args = _by_position(positional, body, form)
    last = {key: j for j, key, _ in options}  # a repeated option: argparse keeps its last value
    for j, key, ws in options:
        values = [int(w) if _INT.fullmatch(w) else w for w in ws]
        value = True if not values else values[0] if len(values) == 1 else values
        if key in args or last[key] != j:  # a name a word took, or given again later: kept by its position
            n = j + 1
            while f"arg{n}" in args:
                n += 1
            key = f"arg{n}"
        args[key] = value
    return args


def _fits(form: Signature, values: list[Any], body: str | None) -> bool:
    """Whether a command's words fit a signature: its text where the form takes one, its required words, and a line
    range ``START:END`` where the form writes one (``edit 5:7`` and an edit's text are edit_linting's form, ``edit
    'old' 'new'`` windowed_edit_replace's); words past the form's are allowed (named ``argN``)."""
    return (form.body is None) == (body is None) and sum(not opt for _, opt in form.words) <= len(values) \
        and all(len(names) != 2 or isinstance(v, list) for (names, _), v in zip(form.words, values))


def _by_position(values: list[Any], body: str | None, form: Signature | None) -> dict[str, Any]:
    """The words by position: each the next name of the form's (a line range ``START:END`` both names of a word
    ``<start_line>:<end_line>``, one number each), a word past them (or of a command of no form, or whose name an
    earlier word took: a form naming one argument twice dropped a word) ``argN`` by its position; the edit's text
    its name in the form, else the next position's."""
    slots = [(n, len(names) == 2 and k == 0) for names, _ in (form.words if form else ()) for k, n in enumerate(names)]
    if body is not None and (form is None or form.body is None):
        values, body = [*values, body], None
    args: dict[str, Any] = {}
    k = 0
    for position, value in enumerate(values):
        if k + 1 < len(slots) and slots[k][1] and isinstance(value, list) \
                and not {slots[k][0], slots[k + 1][0]} & args.keys():
            args[slots[k][0]], args[slots[k + 1][0]] = value
            k += 2
        elif k < len(slots) and slots[k][0] not in args:
            args[slots[k][0]] = value
            k += 1
        else:  # past the form, or a name the form gave an earlier word (foo <a> <a>): kept by its position
            args[f"arg{position + 1}"] = value
            k += k < len(slots)
    if body is not None and form is not None and form.body is not None:
        args[form.body] = body
    return args


def _value(word: str) -> Any:
    m = _RANGE.fullmatch(word)
    return [int(m.group(1)), int(m.group(2))] if m else word


def sniff(messages: list[Any]) -> bool:
    """History items by SWE-agent's own fields (0.x's by an assistant's ``thought`` and ``action``), or trajectory
    steps (``action`` and ``observation``, no role)."""
    return any(isinstance(m, Mapping) and (any(k in m for k in MARKS) or ("role" not in m and "action" in m
                                                                          and "observation" in m)
                                           or (m.get("role") == "assistant" and "action" in m and "thought" in m))
               for m in messages)


def is_trajectory(doc: Any) -> bool:
    """A SWE-agent ``.traj`` document: an object with a ``history``, ``trajectory`` or ``attempts`` list (and none
    of the other containers' keys)."""
    return isinstance(doc, Mapping) and not any(k in doc for k in ("messages", "simulations", "resourceSpans")) \
        and any(isinstance(doc.get(k), list) for k in ("history", "trajectory", "attempts"))


def conversations(doc: Any, where: str, name: str, group: str, id_of) -> Iterator[Conversation | TranscriptFormatError]:
    """The episode of a ``.traj`` document (``name``: its episode id, the file's path without ``.traj``), or one
    per attempt of a retry agent's; a bad one is yielded as its error."""
    if not is_trajectory(doc):
        bad = [k for k in ("history", "trajectory", "attempts") if isinstance(doc, Mapping) and k in doc]
        if bad:
            yield TranscriptFormatError(where, f"'{bad[0]}' is {json_type(doc[bad[0]])}, expected a list")
            return
        what = json_shape(doc)
        yield TranscriptFormatError(where, "not a SWE-agent trajectory: expected an object with 'history' (the "
                                           "messages the model saw) or 'trajectory' (its steps), as SWE-agent writes "
                                           f"{{instance_id}}.traj; got {what} (sam-data formats lists what is read)")
        return
    attempts = doc.get("attempts")
    try:
        group = next((i for run in (doc, *(attempts if isinstance(attempts, list) else ()))
                      if isinstance(run, Mapping) and (i := instance_of(run, where)) is not None), group)
    except TranscriptFormatError as err:
        yield err
        return
    if isinstance(attempts, list) and attempts:
        for n, attempt in enumerate(attempts):
            yield _episode(attempt, f"{where}: attempt {n}", id_of(f"{name}-attempt{n}"), group)
        return
    yield _episode(doc, where, id_of(name), group)


def instance_of(run: Mapping[str, Any], where: str) -> str | None:
    """The instance a run was of: its ``replay_config``'s ``problem_statement.id`` (None: the run records none)."""
    config = run.get("replay_config")
    if config in (None, ""):
        return None

    def bad(field: str, value: Any, expected: str) -> TranscriptFormatError:
        name = f"'replay_config' {field}".strip()
        return TranscriptFormatError(where, f"{name} is {value}, expected {expected}; SWE-agent writes the run's "
                                            "config there, whose problem_statement.id keeps the runs of one instance "
                                            "in one split group: fix it, or remove the field to group the run by its "
                                            "file's name")

    if isinstance(config, str):
        try:
            config = strict_loads(config, unique=False)
        except (ValueError, RecursionError) as exc:
            raise bad("", f"not JSON ({str(exc)[:80]})", "the JSON of the run's config") from None
    if not isinstance(config, Mapping):
        raise bad("", json_type(config), "the run's config (an object, or its JSON)")
    statement = config.get("problem_statement")
    if statement is None:
        return None
    if not isinstance(statement, Mapping):
        raise bad("problem_statement", json_type(statement), "an object")
    raw = statement.get("id")
    if raw in (None, ""):
        return None
    if isinstance(raw, bool) or not isinstance(raw, (str, int)):
        raise bad("problem_statement.id", json_type(raw), "a string")
    return str(raw)


def _episode(doc: Any, where: str, episode_id: str, group: str) -> Conversation | TranscriptFormatError:
    if not isinstance(doc, Mapping):
        return TranscriptFormatError(where, f"an attempt is {json_type(doc)}, expected a trajectory object")
    for key in ("history", "trajectory"):
        if doc.get(key) is not None and not isinstance(doc[key], list):
            return TranscriptFormatError(where, f"'{key}' is {json_type(doc[key])}, expected a list")
    history, steps = doc.get("history") or [], doc.get("trajectory") or []
    if not history and not steps:
        return TranscriptFormatError(where, "the trajectory holds no step ('history' and 'trajectory' are empty or "
                                            "absent: the run stopped before its first step?)")
    try:
        dirs = [working_dir(st, f"{where}, trajectory step {k}") if isinstance(st, Mapping) else ""
                for k, st in enumerate(steps)]
    except TranscriptFormatError as err:
        return err
    if len(stated := {d for d in dirs if d}) == 1:  # the run never left it: known from the first message on
        return Conversation(episode_id, history or steps, where, group, "swe-agent", cwd=stated.pop())
    if not history:  # each step's state told on its output
        return Conversation(episode_id, steps, where, group, "swe-agent")
    acting = [k for k, m in enumerate(history) if isinstance(m, Mapping) and m.get("role") == "assistant"
              and not m.get("is_demo") and (m.get("tool_calls") or isinstance(m.get("action"), str)
                                            and m["action"].strip())]
    acted = [d for st, d in zip(steps, dirs) if isinstance(st, Mapping) and isinstance(st.get("action"), str)
             and st["action"].strip()]
    if any(dirs) and len(acting) == len(acted):  # the k-th step's state on the history's k-th command
        history = list(history)
        for k, d in zip(acting, acted):
            history[k] = {**history[k], "state": {"working_dir": d}}
    return Conversation(episode_id, history, where, group, "swe-agent")
