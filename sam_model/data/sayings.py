"""Which events say a value: the spec's says(text, s), each event's text searched once per value, and the masking
of the constraints that say a needed value.

The labelling rule (:mod:`sam_model.data.toolstate`) traces a needed argument value to the earlier events whose
text says it, and hides from a decision point's constraints every entry that says a needed value; both ask
:func:`says`. A decision asks it of every event before it, and a live memory decides its open turn's calls again at
each add, so :class:`Sayings` keeps what it found. The search is its own module so that what it costs can be read
and counted apart from the state (tests/test_live_work.py, sam_model.bench.live_adds count :func:`says` calls here).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from sam_model.data.provenance import contains_value
from sam_model.data.text import norm
from sam_model.data.trivialvalues import NUMBER

_ONE_DECIMAL = re.compile(r"[+-]?\d+\.\d")  # 45.6: a JSON number that may have been written 45.60
# a number written with thousands separators (3,500; 1,234.50), one token: its groups are no numbers of their own;
# next to a bracket it is a JSON list's items ([204,305,412]: JSON writes no number with separators)
_GROUPED = re.compile(r"(?<![\w,\[])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\w\]]|,\d)")
# the plural noun a list of numbers follows (ids 123,456; orders 123,456 and 789; room ids: 204,305), right before
# it, a space between (the text is normalised: one) or a colon (group 2): a word of letters ending in s (not ss, us or
# is: less, plus, this)
_PLURAL_BEFORE = re.compile(r"(?<![\w'-])([a-z]{2,}(?<![sui])s)(?: |(:) ?)$")
# the nouns a list still follows after a colon, which a count follows too (results: 1,234; users: 12,345)
_ID_NOUNS = frozenset({"ids", "numbers", "nos"})
# words ending so that are no list's noun: verbs and words of an amount, before which a number is one amount
# (costs 3,500; totals 3,500; was 3,500; miles 3,500; sales 3,500)
_NOT_LISTS = frozenset("""was has does goes costs pays totals equals gets earns owes weighs charges makes takes needs
says shows reads reaches exceeds adds amounts comes sits stands remains becomes seems its yes hers ours yours
theirs dollars euros pounds cents points miles credits fees sales expenses payments prices rates sums savings
earnings taxes revenues balances funds units kms lbs hours minutes seconds days weeks months years times
""".split())
# nouns of what is counted, never listed by a small id (traffic, sizes): a number after them is a count, whatever
# its groups (visitors 204,305; requests 845,210), as one whose groups look like no list's is (visitors 12,345). Not
# lines, rows, records: their numbers are listed (a tool's lines 212,345, a sheet's rows 212,345)
_COUNTED = frozenset("""visitors viewers listeners downloads installs signups views pageviews visits clicks
impressions hits requests sessions tokens bytes words characters steps""".split())
# nouns of people, whose ids a user lists (ban users 123,456; --allowed-users 123,456) and a later call takes
# (get_user(456)), and which a table counts (active users 123,456): a count only after a word that says one
_PEOPLE = frozenset("""users customers members subscribers followers employees students patients readers accounts
clients""".split())
_TALLY_WORDS = frozenset("active total new unique daily monthly weekly registered paying returning".split())
# the nouns of a count an "of" joins to what it counts (total number of users 123,456; count of customers 204,305;
# number of orders 123,456): a count said before its noun, of any noun (a list of users 123,456 is a list, and so is
# a number of orders 123,456: some of them)
_COUNT_OF = frozenset("number count total tally".split())


def listed_numbers(text_norm: str) -> list[tuple[int, int]]:
    """The spans of the lists of numbers ``text_norm`` writes with no space after their commas that have the shape
    of a number with thousands separators (:data:`_GROUPED`: every group after a comma of exactly three digits, the
    thousands a number reads in), so the shape alone cannot tell them apart; what comes before tells. A list is read
    where a plural noun comes right before it, a space between (``ids 123,456``, ``orders 123,456 and 789``: a word of
    letters ending in s, not a verb or a word of an amount, :data:`_NOT_LISTS`: ``costs 3,500``, ``miles 3,500``),
    or a colon after ids, numbers or nos (``room ids: 204,305``; a count follows other nouns so, ``results:
    1,234``), and it has no decimals (1,234.50 is an amount): its items are said, the whole number not (an order 456
    the user listed had been said by no event, and 123456 by the list). Anywhere else (``$3,500``, ``a budget of
    3,500``, ``123,456 and 789`` with no noun) it is one number, as before; a JSON list (``[204,305,412]``) is read
    by its bracket (:data:`_GROUPED` never takes it). Its items must look like one list's (:func:`_list_shaped`):
    each of three digits, none 000, where a count after its noun is written so rarely (``active users 12,345``,
    ``steps 10,000``, ``items 1,000,000`` are counts, whose number a later call may pass), and its noun must be one
    of things listed by id, not counted (:func:`_counted`: ``visitors 204,305``, ``active users 123,456`` are
    counts, which a table prints after their noun with no colon: the text is normalised, its columns' spaces one;
    ``ban users 123,456`` lists ids). The price: a list after such a noun (``requests 123,456`` naming two request
    ids) reads as one number."""
    spans = []
    for m in _GROUPED.finditer(text_norm):
        before = _PLURAL_BEFORE.search(text_norm, max(0, m.start() - 40), m.start())
        if _list_shaped(m.group()) and before is not None and before.group(1) not in _NOT_LISTS \
                and not _counted(text_norm, before) and (before.group(2) is None or before.group(1) in _ID_NOUNS):
            spans.append(m.span())
    return spans


def _counted(text_norm: str, before: re.Match) -> bool:
    """Whether the noun ``before`` a number (:data:`_PLURAL_BEFORE`'s match) is one of counted things: traffic and
    sizes (:data:`_COUNTED`), or people after a word that says a count (``active users``, ``total customers``:
    :data:`_TALLY_WORDS`), or any noun after a count's noun and ``of`` (``total number of users``, ``count of
    customers``, ``number of orders``: :data:`_COUNT_OF`; the word before the noun is ``of``, which says no count
    alone, ``a list of users 123,456``, nor does ``a number of``, some of them, which lists: ``a number of orders
    123,456 failed``). People alone list ids (``ban users 123,456``), which a later call takes: read as one number,
    the id a call passed was said by no event (118 read every ``users 123,456`` so). 124 took a count's noun and
    ``of`` before people only, so ``total number of orders 123,456`` was read as two order ids."""
    noun = before.group(1)
    if noun in _COUNTED:
        return True
    word = text_norm[max(0, before.start(1) - 32):before.start(1)].split()
    if len(word) > 1 and word[-1] == "of" and word[-2] in _COUNT_OF:  # a count of any noun, but "a number of": some
        return word[-2] != "number" or not _some(word[:-2])
    return noun in _PEOPLE and bool(word) and word[-1] in _TALLY_WORDS


_DETERMINERS = frozenset("the this that these those its their our your his her my".split())


def _some(lead: list[str]) -> bool:
    """Whether the words before ``number of`` make it ``a number of`` (some of them, which lists): ``a`` or ``an``,
    perhaps with up to two words that size it between (``a small number of users 123,456 were banned``, ``a very
    large number of``), none a tally word (``a total number of`` counts) or a determiner. a0e9552 took only ``a``
    right before ``number``, so ``a small number of users 123,456`` was read as one count, the ids said by no event."""
    for w in reversed(lead[-3:]):
        if w in ("a", "an"):
            return True
        if w in _TALLY_WORDS or w in _COUNT_OF or w in _DETERMINERS or not w.isalpha():
            return False
    return False


def _list_shaped(number: str) -> bool:
    """Whether a number written with thousands separators may be a list of items written with no space
    (:func:`listed_numbers`): no decimals (1,234.50 is an amount), a first group of three digits as every later one
    has (a list's items alike, 123,456; a count's first group is any: 12,345) and no group 000 (a round count,
    10,000 or 1,000,000: no list's item). A count after a plural noun (``active users 12,345``, ``steps 10,000``)
    had been read as a list, so the number it gave was said by no event."""
    groups = number.split(",")
    return "." not in number and len(groups[0]) == 3 and "000" not in groups[1:]


def says(text_norm: str, s: str) -> bool:
    """The spec's says(text, s): ``text_norm`` (already normalised) contains ``s`` as a whole token, or ``s``
    without a leading ``#`` (when ``s`` starts with ``#`` and is longer than 2), or ``s`` with ``_`` read as a
    space. A number is no whole token inside an amount written with thousands separators (:func:`_whole_number`)."""
    if contains_value(text_norm, s) and _whole_number(text_norm, s):
        return True
    if s.startswith("#") and len(s) > 2 and contains_value(text_norm, s[1:]):
        return True
    return "_" in s and contains_value(text_norm, s.replace("_", " "))


def _whole_number(text_norm: str, s: str) -> bool:
    """Whether ``text_norm``, which contains ``s`` as a whole token, says it outside every number written with
    thousands separators (:data:`_GROUPED`) where ``s`` is a number: 500 is in 3,500 as a whole token, commas being no
    word characters, but 3,500 is one number, which says no 500 (an invented amount of 500 was traced to a budget
    of $3,500). A list of numbers written with no space after the commas (123,456) reads as one number too, but
    for a JSON list's (``[204,305,412]``, JSON.stringify's and ``jq -c``'s: JSON writes no separators in a number),
    whose items had been said by no event; and but for a list a plural noun names (``ids 123,456``:
    :func:`listed_numbers`)."""
    if "," not in text_norm or not NUMBER.fullmatch(s):
        return True
    listed = listed_numbers(text_norm)
    grouped = [m.span() for m in _GROUPED.finditer(text_norm) if m.span() not in listed]
    return any(not any(a <= m.start() and m.end() <= b and (a, b) != m.span() for a, b in grouped)
               for m in re.finditer(r"(?<!\w)" + re.escape(s) + r"(?!\w)", text_norm))


def says_alone(text_norm: str, s: str) -> bool:
    """Whether ``text_norm`` :func:`says` ``s`` at least once outside a longer hyphenated name: not right after a word
    and a hyphen, nor right before a hyphen and a word (``ledger`` in ``namespace ledger``, not in ``ledger-api``).
    The spec's whole token ends at a hyphen, so a DevOps log's names say every name they start with: a question about
    ``ledger-api`` said namespace ``ledger``, and became the label of every call in it, while the service
    catalog's row that gave it never was. Read by the labelling rule to prefer the events that say a value alone
    (:meth:`~sam_model.data.toolstate.TranscriptState._judge_one`), never to drop the only ones that say it."""
    variants = [s] + ([s[1:]] if s.startswith("#") and len(s) > 2 else []) + (
        [s.replace("_", " ")] if "_" in s else [])
    return any(v and re.search(r"(?<!\w)(?<!\w-)" + re.escape(v) + r"(?!\w)(?!-\w)", text_norm) is not None
               for v in variants)


def is_name_part(value: Any) -> bool:
    """Whether a hyphenated name that holds ``value`` is a longer name built of it, so that an event saying it alone
    is its better label (:func:`says_alone`): a string with a letter and no capital, as the names a hyphen joins are
    written (Kubernetes objects, services, regions: ``ledger`` of ``ledger-api``). A hyphen between numbers is a
    range, a date or a phone number (a budget of ``800-1200``), between capitals a route or a key (``JFK-LAX``,
    ``PAY-4521``): there the hyphenated mention is what gave the value, and the spec's first event stays its label."""
    return isinstance(value, str) and any(c.isalpha() for c in value) and value == value.lower()


def number_forms(value: Any) -> list[str]:
    """The normalised forms a text may say ``value`` in: ``norm(value)``, and for a JSON number (the extension of
    :mod:`sam_model.data.toolstate`'s doc, "amounts") its two-digit form where it has one decimal digit (45.6: 45.60)
    and, from 1,000 on, its forms with thousands separators (3500: 3,500; 1234.5: 1,234.5 and 1,234.50). A model writes
    a price as it read it, ``"amount": 45.60``, or a budget of $3,500 as 3500, and no text saying $45.60 or $3,500 said
    JSON's 45.6 or 3500 as a whole token: the amount was untraceable. A string keeps its one form (``"3.1"`` is no
    ``"3.10"``)."""
    s = norm(value)
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not NUMBER.fullmatch(s):
        return [s]
    forms = [s]
    if _ONE_DECIMAL.fullmatch(s):
        forms.append(s + "0")
    if abs(float(value)) >= 1000:
        if float(value).is_integer():
            forms.append(f"{int(value):,}")
        else:  # two decimals only where that is the same number (1234.5678 is no 1,234.57)
            forms += [f"{value:,}"] + ([f"{value:,.2f}"] if float(f"{value:.2f}") == value else [])
    return list(dict.fromkeys(forms))


def whole_amount(text_norm: str, form: str) -> bool:
    """Whether ``text_norm``, which :func:`says` ``form`` (one of :func:`number_forms`' added forms of a number, not its
    ``norm``, which says alone judges), says it as a whole number. says reads 3,500 in 3,500,000 (or in
    1,500,3,500) as a whole token, commas being no word characters, where it is the first (or last) groups of
    another number: a form with thousands separators counts only where no group follows or comes before it (3,500
    followed by a word, a space, a full stop or its cents is said), and none inside a list a plural noun names (ids
    123,456 says no 123456: :func:`listed_numbers`)."""
    if "," not in form:
        return True
    found = [m.span() for m in re.finditer(r"(?<!\d,)(?<!\w)" + re.escape(form) + r"(?!\w)(?!,\d)", text_norm)]
    listed = listed_numbers(text_norm) if found else []
    return any(not any(a <= start and end <= b for a, b in listed) for start, end in found)


class Sayings:
    """Which events say each value (:func:`says` of the value over each event's normalised text), kept across
    decisions: a decision traces its values through every earlier event, so each call searched every text before
    it again, and a live add that reads its scope's open turn again decided the turn's calls anew
    at every add (a Claude Code response of 100 reads of 90 KB, a line an add: 9 minutes, most of it these
    searches). An event's text is searched once per value; the texts it was searched in are kept (the tracker's own
    strings), and where an event's text is no longer the one searched (a rollback, a re-read of the open turn, a
    rewrite) the events from there are searched again, so a hit is always what :func:`says` gives now. Not saved:
    a loaded tracker searches afresh."""

    def __init__(self) -> None:
        self.texts: list[str] = []  # the texts searched, event by event
        self.found: dict[str, tuple[int, list[int]]] = {}  # value -> (events searched, those that say it)
        self.alone_found: dict[tuple[int, str], bool] = {}  # (event, value) -> whether it says the value alone
        self.policy_text, self.policy_found = "", {}  # the policy searched, value -> whether it says it

    def sync(self, texts: list[str]) -> None:
        """Keep what was found in the events whose text is still ``texts``' (equal texts are the same object from
        here, so the next check is one comparison); forget the rest."""
        kept, n = self.texts, 0
        for a, b in zip(kept, texts):
            if a is not b:
                if a != b:
                    break
                kept[n] = b
            n += 1
        if n < len(kept):
            del kept[n:]
            self.found = {s: (min(upto, n), [i for i in hits if i < n]) for s, (upto, hits) in self.found.items()}
            self.alone_found = {k: v for k, v in self.alone_found.items() if k[0] < n}

    def hits(self, texts: list[str], s: str) -> list[int]:
        """The events among ``texts`` (synced first: :meth:`sync`) that say ``s``, in order."""
        upto, hits = self.found.get(s, (0, []))
        if upto > len(texts):
            return [i for i in hits if i < len(texts)]
        if upto < len(texts):
            hits = hits + [i for i in range(upto, len(texts)) if says(texts[i], s)]
            self.texts.extend(texts[len(self.texts):])
            self.found[s] = (len(texts), hits)
        return hits

    def alone(self, texts: list[str], i: int, s: str) -> bool:
        """:func:`says_alone` of ``s`` in event ``i`` of ``texts`` (synced first, as for :meth:`hits`), kept as the
        hits are: a live add judges its open turn's calls again at every add."""
        key = (i, s)
        if key not in self.alone_found:
            self.alone_found[key] = says_alone(texts[i], s)
        return self.alone_found[key]

    def policy(self, text: str, s: str) -> bool:
        """:func:`says` of ``s`` in the policy ``text`` (a long one, Codex's instructions, searched once a value)."""
        if text is not self.policy_text and text != self.policy_text:
            self.policy_text, self.policy_found = text, {}
        if s not in self.policy_found:
            self.policy_found[s] = says(text, s)
        return self.policy_found[s]


def mask_constraints(constraints: Mapping[str, Any], needed: Mapping[str, Sequence[str]]) -> dict[str, Any]:
    """Constraints without the needed paths and without every entry whose value (or an item of it) says a
    needed value: the state knows what it needs, not the values."""
    values = [s for vs in needed.values() for s in vs]

    def leaks(v: Any) -> bool:
        items = v if isinstance(v, list) else [v]
        return any(says(norm(x), s) for x in items for s in values)

    return {k: v for k, v in constraints.items() if k not in needed and not leaks(v)}
