"""The helpers the labelling-rule tests share: a call's decision after some user turns, a Claude Code session of
given calls, and one that greps, then reads at the hit."""

from __future__ import annotations

from typing import Any

from sam_model.data.chatmessages import ToolCall
from sam_model.data.toolstate import TranscriptState


def decide(tool: str, arguments: dict[str, Any], *earlier: str):
    """The decision on one call to ``tool`` made after a user turn for each of ``earlier`` and the agent's words."""
    st = TranscriptState()
    for text in earlier:
        st.add({"role": "user", "content": text})
    st.add({"role": "assistant", "content": "Looking."})
    return st.decide([ToolCall(tool, arguments, "x")])


def needed(command: str, *earlier: str) -> tuple[dict, list[int]]:
    """The needed values and labels of one ``Bash`` call made after a user turn for each of ``earlier``."""
    d = decide("Bash", {"command": command}, *earlier)
    return d.needed, d.labels


def claude_session(tmp, user: str, *calls: tuple[str, dict[str, Any], str], cwd: str | None = None) -> list[dict]:
    """The events of a Claude Code session (written as the CLI writes it, then imported): the user's ``user`` turn,
    then each (tool, arguments, result) call in turn, then the agent's closing words; ``cwd``: the working directory
    each entry records (else Session's, /home/ann/airline)."""
    from test_format_claude_code import SESSION, Session, text, tool_use
    from test_format_claude_code import write as write_session

    from sam_model.data.transcripts import ImportReport, iter_transcript_events

    s = Session()
    s.user(user)
    for n, (tool, arguments, result) in enumerate(calls):
        s.respond(tool_use(f"c{n}", tool, arguments))
        s.result(f"c{n}", result)
    s.respond(text("Found it."))
    for entry in s.entries if cwd is not None else ():
        entry["cwd"] = cwd
    return list(iter_transcript_events(write_session(tmp / f"{SESSION}.jsonl", s.entries), report=ImportReport()))


def grep_then_read(tmp, user: str, grep_path: str, hit: str, read_path: str, line: int, limit: int,
                   first: tuple[str, dict[str, Any]] | None = None) -> tuple[list[list[int]], int]:
    """A Claude Code session (:func:`claude_session`): the user's ``user`` turn, a Grep of ``grep_path`` in content
    mode printing ``hit`` (``FILE:LINE:code``; ``first``: another call, (tool, arguments), printing it), a Bash call
    between, then ``Read(read_path, offset=line, limit=limit)``. Returns (the labels of each decision whose needed
    values hold an offset, the step of the result printing ``hit``)."""
    tool, arguments = first or ("Grep", {"pattern": "def ", "path": grep_path, "output_mode": "content", "-n": True})
    events = claude_session(tmp, user, (tool, arguments, hit),
                            ("Bash", {"command": "ls tests", "description": "List the tests"}, "test_a.py"),
                            # a result between: the one right before a call is no memory
                            ("Read", {"file_path": read_path, "offset": line, "limit": limit},
                             f"   {line}\u2192" + hit.rsplit(":", 1)[-1]))
    offsets = [e["useful_memory_steps"] for e in events if "offset" in e.get("meta", {}).get("needed", {})]
    grep = next(e["step"] for e in events if e["kind"] == "result" and e["text"].startswith(f"{tool}:"))
    return offsets, grep
