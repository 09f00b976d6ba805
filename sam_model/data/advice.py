"""What a data reader's error tells the user to do, in the options of the tool that read the file.

The readers (transcript files, SGD folders) serve three tools: ``sam-data`` (its converters' flags), ``sam-train``
(the ``data.`` options of a config) and ``evaluate.py`` (its flags). Their errors said sam-data's ``--format``,
``--allow-empty`` and ``--skip-bad`` to users of sam-train and evaluate.py, which have none of them. So an error
that advises an option holds an :class:`Advice` in its message, :data:`SPELLING` is the one place that says how
each tool spells it, and each tool tells the error as it would (:func:`spelt_as`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Literal

from sam_model.io import SAMFileError

Tool = Literal["sam-data", "sam-train", "evaluate"]

# what to do, by advice and tool; {arg} is the advice's argument (a format name)
SPELLING: dict[str, dict[Tool, str]] = {
    "format": {  # read the file with the reader of format {arg}: sam-data transcripts alone can force one
        "sam-data": "try --format {arg}",
        "sam-train": "convert it with sam-data transcripts --format {arg} and give sam-train the agent log it writes",
        "evaluate": "convert it with sam-data transcripts --format {arg} and give --data the agent log it writes"},
    "allow_empty": {  # a file with no conversation (dialogue) or no tool call: what to do if that is so
        "sam-data": "pass --allow-empty to write its log anyway",
        "sam-train": "leave it out of data.train and data.val: nothing in it can be trained on",
        "evaluate": "give --data another file: nothing in this one can be evaluated"},
    "skip": {  # pass over the bad conversations (and the unreadable rest of a file), reading the others
        "sam-data": "pass --skip-bad",
        "sam-train": "set data.on_error: skip",
        "evaluate": "pass --skip-bad-lines"},
}


@dataclass(frozen=True)
class Advice:
    """One advice in an error's message (a key of :data:`SPELLING`), spelt when the message is told."""

    kind: str
    arg: str = ""

    def spelt(self, tool: Tool = "sam-data") -> str:
        return SPELLING[self.kind][tool].format(arg=self.arg)


def spelt(kind: str, tool: Tool, arg: str = "") -> str:
    """How ``tool`` says the advice ``kind``: for a hint a tool adds to an error (e.g. "or set data.on_error:
    skip")."""
    return Advice(kind, arg).spelt(tool)


class AdvisedError(SAMFileError):
    """A reader's error whose message may hold advice. ``str()`` reads ``WHERE: reason``; ``parts`` are the
    reason's text and :class:`Advice` in order, told as ``tool`` spells them (sam-data's options by default, the
    tool that raises most of them)."""

    def __init__(self, where: str, reason: str | Advice, *more: str | Advice, tool: Tool = "sam-data"):
        self.where, self.parts = where, (reason, *more)
        self._tell(tool)

    def _tell(self, tool: Tool) -> None:
        self.tool = tool
        self.reason = "".join(p if isinstance(p, str) else p.spelt(tool) for p in self.parts)
        SAMFileError.__init__(self, f"{self.where}: {self.reason}")

    @property
    def advice(self) -> list[Advice]:
        return [p for p in self.parts if isinstance(p, Advice)]

    def spelt_for(self, tool: Tool) -> AdvisedError:
        """This error as ``tool`` tells it (its other attributes, e.g. ``skippable``, kept)."""
        err = type(self).__new__(type(self))
        err.__dict__.update(self.__dict__)
        err._tell(tool)
        return err


@contextmanager
def spelt_as(tool: Tool) -> Iterator[None]:
    """Around a tool's reading of its data: an :class:`AdvisedError` leaves it in ``tool``'s options."""
    try:
        yield
    except AdvisedError as exc:
        raise exc.spelt_for(tool).with_traceback(exc.__traceback__) from None
