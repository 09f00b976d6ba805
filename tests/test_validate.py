"""``python -m sam_model.data.validate``: statistics, error lines and exit codes."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from sam_model.data.validate import collect_stats, main


def ev(episode_id: str, step: int, labels=None, kind: str = "user", phase: str = "p") -> dict:
    out = {"episode_id": episode_id, "step": step, "kind": kind, "text": "t", "state": {"phase": phase}}
    if labels is not None:
        out["useful_memory_steps"] = labels
    return out


LOG_A = [
    ev("a", 0, phase="clarify"), ev("a", 2, kind="thought"), ev("a", 3, [0, 2], phase="book"),
    ev("a", 7, [3], kind="action", phase="book"),
]  # fmt: skip
LOG_B = [ev("b", 0), ev("b", 1), ev("b", 4), ev("b", 5, [0], phase="book"), ev("c", 0)]


def expected(lines: list[dict], first_position: int = 0) -> dict:
    """Label statistics computed straight from the JSON lines (sorted input, one file)."""
    n_labels, dist, recent, cand_ep, cand_gl, dps = 0, 0, 0, 0, 0, 0
    pos = first_position
    for i, e in enumerate(lines):
        labels = e.get("useful_memory_steps") or []
        if labels:
            prev = [x["step"] for x in lines[:i] if x["episode_id"] == e["episode_id"]]
            dps += 1
            n_labels += len(labels)
            dist += sum(e["step"] - s for s in labels)
            recent += max(prev) in labels
            cand_ep += len(prev)
            cand_gl += pos
        pos += 1
    return {
        "decision_points": dps,
        "labels_per_decision": n_labels / dps,
        "mean_distance": dist / n_labels,
        "most_recent_share": recent / n_labels,
        "candidates_episode": cand_ep / dps,
        "candidates_global": cand_gl / dps,
    }


def test_statistics_per_file_and_total(write_log):
    a, b = write_log(LOG_A, "a.jsonl"), write_log(LOG_B, "b.jsonl.gz")
    per_file, total = collect_stats([a, b])
    _, total_global = collect_stats([a, b], scope="global")
    for path, lines, first in ((a, LOG_A, 0), (b, LOG_B, len(LOG_A))):
        s, want = per_file[str(path)], expected(lines, first)
        assert s.episodes == len({e["episode_id"] for e in lines}) and s.events == len(lines)
        assert s.decision_points == want["decision_points"]
        assert s.labels_per_decision == pytest.approx(want["labels_per_decision"])
        assert s.mean_distance == pytest.approx(want["mean_distance"])
        assert s.most_recent_share == pytest.approx(want["most_recent_share"])
        assert s.candidates_per_decision == pytest.approx(want["candidates_episode"])
        assert collect_stats([a, b], scope="global")[0][str(path)].candidates_per_decision == pytest.approx(
            want["candidates_global"]
        )
    all_lines = LOG_A + LOG_B
    assert total.events == len(all_lines) and total.episodes == len({e["episode_id"] for e in all_lines})
    assert total.kinds == {"user": 7, "thought": 1, "action": 1}
    assert total.phases == {"p": 5, "clarify": 1, "book": 3}
    assert total.max_labels == 2
    assert total.candidates_per_decision < total_global.candidates_per_decision


def test_cli_prints_the_table_and_exits_0(write_log, capsys):
    a, b = write_log(LOG_A, "a.jsonl"), write_log(LOG_B, "b.jsonl")
    assert main([str(a), str(b), "--scope", "global"]) == 0
    out = capsys.readouterr().out
    for needle in (str(a), str(b), "total (2 files)", "decision points", "global scope", "book: 3", "thought: 1"):
        assert needle in out


def test_cli_raise_mode_prints_the_first_bad_line_and_exits_1(write_log, capsys):
    path = write_log([LOG_A[0], "{oops", ev("a", 1, [5]), LOG_A[1]])
    assert main([str(path)]) == 1
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.startswith(f"{path}:")]
    assert lines == [f"{path}:2: invalid JSON (Expecting property name enclosed in double quotes at column 2)"]
    assert "--on-error skip" in err and "Traceback" not in err


def test_cli_skip_mode_prints_every_bad_line_and_the_stats(write_log, capsys):
    path = write_log([LOG_A[0], "{oops", ev("a", 1, [5]), LOG_A[1], ev("a", 0), ev("a", 9, [4])])
    assert main([str(path), "--on-error", "skip"]) == 1
    out, err = capsys.readouterr()
    bad = [ln.split(": ", 1)[0] for ln in err.splitlines() if ln.startswith(f"{path}:")]
    assert bad == [f"{path}:2", f"{path}:3", f"{path}:5", f"{path}:6"]
    assert "4 bad line(s)" in err
    assert "events" in out and "episodes" in out


def test_cli_usage_errors_exit_2_without_traceback(tmp_path, capsys):
    assert main([str(tmp_path / "missing.jsonl")]) == 2
    assert "agent log not found" in capsys.readouterr().err
    assert main([str(tmp_path)]) == 2
    assert "is a directory" in capsys.readouterr().err
    with pytest.raises(SystemExit) as info:
        main([str(tmp_path), "--on-error", "ignore"])
    assert info.value.code == 2


def test_module_entry_point(write_log, tmp_path):
    ok = write_log(LOG_B)
    run = subprocess.run([sys.executable, "-m", "sam_model.data.validate", str(ok)], capture_output=True, text=True)
    assert run.returncode == 0 and "decision points" in run.stdout
    run = subprocess.run(
        [sys.executable, "-m", "sam_model.data.validate", str(tmp_path / "nope.jsonl.gz")], capture_output=True, text=True
    )
    assert run.returncode == 2 and "not found" in run.stderr and "Traceback" not in run.stderr
    assert "--scope" in subprocess.run(
        [sys.executable, "-m", "sam_model.data.validate", "--help"], capture_output=True, text=True
    ).stdout


def test_sgd_golden_file_is_a_valid_log(shared_dir):
    golden = shared_dir / "spec" / "sgd-dev-first20.golden.jsonl"
    lines = [json.loads(ln) for ln in golden.read_text().splitlines()]
    _, total = collect_stats([golden])
    assert total.events == len(lines)
    assert total.decision_points == sum(bool(e.get("useful_memory_steps")) for e in lines)
    assert total.episodes == len({e["episode_id"] for e in lines})


@pytest.mark.parametrize(("line", "reason"), [
    ('{"episode_id": "a", "step": 0, "kind": "user", "text": "x", "state": {"constraints": {"b": NaN}}}',
     "bare NaN is not JSON"),
    ('{"episode_id": "a", "step": 0, "kind": "user", "text": "x", "state": {"constraints": {"b": -Infinity}}}',
     "bare -Infinity is not JSON"),
    ('{"episode_id": "a", "step": 0, "kind": "user", "kind": "tool", "text": "x"}',  # Python's json keeps the last
     "the key 'kind' is given twice in one object (keep one)"),
    ('{"episode_id": "a", "step": 0, "kind": "user", "text": "x", "meta": ' + "[" * 100_000 + "]" * 100_000 + "}",
     "nested too deeply"),
])
def test_nan_and_deep_nesting_are_one_line_errors(write_log, capsys, line, reason):
    for extra in ([], ["--on-error", "skip"]):
        assert main([str(write_log([ev("b", 0), line])), *extra]) == 1
        err = capsys.readouterr().err
        assert f"log.jsonl:2: invalid JSON ({reason}" in err and "Traceback" not in err
        if extra:
            assert "1 bad line(s) skipped" in err


def test_an_empty_log_is_an_error_unless_allowed(tmp_path, capsys):
    for text in ("", "\n   \n"):
        path = tmp_path / "empty.jsonl"
        path.write_text(text)
        assert main([str(path)]) == 1
        assert f"error: {path}: no events (the file is empty" in capsys.readouterr().err
        assert main([str(path), "--allow-empty"]) == 0


def test_undefined_fields_and_unordered_steps_are_warned_or_strict_errors(write_log, capsys):
    log = write_log([{**ev("a", 2), "state": {"phaze": "book"}, "colour": 1}, ev("a", 0), ev("a", 1, [0])])
    assert main([str(log)]) == 0
    err = capsys.readouterr().err
    assert "warning: " in err and "state.phaze (1)" in err and "colour (1)" in err
    assert "1 episode(s) with lines out of step order" in err
    assert main([str(log), "--strict"]) == 1
    assert "error: " in capsys.readouterr().err
    assert main([str(write_log([ev("a", 0), ev("a", 1, [0])], "clean.jsonl")), "--strict"]) == 0


def test_a_transcript_given_as_an_agent_log_says_how_to_convert_it(tmp_path, capsys):
    """Found by review: validate on a chat transcript said only "missing required field 'episode_id'"."""
    path = tmp_path / "chats.jsonl"
    path.write_text(json.dumps({"id": "c1", "messages": [{"role": "user", "content": "hi"}]}) + "\n")
    assert main([str(path)]) == 1
    captured = capsys.readouterr()
    assert "looks like a tool-call transcript" in captured.out + captured.err


LOGS = Path(__file__).resolve().parents[1] / "examples" / "logs"


@pytest.mark.parametrize("name, line", [
    *[(p.stem, p.read_text(encoding="utf-8").splitlines()[0]) for p in sorted(LOGS.glob("*.jsonl"))],
    ("otlp-export", json.dumps({"resourceSpans": []})),  # the OpenTelemetry collector's file exporter
    ("openhands-output", json.dumps({"instance_id": "django-1", "history": []})),  # an OpenHands evaluation's
])
def test_a_transcript_of_any_format_given_as_an_agent_log_says_how_to_convert_it(name, line, tmp_path, capsys):
    """Found walking through the README as a Gemini user: validate on the Gemini log (contents, no messages) said
    only "missing required field 'episode_id'", as it did for Responses items, OTLP exports and OpenHands runs;
    the hint was given to lines with messages (OpenAI, Anthropic, Bedrock, LangChain) alone."""
    path = tmp_path / "chats.jsonl"
    path.write_text(line + "\n", encoding="utf-8")
    assert main([str(path)]) == 1
    captured = capsys.readouterr()
    assert "looks like a tool-call transcript" in captured.out + captured.err


@pytest.mark.parametrize("path", sorted(LOGS.glob("*.jsonl")), ids=lambda p: p.stem)
def test_a_transcripts_lines_are_named_with_their_format_and_the_command_that_converts_them(path, tmp_path, capsys):
    """Found by a walkthrough: validate on a transcript's lines (OpenAI {"id", "messages"} lines, a Claude Code
    session, a Codex rollout, ...) said `sam-data transcripts FILE OUT.jsonl`, the file unnamed and its format not
    given, then "rerun with --on-error skip", which cannot help (no line of a transcript is an event). Now one line
    names the file, its format (the transcript reader's verdict) and the command, which converts it."""
    from sam_model.data.formats import FORMATS
    from sam_model.data.transcripts import main as transcripts

    log = tmp_path / path.name
    log.write_bytes(path.read_bytes())
    assert main([str(log)]) == 1
    err = capsys.readouterr().err
    fmt = re.search(r"--format ([\w-]+)`", err)
    assert fmt is not None and fmt[1] in FORMATS, err
    assert err == (f"error: {log}: this looks like a tool-call transcript ({fmt[1]}: {FORMATS[fmt[1]].title}), not an "
                   f"agent log: convert it with `sam-data transcripts {log} OUT.jsonl --format {fmt[1]}` (train.py and "
                   "evaluate.py take it as it is)\n")
    assert "FILE" not in err and "--on-error skip" not in err
    assert main([str(log), "--on-error", "skip"]) == 1 and capsys.readouterr().err == err
    assert transcripts([str(log), str(tmp_path / "o.jsonl"), "--format", fmt[1]]) == 0  # the advice works


def test_a_transcripts_lines_its_reader_refuses_say_why_in_the_same_line(tmp_path, capsys):
    """A Gemini CLI session of its metadata line alone (the CLI writes it first): named, and why sam-data transcripts
    refuses it, no command that would fail and no skip advice."""
    path = tmp_path / "session-1.jsonl"
    path.write_text(json.dumps({"sessionId": "s1", "projectHash": "ab" * 32, "startTime": "t", "lastUpdated": "t"})
                    + "\n")
    assert main([str(path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: {path}: this looks like a tool-call transcript (gemini-cli: ") and \
        "sam-data transcripts refuses it: " in err and "without user or gemini messages" in err
    assert err.count("\n") == 1 and "--on-error skip" not in err and "FILE" not in err


def test_undefined_fields_are_counted_by_event_whatever_their_values(write_log, capsys):
    """Found walking through "Train on your own logs": the count of an undefined field added up its values, so a
    misspelt label field printed its step lists ("useful_steps ([0, 24, 3, ...])") and a field holding a number on
    one line and a string on another ended validate in a TypeError traceback."""
    log = write_log([{**ev("a", 0), "note": 1}, {**ev("a", 1), "note": "x"},
                     {**ev("a", 2), "useful_steps": [0, 1]}, {**ev("a", 3), "useful_steps": [2]}])
    assert main([str(log)]) == 0
    err = capsys.readouterr().err
    assert "note (2)" in err and "useful_steps (2)" in err and "Traceback" not in err, err


def test_a_log_given_twice_is_named_not_its_first_episode(write_log, tmp_path, capsys, monkeypatch):
    """Found by review: ``sam-data validate a.jsonl a.jsonl`` (a shell glob that matched a file twice) said "episode
    'a' already appeared in a.jsonl", as if the log held a copied conversation. It is now one usage error naming the
    file, however the second mention is spelt, and nothing is read."""
    a = write_log(LOG_A, "a.jsonl")
    monkeypatch.chdir(tmp_path)
    for second in (str(a), "a.jsonl", "./a.jsonl"):
        assert main([str(a), second]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "given twice" in err[0] and second in err[0] and "already appeared" not in err[0], err
    b = write_log(LOG_B, "b.jsonl")
    assert main([str(a), str(b)]) == 0  # two logs: read as before


def test_a_trajectory_folder_given_as_an_agent_log_says_how_to_convert_it(tmp_path, capsys):
    """Found walking through the README with OpenHands: validate on the folder of its trajectories said 'agent log
    is a directory ... (give .jsonl or .jsonl.gz files)', not that the folder converts as it is."""
    runs = tmp_path / "trajectories"
    runs.mkdir()
    (runs / "session-1.json").write_text((LOGS / "openhands.json").read_text(encoding="utf-8"), encoding="utf-8")
    assert main([str(runs)]) == 2
    err = capsys.readouterr().err
    assert f"error: agent log is a directory: {runs}" in err
    assert f"a folder of agent trajectories: convert it with `sam-data transcripts {runs} OUT.jsonl`" in err
    (runs / "session-1.json").unlink()
    assert main([str(runs)]) == 2
    assert "trajectories" not in capsys.readouterr().err.split(str(runs), 1)[1]  # an empty folder: no such advice


class _Terminal:
    """stderr as a terminal (tqdm draws its bar there), kept to read back."""

    def __init__(self):
        import io

        self.text = io.StringIO()

    def write(self, s: str) -> int:
        return self.text.write(s)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("terminal", [True, False])
@pytest.mark.parametrize("lines", [[], ['{"bad": 1}']], ids=["empty", "bad-first-line"])
def test_a_log_without_episodes_shows_no_progress_line(write_log, capsys, monkeypatch, terminal, lines):
    """An empty log or a bad first line left "validating: 0 episodes [00:00, ? episodes/s]" above the error, on
    a terminal and in a file; the bar now starts with the first episode."""
    log = write_log(lines)
    if terminal:
        monkeypatch.setattr(sys, "stderr", _Terminal())
    assert main([str(log)]) == 1
    err = sys.stderr.text.getvalue() if terminal else capsys.readouterr().err
    assert "validating" not in err and "error" in err, err



def _document_of(name: str, path: Path, out: Path) -> Path:
    """The shared conversation of format ``name`` (test_formats.write_all's ``path``) as a whole .json (or .traj)
    document, pretty-printed, as its tool saves it: a list of the conversations of a JSON Lines format."""
    from test_format_gemini_cli import as_json, to_gemini_cli
    from test_formats import openai_messages

    if path.suffix in (".json", ".traj"):
        doc, target = json.loads(path.read_text(encoding="utf-8")), out / path.name
    elif name == "gemini-cli":  # before 2026 (a ConversationRecord rewritten whole)
        doc, target = as_json(to_gemini_cli(openai_messages())), out / "session-2025-09-30T14-11-conv1.json"
    elif name == "openhands-v1":  # a list of events (the conversation's, as the evaluation's line holds them)
        doc, target = json.loads(path.read_text(encoding="utf-8"))["history"], out / "events.json"
    else:
        doc, target = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()], out / f"{name}.json"
    target.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    return target


# the formats whose files FORMATS describes as .json documents
WHOLE = ("openai", "tau1", "tau2", "anthropic", "responses", "otel", "langchain", "swe-agent", "bedrock", "gemini",
         "openhands", "openhands-v1", "gemini-cli", "mini-swe-agent", "pydantic-ai", "autogen", "smolagents", "llamaindex",
         "adk", "agent-framework", "langfuse")


@pytest.mark.parametrize("name", WHOLE)
def test_a_transcript_document_given_as_an_agent_log_says_what_it_is_and_how_to_convert_it(name, tmp_path, capsys):
    """Found by review: validate on a pretty-printed .json transcript (a tau2 results file, an old Gemini CLI
    session-*.json, a SWE-agent .traj, a list of OpenAI conversations) stopped at "invalid JSON" on line 1, before it
    could say what the file is. It is now read whole, and the one line names its format and the conversion."""
    from test_formats import write_all

    from sam_model.data.formats import FORMATS
    from sam_model.data.transcripts import main as transcripts

    assert re.search(r"\.json\b(?!l)|\.traj", FORMATS[name].file)  # WHOLE: every format that has such files
    assert {f for f in FORMATS if re.search(r"\.json\b(?!l)|\.traj", FORMATS[f].file)} == set(WHOLE)
    (tmp_path / "doc").mkdir()
    path = _document_of(name, write_all(tmp_path)[name], tmp_path / "doc")
    assert path.read_text(encoding="utf-8").splitlines()[0] in ("{", "[")
    assert main([str(path)]) == 1
    err = capsys.readouterr().err
    article = "an" if name in ("openai", "anthropic", "otel", "openhands", "openhands-v1", "autogen", "adk",
                               "agent-framework") else "a"
    assert err.startswith(f"error: {path}: this is {article} {name} file ({FORMATS[name].title}), one JSON document")
    assert f"`sam-data transcripts {path} OUT.jsonl --format {name}`" in err and err.count("\n") == 1, err
    assert transcripts([str(path), str(tmp_path / "o.jsonl"), "--format", name]) == 0  # the advice works


def test_a_pretty_printed_document_named_jsonl_says_to_name_it_json(tmp_path, capsys):
    """A tau2 results file saved as .jsonl: its format and that the reader takes a document whole from a .json."""
    from test_formats import write_all

    path = tmp_path / "results.jsonl"
    path.write_text(json.dumps(json.loads(write_all(tmp_path)["tau2"].read_text()), indent=2), encoding="utf-8")
    assert main([str(path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: {path}: this is a tau2 file") and "name it results.json" in err
    assert "--format tau2" in err and err.count("\n") == 1


def test_a_document_of_no_transcript_format_or_of_events_is_one_line_saying_what_to_do(tmp_path, capsys):
    """A pretty-printed JSON document that no reader reads, and agent-log events written as one document (a list,
    or one event over several lines), each get one line naming the file; a log of one event on one line named .json,
    and a JSON Lines log named .json, are read as before."""
    other = tmp_path / "config.json"
    other.write_text(json.dumps({"model": "gpt", "temperature": 0}, indent=2), encoding="utf-8")
    assert main([str(other)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: {other}: a JSON document written over several lines, not an agent log") and \
        "none of the transcript formats" in err and err.count("\n") == 1
    listed = tmp_path / "events.json"
    listed.write_text(json.dumps(LOG_A, indent=2), encoding="utf-8")
    assert main([str(listed)]) == 1
    err = capsys.readouterr().err
    assert f"{listed}: 4 agent-log events written as one JSON document (pretty-printed), not JSON Lines" in err
    assert f"jq -c '.[]' {listed} > LOG.jsonl" in err and err.count("\n") == 1
    one = tmp_path / "one.json"
    one.write_text(json.dumps(ev("a", 0)) + "\n", encoding="utf-8")
    lines = tmp_path / "lines.json"
    lines.write_text("".join(json.dumps(e) + "\n" for e in LOG_A), encoding="utf-8")
    for log in (one, lines):
        assert main([str(log)]) == 0, capsys.readouterr().err
