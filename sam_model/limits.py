"""Bounds on what one request may ask for, each refused with one line naming the argument or field.

Without them a careless or hostile caller takes the server down: ``search(k=10**9)`` over 17 memories
allocated 23 GB (FAISS pads every row to k) and was OOM-killed; a config with ``vocab_size: 10**12`` died in
the allocator with a message naming no field. The bounds are far above any real use (a search returns a
handful of memories; evaluate.py ranks 100) and cheap to check.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import unicodedata
from collections.abc import Callable, Iterator, Mapping
from typing import Any, NamedTuple

import numpy as np

from sam_model.io import json_type
from sam_model.scripts import (
    LATIN_OF,
    alike_word,
    all_alike,
    compatibility,
    emoji_joins,
    looks_latin,
    mixed,
    script,
)

MAX_K = 10_000  # results of one search
MAX_TEXT_CHARS = 100_000  # one memory's text, one query or observation (~25k tokens; BERT reads 512 at most)
MAX_BATCH_SIZE = 65_536  # texts per encoder batch
MAX_WIDTH = 65_536  # a network width: SAMConfig dims, a text encoder's hidden and intermediate sizes
MAX_VOCAB = 2_000_000  # rows of a text encoder's token embedding
MAX_LAYERS = 256  # transformer layers, attention heads
MAX_POSITIONS = 1_000_000  # a text encoder's position table
MAX_ENCODER_PARAMS = 2_000_000_000  # a text encoder's weights all told (8 GB in float32; MiniLM has 22M)
MAX_METADATA_DEPTH = 32  # nesting of a memory's metadata (JSON encoders stop at a few hundred levels)
MAX_METADATA_CHARS = 65_536  # a memory's metadata as JSON
MAX_SCOPE_CHARS = 256  # a user_id, agent_id or run_id (HTTP, MCP and in-process alike)
MAX_ADD_ITEMS = 1000  # messages or events in one served add (HTTP's messages, MCP remember's)
# a served request's body, by default (sam-serve --max-body-mb): an agent's session line as long as the live add's open
# turn holds whole (memory.live.MAX_OPEN_BYTES, 4 MB as JSON: a Claude Code response of large tool results) with the
# rest of its add. A sidecar forwards a session line as it is written and cannot split it; the live add stores its long
# texts cut, with a note, so a lower limit lost over HTTP what the in-process add and MCP over stdio keep
MAX_BODY_BYTES = 5_000_000


def too_deep(value: Any, limit: int) -> bool:
    """Whether ``value`` nests objects or lists more than ``limit`` levels deep, counted without recursion (the
    top object is level 1): what a recursive walk of it would need more than ``limit`` frames for."""
    stack = [(value, 0)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, (Mapping, list, tuple)):
            if depth >= limit:
                return True
            stack += [(w, depth + 1) for w in (v.values() if isinstance(v, Mapping) else v)]
    return False


def shown(value: Any) -> str:
    """``value`` as an error shows it: its repr, cut at 60 characters (a client's value may be megabytes, and a
    refusal is one line)."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check_int(value: Any, name: str, lo: int = 1, hi: int = MAX_K) -> int:
    """``value`` as an int in [lo, hi], else ValueError "<name> must be an integer from lo to hi, got ..."."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or not lo <= value <= hi:
        raise ValueError(f"{name} must be an integer from {lo} to {hi}, got {shown(value)}")
    return int(value)


def int_option(lo: int, hi: int = MAX_K):
    """An argparse ``type``: an integer from ``lo`` to ``hi`` (the examples' ``--k``, ``--episodes``): ``--k 0``
    retrieved nothing, silently, and a negative count sliced from the end (``--conversations -1`` dropped the last
    conversation)."""
    return number_option(lo, hi, int)


def number_option(lo: float, hi: float, cast: type = float, what: str = ""):
    """An argparse ``type``: a number (``cast`` of the word) from ``lo`` to ``hi``, else one line saying the range
    (NaN fails both bounds). ``what``: what the number counts (``"of MB"``), said in that line."""
    import argparse

    a = "an integer" if cast is int else "a number"
    span = f"{lo} to {hi}" if cast is int else f"{lo:g} to {hi:g}"
    # a bound of 2**31 or more is a guard no caller picks from ("from 1 to 4611686018427387904" for --max-queries 0):
    # said only to a value past it
    unbounded = cast is int and hi >= 2**31

    def parse(text: str):
        try:
            n = cast(text)
        except ValueError:
            n = None
        if n is None or not lo <= n <= hi:
            said = f"{lo} on" if unbounded and (n is None or n <= hi) else span
            raise argparse.ArgumentTypeError(f"want {a}{' ' + what if what else ''} from {said}, got {text!r}")
        return n

    return parse


MAX_STEP = 2**62  # past any step a conversation reaches, and within int64 where the index and time features read it
STEP_IS = "a step of the conversation: the number after the last '#' of a memory's id"


def check_count(value: Any, name: str, what: str, past: str, hi: int = MAX_STEP) -> int:
    """An integer >= 0 that counts or places (a step, an offset, a limit), else one line saying ``what`` it is and
    that it is >= 0; ``hi`` (written 2**62, 2**63 - 1) is named only for a value past it, ``past`` saying why none
    reaches it. Why not check_int: its "from 0 to 4611686018427387904" is a bound no caller picks from, and a served
    search's caller (HTTP, MCP) read it as the range it should pick from."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ValueError(f"{name} must be a non-negative integer ({what}), got {shown(value)}")
    if value > hi:
        n = hi.bit_length()
        bound = f"2**{n - 1}" if hi == 1 << (n - 1) else f"2**{n} - 1" if hi == (1 << n) - 1 else str(hi)
        raise ValueError(f"{name} must be a non-negative integer ({what}) no larger than {bound}, {past}, got "
                         f"{shown(value)}")
    return int(value)


def check_step(step: Any, name: str = "step") -> int | None:
    """A query's ``step`` or ``task_start``: None (now, the current task) or an integer >= 0 (:func:`check_count`).
    Why checked: the time features read any number, so -5, 3.7 or "3" ranked silently by another time than the
    caller's."""
    return None if step is None else check_count(step, name, STEP_IS, "past any step a memory can have")


def check_k(k: Any, name: str = "k") -> int:
    """The number of results of a search: 1 to MAX_K."""
    return check_int(k, name, 1, MAX_K)


def check_batch_size(batch_size: Any, name: str = "batch_size") -> int:
    return check_int(batch_size, name, 1, MAX_BATCH_SIZE)


def episode_of(user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None) -> str:
    """The episode a combination of scopes writes to (ScopedMemory.episode_of): the three scopes in their places,
    joined by '/', an absent one empty, trailing empties dropped (``"mia"``, ``"mia/bot"``, ``"/bot"``,
    ``"mia//trip-2"``). Here, beside :func:`check_scope`, as the log readers name a scope's episode by it too (the
    adk reader: whose memories a recall's ids are) and the data layer imports no memory.

    One combination, one episode, and never another's: scope values hold no '/' (refused), so the places
    say which scope a value is. (Joining only the given values made ``user_id="alice", agent_id="bot"`` and
    ``agent_id="alice", run_id="bot"`` one episode, whose conversation state the two then shared; a save from
    before is moved to these episodes when it is loaded, its ids kept: ScopedMemory._place_episodes.)"""
    return "/".join("" if p is None else str(p) for p in (user_id, agent_id, run_id)).rstrip("/")


def check_scope(value: Any, name: str, held: Callable[[str], bool] | None = None) -> str | None:
    """A ``user_id``, ``agent_id`` or ``run_id`` (None: not given), else a ValueError naming ``name``: a non-empty
    string of at most MAX_SCOPE_CHARS characters, without '/' (ScopedMemory.episode_of joins the scopes by it into
    one conversation's name) and of the characters :func:`scope_flaw` takes (no control character, no invisible
    one, in Unicode NFC, letters of one script). The one rule of every entry point: ScopedMemory, sam-serve's HTTP
    bodies and query parameters, MCP's tools, the adapters and the scopes a key or ``--user-id`` fixes.

    ``held``: whether the store holds memories under this exact value (a read or a delete). Such a value is taken
    despite its :func:`scope_flaw`: memories saved under it before the rule came must stay listed, exported and
    erasable by their user, as they are (never normalized, so no other id is reached); an add passes no ``held``."""
    if value is None:
        return None
    if not isinstance(value, str) or not value or "/" in value or len(value) > MAX_SCOPE_CHARS:
        raise ValueError(f"{name} must be a non-empty string without '/' of at most {MAX_SCOPE_CHARS} characters, "
                         f"got {shown(value)}")
    if held is None:
        return check_scope_characters(value, name)
    flaw = scope_flaw(value)  # once: check_scope_characters after it told it again
    if flaw is None or held(value) or _AS_LOGGED.get():
        return value
    # the read's refusal says why an id of earlier memories is taken
    raise ValueError(f"{name} {flaw.what}: {flaw.fix}; no memory is stored under it as written")


class Flaw(NamedTuple):
    """Why no call may name a scope: ``what`` it holds (said after the field's name), what to give instead and the
    day the rule came (a save or log from before may hold such a scope: loaded, and warned of)."""

    what: str
    fix: str
    since: str


# Invisible yet no format character (Unicode's Default_Ignorable_Code_Point outside Cf): the combining grapheme joiner,
# the Hangul fillers (a name of them is blank) and Khmer's two inherent vowels; 'mia' + one of them is shown as 'mia'
UNSEEN = frozenset("\u034f\u115f\u1160\u17b4\u17b5\u3164\uffa0")


def _is_selector(ch: str) -> bool:
    """A variation selector (VS1-16, VS17-256, Mongolian's free ones): invisible, it picks its base's glyph."""
    o = ord(ch)
    return 0xFE00 <= o <= 0xFE0F or 0xE0100 <= o <= 0xE01EF or 0x180B <= o <= 0x180D or o == 0x180F


def _selects(value: str, i: int) -> bool:
    """Whether the selector at ``i`` follows a base that has variations: a symbol or emoji (S*, P*: '\u2764' +
    VS16 is the red heart) outside ASCII, a letter of a script with variations (:func:`_varies`), or a keycap's
    digit, '#' or '*' (U+20E3 next). After another letter, a mark, another selector or at the start it shows
    nothing: 'mia' + VS16 looks like 'mia'."""
    if not i:
        return False
    base = value[i - 1]
    if base in "0123456789#*":
        return value[i + 1:i + 2] == "\u20e3"
    category = unicodedata.category(base)  # INFORMATION SOURCE, a letter (Ll), is the one emoji of letters
    return ord(base) > 0x7F and (category[0] in "SP" or base == "\u2139" or (category == "Lo" and _varies(base)))


def _varies(letter: str) -> bool:
    """Whether a letter (Lo) is of a script whose letters have variations: an ideograph (its ideographic or
    standardized variants), Mongolian (free variation selectors), Myanmar or Phags-pa. Hebrew, Arabic, Hangul
    or Thai + a selector shows the letter alone."""
    o = ord(letter)
    return (unicodedata.name(letter, "").startswith("CJK ") or 0x1800 <= o <= 0x18AF or 0x1000 <= o <= 0x109F
            or 0xA840 <= o <= 0xA87F)


VIRAMA = 9  # the canonical combining class of a virama (unicodedata.combining)


def _joining() -> tuple[frozenset[str], frozenset[str]]:
    """(letters that join the letter after them, letters that join the one before), as Unicode's Arabic
    presentation forms tell (an initial or medial form: joins on; a final or medial form: is joined): the stdlib
    has no Joining_Type. A letter without such forms (Syriac, N'Ko, Arabic's supplements) is in neither."""
    on, back = set(), set()
    for o in [*range(0xFB50, 0xFE00), *range(0xFE70, 0xFF00)]:
        form, _, base = unicodedata.decomposition(chr(o)).partition(" ")
        if base and " " not in base:
            if form in ("<initial>", "<medial>"):
                on.add(chr(int(base, 16)))
            if form in ("<final>", "<medial>"):
                back.add(chr(int(base, 16)))
    return frozenset(on), frozenset(back)


JOINS_ON, JOINED = _joining()


def _joins(value: str, i: int) -> bool:
    """Whether ``value[i]`` is a zero-width joiner or non-joiner that shows: right after a virama, where it picks a
    conjunct's form (Sinhala's 'Sri' is written with a ZWJ), or a non-joiner between two letters that would join
    (Persian's Hosseinzadeh: the first then takes its final form), vowel signs between taken as transparent.
    IDNA's rule for them (RFC 5892, CONTEXTJ), by :func:`_joining`'s letters. Elsewhere it shows nothing."""
    if value[i] not in "\u200c\u200d" or not i:
        return False
    after = next((ch for ch in value[i + 1:] if unicodedata.category(ch) != "Mn"), "")
    if unicodedata.combining(value[i - 1]) == VIRAMA:  # a ZWNJ ending the id shows as the virama alone does
        return value[i] == "\u200d" or unicodedata.category(after[:1] or " ")[0] == "L"
    before = next((ch for ch in reversed(value[:i]) if unicodedata.category(ch) != "Mn"), "")
    return value[i] == "\u200c" and before in JOINS_ON and after in JOINED


def _separates(value: str, i: int) -> bool:
    """Whether ``value[i]`` is the Mongolian vowel separator (U+180E) between a Mongolian letter and an a or e ending
    the word, which it shows in their separated form; elsewhere it shows nothing."""
    return (value[i] == "\u180e" and i > 0 and "\u1820" <= value[i - 1] <= "\u18aa"
            and value[i + 1:i + 2] in ("\u1820", "\u1821") and not "\u1820" <= value[i + 2:i + 3] <= "\u18aa")


def _unseen(value: str, i: int, category: str) -> bool:
    """Whether ``value[i]`` (of Unicode ``category``) is an invisible character that shows nothing there."""
    if category == "Cf":
        return not (_joins(value, i) or _separates(value, i) or emoji_joins(value, i))
    return value[i] in UNSEEN or (_is_selector(value[i]) and not _selects(value, i))


def scope_flaw(value: str) -> Flaw | None:
    """What makes ``value`` a scope no call takes, None if nothing. A control character or line break (a newline or
    NUL was taken, and the memories' ids were ``a\nb#0``: every log line, CSV row or terminal showing one broken);
    an invisible character (:func:`_unseen`): a format one (Cf) such as zero-width U+200B, U+200C, U+200D (but
    one that shows: :func:`_joins`, :func:`_separates`), U+2060, U+FEFF, a bidi control (U+202E shows ``alice``
    backwards) or a soft hyphen; one of :data:`UNSEEN`; a variation selector after a base it shows no variation of
    (:func:`_selects`); a form other than Unicode NFC (``'e\u0301'`` for ``'é'``); a word whose letters mix scripts
    (sam_model.scripts.mixed: ``'\u0430lice'`` with a Cyrillic a; ``'user-\u0418\u0432\u0430\u043d'``, a Latin word
    and a Cyrillic one, is taken); beside Latin letters, a word wholly of letters that look like Latin ones
    (sam_model.scripts.looks_latin: ``'\u0458.smith'``), though an emoji ZWJ sequence's joiner shows; a form other
    than NFKC (a fullwidth ``'\uff55\uff53\uff45\uff52'`` or mathematical bold ``'\U0001d42e'`` for ``'user'``; an emoji
    such as '\u203c\ufe0f' is taken: sam_model.scripts.compatibility); or
    letters all of other scripts that look like Latin ones (sam_model.scripts.all_alike:
    ``'\u0440\u0430\u0443\u0440\u0430'`` reads 'paypa'), TR39's whole-script confusable, or such a word beside
    others (``'\u0440\u0430\u0443\u0440\u0430-\u0418\u0432\u0430\u043d'``, like 'paypa-\u0418\u0432\u0430\u043d').
    Why: each made an id that looks like another yet was another scope, so a user whose client normalized
    differently seemed to have lost their memories, and anyone could make an id visibly the same as another's.
    Refused, not normalized: normalizing would move (on a load) or merge (on a call) the scopes of saves already
    written, which stay reachable as they are (sam_model.storechecks.flawed_scopes). A Latin letter that looks like an
    ASCII one (``'Ayd\u0131n'``, a dotless i) is taken: refusing it cost the names of living languages (Turkish,
    Icelandic), so that rule was withdrawn on 2026-12-07 (docs/integrations.md)."""
    for i, ch in enumerate(value):
        category = unicodedata.category(ch)
        if category in ("Cc", "Zl", "Zp"):
            return Flaw(f"holds the control character {ch!r} at position {i}",
                        "give an id of printable characters (a newline, tab or NUL would be written into its "
                        "memories' ids)", "2026-12-06")
        if _unseen(value, i, category):
            return Flaw(f"holds the invisible character {ch!r} ({unicodedata.name(ch, 'a format character')}) at "
                        f"position {i}", "give the id without it (an id holding it looks like the one without, "
                        "yet is another scope)", "2026-12-07")
    if not unicodedata.is_normalized("NFC", value):
        nfc = unicodedata.normalize("NFC", value)  # written as escapes: the two forms look the same
        # shown from a little before they differ: cut from the start, a long id's two forms read the same
        start = max(0, next((k for k, (a, b) in enumerate(zip(value, nfc)) if a != b), 0) - 8)
        where = f"from position {start}, " if start else ""
        return Flaw(f"is not in Unicode NFC form ({where}{ascii(value[start:])[:60]} is {ascii(nfc[start:])[:60]} "
                    "in NFC)",
                    "send it normalized to NFC, unicodedata.normalize('NFC', id) (the same letters written another "
                    "way would be another scope)", "2026-12-07")
    if (changed := compatibility(value)) is not None:
        at, nfkc = changed
        return Flaw(f"is not in Unicode NFKC form ({value[at]!r}, {unicodedata.name(value[at], 'a character')}, at "
                    f"position {at}; the id is {nfkc[:60]!r} in NFKC)",
                    "send its NFKC form, unicodedata.normalize('NFKC', id) (a fullwidth, mathematical or other "
                    "compatibility letter looks like the plain one, yet makes another scope)", "2026-12-07")
    if (mix := mixed(value)) is not None:
        said = [f"{value[i]!r} ({unicodedata.name(value[i], 'a letter')}) at position {i} is {script(value[i])}"
                for i in mix]
        return Flaw(f"mixes scripts: {said[0]}, {said[1]}",
                    "give an id each of whose words is of one script (Latin may go with Han, Hiragana, Katakana, "
                    "Hangul or Bopomofo; digits, punctuation, spaces and emoji part words): a letter of another script "
                    "that looks like one of these makes an id that looks like another's, yet is another scope",
                    "2026-12-07")
    if (alike := looks_latin(value)) is not None:
        start, end, latin = alike
        of = script(next(ch for ch in value[start:end] if ch.isalpha()))
        return Flaw(f"writes the word {value[start:end]!r} at position {start} in {of} letters that "
                    f"look like Latin ones, beside Latin letters ({value[latin]!r} at position {latin})",
                    "write that word in Latin letters, or the whole id in one script: a word of look-alikes beside "
                    "Latin words makes an id that looks like another's ('\\u0458.smith' for 'j.smith'), yet is another "
                    "scope", "2026-12-07")
    if (word := alike_word(value)) is not None:
        reads = all_alike(value)
        if any(ch.isalpha() and ch not in LATIN_OF for ch in value):  # a word of look-alikes beside other words
            start, end = word
            of = script(next(ch for ch in value[start:end] if ch.isalpha()))
            return Flaw(f"writes the word {value[start:end]!r} at position {start} wholly in {of} letters that look "
                        f"like Latin ones: the id reads as {reads!r}, which another may hold",
                        "write that word with a letter that looks like no Latin one, or in Latin letters: a word of "
                        "look-alikes makes an id that looks like another's, yet is another scope", "2026-12-07")
        of = " and ".join(dict.fromkeys(script(ch) for ch in value if ch.isalpha()))
        return Flaw(f"is written wholly in {of} letters that look like Latin ones: it reads as the Latin {reads!r}",
                    "give an id holding a letter that looks like no Latin one, or the Latin id itself: an id of "
                    "look-alikes alone looks like another's Latin id, yet is another scope", "2026-12-07")
    return None


# set while a write-ahead log's writes are replayed (:func:`as_logged`): their scopes are taken as they were logged
_AS_LOGGED: contextvars.ContextVar[bool] = contextvars.ContextVar("sam_model_scopes_as_logged", default=False)


@contextlib.contextmanager
def as_logged() -> Iterator[None]:
    """Within it (in this thread), :func:`check_scope_characters` takes a scope of any :func:`scope_flaw`: a
    write-ahead log's writes are replayed as they were acknowledged (sam_model.serve.tenants), and one logged before
    the rule came (2026-12-06, 2026-12-07) may hold such a scope. Refused on replay, it stopped the server's start,
    and the one way on was to move the log away, losing the writes; every new write is still refused."""
    token = _AS_LOGGED.set(True)
    try:
        yield
    finally:
        _AS_LOGGED.reset(token)


def check_scope_characters(value: Any, name: str) -> Any:
    """A scope without a :func:`scope_flaw` (:func:`check_scope`'s last rule, alone), else a ValueError naming
    ``name``. MemoryStore.add takes scopes by this rule, not the whole of check_scope: a bare store names no
    conversation by its scopes, so '/' is its caller's to allow, but a scope holding a newline or NUL was written into
    every log line, CSV row and save that shows it, and a ScopedMemory loading that save was left a scope no call
    may name."""
    flaw = scope_flaw(value) if isinstance(value, str) else None
    if flaw is not None and not _AS_LOGGED.get():
        raise ValueError(f"{name} {flaw.what}: {flaw.fix}")
    return value


def check_text(text: Any, name: str, empty: bool = False) -> str:
    """A text argument: a string of at most MAX_TEXT_CHARS characters (non-blank unless ``empty``)."""
    if not isinstance(text, str):
        raise TypeError(f"{name} must be a string, got {json_type(text)} {shown(text)}")
    if not empty and not text.strip():
        raise ValueError(f"{name} must not be empty or only whitespace, got {shown(text)}")
    if len(text) > MAX_TEXT_CHARS:
        raise ValueError(f"{name} has {len(text)} characters, more than the limit of {MAX_TEXT_CHARS}; "
                         "split it into several memories or summarise it")
    return text


def check_metadata(metadata: Any, name: str = "metadata") -> None:
    """A memory's metadata: None or a JSON object (string keys; strings, finite numbers, booleans, null, lists and
    objects) at most MAX_METADATA_DEPTH deep and MAX_METADATA_CHARS long as JSON. Checked when a memory is added,
    because what is stored must also be read back: metadata nested 300 deep was stored, and every later list or
    search of its scope failed to serialise it."""
    if metadata is None:
        return
    if not isinstance(metadata, Mapping):
        raise TypeError(f"{name} must be an object, got {json_type(metadata)} {shown(metadata)}")
    metadata = dict(metadata)
    stack: list[tuple[Any, str, int]] = [(metadata, name, 1)]
    while stack:
        value, where, depth = stack.pop()
        if depth > MAX_METADATA_DEPTH:
            raise ValueError(f"{where} is nested more than {MAX_METADATA_DEPTH} levels deep; flatten the metadata")
        if isinstance(value, dict):
            for k, v in value.items():
                if not isinstance(k, str):
                    raise TypeError(f"{where} has a key that is not a string: {shown(k)}")
                stack.append((v, f"{where}.{k}", depth + 1))
        elif isinstance(value, (list, tuple)):
            stack += [(v, f"{where}[{i}]", depth + 1) for i, v in enumerate(value)]
        elif isinstance(value, float) and not np.isfinite(value):
            raise ValueError(f"{where} is {value}: JSON has no such number")
        elif not (value is None or isinstance(value, (str, bool, int, float))):
            raise TypeError(f"{where} must be a string, number, boolean, null, list or object, got "
                            f"{json_type(value)}")
    size = len(json.dumps(metadata, ensure_ascii=False))
    if size > MAX_METADATA_CHARS:
        raise ValueError(f"{name} is {size} characters as JSON, more than the limit of {MAX_METADATA_CHARS}; keep "
                         "large data elsewhere and store its key")


__all__ = ["MAX_ADD_ITEMS", "MAX_BATCH_SIZE", "MAX_ENCODER_PARAMS", "MAX_K", "MAX_LAYERS", "MAX_METADATA_CHARS", "MAX_METADATA_DEPTH",
           "MAX_POSITIONS", "MAX_TEXT_CHARS", "MAX_VOCAB", "MAX_WIDTH", "check_batch_size", "check_count", "check_int",
           "check_k", "check_metadata", "check_text", "shown"]
