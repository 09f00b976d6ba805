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

Characters are a guess at what the encoder reads: on AutoCodeRover's held-out results a fifth of the 180-character
chunks are longer than 64 MiniLM tokens with their head, and 2.5 % of the event text is read by no chunk. With
``tokens`` set the windows are sized by the encoder's own tokenizer instead (a counting function passed in by the
store, the evaluation or the training: this module imports no model): each chunk's whole encoder input, head and
special tokens included, is at most ``tokens`` tokens, so every character of the event is read by some chunk, and a
window cut inside a line ends and starts on a word boundary where the window holds one (a fragment ``12`` of
``1234`` would say the value ``12``).

Search then ranks chunks; folding keeps one hit per parent, the best chunk (max score per parent), which is
how the store's ``fold=True`` and the evaluation count an event as found when one of its chunks is.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sam_model.data.examples import MemoryRecord

# How many tokens an encoder reads of a text: its tokenizer's ids, special tokens included, uncut
# (sam_model.models.text_encoder.TokenCount, what SAMEncoder.memory_tokens gives).
CountTokens = Callable[[str], int]
Fits = Callable[[int, int], bool]  # whether the window text[start:end] fits as a chunk
MIN_TOKENS = 8  # a token window smaller than this holds little beside the head and the special tokens
PROBE = 256  # characters of a long line's first probe for its next window (then 512, ...)
SHORT_WINDOW = 20  # characters of a window when not even one character fits beside the head (the least `size`)


@dataclass(frozen=True)
class Chunking:
    """How long memories are split.

    Args:
        size: the most characters of event text per chunk (default 180: with the head, about what 64 BERT
            tokens hold of code, at 3.4 characters per MiniLM token in AutoCodeRover's tool results). A memory whose event text is not longer is left whole.
        overlap: characters each chunk repeats of the one before, so a value cut by one window boundary is
            whole in the next window (set it at least as long as the values looked for). With ``tokens``, at most
            half of the window before (whose length in characters depends on its text).
        tokens: size the windows in the encoder's tokens instead of ``size`` characters (which is then unused):
            each chunk's encoder input (head, the tool for later chunks, the window, the tokenizer's special
            tokens) is at most this many tokens, counted by the encoder's tokenizer (``count_tokens`` of
            :func:`chunk_record`). Give the encoder's ``max_length`` (64 for sam-general) or less. None: characters.
    """

    size: int = 180
    overlap: int = 50
    tokens: int | None = None

    def __post_init__(self) -> None:
        # a bool is an int to Python: `overlap: true` in a config was taken as 1 character
        if self.tokens is not None:
            if isinstance(self.tokens, bool) or not isinstance(self.tokens, int) or self.tokens < MIN_TOKENS:
                raise ValueError(f"chunking tokens must be an integer of at least {MIN_TOKENS} (the encoder's "
                                 f"max_length, or less), got {self.tokens!r}")
            if isinstance(self.overlap, bool) or not isinstance(self.overlap, int) or self.overlap < 0:
                raise ValueError(f"chunking overlap must be an integer >= 0 (characters), got {self.overlap!r}")
            return
        if isinstance(self.size, bool) or not isinstance(self.size, int) or self.size < 20:
            raise ValueError(f"chunking size must be an integer of at least 20 characters, got {self.size!r}")
        if isinstance(self.overlap, bool) or not isinstance(self.overlap, int) or not 0 <= self.overlap <= self.size // 2:
            raise ValueError(f"chunking overlap must be an integer between 0 and size/2 = {self.size // 2}, "
                             f"got {self.overlap!r}")

    @classmethod
    def from_dict(cls, d: object, where: str = "chunking") -> Chunking | None:
        """None for None/False (no chunking), the defaults for True, else ``{"size": .., "overlap": ..}``
        (characters) or ``{"tokens": .., "overlap": ..}`` (the encoder's tokens)."""
        if d is None or d is False:
            return None
        if d is True:
            return cls()
        if not isinstance(d, dict) or set(d) - {"size", "overlap", "tokens"}:
            raise ValueError(f"{where}: expected true, null or an object with 'size' (or 'tokens') and 'overlap', "
                             f"got {d!r}")
        if "size" in d and d.get("tokens") is not None:
            raise ValueError(f"{where}: give 'size' (characters) or 'tokens' (the encoder's tokens), not both")
        try:
            return cls(**d)
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None

    def to_dict(self) -> dict[str, int]:
        """What from_dict reads back: ``size`` and ``overlap``, or ``tokens`` and ``overlap``."""
        if self.tokens is not None:
            return {"tokens": self.tokens, "overlap": self.overlap}
        return {"size": self.size, "overlap": self.overlap}

    def describe(self) -> str:
        """The windows in words, for reports: "chunks of 180 characters, overlap 50"."""
        if self.tokens is not None:
            return f"chunks of at most {self.tokens} encoder tokens, overlap {self.overlap} characters"
        return f"chunks of {self.size} characters, overlap {self.overlap}"

    def check_encoder(self, max_length: int, where: str = "chunking") -> None:
        """ValueError when token windows are longer than the encoder reads (its ``max_length``): the end of every
        chunk would be cut off again, the very thing token windows are for."""
        if self.tokens is not None and self.tokens > max_length:
            raise ValueError(f"{where}: tokens {self.tokens} is more than the memory encoder reads (max_length "
                             f"{max_length}); give tokens {max_length} or less")

    def spans(self, text: str, fits: Fits | None = None) -> list[tuple[int, int]]:
        """Character windows ``[start, end)`` covering ``text`` (see :meth:`_char_spans`); with ``tokens``,
        ``fits(start, end)`` says whether a window fits the encoder (:meth:`_token_spans`)."""
        if self.tokens is None:
            return self._char_spans(text)
        if fits is None:
            raise ValueError("chunking by tokens needs the encoder's tokenizer: give count_tokens to chunk_record "
                             "(SAMEncoder.memory_tokens), or chunk by size in characters")
        return self._token_spans(text, fits)

    def _char_spans(self, text: str) -> list[tuple[int, int]]:
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
        return _blocks(pieces, lambda a, b: b - a <= self.size, lambda a, b: self.overlap)

    def _token_spans(self, text: str, fits: Fits) -> list[tuple[int, int]]:
        """Windows ``[start, end)`` covering ``text``, each one that ``fits`` (its chunk's encoder input is at most
        ``tokens`` tokens): one for a text that fits whole; otherwise blocks of whole lines that fit, each starting
        with the last lines of the block before when they fit in ``overlap`` characters (and half the block). A
        line that does not fit alone is cut into the longest windows that fit, ending after a space in their
        second half, else on another word boundary, and starting on a word boundary at most ``overlap``
        characters (and half the window) before the end of the one before: only a word longer than the window
        is cut inside. No window lies inside another. A text whose head leaves no room for one character is one
        window (no chunk could show the encoder any of it); where a later chunk's tool name leaves none, its
        window is SHORT_WINDOW characters, over the budget."""
        n = len(text)
        if fits(0, n) or not fits(0, min(n, 1)):
            return [(0, n)]
        pieces: list[tuple[int, int]] = []
        pos = 0
        for line in text.splitlines(keepends=True):
            stop, start = pos + len(line), pos
            reach = pos  # where the windows of this line so far end
            while (end := _longest(text, start, stop, fits)) < stop:  # a line that does not fit: windows of it
                if end <= reach:  # the overlap and the tool name left no room to reach past the window before
                    start = reach
                    continue
                pieces.append((start, end))
                start, reach = _next_start(text, start, end, self.overlap), end
            pieces.append((start, stop))
            pos = stop
        return _blocks(pieces, fits, lambda a, b: min(self.overlap, (b - a) // 2))


def _blocks(pieces: list[tuple[int, int]], fits: Fits, repeat: Callable[[int, int], int]) -> list[tuple[int, int]]:
    """Consecutive pieces (lines, or windows of a line) joined into the longest blocks that ``fits``; each block
    after the first starts with the trailing pieces of the one before that fit in ``repeat(start, end)`` characters
    of it (the overlap), and only where the piece after that block still fits beside them: a block that could not
    reach past the one before would lie inside it. One loop for character and token windows."""
    out: list[tuple[int, int]] = []
    i = 0
    while True:
        j = i
        while j + 1 < len(pieces) and fits(pieces[i][0], pieces[j + 1][1]):
            j += 1
        out.append((pieces[i][0], pieces[j][1]))
        if j + 1 >= len(pieces):
            return out
        k, most = j + 1, repeat(pieces[i][0], pieces[j][1])
        while k - 1 > i and pieces[j][1] - pieces[k - 1][0] <= most and fits(pieces[k - 1][0], pieces[j + 1][1]):
            k -= 1
        i = k


def _in_word(text: str, p: int) -> bool:
    """Whether position ``p`` lies inside a word (between two letters, digits or underscores)."""
    return 0 < p < len(text) and _word(text[p - 1]) and _word(text[p])


# CJK ideographs (the blocks BERT's tokenizer splits around): Chinese and Japanese are written without spaces
IDEOGRAPHS = ((0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0x20000, 0x2A6DF), (0x2A700, 0x2CEAF),
              (0x2F800, 0x2FA1F))


def _word(c: str) -> bool:
    """A letter, digit or underscore of a word. A CJK ideograph is a word of its own, as BERT's tokenizer reads it:
    taken as letters, a line of Chinese was one word longer than any window, so its windows were cut anywhere
    (``HAT10|33`` beside it said ``HAT10``) and had no overlap (a value across a cut was in no chunk whole)."""
    if not (c.isalnum() or c == "_"):
        return False
    return not any(lo <= ord(c) <= hi for lo, hi in IDEOGRAPHS)


def _longest(text: str, start: int, stop: int, fits: Fits) -> int:
    """The end of the longest window from ``start`` that fits: ``stop`` when the rest of the line does (or is one
    character), else moved back to after a space in its second half, else to a word boundary (in its second half,
    else anywhere in it) where that still fits. Probed at PROBE, 2 PROBE, ... characters first, so a long line
    costs the tokenizer a few windows' worth of text per window, not the rest of the line each time."""
    if stop - start <= 1:
        return stop
    lo, width = start, PROBE
    while True:  # lo fits (or is start); hi does not
        hi = min(stop, start + width)
        if not fits(start, hi):
            break
        if hi == stop:
            return stop
        lo, width = hi, 2 * width
    if lo == start:
        if not fits(start, start + 1):  # the head and tool name fill the encoder: a short window, over the budget
            return min(start + SHORT_WINDOW, stop)
        lo = start + 1
    while hi - lo > 1:  # the furthest end that fits (a longer window never has fewer tokens at a word boundary)
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fits(start, mid) else (lo, mid)
    half = start + (lo - start + 1) // 2
    space = max((text.rfind(c, half, lo) for c in " \t"), default=-1)
    if space >= 0 and fits(start, space + 1):
        return space + 1
    for first in (half, start + 1):
        for p in range(lo, first - 1, -1):
            if not _in_word(text, p):
                return p if p == lo or fits(start, p) else lo
    return lo


def _next_start(text: str, start: int, end: int, overlap: int) -> int:
    """Where the window after ``[start, end)`` starts: ``overlap`` characters (at most half the window) before
    ``end``, moved on to the next space, else to the next word boundary (``end`` at the latest)."""
    p = max(end - min(overlap, (end - start) // 2), start + 1)
    space = min((i for i in (text.find(c, p - 1, end - 1) for c in " \t") if i >= 0), default=-1)
    if space >= 0:
        return space + 1
    while p < end and _in_word(text, p):
        p += 1
    return p


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


def chunk_record(record: MemoryRecord, chunking: Chunking | None,
                 count_tokens: CountTokens | None = None) -> list[MemoryRecord]:
    """The chunks of one memory: ``[record]`` itself when it is short (or ``chunking`` is None), else one record
    per window with id ``<parent id>/<chunk>``, ``parent``, ``chunk`` and ``span`` set, and the text the
    encoder reads (head, the tool for later chunks, the window) and the plain content (kind, window).
    ``count_tokens``: the encoder's token count of a text, which chunking by ``tokens`` needs."""
    if chunking is None or record.parent is not None:
        return [record]
    body = body_of(record)
    if not record.text.endswith(body):
        return [record]
    head = record.text[: len(record.text) - len(body)]

    def lead(s: int) -> str:  # the tool before a later window (the first starts at 0, later ones after it)
        return "" if s == 0 or not record.phase or body.startswith(record.phase + ":", s) else f"{record.phase}: ..."

    def fits(s: int, e: int) -> bool:  # the chunk's whole encoder input within the token budget
        return count_tokens(head + lead(s) + body[s:e]) <= chunking.tokens

    spans = chunking.spans(body, fits if chunking.tokens is not None and count_tokens is not None else None)
    if len(spans) == 1:
        return [record]
    out = []
    for j, (s, e) in enumerate(spans):
        window = lead(s) + body[s:e]
        out.append(dataclasses.replace(record, id=f"{record.id}/{j}", text=head + window,
                                       content=f"[{record.kind}] {window}", parent=record.id, chunk=j, span=(s, e)))
    return out


def chunk_records(records: Iterable[MemoryRecord], chunking: Chunking | None,
                  count_tokens: CountTokens | None = None) -> list[MemoryRecord]:
    """Every record's chunks, in order (the records themselves without ``chunking``)."""
    return [c for r in records for c in chunk_record(r, chunking, count_tokens)]


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
    from sam_model.data.sayings import says

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


def visible_share(memories: Sequence[MemoryRecord], read: Callable[[str], int]) -> float:
    """The share of the events' text that the encoder reads in some memory: ``read(text)`` is how many characters
    of a memory's text it reads (TokenCount.read: the encoder stops at max_length tokens). Of a whole memory it
    reads the head, then the start of the event text; of a chunk, the head, its tool name, then the start of its
    window. What no memory shows the encoder, no search by meaning can find."""
    seen: dict[str, list[tuple[int, int]]] = {}
    total: dict[str, int] = {}  # per event: its text's length (the end of its last chunk)
    for m in memories:
        s, e = m.span if m.span is not None else (0, len(body_of(m)))
        pid = parent_id(m)
        total[pid] = max(total.get(pid, 0), e)
        shown = min(read(m.text), len(m.text)) - (len(m.text) - (e - s))  # read past the head (and tool name)
        seen.setdefault(pid, []).append((s, s + min(max(shown, 0), e - s)))
    covered = 0
    for spans in seen.values():
        end = 0
        for s, e in sorted(spans):
            covered += max(0, e - max(s, end))
            end = max(end, e)
    return covered / max(sum(total.values()), 1)
