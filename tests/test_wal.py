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
    back.truncate()
    assert back.records() == [] and back.append("delete", {"memory_id": "x"}) == 6  # seq never repeats


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
