"""Agent lives: N consecutive episodes concatenated into one, the long-horizon case.

An agent that serves task after task keeps one memory. A decision of its current task then has as
candidates every earlier event of the life, most of them from earlier tasks whose states look much the same
(the same service, the same slots). A life of ``n`` makes that case out of any log, without new labels:

- episode ids ``life{n}-00000``, ``life{n}-00001``, … (:func:`life_id`; one per ``n`` consecutive episodes, in
  order; the last life may be shorter);
- steps shifted by the length (last step + 1) of the episodes before it in the life, labels shifted with
  them, so every label still names the same event;
- ``meta.source_episode`` = the episode the event came from, which is also how the current task is known
  (:func:`task_starts`).

One builder for every form lives are made in: :func:`make_lives` over event dicts (the converters, the
benchmarks), :func:`concat_rows` over the training rows (sam_model.training.datamodule.concat_lives), with the
same ids and the same shifts.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

SOURCE_KEY = "source_episode"
USER_KIND = "user"  # the event kind whose first event of a task states it (task_openings)


def life_id(n: int, index: int) -> str:
    """The episode id of the ``index``-th life of ``n`` episodes; ``n`` is in it, so lives of several sizes side
    by side (training's ``data.lives: [1, 8, 16]``) never share an id."""
    return f"life{n}-{index:05d}"


def make_lives(events: Iterable[dict[str, Any]], n: int) -> Iterator[dict[str, Any]]:
    """Event dicts of lives of ``n`` consecutive episodes; ``events`` come episode after episode (as the
    converters and :func:`sam_model.data.reader.iter_episodes` give them). ``n == 1`` gives them unchanged."""
    if n < 1:
        raise ValueError(f"a life holds at least one episode, got {n}")
    if n == 1:
        yield from events
        return
    life, in_life, offset, length = -1, n, 0, 0
    current = None
    for e in events:
        if e["episode_id"] != current:
            current = e["episode_id"]
            offset += length
            length = 0
            in_life += 1
            if in_life >= n:
                life, in_life, offset = life + 1, 0, 0
        length = max(length, e["step"] + 1)
        out = {**e, "episode_id": life_id(n, life), "step": e["step"] + offset,
               "meta": {**(e.get("meta") or {}), SOURCE_KEY: e["episode_id"]}}
        if e.get("useful_memory_steps") is not None:
            out["useful_memory_steps"] = [s + offset for s in e["useful_memory_steps"]]
        yield out


def concat_rows(rows: Sequence[Mapping[str, Any]], n: int, index: int) -> dict[str, Any]:
    """The training rows (sam_model.data.examples.episode_row, with ``group``) of ``n`` consecutive episodes as
    the row of life ``life_id(n, index)``: lists concatenated, steps, labels and task starts shifted by the
    length (last step + 1) of the episodes before, as :func:`make_lives` does to events."""
    out: dict[str, Any] = {k: [] for k in rows[0] if k not in ("episode_id", "group")}
    offset = 0
    for r in rows:
        for k in out:
            vals = r[k]
            if k in ("steps", "task_starts"):
                vals = [v + offset for v in vals]
            elif k == "labels":
                vals = [[v + offset for v in x] for x in vals]
            out[k] += vals
        offset += max(r["steps"]) + 1 if r["steps"] else 0
    name = life_id(n, index)
    return {"episode_id": name, "group": name, **out}


def task_starts(events) -> list[int | None]:
    """For each event of an episode (in step order), the step where its task began: the first step of its
    ``meta.source_episode`` within a life, the episode's first step otherwise. None where events carry no
    steps. ``events`` are :class:`sam_model.data.schema.Event` objects."""
    out: list[int | None] = []
    start, source = None, object()
    for e in events:
        src = e.meta.get(SOURCE_KEY) if e.meta else None
        if start is None or src != source:
            start, source = e.step, src
        out.append(start)
    return out


def task_openings(kinds: Sequence[str], starts: Sequence[int | None]) -> list[bool]:
    """For each event of an episode (in step order; ``kinds`` and :func:`task_starts`), whether it is the first
    event of kind ``user`` of its task: the memory-side flag of sam_model.models.opening, as MemoryRecorder sets
    MemoryRecord.opens_task event by event. A task is a run of events with one start."""
    out, opened, current = [], False, object()
    for kind, start in zip(kinds, starts, strict=True):
        if start != current:
            current, opened = start, False
        opens = kind == USER_KIND and not opened
        opened = opened or opens
        out.append(opens)
    return out
