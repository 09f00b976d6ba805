"""The words the labelling rule writes: an action's event text, a tool result's ``last_action_result`` and the cut
of a long result.

The spec fixes these forms (``CALL name(k=v, ...)``; ``name: error (reason)``, ``name: N results``, ``name: ok
(keys)``; the 2,000-character cut). The importer and a live memory (ScopedMemory, through its tracker
:class:`~sam_model.data.toolstate.TranscriptState`) both write them, so they live in one module and a memory reads
alike from either. ``last_action_result`` is a value-free summary of the result: the state never says a value the
memory must supply.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

RESULT_CUT = 2000  # the spec's cut of a tool result's text; the importer keeps whole results unless given a limit
_KEY = re.compile(r"[a-z][a-z_]*")


def result_shape(name: str, content: str, failed: bool = False) -> str:
    """``last_action_result`` after a tool result: its shape (error and why, n results, ok and which keys),
    never its values, so the state cannot leak what the memory must supply. ``failed``: the result's format flagged
    the call as failed (the extension of toolstate's doc): an error whatever the words, its reason from the words."""
    c = content.strip()
    if failed or c[:5].lower() == "error":
        reason = " ".join(w for w in c.split() if not any(ch.isdigit() for ch in w))[:80]
        reason = re.sub(r"^error[:\s]*", "", reason, flags=re.IGNORECASE)
        return f"{name}: error" + (f" ({reason})" if reason else "")
    try:
        parsed = json.loads(c)
    except (ValueError, RecursionError):  # not JSON, or nested past the parser's depth: a text result
        parsed = None
    if isinstance(parsed, list):
        return f"{name}: {len(parsed)} results"
    if isinstance(parsed, dict):
        keys = [k for k in parsed if _KEY.fullmatch(k)][:6]
        return f"{name}: ok ({', '.join(keys)})" if keys else f"{name}: ok ({len(parsed)} entries)"
    return f"{name}: empty" if not c else f"{name}: ok"


def call_text(name: str, arguments: Mapping[str, Any] | str) -> str:
    """``CALL name(k=v, ...)``: strings raw, everything else as JSON; unparsable arguments as their raw string."""
    if isinstance(arguments, str):
        return f"CALL {name}({arguments})"
    parts = [f"{k}={v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)}" for k, v in arguments.items()]
    return f"CALL {name}({', '.join(parts)})"


def cut_text(text: str, keep: int) -> str:
    """``text`` cut to its first ``keep`` characters and a count of the rest, ``text[:keep] + " ...[+M chars]"``: how
    the importer's ``--result-limit`` cuts a tool result, and ScopedMemory a live memory past its limit (one form, so
    a cut memory reads alike from either)."""
    return text if len(text) <= keep else text[:keep] + f" ...[+{len(text) - keep} chars]"
