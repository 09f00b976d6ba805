"""What each program's words are, as the shell command lines rule reads them (:mod:`sam_model.data.shellwords`).

A command's syntax is not traced, its values are; which word is which depends on the program: ``git commit``'s
``commit`` is a sub-command (:data:`SUBCOMMANDS`, :data:`GROUPS`), ``kubectl get pods``'s ``pods`` a resource type
(:data:`KINDS`), ``sudo`` or ``timeout 60`` runs the command after it (:data:`WRAPPERS`, :data:`SETTING_RUNNERS`),
``git -C /repo``'s ``/repo`` is a flag's value (:data:`VALUE_FLAGS`), ``head -n 200``'s ``200`` a count
(:data:`COUNT_FLAGS`), ``grep``'s first plain word a search pattern (:data:`GREPS`). These tables are that knowledge
alone, kept apart from the reader that walks a command's words by them, so a program is taught by adding a row here
and the reader's loop stays readable.
"""

from __future__ import annotations

import re

SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh"})
POWERSHELLS = frozenset({"powershell", "pwsh"})  # Windows' shells: a backslash is a path's, the escape a backtick
# PowerShell's own flags whose value is the next word (-ExecutionPolicy Bypass): syntax, as the program word is
PWSH_VALUES = frozenset({"executionpolicy", "ep", "ex", "workingdirectory", "wd", "windowstyle", "w", "outputformat",
                         "o", "of", "inputformat", "if", "inp", "version", "v", "configurationname", "settingsfile",
                         "encodedcommand", "e", "ec"})
# a redirection's file that is syntax, as a descriptor is: 2>/dev/null, common in agents' finds and greps, traced
# each to the first earlier command that said it
DEVICES = frozenset({"/dev/null", "/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/tty", "$null"})
# programs whose first word is a sub-command (git commit, cargo build, pip install): syntax, as the program word is
SUBCOMMANDS = frozenset({"git", "cargo", "go", "npm", "pnpm", "yarn", "pip", "pip3", "uv", "poetry", "conda", "apt",
                         "apt-get", "brew", "docker", "podman", "oc", "kubectl", "gh", "dotnet", "rustup", "gem", "helm", "terraform",
                         "systemctl", "pipenv", "pdm", "hatch", "pipx"})
PYTHON = re.compile(r"python[0-9.]*")  # python -m MODULE: the module is the program
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
SELECTORS = frozenset({"-l", "--selector"})  # kubectl's label selector, KEY=value: its value
EXEC_KEYS = frozenset(EXECS.values())  # an exec whose -e KEY=value gives its value, as KEY=value before a command does
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
COUNT = re.compile(r"[+-]?\d+")  # the word after a flag of COUNT_FLAGS that is a count (tail -n +120 too)
# programs whose first plain word (or -e PATTERN, --regexp=PATTERN) is a search pattern (git grep too)
GREPS = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack", "git grep"})
GREP_SHORT_VALUES = "efABCmdD"  # grep's short flags that take a value (attached or the next word)
RG_SHORT_VALUES = "efABCmgtTMjdEr"  # rg's
# the flags that make a search's pattern fixed strings, every character literal (True), or a regex again (False):
# grep -F, fgrep, rg -F, git grep -F; ag's and ack's -Q; grep's -E/-G/-P after -F (the last one counts)
FIXED_FLAGS = {"--fixed-strings": True, "--literal": True, "--no-fixed-strings": False, "--extended-regexp": False,
               "--basic-regexp": False, "--perl-regexp": False}


def fixed_strings(program: str, words: list[str]) -> bool:
    """Whether search ``program`` (a word of :data:`GREPS`) with the words after it takes its pattern as fixed strings
    (:data:`FIXED_FLAGS`, ``fgrep`` always unless told otherwise): a flag anywhere before ``--`` counts, as GNU grep
    and rg read flags after the pattern too. Why: ``grep -F '[database]'`` searches for the brackets, and the pattern
    read as a regex was a class of characters that traced nothing."""
    fixed = program == "fgrep"
    letter = "Q" if program in ("ag", "ack") else "F"
    regex = "" if program in ("rg", "ag", "ack") else "EGP"
    values = RG_SHORT_VALUES if program == "rg" else GREP_SHORT_VALUES
    i = 0
    while i < len(words):
        w, i = words[i], i + 1
        if w == "--":
            break
        if w.startswith("--"):
            fixed = FIXED_FLAGS.get(w, fixed)
            i += w in ("--regexp", "--file")  # its value is the next word
        elif w.startswith("-") and len(w) > 1:
            for n, c in enumerate(w[1:], 1):
                if c in values:  # -e PATTERN, -A 3, -m1: the rest of the word, or the next one, is its value
                    i += n == len(w) - 1
                    break
                fixed = True if c == letter else False if c in regex else fixed
    return fixed


PATTERN_FLAG = re.compile(r"-[A-Za-z]*e")  # -e PATTERN, or -e closing a cluster of grep flags (-rne PATTERN)


def attached_pattern(program: str, flag: str) -> tuple[str, str] | None:
    """(``e`` or ``f``, its value) of a search's short flag cluster whose ``-e`` (a pattern) or ``-f`` (a file of
    patterns) has its value in the same word (``-e'[database]'``, ``-rneparse_rows``, ``-fpatterns.txt``), as grep
    and rg read a value letter's rest; None for any other flag. Such a word was taken for flags alone, so the pattern
    was traced by nothing (and the first plain word after it read as the pattern)."""
    if flag.startswith("--") or not flag.startswith("-"):
        return None
    values = RG_SHORT_VALUES if program == "rg" else GREP_SHORT_VALUES
    for n, c in enumerate(flag[1:], 1):
        if c in values:
            return (c, flag[n + 1:]) if c in "ef" and flag[n + 1:] else None
    return None


FILE_FLAGS = frozenset({"-f", "--file"})  # patterns read from a file: the first plain word is no pattern then
# the shell's reserved words: syntax, never traced
RESERVED = frozenset({"if", "then", "else", "elif", "fi", "do", "done", "while", "until", "for", "in", "case",
                      "esac", "select", "function", "time", "{", "}", "!", "[[", "]]"})
# ssh's options whose value is the next word (-p 2222, -i KEY, -o KEY=value: its value, -J jump, -L forward)
SSH_VALUES = frozenset({"-B", "-b", "-c", "-D", "-E", "-e", "-F", "-I", "-i", "-J", "-L", "-l", "-m", "-O", "-o",
                        "-p", "-Q", "-R", "-S", "-W", "-w"})
