"""sam_model.confusables derives sam_model.scripts.LATIN_OF (the Cyrillic, Greek and Armenian letters that look like
one ASCII Latin letter) from Unicode's confusables.txt 18.0.0, so each row is the file's: rows written here, a file
of another version and a damaged row, and the committed table against the file where a copy is at hand."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sam_model import confusables
from sam_model.scripts import LATIN_OF

HEADER = "# confusables.txt\n# Version: 18.0.0\n#\n"


def test_the_script_derives_a_row_of_one_ascii_letter_and_leaves_out_the_rest():
    """On rows written here: a Cyrillic a (one letter, 'a') is kept; Ы ('bl', two letters), a Greek letter that looks
    like a Latin letter outside ASCII and a Latin letter (the dotless i: no scope rule reads it) are left out; χ is
    kept as 'x'. A file of another version is refused."""
    text = HEADER + ("0430 ;\t0061 ;\tMA\t# Cyrillic a\n042B ;\t0062 006C ;\tMA\t# Cyrillic yeru\n"
                     "03B5 ;\t025B ;\tMA\t# Greek epsilon\n0131 ;\t0069 ;\tMA\t# dotless i\n")
    assert confusables.derive(text) == {"\u0430": "a", "\u03c7": "x"}
    with pytest.raises(ValueError, match="^confusables.txt is not version 18.0.0 .*: give the 18.0.0 file, sha256 "):
        confusables.derive(HEADER.replace("18.0.0", "17.0.0") + "0430 ;\t0061 ;\tMA\n")


def test_the_committed_table_is_the_one_derived_from_confusables_txt():
    """confusables.txt is not shipped (nor fetched: the project runs without a network): point SAM_CONFUSABLES_TXT at
    a copy of 18.0.0 (sam_model.confusables.SHA256) to run this, as after any change of the table."""
    path = os.environ.get("SAM_CONFUSABLES_TXT")
    if not path or not Path(path).is_file():
        pytest.skip("no confusables.txt 18.0.0 here: set SAM_CONFUSABLES_TXT to a copy to check the table")
    assert confusables.derive(Path(path).read_text(encoding="utf-8")) == LATIN_OF


@pytest.mark.parametrize("row", ["XYZ ;\t0061 ;\tMA", "0430 ;\t110000 ;\tMA", "0430 ;\t00 61x ;\tMA"])
def test_a_damaged_row_is_refused_naming_its_line(row):
    """A row that is no code points was refused as int()'s or chr()'s bare words ('invalid literal for int() with
    base 16'), naming neither the line nor what to do."""
    with pytest.raises(ValueError) as refused:
        confusables.derive(HEADER + "0430 ;\t0061 ;\tMA\t# Cyrillic a\n" + row + "\n")
    said = str(refused.value)
    assert said.startswith(f"confusables.txt line 5: {row!r} is no row of code points in hex"), said
    assert said.endswith(f"give the 18.0.0 file, sha256 {confusables.SHA256}") and "\n" not in said, said


def test_the_command_prints_the_table_and_refuses_a_missing_file_in_one_line(tmp_path, capsys):
    path = tmp_path / "confusables.txt"
    path.write_text(HEADER + "0430 ;\t0061 ;\tMA\t# Cyrillic a\n", encoding="utf-8")
    assert confusables.main([str(path)]) == 0
    out, err = capsys.readouterr()
    assert out == "LATIN_OF = {'\\u0430': 'a', '\\u03c7': 'x'}\n" and "sha256 is not" in err
    with pytest.raises(SystemExit):
        confusables.main([str(tmp_path / "none.txt")])
    err = capsys.readouterr().err
    assert "none.txt: cannot be read" in err and f"give the path of a confusables.txt {confusables.VERSION}" in err
