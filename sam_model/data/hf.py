"""Agent logs as Hugging Face ``datasets.Dataset`` tables, for training.

Both converters feed ``Dataset.from_generator`` from the streaming reader, so a log
larger than memory is written to Arrow on disk episode by episode; the result is
memory-mapped, not loaded. Nothing here touches the network, so it works with
``HF_DATASETS_OFFLINE=1``. The cache goes to ``cache_dir`` or the ``datasets``
default (``HF_DATASETS_CACHE``); its key is the files' path, size and modification
time, so an edited log is converted again instead of being served stale.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import datasets

from sam_model.data.examples import episode_row, iter_examples
from sam_model.data.reader import OnError, ReadReport, iter_episodes
from sam_model.data.schema import LogFormatError, State
from sam_model.io import SAMFileError, atomic_write_text, not_found

log = logging.getLogger(__name__)

FORMAT_VERSION = 4  # bump when the rows change, so old caches are not reused

_str, _int = datasets.Value("string"), datasets.Value("int64")
EPISODE_FEATURES = datasets.Features(
    {
        "episode_id": _str,
        "group": _str,  # episodes of one group (a task's trials) go to one side of a train/validation split
        "steps": [_int],
        "kinds": [_str],
        "texts": [_str],
        "phases": [_str],
        "memory_texts": [_str],  # examples.episode_memories(ep)[i].text: what the memory encoder reads
        "state_texts": [_str],  # text.state_to_text(event.state): what the state encoder reads
        "state_json": [_str],  # the state as a JSON object (extra fields included), for re-parsing
        "labels": [[_int]],  # useful_memory_steps per event; [] for non-decision points
        "task_starts": [_int],  # step where each event's task began (sam_model.data.lives.task_starts)
        "needed": [[_str]],  # per event: the values its tool call needed (meta.needed), [] elsewhere
    }
)
EXAMPLE_FEATURES = datasets.Features(
    {
        "episode_id": _str,
        "step": _int,
        "observation": _str,
        "state_text": _str,
        "state_json": _str,
        "episode_start": _int,  # candidates: positions [episode_start, cutoff) (episode scope)
        "cutoff": _int,  # or [0, cutoff) (global scope) of the memory order of all episodes
        "relevant_steps": [_int],
        "relevant_positions": [_int],
        "relevant_ids": [_str],
    }
)


def state_json(state: State) -> str:
    """The state as a JSON string; ``State.from_json(json.loads(s))`` gives it back."""
    return json.dumps({**state.extra, **state.to_json()}, ensure_ascii=False)


def episode_group(episode) -> str:
    """``meta.group`` of the episode's first event (the transcript importer writes the task there), else the
    episode id: episodes that share a group share their user and values, so a split must keep them together."""
    group = episode.events[0].meta.get("group") if episode.events else None
    return str(group) if group not in (None, "") else episode.episode_id


def _episode_rows(paths: tuple[str, ...], on_error: OnError) -> Iterator[dict[str, Any]]:
    report = ReadReport()
    for ep in iter_episodes(paths, on_error, report):
        yield {**episode_row(ep), "group": episode_group(ep), "state_json": [state_json(e.state) for e in ep.events]}
    _warn_skipped(report)


def _example_rows(paths: tuple[str, ...], on_error: OnError) -> Iterator[dict[str, Any]]:
    report = ReadReport()
    offset = 0  # position of the episode's first event in the memory order of all episodes
    for ep in iter_episodes(paths, on_error, report):
        index = {e.step: i for i, e in enumerate(ep.events)}
        for ex in iter_examples([ep]):  # positions relative to this episode
            steps = list(ep.events[ex.cutoff].useful_memory_steps or ())
            yield {
                "episode_id": ex.episode_id,
                "step": ex.step,
                "observation": ex.observation,
                "state_text": ex.state_text,
                "state_json": state_json(ex.state),
                "episode_start": offset + ex.episode_start,
                "cutoff": offset + ex.cutoff,
                "relevant_steps": steps,
                "relevant_positions": [offset + index[s] for s in steps],
                "relevant_ids": sorted(ex.relevant_ids),
            }
        offset += len(ep.events)
    _warn_skipped(report)


# Reports of the conversions run in this process, newest last: _build takes the one its generator made
# (datasets runs the generator in this process) and keeps it beside the Arrow cache, so that a warm cache,
# which never runs the generator, still reports what the conversion skipped.
_RECORDED: list[ReadReport] = []


def _warn_skipped(report: ReadReport) -> None:
    _RECORDED.append(report)
    if report.skipped:
        log.warning("agent log conversion: %s", report.describe())
    for line in report.undefined_warnings():
        log.warning("warning: %s", line)


def episodes_to_dataset(
    paths: str | os.PathLike | Iterable[str | os.PathLike],
    on_error: OnError = "raise",
    cache_dir: str | os.PathLike | None = None,
    report: ReadReport | None = None,
) -> datasets.Dataset:
    """One row per episode (columns: see ``EPISODE_FEATURES``), episodes in file order.

    ``report`` receives what ``on_error="skip"`` skipped, also when the rows come from the cache."""
    return _build(_episode_rows, EPISODE_FEATURES, "episodes", paths, on_error, cache_dir, report)


def examples_to_dataset(
    paths: str | os.PathLike | Iterable[str | os.PathLike],
    on_error: OnError = "raise",
    cache_dir: str | os.PathLike | None = None,
    report: ReadReport | None = None,
) -> datasets.Dataset:
    """One row per decision point (columns: see ``EXAMPLE_FEATURES``).

    Positions count events in the memory order of all episodes of ``paths`` (the
    concatenation of the ``memory_texts`` of :func:`episodes_to_dataset`), as in
    :class:`sam_model.data.examples.RetrievalExample`.
    """
    return _build(_example_rows, EXAMPLE_FEATURES, "examples", paths, on_error, cache_dir, report)


def _build(
    rows: Callable[..., Iterator[dict[str, Any]]],
    features: datasets.Features,
    name: str,
    paths: str | os.PathLike | Iterable[str | os.PathLike],
    on_error: OnError,
    cache_dir: str | os.PathLike | None,
    report: ReadReport | None = None,
) -> datasets.Dataset:
    if on_error not in ("raise", "skip"):
        raise ValueError(f"on_error must be 'raise' or 'skip', got {on_error!r}")
    files = _existing_files(paths)
    fingerprint = _fingerprint(name, files, on_error)
    seen = len(_RECORDED)
    try:
        ds = datasets.Dataset.from_generator(
            rows,
            features=features,
            cache_dir=None if cache_dir is None else str(cache_dir),
            # a tuple, not a list: datasets would shard a list and break the cross-file order
            gen_kwargs={"paths": tuple(str(p) for p in files), "on_error": on_error},
            fingerprint=fingerprint,
        )
    except datasets.exceptions.DatasetGenerationError as exc:
        cause = exc.__cause__ or exc.__context__
        if isinstance(cause, (ValueError, OSError)):  # bad input (LogFormatError, SAMFileError: a .gz name and
            raise cause from None  # bytes that disagree, ...): the user needs FILE:LINE: reason, not a wrapper
        raise
    except ValueError as exc:
        if "corresponds to no data" not in str(exc):
            raise
        skipped = " (every line was skipped as malformed)" if on_error == "skip" else ""
        raise SAMFileError(f"{', '.join(str(p) for p in files)}: no events{skipped}; the log is empty — give an "
                           "agent log with episodes (python -m sam_model.data.validate checks one)") from None
    fresh, _RECORDED[seen:] = _RECORDED[seen:], []
    got = _skip_report(fresh[-1] if fresh else None, files, fingerprint, cache_dir)  # also says undefined fields
    if on_error == "skip":
        if report is not None:
            report.lines, report.events = report.lines + got.lines, report.events + got.events
            report.skipped.extend(got.skipped)
    return ds


def _skip_report(fresh: ReadReport | None, files: list[Path], fingerprint: str,
                 cache_dir: str | os.PathLike | None) -> ReadReport:
    """What the conversion skipped: kept beside the Arrow cache by the run that converted, and read (and
    reported again) by the runs that find the cache warm; re-scanned if the cache predates the record."""
    folder = Path(cache_dir) if cache_dir is not None else Path(datasets.config.HF_DATASETS_CACHE)
    path = folder / "sam_model_skips" / f"{fingerprint}.json"
    if fresh is None:
        try:
            d = json.loads(path.read_text(encoding="utf-8"))
            recorded = ReadReport(d["lines"], d["events"], [LogFormatError(*e) for e in d["skipped"]],
                                  undefined=d["undefined"])
        except (OSError, ValueError, KeyError, TypeError):
            recorded = None
        fresh = recorded or ReadReport()
        if recorded is None:
            for _ in iter_episodes([str(p) for p in files], "skip", fresh):
                pass
        _warn_skipped(fresh)
        _RECORDED.pop()
        if recorded is not None:
            return fresh
    atomic_write_text(path, json.dumps({"lines": fresh.lines, "events": fresh.events, "undefined": fresh.undefined,
                                        "skipped": [[e.source, e.line, e.reason] for e in fresh.skipped]}))
    return fresh


def _existing_files(paths: str | os.PathLike | Iterable[str | os.PathLike]) -> list[Path]:
    files = [Path(paths)] if isinstance(paths, (str, os.PathLike)) else [Path(p) for p in paths]
    if not files:
        raise ValueError("no agent logs given")
    for p in files:
        if not p.is_file():
            raise FileNotFoundError(f"agent log {'is a folder' if p.is_dir() else not_found(p)}: {p} (give the path "
                                    "of a .jsonl or .jsonl.gz file)")
    return files


def _fingerprint(name: str, files: list[Path], on_error: str) -> str:
    """Cache key: what is converted, how, and which version of each file."""
    key = [FORMAT_VERSION, name, on_error]
    for p in files:
        st = p.stat()
        key.append([str(p.resolve()), st.st_size, st.st_mtime_ns])
    return hashlib.sha256(json.dumps(key).encode()).hexdigest()[:32]
