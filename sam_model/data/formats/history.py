"""One conversation out of model calls that each send the history so far: the join both trace readers share, each
input's reading taken from the previous one's where it repeats it (:class:`Inputs`), and the pairing of a recorded
tool run that names no call id with the call it ran (:func:`ran`).

An OpenTelemetry inference span and a Langfuse generation each record one model call, its input the messages sent
(the history, its start perhaps rewritten by a summary or a window) and its output the model's answer; neither
records the conversation itself. :func:`join` adds each call's new messages to the conversation read so far, so
every message is read once. ``key`` tells when two messages are one: each format's output carries fields its repeat
in the next input lacks (the GenAI conventions' ``finish_reason``, OpenAI's ``refusal``), which its key leaves out.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sam_model.data.formats.base import strict_loads

Call = tuple[Any, str, str, Any]  # a tool call as made: (when, its id, the tool's name, its arguments)
_TEXT = json.JSONEncoder(ensure_ascii=False, check_circular=False, default=str).encode  # a raw message's exact text


def join(conv: list[Any], at: dict[str, int], after: list[str | None], inp: list[Any], out: list[Any],
         key: Callable[[Any], str], keys: list[str] | None = None) -> bool:
    """Add to ``conv`` what one model call adds (``at``: each message's key -> its last place in ``conv``;
    ``after``: per message of ``conv``, the key of the message before it in the call that added it, None for the
    first; both kept up to date). Its input repeats the history, possibly rewritten at the start (a summary over
    earlier turns, a window of the latest), so the join is anchored at the latest message of ``conv`` the input
    repeats (the previous call's output, as a rule) after the message it followed when it was added, or, for the
    latest of ``conv``, after one a window or summary moved up to it (one ``conv`` does not hold, or holds before
    other words). Words said twice ("yes") thus repeat their first place only in its context: a compaction that
    keeps no turn before a new "yes" does not drop it, a retry whose dropped output repeated an earlier one copies
    no turn. The call's messages after the
    anchor are new, bar a leading run that ``conv`` holds after it in the same order (the same call recorded
    twice); those before it are new only where ``conv`` does not hold them. Returns False where the input repeats
    none of ``conv`` (its messages then start a new segment). ``keys``: those of ``inp`` and ``out``, where the
    caller has them already."""
    seq = [*inp, *out]
    keys = [key(m) for m in seq] if keys is None else keys

    def repeats(q: int, p: int) -> bool:
        """Input message q is conv's message p: it follows what it followed there, or p is the latest and the
        input's message before q is one conv does not hold, or holds with other words after it (a window)."""
        before = keys[q - 1] if q else None
        if after[p] == before:
            return True
        b = at.get(before, -1) if before is not None else -1
        return p == len(conv) - 1 and not (0 <= b < p and key(conv[b + 1]) == keys[q])

    anchor, place = -1, -1  # in conv, in inp
    for q in range(len(inp)):
        p = at.get(keys[q], -1)
        if p >= max(anchor, 0) and repeats(q, p):
            anchor, place = p, q  # the latest in conv; of its repeats, the last in the input
    run = 0  # conv holds the next message after the same one: read already (not another trace's turn)
    while anchor >= 0 and place + 1 + run < len(seq) and anchor + 1 + run < len(conv) \
            and keys[place + 1 + run] == key(conv[anchor + 1 + run]) \
            and after[anchor + 1 + run] == keys[place + run]:
        run += 1
    for i in [*(i for i in range(max(place, 0)) if keys[i] not in at), *range(place + 1 + run, len(seq))]:
        at[keys[i]] = len(conv)
        after.append(keys[i - 1] if i else None)
        conv.append(seq[i])
    return anchor >= 0 or not inp


class Inputs:
    """The messages of each model call's input, read: each input repeats the history, so what it repeats of the
    previous input as given (the same JSON text, made and compared at C speed) is taken from that one's reading, its
    messages and their keys, and only the rest is read (each input read whole, a long trace's history was read again
    at every call: quadratic in its length). Compared as text, not by Python's ``==``: that holds 1, 1.0 and true
    equal, and a message that changed one for another was taken as the previous one's reading. ``read``: one raw
    message as the messages the reader makes of it; ``key``: :func:`join`'s key of one of them."""

    def __init__(self, read: Callable[[Any], list[Any]], key: Callable[[Any], str]) -> None:
        self.read_one, self.make_key = read, key
        self.raw: list[str] = []  # the previous input's messages as given, as JSON text
        self.read: list[tuple[list[Any], list[str]]] = []  # each one's messages read, and their keys
        self.keys: dict[int, str] = {}  # id of a message of ``read`` -> its key (they are alive while held there)

    def messages(self, raw: list[Any]) -> list[Any]:
        texts = [_TEXT(m) for m in raw]
        same, most = 0, min(len(texts), len(self.raw))
        while same < most and texts[same] == self.raw[same]:
            same += 1
        for ms, _ in self.read[same:]:  # no longer held: their ids may be another's next
            for x in ms:
                self.keys.pop(id(x), None)
        fresh = [(ms, [self.make_key(x) for x in ms]) for ms in map(self.read_one, raw[same:])]
        self.keys.update((id(x), k) for ms, ks in fresh for x, k in zip(ms, ks))
        self.raw, self.read = texts, self.read[:same] + fresh
        return [x for ms, _ in self.read for x in ms]

    def key(self, m: Any) -> str:
        """A message's key: as kept where this reading holds it, else made."""
        k = self.keys.get(id(m))
        return self.make_key(m) if k is None else k


def decoded(value: Any) -> Any:
    """A value as given, or the JSON a string holds (Langfuse's v2 API returns input and output as the strings
    stored, JSON text for anything but a string; OpenInference's ``input.value`` is JSON text likewise); a string
    that is no JSON is kept as it is."""
    if isinstance(value, str) and value.lstrip()[:1] in ("[", "{"):
        try:
            return strict_loads(value, unique=False)
        except (ValueError, RecursionError):
            return value
    return value


def ran(pending: Sequence[Call], inp: Any, alike: bool = True) -> str | None:
    """The id of the call a tool run whose record names none ran (``inp``: the run's input as recorded), of the
    calls of its tool it could have run (``pending``): the one, or the one whose arguments its input holds (parallel
    calls of one tool run in any order); of calls alike (their arguments the same), the first where ``alike`` (its
    result's words are the same whichever it is), else none (a failure flag given to the wrong one mislabels it).
    None where several differ and its input matches none."""
    if len(pending) == 1:
        return pending[0][1]
    args = [decoded(c[3]) for c in pending]
    inp = decoded(inp)
    held = [c[1] for c, a in zip(pending, args) if isinstance(a, Mapping) and _holds(inp, a)]
    if held and (alike or len(held) == 1):
        return held[0]
    return pending[0][1] if alike and pending and all(a == args[0] for a in args) else None


def _holds(inp: Any, args: Mapping[str, Any]) -> bool:
    """Whether a tool run's input is a call's arguments as an instrumentation records them: the object, its text,
    ``@observe``'s ``{"args", "kwargs"}``, or the one argument's value alone (OpenInference's LangChain tracer
    writes a one-key input as its value)."""
    if inp == args or inp == str(args):
        return True
    if isinstance(inp, Mapping):
        return inp.get("kwargs") == args and not inp.get("args") or inp.get("args") == list(args.values()) \
            and not inp.get("kwargs")
    if len(args) == 1 and isinstance(inp, str):
        (one,) = args.values()
        return inp == one or inp == json.dumps(one, ensure_ascii=False)
    return False
