"""Which memories the task's earlier decisions already used: a causal signal the episode itself gives.

A decision point's labels (``useful_memory_steps``) trace each argument value of its tool call back to the event
that first said it. Once that call is made, its labels are known: at a later decision of the same task, a memory
that already supplied a value is likely to supply again (an issue statement supplies many calls, a message giving
a user id one). So at decision t, u_m = 1 for a memory that was a label of an earlier decision point of t's task
(an event before t's own, with t's task start), else 0: never from t's own labels or a later decision's. In a log
the earlier labels are read off the events; live they are the calls the agent already made. The task start is what
bounds them: an agent that does not say where its task began (evaluate.py --task-start unknown) has the uses of
its whole episode, so the examples keep those (``starts`` None) and the ranking keeps the task's
(sam_model.evaluation.ranking.used_memories: a latest use at or after the task start, :func:`task_uses`). Used by
the ``used-first`` baseline (sam_model.evaluation.ranking.rank_used_first), the ``reuse`` part of the model
(sam_model.models.reuse, its recency part by :func:`use_ranks`), the search-time ordering :func:`used_first` (a store search's ``used_order``, evaluate's ``NAME+used``) and the live path,
which reads a scope's own conversation's labels with the same two functions (sam_model.memory.scopeduses: one rule
for what is benchmarked and what is deployed).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Collection, Hashable, Iterator, Mapping, Sequence
from functools import lru_cache
from typing import TypeVar

T = TypeVar("T", bound=Hashable)
Uses = tuple[tuple[int, int], ...]  # (memory step, step of the latest earlier decision it was a label of)
# (memory step, ((slot, step of the latest earlier decision that needed the slot and was labelled by it), ...))
Supplies = tuple[tuple[int, tuple[tuple[str, int], ...]], ...]
ANY_SLOT = "*"  # a use whose decision's needed slots are not known (none said, or a save from before they were kept)


def earlier_uses(steps: Sequence[int], labels: Sequence[Sequence[int]],
                 starts: Sequence[int | None] | None = None) -> list[Uses]:
    """Per event of an episode (in step order, ``labels`` [] off decision points, ``starts`` as
    sam_model.data.lives.task_starts, None: the episode is one task): the memories the earlier decision points of
    its task labelled, each with the step of its latest use, sorted by memory step. An event's own labels and later
    ones never count."""
    return [tuple(sorted(last.items())) for last in running_uses(steps, labels, starts)]


def running_uses(steps: Sequence[int], labels: Sequence[Sequence[int]],
                 starts: Sequence[int | None] | None = None) -> Iterator[dict[int, int]]:
    """:func:`earlier_uses`' rule, event by event: before each event's own labels count, the memory step -> latest
    use of its task's earlier decisions (one dict, changed after it is yielded: read it before the next). For a
    caller that needs one event's uses (a live search's, sam_model.memory.scopeduses): taking :func:`earlier_uses`'
    last made every search copy and sort the uses of every event before it, quadratic in the session (1,000 events:
    0.34 s a search; 10,000: 13 s)."""
    if starts is None:
        starts = [None] * len(steps)
    last: dict[int, int] = {}
    current: object = object()
    for step, labs, start in zip(steps, labels, starts, strict=True):
        if start != current:  # a new task: what the earlier task used says nothing here
            current, last = start, {}
        yield last
        for m in labs:  # after this event's own entry: it counts from the next decision on
            last[int(m)] = step


@lru_cache(maxsize=4096)
def slot_name(path: str) -> str:
    """The slot a needed path names: its last word, lower-cased, list indices dropped ("flights[0].flight_number"
    and "flights.0.flight_number" -> "flight_number"), so that the same kind of value is one slot in every call.
    Cached: every search of a store ordered "needed" reads the slots of its scope's every decision again (split
    anew, a 16,000-event session's search took ~0.2 s, six times its uses')."""
    words = [w for w in re.split(r"[.\[\]]", path) if w and not w.isdigit()]
    return (words[-1] if words else path).lower()


def earlier_supplies(steps: Sequence[int], labels: Sequence[Sequence[int]],
                     needs: Sequence[Collection[str] | None]) -> list[Supplies]:
    """Per event of an episode (as :func:`earlier_uses`; ``needs``: each decision point's needed paths, its state's
    ``uncertainty_flags``; None or empty where they are not known: a decision of an unmasked log says none): for
    each memory the earlier decision points labelled, the slots (:func:`slot_name`) those decisions needed, each
    with the step of the latest such decision. Why: a used
    memory supplied values of those slots, so a call that needs one of them again is likely to take it from there,
    and a call that needs none of them (a task turned to a new request) is not (README "The used ordering narrowed
    to the call's needed slots"). An event's own labels and later ones never count; filtered to a task by
    :func:`task_supplies`."""
    out: list[Supplies] = []
    for last in running_supplies(steps, labels, needs):
        out.append(tuple(sorted((m, tuple(sorted(slots.items()))) for m, slots in last.items())))
    return out


def running_supplies(steps: Sequence[int], labels: Sequence[Sequence[int]],
                     needs: Sequence[Collection[str] | None]) -> Iterator[dict[int, dict[str, int]]]:
    """:func:`earlier_supplies`' rule, event by event (one dict, changed after it is yielded: read it before the
    next), as :func:`running_uses` is to :func:`earlier_uses`; the whole episode (the task by :func:`task_supplies`)."""
    last: dict[int, dict[str, int]] = {}
    for step, labs, need in zip(steps, labels, needs, strict=True):
        yield last
        slots = {slot_name(str(p)) for p in need} if need else (ANY_SLOT,)  # none said: not known
        for m in labs:
            mine = last.setdefault(int(m), {})
            for slot in slots:
                mine[slot] = step


def task_supplies(supplies: Supplies | Mapping[int, Mapping[str, int]],
                  task_start: int | None) -> dict[int, frozenset[str]]:
    """``supplies`` (:func:`earlier_supplies`' or :func:`running_supplies`') of the task that began at
    ``task_start``: memory step -> the slots decisions at or after it needed (None: every decision's, as
    :func:`task_uses`)."""
    items = supplies.items() if isinstance(supplies, Mapping) else supplies
    out = {}
    for m, slots in items:
        pairs = slots.items() if isinstance(slots, Mapping) else slots
        kept = frozenset(s for s, at in pairs if task_start is None or at >= task_start)
        if kept:
            out[m] = kept
    return out


def needed_used(used: Mapping[T, int], supplied: Mapping[T, Collection[str]], needs: Collection[str]) -> dict[T, int]:
    """The used memories (``used``: each one's rank of its latest use, :func:`use_ranks`) that supplied a slot the
    call needs (``supplied``: each one's slots, :func:`task_supplies`; ``needs``: the call's needed paths), with
    their ranks, kept as given: the store's used_order "needed" puts these first by them, the task's other used
    memories in the model's order with the rest. A use whose slots are not known (:data:`ANY_SLOT`) counts as
    supplying any slot (as "latest" lifts it)."""
    want = {slot_name(str(p)) for p in needs}
    return {m: k for m, k in used.items()
            if (slots := supplied.get(m)) and (ANY_SLOT in slots or want.intersection(slots))}


def task_uses(uses: Uses, task_start: int | None) -> dict[int, int]:
    """``uses`` (one event's, :func:`earlier_uses`, or the items of :func:`running_uses`') of its task: memory step -> latest use, the uses at or after
    ``task_start`` (a memory an earlier task used and this one used again counts); None, the task start unknown
    (evaluate.py --task-start unknown): every use, as the episode's."""
    return {m: s for m, s in uses if task_start is None or s >= task_start}


def use_ranks(latest: Mapping[T, int]) -> dict[T, int]:
    """Each used memory's rank k by its latest use (``latest``: memory -> step of its latest use, as
    :func:`task_uses` gives): k = 1 + how many of the task's used memories were used later, so the memories the
    task's most recent earlier call took values from have k = 1, and the memories one call used share a rank (as
    ranks of ties do: 1, 1, 3). The one rule of the recency part r_m = 1/k (:func:`recency`,
    sam_model.models.reuse) for training (sam_model.training.batching), evaluate's replay and a live search
    (sam_model.memory.scopeduses): the ranks are of memories (events), so a chunked event counts once."""
    newest_first = sorted(-s for s in latest.values())
    return {m: 1 + bisect_left(newest_first, -s) for m, s in latest.items()}


def recency(rank: int) -> float:
    """r_m = 1/k for a used memory of rank ``k`` (:func:`use_ranks`); an unused memory has r_m = 0."""
    return 1.0 / rank


USED_ORDERS = ("model", "latest", "needed")  # a search's used_order (MemoryStore.search, StoreConfig.used_order)


def used_first(ranked: Sequence[T], used: Collection[T], ranks: Mapping[T, int] | None = None) -> list[T]:
    """``ranked`` (a model's ranking, best first) with the items in ``used`` moved to the front, the rest in the
    model's order. The used ones keep the model's order too (used_order "model"), or, given ``ranks`` (each used
    item's rank of its latest use, :func:`use_ranks`; used_order "latest"), go by it, ties in the model's order.
    Why: the rule "what the task's earlier calls took values from comes first" beats the learned reuse weight where
    it applies (README "Reuse within a task"), and the model wins elsewhere; this keeps both, with no training. A
    used item the ranking lacks is not added (it has no place of the model's): rank every candidate to move every
    used one, as the store does (sam_model.storesearch). Pure (ids or positions): the one rule of evaluate's
    ``NAME+used`` rows and a live store's search (MemoryStore.search's ``used_order``)."""
    wanted = set(used)
    front = [x for x in ranked if x in wanted]
    if ranks is not None:
        front.sort(key=lambda x: ranks[x])  # stable: equal ranks keep the model's order
    return front + [x for x in ranked if x not in wanted]
