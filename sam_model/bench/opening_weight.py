"""How large the task-opening flag's learnt weight is, against the gaps it has to close (README, "The flag's step
fixed before it ran").

w(v_s) is the last entry of a model's query vector when ``net.task_opening`` is on (sam_model.models.opening), and
it moves a ranking only where it is comparable to the gap between a decision's best scores. So, per left-out domain
of ``bench.lodo`` runs, over that domain's decisions: w's mean, median and range; the median gap between a
decision's two best inner-product scores (before the store's re-rank); on how many decisions w changes which
memory scores best; and, of the decisions whose label is the memory that opened the task, on how many it scores
best. Also the head's bias and the norm of its state weights, and the learnt temperature::

    python -m sam_model.bench.opening_weight runs/lodo-openlr-s0 --data-root ../shared/data --domains coding
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np
import torch

from sam_model.io import DefaultsHelp, atomic_write_text, cli_name


def weigh(retriever, data, text_cache: str | None = None) -> dict:
    """The figures above for one retriever whose network has ``net.task_opening``, on ``data`` (EvalData).
    ``text_cache``: the frozen-BERT vector cache folder to read (as evaluate.py's)."""
    from sam_model.evaluation.run import text_caches

    net = retriever.net
    if net.opening is None:
        raise SystemExit("error: this model has no task-opening head (net.task_opening is off)")
    if text_cache:
        text_caches([retriever], str(Path(text_cache).expanduser()))
    enc = retriever.encoder
    m = np.asarray(enc.encode_memories(data.memories, 64, False), dtype=np.float64)
    exs = data.examples
    q = np.asarray(enc.encode_queries([e.state for e in exs], [e.observation for e in exs], batch_size=64,
                                      progress=False, steps=[e.step for e in exs],
                                      task_starts=[e.task_start for e in exs]), dtype=np.float64)
    opens = m[:, -1]
    w, gaps, flipped, label_opening, opening_first = q[:, -1], [], 0, 0, 0
    for i, ex in enumerate(exs):
        cands = np.asarray(ex.candidate_range("episode"))
        if len(cands) == 0:
            continue
        s = m[cands] @ q[i]
        top = np.sort(s)[::-1]
        if len(top) > 1:
            gaps.append(top[0] - top[1])
        flipped += int(np.argmax(s) != np.argmax(s - w[i] * opens[cands]))
        opener = [c for c in cands if opens[c] == 1.0]
        if opener and data.memories[opener[0]].id in ex.relevant_ids:
            label_opening += 1
            opening_first += int(cands[np.argmax(s)] == opener[0])
    return {"decisions": len(exs), "w_mean": float(w.mean()), "w_median": float(np.median(w)),
            "w_min": float(w.min()), "w_max": float(w.max()), "w_positive": int((w > 0).sum()),
            "median_top2_gap": float(np.median(gaps)) if gaps else math.nan, "top1_changed_by_w": flipped,
            "label_is_opening": label_opening, "opening_scores_best": opening_first,
            "bias": float(net.opening.head.bias.detach()), "state_weight_norm": float(net.opening.head.weight.detach().norm())}


def temperature(checkpoint: Path) -> float:
    """The InfoNCE temperature a training checkpoint had learnt (NaN where it holds none)."""
    state = torch.load(checkpoint, map_location="cpu", weights_only=False).get("state_dict", {})
    return math.exp(-float(state["loss_fn.log_scale"])) if "loss_fn.log_scale" in state else math.nan


def main(argv: list[str] | None = None) -> int:
    from sam_model.bench.lodo import DOMAINS, TEXT_CACHE
    from sam_model.data.sources import SourceOptions
    from sam_model.evaluation.data import load_eval_data
    from sam_model.retriever import SAMRetriever

    ap = argparse.ArgumentParser(prog=cli_name("python -m sam_model.bench.opening_weight"), description=__doc__,
                                 formatter_class=DefaultsHelp)
    ap.add_argument("runs", nargs="+", type=Path, help="bench.lodo --out folders (their lodo.json names the models)")
    ap.add_argument("--data-root", type=Path, default=Path("../shared/data"), help="the folder holding sgd/, tau-bench/ and coding-agents/ (as bench.lodo's)")
    ap.add_argument("--domains", default="coding", help="comma-separated left-out domains to weigh")
    ap.add_argument("--sgd-queries", type=int, default=600, help="SGD decisions in the seeded sample, as bench.lodo's")
    ap.add_argument("--seed", type=int, default=0, help="the runs' bench.lodo --seed (it draws SGD's sample)")
    args = ap.parse_args(argv)
    wanted = [d for d in args.domains.split(",") if d]
    for run in args.runs:
        rows = json.loads((run / "lodo.json").read_text(encoding="utf-8"))
        out = {}
        for r in rows:
            if r["domain"] not in wanted:
                continue
            d = DOMAINS[r["domain"]]
            data = load_eval_data(args.data_root / (d.eval_path or d.train), "episode",
                                  args.sgd_queries if r["domain"] == "sgd" else None, args.seed, False,
                                  SourceOptions(split=d.eval_split), progress=False)
            ckpt = Path(r["checkpoint"])
            got = weigh(SAMRetriever.load(ckpt), data, TEXT_CACHE) | {"temperature": temperature(ckpt),
                                                                         "checkpoint": str(ckpt)}
            out[f"{r['domain']}/{r['variant']}"] = got
            print(f"{run} {r['domain']} {r['variant']}: " + ", ".join(
                f"{k} {v:.4f}" if isinstance(v, float) else f"{k} {v}" for k, v in got.items() if k != "checkpoint"),
                flush=True)
        atomic_write_text(run / "opening_weight.json", json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
