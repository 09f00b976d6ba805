"""The write-ahead log: what was appended comes back in order; a torn last line (a write killed before its
fsync returned, never acknowledged) is dropped and cut off; damage before the end is named with its line."""

from __future__ import annotations

import pytest

from sam_model.io import SAMFileError
from sam_model.serve.wal import WriteAheadLog


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
