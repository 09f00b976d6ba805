"""Progress bars that still show progress when the output goes to a file or a pipe.

tqdm redraws one terminal line with carriage returns. Sent to a file (``evaluate.py ... 2> eval.log``, a job's
log) it wrote that line ten times a second, joined by ``\\r`` into one line that ``tail`` and ``less`` show as
one endless row (or, after the last redraw, as only the end). :func:`progress_bar` is tqdm on a terminal (and in a
notebook); into anything else it writes plain lines, one every ``every_s`` seconds and one at the end, each
ending in a newline and flushed. Training has its own (sam_model.training.progress: Lightning's bar).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any, TextIO

from tqdm import autonotebook
from tqdm import tqdm as plain_tqdm
from tqdm.auto import tqdm as auto_tqdm

EVERY_S = 10.0  # into a file: a line at most this often (a short job writes its first and last line only)


class _Lines:
    """What tqdm writes, as lines: a redraw (``\\r`` + text + padding) becomes the text and a newline; the
    padding, the clearing of a bar that does not stay, and a repeat of the last line are dropped."""

    def __init__(self, stream: TextIO):
        self.stream, self._last = stream, ""

    def write(self, s: str) -> None:
        for text in (part.strip() for part in s.split("\r")):
            if text and text != self._last:
                self.stream.write(text + "\n")
                self._last = text

    def flush(self) -> None:
        self.stream.flush()


def is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or closed
        return False


def progress_bar(iterable: Iterable | None = None, *, file: TextIO | None = None, every_s: float = EVERY_S,
        **kwargs: Any) -> plain_tqdm:
    """``tqdm(iterable, **kwargs)`` into ``file`` (default stderr): the bar on a terminal or in a notebook,
    plain lines (ASCII, one every ``every_s`` seconds) elsewhere."""
    stream = file if file is not None else sys.stderr
    if is_terminal(stream) or autonotebook.tqdm is not plain_tqdm:  # a notebook: tqdm.auto draws its widget
        return auto_tqdm(iterable, file=stream, **kwargs)
    kwargs.setdefault("mininterval", every_s)
    kwargs.setdefault("ascii", True)
    kwargs["leave"] = True  # a file keeps the last line (where the bar ended), not an erased one
    return plain_tqdm(iterable, file=_Lines(stream), **kwargs)


def say(text: str, file: TextIO | None = None) -> None:
    """One progress line (what a long step is about to do, or what it found) into ``file`` (default stdout, where a
    run's status lines go), flushed at once: into a file or a pipe stdout is block-buffered, so a line said before
    a quiet step appeared, if at all, only after it."""
    print(text, file=file if file is not None else sys.stdout, flush=True)
