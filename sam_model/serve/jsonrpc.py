"""What sam-serve's MCP refuses of a JSON-RPC message before the SDK reads it, one rule for both transports (HTTP's
``/mcp`` and ``--stdio``): the SDK reads a message by pydantic, which keeps the last of a key given twice in one
object, as Python's reader does (``remember(user_id="alice", user_id="bob")`` stored bob's memory where a proxy or a
log reading the first saw alice's). Such a message is answered as the SDK answers one it cannot parse: a JSON-RPC
error with id null and code -32700, naming the key."""

from __future__ import annotations

import json
from typing import Any

from sam_model.io import unique_keys
from sam_model.serve.wal import check_unicode

PARSE_ERROR = -32700  # JSON-RPC 2.0's code for a message that could not be parsed
INVALID_REQUEST = -32600  # JSON-RPC 2.0's code for JSON that is no JSON-RPC message
BUSY = -32000  # of JSON-RPC 2.0's server errors (-32000 to -32099): a request the server has no room for now
UNAUTHORIZED = -32001  # of the server errors too: a request with no key or an unknown one (HTTP 401)


class _TwiceError(ValueError):
    """A key given twice in one JSON object (:func:`sam_model.io.unique_keys`' refusal)."""


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    try:
        return unique_keys(pairs)
    except ValueError as err:
        raise _TwiceError(str(err)) from None


def unreadable_text(message: str | bytes) -> str | None:
    """Why the SDK must not read a JSON message as text: unique_keys' line for one holding a key twice in one
    object, or check_unicode's for a string or key holding a lone UTF-16 surrogate (``"\\ud800"``: valid JSON, no
    Unicode text, which the SDK refused as "unexpected end of hex escape", pointing at no surrogate and no fix),
    else None: any other problem (broken JSON, nesting past the recursion limit) is the SDK's to answer, as it
    does."""
    try:
        found = json.loads(message, object_pairs_hook=_unique)
    except _TwiceError as err:
        return str(err)
    except (ValueError, RecursionError):
        return None
    try:
        check_unicode(found, "")  # named by its place in the message: params.arguments.text
    except ValueError as err:
        return str(err)
    except RecursionError:  # as deep as Python's reader goes: the SDK's to refuse
        pass
    return None


def unreadable(message: bytes) -> str | None:
    """Why the SDK must not read an HTTP body (what :func:`unreadable_text` says, or that it is no UTF-8, said as the HTTP
    routes say it), else None. The SDK refused bytes that are no UTF-8 with "invalid unicode code point at line 1
    column 99", which names no byte and says nothing of what to send."""
    try:
        text = message.decode("utf-8")
    except UnicodeDecodeError as err:
        return (f"the request body is not UTF-8 (byte {err.object[err.start]:#04x} at position {err.start}): send "
                "JSON encoded as UTF-8")
    return unreadable_text(text)


def _error(code: int, label: str, why: str, request_id: int | str | None) -> dict[str, Any]:
    """A JSON-RPC error of ``code``, its message ``label: why``: the one shape of both refusals below."""
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": f"{label}: {why}"}}


def parse_error(why: str, request_id: int | str | None = None) -> dict[str, Any]:
    """The JSON-RPC error answering a message refused unread (``why``: one line, what is wrong and where), with the
    request's id where it could be read: a client waits for the answer carrying it, and drops one with id null."""
    return _error(PARSE_ERROR, "Parse error", why, request_id)


def invalid_request(why: str, request_id: int | str | None = None) -> dict[str, Any]:
    """The JSON-RPC error answering JSON that is no JSON-RPC message, as :func:`parse_error`."""
    return _error(INVALID_REQUEST, "Invalid Request", why, request_id)


def unauthorized(why: str) -> dict[str, Any]:
    """The JSON-RPC error of an HTTP 401 at /mcp, the body unread (so id null: the SDK's client answers the request
    it sent with it), which the client shows: a 401 of another body reads there 'Server returned an error
    response'."""
    return _error(UNAUTHORIZED, "Unauthorized", why, None)


def busy(why: str, request_id: int | str | None) -> dict[str, Any]:
    """The JSON-RPC error answering a request the server has no room for now (``why``: one line, what to do)."""
    return _error(BUSY, "Server busy", why, request_id)


class _Ambiguous:
    """A key given twice: its value is neither of them."""


def _last_unless_twice(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, value in pairs:
        found[key] = _Ambiguous if key in found else value
    return found


# members of a response (the client's answer to the server's request): its id is the server's request's, in the
# server's numbering, never one of the client's; an error carrying it answered one of the client's own requests
# that happened to hold that number, which the client then took as failed
RESPONSE_KEYS = ("result", "error")


def id_of(message: str) -> int | str | None:
    """The id of the request ``message`` is, where it can be read unambiguously (an object giving "id" once, an
    integer or a string that is Unicode text, no response: :data:`RESPONSE_KEYS`), else None: what a refusal of the
    message answers to."""
    try:
        found = json.loads(message, object_pairs_hook=_last_unless_twice)
    except (ValueError, RecursionError):
        return None
    if not isinstance(found, dict) or any(key in found for key in RESPONSE_KEYS):
        return None
    return readable_id(found.get("id"))


def readable_id(value: Any) -> int | str | None:
    """``value`` as a request's id: an integer or a string that is Unicode text, else None."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate, or a byte that was no UTF-8
            return None
        return value
    return None


__all__ = ["BUSY", "INVALID_REQUEST", "PARSE_ERROR", "RESPONSE_KEYS", "UNAUTHORIZED", "busy", "id_of",
           "invalid_request", "parse_error", "readable_id", "unauthorized", "unreadable", "unreadable_text"]
