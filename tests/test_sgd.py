"""The SGD adapter against the spec's golden file and the properties the spec implies."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sam_model.data.reader import read_episodes
from sam_model.data.schema import parse_event
from sam_model.data.sgd import (
    convert_dialogue,
    is_sgd_split_dir,
    iter_sgd_dialogues,
    iter_sgd_events,
    main,
)
from sam_model.io import SAMFileError

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("SAM_SHARED_DIR", REPO / ".." / "shared")).resolve()
DEV = SHARED / "data" / "sgd" / "dev"
GOLDEN = SHARED / "spec" / "sgd-dev-first20.golden.jsonl"
N = 20  # the golden file covers the first 20 dev dialogues

needs_sgd = pytest.mark.skipif(
    not (DEV.is_dir() and GOLDEN.is_file()),
    reason=f"SGD data or golden file absent ({DEV}, {GOLDEN}); set SAM_SHARED_DIR to the shared folder",
)


def _events(**kw) -> list[dict]:
    return list(iter_sgd_events(DEV, max_dialogues=N, **kw))


def _points(events: list[dict]) -> dict[tuple[str, int], dict]:
    return {(e["episode_id"], e["step"]): e for e in events if "useful_memory_steps" in e}


@needs_sgd
def test_reproduces_golden_line_for_line():
    golden = [json.loads(line) for line in GOLDEN.read_text(encoding="utf-8").splitlines()]
    mine = _events()
    assert len(mine) == len(golden)
    for i, (ours, theirs) in enumerate(zip(mine, golden)):
        assert ours == theirs, f"line {i + 1} differs"


@needs_sgd
def test_every_event_parses_and_labels_point_back():
    for label in ("origin", "latest", "all"):
        for masked in (True, False):
            events = _events(label=label, masked=masked)
            steps: dict[str, set[int]] = {}
            for e in events:
                ev = parse_event(json.loads(json.dumps(e)), "sgd", 0)
                assert ev.step == len(steps.setdefault(ev.episode_id, set()))  # steps are 0, 1, 2, ...
                for s in ev.useful_memory_steps or ():
                    assert s in steps[ev.episode_id]
                steps[ev.episode_id].add(ev.step)
            assert len(steps) == N


@needs_sgd
def test_latest_and_all_labels():
    origin, latest, every = _events(), _events(label="latest"), _events(label="all")
    p_origin, p_latest, p_all = _points(origin), _points(latest), _points(every)
    assert p_origin and p_origin.keys() == p_latest.keys() == p_all.keys()
    for key, o in p_origin.items():
        lo, la, al = o["useful_memory_steps"], p_latest[key]["useful_memory_steps"], p_all[key]["useful_memory_steps"]
        assert min(la) >= min(lo) and max(la) >= max(lo)
        assert set(al) >= set(lo) | set(la)
        assert o["state"] == p_latest[key]["state"] == p_all[key]["state"]  # labels change, states do not
    assert any(set(p_all[k]["useful_memory_steps"]) > set(o["useful_memory_steps"]) for k, o in p_origin.items())
    assert any(p_latest[k]["useful_memory_steps"] != o["useful_memory_steps"] for k, o in p_origin.items())
    strip = [{k: v for k, v in e.items() if k != "useful_memory_steps"} for e in origin]
    assert strip == [{k: v for k, v in e.items() if k != "useful_memory_steps"} for e in every]


@needs_sgd
def test_unmasked_keeps_constraints():
    masked, unmasked = _events(), _events(masked=False)
    pm, pu = _points(masked), _points(unmasked)
    assert pm.keys() == pu.keys()
    by_key = {(e["episode_id"], e["step"]): e for e in unmasked}
    hidden = 0
    for key, m in pm.items():
        u = pu[key]
        assert u["useful_memory_steps"] == m["useful_memory_steps"]
        assert u["state"]["phase"] == m["state"]["phase"]
        after = by_key[(key[0], key[1] + 1)]  # the action event carries the state before the rewrite
        assert after["kind"] == "action" and after["text"].startswith(f"CALL {u['state']['phase']}(")
        assert u["state"]["constraints"] == after["state"]["constraints"]
        assert u["state"]["uncertainty_flags"] == after["state"]["uncertainty_flags"]
        removed = u["state"]["constraints"].keys() - m["state"]["constraints"].keys()
        assert m["state"]["constraints"].items() <= u["state"]["constraints"].items()
        assert removed <= set(m["state"]["uncertainty_flags"])
        assert set(u["state"]["uncertainty_flags"]) <= set(m["state"]["uncertainty_flags"])
        hidden += len(removed)
    assert hidden > 0


@needs_sgd
def test_cli_end_to_end(tmp_path):
    out = tmp_path / "dev5.jsonl.gz"
    proc = subprocess.run(
        [sys.executable, "-m", "sam_model.data.sgd", str(DEV), str(out), "--max-dialogues", "5"],
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    with gzip.open(out, "rt", encoding="utf-8") as fh:
        lines = [json.loads(line) for line in fh]
    assert lines == list(iter_sgd_events(DEV, max_dialogues=5))
    episodes = read_episodes(out)
    n_points = sum(len(ep.decision_points) for ep in episodes)
    assert len(episodes) == 5
    assert f"5 dialogues, {len(lines)} events, {n_points} decision points" in proc.stdout
    assert not [p for p in tmp_path.iterdir() if p.name != out.name]  # no temp file left behind


@needs_sgd
def test_plain_json_files_and_options(tmp_path, capsys):
    dialogues = list(iter_sgd_dialogues(DEV, max_dialogues=3))
    (tmp_path / "dialogues_002.json").write_text(json.dumps(dialogues[2:]), encoding="utf-8")
    with gzip.open(tmp_path / "dialogues_001.json.gz", "wt", encoding="utf-8") as fh:
        json.dump(dialogues[:2], fh)
    (tmp_path / "schema.json").write_text("[]", encoding="utf-8")
    assert is_sgd_split_dir(tmp_path) and not is_sgd_split_dir(tmp_path / "schema.json")
    assert [d["dialogue_id"] for d in iter_sgd_dialogues(tmp_path)] == [d["dialogue_id"] for d in dialogues]
    out = tmp_path / "out" / "x.jsonl"
    assert main([str(tmp_path), str(out), "--label", "all", "--unmasked"]) == 0
    expected = [e for d in dialogues for e in convert_dialogue(d, "all", masked=False)]
    assert [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()] == expected


def test_missing_dir_is_a_clear_error(tmp_path, capsys):
    missing = tmp_path / "nope"
    assert not is_sgd_split_dir(missing)
    with pytest.raises(SAMFileError, match="not found"):
        next(iter_sgd_events(missing))
    assert main([str(missing), str(tmp_path / "o.jsonl")]) != 0
    assert str(missing) in capsys.readouterr().err
    assert not (tmp_path / "o.jsonl").exists()


def test_empty_and_corrupt_dirs(tmp_path, capsys):
    (tmp_path / "schema.json").write_text("[]", encoding="utf-8")
    assert not is_sgd_split_dir(tmp_path)
    with pytest.raises(SAMFileError, match="no dialogues_"):
        list(iter_sgd_dialogues(tmp_path))
    bad = tmp_path / "dialogues_001.json"
    bad.write_text('[{"dialogue_id": "x", "turns": [', encoding="utf-8")
    assert main([str(tmp_path), str(tmp_path / "o.jsonl")]) != 0
    assert "dialogues_001.json" in capsys.readouterr().err
    bad.write_text('[{"dialogue_id": "x", "turns": [{"speaker": "USER"}]}]', encoding="utf-8")
    with pytest.raises(SAMFileError, match="dialogues_001.json: dialogue 'x', turn 0: no utterance"):
        list(iter_sgd_events(tmp_path))
    # found by review: a turn with no frames was a bare "max() arg is an empty sequence"
    bad.write_text('[{"dialogue_id": "y", "turns": [{"speaker": "USER", "utterance": "hi", "frames": []}]}]')
    with pytest.raises(SAMFileError, match="dialogues_001.json.*'y' is malformed"):
        list(iter_sgd_events(tmp_path))
    # ... and one file both plain and gzipped was read twice, into a log that failed validation
    (tmp_path / "dialogues_001.json.gz").write_bytes(gzip.compress(bad.read_bytes()))
    assert main([str(tmp_path), str(tmp_path / "o.jsonl")]) != 0
    err = capsys.readouterr().err
    assert "dialogues_001.json is there both plain and as dialogues_001.json.gz" in err and err.count("error:") == 1


def _frame(intent: str, n_actions: int, value: str = "x") -> dict:
    action = {"act": "INFORM", "slot": "s", "values": [value], "canonical_values": []}
    return {"actions": [action] * n_actions,
            "state": {"active_intent": intent, "requested_slots": [], "slot_values": {"s": [value]}}}


def test_user_frame_and_intent_stack():
    """Multi-frame user turns (absent from the golden file): the first frame with the most actions wins."""
    user = [[_frame("A", 1), _frame("B", 2)], [_frame("NONE", 1)], [_frame("B", 1), _frame("C", 1)],
            [_frame("A", 1)]]
    turns = [{"speaker": "USER", "utterance": str(i), "frames": f} for i, f in enumerate(user)]
    events = convert_dialogue({"dialogue_id": "t", "turns": turns})
    assert [e["state"]["phase"] for e in events] == ["B", "NONE", "B", "A"]
    assert events[-1]["state"]["subgoal_stack"] == ["B", "A"]  # NONE skipped, repeated B not re-pushed


def test_bad_label_is_rejected():
    with pytest.raises(ValueError, match="label"):
        convert_dialogue({"dialogue_id": "x", "turns": []}, label="first")  # type: ignore[arg-type]


@needs_sgd
def test_every_keeps_one_dialogue_in_k_across_files(tmp_path):
    """A strided sample spreads over all files (SGD files are grouped by service); max counts kept ones."""
    ids = [d["dialogue_id"] for d in iter_sgd_dialogues(DEV, max_dialogues=30)]
    assert [d["dialogue_id"] for d in iter_sgd_dialogues(DEV, max_dialogues=10, every=3)] == ids[::3]
    episodes = {e["episode_id"] for e in iter_sgd_events(DEV, max_dialogues=4, every=5)}
    assert episodes == {"sgd-" + i for i in ids[:20:5]}
    assert main([str(DEV), str(tmp_path / "x.jsonl"), "--max-dialogues", "2", "--every", "7"]) == 0
    lines = (tmp_path / "x.jsonl").read_text(encoding="utf-8").splitlines()
    assert {json.loads(x)["episode_id"] for x in lines} == {"sgd-" + ids[0], "sgd-" + ids[7]}
    with pytest.raises(ValueError, match="every"):
        list(iter_sgd_dialogues(DEV, every=0))


def _dialogue(did: str = "1_00001", utterance: object = "Book a table at Nopa") -> dict:
    """A small SGD dialogue: a user turn, then a system turn that calls a service."""
    user = {"speaker": "USER", "utterance": utterance, "frames": [_frame("ReserveRestaurant", 1, "Nopa")]}
    call = {"method": "ReserveRestaurant", "parameters": {"restaurant_name": "Nopa"}}
    system = {"speaker": "SYSTEM", "utterance": "Booked.", "frames": [
        {"actions": [], "service_call": call, "service_results": [{"restaurant_name": "Nopa"}]}]}
    return {"dialogue_id": did, "services": ["Restaurants_1"], "turns": [user, system]}


def _split(tmp_path: Path, content: str | bytes, name: str = "dialogues_001.json") -> Path:
    split = tmp_path / "split"
    split.mkdir(exist_ok=True)
    (split / "schema.json").write_text("[]", encoding="utf-8")
    f = split / name
    f.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return split


def _refused(split: Path, tmp_path: Path, capsys) -> str:
    """The one error line of ``sam-data sgd`` on ``split``, after checking it wrote nothing."""
    out = tmp_path / "o.jsonl"
    assert main([str(split), str(out)]) == 1
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and "Traceback" not in err, err
    assert not out.exists()
    return errors[0]


def test_strict_json_is_refused_where_it_is(tmp_path, capsys):
    """Found by review: a bare NaN slot value went on into the log (bare NaN, refused by the validator) and a key
    given twice in one object was read as its last value; both are now named by file, dialogue and turn."""
    nan = json.dumps([_dialogue("1_00001"), _dialogue("1_00002")]).replace('"values": ["Nopa"]', '"values": [NaN]', 3)
    err = _refused(_split(tmp_path, nan), tmp_path, capsys)
    assert "dialogues_001.json: dialogue '1_00001', turn 0: bare NaN is not JSON" in err
    twice = json.dumps([_dialogue("1_00001"), _dialogue("1_00002")])
    twice = twice[::-1].replace('"METSYS" :"rekaeps"', '"RESU" :"rekaeps" ,"METSYS" :"rekaeps"', 1)[::-1]
    err = _refused(_split(tmp_path, twice), tmp_path, capsys)
    assert "dialogue '1_00002', turn 1: the key 'speaker' is given twice in one object (keep one)" in err
    with pytest.raises(SAMFileError, match="1_00002', turn 1"):  # training and evaluate read SGD this way
        list(iter_sgd_events(tmp_path / "split"))


def test_deep_nesting_is_one_line(tmp_path, capsys):
    """Found by review: a dialogues file nested 100,000 deep was a RecursionError traceback, here and in training."""
    split = _split(tmp_path, "[" * 100_000 + "]" * 100_000)
    assert "dialogues_001.json: nested too deeply" in _refused(split, tmp_path, capsys)
    with pytest.raises(SAMFileError, match="nested too deeply"):
        list(iter_sgd_events(split))


def test_encodings_get_the_right_advice(tmp_path, capsys):
    """Found by review: a gzip file named .json, a UTF-16 or a Latin-1 file were all "can't decode byte ...
    (re-download or remove it)"; a UTF-8 byte-order mark was refused though the log reader accepts one."""
    text = json.dumps([_dialogue(utterance="Book a table at Nopa, café")], ensure_ascii=False)
    err = _refused(_split(tmp_path, gzip.compress(text.encode("utf-8"))), tmp_path, capsys)
    assert "gzip-compressed but not named .gz: rename it dialogues_001.json.gz" in err
    err = _refused(_split(tmp_path, text.encode("utf-16")), tmp_path, capsys)
    assert "dialogues_001.json is UTF-16 or UTF-32, not UTF-8: re-save it as UTF-8" in err
    err = _refused(_split(tmp_path, text.encode("latin-1")), tmp_path, capsys)
    assert "dialogues_001.json: not UTF-8 (line 1, byte" in err and "re-save it as UTF-8" in err
    split = _split(tmp_path, "\ufeff" + text)
    assert list(iter_sgd_events(split)) == convert_dialogue(json.loads(text)[0])


def test_turns_the_log_would_refuse_are_named(tmp_path, capsys):
    """Found by review: a null utterance became "text": null and another speaker a system turn, both exit 0 (the
    validator then refused the log, or it held a wrong event); now one line names the dialogue and turn."""
    bad = _dialogue("1_00002", utterance=None)
    err = _refused(_split(tmp_path, json.dumps([_dialogue(), bad])), tmp_path, capsys)
    assert err.endswith("dialogues_001.json: dialogue '1_00002', turn 0: utterance null is not a string (every turn "
                        "becomes an event with its text): give the turn's text, or remove the dialogue")
    bad = _dialogue("1_00002")
    bad["turns"][1]["speaker"] = "AGENT"
    err = _refused(_split(tmp_path, json.dumps([_dialogue(), bad])), tmp_path, capsys)
    assert "dialogue '1_00002', turn 1: speaker \"AGENT\" is neither USER nor SYSTEM" in err
    with pytest.raises(SAMFileError, match="turn 1: speaker"):
        list(iter_sgd_dialogues(tmp_path / "split"))


def test_a_dialogue_id_twice_is_refused(tmp_path, capsys):
    """Found by review: two dialogues with one dialogue_id gave one episode with every step twice (the validator's
    "duplicate step"), in one file or across two."""
    split = _split(tmp_path, json.dumps([_dialogue("1_00001"), _dialogue("1_00001")]))
    err = _refused(split, tmp_path, capsys)
    assert "dialogues_001.json: dialogue '1_00001' is there a second time (first in dialogues_001.json)" in err
    _split(tmp_path, json.dumps([_dialogue("1_00001")]))
    _split(tmp_path, json.dumps([_dialogue("1_00001")]), "dialogues_002.json")
    err = _refused(split, tmp_path, capsys)
    assert "dialogues_002.json: dialogue '1_00001' is there a second time (first in dialogues_001.json)" in err


def test_an_empty_split_is_refused_unless_allowed(tmp_path, capsys):
    """Found by review: a split whose files hold [] wrote an empty log with exit 0, which `sam-data validate` and
    `transcripts` refuse without --allow-empty; now it is refused too, and --allow-empty writes it as they do."""
    split = _split(tmp_path, "[]")
    err = _refused(split, tmp_path, capsys)
    assert "split: no dialogue in dialogues_001.json (an empty list)" in err and "--allow-empty" in err
    with pytest.raises(SAMFileError, match="no dialogue in"):  # training reads an SGD folder this way
        list(iter_sgd_events(split))
    assert list(iter_sgd_events(split, allow_empty=True)) == [] == list(iter_sgd_dialogues(split, max_dialogues=0))
    out = tmp_path / "o.jsonl"
    assert main([str(split), str(out), "--allow-empty"]) == 0 and out.read_bytes() == b""
    _split(tmp_path, json.dumps([_dialogue()]), "dialogues_002.json")  # one empty file beside others is fine
    assert main([str(split), str(out)]) == 0 and len(out.read_text(encoding="utf-8").splitlines()) == 4


@needs_sgd
def test_an_existing_out_that_is_no_agent_log_is_not_replaced(tmp_path, capsys):
    """As for the transcript importer (found by review there): OUT was replaced whatever it held."""
    notes = tmp_path / "notes.jsonl"
    notes.write_text("my notes\n")
    assert main([str(DEV), str(notes), "--max-dialogues", "1"]) == 1
    assert "exists and is not an agent log" in capsys.readouterr().err and notes.read_text() == "my notes\n"
    assert main([str(DEV), str(notes), "--max-dialogues", "1", "--force"]) == 0
    assert json.loads(notes.read_text().splitlines()[0])["episode_id"].startswith("sgd-")


@pytest.mark.parametrize("field, value, says", [
    ("active_intent", 5, "state.active_intent 5 is not a string"),
    ("requested_slots", "date", 'state.requested_slots "date" is not a list of slot names'),
    ("slot_values", {"restaurant_name": "Nopa"}, 'state.slot_values.restaurant_name "Nopa" is not a list of strings'),
    ("slot_values", {"city": [{"name": "SF"}]}, 'state.slot_values.city [{"name": "SF"}] is not a list of strings'),
])
def test_a_user_state_the_log_would_refuse_or_cut_up_is_named(tmp_path, capsys, field, value, says):
    """Found by review: an intent that is a number became "phase": 5, a log the validator refuses, and a string where
    SGD has a list was cut up silently (requested_slots "date" became the flags d, a, t, e; a slot value "Nopa" the
    constraint "N"), all exit 0; now one line names the dialogue, turn and field, and nothing is written."""
    bad = _dialogue("1_00002")
    bad["turns"][0]["frames"][0]["state"][field] = value
    err = _refused(_split(tmp_path, json.dumps([_dialogue(), bad])), tmp_path, capsys)
    assert f"dialogues_001.json: dialogue '1_00002', turn 0: {says}" in err and "fix the turn" in err


@pytest.mark.parametrize("method", [["ReserveRestaurant"], True, ""])
def test_a_service_call_without_a_method_name_is_named(tmp_path, capsys, method):
    """Found by fuzzing the converter: a service call whose method is no string became the phase of the decision
    point before it ("phase": ["ReserveRestaurant"]), a log the validator refuses, exit 0."""
    bad = _dialogue("1_00002")
    bad["turns"][1]["frames"][0]["service_call"]["method"] = method
    err = _refused(_split(tmp_path, json.dumps([_dialogue(), bad])), tmp_path, capsys)
    assert "dialogue '1_00002', turn 1: frame 0: service_call {\"method\": " in err and "has no method name" in err
