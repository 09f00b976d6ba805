"""files.layouts tells a LlamaIndex workflow Context (ctx.to_dict()) in a folder without parsing every other JSON
object of it: each non-list ``.json`` under the folder was parsed whole to be told (a harness's records, a run's
results of many MB). A file that does not hold the string "is_running" (plain or written with \\u escapes) is no
Context, told by looking through its bytes; what is detected is unchanged."""

from __future__ import annotations

import gzip
import json

import pytest

import sam_model.data.formats.files as files

CONTEXT = {"version": 2, "state": {"store_type": "in_memory", "state_data": {"_data": {"num_tool_calls": "2"}}},
           "is_running": False, "workers": {}, "stream_seq": 0}
CHAT = [{"role": "user", "additional_kwargs": {}, "blocks": [{"block_type": "text", "text": "refill please"}]},
        {"role": "assistant", "additional_kwargs": {}, "blocks": [{"block_type": "text", "text": "Done."}]}]


@pytest.fixture
def parsed(monkeypatch):
    """The files :func:`files.documents` is asked to parse."""
    seen = []
    documents = files.documents

    def spy(p):
        seen.append(p.name)
        return documents(p)
    monkeypatch.setattr(files, "documents", spy)
    return seen


def test_a_json_object_that_is_no_context_is_not_parsed(tmp_path, parsed):
    (tmp_path / "chat-1.json").write_text(json.dumps(CHAT))
    (tmp_path / "sub").mkdir()
    record = {"instance": "x", "state": {"log": "y" * 200_000}, "results": list(range(20_000))}  # "state", no flag
    (tmp_path / "sub" / "record.json").write_text(json.dumps(record))
    (tmp_path / "sub" / "more.json.gz").write_bytes(gzip.compress(json.dumps(record).encode()))
    assert files.layouts(tmp_path) == {"llamaindex": [tmp_path / "chat-1.json"]}
    assert "record.json" not in parsed and "more.json.gz" not in parsed, parsed


@pytest.mark.parametrize("write", [
    lambda d: json.dumps(d),  # the flag after a state of 2 MB: past any bounded head
    lambda d: json.dumps(d).replace('"is_running"', '"is\\u005Frunning"'),  # the same key, one character escaped
    lambda d: json.dumps(d, indent=2),
])
@pytest.mark.parametrize("block", [1 << 20, 7])  # 7: the key split by every block boundary there is
def test_a_context_is_told_wherever_its_flag_is(tmp_path, monkeypatch, write, block):
    monkeypatch.setattr(files, "SCAN_BLOCK", block, raising=False)
    big = {**CONTEXT, "state": {**CONTEXT["state"], "pad": "z" * (2_000_000 if block > 7 else 2000)}}
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "ctx-1.json").write_text(write(big))
    (tmp_path / "runs" / "ctx-2.json.gz").write_bytes(gzip.compress(write(big).encode()))
    assert files.layouts(tmp_path) == {"llamaindex": [tmp_path / "runs" / "ctx-1.json",
                                                      tmp_path / "runs" / "ctx-2.json.gz"]}


def test_a_file_holding_the_string_elsewhere_is_parsed_and_told_as_before(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "chat-1.json").write_text(json.dumps(CHAT))
    (tmp_path / "sub" / "note.json").write_text(json.dumps({"text": "is_running", "state": {}}))  # a value, no key
    assert files.layouts(tmp_path) == {"llamaindex": [tmp_path / "chat-1.json"]}


def test_each_object_is_looked_through_once_for_every_key(tmp_path, monkeypatch):
    """A folder's JSON objects were looked through once for a Context's key and again for an ADK session's, each
    record of many MB read twice: once now, both keys looked for together; what is told is unchanged."""
    looked = []
    framing = files.zstdexport.framing
    monkeypatch.setattr(files.zstdexport, "framing", lambda head: (looked.append(head), framing(head))[1])
    record = {"instance": "x", "state": {"log": "y" * 200_000}}
    (tmp_path / "record.json").write_text(json.dumps(record))
    (tmp_path / "ctx.json").write_text(json.dumps(CONTEXT))
    (tmp_path / "chat-1.json").write_text(json.dumps(CHAT))
    assert files.layouts(tmp_path) == {"llamaindex": [tmp_path / "chat-1.json"]}
    assert looked.count(b'{"instan') == 1, looked  # record.json's 8 bytes of head, looked at to scan it
