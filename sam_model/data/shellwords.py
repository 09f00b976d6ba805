"""Shell command lines read as bash reads their words: one splitting for the SWE-agent reader's text commands and
for the labelling rule's shell command arguments (:mod:`sam_model.data.toolstate`, "shell command lines").

A coding agent whose tool is a shell writes every action as one command line (``cat src/foo/bar.py``), which no
earlier event says whole, while the path inside it was printed by an earlier ``find``. Read as bash reads it, the line
is words: quotes removed, ``#`` comments and operators (``|``, ``&&``, ``;``, redirections) dropped, a redirection's
file a word unless it is a descriptor (``2>&1``) or a device (``2>/dev/null``), and the descriptor number opening a
redirection (the ``2`` of ``2>err.log``) no word. The labelling rule traces the words an
agent chose (paths, patterns, names, line ranges), not its syntax: the program word of each simple command, its
sub-command (``git commit``; a group's too, ``gh pr view``: :data:`~sam_model.data.shellprograms.GROUPS`), a kubectl
resource type (``get pods``: :data:`~sam_model.data.shellprograms.KINDS`), reserved words and flags are not traced
(``--key=value`` and ``KEY=value`` give their value, and so does a flag before a sub-command, ``git -C /repo log``; a
count after a flag of :data:`~sam_model.data.shellprograms.COUNT_FLAGS` is none, ``head -n 200``, ``docker logs
--tail=200``), nor the program a wrapper runs (``sudo``, ``xargs``, ``timeout 60``, ``uv run``, ``find -exec``,
``docker exec CONTAINER``, ``docker run IMAGE``, ``kubectl exec POD --``: the container a value) or a setting
wrapper's own arguments (``timeout 300``, ``-k 5``: :data:`~sam_model.data.shellprograms.SETTING_RUNNERS`), ``bash -c
SCRIPT`` is the script's words, ``ssh HOST COMMAND`` the host and the command's words (:func:`_ssh`), a command
substitution (``$(cmd)``, ```cmd```) a command of its own (the word holding it none), a search pattern that is
code or a regex (``grep -rn 'def foo'``, ``rg 'foo\\('``) its names
(:func:`~sam_model.data.patternwords.pattern_words`), a line range (``sed -n '120,160p'``, ``awk 'NR>=120'``, ``tail
-n +120``, ``git blame -L 120,160``) its line numbers (:func:`~sam_model.data.lineranges.line_numbers`,
:func:`~sam_model.data.lineranges.git_lines`; a page's bounds none, unless it opens at a grep hit:
:class:`~sam_model.data.lineranges.PageBound`), a sed edit (``sed -i 's/old/new/g'``) its old and new parts
(:func:`~sam_model.data.sedwords.sed_words`), a Codex patch (``apply_patch``'s argument or heredoc) the paths it
names (:func:`~sam_model.data.shellpaths.patch_paths`), a Python script (``python -c SCRIPT``, ``python - <<'EOF'``)
its literals and imports (:func:`sam_model.data.pywords.python_words`), a node, Ruby or Perl one-liner (``node -e``,
``ruby -e``, ``perl -ne``) its string literals (:func:`sam_model.data.scriptwords.script_words`; a Perl sed edit as
sed's), a heredoc fed to a shell (``bash <<EOF``, ``ssh HOST <<EOF``) its command lines' words
(:func:`_heredoc_words`), another heredoc's body is one text, and ``./src/a.py`` or ``src/`` is the path a listing
prints (``src/a.py``, ``src``: :func:`~sam_model.data.shellpaths.listed_path`).
A PowerShell tool's lines (:func:`~sam_model.data.toolarguments.is_powershell`), and ``pwsh -Command SCRIPT`` in an
argv, are read as PowerShell reads them: its escape is a backtick, so a backslash stays a path's
(``C:\\repo\\src\\a.py``).

This module walks a line's simple commands word by word (:func:`command_words`); the steps it stands on are modules
of their own: the tokens bash splits a line into (:mod:`sam_model.data.shelltokens`), what each program's words are
(:mod:`sam_model.data.shellprograms`), a search pattern's names (:mod:`sam_model.data.patternwords`), line ranges and
pages (:mod:`sam_model.data.lineranges`), a sed script's parts (:mod:`sam_model.data.sedwords`) and paths
(:mod:`sam_model.data.shellpaths`). Which tool argument is a command line at all is
:mod:`sam_model.data.toolarguments`'s, and which line an output printed as a search hit
:mod:`sam_model.data.searchhits`'s.
"""

from __future__ import annotations

import re
from typing import Any

from sam_model.data.lineranges import PageBound, git_lines, line_numbers
from sam_model.data.patternwords import pattern_words
from sam_model.data.pywords import python_words
from sam_model.data.scriptwords import is_eval_flag, language, script_words
from sam_model.data.sedwords import sed_words
from sam_model.data.shellpaths import PATCH_BEGIN, listed_path, patch_paths
from sam_model.data.shellprograms import (
    COMPOSES,
    COUNT,
    COUNT_FLAGS,
    DEVICES,
    EXEC_KEYS,
    EXECS,
    FILE_FLAGS,
    FIND_EXEC,
    GREPS,
    GROUPS,
    KINDS,
    PATTERN_FLAG,
    POWERSHELLS,
    PWSH_VALUES,
    PYTHON,
    RESERVED,
    RUNS,
    SELECTORS,
    SETTING_RUNNERS,
    SHELLS,
    SSH_VALUES,
    SUBCOMMANDS,
    VALUE_FLAGS,
    WRAPPERS,
    attached_pattern,
    fixed_strings,
)
from sam_model.data.shelltokens import (
    MAX_LINE_CHARS,
    MAX_WORDS,
    OPERATOR,
    SUBSTITUTED,
    bare,
    descriptors,
    heredocs,
    substitutions,
    tokens,
)

_CONTROL = re.compile(r"[|&;<>()\n]+")  # an operator or line break in a command line read with newlines
_REDIRECT = re.compile(r"[0-9]*[<>&]*[<>][<>&|]*")  # >, >>, <, >&, &>, 2> (its file is a word)
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=(.*)", re.DOTALL)  # KEY=value
_SHELL_C = re.compile(r"-[A-Za-z]*c[A-Za-z]*")  # bash -c, -lc, -ec: the next word is a script
_MAX_DEPTH = 3  # bash -c "bash -c '...'": nested scripts read as words (deeper: the script is one word)


def command_words(command: Any, depth: int = 0, powershell: bool = False, pages: bool = False) -> list[str] | None:
    """The words of a shell command that the labelling rule traces, in order: a command line (a string) split as bash
    reads it, or an argv list (``["bash", "-lc", "cat src/a.py | head"]``) taken item by item; in each simple command
    the program word, reserved words (``if``, ``do``, ...) and flags are left out (a flag's ``=value`` stays),
    ``bash -c SCRIPT`` gives the script's words, and a heredoc's body is one more word (a text). None where the
    command is read whole, as the spec reads any value: a line whose quotes do not close, more than
    :data:`~sam_model.data.shelltokens.MAX_WORDS` words, a line (or ``-c`` script) of more than
    :data:`~sam_model.data.shelltokens.MAX_LINE_CHARS` characters beside its
    heredocs' bodies, or anything but a string or a list of strings. ``powershell``: a command line is PowerShell's
    (its escape a backtick, a backslash a path's); an argv's ``pwsh -Command SCRIPT`` is read so whatever the tool.
    ``pages``: a page's bounds in a line range are kept, as :class:`~sam_model.data.lineranges.PageBound` words (not
    counted in the words)."""
    if isinstance(command, str):
        found = _line(command, depth, powershell)
    elif isinstance(command, list) and command and all(isinstance(c, str) for c in command):
        found = _simple(command, depth, shell=False)
    else:
        return None
    kept = None if found is None else [w for w in found if not isinstance(w, PageBound)]
    return None if kept is None or len(kept) > MAX_WORDS else found if pages else kept


def _line(line: str, depth: int, powershell: bool = False) -> list[str] | None:
    if len(line) > MAX_LINE_CHARS and (powershell or "<<" not in line):  # no heredoc body to leave out: too long
        return None
    if powershell:  # a backtick-newline joins two lines; no heredocs (a here-string is a quoted word)
        text, bodies = line.replace("`\n", " "), []
    else:
        text, bodies = heredocs(line)  # a backslash-newline joins two lines (outside single quotes)
    if len(text) > MAX_LINE_CHARS or len(bodies) > MAX_WORDS:  # heredocs past MAX_WORDS: read whole, as many words
        return None
    inner: list[str] = []
    if not powershell:  # PowerShell's $(...) is a subexpression and its backtick an escape
        text, scripts = substitutions(text)
        for script in scripts:
            inner += (_line(script, depth + 1) or []) if depth < _MAX_DEPTH else []
    text = descriptors(text, "`" if powershell else "\\")
    found = tokens(text, newlines=True, escape="`" if powershell else "\\")
    if found is None:
        return None
    out: list[str] = []
    command: list[str] = []
    for t in [*found, "\n"]:
        if bare(t) and _CONTROL.fullmatch(t) and not _REDIRECT.fullmatch(t):  # |, &&, ;, (, ), a line break: a new
            # command (a quoted one, grep -n '|' a.py, is a word)
            out += _simple(command, depth, shell=True)
            command = []
        else:
            command.append(t)
    fed = [w for command, body in bodies for w in _heredoc_words(command, body, depth)]
    return [w for w in out if SUBSTITUTED not in w] + inner + fed


def _heredoc_words(command: str, body: str, depth: int) -> list[str]:
    """The traced words of a heredoc's ``body``, fed to ``command`` (the text before its ``<<``): a Codex patch's
    paths (:func:`~sam_model.data.shellpaths.patch_paths`); a script a shell reads (``bash <<EOF``, ``sh -s``, ``ssh
    HOST <<EOF``, ``docker exec -i web bash``) its command lines' words; a script Python reads (``python - <<'EOF'``,
    ``python3 <<EOF``) its values (:func:`sam_model.data.pywords.python_words`); so too where ``cat`` pipes it into
    one (``cat <<'EOF' | python3``: :func:`~sam_model.data.shelltokens._piped` names the reader); any other body (a
    file ``cat > f <<EOF`` writes, a commit message) one text, free text by the spec when long, and so is a script
    that cannot be read."""
    if body.lstrip().startswith(PATCH_BEGIN):
        return patch_paths(body) or []
    reader = _heredoc_reader(command)
    found = None
    if reader == "shell" and depth < _MAX_DEPTH:
        found = _line(body, depth + 1)
    elif reader == "python":
        found = python_words(body, MAX_LINE_CHARS)
    return found if found is not None else [body]


def _heredoc_reader(command: str) -> str | None:
    """Which language reads a heredoc fed to ``command``: ``shell`` or ``python`` where its last program word is a
    shell's or Python's followed by flags or ``-`` alone (stdin is the script; ``bash run.sh <<EOF`` feeds data to a
    file's script), or it is ``ssh HOST`` with no command (the host's shell reads it); None otherwise."""
    found = tokens(command)
    if not found:
        return None
    plain = [j for j, w in enumerate(found) if not w.startswith("-") and not (bare(w) and OPERATOR.fullmatch(w))]
    for j in reversed(plain):
        name = _program(found[j])
        if name in SHELLS or PYTHON.fullmatch(name):
            if all(w.startswith("-") and (w == "-" or "c" not in w[1:] or w.startswith("--")) for w in found[j + 1:]):
                return "shell" if name in SHELLS else "python"
            return None
    if _program(found[0]) == "ssh" and len(plain) == 2 and plain[0] == 0 \
            and not any(w in SSH_VALUES for w in found[1:]):
        return "shell"
    return None


def _simple(command: list[str], depth: int, shell: bool) -> list[str]:
    """The traced words of one simple command (a shell's tokens, or an argv list's items: ``shell=False``, where
    ``>`` or ``if`` is an argument like any other)."""
    out: list[str] = []
    program: str | None = None
    runner = ""  # a wrapper read (sudo, xargs, find -exec) whose flags come before the program it runs
    before = 0  # the wrapper's own arguments before that program (timeout's duration)
    subcommand = False  # the program's next plain word is its sub-command (git commit), not traced
    sub = ""  # the sub-command read (git blame's blame): COUNT_FLAGS and -L are read by it
    kind = False  # the program's next plain word is a resource type (kubectl get pods: KINDS), not traced
    pattern = False  # the program's next plain word is its search pattern (grep PATTERN FILE)
    fixed = False  # the search takes its patterns as fixed strings (grep -F, fgrep, rg -F: shellprograms.fixed_strings)
    operands = False  # a plain word read after the program: later flags are a script file's (node app.js -e x)
    i = 0
    while i < len(command):
        t = command[i]
        i += 1
        if shell and bare(t) and _REDIRECT.fullmatch(t):
            target = command[i:i + 1]
            i += 1
            if target and not (target[0] in DEVICES or t.endswith("&") and (target[0].isdigit() or target[0] == "-")):
                out.append(listed_path(target[0]))  # the file it reads or writes, not a descriptor (2>&1) or /dev/null
        elif shell and bare(t) and t in RESERVED:
            continue
        elif t.startswith("-") and len(t) > 1 and program in GREPS and (
                t.startswith("--regexp=") or PATTERN_FLAG.fullmatch(t) or t in ("--regexp", *FILE_FLAGS)
                or attached_pattern(program, t)):
            pattern = False  # -e PATTERN: the plain words are files; -f FILE: so are they
            if t.startswith("--regexp="):
                out += pattern_words(t.split("=", 1)[1], t.split("=", 1)[1], fixed)
            elif attached := attached_pattern(program, t):  # -ePATTERN, -fFILE: the value in the flag's word
                out += [listed_path(attached[1])] if attached[0] == "f" \
                    else pattern_words(attached[1], listed_path(attached[1]), fixed)
            elif i < len(command):
                out += ([listed_path(command[i])] if t in FILE_FLAGS
                        else pattern_words(command[i], listed_path(command[i]), fixed))
                i += 1
        elif program == "git" and sub in ("blame", "log") and t.startswith("-L") and not t.startswith("--"):
            if len(t) > 2 or i < len(command):  # git blame -L 120,160 FILE, -L120,160: the range's line numbers
                out += git_lines(t[2:] if len(t) > 2 else command[i], pages=True)
                i += 0 if len(t) > 2 else 1
        elif t.startswith("-") and len(t) > 1 and (program or runner):
            env = runner in EXEC_KEYS and t.split("=", 1)[0] in ("-e", "--env")  # docker exec -e KEY=value
            setting = program is None and runner in SETTING_RUNNERS  # timeout -k 5, --signal=KILL: no value
            counts = COUNT_FLAGS.get(program or "", set()) | COUNT_FLAGS.get(f"{program} {sub}", set())
            lang = language(program) if not operands else None
            if lang and (is_eval_flag(lang, t) and i < len(command) or "=" in t and is_eval_flag(lang, t.split("=")[0])):
                script = t.split("=", 1)[1] if "=" in t else command[i]  # node -e SCRIPT, perl -ne, --eval=SCRIPT
                i += "=" not in t
                out += _script_words(lang, script)
            elif "=" in t:
                flag, value = t.split("=", 1)
                if not (setting or flag in counts and COUNT.fullmatch(value)):  # --tail=200: a count
                    out.append(_value(value) if env else value)
            elif t in VALUE_FLAGS.get(program or runner, ()) and i < len(command):  # git -C /repo log: /repo
                if not setting:  # kubectl -l app=web: the label's value, as a plain app=web word gave
                    out.append(_value(command[i]) if env or t in SELECTORS else listed_path(command[i]))
                i += 1
            elif t in counts and i < len(command) and COUNT.fullmatch(command[i]):
                if program == "tail" and command[i].startswith("+"):  # tail -n +120: from line 120, a line number
                    out.append(command[i][1:])
                i += 1  # grep -A 100, head -n 200: a count, not a value (COUNT_FLAGS)
            elif t == "-c" and program and PYTHON.fullmatch(program) and i < len(command):  # python -c SCRIPT
                found = python_words(command[i], MAX_LINE_CHARS)
                out += found if found is not None else [command[i]]
                i += 1
            elif t == "-m" and program and PYTHON.fullmatch(program) and i < len(command):  # python -m pip install
                program, i = command[i], i + 1
                subcommand = program in SUBCOMMANDS
            elif program == "find" and t in FIND_EXEC:  # find ... -exec grep -l x {} ;: grep is a program
                program, runner, before, subcommand = None, "find", 0, False
        elif program is None and (m := _ASSIGNMENT.fullmatch(t)):
            out.append(m.group(1))
        elif program is None and before:
            if runner not in SETTING_RUNNERS:  # timeout 300: a setting; docker exec's container: a value
                out.append(listed_path(t))
            before -= 1
        elif program is None:
            name = _program(t)
            if name in SHELLS:
                return out + _shell(command[i:], depth)
            if name in POWERSHELLS:
                return out + _powershell(command[i:], depth)
            if name == "ssh":
                return out + _ssh(command[i:], depth)
            if name in WRAPPERS:
                runner, before = name, WRAPPERS[name]
            elif name in COMPOSES:
                program, subcommand = "compose", True
            else:
                program, subcommand, pattern = name, name in SUBCOMMANDS, name in GREPS
                fixed = pattern and fixed_strings(name, command[i:])
        elif subcommand:
            subcommand = t in GROUPS.get(program or "", ())  # gh pr view: view is pr's sub-command
            sub = t if not sub else f"{sub} {t}"
            kind = t in KINDS.get(program or "", ())
            if program == "git" and t == "grep":
                program, pattern, fixed = "git grep", True, fixed_strings("git grep", command[i:])
            if t in RUNS.get(program, ()):  # uv run pytest: pytest is a program
                program, runner, before = None, program, 0
            elif (program, t) in EXECS:  # docker exec CONTAINER cmd: the container a value, cmd's program syntax
                program, runner, before = None, EXECS[program, t], 1
            elif program in ("docker", "podman") and t == "compose":  # docker compose exec: exec is compose's
                program, subcommand, sub = "compose", True, ""
        elif kind:
            kind = False
            if "/" in t:  # kubectl describe deployment/web: the resource's name, a value
                out.append(listed_path(t))
        else:
            word, operands = _value(t), True
            lines = line_numbers(program, t, pages=True) if not t.startswith(PATCH_BEGIN) else patch_paths(t)
            if lines is None and program == "sed":  # sed -i 's/old/new/' FILE: the old and new parts
                lines = sed_words(t)
            out += pattern_words(t, word, fixed) if pattern else lines if lines is not None else [word]
            pattern = False
    return out


def _script_words(lang: str, script: str) -> list[str]:
    """The traced words of a node, Ruby or Perl one-line script (:func:`sam_model.data.scriptwords.script_words`:
    its plain string literals); a Perl script that is a sed script (``perl -pi -e 's/old/new/g'``, the in-place edit
    sed -i makes) by its parts as sed's (:func:`~sam_model.data.sedwords.sed_words`); one that cannot be read, one
    word as before."""
    found = sed_words(script) if lang == "perl" else None
    if found is None and (found := script_words(lang, script, MAX_LINE_CHARS)) is not None:
        found = [listed_path(w) for w in found]  # require('./lib/db.js'): lib/db.js, as a listing prints it
    return found if found is not None else [script]


def _program(word: str) -> str:
    """A program word as the program's name: ``/usr/bin/git`` is ``git``, and a Windows program's
    (``C:\\Program Files\\Git\\bin\\bash.exe``, ``powershell.exe``) its name without ``.exe``, in lower case."""
    name = re.split(r"[/\\\\]", word)[-1]
    return name[:-4].lower() if name.lower().endswith(".exe") and len(name) > 4 else name


def _value(word: str) -> str:
    """An assignment's value (``KEY=value``: ``value``, what an earlier event said); a word that assigns nothing (a
    variable passed on by name, ``-e HOME``) is a path as any word."""
    m = _ASSIGNMENT.fullmatch(word)
    return m.group(1) if m else listed_path(word)


def _shell(args: list[str], depth: int) -> list[str]:
    """``bash [flags] -c SCRIPT [args]``: the script's words; a shell without ``-c`` runs a file, a word."""
    out: list[str] = []
    script = False
    for j, a in enumerate(args):
        if a.startswith("-") and len(a) > 1:
            script = script or bool(_SHELL_C.fullmatch(a))
            continue
        if script:
            inner = _line(a, depth + 1) if depth < _MAX_DEPTH else None
            return out + (inner if inner is not None else [a]) + [listed_path(w) for w in args[j + 1:]]
        return out + [listed_path(a) for a in args[j:]]
    return out


def _ssh(args: list[str], depth: int) -> list[str]:
    """``ssh [options] HOST [options] [COMMAND ...]``: the options' values and the host, then the command the host
    runs, its arguments joined as ssh joins them and read as a command line (its program syntax, its words traced;
    ``ssh host 'cd /srv/app && tail logs/error.log'`` had been traced by the line whole, said by no event, and
    ``ssh host systemctl status nginx`` by ``systemctl`` and ``status``). A line that cannot be read so (a quote
    that does not close, nested too deep) is one word, as before."""
    out: list[str] = []
    host = ended = False  # the host read; a -- read (no options after it)
    j = 0
    while j < len(args):
        a = args[j]
        j += 1
        if a == "--" and not ended:
            ended = True
            if host:
                break
            continue
        if a.startswith("-") and len(a) > 1 and not ended:
            if a in SSH_VALUES and j < len(args):
                out.append(_value(args[j]))
                j += 1
            continue
        if host:
            j -= 1
            break
        out.append(a)
        host = True
    script = " ".join(args[j:])
    if not script.strip():
        return out
    inner = _line(script, depth + 1) if depth < _MAX_DEPTH else None
    return out + (inner if inner is not None else [script])


def _powershell(args: list[str], depth: int) -> list[str]:
    """``pwsh [flags] -Command SCRIPT`` (any prefix of ``-Command``: ``-c``): the script's words, read as PowerShell's
    (the rest of the arguments join it, as PowerShell joins them); ``-File PATH [args]``: words; the values of its
    other flags (``-ExecutionPolicy Bypass``) are syntax."""
    out: list[str] = []
    j = 0
    while j < len(args):
        low = args[j].lower()
        j += 1
        if low.startswith("-") and len(low) > 1 and "-command".startswith(low) or not low.startswith("-"):
            script = " ".join(args[j:] if low.startswith("-") else args[j - 1:])
            inner = _line(script, depth + 1, powershell=True) if depth < _MAX_DEPTH else None
            return out + (inner if inner is not None else [script] if script else [])
        if low in ("-file", "-f"):
            return out + [listed_path(w) for w in args[j:]]
        if low.lstrip("-") in PWSH_VALUES:
            j += 1
    return out
