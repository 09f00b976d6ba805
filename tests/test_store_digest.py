"""store.json's SHA-256 is saved beside it (store.json.sha256, as sha256sum writes it) and checked by a load.

Every other saved part was checked (an index's files by meta.json's digest, an export's by config.json's), but a
store.json changed inside its JSON (a bit flipped in a memory's text or scope, a hand edit) loaded: its memories
were searched with other texts, or under another user's scope. A save from before the digest loads unchecked."""

from __future__ import annotations

import hashlib
import json

import pytest

from sam_model.data.schema import Event, State
from sam_model.io import SAMFileError
from sam_model.memory import HashingEncoder, ScopedMemory
from sam_model.store import MemoryStore

DIGEST_FILE = "store.json.sha256"  # sam_model.storefile.DIGEST_FILE


def _saved(tmp_path):
    store = MemoryStore(HashingEncoder(32))
    store.add([Event("e", 0, "user", "my budget is 900", State("plan"))], user_id="ana")
    return store.save(tmp_path / "s")


def test_a_save_records_store_json_as_sha256sum_does(tmp_path):
    folder = _saved(tmp_path)
    digest = hashlib.sha256((folder / "store.json").read_bytes()).hexdigest()
    assert (folder / DIGEST_FILE).read_text() == f"{digest}  store.json\n"
    store = MemoryStore.load(folder, HashingEncoder(32))
    store.add([Event("e", 1, "user", "make it 950", State("plan"))], user_id="ana")
    store.save(folder)  # saved again in place: the new file's digest, written with it
    assert (folder / DIGEST_FILE).read_text().split()[0] == hashlib.sha256(
        (folder / "store.json").read_bytes()).hexdigest()
    assert len(MemoryStore.load(folder, HashingEncoder(32))) == 2


def test_a_changed_store_json_is_refused_in_one_line_naming_it(tmp_path):
    folder = _saved(tmp_path)
    text = (folder / "store.json").read_text()
    (folder / "store.json").write_text(text.replace('"ana"', '"bob"'))  # valid JSON, fields fine: another user's
    with pytest.raises(SAMFileError) as refused:
        MemoryStore.load(folder, HashingEncoder(32))
    said = str(refused.value)
    assert "\n" not in said and said.startswith(f"{folder / 'store.json'}: not the file this store saved"), said
    assert str(folder / DIGEST_FILE) in said and "restore the folder from a backup" in said
    assert f"delete {DIGEST_FILE} to load it unchecked" in said
    (folder / "store.json").write_text(text)  # nothing was changed by the refusal
    assert [h.user_id for h in MemoryStore.load(folder, HashingEncoder(32)).get_all()] == ["ana"]


def test_a_store_saved_before_the_digest_loads(tmp_path):
    folder = _saved(tmp_path)
    (folder / DIGEST_FILE).unlink()
    assert [h.user_id for h in MemoryStore.load(folder, HashingEncoder(32)).get_all()] == ["ana"]


@pytest.mark.parametrize("line, says", [
    ("", "must be one line"),
    ("abc  store.json\n", "must be store.json's SHA-256 (64 hex digits)"),
    ("{d}  other.json\n", "must be one line, store.json's SHA-256 then 'store.json'"),
    ("{D} *store.json\n", None),  # capitals and sha256sum's binary mark: the same digest
])
def test_the_digest_file_is_read_as_sha256sum_reads_it(tmp_path, line, says):
    folder = _saved(tmp_path)
    digest = hashlib.sha256((folder / "store.json").read_bytes()).hexdigest()
    (folder / DIGEST_FILE).write_text(line.format(d=digest, D=digest.upper()))
    if says is None:
        assert len(MemoryStore.load(folder, HashingEncoder(32))) == 1
        return
    with pytest.raises(SAMFileError) as refused:
        MemoryStore.load(folder, HashingEncoder(32))
    said = str(refused.value)
    assert "\n" not in said and said.startswith(str(folder / DIGEST_FILE)) and says in said, said


def test_a_scoped_memory_save_is_checked_too(tmp_path):
    memory = ScopedMemory(HashingEncoder(32))
    memory.add("I live in Lyon", user_id="ana")
    folder = memory.save(tmp_path / "m")
    path = folder / "store" / "store.json"
    d = json.loads(path.read_text())
    d["entries"][0]["user_id"] = "bob"
    path.write_text(json.dumps(d))
    with pytest.raises(SAMFileError, match=r"store\.json: not the file this store saved"):
        ScopedMemory.load(folder, HashingEncoder(32))
