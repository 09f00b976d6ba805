"""A MessagePack decoder for the logs some frameworks write in it (Agent Framework's ``serialization_format="msgpack"``
FileSessionStore and FileHistoryProvider, through msgspec): pure Python, so reading such a log needs no package,
and one code path whether msgspec is installed or not.

Data only: the values are None, booleans, integers, floats, strings, bytes (``bin``), lists and dicts. An extension
type is never handed to code: the timestamp (type -1, what msgspec writes a datetime as) is read as the UTC
datetime it is, any other as its bytes. Nesting is bounded (``max_depth``), and a length that the bytes left cannot
hold is refused before anything is made of it, so a declared length costs nothing; what the bytes do hold costs the
objects made of them (an array of empty arrays, one byte each, about 64 bytes of memory a byte, twice that with
:func:`json_like`'s copy; a JSON file of them about 20). Every fault is a :class:`MessagePackError` saying what and
at which byte.
"""

from __future__ import annotations

import base64
import json
import math
import struct
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

MAX_DEPTH = 100  # deepest nesting of maps and arrays, as a JSON document of a log may have (files.MAX_DEPTH)
TIMESTAMP = -1  # the extension type of the spec's timestamps
NANOS = 10**9  # a timestamp's nanoseconds are fewer (the spec's rule)
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_CONSTANTS = {0xc0: None, 0xc2: False, 0xc3: True}
# fixed-width values: marker -> (bytes, struct format)
_FIXED = {0xca: (4, ">f"), 0xcb: (8, ">d"), 0xcc: (1, ">B"), 0xcd: (2, ">H"), 0xce: (4, ">I"), 0xcf: (8, ">Q"),
          0xd0: (1, ">b"), 0xd1: (2, ">h"), 0xd2: (4, ">i"), 0xd3: (8, ">q")}
_SIZED = {0xc4: ("bin", 1), 0xc5: ("bin", 2), 0xc6: ("bin", 4), 0xd9: ("str", 1), 0xda: ("str", 2), 0xdb: ("str", 4),
          0xdc: ("array", 2), 0xdd: ("array", 4), 0xde: ("map", 2), 0xdf: ("map", 4),
          0xc7: ("ext", 1), 0xc8: ("ext", 2), 0xc9: ("ext", 4)}  # marker -> (kind, bytes of its length)
_FIXEXT = {0xd4: 1, 0xd5: 2, 0xd6: 4, 0xd7: 8, 0xd8: 16}  # marker -> bytes of the extension's data


class MessagePackError(ValueError):
    """Bytes that are no MessagePack value (cut short, a reserved byte, a bad string): what, and at which byte."""


class NotFinite(MessagePackError):
    """A NaN or Infinity float where :func:`loads` was asked for ``finite`` values: good MessagePack, no JSON value."""


def loads(data: bytes, max_depth: int = MAX_DEPTH, finite: bool = False) -> Any:
    """The one value ``data`` holds (bytes after it are refused: a file of one document holds nothing more).
    ``finite``: a NaN or Infinity float is refused, as a log's JSON is read (base.strict_loads: a log converted from
    it held bare NaN, which no JSON reader reads back)."""
    value, end = _Reader(data, max_depth, finite).value(0, 1)
    if end != len(data):
        raise MessagePackError(f"{len(data) - end} byte(s) after the value, from byte {end}: one value expected")
    return value


def load_prefix(data: bytes, start: int = 0, max_depth: int = MAX_DEPTH, finite: bool = False) -> tuple[Any, int]:
    """The value that begins at ``start`` of ``data`` and where it ends (for a stream of values; ``finite`` as
    :func:`loads`'s)."""
    return _Reader(data, max_depth, finite).value(start, 1)


def map_head(data: bytes, start: int = 0) -> Iterator[tuple[Any, Any]]:
    """The entries of the map that begins at ``start``, one by one, up to the first that does not decode (none: no
    map begins there): what the first bytes of a file cut short or damaged further on still say it is."""
    reader = _Reader(data, MAX_DEPTH)
    try:
        b = reader.take(start, 1)[0]
        if 0x80 <= b <= 0x8f:
            n, at = b & 0x0f, start + 1
        elif b in (0xde, 0xdf):
            width = 2 if b == 0xde else 4
            n, at = int.from_bytes(reader.take(start + 1, width), "big"), start + 1 + width
        else:
            return
    except MessagePackError:
        return
    for _ in range(n):
        try:
            key, at = reader.value(at, 2)
            value, at = reader.value(at, 2)
        except MessagePackError:
            return
        yield key, value


class _Reader:
    """One decoding of ``data``: each method takes an offset and returns what it read and the offset after it."""

    def __init__(self, data: bytes, max_depth: int, finite: bool = False):
        self.data = memoryview(data)
        self.max_depth, self.finite = max_depth, finite

    def take(self, at: int, n: int) -> bytes:
        if n > len(self.data) - at:
            raise MessagePackError(f"cut short: a value at byte {at} needs {n} byte(s), {len(self.data) - at} are left "
                                   "(a copy or a write cut short?)")
        return self.data[at:at + n].tobytes()

    def value(self, at: int, depth: int) -> tuple[Any, int]:
        b = self.take(at, 1)[0]
        at += 1
        if b <= 0x7f:
            return b, at
        if b >= 0xe0:
            return b - 0x100, at
        if 0xa0 <= b <= 0xbf:
            return self.text(at, b & 0x1f, at - 1)
        if 0x80 <= b <= 0x8f:
            return self.map(at, b & 0x0f, depth)
        if 0x90 <= b <= 0x9f:
            return self.array(at, b & 0x0f, depth)
        if b in _CONSTANTS:
            return _CONSTANTS[b], at
        if b in _FIXED:
            n, fmt = _FIXED[b]
            number = struct.unpack(fmt, self.take(at, n))[0]
            if self.finite and isinstance(number, float) and not math.isfinite(number):
                raise NotFinite(f"a NaN or Infinity float ({number}) at byte {at - 1}, which is not JSON (its JSON "
                                "is refused alike): write null, or the value as a string, where the app makes it")
            return number, at + n
        if b in _FIXEXT:
            return self.ext(at + 1, _FIXEXT[b], struct.unpack(">b", self.take(at, 1))[0], at - 1)
        if b in _SIZED:
            kind, width = _SIZED[b]
            n = int.from_bytes(self.take(at, width), "big")
            at += width
            if kind == "str":
                return self.text(at, n, at - width - 1)
            if kind == "bin":
                return self.take(at, n), at + n
            if kind == "array":
                return self.array(at, n, depth)
            if kind == "map":
                return self.map(at, n, depth)
            return self.ext(at + 1, n, struct.unpack(">b", self.take(at, 1))[0], at - width - 1)
        raise MessagePackError(f"byte {at - 1} is 0x{b:02x}, which MessagePack never uses")

    def text(self, at: int, n: int, start: int) -> tuple[str, int]:
        try:
            return self.take(at, n).decode("utf-8"), at + n
        except UnicodeDecodeError as exc:
            raise MessagePackError(f"the string at byte {start} is not UTF-8 (byte {at + exc.start})") from None

    def room(self, at: int, n: int, what: str, depth: int) -> None:
        """Refuse a container deeper than allowed, or one of more items than bytes are left (each takes one)."""
        if depth > self.max_depth:
            raise MessagePackError(f"nested too deeply at byte {at} (more than {self.max_depth} levels of maps and "
                                   "arrays)")
        if n > len(self.data) - at:
            raise MessagePackError(f"cut short: the {what} before byte {at} says {n} items, {len(self.data) - at} "
                                   "byte(s) are left (a copy or a write cut short?)")

    def array(self, at: int, n: int, depth: int) -> tuple[list[Any], int]:
        self.room(at, n, "array", depth)
        out = []
        for _ in range(n):
            item, at = self.value(at, depth + 1)
            out.append(item)
        return out, at

    def map(self, at: int, n: int, depth: int) -> tuple[dict[Any, Any], int]:
        self.room(at, 2 * n, "map", depth)
        out: dict[Any, Any] = {}
        for _ in range(n):
            key_at = at
            key, at = self.value(at, depth + 1)
            if isinstance(key, (list, dict)):
                raise MessagePackError(f"the map key at byte {key_at} is an array or a map: keys are strings or numbers")
            if isinstance(out.get(key), (list, dict)):  # as a log's JSON is read (base._last_value_wins)
                raise MessagePackError(f"the map key {_shown(key)} at byte {key_at} is given twice and its "
                                       f"first value, {_kind(out[key])}, would be dropped (keep one)")
            out[key], at = self.value(at, depth + 1)
        return out, at

    def ext(self, at: int, n: int, code: int, start: int) -> tuple[Any, int]:
        """An extension's value: a timestamp's datetime, any other's bytes (never handed to code of its type)."""
        data = self.take(at, n)
        if code != TIMESTAMP:
            return data, at + n
        if n == 4:
            seconds, nanos = struct.unpack(">I", data)[0], 0
        elif n == 8:
            both = int.from_bytes(data, "big")
            seconds, nanos = both & 0x3_ffff_ffff, both >> 34
        elif n == 12:
            nanos, seconds = struct.unpack(">Iq", data)
        else:
            raise MessagePackError(f"the timestamp at byte {start} has {n} bytes (4, 8 or 12 expected)")
        if nanos >= NANOS:  # read as a later second (up to 4 more), a time no writer wrote; msgspec refuses it
            raise MessagePackError(f"the timestamp at byte {start} has {nanos} nanoseconds (under {NANOS} expected)")
        try:  # to the nearest microsecond, half up, as msgspec reads it (cut, one file read two ways)
            return _EPOCH + timedelta(seconds=seconds, microseconds=(nanos + 500) // 1000), at + n
        except OverflowError:
            raise MessagePackError(f"the timestamp at byte {start} is out of the years 1-9999") from None


def json_like(value: Any) -> Any:
    """``value`` as msgspec's JSON would have written it, so a reader of a log's JSON reads its MessagePack alike:
    bytes as base64 text, a datetime as RFC 3339 text (UTC as ``Z``), a map's keys as strings (a number's digits,
    ``true``, ``null``). Nesting is as deep as :func:`loads` allowed."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():  # 1 and "1" are one key as JSON's strings: a list or map dropped so is refused
            key = _key(k)
            if isinstance(out.get(key), (list, dict)):
                raise MessagePackError(f"the map key {key[:60]!r} is given twice and its first value, "
                                       f"{_kind(out[key])}, would be dropped (keep one)")
            out[key] = json_like(v)
        return out
    if isinstance(value, list):
        return [json_like(v) for v in value]
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, datetime):
        return value.isoformat().replace("+00:00", "Z")
    return value


def _key(key: Any) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, (bytes, datetime)):
        return json_like(key)
    return json.dumps(key)


def _kind(value: Any) -> str:
    return "an array" if isinstance(value, list) else "a map"


def _shown(key: Any) -> str:
    """A key a refusal names: its first 60 characters (a string's), or as it reads."""
    return repr(key[:60]) if isinstance(key, str) else repr(key)
