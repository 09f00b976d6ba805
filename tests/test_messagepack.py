"""The MessagePack decoder (sam_model.data.formats.messagepack) on bytes made by hand from the spec, every type and
width; data only (an extension is its bytes, a timestamp its datetime); nesting and lengths bounded; a cut or bad
input one line saying what and where."""

from __future__ import annotations

import struct
from datetime import datetime, timezone
from typing import Any

import pytest

from sam_model.data.formats.messagepack import MAX_DEPTH, MessagePackError, json_like, load_prefix, loads

CASES = [
    (b"\xc0", None), (b"\xc2", False), (b"\xc3", True),
    (b"\x00", 0), (b"\x7f", 127), (b"\xe0", -32), (b"\xff", -1),
    (b"\xcc\xff", 255), (b"\xcd\x01\x00", 256), (b"\xce\x00\x01\x00\x00", 65536),
    (b"\xcf\xff\xff\xff\xff\xff\xff\xff\xff", 2**64 - 1),
    (b"\xd0\x80", -128), (b"\xd1\x80\x00", -32768), (b"\xd2\x80\x00\x00\x00", -2**31),
    (b"\xd3\x80\x00\x00\x00\x00\x00\x00\x00", -2**63),
    (b"\xca" + struct.pack(">f", 1.5), 1.5), (b"\xcb" + struct.pack(">d", -0.1), -0.1),
    (b"\xa0", ""), (b"\xa3abc", "abc"), (b"\xd9\x02\xc3\xa9", "é"), (b"\xda\x00\x01x", "x"),
    (b"\xdb\x00\x00\x00\x01y", "y"),
    (b"\xc4\x02\x00\x01", b"\x00\x01"), (b"\xc5\x00\x01z", b"z"), (b"\xc6\x00\x00\x00\x00", b""),
    (b"\x90", []), (b"\x92\x01\xa1a", [1, "a"]), (b"\xdc\x00\x01\xc0", [None]), (b"\xdd\x00\x00\x00\x01\xc3", [True]),
    (b"\x80", {}), (b"\x82\xa1k\x01\x02\xc2", {"k": 1, 2: False}), (b"\xde\x00\x01\xa1k\x90", {"k": []}),
    (b"\xdf\x00\x00\x00\x01\xc4\x01b\x80", {b"b": {}}),
    # extensions: their bytes, whatever their type (none is handed to code)
    (b"\xd4\x05a", b"a"), (b"\xd5\x05ab", b"ab"), (b"\xd6\x05abcd", b"abcd"), (b"\xd7\x05" + b"8" * 8, b"8" * 8),
    (b"\xd8\x05" + b"g" * 16, b"g" * 16), (b"\xc7\x03\x7fxyz", b"xyz"), (b"\xc8\x00\x01\x01q", b"q"),
    (b"\xc9\x00\x00\x00\x00\x01", b""),
    # the timestamp (type -1) in its three widths
    (b"\xd6\xff" + struct.pack(">I", 1704067200), datetime(2024, 1, 1, tzinfo=timezone.utc)),
    (b"\xd7\xff" + ((123456000 << 34) | 1704067200).to_bytes(8, "big"),
     datetime(2024, 1, 1, 0, 0, 0, 123456, tzinfo=timezone.utc)),
    (b"\xc7\x0c\xff" + struct.pack(">Iq", 0, -86400), datetime(1969, 12, 31, tzinfo=timezone.utc)),
]


@pytest.mark.parametrize(("raw", "value"), CASES, ids=[c[0][:3].hex() for c in CASES])
def test_every_type_decodes_as_the_spec_says(raw, value):
    got = loads(raw)
    assert got == value and type(got) is type(value)


def test_a_stream_of_values_is_read_one_at_a_time():
    raw = b"\x01\xa1a\x91\xc0"
    assert load_prefix(raw) == (1, 1) and load_prefix(raw, 1) == ("a", 3) and load_prefix(raw, 3) == ([None], 5)


@pytest.mark.parametrize(("raw", "says"), [
    (b"", "cut short: a value at byte 0 needs 1 byte(s), 0 are left"),
    (b"\xa5abc", "cut short: a value at byte 1 needs 5 byte(s), 3 are left"),
    (b"\xcd\x01", "needs 2 byte(s), 1 are left"),
    (b"\x82\xa1k\x01", "cut short: the map before byte 1 says 4 items, 3 byte(s) are left"),
    (b"\xdd\xff\xff\xff\xff", "the array before byte 5 says 4294967295 items, 0 byte(s) are left"),  # no list made
    (b"\xdb\xff\xff\xff\xff", "needs 4294967295 byte(s), 0 are left"),
    (b"\xc1", "byte 0 is 0xc1, which MessagePack never uses"),
    (b"\xa2\xc3\x28", "the string at byte 0 is not UTF-8 (byte 1)"),
    (b"\x01\x02", "1 byte(s) after the value, from byte 1"),
    (b"\x81\x90\x01", "the map key at byte 1 is an array or a map"),
    (b"\xd5\xff\x00\x00", "the timestamp at byte 0 has 2 bytes"),
    (b"\xc7\x0c\xff" + struct.pack(">Iq", 0, 2**62), "the timestamp at byte 0 is out of the years 1-9999"),
])
def test_bad_input_is_one_line_saying_what_and_where(raw, says):
    with pytest.raises(MessagePackError) as err:
        loads(raw)
    assert says in str(err.value) and "\n" not in str(err.value)


def test_nesting_is_bounded():
    assert loads(b"\x91" * (MAX_DEPTH - 1) + b"\x90") is not None  # MAX_DEPTH arrays deep: read
    with pytest.raises(MessagePackError, match="nested too deeply"):
        loads(b"\x91" * MAX_DEPTH + b"\x90")
    with pytest.raises(MessagePackError, match="nested too deeply"):
        loads(b"\x81\xa1k" * 5 + b"\x80", max_depth=4)


def test_json_like_is_what_msgspec_s_json_would_hold():
    value = loads(b"\x84\xa1b\xc4\x02hi\x01\xc3\xc0\x90\xa1t\xd6\xff" + struct.pack(">I", 1704067200))
    assert json_like(value) == {"b": "aGk=", "1": True, "null": [], "t": "2024-01-01T00:00:00Z"}


def test_what_another_implementation_encodes_decodes_alike():
    ormsgpack = pytest.importorskip("ormsgpack")
    value = {"type": "session", "n": [0, -1, 2**40, -2**40, 0.25, None, True], "s": "é" * 40, "deep": [[[{}]]],
             "long": list(range(70000)), "map": {str(i): i for i in range(20)}, "bin": b"\x00" * 300}
    assert loads(ormsgpack.packb(value)) == value


def _ts64(seconds: int, nanos: int) -> bytes:
    return b"\xd7\xff" + ((nanos << 34) | seconds).to_bytes(8, "big")


def _ts96(seconds: int, nanos: int) -> bytes:
    return b"\xc7\x0c\xff" + struct.pack(">Iq", nanos, seconds)


@pytest.mark.parametrize("raw", [_ts64(5, 10**9), _ts64(5, 2**30 - 1), _ts96(5, 10**9), _ts96(5, 2**32 - 1)],
                         ids=["64 1e9", "64 max", "96 1e9", "96 max"])
def test_a_timestamp_of_a_second_or_more_of_nanoseconds_is_refused(raw):
    """The spec's nanoseconds are under 10**9 (msgspec refuses more): 10**9 and up were read as a later second
    (up to 4 more), a time no writer wrote."""
    with pytest.raises(MessagePackError, match=r"the timestamp at byte 0 has [0-9]+ nanoseconds \(under 1000000000"):
        loads(raw)


@pytest.mark.parametrize(("raw", "value"), [
    (_ts64(5, 999_999_999), datetime(1970, 1, 1, 0, 0, 6, tzinfo=timezone.utc)),
    (_ts64(5, 1500), datetime(1970, 1, 1, 0, 0, 5, 2, tzinfo=timezone.utc)),
    (_ts64(5, 499), datetime(1970, 1, 1, 0, 0, 5, tzinfo=timezone.utc)),
    (_ts96(-1, 999_999_999), datetime(1970, 1, 1, tzinfo=timezone.utc)),
], ids=["up to a second", "half up", "down", "before 1970"])
def test_a_timestamp_s_nanoseconds_round_to_the_nearest_microsecond_as_msgspec_s(raw, value):
    """A datetime holds microseconds: msgspec rounds a timestamp's nanoseconds to the nearest (half up), this reader
    cut them (5.999999999 s read as 5.999999, msgspec's 6), so one file read two ways."""
    assert loads(raw) == value
    with pytest.raises(MessagePackError, match="out of the years 1-9999"):  # rounded past 9999-12-31T23:59:59.999999
        loads(_ts96(253402300799, 999_999_999))


def test_random_values_decode_as_msgspec_decodes_them_and_damage_is_one_line():
    """Differential: seeded random values (every width of every type, timestamps of any nanoseconds) packed by
    msgspec, which Agent Framework writes its stores with, read here as msgspec reads them; each cut, dropped,
    changed or added byte is a value or one MessagePackError, never another exception."""
    import math
    import random

    msgspec = pytest.importorskip("msgspec")
    rng = random.Random(7)
    ints = [0, 127, 128, -32, -33, 255, 256, -129, 65536, -32769, 2**32, -2**31 - 1, 2**63, 2**64 - 1, -2**63]

    def value(depth: int = 0) -> Any:
        kind = rng.randrange(10 if depth < 3 else 6)
        if kind == 0:
            return rng.choice([None, True, False, rng.choice(ints), rng.random() * 1e300, math.inf, -0.0])
        if kind == 1:
            return "".join(chr(rng.choice([rng.randrange(32, 127), rng.randrange(0xa0, 0xd800), 0x1f600]))
                           for _ in range(rng.choice([0, 1, 31, 32, 256])))
        if kind == 2:
            return rng.randbytes(rng.choice([0, 1, 255, 256]))
        if kind == 3:
            return msgspec.msgpack.Ext(rng.choice([-1, 5]), rng.randbytes(rng.choice([4, 8, 12])))
        if kind in (4, 5):
            return min(max(rng.choice(ints) + rng.randrange(-2, 3), -2**63), 2**64 - 1)
        if kind in (6, 7):
            return [value(depth + 1) for _ in range(rng.choice([0, 1, 2, 16]))]
        keys = [rng.choice(["k", "a longer key" * 3, rng.choice(ints), 2.5, b"b"]) for _ in range(rng.choice([0, 1, 16]))]
        return {k: value(depth + 1) for k in keys}

    def plain(v: Any) -> Any:  # msgspec's other extensions as their bytes, as this reader gives them
        if isinstance(v, dict):
            return {plain(k): plain(x) for k, x in v.items()}
        if isinstance(v, list):
            return [plain(x) for x in v]
        return v.data if isinstance(v, msgspec.msgpack.Ext) else v

    def read(reader: Any, raw: bytes) -> Any:
        try:
            return plain(reader(raw))
        except (MessagePackError, msgspec.DecodeError, ValueError):  # msgspec's year 10000 is a ValueError
            return "refused"

    def damage(raw: bytes) -> bytes:
        out, at = bytearray(raw), rng.randrange(len(raw))
        how = rng.randrange(4)
        if how == 0:
            del out[at:]
        elif how == 1:
            del out[at]
        elif how == 2:
            out[at] = rng.randrange(256)
        else:
            out.insert(at, rng.randrange(256))
        return bytes(out)

    for _ in range(300):
        raw = msgspec.msgpack.encode(value())
        assert repr(read(loads, raw)) == repr(read(msgspec.msgpack.decode, raw)), raw[:80]
        for _ in range(10):
            try:
                loads(damage(raw))
            except MessagePackError as exc:
                assert "\n" not in str(exc)


def test_a_key_given_twice_keeps_the_last_value_unless_a_list_or_map_would_be_lost():
    """As a log's JSON is read (base._last_value_wins): a key twice in one map keeps its last value (msgspec's, the
    app's), but one whose dropped value is an array or a map (a session's messages twice, two writes run together)
    is refused; it lost a whole conversation without a word. Keys that are one once written as JSON's strings (1 and
    "1", the number and its digits) likewise."""
    assert loads(b"\x82\xa1k\x01\xa1k\x02") == {"k": 2} and json_like(loads(b"\x82\x01\x01\xa11\x02")) == {"1": 2}
    with pytest.raises(MessagePackError, match=r"the map key 'k' at byte 5 is given twice and its first value, an "
                                               r"array, would be dropped \(keep one\)"):
        loads(b"\x82\xa1k\x91\x01\xa1k\x02")
    with pytest.raises(MessagePackError, match="the map key '1' is given twice and its first value, a map, would"):
        json_like(loads(b"\x82\x01\x81\x01\x01\xa11\x02"))
