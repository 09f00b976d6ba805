"""Lightning's checkpoint reads and writes, made safe: atomic saves, loads that never run pickled code.

``AtomicCheckpointIO`` replaces Lightning's default TorchCheckpointIO for local paths: a checkpoint
(``last.ckpt``, ``best-*.ckpt``) is written through sam_model.io.atomic_path, so a kill mid-save keeps
the previous file (Lightning's own write can leave a truncated file when its temp folder is on another
filesystem), and ``--ckpt_path`` resumes through sam_model.checkpoint.load_checkpoint (weights_only,
a crafted checkpoint is refused). SAMCLI installs it; remote paths (``s3://``...) keep Lightning's IO.
"""

from __future__ import annotations

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
    def save_checkpoint(self, checkpoint: dict[str, Any], path: Any, storage_options: Any | None = None) -> None:
        if storage_options is not None or not _local(path):
            return super().save_checkpoint(checkpoint, path, storage_options)
        with atomic_path(path) as tmp:
            torch.save(checkpoint, tmp)

    def load_checkpoint(self, path: Any, map_location: Any = None, weights_only: bool | None = None) -> dict[str, Any]:
        if not _local(path):
            return super().load_checkpoint(path, map_location=map_location, weights_only=True)
        return load_checkpoint(path, map_location=map_location or "cpu")


def use_atomic_checkpoints(trainer: pl.Trainer) -> None:
    """Give ``trainer`` AtomicCheckpointIO unless it was configured with a CheckpointIO of its own."""
    if type(trainer.strategy.checkpoint_io) is TorchCheckpointIO:
        trainer.strategy.checkpoint_io = AtomicCheckpointIO()
