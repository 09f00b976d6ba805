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
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from sam_model.data.formats.base import strict_loads

Call = tuple[Any, str, str, Any]  # a tool call as made: (when, its id, the tool's name, its arguments)
_TEXT = json.JSONEncoder(ensure_ascii=False, check_circular=False, default=str).encode  # a raw message's exact text


def anchor(conv: list[Any], at: dict[str, int], after: list[str | None], keys: list[str], n: int,
           key: Callable[[Any], str], tips: Collection[int] = ()) -> tuple[int, int, int]:
    """Where :func:`join` anchors a call whose messages have ``keys`` (its input the first ``n``): the place in
    ``conv`` of the latest message the input repeats (-1: none), its index among the call's messages, and how many
    messages after it ``conv`` holds already after it in the same order (the same call recorded twice). Apart from
    the join, so a reader can tell which earlier call a call goes on from before its messages are added. ``tips``:
    the places where a call's messages ended and none went on from them since (each history's latest, where
    another history's calls came after it), which a window's input repeats as it repeats ``conv``'s latest."""

    def repeats(q: int, p: int) -> bool:
        """Input message q is conv's message p: it follows what it followed there, or p is the latest (of its
        history: a tip) and the input's message before q is one conv does not hold, or holds with other words after
        it (a window)."""
        before = keys[q - 1] if q else None
        if after[p] == before:
            return True
        b = at.get(before, -1) if before is not None else -1
        return (p == len(conv) - 1 or p in tips) and not (0 <= b < p and key(conv[b + 1]) == keys[q])

    found, place = -1, -1  # in conv, in the input
    for q in range(n):
        p = at.get(keys[q], -1)
        if p >= max(found, 0) and repeats(q, p):
            found, place = p, q  # the latest in conv; of its repeats, the last in the input
    run = 0  # conv holds the next message after the same one: read already (not another trace's turn)
    while found >= 0 and place + 1 + run < len(keys) and found + 1 + run < len(conv) \
            and keys[place + 1 + run] == key(conv[found + 1 + run]) and after[found + 1 + run] == keys[place + run]:
        run += 1
    return found, place, run


def join(conv: list[Any], at: dict[str, int], after: list[str | None], inp: list[Any], out: list[Any],
         key: Callable[[Any], str], keys: list[str] | None = None, tips: Collection[int] = ()) -> tuple[int, int]:
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
    twice); those before it are new only where ``conv`` does not hold them (:func:`anchor`). Returns the anchor's
    place in ``conv`` (-1 where the input repeats none of ``conv``: its messages start a new segment) and the place
    of the call's last message (-1: it has none), where a later call that goes on from it anchors. ``keys``: those
    of ``inp`` and ``out``, where the caller has them already; ``tips``: :func:`anchor`'s."""
    seq = [*inp, *out]
    keys = [key(m) for m in seq] if keys is None else keys
    found, place, run = anchor(conv, at, after, keys, len(inp), key, tips)
    for i in [*(i for i in range(max(place, 0)) if keys[i] not in at), *range(place + 1 + run, len(seq))]:
        at[keys[i]] = len(conv)
        after.append(keys[i - 1] if i else None)
        conv.append(seq[i])
    return found, (found + run if place + 1 + run == len(seq) else len(conv) - 1) if seq else -1


def answer_late(conv: list[Any], at: dict[str, int], after: list[str | None], p: int, answer: list[Any],
                keys: list[str], key: Callable[[Any], str]) -> None:
    """Put ``answer`` (a call's output not recorded, read where a later input repeats it; ``keys`` its keys) right
    after ``conv``'s message ``p``, where that call's input ended, as :func:`join` would have put it had the output
    been recorded: appended, it followed every message read since (a summary the later input puts before it,
    another agent's turn under the same conversation id), so it read as said after them. The places ``at`` holds
    after ``p`` move up; a key held later stays at its later place (``at`` holds the last)."""
    k = len(answer)
    for held, place in at.items() if p < len(conv) - 1 else ():  # none after the last: a trace of every output
        if place > p:  # hidden, its answers each put after the latest message, is not walked whole at each
            at[held] = place + k
    conv[p + 1:p + 1] = answer
    after[p + 1:p + 1] = [key(conv[p]), *keys[:-1]]
    for j, held in enumerate(keys):
        if at.get(held, -1) < p + 1 + j:
            at[held] = p + 1 + j


class Unrecorded:
    """The answers of model calls whose output was not recorded (OpenInference's hidden outputs, Langfuse's masked
    ones), each read where a later call of its own history repeats it, and put right after the input it answers
    (:func:`answer_late`). The join tells the history a call goes on: the call whose input ends where its input is
    anchored (:func:`anchor`), else, where a window or a summary moved the anchor up, the history that read the
    anchor (a call anchored at none starts one). The next call in time under the same conversation id may be another agent's, interleaved: taken to
    repeat the answer, it counted one missing that a later call of its own history repeats, and the calls of
    another history's answer were dated by it. An answer a window read is left waiting: another agent's call at a
    system prompt both histories start with, sending a turn of its own, reads as such a window. Where the calls
    tell their origin (OpenTelemetry's trace), an input of another origin that goes on from a hidden call's input
    takes not its answer while one of the hidden call's own origin may: another agent's call whose input is the
    shared system prompt and its own greeting read that greeting as the answer of a hidden call whose input was the
    prompt alone. Its own next input takes it; where none comes, the other input's reading stands (a chat whose
    turns are each a trace reads a turn's last answer from the next turn's input)."""

    def __init__(self) -> None:
        self.waiting: dict[int, tuple[Any, int]] = {}  # where such a call's input ends in conv -> (its start, history)
        self.history: list[int] = []  # per message of conv, its history (conv's length where it started: an id)
        self.dropped = 0  # answers the next call of their history did not repeat (a window, a retry with a nudge)
        self.windowed: set[int] = set()  # places of ``waiting`` whose answer a window's input read (not missing)
        self.elsewhere: set[int] = set()  # places of ``waiting`` whose answer an input of another origin read
        self.origin: dict[int, Any] = {}  # place of ``waiting`` -> the hidden call's origin (None: not told)
        self.calls: dict[int, set[Any]] = {}  # place of ``waiting`` -> the hidden calls that sent that input
        self.tips: set[int] = set()  # where a call's messages ended and none went on from them since (anchor)
        # place of ``waiting`` -> {origin: start} of the hidden calls of other origins that sent that input (another
        # agent's first call, the system prompt both share alone): no retry of it, each answer waits for an input of
        # its own origin
        self.others: dict[int, dict[Any, Any]] = {}

    def join(self, conv: list[Any], at: dict[str, int], after: list[str | None], inp: list[Any], out: list[Any],
             key: Callable[[Any], str], keys: list[str], start: Any, hidden: bool,
             origin: Any = None, call: Any = None) -> tuple[int, int, Any, list[Any]]:
        """Join one call (:func:`join`; ``hidden``: its output not recorded, ``start`` its start; ``origin``: whose
        call it is where the format tells, None where not; ``call``: the call itself where the format names it, so
        a retry, another call sent the same input, is told from the same call recorded twice). Returns the
        anchor's place (-1: none), ``conv``'s length before the call's own messages, the start of the call whose
        answer its input repeats (the calls that answer made are dated by it; None: none), and that answer where
        it was put after the input it answers (empty where it was read as the input places it)."""
        made, answer = None, []
        if (self.waiting or self.others) and inp:
            found, q, run = anchor(conv, at, after, keys, len(inp), key, self.tips)
            b = at.get(keys[q - 1], -1) if q > 0 and found not in self.waiting else -1
            if b in self.waiting and after[found] != keys[q - 1] and _said(inp[q]):  # anchored at the latest message
                found, q, run = b, q - 1, 0  # (another agent's) in the words of the answer waiting where it goes on
            k = next((j for j, m in enumerate(inp[q + 1:]) if not _said(m)), len(inp) - q - 1)
            if origin in self.others.get(found, ()) and not run and q + 1 < len(inp):  # goes on from its own
                # origin's hidden call there
                made = self._other(found, origin, k)  # its answer read as the join places it, or dropped
            elif found in self.waiting and not run and k and self._own(found, origin):  # the input goes on from one
                made, answer = self.waiting.pop(found)[0], inp[q + 1:q + 1 + k]  # whose answer was hidden
                answer_late(conv, at, after, found, answer, keys[q + 1:q + 1 + k], key)
                self.history[found + 1:found + 1] = [self.history[found]] * k
                self._moved(found, k)
            elif found in self.waiting and not run and k:  # another origin's words: its own next input may come
                self.elsewhere.add(found)
        before = len(conv)
        found, end = join(conv, at, after, inp, out, key, keys, self.tips)
        self.tips.discard(found)  # gone on from (a window's anchor is none: its history's latest stays one)
        self.tips |= {end} if end >= 0 else set()
        mine = self.history[found] if found >= 0 else before
        self.history += [mine] * (len(conv) - before)
        outs = {id(m) for m in out}
        new = [m for m in conv[before:] if id(m) not in outs]  # what its input adds to the history
        said = any(map(_said, new))
        other = found in self.waiting and not self._own(found, origin)  # another origin's answer waits there: it
        # waits on for its own history's input, and the input may be a window of its own history anchored there
        if not answer and found in self.waiting and not other and (new or out or end != found):  # not one call
            # recorded twice
            waited = self.waiting.pop(found)[0]
            made = waited if said else None  # its answer read further on (after a nudge), or dropped
            self.dropped += bool(new) and not said and found not in self.windowed  # its own history dropped it
            self.windowed.discard(found)
            self.elsewhere.discard(found)
            self.origin.pop(found, None)
            self.calls.pop(found, None)
        elif not answer and made is None and said and (found not in self.waiting or other):  # anchored before
            # where the input ends: a window
            ours = [w for w in self.waiting.items() if w[1][1] == mine and w[0] not in self.windowed]  # kept the answer,
            own = [w for w in ours if self.origin.get(w[0]) == origin]  # its own origin's first; at another's
            ours = own if other else own or ours  # answer, its own alone (that answer waits for its own origin)
            if ours:  # not the words it answered: the latest of its history's, read here but left waiting (another
                # agent's call at a system prompt both histories start with, sending a turn of its own, reads alike:
                # the answer's own next input, anchored where it waits, still puts it after the input it answers)
                place, (made, _) = max(ours, key=lambda w: w[1][0])
                self.windowed.add(place)
                if self.origin.get(place) is not None and self.origin[place] == origin:  # its own call's window
                    answer = self._kept(conv, at, after, place, before, outs, key)
                    before += len(answer)
        if hidden and end >= 0 and end not in self.waiting:
            self.waiting[end] = (start, mine)
            self.origin[end] = origin
            self.calls[end] = {call}
        elif hidden and end >= 0 and call is not None and call not in self.calls.setdefault(end, {call}):
            self.calls[end].add(call)
            if self._own(end, origin) or origin in self.others.get(end, ()):  # a retry: an answer of its own (each
                self.dropped += 1  # a decision point), which the input that goes on from here cannot repeat beside
            else:  # the other's: missing. Another origin's call that sent the same input: its own next input reads
                self.others.setdefault(end, {})[origin] = start  # its answer
        return found, before, made, answer

    def _other(self, place: int, origin: Any, k: int) -> Any:
        """An input of ``origin`` goes on from its own hidden call at ``place`` (:attr:`others`), ``k`` words said
        after it: that call's start (its answer's calls are dated by it), or None where the input dropped it."""
        theirs = self.others[place]
        start = theirs.pop(origin)
        if not theirs:
            del self.others[place]
        self.dropped += not k
        return start if k else None

    def _own(self, place: int, origin: Any) -> bool:
        """Whether a call of ``origin`` may take the answer waiting at ``place``: one of the hidden call's origin,
        or either not told."""
        theirs = self.origin.get(place)
        return theirs is None or origin is None or theirs == origin

    def _moved(self, found: int, k: int, below: float = float("inf"), read: bool = True) -> None:
        """``k`` messages put right after ``found`` (its answer, ``read``), taken from ``below`` (inf: none): the
        places between move up."""
        def up(p: int) -> int:
            return p + k if found < p < below else p
        self.waiting = {up(p): w for p, w in self.waiting.items() if p != found or not read}
        self.windowed = {up(p) for p in self.windowed if p != found or not read}
        self.elsewhere = {up(p) for p in self.elsewhere if p != found or not read}
        self.origin = {up(p): o for p, o in self.origin.items() if p != found or not read}
        self.calls = {up(p): c for p, c in self.calls.items() if p != found or not read}
        self.others = {up(p): o for p, o in self.others.items()}  # their inputs still end there
        self.tips = {up(p) for p in self.tips}

    def _kept(self, conv: list[Any], at: dict[str, int], after: list[str | None], place: int, before: int,
              outs: set[int], key: Callable[[Any], str]) -> list[Any]:
        """Put the answer a window of its own origin kept (the first run of the model's messages its input added
        since ``before``) right after the input it answers, which ends at ``place``, as :func:`answer_late` puts
        one: where the join put it, after a summary the window puts before it, its values could be traced to the
        summary's words, written after it. Returns the answer moved (empty where it sits there already)."""
        lo = next((i for i in range(before, len(conv)) if id(conv[i]) not in outs and _said(conv[i])), None)
        if lo is None or lo == place + 1:
            return []
        hi = lo
        while hi < len(conv) and id(conv[hi]) not in outs and _said(conv[hi]):
            hi += 1
        answer, history = conv[lo:hi], self.history[lo:hi]
        k = hi - lo
        del conv[lo:hi], after[lo:hi], self.history[lo:hi]
        for held, p in list(at.items()):  # as before the answer was added, for answer_late to put it
            if p >= hi:
                at[held] = p - k
            elif p >= lo:
                del at[held]
        answer_late(conv, at, after, place, answer, [key(m) for m in answer], key)
        self.history[place + 1:place + 1] = history
        ends = {t for t in self.tips if lo <= t < hi}  # the window's end in the answer: it moves with it
        self.tips -= ends
        self._moved(place, k, lo, read=False)
        self.tips |= {place + 1 + t - lo for t in ends}
        return answer

    def missing(self) -> int:
        """The answers no later input of their history repeats: dropped, or the last of a history (one an input of
        another origin read is not missing: that reading stands)."""
        return self.dropped + len(self.waiting) - len(self.windowed | self.elsewhere) + sum(map(len, self.others.values()))


def _said(m: Any) -> bool:
    """Whether a message is the model's (an answer)."""
    return isinstance(m, Mapping) and m.get("role") == "assistant"


class Inputs:
    """The messages of each model call's input, read: each input repeats the history, so what it repeats of an
    earlier input as given (the same JSON text, made and compared at C speed) is taken from that one's reading, its
    messages and their keys, and only the rest is read (each input read whole, a long trace's history was read again
    at every call: quadratic in its length). The readings of the latest inputs of several histories are kept
    (:data:`KEPT`), the one whose messages the input repeats longest taken: with one alone, the previous input's,
    the calls of two agents interleaved under one conversation id each read their history whole (another agent's
    input came between). Compared as text, not by Python's ``==``: that holds 1, 1.0 and true equal, and a message
    that changed one for another was taken as the previous one's reading. ``read``: one raw message as the messages
    the reader makes of it; ``key``: :func:`join`'s key of one of them."""

    KEPT = 16  # the readings kept: the histories interleaved that are each taken up again without a read whole

    def __init__(self, read: Callable[[Any], list[Any]], key: Callable[[Any], str]) -> None:
        self.read_one, self.make_key = read, key
        # the latest inputs' messages as given (JSON text), and each one's messages read with their keys; the latest
        # taken last
        self.seen: list[tuple[list[str], list[tuple[list[Any], list[str]]]]] = []
        self.keys: dict[int, str] = {}  # id of a message a reading of ``seen`` holds -> its key (alive while held)
        self.held: dict[int, int] = {}  # id of such a message -> how many readings of ``seen`` hold it

    def messages(self, raw: list[Any]) -> list[Any]:
        texts = [_TEXT(m) for m in raw]
        best, same = -1, 0
        for i in range(len(self.seen) - 1, -1, -1):  # the latest first: of readings alike, the latest is taken
            old, n = self.seen[i][0], 0
            most = min(len(texts), len(old))
            while n < most and texts[n] == old[n]:
                n += 1
            if n > same:
                best, same = i, n
            if n == len(old) and i == len(self.seen) - 1:  # it goes on from the latest input: as one reading did
                break
        prior = self.seen[best][1][:same] if best >= 0 else []
        fresh = [(ms, [self.make_key(x) for x in ms]) for ms in map(self.read_one, raw[same:])]
        self.keys.update((id(x), k) for ms, ks in fresh for x, k in zip(ms, ks))
        self._hold(fresh, 1)
        if best >= 0 and same == len(self.seen[best][0]):  # it goes on from that input: its reading taken over
            del self.seen[best]
        else:  # another history, or this one changed (a window, an edit): both kept, what they share held twice
            self._hold(prior, 1)
        self.seen.append((texts, prior + fresh))
        while len(self.seen) > self.KEPT:
            self._hold(self.seen.pop(0)[1], -1)
        return [x for ms, _ in self.seen[-1][1] for x in ms]

    def _hold(self, read: list[tuple[list[Any], list[str]]], by: int) -> None:
        """Count the messages of ``read`` held by one reading more (``by`` 1) or less (-1): a message no reading
        holds any longer loses its key (its id may be another's next)."""
        for ms, _ in read:
            for x in ms:
                n = self.held.get(id(x), 0) + by
                if n > 0:
                    self.held[id(x)] = n
                else:
                    self.held.pop(id(x), None)
                    self.keys.pop(id(x), None)

    def key(self, m: Any) -> str:
        """A message's key: as kept where a reading holds it, else made."""
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
