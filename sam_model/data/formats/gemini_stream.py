"""A function call whose arguments Vertex AI streamed (``streamFunctionCallArguments``), assembled as the API says.

With streamed arguments a call comes in pieces, a ``functionCall`` part a chunk: the first holds the ``name`` (and
``id``) with ``willContinue: true``, the next ones no name and ``partialArgs``, each ``{"jsonPath": "$.room",
"stringValue": "living", "willContinue": true}`` (or ``numberValue``, ``boolValue``, ``nullValue``): the value at that
RFC 9535 path, a string continued by the next pieces of the same path (``willContinue`` says more will come; a
string given again at a path is appended to it, as google-adk's StreamingResponseAggregator and the Vercel AI SDK's
GoogleJSONAccumulator append it, the path read by its keys: ``$.a`` and ``$['a']`` are one); an empty
``functionCall`` (or one without ``willContinue``) ends the call (googleapis' aiplatform ``FunctionCall`` and
``PartialArg``; the Vercel AI SDK's Vertex provider assembles them so). The SDK's chat history keeps one content per
chunk, so a log holds the pieces: read a part at a time they were a call of no arguments, then calls of no name
(refused as such). :class:`Stream` puts them back into the call's ``args``; a stream the log cuts (its last piece
says it will continue) is refused naming where it began, as its arguments are not all there.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from sam_model.data.chatmessages import MAX_ARGUMENT_DEPTH
from sam_model.data.formats.base import TranscriptFormatError
from sam_model.io import json_type

VALUES = ("stringValue", "numberValue", "boolValue")  # and nullValue: a JSON null, which a dump writes for unset too
# RFC 9535 segments a streamed path uses: .name (member-name-shorthand), ['name'] or ["name"], [index]; a shorthand
# name may hold hyphens ($.check-in, which RFC 9535 writes $['check-in']): google-adk's StreamingResponseAggregator
# reads the name up to the next '.', so a stream of such a key is assembled there, and it was refused here
_SEGMENT = re.compile(r"""\.([^\W\d][\w-]*)|\[(\d+)\]|\['((?:[^'\\]|\\.)*)'\]|\["((?:[^"\\]|\\.)*)"\]""")
CUT = ("log the whole stream (every chunk's content up to the call's last piece), or the call assembled (the "
       "SDK's response.function_calls once the stream ended)")


def camel(key: str) -> str:
    """``key`` in camelCase, as REST JSON writes it (an SDK's ``model_dump()`` writes snake_case: function_call)."""
    head, *rest = key.split("_")
    return head + "".join(w[:1].upper() + w[1:] for w in rest)


def camel_keys(m: Mapping[str, Any]) -> dict[str, Any]:
    """``m`` with its keys in camelCase (an SDK dump's partial_args, will_continue, json_path, string_value)."""
    return {camel(str(k)): v for k, v in m.items()}


def streamed(fc: Mapping[str, Any]) -> bool:
    """Whether a functionCall (camelCase keys) is a piece of a streamed call: it holds partialArgs or will continue."""
    return bool(fc.get("partialArgs")) or fc.get("willContinue") is True


def path_of(path: Any, where: str) -> list[str | int]:
    """The keys and indices of a partialArg's ``jsonPath`` (``$.a.b[0]['c d']``)."""
    if not isinstance(path, str) or not path.startswith("$"):
        got = repr(path[:60]) if isinstance(path, str) else json_type(path)
        raise TranscriptFormatError(where, f"a partialArg's 'jsonPath' is {got}, expected a JSON path such as "
                                           "\"$.location\"")
    out: list[str | int] = []
    at = 1
    while at < len(path):
        m = _SEGMENT.match(path, at)
        if m is None:
            raise TranscriptFormatError(where, f"a partialArg's 'jsonPath' {path[:60]!r} is not a path of names and "
                                               "indices ($.a.b[0], $['a b'])")
        name, index, single, double = m.groups()
        try:  # a quoted name's escapes are JSON's (and \' in single quotes)
            out.append(int(index) if index is not None else name if name is not None else json.loads(
                '"' + single.replace("\\'", "'").replace('"', '\\"') + '"' if single is not None else f'"{double}"'))
        except ValueError:
            raise TranscriptFormatError(where, f"a partialArg's 'jsonPath' {path[:60]!r} has a name of a bad "
                                               "escape") from None
        at = m.end()
        if len(out) > MAX_ARGUMENT_DEPTH:  # deeper than a call's arguments are read
            raise TranscriptFormatError(where, f"a partialArg's 'jsonPath' {path[:60]!r}... nests more than "
                                               f"{MAX_ARGUMENT_DEPTH} levels deep")
    if not out:
        raise TranscriptFormatError(where, "a partialArg's 'jsonPath' is \"$\", the arguments whole: expected the "
                                           "path of one argument (\"$.location\")")
    return out


class Stream:
    """The call a run of streamed ``functionCall`` pieces assembles: its arguments (the call's own dict, filled in
    place), and whether the last piece said more will come."""

    def __init__(self, args: dict[str, Any], where: str) -> None:
        self.args, self.where = args, where
        self.going = False
        # the strings still being streamed: (id of holder, key) -> (holder, key, pieces). The holder keeps the first
        # piece until the call ends, when the pieces are joined once: appending each piece to the text so far copied
        # it every time, quadratic in the pieces (a long argument streamed a few characters a chunk)
        self._pieces: dict[tuple[int, str | int], tuple[Any, str | int, list[str]]] = {}

    def feed(self, fc: Mapping[str, Any], where: str) -> None:
        """Apply one piece (camelCase keys): its ``args`` if any, then each partialArg, in order; the last piece (no
        ``willContinue``) joins the streamed strings into the call's args."""
        if isinstance(fc.get("args"), Mapping):
            for key in fc["args"]:  # a whole value given again replaces the string streamed there
                self._pieces.pop((id(self.args), key), None)
            self.args.update(fc["args"])
        partials = fc.get("partialArgs")
        if partials is not None and not isinstance(partials, list):
            raise TranscriptFormatError(where, f"'partialArgs' is {json_type(partials)}, expected a list of "
                                               "{\"jsonPath\", \"stringValue\" | \"numberValue\" | ...}")
        for k, p in enumerate(partials or []):
            if not isinstance(p, Mapping):
                raise TranscriptFormatError(f"{where}, partialArg {k}", f"is {json_type(p)}, expected an object")
            self._apply(camel_keys(p), f"{where}, partialArg {k}")
        self.going = fc.get("willContinue") is True
        if not self.going:
            self._join()

    def _join(self) -> None:
        """Put each streamed string's pieces, joined, at its place in the args."""
        for holder, key, pieces in self._pieces.values():
            holder[key] = "".join(pieces)
        self._pieces.clear()

    def _apply(self, p: Mapping[str, Any], where: str) -> None:
        keys = path_of(p.get("jsonPath"), where)
        given = [k for k in VALUES if p.get(k) is not None]
        if len(given) > 1:
            raise TranscriptFormatError(where, f"holds {' and '.join(given)}; a partialArg holds one value")
        if given:
            value = p[given[0]]
        elif "nullValue" in p:
            value = None
        else:
            raise TranscriptFormatError(where, f"no value at {p['jsonPath'][:60]!r}: expected one of stringValue, "
                                               "numberValue, boolValue, nullValue")
        if isinstance(value, float) and value.is_integer():
            value = int(value)  # a double on the wire; 50 as the call's args say it
        holder, last = self._holder(keys, where)
        old = holder[last] if isinstance(holder, dict) and last in holder or (
            isinstance(holder, list) and isinstance(last, int) and last < len(holder)) else None
        place = (id(holder), last)
        if isinstance(value, str) and isinstance(old, str):  # the string's next piece, whatever spells its path
            self._pieces.setdefault(place, (holder, last, [old]))[2].append(value)  # joined when the call ends
            return
        self._pieces.pop(place, None)
        if isinstance(holder, list):
            holder.append(value) if last == len(holder) else holder.__setitem__(last, value)
        else:
            holder[last] = value

    def _holder(self, keys: list[str | int], where: str) -> tuple[Any, str | int]:
        """The object or list that holds the value at ``keys`` (made on the way), and its key there."""
        cur: Any = self.args
        for key, nxt in zip(keys, keys[1:] + [None]):
            if not isinstance(cur, (dict, list)) or isinstance(key, int) != isinstance(cur, list) or (
                    isinstance(cur, list) and key > len(cur)):
                raise TranscriptFormatError(where, f"'jsonPath' {keys!r} does not fit the arguments so far (a "
                                                   f"{'list' if isinstance(cur, list) else 'object'} there)")
            if nxt is None:
                return cur, key
            has = key in cur if isinstance(cur, dict) else key < len(cur)
            if not has:
                child: Any = [] if isinstance(nxt, int) else {}
                cur.append(child) if isinstance(cur, list) else cur.__setitem__(key, child)
            cur = cur[key]
        raise AssertionError("unreachable")  # keys is never empty (path_of)

    def cut(self, name: str) -> TranscriptFormatError:
        """The error for this stream when the log ends it while it still says more will come."""
        return TranscriptFormatError(self.where, f"the streamed functionCall {name[:60]!r} begun here is cut: its "
                                                 "last piece says willContinue and no piece ends it, so its arguments "
                                                 f"are not all there; {CUT}")


def assembled(v: Mapping[str, Any], where: str) -> dict[str, Any]:
    """The arguments of a streamed call given whole as one functionCall (its name and every partialArg: a call about
    to be made, ScopedMemory.search(call=...)); refused where it says more will come."""
    fc = camel_keys(v)
    if fc.get("willContinue") is True:
        raise TranscriptFormatError(where, f"a streamed functionCall piece that says willContinue: {CUT}")
    stream = Stream({}, where)
    stream.feed(fc, where)
    return stream.args
