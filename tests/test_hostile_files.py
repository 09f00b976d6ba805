"""Crafted files run no code and read nothing outside their folder; altered vocabularies are refused; a folder
swap leaves no moment in which a reader finds nothing, even when the writer is killed in it."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from sam_model import io as sam_io
from sam_model.export import save_exported
from sam_model.index import MemoryIndex
from sam_model.io import SAMFileError
from sam_model.models.bert import SAFE_LOAD, default_bert_path, load_bert, load_tokenizer
from sam_model.models.sam import SAMConfig, SAMNet
from sam_model.retriever import SAMRetriever
from sam_model.store import MemoryStore
from sam_model.storeconfig import StoreConfig

REPO = Path(__file__).resolve().parents[1]
EVIL = "import pathlib\npathlib.Path({marker!r}).write_text('ran')\nfrom transformers import BertTokenizerFast as EvilTokenizer\n"


def _auto_map_tokenizer(folder: Path, marker: Path) -> Path:
    """MiniLM's tokenizer files with an ``auto_map`` that points at a Python file which leaves a marker."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt"):
        shutil.copy(Path(default_bert_path()) / name, folder / name)
    cfg = json.loads((folder / "tokenizer_config.json").read_text())
    cfg["auto_map"] = {"AutoTokenizer": ["evil.EvilTokenizer", "evil.EvilTokenizer"]}
    (folder / "tokenizer_config.json").write_text(json.dumps(cfg))
    (folder / "evil.py").write_text(EVIL.format(marker=str(marker)))
    return folder


def test_an_auto_map_tokenizer_runs_no_code_through_any_loader(tmp_path, tiny_bert_dir, monkeypatch):
    monkeypatch.setenv("HF_MODULES_CACHE", str(tmp_path / "hf_modules"))
    marker = tmp_path / "code-ran"
    net = SAMNet(SAMConfig(bert_path=str(tiny_bert_dir), dim=8, hidden=16, proj_hidden=16))
    export = save_exported(net, tmp_path / "export")
    shutil.rmtree(export / "tokenizer")
    _auto_map_tokenizer(export / "tokenizer", marker)
    for load in (lambda: SAMRetriever.load(export), lambda: load_tokenizer(export / "tokenizer")):
        with pytest.raises(SAMFileError, match="auto_map.*custom code.*refused"):
            load()
    res = subprocess.run([sys.executable, "evaluate.py", "--retriever", str(export), "--log", str(tmp_path / "x.jsonl")],
                         capture_output=True, text=True, cwd=REPO, stdin=subprocess.DEVNULL, timeout=300,
                         env={**os.environ, "HF_MODULES_CACHE": str(tmp_path / "hf_modules")})
    assert res.returncode != 0 and "Traceback" not in res.stderr and "run the custom code" not in res.stdout + res.stderr
    # a text-encoder folder with auto_map in its config is refused too
    bert = tmp_path / "bert"
    shutil.copytree(tiny_bert_dir, bert)
    cfg = json.loads((bert / "config.json").read_text())
    (bert / "config.json").write_text(json.dumps({**cfg, "auto_map": {"AutoModel": "evil.EvilModel"}}))
    with pytest.raises(SAMFileError, match="config.json: field 'auto_map'"):
        load_bert(bert)
    # and transformers itself, as called here, would not run it either (the second barrier)
    from transformers import AutoTokenizer

    bare = _auto_map_tokenizer(tmp_path / "bare", marker)
    AutoTokenizer.from_pretrained(str(bare), **SAFE_LOAD)  # falls back to the class transformers ships
    assert not marker.exists() and not (tmp_path / "hf_modules").exists()


def _saved_store(tmp_path: Path) -> Path:
    store = MemoryStore(None, StoreConfig(provenance=False), dim=4)
    from sam_model.data.examples import MemoryRecord

    store.add([MemoryRecord(f"e#{i}", "e", i, "user", "", f"memory {i}") for i in range(3)], np.eye(3, 4, dtype=np.float32))
    return store.save(tmp_path / "saved" / "store")


@pytest.mark.parametrize("name", ["../../outside/stolen.faiss", "ABS", "sub/x.faiss", "..", ".hidden", 7, "link"])
def test_a_saved_file_names_nothing_outside_its_folder(tmp_path, name):
    folder = _saved_store(tmp_path)
    outside = tmp_path / "outside"
    MemoryIndex(4, device="cpu").save(outside)  # a valid index someone wants us to read
    stolen = next(outside.glob("*.faiss"))
    shutil.copy(stolen, outside / "stolen.faiss")
    meta_path = folder / "index" / "meta.json"
    meta = json.loads(meta_path.read_text())
    if name == "ABS":
        name = str(outside / "stolen.faiss")
    if name == "link":
        (folder / "index" / "link").symlink_to(outside / "stolen.faiss")
    meta["index_file"] = name
    meta_path.write_text(json.dumps(meta))
    said = "field 'index_file'.*(plain file name inside|symbolic link)|index/link is a link .*stolen.faiss"
    with pytest.raises(SAMFileError, match=said) as err:  # a link inside the folder is refused before meta.json
        MemoryStore.load(folder)
    assert "\n" not in str(err.value)
    assert any(s in str(err.value) for s in ("the file was not read", "not followed", "holds its files itself"))


def _export(tmp_path: Path, tiny_bert_dir: Path) -> Path:
    net = SAMNet(SAMConfig(bert_path=str(tiny_bert_dir), dim=8, hidden=16, proj_hidden=16,
                           phases=["book", "pay", "plan"], kinds=["tool", "user"]))
    return save_exported(net, tmp_path / "export")


def test_a_permuted_vocabulary_is_refused(tmp_path, tiny_bert_dir):
    export = _export(tmp_path, tiny_bert_dir)
    assert SAMRetriever.load(export).net.cfg.phases == ["book", "pay", "plan"]
    cfg = json.loads((export / "config.json").read_text())
    assert cfg["vocab"]["phases"] == 3 and len(cfg["vocab"]["sha256"]) == 64
    vocab = json.loads((export / "vocab.json").read_text())
    (export / "vocab.json").write_text(json.dumps({**vocab, "phases": ["pay", "book", "plan"]}))
    with pytest.raises(SAMFileError, match=r"vocab.json: field 'phases' differs from field 'sam.phases'"):
        SAMRetriever.load(export)
    # both lists permuted the same way: the digest tied to the weights says so
    cfg["sam"]["phases"] = ["pay", "book", "plan"]
    (export / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(SAMFileError, match=r"config.json: field 'vocab' does not match .*sha256"):
        SAMRetriever.load(export)
    del cfg["vocab"]  # the record removed from config.json: the one in the weights file still refuses it
    (export / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(SAMFileError, match=r"model.safetensors: metadata 'sam_vocab' does not match"):
        SAMRetriever.load(export)


def test_a_tokenizer_larger_than_the_token_embedding_is_refused(tmp_path, tiny_bert_dir):
    export = _export(tmp_path, tiny_bert_dir)
    cfg = json.loads((export / "config.json").read_text())
    cfg["bert_config"]["vocab_size"] = 1000
    (export / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(SAMFileError, match=r"tokens, but the encoder's token embedding has 1000 rows"):
        SAMRetriever.load(export)


def test_folder_swaps_exchange_atomically(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    (a / "x").write_text("a"), (b / "x").write_text("b")
    if not sam_io._exchange(a, b):
        pytest.skip("this filesystem has no atomic exchange (saves take the two-rename path, tested below)")
    assert (a / "x").read_text() == "b" and (b / "x").read_text() == "a"


WRITER = """
import sys, numpy as np
from sam_model.store import MemoryStore
from sam_model.storeconfig import StoreConfig
from sam_model.data.examples import MemoryRecord
s = MemoryStore(None, StoreConfig(provenance=False), dim=4)
s.add([MemoryRecord("new#0", "new", 0, "user", "", "the new version")], np.ones((1, 4), np.float32))
print("saving", flush=True)
s.save(sys.argv[1])
"""


def test_a_writer_killed_between_the_two_renames_leaves_readers_a_store(tmp_path):
    folder = _saved_store(tmp_path)
    env = {**os.environ, "SAM_NO_EXCHANGE": "1", "SAM_GAP_PAUSE_S": "60"}
    child = subprocess.Popen([sys.executable, "-c", WRITER, str(folder)], env=env, cwd=REPO, stdout=subprocess.PIPE,
                             text=True)
    try:
        assert child.stdout.readline().strip() == "saving"
        deadline = time.time() + 60
        while folder.exists() and time.time() < deadline:  # the writer is inside the gap once the target is gone
            time.sleep(0.01)
        assert not folder.exists(), "the writer never reached the gap"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    assert sam_io.exists(folder)  # "load it if it exists" never mistakes the gap for a missing store
    assert folder.is_dir()  # and the interrupted swap was completed: the previous version is back in place
    assert sorted(MemoryStore.load(folder).ids()) == ["e#0", "e#1", "e#2"]
    assert sam_io.leftovers(folder.parent) == []


def _tiny_export(tmp_path, tiny_bert_dir):
    from sam_model.models.sam import SAMConfig, SAMNet
    from sam_model.retriever import SAMRetriever

    r = SAMRetriever(SAMNet(SAMConfig(bert_path=str(tiny_bert_dir), dim=16, hidden=32, proj_hidden=32, max_length=32)))
    return r.save(tmp_path / "exp")


def test_export_sizes_that_multiply_past_memory_are_refused_before_allocating(tmp_path, tiny_bert_dir):
    import json as _json

    from sam_model.io import SAMFileError
    from sam_model.retriever import SAMRetriever

    folder = _tiny_export(tmp_path, tiny_bert_dir)
    cfg = _json.loads((folder / "config.json").read_text())
    cfg["bert_config"].update(vocab_size=2_000_000, hidden_size=65_536)  # each within its bound
    (folder / "config.json").write_text(_json.dumps(cfg))
    with pytest.raises(SAMFileError, match="bert_config.vocab_size.*billion weights"):
        SAMRetriever.load(folder)


def test_export_files_that_are_links_or_nan_are_refused(tmp_path, tiny_bert_dir):
    import shutil

    import torch
    from safetensors.torch import load_file, save_file

    from sam_model.io import SAMFileError
    from sam_model.retriever import SAMRetriever

    folder = _tiny_export(tmp_path, tiny_bert_dir)
    outside = tmp_path / "outside.safetensors"
    shutil.move(folder / "model.safetensors", outside)
    (folder / "model.safetensors").symlink_to(outside)
    with pytest.raises(SAMFileError, match="model.safetensors is a link"):
        SAMRetriever.load(folder)
    (folder / "model.safetensors").unlink()
    weights = load_file(str(outside))
    name = next(k for k, v in weights.items() if v.is_floating_point())
    weights[name] = torch.full_like(weights[name], float("nan"))
    save_file(weights, str(folder / "model.safetensors"), metadata=__import__("safetensors").safe_open(
        str(outside), "pt").metadata())
    with pytest.raises(SAMFileError, match=f"weight '{name}' holds NaN"):
        SAMRetriever.load(folder)


@pytest.mark.parametrize("edit, says", [
    (lambda e: e.append(dict(e[0], text="EVIL")), "is in the file twice"),
    (lambda e: e[0].update(text=5), "field 'text' must be a string"),
    (lambda e: e[0].update(step="abc"), "field 'step' must be an integer"),
    (lambda e: e[0].update(step=-5), "field 'step' must be an integer >= 0"),
    (lambda e: e[0].update(metadata=[1, 2]), "field 'metadata' must be an object"),
    (lambda e: e.__setitem__(0, "not an object"), "an entry must be an object, got a string"),
])
def test_a_damaged_store_json_is_refused_naming_the_memory(tmp_path, edit, says):
    """store.json entries are type-checked on load: a duplicate entry (the later won: search returned 'EVIL'),
    wrong types (loaded, then failed far from the file) are one line naming the file and the memory."""
    import json as _json

    from sam_model.data.schema import Event, State
    from sam_model.io import SAMFileError
    from sam_model.memory import HashingEncoder
    from sam_model.store import MemoryStore

    store = MemoryStore(HashingEncoder(64))
    store.add([Event("e", 0, "user", "my budget is 900", State("plan"))])
    folder = store.save(tmp_path / "s")
    d = _json.loads((folder / "store.json").read_text())
    edit(d["entries"])
    (folder / "store.json").write_text(_json.dumps(d))
    (folder / "store.json.sha256").unlink()  # edited on purpose (or saved before the digest): fields checked still
    with pytest.raises(SAMFileError, match=f"store.json: memory store data is damaged.*{says}"):
        MemoryStore.load(folder, HashingEncoder(64))


def test_a_key_given_twice_in_a_json_file_we_read_is_refused(tmp_path):
    """Python's json keeps the last of two values silently; every JSON file read through sam_model.io.read_json (an
    export's config.json and vocabulary, a Janus run's state.json, store and index metadata) refuses it in one line
    naming the file."""
    from sam_model.io import SAMFileError, read_json

    path = tmp_path / "config.json"
    path.write_text('{"format_version": 2, "model": {"alpha": 0.9, "alpha": 0.1}}')
    with pytest.raises(SAMFileError, match=r"config\.json: unreadable export config .*the key 'alpha' is given twice"):
        read_json(path, "export config (JSON)", "export again")
    path.write_text('{"format_version": 2, "model": {"alpha": 0.9}, "other": {"alpha": 0.1}}')  # one per object: fine
    assert read_json(path, "export config (JSON)", "export again")["other"] == {"alpha": 0.1}
