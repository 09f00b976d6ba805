"""LightningDataModule over agent logs (or SGD split folders, converted on the fly)."""

from __future__ import annotations

import functools
import random
import sys
from collections.abc import Callable
from pathlib import Path

import datasets
import pytorch_lightning as pl
import torch
from torch.utils.data import DataLoader, Dataset

from sam_model.data.advice import spelt_as
from sam_model.data.chunks import Chunking, CountTokens
from sam_model.data.lives import concat_rows
from sam_model.data.sources import SourceOptions, default_cache_dir, materialise
from sam_model.data.text import content_text
from sam_model.data.toolstate import LABELS
from sam_model.data.transcripts import SPLITS
from sam_model.io import SAMFileError, given_twice
from sam_model.training.batching import EpochShuffle, chunk_row, collate_episodes
from sam_model.training.split_report import count, few_decisions, holdout_rule, split_lines


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


def source_stats(path: str, episodes) -> dict:
    """What one training source holds, for the model card: its kind, episodes, decision points, labels; and its
    bytes' fingerprint (sam_model.data.fingerprint), by which an evaluation elsewhere knows the file it trained on
    under any name, and a held-out file that shares its name as another."""
    from sam_model.data.fingerprint import fingerprint
    from sam_model.data.sources import source_kind

    labels = [len(x) for row in episodes.select_columns(["labels"]) for x in row["labels"] if x]
    return {"path": str(path), "kind": source_kind(path), "episodes": len(episodes), "decision_points": len(labels),
            "labels": sum(labels), **(fingerprint(path) or {})}


def require_decision_points(episodes, split: str, source: str) -> None:
    """A split the trainer cannot use (no episodes, or no decision point to score) is an error naming it."""
    if not any(labels for row in episodes.select_columns(["labels"]) for labels in row["labels"]):
        what = "no episodes" if len(episodes) == 0 else f"no decision points in its {len(episodes)} episode(s)"
        raise SAMFileError(f"{source}: the {split} split has {what} (events with useful_memory_steps); "
                           "label decision points, or give other data (python -m sam_model.data.validate shows "
                           "the counts)")


def holdout(episodes, fraction: float, seed: int, keep_order: bool = False):
    """(train, validation) rows: ``fraction`` of the episodes held out, or of the groups when episodes share
    groups (a task's trials share their user and values: holding out one trial and training on another would
    validate on what was trained). Without shared groups and ``keep_order`` this is the plain seeded row split
    (which shuffles); otherwise both sides keep the file order, which lives of consecutive episodes need."""
    groups = episodes["group"]
    if len(set(groups)) == len(groups) and not keep_order:
        split = episodes.train_test_split(test_size=fraction, seed=seed, shuffle=True)
        return split["train"], split["test"]
    distinct = sorted(set(groups))
    random.Random(seed).shuffle(distinct)
    held = set(distinct[: max(1, round(fraction * len(distinct)))])
    if len(held) == len(distinct):
        raise ValueError("need at least 2 episode groups to hold out a validation split; pass `val` files")
    rows = [i for i, g in enumerate(groups) if g not in held]
    return episodes.select(rows), episodes.select([i for i, g in enumerate(groups) if g in held])


def concat_lives(episodes, sizes: list[int]):
    """The rows of ``episodes`` as lives of each size in ``sizes``, one after another: n consecutive rows become
    one (sam_model.data.lives.concat_rows, the one builder: the ids and shifts of make_lives)."""
    def rows():
        for n in sizes:
            for start in range(0, len(episodes), n):
                chunk = [episodes[i] for i in range(start, min(start + n, len(episodes)))]
                yield chunk[0] if n == 1 else concat_rows(chunk, n, start // n)

    return datasets.Dataset.from_list(list(rows()), features=episodes.features)


def same_episode(parts: list, names: list[str]) -> tuple[str, str, str] | None:
    """The first episode that two of ``parts`` (episode datasets, one per source ``names``) hold alike: the same id
    and the same events, as when one export is listed beside a file it contains. (id, name, other name), or None.
    An id two sources share with different events is two agents' conversations and is not reported."""
    first: dict[str, tuple[int, int]] = {}
    for i, part in enumerate(parts):
        for row, eid in enumerate(part["episode_id"]):
            j, other = first.setdefault(eid, (i, row))
            if j != i and all(part[row][k] == parts[j][other][k] for k in ("steps", "kinds", "texts")):
                return eid, names[j], names[i]
    return None


def repeat_counts(train: list[str], repeat: dict[str, int] | list[int] | None) -> list[int]:
    """One read count per ``train`` source from ``data.repeat`` (see AgentLogDataModule): a mapping names sources
    by path or file/folder name (the others are read once); a list gives one count per source."""
    if isinstance(repeat, dict):
        names = [{str(p), Path(str(p)).name, Path(str(p).rstrip("/")).name} for p in train]
        counts = [1] * len(train)
        for key, count in repeat.items():
            hits = [i for i, n in enumerate(names) if str(key) in n]
            if not hits:
                print(f"data.repeat: {key!r} names no data.train source {train}; ignored")
            for i in hits:
                counts[i] = count
    else:
        counts = list(repeat or [1] * len(train))
        if len(counts) != len(train):
            raise ValueError(f"data.repeat needs one count per data.train source ({len(train)}), got {counts}; or "
                             "give a mapping {source file name: count} (sources not named are read once)")
    if any(not isinstance(c, int) or isinstance(c, bool) or c < 1 for c in counts):
        raise ValueError(f"data.repeat counts must be integers >= 1, got {repeat}")
    return counts


CHOICES = {"label": LABELS, "transcript_split": SPLITS, "on_error": ("raise", "skip")}
AT_LEAST = {"sgd_every": 1, "max_dialogues": 1, "max_val_dialogues": 1, "seed": 0, "num_workers": 0}


def check_options(**options) -> None:
    """Check the data options before any data is read, each error naming its ``data.`` key. Without it a typo in
    ``label`` or ``transcript_split`` passed silently on agent logs (which ignore them) and failed on transcripts
    as "split must be one of ..." naming no option; ``max_dialogues: 0`` said the converted cache file was empty;
    a bad ``on_error``, ``seed`` or ``num_workers`` surfaced from deep inside, naming nothing."""
    for key, allowed in CHOICES.items():
        if options[key] not in allowed:
            raise ValueError(f"data.{key} must be one of {', '.join(allowed)}, got {options[key]!r}")
    for key, least in AT_LEAST.items():
        value = options[key]
        if value is None and key.startswith("max_"):
            continue  # no cap
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            hint = " (null reads them all)" if key.startswith("max_") else ""
            raise ValueError(f"data.{key} must be an integer >= {least}{hint}, got {value!r}")
    lives = options["lives"]
    if any(isinstance(n, bool) or not isinstance(n, int) or n < 1 for n in lives or []):
        raise ValueError(f"data.lives must hold life sizes >= 1 (1: the episodes as they are), got {lives!r}")


class AgentLogDataModule(pl.LightningDataModule):
    """Episodes of agent logs, batched as whole episodes.

    Args:
        train: what to train on: agent-log files (.jsonl/.jsonl.gz), tool-call transcript files in any
            format `sam-data formats` lists (OpenAI chat, tau-bench, Anthropic, Gemini, Bedrock Converse, ...),
            folders of SWE-agent or OpenHands trajectories, session folders (Strands Agents, OpenHands) or SGD
            split folders (sam_model.data.sources; conversions are cached in ``cache_dir``).
        val: the same kinds of input to validate on; empty = hold out ``val_fraction`` of the training episodes
            (by group: the trials of one transcript task stay on one side).
        val_fraction: share of training episodes (groups) held out when ``val`` is empty.
        batch_episodes: episodes per batch (all their events are the memories of the batch).
        label: how SGD and transcript decision points are labelled: origin (the first earlier event that says a
            needed value) | latest | all.
        masked: mask needed values at SGD and transcript decision points (the benchmark default).
        transcript_split: which fixed split of every transcript file to read: all | train | test (by task group,
            sam_model.data.transcripts.held_out_groups); "train" keeps the test tasks out of training.
        repeat: how many times ``train`` sources are read per epoch: a mapping {source: count} (a source named by
            its path as given in ``train`` or by its file or folder name; sources not named are read once, so a
            config's mapping survives ``--data.train`` overriding its sources), or one count per source. A small
            log of your own agent next to a large public one (SGD) is otherwise drowned out. Copies share their
            group, so the validation holdout keeps them on one side.
        lives: train (and validate) on each of these life sizes: 1 = the episodes as they are, n > 1 = agent
            lives of n consecutive episodes (sam_model.data.lives), built after the validation holdout so no
            episode is on both sides; [1, 8] trains on single episodes and on lives of 8.
        max_dialogues: cap on SGD dialogues read from each training folder (None = all).
        sgd_every: read one training dialogue in ``sgd_every`` (SGD files are grouped by service: a strided
            sample sees every service, the first N dialogues only a few).
        max_val_dialogues: cap on SGD dialogues read from each validation folder.
        on_error: "raise" on a malformed log line, or "skip" it and report the count.
        num_workers: DataLoader worker processes (0: load batches in the main process).
        seed: seed of the train/val split.
        cache_dir: where converted SGD logs and Arrow files go (default ~/.cache/sam_model).
        chunking: train on the chunks of long memories (sam_model.data.chunks.Chunking, e.g. ``{"size": 180,
            "overlap": 50}`` characters or ``{"tokens": 64, "overlap": 50}``, each chunk's text at most 64 of the
            model's memory tokens, counted by its tokenizer, which the model hands over at setup; null = whole
            memories): a labelled event's positives are its chunks that say a value the decision needed. Set
            ``model.store.chunking`` alike so the export searches chunks.
    """

    def __init__(self, train: list[str], val: list[str] | None = None, val_fraction: float = 0.1,
                 batch_episodes: int = 32, label: str = "origin", masked: bool = True, transcript_split: str = "all",
                 repeat: dict[str, int] | list[int] | None = None, lives: list[int] | None = None,
                 max_dialogues: int | None = None, max_val_dialogues: int | None = None, sgd_every: int = 1,
                 on_error: str = "raise", num_workers: int = 0, seed: int = 0, cache_dir: str | None = None,
                 chunking: dict[str, int] | None = None):
        super().__init__()
        if not train:
            raise ValueError("data.train is empty: give at least one agent log, transcript file or SGD split "
                             "(--data.train '[LOG, ...]')")
        if (twice := given_twice(list(train))) is not None:  # data.repeat reads a source more often, on purpose
            raise ValueError(f"data.train lists {twice} more than once; to read a source more often per epoch, "
                             f"list it once and set data.repeat (e.g. {{{Path(twice.first).name}: 2}})")
        if val and (twice := given_twice(list(val))) is not None:  # was "episode ... already appeared", unnamed
            raise ValueError(f"data.val lists {twice} more than once; list each validation file once")
        if isinstance(val_fraction, bool) or not isinstance(val_fraction, (int, float)) or not (
                0 < val_fraction < 1 or val and val_fraction == 0):  # with data.val given, it is not used
            raise ValueError(f"data.val_fraction must be a share between 0 and 1 (exclusive), got {val_fraction!r}")
        if isinstance(batch_episodes, bool) or not isinstance(batch_episodes, int) or batch_episodes < 1:
            raise ValueError(f"data.batch_episodes must be an integer >= 1, got {batch_episodes!r}")
        check_options(label=label, transcript_split=transcript_split, on_error=on_error, sgd_every=sgd_every,
                      max_dialogues=max_dialogues, max_val_dialogues=max_val_dialogues, seed=seed,
                      num_workers=num_workers, lives=lives)
        self._repeat = repeat_counts(list(train), repeat)  # a bad count, before any data is read
        self.save_hyperparameters()
        self.chunking = Chunking.from_dict(chunking, "data.chunking")
        # the model's memory token count (sam_model.models.text_encoder.TokenCount), for chunks sized in tokens:
        # set by SAMLightningModule.setup, as this module reads no model
        self.count_tokens: CountTokens | None = None
        self.cache_dir = Path(cache_dir) if cache_dir else default_cache_dir()
        self._train = self._val = None
        self.held_episodes: frozenset[str] = frozenset()
        self._said = False  # the split is printed once (setup runs per stage)

    def _load(self, paths: list[str], max_dialogues: int | None, every: int = 1):
        from sam_model.data.hf import episodes_to_dataset

        hp = self.hparams
        options = SourceOptions(label=hp.label, masked=hp.masked, max_items=max_dialogues, every=every,
                                split=hp.transcript_split)
        with spelt_as("sam-train"):  # a reader's advice in data.* options, not sam-data's flags
            files = [materialise(p, options, self.cache_dir, skip_bad=hp.on_error == "skip") for p in paths]
        return episodes_to_dataset([str(f) for f in files], on_error=hp.on_error,
                                   cache_dir=str(self.cache_dir / "arrow"))

    def _ensure(self) -> None:
        if self._train is not None:
            return
        hp = self.hparams
        repeat = self._repeat
        parts = [self._load([p], hp.max_dialogues, hp.sgd_every) for p in hp.train]
        val = self._load(list(hp.val), hp.max_val_dialogues) if hp.val else None
        if (same := same_episode(parts + ([val] if val is not None else []), [*hp.train, "data.val"])) is not None:
            eid, a, b = same
            raise ValueError(f"episode {eid!r} is in both {a} and {b} with the same events: it would train twice, or "
                             "be validated on what it trained on; give each conversation once (data.repeat reads a "
                             "source more often)")
        # Provenance links may point to a kind only if every training source labels it useful: in SGD the
        # result lists that name every option never are, while tool-call transcripts label results most;
        # a mixed model must not make results link targets in dialogues (with one source: its useful kinds).
        kinds = [set(useful_kinds(part)) for part in parts]
        self._source_kinds = sorted(set.intersection(*kinds))
        self._stats = {"sources": [source_stats(path, part) for path, part in zip(hp.train, parts)],
                       **{k: hp[k] for k in ("label", "masked", "transcript_split", "repeat", "lives", "sgd_every",
                                             "max_dialogues", "val_fraction") if hp.get(k) is not None}}
        train = parts[0] if repeat == [1] else datasets.concatenate_datasets(
            [part for part, r in zip(parts, repeat) for _ in range(r)])
        sizes = list(hp.lives or [1])
        if hp.val:
            self._train, self._val = train, val
            rule = f"validation read from data.val ({', '.join(map(str, hp.val))})"
        else:
            if len(train) < 2:
                raise ValueError("need at least 2 episodes to hold out a validation split; pass `val` files")
            self._train, self._val = holdout(train, hp.val_fraction, hp.seed, keep_order=sizes != [1])
            if repeat != [1] * len(repeat):  # copies share their group, so they sit on one side; validate once each
                seen: set[str] = set()
                keep = [i for i, e in enumerate(self._val["episode_id"]) if not (e in seen or seen.add(e))]
                self._val = self._val.select(keep)
            rule = holdout_rule(train, self._val, hp.val_fraction, hp.seed)
        # what setup says of the split (sam_model.training.split_report), counted before lives repeat conversations
        self._split = {"sources": [(path, count(part), r) for path, part, r in zip(hp.train, parts, repeat)],
                       "train": count(self._train), "val": count(self._val), "rule": rule}
        # the card counts conversations, not the rows an epoch reads (a repeated source, lives of n episodes)
        self._episodes = {"train_episodes": len(set(self._train["episode_id"])),
                          "val_episodes": len(set(self._val["episode_id"]))}
        self.held_episodes = frozenset(self._val["episode_id"])  # the conversations validated, before lives join them
        if sizes != [1]:
            self._train, self._val = (concat_lives(ds, sizes) for ds in (self._train, self._val))

    @property
    def vocab(self) -> dict[str, list[str]]:
        """Phases and memory kinds of the training episodes (the model's embedding vocabularies), the
        kinds the labels of every training source call useful (``source_kinds``: where provenance links may
        point), and what was trained on (``data``: sources, their statistics, the options; for the model card)."""
        self._ensure()
        phases = sorted({p for row in self._train["phases"] for p in row})
        kinds = sorted({k for row in self._train["kinds"] for k in row})
        return {"phases": phases, "kinds": kinds, "source_kinds": self._source_kinds,
                "data": {**self._stats, **self._episodes, "train_rows": len(self._train), "val_rows": len(self._val)}}

    def texts(self, content_only: bool = False, observations: Callable[[list[str]], list[str]] | None = None,
              states: Callable[[list[str]], list[str]] | None = None) -> list[str]:
        """Every distinct text the network's BERT reads over the training and validation episodes: the memory texts
        (with ``data.chunking`` their chunks' texts, which the batches hold: the whole texts alone left every chunk
        to BERT in the first epoch's steps, a few at a time; ``content_only``: their plain contents instead, as
        that ablation reads them), the observations of the decision points and their state texts (not for
        ``content_only``), as ``observations`` and ``states`` map them (SAMNet.observations_read and states_read,
        which may clip them). What a frozen BERT encodes in the first epoch, encoded up front instead (all at once,
        batched by token length: SAMLightningModule.on_fit_start)."""
        self._ensure()
        out: dict[str, None] = {}
        obs: dict[str, None] = {}
        state_texts: dict[str, None] = {}
        columns = ["memory_texts", "texts", "kinds", "state_texts", "labels"]
        if self.chunking is not None:  # the memories a batch holds are the chunks (collate_episodes: chunk_row)
            columns += ["steps", "phases", "episode_id"]
        for ds in (self._train, self._val):
            for row in ds.select_columns(columns):
                mem = row if self.chunking is None else chunk_row(row, self.chunking, self.count_tokens)
                out.update(dict.fromkeys([content_text(k, t) for k, t in zip(mem["kinds"], mem["texts"])]
                                         if content_only else mem["memory_texts"]))
                for state, text, labels in zip(row["state_texts"], row["texts"], row["labels"]):
                    if labels:
                        obs[text] = None
                        if not content_only:
                            state_texts[state] = None
        out.update(dict.fromkeys(observations(list(obs)) if observations is not None else obs))
        out.update(dict.fromkeys(states(list(state_texts)) if states is not None else state_texts))
        return list(out)

    def setup(self, stage: str | None = None) -> None:
        self._ensure()
        hp = self.hparams
        train = ", ".join(map(str, hp.train))
        require_decision_points(self._train, "training", train)
        require_decision_points(self._val, "validation", ", ".join(map(str, hp.val)) if hp.val else
                                f"{train} (val_fraction {hp.val_fraction} held out)")
        self._say_split()

    def _say_split(self) -> None:
        """Print what trains and what validates, once and on rank 0 (a fit said nothing of it: 48 conversations
        split 41 / 7 silently), and warn when validation is too small to choose an epoch by."""
        trainer = self.trainer
        if self._said or trainer is not None and not trainer.is_global_zero:
            return
        self._said = True
        s, hp = self._split, self.hparams
        for line in split_lines(s["sources"], s["train"], s["val"], s["rule"], len(self._train), hp.batch_episodes,
                                hp.lives, trainer.world_size if trainer is not None else 1):
            print(line, flush=True)
        if (warning := few_decisions(s["val"], bool(hp.val), hp.val_fraction)) is not None:
            print(warning, file=sys.stderr, flush=True)

    def _epoch(self) -> int:
        return self.trainer.current_epoch if self.trainer is not None else 0

    def _loader(self, ds, shuffle: bool, offset: int) -> DataLoader:
        # The order depends on (seed, epoch) and the loader draws from its own generator, never the global
        # RNG: a run resumed from last.ckpt sees the batches (and dropout) of the uninterrupted run.
        hp = self.hparams
        if self.chunking is not None and self.chunking.tokens is not None and self.count_tokens is None:
            raise ValueError("data.chunking: tokens sizes chunks by the model's tokenizer, which the model gives this "
                             "data module at setup (SAMLightningModule); set count_tokens to its memory encoder's "
                             "token_count(), or chunk by size in characters")
        return DataLoader(_Episodes(ds, offset), batch_size=hp.batch_episodes,
                          sampler=EpochShuffle(len(ds), hp.seed, self._epoch) if shuffle else None,
                          generator=torch.Generator().manual_seed(hp.seed), collate_fn=functools.partial(
                              collate_episodes, chunking=self.chunking, count_tokens=self.count_tokens),
                          num_workers=hp.num_workers, persistent_workers=hp.num_workers > 0)

    def train_dataloader(self) -> DataLoader:
        return self._loader(self._train, True, 0)

    def val_dataloader(self) -> DataLoader:
        return self._loader(self._val, False, len(self._train))
