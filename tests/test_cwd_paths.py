"""Absolute paths under the agent's working directory are traced by their relative part, and a search tool's pattern
by its names (toolstate's extensions of the spec, README "Labels for free").

Claude Code's Read, Edit and Write take an absolute ``file_path`` always, Codex's commands often name one: the agent
reads ``/home/me/invoicer/invoicer/tax.py`` because the user said ``invoicer/tax.py`` or a grep printed
``invoicer/tax.py:42:``, and no earlier event says the absolute path, so the call labelled nothing. The readers of
formats that record the working directory (Claude Code's entries' ``cwd``, Codex's session meta and turn contexts)
tell it on the chat messages, and the rule judges such a path's relative part when the path whole is said by none."""

from __future__ import annotations

import copy
import json

import pytest
from test_format_claude_code import Session, text, tool_use
from test_format_codex import line, message, meta

from sam_model.data.argumentleaves import argument_leaves
from sam_model.data.chatmessages import ToolCall
from sam_model.data.formats import to_chat
from sam_model.data.formats.base import Conversation, TranscriptFormatError
from sam_model.data.toolstate import TranscriptState, live_state
from sam_model.data.transcripts import convert_conversation

CWD = "/home/me/invoicer"
TAX = f"{CWD}/invoicer/tax.py"
GREP_HIT = "invoicer/tax.py:42:    return round(total * rate, 2)"


def session(*turns, cwd: str | None = CWD) -> list[dict]:
    """A Claude Code session of ``turns`` (("user", words), ("say", the agent's words), ("call", id, tool, input),
    ("result", id, words)), its entries in the working directory ``cwd`` (None: entries without one, as no reader
    could tell it). A call's decision event is the event before it, which must not say the value itself."""
    s = Session()
    for kind, *rest in turns:
        if kind == "user":
            s.user(rest[0])
        elif kind == "say":
            s.respond(text(rest[0]))
        elif kind == "call":
            s.respond(tool_use(*rest))
        else:
            s.result(*rest)
    for e in s.entries:
        e.pop("cwd")
        if cwd is not None:
            e["cwd"] = cwd
    return s.entries


def decisions(entries: list[dict], fmt: str = "claude-code") -> list[dict]:
    """The decision points of the conversation the importer writes."""
    return [e for e in convert_conversation(Conversation("s", entries, "test", "s", fmt)) if e.get("useful_memory_steps")]


def test_a_read_of_an_absolute_path_is_traced_to_the_user_who_said_it_relative():
    """The user named invoicer/tax.py; Claude Code read it as /home/me/invoicer/invoicer/tax.py. Before: untraceable,
    no decision point. Now the user's turn is its label, the needed value the relative part, the flag file_path."""
    entries = session(("user", "Totals are off by a cent; the rounding is in invoicer/tax.py"), ("say", "I will read it."),
                      ("call", "r1", "Read", {"file_path": TAX}), ("result", "r1", "   42\u2192    return round(x)"))
    [d] = decisions(entries)
    assert d["useful_memory_steps"] == [0] and d["meta"]["needed"] == {"file_path": ["invoicer/tax.py"]}
    assert d["state"]["uncertainty_flags"] == ["file_path"] and d["state"]["phase"] == "Read"


def test_a_path_a_grep_printed_relative_labels_the_read_of_its_absolute_path():
    """A Grep run in the working directory prints invoicer/tax.py:42:; the Read after it, of the absolute path,
    traces to that result, not to the user (who named no file)."""
    entries = session(("user", "Totals are off by a cent, fix the rounding"),
                      ("call", "g1", "Grep", {"pattern": "round\\(", "output_mode": "content", "-n": True}),
                      ("result", "g1", GREP_HIT), ("user", "go on"),
                      ("call", "r1", "Read", {"file_path": TAX, "offset": 30}))
    events = convert_conversation(Conversation("s", entries, "test", "s", "claude-code"))
    grep_result = next(e["step"] for e in events if e["kind"] == "result")
    [d] = [e for e in events if e.get("useful_memory_steps")]
    assert d["useful_memory_steps"] == [grep_result] and d["meta"]["needed"] == {"file_path": ["invoicer/tax.py"]}


@pytest.mark.parametrize("path", ["/home/me/backup/invoicer/tax.py", "/home/me/invoicer2/invoicer/tax.py",
                                  f"{CWD}/../backup/invoicer/tax.py", CWD])
def test_a_path_outside_the_working_directory_is_traced_whole(path):
    """A path outside the working directory (another folder, a sibling whose name starts alike, one that steps out
    with ..) or the directory itself has no relative part: traced whole, as before, so the user's invoicer/tax.py
    labels nothing."""
    entries = session(("user", "the rounding is in invoicer/tax.py, compare it with the backup"), ("say", "I will read it."),
                      ("call", "r1", "Read", {"file_path": path}))
    assert decisions(entries) == []


def test_without_a_known_working_directory_an_absolute_path_is_traced_whole():
    """Entries without cwd (no reader can tell the directory): no suffix of the path is tried, since which part is
    the project's is what only the directory says (a suffix such as tests/__init__.py matches any package's)."""
    entries = session(("user", "the rounding is in invoicer/tax.py"), ("say", "I will read it."), ("call", "r1", "Read", {"file_path": TAX}),
                      cwd=None)
    assert decisions(entries) == []
    st = TranscriptState()
    st.add({"role": "user", "content": "the rounding is in invoicer/tax.py"})
    st.add({"role": "assistant", "content": "I will read it."})
    assert st.decide([ToolCall("Read", {"file_path": TAX})]).needed == {}


def test_a_path_said_whole_is_still_traced_whole_and_dot_and_slash_are_read_as_a_listing_prints():
    """The rule is the spec's first: an earlier event that says the absolute path is its label (the relative part
    is judged only where nothing says the path whole); ./ and a trailing slash normalise away."""
    from sam_model.data.shellpaths import relative_paths

    entries = session(("user", f"see {TAX}"), ("say", "I will read it."), ("call", "r1", "Read", {"file_path": TAX}))
    assert decisions(entries)[0]["meta"]["needed"] == {"file_path": [TAX]}
    entries = session(("user", "everything is in invoicer/"), ("say", "I will read it."),
                      ("call", "l1", "LS", {"path": f"{CWD}/./invoicer/"}))
    assert decisions(entries)[0]["meta"]["needed"] == {"path": ["invoicer"]}
    assert relative_paths(r"C:\Users\me\app\src\a.py", r"c:\users\me\app") == [r"src\a.py", "src/a.py"]


def test_a_codex_command_on_an_absolute_path_traces_its_relative_part():
    """Codex: the session meta's cwd (or a turn context's) is the working directory; a shell command's word that is
    an absolute path under it is traced by its relative part, as a Claude Code Read's path is."""
    call = {"type": "function_call", "name": "shell", "call_id": "s0", "arguments": json.dumps(
        {"command": ["bash", "-lc", "sed -n '1,80p' /home/me/repo/src/tinyparse/headers.py"], "workdir": "/home/me/repo"})}
    user = line("response_item", message("user", "Headers are dropped, see src/tinyparse/headers.py"))
    say = line("response_item", message("user", "go ahead"))  # the call's decision event, saying no path
    for first in ([meta(cwd="/home/me/repo")], [meta(cwd=None), line("turn_context", {"cwd": "/home/me/repo"})]):
        [d] = decisions([*first, user, say, line("response_item", call)], "codex")
        assert d["meta"]["needed"] == {"command": ["src/tinyparse/headers.py"]} and d["useful_memory_steps"] == [0]
        assert d["state"]["uncertainty_flags"] == ["command"]
    assert decisions([meta(cwd=None), user, say, line("response_item", call)], "codex") == []  # the directory untold


def test_a_grep_tools_pattern_that_is_code_is_traced_by_its_names():
    """Claude Code's Grep took def due_date as one value, which no event said though the user said due_date: a search
    tool's pattern is read as a shell grep's is (patternwords.pattern_words), a plain one (TODO) whole as before, and a
    glob's pattern, Glob's, is no search pattern."""
    entries = session(("user", "due_date is a day late in leap years"), ("say", "I will read it."),
                      ("call", "g1", "Grep", {"pattern": "def due_date", "output_mode": "content"}))
    [d] = decisions(entries)
    assert d["meta"]["needed"] == {"pattern": ["due_date"]} and d["useful_memory_steps"] == [0]
    assert argument_leaves("search_file_content", "pattern", r"due_date\(") == [("pattern", "due_date")]
    assert argument_leaves("Grep", "pattern", "TODO") == [("pattern", "TODO")]
    assert argument_leaves("Glob", "pattern", "**/*.py") == [("pattern", "**/*.py")]
    assert argument_leaves("search_flights", "origin", "def x") == [("origin", "def x")]


def test_a_search_by_call_of_a_live_session_sees_the_relative_path_as_the_importer_does():
    """A sidecar adds the session a line at a time and searches with the Read about to be made: the state is the
    importer's decision state (file_path flagged, its value masked), so the search ranks as evaluate.py ranks that
    decision point; a saved memory keeps the directory, and one saved before it existed loads without it."""
    from sam_model.memory import HashingEncoder, ScopedMemory

    entries = session(("user", "Totals are off by a cent, fix the rounding"),
                      ("call", "g1", "Grep", {"pattern": "round\\(", "output_mode": "content"}),
                      ("result", "g1", GREP_HIT), ("say", "I will read it."), ("call", "r1", "Read", {"file_path": TAX}))
    [want] = decisions(entries)
    memory = ScopedMemory(HashingEncoder(64))
    read = next(i for i, e in enumerate(entries) if "r1" in json.dumps(e.get("message")))
    for e in entries[:read]:
        memory.add([e], run_id="s")
    call = entries[read]["message"]["content"][0]
    got = memory.search("", call=call, run_id="s")["state"]
    assert got == want["state"] and got["uncertainty_flags"] == ["file_path"]
    assert live_state(entries[:read], call) == want["state"]
    [tracker] = memory._trackers.values()
    assert TranscriptState.from_state_dict(tracker.state_dict()).cwd == CWD
    old = {k: v for k, v in tracker.state_dict().items() if k != "cwd"}
    assert TranscriptState.from_state_dict(old).cwd == ""


def test_forgetting_the_read_takes_its_relative_value_out_of_the_decisions_needed():
    """Deleting the call's memory takes its needed values out of the decision point's meta: the relative part the
    absolute path was traced by is the call's too."""
    chat = to_chat(session(("user", "the rounding is in invoicer/tax.py"), ("say", "I will read it."),
                           ("call", "r1", "Read", {"file_path": TAX})))
    st = TranscriptState()
    for m in chat.messages:
        st.feed(m)
    assert st.events[1]["meta"]["needed"] == {"file_path": ["invoicer/tax.py"]}
    st.forget(next(e["step"] for e in st.events if e["kind"] == "action"))
    assert st.events[1]["meta"]["needed"] == {}


@pytest.mark.parametrize("where, says", [("entry", r"entry 0.*'cwd' is a number, expected a string"),
                                         ("message", r"message's 'cwd' is a number: give the agent's working")])
def test_a_working_directory_that_is_no_string_is_named(where, says):
    """A cwd of another type, on a Claude Code entry or a chat message, is one line naming it."""
    if where == "entry":
        entries = session(("user", "hi"))
        entries[0]["cwd"] = 5
        with pytest.raises(TranscriptFormatError, match=says):
            to_chat(entries, "s.jsonl")
    else:
        with pytest.raises(TranscriptFormatError, match=says):
            live_state([{"role": "user", "content": "hi", "cwd": 5}], {"name": "Read", "arguments": {}})


@pytest.mark.parametrize("mark", [{"cwd_by_calls": "yes", "cwd": CWD}, {"cwd_by_calls": True}])
def test_a_mark_of_calls_that_revealed_the_directory_that_is_no_boolean_or_lacks_it_is_named(mark):
    """An assistant message marked as revealing its directory by its own calls (CWD_BY_CALLS) needs true beside a
    cwd string: anything else is one line naming the message and the fields."""
    st = TranscriptState()
    st.add({"role": "user", "content": "read invoicer/tax.py"})
    message = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "r1", "type": "function", "function": {"name": "Read", "arguments": json.dumps({"file_path": TAX})}}],
        **mark}
    with pytest.raises(TranscriptFormatError, match=r"^message 1: message's 'cwd_by_calls' is .* beside a 'cwd' of"):
        st.feed(message, "message 1")


def test_a_rollback_puts_the_working_directory_back():
    st = TranscriptState()
    st.add({"role": "user", "content": "hi", "cwd": CWD})
    mark = copy.deepcopy(st.mark())
    st.add({"role": "user", "content": "cd", "cwd": "/tmp"})
    st.rollback(mark)
    assert st.cwd == CWD


def test_a_conversation_that_starts_afresh_after_a_far_step_keeps_its_working_directory():
    """A conversation saved behind its memories past MAX_CATCH_UP steps starts afresh (ScopedMemory._catch_up) with
    its policy kept; its working directory is kept as well, or its later paths were traced whole again."""
    from sam_model.data.schema import Event, State
    from sam_model.memory import HashingEncoder, ScopedMemory

    memory = ScopedMemory(HashingEncoder(64))
    memory.add([{"role": "user", "content": "hello", "cwd": CWD}], user_id="fz")
    memory.store.add([Event("fz", 200_000, "result", "far away", State())], user_id="fz")
    memory.add("the rounding is in invoicer/tax.py", user_id="fz")
    memory.add([{"role": "assistant", "content": "I will read it."}], user_id="fz")
    [tracker] = memory._trackers.values()
    assert len(tracker.events) == 2 and tracker.cwd == CWD
    got = memory.search("", call={"name": "Read", "arguments": {"file_path": TAX}}, user_id="fz")["state"]
    assert got["uncertainty_flags"] == ["file_path"]


# Gemini CLI stores no directory, only the project root's SHA-256 (projectHash, gemini-cli's getProjectHash): the
# reader recovers the root from the first call naming an absolute path under it (the ancestor hashing to it).


def gemini_session(*turns, layout: str = "jsonl", root: str = CWD, short: bool = False, **extra) -> list[dict]:
    """A Gemini CLI session's records of ``turns`` (("user", words), ("say", words), ("call", id, tool, args,
    output)), its
    projectHash that of ``root`` (its first 16 digits, ``short``, as early releases wrote it); ``layout`` jsonl:
    the lines, json: the ConversationRecord (the header with its messages)."""
    import hashlib

    from test_format_gemini_cli import call, gemini, header, user

    records = [user(f"u{i}", t[1]) if t[0] == "user" else gemini(f"g{i}", t[1]) if t[0] == "say"
               else gemini(f"g{i}", "", [call(*t[1:])]) for i, t in enumerate(turns)]
    digest = hashlib.sha256(root.encode()).hexdigest()
    head = {**header(), "projectHash": digest[:16] if short else digest, **extra}
    return [head, *records] if layout == "jsonl" else [{**head, "messages": records}]


def gemini_decisions(path, records) -> list[dict]:
    from test_format_gemini_cli import read, write

    return [e for e in read(write(path, records if path.suffix == ".jsonl" else records[0]))[0]
            if e.get("useful_memory_steps")]


@pytest.mark.parametrize("layout, short", [("jsonl", False), ("json", False), ("jsonl", True)])
def test_a_gemini_cli_read_of_an_absolute_path_traces_its_part_below_the_root_its_hash_tells(tmp_path, layout, short):
    """After a list_directory of /home/me/invoicer, read_file's absolute_path /home/me/invoicer/invoicer/tax.py, the
    user having said invoicer/tax.py: the root is the ancestor whose SHA-256 is the session's projectHash (whole, or
    the 16 digits of early releases; a .json's record as a .jsonl's metadata line), so the read traces to the user's
    turn; before, untraceable."""
    records = gemini_session(("user", "Totals are off by a cent, look at the project"),
                             ("call", "l1", "list_directory", {"dir_path": CWD}, "[DIR] invoicer"),
                             ("user", "the rounding is in invoicer/tax.py"), ("say", "I will read it."),
                             ("call", "r1", "read_file", {"absolute_path": TAX}, "return round(x)"),
                             layout=layout, short=short)
    [d] = gemini_decisions(tmp_path / f"session-1.{layout}", records)
    assert d["meta"]["needed"] == {"absolute_path": ["invoicer/tax.py"]} and d["useful_memory_steps"] == [3]
    assert d["state"]["uncertainty_flags"] == ["absolute_path"]


def test_the_gemini_cli_root_is_told_by_the_first_call_naming_it_for_that_call_and_those_after_it():
    """The root is known from the first absolute path under it only: told on that call's message, marked as found by
    its own calls (CWD_BY_CALLS), so that call is judged in it too (a search by call finds it from the call in hand),
    and the calls after it. A session whose hash no ancestor has (another project's, a path outside it) tells none; a
    command's words and a subagent's directories (from its start, no mark) tell it too."""
    from sam_model.data.formats.base import CWD as KEY
    from sam_model.data.formats.base import CWD_BY_CALLS

    read = ("call", "r1", "read_file", {"file_path": TAX}, "x")
    turns = [("user", "the rounding is in invoicer/tax.py"), ("say", "I will read it."), read]
    chat = to_chat(gemini_session(("user", "hi"), ("call", "s1", "run_shell_command", {"command": "ls"}, "a"), *turns),
                   "s.jsonl")
    assert [m.get(KEY) for m in chat.messages] == [None, None, None, None, None, CWD, None]
    assert [m.get(CWD_BY_CALLS) for m in chat.messages] == [None, None, None, None, None, True, None]
    assert chat.messages[5]["tool_calls"][0]["id"] == "r1" and chat.cwd == CWD
    [d] = decisions(chat.messages, "openai")  # the read that tells the root is judged in it
    assert d["meta"]["needed"] == {"file_path": ["invoicer/tax.py"]}
    assert to_chat(gemini_session(*turns, root="/home/me/other"), "s.jsonl").cwd == ""
    outside = ("call", "r1", "read_file", {"file_path": "/etc/hosts"}, "x")
    assert to_chat(gemini_session(("user", "hi"), outside), "s.jsonl").cwd == ""
    shell = ("call", "s1", "run_shell_command", {"command": f"cat {TAX} | head"}, "x")
    assert to_chat(gemini_session(("user", "hi"), shell), "s.jsonl").cwd == CWD
    sub = to_chat(gemini_session(*turns, kind="subagent", directories=[CWD, "/tmp"]), "s.jsonl")
    assert sub.messages[0][KEY] == CWD and not any(CWD_BY_CALLS in m for m in sub.messages)
    [d] = decisions(sub.messages, "openai")
    assert d["meta"]["needed"] == {"file_path": ["invoicer/tax.py"]}


# The walkthrough's shape: the user names pricebook/tax.py and the session's first absolute path is the read of it.
PRICEBOOK = "/home/me/pricebook"
PRICE_TAX = f"{PRICEBOOK}/pricebook/tax.py"
FIRST_READ = {"name": "read_file", "arguments": {"absolute_path": PRICE_TAX}}


def first_read_session(layout: str = "jsonl") -> list[dict]:
    return gemini_session(("user", "Totals are off by a cent; the rounding is in pricebook/tax.py"),
                          ("say", "I will read it."),
                          ("call", "r1", "read_file", FIRST_READ["arguments"], "return round(x)"),
                          ("say", "Found it."), layout=layout, root=PRICEBOOK)


@pytest.mark.parametrize("layout", ["jsonl", "json"])
def test_a_gemini_cli_sessions_first_absolute_path_is_traced_by_its_part_below_the_root_it_reveals(tmp_path, layout):
    """The read of /home/me/pricebook/pricebook/tax.py is the first call naming a path under the root: before, the
    root was told only for the calls after it, so the read was judged whole and labelled nothing (5 of a
    walkthrough's 9 decision points). Now the root its own arguments reveal holds for it: the user's turn is its
    label and pricebook/tax.py its needed value."""
    [d] = gemini_decisions(tmp_path / f"session-1.{layout}", first_read_session(layout))
    assert d["meta"]["needed"] == {"absolute_path": ["pricebook/tax.py"]} and d["useful_memory_steps"] == [0]
    assert d["state"]["uncertainty_flags"] == ["absolute_path"]


def test_a_gemini_cli_sessions_first_absolute_path_is_traced_alike_live_and_by_a_search_with_it(tmp_path):
    """Fed to ScopedMemory.add a line at a time (saved and loaded between lines) the session is the importer's
    memories, states and labels; a search with the read made before its line is added (the root known from the call
    in hand and the metadata line's hash the scope keeps) has the importer's decision state and ranks as evaluate.py
    ranks that decision point (the decision event its observation, at its step, left out); the conversation is as it
    was after the search."""
    from test_format_gemini_cli import write

    from sam_model.data.transcripts import ImportReport, iter_transcript_events
    from sam_model.memory import HashingEncoder, ScopedMemory

    records = first_read_session()
    lines = [records[0], *(x for r in records[1:] for x in (r, {"$set": {"lastUpdated": "now"}}))]
    events = list(iter_transcript_events(write(tmp_path / "session-1.jsonl", lines), report=ImportReport()))
    [want] = [e for e in events if e.get("useful_memory_steps")]
    whole = ScopedMemory(HashingEncoder(64))
    whole.add(lines, run_id="s")
    memory = ScopedMemory(HashingEncoder(64))
    for x in lines:
        if x.get("toolCalls"):
            before = copy.deepcopy(memory._trackers["//s"].state_dict())
            got = memory.search("", call=FIRST_READ, run_id="s", limit=10)
            assert got["state"] == want["state"] and got["state"]["uncertainty_flags"] == ["absolute_path"]
            same = memory.store.search(want["state"], want["text"], 10, run_id="s", step=want["step"], fold=True,
                                       exclude=[f"//s#{want['step']}"])
            assert [r["id"] for r in got["results"]] == [h.memory_id for h in same]
            assert memory._trackers["//s"].state_dict() == before
        memory.add([x], run_id="s")
        memory = ScopedMemory.load(memory.save(tmp_path / "m"), HashingEncoder(64))
    for m in (whole, memory):
        assert [(e["step"], e["kind"], e["text"], e["state"], e.get("useful_memory_steps") or [])
                for e in m._trackers["//s"].events] == \
            [(e["step"], e["kind"], e["text"], e["state"], e.get("useful_memory_steps") or []) for e in events]
    assert memory._trackers["//s"].cwd == PRICEBOOK


def test_a_search_by_call_without_the_metadata_lines_hash_or_under_another_root_finds_no_directory():
    """A search by call finds the root only as the importer would: a scope fed plain chat messages (no metadata line)
    or whose session hashes another root judges the read whole (no flag: the path is said by no event)."""
    from sam_model.memory import HashingEncoder, ScopedMemory

    chat = ScopedMemory(HashingEncoder(16))
    chat.add([{"role": "user", "content": "the rounding is in pricebook/tax.py"},
              {"role": "assistant", "content": "I will read it."}], run_id="s")
    other = ScopedMemory(HashingEncoder(16))
    records = gemini_session(("user", "the rounding is in pricebook/tax.py"), ("say", "I will read it."),
                             root="/home/me/invoicer")
    for x in records:
        other.add([x], run_id="s")
    for m in (chat, other):
        assert m.live_state(run_id="s", call=FIRST_READ).uncertainty_flags == ()


def test_a_gemini_cli_root_on_windows_is_hashed_as_node_resolves_it():
    r"""On Windows the root gemini-cli hashed is path.resolve's C:\Users\me\app (backslashes, the drive letter as the
    cwd gave it); a model writing c:/Users/me/app/src/a.py still finds it."""
    root = r"C:\Users\me\app"
    chat = to_chat(gemini_session(("user", "see src/a.py"), ("call", "r1", "read_file",
                                                              {"file_path": "c:/Users/me/app/src/a.py"}, "x"),
                                  root=root), "s.jsonl")
    assert chat.cwd == root


# OpenHands records the shell's working directory on each command's observation (CmdOutputMetadata.working_dir, the
# PS1's $(pwd)): 0.x in extras.metadata, V1 in the observation's metadata. Its str_replace_editor takes absolute paths.
REPO = "/workspace/invoicer"
EDIT = {"command": "view", "path": f"{REPO}/invoicer/tax.py"}


def openhands_run(v1: bool, working_dir="/workspace/invoicer", command_first: bool = True) -> list[dict]:
    """An OpenHands run (0.x events, or V1's): the user names invoicer/tax.py, the agent runs ls (its observation
    recording ``working_dir``; ``command_first`` False: after the read), says it will read, and views the file."""
    if not v1:
        ls = [{"id": 1, "source": "agent", "action": "run", "args": {"command": "cd /workspace/invoicer && ls"}},
              {"id": 2, "source": "agent", "observation": "run", "cause": 1, "content": "invoicer setup.py",
               "extras": {"command": "ls", "metadata": {"exit_code": 0, "working_dir": working_dir}}}]
        rest = [{"id": 3, "source": "agent", "action": "message", "args": {"content": "I will read it."}},
                {"id": 4, "source": "agent", "action": "str_replace_editor", "args": EDIT}]
        user = {"id": 0, "source": "user", "action": "message", "args": {"content": "the rounding is in invoicer/tax.py"}}
        return [user, *ls, *rest] if command_first else [user, *rest, *ls]

    def event(i, kind, **kw):
        return {"kind": kind, "id": f"e{i}", "timestamp": "2026-01-05T10:00:00", "source": "agent", **kw}

    def said(i, role, words):
        return event(i, "MessageEvent", llm_message={"role": role, "content": [{"type": "text", "text": words}]})

    def act(i, name, args):
        return event(i, "ActionEvent", thought=[], tool_call={"id": f"c{i}", "name": name, "arguments": json.dumps(args)},
                     llm_response_id=f"r{i}")

    ls = [act(1, "terminal", {"command": "cd /workspace/invoicer && ls"}),
          event(2, "ObservationEvent", tool_call_id="c1", observation={
              "kind": "TerminalObservation", "content": [{"type": "text", "text": "invoicer setup.py"}],
              "is_error": False, "command": "ls", "exit_code": 0, "metadata": {"working_dir": working_dir}})]
    rest = [said(3, "assistant", "I will read it."), act(4, "str_replace_editor", EDIT)]
    user = said(0, "user", "the rounding is in invoicer/tax.py")
    return [user, *ls, *rest] if command_first else [user, *rest, *ls]


@pytest.mark.parametrize("v1", [False, True])
def test_an_openhands_view_of_an_absolute_path_traces_its_part_below_the_commands_working_directory(v1):
    """str_replace_editor views /workspace/invoicer/invoicer/tax.py after a command whose observation says the shell
    is in /workspace/invoicer: traced to the user's invoicer/tax.py (before: untraceable). A view before any
    command's result has no directory (traced whole, no decision point), as one whose working_dir is null."""
    fmt = "openhands-v1" if v1 else "openhands"
    [d] = decisions(openhands_run(v1), fmt)
    assert d["meta"]["needed"] == {"path": ["invoicer/tax.py"]} and d["useful_memory_steps"] == [0]
    assert d["state"]["uncertainty_flags"] == ["path"]
    assert decisions(openhands_run(v1, command_first=False), fmt) == []
    assert decisions(openhands_run(v1, working_dir=None), fmt) == []


@pytest.mark.parametrize("v1", [False, True])
def test_an_openhands_working_dir_that_is_no_string_is_named(v1):
    field = "observation" if v1 else "extras"
    with pytest.raises(TranscriptFormatError, match=rf"event 2.*'{field}.metadata.working_dir' is a number"):
        to_chat(openhands_run(v1, working_dir=5), "run.json")
