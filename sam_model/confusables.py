"""Derives sam_model.scripts.LATIN_OF, the look-alike table of the scope-id rule, from Unicode's confusables.txt
(UTS #39), so each row is the file's, not a hand's: ``python -m sam_model.confusables PATH`` prints it, and
tests/test_confusables.py checks that the committed table equals the one derived (where a copy of the file is at hand;
no network is needed to run the project, so the file is not fetched). The version is pinned: a copy of another version is refused, as its rows
would silently change which ids are taken.

A letter's skeleton is TR39's: the id in NFD, each character mapped by the file, NFD again. NFD, NFKC and the
letter categories are Python's (unicodedata), scripts sam_model.scripts.script's."""

from __future__ import annotations

import argparse
import hashlib
import sys
import unicodedata
from pathlib import Path

from sam_model.scripts import script

VERSION = "18.0.0"  # the confusables.txt the table was derived from (2026-08-06)
SHA256 = "6ed3ee967c9dfdf6677d563c9985182fbc50a2efb7d6059cd57b2e2ce18f5b92"  # of that file, as Unicode publishes it
OTHER_SCRIPTS = ("Cyrillic", "Greek", "Armenian")  # the scripts of most Latin look-alikes
KEPT = {"\u03c7": "x"}  # GREEK SMALL LETTER CHI: its prototype is LATIN SMALL LETTER CHI, yet it is drawn as 'x'


def mapping(text: str) -> dict[str, str]:
    """confusables.txt's rows: each source character with its prototype. Refuses a file of another version."""
    if f"# Version: {VERSION}" not in text[:2000]:
        raise ValueError(f"confusables.txt is not version {VERSION} (its header names no '# Version: {VERSION}'): "
                         f"give the {VERSION} file, sha256 {SHA256}")
    rows = {}
    for number, line in enumerate(text.splitlines(), start=1):
        fields = [f.strip() for f in line.split("#", 1)[0].split(";")]
        if len(fields) >= 2:
            try:
                rows[chr(int(fields[0], 16))] = "".join(chr(int(h, 16)) for h in fields[1].split())
            except ValueError:  # the row's place, not int()'s bare "invalid literal", so the damage can be found
                raise ValueError(f"confusables.txt line {number}: {line[:60]!r} is no row of code points in hex "
                                 f"(source ; target ; type): give the {VERSION} file, sha256 {SHA256}") from None
    return rows


def skeleton(value: str, rows: dict[str, str]) -> str:
    """TR39's skeleton of ``value``: what it looks like, written in the prototypes."""
    mapped = "".join(rows.get(ch, ch) for ch in unicodedata.normalize("NFD", value))
    return unicodedata.normalize("NFD", mapped)


def derive(text: str) -> dict[str, str]:
    """LATIN_OF from confusables.txt's ``text``: every Cyrillic, Greek and Armenian letter that NFKC keeps (one it
    changes is refused before the table is read) whose skeleton is one ASCII Latin letter, with that letter.
    Skeletons of two letters (Ы 'bl') are left out: one glyph with a join a reader sees."""
    rows, table = mapping(text), {}
    for code in range(0x80, sys.maxunicode + 1):
        ch = chr(code)
        if not unicodedata.category(ch).startswith("L") or unicodedata.normalize("NFKC", ch) != ch:
            continue
        if script(ch) in OTHER_SCRIPTS and len(looks := skeleton(ch, rows)) == 1 and looks.isascii() and looks.isalpha():
            table[ch] = looks
    return table | KEPT


def main(argv: list[str]) -> int:
    """Print the table derived from a confusables.txt, and whether the file is the one pinned."""
    parser = argparse.ArgumentParser(
        prog="python -m sam_model.confusables",
        description="Print LATIN_OF (sam_model.scripts' look-alike table) as derived from "
        f"Unicode's confusables.txt {VERSION}, to compare with the committed one.")
    parser.add_argument("path", type=Path, help=f"a copy of confusables.txt {VERSION} (no default: the file is not "
                        "fetched; Unicode publishes it under Public/security/)")
    path = parser.parse_args(argv).path
    try:
        data = path.read_bytes()
    except OSError as e:
        parser.error(f"{path}: cannot be read ({e.strerror}); give the path of a confusables.txt {VERSION}")
    if hashlib.sha256(data).hexdigest() != SHA256:
        print(f"{path}: sha256 is not {SHA256} (confusables.txt {VERSION} as published); its table follows",
              file=sys.stderr)
    try:
        table = derive(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        parser.error(f"{path}: {e}")
    print("LATIN_OF = {" + ", ".join(f"{ascii(k)}: {v!r}" for k, v in table.items()) + "}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
