"""Helpers of the served-memory tests: a tiny export and a keys file (the server itself: sam_model.bench.serve)."""

from __future__ import annotations

import json
from pathlib import Path

from sam_model.bench.serve import KEYS


def tiny_export(bert_dir: Path, folder: Path, **config) -> Path:
    """A random tiny SAM network exported (loads in a second; ranks arbitrarily, which these tests don't judge);
    ``config``: SAMConfig fields besides the tiny sizes."""
    from sam_model.export import save_exported
    from sam_model.models.sam import SAMConfig, SAMNet

    return save_exported(SAMNet(SAMConfig(bert_path=str(bert_dir), dim=8, hidden=16, proj_hidden=16,
                                          max_length=32, **config)), folder)


def keys_file(folder: Path, keys: dict[str, str] = KEYS) -> Path:
    """The keys file, its owner's alone as the README makes it (sam-serve warns of one other users may read)."""
    path = folder / "keys.json"
    path.write_text(json.dumps(keys))
    path.chmod(0o600)
    return path
