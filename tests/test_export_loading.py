"""Loading export folders the review tampered with: a bert_config that selects code or a hub kernel, or holds
absurd numbers; text-encoder weights in a head-only file; wrong dtypes and shapes; a bad format version. Each is
refused in one line naming the file and the field or tensor, before anything is fetched, run or silently cast."""

from __future__ import annotations

import json
import shutil
import socket
from pathlib import Path

import pytest
import torch
from safetensors import safe_open
from safetensors.torch import load_file, save_file

from sam_model.export import main as export_main
from sam_model.io import SAMFileError
from sam_model.models.bert import load_bert
from sam_model.models.sam import SAMConfig, SAMNet
from sam_model.pretrained import FOLDER as PACKAGED
from sam_model.retriever import SAMRetriever

KERNEL = "kernels-community/flash-attn2"


@pytest.fixture
def no_network(monkeypatch) -> list:
    """Every attempt to reach a host is recorded and fails (what a hub kernel's download would do first)."""
    tries: list = []

    def refuse(*args, **kwargs):
        tries.append(args[:2])
        raise OSError("test: no network")

    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    return tries


def _tiny_export(tmp_path: Path, tiny_bert_dir: Path) -> Path:
    net = SAMNet(SAMConfig(bert_path=str(tiny_bert_dir), dim=16, hidden=32, proj_hidden=32, max_length=32))
    return SAMRetriever(net).save(tmp_path / "exp")


def _head_only(tmp_path: Path) -> Path:
    """A copy of the packaged head-only retriever (sam-general)."""
    return Path(shutil.copytree(PACKAGED / "sam-general", tmp_path / "head"))


def _edit_bert_config(folder: Path, **fields) -> None:
    cfg = json.loads((folder / "config.json").read_text())
    cfg["bert_config"].update(fields)
    (folder / "config.json").write_text(json.dumps(cfg))


def _one_line(exc_info: pytest.ExceptionInfo, *parts: str) -> str:
    msg = str(exc_info.value)
    assert "\n" not in msg, msg
    for part in parts:
        assert part in msg, msg
    return msg


CODE_FIELDS = [("attn_implementation", KERNEL), ("attn_implementation", "flash_attention_2"),
               ("_attn_implementation", KERNEL), ("experts_implementation", KERNEL),
               ("auto_map", {"AutoModel": "evil.Model"}), ("trust_remote_code", True),
               ("custom_pipelines", {"x": {"impl": "evil.Pipe"}}), ("quantization_config", {"quant_method": "x"})]


@pytest.mark.parametrize("field, value", CODE_FIELDS)
def test_a_bert_config_that_selects_code_or_a_hub_kernel_is_refused_offline(tmp_path, tiny_bert_dir, no_network,
                                                                            field, value):
    folder = _tiny_export(tmp_path, tiny_bert_dir)
    _edit_bert_config(folder, **{field: value})
    with pytest.raises(SAMFileError) as err:
        SAMRetriever.load(folder, device="cpu")
    _one_line(err, f"{folder / 'config.json'}: field 'bert_config.{field}'")
    assert no_network == []


def test_a_head_only_export_and_a_checkpoint_refuse_a_hub_kernel_too(tmp_path, tiny_bert_dir, no_network):
    head = _head_only(tmp_path)
    _edit_bert_config(head, attn_implementation=KERNEL)
    with pytest.raises(SAMFileError) as err:
        SAMRetriever.from_pretrained(head, device="cpu")
    _one_line(err, f"{head / 'config.json'}: field 'bert_config.attn_implementation'")
    ckpt = tmp_path / "kernel.ckpt"
    net = SAMNet(SAMConfig(bert_path=str(tiny_bert_dir), dim=8, hidden=16, proj_hidden=16))
    bert_config = {**net.state_encoder.text_encoder.bert.config.to_dict(), "attn_implementation": KERNEL}
    torch.save({"hyper_parameters": {"net": net.cfg.to_dict(), "bert_config": bert_config},
                "state_dict": {f"net.{k}": v for k, v in net.state_dict().items()}}, ckpt)
    with pytest.raises(SAMFileError) as err:
        SAMRetriever.load(ckpt, device="cpu")
    _one_line(err, str(ckpt), "field 'hyper_parameters.bert_config.attn_implementation'")
    assert no_network == []
    bert = Path(shutil.copytree(tiny_bert_dir, tmp_path / "bert"))  # a bert_path folder's own config.json
    config = json.loads((bert / "config.json").read_text())
    (bert / "config.json").write_text(json.dumps({**config, "attn_implementation": KERNEL}))
    with pytest.raises(SAMFileError) as err:
        load_bert(bert)
    _one_line(err, f"{bert / 'config.json'}: field 'attn_implementation'")
    assert no_network == []


def test_a_local_attention_still_loads(tmp_path, tiny_bert_dir):
    folder = _tiny_export(tmp_path, tiny_bert_dir)
    _edit_bert_config(folder, attn_implementation="eager")
    r = SAMRetriever.load(folder, device="cpu")
    assert r.net.state_encoder.text_encoder.bert.config._attn_implementation == "eager"


@pytest.mark.parametrize("field, value", [
    ("layer_norm_eps", 1e300), ("layer_norm_eps", 0), ("layer_norm_eps", 0.5), ("layer_norm_eps", "1e-12"),
    ("hidden_dropout_prob", 1.5), ("attention_probs_dropout_prob", -0.1), ("classifier_dropout", 7),
    ("initializer_range", 1e300), ("hidden_act", "os.system"), ("pad_token_id", 10**12), ("pad_token_id", -1),
    ("num_attention_heads", 5), ("dtype", "load"),
])
def test_absurd_bert_config_values_are_refused_naming_the_field(tmp_path, tiny_bert_dir, field, value):
    folder = _tiny_export(tmp_path, tiny_bert_dir)
    _edit_bert_config(folder, **{field: value})
    with pytest.raises(SAMFileError) as err:
        SAMRetriever.load(folder, device="cpu")
    _one_line(err, f"{folder / 'config.json'}: field 'bert_config.{field}'")


def test_real_encoders_default_configs_pass_the_value_checks():
    """The checks refuse what no real encoder has, not what real ones do: a flag named like an activation
    (is_gated_act: false) is no activation, and DeBERTa-v3 has no token types (type_vocab_size 0)."""
    from transformers import AutoConfig

    from sam_model.models.bert import check_encoder_sizes, check_encoder_values

    for kind in ("bert", "roberta", "distilbert", "electra", "mpnet", "modernbert", "deberta-v2", "xlm-roberta"):
        d = AutoConfig.for_model(kind).to_dict()
        check_encoder_values(d, str)
        check_encoder_sizes(d, str)
    check_encoder_values({"hidden_act": "gelu", "is_gated_act": False}, str)
    with pytest.raises(ValueError, match="hidden_act"):
        check_encoder_values({"hidden_act": True}, str)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), 1e300])
def test_a_checkpoints_non_finite_layer_norm_eps_is_refused(tmp_path, tiny_bert_dir, value):
    """Given as a number (a checkpoint holds floats, not JSON tokens), NaN and inf are refused too."""
    net = SAMNet(SAMConfig(bert_path=str(tiny_bert_dir), dim=8, hidden=16, proj_hidden=16))
    bert_config = {**net.state_encoder.text_encoder.bert.config.to_dict(), "layer_norm_eps": value}
    ckpt = tmp_path / "eps.ckpt"
    torch.save({"hyper_parameters": {"net": net.cfg.to_dict(), "bert_config": bert_config},
                "state_dict": {f"net.{k}": v for k, v in net.state_dict().items()}}, ckpt)
    with pytest.raises(SAMFileError) as err:
        SAMRetriever.load(ckpt, device="cpu")
    _one_line(err, str(ckpt), "field 'hyper_parameters.bert_config.layer_norm_eps'")


@pytest.mark.parametrize("field, value", [("hidden_act", "os.system"), ("pad_token_id", 10**12)])
def test_the_export_cli_says_a_bad_bert_config_in_one_line(tmp_path, tiny_bert_dir, capsys, field, value):
    folder = _tiny_export(tmp_path, tiny_bert_dir)
    _edit_bert_config(folder, **{field: value})
    assert export_main([str(folder), str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err, err
    assert err.startswith("error: ") and f"{folder / 'config.json'}: field 'bert_config.{field}'" in err, err
    assert not (tmp_path / "out").exists()


def test_the_export_cli_and_the_api_say_an_unforeseen_load_error_in_one_line(tmp_path, tiny_bert_dir, capsys,
                                                                            monkeypatch):
    """Errors no check foresaw (transformers' KeyError, AssertionError...) are one line for both: one loader path."""
    import sam_model.export

    folder = _tiny_export(tmp_path, tiny_bert_dir)

    def broken(config):
        raise KeyError("unforeseen")

    monkeypatch.setattr(sam_model.export, "encoder_from_config", broken)
    assert export_main([str(folder), str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and err.startswith(f"error: cannot load the retriever {folder}: KeyError"), err
    with pytest.raises(SAMFileError) as exc:
        SAMRetriever.load(folder, device="cpu")
    _one_line(exc, f"cannot load the retriever {folder}: KeyError")


@pytest.mark.parametrize("prefix", ["state_encoder.text_encoder.bert.", "memory_encoder.text_encoder.bert."])
def test_a_head_only_file_cannot_replace_the_packaged_text_encoder(tmp_path, prefix):
    head = _head_only(tmp_path)
    path = head / "model.safetensors"
    with safe_open(str(path), "pt") as fh:
        meta = fh.metadata()
    weights = load_file(str(path))
    key = f"{prefix}embeddings.word_embeddings.weight"
    weights[key] = torch.zeros(30522, 384)  # the packaged MiniLM's shape: it used to load silently
    save_file(weights, str(path), metadata=meta)
    with pytest.raises(SAMFileError) as err:
        SAMRetriever.load(head, device="cpu")
    _one_line(err, f"{path}: tensor '{key}'", "head-only")


@pytest.mark.parametrize("config, says", [
    (lambda c: json.dumps({**c, "format_version": 7}), "field 'format_version' is export format version 7"),
    (lambda c: json.dumps({**c, "format_version": True}), "field 'format_version' is export format version true"),
    (lambda c: json.dumps(c)[:-20], "unreadable"),
])
def test_a_head_only_folder_with_a_bad_config_is_not_blamed_on_the_tokenizer(tmp_path, config, says):
    head = _head_only(tmp_path)
    (head / "config.json").write_text(config(json.loads((head / "config.json").read_text())))
    with pytest.raises(SAMFileError) as err:
        SAMRetriever.load(head, device="cpu")
    msg = _one_line(err, str(head / "config.json"), says)
    assert "tokenizer" not in msg


@pytest.mark.parametrize("change, says", [
    (lambda t: t.to(torch.int32), "has dtype I32, but its parameter is float32"),
    (lambda t: t != 0, "has dtype BOOL, but its parameter is float32"),
    (lambda t: torch.zeros(3, 5), "has shape [3, 5], but config.json makes it"),
])
def test_weights_of_the_wrong_dtype_or_shape_are_refused_naming_the_tensor(tmp_path, tiny_bert_dir, change, says):
    folder = _tiny_export(tmp_path, tiny_bert_dir)
    path = folder / "model.safetensors"
    with safe_open(str(path), "pt") as fh:
        meta = fh.metadata()
    weights = load_file(str(path))
    key = "projection.g.0.weight"
    weights[key] = change(weights[key]).contiguous()
    save_file(weights, str(path), metadata=meta)
    with pytest.raises(SAMFileError) as err:
        SAMRetriever.load(folder, device="cpu")
    _one_line(err, f"{path}: tensor '{key}' {says}")


def _flip_a_weight_bit(path: Path) -> None:
    """Flip the lowest bit of the first byte of tensor data: a weight of the same shape, dtype and file size, a
    little different and still finite (what a bad disk or a truncated-then-padded copy leaves)."""
    data = bytearray(path.read_bytes())
    at = 8 + int.from_bytes(data[:8], "little")  # past the header: the first tensor's lowest mantissa byte
    data[at] ^= 1
    path.write_bytes(bytes(data))


def _digests(folder: Path) -> dict:
    return json.loads((folder / "config.json").read_text())["sha256"]


def test_an_export_records_the_sha256_of_every_file_the_loader_reads(tmp_path, tiny_bert_dir):
    import hashlib

    folder = _tiny_export(tmp_path, tiny_bert_dir)
    read = {"model.safetensors", "vocab.json"} | {f"tokenizer/{p.name}" for p in (folder / "tokenizer").iterdir()}
    digests = _digests(folder)
    assert set(digests) == read  # not config.json (it holds them), not the card
    for name, digest in digests.items():
        assert hashlib.sha256((folder / name).read_bytes()).hexdigest() == digest, name


def test_the_packaged_model_carries_its_digests_and_they_hold():
    import hashlib

    folder = PACKAGED / "sam-general"
    digests = _digests(folder)
    assert set(digests) == {"model.safetensors", "vocab.json", "training.json"}
    for name, digest in digests.items():
        assert hashlib.sha256((folder / name).read_bytes()).hexdigest() == digest, name


@pytest.mark.parametrize("which", ["whole", "head-only"])
def test_a_flipped_bit_in_the_weights_is_refused_naming_the_folder_and_the_file(tmp_path, tiny_bert_dir, which):
    folder = _tiny_export(tmp_path, tiny_bert_dir) if which == "whole" else _head_only(tmp_path)
    _flip_a_weight_bit(folder / "model.safetensors")  # every shape, dtype and value check passes it
    with pytest.raises(SAMFileError) as err:
        SAMRetriever.load(folder, device="cpu")
    _one_line(err, f"{folder / 'model.safetensors'}: not the file this export saved", "field 'sha256'",
              "export the checkpoint again")


def test_a_corrupt_packaged_model_says_reinstall(tmp_path, monkeypatch):
    import sam_model.pretrained

    monkeypatch.setattr(sam_model.pretrained, "FOLDER", tmp_path)  # a copy where the package keeps its models
    folder = _head_only(tmp_path)
    (folder / "vocab.json").write_text((folder / "vocab.json").read_text() + "\n")  # same JSON, other bytes
    with pytest.raises(SAMFileError) as err:
        SAMRetriever.load(folder, device="cpu")
    _one_line(err, f"{folder / 'vocab.json'}: not the file this export saved", "reinstall sam_model")


def test_a_changed_or_added_tokenizer_file_is_refused(tmp_path, tiny_bert_dir):
    folder = _tiny_export(tmp_path, tiny_bert_dir)
    path = folder / "tokenizer" / "tokenizer_config.json"
    original = path.read_text()
    path.write_text(json.dumps({**json.loads(original), "do_lower_case": False}))  # tokenizes otherwise, silently
    with pytest.raises(SAMFileError) as err:
        SAMRetriever.load(folder, device="cpu")
    _one_line(err, f"{folder / 'tokenizer' / 'tokenizer_config.json'}: not the file this export saved")
    path.write_text(original)
    (folder / "tokenizer" / "special_tokens_map.json").write_text(json.dumps({"unk_token": "[MASK]"}))
    with pytest.raises(SAMFileError) as err:
        SAMRetriever.load(folder, device="cpu")
    _one_line(err, f"{folder}: tokenizer/special_tokens_map.json is not among the files", "remove it")


def test_files_the_loader_never_reads_are_not_checked(tmp_path, tiny_bert_dir):
    """The card (evaluate.py --card rewrites it), a saved store, and anything put beside them: not listed, not
    read, so neither refused nor able to change what loads. config.json's settings stay editable (trial copies)."""
    folder = _tiny_export(tmp_path, tiny_bert_dir)
    want = SAMRetriever.load(folder, device="cpu").net.state_dict()
    (folder / "README.md").write_text("# my notes\n")
    (folder / "pytorch_model.bin").write_bytes(b"\0" * 64)
    config = json.loads((folder / "config.json").read_text())
    config["store"]["slot_match"] = 0.3
    (folder / "config.json").write_text(json.dumps(config))
    r = SAMRetriever.load(folder, device="cpu")
    assert r.store.config.slot_match == 0.3
    assert all(torch.equal(t, want[k]) for k, t in r.net.state_dict().items())


def test_an_export_written_before_the_digests_still_loads(tmp_path, tiny_bert_dir):
    folder = _tiny_export(tmp_path, tiny_bert_dir)
    config = json.loads((folder / "config.json").read_text())
    del config["sha256"]
    (folder / "config.json").write_text(json.dumps(config))
    _flip_a_weight_bit(folder / "model.safetensors")  # unverifiable without the record: as before
    assert SAMRetriever.load(folder, device="cpu").net is not None


@pytest.mark.parametrize("edit, says", [
    (lambda d: [*d.values()], "field 'sha256' must map each file"),
    (lambda d: {**d, "vocab.json": "abc"}, "field 'sha256' must map each file"),
    (lambda d: {**d, "../outside.txt": "0" * 64}, 'lists "../outside.txt", which is not a file of this export'),
    (lambda d: {**d, "training.json": "0" * 64}, 'lists "training.json", which is not a file of this export'),
])
def test_a_bad_digest_record_is_refused_in_one_line(tmp_path, tiny_bert_dir, edit, says):
    folder = _tiny_export(tmp_path, tiny_bert_dir)
    (tmp_path / "outside.txt").write_text("not the export's")
    config = json.loads((folder / "config.json").read_text())
    config["sha256"] = edit(config["sha256"])
    (folder / "config.json").write_text(json.dumps(config))
    with pytest.raises(SAMFileError) as err:
        SAMRetriever.load(folder, device="cpu")
    _one_line(err, str(folder), says)


def test_a_digest_record_in_capitals_is_read_as_the_index_reads_one(tmp_path, tiny_bert_dir):
    """config.json's digests were taken as 64 lowercase hex digits alone, where an index's meta.json took either case
    (PowerShell's Get-FileHash writes capitals): one rule now, sam_model.io.is_sha256 and check_digest."""
    folder = _tiny_export(tmp_path, tiny_bert_dir)
    config = json.loads((folder / "config.json").read_text())
    config["sha256"] = {name: digest.upper() for name, digest in config["sha256"].items()}
    (folder / "config.json").write_text(json.dumps(config))
    assert SAMRetriever.load(folder, device="cpu").net is not None
    _flip_a_weight_bit(folder / "model.safetensors")  # and still checked
    with pytest.raises(SAMFileError) as err:
        SAMRetriever.load(folder, device="cpu")
    _one_line(err, f"{folder / 'model.safetensors'}: not the file this export saved")
