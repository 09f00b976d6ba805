"""A request pydantic refuses, answered as sam-serve answers every refusal: one line a problem, naming the field and
what to do, and never the input (a refused scope's value aside, cut to 60 characters, in the memory's own line:
sam_model.limits.check_scope).

FastAPI's own 422 lists pydantic's errors with each one's input: a body of 1,001 messages (838 KB) came back as
1.67 MB, the messages twice over (once for each branch of ``messages``' type, a string or a list), and its first
line, "Input should be a valid string", was the branch the body never took. Here a union's branches that are only
"not of this type" give way to the branch the input took ("messages holds 1001 items, at most 1000"), and where
every branch is, one line names what the field may be and the type it got.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

WHERE = ("body", "query", "path", "header", "cookie")  # the first part of a FastAPI error's loc
MAX_LINES = 5  # a list of 1,000 bad messages is 1,000 errors: the first few say what is wrong
# a pydantic union branch's tag in a loc ('messages', 'list[dict[str,any]]'): no field of this API is named so
_TAG = re.compile(r"^(str|int|float|bool|none|[a-z][a-z-]*\[.*\])$")
_TYPES = {"str": "a string", "int": "an integer", "float": "a number", "bool": "true or false", "dict": "an object",
          "list": "a list", "none": "null"}
_TYPE_ERRORS = {"string_type": "a string", "int_type": "an integer", "float_type": "a number", "bool_type":
                "true or false", "dict_type": "an object", "list_type": "a list", "model_type": "an object",
                "model_attributes_type": "an object", "int_from_float": "an integer", "none_required": "null"}


def json_type(value: Any) -> str:
    """What JSON calls ``value``'s type, in words (a refusal says the type it got, never the value)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, (str, bytes)):
        return "a string"
    return "a list" if isinstance(value, (list, tuple)) else "an object"


def _tag_type(tag: str) -> str:
    return _TYPES.get(tag.split("[", 1)[0], tag)


def field_name(loc: Sequence[Any]) -> str:
    """``('messages', 3, 'content')`` as ``messages[3].content``; union tags left out."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif not _TAG.match(str(part)):
            out += f".{part}" if out else str(part)
    return out


def _branch(loc: Sequence[Any]) -> tuple[tuple, str | None]:
    """(the loc up to the union's field, that branch's tag), or (loc, None) outside a union."""
    for i, part in enumerate(loc):
        if isinstance(part, str) and _TAG.match(part):
            return tuple(loc[:i]), part
    return tuple(loc), None


def _chosen(errors: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The errors worth saying: of a union, the branches the input took (those failing for more than being of
    another type); where no branch did, one ``union_type`` error listing the types the field takes."""
    out: list[Any] = []  # an error, or the field of a union, in the order pydantic gave them
    unions: dict[tuple, dict[str, list[dict[str, Any]]]] = {}
    for err in errors:
        field, tag = _branch(err["loc"])
        if tag is None:
            out.append(err)
            continue
        if field not in unions:
            out.append(field)
        unions.setdefault(field, {}).setdefault(tag, []).append(err)
    chosen = []
    for item in out:
        if isinstance(item, dict):
            chosen.append(item)
            continue
        branches = unions[item]
        taken = [e for tag, errs in branches.items() if not _other_type(errs, item, tag) for e in errs]
        first = next(iter(branches.values()))[0]
        chosen += taken or [{"type": "union_type", "loc": item, "input": first.get("input"),
                             "ctx": {"types": [_tag_type(tag) for tag in branches]}}]
    return chosen


def _other_type(errs: list[dict[str, Any]], field: tuple, tag: str) -> bool:
    """Whether a union's branch failed only because the input is not of its type (the branch the input did not
    take)."""
    return len(errs) == 1 and errs[0]["type"] in _TYPE_ERRORS and tuple(errs[0]["loc"]) == (*field, tag)


def line(err: Mapping[str, Any], known: Iterable[str] = ()) -> str:
    """One error's line: the field, what is wrong with it, what to do (``known``: the fields of the call)."""
    where, loc = (err["loc"][0], err["loc"][1:]) if err["loc"] and err["loc"][0] in WHERE else ("body", err["loc"])
    name, kind, ctx, got = field_name(loc), err["type"], err.get("ctx") or {}, err.get("input")
    name = name if len(name) <= 60 else name[:57] + "..."  # an unknown key is the client's own: 1 MB long, maybe
    part = "query parameter" if where == "query" else "field"
    if kind == "json_invalid":  # loc: the character where the JSON broke
        at = f" at character {loc[0]}" if loc and isinstance(loc[0], int) else ""
        return (f"the request body is not valid JSON{at} ({str(ctx.get('error', 'decode error'))[:80]}): send a JSON "
                "object (Content-Type: application/json)")
    if not name:  # the body (or the query) itself
        if kind == "missing" or got is None:
            return "the request body is missing: send a JSON object (Content-Type: application/json)"
        if isinstance(got, (str, bytes)):  # a body sent without Content-Type: application/json
            return "the request body is not a JSON object: send one (Content-Type: application/json)"
        return f"the request body must be a JSON object, got {json_type(got)}"
    if kind == "missing":
        return f"{name} is missing: give it"
    if kind == "extra_forbidden":
        fields = sorted(known)
        return (f"{name} is not a {part} of this call: leave it out or correct its name"
                + (f" ({', '.join(fields)})" if fields else ""))
    if kind == "union_type":
        return f"{name} must be {' or '.join(ctx['types'])}, got {json_type(got)}"
    if kind in _TYPE_ERRORS:
        return f"{name} must be {_TYPE_ERRORS[kind]}, got {json_type(got)}"
    if kind in ("int_parsing", "float_parsing", "bool_parsing"):
        return f"{part} {name} must be {_TYPE_ERRORS[kind.replace('parsing', 'type')]}, got text that is not one"
    if kind == "too_long":
        return (f"{name} holds {ctx.get('actual_length', 'too many')} items, more than the {ctx.get('max_length')} "
                "one request takes: send them in several requests, in order")
    if kind == "string_too_long":
        return f"{name} is longer than {ctx.get('max_length')} characters: shorten it"
    if kind == "string_too_short":
        # no field taking a minimum length may be left out (an update's data): "or leave it out" sent a caller to
        # a 422 saying it was missing
        return f"{name} is empty: give a text of at least {ctx.get('min_length')} character(s)"
    if kind == "value_error" and isinstance(ctx.get("error"), ValueError):  # a check of ours: its own line, which
        return str(ctx["error"])[:300]  # names the field (sam_model.limits.check_scope)
    bounds = {"greater_than_equal": ("at least", "ge"), "less_than_equal": ("at most", "le"),
              "greater_than": ("more than", "gt"), "less_than": ("less than", "lt")}
    if kind in bounds:
        words, key = bounds[kind]
        return f"{name} must be {words} {ctx.get(key)}, got {'a larger' if 'less' in kind else 'a smaller'} one"
    return f"{name}: {str(err.get('msg', 'invalid'))[:200]}"


def refusal(errors: Sequence[Mapping[str, Any]], known: Mapping[str, Iterable[str]] | None = None) -> str:
    """pydantic's ``errors`` as the 422's ``detail``: one line a problem (at most MAX_LINES, then how many more),
    no input in any. ``known``: the call's fields by where they go ("body", "query")."""
    lines: list[str] = []
    for err in _chosen([dict(e) for e in errors]):
        where = err["loc"][0] if err["loc"] and err["loc"][0] in WHERE else "body"
        said = line(err, (known or {}).get(where, ()))
        if said not in lines:
            lines.append(said)
    more = len(lines) - MAX_LINES
    return "\n".join(lines[:MAX_LINES] + ([f"(and {more} more)"] if more > 0 else []))


__all__ = ["MAX_LINES", "field_name", "json_type", "line", "refusal"]
