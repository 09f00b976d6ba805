"""Fixed scopes: the one rule for a caller whose user (agent, run) is not its own to name.

A ``sam-serve --stdio --user-id me`` process, and a request made with a key the keys file fixes to a user (a SaaS
hands one key to each of its customers' users), serve that scope only: a call's scope is filled in when absent, a
call naming another value is refused (:class:`FixedScopeError`, nothing done), and nothing is widened, since every
call then runs inside the fixed scope (a ``delete_all`` by agent alone deletes only the fixed user's memories with
that agent; an id of another user's memory is not there). Both paths check here, so they cannot drift apart.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from sam_model.limits import check_scope_characters, scope_flaw
from sam_model.memory.scoped import SCOPE_KEYS, ScopedMemory
from sam_model.serve.wal import check_unicode

# ScopedMemory's advice for a call of no scope, or of a scope '*' in filters, names its all_scopes argument, which no
# served call takes (HTTP refuses the field, MCP the argument): a served refusal leaves it out
_ALL_SCOPES = re.compile(r" \(or all_scopes=True to \w+ every scope on purpose\)|, or all_scopes=True on purpose")


def refusal(err: BaseException) -> str:
    """The line a served call answers for a refused one (HTTP's ``detail``, MCP's tool error): the error's text, a
    KeyError's without its quotes, and a missing scope's without ``(or all_scopes=True to search every scope on
    purpose)``, a scope '*' in filters' without ``, or all_scopes=True on purpose``, which sent a caller to an
    argument sam-serve refuses."""
    text = str(err.args[0]) if isinstance(err, KeyError) and err.args else str(err)
    return _ALL_SCOPES.sub("", text)


class FixedScopeError(ValueError):
    """A call named another value of a scope its server or key is fixed to (HTTP answers it 403)."""


def check_fixed(scopes: Mapping[str, Any] | None, where: Callable[[str], str]) -> dict[str, str]:
    """The fixed scopes (``{"user_id": "me"}``), the unset (None) ones left out; an unknown scope or a bad value
    (empty, holding '/', a control or invisible character, not in NFC, too long: sam_model.limits.check_scope; a
    lone surrogate, which no log line holds, so every write filled in with it was refused, blaming the caller's
    scope) is a ValueError starting with ``where(name)``, the option or the keys-file field that gave it."""
    fixed = {n: v for n, v in (scopes or {}).items() if v is not None}
    for name, value in fixed.items():
        if name not in SCOPE_KEYS:
            raise ValueError(f"{where(name)}: unknown scope {name!r}: fix {', '.join(SCOPE_KEYS)}")
        try:
            ScopedMemory._scopes(**{n: value if n == name else None for n in SCOPE_KEYS}, need=False)
            check_unicode(value, name)
        except ValueError as err:
            raise ValueError(f"{where(name)}: {err}{_cut_off(value, name)}") from None
    return fixed


def _cut_off(value: Any, name: str) -> str:
    """What a refused fixed id of a :func:`scope_flaw` means for the memories saved under it before its rule came,
    and what to do: the operator who fixes the key to the corrected id would otherwise cut its user off from them
    unawares (they stay reachable as written: sam_model.limits.check_scope's ``held``)."""
    flaw = scope_flaw(value) if isinstance(value, str) else None
    if flaw is None:
        return ""
    return (f"; memories saved under this {name} before {flaw.since} are kept, but a key or server fixed to the "
            f"corrected id is cut off from them, and one fixed to this id could add nothing: fix it to the corrected "
            f"id for new memories, and reach the old ones with a key (or a sam-serve --stdio) that fixes no {name}, "
            f"naming {name} exactly as stored: they are listed, searched, exported and erased, never added to")


def within(args: Mapping[str, Any], fixed: Mapping[str, str], holder: Callable[[str], str]) -> dict[str, Any]:
    """A call's arguments with the ``fixed`` scopes filled in. A scope argument, or a plain scope value inside its
    ``filters`` (Mem0 takes scopes there too), naming another value is a :class:`FixedScopeError` whose one line
    names the field, the fixed value and ``holder(name)`` (what fixed it: "this API key"); one no scope may be (an
    invisible character, not NFC: sam_model.limits.scope_flaw) is refused as such, a ValueError, since it may look
    the same as the fixed value. An operator filter on a scope (``{"user_id": {"in": [...]}}``, ``OR``) is left as
    it is: it applies inside the fixed scope, so it can only narrow."""
    out = dict(args)
    filters = out.get("filters")
    for name, value in fixed.items():
        said = [(name, out.get(name))]
        if isinstance(filters, Mapping) and not isinstance(filters.get(name), (Mapping, type(None))):
            said.append((f"filters.{name}", filters[name]))
        for field, given in said:
            if given is not None and given != value:
                check_scope_characters(given, field)  # 'Jose' + an accent is not the key's 'José': said so
                raise FixedScopeError(f"{field} is fixed to {value!r} for {holder(name)}: leave {field} out; another "
                                      f"{name.removesuffix('_id')}'s memory is not served here")
        out[name] = value
    return out


__all__ = ["FixedScopeError", "check_fixed", "within"]
