"""Shell command lines read as bash reads their words: one splitting for the SWE-agent reader's text commands and
for the labelling rule's shell command arguments (:mod:`sam_model.data.toolstate`, "shell command lines").

A coding agent whose tool is a shell writes every action as one command line (``cat src/foo/bar.py``), which no
earlier event says whole, while the path inside it was printed by an earlier ``find``. Read as bash reads it, the line
is words: quotes removed, ``#`` comments and operators (``|``, ``&&``, ``;``, redirections) dropped, a redirection's
file a word unless it is a descriptor (``2>&1``) or a device (``2>/dev/null``), and the descriptor number opening a
redirection (the ``2`` of ``2>err.log``) no word. The labelling rule traces the words an
agent chose (paths, patterns, names, line ranges), not its syntax: the program word of each simple command, its
sub-command (``git commit``; a group's too, ``gh pr view``: :data:`GROUPS`), a kubectl resource type (``get pods``:
:data:`KINDS`), reserved words and flags are not traced (``--key=value`` and ``KEY=value`` give their value, and so
does a flag before a sub-command, ``git -C /repo log``; a count after a flag of :data:`COUNT_FLAGS` is none,
``head -n 200``, ``docker logs --tail=200``), nor the program a wrapper runs (``sudo``, ``xargs``, ``timeout 60``,
``uv run``, ``find -exec``, ``docker exec CONTAINER``, ``docker run IMAGE``, ``kubectl exec POD --``: the container
a value) or a setting
wrapper's own arguments (``timeout 300``, ``-k 5``: :data:`SETTING_RUNNERS`), ``bash -c SCRIPT`` is the script's
words, ``ssh HOST COMMAND`` the host and the command's words (:func:`_ssh`), a command
substitution (``$(cmd)``, ```cmd```) a command of its own (the word holding it none), a search pattern that is
code or a regex (``grep -rn 'def foo'``, ``rg 'foo\\('``) its names (:func:`_pattern`), a line range
(``sed -n '120,160p'``, ``awk 'NR>=120'``, ``tail -n +120``, ``git blame -L 120,160``) its line numbers
(:func:`line_numbers`, :func:`git_lines`; a page's bounds none, unless it opens at a grep hit: :class:`PageBound`),
a sed edit (``sed -i 's/old/new/g'``) its old and new parts
(:func:`sed_words`), a Codex patch (``apply_patch``'s argument or heredoc) the paths it names (:func:`patch_paths`),
a Python script (``python -c SCRIPT``, ``python - <<'EOF'``) its literals and imports
(:func:`sam_model.data.pywords.python_words`), a node, Ruby or Perl one-liner (``node -e``, ``ruby -e``, ``perl -ne``)
its string literals (:func:`sam_model.data.scriptwords.script_words`; a Perl sed edit as sed's), a heredoc fed to a shell (``bash <<EOF``, ``ssh HOST <<EOF``) its
command lines' words (:func:`_heredoc_words`), another heredoc's body is one text, and ``./src/a.py`` or ``src/`` is
the path a listing prints (``src/a.py``, ``src``).
A PowerShell tool's lines (:func:`is_powershell`), and ``pwsh -Command SCRIPT`` in an argv, are read as PowerShell
reads them: its escape is a backtick, so a backslash stays a path's (``C:\\repo\\src\\a.py``).
"""

from __future__ import annotations

import functools
import ntpath
import posixpath
import re
import shlex
from typing import Any

from sam_model.data.pywords import python_words
from sam_model.data.scriptwords import is_eval_flag, language, script_words

OPERATOR = re.compile(r"[|&;<>()]+")  # a token of shell syntax, not a word
_CONTROL = re.compile(r"[|&;<>()\n]+")  # an operator or line break in a command line read with newlines
_REDIRECT = re.compile(r"[0-9]*[<>&]*[<>][<>&|]*")  # >, >>, <, >&, &>, 2> (its file is a word)
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=(.*)", re.DOTALL)  # KEY=value
_SHELL_C = re.compile(r"-[A-Za-z]*c[A-Za-z]*")  # bash -c, -lc, -ec: the next word is a script
_HEREDOC = re.compile(r"<<(-?)[ \t]*(['\"]?)([^\s'\"<>|&;()]+)\2")
SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh"})
POWERSHELLS = frozenset({"powershell", "pwsh"})  # Windows' shells: a backslash is a path's, the escape a backtick
_PWSH_VALUES = frozenset({"executionpolicy", "ep", "ex", "workingdirectory", "wd", "windowstyle", "w", "outputformat",
                          "o", "of", "inputformat", "if", "inp", "version", "v", "configurationname", "settingsfile",
                          "encodedcommand", "e", "ec"})
# a redirection's file that is syntax, as a descriptor is: 2>/dev/null, common in agents' finds and greps, traced
# each to the first earlier command that said it
DEVICES = frozenset({"/dev/null", "/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/tty", "$null"})
# programs whose first word is a sub-command (git commit, cargo build, pip install): syntax, as the program word is
SUBCOMMANDS = frozenset({"git", "cargo", "go", "npm", "pnpm", "yarn", "pip", "pip3", "uv", "poetry", "conda", "apt",
                         "apt-get", "brew", "docker", "podman", "oc", "kubectl", "gh", "dotnet", "rustup", "gem", "helm", "terraform",
                         "systemctl", "pipenv", "pdm", "hatch", "pipx"})
_PYTHON = re.compile(r"python[0-9.]*")  # python -m MODULE: the module is the program
# programs that run the command after their own flags and arguments (the number of those before it: timeout's
# duration): that command's program word is syntax too (sudo, xargs or timeout 60 pytest traced grep or pytest to the
# first earlier event that said it, an earlier command's action), as is find's after -exec
WRAPPERS = {"sudo": 0, "doas": 0, "env": 0, "nohup": 0, "nice": 0, "exec": 0, "command": 0, "builtin": 0,
            "stdbuf": 0, "unbuffer": 0, "xargs": 0, "timeout": 1, "watch": 0, "strace": 0, "npx": 0, "bunx": 0,
            "uvx": 0}
# wrappers whose own arguments (timeout's duration, -k 5, -s KILL; nice's -n 10; watch's -n 2) say how the command
# runs, as a shell tool's timeout setting does, not what it acts on: none is traced (timeout 300 pytest traced 300 to
# any earlier output that printed it)
SETTING_RUNNERS = frozenset({"timeout", "nice", "watch"})
FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
# programs whose sub-command may be a group of sub-commands (gh pr view 1234, kubectl rollout status): the group's
# sub-command is syntax too (view had been traced, to the agent's "let me view the PR")
GROUPS = {"gh": frozenset({"pr", "issue", "run", "repo", "release", "workflow", "gist", "label", "secret", "variable",
                           "cache", "codespace", "project", "ruleset", "ssh-key", "gpg-key", "auth", "config",
                           "extension", "alias", "search", "org", "attestation"}),
          "kubectl": frozenset({"rollout"}), "oc": frozenset({"rollout"})}
# kubectl sub-commands whose first plain word is a resource type (kubectl get pods, describe pod web-7): syntax, as a
# sub-command is; a TYPE/NAME word (deployment/web) names the resource, a value as before
_KUBE_TYPED = frozenset({"get", "describe", "delete", "edit", "top", "restart", "status", "history", "undo", "pause",
                         "resume"})
KINDS = {"kubectl": _KUBE_TYPED, "oc": _KUBE_TYPED}
RUNS = {"uv": {"run"}, "poetry": {"run"}, "pipenv": {"run"}, "pdm": {"run"}, "hatch": {"run"}, "conda": {"run"},
        "pipx": {"run"}, "npm": {"exec"}, "pnpm": {"exec", "dlx"}, "yarn": {"exec", "dlx"}}  # uv run pytest
# a sub-command that runs a command inside a container or pod named first: docker exec -it web_7 bash -c "cat a.py"
# traced bash and the script whole; the container is a value (the listing that printed it), the program syntax and
# the script its words. The key the exec's own value flags are read by (VALUE_FLAGS), as a wrapper's are.
# docker run IMAGE cmd is read so too (the image a value, past run's own options with their values; the image's
# command had been traced, its program and a bash -c script whole, and a flag's value taken for the image)
EXECS = {("docker", "exec"): "docker exec", ("podman", "exec"): "docker exec", ("compose", "exec"): "compose exec",
         ("docker", "run"): "docker run", ("podman", "run"): "docker run",
         ("compose", "run"): "compose run", ("kubectl", "exec"): "kubectl exec", ("oc", "exec"): "kubectl exec"}
COMPOSES = frozenset({"docker-compose", "podman-compose"})  # docker compose's own program: its sub-commands
_SELECTORS = frozenset({"-l", "--selector"})  # kubectl's label selector, KEY=value: its value
_EXEC_KEYS = frozenset(EXECS.values())  # an exec whose -e KEY=value gives its value, as KEY=value before a command does
# flags whose value is the next word, read before the sub-command or the program a wrapper runs: git -C /repo log
# took /repo for git's sub-command (untraced) and traced log; kubectl -n prod get pods traced get
_GREP_VALUES = {"--include", "--exclude", "--exclude-dir", "--exclude-from", "-d", "--directories", "-D", "--devices",
                "--label", "--binary-files"}
VALUE_FLAGS = {
    "git": {"-C", "-c", "--git-dir", "--work-tree", "--namespace"},
    "kubectl": {"-n", "--namespace", "--context", "--kubeconfig", "--cluster", "--user", "-s", "--server", "-o",
                "--output", "-l", "--selector", "--field-selector", "-c", "--container"},  # -o yaml: no resource type
    "helm": {"-n", "--namespace", "--kube-context", "--kubeconfig"},
    "docker": {"-H", "--host", "-c", "--context", "--config", "-l", "--log-level"},
    "cargo": {"-C", "-Z", "--config", "--color"}, "go": {"-C"}, "gh": {"-R", "--repo"},
    "npm": {"--prefix", "-w", "--workspace"}, "pnpm": {"-C", "--dir", "-F", "--filter"}, "yarn": {"--cwd"},
    "uv": {"--directory", "--project", "-p", "--python", "--with"}, "poetry": {"-C", "--directory", "-P", "--project"},
    "conda": {"-n", "--name", "-p", "--prefix"}, "systemctl": {"-H", "--host", "-M", "--machine"},
    "sudo": {"-u", "--user", "-g", "--group", "-C", "-D", "--chdir", "-p", "--prompt", "-h", "--host", "-r", "-t"},
    "doas": {"-u", "-C"}, "env": {"-u", "--unset", "-C", "--chdir", "-S"}, "nice": {"-n", "--adjustment"},
    "xargs": {"-n", "-I", "-P", "-L", "-s", "-d", "-E", "-a", "--max-args", "--max-procs", "--delimiter"},
    "timeout": {"-s", "--signal", "-k", "--kill-after"}, "stdbuf": {"-i", "-o", "-e"}, "watch": {"-n", "--interval"},
    "strace": {"-o", "-e", "-p", "-s"},
    # a search's flags whose value is no pattern (rg -t py PATTERN: py had been taken for the pattern)
    "grep": _GREP_VALUES, "egrep": _GREP_VALUES, "fgrep": _GREP_VALUES,
    "rg": {"-g", "--glob", "--iglob", "-t", "--type", "-T", "--type-not", "--type-add", "-M", "--max-columns", "-j",
           "--threads", "--max-depth", "-d", "-E", "--encoding", "-r", "--replace", "--sort", "--sortr", "--pre",
           "--pre-glob", "--max-filesize", "--ignore-file", "--engine"},
    "ag": {"-G", "--file-search-regex", "--ignore", "--ignore-dir", "--depth", "-p", "--path-to-ignore"},
    "ack": {"--type-set", "--ignore-dir", "--ignore-file"}, "git grep": {"--max-depth", "--threads"},
    "compose": {"-f", "--file", "-p", "--project-name", "--profile", "--env-file", "--project-directory"},
    "docker exec": {"-e", "--env", "--env-file", "-u", "--user", "-w", "--workdir", "--detach-keys"},
    "compose exec": {"-e", "--env", "-u", "--user", "-w", "--workdir", "--index"},
    "docker run": {  # docker run's (and create's) options whose value is the next word: the rest take none (-it, --rm)
        "-a", "--attach", "--add-host", "--annotation", "--blkio-weight", "--blkio-weight-device", "--cap-add",
        "--cap-drop", "--cgroup-parent", "--cgroupns", "--cidfile", "--cpu-period", "--cpu-quota", "--cpu-rt-period",
        "--cpu-rt-runtime", "-c", "--cpu-shares", "--cpus", "--cpuset-cpus", "--cpuset-mems", "--detach-keys",
        "--device", "--device-cgroup-rule", "--device-read-bps", "--device-read-iops", "--device-write-bps",
        "--device-write-iops", "--dns", "--dns-option", "--dns-search", "--domainname", "--entrypoint", "-e", "--env",
        "--env-file", "--expose", "--gpus", "--group-add", "--health-cmd", "--health-interval", "--health-retries",
        "--health-start-interval", "--health-start-period", "--health-timeout", "-h", "--hostname", "--ip", "--ip6",
        "--ipc", "--isolation", "--kernel-memory", "-l", "--label", "--label-file", "--link", "--link-local-ip",
        "--log-driver", "--log-opt", "--mac-address", "-m", "--memory", "--memory-reservation", "--memory-swap",
        "--memory-swappiness", "--mount", "--name", "--network", "--net", "--network-alias", "--oom-score-adj",
        "--pid", "--pids-limit", "--platform", "-p", "--publish", "--pull", "--restart", "--runtime",
        "--security-opt", "--shm-size", "--stop-signal", "--stop-timeout", "--storage-opt", "--sysctl", "--tmpfs",
        "-u", "--user", "--ulimit", "--userns", "--uts", "-v", "--volume", "--volume-driver", "--volumes-from", "-w",
        "--workdir"},
    "compose run": {"-e", "--env", "-u", "--user", "-w", "--workdir", "-v", "--volume", "-p", "--publish", "-l",
                    "--label", "--name", "--entrypoint"},
    "kubectl exec": {"-c", "--container", "-n", "--namespace", "-f", "--filename", "--pod-running-timeout",
                     "--context", "--kubeconfig"},
}
# flags whose next word, a number, is a count of lines or matches (grep -A 100, head -n 200): how much to show, never a
# value the agent looked up, and a count of three digits or more was traced to any earlier output that printed it
# (a walkthrough's Codex-style greps: 26 such labels); a next word that is no number is read as before
_GREP_COUNTS = {"-A", "-B", "-C", "-m", "--max-count", "--after-context", "--before-context", "--context"}
COUNT_FLAGS = {"grep": _GREP_COUNTS, "egrep": _GREP_COUNTS, "fgrep": _GREP_COUNTS, "rg": _GREP_COUNTS,
               "ag": _GREP_COUNTS, "ack": _GREP_COUNTS, "git grep": _GREP_COUNTS,
               "head": {"-n", "-c", "--lines", "--bytes"}, "tail": {"-n", "-c", "--lines", "--bytes"},
               "git": {"-n", "--max-count", "-U", "--unified"}, "journalctl": {"-n", "--lines"},
               "gh": {"-L", "--limit"},  # gh pr list --limit 100: how many to list
               # a container's or pod's last lines: docker logs --tail 200 web (a sub-command's: "PROGRAM SUB")
               "docker logs": {"-n", "--tail"}, "podman logs": {"-n", "--tail"}, "compose logs": {"-n", "--tail"},
               "kubectl logs": {"--tail"}, "oc logs": {"--tail"}}
_COUNT = re.compile(r"[+-]?\d+")
# a script that prints lines by number (sed -n '120,160p' FILE, awk 'NR>=120 && NR<=160'): its line numbers are
# values an earlier event said (a grep -n hit, FILE:120:), the script whole none; an end of $ or +K (a count) is none,
# and so is the end of a range from the first line (sed -n '1,200p', awk 'NR<=200': head -n 200's count)
# a line number: no file has more lines than 12 digits count, and int() of more than 4,300 digits is a ValueError
# (sed -n '9999...,9999...p' stopped the conversion with a traceback); a longer number makes the script no line range
_LINE = r"\d{1,12}"
_SED_LINES = re.compile(rf"\s*({_LINE})\s*(?:,\s*({_LINE}|\$|\+\d+)\s*)?p\s*")
_AWK_LINE = rf"NR\s*(==|>=|<=|>|<)\s*({_LINE})"
_AWK_LINES = re.compile(rf"\s*{_AWK_LINE}\s*(?:(&&|,)\s*{_AWK_LINE}\s*)?(?:\{{\s*print(?:\s+\$0)?\s*;?\s*\}}\s*)?")


def git_lines(value: str, pages: bool = False) -> list[str]:
    """The traced words of ``git blame -L`` / ``git log -L``'s value: a range ``120,160`` (``120,+40``, ``120``; in
    ``git log`` followed by ``:FILE``) its line numbers as a sed range's (:func:`line_numbers`: an end of ``+40`` or of
    a range from the first line is a count, none), its file a path; ``:NAME[:FILE]`` the function's name and the file;
    anything else (a ``/regex/`` bound) one word, as before. ``120,160`` whole was said by no event, while a grep -n
    hit said 120. ``pages``: a page's bounds are kept, as :class:`PageBound` words (:func:`line_numbers`)."""
    m = re.fullmatch(rf"({_LINE})(?:,({_LINE}|[+-]\d+))?(?::(.+))?", value, re.DOTALL)
    if m:
        first, end, file = m.groups()
        lines = line_numbers("sed", f"{first},{end}p" if end and not end.startswith("-") else f"{first}p",
                             pages) or []
        return lines + ([_path(file)] if file else [])
    if value.startswith(":") and len(value) > 1:
        return [w for w in value[1:].split(":", 1) if w]
    return [_path(value)]


def line_numbers(program: str | None, script: str, pages: bool = False) -> list[str] | None:
    """The line numbers of a ``sed`` script of line-range prints (``10,40p``, ``5p;9,12p``) or an ``awk`` program of
    ``NR`` bounds (``NR>=10 && NR<=40``, ``NR==10,NR==40``, a ``{print}`` after them); None for any other script,
    which stays one word as before. The end of a range from the first line (``1,200p``, ``NR<=200``) is none: it
    says how many lines to show, as ``head -n 200`` does (Codex's first look at a file), no line an earlier event
    gave, and it was traced to any earlier output that printed 200. Nor are a page's bounds (:func:`is_page`:
    ``200,400p`` after ``1,200p``), unless ``pages``: then they are :class:`PageBound` words, for a reader who sees
    the earlier outputs to judge (a window opening at a grep hit is no page)."""
    if program == "sed" and script.strip():
        parts = [_SED_LINES.fullmatch(p) for p in re.split(r"[;\n]", script.strip().rstrip(";"))]
        if all(parts):
            out: list[str] = []
            for m in parts:
                first, end = m.groups()  # type: ignore[union-attr]
                if not (end and end.isdigit() and is_page(int(first), int(end))):
                    out += [n for n in (first, end) if n and n.isdigit() and (n == first or int(first) > 1)]
                elif pages:
                    out += [PageBound(n, (int(first), int(end))) for n in (first, end)]
            return out
    if program == "awk" and (m := _AWK_LINES.fullmatch(script)):
        op, first, _, op2, second = m.groups()
        bounds = [(op, first), *([(op2, second)] if second else [])]
        starts = [n for i, (o, n) in enumerate(bounds) if o in (">=", ">") or o == "==" and i == 0]
        ends = [n for n in (first, second) if n and n not in starts]
        if starts and ends and is_page(int(starts[0]), int(ends[0])):
            window = (int(starts[0]), int(ends[0]))
            return [PageBound(n, window) for _, n in bounds] if pages else []
        return [n for _, n in bounds if n in starts or starts and int(starts[0]) > 1]  # NR<=200 alone: a count
    return None


PAGE_LINES = 50  # the fewest lines a page of a file holds: a window around a grep hit is smaller (120,160p)


class PageBound(str):
    """A bound of a page of a file (:func:`is_page`: ``200`` and ``400`` of ``sed -n '200,400p'``), which the
    labelling rule does not trace unless the window opens or closes at a line an earlier output printed as a search
    hit (:func:`grep_hit`): then it is a window around that hit, whose numbers are values, as ``120,160p``'s are.
    Only a reader that sees the earlier outputs can tell (:func:`sam_model.data.toolstate.call_leaves`), so the
    readers of a command (``pages``) give the bounds as these words. ``window``: the range's first and last line."""

    window: tuple[int, int]

    def __new__(cls, word: str, window: tuple[int, int]) -> PageBound:
        bound = super().__new__(cls, word)
        bound.window = window
        return bound


# the FILE of a search hit FILE:LINE: (grep_hit, hit_lines; numbered.py's grep -n readers), as grep -rn, rg -n, git
# grep -n and Claude Code's Grep print it: the path as given or found, unquoted, so a folder with a space stays in it
# (C:\Users\Ann Lee\repo\a.py:200:, /Users/ann/My Project/a.py:200:; grep_hit stopped at the space, numbered.py
# took anything up to the first :N:). It holds no colon but a drive's (C: before a separator), so a URL
# (http://host:8080:) is none; a space only before a path's last separator, the file's own name none, so prose
# (Error at line 200: foo) and a Go log's time (2024/01/01 12:30:45) are none; and it opens with no number before a
# dash or colon: a one-file grep's context line (211-code) or hit (211:code), or a time (12:30:45)
HIT_FILE = r"(?!\d+[-:])(?:[A-Za-z]:(?=[/\\]))?(?:[^\s:]+|[^\s:][^:\n]*[/\\][^\s:/\\]+)"
# the LINE of a search hit or a numbered listing (grep_hit, hit_lines; numbered.py's readers of grep -n, cat -n, nl
# and Read), as those print it: no leading zero (0200: is no line 200, 0: no line) and at most 12 digits, as _LINE
# reads a range's (no file has more lines; int() of 4,300 digits is a ValueError). The readers had disagreed: numbered
# took 0200: for line 200 where hit_lines took none, and grep_hit a 13-digit line no reader of lines reads
LINE_NUMBER = r"[1-9]\d{0,11}(?!\d)"
_LINE_NUMBER = re.compile(LINE_NUMBER)
# a Python traceback's location (an indented 'File "FILE", line LINE', ", in NAME" after it; pytest's --tb=native
# prints it too): it names line LINE of FILE as a compiler's or pytest's FILE:LINE: does (grep_hit, hit_lines;
# numbered.py's reader of an output's locations), its groups FILE and LINE
TRACEBACK_FILE = r'[ \t]*File "([^"\n]+)", line '  # the location before its LINE
TRACEBACK_LINE = rf"{TRACEBACK_FILE}({LINE_NUMBER})"


def grep_hit(text: str, line: int) -> bool:
    """Whether ``text``, an earlier event's, prints line ``line`` as a search hit: a line of ``grep -n``'s, ``rg``'s
    or a search tool's output opening ``FILE:LINE:`` (``FILE:LINE:COL:``; FILE as :data:`HIT_FILE` reads it, a
    Windows ``C:\\...`` or a folder with a space too), ``LINE:`` (one file's hits) or ``Line LINE:`` (SWE-agent's
    search_file; LINE as :data:`LINE_NUMBER` reads it), after the tool's name a result is written with (``Bash:
    src/a.py:200:``). A location is one too: a compiler's, a linter's or pytest's ``FILE:LINE:`` (gcc's
    ``src/a.c:200:5: error``, mypy's ``a.py:200: error``, pytest's ``tests/test_a.py:200: AssertionError``) and a
    Python traceback's ``File "FILE", line LINE`` (:data:`TRACEBACK_LINE`). It names line LINE of FILE without
    printing the line's text, as a hit prints it; what is certain is that the value was said there as a line of that
    file, so a window opening there came from it as much (which file, where a reader marks it: numbered.py's
    locations). A context line
    (``FILE-200-``), a numbered view (``   200\t``), prose (``Error at line 200:``) or a number elsewhere is none."""
    # the substrings first: the pattern took 3 ms over a 100 KB result, read for each page bound over every earlier
    # result of a long session, the substrings 0.1 ms
    return _LINE_NUMBER.fullmatch(str(line)) is not None and (f"{line}:" in text or f"line {line}" in text) \
        and _hit_line(line).search(text) is not None


@functools.lru_cache(maxsize=256)
def _hit_line(line: int) -> re.Pattern[str]:
    """The pattern of a search hit at ``line`` (:func:`grep_hit`), compiled once for each line a session pages at."""
    return re.compile(rf"(?m)^(?:[\w.-]+: )?(?:(?:{HIT_FILE}:|Line )?{line}:|{TRACEBACK_FILE}{line}(?!\d))")


# each way a line may open with a hit (grep_hit's pattern, its optional parts given or not): one number each (a
# FILE ends at its first colon, or at the one after a drive's, which a separator follows: one place a line)
_HIT_FORMS = [re.compile(rf"(?m)^{prefix}{where}({LINE_NUMBER}):")
              for prefix in ("", r"[\w.-]+: ") for where in ("", rf"{HIT_FILE}:", "Line ")] + [
    re.compile(rf"(?m)^(?:[\w.-]+: )?{TRACEBACK_LINE}")]  # a traceback's location: its LINE the last group


def hit_lines(text: str) -> frozenset[int]:
    """Every line :func:`grep_hit` finds ``text`` printing as a search hit, read once (a line's number as
    :data:`LINE_NUMBER` reads it: ``0200:`` is not ``200:``), for a reader asking of many lines (toolstate's page
    bounds)."""
    if ":" not in text and "line " not in text:
        return frozenset()
    return frozenset(int(m.group(m.lastindex or 0)) for form in _HIT_FORMS for m in form.finditer(text))


def is_page(first: int, end: int) -> bool:
    """Whether the line range ``first``-``end`` is a page of a file read page by page: its k-th window of n lines,
    n at least :data:`PAGE_LINES` and a multiple of 10 (``200,400p`` or ``201,400p`` after ``1,200p``, ``250,500p``,
    ``300,350p``). Its bounds are the agent's paging, how far it has read, no line an earlier event gave: ``400`` was
    traced to any earlier output that printed 400 (an HTTP status, a constant of the page before). The first page
    (``1,200p``) has its own rule; a range of another start (``120,160p``, ``150,250p``: around a grep hit) keeps
    its numbers, and so does a page by these numbers that opens or closes at a line an earlier result printed as a
    hit (:class:`PageBound`: the labelling rule sees the results, this judges the numbers alone)."""
    return first > 1 and any(n >= PAGE_LINES and n % 10 == 0 and start % n == 0
                             for n, start in ((end - first, first), (end - first + 1, first - 1)))


_SED_NUMBER = re.compile(rf"{_LINE}(?!\d)|\$")  # a sed address that is a line (or the last line)
_SED_S_FLAGS = re.compile(r"[gpiImMe0-9]*")  # s///'s flags (w FILE, the last, is read on its own)
_SED_REFERENCE = re.compile(r"\\[0-9&]|(?<!\\)&")  # a replacement's \1 or &: the matched text, no letters of it
_UNESCAPE = re.compile(r"\\(.)", re.DOTALL)


def sed_words(script: str) -> list[str] | None:
    """The traced words of a ``sed`` script that edits or finds lines by a regex (``s/old/new/g``, ``/DEBUG/d``,
    ``120,130d``, ``/def foo/,/def bar/p``, several joined by ``;`` or lines): a substitution's old part read as a
    grep's pattern (:func:`_pattern`: a regex or code its names, another pattern whole) and its new part as one (its
    ``\\1`` and ``&``, the matched text, split it), a ``/regex/`` address read so, a line address by its line numbers
    as a print's (:func:`line_numbers`), an ``a``/``i``/``c`` command's text (``/^import os$/a import sys``, ``3a\\``
    and its lines) read as a substitution's new part, and the file of ``w FILE``, ``r FILE`` or ``s///w FILE`` a path;
    None for a script of line prints only (:func:`line_numbers` reads those) or one this does not parse (``y///``,
    braces), read whole as before. ``sed -i 's/old_name/new_name/g' FILE`` was traced by ``s/old_name/new_name/g``,
    which no event said, while the issue had said ``old_name``; an added line's text and a written file were one
    word with the script until CONVERSION_VERSION 53."""
    out: list[str] = []
    edits, i, n = False, 0, len(script)
    while i < n:
        if script[i] in " \t\n;":
            i += 1
            continue
        lines: list[str] = []
        for bound in range(2):
            if m := _SED_NUMBER.match(script, i):
                lines.append(m.group())
                i = m.end()
            elif script[i:i + 1] == "/" or script[i:i + 1] == "\\" and i + 2 < n:
                delimiter = script[i + 1] if script[i] == "\\" else "/"
                end, regex = _sed_part(script, i + (2 if script[i] == "\\" else 1), delimiter)
                if end is None:
                    return None
                out += _pattern(regex, regex) if regex else []
                edits, i = True, end  # /def foo/,/def bar/p: a grep's pattern
            elif bound:
                return None  # a ',' with no second address
            if bound or script[i:i + 1] != ",":
                break
            i += 1
        while i < n and script[i] in " \t!":
            i += 1
        command = script[i:i + 1]
        if command == "s" and i + 1 < n and script[i + 1] not in "\\\n ":
            delimiter = script[i + 1]
            end, old = _sed_part(script, i + 2, delimiter)
            end, new = _sed_part(script, end, delimiter) if end is not None else (None, "")
            if end is None:
                return None
            i = _SED_S_FLAGS.match(script, end).end()  # type: ignore[union-attr]
            file = ""
            if script[i:i + 1] == "w":  # s/a/b/w FILE: the file the changed lines are written to
                i, file = _sed_text(script, i + 1)
            out += _pattern(old, old) if old else []
            for literal in _SED_REFERENCE.split(new):  # s/foo(\(.*\))/bar\1/: bar, not bar1
                found = list(_PIECE.finditer(literal := _UNESCAPE.sub(r"\1", literal)))  # '\1 = 30': 30
                literal = literal[found[0].start():found[-1].end()] if found else ""
                out += _pattern(literal, literal) if literal else []
            out += [_path(file)] if file else []
            edits = True
        elif command and command in "pdDPq=":
            edits = edits or command != "p"
            i += 1
        elif command and command in "aicwWrR" and script[i + 1:i + 2] in (" ", "\t", "\\"):  # a TEXT, w FILE
            # (a blank or backslash after the letter: app.py, a file the script edits, is no 'a' command)
            i, text = _sed_text(script, i + 1)
            if command in "aic":  # the text added, read as a substitution's new part is
                found = list(_PIECE.finditer(text))
                out += _pattern(text, text[found[0].start():found[-1].end()]) if found else []
            elif text:
                out.append(_path(text))
            edits = True
        else:
            return None
        if len(lines) == 2 and lines[1] != "$":  # 120,130d: lines a view showed (no page: is_page is a print's)
            out += lines[:1] + lines[1:] * (int(lines[0]) > 1)
        elif lines and lines[0] != "$":
            out.append(lines[0])
        if i < n and script[i] not in " \t\n;}":
            return None
    return out if edits else None


def _sed_text(script: str, start: int) -> tuple[int, str]:
    """The end of a sed command's text or file name opening at ``start`` (``a TEXT``, ``a\\`` and its lines, each
    but the last ending in a backslash; ``w FILE``: the line break closing it) and the text, its leading blanks and the backslash GNU sed takes
    before it left out, its escapes read: it runs to the end of its line, a ``;`` included, as sed reads it."""
    i, n = start, len(script)
    while i < n and script[i] in " \t":
        i += 1
    if script.startswith("\\\n", i):  # a\ then the text on the next lines
        i += 2
    elif script[i:i + 1] == "\\":  # a\text (GNU sed's one-line form)
        i += 1
    lines: list[str] = []
    while True:
        end = script.find("\n", i)
        end = n if end < 0 else end
        line = script[i:end]
        if line.endswith("\\") and end < n:
            lines.append(line[:-1])
            i = end + 1
            continue
        lines.append(line)
        break
    return end, _UNESCAPE.sub(r"\1", "\n".join(lines)).strip()


def _sed_part(script: str, start: int, delimiter: str) -> tuple[int | None, str]:
    """The end of a sed regex or replacement opening at ``start`` (past its closing ``delimiter``) and its text, an
    escaped delimiter read as the character (``s|/usr/lib|/opt/lib|``, ``s/a\\/b/c/``); None where it does not
    close."""
    i, text = start, []
    while i < len(script):
        c = script[i]
        if c == "\\" and i + 1 < len(script):
            text.append(script[i + 1] if script[i + 1] == delimiter else script[i:i + 2])
            i += 2
            continue
        if c == delimiter:
            return i + 1, "".join(text)
        text.append(c)
        i += 1
    return None, ""


# programs whose first plain word (or -e PATTERN, --regexp=PATTERN) is a search pattern (git grep too)
GREPS = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack", "git grep"})
_PATTERN_FLAG = re.compile(r"-[A-Za-z]*e")  # -e PATTERN, or -e closing a cluster of grep flags (-rne PATTERN)
_FILE_FLAGS = frozenset({"-f", "--file"})  # patterns read from a file: the first plain word is no pattern then
# a pattern that is code or a regex is split into its names: 'def foo' or 'class Foo(' is said by no earlier event
# as such (an issue says foo). These words open a definition or an import, so a pattern starting with one is code
# (a phrase such as 'not found' is a value, traced whole as before)...
DECLARATIONS = frozenset({"def", "class", "function", "fn", "func", "struct", "interface", "trait", "impl", "enum",
                          "type", "import", "from", "export", "const", "let", "var", "pub", "async", "module",
                          "package", "return", "raise", "throw", "new", "extends", "include", "define"})
# A declaration opens code as code writes it, in lower case and before a name: 'Module not found', 'Type mismatch'
# or 'class not found' is an error message, a phrase (split, it traced found or mismatch to any output saying it).
PROSE = frozenset({"not", "is", "are", "was", "were", "be", "been", "in", "and", "or", "an", "the", "to", "of", "on",
                   "at", "by", "for", "with", "if", "that"})
# ...and, with these, are the searched language's syntax, said by any file an agent viewed: dropped from a split
# pattern as a program word is from a command
KEYWORDS = DECLARATIONS | {"self", "this", "cls", "await", "static", "public", "private", "protected", "final",
                           "override", "virtual", "void", "mut", "as", "in", "is", "not", "and", "or", "if", "else",
                           "elif", "for", "while", "with", "yield", "lambda", "use", "using", "namespace", "impl"}
_REGEX = re.compile(r"[\\^$*+?()\[\]{}|]")  # a character that makes a pattern a regex (a literal's '.' does not)
# [A-Z], [^)]: a class of characters, no name; an escape first (\[server\], \\[: read as it is, so an escaped
# bracket is a literal's, \[server\] the name server: it was read as a class [server\], and the pattern traced nothing)
_BRACKET = re.compile(r"\\.|\[\^?\]?[^\]]*\]", re.DOTALL)
_CLASS = re.compile(r"\\[bBwWsSdDAZzG<>]|\.[*+?]")  # \b, \s, .*: regex syntax
_SYNTAX = re.compile(r"\\(.)|[\^$*+?()\[\]{}|]")  # an escape or an operator: where a regex's literal runs end
_NAME_CHAR = re.compile(r"[\w.@/ -]")  # an escaped character that is a literal's (\. \-), not an operator (\| \()
_PIECE = re.compile(r"[\w.@/-]+")  # a name, a dotted name (os.path.join), a path
RESERVED = frozenset({"if", "then", "else", "elif", "fi", "do", "done", "while", "until", "for", "in", "case",
                      "esac", "select", "function", "time", "{", "}", "!", "[[", "]]"})
MAX_WORDS = 64  # words of one command line traced; a longer line (generated data, a pasted list) is read whole
# characters of one command line split (beside its heredocs' bodies); a longer one is read whole: shlex builds a word
# a character at a time, in time quadratic in its length (python -c '<1 MB>' took 18 s, under a served search's lock
# when it was the call searched with), and a line that long holds more than MAX_WORDS words or free-text words
MAX_LINE_CHARS = 10_000
_MAX_DEPTH = 3  # bash -c "bash -c '...'": nested scripts read as words (deeper: the script is one word)


SHELL_TOOL_WORDS = frozenset({"bash", "sh", "zsh", "shell", "terminal", "powershell", "pwsh", "ssh"})
COMMAND_ARGUMENTS = frozenset({"command", "cmd"})  # and "script", of a tool whose name says a shell
# words that name another language or engine: a tool ``sql_exec``, ``python_exec`` or ``python_shell`` runs no shell
# command line (its SQL or Python, read as bash reads a line, gave its table and variable names as values)
OTHER_LANGUAGES = frozenset({"sql", "mysql", "psql", "sqlite", "postgres", "db", "query", "cypher", "sparql",
                             "graphql", "redis", "mongo", "python", "py", "ipython", "jupyter", "notebook", "cell",
                             "js", "javascript", "node", "ruby", "php", "perl", "lua"})
_RUN = frozenset({"run", "exec", "execute"})
_NAME_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def _name_words(name: str) -> list[str]:
    return [w.lower() for w in _NAME_WORD.findall(name)]


def is_shell_tool(name: str) -> bool:
    """A tool whose name says it runs shell commands, read as words (``run_shell_command``, ``execute_bash``,
    ``Bash``, ``terminal``, ``ssh_command``, ``container.exec``): a word among :data:`SHELL_TOOL_WORDS`, a last word
    ``exec``, ``run``/``exec``/``execute`` followed by ``command``/``cmd`` (``execute_command``, ``exec_command``), or
    the name ``run`` alone (OpenHands' text-mode command action), and no word of :data:`OTHER_LANGUAGES`
    (``sql_exec``, ``python_shell``). ``execute_ipython_cell``, ``str_replace_editor`` or ``send_command`` are
    none."""
    found = _name_words(name)
    return bool(found) and not OTHER_LANGUAGES.intersection(found) and (
        any(w in SHELL_TOOL_WORDS for w in found) or found[-1] == "exec" or found == ["run"]
        or any(a in _RUN and b in ("command", "cmd") for a, b in zip(found, found[1:])))


def is_powershell(tool: str) -> bool:
    """A tool whose name says PowerShell (``powershell``, ``run_pwsh``): its command lines are PowerShell's."""
    return bool(POWERSHELLS.intersection(_name_words(tool)))




# the words of a shell tool's argument names that say how its command runs, not what it acts on (a timeout, an output
# cap, a permission and its reason, a description for the user, background or interactive running)
SETTING_WORDS = frozenset({"timeout", "ms", "sec", "secs", "seconds", "yield", "max", "output", "tokens", "limit",
                           "sandbox", "permissions", "escalated", "justification", "description", "security", "risk",
                           "background", "input", "approval", "login", "tty"})


def is_shell_setting(tool: str, argument: str) -> bool:
    """Whether the top-level argument ``argument`` of a call to ``tool`` says how a shell runs its command, not what
    it acts on: an argument of a shell tool (:func:`is_shell_tool`) whose name says a timeout, an output limit, a
    permission, a description for the user or background running (:data:`SETTING_WORDS`). Codex repeats
    ``"timeout_ms": 120000`` on every call, Claude Code a ``timeout``, OpenHands a ``security_risk``: traced as values,
    each later call was labelled with the first call that said the same setting. Those are the harness's settings and
    the agent's habit, never what it needs to remember; a shell tool's other arguments (the command line, a working
    directory, a running shell's id, a ``docker_exec``'s container, an ``ssh`` tool's host) are values as the spec
    reads them, so a setting is named by its words rather than by being anything but a command."""
    return is_shell_tool(tool) and bool(SETTING_WORDS.intersection(w.lower() for w in _NAME_WORD.findall(argument)))


# a file tool's arguments that say how much of its output to show and in what form, not what it reads or searches:
# Claude Code's Grep ``output_mode``, ``head_limit`` and grep's flags ``-A``/``-B``/``-C``/``-n``/``-i``, its Read's
# ``limit`` (Gemini CLI's read_file too), named without their dashes, in lower case
FILE_TOOL_WORDS = frozenset({"grep", "glob", "read"})
# the other words a file tool's name may hold (read_file, read_many_files, grep_search, read_text_file): a read tool
# of anything else (read_customer, mark_as_read, spreadsheet_read) is a business tool, its context or limit a value
FILE_NAME_WORDS = frozenset({"file", "files", "many", "multiple", "text", "search", "content", "tool"})
FILE_SETTINGS = frozenset({"output_mode", "head_limit", "limit", "a", "b", "c", "context", "n", "i", "multiline"})


def is_tool_setting(tool: str, argument: str) -> bool:
    """Whether the top-level argument ``argument`` of a call to ``tool`` is a setting, judged trivial: a shell's
    (:func:`is_shell_setting`), or an output setting of a file tool, one whose name says grep, glob or read
    (:data:`FILE_SETTINGS`). Claude Code's Grep writes ``"output_mode": "content"`` on most searches: traced as a value,
    each later search was a decision point labelled with the session's first one (in a walkthrough's hand-written
    sessions, two decision points with no other label); a ``Read`` with ``"limit": 200`` traced to any earlier file
    listing that printed line 200. ``path``, ``pattern`` and ``glob`` say what is read and stay values, and so does
    ``offset`` unless it starts a page (:func:`is_page_offset`, which sees the call's ``limit``)."""
    return is_shell_setting(tool, argument) or (is_file_tool(tool) and argument.lstrip("-").lower() in FILE_SETTINGS)


def is_file_tool(tool: str) -> bool:
    """Whether ``tool``'s name says grep, glob or read and nothing but file words (:data:`FILE_NAME_WORDS`; an MCP
    server's prefix, ``mcp__filesystem__``, left out): ``Read``, ``read_file``, ``grep_search``. A business tool that
    reads is none: ``read_customer``'s ``context`` or ``mark_as_read``'s ``n`` were dropped as settings."""
    found = _name_words(tool.rsplit("__", 1)[-1])
    return bool(FILE_TOOL_WORDS.intersection(found)) and set(found) <= FILE_TOOL_WORDS | FILE_NAME_WORDS


PAGE_START, PAGE_SIZE = "offset", "limit"  # a file read's first line and its number of lines (Read, read_file)
RESULTS_SIZE = "head_limit"  # a search's number of results shown (Claude Code's Grep), its offset the results skipped


def is_page_offset(tool: str, argument: str, arguments: dict[str, Any]) -> bool:
    """Whether ``argument`` is the ``offset`` of a file tool (:func:`is_file_tool`) that, with the call's ``limit``
    n, starts a page of the file as :func:`is_page` judges the lines read: Claude Code's Read counts from 1
    (``offset`` 201, ``limit`` 200: lines 201-400, ``offset`` k*n+1), Gemini CLI's read_file from 0 (``offset`` 200:
    the same lines, k*n); either base is taken. Such an offset is how far the agent has read, as ``[201, 400]`` after
    ``[1, 200]`` is an editor's (:func:`view_lines`), no line an earlier event gave: traced as a value, ``Read``'s
    201 went to any earlier event that printed 201 (an HTTP status). An offset that starts no page (245, from a grep
    hit at line 245; no ``limit``) stays a value. A search's ``offset`` beside its ``head_limit`` n (Claude Code's
    Grep: the first results skipped, then n shown) pages through its results at any multiple k*n: no line of a
    file (a page of 20 results is one, where is_page's fewest lines judge a file's), and traced, ``offset`` 100
    went to any earlier output that printed 100."""
    if argument.lower() != PAGE_START or not is_file_tool(tool):
        return False
    first = _count(arguments[argument])
    results = [v for k, v in arguments.items() if k.lower() == RESULTS_SIZE]
    if first is not None and len(results) == 1 and (n := _count(results[0])):
        return first > 0 and first % n == 0
    sizes = [v for k, v in arguments.items() if k.lower() == PAGE_SIZE]
    n = _count(sizes[0]) if len(sizes) == 1 else None
    return first is not None and bool(n) and (is_page(first + 1, first + n) or is_page(first, first + n - 1))


def page_offset_line(tool: str, argument: str, arguments: dict[str, Any]) -> int | None:
    """The line a file read's page offset names (:func:`is_page_offset` with its ``limit``): the offset itself, for
    the labelling rule to ask whether an earlier search printed it as a hit (:func:`grep_hit`: then it opens a window
    around the hit, a value); None for any other argument, and for a search's offset, a count of results."""
    if not is_page_offset(tool, argument, arguments) or any(k.lower() == RESULTS_SIZE for k in arguments):
        return None
    return _count(arguments[argument])


def _count(value: Any) -> int | None:
    """A line number or count a tool was given: an int (no bool) or a string of digits, of at most 12 digits."""
    if isinstance(value, str) and value.isdigit() and len(value) <= 12:
        return int(value)
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 10 ** 12 else None


def is_command_line(tool: str, argument: str, value: Any) -> bool:
    """Whether ``value``, the top-level argument ``argument`` of a call to ``tool``, is a shell command: an argument
    named ``command`` or ``cmd`` (any case) of a shell tool (:func:`is_shell_tool`), or ``script`` of one whose name
    says a shell (``bash``, ``shell``, ...: a ``run`` or ``exec`` tool's script may be any language's), holding a
    string (a command line) or a list of strings (an argv). Anything else (another tool's ``command``, such as an
    editor's ``view``; a shell tool's ``timeout``) is no command line."""
    argument = argument.lower()
    return (argument in COMMAND_ARGUMENTS or argument == "script" and bool(SHELL_TOOL_WORDS.intersection(
        _name_words(tool)))) and is_shell_tool(tool) and (
        isinstance(value, str) or isinstance(value, list) and bool(value) and all(isinstance(v, str) for v in value))


# the argument an editor tool names its operation by (OpenHands' and SWE-agent's str_replace_editor, Anthropic's
# text editor tool, OpenHands V1's file_editor, the memory tool: view, create, str_replace, insert, undo_edit)
OPERATION_ARGUMENTS = frozenset({"command"})
_OPERATION = re.compile(r"[A-Za-z][A-Za-z0-9_]*")


def is_operation(tool: str, argument: str, value: Any) -> bool:
    """Whether ``value``, the top-level argument ``argument`` of a call to ``tool``, names the operation the tool runs:
    a ``command`` of one word (``view``, ``str_replace``, ``insert``) of a tool that is no shell
    (:func:`is_command_line`; a shell's ``command`` is a command line, read by its words). It is syntax, as a shell's
    sub-command is (``git commit``), and judged trivial: traced as a value, an editor's every ``view`` after the first
    was labelled with the first call that said ``view`` (a hand-written OpenHands session of 13 calls: 6 of its 10
    decision points were such, no other value needed there). A ``command`` that is more than a word (a path, a line)
    is a value as the spec reads it."""
    return argument.lower() in OPERATION_ARGUMENTS and isinstance(value, str) and bool(_OPERATION.fullmatch(value)) \
        and not is_command_line(tool, argument, value)


# the argument an editor tool takes a line range by, [START, END] (END -1: the file's end): OpenHands' and SWE-agent's
# str_replace_editor, Anthropic's text editor tool, OpenHands V1's file_editor
LINE_RANGE_ARGUMENTS = frozenset({"view_range"})


def view_lines(argument: str, value: Any, pages: bool = False) -> list[str] | None:
    """The traced words of an editor's line range (:data:`LINE_RANGE_ARGUMENTS`, ``[START, END]``): its line numbers
    as the same range's in ``sed -n 'START,ENDp'`` (:func:`line_numbers`: the end of ``[1, 200]`` says how much to
    show, a page's bounds, ``[201, 400]`` after ``[1, 200]``, how far the agent has read, :func:`is_page`, and
    neither is a line an earlier event gave; ``[240, 260]`` around a grep hit keeps both, ``[401, -1]`` its start);
    None for any other argument or value, read as the spec reads it. Traced as values, a page's end ``400`` went to an
    earlier view that printed ``status >= 400``. ``pages``: a page's bounds are kept, as :class:`PageBound` words."""
    if argument.lower() not in LINE_RANGE_ARGUMENTS or not isinstance(value, list) or len(value) != 2 \
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return None
    first, end = value
    if not 0 < first < 10 ** 12 or not (end == -1 or first <= end < 10 ** 12):
        return None
    return line_numbers("sed", f"{first},{'$' if end == -1 else end}p", pages)


# Codex's patch format (codex-rs apply-patch): "*** Begin Patch", then per file "*** Add File: PATH" (its lines
# "+..."), "*** Update File: PATH" (optionally "*** Move to: PATH", then "@@" hunks of " ", "-", "+" lines) or
# "*** Delete File: PATH", then "*** End Patch". A body line starts with one of " -+@", never "***".
PATCH_BEGIN = "*** Begin Patch"
_PATCH_FILE = re.compile(r"^\*\*\* (?:Add File|Update File|Delete File|Move to): *(.*?)\s*$", re.MULTILINE)


def patch_paths(text: str) -> list[str] | None:
    """The paths a Codex patch names (``*** Add File:``, ``*** Update File:``, ``*** Delete File:``, ``*** Move
    to:``), in order; None when ``text`` is no patch (it does not open with ``*** Begin Patch``). The paths are what
    the agent acts on, values an earlier listing or view said; the hunks are its own writing (added lines) and
    copies of a file it viewed (context and removed lines, anchors): free text, which the spec does not trace, so no
    line of them is."""
    if not text.lstrip().startswith(PATCH_BEGIN):
        return None
    return [_path(m.group(1)) for m in _PATCH_FILE.finditer(text) if m.group(1)]


def is_patch_tool(tool: str) -> bool:
    """A tool whose name says it applies a patch (Codex's ``apply_patch``, its JSON or freeform form)."""
    return "patch" in _name_words(tool)


def tokens(line: str, newlines: bool = False, escape: str = "\\") -> list[str] | None:
    """The shell tokens of ``line`` in order: its words (quotes removed) and operators (``|``, ``&&``, ``>``, ...),
    its ``#`` comments dropped; None when a quote does not close. ``newlines``: a line break is an operator (it ends
    a command as ``;`` does) rather than a space. ``escape``: the escape character, PowerShell's a backtick (its
    backslash is a path's: ``C:\\repo\\src``, which bash's reading made ``C:reposrc``)."""
    lexer = shlex.shlex(uncomment(line, escape), posix=True, punctuation_chars="();<>|&\n" if newlines else True)
    lexer.escape = escape
    lexer.whitespace_split = True
    lexer.commenters = ""  # shlex takes any unquoted '#' for a comment: `grep -n a#b src` lost '#b' and 'src'
    if newlines:
        lexer.whitespace = " \t\r"
    try:
        return list(lexer)
    except ValueError:  # a quote that does not close
        return None


def words(line: str) -> list[str]:
    """A text command's words (SWE-agent's ``action``): its tokens without the operators, or its whitespace-split
    words when a quote does not close."""
    found = tokens(line)
    return [w for w in (line.split() if found is None else found) if not OPERATOR.fullmatch(w)]


def uncomment(text: str, escape: str = "\\") -> str:
    """``text`` without its shell comments, as bash reads them: from a ``#`` that starts a word outside quotes to
    the end of its line (``a#b`` is a word, ``ls src  # list`` says ``ls src``)."""
    out, quote, i = [], "", 0
    while i < len(text):
        c = text[i]
        if not quote and c == "#" and (i == 0 or text[i - 1].isspace() or text[i - 1] in ";&|()<>"):
            end = text.find("\n", i)
            i = len(text) if end < 0 else end
            continue
        if c == escape and quote != "'":  # an escaped character (a quote, a '#') is no quote or comment
            out.append(text[i:i + 2])
            i += 2
            continue
        if c in "'\"" and quote in ("", c):
            quote = "" if quote else c
        out.append(c)
        i += 1
    return "".join(out)


def command_words(command: Any, depth: int = 0, powershell: bool = False, pages: bool = False) -> list[str] | None:
    """The words of a shell command that the labelling rule traces, in order: a command line (a string) split as bash
    reads it, or an argv list (``["bash", "-lc", "cat src/a.py | head"]``) taken item by item; in each simple command
    the program word, reserved words (``if``, ``do``, ...) and flags are left out (a flag's ``=value`` stays),
    ``bash -c SCRIPT`` gives the script's words, and a heredoc's body is one more word (a text). None where the
    command is read whole, as the spec reads any value: a line whose quotes do not close, more than
    :data:`MAX_WORDS` words, a line (or ``-c`` script) of more than :data:`MAX_LINE_CHARS` characters beside its
    heredocs' bodies, or anything but a string or a list of strings. ``powershell``: a command line is PowerShell's
    (its escape a backtick, a backslash a path's); an argv's ``pwsh -Command SCRIPT`` is read so whatever the tool.
    ``pages``: a page's bounds in a line range are kept, as :class:`PageBound` words (not counted in the words)."""
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
        text, bodies = _heredocs(line)  # a backslash-newline joins two lines (outside single quotes)
    if len(text) > MAX_LINE_CHARS or len(bodies) > MAX_WORDS:  # heredocs past MAX_WORDS: read whole, as many words
        return None
    inner: list[str] = []
    if not powershell:  # PowerShell's $(...) is a subexpression and its backtick an escape
        text, scripts = _substitutions(text)
        for script in scripts:
            inner += (_line(script, depth + 1) or []) if depth < _MAX_DEPTH else []
    text = _descriptors(text, "`" if powershell else "\\")
    found = tokens(text, newlines=True, escape="`" if powershell else "\\")
    if found is None:
        return None
    out: list[str] = []
    command: list[str] = []
    for t in [*found, "\n"]:
        if _CONTROL.fullmatch(t) and not _REDIRECT.fullmatch(t):  # |, &&, ;, (, ), a line break: a new command
            out += _simple(command, depth, shell=True)
            command = []
        else:
            command.append(t)
    fed = [w for command, body in bodies for w in _heredoc_words(command, body, depth)]
    return [w for w in out if SUBSTITUTED not in w] + inner + fed


def _heredoc_words(command: str, body: str, depth: int) -> list[str]:
    """The traced words of a heredoc's ``body``, fed to ``command`` (the text before its ``<<``): a Codex patch's
    paths (:func:`patch_paths`); a script a shell reads (``bash <<EOF``, ``sh -s``, ``ssh HOST <<EOF``, ``docker exec
    -i web bash``) its command lines' words; a script Python reads (``python - <<'EOF'``, ``python3 <<EOF``) its
    values (:func:`sam_model.data.pywords.python_words`); so too where ``cat`` pipes it into one (``cat <<'EOF' |
    python3``: :func:`_piped` names the reader); any other body (a file ``cat > f <<EOF`` writes, a commit
    message) one text, free text by the spec when long, and so is a script that cannot be read."""
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
    plain = [j for j, w in enumerate(found) if not w.startswith("-") and not OPERATOR.fullmatch(w)]
    for j in reversed(plain):
        name = _program(found[j])
        if name in SHELLS or _PYTHON.fullmatch(name):
            if all(w.startswith("-") and (w == "-" or "c" not in w[1:] or w.startswith("--")) for w in found[j + 1:]):
                return "shell" if name in SHELLS else "python"
            return None
    if _program(found[0]) == "ssh" and len(plain) == 2 and plain[0] == 0 \
            and not any(w in _SSH_VALUES for w in found[1:]):
        return "shell"
    return None


SUBSTITUTED = "\x00"  # stands for a command substitution's output in its word (never a character of a command line)


def _substitutions(text: str) -> tuple[str, list[str]]:
    """``text`` with each command substitution outside single quotes (``$(cmd)``, ```cmd```, ``$((1 + 2))``) made
    :data:`SUBSTITUTED`, and the commands' scripts (an arithmetic expansion's none). The word holding one is what the
    command printed when it ran (``cat $(find . -name a.py)``, ``"$(pwd)/src"``), said by no earlier event as such, so
    it is no traced word; the command inside is a command, its words traced as any other's (it was split with the
    outer line: ``$``, ``find`` and ``x.py`` were words, the backticks glued to the words they touched). One that does
    not close is left as it is."""
    out: list[str] = []
    scripts: list[str] = []
    quote, i = "", 0
    while i < len(text):
        c = text[i]
        if c == "\\" and quote != "'":
            out.append(text[i:i + 2])
            i += 2
            continue
        if c == "'" and quote in ("", "'"):
            quote = "" if quote else "'"
        elif c == '"' and quote in ("", '"'):
            quote = "" if quote else '"'
        elif quote != "'" and (c == "`" or text.startswith("$(", i)):
            end = _closing(text, i)
            if end is not None:
                script = text[i + 1:end - 1] if c == "`" else text[i + 2:end - 1]
                if not (c == "$" and script.startswith("(") and script.endswith(")")):  # $((...)): arithmetic
                    scripts.append(script.replace("\\`", "`") if c == "`" else script)
                out.append(SUBSTITUTED)
                i = end
                continue
        out.append(c)
        i += 1
    return "".join(out), scripts


def _closing(text: str, start: int) -> int | None:
    """The index past the end of the substitution opening at ``start`` (a backtick, or ``$(``: its ``)``, parentheses
    and quotes inside counted); None when it does not close."""
    if text[start] == "`":
        i = start + 1
        while i < len(text):
            if text[i] == "\\":
                i += 2
                continue
            if text[i] == "`":
                return i + 1
            i += 1
        return None
    depth, quote, i = 0, "", start + 1
    while i < len(text):
        c = text[i]
        if c == "\\" and quote != "'":
            i += 2
            continue
        if quote:
            quote = "" if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return None


_DESCRIPTOR = re.compile(r"[0-9]+(?=[<>])")  # the 2 of 2>&1, 2>/dev/null, 2>err.log


def _descriptors(text: str, escape: str) -> str:
    """``text`` without the descriptor numbers that open redirections outside quotes (``2>&1``, ``2>/dev/null``,
    ``2>err.log`` read as ``>&1``, ``>/dev/null``, ``>err.log``): the tokens split ``2`` from ``>`` and left it a word,
    traced to the first earlier output that printed a 2. A number with a space before the ``>`` (``echo 2 > f``) is
    an argument, and stays."""
    out, quote, i = [], "", 0
    while i < len(text):
        c = text[i]
        if c == escape and quote != "'":
            out.append(text[i:i + 2])
            i += 2
            continue
        if c in "'\"" and quote in ("", c):
            quote = "" if quote else c
        elif not quote and (i == 0 or text[i - 1].isspace() or text[i - 1] in ";&|()") \
                and (m := _DESCRIPTOR.match(text, i)):
            i = m.end()
            continue
        out.append(c)
        i += 1
    return "".join(out)


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
    operands = False  # a plain word read after the program: later flags are a script file's (node app.js -e x)
    i = 0
    while i < len(command):
        t = command[i]
        i += 1
        if shell and _REDIRECT.fullmatch(t):
            target = command[i:i + 1]
            i += 1
            if target and not (target[0] in DEVICES or t.endswith("&") and (target[0].isdigit() or target[0] == "-")):
                out.append(_path(target[0]))  # the file it reads or writes, not a descriptor (2>&1) or /dev/null
        elif shell and t in RESERVED:
            continue
        elif t.startswith("-") and len(t) > 1 and program in GREPS and (
                t.startswith("--regexp=") or _PATTERN_FLAG.fullmatch(t) or t in ("--regexp", *_FILE_FLAGS)):
            pattern = False  # -e PATTERN: the plain words are files; -f FILE: so are they
            if t.startswith("--regexp="):
                out += _pattern(t.split("=", 1)[1], t.split("=", 1)[1])
            elif i < len(command):
                out += [_path(command[i])] if t in _FILE_FLAGS else _pattern(command[i], _path(command[i]))
                i += 1
        elif program == "git" and sub in ("blame", "log") and t.startswith("-L") and not t.startswith("--"):
            if len(t) > 2 or i < len(command):  # git blame -L 120,160 FILE, -L120,160: the range's line numbers
                out += git_lines(t[2:] if len(t) > 2 else command[i], pages=True)
                i += 0 if len(t) > 2 else 1
        elif t.startswith("-") and len(t) > 1 and (program or runner):
            env = runner in _EXEC_KEYS and t.split("=", 1)[0] in ("-e", "--env")  # docker exec -e KEY=value
            setting = program is None and runner in SETTING_RUNNERS  # timeout -k 5, --signal=KILL: no value
            counts = COUNT_FLAGS.get(program or "", set()) | COUNT_FLAGS.get(f"{program} {sub}", set())
            lang = language(program) if not operands else None
            if lang and (is_eval_flag(lang, t) and i < len(command) or "=" in t and is_eval_flag(lang, t.split("=")[0])):
                script = t.split("=", 1)[1] if "=" in t else command[i]  # node -e SCRIPT, perl -ne, --eval=SCRIPT
                i += "=" not in t
                out += _script_words(lang, script)
            elif "=" in t:
                flag, value = t.split("=", 1)
                if not (setting or flag in counts and _COUNT.fullmatch(value)):  # --tail=200: a count
                    out.append(_value(value) if env else value)
            elif t in VALUE_FLAGS.get(program or runner, ()) and i < len(command):  # git -C /repo log: /repo
                if not setting:  # kubectl -l app=web: the label's value, as a plain app=web word gave
                    out.append(_value(command[i]) if env or t in _SELECTORS else _path(command[i]))
                i += 1
            elif t in counts and i < len(command) and _COUNT.fullmatch(command[i]):
                if program == "tail" and command[i].startswith("+"):  # tail -n +120: from line 120, a line number
                    out.append(command[i][1:])
                i += 1  # grep -A 100, head -n 200: a count, not a value (COUNT_FLAGS)
            elif t == "-c" and program and _PYTHON.fullmatch(program) and i < len(command):  # python -c SCRIPT
                found = python_words(command[i], MAX_LINE_CHARS)
                out += found if found is not None else [command[i]]
                i += 1
            elif t == "-m" and program and _PYTHON.fullmatch(program) and i < len(command):  # python -m pip install
                program, i = command[i], i + 1
                subcommand = program in SUBCOMMANDS
            elif program == "find" and t in FIND_EXEC:  # find ... -exec grep -l x {} ;: grep is a program
                program, runner, before, subcommand = None, "find", 0, False
        elif program is None and (m := _ASSIGNMENT.fullmatch(t)):
            out.append(m.group(1))
        elif program is None and before:
            if runner not in SETTING_RUNNERS:  # timeout 300: a setting; docker exec's container: a value
                out.append(_path(t))
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
        elif subcommand:
            subcommand = t in GROUPS.get(program or "", ())  # gh pr view: view is pr's sub-command
            sub = t if not sub else f"{sub} {t}"
            kind = t in KINDS.get(program or "", ())
            if program == "git" and t == "grep":
                program, pattern = "git grep", True
            if t in RUNS.get(program, ()):  # uv run pytest: pytest is a program
                program, runner, before = None, program, 0
            elif (program, t) in EXECS:  # docker exec CONTAINER cmd: the container a value, cmd's program syntax
                program, runner, before = None, EXECS[program, t], 1
            elif program in ("docker", "podman") and t == "compose":  # docker compose exec: exec is compose's
                program, subcommand, sub = "compose", True, ""
        elif kind:
            kind = False
            if "/" in t:  # kubectl describe deployment/web: the resource's name, a value
                out.append(_path(t))
        else:
            word, operands = _value(t), True
            lines = line_numbers(program, t, pages=True) if not t.startswith(PATCH_BEGIN) else patch_paths(t)
            if lines is None and program == "sed":  # sed -i 's/old/new/' FILE: the old and new parts
                lines = sed_words(t)
            out += _pattern(t, word) if pattern else lines if lines is not None else [word]
            pattern = False
    return out


def _script_words(lang: str, script: str) -> list[str]:
    """The traced words of a node, Ruby or Perl one-line script (:func:`sam_model.data.scriptwords.script_words`:
    its plain string literals); a Perl script that is a sed script (``perl -pi -e 's/old/new/g'``, the in-place edit
    sed -i makes) by its parts as sed's (:func:`sed_words`); one that cannot be read, one word as before."""
    found = sed_words(script) if lang == "perl" else None
    if found is None and (found := script_words(lang, script, MAX_LINE_CHARS)) is not None:
        found = [_path(w) for w in found]  # require('./lib/db.js'): lib/db.js, as a listing prints it
    return found if found is not None else [script]


def _pattern(word: str, plain: str) -> list[str]:
    """The traced words of a search pattern (grep's, rg's, git grep's): a pattern that is a regex (``\\bfoo\\b``,
    ``foo\\(``, ``foo.*bar``) or code (it opens with a word of :data:`DECLARATIONS`, :func:`_is_code`: ``def foo``,
    ``class Foo(``, ``from a.b import c``) is its names, the names of :data:`KEYWORDS` left out (``foo``; ``Foo``; ``a.b``, ``c``):
    the agent searched for a name an earlier event gave (the issue's ``foo``), and the pattern whole, or its syntax,
    is no value any event said. Another pattern (``TODO``, ``not found``, ``user_42@example.com``) is ``plain``, the
    word as it was traced before, and a phrase between a regex's operators (``Connection refused\\|timed out``) is
    that phrase: split, its common words (``out``) were traced to any earlier event saying them."""
    if not _REGEX.search(word):
        names = _names(word)
        return [n for n in names if n.lower() not in KEYWORDS] if names and _is_code(names) else [plain]
    text = _SYNTAX.sub(lambda m: m.group(1) if m.group(1) and _NAME_CHAR.fullmatch(m.group(1)) else "|",
                       _CLASS.sub("|", _BRACKET.sub(_class, word)))
    out: list[str] = []
    for literal in text.split("|"):  # a regex's literal runs: 'Connection refused\|timed out' is two phrases
        names = _names(literal)
        if len(names) > 1 and not _is_code(names):  # a phrase, traced whole ('timed out': split, out was a value)
            found = list(_PIECE.finditer(literal))
            out.append(" ".join(literal[found[0].start():found[-1].end()].split()).strip(".-/"))
        else:
            out += [n for n in names if n.lower() not in KEYWORDS]
    return out


def _class(m: re.Match[str]) -> str:
    """A :data:`_BRACKET` match as :func:`_pattern` reads it: a class of characters ends a literal run, an escape
    (``\\[``, a literal bracket) is kept for the run's reading."""
    return m.group() if m.group().startswith("\\") else "|"


def _names(text: str) -> list[str]:
    """The names of a pattern's literal text (``os.path.join``, ``src/a.py``, ``foo``), in order."""
    return [n for n in (p.strip(".-/") for p in _PIECE.findall(text)) if n]


def _is_code(names: list[str]) -> bool:
    """Whether a pattern of these names is code: it opens with a declaration as code writes it (lower case), not
    followed by a word of prose (:data:`PROSE`: ``class not found``, ``from the user``)."""
    return names[0] in DECLARATIONS and (len(names) == 1 or names[1].lower() not in PROSE)


def _program(word: str) -> str:
    """A program word as the program's name: ``/usr/bin/git`` is ``git``, and a Windows program's
    (``C:\\Program Files\\Git\\bin\\bash.exe``, ``powershell.exe``) its name without ``.exe``, in lower case."""
    name = re.split(r"[/\\\\]", word)[-1]
    return name[:-4].lower() if name.lower().endswith(".exe") and len(name) > 4 else name


def _value(word: str) -> str:
    """An assignment's value (``KEY=value``: ``value``, what an earlier event said); a word that assigns nothing (a
    variable passed on by name, ``-e HOME``) is a path as any word."""
    m = _ASSIGNMENT.fullmatch(word)
    return m.group(1) if m else _path(word)


def _path(word: str) -> str:
    """A word as the path it names: ``./src/a.py`` is ``src/a.py`` and ``src/`` is ``src``, as an earlier listing
    prints them (a find prints ``./src/a.py``, which says ``src/a.py``; no listing says ``src/``); so for Windows'
    ``.\\src\\a.py`` and ``src\\``."""
    word = word[2:] if word.startswith(("./", ".\\")) and len(word) > 2 else word
    return word.rstrip("/\\") or word


# the arguments of a search tool that hold its pattern (Claude Code's Grep and Gemini CLI's search_file_content
# pattern, Cline's search_files regex, SWE-agent's search_dir/search_file search_term, which it hands to grep), and
# the words of a tool's name that say it searches files
PATTERN_ARGUMENTS = frozenset({"pattern", "regex", "search_term"})
SEARCH_TOOL_WORDS = frozenset({"grep", "search", "rg", "ripgrep"})


def search_pattern(tool: str, argument: str, value: Any) -> list[str] | None:
    """The traced words of a search tool's pattern: the argument ``pattern``, ``regex`` or ``search_term`` (any case;
    :data:`PATTERN_ARGUMENTS`) of a tool whose
    name says grep or search (:data:`SEARCH_TOOL_WORDS`: ``Grep``, ``search_file_content``, ``grep_search``), read as
    a grep's pattern in a command line is (:func:`_pattern`: a regex or code, ``def due_date``, ``foo\\(``, is its
    names; any other pattern one value, as the spec reads it); None for any other argument. Claude Code's Grep takes
    ripgrep's regex as its ``pattern``, the word a shell agent's ``rg`` gets: traced whole, ``def due_date`` was said
    by no event although the user said ``due_date``. An MCP server's prefix (``mcp__files__grep``) is left out of the
    name, so a server called ``search`` makes no tool of it a search tool."""
    if argument.lower() not in PATTERN_ARGUMENTS or not isinstance(value, str) \
            or not SEARCH_TOOL_WORDS.intersection(_name_words(tool.rsplit("__", 1)[-1])):
        return None
    return _pattern(value, value)


_DRIVE = re.compile(r"[A-Za-z]:[\\/]")  # a Windows path's start, C:\ or C:/


def relative_paths(path: str, cwd: str) -> list[str]:
    """``path``'s part below the agent's working directory ``cwd``, as the user, a grep or a listing run there names
    it (``/home/me/app/src/a.py`` under ``/home/me/app``: ``src/a.py``); [] where ``path`` is no absolute path
    strictly below an absolute ``cwd`` (``..`` read as a step up, so ``/home/me/app/../b`` is outside; ``cwd`` itself,
    the root and a path of several lines give none). Under a Windows ``cwd`` (``C:\\me\\app``, its case aside) the
    part is given with backslashes, then with slashes, as Windows' tools and a user write it."""
    windows = bool(_DRIVE.match(cwd))
    if "\n" in path or not (_DRIVE.match(path) if windows else path.startswith("/") and cwd.startswith("/")):
        return []
    paths = ntpath if windows else posixpath
    sep = "\\" if windows else "/"
    full, base = paths.normpath(path), paths.normpath(cwd).rstrip(sep)
    if not base or base.endswith(":") or not (full.lower() if windows else full).startswith(
            (base.lower() if windows else base) + sep):
        return []
    rel = full[len(base) + 1:]
    return [rel, rel.replace("\\", "/")] if windows and "\\" in rel else [rel] if rel else []


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
            return out + (inner if inner is not None else [a]) + [_path(w) for w in args[j + 1:]]
        return out + [_path(a) for a in args[j:]]
    return out


# ssh's options whose value is the next word (-p 2222, -i KEY, -o KEY=value: its value, -J jump, -L forward)
_SSH_VALUES = frozenset({"-B", "-b", "-c", "-D", "-E", "-e", "-F", "-I", "-i", "-J", "-L", "-l", "-m", "-O", "-o",
                         "-p", "-Q", "-R", "-S", "-W", "-w"})


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
            if a in _SSH_VALUES and j < len(args):
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
            return out + [_path(w) for w in args[j:]]
        if low.lstrip("-") in _PWSH_VALUES:
            j += 1
    return out


_PIPE = re.compile(r"\s*\|(?![|&])\s*([^;&|\n]*)")  # | CMD after a heredoc, up to the next operator
_CATS = frozenset({"cat", "cat -"})


def _piped(command: str, after: str) -> str:
    """The command that reads a heredoc fed to ``command``: ``command`` itself, or where it is ``cat`` passing the
    body on (``cat <<EOF | python3``, ``cat <<'EOF' | bash``) the command ``after`` it pipes into, which reads it as
    ``python3 <<EOF`` would (:func:`_heredoc_reader`: a shell's or Python's script, anything else's data)."""
    m = _PIPE.match(after)
    return m.group(1) if m and " ".join(tokens(command) or ()) in _CATS else command


def _heredocs(text: str) -> tuple[str, list[tuple[str, str]]]:
    """``text`` without its heredocs' bodies (``<<EOF`` ... ``EOF``, ``<<-'X'`` ... ``X``), and each body with the
    command it feeds (the text of its simple command before the ``<<``): what a heredoc feeds a command is no word of
    the command line (:func:`_heredoc_words` reads it). A ``<<`` inside quotes or a comment is none. A backslash-newline
    joins two lines (a space), as bash joins them, but inside single quotes, where it is the word's own text: sed's
    ``'3a\\<newline>TEXT'`` appends TEXT on its own line, and ``'a\\<newline>one\\<newline>two'`` two lines (the
    whole line's backslash-newlines had been joined first, so the text read ``one two``); a body's are joined as
    before."""
    out: list[str] = []
    bodies: list[tuple[str, str]] = []
    pending: list[tuple[str, bool, str, int]] = []  # delimiters whose bodies start at the next line, their commands
    # and where in out the line after each goes on
    quote, i, start = "", 0, 0  # start: where the simple command read opens in out
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\" and quote == '"':
                out.append(" " if text.startswith("\n", i + 1) else text[i:i + 2])
                i += 2
                continue
            quote = "" if c == quote else quote
        elif c == "\\":
            out.append(" " if text.startswith("\n", i + 1) else text[i:i + 2])
            i += 2
            continue
        elif c in "'\"":
            quote = c
        elif c == "#" and (i == 0 or text[i - 1].isspace() or text[i - 1] in ";&|()<>"):
            end = text.find("\n", i)
            end = len(text) if end < 0 else end
            out.append(text[i:end])
            i = end
            continue
        elif text.startswith("<<", i) and not text.startswith("<<<", i) and (m := _HEREDOC.match(text, i)):
            command = "".join(out[start:]) if len(bodies) + len(pending) < MAX_WORDS else ""  # more: read whole
            pending.append((m.group(3), m.group(1) == "-", command, len(out)))
            i = m.end()
            continue
        elif c == "\n" and pending:
            out.append(c)
            i += 1
            for delimiter, tabs, command, at in pending:
                command = _piped(command, "".join(out[at:-1]))  # the line after it: cat <<EOF | python3
                lines: list[str] = []
                while i < len(text):
                    end = text.find("\n", i)
                    end = len(text) if end < 0 else end
                    line, i = text[i:end], end + 1
                    while line.endswith("\\") and end < len(text):  # a backslash-newline: joined, as before
                        end = text.find("\n", i)
                        end = len(text) if end < 0 else end
                        line, i = line[:-1] + " " + text[i:end], end + 1
                    if (line.lstrip("\t") if tabs else line) == delimiter:
                        break
                    lines.append(line)
                bodies.append((command, "\n".join(lines)))
            pending, start = [], len(out)
            continue
        elif c in ";|&(\n":
            start = len(out) + 1
        out.append(c)
        i += 1
    return "".join(out), bodies
