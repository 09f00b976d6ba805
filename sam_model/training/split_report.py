"""What a training run reads and how it was split, said in one line at setup.

A fit said nothing of its data: 48 conversations went 41 / 7 to training and validation, and an epoch was 3
batches, without a word, so a user could not tell that the validation MRR that picks the best epoch (and stops
training early) rested on a few dozen decisions. The data module prints these lines once, on rank 0 (stdout,
flushed, so they reach a log file too), and warns in one line on stderr when validation is that small.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

# Below this many validation decisions, one decision ranked 2nd instead of 1st moves val/mrr by more than 0.01
# (0.5 / n): about what one epoch gains late in a run, so the epoch kept is partly chance.
MIN_VAL_DECISIONS = 50


@dataclass(frozen=True)
class Counts:
    """Distinct conversations of a split (a repeated source or a life counts each once), their decision points
    (events with labels) and memories (events)."""

    conversations: int = 0
    decisions: int = 0
    memories: int = 0

    def __str__(self) -> str:
        return f"{self.conversations} conversations, {self.decisions} decision points, {self.memories} memories"


def count(episodes) -> Counts:
    """Counts over the rows of ``episodes`` (sam_model.data.hf.EPISODE_FEATURES), each episode id once."""
    seen: set[str] = set()
    decisions = memories = 0
    for row in episodes.select_columns(["episode_id", "labels"]):
        if row["episode_id"] in seen:
            continue
        seen.add(row["episode_id"])
        decisions += sum(1 for labels in row["labels"] if labels)
        memories += len(row["labels"])
    return Counts(len(seen), decisions, memories)


def holdout_rule(train, val, fraction: float, seed: int) -> str:
    """How ``val`` was held out of ``train`` (the rows before the holdout): by group when conversations share one
    (a task's trials, the lines' ``group``), else by conversation."""
    conversations, groups = len(set(train["episode_id"])), len(set(train["group"]))
    if groups < conversations:
        return (f"val_fraction {fraction} held out by group ({len(set(val['group']))} of {groups} groups, "
                f"seed {seed})")
    return f"val_fraction {fraction} held out by conversation (seed {seed})"


def name(path: str) -> str:
    """A source as the user knows it: its file or folder name."""
    return Path(str(path).rstrip("/")).name or str(path)


def names(paths: list[str]) -> list[str]:
    """Each source's :func:`name`, with as many of its folders as tell it apart from the others' (``openai/chats.jsonl``
    beside ``anthropic/chats.jsonl``): the same name on several lines left which counts were whose to guess."""
    parts = [Path(str(p).rstrip("/")).resolve().parts for p in paths]

    def tail(i: int, k: int) -> str:
        return "/".join(parts[i][-k:])

    out = []
    for i, path in enumerate(paths):
        k = 1
        while k < len(parts[i]) and any(tail(j, k) == tail(i, k) for j in range(len(paths)) if j != i):
            k += 1
        out.append(name(path) if k == 1 else tail(i, k))
    return out


def split_lines(sources: list[tuple[str, Counts, int]], train: Counts, val: Counts, rule: str, rows: int,
                batch_episodes: int, lives: list[int] | None = None, processes: int = 1) -> list[str]:
    """The lines printed at setup: one per source where there are several, then the split and an epoch's
    batches. ``sources``: (path, counts, reads an epoch); ``rows``: the training rows an epoch reads (repeated
    sources and ``lives`` of n conversations included), over ``processes``."""
    shown = dict(zip([path for path, *_ in sources], names([path for path, *_ in sources])))

    def source(path: str, counts: Counts, reads: int) -> str:
        return f"{shown[path]}: {counts}" + (f" (read {reads} times an epoch)" if reads > 1 else "")

    batches = math.ceil(rows / (batch_episodes * max(processes, 1)))
    extra = [f"lives of {', '.join(str(n) for n in lives if n > 1)}"] if any(n > 1 for n in lives or []) else []
    extra += ["repeated sources"] if any(reads > 1 for *_, reads in sources) else []
    split = (f"training {train.conversations} conversations ({train.decisions} decision points), validation "
             f"{val.conversations} conversations ({val.decisions} decision points): {rule}; an epoch is "
             f"{batches} batch{'es' if batches != 1 else ''} of {batch_episodes}"
             + (f" per process ({processes})" if processes > 1 else "")
             + (f" ({rows} rows with the {' and '.join(extra)})" if extra else ""))
    if len(sources) == 1:
        return [f"data: {source(*sources[0])} -> {split}"]
    return [f"data: {source(*s)}" for s in sources] + [f"data: {split}"]


def few_decisions(val: Counts, given: bool, fraction: float) -> str | None:
    """One warning line when validation holds fewer than MIN_VAL_DECISIONS decision points, else None."""
    n = val.decisions
    if n >= MIN_VAL_DECISIONS:
        return None
    more = ("more conversations in data.val" if given else
            f"more logs, a validation file (--data.val '[LOG]') or a larger --data.val_fraction (now {fraction})")
    return (f"warning: validation holds only {n} decision points ({val.conversations} conversations): val/mrr, "
            f"which picks best-epoch=NN.ckpt and stops training early, moves by {0.5 / max(n, 1):.3f} when one of "
            f"them ranks 2nd instead of 1st, so the epoch kept is partly chance; give {more} "
            f"({MIN_VAL_DECISIONS} or more decision points)")
