"""Which writing systems an id's letters are of, for a rule on scope ids (sam_model.limits.scope_flaw): an id whose
letters mix scripts ('аlice' with a Cyrillic 'а') looks like another tenant's or user's id ('alice') yet is another
scope. The rule is Unicode TR39's "highly restrictive" one: the letters are of one script, or Latin with the scripts
of Japanese (Han, Hiragana, Katakana), Korean (Han, Hangul) or Chinese (Han, Bopomofo). Digits, punctuation,
symbols, emoji and combining marks (scripts Common and Inherited) go with any. A look-alike written wholly in
another script ('рау', Cyrillic) is not told by this rule: that needs TR39's confusables table."""

from __future__ import annotations

import functools
import unicodedata

import regex

# the scripts told apart by name; a letter of any other is of the script its Unicode name starts with, which names
# a script for the letters of every other (ADLAM LETTER ALIF, OSAGE SMALL LETTER A)
NAMED = ("Latin", "Greek", "Cyrillic", "Armenian", "Hebrew", "Arabic", "Syriac", "Thaana", "Nko", "Devanagari",
         "Bengali", "Gurmukhi", "Gujarati", "Oriya", "Tamil", "Telugu", "Kannada", "Malayalam", "Sinhala", "Thai",
         "Lao", "Tibetan", "Myanmar", "Georgian", "Hangul", "Ethiopic", "Cherokee", "Canadian_Aboriginal", "Ogham",
         "Runic", "Khmer", "Mongolian", "Hiragana", "Katakana", "Bopomofo", "Han", "Yi", "Coptic", "Tifinagh",
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


def mixed(value: str) -> tuple[int, int] | None:
    """(the positions of two letters of ``value`` of scripts that do not go together, the first of the one, the
    first of the other to go with none before it), or None: the letters are of one script, or Latin with Japanese,
    Korean or Chinese (TR39's highly restrictive)."""
    latin: int | None = None  # the first Latin letter's position
    others: frozenset[str] | None = None  # what every non-Latin letter so far may be written with
    other = 0  # the position of the non-Latin letter that last narrowed them
    for i, ch in enumerate(value):
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


__all__ = ["emoji_joins", "mixed", "script"]
