"""Whether an evaluation measures a retriever on the file it trained on.

A fit records its training files in the export's ``training.json`` (``data.sources``, as given on the command line,
and ``data.transcript_split``; a WiSE-FT mix records each source's own split beside it, as its fit read it).
``sam-eval --data`` of such a file measures conversations the model trained on, unless the fit read the file's
train split alone and the evaluation its test split (README "Train on your own logs"): the figures then look like
held-out ones and are not. The fit's paths are relative to the folder it ran in, so a fit records each source's
fingerprint too (sam_model.data.fingerprint: its bytes' size and hash; a folder's, and each of its files'): where
the record holds one, the file measured is the trained one if its bytes are (under any name, in any folder; one
file of a trained folder too), and another file of that name is not. A record of before fingerprints goes by the
path: where a recorded path names a file here, the two are compared (the same file, or one inside a trained
folder, is warned of for certain; another file of that name is not); elsewhere a file is matched by its name, and
the warning says so.
"""

from __future__ import annotations

import filecmp
from collections.abc import Callable
from functools import cache
from pathlib import Path

from sam_model.data.fingerprint import fingerprint, fingerprints, grown_from, listed

CHOOSING = "choose on conversations kept out of its training (e.g. the fit's --data.val file)"


def _same(recorded: Path, here: Path) -> bool | None:
    """True where ``recorded`` (as the fit gave it) is ``here`` or a trained folder holding it, False where it names
    another file or folder here, None where it names nothing here (recorded in another folder or machine)."""
    try:
        if not recorded.exists() or not here.exists():
            return None
        if recorded.samefile(here) or here.resolve().is_relative_to(recorded.resolve()):
            return True
        return recorded.is_file() and here.is_file() and filecmp.cmp(recorded, here, shallow=False)
    except OSError:  # unreadable: the name alone decides
        return None


def _same_bytes(source: object, held: Callable[[], set[str]], here: Path) -> bool | None:
    """Whether the measured data's bytes (``here``'s; ``held()``: its fingerprints, read once for all the sources)
    are ``source``'s (a training record's source) by their fingerprints, or a trained file's appended to since
    (a log written on after the fit); None where the record keeps none (a fit of
    before fingerprints, or a source that was no local path) or the data is unreadable here: the path decides."""
    recorded = fingerprints(source) if isinstance(source, dict) else set()
    if not recorded or not (mine := held()):
        return None
    return bool(recorded & mine) or any(grown_from(f, recorded) for f in _files(here))


def _files(path: Path) -> list[Path]:
    """The files of the data measured: itself, or those of a folder its conversion reads."""
    try:
        return [path] if path.is_file() else listed(path)
    except OSError:  # unreadable: its fingerprints alone decide
        return []


def trained_on_warning(name: str, retriever, data_path: str, split: str, fix: str | None = None) -> str | None:
    """One warning line where ``retriever`` (shown as ``name``) trained on ``data_path`` (the file, a folder holding
    it, or where the recorded path names nothing here, a file of its name) and the evaluation reads more than the
    test split of a file whose fit read its train split alone; else None. ``fix``: what to do instead (default:
    sam-eval's, the held-out split; :data:`CHOOSING` for a choice on validation data, whose --split test is
    refused)."""
    info = getattr(getattr(retriever, "net", None), "training_info", None) or {}
    data = info.get("data") if isinstance(info, dict) else None
    sources = data.get("sources") if isinstance(data, dict) else None
    if not isinstance(sources, list):  # no record, or one written by hand: nothing to say
        return None
    here = Path(str(data_path))
    held = cache(lambda: fingerprints(fingerprint(here) or {}))
    for source in sources:
        path = source.get("path") if isinstance(source, dict) else source
        if not path or not isinstance(path, str):
            continue
        own = source.get("transcript_split") if isinstance(source, dict) else None  # a mix's source: its own fit's
        kind = source.get("kind") if isinstance(source, dict) else None
        split_read = kind in (None, "transcripts")  # the split is a transcript file's: an SGD folder is read whole
        fit_split = str(own or data.get("transcript_split") or "all") if split_read else "all (not a transcript file)"
        if fit_split == "train" and split == "test":  # the README's held-out measurement
            continue
        same = _same_bytes(source, held, here)
        same = _same(Path(path).expanduser(), here) if same is None else same
        if same is False or (same is None and Path(path).name != here.name):
            continue
        fix = fix or ("measure with --split test" if fit_split == "train" else
                      "fit with --data.transcript_split train and measure with --split test" if split_read else
                      "measure on data kept out of its training (--split reads a transcript file's split alone)")
        which = f"{data_path} is among them:" if same else f"if that is {data_path},"
        return (f"warning: {name} trained on {path} (its training.json, data.sources; transcript_split "
                f"{fit_split}): {which} these are conversations it trained on, not held-out ones; {fix}")
    return None
