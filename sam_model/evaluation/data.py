"""What an evaluation reads: the global memory order and the decision points of a log.

Kept apart from the metrics so that every method sees exactly the same memories, the
same queries and the same candidate ranges.
"""

from __future__ import annotations

import dataclasses
import os
import random
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from sam_model.data.advice import spelt, spelt_as
from sam_model.data.chunks import Chunking, CountTokens, chunk_record
from sam_model.data.examples import MemoryRecord, RetrievalExample, Scope, episode_memories, iter_examples
from sam_model.data.reader import Episode, ReadReport, read_episodes
from sam_model.data.schema import LogFormatError
from sam_model.data.sources import SourceOptions, materialise
from sam_model.io import SAMFileError


@dataclass
class EvalData:
    """Memories (global order) and the decision points to query, with their candidate ranges."""

    source: str
    memories: list[MemoryRecord]
    examples: list[RetrievalExample]
    n_decision_points: int  # in the whole log, before --max-queries
    skipped_lines: int = 0
    needed: list[list[str]] | None = None  # per example: the values its tool call needed (transcripts' meta.needed)

    def candidates(self, i: int, scope: Scope) -> range:
        return self.examples[i].candidate_range(scope)


@dataclass
class ChunkedData:
    """What a chunked evaluation searches: ``search`` holds the chunks in the global order (each example's
    candidate range counted in chunks), ``parents[j]`` the position of chunk j's event in the event-level data,
    so a chunk ranking folds back to events (sam_model.data.chunks.fold_positions)."""

    search: EvalData
    parents: list[int]


def chunk_eval_data(data: EvalData, chunking: Chunking, count_tokens: CountTokens | None = None) -> ChunkedData:
    """``data`` with every long memory split into its chunks (short ones stay as they are, so without long
    memories ``search`` holds the same memories and ranges as ``data``). Relevant ids stay the events'.
    ``count_tokens``: the memory encoder's token count, for chunks sized in tokens (``chunking.tokens``)."""
    memories, parents, first = [], [], []
    for pos, rec in enumerate(data.memories):
        first.append(len(memories))
        chunks = chunk_record(rec, chunking, count_tokens)
        memories += chunks
        parents += [pos] * len(chunks)
    first.append(len(memories))
    examples = [dataclasses.replace(ex, episode_start=first[ex.episode_start], cutoff=first[ex.cutoff])
                for ex in data.examples]
    source = f"{data.source} ({chunking.describe()})"
    return ChunkedData(dataclasses.replace(data, source=source, memories=memories, examples=examples), parents)


def load_episodes(path: str | os.PathLike, skip_bad_lines: bool = False,
                  options: SourceOptions = SourceOptions(), progress: bool = True) -> tuple[list[Episode], ReadReport]:
    """Episodes of an agent log (``.jsonl[.gz]``), a tool-call transcript file (or folder of SWE-agent or OpenHands
    trajectories, or a session folder) or an SGD split folder (converted as the trainer converts them,
    sam_model.data.sources), and what the read skipped and saw (ReadReport). ``progress``: a conversion's count on
    stderr (sources.materialise)."""
    try:
        with spelt_as("evaluate"):  # a reader's advice in evaluate.py's flags, not sam-data's
            log = materialise(path, options, skip_bad=skip_bad_lines, progress=progress)
    except SAMFileError as exc:
        from sam_model.data.transcripts import skip_would_help  # only on an error: metrics import this module

        if skip_would_help(exc):  # a bad conversation of a transcript file: the option that skips it, as for a line
            raise SAMFileError(f"{exc} (fix it, or {spelt('skip', 'evaluate')} to skip bad conversations and count "
                               "them)") from None
        raise
    except (FileNotFoundError, ValueError) as exc:
        raise SAMFileError(f"evaluation data {path}: {exc}") from None
    report = ReadReport()
    try:
        episodes = read_episodes(log, on_error="skip" if skip_bad_lines else "raise", report=report)
    except LogFormatError as exc:
        raise SAMFileError(f"bad agent log line {exc} (fix the line, or {spelt('skip', 'evaluate')} to skip bad lines "
                           "and count them)") from None
    except UnicodeDecodeError as exc:
        raise SAMFileError(f"cannot read the agent log {log}: {exc} (is it a .jsonl or .jsonl.gz file?)") from None
    if report.n_skipped:
        print(report.describe())
    return episodes, report


def build_eval_data(source: str, episodes: Iterable[Episode], scope: Scope,
                    max_queries: int | None = None, seed: int = 0, skipped_lines: int = 0) -> EvalData:
    """Memories and examples; with ``max_queries`` a seeded sample of decision points.

    Sampling keeps only the episodes the sample needs (its own episodes for scope
    ``episode``; everything up to the last sampled episode for ``global``), so a quick
    run on a big log also encodes fewer memories.
    """
    episodes = list(episodes)
    examples = list(iter_examples(episodes))
    n_total = len(examples)
    if not examples:
        raise SAMFileError(f"{source} has no decision points (events with a non-empty useful_memory_steps): "
                           "nothing to evaluate; label some events or use a labelled log")
    if max_queries is not None and max_queries < n_total:
        keep = sorted(random.Random(seed).sample(range(n_total), max_queries))
        wanted = {(examples[i].episode_id, examples[i].step) for i in keep}
        wanted_eps = {eid for eid, _ in wanted}
        if scope == "global":
            last = max(i for i, ep in enumerate(episodes) if ep.episode_id in wanted_eps)
            episodes = episodes[: last + 1]
        else:
            episodes = [ep for ep in episodes if ep.episode_id in wanted_eps]
        examples = [ex for ex in iter_examples(episodes) if (ex.episode_id, ex.step) in wanted]
    memories = [m for ep in episodes for m in episode_memories(ep)]
    meta = {(ep.episode_id, e.step): e.meta.get("needed") for ep in episodes for e in ep.events if e.is_decision_point}
    needed = [meta.get((ex.episode_id, ex.step)) for ex in examples]
    values = [sorted({v for vs in n.values() for v in vs}) if isinstance(n, dict) else None for n in needed]
    return EvalData(source, memories, examples, n_total, skipped_lines,
                    values if values and all(v is not None for v in values) else None)


def load_eval_data(path: str | os.PathLike, scope: Scope, max_queries: int | None = None, seed: int = 0,
                   skip_bad_lines: bool = False, options: SourceOptions = SourceOptions(),
                   progress: bool = True) -> EvalData:
    if options.split != "all":  # transcripts alone have the fixed split: elsewhere it was ignored, yet reported
        from sam_model.data import toolworlds
        from sam_model.data.sources import source_kind

        if not toolworlds.is_spec(path) and source_kind(Path(path)) != "transcripts":  # worlds: transcripts
            raise SAMFileError(f"--split {options.split}: {path} is not a tool-call transcript file, which alone has "
                               "the fixed split by task group; hold decisions out by file (or --max-queries), and "
                               "leave --split at all")
    episodes, report = load_episodes(path, skip_bad_lines, options, progress)
    if scope == "global" and report.interleaved:
        raise SAMFileError(f"--scope global: {report.interleaved}; global candidates follow the episodes' order, so "
                           "a decision there would see lines written after it: sort the log by episode (each "
                           "episode's lines together, episodes in the order they began) or use --scope episode")
    skipped = report.n_skipped
    source = str(path) + (f" (split {options.split})" if options.split != "all" else "") + \
        (f" (lives of {options.life})" if options.life > 1 else "")
    return build_eval_data(source, episodes, scope, max_queries, seed, skipped)
