"""The id of a JSON-RPC request on a line too long to hold (sam-serve --stdio past --max-body-mb), found by reading
the line's bytes as they stream past, holding none of them but a key and the id's value.

A client waits for the answer carrying its request's id. The id was read from the line's first 64 KiB, so a request
whose "id" followed a long "params" (JSON leaves the members' order free) was answered with id null, and its client
waited for ever. Read here: the top-level object's members, each key read (escapes too: "\\u0069d" is "id"), each
value skipped by its strings (escapes respected) and nesting, the "id"'s value kept. Bytes, not text: JSON's
structure is ASCII, which no byte of a UTF-8 character other than an ASCII one is."""

from __future__ import annotations

import json
import re
from typing import Any

from sam_model.serve.jsonrpc import RESPONSE_KEYS, readable_id

KEY_BYTES = 64  # of a key, the bytes read: "method" with every letter escaped is 36; a longer key is none of ours
ID_BYTES = 4096  # of the id's value, the bytes kept: a longer id is said not found (its length said)
BOM = b"\xef\xbb\xbf"
_BLANK = b" \t\n\r"
_IN_STRING = re.compile(rb'["\\]')  # what ends a string or escapes its next byte
_IN_NESTED = re.compile(rb'["{}\[\]]')  # what opens a string, or opens or closes a level, within a nested value
_SCALAR_END = re.compile(rb"[ \t\n\r,}\]]")  # what ends a number, true, false or null


class IdScan:
    """Fed a line's bytes in pieces (:meth:`feed`), then told its end (:meth:`end`): (the request's id, None), or
    (None, why it has none to give, one clause). Decided early, and then fed no more, once the id and "method" are
    read (a request's; a response's id is the server's own, so "result" or "error" decides None) or the bytes are no
    JSON object; a line that never ends is then told at once."""

    def __init__(self) -> None:
        self.state = "start"
        self.seen = 0  # the bytes fed so far: where a fault is, for the message
        self.escaped = False  # within a string, the last byte fed was a backslash
        self.depth = 0  # within a nested value: its levels open
        self.in_string = False  # within a nested value: within a string of it
        self.key = bytearray()  # the member's key, as written within its quotes, its first KEY_BYTES + 1
        self.member: Any = None  # the key read
        self.value = bytearray()  # the "id"'s value, as written, its first ID_BYTES + 1
        self.ids: list[bytes | None] = []  # each "id" member's value (None: too long)
        self.method = False  # "method" was read: a request's
        self.result: tuple[int | str | None, str | None] | None = None
        self._states = {"start": self._start, "member": self._member, "key": self._key, "colon": self._colon,
                        "value": self._value, "string": self._string, "nested": self._nested,
                        "scalar": self._scalar, "next": self._next, "end": self._end}

    @property
    def done(self) -> bool:
        """Whether the id is decided: no more bytes need be fed."""
        return self.result is not None

    def feed(self, data: bytes) -> bool:
        """Read ``data``, the line's next bytes; whether the id is decided (no more need be fed)."""
        at = 0
        if self.state == "start" and self.seen == 0 and data.startswith(BOM):
            at = len(BOM)  # a byte order mark opening the first line
        while at < len(data) and self.result is None:
            at = self._states[self.state](data, at)
        self.seen += len(data)
        return self.result is not None

    def end(self) -> tuple[int | str | None, str | None]:
        """The id, or why none: the line ended (a number or literal ends with it)."""
        if self.result is None and self.state == "scalar":
            self._value_done()
        if self.result is None:
            self._decide(self.state == "end")
        assert self.result is not None
        return self.result

    # ---- states: each reads from data[at:] (at < len(data)) and returns where it stopped ----

    def _fault(self, data: bytes, at: int, what: str) -> int:
        """The bytes are no JSON object here: an id read before it is still the request's."""
        self._decide(False, f"it is no JSON object ({what} at byte {self.seen + at:,})")
        return len(data)

    def _through_string(self, data: bytes, at: int) -> int | None:
        """From within a string: the position after its closing quote, or None if ``data`` ends first."""
        if self.escaped:
            self.escaped, at = False, at + 1
        while (found := _IN_STRING.search(data, at)) is not None:
            at = found.start() + 1
            if data[at - 1] == 0x22:  # the closing quote
                return at
            if at == len(data):  # a backslash last: the byte it escapes comes in the next piece
                self.escaped = True
                return None
            at += 1
        return None

    def _opens(self, data: bytes, at: int, what: bytes, where: str, then: str) -> int:
        """After blanks, the byte ``what`` (one of them), moving to state ``then``; anything else a fault."""
        while at < len(data) and data[at] in _BLANK:
            at += 1
        if at == len(data):
            return at
        if data[at] not in what:
            return self._fault(data, at, f"{bytes(data[at:at + 1])!r} {where}")
        self.state = then
        return at + 1

    def _start(self, data: bytes, at: int) -> int:
        return self._opens(data, at, b"{", "where '{' opens it", "member")

    def _member(self, data: bytes, at: int) -> int:
        at = self._opens(data, at, b'"}', "where a key opens", "key")
        if self.state == "key" and data[at - 1] == 0x7D:  # '}': the object ends
            self.state = "end"
            self._decide(True)
        self.key.clear()
        return at

    def _key(self, data: bytes, at: int) -> int:
        end = self._through_string(data, at)
        self._keep(self.key, data[at:len(data) if end is None else end - 1], KEY_BYTES + 1)
        if end is None:
            return len(data)
        self.member = self._read(b'"' + bytes(self.key) + b'"') if len(self.key) <= KEY_BYTES else None
        self.state = "colon"
        return end

    def _colon(self, data: bytes, at: int) -> int:
        at = self._opens(data, at, b":", "where ':' follows a key", "value")
        if self.state == "value" and self.member in RESPONSE_KEYS:
            self.result = None, f'it is a response (its "{self.member}"), whose id is the server\'s own'
        self.method = self.method or self.member == "method"
        self.value.clear()
        return at

    def _value(self, data: bytes, at: int) -> int:
        while at < len(data) and data[at] in _BLANK:
            at += 1
        if at == len(data):
            return at
        opening = data[at]
        if opening in b",}]:":
            return self._fault(data, at, f"{bytes(data[at:at + 1])!r} where a value opens")
        if opening not in b'"{[':
            self.state = "scalar"
            return at
        self.state = "string" if opening == 0x22 else "nested"
        self.depth, self.in_string = 1, False
        self._take(data[at:at + 1])
        return at + 1

    def _string(self, data: bytes, at: int) -> int:
        end = self._through_string(data, at)
        self._take(data[at:end])
        if end is not None:
            self._value_done()
        return len(data) if end is None else end

    def _nested(self, data: bytes, at: int) -> int:
        start = at
        while self.depth and at < len(data):
            if self.in_string:
                end = self._through_string(data, at)
                at = len(data) if end is None else end
                self.in_string = end is None
                continue
            found = _IN_NESTED.search(data, at)
            if found is None:
                at = len(data)
                break
            at = found.start() + 1
            if data[at - 1] == 0x22:
                self.in_string = True
            else:
                self.depth += 1 if data[at - 1] in b"{[" else -1
        self._take(data[start:at])
        if not self.depth:
            self._value_done()
        return at

    def _scalar(self, data: bytes, at: int) -> int:
        found = _SCALAR_END.search(data, at)
        end = len(data) if found is None else found.start()
        self._take(data[at:end])
        if found is not None:
            self._value_done()
        return end

    def _next(self, data: bytes, at: int) -> int:
        at = self._opens(data, at, b",}", "where ',' or '}' follows a value", "member")
        if self.state == "member" and data[at - 1] == 0x7D:
            self.state = "end"
            self._decide(True)
        return at

    def _end(self, data: bytes, at: int) -> int:
        return len(data)

    # ---- what is kept and decided ----

    def _keep(self, into: bytearray, piece: bytes, most: int) -> None:
        """``piece`` added to ``into`` while it holds fewer than ``most`` bytes (the rest is not kept)."""
        if len(into) < most:
            into += piece[:most - len(into)]

    def _take(self, piece: bytes) -> None:
        """``piece`` of the current value: kept where the value is the id's."""
        if self.member == "id":
            self._keep(self.value, piece, ID_BYTES + 1)

    def _value_done(self) -> None:
        """A member's value is read whole: the id's kept; the id and "method" both read decide it."""
        self.state = "next"
        if self.member == "id":
            self.ids.append(bytes(self.value) if len(self.value) <= ID_BYTES else None)
            if len(self.ids) > 1:
                self._decide(False)
        if self.method and len(self.ids) == 1:
            self._decide(True)

    @staticmethod
    def _read(raw: bytes) -> Any:
        """A key or value as written, read as JSON; None if it is none (or no UTF-8). Decoded as UTF-8 here: Python's
        reader of bytes guesses UTF-16 or UTF-32 from NULs and skips a byte order mark, so '5' + NUL was the id 5."""
        try:
            return json.loads(raw.decode("utf-8"))
        except (ValueError, RecursionError):
            return None

    def _decide(self, whole: bool, why: str | None = None) -> None:
        """The result: the id read once, readable; else why there is none (``why``, else from what was read)."""
        if len(self.ids) > 1:
            self.result = None, 'it gives "id" twice'
        elif self.ids and self.ids[0] is None:
            self.result = None, f"its id is longer than {ID_BYTES:,} bytes"
        elif self.ids:
            found = readable_id(self._read(self.ids[0]))
            self.result = (found, None) if found is not None else (None, "its id is no integer nor string")
        else:
            self.result = None, why or ("its object gives no id" if whole else "no id was read before the line ended")


def scan_id(line: bytes) -> tuple[int | str | None, str | None]:
    """:class:`IdScan` over the whole of ``line`` (its newline, if any, blank to it)."""
    scan = IdScan()
    scan.feed(line)
    return scan.end()


__all__ = ["ID_BYTES", "IdScan", "scan_id"]
