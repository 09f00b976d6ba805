"""The command line the walkthroughs' generators share (tests/adk_utility.py, tests/maf_freight.py,
tests/oai_claims.py): ``python tests/GENERATOR.py OUT N SEED`` writes N templated conversations drawn with SEED into
the folder OUT, each generator by its own ``write``; one parser, so the README's commands read alike for all."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any


def one_json_a_session(conversations: Callable[[int, int], Iterable[tuple[str, Any]]]) -> Callable[[Path, int, int], None]:
    """A ``write`` that saves each (session id, saved dict) ``conversations(n, seed)`` gives as OUT/SESSION_ID.json."""

    def write(out: Path, n: int, seed: int) -> None:
        out.mkdir(parents=True, exist_ok=True)
        for sid, doc in conversations(n, seed):
            (out / f"{sid}.json").write_text(json.dumps(doc, indent=1))

    return write


def main(write: Callable[[Path, int, int], None], doc: str, argv: list[str] | None = None) -> int:
    """Parse OUT N SEED (``doc``'s first line the description) and ``write(OUT, N, SEED)``."""
    p = argparse.ArgumentParser(description=doc.splitlines()[0])
    p.add_argument("out", type=Path, help="the folder the conversations are written into")
    p.add_argument("n", type=int, help="how many conversations")
    p.add_argument("seed", type=int, help="the seed the templates are filled by")
    a = p.parse_args(argv)
    write(a.out, a.n, a.seed)
    return 0
