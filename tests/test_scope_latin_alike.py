"""Scope ids that pose as a plain ASCII id through Latin letters that look like ASCII ones are refused
(sam_model.limits.scope_flaw, sam_model.scripts.plain_alike): 'paypaı' (a dotless i) beside 'paypal', 'ɡoogle' (a
script g). Until 2026-12-07 each was a scope of its own, as no script is mixed for the mixed-script rule to tell.
The table (sam_model.scripts.LATIN_ALIKE) is derived from confusables.txt 18.0.0 by sam_model.confusables; a word
with a letter that looks like no ASCII one ('Işık', its 'ş') is taken."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sam_model import confusables
from sam_model.limits import check_scope
from sam_model.memory import HashingEncoder, ScopedMemory
from sam_model.scripts import LATIN_ALIKE, LATIN_OF


@pytest.mark.parametrize(("value", "word", "at", "letter", "name", "reads"), [
    ("paypa\u0131", "paypa\u0131", 0, 5, "LATIN SMALL LETTER DOTLESS I", "paypai"),
    ("\u0261oogle", "\u0261oogle", 0, 0, "LATIN SMALL LETTER SCRIPT G", "google"),
    ("tenant-\u1d04\u1d0f\u1d0fl", "\u1d04\u1d0f\u1d0fl", 7, 7, "LATIN LETTER SMALL CAPITAL C", "tenant-cool"),
    ("user-\u01b7", "\u01b7", 5, 5, "LATIN CAPITAL LETTER EZH", "user-3"),  # looks like a digit
    ("paypa\u0131-\u0418\u0432\u0430\u043d", "paypa\u0131", 0, 5, "LATIN SMALL LETTER DOTLESS I",
     "paypai-\u0418\u0432\u0430\u043d"),  # beside a word of another script, as 'раура-Иван' is refused
    ("Ayd\u0131n", "Ayd\u0131n", 0, 3, "LATIN SMALL LETTER DOTLESS I", "Aydin"),  # the cost: a Turkish name
    ("\u00fe\u0251t", "\u00fe\u0251t", 0, 0, "LATIN SMALL LETTER THORN", "pat"),
])
def test_a_word_of_latin_lookalikes_of_ascii_is_refused_naming_the_letter_and_what_it_reads_as(
        value, word, at, letter, name, reads):
    assert check_scope(reads, "user_id") == reads  # the id it poses as: taken, another's
    with pytest.raises(ValueError) as refused:
        check_scope(value, "user_id")
    said = str(refused.value)
    plain = reads[at:at + len(word)]
    assert said == (f"user_id writes the word {word!r} at position {at} with {value[letter]!r} ({name}) at position "
                    f"{letter}, which looks like the plain {LATIN_ALIKE[value[letter]]!r}: the id reads as "
                    f"{reads!r}, which another may hold: write that word in plain ASCII letters ({plain!r}): a "
                    "Latin letter that looks like an ASCII one makes an id that looks like another's, yet is another "
                    "scope")


@pytest.mark.parametrize("value", [
    "I\u015f\u0131k", "Ay\u015fe",  # a Turkish 'ş' beside the 'ı': no ASCII word reads so
    "\u00c7a\u011fr\u0131", "\u00de\u00f3ra", "Jos\u00e9", "stra\u00dfe", "Bj\u00f8rn", "\u00c6r\u00f8",
    "c\u0153ur",  # two-letter skeletons (æ 'ae', œ 'oe') are left out: one glyph with a join a reader sees
    "mia", "user-42", "\u0418\u0432\u0430\u043d", "\U0001f469\U0001f4bb",
])
def test_a_word_with_a_letter_that_looks_like_no_ascii_one_is_taken(value):
    assert check_scope(value, "user_id") == value


def test_every_entry_point_of_a_scoped_memory_refuses_it():
    m = ScopedMemory(HashingEncoder(16))
    m.add("mine", user_id="paypai")
    for call in (lambda: m.add("x", user_id="paypa\u0131"), lambda: m.search("mine", user_id="paypa\u0131"),
                 lambda: m.get_all(user_id="paypa\u0131"), lambda: m.delete_all(user_id="paypa\u0131")):
        with pytest.raises(ValueError, match="^user_id writes the word 'paypa\u0131'"):
            call()
    assert [r["memory"] for r in m.get_all(user_id="paypai")["results"]] == ["mine"]


def test_the_tables_map_non_ascii_letters_nfkc_keeps_to_one_ascii_character():
    for letter, plain in LATIN_ALIKE.items():
        assert not letter.isascii() and letter.isalpha() and len(plain) == 1 and plain.isascii() and plain.isalnum()
    assert not set(LATIN_ALIKE) & set(LATIN_OF)


HEADER = "# confusables.txt\n# Version: 18.0.0\n#\n"


def test_the_script_derives_a_row_of_one_ascii_letter_and_leaves_out_two():
    """On rows written here: the dotless i (one letter, 'i') is kept, æ ('ae') and a Latin letter that looks like a
    Greek one are left out, a Cyrillic a goes to LATIN_OF; a file of another version is refused."""
    text = HEADER + ("0131 ;\t0069 ;\tMA\t# dotless i\n00E6 ;\t0061 0065 ;\tMA\t# ae\n0251 ;\t03B1 ;\tMA\t# x\n"
                     "0430 ;\t0061 ;\tMA\t# Cyrillic a\n")
    latin_of, alike = confusables.derive(text)
    assert alike == {"\u0131": "i"}
    assert latin_of == {"\u0430": "a", "\u03c7": "x"}
    with pytest.raises(ValueError, match="^confusables.txt is not version 18.0.0 .*: give the 18.0.0 file, sha256 "):
        confusables.derive(HEADER.replace("18.0.0", "17.0.0") + "0131 ;\t0069 ;\tMA\n")


def test_the_committed_tables_are_the_ones_derived_from_confusables_txt():
    """confusables.txt is not shipped (nor fetched: the project runs without a network): point SAM_CONFUSABLES_TXT at
    a copy of 18.0.0 (sam_model.confusables.SHA256) to run this, as after any change of the tables."""
    path = os.environ.get("SAM_CONFUSABLES_TXT")
    if not path or not Path(path).is_file():
        pytest.skip("no confusables.txt 18.0.0 here: set SAM_CONFUSABLES_TXT to a copy to check the tables")
    latin_of, alike = confusables.derive(Path(path).read_text(encoding="utf-8"))
    assert latin_of == LATIN_OF
    assert alike == LATIN_ALIKE


@pytest.mark.parametrize("row", ["XYZ ;\t0069 ;\tMA", "0131 ;\t110000 ;\tMA", "0131 ;\t00 69x ;\tMA"])
def test_a_damaged_row_is_refused_naming_its_line(row):
    """A row that is no code points was refused as int()'s or chr()'s bare words ('invalid literal for int() with
    base 16'), naming neither the line nor what to do."""
    with pytest.raises(ValueError) as refused:
        confusables.derive(HEADER + "0131 ;\t0069 ;\tMA\t# dotless i\n" + row + "\n")
    said = str(refused.value)
    assert said.startswith(f"confusables.txt line 5: {row!r} is no row of code points in hex"), said
    assert said.endswith(f"give the 18.0.0 file, sha256 {confusables.SHA256}") and "\n" not in said, said
