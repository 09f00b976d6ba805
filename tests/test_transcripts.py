"""The tool-call transcript importer against the spec's golden file, its bad-input errors, the live state and
the fixed task split."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest
from transcript_logs import chat_log, import_report, tau_log

from sam_model.data.reader import read_episodes
from sam_model.data.schema import parse_event
from sam_model.data.sources import SourceOptions, materialise, source_kind
from sam_model.data.transcripts import (
    RESULT_CUT,
    Conversation,
    ImportReport,
    TranscriptFormatError,
    convert_conversation,
    held_out_groups,
    is_trivial,
    iter_transcript_events,
    live_state,
    main,
    result_shape,
    says,
    schema_paths,
)

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("SAM_SHARED_DIR", REPO / ".." / "shared")).resolve()
TAU = SHARED / "data" / "tau-bench" / "gpt-4o-airline.json.gz"
GOLDEN = SHARED / "spec" / "tau-bench-airline-first20.golden.jsonl"
needs_tau = pytest.mark.skipif(not (TAU.is_file() and GOLDEN.is_file()),
                               reason=f"tau-bench data or golden file absent ({TAU}); set SAM_SHARED_DIR")


def call(name: str, call_id: str, **arguments) -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


# A small airline-like conversation: the user gives an id, a lookup returns a reservation, the agent books.
MESSAGES = [
    {"role": "system", "content": "You are an agent. Cabins: economy, business."},
    {"role": "user", "content": "Hi, my user id is ann_lee_123."},
    {"role": "assistant", "content": None, "tool_calls": [call("get_user", "c1", user_id="ann_lee_123")]},
    {"role": "tool", "tool_call_id": "c1", "content": json.dumps({"name": "Ann", "reservations": ["QX7Z9A"]})},
    {"role": "assistant", "content": "I see reservation QX7Z9A. Cancel it?"},
    {"role": "user", "content": [{"type": "text", "text": "yes please"}, {"type": "image_url", "image_url": {}}]},
    {"role": "assistant", "tool_calls": [call("cancel", "c2", reservation_id="QX7Z9A", user_id="ann_lee_123",
                                              reason="change of plans", refund=True, cabin="economy")]},
    {"role": "tool", "tool_call_id": "c2", "content": "Error: reservation QX7Z9A is already cancelled"},
]


def convert(messages, **kw) -> list[dict]:
    return convert_conversation(Conversation("ep-1", messages, "test.jsonl:1", "ep-1"), **kw)


def refund(arguments: str, user: str, agent: str = "I can refund it, shall I?") -> list[dict]:
    """The events of a refund whose amount the user said in ``user``: the agent asks, the user agrees, the call
    (``arguments`` as the model wrote them, JSON text) is made."""
    return convert([
        {"role": "user", "content": user},
        {"role": "assistant", "content": agent},
        {"role": "user", "content": "ok, go ahead"},
        {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": {
            "name": "refund_charge", "arguments": arguments}}]},
        {"role": "tool", "tool_call_id": "c1", "content": '{"refund_id": "RF-12"}'}])


@needs_tau
def test_reproduces_golden_line_for_line():
    golden = [json.loads(line) for line in GOLDEN.read_text(encoding="utf-8").splitlines()]
    report = ImportReport()
    mine = list(iter_transcript_events(TAU, max_conversations=20, result_limit=RESULT_CUT, report=report))
    assert len(mine) == len(golden)
    for i, (ours, theirs) in enumerate(zip(mine, golden)):
        ours = {k: v for k, v in ours.items() if k != "meta"}
        assert ours == theirs, f"line {i + 1} differs"
    cut = [i for i, e in enumerate(golden) if e["text"].endswith(" chars]")]
    assert report.results_cut == len(cut) > 0
    assert f"{len(cut)} tool results cut at {RESULT_CUT} characters (--result-limit)" in report.lines()


@needs_tau
def test_without_a_limit_results_are_whole():
    """No hidden cut: by default the importer keeps whole tool results (the golden file's cut ones are its
    prefixes), and reports no cut."""
    golden = [json.loads(line) for line in GOLDEN.read_text(encoding="utf-8").splitlines()]
    report = ImportReport()
    whole = list(iter_transcript_events(TAU, max_conversations=20, report=report))
    assert len(whole) == len(golden) and report.results_cut == 0
    assert not any("cut at" in line for line in report.lines())
    for ours, theirs in zip(whole, golden):
        if theirs["text"].endswith(" chars]"):
            head, _, extra = theirs["text"].rpartition(" ...[+")
            assert len(ours["text"]) == RESULT_CUT + int(extra.split()[0]) and ours["text"].startswith(head)
        else:
            assert ours["text"] == theirs["text"]


@needs_tau
def test_whole_file_matches_the_data_readme_and_every_event_parses():
    report = ImportReport()
    events = list(iter_transcript_events(TAU, report=report))
    assert (report.conversations, report.events, report.decision_points) == (200, 5198, 650)
    for n, e in enumerate(events):
        parse_event(e, "tau", n)
    assert sum(report.outcomes.values()) == sum(report.outcomes[o] for o in
                                                 ("needed", "observation", "policy", "untraceable", "trivial"))


def test_events_state_and_labels_follow_the_spec():
    events = convert(MESSAGES)
    assert [e["kind"] for e in events] == ["user", "action", "result", "system", "user", "action", "result"]
    assert events[1]["text"] == "CALL get_user(user_id=ann_lee_123)"
    assert events[2]["text"].startswith('get_user: {"name"')
    assert events[3]["state"]["last_action_result"] == "get_user: ok (name, reservations)"
    assert events[4]["text"] == "yes please"  # text parts joined, other parts ignored
    assert events[5]["text"] == ("CALL cancel(reservation_id=QX7Z9A, user_id=ann_lee_123, reason=change of plans, "
                                 "refund=true, cabin=economy)")
    assert events[6]["text"] == "cancel: Error: reservation QX7Z9A is already cancelled"
    # the first call: its decision event (step 0) says the value itself -> not a decision point
    assert "useful_memory_steps" not in events[0]
    # the second: the decision event is the user's "yes please"; reservation id first said by the result (step 2),
    # user id first said by the user (step 0); "economy" is in the policy, refund is boolean
    dp = events[4]
    assert dp["useful_memory_steps"] == [0, 2]
    assert dp["state"]["phase"] == "cancel"
    assert dp["state"]["uncertainty_flags"] == ["reservation_id", "user_id"]
    assert dp["state"]["constraints"] == {}  # user_id was used by the first call, but it is needed: masked
    assert events[5]["state"]["constraints"] == {"user_id": "ann_lee_123", "reservation_id": "QX7Z9A",
                                                 "reason": "change of plans", "refund": True, "cabin": "economy"}


def test_free_text_arguments_stay_out_of_constraints():
    long_reason = "the customer wants to cancel because the meeting was moved to another week entirely"
    events = convert([{"role": "user", "content": "hello there"},
                      {"role": "assistant", "tool_calls": [call("cancel", "c1", reason=long_reason, code="ab12")]}])
    assert events[-1]["state"]["constraints"] == {"code": "ab12"}


def test_unmasked_keeps_constraints_and_flags_and_latest_all_labels():
    events = convert(MESSAGES, masked=False)
    dp = events[4]
    assert dp["state"]["uncertainty_flags"] == [] and dp["state"]["constraints"] == {"user_id": "ann_lee_123"}
    assert convert(MESSAGES, label="latest")[4]["useful_memory_steps"] == [1, 3]
    assert convert(MESSAGES, label="all")[4]["useful_memory_steps"] == [0, 1, 2, 3]


def test_definitions():
    assert says("see #abc123 now", "#abc123") and says("see abc123 now", "#abc123")
    assert says("in new york today", "new_york") and not says("12 results", "2")
    assert is_trivial("amount", 12) and not is_trivial("amount", 120) and not is_trivial("seat_id", 12)
    assert is_trivial("x", "5.5") and is_trivial("x", "yes") and is_trivial("x", None) and is_trivial("x", True)
    assert not is_trivial("x", 5.0 * 100)
    assert result_shape("f", "Error: flight HAT123 not found") == "f: error (flight not found)"
    assert result_shape("f", "error") == "f: error"
    assert result_shape("f", "[1, 2]") == "f: 2 results"
    assert result_shape("f", '{"A": 1, "b": 2}') == "f: ok (b)" and result_shape("f", '{"A": 1}') == "f: ok (1 entries)"
    assert result_shape("f", "  ") == "f: empty" and result_shape("f", "done") == "f: ok"


@pytest.mark.parametrize("messages, reason", [
    ([{"content": "hi"}], "without 'role'"),
    ([{"role": "user", "content": "hi"}, {"role": "assistant", "tool_calls": {"id": "x"}}], "'tool_calls' is an object, expected"),
    ([{"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": ["zz"], "content": "ok"}], "'tool_call_id' is"),
    ([{"role": "user", "content": 42}], "'content' is a number; expected"),
    # JSON's words for what the file holds, not Python's ('is a bool', 'got NoneType'; found by review)
    ([{"role": "user", "content": True}], "'content' is true; expected a string, null or a list of parts"),
    ([{"role": "user", "content": "hi"}, None], "a message must be an object, got null"),
    ([{"role": "user", "content": ["hi"]}], "content part 0 is a string, expected an object"),
    ([{"role": "user", "content": [{"type": "text"}]}], "no string 'text'"),
    ([], "empty conversation"),
    ([{"role": "system", "content": "policy only"}], "empty conversation"),
    ([{"role": "user", "content": "hi"}, {"role": "assistant", "tool_calls": [{"function": {}}]}], "no function name"),
])
def test_bad_input_is_named_with_its_message(messages, reason):
    with pytest.raises(TranscriptFormatError) as err:
        convert(messages)
    assert reason in str(err.value)
    assert str(err.value).startswith("test.jsonl:1")
    if "empty" not in reason:
        assert ", message " in str(err.value)


def test_invalid_json_arguments_are_kept_raw_and_counted():
    report = ImportReport()
    conv = Conversation("ep", [{"role": "user", "content": "hi"},
                               {"role": "assistant", "tool_calls": [{"id": "a", "function": {
                                   "name": "f", "arguments": "{user_id: oops"}}]}], "x:1", "ep")
    events = convert_conversation(conv, report=report)
    assert events[-1]["text"] == "CALL f({user_id: oops)"
    assert len(report.invalid_arguments) == 1 and report.invalid_arguments[0].startswith("x:1, message 1: ")


def test_arguments_nested_past_the_limit_are_kept_raw_and_counted():
    """Arguments 900 levels deep recursed past Python's limit in the importer and in a served add (found by
    review): kept as their raw string instead, counted as the arguments that are not an object are."""
    deep = '{"a": ' * 900 + '"v"' + "}" * 900
    report = ImportReport()
    conv = Conversation("ep", [{"role": "user", "content": "hi, the code is 9911"},
                               {"role": "assistant", "tool_calls": [{"id": "a", "function": {
                                   "name": "f", "arguments": deep}}]}], "x:1", "ep")
    events = convert_conversation(conv, report=report)
    assert events[-1]["text"] == f"CALL f({deep})" and "nest more than 32 levels" in report.invalid_arguments[0]
    shallow = '{"a": ' * 31 + '"9911"' + "}" * 31  # within the limit: traced as before
    conv = Conversation("ep", [{"role": "user", "content": "hi, the code is 9911"},
                               {"role": "assistant", "content": "ok"},
                               {"role": "assistant", "tool_calls": [{"id": "a", "function": {
                                   "name": "f", "arguments": shallow}}]}], "x:1", "ep")
    assert convert_conversation(conv, report=ImportReport())[1]["useful_memory_steps"] == [0]


def test_jsonl_container_skip_bad_and_cli(tmp_path, capsys):
    good = {"id": "conv one", "messages": MESSAGES}
    lines = [json.dumps(good), "{not json", json.dumps({"id": "b", "messages": [{"content": "no role"}]}),
             json.dumps({"messages": MESSAGES}), json.dumps({"id": "conv one", "messages": MESSAGES})]
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(TranscriptFormatError, match=r"t\.jsonl:2: invalid JSON"):
        list(iter_transcript_events(path))
    report = ImportReport()
    events = list(iter_transcript_events(path, skip_bad=True, report=report))
    assert {e["episode_id"] for e in events} == {"conv_one"}  # id sanitised
    reasons = [str(e) for e in report.skipped]
    assert len(reasons) == 4 and any("t.jsonl:3, message 0" in r for r in reasons)
    assert any("without 'id'" in r for r in reasons) and any("duplicate" in r for r in reasons)
    out = tmp_path / "out.jsonl.gz"
    assert main([str(path), str(out), "--skip-bad"]) == 0
    printed = capsys.readouterr().out
    assert "1 conversations" in printed and "skipped 4 bad conversations" in printed and "argument values:" in printed
    # bad conversations skipped: a fit of the file as it is stops at the first, so the line names the converted log
    assert printed.strip().splitlines()[-1].startswith(f"next: sam-train fit --config adapt.yaml --data.train '[{out}]' ")
    assert [json.loads(x) for x in gzip.open(out, "rt")] == events
    assert main([str(path), str(out)]) == 1  # the first bad line stops a strict run, named


def test_json_list_of_tau_trajectories(tmp_path):
    path = tau_log(tmp_path / "some-model-retail.json", MESSAGES, tasks=10, trials=2)
    assert source_kind(path) == "transcripts"
    ids = {e["episode_id"] for e in iter_transcript_events(path)}
    assert "tau1-retail-some-model-task3-trial1" in ids and len(ids) == 20
    train = {e["episode_id"] for e in iter_transcript_events(path, split="train")}
    test = {e["episode_id"] for e in iter_transcript_events(path, split="test")}
    assert train | test == ids and not train & test and len(test) == 4  # 2 of 10 tasks, both trials each
    tasks = lambda ids: {i.rsplit("-trial", 1)[0] for i in ids}  # noqa: E731
    assert not tasks(train) & tasks(test)


def test_null_group_or_task_id_falls_back_to_the_id(tmp_path):
    """A line's 'group' or 'task_id' written as null (or "") names no task: the split falls back to the next key, the
    line's id, as where the key is absent. Read as the group "None", every such conversation was one task, so the
    test split held all of them or none, and each event carried meta.group "None"."""
    lines = {f"conv{i}": MESSAGES for i in range(20)}
    path = tmp_path / "chats.jsonl"
    path.write_text("".join(json.dumps({"id": cid, "group": None, "task_id": "" if i % 2 else None,
                                        "messages": messages}) + "\n"
                            for i, (cid, messages) in enumerate(lines.items())))
    events = list(iter_transcript_events(path))
    assert not any("group" in e.get("meta", {}) for e in events)  # each its own group: its episode id
    test = {e["episode_id"] for e in iter_transcript_events(path, split="test")}
    train = {e["episode_id"] for e in iter_transcript_events(path, split="train")}
    assert len(test) == 4 and train | test == set(lines) and not train & test
    path.write_text(json.dumps({"id": "a", "group": None, "task_id": 7, "messages": MESSAGES}) + "\n")
    assert {e["meta"]["group"] for e in iter_transcript_events(path)} == {"7"}  # a null group: the task_id


def test_test_groups_are_fixed_by_name_not_by_order():
    groups = [f"task{i}" for i in range(50)]
    assert held_out_groups(groups) == held_out_groups(reversed(groups)) and len(held_out_groups(groups)) == 10
    assert held_out_groups(groups, 0.0) == frozenset() and len(held_out_groups(["a", "b"], 0.2)) == 1


def test_live_state_is_the_importer_state():
    """At every decision point of a conversation, the live state from the messages so far and the call about to
    be made equals the state the importer wrote: training and inference see the same state."""
    events = convert(MESSAGES)
    for i, m in enumerate(MESSAGES):
        for c in m.get("tool_calls") or []:
            before = MESSAGES[:i]
            state = live_state(before, c)
            assert state["phase"] == c["function"]["name"]
    assert live_state(MESSAGES[:6], MESSAGES[6]["tool_calls"][0]) == events[4]["state"]


@needs_tau
def test_live_state_matches_every_tau_decision_point():
    data = json.loads(gzip.open(TAU, "rt").read())[:30]
    events = {(e["episode_id"], e["step"]): e for e in iter_transcript_events(TAU, max_conversations=30)}
    checked = 0
    for item in data:
        eid, traj = f"tau1-airline-gpt-4o-task{item['task_id']}-trial{item['trial']}", item["traj"]
        for i, m in enumerate(traj):
            if m.get("role") != "assistant" or not m.get("tool_calls"):
                continue
            step = len(convert_conversation(Conversation(eid, traj[:i], "x", eid))) - 1
            event = events[(eid, step)]
            if "useful_memory_steps" in event:
                assert live_state(traj[:i], m["tool_calls"]) == event["state"], (eid, step)
                checked += 1
    assert checked > 50


def test_live_state_from_argument_names_and_schema():
    schema = {"type": "object", "properties": {
        "reservation_id": {"type": "string"},
        "passengers": {"type": "array", "items": {"type": "object", "properties": {
            "first_name": {"type": "string"}, "dob": {"type": "string"}}}}}}
    assert schema_paths(schema) == ["reservation_id", "passengers.first_name", "passengers.dob"]
    state = live_state(MESSAGES[:6], tool="cancel", arguments=["reservation_id", "user_id"])
    assert state["phase"] == "cancel" and state["uncertainty_flags"] == ["reservation_id", "user_id"]
    assert "user_id" not in state["constraints"]
    with pytest.raises(ValueError, match="needs the tool call"):
        live_state(MESSAGES)


def test_live_state_takes_the_system_text_in_the_shape_its_api_keeps_it():
    """Converse's and Anthropic's ``system`` is a list of blocks, Gemini's ``system_instruction`` a Content: given
    as they are, live_state's ``policy=`` raised a TypeError (a string only); each now reads as its text."""
    messages = [{"role": "user", "content": "switch me to FIBER500, account BL-1234567"},
                {"role": "assistant", "content": "Done soon. Anything else?"}, {"role": "user", "content": "go"}]
    call = {"name": "change_plan", "arguments": {"account_id": "BL-1234567", "plan_code": "FIBER500"}}
    text = "Plans: FIBER100, FIBER500."
    assert live_state(messages, call)["uncertainty_flags"] == ["account_id", "plan_code"]
    want = live_state(messages, call, policy=text)
    assert want["uncertainty_flags"] == ["account_id"]  # the policy says FIBER500: common knowledge
    for shape in ([{"text": text}, {"cachePoint": {"type": "default"}}],  # Converse
                  [{"type": "text", "text": text, "cache_control": {"type": "ephemeral"}}],  # Anthropic
                  {"role": None, "parts": [{"text": text, "thought": None}]},  # a google-genai Content's dump
                  [text]):  # Gemini's list of strings
        assert live_state(messages, call, policy=shape) == want, shape
    with pytest.raises(TypeError, match=r"^live_state's policy is a number: give the system text"):
        live_state(messages, call, policy=3)


def test_a_gemini_function_declarations_schema_gives_the_importers_paths():
    """Gemini's parameters name their types as the google-genai SDK's Type enum writes them (OBJECT, ARRAY), and a
    model_dump of its Schema holds every field, null when unset: an array of objects gave 'passengers', not the
    paths of its items that the importer flags for the call."""
    def schema(**fields):  # a types.Schema's model_dump(mode="json")
        return {**dict.fromkeys(("description", "enum", "format", "items", "properties", "required")), **fields}

    gemini = schema(type="OBJECT", properties={
        "reservation_id": schema(type="STRING"),
        "passengers": schema(type="ARRAY", items=schema(type="OBJECT", properties={
            "first_name": schema(type="STRING"), "dob": schema(type="STRING")}))})
    assert schema_paths(gemini) == ["reservation_id", "passengers.first_name", "passengers.dob"]


def test_sources_materialise_transcripts_once_into_the_cache(tmp_path):
    path = chat_log(tmp_path / "conv.jsonl", {"c1": MESSAGES})
    assert source_kind(path) == "transcripts"
    out = materialise(path, SourceOptions(), tmp_path / "cache")
    assert out.parent == tmp_path / "cache" and out == materialise(path, SourceOptions(), tmp_path / "cache")
    episodes = read_episodes(out)
    assert len(episodes) == 1 and len(episodes[0].decision_points) == 1
    assert materialise(path, SourceOptions(masked=False), tmp_path / "cache") != out
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps({"episode_id": "e", "step": 0, "kind": "user", "text": "x"}) + "\n")
    assert source_kind(log) == "agent-log" and materialise(log) == log


def test_data_module_trains_on_transcripts_keeps_tasks_together_and_builds_lives(tmp_path):
    from sam_model.training.datamodule import AgentLogDataModule

    tau = tau_log(tmp_path / "agent-shop.json", MESSAGES, tasks=10, trials=4)
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps({"episode_id": f"d{i}", "step": s, "kind": "user", "text": f"x{i} {s}",
                                       **({"useful_memory_steps": [0]} if s == 2 else {})}) + "\n"
                           for i in range(20) for s in range(3)))
    dm = AgentLogDataModule(train=[str(log), str(tau)], val_fraction=0.2, transcript_split="train", repeat=[1, 3],
                            cache_dir=str(tmp_path / "cache"), seed=0)
    dm.setup()
    train_ids, val_ids = list(dm._train["episode_id"]), list(dm._val["episode_id"])
    task = lambda e: e.rsplit("-trial", 1)[0]  # noqa: E731
    tau_train = {task(e) for e in train_ids if e.startswith("tau1")}
    tau_val = {task(e) for e in val_ids if e.startswith("tau1")}
    assert len(tau_train | tau_val) == 8  # 2 of the 10 tasks are the fixed test split: never read
    assert not tau_train & tau_val  # a task's trials never sit on both sides
    assert sum(e.startswith("tau1") for e in train_ids) == 3 * 4 * len(tau_train)  # read 3 times
    assert len(val_ids) == len(set(val_ids))  # validated once each
    data = dm.vocab["data"]  # the card counts conversations once, and the rows an epoch reads apart
    assert (data["train_episodes"], data["val_episodes"]) == (len(set(train_ids)), len(val_ids))
    assert data["train_rows"] == len(train_ids) > data["train_episodes"]
    assert "action" in dm.vocab["kinds"] and "cancel" in dm.vocab["phases"]
    assert dm.vocab["source_kinds"] == ["user"]  # results are labelled in the transcripts only: no link target
    lives = AgentLogDataModule(train=[str(log)], val_fraction=0.2, lives=[1, 4], cache_dir=str(tmp_path / "cache"))
    lives.setup()
    rows = lives._train
    big = [r for r in rows if r["episode_id"].startswith("life4")]
    assert big and all(len(r["steps"]) == 12 for r in big[:-1])
    assert big[0]["task_starts"] == [0] * 3 + [3] * 3 + [6] * 3 + [9] * 3
    assert big[0]["labels"][5] == [3]  # the second episode's label, shifted
    data = lives.vocab["data"]  # lives of 4 are rows, not more conversations
    assert data["train_episodes"] == sum(not e.startswith("life") for e in rows["episode_id"]) < data["train_rows"]


def test_a_log_whose_calls_need_no_earlier_value_says_it_labels_nothing(tmp_path, capsys):
    """A coding agent's shell tool: its one argument, a whole command line, is said by no earlier event, so the
    log had 0 decision points and the report said only that count; it now says why and what that means."""
    messages = [{"role": "user", "content": "The parser drops the last token; fix it."},
                {"role": "assistant", "tool_calls": [call("terminal", "c1", command="grep -rn 'def parse' src")]},
                {"role": "tool", "tool_call_id": "c1", "content": "src/tinyparse/core.py:12:def parse(text):"},
                {"role": "assistant", "tool_calls": [call("terminal", "c2", command="sed -n 1,40p src/tinyparse/core.py")]},
                {"role": "tool", "tool_call_id": "c2", "content": "def parse(text):\n    return text.split()[:-1]"}]
    said = import_report(chat_log(tmp_path / "shell.jsonl", {"run-1": messages}), tmp_path / "out.jsonl", capsys)
    assert "0 decision points" in said.out + said.err
    assert "no decision point: no argument value of the 2 tool calls is said by an earlier event" in said.out + said.err


def test_an_amount_is_traced_to_who_said_it_as_people_write_it():
    """A model writes the price the customer said, ``"amount": 45.60`` or 3500 for $3,500; JSON keeps 45.6 and 3500,
    which no text saying $45.60 or $3,500 says as a whole token: the refund's amount was untraceable whenever its
    cents ended in 0 or it was 1,000 or more (a walkthrough's telecom billing logs; the README's opening example, a
    budget corrected to $3,500, labelled nothing). A JSON number is also said by its two-digit form and with
    thousands separators; a string is not."""
    def charged(arguments: str, said: str) -> list[dict]:
        return refund(arguments, f"I was charged {said} for roaming I never used.",
                      "Sorry about that. I can refund it, shall I?")

    events = charged('{"amount": 45.60}', "$45.60")
    assert events[2]["useful_memory_steps"] == [0] and events[2]["meta"]["needed"] == {"amount": ["45.6"]}
    assert events[2]["state"]["uncertainty_flags"] == ["amount"]
    assert charged('{"amount": 45.6}', "$45.6")[2]["useful_memory_steps"] == [0]  # its own form, as before
    assert charged('{"amount": 120.00}', "$120.00")[2]["useful_memory_steps"] == [0]  # an integral one, as before
    for arguments, said in (('{"amount": 3500}', "$3,500"), ('{"amount": 3500.0}', "$3,500.00"),
                            ('{"amount": 1234.5}', "$1,234.50"), ('{"amount": 1234.5}', "1,234.5 dollars")):
        assert charged(arguments, said)[2]["useful_memory_steps"] == [0], said  # the README's own budget of $3,500
    for arguments, said in (('{"version": "3.1"}', "version 3.10"), ('{"amount": 45.6}', "$45.61"),
                            ('{"amount": "3500"}', "$3,500"), ('{"amount": 3500}', "$3,5000")):
        assert "useful_memory_steps" not in charged(arguments, said)[2]  # a string, another number: untraceable


def test_an_amount_is_not_said_by_a_larger_number_or_by_its_cents_rounded():
    """The thousands-separator forms of an amount (3500: 3,500) were matched as whole tokens, and a comma is no word
    character: a text saying $3,500,000 (or a list 1,500,3,500 with no spaces) said 3500, and 1234.5678 was also said
    as 1,234.57, another amount, so each call was traced to an event that never said its value. A form with
    separators is said only as a whole number, and two decimals only where they are the value's."""
    def claimed(arguments: str, said: str) -> dict:
        return refund(arguments, f"The claim says {said}.")[2]

    for arguments, said in (('{"amount": 3500}', "$3,500,000"), ('{"amount": 3500}', "ids 1,500,3,500,7"),
                            ('{"amount": 1234.5678}', "$1,234.57"), ('{"amount": 1500}', "1,500,000.00 in total")):
        assert "useful_memory_steps" not in claimed(arguments, said), said
    for arguments, said in (('{"amount": 3500}', "$3,500, not $3,500,000"), ('{"amount": 3500}', "$3,500."),
                            ('{"amount": 1234.56}', "$1,234.56"), ('{"amount": 3500}', "$3,500.00")):
        assert claimed(arguments, said)["useful_memory_steps"] == [0], said


def test_a_log_of_every_model_request_is_named_as_such(tmp_path, capsys):
    """A logging proxy (or LangSmith's LLM runs) writes every request with the conversation so far: each line a
    conversation of its own, the opening of the next. Converted silently (a walkthrough's telecom agent), their
    decisions were trained on again and the split drew the copies apart, so validation scored what training saw.
    The import report and sam-train's conversion name them; a log of distinct conversations gets no such note."""
    from sam_model.data.sources import iter_source_events

    ends = [i + 1 for i, m in enumerate(MESSAGES) if m["role"] == "assistant"] + [len(MESSAGES)]
    log = chat_log(tmp_path / "requests.jsonl", {f"req-{n}": MESSAGES[:end] for n, end in enumerate(ends)})
    said = import_report(log, tmp_path / "out.jsonl", capsys).out
    assert ("3 conversations repeat the opening of a longer one or another whole, event for event (a log of every "
            "model request") in said
    assert f"{log}:1 (of {log}:2)" in said and "keep each conversation's last request" in said
    list(iter_source_events(log))
    assert f"{log}: 3 conversations repeat the opening" in capsys.readouterr().out
    other = [dict(m, content=m["content"].replace("ann_lee_123", "bo_chan_7")) if isinstance(m.get("content"), str)
             else m for m in MESSAGES]
    distinct = chat_log(tmp_path / "distinct.jsonl", {"a": MESSAGES, "b": other})
    assert "repeat" not in import_report(distinct, tmp_path / "out2.jsonl", capsys).out


def test_the_report_counts_free_text_apart_from_trivial_values(tmp_path, capsys):
    """A walkthrough's data agent wrote its SQL as one argument of more than 8 words: free text, never traced, and
    the import report counted its 24 queries as 'trivial 24 (9%)' beside yes/no and two-digit numbers, so nothing
    said that whole arguments were left out. The report says how many of the trivial values were free text."""
    title = "Payout PO-883120 failed with BANK_R04 after four retries over the weekend"  # 11 words
    messages = [{"role": "user", "content": "payout PO-883120 failed, open a sev3 ticket for priya.n please"},
                {"role": "assistant", "content": "Opening it."},
                {"role": "assistant", "tool_calls": [call("open_ticket", "c1", title=title, severity="sev3",
                                                          assignee="priya.n", notify=True)]},
                {"role": "tool", "tool_call_id": "c1", "content": '{"ticket_id": "FIN-2291"}'}]
    said = import_report(chat_log(tmp_path / "ops.jsonl", {"ops-1": messages}), tmp_path / "out.jsonl", capsys)
    line = next(ln for ln in said.out.splitlines() if ln.startswith("argument values:"))
    assert line.endswith("trivial 2 (50%: 1 free text, more than 8 words or 100 characters, never traced)"), line
    assert "needed 2 (50%)" in line, line  # severity and assignee: percentages over the 4 values, not 5


@pytest.mark.parametrize("folder", ["my logs", "week 1, airline", "it's"])
def test_the_fit_line_runs_as_printed(tmp_path, capsys, folder):
    """The last line's fit named the file inside '[...]' unquoted for the shell and the list: a folder with a
    space, a comma or a quote gave another path, two files or a broken command."""
    import shlex

    import yaml

    path = tmp_path / folder / "chats.jsonl"
    path.parent.mkdir()
    path.write_text(json.dumps({"id": "c1", "messages": MESSAGES}) + "\n")
    assert main([str(path), str(tmp_path / folder / "out.jsonl")]) == 0
    words = shlex.split(capsys.readouterr().out.strip().splitlines()[-1])
    assert words[:6] == ["next:", "sam-train", "fit", "--config", "adapt.yaml", "--data.train"]
    assert yaml.safe_load(words[6]) == [str(path)]  # as jsonargparse reads a list option
