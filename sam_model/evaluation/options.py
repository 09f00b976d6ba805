"""The options that say which decision points of a log are measured and how they are searched, shared by
``sam-eval`` (sam_model.evaluation.run) and ``python -m sam_model.interpolate --choose-on``: a weight chosen on
a log reads it exactly as the benchmark reads its logs (the same split, lives, scope, sample, tie-break seed,
depth and chunks), so what picks the weight is what is measured afterwards.

Light on purpose (argparse and the data layer's chunk settings): the interpolate CLI builds its parser on the
core install, without the evaluation extra; :func:`read_log` imports the evaluation code only when it runs.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
from typing import TYPE_CHECKING

from sam_model.data.chunks import Chunking
from sam_model.limits import MAX_BATCH_SIZE, int_option

if TYPE_CHECKING:
    from sam_model.evaluation.data import EvalData

SPLIT_HELP = ("for a transcript file: evaluate only the fixed train or test split of its task groups (the split "
              "training configs use, sam_model.data.transcripts.held_out_groups); default all")


class Once(argparse.Action):
    """An option that names one thing, given once: argparse keeps the last of a repeated option silently, so
    ``sam-eval --data A --data B`` measured B alone and reported it as if both were (sam-train's ``data.train``
    and interpolate's ``--choose-on`` take several, so a user may well repeat it). A second one is refused."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values, option_string=None):
        seen = getattr(namespace, f"_{self.dest}_given", None)
        if seen is not None:
            parser.error(f"{option_string} given twice ({seen}, then {values}): it names one log: "
                         f"{_advice(seen, values)}")
        setattr(namespace, f"_{self.dest}_given", values)
        setattr(namespace, self.dest, values)


def _advice(first: str, second: str) -> str:
    """What to do with two logs given to an option that reads one. Two folders of sessions or trajectories are read
    as one folder holding both; files are not (a folder of transcript ``.jsonl`` files is no layout, and the advice
    to make one was refused when followed): run once per log, or join JSON Lines logs of one format into one file,
    whose conversation ids must differ (two exports of the same conversations, or two logs numbered from 1, join into
    a file the reader refuses for its repeated id)."""
    if os.path.isdir(first) and os.path.isdir(second):
        return "give a folder holding both (a folder's sessions are read in each one's format) or run once per log"
    for suffix in (".jsonl", ".jsonl.gz"):  # JSON Lines join by cat (gzip streams too); a .json document does not
        if str(first).endswith(suffix) and str(second).endswith(suffix):
            return (f"run once per log, or join logs of one format into one file (cat {first} {second} > "
                    f"both{suffix}; a conversation id the two logs share is refused there, as one logged twice)")
    return "run once per log"


def parse_chunking(text: str) -> Chunking | None:
    if text in ("off", "none", ""):
        return None
    if text == "on":
        return Chunking()
    try:
        if text.startswith("tokens:"):  # tokens:N[:OVERLAP]: N of the retriever's memory encoder's tokens
            tokens, _, overlap = text[len("tokens:"):].partition(":")
            return Chunking(overlap=int(overlap) if overlap else Chunking.overlap, tokens=int(tokens))
        size, _, overlap = text.partition(":")
        return Chunking(int(size), int(overlap) if overlap else Chunking.overlap)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"--chunking {text!r}: give SIZE:OVERLAP in characters, tokens:N[:OVERLAP] "
                                         f"(N encoder tokens, OVERLAP characters), 'on' or 'off' ({exc})") from None


def add_log_options(p: argparse.ArgumentParser, split_help: str = SPLIT_HELP) -> None:
    """Which decision points of the log are queried, and among which candidates."""
    p.add_argument("--split", choices=("all", "train", "test"), default="all", help=split_help)
    p.add_argument("--task-start", choices=("known", "unknown"), default="known",
                   help="whether queries say where their task began (the first event of the current source episode "
                        "of a life); 'unknown' measures an agent that does not say it: neither its queries nor its "
                        "memories' provenance links know where a task began (default known)")
    p.add_argument("--life", type=int_option(1, 2**31), default=1, metavar="N",
                   help="concatenate every N consecutive episodes into one agent life (sam_model.data.lives): a "
                        "decision's candidates then include the events of earlier tasks; default 1")
    p.add_argument("--scope", choices=("episode", "global"), default="episode",
                   help="candidates: earlier events of the same episode (default) or every earlier event of the "
                        "log (global, the lifelong-agent setting)")
    # Numbers are checked as they are parsed (int_option): a --depth above what a search ranks, or a negative seed,
    # failed after the model loaded and the memories were encoded, in a line that named no flag.
    p.add_argument("--max-queries", type=int_option(1, 2**62), default=None, metavar="N",
                   help="evaluate a seeded random sample of N decision points (default: all)")
    p.add_argument("--skip-bad-lines", action="store_true",
                   help="skip malformed log lines (counted and reported) instead of stopping at the first")


def add_search_options(p: argparse.ArgumentParser) -> None:
    """How each retriever searches: depth, tie-break seed, device, batch, the BERT vector cache, chunks."""
    p.add_argument("--depth", type=int_option(1), default=100, metavar="D",
                   help="ranking depth kept per query; MRR is MRR@D (default 100)")
    p.add_argument("--device", default=None, help="torch device for encoders (default: cuda if available, else cpu)")
    p.add_argument("--batch-size", type=int_option(1, MAX_BATCH_SIZE), default=64,
                   help="encoding batch size (default 64)")
    p.add_argument("--seed", type=int_option(0, 2**32 - 1), default=0,
                   help="seed for sampling and tie-breaking (default 0)")
    p.add_argument("--text-cache", default="~/.cache/sam_model/text", metavar="DIR",
                   help="frozen-BERT text-vector cache shared with training: read before ranking, extended after "
                        "(default ~/.cache/sam_model/text; '' = off)")
    p.add_argument("--chunking", type=parse_chunking, default=None, metavar="SIZE:OVERLAP|tokens:N[:OVERLAP]|on|off",
                   help="search the chunks of memories longer than SIZE characters (windows overlapping by OVERLAP, "
                        "sam_model.data.chunks; 'on' = 180:50), or whose text is longer than N tokens of the "
                        "retriever's memory encoder (tokens:64: each chunk's whole text read; each --compare model's "
                        "own encoder for it), for every method, an event found when one of its chunks is; default "
                        "off (whole memories, the encoder reads their start)")


def read_log(path: str, args: argparse.Namespace, progress: bool = True) -> EvalData:
    """The decision points of ``path`` as the options of :func:`add_log_options` (and ``--seed``) select them."""
    from sam_model.data.sources import SourceOptions
    from sam_model.evaluation.data import load_eval_data

    data = load_eval_data(path, args.scope, args.max_queries, args.seed, args.skip_bad_lines,
                          SourceOptions(split=args.split, life=args.life), progress=progress)
    if args.task_start == "unknown":
        data = dataclasses.replace(data, source=f"{data.source} (task start unknown)",
                                   examples=[dataclasses.replace(e, task_start=None) for e in data.examples],
                                   memories=[dataclasses.replace(m, task_start=None) for m in data.memories])
    return data
