"""Lightning's checkpoint reads and writes, made safe: atomic saves, loads that never run pickled code.

``AtomicCheckpointIO`` replaces Lightning's default TorchCheckpointIO for local paths: a checkpoint
(``last.ckpt``, ``best-*.ckpt``) is written through sam_model.io.atomic_path, so a kill mid-save keeps
the previous file (Lightning's own write can leave a truncated file when its temp folder is on another
filesystem), and ``--ckpt_path`` resumes through sam_model.checkpoint.load_checkpoint (weights_only,
a crafted checkpoint is refused). SAMCLI installs it; remote paths (``s3://``...) keep Lightning's IO.
With ``--overwrite`` it also deletes the replaced run's files (checkpoints, export, logs: ``earlier_logs``) after
the new run's first save.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytorch_lightning as pl
import torch
from lightning_fabric.plugins.io.torch_io import TorchCheckpointIO
from lightning_fabric.utilities.data import AttributeDict

from sam_model.checkpoint import SAFE_GLOBALS, load_checkpoint
from sam_model.io import atomic_path

if AttributeDict not in SAFE_GLOBALS:
    SAFE_GLOBALS.append(AttributeDict)  # Lightning may store hyper-parameters as one


def _local(path: Any) -> bool:
    return "://" not in str(path)


class AtomicCheckpointIO(TorchCheckpointIO):
    def __init__(self) -> None:
        super().__init__()
        self.replaces: list[Path] = []  # an earlier run's files, deleted after the first save (--overwrite)

    def save_checkpoint(self, checkpoint: dict[str, Any], path: Any, storage_options: Any | None = None) -> None:
        if storage_options is not None or not _local(path):
            return super().save_checkpoint(checkpoint, path, storage_options)
        with atomic_path(path) as tmp:
            torch.save(checkpoint, tmp)
        old, self.replaces = self.replaces, []
        _delete([p for p in old if p.resolve() != Path(path).resolve()])  # not the file just written

    def load_checkpoint(self, path: Any, map_location: Any = None, weights_only: bool | None = None) -> dict[str, Any]:
        if not _local(path):
            return super().load_checkpoint(path, map_location=map_location, weights_only=True)
        return load_checkpoint(path, map_location=map_location or "cpu")


def _delete(paths: list[Path]) -> None:
    for p in paths:
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p, ignore_errors=True)
        else:
            p.unlink(missing_ok=True)


def replace_after_first_save(trainer: pl.Trainer, old: list[Path]) -> None:
    """Delete ``old`` (the run that ``--overwrite`` replaces) once ``trainer`` has saved its first checkpoint, so a
    run that fails before its first epoch ends leaves the earlier run whole; with a CheckpointIO of the run's own,
    at once."""
    io = trainer.strategy.checkpoint_io
    if isinstance(io, AtomicCheckpointIO):
        io.replaces = list(old)
    else:
        _delete(old)


def earlier_logs(trainer: pl.Trainer) -> list[Path]:
    """What earlier runs logged where ``trainer``'s loggers write (``--overwrite`` replaces them with the checkpoints):
    the ``version_N`` folders beside the one this run will write (TensorBoard's and CSV's layout), and, where a
    logger's version is fixed so this run writes into an earlier run's folder, the TensorBoard event files already
    there (this run's has another name). Without it the earlier run's plots sat beside the new run's.
    Read before this run logs anything: its own folder is named (``log_dir``) but not yet made."""
    out: list[Path] = []
    for logger in trainer.loggers:
        root, here = getattr(logger, "root_dir", None), getattr(logger, "log_dir", None)
        if not (root and here and _local(root)):
            continue
        root, here = Path(os.path.expandvars(root)).expanduser().resolve(), Path(here).resolve()
        if root.is_dir():
            out += [d for d in sorted(root.glob("version_*")) if d.is_dir() and not d.is_symlink()
                    and not here.is_relative_to(d)]
        if here.is_dir():
            out += sorted(here.glob("events.out.tfevents.*"))
    return out


def use_atomic_checkpoints(trainer: pl.Trainer) -> None:
    """Give ``trainer`` AtomicCheckpointIO unless it was configured with a CheckpointIO of its own."""
    if type(trainer.strategy.checkpoint_io) is TorchCheckpointIO:
        trainer.strategy.checkpoint_io = AtomicCheckpointIO()
