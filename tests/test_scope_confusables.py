"""Scope ids that pose as a Latin id with no Latin letter to tell them by are refused on every entry point
(sam_model.limits.scope_flaw): an id written wholly in Cyrillic, Greek or Armenian letters that look like Latin ones
('раура', Cyrillic, reads 'paypa'; TR39's whole-script confusable, which browsers show as punycode), and an id that
Unicode NFKC changes (fullwidth 'ｕｓｅｒ-1', mathematical bold '𝐮𝐬𝐞𝐫'). Until 2026-12-07 each was taken as a scope of
its own, another tenant's or user's look-alike. A name in its own script holding a letter that looks like no Latin
one is taken, and a save or log holding such an id (written before) loads, its memories read, updated and deleted
by the id as written; no add takes it."""

from __future__ import annotations

import logging
import unicodedata

import pytest

import sam_model.memory.scoped as scoped_module
import sam_model.store as store_module
from sam_model.limits import check_scope
from sam_model.memory import HashingEncoder, ScopedMemory
from sam_model.scripts import LATIN_OF, all_alike

PAYPA = "\u0440\u0430\u0443\u0440\u0430"  # Cyrillic er, a, u, er, a
SCOPE = "\u0455\u0441\u043e\u0440\u0435"  # Cyrillic dze, es, o, er, ie
FULLWIDTH = "\uff55\uff53\uff45\uff52-1"
BOLD = "\U0001d42e\U0001d42c\U0001d41e\U0001d42b"  # MATHEMATICAL BOLD SMALL U, S, E, R


@pytest.mark.parametrize(("value", "of", "reads"), [
    (PAYPA, "Cyrillic", "paypa"), (SCOPE, "Cyrillic", "scope"), ("\u0410\u0412\u0421-42", "Cyrillic", "ABC-42"),
    ("\u03bf\u03bd\u03b1", "Greek", "ova"), ("\u0391\u039c\u0391\u0396\u039f\u039d", "Greek", "AMAZON"),
    ("\u0441\u0430\u0445\u0430\u0440 \u039a\u039f", "Cyrillic and Greek", "caxap KO"),  # two words, two scripts
    ("\u0570\u0585\u057d", "Armenian", "hou"),
    # rows of confusables.txt 17.0.0 the table lacked until 2026-12-07: г r, σ o, ց g, ք f, գ q, Տ S, Ԍ G, Ϝ F
    ("\u0440\u0430\u0440\u0435\u0433", "Cyrillic", "paper"), ("\u0581\u0585\u0585\u0581", "Armenian", "goog"),
    ("\u0584\u0585\u0585", "Armenian", "foo"), ("\u0563\u057d", "Armenian", "qu"), ("\u054f\u0555\u054d", "Armenian", "SOU"),
    ("\u03c3\u03b9\u03bf", "Greek", "oio"), ("\u050c\u041e", "Cyrillic", "GO"), ("\u03dc\u039f", "Greek", "FO"),
    # and, checked against the whole file the same day: ѡ ш ѵ ҽ Ь Һ w w v e b h, ռ ա յ ւ n w j i, Ϳ Ϻ ϸ J M p
    ("\u0461\u0461\u0461", "Cyrillic", "www"), ("\u0448\u0435\u0475", "Cyrillic", "wev"),
    ("\u04bd\u0445\u0435\u0441", "Cyrillic", "exec"), ("\u042c\u04ba\u0430", "Cyrillic", "bha"),
    ("\u057c\u0585\u0561", "Armenian", "now"), ("\u0575\u0585\u0582\u057c", "Armenian", "join"),
    ("\u037f\u039f", "Greek", "JO"), ("\u03fa\u039f\u03a4\u039f", "Greek", "MOTO"), ("\u03f8\u03bf", "Greek", "po"),
])
def test_an_id_wholly_of_latin_lookalikes_is_refused_naming_the_latin_it_reads_as(value, of, reads):
    with pytest.raises(ValueError) as refused:
        check_scope(value, "agent_id")
    said = str(refused.value)
    assert said.startswith(f"agent_id is written wholly in {of} letters that look like Latin ones: it reads as the "
                           f"Latin {reads!r}: give an id holding a letter that looks like no Latin one"), said
    assert "\n" not in said


@pytest.mark.parametrize("value", [
    "tenant-\u0418\u0432\u0430\u043d", "user-\u0645\u062d\u0645\u062f",  # a Latin prefix, a name in its own script
    "\u0418\u0432\u0430\u043d", "\u043c\u043e\u0441\u043a\u0432\u0430",  # 'И', 'м', 'к', 'в' look like no Latin letter
    "\u0418\u0432\u0430\u043d-\u0441\u0430\u0445\u0430\u0440\u043e\u0432",  # 'в' in each word
    "\u03a9\u03bc\u03ad\u03b3\u03b1", "user-\u03a9\u03bc\u03ad\u03b3\u03b1", "\u03c1\u03bf\u0394-\u0394",
    "\u0414\u043c\u0438\u0442\u0440\u0438\u0439", "\u0391\u03bb\u03ad\u03be\u03b1\u03bd\u03b4\u03c1\u03bf\u03c2",
    "\u0531\u0580\u0561\u0574", "\u0418\u0432\u0430\u043d \u0418\u0432\u0430\u043d\u043e\u0432",
    "42", "\U0001f469\U0001f4bb", "alice",
])
def test_a_name_with_a_letter_that_looks_like_no_latin_one_is_taken(value):
    assert check_scope(value, "user_id") == value


@pytest.mark.parametrize(("value", "word", "at", "of", "reads"), [
    (PAYPA + "-\u0418\u0432\u0430\u043d", PAYPA, 0, "Cyrillic", "paypa-\u0418\u0432\u0430\u043d"),
    ("\u0418\u0432\u0430\u043d-\u0441\u0430\u0445\u0430\u0440", "\u0441\u0430\u0445\u0430\u0440", 5,
     "Cyrillic", "\u0418\u0432\u0430\u043d-caxap"),
    ("\u03c1\u03bf-\u0394", "\u03c1\u03bf", 0, "Greek", "po-\u0394"),
    ("\u0531\u0580\u0561\u0574 \u0570\u0585\u057d", "\u0570\u0585\u057d", 5, "Armenian",
     "\u0531\u0580\u0561\u0574 hou"),
])
def test_a_word_of_latin_lookalikes_beside_a_word_of_its_script_is_refused(value, word, at, of, reads):
    """'раура-Иван' looks the same as 'paypa-Иван', which the rule takes (a Latin word beside a Cyrillic one), yet
    was another scope, taken for the 'И' of its other word: the look-alike word is refused wherever it stands."""
    assert check_scope(reads, "user_id") == reads  # the id it poses as: taken, another's
    with pytest.raises(ValueError) as refused:
        check_scope(value, "user_id")
    said = str(refused.value)
    assert said.startswith(f"user_id writes the word {word!r} at position {at} wholly in {of} letters that look "
                           f"like Latin ones: the id reads as {reads!r}, which another may hold: write that word "
                           "with a letter that looks like no Latin one, or in Latin letters"), said
    assert "\n" not in said


def test_a_greek_letter_in_a_latin_word_is_refused_as_mixing_scripts():
    """'user-Ωmega': Ω looks like no Latin letter, but 'Ωmega' mixes Greek and Latin in one word (TR39's highly
    restrictive rule), so it is refused, as before; 'user-Ωμέγα', the word all Greek, is taken (above)."""
    with pytest.raises(ValueError, match="^user_id mixes scripts: '\u03a9' \\(GREEK CAPITAL LETTER OMEGA\\) at "
                                         "position 5 is Greek, 'm'"):
        check_scope("user-\u03a9mega", "user_id")


# every Cyrillic, Greek and Armenian letter that NFKC leaves as it is and whose skeleton in confusables.txt 18.0.0 is
# one ASCII Latin letter, with that letter, as sam_model.confusables derives them (python -m sam_model.confusables
# PATH; tests/test_confusables.py checks the table against the file where SAM_CONFUSABLES_TXT names a copy):
DERIVED = ("ͿJ ΑA ΒB ΕE ΖZ ΗH Ιl ΚK ΜM ΝN ΟO ΡP ΤT ΥY ΧX αa γy ιi νv οo ρp σo υu ϜF ϳj ϸp ϺM "
           "ЅS Іl ЈJ АA ВB ЕE КK МM НH ОO РP СC ТT УY ХX Ьb аa гr еe оo рp сc уy хx шw ѕs іi јj ѡw "
           "ѴV ѵv ҮY үy Һh һh ҽe Ӏl ӏl ԁd ԌG ԚQ ԛq ԜW ԝw "
           "ՍU ՏS ՕO աw գq զq հh յj ոn ռn սu ցg ւi քf օo ᲂo ᲃc ᴦr ꙇi")


def test_the_table_is_the_confusables_rows_of_its_scripts_that_nfkc_keeps():
    """Until 2026-12-07 the table lacked ш, ѡ, ѵ, ҽ, ռ, ա, Ϳ, Ϻ and others ('ѡѡѡ', reading 'www', was taken), read
    'ӏ' as 'i' where the file says 'l', and held 'ϲ', which NFKC writes as 'σ' before the table is read. Left out on
    purpose: letters whose skeleton is two Latin letters ('Ю' 'lO', 'Ы' 'bl'); kept: 'χ', drawn as 'x', whose
    prototype is LATIN SMALL LETTER CHI."""
    derived = {pair[0]: pair[1] for pair in DERIVED.split()}
    assert all(len(pair) == 2 for pair in DERIVED.split())
    assert {k: v for k, v in LATIN_OF.items() if k != "\u03c7"} == derived
    assert LATIN_OF["\u03c7"] == "x"
    assert [ch for ch in LATIN_OF if unicodedata.normalize("NFKC", ch) != ch] == []


def test_the_table_maps_each_lookalike_to_one_latin_letter_of_its_look():
    for letter, latin in LATIN_OF.items():
        assert unicodedata.name(letter).split()[0] in ("CYRILLIC", "GREEK", "ARMENIAN"), letter
        assert len(latin) == 1 and latin.isascii() and latin.isalpha(), (letter, latin)
    assert all_alike("\u0456\u0455") == "is" and all_alike("is") is None and all_alike("42") is None


@pytest.mark.parametrize(("value", "at", "name", "nfkc"), [
    (FULLWIDTH, 0, "FULLWIDTH LATIN SMALL LETTER U", "user-1"), (BOLD, 0, "MATHEMATICAL BOLD SMALL U", "user"),
    ("mia-\u2460", 4, "CIRCLED DIGIT ONE", "mia-1"), ("\ufb01le", 0, "LATIN SMALL LIGATURE FI", "file"),
    ("user\u00a01", 4, "NO-BREAK SPACE", "user 1"),
])
def test_an_id_nfkc_changes_is_refused_naming_its_nfkc_form(value, at, name, nfkc):
    with pytest.raises(ValueError) as refused:
        check_scope(value, "run_id")
    said = str(refused.value)
    assert said.startswith(f"run_id is not in Unicode NFKC form ({value[at]!r}, {name}, at position {at}; the id is "
                           f"{nfkc!r} in NFKC): send its NFKC form, unicodedata.normalize('NFKC', id)"), said
    assert "\n" not in said


def test_ids_nfkc_leaves_as_they_are_and_emoji_it_would_write_as_letters_are_taken():
    """'‼️' is '!!' in NFKC, 'ℹ️' 'i', '™️' 'TM': shown as pictures they look like none of them, and were taken."""
    for value in ("Jos\u00e9", "\u7530\u4e2d", "\ud55c\uad6d", "\u2764\ufe0f\u200d\U0001f525", "a b", "mia_li-3",
                  "\u203c\ufe0f", "\u2139\ufe0f", "mia-\u2122\ufe0f", "\u3297\ufe0f"):
        assert check_scope(value, "user_id") == value
    with pytest.raises(ValueError, match="the id is 'mia-\u203c\ufe0f-1' in NFKC"):  # the emoji kept as it is
        check_scope("mia-\u203c\ufe0f-\uff11", "user_id")
    assert check_scope("\U0001f201", "user_id") == "\U0001f201"  # a picture by default, no selector needed


@pytest.mark.parametrize(("value", "at", "name", "nfkc"), [
    ("adm\u2139n", 3, "INFORMATION SOURCE", "admin"), ("wow\u203c", 3, "DOUBLE EXCLAMATION MARK", "wow!!"),
    ("\u24c2ia", 0, "CIRCLED LATIN CAPITAL LETTER M", "Mia"), ("acme\u2122", 4, "TRADE MARK SIGN", "acmeTM"),
    ("a\U0001f202", 1, "SQUARED KATAKANA SA", "a\u30b5"),
])
def test_a_pictograph_without_its_emoji_selector_is_text_and_refused_naming_its_nfkc_form(value, at, name, nfkc):
    """Without U+FE0F after it, 'ℹ' (a letter) is drawn as a text 'i', '‼' as '!!': 'admℹn' looked like 'admin',
    which another may hold, yet was taken as an emoji. With the selector it is a picture, and taken (above)."""
    assert check_scope(value[:at + 1] + "\ufe0f" + value[at + 1:], "user_id")  # the picture: taken
    with pytest.raises(ValueError) as refused:
        check_scope(value, "user_id")
    said = str(refused.value)
    assert said.startswith(f"user_id is not in Unicode NFKC form ({value[at]!r}, {name}, at position {at}; the id is "
                           f"{nfkc!r} in NFKC)"), said


@pytest.mark.parametrize("old_id", [PAYPA, FULLWIDTH, BOLD, PAYPA + "-\u0418\u0432\u0430\u043d", "adm\u2139n",
                                    "\u0415\u0433\u043e\u0440"])
def test_an_old_save_under_such_an_id_loads_its_memories_read_updated_and_deleted(tmp_path, monkeypatch, caplog,
                                                                                  old_id):
    with monkeypatch.context() as before:  # the entry points as they were until 2026-12-07: the id taken
        before.setattr(scoped_module, "check_scope", lambda value, name: value)
        before.setattr(store_module, "check_scope_characters", lambda value, name: value)
        old = ScopedMemory(HashingEncoder(16))
        old.add([{"role": "user", "content": "my card ends 4242"}, {"role": "user", "content": "I fly on Monday"}],
                user_id=old_id)
        old.add("I live in Lyon", user_id="paypa")
        old.save(tmp_path / "m")
    with caplog.at_level(logging.WARNING, logger="sam_model.store"):
        memory = ScopedMemory.load(tmp_path / "m", HashingEncoder(16))
    said = [r.getMessage() for r in caplog.records if f"user_id {old_id!r} of 2 memories" in r.getMessage()]
    assert len(said) == 1 and "since 2026-12-07" in said[0], caplog.text
    kept = memory.get_all(user_id=old_id)["results"]
    assert [r["memory"] for r in kept] == ["my card ends 4242", "I fly on Monday"]  # read by the id as written
    memory.update(kept[0]["id"], "my card ends 9999", user_id=old_id)
    assert [r["memory"] for r in memory.get_all(user_id=old_id)["results"]] == ["my card ends 9999",
                                                                                 "I fly on Monday"]
    with pytest.raises(ValueError, match="^user_id (is written wholly in Cyrillic|is not in Unicode NFKC|writes the word)"):
        memory.add("I moved to Paris", user_id=old_id)
    with pytest.raises(ValueError, match="^agent_id (is written wholly in Cyrillic|is not in Unicode NFKC|writes the word)"):
        memory.get_all(user_id="paypa", agent_id=old_id)  # no memory held under it as an agent_id: refused
    memory.delete_all(user_id=old_id)
    assert [r["memory"] for r in memory.get_all(all_scopes=True)["results"]] == ["I live in Lyon"]  # never reached
