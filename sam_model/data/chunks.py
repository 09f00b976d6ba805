"""Memories longer than the encoder's window, as several searchable chunks.

The memory encoder reads the first ``max_length`` tokens of a memory's text (64 by default, some 150-250
characters of code), so of a 4,000-character file view or search result it sees the first lines only, and a
path or method name deep inside is invisible to the index. A :class:`Chunking` splits the event text of such a
memory into blocks of whole lines of at most ``size`` characters (file views, search results and logs are
line-structured: a block of whole lines keeps a code line, a path or a ``file:line`` together), repeating the
last short lines of a block at the start of the next (``overlap`` characters), and each window becomes a memory of its own: a
:class:`~sam_model.data.examples.MemoryRecord` whose ``parent`` is the event's id, ``chunk`` its index and
``span`` its character offsets in the event text. A chunk's text is what the encoder reads for it: the event's
head (``[result] sets ...:``), for chunks after the first the tool that produced the text (the event's phase),
then the window.

A memory whose event text fits in ``size`` characters is one chunk that *is* the record, unchanged (same id,
text and vector): chunking is a no-op for short memories, which all of SGD and tau-bench airline are.

Search then ranks chunks; folding keeps one hit per parent, the best chunk (max score per parent), which is
how the store's ``fold=True`` and the evaluation count an event as found when one of its chunks is.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sam_model.data.examples import MemoryRecord


@dataclass(frozen=True)
class Chunking:
    """How long memories are split.

    Args:
        size: the most characters of event text per chunk (default 180: with the head, about what 64 BERT
            tokens hold of code, at 3.4 characters per MiniLM token in AutoCodeRover's tool results). A memory whose event text is not longer is left whole.
        overlap: characters each chunk repeats of the one before, so a value cut by one window boundary is
            whole in the next window (set it at least as long as the values looked for).
    """

    size: int = 180
    overlap: int = 50

    def __post_init__(self) -> None:
        # a bool is an int to Python: `overlap: true` in a config was taken as 1 character
        if isinstance(self.size, bool) or not isinstance(self.size, int) or self.size < 20:
            raise ValueError(f"chunking size must be an integer of at least 20 characters, got {self.size!r}")
        if isinstance(self.overlap, bool) or not isinstance(self.overlap, int) or not 0 <= self.overlap <= self.size // 2:
            raise ValueError(f"chunking overlap must be an integer between 0 and size/2 = {self.size // 2}, "
                             f"got {self.overlap!r}")

    @classmethod
    def from_dict(cls, d: object, where: str = "chunking") -> Chunking | None:
        """None for None/False (no chunking), the defaults for True, else ``{"size": .., "overlap": ..}``."""
        if d is None or d is False:
            return None
        if d is True:
            return cls()
        if not isinstance(d, dict) or set(d) - {"size", "overlap"}:
            raise ValueError(f"{where}: expected true, null or an object with 'size' and 'overlap', got {d!r}")
        try:
            return cls(**d)
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None

    def to_dict(self) -> dict[str, int]:
        return dataclasses.asdict(self)

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Character windows ``[start, end)`` covering ``text``: one for a text of at most ``size`` characters;
        otherwise blocks of whole lines of at most ``size`` characters, each starting with the last lines of the
        block before when they fit in ``overlap`` characters. A line longer than ``size`` is cut into windows
        of ``size`` (after a space in their second half when there is one) that overlap by ``overlap``. So a
        value on one line (a path, a ``file:line``, a code line) is whole in some chunk, and no window lies
        inside another (each reaches past the one before)."""
        n = len(text)
        if n <= self.size:
            return [(0, n)]
        pieces: list[tuple[int, int]] = []  # lines, and windows of lines longer than size
        pos = 0
        for line in text.splitlines(keepends=True):
            stop = pos + len(line)
            start = pos
            while stop - start > self.size:
                cut = text.rfind(" ", start + self.size // 2, start + self.size)
                end = cut + 1 if cut >= 0 else start + self.size
                pieces.append((start, end))
                start = max(end - self.overlap, start + 1)
            pieces.append((start, stop))
            pos = stop
        out: list[tuple[int, int]] = []
        i = 0
        while True:
            j = i
            while j + 1 < len(pieces) and pieces[j + 1][1] - pieces[i][0] <= self.size:
                j += 1
            out.append((pieces[i][0], pieces[j][1]))
            if j + 1 >= len(pieces):
                return out
            # the next block repeats the trailing pieces that fit in the overlap, and only where the piece after
            # this block still fits beside them: a block that could not reach past this one would lie inside it
            k = j + 1
            while (k - 1 > i and pieces[j][1] - pieces[k - 1][0] <= self.overlap
                   and pieces[j + 1][1] - pieces[k - 1][0] <= self.size):
                k -= 1
            i = k


def body_of(record: MemoryRecord) -> str:
    """The event text of a record (``content`` is ``[kind] text``, sam_model.data.text.content_text)."""
    prefix = f"[{record.kind}] "
    return record.content[len(prefix):] if record.content.startswith(prefix) else record.content


def own_words(memory: Any) -> str:
    """What a memory (a MemoryRecord or a store Hit) says of its event: the event text, or a chunk's window of it
    (``text[start:end]`` for its ``span``), without the ``<tool>: ...`` put before a later window for the encoder:
    the tool name is no word of that window, so a value equal to it was said by every later chunk."""
    prefix = f"[{memory.kind}] "
    content = memory.content
    if getattr(memory, "span", None) is not None:
        n = memory.span[1] - memory.span[0]
        return content[len(content) - n:] if n > 0 else ""
    return content[len(prefix):] if content.startswith(prefix) else content


def chunk_record(record: MemoryRecord, chunking: Chunking | None) -> list[MemoryRecord]:
    """The chunks of one memory: ``[record]`` itself when it is short (or ``chunking`` is None), else one record
    per window with id ``<parent id>/<chunk>``, ``parent``, ``chunk`` and ``span`` set, and the text the
    encoder reads (head, the tool for later chunks, the window) and the plain content (kind, window)."""
    if chunking is None or record.parent is not None:
        return [record]
    body = body_of(record)
    spans = chunking.spans(body)
    if len(spans) == 1 or not record.text.endswith(body):
        return [record]
    head = record.text[: len(record.text) - len(body)]
    out = []
    for j, (s, e) in enumerate(spans):
        lead = "" if j == 0 or not record.phase or body.startswith(record.phase + ":", s) else f"{record.phase}: ..."
        window = lead + body[s:e]
        out.append(dataclasses.replace(record, id=f"{record.id}/{j}", text=head + window,
                                       content=f"[{record.kind}] {window}", parent=record.id, chunk=j, span=(s, e)))
    return out


def chunk_records(records: Iterable[MemoryRecord], chunking: Chunking | None) -> list[MemoryRecord]:
    """Every record's chunks, in order (the records themselves without ``chunking``)."""
    return [c for r in records for c in chunk_record(r, chunking)]


def parent_id(record: MemoryRecord) -> str:
    """The id of the event a memory (chunk) belongs to."""
    return record.parent if record.parent is not None else record.id


def fold_positions(ranking: Sequence[int], parents: Sequence[int], depth: int) -> tuple[list[int], list[int]]:
    """A chunk ranking folded to its events: the first ``depth`` distinct parents in rank order (each ranked
    where its best chunk is: max score per parent) and, for each, the position of that best chunk."""
    seen: set[int] = set()
    events, best = [], []
    for p in ranking:
        e = parents[int(p)]
        if e not in seen:
            seen.add(e)
            events.append(e)
            best.append(int(p))
            if len(events) == depth:
                break
    return events, best


def says_any(chunk_text_norm: str, values: Iterable[str]) -> bool:
    """Whether a chunk (normalised text) says one of ``values`` (the labelling rule's says)."""
    from sam_model.data.toolstate import says

    return any(says(chunk_text_norm, v) for v in values)


def label_chunks(chunks: Sequence[MemoryRecord], needed: Iterable[str]) -> list[int]:
    """Which chunks of one labelled event are its label: those that say a needed value (the label of a value
    is the chunk that says it); every chunk when none does (a value cut by every window, or an adopted one)."""
    from sam_model.data.text import norm

    values = list(needed)
    hits = [i for i, c in enumerate(chunks) if says_any(norm(own_words(c)), values)]
    return hits or list(range(len(chunks)))


def describe(chunks: Sequence[MemoryRecord]) -> dict[str, Any]:
    """How much chunking multiplied the memories: events, chunks, and the share of events that were split."""
    parents = {parent_id(c) for c in chunks}
    split = {c.parent for c in chunks if c.parent is not None}
    return {"events": len(parents), "chunks": len(chunks), "split_events": len(split),
            "chunks_per_event": len(chunks) / max(len(parents), 1)}
