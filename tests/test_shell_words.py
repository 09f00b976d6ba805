"""A shell tool's command line is read as its words for labelling (toolstate's extension "shell command lines"):
``cat src/tinyparse/tokenizer.py`` is no value an earlier event says whole, but its path is, printed by an earlier
``find``. Claude Code's ``Bash``, OpenHands' ``execute_bash`` and Codex's argv (``["bash", "-lc", ...]``) each trace
the path to the result that printed it; program words and flags are not traced; another tool's ``command`` argument,
the constraints the model reads and a line whose quotes do not close are read as the spec reads them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sam_model.data.argumentleaves import argument_leaves, leaves
from sam_model.data.shelltokens import words
from sam_model.data.shellwords import command_words
from sam_model.data.toolarguments import is_command_line
from sam_model.data.toolstate import TranscriptState
from sam_model.data.transcripts import iter_transcript_events

ISSUE = "The tokenizer drops the last token; fix it."
FIND = 'find . -name "*.py" | grep token'
FOUND = "./src/tinyparse/tokenizer.py\n./tests/test_tokenizer.py"
TESTS = "python -m pytest -q"
RAN = "1 failed, 3 passed in 0.12s"
CAT = "cat src/tinyparse/tokenizer.py"
PATH = "src/tinyparse/tokenizer.py"


def claude_code() -> dict:
    """Claude Code's messages (Anthropic's shape): ``Bash`` with ``command`` and ``description``."""
    def call(i: int, command: str) -> dict:
        return {"role": "assistant", "content": [{"type": "tool_use", "id": f"t{i}", "name": "Bash",
                                                  "input": {"command": command, "description": f"Step {i}"}}]}

    def result(i: int, text: str) -> dict:
        return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{i}", "content": text}]}
    return {"id": "cc", "messages": [{"role": "user", "content": ISSUE}, call(1, FIND), result(1, FOUND),
                                     call(2, TESTS), result(2, RAN), call(3, CAT), result(3, "def split(text):")]}


def openhands() -> list[dict]:
    """OpenHands events (event_to_dict): ``execute_bash`` function calls (``run`` actions) and their outputs."""
    def run(n: int, command: str, output: str) -> list[dict]:
        meta = {"function_name": "execute_bash", "tool_call_id": f"c{n}", "model_response": None}
        return [{"id": 2 * n - 1, "source": "agent", "message": f"Running command: {command}", "action": "run",
                 "tool_call_metadata": meta, "args": {"command": command, "thought": ""}},
                {"id": 2 * n, "source": "agent", "message": output, "cause": 2 * n - 1, "observation": "run",
                 "tool_call_metadata": meta, "content": output, "extras": {"command": command}}]
    return [{"id": 0, "source": "user", "message": ISSUE, "action": "message", "args": {"content": ISSUE}},
            *run(1, FIND, FOUND), *run(2, TESTS, RAN), *run(3, CAT, "def split(text):")]


def codex() -> dict:
    """Codex (Responses items): the ``shell`` function takes an argv, the script behind ``bash -lc``."""
    def call(i: int, script: str) -> list[dict]:
        args = {"command": ["bash", "-lc", script], "timeout_ms": 10000 + i}
        return [{"type": "function_call", "call_id": f"s{i}", "name": "shell", "arguments": json.dumps(args)}]

    def output(i: int, text: str) -> dict:
        return {"type": "function_call_output", "call_id": f"s{i}", "output": text}
    return {"id": "codex", "input": [{"role": "user", "content": ISSUE}],
            "output": [*call(1, FIND), output(1, FOUND), *call(2, TESTS), output(2, RAN),
                       *call(3, f"{CAT} | head -40"), output(3, "def split(text):")]}


def decision(path: Path) -> dict:
    """The decision event of the third call (its state rewritten: the event before the call to cat)."""
    return [e for e in iter_transcript_events(path) if e["kind"] == "result"][1]


@pytest.mark.parametrize("name, doc", [("claude-code.jsonl", claude_code()), ("openhands.json", openhands()),
                                       ("codex.jsonl", codex())])
def test_a_shell_tools_path_is_traced_to_the_result_that_printed_it(tmp_path, name, doc):
    path = tmp_path / name
    path.write_text(json.dumps(doc) + ("\n" if name.endswith(".jsonl") else ""))
    found = next(e for e in iter_transcript_events(path) if e["kind"] == "result" and "tokenizer.py" in e["text"])
    event = decision(path)
    assert event["useful_memory_steps"] == [found["step"]]  # the find's output, not the issue or a call
    assert event["meta"]["needed"] == {"command": [PATH]}
    assert event["state"]["uncertainty_flags"] == ["command"]
    assert "command" not in event["state"]["constraints"]  # masked: the state knows what it needs, not the value


def test_program_words_flags_and_syntax_are_not_traced_and_values_are():
    """`grep` said by every earlier grep call, `-rn`, `|` and `&&` are syntax, not values an event gave."""
    st = TranscriptState()
    st.add({"role": "user", "content": "grep -rn and head -5 are said here; so are cd and /repo"})
    st.add({"role": "assistant", "content": "Searching."})
    got = st.decide([_call("terminal", "cd /repo && grep -rn 'def split' src | head -5")])
    assert sum(got.outcomes.values()) == 3  # /repo, 'def split', src: not cd, grep, -rn, head, -5, &&, |
    assert got.needed == {"command": ["/repo"]}


@pytest.mark.parametrize("command, expected", [
    ("cat src/a.py", ["src/a.py"]),
    ("grep -rn 'def parse' src/ | head -20", ["parse", "src"]),  # a pipeline: each command's program left out
    ("cd /repo && python -m pytest tests/test_a.py::test_b -x", ["/repo", "tests/test_a.py::test_b"]),  # -m: a program
    ("git commit -m 'fix parse' && cargo build --release", ["fix parse"]),  # sub-commands are syntax too
    ("pip install -e ./vendor/lib/", ["vendor/lib"]),  # the path an earlier listing prints
    ("find . -name '*.py' -path './src/*'", [".", "*.py", "src/*"]),
    ('sed -n "10,40p" src/a.py; echo ok  # show it', ["10", "40", "src/a.py", "ok"]),  # quotes, ';', a comment
    ("FOO=bar python run.py --config=cfg/a.yaml -v", ["bar", "run.py", "cfg/a.yaml"]),  # KEY=value, --key=value
    ("python x.py > out.log 2>&1", ["x.py", "out.log"]),  # a redirection's file is a word, not its descriptor
    ("cat <<'EOF' > notes.md\nfix the parser\nEOF\nwc -l notes.md", ["notes.md", "notes.md", "fix the parser"]),
    ("ls \\\n  src", ["src"]),  # a backslash-newline joins the lines
    ("for f in a.py b.py; do wc -l $f; done", ["a.py", "b.py", "$f"]),  # reserved words are syntax
    ('bash -c "ls src && cat src/b.py"', ["src", "src/b.py"]),  # a shell's -c script: its words
    (["bash", "-lc", "cat src/a.py | head"], ["src/a.py"]),  # an argv: the script's words
    (["sed", "-n", "1,40p", "src/a.py"], ["1", "src/a.py"]),  # an argv's items (1,40p: the first 40 lines, a count)
    (["echo", "a|b", ">"], ["a|b", ">"]),  # an argv item is no operator
    ("ls", []),
])
def test_command_words(command, expected):
    assert command_words(command) == expected


def test_a_line_that_does_not_shell_split_is_one_value_as_today():
    line = "grep -n 'unclosed src/a.py"
    assert command_words(line) is None
    assert argument_leaves("Bash", "command", line) == [("command", line)] == leaves(line, "command")
    assert command_words(" ".join(f"f{i}.py" for i in range(80))) is None  # too many words: read whole too


@pytest.mark.parametrize("tool, argument, value", [
    ("str_replace_editor", "command", "view"),  # OpenHands' and SWE-agent's editor: its command is a sub-command
    ("send_command", "command", "cat src/tinyparse/tokenizer.py"),  # a command, but no shell's
    ("execute_ipython_cell", "code", "print(open('src/a.py').read())"),
    ("Bash", "description", "Show the tokenizer"),  # a shell tool's other arguments
    ("Bash", "command", {"line": "cat a.py"}),  # neither a line nor an argv
])
def test_other_arguments_are_read_as_the_spec_reads_them(tool, argument, value):
    assert not is_command_line(tool, argument, value)
    assert argument_leaves(tool, argument, value) == leaves(value, argument)


def test_a_non_shell_tools_command_argument_is_traced_whole():
    st = TranscriptState()
    st.add({"role": "user", "content": f"It is in {PATH}."})
    st.add({"role": "assistant", "content": "Checking."})
    assert st.decide([_call("send_command", CAT)]).needed == {}  # the whole line: no earlier event says it
    assert st.decide([_call("run_shell_command", CAT)]).needed == {"command": [PATH]}  # Gemini CLI's shell


def test_constraints_keep_the_command_line_the_model_reads():
    """Only labels and masking read words: the running state's constraints keep the command as today."""
    st = TranscriptState()
    st.add({"role": "assistant", "tool_calls": [{"id": "a", "type": "function", "function": {
        "name": "execute_command", "arguments": json.dumps({"command": "ls src"})}}]})
    assert st.cons == {"command": "ls src"}


def test_swe_agent_text_commands_keep_their_words():
    """The SWE-agent reader's splitting is the same one (its own tests hold its conversions)."""
    assert words('find_file "x.py" src | head  # where') == ["find_file", "x.py", "src", "head"]
    assert words("grep -n a#b 'unclosed") == ["grep", "-n", "a#b", "'unclosed"]


def _call(name: str, command: str):
    from sam_model.data.chatmessages import ToolCall
    return ToolCall(name, {"command": command}, "x")


def test_a_memory_counts_a_command_lines_words_against_its_limit():
    """Each word is traced through the whole conversation as any value is: five command lines of 60 words held five
    values by the old count, and 300 were traced under a served memory's lock."""
    from sam_model.memory import HashingEncoder, ScopedMemory

    memory = ScopedMemory(HashingEncoder(16))
    line = "wc -l " + " ".join(f"src/m{i}.py" for i in range(60))
    calls = [{"id": f"c{i}", "type": "function", "function": {"name": "Bash", "arguments": json.dumps(
        {"command": line})}} for i in range(5)]
    with pytest.raises(ValueError, match="its tool calls hold 300 argument values, more than 256"):
        memory.add([{"role": "user", "content": ISSUE}, {"role": "assistant", "tool_calls": calls}], user_id="mia")
    memory.add([{"role": "user", "content": ISSUE}, {"role": "assistant", "tool_calls": calls[:4]}], user_id="mia")


def codex_session(timeout_ms: int | None = 120000) -> dict:
    """A Codex session as gpt-5-codex writes its ``shell`` calls: the same ``timeout_ms`` (120000) and working
    directory on every call (a public 0.46 rollout: ``{"command": ["bash", "-lc", "pwd"], "workdir": ".",
    "timeout_ms": 120000}``); the find prints the path the cat then needs."""
    def call(i: int, script: str) -> dict:
        args = {"command": ["bash", "-lc", script], "workdir": "/repo"}
        if timeout_ms is not None:
            args["timeout_ms"] = timeout_ms
        return {"type": "function_call", "call_id": f"s{i}", "name": "shell", "arguments": json.dumps(args)}

    def output(i: int, text: str) -> dict:
        return {"type": "function_call_output", "call_id": f"s{i}", "output": text}
    return {"id": "codex", "instructions": "The repository is /repo.", "input": [{"role": "user", "content": ISSUE}],
            "output": [call(1, FIND), output(1, FOUND), call(2, TESTS), output(2, RAN), call(3, CAT),
                       output(3, "def split(text):")]}


def test_a_shell_tools_settings_label_nothing(tmp_path):
    """Codex repeats ``timeout_ms: 120000`` on every call: traced as a value, it made each later call a decision point
    labelled with the session's first call (a fifth of the decision points of 200 Codex-style sessions had no other
    label). How a command runs (a timeout, an output limit, permissions, a description) is no value from memory; the
    labels are those of the same session without the setting."""
    events = {}
    for name, doc in (("with.jsonl", codex_session()), ("without.jsonl", codex_session(None))):
        path = tmp_path / name
        path.write_text(json.dumps(doc) + "\n")
        events[name] = [(e["step"], e.get("useful_memory_steps"), e.get("meta")) for e in iter_transcript_events(path)]
    assert events["with.jsonl"] == events["without.jsonl"]
    labelled = [e for e in events["with.jsonl"] if e[1]]
    assert [m for _, _, m in labelled] == [{"needed": {"command": [PATH]}}]  # the cat's path, to the find's output


@pytest.mark.parametrize("tool, arguments, outcome", [
    ("shell", {"timeout_ms": 120000}, "trivial"),  # Codex
    ("exec_command", {"yield_time_ms": 1000, "max_output_tokens": 6000, "sandbox_permissions": "require_escalated",
                      "justification": "Run the parser tests"}, "trivial"),  # Codex's unified exec
    ("Bash", {"timeout": 600000, "description": "Run the parser tests"}, "trivial"),  # Claude Code
    ("execute_bash", {"timeout": 120000, "security_risk": "MEDIUM"}, "trivial"),  # OpenHands
    ("terminal_status", {"timeout": 120000, "description": "Run the parser tests"}, "needed"),  # runs no command
    ("BashOutput", {"bash_id": "bash_12"}, "needed"),  # an id of a running shell is a value: its start printed it
    ("shell", {"workdir": "src/tinyparse"}, "needed"),  # a working directory an earlier listing printed
    ("run_tests", {"timeout": 600000}, "needed"),  # no shell: the spec's rule
    ("docker_exec", {"container": "web_7"}, "needed"),  # a container an earlier listing printed is a value
    ("ssh_command", {"host": "db-replica-3"}, "needed"),  # so is a host
    ("bash", {"script": "cat src/tinyparse"}, "needed"),  # a shell's script is its command line, no setting
])
def test_which_arguments_of_a_shell_tool_are_settings(tool, arguments, outcome):
    """Each call of settings runs a command line that gives no value (``true``) beside them: only a call that runs
    one has settings (is_shell_setting), and a harness's shell call always does; terminal_status runs none."""
    st = TranscriptState()
    said = " ".join(str(v) for v in arguments.values())
    st.add({"role": "user", "content": f"Earlier: {said} bash_12 src/tinyparse web_7 db-replica-3"})
    st.add({"role": "assistant", "content": "Checking."})
    runs = {} if outcome != "trivial" else {
        "cmd" if tool == "exec_command" else "command": ["bash", "-lc", "true"] if tool == "shell" else "true"}
    got = st.decide([_call_with(tool, {**runs, **arguments})])
    assert got.outcomes == {outcome: len(arguments)}


@pytest.mark.parametrize("tool, arguments, outcome", [
    ("Grep", {"output_mode": "content", "head_limit": 250, "-A": 120}, "trivial"),  # Claude Code's search settings
    ("Read", {"limit": 2000}, "trivial"),  # how many lines to show
    ("read_file", {"limit": 400}, "trivial"),  # Gemini CLI's
    ("Grep", {"pattern": "web_7", "glob": "src/tinyparse"}, "needed"),  # what it searches for and where
    ("Read", {"file_path": "src/tinyparse", "offset": 300}, "needed"),  # what it reads and from which line
    ("set_credit_limit", {"limit": 5000}, "needed"),  # no file tool: a limit the user gave is a value
])
def test_which_arguments_of_a_file_tool_are_settings(tool, arguments, outcome):
    st = TranscriptState()
    said = " ".join(str(v) for v in arguments.values())
    st.add({"role": "user", "content": f"Earlier: {said} web_7 src/tinyparse"})
    st.add({"role": "assistant", "content": "Checking."})
    assert st.decide([_call_with(tool, arguments)]).outcomes == {outcome: len(arguments)}


def _call_with(name: str, arguments: dict):
    from sam_model.data.chatmessages import ToolCall
    return ToolCall(name, arguments, "x")


@pytest.mark.parametrize("command, expected", [
    ('grep -A 100 "def foo" x.py', ["foo", "x.py"]),  # -A's 100 was a value traced to any output printing 100
    ("head -n 200 src/a.py", ["src/a.py"]),
    ("tail -n 300 log.txt", ["log.txt"]),
    ("rg -C 120 Matrix sympy/", ["Matrix", "sympy"]),
    ("grep -m abc x", ["abc", "x"]),  # no number after the flag: read as before
    ("kill -9 12345", ["12345"]),  # a pid after a flag of another program stays a value
])
def test_a_count_after_a_grep_or_head_flag_is_not_traced(command, expected):
    assert command_words(command) == expected


def test_a_grep_context_count_labels_nothing():
    """Found in a walkthrough on Codex-style sessions: `grep -n -A 100 ...` traced 100 to the first earlier output that
    printed the number (26 such labels)."""
    st = TranscriptState()
    st.add({"role": "user", "content": "The report lists 100 failures in sympy/matrices/dense.py"})
    st.add({"role": "assistant", "content": "Looking."})
    got = st.decide([_call_with("shell", {"command": ["bash", "-lc", "grep -n -A 100 'def det' sympy/matrices/dense.py"]})])
    assert got.needed == {"command": ["sympy/matrices/dense.py"]}


@pytest.mark.parametrize("command, expected", [
    ("python x.py > out.log 2>&1", ["x.py", "out.log"]),
    ("find / -name a.py 2>/dev/null", ["/", "a.py"]),
    ("pytest -x 2>err.log", ["err.log"]),  # the file a descriptor is sent to is still a word
    ("echo fixed >&2; ls &>all.log", ["fixed", "all.log"]),
    ("echo 2 > f", ["2", "f"]),  # a number with a space before '>' is an argument
    ('echo "2>x"', ["2>x"]),  # quoted: no redirection
    (["bash", "-lc", "ls src 2>&1 | head"], ["src"]),
])
def test_a_redirections_descriptor_is_no_word(command, expected):
    """2>&1 and 2>/dev/null were split as 2 and the redirection, and the 2 stayed a word of the command (judged as a
    value: one more leaf towards the line's word limit and the import report's counts)."""
    assert command_words(command) == expected


def test_a_powershell_redirection_to_null_is_no_word():
    assert command_words("Get-ChildItem C:\\repo 2>$null", powershell=True) == ["C:\\repo"]


@pytest.mark.parametrize("command, expected", [
    ("cat $(find . -name x.py)", [".", "x.py"]),  # was $, ., x.py
    ("cat `find . -name x.py`", [".", "x.py"]),  # was `find, ., x.py`
    ('cp a.py "$(pwd)/src"', ["a.py"]),  # the word is what pwd printed: said by no event
    ("cd $(dirname $(which python)) && ls lib", ["lib", "python"]),  # nested: each a command
    ("echo '$(not run)' $((1 + 2))", ["$(not run)"]),  # single quotes; arithmetic runs no command
    ('bash -lc "grep -n split $(git ls-files src)"', ["split", "src"]),
])
def test_a_command_substitution_is_split_as_a_command(command, expected):
    assert command_words(command) == expected


def test_the_path_inside_backticks_is_traced():
    """The backticks were glued to the words they touched (`find, tokenizer.py`), which no earlier event says."""
    st = TranscriptState()
    st.add({"role": "user", "content": "The tokenizer drops a token; it is in tokenizer.py"})
    st.add({"role": "assistant", "content": "Looking."})
    got = st.decide([_call("Bash", "grep -n split `find . -name tokenizer.py`")])
    assert got.needed == {"command": ["tokenizer.py"]}


@pytest.mark.parametrize("command, expected", [
    ('docker exec -it web_7 bash -c "cat src/a.py"', ["web_7", "src/a.py"]),  # was web_7, bash, the script whole
    ("docker exec -u root -w /app web_7 cat settings.py", ["root", "/app", "web_7", "settings.py"]),
    (["docker", "exec", "web_7", "bash", "-lc", "cat a.py | head"], ["web_7", "a.py"]),
    ("podman exec box ls /srv", ["box", "/srv"]),
    ("kubectl exec -it pod-1 -c web -- cat /etc/app.yaml", ["pod-1", "web", "/etc/app.yaml"]),  # was cat traced
    ("kubectl -n prod exec pod-1 -- ls /srv", ["prod", "pod-1", "/srv"]),
    ("docker compose exec app python manage.py test", ["app", "manage.py", "test"]),  # was exec and python traced
    ("docker-compose -f dev.yml exec -T db psql -U app", ["dev.yml", "db", "app"]),
    ("docker compose up -d", []),  # compose's sub-command is syntax, as docker's is
])
def test_a_command_run_in_a_container_is_a_command(command, expected):
    assert command_words(command) == expected


def test_the_program_run_in_a_container_labels_nothing_and_the_container_is_a_value():
    """docker exec CONTAINER bash -c SCRIPT traced bash, the program it runs, to the first earlier event that said it,
    and the script whole, said by no event, although an earlier listing printed the path inside it."""
    st = TranscriptState()
    st.add({"role": "user", "content": "The web_7 container serves src/app.py; run it with bash."})
    st.add({"role": "assistant", "content": "Looking."})
    got = st.decide([_call("Bash", 'docker exec -it web_7 bash -c "cat src/app.py"')])
    assert got.needed == {"command": ["web_7", "src/app.py"]}


@pytest.mark.parametrize("command, expected", [
    ("grep -rn 'def foo' src/", ["foo", "src"]),  # was 'def foo', said by no event as such
    ("grep -rn '\\bfoo\\b' .", ["foo", "."]),
    ("rg 'foo\\(' src", ["foo", "src"]),
    ("grep -n 'class Foo(' a.py", ["Foo", "a.py"]),
    ("grep -rn -e 'def foo' -e bar src", ["foo", "bar", "src"]),  # -e: patterns; the plain word a file
    ("grep -rne 'def foo' src", ["foo", "src"]),  # -e closing a cluster
    ("grep --regexp='import numpy as np' x.py", ["numpy", "np", "x.py"]),
    ("git grep -n 'def _display' -- sympy/", ["_display", "sympy"]),
    ("grep -rn 'from sympy.core.basic import Basic' .", ["sympy.core.basic", "Basic", "."]),
    ("grep -n 'self\\.assertEqual\\(' tests/a.py", ["self.assertEqual", "tests/a.py"]),
    ("grep -rnE 'foo.*bar|baz' .", ["foo", "bar", "baz", "."]),
    ("grep -rn '^\\s*$' f", ["f"]),  # all syntax: no name
    ("rg -t py 'def foo'", ["py", "foo"]),  # -t's value is no pattern
    ("grep -rn --include '*.py' 'def foo' .", ["*.py", "foo", "."]),
    ("find . -name '*.py' -exec grep -l 'def foo' {} +", [".", "*.py", "foo", "{}", "+"]),
    (["rg", "-n", "class Matrix", "sympy/"], ["Matrix", "sympy"]),  # an argv's pattern too
    # a pattern that is neither code nor a regex is a value, traced whole as before
    ("grep -rn 'not found' logs/", ["not found", "logs"]),
    ("grep -rn TODO .", ["TODO", "."]),
    ("grep -rn user_42@example.com logs", ["user_42@example.com", "logs"]),
    ("grep -f pats.txt src", ["pats.txt", "src"]),  # patterns from a file: the plain words are files
    ("git grep -n 404 src", ["404", "src"]),  # git grep's -n is no count
])
def test_a_search_pattern_that_is_code_or_a_regex_is_traced_by_its_names(command, expected):
    assert command_words(command) == expected


def test_the_name_a_grep_searches_for_is_traced_to_the_event_that_said_it():
    """grep -rn 'def split' src was the word 'def split', which the issue (saying split) does not say: untraceable,
    and where a file view printed 'def split(' the view was labelled, not the issue that gave the name."""
    st = TranscriptState()
    st.add({"role": "user", "content": "split() drops the last token."})
    st.add({"role": "assistant", "content": "Searching."})
    got = st.decide([_call("Bash", "grep -rn 'def split' src")])
    assert got.needed == {"command": ["split"]} and got.labels == [0]


@pytest.mark.parametrize("command, expected", [
    ("sed -n '120,160p' src/a.py", ["120", "160", "src/a.py"]),  # was '120,160p', said by no event
    ("sed -n 120,160p src/a.py", ["120", "160", "src/a.py"]),
    ("nl -ba src/a.py | sed -n '5p;120,160p'", ["src/a.py", "5", "120", "160"]),
    ("sed -n '120,$p' a.py", ["120", "a.py"]),  # to the end: no number
    ("sed -n '120,+40p' a.py", ["120", "a.py"]),  # +40 is a count, as head -n 40's
    ("sed -n -e '10,20p' a.py", ["10", "20", "a.py"]),
    ("tail -n +300 log.txt", ["300", "log.txt"]),  # from line 300: a line number, not a count
    ("awk 'NR>=120 && NR<=160' a.py", ["120", "160", "a.py"]),
    ("awk 'NR==120,NR==160 {print}' a.py", ["120", "160", "a.py"]),
    ("awk '{print $1}' a.py", ["{print $1}", "a.py"]),  # any other script: one word as before
    ("sed -i 's/foo/bar/' a.py", ["foo", "bar", "a.py"]),  # an edit: its parts (tests/test_shell_leftovers_54.py)
])
def test_a_line_range_is_traced_by_its_line_numbers(command, expected):
    assert command_words(command) == expected


def test_a_line_range_is_traced_to_the_grep_that_printed_its_line():
    """sed -n '120,160p' was the word '120,160p', which no event says: the grep -n hit that printed line 120 (the
    reason the agent looks there) was never its label."""
    st = TranscriptState()
    st.add({"role": "user", "content": "split() drops the last token."})
    st.add({"role": "tool", "content": "src/tinyparse/tokenizer.py:120:def split(text):"})
    st.add({"role": "assistant", "content": "Reading it."})
    got = st.decide([_call("Bash", f"sed -n '120,160p' {PATH}")])
    assert got.needed == {"command": ["120", PATH]} and got.labels == [1]
    assert got.outcomes["untraceable"] == 1  # 160, said by no event


PATCH = (f"*** Begin Patch\n*** Update File: {PATH}\n@@ def split(text):\n-    return text.split()[:-1]\n"
         "+    return text.split()\n*** End Patch")


def patched(call: dict) -> dict:
    """A Codex exchange (Responses items): a find prints the tokenizer's path, the tests run, then the model patches
    the file."""
    def shell(i: int, script: str, output: str) -> list[dict]:
        return [{"type": "function_call", "call_id": f"s{i}", "name": "shell",
                 "arguments": json.dumps({"command": ["bash", "-lc", script]})},
                {"type": "function_call_output", "call_id": f"s{i}", "output": output}]
    return {"id": "codex", "input": [{"role": "user", "content": ISSUE}],
            "output": [*shell(1, FIND, FOUND), *shell(2, TESTS, RAN), {"call_id": "p1", **call},
                       {"type": "custom_tool_call_output", "call_id": "p1", "output": "ok"}]}


@pytest.mark.parametrize("call, path", [
    ({"type": "custom_tool_call", "name": "apply_patch", "input": PATCH}, "input"),  # freeform: the input the patch
    ({"type": "function_call", "name": "apply_patch", "arguments": json.dumps({"input": PATCH})}, "input"),
    ({"type": "function_call", "name": "shell", "arguments": json.dumps({"command": ["apply_patch", PATCH]})},
     "command"),
    ({"type": "function_call", "name": "shell", "arguments": json.dumps(
        {"command": ["bash", "-lc", f"apply_patch <<'EOF'\n{PATCH}\nEOF"]})}, "command"),
])
def test_a_patch_is_traced_by_the_paths_it_names(tmp_path, call, path):
    """A Codex patch was one value, free text (or, freeform, a raw string no argument of which was traced): the file
    it updates, printed by the find, labelled nothing. Its paths are now its traced words; its lines are not."""
    file = tmp_path / "codex.jsonl"
    file.write_text(json.dumps(patched(call)) + "\n")
    results = [e for e in iter_transcript_events(file) if e["kind"] == "result"]
    found = next(e for e in results if "tokenizer.py" in e["text"])
    event = results[1]  # the decision of the patch: the tests' output
    assert event["useful_memory_steps"] == [found["step"]]
    assert event["meta"]["needed"] == {path: [PATH]}


@pytest.mark.parametrize("command, expected", [
    (["apply_patch", "*** Begin Patch\n*** Update File: ./src/a.py\n*** Move to: src/b.py\n@@\n-x\n+y\n"
                     "*** Add File: docs/n.md\n+*** Update File: not/a/header\n*** Delete File: old.py\n*** End Patch"],
     ["src/a.py", "src/b.py", "docs/n.md", "old.py"]),  # an added line that looks like a header is a line
    ("cd /repo && apply_patch <<'EOF'\n*** Begin Patch\n*** Delete File: old.py\n*** End Patch\nEOF", ["/repo", "old.py"]),
    ("cat <<EOF > notes.md\nhello there\nEOF", ["notes.md", "hello there"]),  # another heredoc: one text as before
])
def test_a_patchs_words_are_its_paths(command, expected):
    assert command_words(command) == expected


def test_a_freeform_patch_is_no_bad_argument_and_another_raw_string_still_is():
    """The import report said of every freeform apply_patch call that its arguments are no JSON object and none of
    them is traced; its paths are now traced, and a raw string of any other call is still reported."""
    from sam_model.data.chatmessages import ToolCall

    st = TranscriptState()
    for i, call in enumerate((ToolCall("apply_patch", PATCH, "p"), ToolCall("lookup", "not json", "q"))):
        st.add({"role": "assistant", "tool_calls": [{"id": call.id, "type": "function", "function": {
            "name": call.name, "arguments": call.arguments}}]}, f"message {i}")
    assert [m.split(":")[0] for m in st.invalid_arguments] == ["message 1"]
