"""Export a trained retriever as a self-contained folder, and load it back without Lightning.

    python -m sam_model.export CKPT OUT_DIR

The folder holds ``config.json`` (format version, SAMConfig, BERT config),
``model.safetensors``, the tokenizer files and ``vocab.json`` (phases, kinds). Loading
needs torch, transformers and safetensors only.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

import torch
from safetensors import SafetensorError
from safetensors.torch import load_model, save_model
from transformers import AutoTokenizer, BertConfig, BertModel

from sam_model.io import SAMFileError
from sam_model.models.bert import check_bert_folder, default_bert_path
from sam_model.models.sam import SAMConfig, SAMNet

FORMAT_VERSION = 1
FILES = ("config.json", "model.safetensors", "vocab.json", "tokenizer")


def _device(device: str | torch.device | None) -> torch.device:
    """The asked device, else CUDA when available, else CPU."""
    return torch.device(device) if device else torch.device("cuda" if torch.cuda.is_available() else "cpu")


def save_exported(net: SAMNet, out_dir: str | os.PathLike) -> Path:
    """Write ``net`` as an export folder. The folder is built beside the target and renamed into place,
    so a crash never leaves a half export where a good one was."""
    out = Path(out_dir)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    mask = os.umask(0)
    os.umask(mask)
    os.chmod(tmp, 0o777 & ~mask)  # mkdtemp makes 0700; an export is meant to be shared
    try:
        bert = net.state_encoder.text_encoder.bert
        cfg = net.cfg.to_dict()
        config = {"format_version": FORMAT_VERSION, "sam": cfg, "bert_config": bert.config.to_dict(),
                  "out_dim": net.out_dim}
        (tmp / "config.json").write_text(json.dumps(config, indent=2))
        (tmp / "vocab.json").write_text(json.dumps({"phases": cfg["phases"], "kinds": cfg["kinds"]}, indent=2))
        save_model(net, str(tmp / "model.safetensors"))
        net.tokenizer.save_pretrained(str(tmp / "tokenizer"))
        if out.exists():
            old = out.with_name(f".{out.name}.old")
            shutil.rmtree(old, ignore_errors=True)
            os.replace(out, old)
            os.replace(tmp, out)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out


def load_exported(path: str | os.PathLike, device: str | torch.device | None = None) -> SAMNet:
    """Rebuild the SAMNet of an export folder (eval mode), with errors that say what is wrong."""
    folder = Path(path)
    if not folder.is_dir():
        raise SAMFileError(f"exported retriever not found: {folder} (create one with "
                           "`python -m sam_model.export CKPT OUT_DIR`)")
    for name in FILES:
        if not (folder / name).exists():
            raise SAMFileError(f"{folder} is not a complete export: {name} is missing (export it again)")
    try:
        config = json.loads((folder / "config.json").read_text())
    except json.JSONDecodeError as exc:
        raise SAMFileError(f"{folder / 'config.json'} is not valid JSON ({exc}); export it again") from None
    version = config.get("format_version")
    if version != FORMAT_VERSION:
        raise SAMFileError(f"{folder} has export format version {version}, this sam_model reads version "
                           f"{FORMAT_VERSION}; export the checkpoint again with this version")
    cfg = SAMConfig.from_saved(config["sam"])
    bert = BertModel(BertConfig.from_dict(config["bert_config"]), add_pooling_layer=False)
    tokenizer = AutoTokenizer.from_pretrained(str(folder / "tokenizer"))
    net = SAMNet(cfg, bert, tokenizer)
    try:
        missing, unexpected = load_model(net, str(folder / "model.safetensors"), strict=False)
    except (SafetensorError, OSError, RuntimeError) as exc:
        raise SAMFileError(f"{folder / 'model.safetensors'} cannot be loaded ({exc}); the file is corrupt or "
                           "does not match config.json — export the checkpoint again") from None
    if missing or unexpected:
        raise SAMFileError(f"{folder / 'model.safetensors'} does not match config.json (missing "
                           f"{sorted(missing)[:3]}, unexpected {sorted(unexpected)[:3]}); export again")
    return net.to(_device(device)).eval()


def net_from_checkpoint(ckpt: str | os.PathLike, device: str | torch.device | None = None) -> SAMNet:
    """The SAMNet inside a Lightning checkpoint of SAMLightningModule (read with torch only)."""
    p = Path(ckpt)
    if not p.is_file():
        raise SAMFileError(f"checkpoint not found: {p} (training writes them to checkpoints/<run>/)")
    try:
        state = torch.load(p, map_location="cpu", weights_only=False)
    except Exception as exc:  # noqa: BLE001 - torch raises many kinds for a corrupt file
        raise SAMFileError(f"{p} cannot be read as a checkpoint ({type(exc).__name__}: {exc}); "
                           "is it a complete .ckpt file written by train.py?") from None
    try:
        cfg = SAMConfig.from_saved(dict(state["hyper_parameters"]["net"]))
        weights = {k[len("net."):]: v for k, v in state["state_dict"].items() if k.startswith("net.")}
    except (KeyError, TypeError) as exc:
        raise SAMFileError(f"{p} is not a SAM retriever checkpoint (no {exc}); give a .ckpt written by "
                           "train.py") from None
    folder = str(check_bert_folder(cfg.bert_path or default_bert_path()))  # tokenizer (and config if absent)
    recorded = state["hyper_parameters"].get("bert_config")
    bert_cfg = BertConfig.from_dict(dict(recorded)) if recorded else BertConfig.from_pretrained(folder)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    net = SAMNet(cfg, BertModel(bert_cfg, add_pooling_layer=False), tokenizer)
    try:
        net.load_state_dict(weights)
    except RuntimeError as exc:
        raise SAMFileError(f"{p} does not match its own configuration ({str(exc).splitlines()[0]}); "
                           "was it written by another version of sam_model?") from None
    return net.to(_device(device)).eval()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m sam_model.export",
        description="Export a trained SAM retriever checkpoint as a self-contained folder that loads "
                    "without Lightning (sam_model.SAMRetriever.load(OUT_DIR)).")
    ap.add_argument("ckpt", help="Lightning checkpoint written by train.py (e.g. checkpoints/demo/last.ckpt)")
    ap.add_argument("out_dir", help="folder to write; replaced atomically if it exists")
    ap.add_argument("--slot-match", type=float, default=None, metavar="W",
                    help="weight of the needed-slot re-rank after the index search (sam_model.rerank; 0 = off); "
                         "default: the checkpoint's model.net.slot_match. Choose it on held-out training data")
    ap.add_argument("--provenance", choices=("on", "off"), default=None,
                    help="follow provenance links after the search (default: the checkpoint's setting)")
    args = ap.parse_args(argv)
    try:
        net = net_from_checkpoint(args.ckpt, device="cpu")
        if args.slot_match is not None:
            net.cfg.slot_match = args.slot_match
        if args.provenance is not None:
            net.cfg.provenance = args.provenance == "on"
        out = save_exported(net, args.out_dir)
    except SAMFileError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"exported {args.ckpt} -> {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
