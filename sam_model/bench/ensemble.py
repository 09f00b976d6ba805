"""A seed ensemble of SAM retrievers, searched as one: is a mean of K trainings better than the one shipped?

Each member k scores a memory by an inner product, s_k(q, m) = q_kᵀ m_k (its state side, content side and time
terms are all parts of the two vectors). The ensemble's score is their mean, and a mean of inner products is one
inner product of concatenated vectors::

    s(q, m) = (1/K) Σ_k q_kᵀ m_k = [q_1, …, q_K]ᵀ/K · [m_1, …, m_K]

so the ensemble is an encoder like any other (dimension Σ_k dim_k) and one state-independent index still serves
it. Scores keep a member's scale, so the store's re-rank (needed-slot bonus, lexical match) applies with the
first member's weights unchanged. The members share nothing at run time here (each encodes with its own frozen
BERT), so the bench measures rankings, not speed: with one shared BERT an ensemble would cost K heads and a K-times
wider index.

    python -m sam_model.bench.ensemble --members sam-general,checkpoints/sam-general-s0/export,... \\
        --observation-max-length 8 --data ../shared/data/sgd/dev --max-queries 600 --out runs/eval/ens-sgd
    python -m sam_model.bench.paired runs/eval/ens-sgd sam,sam,sam m0,m1,m2   # against the members' mean
    python -m sam_model.bench.paired runs/eval/ens-sgd sam m0                  # against one member

``sam`` in the report is the ensemble; ``m0`` … are the members alone, each searched through its own store settings.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

import numpy as np

from sam_model.io import RawDefaultsHelp
from sam_model.store import MemoryStore


class ScoreEnsemble:
    """K retrievers as one encoder: query vectors concatenated and divided by K, memory vectors concatenated."""

    def __init__(self, members: Sequence[Any]):
        if not members:
            raise ValueError("an ensemble needs at least one member; give --members A,B,...")
        self.members = list(members)
        self.encoder = self
        self.store = MemoryStore(self, self.members[0].store.config, self.dim)

    @property
    def dim(self) -> int:
        return sum(m.dim for m in self.members)

    def encode_queries(self, *args, **kwargs) -> np.ndarray:
        parts = [np.asarray(m.encode_queries(*args, **kwargs), dtype=np.float32) for m in self.members]
        return np.concatenate(parts, axis=1) / len(self.members)

    def encode_memories(self, *args, **kwargs) -> np.ndarray:
        return np.concatenate([np.asarray(m.encode_memories(*args, **kwargs), dtype=np.float32)
                               for m in self.members], axis=1)

    def clear_cache(self) -> None:
        for m in self.members:
            m.clear_cache()


def load_members(names: Sequence[str], observation_max_length: int | None = None) -> list[Any]:
    """The retrievers, each reading the first ``observation_max_length`` tokens of an observation when given."""
    from sam_model.retriever import SAMRetriever

    members = [SAMRetriever.load(n) for n in names]
    for m in members if observation_max_length is not None else ():
        m.net.read_observation(observation_max_length)
    return members


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m sam_model.bench.ensemble", description=__doc__,
                                formatter_class=RawDefaultsHelp)
    p.add_argument("--members", required=True,
                   help="comma-separated retrievers (export folders, checkpoints or packaged names such as "
                        "sam-general); the first one's store settings (re-rank weights) are the ensemble's")
    p.add_argument("--data", required=True, help="the log to evaluate on, as evaluate.py --data")
    p.add_argument("--split", choices=("all", "train", "test"), default="all",
                   help="for a transcript file: its fixed train or test split, as evaluate.py --split")
    p.add_argument("--max-queries", type=int, default=None,
                   help="evaluate a seeded sample of this many decision points (as evaluate.py)")
    p.add_argument("--seed", type=int, default=0, help="seed of that sample and of tie-breaking (default 0)")
    p.add_argument("--observation-max-length", type=int, default=None, metavar="N",
                   help="every member reads the first N BERT tokens of a query's observation, as the packaged "
                        "sam-general does (python -m sam_model.pretrained.pack --observation-max-length 8); default: "
                        "as each member says")
    p.add_argument("--out", required=True, help="output folder: report.json, report.md, per_query.jsonl")
    args = p.parse_args(argv)
    names = [t.strip() for t in args.members.split(",") if t.strip()]
    if not names:
        p.error("--members: give at least one retriever")
    if args.max_queries is not None and args.max_queries < 1:
        p.error("--max-queries must be >= 1")

    from sam_model.data.sources import SourceOptions
    from sam_model.evaluation.data import load_eval_data
    from sam_model.evaluation.run import evaluate

    data = load_eval_data(args.data, "episode", args.max_queries, args.seed, False, SourceOptions(split=args.split))
    members = load_members(names, args.observation_max_length)
    evaluate(data, args.out, ScoreEnsemble(members), baselines=(),
             compare={f"m{i}": m for i, m in enumerate(members)}, latency_queries=1, tsne_points=10, seed=args.seed)
    return 0


if __name__ == "__main__":
    from sam_model.io import run_cli

    raise SystemExit(run_cli(main))
