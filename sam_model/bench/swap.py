"""Swap probe: does a reader ever find nothing at a saved folder's path while it is replaced?

    python -m sam_model.bench.swap --kills 15 [--kinds index,export,retriever] [--saves 30] [--json F]

A folder save ends with a swap (sam_model.io). Where the OS can exchange two paths atomically (Linux
``renameat2(RENAME_EXCHANGE)``) the path never stops existing; elsewhere the swap is two renames with a gap
between them. Two probes per kind of folder (the subjects of sam_model.bench.crash):

- **gap kills** (the two-rename path forced, as on a system without the exchange): a forked child saves and is
  held inside the gap; the probe SIGKILLs it there, ``--kills`` times, and then does what an agent does at start:
  ``sam_model.io.exists(path)`` ("load it if it exists, else create a new one"). *found nothing*: exists said no
  (the agent would have created an empty store and saved it over the old one); *left missing*: the path was still
  absent after that call; *lost*: the version loaded is not the one saved before the killed save.
- **exchange**: a forked child saves ``--saves`` versions while the probe checks ``Path.exists`` (which knows
  nothing of sam_model) in a tight loop; *missing*: checks that found no folder (0 is the target).

Prints the tallies (``--json`` keeps them); exit status 1 when any is not 0.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import tempfile
import time
from pathlib import Path

from sam_model import io as sam_io
from sam_model.bench.crash import _child, make_subjects

FOLDER_KINDS = ("index", "export", "retriever")


def probe_gap(subject, root: Path, kills: int) -> dict:
    """Kill a writer between the two renames ``kills`` times; count what an agent starting then would see."""
    path = root / f"{subject.name}-gap"
    out = {"kind": subject.name, "kills": 0, "found_nothing": 0, "left_missing": 0, "lost": 0, "errors": []}
    for v in range(1, kills + 1):
        subject.save(path, v)

        def held(v=v):
            sam_io.EXCHANGE = False
            os.environ["SAM_GAP_PAUSE_S"] = "60"
            subject.save(path, v + 1000)

        pid = _child(held)
        deadline = time.time() + 60
        while path.exists() and time.time() < deadline:
            time.sleep(0.002)
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        out["kills"] += 1
        if not sam_io.exists(path):
            out["found_nothing"] += 1
        if not path.exists():
            out["left_missing"] += 1
        try:
            if subject.load(path) != v:
                out["lost"] += 1
        except Exception as exc:  # noqa: BLE001 - a failed load is a loss, with its reason
            out["lost"] += 1
            out["errors"].append(f"{type(exc).__name__}: {exc}"[:300])
    return out


def probe_exchange(subject, root: Path, saves: int) -> dict:
    """Save ``saves`` versions in a child while checking ``Path.exists`` in a loop here."""
    path = root / f"{subject.name}-exchange"
    subject.save(path, 1)
    done = root / f"{subject.name}-exchange-done"
    pid = _child(lambda: ([subject.save(path, v) for v in range(2, saves + 2)], done.touch()))
    checks = missing = 0
    while not done.exists():
        checks += 1
        missing += not path.exists()
    code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    a, b = root / "probe-a", root / "probe-b"
    a.mkdir(exist_ok=True), b.mkdir(exist_ok=True)
    return {"kind": subject.name, "saves": saves, "checks": checks, "missing": missing,
            "exchange": sam_io.EXCHANGE and sam_io._exchange(a, b), "writer_exit": code}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m sam_model.bench.swap", description=__doc__.split("\n\n")[0],
                                 formatter_class=sam_io.DefaultsHelp)
    ap.add_argument("--kills", type=int, default=15, help="writers killed inside the gap, per kind (default 15)")
    ap.add_argument("--saves", type=int, default=30, help="saves watched by the exchange probe, per kind (default 30)")
    ap.add_argument("--kinds", default=",".join(FOLDER_KINDS), help="the kinds of folder save to probe, comma-separated")
    ap.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = ap.parse_args(argv)
    kinds = [k for k in args.kinds.split(",") if k]
    if sorted(set(kinds) - set(FOLDER_KINDS)):
        ap.error(f"unknown kinds {sorted(set(kinds) - set(FOLDER_KINDS))}; choose from {', '.join(FOLDER_KINDS)}")
    import faiss
    import torch

    torch.set_num_threads(1)  # fork-safe, as in sam_model.bench.crash
    faiss.omp_set_num_threads(1)
    report: dict = {"gap": [], "exchange": []}
    with tempfile.TemporaryDirectory(prefix="sam-swap-") as tmp:
        for s in make_subjects(kinds):
            report["gap"].append(probe_gap(s, Path(tmp), args.kills))
            report["exchange"].append(probe_exchange(s, Path(tmp), args.saves))
    for g in report["gap"]:
        print(f"gap kills {g['kind']}: {g['kills']} kills, found nothing {g['found_nothing']}, left missing "
              f"{g['left_missing']}, lost {g['lost']}" + "".join(f"\n  {e}" for e in g["errors"][:3]))
    for x in report["exchange"]:
        print(f"exchange {x['kind']}: {x['saves']} saves, {x['checks']} Path.exists checks, missing {x['missing']} "
              f"(atomic exchange {'on' if x['exchange'] else 'unavailable'})")
    if args.json:
        sam_io.atomic_write_text(args.json, json.dumps(report, indent=1))
    bad = sum(g["found_nothing"] + g["left_missing"] + g["lost"] for g in report["gap"]) + \
        sum(x["missing"] + abs(x["writer_exit"]) for x in report["exchange"])
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
