"""Where the changes of one day met (readers, session folders, failure flags, search by call, add in any format):
each test here is a place where one change undid or bypassed another, and fails on the code before its fix."""

from __future__ import annotations

import json

from sam_model.data import sources


def _pairs_line() -> str:
    """An older OpenHands evaluation line: [action, observation] pairs whose observations name no cause."""
    null = {"observation": "null", "content": "", "extras": {}, "message": "No observation"}
    history = [
        [{"source": "user", "action": "message", "args": {"content": "tinyparse crashes on an empty header block"}},
         {"source": "agent", **null}],
        [{"source": "agent", "action": "run", "args": {"command": "grep -rl parse_header src"}},
         {"source": "agent", "observation": "run", "content": "src/tinyparse/reader.py\r\n", "extras": {}}],
        [{"source": "agent", "action": "read", "args": {"path": "src/tinyparse/reader.py"}},
         {"source": "agent", "observation": "read", "content": "def parse_header", "extras": {}}]]
    return json.dumps({"instance_id": "tinyparse__tinyparse-1", "history": history}) + "\n"


def test_a_log_converted_before_the_openhands_pairs_were_read_is_converted_again(tmp_path, monkeypatch):
    """The causeless [action, observation] pairs of an older OpenHands evaluation changed from user turns to the
    actions' results after CONVERSION_VERSION 7 was set, with no new version ('same stop as the reader'), so
    train.py and evaluate.py kept a conversion cached under 7 by the reader before it (the cache is per machine)."""
    path = tmp_path / "output.jsonl"
    path.write_text(_pairs_line())
    monkeypatch.setattr(sources, "CONVERSION_VERSION", 7)
    old = sources.materialise(path, cache_dir=tmp_path / "cache")
    old.write_text(old.read_text().replace('"kind": "result"', '"kind": "user"'))  # what the reader wrote then
    monkeypatch.undo()
    new = sources.materialise(path, cache_dir=tmp_path / "cache")
    assert new != old
    assert [json.loads(line)["kind"] for line in new.read_text().splitlines()].count("result") == 2
