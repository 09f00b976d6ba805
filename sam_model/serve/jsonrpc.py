"""What sam-serve's MCP refuses of a JSON-RPC message before the SDK reads it, one rule for both transports (HTTP's
``/mcp`` and ``--stdio``): the SDK reads a message by pydantic, which keeps the last of a key given twice in one
object, as Python's reader does (``remember(user_id="alice", user_id="bob")`` stored bob's memory where a proxy or a
log reading the first saw alice's). Such a message is answered as the SDK answers one it cannot parse: a JSON-RPC
error with id null and code -32700, naming the key."""

from __future__ import annotations

import json
from typing import Any

from sam_model.io import unique_keys

PARSE_ERROR = -32700  # JSON-RPC 2.0's code for a message that could not be parsed


class _TwiceError(ValueError):
    """A key given twice in one JSON object (:func:`sam_model.io.unique_keys`' refusal)."""


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    try:
        return unique_keys(pairs)
    except ValueError as err:
        raise _TwiceError(str(err)) from None


def key_twice(message: str | bytes) -> str | None:
    """unique_keys' line for a message holding a key twice in one object, else None: any other problem (broken JSON,
    nesting past the recursion limit) is the SDK's to answer, as it does."""
    try:
        json.loads(message, object_pairs_hook=_unique)
    except _TwiceError as err:
        return str(err)
    except (ValueError, RecursionError):
        pass
    return None


def parse_error(why: str) -> dict[str, Any]:
    """The JSON-RPC error answering a message refused unread (``why``: one line, what is wrong and where)."""
    return {"jsonrpc": "2.0", "id": None, "error": {"code": PARSE_ERROR, "message": f"Parse error: {why}"}}


__all__ = ["PARSE_ERROR", "key_twice", "parse_error"]
