"""scoped.json's version 3: since 2026-12-07 a scope's kept adds may hold a conversation's opening and the formats
responses, gemini and adk, which a sam_model reading version 2 refused as "unreadable memory ... save the memory
again", advice it cannot follow. Saved as 3, such a sam_model says the version and to upgrade; this one reads saves
of versions 1, 2 and 3."""

from __future__ import annotations

import json

import pytest

from sam_model.io import SAMFileError
from sam_model.memory import HashingEncoder, ScopedMemory


def test_a_save_is_version_3_and_saves_of_2_and_3_load_alike(tmp_path):
    m = ScopedMemory(HashingEncoder(64))
    m.add([{"role": "system", "content": "Be kind."}, {"role": "user", "content": "hi, I am Mia"}], user_id="mia")
    folder = m.save(tmp_path / "m")
    d = json.loads((folder / "scoped.json").read_text())
    assert d["version"] == 3
    three = [h["memory"] for h in ScopedMemory.load(folder, HashingEncoder(64)).get_all(user_id="mia")["results"]]
    (folder / "scoped.json").write_text(json.dumps({**d, "version": 2}))
    two = [h["memory"] for h in ScopedMemory.load(folder, HashingEncoder(64)).get_all(user_id="mia")["results"]]
    assert three == two and three


def test_a_later_version_says_to_upgrade_in_one_line(tmp_path):
    folder = ScopedMemory(HashingEncoder(64)).save(tmp_path / "m")
    d = json.loads((folder / "scoped.json").read_text())
    (folder / "scoped.json").write_text(json.dumps({**d, "version": 4}))
    with pytest.raises(SAMFileError) as e:
        ScopedMemory.load(folder, HashingEncoder(64))
    msg = str(e.value)
    assert "field 'version' is 4" in msg and "it reads 1, 2, 3" in msg and "upgrade sam_model" in msg
    assert "\n" not in msg
