"""Export a trained retriever as a self-contained folder, and load it back without Lightning.

    python -m sam_model.export CKPT OUT_DIR

The folder holds ``config.json`` (format version, SAMConfig, BERT config, and the search settings the
store uses with this model: ``store``, a sam_model.store.StoreConfig), ``model.safetensors``, the tokenizer
files and ``vocab.json`` (phases, kinds). Loading needs torch, transformers and safetensors only. Exports
written before the store had its config kept those settings in ``sam`` (SAMConfig): they are read from
there and search as they did.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import torch
from safetensors import SafetensorError
from safetensors.torch import load_model, save_model
from transformers import PretrainedConfig

from sam_model import card
from sam_model.card import CARD
from sam_model.checkpoint import load_checkpoint
from sam_model.io import SAMFileError, atomic_dir, cli_name, reading, run_cli
from sam_model.models.bert import (
    check_bert_folder,
    default_bert_path,
    encoder_config,
    encoder_from_config,
    load_tokenizer,
)
from sam_model.models.sam import SAMConfig, SAMNet, split_search_fields
from sam_model.store import StoreConfig

FORMAT_VERSION = 1
FILES = ("config.json", "model.safetensors", "vocab.json", "tokenizer")


def _device(device: str | torch.device | None) -> torch.device:
    """The asked device, else CUDA when available, else CPU."""
    return torch.device(device) if device else torch.device("cuda" if torch.cuda.is_available() else "cpu")


def write_export(net: SAMNet, folder: Path, store: StoreConfig | None = None) -> None:
    """Write the export files of ``net`` (and the store settings ``store``) into the staging folder ``folder``."""
    bert = net.state_encoder.text_encoder.bert
    cfg = net.cfg.to_dict()
    config = {"format_version": FORMAT_VERSION, "sam": cfg, "bert_config": bert.config.to_dict(),
              "out_dim": net.out_dim, "store": (store or StoreConfig()).to_dict()}
    (folder / "config.json").write_text(json.dumps(config, indent=2))
    (folder / "vocab.json").write_text(json.dumps({"phases": cfg["phases"], "kinds": cfg["kinds"]}, indent=2))
    save_model(net, str(folder / "model.safetensors"))
    net.tokenizer.save_pretrained(str(folder / "tokenizer"))
    training = getattr(net, "training_info", None)
    if training:
        (folder / "training.json").write_text(json.dumps(training, indent=2, default=str))
    learned = {"alpha": round(float(net.alpha.detach()), 4)}
    (folder / CARD).write_text(card.render(cfg, bert.config.to_dict(), training, learned, config["store"]),
                               encoding="utf-8")


def save_exported(net: SAMNet, out_dir: str | os.PathLike, store: StoreConfig | None = None) -> Path:
    """Write ``net`` (and its store settings) as an export folder, atomically as a whole (sam_model.io.atomic_dir):
    built in a staging folder and swapped in last, so a crash or a concurrent save never leaves a half export."""
    out = Path(out_dir)
    with atomic_dir(out) as tmp:
        write_export(net, tmp, store)
    return out


def load_exported(path: str | os.PathLike, device: str | torch.device | None = None) -> SAMNet:
    """Rebuild the SAMNet of an export folder (eval mode), with errors that say what is wrong.

    The folder is held still while it is read (a concurrent save waits for it)."""
    with reading(path) as folder:
        return read_export(folder, device)


def read_export(folder: Path, device: str | torch.device | None = None) -> SAMNet:
    """``load_exported`` without the read lock (the caller holds it): every file and config field checked."""
    if not folder.is_dir():
        raise SAMFileError(f"exported retriever not found: {folder} (create one with "
                           "`python -m sam_model.export CKPT OUT_DIR`)")
    for name in FILES:
        if not (folder / name).exists():
            raise SAMFileError(f"{folder} is not a complete export: {name} is missing (export it again)")
    cfg, bert_cfg, out_dim, _ = read_config(folder / "config.json")
    tokenizer = load_tokenizer(folder / "tokenizer", fix="export the checkpoint again")
    net = SAMNet(cfg, encoder_from_config(bert_cfg), tokenizer)
    if net.out_dim != out_dim:
        raise SAMFileError(f"{folder / 'config.json'}: field 'out_dim' is {out_dim} but the network it describes "
                           f"has {net.out_dim}; export the checkpoint again")
    try:
        missing, unexpected = load_model(net, str(folder / "model.safetensors"), strict=False)
    except (SafetensorError, OSError, RuntimeError) as exc:
        raise SAMFileError(f"{folder / 'model.safetensors'} cannot be loaded ({exc}); the file is corrupt or "
                           "does not match config.json — export the checkpoint again") from None
    if missing or unexpected:
        raise SAMFileError(f"{folder / 'model.safetensors'} does not match config.json (missing "
                           f"{sorted(missing)[:3]}, unexpected {sorted(unexpected)[:3]}); export again")
    if (folder / "training.json").exists():  # what the model card tells about training; kept by re-saves
        try:
            net.training_info = json.loads((folder / "training.json").read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise SAMFileError(f"{folder / 'training.json'} is not valid JSON ({exc}); export again") from None
    return net.to(_device(device)).eval()


def read_store_config(folder: Path) -> StoreConfig:
    """The search settings of an export folder (its config.json ``store``, or an older export's ``sam``)."""
    if not (folder / "config.json").is_file():
        raise SAMFileError(f"exported retriever not found: {folder / 'config.json'} is missing (create one with "
                           "`python -m sam_model.export CKPT OUT_DIR`)")
    return read_config(folder / "config.json")[3]


def read_config(path: Path) -> tuple[SAMConfig, PretrainedConfig, int, StoreConfig]:
    """An export's config.json, field by field; each error names the file and the field."""
    again = "export the checkpoint again (python -m sam_model.export CKPT OUT_DIR)"
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise SAMFileError(f"{path} is not valid JSON ({exc}); {again}") from None
    if not isinstance(config, dict):
        raise SAMFileError(f"{path} must hold a JSON object, got {type(config).__name__}; {again}")
    version = config.get("format_version")
    if version != FORMAT_VERSION:
        raise SAMFileError(f"{path.parent} has export format version {version}, this sam_model reads version "
                           f"{FORMAT_VERSION}; export the checkpoint again with this version")
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
    except ValueError as exc:
        fix = again
        if "'sam.slot_match'" in str(exc):
            fix = ("set it when exporting: python -m sam_model.export CKPT OUT_DIR --slot-match W (0 = no "
                   "needed-slot re-rank)")
        raise SAMFileError(f"{path}: {exc}; {fix}") from None
    try:
        bert_cfg = encoder_config(config["bert_config"])
    except (TypeError, ValueError, KeyError) as exc:
        raise SAMFileError(f"{path}: field 'bert_config' is not a text-encoder config ({exc}); {again}") from None
    return cfg, bert_cfg, config["out_dim"], store


def net_from_checkpoint(ckpt: str | os.PathLike, device: str | torch.device | None = None) -> SAMNet:
    """The SAMNet inside a Lightning checkpoint of SAMLightningModule (read with torch only, weights_only:
    a checkpoint that asks to run code is refused, see sam_model.checkpoint)."""
    return from_checkpoint(ckpt, device)[0]


def from_checkpoint(ckpt: str | os.PathLike, device: str | torch.device | None = None) -> tuple[SAMNet, StoreConfig]:
    """The SAMNet of a training checkpoint and its store settings (``hyper_parameters.store``, or those an
    older checkpoint kept in ``hyper_parameters.net``)."""
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
    folder = check_bert_folder(cfg.bert_path or default_bert_path())  # tokenizer (and config if absent)
    recorded = state["hyper_parameters"].get("bert_config")
    bert_cfg = encoder_config(dict(recorded)) if recorded else encoder_config(
        json.loads((folder / "config.json").read_text(encoding="utf-8")))
    tokenizer = load_tokenizer(folder)
    net = SAMNet(cfg, encoder_from_config(bert_cfg), tokenizer)
    try:
        net.load_state_dict(weights)
    except RuntimeError as exc:
        raise SAMFileError(f"{p} does not match its own configuration ({str(exc).splitlines()[0]}); "
                           "was it written by another version of sam_model?") from None
    net.training_info = training_info(state, p)
    return net.to(_device(device)).eval(), store


def training_info(state: dict, path: Path) -> dict:
    """What a checkpoint tells about its training, for the model card: data (sources, statistics, options),
    the optimisation settings, and which epoch this is with its validation score."""
    hp = dict(state.get("hyper_parameters", {}))
    info = {k: hp[k] for k in ("lr", "bert_lr", "weight_decay", "temperature", "positives", "in_batch_negatives",
                               "warmup_steps", "task_dropout", "phase_dropout") if k in hp}
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
    ap.add_argument("ckpt", help="Lightning checkpoint written by train.py (e.g. checkpoints/demo/last.ckpt)")
    ap.add_argument("out_dir", help="folder to write; replaced atomically if it exists")
    ap.add_argument("--slot-match", type=float, default=None, metavar="W",
                    help="weight of the needed-slot re-rank after the index search (sam_model.rerank; 0 = off); "
                         "default: the checkpoint's model.store.slot_match. Choose it on held-out training data")
    ap.add_argument("--provenance", choices=("on", "off"), default=None,
                    help="follow provenance links after the search (default: the checkpoint's setting)")
    args = ap.parse_args(argv)
    net, store = from_checkpoint(args.ckpt, device="cpu")
    if args.slot_match is not None:
        store.slot_match = args.slot_match
        store.check("--slot-match")
    if args.provenance is not None:
        store.provenance = args.provenance == "on"
    out = save_exported(net, args.out_dir, store)
    print(f"exported {args.ckpt} -> {out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """The CLI: a bad input ends in one ``error: ...`` line (``--traceback`` for the full trace)."""
    return run_cli(_main, argv)


if __name__ == "__main__":
    raise SystemExit(main())
