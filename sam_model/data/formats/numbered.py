"""Which lines of which file a coding agent's outputs printed with their numbers, and which of its calls' arguments are
line numbers of a file: the marks toolstate's rule for line numbers reads (formats/base.py ``SHOWN_LINES`` on a result,
``LINE_ARGUMENTS`` on a call's message), set by the readers of Claude Code, OpenHands (0.x and V1), Codex, codex exec
and Gemini CLI over the chat messages they read (:func:`mark`). SWE-agent's reader marks its own commands
(:class:`sam_model.data.formats.swe_agent.Lines`).

A number an agent passes as a line of a file (``Read``'s ``offset``, an editor's ``view_range``, ``sed -n '212,240p'
src/x.py``) is one it read as a line of that file in an output that printed it so, not the issue's ``#212``. Read
from the producers' outputs:

- **Claude Code**: ``Read`` prints each line as ``cat -n`` does but with an arrow, its number right-aligned in six
  columns (``  3130→code``; Claude Code 2.0.46 in daaain/claude-code-log ``test/test_data/sidechain_integrated.jsonl``,
  whose ``toolUseResult`` says ``startLine: 3130``), and ``Edit``/``Write`` print a snippet of the edited file so
  (``The file X has been updated. Here's the result of running `cat -n` on a snippet of the edited file:`` then
  ``   12→code``); both show lines of the call's ``file_path``, and ``Read``'s ``offset`` is a line number of it (a
  page's offset stays trivial: toolarguments.is_page_offset, so it is never labelled);
- **Claude Code's Grep** in content mode prints ripgrep's ``PATH:58:code`` (``58:code`` for the one file its
  ``path`` names), read as ``grep -rn``'s below;
- **OpenHands**: ``str_replace_editor`` (0.x) and ``file_editor`` (V1) print ``Here's the result of running `cat -n`
  on PATH:`` then ``   212\\tcode`` (an edit's and an insert's snippet after their own words), read as SWE-agent's
  copy of the same editor is (:func:`~sam_model.data.formats.swe_agent.numbered_lines`); ``view_range`` and
  ``insert_line`` are line numbers of the call's ``path``. A 0.x run without function calling records the editor's
  calls as ``read`` and ``edit`` actions (the action is the call: ``path``, ``view_range``, ``insert_line``), their
  observations the same editor's text (``impl_source`` ``oh_aci``), read alike; OpenHands' own read (``impl_source``
  ``default``) prints the file's bare text from its 0-based ``start``, which shows and marks nothing. A CodeAct
  agent's IPython cell (``execute_ipython_cell``, text-mode ``run_ipython``) of agent skills prints the same
  windows as SWE-agent's (``[File: PATH (300 lines total)]`` then ``212|code``) and search_file's hits (``[Found 1
  matches for "X" in PATH]`` then ``Line 212: code``), and ``open_file(PATH, 212)``'s and
  ``insert_content_at_line(PATH, 212, TEXT)``'s 212 are lines of PATH, ``goto_line(212)``'s of the file the last
  window showed (sam_model.data.agentskills.line_file);
- **a shell command** (any of these agents' shell tool, toolarguments.is_command_line), each pipeline after any ``cd``:
  ``grep -n`` / ``rg -n`` / ``git grep -n`` print ``PATH:212:code`` (``212:code`` for one file searched by name, no
  ``-r`` or ``-H``), ``cat -n FILE`` and ``nl -ba FILE`` print ``   212\\tcode``, and a filter after them that keeps
  whole lines (``| sed -n '200,260p'``, ``| head``, ``| grep x``) keeps their numbers. Plain ``nl`` numbers only the
  lines that are not blank, and ``cat -b`` likewise: a count, no line number, so they show nothing. ``sed -n
  '200,260p' FILE`` prints lines 200-260 without their numbers: it shows no number, so no line (the rule labels an
  output that printed the number as a line of the file; any other 212 in that code would be a constant, no line).
  Its range is line numbers of FILE, as ``awk 'NR>=200 && NR<=260' FILE``'s, ``tail -n +200 FILE``'s and a range
  after ``cat -n FILE |``, ``nl FILE |`` or ``head FILE |``; the call is marked so only where every number its words
  give (shellwords.command_words) is such a line of that one file (``grep -n 212 x.py``'s pattern is none).
  Several pipelines (``&&``, ``||``, ``;``, lines) print one text: a line is read only where its file is certain
  (:func:`_joined`).
- **a location** in the output of any other shell command that runs no search (a test run's, a compiler's, a
  linter's, a script's: :func:`_located`): a line opening ``FILE:212:`` (pytest's ``tests/test_a.py:212:
  AssertionError``, gcc's ``src/a.c:212:5: error``, mypy's ``a.py:212: error``), a Python traceback's ``File
  "FILE", line 212``, Rust's ``  --> src/main.rs:212:5``, a Node stack frame's ``    at f (/app/src/x.js:212:5)`` or
  tsc's ``src/a.ts(212,5): error TS2345`` names line 212 of FILE. It prints no text of the line, as ``grep -n``
  does, but the number was said there as a line of that file, which the rule for line numbers traces (the issue's ``#212`` had been the label
  of ``sed -n '212,240p' FILE`` after a failing test named it), and a page of another file opens no window there.
  Words before the path name its last word's file too (Rust's ``thread 'main' panicked at src/main.rs:212:5:``),
  and a relative FILE is under the directory make says it entered (``make -C build``); several entered: none. A command
  run in a container or on another host (``docker compose exec``, ``ssh``: :func:`_elsewhere`) prints that machine's
  paths, so its output is read as before (a hit of any file's page).
- **Gemini CLI**'s ``read_file`` prints the file's lines without their numbers; where it shows part of the file a
  header before them names the first and last (``Showing lines 212-230 of 300 total lines``, and since its
  ``start_line``/``end_line`` the line to read next, ``use start_line: 231``): those are the lines it shows
  (:func:`_read_file`; the lines between are printed without a number, as ``sed -n``'s are). Its ``start_line`` and
  ``end_line`` (1-based) are line numbers of its ``file_path``; its older ``offset`` counts from 0 (line 212 is
  ``offset`` 211) and is not marked. Its shell commands are read as any shell's.

A result is marked with the files it showed lines of as its call named them, under the working directory where
relative (``cd DIR &&``, the directory a shell call names: Codex's ``workdir``, Gemini CLI's ``dir_path`` or older
``directory``, toolarguments.shell_directory; the reader's CWD); toolstate compares the files as paths under one
directory (shownlines.same_file).
"""

from __future__ import annotations

import json
import posixpath
import re
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

from sam_model.data.agentskills import IPYTHON_TOOLS, line_file
from sam_model.data.formats.base import CWD, LINE_ARGUMENTS, SHOWN_LINES, Chat
from sam_model.data.formats.swe_agent import numbered_lines, viewed_file
from sam_model.data.lineranges import line_numbers
from sam_model.data.searchhits import HIT_FILE, LINE_NUMBER, LOCATIONS, TRACEBACK_LINE
from sam_model.data.shellpaths import file_under
from sam_model.data.shellprograms import GREP_SHORT_VALUES, RG_SHORT_VALUES, SHELLS
from sam_model.data.shelltokens import bare, tokens
from sam_model.data.shellwords import command_words
from sam_model.data.toolarguments import is_command_line, is_powershell, shell_directory

Shown = dict[str, list[int]]
Reader = Callable[[str], Shown]  # an output's text -> the lines of each file it printed with their numbers

# OpenHands 0.x's and V1's file editor, and 0.x's read and edit actions as a run without function calling records
# them (the action is the call: FileReadAction's path and view_range, FileEditAction's path and insert_line), whose
# observations print the same editor's output where it ran them (impl_source oh_aci) and the file's bare text else
EDITORS = frozenset({"str_replace_editor", "file_editor", "read", "edit"})
ACTIONS = frozenset({"read", "edit"})
_EDITOR_FIRST = re.compile(r"\s*[^\n]*?Here's the result of running `cat -n` on ")  # the editor's output, its 1st line
EDITOR_LINES = ("view_range", "insert_line")
CLAUDE_FILES = frozenset({"Read", "Edit", "MultiEdit", "Write"})  # Claude Code's tools that print lines of file_path
# each reader's LINE as searchhits.LINE_NUMBER reads it (no leading zero, at most 12 digits), as the page-bound rule's
_ARROW = re.compile(rf" *({LINE_NUMBER})(?:→|\t)")  # Claude Code's "  3130→code" (older releases: cat -n's tab)
_CAT_N = re.compile(rf" *({LINE_NUMBER})\t")  # cat -n's "   212\tcode"
# nl -ba's in each format _all_lines takes: "   212\tcode", -n rz's "000212\tcode" (its zeros are how nl pads a line's
# number, which no grep -n or cat -n prints) and -n ln's "212   \tcode" (read as no line, each of them, before)
_NL = re.compile(rf" *0*({LINE_NUMBER}) *\t")
_BARE = re.compile(rf"({LINE_NUMBER}):")  # grep -n's "212:code", one file searched
_NAMED_LINES = re.compile(rf"(?m)^({HIT_FILE}):({LINE_NUMBER}):")  # grep -n's "PATH:212:code" at each line of a text
_CONTEXT = re.compile(rf"({LINE_NUMBER})[:-]")  # the same with -A/-B/-C's context lines, "211-code"
_TRACEBACK = re.compile(rf"(?m)^{TRACEBACK_LINE}")  # a Python traceback's 'File "a.py", line 212, in f'
# make's line on entering DIR (make -C DIR, a recursive make; GNU make quotes it `DIR' in older releases), and
# ninja's, in the same words (ninja -C build, as meson runs it)
_MAKE_ENTERED = re.compile(r"(?m)^\S*(?:make|ninja)(?:\[\d+\])?: Entering directory [`'](.+)'$")
_ROOTED = re.compile(r"[/~]|\.\.?/|[A-Za-z]:[/\\]")  # a path opening at a root, a home, ./ or ../, a drive
_SHELL_C = re.compile(r"-[a-z]*c")  # bash -c, -lc: the next word is the script
_FD = re.compile(r"(?<=\s)\d+(?=[<>])")  # the 2 of 2>&1, 2>/dev/null: a descriptor, no word
_REDIRECT = re.compile(r"[<>&]*[<>][<>&|]*")
_SEPARATORS = frozenset({"&&", "||", ";", "\n", "&", ";;"})
GREPS = frozenset({"grep", "egrep", "fgrep"})
SEARCHES = GREPS | {"rg", "ag", "ack"}  # programs whose output a search's rules read (and git grep), no location's
ELSEWHERE = frozenset({"docker", "docker-compose", "podman", "kubectl", "ssh", "vagrant"})  # another machine's paths
_NOT_LINES = "clLqZbz"  # grep flags whose output is no numbered line of a file (-c counts, -l names, -b offsets)
FILTERS = frozenset({"head", "tail", "sed", "grep", "egrep", "fgrep", "rg", "sort", "uniq", "cat", "less", "more"})


def mark(chat: Chat) -> Chat:
    """``chat`` with each call's line-number arguments marked on its message and the numbered lines each result
    printed on the result (the module doc), in place; a call or result none of them fits is left as it was."""
    cwd = ""
    readers: dict[str, Reader] = {}
    opened, cells = "", set()  # the file agent skills have open (the last window a cell printed); IPython calls' ids
    for m in chat.messages:
        if isinstance(m.get(CWD), str) and m[CWD]:
            cwd = m[CWD]
        if m.get("role") == "assistant" and isinstance(m.get("tool_calls"), list):
            marks = {}
            for call in m["tool_calls"]:
                fn = call.get("function") if isinstance(call, Mapping) else None
                args = _arguments(fn.get("arguments")) if isinstance(fn, Mapping) else None
                if args is None or call.get("id") is None or not isinstance(fn.get("name"), str):
                    continue
                numbers, reader = call_lines(fn["name"], args, cwd, opened)
                if fn["name"] in IPYTHON_TOOLS:
                    cells.add(str(call["id"]))
                if numbers:
                    marks[str(call["id"])] = numbers
                if reader:
                    readers[str(call["id"])] = reader
            if marks:
                m[LINE_ARGUMENTS] = marks
        elif m.get("role") == "tool" and (reader := readers.get(str(m.get("tool_call_id")))) is not None:
            if shown := reader(_text(m.get("content"))):
                m[SHOWN_LINES] = shown
            if str(m.get("tool_call_id")) in cells:
                opened = viewed_file(_text(m.get("content"))) or opened
    return chat


def call_lines(tool: str, args: Mapping[str, Any], cwd: str,
               opened: str = "") -> tuple[dict[str, Any] | None, Reader | None]:
    """A call's ``LINE_ARGUMENTS`` entry (``{"file", "arguments"}``; None: no argument is a line number of a file) and
    the reader of its output's numbered lines (None: it prints none), the module doc's tools. ``opened``: the file an
    IPython cell's agent skills have open (:func:`mark` tells it), whose line ``goto_line(212)`` names."""
    if tool in CLAUDE_FILES and isinstance(path := args.get("file_path"), str) and path:
        numbers = {"file": path, "arguments": ["offset"]} if tool == "Read" and "offset" in args else None
        return numbers, lambda text: _numbered(text, path, _ARROW)
    if tool == "Grep" and args.get("output_mode") == "content" and args.get("-n") is not False:
        return None, _claude_grep(args, cwd)
    if tool in GEMINI_SEARCHES:
        return None, _gemini_search(args, cwd)
    if tool in IPYTHON_TOOLS:  # OpenHands' agent skills: open_file(PATH, 212), its window and search_file's hits
        file = line_file(tool, args, opened)
        return ({"file": _under(cwd, file), "arguments": ["code"]} if file else None), numbered_lines
    if tool == "read_file" and isinstance(path := args.get("file_path", args.get("absolute_path")), str) and path:
        file = _under(cwd, path)
        named = [a for a in ("start_line", "end_line") if _count(args.get(a))]  # 1-based: lines (offset counts from 0)
        start, offset = args.get("start_line"), args.get("offset")  # the first line a header may name
        whole = isinstance(offset, (int, str)) and not isinstance(offset, bool) and str(offset).isdigit()
        first = int(start) if _count(start) else int(offset) + 1 if whole else 1
        return ({"file": file, "arguments": named} if named else None), lambda text: _read_file(text, file, first)
    if tool in EDITORS and isinstance(path := args.get("path"), str) and path:
        file = _under(cwd, path)
        named = [a for a in EDITOR_LINES if args.get(a) is not None]  # an action's unset ones: null
        if tool in ACTIONS:  # OpenHands' own read prints the file's text, which may hold an editor's output
            if args.get("impl_source") == "default":  # its own read or edit: never the editor's, whatever it opens with
                return ({"file": file, "arguments": named} if named else None), None
            return ({"file": file, "arguments": named} if named else None), \
                lambda text: numbered_lines(text, file) if _EDITOR_FIRST.match(text) else {}
        return ({"file": file, "arguments": named} if named else None), lambda text: numbered_lines(text, file)
    for name, value in args.items():
        if is_command_line(tool, name, value) and not is_powershell(tool):
            workdir = shell_directory(args)
            return shell_lines(name, value, _under(cwd, workdir) if workdir else cwd)
    return None, None


def _claude_grep(args: Mapping[str, Any], cwd: str) -> Reader:
    """The reader of Claude Code's Grep in content mode, which runs ripgrep with ``-n`` (its default since 2.0):
    ``PATH:58:code`` for a tree, ``58:code`` for the one file its ``path`` names (rg names no file it was given
    alone); ``PATH-57-code`` and ``57-code`` are ``-A``/``-B``/``-C`` context lines, the bare ones read as grep's."""
    path = args.get("path")
    context = any(args.get(k) for k in ("-A", "-B", "-C"))
    bare = _lines_of(_under(cwd, path), _CONTEXT if context else _BARE) if isinstance(path, str) and path else None
    return lambda text: _grep_named(text, cwd) or (bare(text) if bare else {})


def shell_lines(argument: str, command: Any, cwd: str) -> tuple[dict[str, Any] | None, Reader | None]:
    """:func:`call_lines` of a shell command (a line, or an argv) given as ``argument``, run in ``cwd``: a command
    whose output no reader of numbered lines reads, and that runs no search (a search's rules read its output, a
    grep without ``-n`` prints no number however its lines open) and runs here (:func:`_elsewhere`), is read for the
    locations it names (:func:`_located`)."""
    marked, reader = _shell_lines(argument, command, cwd)
    if reader is None and not _searches(command) and not _elsewhere(command):
        found = _pipelines(command, cwd)
        dirs = {where for where, _ in found or ()}
        reader = _located(dirs.pop() if len(dirs) == 1 else "" if found is None and _moves(command) or dirs else cwd)
    return marked, reader


def _located(where: str) -> Reader:
    """The reader of the locations an output names, run in ``where`` ("": its paths as printed): a line opening
    ``FILE:LINE:`` (pytest's ``tests/test_a.py:212: AssertionError``, gcc's ``src/a.c:212:5: error``, mypy's
    ``a.py:212: error``; grep -n's form, FILE as searchhits.HIT_FILE reads it), a traceback's ``File "FILE", line
    212`` (searchhits.TRACEBACK_LINE) or another tool's location (Rust's ``  --> src/main.rs:212:5``, a Node stack
    frame's ``    at f (/app/src/x.js:212:5)``, tsc's ``src/a.ts(212,5): error``: searchhits.LOCATIONS) names line
    212 of FILE. It prints no text of the line as grep -n does, but the
    number was said there as a line of that file, which is what the line-number rule traces (the most recent output
    that said that line of that file) and the page-bound rule asks (a window opening at a line named there, in that
    file: toolstate's hit); a test run's, a compiler's or a script's location had been a hit of any file's page."""
    def read(text: str) -> Shown:
        entered = set(_MAKE_ENTERED.findall(text))
        if len(entered) > 1:  # a recursive make: which directory a name is relative to is unsure, so none is marked
            return {}
        at = _under(where, entered.pop()) if entered else where  # make -C DIR: its names are relative to DIR
        named: Shown = {}  # each name's lines: a name read once (a 5 MB test run names a few files many times)
        quoted: Shown = {}  # a traceback's names, quoted, and other tools' locations' (Rust's -->): whole
        for pattern, names in ((_NAMED_LINES, named), (_TRACEBACK, quoted), *((form, quoted) for form in LOCATIONS)):
            for name, number in pattern.findall(text):
                names.setdefault(name, []).append(int(number))
        found: Shown = {}
        for file, numbers in [(f, ns) for name, ns in named.items() for f in _named_files(name)] + [*quoted.items()]:
            found.setdefault(_under(at, file), []).extend(numbers)
        return found
    return read


def _named_files(name: str) -> list[str]:
    """The files a location's ``FILE:`` may name: FILE, and where FILE holds a space and opens at no root (``/``,
    ``~``, ``./``, a drive) its last word too, since words of prose may open the line before the path (Rust's
    ``thread 'main' panicked at src/main.rs:212:5:``, gcc's ``In file included from src/a.c:212:``), which HIT_FILE
    takes for folders; a relative path with a space in a folder (``My Project/a.py``) keeps its whole name."""
    last = name.split()[-1]
    return [name] if last == name or _ROOTED.match(name) else [name, last]


def _searches(command: Any) -> bool:
    """Whether a word of ``command`` names a search program (:data:`SEARCHES`, git grep's grep): its output is no
    location's (a word that only looks so, a path's part, makes none read: no line is marked where unsure)."""
    text = command if isinstance(command, str) else " ".join(c for c in command if isinstance(c, str))
    return bool(SEARCHES.intersection(re.findall(r"[\w-]+", text)))


def _elsewhere(command: Any) -> bool:
    """Whether a word of ``command`` names a program that runs it in a container or on another host
    (:data:`ELSEWHERE`): its locations are that machine's paths (``/app/src/a.c`` for the session's ``src/a.c``),
    which name no file here for certain, so its output is read as before locations were (a hit of any file's page)."""
    text = command if isinstance(command, str) else " ".join(c for c in command if isinstance(c, str))
    return bool(ELSEWHERE.intersection(re.findall(r"[\w-]+", text)))


def _moves(command: Any) -> bool:
    """Whether ``command`` (one that is no pipeline after any ``cd``) may change its directory on the way."""
    text = command if isinstance(command, str) else " ".join(c for c in command if isinstance(c, str))
    return bool({"cd", "pushd", "popd"}.intersection(re.findall(r"[\w-]+", text)))


def _shell_lines(argument: str, command: Any, cwd: str) -> tuple[dict[str, Any] | None, Reader | None]:
    """:func:`shell_lines` as the readers of numbered lines read it: one pipeline (:func:`_part`), or several joined
    by ``&&``, ``||``, ``;`` or line breaks, whose outputs are printed one after another (:func:`_joined`)."""
    found = _pipelines(command, cwd)
    if found is None:
        return None, None
    if len(found) == 1:
        part = _part(*found[0])
        return (None, None) if part is None else (_marked(argument, command, part[0]), _reader(part[1]))
    return _joined(argument, command, found)


def _joined(argument: str, command: Any, found: list[tuple[str, list[list[str]]]]
            ) -> tuple[dict[str, Any] | None, Reader | None]:
    """:func:`shell_lines` of several pipelines. Their outputs are one text, so a line printed with its number is read
    only where which file it is of is certain: every pipeline but those that print no such line (:func:`_quiet`: echo
    of no digit, mkdir, wc, ...) prints numbered lines, all of one file read alike (``cat -n a.py | sed -n '1,9p';
    cat -n a.py | sed -n '200,210p'``) or each line naming its file (``grep -rn``'s ``PATH:212:``, read under one
    directory). Two pipelines printing bare numbers of two files (``grep -n x a.py; grep -n y b.py``), or any pipeline
    whose output is not read (a sed printing lines without numbers, a test run), show none. The call's line numbers
    are marked as one pipeline's are, its ranges taken from every pipeline, where every pipeline that is not quiet is
    read."""
    ranges: list[tuple[str, list[str]]] = []
    keys: list[Key | None] = []
    read = True
    for where, pipeline in found:
        if _quiet(pipeline):
            continue
        part = _part(where, pipeline)
        if part is None:
            read = False
            keys.append(None)
        else:
            ranges += part[0]
            keys.append(part[1])
    marked = _marked(argument, command, ranges) if read else None
    if not keys or None in keys:
        return marked, None
    if len(set(keys)) == 1:
        return marked, _reader(keys[0])
    named = {k[1] for k in keys if k is not None and k[0] in ("named", "either")}
    if len(named) == 1 and all(k is not None and k[0] in ("named", "either") for k in keys):
        return marked, _reader(("named", named.pop()))  # each line names its file: the bare reading is dropped
    return marked, None


# a pipeline's reader of the numbered lines it prints: ("named", DIR) grep -rn's PATH:212: under DIR; ("bare", FILE,
# PATTERN) lines of FILE numbered as PATTERN reads them; ("either", DIR, FILE, PATTERN) the first, else the second
Key = tuple[Any, ...]


def _reader(key: Key | None) -> Reader | None:
    """The reader a :data:`Key` names (None: none)."""
    if key is None:
        return None
    if key[0] == "named":
        return lambda text: _grep_named(text, key[1])
    if key[0] == "bare":
        return _lines_of(key[1], key[2])
    bare = _lines_of(key[2], key[3])
    return lambda text: _grep_named(text, key[1]) or bare(text)  # a tree or a file: as it printed


def _marked(argument: str, command: Any, ranges: list[tuple[str, list[str]]]) -> dict[str, Any] | None:
    """The ``LINE_ARGUMENTS`` entry of a command whose parts take the line numbers ``ranges`` (file, numbers): where
    they are of one file and every number the command's words say is one of them."""
    files = {f for f, _ in ranges}
    numbers = Counter(n for _, ns in ranges for n in ns)
    said = Counter(w for w in command_words(command) or [] if w.isdigit())
    return {"file": files.pop(), "arguments": [argument]} if len(files) == 1 and numbers and not said - numbers \
        else None


# commands whose output is never a line opening with a number or FILE:N: (what the readers read), beside a
# pipeline that prints numbered lines: echo and printf of words without a digit, wc's counts (N FILE, spaces apart)
QUIET = frozenset({"true", ":", "mkdir", "touch", "export", "set", "unset", "clear", "wc"})


def _quiet(pipeline: list[list[str]]) -> bool:
    """Whether a pipeline (one command) prints nothing the readers could take for a numbered line (:data:`QUIET`)."""
    if len(pipeline) != 1:
        return False
    program, rest = posixpath.basename(pipeline[0][0]), pipeline[0][1:]
    if program in ("echo", "printf"):  # its words as they are: no digit, variable, escape (echo -e '\\x31') or glob
        return not any(c.isdigit() or c in "$\\*?[" for w in rest for c in w)
    if program == "wc":
        return all(w in ("-l", "-c", "-w", "-m") or not w.startswith("-") and ":" not in w for w in rest)
    return program in QUIET and not any("v" in w for w in rest if w.startswith("-"))  # mkdir -v names what it made


def _part(where: str, pipeline: list[list[str]]) -> tuple[list[tuple[str, list[str]]], Key | None] | None:
    """(the (file, line numbers) of each command that takes lines of a file, the :data:`Key` of the reader of its
    output's numbered lines: None where it prints none) of one pipeline run in ``where``; None where its words are not
    read (a program this reading does not know)."""
    ranges: list[tuple[str, list[str]]] = []  # (file, line numbers) of each part that takes lines of a file
    source, kept = "", False  # the file whose lines flow down the pipe, and whether each still has its place
    reader: Key | None = None
    for k, words in enumerate(pipeline):
        program, rest = posixpath.basename(words[0]), words[1:]
        if k and program not in FILTERS:
            reader = None
            break
        flags = [w for w in rest if w.startswith("-") and len(w) > 1]
        plain = [w for w in rest if not (w.startswith("-") and len(w) > 1)]
        if program == "cat" and (k or len(plain) == 1):
            numbered = any("n" in f and not f.startswith("--") for f in flags) or "--number" in flags
            if k == 0:
                source, kept = _under(where, plain[0]), True
                blank = any("b" in f and not f.startswith("--") for f in flags) or "--number-nonblank" in flags
                reader = ("bare", source, _CAT_N) if numbered and not blank else None
            elif numbered or flags:  # cat -n of a pipe numbers the pipe's lines
                reader = None
        elif program == "nl" and k == 0 and len(plain) - _values(rest, "wnsvilbdhf") == 1:
            source, kept = _under(where, plain[-1]), True
            reader = ("bare", source, _NL) if _all_lines(rest) else None
        elif program == "head" and (k or plain):
            if k == 0:
                if len(plain) - _values(rest, "nc") != 1:
                    return None
                source, kept = _under(where, plain[-1]), True
        elif program == "tail":
            start = _tail_start(rest)
            files = plain[-1:] if len(plain) - _values(rest, "nc") == 1 else []
            if start and (files or (k and kept)):
                ranges.append((_under(where, files[0]) if files else source, [start]))
            kept = False
            if k == 0:
                reader = None
        elif program in ("sed", "awk") and plain:
            script, files = (plain[0], plain[1:]) if program == "awk" or "-n" in flags else (None, [])
            numbers = line_numbers(program, script) if script is not None and not (set(flags) - {"-n"}) else None
            if numbers is not None and (len(files) == 1 or not files and k and kept):
                ranges.append((_under(where, files[0]) if files else source, numbers))
            elif k:
                reader = None
            kept = False
        elif program in GREPS or program == "rg" or program == "git" and rest[:1] == ["grep"]:
            searched = _search(program, rest, where)
            if searched is None:
                return None
            given, files, numbers_read = searched
            if k == 0:
                reader = numbers_read
            elif given & set(_NOT_LINES + "no") or files:  # -n, -o or a file of its own: the lines it prints differ
                reader = None
            kept = False
        elif program in ("sort", "uniq", "less", "more") and k and not plain:
            kept = False
        else:
            return None
    return ranges, reader


def _pipelines(command: Any, cwd: str, depth: int = 0) -> list[tuple[str, list[list[str]]]] | None:
    """(the directory it runs in, its simple commands' words) of each pipeline of a command, after any ``cd DIR``
    (an argv, or ``bash -lc SCRIPT``'s script, as an argv or a line); a ``cd`` after another pipeline counts only where
    ``&&`` follows it (else what follows may run where it was), and none next to ``||`` or ``&`` (``cd sub || cat -n
    a.py`` reads ./a.py: the cat runs where cd failed; ``cd /x || cd /y && ...`` runs in /x) or naming a directory the
    shell works out (``cd -``, ``cd $DIR``). None for a command whose words are not read (a subshell, a substitution,
    a heredoc)."""
    if isinstance(command, list):
        if len(command) == 3 and posixpath.basename(command[0]) in SHELLS and _SHELL_C.fullmatch(command[1]):
            command = command[2]
        else:
            return [(cwd, [list(command)])] if command else None
    if not isinstance(command, str) or any(s in command for s in ("<<", "$(", "`", "<(", ">(")):
        return None
    found = tokens(_FD.sub("", command), newlines=True)
    if found is None:
        return None
    pipelines: list[list[list[str]]] = [[[]]]
    ends: list[str] = []  # the separator after each pipeline
    i = 0
    while i < len(found):
        t = found[i]
        if not bare(t):  # quoted: a word, whatever its text (grep -n '|' a.py)
            pipelines[-1][-1].append(t)
        elif t in _SEPARATORS:
            ends.append(t)
            pipelines.append([[]])
        elif t in ("|", "|&"):
            pipelines[-1].append([])
        elif _REDIRECT.fullmatch(t):
            i += 1  # its file or descriptor: no part of the pipeline's output
        elif t in ("(", ")", "{", "}") or t.startswith(("(", ")")):
            return None
        else:
            pipelines[-1][-1].append(t)
        i += 1
    ends.append("")
    where, left = cwd, []
    for p, after, end in zip(pipelines, ["", *ends], ends):
        if p == [[]]:
            continue
        if any(not c for c in p):
            return None
        if len(p) == 1 and p[0][0] == "cd":
            # where it may not run (after ||), runs in the background (&), or what follows runs where it failed
            # (before ||): unsure; as is a directory of the shell's (cd -, a variable, a glob: not its words)
            if len(p[0]) != 2 or left and end not in ("&&", "") or {after, end} & {"||", "&"} \
                    or p[0][1] == "-" or any(c in p[0][1] for c in "$*?["):
                return None
            where = _under(where, p[0][1])
        else:
            left.append((where, p))
    if not left:
        return None
    if len(left) == 1 and len(left[0][1]) == 1 and len(words := left[0][1][0]) == 3 \
            and posixpath.basename(words[0]) in SHELLS and _SHELL_C.fullmatch(words[1]):
        return _pipelines(words[2], left[0][0], depth + 1) if depth < 2 else None  # codex exec's "bash -lc '...'"
    return left


def _search(program: str, rest: list[str], where: str) -> tuple[set[str], list[str], Key | None] | None:
    """(its flags, the files it searches, the :data:`Key` of the reader of its numbered matches: None where it prints no
    line number or reads its input) of a grep, rg or git grep; None where its words are not read (an option this reading does not
    know, which may take a value)."""
    if program == "git":
        rest = rest[1:]
    values = RG_SHORT_VALUES if program == "rg" else GREP_SHORT_VALUES
    flags: set[str] = set()
    plain: list[str] = []
    pattern_given, i = False, 0
    while i < len(rest):
        w = rest[i]
        i += 1
        if w == "--":
            plain += rest[i:]
            break
        if w.startswith("--"):
            name = w.split("=", 1)[0]
            if name not in _LONG:
                return None
            flag, takes = _LONG[name]
            pattern_given = pattern_given or name in ("--regexp", "--file")
            i += takes and "=" not in w
            flags.add(flag)
        elif w.startswith("-") and len(w) > 1:
            for j, c in enumerate(w[1:]):
                flags.add(c)
                if c in values:
                    pattern_given = pattern_given or c in "ef"
                    i += j == len(w) - 2  # its value: the rest of the word, else the next word
                    break
        else:
            plain.append(w)
    files = plain if pattern_given else plain[1:]
    recursive = bool({"r", "R"} & flags) or program != "grep" and program not in GREPS  # rg and git grep: a tree
    if "n" not in flags or flags & set(_NOT_LINES) or program == "rg" and "N" in flags or not (files or recursive):
        return flags, files, None
    if "H" in flags or "h" not in flags and (len(files) > 1 or program == "git" or not files):
        return flags, files, ("named", where)
    bare = (_under(where, files[0]), _CONTEXT if {"A", "B", "C"} & flags else _BARE)
    if "h" in flags or not recursive:
        return flags, files, ("bare", *bare)
    return flags, files, ("either", where, *bare)  # a tree or a file: as it printed


# the long options of grep, rg and git grep read: (the flag it stands for, whether it takes a value)
_LONG = {"--line-number": ("n", False), "--recursive": ("r", False), "--with-filename": ("H", False),
         "--no-filename": ("h", False), "--context": ("C", True), "--after-context": ("A", True),
         "--before-context": ("B", True), **{k: (k, False) for k in ("--ignore-case", "--fixed-strings", "--word-regexp",
                                                                      "--no-heading", "--hidden", "--no-ignore",
                                                                      "--color", "--colour")},
         **{k: (k, True) for k in ("--regexp", "--file", "--include", "--exclude", "--exclude-dir", "--glob", "--type",
                                   "--max-count")}}


def _grep_named(text: str, where: str) -> Shown:
    """Each ``PATH:212:`` line's number under its file (a file named once per output: a 100 KB grep -rn output names
    a few files in thousands of lines)."""
    found: Shown = {}
    for name, number in _NAMED_LINES.findall(text):
        found.setdefault(name, []).append(int(number))
    files: Shown = {}
    for name, numbers in found.items():
        files.setdefault(_under(where, name), []).extend(numbers)
    return files


# Gemini CLI's search tool (grep.ts; GREP_TOOL_NAME, grep_search since its rename, search_file_content before):
# 'Found 2 matches for pattern "P" in path "DIR":' (or 'in file "F"', one file searched; older releases: match(es),
# no path), then each file's hits, 'File: PATH' (relative to the directory searched; a file searched: its name) and
# 'L212: code' a hit ('L211- code' a context line, grep_search's context arguments), '---' between
GEMINI_SEARCHES = frozenset({"grep_search", "search_file_content"})
_GEMINI_FOUND = re.compile(r"Found \d+ match")
_GEMINI_HIT = re.compile(rf"L({LINE_NUMBER})[:-]")


def _gemini_search(args: Mapping[str, Any], cwd: str) -> Reader:
    """The reader of Gemini CLI's grep_search, older search_file_content (:data:`_GEMINI_FOUND`): each ``L212:`` (a
    context line's ``L211-``) a line of the file the ``File:`` line above it names, under the directory its
    ``dir_path`` (older: ``path``) names, else the project root; where one file was searched (``in file "F"``), that
    file. Its hits had been read as no line (grep_search's until a review of 86: only the older name was read)."""
    where = args.get("dir_path", args.get("path"))
    base = _under(cwd, where) if isinstance(where, str) and where else cwd

    def read(text: str) -> Shown:
        lines = text.split("\n")
        if not _GEMINI_FOUND.match(lines[0]):
            return {}
        one = ' in file "' in lines[0]
        found: Shown = {}
        file = ""
        for line in lines[1:]:
            if line.startswith("File: "):
                file = base if one else _under(base, line[len("File: "):])
            elif file and (m := _GEMINI_HIT.match(line)):
                found.setdefault(file, []).append(int(m.group(1)))
        return found
    return read


# Gemini CLI's read_file before the file's lines where it shows part of them: "[File content truncated: showing lines
# 212-230 of 300 total lines. Use offset/limit parameters to view more.]" (2025, fileUtils.processSingleFileContent),
# later "IMPORTANT: The file content has been truncated.\nStatus: Showing lines 212-230 of 300 total lines.\nAction:
# ... use offset: 230." (read-file.ts; since start_line and end_line replaced offset and limit: "use start_line: 231.")
_READ_FILE = re.compile(r"\s*(?:\[File content truncated: showing|IMPORTANT: The file content has been truncated\.\n"
                        rf"Status: Showing) lines ({LINE_NUMBER})-({LINE_NUMBER}) of \d{{1,12}} total lines"
                        rf"(?:\.\nAction: [^\n]*?use start_line: ({LINE_NUMBER})\.)?")


def _read_file(text: str, file: str, first: int) -> Shown:
    """The lines of ``file`` Gemini CLI's read_file printed with their numbers: none in its text (the file's lines
    bare), so only the first and last line its header names where it shows part of the file, and the line it says to
    start the next read at (``start_line: 231``); the lines between are printed without a number (a 215 among them is
    code, no line number the agent read, as ``sed -n``'s are), and a whole file has no header. ``first``: the line
    the read starts at (its start_line, its 0-based offset + 1, else 1), which Gemini CLI's header names first: a
    header naming another is the file's own text (a read of a saved tool output, a test's fixture), no line shown."""
    m = _READ_FILE.match(text)
    return {file: [int(n) for n in m.groups() if n]} if m and int(m.group(1)) == first else {}


def _count(value: Any) -> bool:
    """Whether ``value`` is a line number as a tool's JSON argument gives it: a positive integer (or its digits)."""
    return not isinstance(value, bool) and (isinstance(value, int) and value > 0
                                            or isinstance(value, str) and value.isdigit() and int(value) > 0)


def _lines_of(file: str, number: re.Pattern[str]) -> Reader:
    return lambda text: _numbered(text, file, number)


def _numbered(text: str, file: str, number: re.Pattern[str]) -> Shown:
    """The lines of ``file`` an output printed, each output line that opens with ``number``'s."""
    found = [int(m.group(1)) for line in text.split("\n") if (m := number.match(line))]
    return {file: found} if found else {}


def _all_lines(args: list[str]) -> bool:
    """Whether nl's options number every line of the file from 1 by 1 (``-ba``: its numbers are line numbers)."""
    every, i = False, 0
    while i < len(args):
        w = args[i]
        i += 1
        if w in ("-ba", "--body-numbering=a") or w == "-b" and args[i:i + 1] == ["a"]:
            every, i = True, i + (w == "-b")
        elif re.fullmatch(r"-w\d*|-n(?:ln|rn|rz)?|--number-width=\d+|--number-format=(?:ln|rn|rz)", w):
            i += w in ("-w", "-n")
        elif w.startswith("-"):
            return False  # a start (-v), an increment (-i), a separator (-s), pages (-p): not the file's numbers
    return every


def _values(args: list[str], letters: str) -> int:
    """How many of ``args`` are the values of short options among ``letters`` given apart (``-n 200``: one)."""
    return sum(1 for k, w in enumerate(args[:-1]) if re.fullmatch(rf"-[{letters}]", w))


def _tail_start(args: list[str]) -> str:
    """The line ``tail -n +N`` (or ``-n+N``, ``+N``) starts from; "" for any other tail."""
    for k, w in enumerate(args):
        m = re.fullmatch(r"(?:-n|--lines=)?\+(\d{1,12})", w) or (
            w in ("-n", "--lines") and k + 1 < len(args) and re.fullmatch(r"\+(\d{1,12})", args[k + 1]))
        if m:
            return m.group(1)
    return ""


def _under(cwd: str, path: str) -> str:
    """``path`` as the file it names, run in ``cwd`` (a relative one where the directory is unknown; a Windows path
    read as Windows reads it: shellpaths.file_under)."""
    return file_under(cwd, path)


def _arguments(raw: Any) -> Mapping[str, Any] | None:
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except (ValueError, RecursionError):
            return None
    return raw if isinstance(raw, Mapping) else None


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p["text"] for p in content if isinstance(p, Mapping) and isinstance(p.get("text"), str))
    return ""
