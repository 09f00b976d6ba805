"""The write-ahead log: what was appended comes back in order; a torn last line (a write killed before its
fsync returned, never acknowledged) is dropped and cut off; damage before the end is named with its line."""

from __future__ import annotations

import errno
import os

import pytest

from sam_model.io import SAMFileError
from sam_model.serve.wal import LogWriteError, WriteAheadLog


def test_records_come_back_in_order_after_a_reopen(tmp_path):
    wal = WriteAheadLog(tmp_path / "wal.log")
    for i in range(5):
        assert wal.append("add", {"data": f"fact {i}", "user_id": "mia"}) == i + 1
    wal.close()
    back = WriteAheadLog(tmp_path / "wal.log")
    assert back.seq == 5 and [r["args"]["data"] for r in back.records(after=3)] == ["fact 3", "fact 4"]
    back.drop_through(5)
    assert back.records() == [] and back.append("delete", {"memory_id": "x"}) == 6  # seq never repeats


def test_a_checkpoint_drops_only_the_records_it_holds(tmp_path):
    path = tmp_path / "wal.log"
    wal = WriteAheadLog(path)
    for i in range(5):
        wal.append("add", {"data": f"fact {i}"})
    wal.drop_through(3)  # records 4 and 5 came after the checkpoint's copy
    assert [r["seq"] for r in wal.records()] == [4, 5] and (path.stat().st_mode & 0o777) == 0o600
    assert wal.append("add", {"data": "fact 5"}) == 6  # appends go to the new file, after the kept records
    wal.close()
    back = WriteAheadLog(path)
    assert back.seq == 6 and [r["args"]["data"] for r in back.records()] == ["fact 3", "fact 4", "fact 5"]
    assert not [p for p in tmp_path.iterdir() if p != path]  # no staging file left beside the log


def test_a_cut_keeps_each_writes_lines_together_across_reopens(tmp_path):
    """drop_through cuts where the checkpoint's last write's lines end (the write and the record attached to it),
    also for a log opened again, and keeps what follows byte for byte."""
    path = tmp_path / "wal.log"
    wal = WriteAheadLog(path)
    for i in range(4):
        seq = wal.append("add", {"data": f"fact {i}"})
        wal.attach(seq, "vectors", {"ids": [f"m{i}"]})
    wal.close()
    wal = WriteAheadLog(path)
    wal.drop_through(2)
    assert [(r["seq"], r["op"]) for r in wal.records()] == [(3, "add"), (3, "vectors"), (4, "add"), (4, "vectors")]
    wal.append("add", {"data": "fact 4"})
    wal.drop_through(4)
    assert [r["args"]["data"] for r in wal.records()] == ["fact 4"]
    wal.drop_through(0)  # a seq before every record: nothing goes
    assert [r["seq"] for r in WriteAheadLog(path).records()] == [5]


@pytest.mark.parametrize("tail", [b"0badc0de {\"seq\": 4", b"12345678 {\"seq\":4,\"op\":\"add\",\"args\":{}}\n"])
def test_a_torn_last_line_is_dropped_and_cut_off(tmp_path, tail):
    path = tmp_path / "wal.log"
    wal = WriteAheadLog(path)
    for i in range(3):
        wal.append("add", {"data": f"fact {i}"})
    wal.close()
    with open(path, "ab") as f:
        f.write(tail)  # unterminated, or a bad checksum on the last line
    back = WriteAheadLog(path)
    assert back.seq == 3 and len(back.records()) == 3
    back.append("add", {"data": "next"})
    assert [r["seq"] for r in WriteAheadLog(path).records()] == [1, 2, 3, 4]


def test_damage_before_the_last_line_is_named(tmp_path):
    path = tmp_path / "wal.log"
    wal = WriteAheadLog(path)
    for i in range(3):
        wal.append("add", {"data": f"fact {i}"})
    wal.close()
    lines = path.read_bytes().split(b"\n")
    lines[1] = lines[1].replace(b"fact 1", b"fact X")
    path.write_bytes(b"\n".join(lines))
    with pytest.raises(SAMFileError, match=r"wal.log: line 2 is damaged"):
        WriteAheadLog(path)


def test_a_short_write_is_written_on_to_its_end(tmp_path, monkeypatch):
    """os.write may take part of a line and say so only by its count (a nearly full disk)."""
    real = os.write
    monkeypatch.setattr(os, "write", lambda fd, data: real(fd, bytes(data[:7])))  # 7 bytes a call
    wal = WriteAheadLog(tmp_path / "wal.log")
    wal.append("add", {"data": "fact 0"})
    wal.append("add", {"data": "fact 1"})
    monkeypatch.setattr(os, "write", real)
    wal.close()
    assert [r["args"]["data"] for r in WriteAheadLog(tmp_path / "wal.log").records()] == ["fact 0", "fact 1"]


@pytest.mark.parametrize("fail", ["write", "fsync"])
def test_a_write_the_disk_refuses_leaves_no_torn_line(tmp_path, monkeypatch, fail):
    """A failed append raises LogWriteError and cuts its part off: later appends follow the last good line, and
    a restart reads every record (a torn line before them stopped every start: 'damaged ... not the last')."""
    path = tmp_path / "wal.log"
    wal = WriteAheadLog(path)
    wal.append("add", {"data": "fact 0"})
    real_write, real_fsync = os.write, os.fsync

    def full(fd, data):  # part of the line, then the disk is full
        real_write(fd, bytes(data[:10]))
        raise OSError(errno.ENOSPC, "No space left on device")

    def no_sync(fd):
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(os, fail, full if fail == "write" else no_sync)
    with pytest.raises(LogWriteError, match="could not be logged.*send it again"):
        wal.append("delete", {"memory_id": "mia#0"})
    monkeypatch.setattr(os, "write", real_write)
    monkeypatch.setattr(os, "fsync", real_fsync)
    assert wal.seq == 1 and wal.append("add", {"data": "fact 1"}) == 2
    wal.close()
    assert [(r["seq"], r["op"]) for r in WriteAheadLog(path).records()] == [(1, "add"), (2, "add")]


def test_the_last_record_can_be_taken_back_and_its_seq_reused(tmp_path):
    path = tmp_path / "wal.log"
    wal = WriteAheadLog(path)
    wal.append("add", {"data": "fact 0"})
    seq = wal.append("add", {"data": "not applied"})
    with pytest.raises(ValueError, match="not the last one"):
        wal.undo(seq - 1)
    wal.undo(seq)
    assert wal.append("add", {"data": "fact 1"}) == seq
    wal.attach(seq, "vectors", {"ids": []})
    with pytest.raises(ValueError, match="not the last one"):
        wal.undo(seq)  # applied (its vectors were logged): no longer to take back
    wal.close()
    assert [r["args"].get("data") for r in WriteAheadLog(path).records()] == ["fact 0", "fact 1", None]


@pytest.mark.parametrize("record, says", [
    ({"seq": 2, "args": {"data": "x"}}, "has no 'op'"),
    ({"seq": 2, "op": "add", "args": [1]}, r"its 'args' is \[1\], not an object"),
    ({"seq": True, "op": "add", "args": {}}, "its 'seq' is true, not an integer >= 1"),
    ({"seq": 0, "op": "add", "args": {}}, "its 'seq' is 0, not an integer >= 1"),
    ([2, "add"], "is not a JSON object"),
])
@pytest.mark.parametrize("where", ["middle", "last"])
def test_a_line_with_a_good_checksum_that_is_no_record_is_named(tmp_path, record, says, where):
    """Written whole (its checksum holds), such a line is not torn: it is named with its line wherever it is, not
    dropped, and not handed on (no 'op' was a KeyError traceback at start; args [1] was skipped on replay)."""
    import json
    import zlib

    path = tmp_path / "wal.log"
    wal = WriteAheadLog(path)
    for i in range(3):
        wal.append("add", {"data": f"fact {i}"})
    wal.close()
    body = json.dumps(record, separators=(",", ":")).encode()
    bad = b"%08x %s\n" % (zlib.crc32(body), body)
    lines = path.read_bytes().splitlines(keepends=True)
    lines[1:2] = [bad] if where == "middle" else lines[1:2]
    if where == "last":
        lines.append(bad)
    path.write_bytes(before := b"".join(lines))
    line = 2 if where == "middle" else 4
    with pytest.raises(SAMFileError, match=rf"wal\.log: line {line} has a good checksum but {says}.*restore the file"):
        WriteAheadLog(path)
    assert path.read_bytes() == before  # nothing cut off


@pytest.mark.parametrize("fail", ["write", "fsync"])
def test_a_checkpoint_after_a_refused_write_keeps_the_later_writes(tmp_path, monkeypatch, fail):
    """Found by review: a failed fsync cut its line off the file but kept its length in the log's offsets, so the
    next checkpoint's cut fell that many bytes too far and took acknowledged writes after it with it (or tore
    one, which stopped every start)."""
    path = tmp_path / "wal.log"
    wal = WriteAheadLog(path)
    wal.append("add", {"data": "fact 0"})

    def refuse(*_args):
        raise OSError(errno.EIO, "Input/output error")

    with monkeypatch.context() as m:
        m.setattr(os, fail, refuse)
        with pytest.raises(LogWriteError):
            wal.append("add", {"data": "refused, a longer line than the others"})
    for i in range(1, 4):
        wal.append("add", {"data": f"fact {i}"})
    wal.drop_through(2)  # a checkpoint holding writes 1-2, taken while 3 and 4 came in
    wal.append("add", {"data": "fact 4"})
    wal.close()
    assert [r["args"]["data"] for r in WriteAheadLog(path).records()] == ["fact 2", "fact 3", "fact 4"]


def test_each_record_names_its_tenant_and_another_tenants_log_is_refused_unchanged(tmp_path):
    """A log opened for a tenant names it on every record (the write's and the attached one), through a cut; opened
    for another tenant it is refused, naming the line, before its torn last line is cut off; opened for none (or a
    record naming none, from before) anything is read."""
    path = tmp_path / "wal.log"
    wal = WriteAheadLog(path, tenant="acme")
    for i in range(3):
        wal.attach(wal.append("add", {"data": f"fact {i}"}), "vectors", {"ids": [f"m{i}"]})
    wal.drop_through(1)
    wal.close()
    assert [r["tenant"] for r in WriteAheadLog(path, tenant="acme").records()] == ["acme"] * 4
    with open(path, "ab") as f:
        f.write(b"0badc0de {\"seq\": 4")
    before = path.read_bytes()
    with pytest.raises(SAMFileError, match=r"wal\.log: line 1 is a write of tenant 'acme', not 'globex'"):
        WriteAheadLog(path, tenant="globex")
    assert path.read_bytes() == before
    assert WriteAheadLog(path).seq == 3  # no tenant asked: read as it is
