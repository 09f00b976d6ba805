"""The agent-log reader: every kind of bad input, skip mode, ordering, gzip, round-trips, examples."""

from __future__ import annotations

import gzip
import json
import random
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sam_model.data.examples import episode_memories, iter_examples
from sam_model.data.reader import ReadReport, iter_episodes, iter_events, read_episodes
from sam_model.data.schema import Event, LogFormatError, State, parse_event
from sam_model.data.text import state_to_text


def ev(episode_id: str = "a", step: int = 0, **kw) -> dict:
    """A valid event as a JSON object; keyword arguments override or add fields."""
    return {"episode_id": episode_id, "step": step, "kind": "user", "text": f"{episode_id} {step}", **kw}


OK0, OK1 = ev(step=0), ev(step=1)

# (name, lines of the log, 1-based line of the error, words the reason must contain)
MALFORMED = [
    ("invalid json", [OK0, '{"episode_id": "a", "step": 1,'], 2, "invalid JSON"),
    ("not an object", [OK0, "[1, 2]"], 2, "must be a JSON object"),
    ("missing text", [OK0, {k: v for k, v in OK1.items() if k != "text"}], 2, "missing required field 'text'"),
    ("missing episode_id", [{k: v for k, v in OK0.items() if k != "episode_id"}], 1, "'episode_id'"),
    ("empty episode_id", [ev("")], 1, "'episode_id' must be a non-empty string"),
    ("step a string", [OK0, ev(step="1")], 2, "'step' must be an integer"),
    ("step a float", [OK0, ev(step=1.5)], 2, "'step' must be an integer"),
    ("step negative", [ev(step=-1)], 1, "'step' must be >= 0"),
    ("step a bool", [OK0, ev(step=True)], 2, "'step' must be an integer"),
    ("text not a string", [OK0, ev(step=1, text=42)], 2, "'text' must be a string"),
    ("kind empty", [OK0, ev(step=1, kind="")], 2, "'kind' must be a non-empty string"),
    ("state not an object", [ev(state="clarify")], 1, "'state' must be an object"),
    ("phase not a string", [OK0, ev(step=1, state={"phase": 3})], 2, "'state.phase' must be a string"),
    ("constraints a list", [ev(state={"constraints": ["a"]})], 1, "'state.constraints' must be an object"),
    ("constraints empty list", [ev(state={"constraints": []})], 1, "'state.constraints' must be an object"),
    ("constraint nested", [ev(state={"constraints": {"b": {"x": 1}}})], 1, "'state.constraints.b'"),
    ("flags a string", [ev(state={"uncertainty_flags": "date"})], 1, "'state.uncertainty_flags'"),
    ("subgoals not strings", [ev(state={"subgoal_stack": [1]})], 1, "'state.subgoal_stack'"),
    ("last result not a string", [ev(state={"last_action_result": 0})], 1, "'state.last_action_result'"),
    ("duplicate step", [OK0, OK1, ev(step=1)], 3, "duplicate step 1 in episode 'a'"),
    ("label equal to step", [OK0, ev(step=1, useful_memory_steps=[1])], 2, "not an earlier step"),
    ("label later than step", [OK0, ev(step=1, useful_memory_steps=[0, 5])], 2, "names step 5"),
    ("label negative", [OK0, ev(step=1, useful_memory_steps=[-1])], 2, "names step -1"),
    ("label missing", [OK0, ev(step=2), ev(step=3, useful_memory_steps=[1])], 3, "does not exist in episode 'a'"),
    ("labels not a list", [OK0, ev(step=1, useful_memory_steps=0)], 2, "must be a list of integers"),
    ("labels not ints", [OK0, ev(step=1, useful_memory_steps=["0"])], 2, "must be a list of integers"),
    ("labels bools", [OK0, ev(step=1, useful_memory_steps=[False])], 2, "must be a list of integers"),
    ("meta a list", [OK0, ev(step=1, meta=[])], 2, "'meta' must be an object, got a list"),
    ("meta a string", [ev(meta="x")], 1, "'meta' must be an object, got a string"),
    ("text null", [ev(text=None)], 1, "field 'text' must be a string, got null"),  # not 'got NoneType'
    ("state phase false", [ev(state={"phase": False})], 1, "'state.phase' must be a string, got false"),
]


@pytest.mark.parametrize("lines, line, reason", [m[1:] for m in MALFORMED], ids=[m[0] for m in MALFORMED])
def test_malformed_line_is_reported_with_file_line_and_reason(write_log, lines, line, reason):
    path = write_log(lines)
    with pytest.raises(LogFormatError) as info:
        read_episodes(path)
    err = info.value
    assert (err.source, err.line) == (str(path), line)
    assert str(err).startswith(f"{path}:{line}: ")
    assert reason in err.reason


def test_truncated_gz_is_reported_at_the_line_it_breaks(write_log):
    full = write_log([ev(step=i, text="x" * 200) for i in range(50)], "full.jsonl.gz")
    cut = full.with_name("cut.jsonl.gz")
    cut.write_bytes(full.read_bytes()[:-40])
    with pytest.raises(LogFormatError) as info:
        read_episodes(cut)
    assert str(info.value).startswith(f"{cut}:")
    assert "truncated" in info.value.reason
    assert info.value.line >= 2  # the good lines before the cut were read


def test_not_utf8_is_reported(write_log, tmp_path):
    path = tmp_path / "latin1.jsonl"
    path.write_bytes((json.dumps(OK0) + "\n").encode() + b'{"text": "caf\xe9"}\n')
    with pytest.raises(LogFormatError) as info:
        list(iter_events(path))
    assert info.value.line == 2 and "UTF-8" in info.value.reason


def test_episode_split_over_two_files_is_an_error(write_log):
    a = write_log([OK0], "a.jsonl")
    b = write_log([ev("b"), OK1], "b.jsonl")
    with pytest.raises(LogFormatError) as info:
        read_episodes([a, b])
    assert (info.value.source, info.value.line) == (str(b), 2)
    assert "already appeared in" in info.value.reason and str(a) in info.value.reason


def test_missing_file_and_directory_are_clear(tmp_path):
    with pytest.raises(FileNotFoundError, match="agent log not found"):
        read_episodes(tmp_path / "nope.jsonl")
    with pytest.raises(IsADirectoryError, match="is a directory"):
        read_episodes(tmp_path)
    with pytest.raises(ValueError, match="on_error"):
        read_episodes(tmp_path / "nope.jsonl", on_error="ignore")


def test_skip_mode_counts_reports_and_keeps_the_good_lines(write_log):
    lines = [
        OK0,
        "not json",
        ev(step=1, useful_memory_steps=[0]),
        ev(step="2"),
        ev("b", 0),
        ev(step=1),  # duplicate
        ev("b", 2, useful_memory_steps=[1]),  # label names a missing step: labels dropped, event kept
        "",  # blank lines are not errors
    ]
    path = write_log(lines)
    report = ReadReport()
    episodes = read_episodes(path, on_error="skip", report=report)
    assert [(e.episode_id, [x.step for x in e.events]) for e in episodes] == [("a", [0, 1]), ("b", [0, 2])]
    assert [err.line for err in report.skipped] == [2, 4, 6, 7]
    assert all(str(err).startswith(f"{path}:") for err in report.skipped)
    assert report.n_skipped == 4 and report.lines == len(lines)
    assert episodes[0].events[1].useful_memory_steps == (0,)
    assert episodes[1].events[1].useful_memory_steps is None
    assert "labels dropped" in report.skipped[-1].reason
    text = report.describe()
    assert "skipped 4" in text and f"{path}:2:" in text


def test_skip_mode_survives_a_truncated_gz_and_reads_the_next_file(write_log):
    full = write_log([ev(step=i, text="y" * 300) for i in range(40)], "full.jsonl.gz")
    cut = full.with_name("cut.jsonl.gz")
    cut.write_bytes(full.read_bytes()[:-30])
    other = write_log([ev("z", 0)], "other.jsonl")
    report = ReadReport()
    episodes = read_episodes([cut, other], on_error="skip", report=report)
    assert [e.episode_id for e in episodes] == ["a", "z"]
    assert 0 < len(episodes[0]) < 40
    assert report.n_skipped == 1 and "truncated" in report.skipped[0].reason


def test_events_of_an_episode_are_sorted_by_step_whatever_the_file_order(write_log):
    steps = list(range(30))
    random.Random(0).shuffle(steps)
    (episode,) = read_episodes(write_log([ev(step=s) for s in steps]))
    assert [e.step for e in episode.events] == sorted(steps)


def test_interleaved_episodes_come_out_in_first_appearance_order(write_log):
    lines = [ev("c", 1), ev("a", 0), ev("c", 0), ev("b", 5), ev("a", 2), ev("b", 1), ev("c", 7)]
    episodes = read_episodes(write_log(lines))
    assert [e.episode_id for e in episodes] == ["c", "a", "b"]
    assert [[x.step for x in e.events] for e in episodes] == [[0, 1, 7], [0, 2], [1, 5]]


def test_iter_episodes_yields_an_episode_once_it_is_complete(write_log):
    """Streaming: each episode comes out as soon as its last line is read, before later lines are parsed."""
    path = write_log([OK0, OK1, ev("b", 0), "this line is broken"])
    episodes = iter_episodes(path)
    assert next(episodes).episode_id == "a"  # the bad line 4 has not been reached yet
    assert next(episodes).episode_id == "b"
    with pytest.raises(LogFormatError, match=":4: invalid JSON"):
        next(episodes)


def test_gz_reads_the_same_as_plain(write_log):
    lines = [ev("a", 1, useful_memory_steps=[0]), OK0, ev("b", 0, state={"phase": "é", "constraints": {"x": [1, 2]}})]
    assert read_episodes(write_log(lines, "log.jsonl.gz")) == read_episodes(write_log(lines, "log.jsonl"))


def test_unknown_fields_are_kept_in_meta_and_re_exported(write_log):
    line = ev(state={"phase": "p", "mood": "calm"}, meta={"run": 7}, tool="search", score=0.5)
    (episode,) = read_episodes(write_log([line]))
    event = episode.events[0]
    assert event.meta == {"run": 7, "extra_fields": {"tool": "search", "score": 0.5}}
    assert event.state.extra == {"mood": "calm"}
    out = json.loads(event.to_line())
    assert out["meta"]["extra_fields"] == {"tool": "search", "score": 0.5}
    assert out["meta"]["state_extra"] == {"mood": "calm"} and out["meta"]["run"] == 7
    assert parse_event(out).to_json() == out  # re-reading the export is stable


def test_unknown_phase_and_missing_state_are_fine(write_log):
    lines = [ev(step=0), ev(step=1, state={"phase": "NeverSeenBefore"}), ev(step=2, state={"phase": None})]
    events = read_episodes(write_log(lines))[0].events
    assert events[0].state == State() and events[2].state.phase == ""
    assert events[1].state.phase == "NeverSeenBefore"
    assert state_to_text(events[1].state).startswith("phase: NeverSeenBefore")
    assert state_to_text(events[0].state) == "phase: none"


@pytest.mark.parametrize("name", ["phase", "last_action_result"])
def test_the_states_string_fields_read_null_and_missing_as_empty_and_name_any_other_value(name):
    assert State.from_json({name: None}) == State.from_json({}) == State()
    assert getattr(State.from_json({name: "x"}), name) == "x"
    for bad, words in ((0, "a number"), ([], "a list"), (True, "true")):
        with pytest.raises(ValueError, match=f"^'st.{name}' must be a string, got {words}$"):
            State.from_json({name: bad}, "st")


# ---------------------------------------------------------------- hypothesis round-trip

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**53), 2**53), st.floats(allow_nan=False, allow_infinity=False), st.text()
)
states = st.builds(
    State,
    phase=st.text(),
    subgoal_stack=st.lists(st.text(), max_size=4).map(tuple),
    constraints=st.dictionaries(st.text(), st.one_of(scalars, st.lists(scalars, max_size=3)), max_size=5),
    uncertainty_flags=st.lists(st.text(), max_size=4).map(tuple),
    last_action_result=st.text(),
)


@st.composite
def episodes_strategy(draw) -> list[Event]:
    """Events of a few episodes with valid labels (earlier steps of the same episode)."""
    events = []
    for eid in draw(st.lists(st.text(min_size=1), min_size=1, max_size=3, unique=True)):
        steps = sorted(draw(st.sets(st.integers(0, 10_000), min_size=1, max_size=8)))
        for i, step in enumerate(steps):
            labels = None
            if i and draw(st.booleans()):
                labels = tuple(sorted(draw(st.sets(st.sampled_from(steps[:i]), min_size=1))))
            meta = draw(st.dictionaries(st.text(), scalars, max_size=2))
            events.append(Event(eid, step, draw(st.text(min_size=1)), draw(st.text()), draw(states), labels, meta))
    return events


@settings(max_examples=60, deadline=None)
@given(events=episodes_strategy(), seed=st.integers(0, 1000))
def test_valid_events_round_trip_through_jsonl(events, seed):
    for e in events:
        assert parse_event(json.loads(e.to_line())) == e
    lines = [e.to_line() for e in events]
    random.Random(seed).shuffle(lines)  # episodes interleave, steps come in any order
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "log.jsonl.gz"
        path.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
        episodes = read_episodes(path)
    assert sorted(e.episode_id for e in episodes) == sorted({e.episode_id for e in events})
    by_id = {ep.episode_id: list(ep.events) for ep in episodes}
    for eid, got in by_id.items():
        assert got == sorted((e for e in events if e.episode_id == eid), key=lambda e: e.step)


# ---------------------------------------------------------------- retrieval examples


def test_retrieval_examples_and_candidate_ranges(write_log):
    lines = [
        ev("a", 0), ev("a", 1), ev("a", 2, useful_memory_steps=[0]),
        ev("b", 0), ev("b", 3), ev("b", 5, useful_memory_steps=[0, 3], state={"phase": "book"}), ev("b", 9),
    ]  # fmt: skip
    episodes = read_episodes(write_log(lines))
    memories = [m for ep in episodes for m in episode_memories(ep)]
    assert [m.id for m in memories] == ["a#0", "a#1", "a#2", "b#0", "b#3", "b#5", "b#9"]
    ex_a, ex_b = iter_examples(episodes)

    assert (ex_a.episode_id, ex_a.step, ex_a.relevant_ids) == ("a", 2, frozenset({"a#0"}))
    assert [memories[i].id for i in ex_a.candidate_range("episode")] == ["a#0", "a#1"]
    assert ex_a.candidate_range("global") == ex_a.candidate_range("episode")  # first episode

    assert (ex_b.step, ex_b.observation, ex_b.state.phase) == (5, "b 5", "book")
    assert [memories[i].id for i in ex_b.candidate_range("episode")] == ["b#0", "b#3"]
    assert [memories[i].id for i in ex_b.candidate_range("global")] == ["a#0", "a#1", "a#2", "b#0", "b#3"]
    for ex in (ex_a, ex_b):
        for scope in ("episode", "global"):
            ids = {memories[i].id for i in ex.candidate_range(scope)}
            assert ex.relevant_ids <= ids and f"{ex.episode_id}#{ex.step}" not in ids


def test_byte_order_mark_and_bad_utf8_line_in_skip_mode(tmp_path):
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(OK0).encode() + b'\n{"bad": "\xff"}\n' + json.dumps(OK1).encode())
    report = ReadReport()
    (episode,) = read_episodes(path, on_error="skip", report=report)
    assert [e.step for e in episode.events] == [0, 1]
    assert [(e.line, "not UTF-8" in e.reason) for e in report.skipped] == [(2, True)]


@pytest.mark.parametrize(("name", "text"), [
    ("my chats.jsonl", json.dumps({"id": "c1", "messages": [{"role": "user", "content": "hi"}]}) + "\n"),
    ("chats.jsonl", json.dumps([{"id": "c1", "messages": [{"role": "user", "content": "hi"}]}]) + "\n"),
    ("pretty.json", "[\n  {\"id\": \"c1\"}\n]\n")])
def test_a_transcript_read_as_an_agent_log_names_its_file_in_the_command(tmp_path, name, text):
    """read_episodes on a transcript said "convert it with `sam-data transcripts FILE OUT.jsonl`": a placeholder
    where the message's own file was known. The command names the file, quoted for the shell, and runs as given."""
    import shlex

    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(LogFormatError) as err:
        read_episodes(path)
    said = str(err.value)
    assert "FILE" not in said and "\n" not in said
    command = said.split("`")[1]
    assert shlex.split(command) == ["sam-data", "transcripts", str(path), "OUT.jsonl"]
