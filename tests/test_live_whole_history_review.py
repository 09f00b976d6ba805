"""A review, by a non-author, of the live add path's reading of an add as an earlier one sent again (a hook adding
its whole history after each message): what broke, reproduced here first, and what held."""

from __future__ import annotations

import json

import pytest
from test_live_leftovers_61 import _claim

from sam_model.io import SAMFileError
from sam_model.memory import HashingEncoder, ScopedMemory


def _memory() -> ScopedMemory:
    return ScopedMemory(HashingEncoder(16))


@pytest.mark.parametrize("field", ["given", "sent", "gone"])
@pytest.mark.parametrize("bad", [[], None, "x", 3])
def test_a_save_whose_resend_keys_are_no_object_is_refused_naming_the_field(tmp_path, field, bad):
    """A save whose 'given' (or 'sent', 'gone': what a scope keeps to read an add sent again) is not an object of
    scopes was refused as "'list' object has no attribute 'items'", naming no field. One line names it now, and the
    save is left as it was."""
    memory = _memory()
    for m in _claim()[:4]:
        memory.add([m], user_id="t", run_id="r")
    saved = memory.save(tmp_path / "m")
    d = json.loads((saved / "scoped.json").read_text())
    text = json.dumps({**d, field: bad})
    (saved / "scoped.json").write_text(text)
    with pytest.raises(SAMFileError, match=rf"scoped\.json: .*{field} must be an object") as err:
        ScopedMemory.load(saved, HashingEncoder(16))
    assert "\n" not in str(err.value) and (saved / "scoped.json").read_text() == text
