"""Loading what users hand us: crafted checkpoints refused, tokenizers and configs checked, clear search errors."""

from __future__ import annotations

import json
import os
import pickle
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

from sam_model.checkpoint import load_checkpoint
from sam_model.data.schema import State
from sam_model.export import save_exported
from sam_model.io import SAMFileError
from sam_model.models.bert import load_bert
from sam_model.models.sam import SAMConfig, SAMNet
from sam_model.retriever import SAMRetriever
from sam_model.storeconfig import StoreConfig


class _Shell:
    """Unpickling this runs a shell command (what a malicious .ckpt does)."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def _crafted(tmp_path: Path) -> tuple[Path, Path, Path]:
    marker = tmp_path / "code-ran"
    zipped = tmp_path / "crafted.ckpt"  # torch.save's format, like a real checkpoint
    torch.save({"state_dict": {"net.x": torch.zeros(1)}, "hyper_parameters": _Shell(marker)}, zipped)
    raw = tmp_path / "raw.ckpt"  # a plain pickle stream
    raw.write_bytes(pickle.dumps({"state_dict": _Shell(marker)}, protocol=4))
    return zipped, raw, marker


def test_crafted_checkpoints_are_refused_and_run_nothing(tmp_path):
    zipped, raw, marker = _crafted(tmp_path)
    with pytest.raises(SAMFileError, match=r"crafted.ckpt: refused to load: .*`posix.system`"):
        load_checkpoint(zipped)
    for ckpt in (zipped, raw):
        with pytest.raises(SAMFileError, match="refused to load"):
            SAMRetriever.load(ckpt)
    assert not marker.exists(), "unpickling ran the crafted command"


def test_a_checkpoint_that_holds_no_mapping_says_what_it_holds_in_plain_words(tmp_path):
    ckpt = tmp_path / "number.ckpt"
    torch.save(5, ckpt)
    with pytest.raises(SAMFileError, match=r"number.ckpt holds a number, not a checkpoint \(an object of weights"):
        load_checkpoint(ckpt)  # was 'holds a int, not a checkpoint dict': Python's words


def test_crafted_checkpoint_through_the_clis_is_one_line(tmp_path, small_demo_logs, capsys):
    from sam_model.evaluation.run import run as evaluate_cli
    from sam_model.export import main as export_cli

    zipped, _, marker = _crafted(tmp_path)
    assert export_cli([str(zipped), str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "refused to load" in err
    _, heldout = small_demo_logs
    assert evaluate_cli(["--retriever", str(zipped), "--data", str(heldout), "--out", str(tmp_path / "eval")]) == 1
    err = capsys.readouterr().err
    assert "refused to load" in err and str(zipped) in err
    assert not marker.exists() and not (tmp_path / "out").exists()


def test_real_checkpoints_load_weights_only(tmp_path, tiny_bert_dir):
    cfg = SAMConfig(bert_path=str(tiny_bert_dir), dim=8, hidden=16, proj_hidden=16)
    net = SAMNet(cfg)
    ckpt = tmp_path / "ok.ckpt"
    torch.save({"hyper_parameters": {"net": cfg.to_dict(), "bert_config": None, "lr": 1e-3},
                "state_dict": {f"net.{k}": v for k, v in net.state_dict().items()},
                "callbacks": {"ModelCheckpoint{'monitor': 'val/mrr'}": {"best_model_score": torch.tensor(0.5)}},
                "loops": {"fit_loop": {"epoch_progress": {"total": {"ready": 3}}}}}, ckpt)
    back = SAMRetriever.load(ckpt, device="cpu").net
    assert torch.equal(back.alpha_logit, net.alpha_logit)


def _export(tmp_path: Path, tiny_bert_dir: Path) -> Path:
    net = SAMNet(SAMConfig(bert_path=str(tiny_bert_dir), dim=8, hidden=16, proj_hidden=16))
    return save_exported(net, tmp_path / "exp")


def test_export_without_a_working_tokenizer_is_an_error_naming_the_folder(tmp_path, tiny_bert_dir):
    out = _export(tmp_path, tiny_bert_dir)
    assert SAMRetriever.load(out, device="cpu").net is not None
    for f in (out / "tokenizer").iterdir():
        if f.name != "tokenizer_config.json":
            f.unlink()  # what the issue saw: no tokenizer.json, so every token becomes [UNK]
    with pytest.raises(SAMFileError, match=rf"{out / 'tokenizer'}: no working tokenizer .*export the checkpoint again"):
        SAMRetriever.load(out)


def test_bert_folder_without_tokenizer_or_with_truncated_weights(tmp_path, tiny_bert_dir):
    bert = tmp_path / "bert"
    shutil.copytree(tiny_bert_dir, bert)
    for name in ("tokenizer.json", "vocab.txt", "special_tokens_map.json"):
        (bert / name).unlink(missing_ok=True)
    with pytest.raises(SAMFileError, match=rf"{bert}: no working tokenizer"):
        load_bert(bert)
    shutil.rmtree(bert)
    shutil.copytree(tiny_bert_dir, bert)
    weights = bert / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[: weights.stat().st_size // 2])
    with pytest.raises(SAMFileError, match=rf"{weights} cannot be loaded .*truncated or corrupt"):
        load_bert(bert)


@pytest.mark.parametrize("edit, message", [
    (lambda c: c.pop("sam"), r"field 'sam' is missing"),
    (lambda c: c["sam"].update(dim="256"), r"field 'sam.dim' must be an integer, got \"256\""),
    (lambda c: c.pop("store"), r"field 'sam.slot_match' is missing; set it when exporting: .*--slot-match"),
    (lambda c: c["store"].update(slot_match="0.3"), r"field 'store.slot_match' must be a finite number >= 0, got \"0.3\""),
    (lambda c: c["store"].update(bogus=1), r"'store' has unknown field\(s\) \['bogus'\]"),
    (lambda c: c["sam"].update(alpha=None), r"field 'sam.alpha' must be a finite number, got null"),
    (lambda c: c["sam"].update(phases="plan"), r"field 'sam.phases' must be a list of strings"),
    (lambda c: c["sam"].update(bogus=1), r"'sam' has unknown field\(s\) \['bogus'\]"),
    (lambda c: c.update(bert_config=[1]), r"field 'bert_config' must be an object"),
    (lambda c: c.update(out_dim=3), r"field 'out_dim' is 3 but the network it describes has"),
    (lambda c: c.update(out_dim="16"), r"field 'out_dim' must be an integer"),
])
def test_export_config_is_checked_field_by_field(tmp_path, tiny_bert_dir, edit, message):
    out = _export(tmp_path, tiny_bert_dir)
    config = json.loads((out / "config.json").read_text())
    edit(config)
    (out / "config.json").write_text(json.dumps(config))
    with pytest.raises(SAMFileError, match=rf"{out / 'config.json'}: {message}"):
        SAMRetriever.load(out)


def test_export_config_that_is_not_an_object(tmp_path, tiny_bert_dir):
    out = _export(tmp_path, tiny_bert_dir)
    (out / "config.json").write_text("[1, 2]")
    with pytest.raises(SAMFileError, match=r"config.json must hold a JSON object, got a list;"):
        SAMRetriever.load(out)


def test_search_arguments_are_checked_like_the_index(tmp_path, tiny_bert_dir):
    r = SAMRetriever(SAMNet(SAMConfig(bert_path=str(tiny_bert_dir), dim=8, hidden=16, proj_hidden=16)),
                     StoreConfig(slot_match=0.3))
    from sam_model.data.examples import MemoryRecord

    r.add_memories([MemoryRecord(f"e#{i}", "e", i, "user", "plan", f"memory {i}") for i in range(4)])
    state = State(phase="plan")
    for k in (0, -1, 2.0, True):
        with pytest.raises(ValueError, match=rf"k must be an integer from 1 to 10000, got {k!r}"):
            r.search(state, "ok", k=k)
        with pytest.raises(ValueError, match=rf"k must be an integer from 1 to 10000, got {k!r}"):
            r.store.index.search(np.zeros((1, r.dim), np.float32), k)
    with pytest.raises(TypeError, match="state must be a State or a state mapping .* got NoneType"):
        r.search(None, "ok")
    with pytest.raises(TypeError, match="observation must be a string"):
        r.search(state, None)
    hits = r.search({"phase": "plan"}, "ok", k=2)
    assert len(hits) == 2 and all(h.text.startswith("memory") for h in hits)


def test_a_folder_cannot_send_the_qdrant_key_to_a_server_it_names(tmp_path, tiny_bert_dir, monkeypatch):
    """An export's config.json (or an index's meta.json) naming a Qdrant URL made the load connect there with
    $QDRANT_API_KEY. Now such a URL must be trusted first (trust_url, sam-serve --qdrant-url, $SAM_QDRANT_URLS)."""
    qdrant = pytest.importorskip("sam_model.backends.qdrant")
    calls = []
    monkeypatch.setattr(qdrant, "QdrantClient", lambda **kw: calls.append(kw) or (_ for _ in ()).throw(
        ConnectionError("stub: would connect")))
    monkeypatch.setenv("QDRANT_API_KEY", "s3cret")
    monkeypatch.delenv(qdrant.URLS_ENV, raising=False)
    r = SAMRetriever(SAMNet(SAMConfig(bert_path=str(tiny_bert_dir), dim=16, hidden=32, proj_hidden=32, max_length=32)))
    folder = r.save(tmp_path / "exp")
    cfg = json.loads((folder / "config.json").read_text())
    cfg["store"]["index"] = {"kind": "qdrant", "url": "http://127.0.0.1:18733", "collection": "victim"}
    (folder / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(SAMFileError, match="cannot choose to connect.*SAM_QDRANT_URLS"):
        SAMRetriever.load(folder)
    assert calls == []  # nothing was sent anywhere
    monkeypatch.setenv(qdrant.URLS_ENV, "http://127.0.0.1:18733/")
    with pytest.raises(SAMFileError, match="stub: would connect"):  # trusted: it connects (here, to the stub)
        SAMRetriever.load(folder)
    assert calls and calls[0]["api_key"] == "s3cret"


def test_config_json_numbers_and_nesting_past_the_parsers_limits_are_one_line(tmp_path, tiny_bert_dir):
    r = SAMRetriever(SAMNet(SAMConfig(bert_path=str(tiny_bert_dir), dim=16, hidden=32, proj_hidden=32, max_length=32)))
    folder = r.save(tmp_path / "exp")
    text = (folder / "config.json").read_text()
    for bad in (text.replace('"out_dim": ', '"out_dim": ' + "9" * 5000 + ', "x": '), "[" * 100_000):
        (folder / "config.json").write_text(bad)
        with pytest.raises(SAMFileError, match="config.json.*(not valid JSON|unreadable)"):
            SAMRetriever.load(folder)


def test_an_index_meta_json_cannot_name_a_server_either(tmp_path, monkeypatch):
    qdrant = pytest.importorskip("sam_model.backends.qdrant")
    monkeypatch.delenv(qdrant.URLS_ENV, raising=False)
    ix = qdrant.QdrantIndex(8)
    ix.add(["a", "b"], np.eye(8, dtype=np.float32)[:2], ["e", "e"])
    folder = ix.save(tmp_path / "ix")
    meta = json.loads((folder / "meta.json").read_text())
    meta["config"] = {**meta["config"], "url": "http://127.0.0.1:18733", "path": None}
    (folder / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(SAMFileError, match="meta.json: the store's vectors are in a Qdrant server"):
        qdrant.QdrantIndex.load(folder)
