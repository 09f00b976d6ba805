"""LightningDataModule over agent logs (or SGD split folders, converted on the fly)."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytorch_lightning as pl
import torch
from torch.utils.data import DataLoader, Dataset

from sam_model.io import SAMFileError
from sam_model.training.batching import EpochShuffle, collate_episodes


class _Episodes(Dataset):
    """(episode index, row) pairs; the index names the episode inside a global batch."""

    def __init__(self, hf_dataset, offset: int = 0):
        self.ds, self.offset = hf_dataset, offset

    def __len__(self) -> int:
        return len(self.ds)

    def __getitem__(self, i: int):
        return self.offset + i, self.ds[i]


def useful_kinds(episodes, min_share: float = 0.01) -> list[str]:
    """Memory kinds that hold at least ``min_share`` of the useful-memory labels of ``episodes`` (rows of
    sam_model.data.hf.episodes_to_dataset). In SGD logs tool calls and results are never labelled, so
    provenance links go to the user and system turns that said a value, not to the result list."""
    counts: dict[str, int] = {}
    for row in episodes.select_columns(["steps", "kinds", "labels"]):
        kind_at = dict(zip(row["steps"], row["kinds"]))
        for labels in row["labels"]:
            for step in labels:
                if step in kind_at:
                    counts[kind_at[step]] = counts.get(kind_at[step], 0) + 1
    total = sum(counts.values())
    return sorted(k for k, c in counts.items() if total and c / total >= min_share)


def require_decision_points(episodes, split: str, source: str) -> None:
    """A split the trainer cannot use (no episodes, or no decision point to score) is an error naming it."""
    if not any(labels for row in episodes.select_columns(["labels"]) for labels in row["labels"]):
        what = "no episodes" if len(episodes) == 0 else f"no decision points in its {len(episodes)} episode(s)"
        raise SAMFileError(f"{source}: the {split} split has {what} (events with useful_memory_steps); "
                           "label decision points, or give other data (python -m sam_model.data.validate shows "
                           "the counts)")


def default_cache_dir() -> Path:
    return Path(os.environ.get("SAM_CACHE_DIR", Path.home() / ".cache" / "sam_model"))


def materialise_log(path: str, sgd_label: str, sgd_masked: bool, max_dialogues: int | None,
                    cache_dir: Path, every: int = 1) -> Path:
    """A log file for ``path``: the file itself, or an SGD split folder converted once into the cache.

    The cache lives outside the repository: SGD data and anything derived from it never goes into git.
    """
    from sam_model.data.sgd import is_sgd_split_dir, iter_sgd_events
    from sam_model.io import atomic_path

    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"training data not found: {p} (give an agent-log .jsonl/.jsonl.gz file or an "
                                "SGD split folder such as ../shared/data/sgd/train)")
    if not p.is_dir():
        return p
    if not is_sgd_split_dir(p):
        raise ValueError(f"{p} is a folder without SGD dialogues_*.json[.gz] files; give an agent-log file")
    key = json.dumps([str(p.resolve()), sgd_label, sgd_masked, max_dialogues] + ([every] if every != 1 else []))
    out = cache_dir / f"sgd-{p.name}-{hashlib.sha1(key.encode()).hexdigest()[:12]}.jsonl"
    if not out.exists():
        with atomic_path(out) as tmp, open(tmp, "w", encoding="utf-8") as fh:
            for ev in iter_sgd_events(p, label=sgd_label, masked=sgd_masked, max_dialogues=max_dialogues,
                                      every=every):
                fh.write(json.dumps(ev, ensure_ascii=False) + "\n")
    return out


class AgentLogDataModule(pl.LightningDataModule):
    """Episodes of agent logs, batched as whole episodes.

    Args:
        train: agent-log files (.jsonl/.jsonl.gz) or SGD split folders to train on.
        val: files or folders to validate on; empty = hold out ``val_fraction`` of the training episodes.
        val_fraction: share of training episodes held out when ``val`` is empty.
        batch_episodes: episodes per batch (all their events are the memories of the batch).
        sgd_label: SGD label variant when a folder is SGD: origin | latest | all.
        sgd_masked: mask needed slot values at SGD decision points (the benchmark default).
        max_dialogues: cap on SGD dialogues read from each training folder (None = all).
        sgd_every: read one training dialogue in ``sgd_every`` (SGD files are grouped by service: a strided
            sample sees every service, the first N dialogues only a few).
        max_val_dialogues: cap on SGD dialogues read from each validation folder.
        on_error: "raise" on a malformed log line, or "skip" it and report the count.
        num_workers: DataLoader worker processes.
        seed: seed of the train/val split.
        cache_dir: where converted SGD logs and Arrow files go (default ~/.cache/sam_model).
    """

    def __init__(self, train: list[str], val: list[str] | None = None, val_fraction: float = 0.1,
                 batch_episodes: int = 32, sgd_label: str = "origin", sgd_masked: bool = True,
                 max_dialogues: int | None = None, max_val_dialogues: int | None = None, sgd_every: int = 1,
                 on_error: str = "raise", num_workers: int = 0, seed: int = 0, cache_dir: str | None = None):
        super().__init__()
        self.save_hyperparameters()
        self.cache_dir = Path(cache_dir) if cache_dir else default_cache_dir()
        self._train = self._val = None

    def _load(self, paths: list[str], max_dialogues: int | None, every: int = 1):
        from sam_model.data.hf import episodes_to_dataset

        hp = self.hparams
        files = [materialise_log(p, hp.sgd_label, hp.sgd_masked, max_dialogues, self.cache_dir, every)
                 for p in paths]
        return episodes_to_dataset([str(f) for f in files], on_error=hp.on_error,
                                   cache_dir=str(self.cache_dir / "arrow"))

    def _ensure(self) -> None:
        if self._train is not None:
            return
        hp = self.hparams
        train = self._load(list(hp.train), hp.max_dialogues, hp.sgd_every)
        if hp.val:
            self._train, self._val = train, self._load(list(hp.val), hp.max_val_dialogues)
        else:
            if len(train) < 2:
                raise ValueError("need at least 2 episodes to hold out a validation split; pass `val` files")
            split = train.train_test_split(test_size=hp.val_fraction, seed=hp.seed, shuffle=True)
            self._train, self._val = split["train"], split["test"]

    @property
    def vocab(self) -> dict[str, list[str]]:
        """Phases and memory kinds of the training episodes (the model's embedding vocabularies), and the
        kinds its labels call useful (``source_kinds``: where provenance links may point)."""
        self._ensure()
        phases = sorted({p for row in self._train["phases"] for p in row})
        kinds = sorted({k for row in self._train["kinds"] for k in row})
        return {"phases": phases, "kinds": kinds, "source_kinds": useful_kinds(self._train)}

    def setup(self, stage: str | None = None) -> None:
        self._ensure()
        hp = self.hparams
        train = ", ".join(map(str, hp.train))
        require_decision_points(self._train, "training", train)
        require_decision_points(self._val, "validation", ", ".join(map(str, hp.val)) if hp.val else
                                f"{train} (val_fraction {hp.val_fraction} held out)")

    def _epoch(self) -> int:
        return self.trainer.current_epoch if self.trainer is not None else 0

    def _loader(self, ds, shuffle: bool, offset: int) -> DataLoader:
        # The order depends on (seed, epoch) and the loader draws from its own generator, never the global
        # RNG: a run resumed from last.ckpt sees the batches (and dropout) of the uninterrupted run.
        hp = self.hparams
        return DataLoader(_Episodes(ds, offset), batch_size=hp.batch_episodes,
                          sampler=EpochShuffle(len(ds), hp.seed, self._epoch) if shuffle else None,
                          generator=torch.Generator().manual_seed(hp.seed), collate_fn=collate_episodes,
                          num_workers=hp.num_workers, persistent_workers=hp.num_workers > 0)

    def train_dataloader(self) -> DataLoader:
        return self._loader(self._train, True, 0)

    def val_dataloader(self) -> DataLoader:
        return self._loader(self._val, False, len(self._train))
