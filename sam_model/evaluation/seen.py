"""Whether an evaluation measures a retriever on the file it trained on.

A fit records its training files in the export's ``training.json`` (``data.sources``, as given on the command line,
and ``data.transcript_split``). ``sam-eval --data`` of such a file measures conversations the model trained on,
unless the fit read the file's train split alone and the evaluation its test split (README "Train on your own
logs"): the figures then look like held-out ones and are not. The fit's paths are relative to the folder it ran
in, so a file is matched by its name, and the warning says so.
"""

from __future__ import annotations

from pathlib import Path

CHOOSING = "choose on conversations kept out of its training (e.g. the fit's --data.val file)"


def trained_on_warning(name: str, retriever, data_path: str, split: str, fix: str | None = None) -> str | None:
    """One warning line where ``retriever`` (shown as ``name``) trained on a file named as ``data_path`` and the
    evaluation reads more than that file's test split of a fit that read its train split alone; else None.
    ``fix``: what to do instead (default: sam-eval's, the held-out split; :data:`CHOOSING` for a choice on
    validation data, whose --split test is refused)."""
    info = getattr(getattr(retriever, "net", None), "training_info", None) or {}
    data = info.get("data") if isinstance(info, dict) else None
    if not isinstance(data, dict):
        return None
    fit_split = data.get("transcript_split") or "all"
    if fit_split == "train" and split == "test":  # the README's held-out measurement
        return None
    wanted = Path(str(data_path)).name
    for source in data.get("sources") or []:
        path = source.get("path") if isinstance(source, dict) else source
        if path and Path(str(path)).name == wanted:
            fix = fix or ("measure with --split test" if fit_split == "train" else
                          "fit with --data.transcript_split train and measure with --split test")
            return (f"warning: {name} trained on {path} (its training.json, data.sources; transcript_split "
                    f"{fit_split}): if that is {data_path}, these are conversations it trained on, not held-out "
                    f"ones; {fix}")
    return None
