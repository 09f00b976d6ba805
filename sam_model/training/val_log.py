"""The validation holdout of a training configuration, as an agent log to evaluate on.

``train.py fit`` holds out ``data.val_fraction`` of the training groups (SWE-bench instances, tau-bench tasks,
SGD dialogues) to select the epoch. A choice made after training (a chunk size, a variant, an epoch for one
domain) must be made on those episodes too, never on the test split: this writes the held-out episodes of one
training source, as that run converted them, into an agent log that ``evaluate.py --data`` reads. ::

    python -m sam_model.training.val_log --config configs/tools.yaml --config configs/coding.yaml \\
        --source autocoderover-gpt4-swebench-lite-train.chat.jsonl.gz --out runs/coding_val.jsonl

The configs' ``data`` sections are read as ``train.py`` reads them (a later file's keys replace an earlier's);
the holdout is the datamodule's own (sam_model.training.datamodule.holdout), so it is the run's, seed included.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import yaml

from sam_model.data.reader import open_log
from sam_model.data.sources import SourceOptions, materialise
from sam_model.io import SAMFileError, atomic_write_text


def data_section(configs: list[str | Path]) -> dict[str, Any]:
    """The merged ``data:`` of training configs, later files replacing earlier keys."""
    data: dict[str, Any] = {}
    for path in configs:
        try:
            cfg = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
        except (OSError, yaml.YAMLError) as exc:
            raise SAMFileError(f"config {path}: {exc}") from None
        if not isinstance(cfg, dict) or not isinstance(cfg.get("data", {}), dict):
            raise SAMFileError(f"config {path}: expected a mapping with a 'data' mapping (a train.py config)")
        data.update(cfg.get("data") or {})
    return data


def held_lines(dm, sources: list[str] | None = None) -> tuple[list[str], int]:
    """The agent-log lines of ``dm``'s validation conversations (AgentLogDataModule.held_episodes: the run's own
    holdout, seed included, or its data.val files) of ``sources`` (default: every source they come from), as the
    run converted them; returns (lines, conversations)."""
    dm._ensure()
    hp = dm.hparams
    held = dm.held_episodes
    given = list(hp.val) if hp.val else list(hp.train)
    options = SourceOptions(label=hp.label, masked=hp.masked, split=hp.transcript_split,
                            every=1 if hp.val else hp.sgd_every)
    lines, episodes = [], set()
    for source in sources if sources is not None else given:
        log = materialise(source, options, dm.cache_dir)
        with open_log(log) as fh:
            for raw in fh:
                line = raw.decode("utf-8") if isinstance(raw, bytes) else raw
                if line.strip() and (eid := json.loads(line)["episode_id"]) in held:
                    lines.append(line if line.endswith("\n") else line + "\n")
                    episodes.add(eid)
    return lines, len(episodes)


def validation_log(configs: list[str | Path], source: str, out: str | Path) -> tuple[int, int]:
    """Write the validation episodes of the training source whose path ends with ``source``; returns
    (episodes, events) written."""
    from sam_model.training.datamodule import AgentLogDataModule

    data = data_section(configs)
    train = [str(p) for p in data.get("train") or []]
    match = [p for p in train if p.endswith(source)]
    if len(match) != 1:
        raise SAMFileError(f"--source {source!r} names {len(match)} of the configs' data.train sources {train}: "
                           "give the end of exactly one")
    if list(data.get("lives") or [1]) != [1]:
        raise SAMFileError(f"data.lives is {data['lives']}: lives of several episodes are validated as lives, "
                           "not episodes; stack a config with lives: [1] (as configs/coding.yaml)")
    dm = AgentLogDataModule(**data)
    lines, episodes = held_lines(dm, match)
    if not lines:
        raise SAMFileError(f"no validation episode of {match[0]} (val_fraction {data.get('val_fraction')}): "
                           "the holdout drew none of its groups")
    atomic_write_text(out, "".join(lines))
    return episodes, len(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m sam_model.training.val_log", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", action="append", required=True, metavar="YAML",
                    help="a train.py config, in the order given to train.py (repeat the option)")
    ap.add_argument("--source", required=True, metavar="NAME",
                    help="the end of one data.train path (a file name is enough)")
    ap.add_argument("--out", required=True, metavar="LOG", help="the agent log to write (.jsonl), atomically")
    args = ap.parse_args(argv)
    try:
        n_ep, n_ev = validation_log(args.config, args.source, args.out)
    except SAMFileError as exc:
        ap.exit(2, f"error: {exc}\n")
    print(f"wrote {n_ep} validation episodes ({n_ev} events) of {args.source} to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
