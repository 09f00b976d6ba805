"""Mem0-style metadata filters: whether a memory's fields (metadata, scopes, kind, times) pass ``filters``.

Apart from ScopedMemory because the filter language is its own idea, read alone: ``{"key": value}``,
``{"key": {op: value}}`` with Mem0's operators, ``AND``/``OR``/``NOT`` lists, each mistake one line naming where
in the filter it is. ScopedMemory's search and get_all apply it to the scopes' memories (inside the index search,
as an id filter), and the LangChain adapters pass their ``filter`` through to it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sam_model.limits import MAX_METADATA_DEPTH

_OPS = {"eq": lambda v, w: v == w, "ne": lambda v, w: v != w, "gt": lambda v, w: v is not None and v > w,
        "gte": lambda v, w: v is not None and v >= w, "lt": lambda v, w: v is not None and v < w,
        "lte": lambda v, w: v is not None and v <= w, "in": lambda v, w: v in w, "nin": lambda v, w: v not in w,
        "contains": lambda v, w: isinstance(v, str) and str(w) in v,
        "icontains": lambda v, w: isinstance(v, str) and str(w).lower() in v.lower()}


def _check_listed(ops: Mapping[str, Any], where: str) -> None:
    """``in`` / ``nin`` take a list: a string was searched as text (``{"in": "travel"}`` kept the topics "a" and
    "ravel", its substrings) and a number failed as 'not iterable'."""
    for op in ("in", "nin"):
        if op in ops and not isinstance(ops[op], (list, tuple, set, frozenset)):
            raise ValueError(f"{where}.{op} must be a list of values such as [\"travel\", \"work\"], got "
                             f"{str(ops[op])[:60]!r}")


def matches(record: Mapping[str, Any], filters: Mapping[str, Any], where: str = "filters", depth: int = 0) -> bool:
    """Whether a memory's fields (metadata, scopes, kind) pass Mem0-style ``filters``: ``{"key": value}`` (``"*"``:
    the key is present), ``{"key": {op: value}}`` with op in eq ne gt gte lt lte in nin contains icontains, and
    ``AND``/``OR``/``NOT`` over lists of filters, nested at most MAX_METADATA_DEPTH levels (deeper recursed past
    Python's limit: a served search answered 500). A bad operator raises ValueError naming it."""
    if depth > MAX_METADATA_DEPTH:
        raise ValueError(f"{where}: AND/OR/NOT nested more than {MAX_METADATA_DEPTH} levels; flatten the filter")
    for key, want in filters.items():
        if key in ("AND", "OR", "NOT"):
            subs = want if isinstance(want, (list, tuple)) else [want]
            if not all(isinstance(f, Mapping) for f in subs):
                raise ValueError(f"{where}.{key} must be a list of filter objects, got {want!r}")
            got = [matches(record, f, f"{where}.{key}", depth + 1) for f in subs]
            ok = all(got) if key == "AND" else any(got) if key == "OR" else not any(got)
        elif isinstance(want, Mapping):
            bad = sorted(set(want) - set(_OPS))
            if bad:
                raise ValueError(f"{where}.{key}: unknown operator {bad[0]!r}; use one of {sorted(_OPS)}")
            _check_listed(want, f"{where}.{key}")
            try:
                ok = all(_OPS[op](record.get(key), w) for op, w in want.items())
            except TypeError as err:
                raise ValueError(f"{where}.{key}: cannot compare ({err})") from None
        else:
            ok = key in record if want == "*" else record.get(key) == want
        if not ok:
            return False
    return True


__all__ = ["matches"]
