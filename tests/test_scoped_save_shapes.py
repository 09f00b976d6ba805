"""Each per-scope field of a ScopedMemory's scoped.json is an object of the scopes' episodes, checked as one: the
older fields (base, trackers, open, labels, numbering, unknown) of another shape (a list, null) were refused as
"'list' object has no attribute 'items'", naming no field, where the newer ones (sent, given, gone) said which
field and what it is in JSON's words (io.json_type). One line names the field now, and the save is left as it was."""

from __future__ import annotations

import json

import pytest

from sam_model.io import SAMFileError
from sam_model.memory import HashingEncoder, ScopedMemory

FIELDS = ["base", "trackers", "open", "labels", "numbering", "unknown", "sent", "given", "gone"]


def _saved(tmp_path):
    memory = ScopedMemory(HashingEncoder(16))
    memory.add([{"role": "user", "content": "book the 9:40 to Lyon"},
                {"role": "assistant", "content": "Booked, seat 42."}], user_id="t", run_id="r")
    return memory.save(tmp_path / "m")


@pytest.mark.parametrize("field", FIELDS)
@pytest.mark.parametrize(("bad", "said"), [([], "a list"), (None, "null"), ("x", "a string"), (3, "a number")])
def test_a_per_scope_field_of_another_shape_is_refused_naming_it(tmp_path, field, bad, said):
    saved = _saved(tmp_path)
    d = json.loads((saved / "scoped.json").read_text())
    text = json.dumps({**d, field: bad})
    (saved / "scoped.json").write_text(text)
    with pytest.raises(SAMFileError, match=rf"scoped\.json: .*\b{field} must be an object.*, got {said}\)") as err:
        ScopedMemory.load(saved, HashingEncoder(16))
    assert "\n" not in str(err.value) and (saved / "scoped.json").read_text() == text


@pytest.mark.parametrize("field", ["base", "trackers"])
def test_a_save_without_a_field_every_save_holds_is_refused(tmp_path, field):
    saved = _saved(tmp_path)
    d = json.loads((saved / "scoped.json").read_text())
    del d[field]
    (saved / "scoped.json").write_text(json.dumps(d))
    with pytest.raises(SAMFileError, match=rf"scoped\.json: unreadable memory \('{field}'\)"):
        ScopedMemory.load(saved, HashingEncoder(16))


@pytest.mark.parametrize("field", ["open", "labels", "numbering", "unknown"])
def test_a_save_from_before_an_older_field_still_loads(tmp_path, field):
    saved = _saved(tmp_path)
    d = json.loads((saved / "scoped.json").read_text())
    d.pop(field, None)
    (saved / "scoped.json").write_text(json.dumps(d))
    back = ScopedMemory.load(saved, HashingEncoder(16))
    assert [r["memory"] for r in back.get_all(user_id="t", run_id="r")["results"]] == ["book the 9:40 to Lyon",
                                                                                      "Booked, seat 42."]
