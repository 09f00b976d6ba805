"""Where agent-log events added to a scope with steps of their own are stored, and what their labels then name.

One memory serving task after task (an agent's event file of several episodes, or add after add of new episodes)
gets episodes whose steps each start again at 0. They are stored as evaluate.py's life of them is
(sam_model.data.lives.make_lives): each episode after the scope's last step (its own step + the offset, the
scope's next step where it began), its labels shifted with it, so each still names the event it named, and each
episode a task of its own (``meta.source_episode`` set to a key of the episode, what MemoryRecorder and
sam_model.data.lives.task_starts read as a new task; an event that carries one keeps its own). An event continues
the scope's current episode (:class:`Numbering`) when it has that episode's id and a later step that still lies
past the scope's newest memory; one whose step is 0 (starting again, or another id's first) begins a new one. The
first events of a scope (or of one saved before numberings were kept) keep their steps where they lie past its
newest memory, as before. An add's events are taken as evaluate.py reads them as an event file
(:func:`in_file_order`: each id's together, the current episode's first where they go on with it, by step unless
only the order given tells an episode's end from the next one's start). Any other event (the episode's own step
again or back: an event re-added after its memory was deleted, a batch sent again, a later batch going back; or
another id's not from 0: two sessions' events interleaved in one scope, add by add) is numbered on as before
2026-12-06, in the same task, and its labels and those of the events continuing it are dropped where the step moved
(they name another numbering than the stored one). A new task there split one episode in two and moved the re-added memory's id past a gap; two interleaved
sessions made a task of every event, each stored past a gap of its own step (steps growing as the square of the
events).

A step of 0 under the current episode's own id begins a new task too: events added without an id take the scope's,
so a logger restarting an episode at 0 cannot be told from the next episode; evaluate.py has no reading of it to
match (its reader refuses a file repeating an episode's step as a duplicate), and a life of the two is the one
that loses nothing.

Until 2026-12-06 an episode whose steps restarted was numbered on with its labels dropped, so its decisions' uses
(sam_model.memory.scopeduses) were missing while the earlier episode's carried on, and its task never began.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from sam_model.data.lives import SOURCE_KEY
from sam_model.data.schema import Event


@dataclasses.dataclass(frozen=True)
class Numbering:
    """The agent-log episode a scope is being given: its own id, its last step given, the offset its steps are
    stored at, the task key set on its events (None: the events' own meta kept, the scope's first episode), and
    whether their labels name the stored numbering (False: numbered on, the labels dropped)."""

    episode: str
    last: int
    offset: int
    task: str | None
    known: bool = True

    def to_json(self) -> list:
        return [self.episode, self.last, self.offset, self.task] + ([] if self.known else [False])

    @classmethod
    def from_json(cls, d: Any, where: str) -> Numbering:
        """A :meth:`to_json` list (scoped.json's ``numbering``), checked: ValueError naming ``where``."""
        ok = lambda x: isinstance(x, int) and not isinstance(x, bool) and x >= 0  # noqa: E731
        if not (isinstance(d, list) and len(d) in (4, 5) and isinstance(d[0], str) and ok(d[1]) and ok(d[2])
                and (d[3] is None or isinstance(d[3], str)) and (len(d) == 4 or d[4] is False)):
            raise ValueError(f"{where} must be [episode, last step, offset, task key or null] (and false where the "
                             "labels were dropped), steps non-negative integers")
        return cls(*d)


def in_file_order(events: Sequence[Event], numbering: Numbering | None = None) -> list[int]:
    """The places of ``events`` in the order evaluate.py reads them as an event file (sam_model.data.reader
    iter_episodes): each episode id's events together, the ids in the order they first appear (the scope's current
    episode first where all its events here go on with it: its earlier events began the file), each id's by step
    unless the order given alone tells its episodes apart: where they are one run of steps (each once, none missing
    between its first and last) that does not begin by going on with the scope's current episode (``numbering``:
    its id, from the step after its last), and where they hold no step 0 given after a higher step and do not go
    back in the current episode (a continuation with a gap or out of order, [5, 3] or [3, 5, 4] after its step 2:
    the file's one episode). Else the id's in the order given (a step of 0 begins the next episode): its steps
    repeated (episodes after episodes under one id, an add of several tasks whose events carry no id of their own,
    which the reader refuses as a duplicate step: the whole batch in the order given), a gap before a step 0
    ([7, 8, 0, 1, 2]: an episode's end, then the next one's start), or the current episode going on, then back
    ([3, 4, 0, 1] after its step 2). Until 2026-12-06 a batch going on with the current episode in another order
    than its steps' ([3, 5, 4], [5, 3]) or after another id's events was numbered on, its labels dropped (or naming
    a step stored elsewhere: a first batch [7, 5])."""
    by_id: dict[str, list[int]] = {}
    for j, e in enumerate(events):
        by_id.setdefault(e.episode_id, []).append(j)
    if any(len({events[j].step for j in js}) < len(js) for js in by_id.values()):
        return list(range(len(events)))
    cur, last = (numbering.episode, numbering.last) if numbering is not None else (None, -1)
    if cur in by_id and min(events[j].step for j in by_id[cur]) > last:
        by_id = {cur: by_id.pop(cur), **by_id}  # its episode began the file, before this batch's other ids
    out = []
    for eid, js in by_id.items():
        steps = sorted(events[j].step for j in js)
        goes_on = eid == cur and events[js[0]].step == last + 1
        back = eid == cur and steps[0] <= last
        run = steps[-1] - steps[0] == len(steps) - 1
        out += sorted(js, key=lambda j: events[j].step) if (run and not goes_on) or not (back or _restarts(
            [events[j].step for j in js])) else js
    return out


def _restarts(steps: list[int]) -> bool:
    """Whether a step 0 comes after a higher step in ``steps`` (given order): a new episode only the order tells."""
    high = -1
    for s in steps:
        if s == 0 and high > 0:
            return True
        high = max(high, s)
    return False


def place(events: Sequence[Event], episode: str, nxt: int, numbering: Numbering | None
          ) -> tuple[list[Event], dict[int, tuple[int, ...]], Numbering | None]:
    """(``events`` as stored in the scope's ``episode``, in the order given, the labels of its decision points by
    stored step in the stored numbering, the numbering after them). ``nxt``: the scope's next free step;
    ``numbering``: its current episode's (None: none known). The events are numbered in :func:`in_file_order`
    (until 2026-12-06 in the order given: a first batch [2, 0, 1, 3] was stored at 2, 3, 4, 6, two tasks, where
    evaluate.py reads one episode at 0..3)."""
    order = in_file_order(events, numbering)
    out: list[Event | None] = [None] * len(events)
    labels = {}
    for j in order:
        e = events[j]
        cur = numbering
        if cur is not None and e.episode_id == cur.episode and e.step > cur.last and e.step + cur.offset >= nxt:
            numbering = dataclasses.replace(cur, last=e.step)
        elif cur is None and e.step >= nxt:  # the scope's first events: their own steps, as before
            numbering = Numbering(e.episode_id, e.step, 0, None)
        elif e.step != 0:  # a step again or back, or another id's not from 0: numbered on, in the same task
            numbering = Numbering(e.episode_id, e.step, nxt - e.step, None if cur is None else cur.task, nxt == e.step)
        else:  # a new episode (its steps restarted at 0): after the scope's last step, a task of its own
            numbering = Numbering(e.episode_id, e.step, nxt, f"{e.episode_id}@{nxt}")
        step = e.step + numbering.offset
        meta = e.meta
        if numbering.task is not None and SOURCE_KEY not in (meta or {}):
            meta = {**(meta or {}), SOURCE_KEY: numbering.task}
        out[j] = dataclasses.replace(e, episode_id=episode, step=step, meta=meta)
        if e.useful_memory_steps and numbering.known:
            labels[step] = tuple(int(x) + numbering.offset for x in e.useful_memory_steps)
        nxt = step + 1
    return out, labels, numbering  # type: ignore[return-value]


__all__ = ["Numbering", "in_file_order", "place"]
