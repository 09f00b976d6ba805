"""Reading ``.ckpt`` files without running pickled code.

A checkpoint is a pickle, and unpickling can call any function it names (a crafted ``.ckpt`` can
run a shell command). Every checkpoint sam_model reads goes through :func:`load_checkpoint`, which
uses ``torch.load(weights_only=True)``: only tensors, containers and primitive values (plus the few
classes in ``SAFE_GLOBALS``) are rebuilt; anything else is refused with a one-line error and
nothing from the file runs. The checkpoints train.py writes hold nothing else. Exports are
safetensors + JSON and need no pickle at all.
"""

from __future__ import annotations

import os
import pickle
import re
import warnings
from pathlib import Path
from typing import Any

import torch

from sam_model.io import SAMFileError, json_type

# Classes a checkpoint may hold besides tensors and builtins (extended by the training side with
# Lightning's AttributeDict, which only the trainer imports).
SAFE_GLOBALS: list[Any] = []


def load_checkpoint(path: str | os.PathLike, map_location: Any = "cpu") -> dict:
    """The dict stored in a ``.ckpt`` (weights_only); SAMFileError naming the file when it is missing,
    unreadable, or asks for code or classes outside the allow-list."""
    p = Path(path)
    if not p.is_file():
        raise SAMFileError(f"checkpoint not found: {p} ({held_beside(p) or 'training writes them to checkpoints/<run>/'})")
    try:
        with torch.serialization.safe_globals(SAFE_GLOBALS), warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="Detected pickle protocol")  # refused below anyway
            state = torch.load(p, map_location=map_location, weights_only=True)
    except pickle.UnpicklingError as exc:
        if not _is_pickle(p, exc):
            raise SAMFileError(f"{p} cannot be read as a checkpoint (not a torch or pickle file); is it a "
                               "complete .ckpt file written by train.py?") from None
        raise SAMFileError(f"{p}: refused to load: the checkpoint asks to run or build {_culprit(exc)}, which a "
                           "checkpoint written by train.py never does (it may be malicious); nothing from it was "
                           "run — use a checkpoint you trained yourself") from None
    except Exception as exc:  # noqa: BLE001 - torch raises many kinds for a corrupt file
        raise SAMFileError(f"{p} cannot be read as a checkpoint ({type(exc).__name__}: {_first_line(exc)}); "
                           "is it a complete .ckpt file written by train.py?") from None
    if not isinstance(state, dict):
        raise SAMFileError(f"{p} holds {json_type(state)}, not a checkpoint (an object of weights, state and "
                           "hyper-parameters); give a .ckpt written by train.py")
    return state


def held_beside(p: Path) -> str | None:
    """For a missing ``.ckpt``, the checkpoints its folder holds and what to give (the README's
    ``best-epoch=NN.ckpt`` copied as written named no file, and the error did not say which epoch the run kept);
    None where the folder holds none."""
    try:
        held = sorted(c.name for c in p.parent.glob("*.ckpt") if c.is_file())
    except OSError:
        held = []
    if not held:
        return None
    return (f"{p.parent} holds {', '.join(held[:8])}{', ...' if len(held) > 8 else ''}: give one of them "
            "(best-epoch=NN.ckpt: NN is the epoch the run kept)")


def recorded_folder(value: str, ckpt: str | os.PathLike, field: str) -> str:
    """A folder a checkpoint records (``hyper_parameters.net.bert_path``), absolute. Checkpoints written before
    training recorded it absolute hold it as given, relative to the folder the run trained in: read from another
    folder, it was "not found". It is looked for from the current folder, then from the checkpoint's folder and
    each folder above it (the configs put checkpoints in ``checkpoints/RUN/`` under the folder training ran in);
    found nowhere, one line naming the checkpoint, the field and what to do. Empty or absolute: as recorded."""
    if not value or Path(value).is_absolute():
        return value
    here = Path(ckpt).resolve().parent
    for base in (Path.cwd(), here, *here.parents):
        if (base / value).is_dir():
            return str((base / value).resolve())
    raise SAMFileError(f"{ckpt}: field '{field}' is the folder {value!r}, relative to the folder the training ran in, "
                       "and it is neither under the current folder nor beside the checkpoint or a folder above it: "
                       f"run it from the folder the training ran in, or put that folder at {Path.cwd() / value}")


def _is_pickle(path: Path, exc: BaseException) -> bool:
    """Whether a weights_only failure is a real pickle asking for more than data (not a garbage file)."""
    if "Unsupported global" in str(exc) or "Unsupported class" in str(exc):
        return True
    with open(path, "rb") as fh:
        head = fh.read(2)
    return head[:1] == b"\x80" or head == b"PK"  # pickle PROTO opcode, or torch's zip format


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0][:200] if text else type(exc).__name__


def _culprit(exc: BaseException) -> str:
    """The global the pickle wanted (e.g. ``posix.system``), from torch's message."""
    m = re.search(r"(?:Unsupported global: GLOBAL|Unsupported class|GLOBAL)\s+([\w.]+)", str(exc))
    return f"`{m.group(1)}`" if m else "code or objects outside the allow-list"
