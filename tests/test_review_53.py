"""Stop 53's review of three changes landed the same day: the shell command lines rule (shellwords, toolstate's
argument_leaves), deleted memories clearing their conversation's state (TranscriptState.forget, ScopedMemory.delete)
and the write-ahead log naming its tenant. Each test is one bug found by the review; it fails on the code before
its fix."""

from __future__ import annotations

import json

from sam_model.data import shelltokens, shellwords
from sam_model.data.argumentleaves import argument_leaves
from sam_model.data.chatmessages import ToolCall
from sam_model.data.schema import Event, State
from sam_model.data.shellwords import command_words
from sam_model.data.toolstate import TranscriptState
from sam_model.memory import HashingEncoder, ScopedMemory
from sam_model.storeconfig import StoreConfig


def _call(i: int, name: str, arguments: dict) -> dict:
    return {"role": "assistant", "tool_calls": [{"id": f"c{i}", "type": "function", "function": {
        "name": name, "arguments": json.dumps(arguments)}}]}


def _saved(memory: ScopedMemory, folder) -> str:
    """What a save holds but the history (Mem0's history keeps what was deleted)."""
    folder = memory.save(folder)
    saved = json.loads((folder / "scoped.json").read_text())
    saved.pop("history")
    return json.dumps(saved) + (folder / "store" / "store.json").read_text()


def _as_saved_before_writes_were_kept(memory: ScopedMemory, folder) -> ScopedMemory:
    """``memory`` saved and loaded as a save from before the trackers kept what each call set."""
    folder = memory.save(folder)
    saved = json.loads((folder / "scoped.json").read_text())
    for t in saved["trackers"].values():
        del t["writes"], t["writes_from"]
    (folder / "scoped.json").write_text(json.dumps(saved))
    return ScopedMemory.load(folder, HashingEncoder(64))


# ---- deleted memories clearing the conversation's state ------------------------------------------------------

PAYING = [{"role": "user", "content": "my card is 4111222233334444, the booking BK-77Q"},
          {"role": "assistant", "content": "Paying it."},
          _call(1, "pay", {"card": "4111222233334444", "city": "Lisbon", "booking": "BK-77Q"}),
          {"role": "tool", "tool_call_id": "c1", "content": "paid"},
          {"role": "user", "content": "and hold a room in Porto"},
          {"role": "assistant", "content": "Holding it."},
          _call(2, "hold", {"city": "Porto"}),  # sets city again: from here on the state says Porto
          {"role": "tool", "tool_call_id": "c2", "content": "held"}]


def test_an_old_saves_deleted_call_leaves_a_later_remembered_calls_value(tmp_path):
    """A save from before calls' writes were kept inferred the deleted call's paths from its state, then took them
    out to the conversation's end: deleting the pay call took city out, which the hold call (still remembered) had
    set to Porto, from the running state and from the hold call's events on, where a new save keeps it."""
    new = ScopedMemory(HashingEncoder(64), StoreConfig())
    new.add(PAYING, user_id="mia")
    old = _as_saved_before_writes_were_kept(new, tmp_path / "old")
    for memory in (new, old):
        memory.delete("mia#2", user_id="mia")  # the pay call
        assert memory.live_state(user_id="mia").constraints == {"city": "Porto"}
        events = memory._trackers["mia"].events
        assert [e["state"]["constraints"].get("city") for e in events[2:]] == [None, None, None, None, "Porto", "Porto"]


def test_an_old_saves_deleted_call_leaves_an_earlier_calls_path_it_did_not_set(tmp_path):
    """The event before a call is its decision point, whose constraints are masked (an entry whose value says a value
    the call needs is not in them): compared with it, an old save's call seemed to set every path masked there, and
    deleting it took out the earlier call's value of a path the deleted call never had (city, the find call's)."""
    new = ScopedMemory(HashingEncoder(64), StoreConfig())
    new.add([{"role": "user", "content": "find my Lisbon booking"},
             _call(1, "find", {"city": "Lisbon"}),
             {"role": "tool", "tool_call_id": "c1", "content": "booking BK-77Q"},
             {"role": "assistant", "content": "Cancelling it."},
             _call(2, "cancel", {"booking": "BK-77Q", "place": "Lisbon"})], user_id="mia")
    new.add([{"role": "tool", "tool_call_id": "c2", "content": "done"}], user_id="mia")
    assert "city" not in new._trackers["mia"].events[3]["state"]["constraints"]  # masked: Lisbon is needed
    old = _as_saved_before_writes_were_kept(new, tmp_path / "old")
    for memory in (new, old):
        memory.delete("mia#4", user_id="mia")  # the cancel call
        assert memory.live_state(user_id="mia").constraints == {"city": "Lisbon"}


def test_an_old_saves_deleted_call_takes_its_needed_values_out_of_the_decision_points_meta(tmp_path):
    """A new save's call knows the decision point whose meta.needed its values fed; an old save's did not, so the
    card it paid with stayed in that meta (and every save) after the call and the message that said it were deleted."""
    new = ScopedMemory(HashingEncoder(64), StoreConfig())
    new.add(PAYING, user_id="mia")
    old = _as_saved_before_writes_were_kept(new, tmp_path / "old")
    for n, memory in enumerate((new, old)):
        assert "4111222233334444" in memory._trackers["mia"].events[1]["meta"]["needed"]["card"]
        memory.delete("mia#2", user_id="mia")  # the pay call
        memory.delete("mia#0", user_id="mia")  # the message that said the card
        assert "4111222233334444" not in _saved(memory, tmp_path / f"after{n}")


def test_a_deleted_shell_calls_needed_words_leave_the_decision_points_meta(tmp_path):
    """A shell command's needed values are its words (the shell command lines rule), not the whole line the call
    wrote, so deleting the call compared the line with each word, never equal: the token the command used stayed in
    the decision point's meta.needed, and every save, after the call and the message that said the token went."""
    memory = ScopedMemory(HashingEncoder(64), StoreConfig())
    memory.add([{"role": "user", "content": "deploy with the token sk-live-93xk2"},
                {"role": "assistant", "content": "Deploying."},
                _call(1, "Bash", {"command": "./deploy.sh --token sk-live-93xk2 prod"}),
                {"role": "tool", "tool_call_id": "c1", "content": "deployed"},
                {"role": "assistant", "content": "Done."}], user_id="mia")
    assert memory._trackers["mia"].events[1]["meta"]["needed"] == {"command": ["sk-live-93xk2"]}
    memory.delete("mia#2", user_id="mia")  # the call
    memory.delete("mia#0", user_id="mia")  # the message that said the token
    assert "sk-live-93xk2" not in _saved(memory, tmp_path / "m")
    memory = ScopedMemory(HashingEncoder(64), StoreConfig())  # a word whose quotes and escapes the line holds
    memory.add([{"role": "user", "content": 'the password is pa"ss-93xk2'},
                {"role": "assistant", "content": "Logging in."},
                _call(1, "Bash", {"command": 'login --password "pa\\"ss-93xk2"'}),
                {"role": "tool", "tool_call_id": "c1", "content": "ok"}], user_id="mia")
    assert memory._trackers["mia"].events[1]["meta"]["needed"] == {"command": ['pa"ss-93xk2']}
    memory.delete("mia#2", user_id="mia")
    memory.delete("mia#0", user_id="mia")
    assert "93xk2" not in _saved(memory, tmp_path / "m2")


def test_a_delete_reads_the_memories_of_its_scope_not_every_memory():
    """A delete asked whether the memory's episode had any memory left (to forget its conversation with its last)
    by get_all(episode_id=...), which reads every memory of every scope: an agent-log memory's delete (no
    conversation to ask first) cost as many look-ups as the store held memories, under the store's lock. It now
    looks among its scope's memories (and a conversation's events, newest first)."""
    memory = ScopedMemory(HashingEncoder(16), StoreConfig())
    for u in range(60):
        memory.add([Event("x", s, "user", f"note {u} {s}", State("p")) for s in range(5)], user_id=f"u{u}")
    memory.add([{"role": "user", "content": f"chat {s}"} for s in range(5)], user_id="chat")
    index, looked = memory.store.index, []
    real = index.episode_of
    index.episode_of = lambda i: looked.append(i) or real(i)
    for user in ("u7", "chat"):
        for n, r in enumerate(memory.get_all(user_id=user)["results"]):
            looked.clear()
            memory.delete(r["id"], user_id=user)
            assert len(looked) <= 10, (user, n, len(looked))  # the store holds 310 memories
        assert memory.get_all(user_id=user)["results"] == []
    assert "chat" not in memory._trackers and len(memory.get_all(user_id="u8")["results"]) == 5


# ---- the shell command lines rule -----------------------------------------------------------------------------

def test_a_long_command_line_is_read_whole_without_splitting_it(monkeypatch):
    """shlex builds a word a character at a time, in time quadratic in its length: a call whose command was
    python -c '<1 MB script>' took 18 s to split, under a served memory's lock when it was the call searched with
    (its size is checked by counting the words). A line over MAX_LINE_CHARS (beside its heredocs' bodies) is read
    whole, as one with too many words is; a heredoc's long body still leaves the command's words."""
    split = []
    real = shelltokens.tokens
    for module in (shellwords, shelltokens):  # the line's reader and the tokeniser's own callers (heredocs)
        monkeypatch.setattr(module, "tokens", lambda *a, **k: split.append(a) or real(*a, **k))
    script = "python -c '" + "x = 1; " * 50_000 + "'"
    assert command_words(script) is None and split == []
    assert command_words(["bash", "-lc", script]) == [script] and split == []  # the script one word, not split
    assert argument_leaves("Bash", "command", script) == [("command", script)]
    body = "\n".join(f"line {i}" for i in range(5_000))
    assert command_words(f"cat > src/big.py <<'EOF'\n{body}\nEOF\nwc -l src/big.py") == ["src/big.py", "src/big.py",
                                                                                          body]


def _shell_session(commands: list[tuple[str, str]], tool: str = "Bash", key: str = "command") -> TranscriptState:
    """A coding agent's conversation: the issue, then each command with its output."""
    st = TranscriptState()
    st.add({"role": "user", "content": "The tokenizer drops the last token; fix it."})
    for i, (command, output) in enumerate(commands):
        st.feed(_call(i, tool, {key: command}))
        st.add({"role": "tool", "tool_call_id": f"c{i}", "content": output})
    return st


def test_a_redirection_to_dev_null_or_a_descriptor_is_no_value():
    """2>/dev/null, in half a coding agent's finds and greps, was a word traced like a path: the next command with it
    was labelled by the first command that said it (its action event), a memory it never needed."""
    st = _shell_session([("find / -name tokenizer.py 2>/dev/null", "/repo/src/tokenizer.py")])
    got = st.decide([ToolCall("Bash", {"command": "grep -rn split /repo/src 2>/dev/null >&2"}, "x")])
    assert got.needed == {} and got.labels == []  # /repo/src is said by no event whole
    assert command_words("cmd > out.log 2>&1 < /dev/stdin >& log.txt") == ["out.log", "log.txt"]


def test_the_program_a_wrapper_runs_is_syntax_and_a_flags_value_before_a_sub_command_is_a_value():
    """The rule leaves a simple command's program word untraced, but only the first word was taken for it: sudo,
    xargs, timeout 60, find -exec and uv run made the program they run a traced word (pytest labelled by the first
    earlier command that ran pytest, its action event), and a flag's value before a sub-command (git -C /repo log)
    was taken for the sub-command, untraced, and the sub-command traced."""
    st = _shell_session([("python -m pytest tests/test_tok.py", "1 failed"), ("ls /repo", "src tests")])
    for line in ("timeout 60 pytest -x", "sudo -u ci pytest -x", "xargs -n 1 pytest < list.txt",
                 "find tests -name 'test_*.py' -exec pytest {} \\;", "uv run --with rich pytest"):
        assert "pytest" not in st.decide([ToolCall("Bash", {"command": line}, "x")]).needed.get("command", []), line
    got = st.decide([ToolCall("Bash", {"command": "git -C /repo log --oneline -5"}, "x")])
    assert got.needed == {"command": ["/repo"]}  # said by the ls call: the value the agent chose, not log
    assert command_words("kubectl -n prod get pods -l app=web") == ["prod", "web"]  # pods: a resource type (54)
    assert command_words("env -u HOME FOO=1 nice -n 5 python run.py") == ["HOME", "1", "run.py"]  # nice -n: a setting (54)


def test_a_powershell_command_keeps_its_windows_paths():
    """A tool named PowerShell was split as bash reads a line, whose escape is a backslash: Get-Content
    C:\\repo\\src\\tokenizer.py traced C:reposrctokenizer.py, which no listing says; and an argv running PowerShell
    (Codex on Windows: powershell.exe -NoProfile -Command SCRIPT) was no shell, its script one word. PowerShell's
    escape is a backtick: the path the listing printed is traced to it, in both."""
    path = "C:\\repo\\src\\tokenizer.py"
    listing = [("Get-ChildItem -Recurse -Filter *.py C:\\repo", f"{path}\nC:\\repo\\tests\\test_tok.py"),
               ("python -m pytest -q", "1 failed")]
    st = _shell_session(listing, tool="powershell")
    got = st.decide([ToolCall("powershell", {"command": f"Get-Content {path} | Select-Object -First 40"}, "x")])
    assert got.needed == {"command": [path.lower()]} and got.labels == [2]
    st = _shell_session([(["powershell.exe", "-Command", c], out) for c, out in listing], tool="shell")
    argv = ["C:\\WINDOWS\\System32\\WindowsPowerShell\\v1.0\\powershell.exe", "-NoProfile", "-ExecutionPolicy",
            "Bypass", "-Command", f"Get-Content {path}"]
    assert st.decide([ToolCall("shell", {"command": argv}, "x")]).needed == {"command": [path.lower()]}
    assert command_words(["C:\\Program Files\\Git\\bin\\bash.exe", "-lc", "cat src/a.py"]) == ["src/a.py"]


def test_which_tools_command_lines_are_shell_lines():
    """A tool whose last name word is exec was a shell whatever it ran: sql_exec's SQL and python_exec's Python were
    split as bash reads a line (SELECT's table and column names traced as values, a variable name as a path), and so
    was the script of a bare run or exec tool, which may be any language's; an ssh tool's command, a shell line run
    elsewhere, was read whole. Now a name naming another language runs none, script is a shell line only for a tool
    whose name says a shell, and ssh says one."""
    sql = "SELECT name FROM users WHERE id = 'u_1042'"
    for tool, argument in [("sql_exec", "command"), ("execSQL", "cmd")]:  # no shell line: the SQL rule's literals
        assert argument_leaves(tool, argument, sql) == [(argument, "u_1042")], tool
    for tool, argument, value in [("python_exec", "command", "print(df.head())"), ("python_shell", "command",
                                  "import os"), ("run", "script", "x = load('data.csv')"), ("exec", "script", "main()")]:
        assert argument_leaves(tool, argument, value) == [(argument, value)], tool  # read whole, as the spec reads it
    for tool, argument in [("ssh_command", "command"), ("ssh", "cmd"), ("bash", "script"), ("kubectl_exec", "command"),
                           ("run", "command"), ("RunTerminalCmd", "command")]:
        assert argument_leaves(tool, argument, "cat /srv/app/config.yaml") == [(argument, "/srv/app/config.yaml")], tool
