"""Generated worlds whose tasks turn, after their calls, to a new request (sam_model.data.toolplots' Story.turn):
issue 21's diagnosed gap is the ranking of memories no earlier call of the task used, which the worlds rarely
asked for; bench.lodo's ``turns`` variant trains on them."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from test_generalise import FREE_60_5, _digest

from sam_model.data import toolplots, toolworlds
from sam_model.data.transcripts import iter_transcript_events


def test_turn_zero_keeps_every_earlier_world_and_its_cache_file(tmp_path):
    from sam_model.data.sources import SourceOptions, materialise

    assert _digest(toolworlds.generate(60, 5, plots="free", turn=0.0)) == FREE_60_5
    assert _digest(toolworlds.generate(60, 5, plots="free", brief=0.5, turn=0.0)) == \
        _digest(toolworlds.generate(60, 5, plots="free", brief=0.5))
    materialise("toolworlds:12:1:0:free:0.5", SourceOptions(), tmp_path)
    materialise("toolworlds:12:1:0:free:0.5:0.5", SourceOptions(), tmp_path)
    briefed, turned = tmp_path / "toolworlds-n12-s1-free-b0.5.jsonl.gz", tmp_path / "toolworlds-n12-s1-free-b0.5-t0.5.jsonl.gz"
    assert briefed.exists() and turned.exists()  # its own file: the briefed worlds' cache is not read for it
    assert gzip.open(briefed).read() != gzip.open(turned).read()
    materialise("toolworlds:12:1:0:free:0:0.5", SourceOptions(), tmp_path)
    assert (tmp_path / "toolworlds-n12-s1-free-t0.5.jsonl.gz").exists()
    for bad in ("toolworlds:12:1:0:free:0.5:1.5", "toolworlds:12:1:0:fixed:0:0.5", "toolworlds:12:1:0:free:0.5:0.5:1"):
        with pytest.raises(ValueError, match="TURN"):
            materialise(bad, SourceOptions(), tmp_path)


def test_decisions_after_a_turn_are_labelled_by_the_turns_new_values(tmp_path):
    path = toolworlds.write(tmp_path / "t.jsonl.gz", 60, seed=2, plots="free", brief=0.5, turn=1.0)
    events = list(iter_transcript_events(path))
    episodes: dict[str, list[dict]] = {}
    for e in events:
        episodes.setdefault(e["episode_id"], []).append(e)
    assert len(episodes) == 60
    after_turn = 0
    for eid, evs in episodes.items():
        turns = [e["step"] for e in evs if e["kind"] == "user" and e["text"].startswith(toolplots.TURNS)]
        assert len(turns) == 1, (eid, [e["text"] for e in evs if e["kind"] == "user"])
        turn = turns[0]
        decisions = [e for e in evs if e.get("useful_memory_steps")]
        before = {s for d in decisions if d["step"] < turn for s in d["useful_memory_steps"]}
        later = [d for d in decisions if d["step"] > turn]
        assert later, eid  # the turn's request is acted on
        for d in later:  # every label is an event of the turn, and none is a memory an earlier call used
            assert min(d["useful_memory_steps"]) >= turn and not before & set(d["useful_memory_steps"]), (eid, d)
        after_turn += len(later)
        assert before  # the task had calls before it turned
    assert after_turn >= 60
    # the new values come from the user, the agent and tool results, not one sayer
    kinds = {e["kind"] for evs in episodes.values() for d in evs if d.get("useful_memory_steps")
             for e in evs if e["step"] in d["useful_memory_steps"] and e["step"] >= _turn(evs)}
    assert len(kinds) >= 3, kinds


def _turn(evs: list[dict]) -> int:
    return next(e["step"] for e in evs if e["kind"] == "user" and e["text"].startswith(toolplots.TURNS))


def test_half_the_turns_variants_conversations_turn_and_it_is_reuse_plus_that():
    from sam_model.bench import lodo

    turns, reuse = lodo.VARIANTS["turns"], lodo.VARIANTS["reuse"]
    assert turns.configs == reuse.configs and turns.on == "reuse"
    assert (turns.worlds, turns.plots, turns.brief, turns.turn) == (reuse.worlds, reuse.plots, reuse.brief, 0.5)
    assert lodo.train_sources("coding", Path("/d"), turns, 300)[0][-1] == "toolworlds:300:0:0:free:0.5:0.5"
    assert lodo.train_sources("coding", Path("/d"), reuse, 300)[0][-1] == "toolworlds:300:0:0:free:0.5"
    stories = [toolplots.tell(toolplots.world(r, 0), r, 0.5, 0.5) for r in map(__import__("random").Random, range(200))]
    share = sum(s.turned_at is not None for s in stories) / len(stories)
    assert 0.35 < share < 0.65, share


def test_shares_that_differ_past_six_digits_get_their_own_cache_files(tmp_path):
    # the file name held a share as {:g} (six significant digits): TURN 0.1234567 was served 0.1234568's worlds
    from sam_model.data.sources import SourceOptions, materialise

    for turn in ("0.1234567", "0.1234568"):
        materialise(f"toolworlds:12:1:0:free:0.5:{turn}", SourceOptions(), tmp_path)
    assert len(list(tmp_path.glob("toolworlds-n12-s1-free-b0.5-t*.jsonl.gz"))) == 2
    assert toolworlds.resolve("toolworlds:12:1:0:free:0.5:0.5", tmp_path).name == "toolworlds-n12-s1-free-b0.5-t0.5.jsonl.gz"
